"""When each memory piece comes up in a history: the plan both dialogue writers follow.

A history is a few working days of chat. Each thread of the task's work (the memory pieces that
share a ``thread``) is raised on some day, its details arrive over that day and later ones, an
earlier value is said and corrected on a later day (``superseded``), and near-miss details
(``distractors``) come up along the way. ``plan_history`` lays these events out over the days,
seeded and deterministic; the offline generator renders them from the banks, the llm generator
hands each day's events to the model. A day or a moment (a meeting time, a date to filter on) is
said as people say it on the day it comes up ("Thursday next week at 14:00", "Monday the 24th of
last month"; ``generators.spoken_time``), never as a stamp; the plan records the phrase of a final
value as the piece's ``said_as``.

So that the form of a turn does not tell its function, a thread is also talked about without
values (``mention``: status, worry, a colleague's remark, a reminder) about one and a half times as
often as its values are stated (not more: a retriever given the task's question must still find
them); a detail is often given in two turns (``split``: the user names the work, the assistant
asks, the user answers with the value alone); and an earlier, corrected value may
come up again after the final one and be turned down (``decline``), so that the last value said
in a thread is not always the one that stands.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any, Literal

from generators.chances import HISTORY
from generators.derivation import (
    ANCHOR_KINDS,
    FILE_TYPES,
    NAMED_KINDS,
    PRESUPPOSED,
    anchor_kind,
    anchor_names,
    base_day,
    day_of,
    draw_derivation,
    file_base,
    file_parts,
    kind_of,
    names_a_copy,
    relation_phrase,
    write_day,
    written_day,
)
from generators.model import Derivation, MemoryPiece
from generators.spoken_time import is_relative, said_in, say_day, say_value, say_window, spoken
from generators.thread_bank import SENTENCE_CUES
from generators.value_pools import FILE_NAMES
from generators.withheld import withheld_kind

Move = Literal["raise", "state", "correct", "distract", "recap", "mention", "decline", "anchor"]
Mark = Literal["evidence", "superseded", "distractor", ""]

DERIVE_TRIES = 4  # rules drawn for a value before it is said outright


@dataclass(frozen=True)
class Event:
    """One thing that happens in a thread on a day. ``said`` is the specific the user's line must
    hold verbatim (a value, an earlier value, a near-miss, or a relative phrase); ``text`` is the
    near-miss sentence of a ``distract`` event. ``split``: the value comes in a second user turn,
    after the assistant asks for it. ``about``: the work the line names when it is not the piece's
    own: a near-miss is said as a detail of another work, in the words a detail is stated in."""

    move: Move
    thread: str
    piece: MemoryPiece | None = None
    said: str = ""
    text: str = ""
    mark: Mark = ""
    split: bool = False
    about: str = ""
    anchor: str = ""  # an ``anchor`` event: the named thing whose own value (``said``) it states
    kind: str = ""  # an ``anchor`` event: what its value is (day, time, number, duration, person)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"move": self.move, "thread": self.thread}
        if self.piece is not None:
            data.update(memory=self.piece.id, cue=self.piece.cue or "note", about=self.about or self.piece.about)
            if not self.piece.cue:  # no cue: the piece's own sentence is the only guide to its wording
                data["detail"] = self.piece.text
        # a value made of a sheet's headers is said in words, as the offline writer says it
        said = spoken(self.said, self.piece.cue) if self.piece is not None and self.said else self.said
        if said:
            data["say"] = said
        if self.text:
            data["text"] = said_in(self.text, self.said, self.piece.cue) if self.said and self.piece else self.text
        if self.mark:
            data["mark"] = self.mark
        if self.split:
            data["split"] = True
        if self.about:
            data["other_work"] = True  # "about" names another work than the piece's
        if self.anchor:
            data.update(anchor=self.anchor, kind=self.kind)
        elif self.piece is not None and self.piece.derived is not None and self.said == self.piece.said_as:
            data["against"] = self.piece.derived.anchor  # "say" is the value against this anchor
        return data


    @classmethod
    def from_dict(cls, data: dict[str, str]) -> "Event":
        """An event as a prompt shows it (the piece holds what a writer needs: id, cue, about)."""
        piece = None
        other = bool(data.get("other_work"))
        if data.get("memory"):
            cue = data.get("cue", "note")
            against = str(data.get("against", ""))
            piece = MemoryPiece(id=data["memory"], kind="fact", text=data.get("detail") or data.get("say", ""),
                                value=data.get("say", "") or data.get("detail", ""), thread=data["thread"],
                                cue="" if cue == "note" else cue, about="" if other else data.get("about", ""),
                                said_as=data.get("say", "") if against else "",
                                derived=Derivation("against", 0, against, against) if against else None)
        return cls(data["move"], data["thread"], piece, data.get("say", ""), data.get("text", ""),  # type: ignore[arg-type]
                   data.get("mark", ""), bool(data.get("split")),  # type: ignore[arg-type]
                   str(data.get("about", "")) if other else "", str(data.get("anchor", "")), str(data.get("kind", "")))


# What a day's events in a prompt leave out when it is the same as the event before (a thread's
# events come in runs that share them): a third of the events' tokens. ``None`` says an event has
# none where the one before had one.
CARRIED = ("thread", "memory", "cue", "about", "detail")


def events_for_prompt(events: list[Event]) -> list[dict[str, Any]]:
    """A day's events as a prompt shows them: each :meth:`Event.to_dict` without the
    :data:`CARRIED` keys whose values the event before it has."""
    out: list[dict[str, Any]] = []
    before: dict[str, Any] = {}
    for event in events:
        data = event.to_dict()
        shown = {k: v for k, v in data.items() if k not in CARRIED or before.get(k) != v}
        shown.update({k: None for k in CARRIED if k in before and k not in data})
        out.append(shown)
        before = {k: data[k] for k in CARRIED if k in data}
    return out


def events_from_prompt(shown: list[dict[str, Any]]) -> list[Event]:
    """The inverse of :func:`events_for_prompt` (what a reader of the prompt takes each event to be)."""
    events: list[Event] = []
    before: dict[str, Any] = {}
    for item in shown:
        data = {**before, **item}
        data = {k: v for k, v in data.items() if v is not None}
        events.append(Event.from_dict(data))
        before = {k: data[k] for k in CARRIED if k in data}
    return events


@dataclass
class DayPlan:
    day: int  # 1-based
    date: date
    events: list[Event] = field(default_factory=list)


def threads_of(pieces: list[MemoryPiece]) -> dict[str, list[MemoryPiece]]:
    """Pieces grouped by thread, in order of first appearance (a piece without one is its own)."""
    out: dict[str, list[MemoryPiece]] = {}
    for index, piece in enumerate(pieces):
        out.setdefault(piece.thread or f"t{100 + index}", []).append(piece)
    return out


DAY_CUES = ("session_day", "meeting_day", "move_day")  # values such as "Monday June 16"


def _spoken(value: str, said_on: date) -> str:
    """A day or moment value as said on ``said_on`` (``spoken_time.say_value``), a clock range in
    words (``say_window``); other values as written."""
    return say_value(value, said_on) or say_window(value) or value


LONG_HISTORY_DAYS = 10  # beyond this, a thread's details are spread over the whole span, not a few days
LONG_HISTORY_MENTIONS = 3  # over weeks, a thread is talked about without values this often at least
SHORT_SESSION = 16  # a day of at most this many utterances is a short session


def weeks_of_full_days(days: int, utterances_per_day: int) -> bool:
    """Whether a history is weeks of full working days (Challenge), not weeks of quick chats (the
    Plus shape) nor a few days: its writer, its world and its persona are made for that."""
    return days > LONG_HISTORY_DAYS and utterances_per_day > SHORT_SESSION


def plan_history(pieces: list[MemoryPiece], dates: list[date], rng: random.Random, *,
                 relative: bool = True, first_day: int = 0, long_mentions: int = LONG_HISTORY_MENTIONS,
                 others: list[MemoryPiece] = (),  # type: ignore[assignment]
                 people: Collection[str] = ()) -> tuple[list[DayPlan], list[MemoryPiece]]:
    """Lay the threads of ``pieces`` over ``dates``; return the day plans and the pieces (with
    ``said_as`` set where a value is said relatively). Needs two days for a correction: with one
    day, superseded values raise ``ValueError``. ``first_day``: the index of the first day the
    task's work may come up (the mail it answers arrived the day before); a correction still gets
    its two days. ``long_mentions``: value-free talk per thread at least over weeks (one otherwise).

    ``others``: the pieces of sibling works (``generators.sibling_works``; threads ``w<n>``), laid
    out by the same steps with the same chances, their events unmarked: a line's form cannot tell
    the task's work from theirs. A near-miss is said as a detail of another work of the history
    (the event's ``about``), as a detail is stated, not in words of its own.

    A final day, clock, number, length or person (of the task or a sibling alike) is derived
    ``HISTORY.derive`` of the time (``generators.derivation``): an ``anchor`` event says a named
    thing's own value, the final event says the value against it (``said_as``, ``derived``).
    ``people``: the office's full names (a person is named by role only when their first name
    is nobody else's)."""
    days = [DayPlan(i + 1, d) for i, d in enumerate(dates)]
    n = len(days)
    # a piece planned before (a dialogue written again) is derived afresh or said outright
    pieces = [replace(p, derived=None, said_as="") if p.derived is not None else p for p in pieces]
    if n < 1:
        raise ValueError("a history needs at least one day")
    everything = [*pieces, *others]
    if n < 2 and any(p.superseded for p in everything):
        raise ValueError("a correction needs at least 2 days (one to say the value, a later one to correct it)")
    updated: dict[str, MemoryPiece] = {}
    own = {p.thread or f"t{100 + i}" for i, p in enumerate(pieces)}
    groups = list(threads_of(pieces).items()) + list(threads_of(list(others)).items())
    works = {thread: members[0].about for thread, members in groups if members[0].about}
    cues = {thread: {p.cue for p in members} for thread, members in groups}
    kinds = {thread: {k for p in members if (k := withheld_kind(p.value))} for thread, members in groups}
    # Threads start on staggered days in the first part of the history, so that their details can
    # still arrive over the following days.
    last_start = max(0, n - 2)
    # the task's work comes up after the mail it answers (a correction still gets its two days); the
    # siblings keep the same bound, each set by its own corrections, so no day tells them apart
    def earliest_of(group: list[MemoryPiece]) -> int:
        return max(0, min(first_day, last_start if any(p.superseded for p in group) else n - 1))

    earliest = {True: earliest_of(list(pieces)), False: earliest_of(list(others))}
    raised: dict[str, int] = {}  # about -> the day its work was raised
    # an anchor is named once a history, and never one a work's name or a detail already holds
    said_elsewhere = " | ".join(t.lower() for p in everything for t in (p.about, p.text, p.value))
    anchors_used = {a for kind in NAMED_KINDS for a in anchor_names(kind)
                    if a.lower().removeprefix("the ") in said_elsewhere}
    first_days: dict[str, int] = {}  # thread -> the day it starts
    derived_kinds: dict[str, list[str]] = {}  # thread -> the kinds of its anchors a value is said against
    details = {v.lower() for p in everything for v in (p.value, *p.superseded, *(d.value for d in p.distractors))}
    busy_days = {busy for v in details if (busy := day_of(v, dates[-1])) is not None}  # no anchor falls on one
    for index, (thread, members) in enumerate(groups):
        about = members[0].about
        marked = thread in own

        def mark(kind: Mark) -> Mark:
            return kind if marked else ""

        # the works a near-miss of this thread may be said of: the sibling works (never the task's)
        elsewhere = [t for t, w in works.items() if t not in own and t != thread and w != about]
        if n <= LONG_HISTORY_DAYS:
            start = min(last_start, rng.randint(0, max(0, min(last_start, n // 2))) + (index % 2))
        else:  # a long history: threads are raised anywhere in its first three quarters
            start = rng.randint(0, max(0, (3 * n) // 4))
        start = max(start, earliest[marked])
        if about in raised:  # another thread of work already raised: carry on from there
            start = max(start, raised[about])
        elif about:
            raised[about] = start
            days[start].events.append(Event("raise", thread, members[0]))
        day = start
        first_days[thread] = start
        final_days: list[int] = []
        anchors = 0  # the thread's values said against an anchor: each adds an evidence turn
        for position, piece in enumerate(members):
            if position:  # details of one thread come over several days; over a long history, weeks
                step = rng.choice((0, 1, 1, 2)) if n <= LONG_HISTORY_DAYS else rng.randint(1, max(2, n // 4))
                day = min(n - 1, day + step)
            if piece.superseded:
                day = min(day, n - 2)
                for old in piece.superseded:
                    # an earlier value comes in two turns as often as a final one: the form of a
                    # two-turn detail does not tell which of them stands
                    split = rng.random() < HISTORY.split
                    # a file said against an anchor as often as a final one is
                    pair = _wrong_reference(piece, old, thread, mark("superseded"), rng, anchors_used, details) \
                        if relative else []
                    days[day].events += pair or [Event("state", thread, piece,
                                                       _spoken(old, dates[day]) if relative else old,
                                                       mark=mark("superseded"), split=split)]
                fix_day = rng.randint(day + 1, n - 1)
            else:
                fix_day = day
            said = piece.value
            # an anchor comes after an earlier value's day (the value it corrects is said first)
            lo = day + 1 if piece.superseded else start
            derived = (_derive(piece, fix_day, lo, dates, rng, anchors_used, details, people, busy_days)
                       if relative else None)
            if derived is not None:
                anchor_at, anchor = derived
                assert anchor.piece is not None
                piece = anchor.piece
                said = piece.said_as
                days[anchor_at].events.append(replace(anchor, thread=thread, mark=mark("evidence")))
                anchors += 1
                derived_kinds.setdefault(thread, []).append(anchor.kind)
            else:
                phrase = say_value(piece.value, dates[fix_day]) if relative else None
                if phrase and (piece.cue not in DAY_CUES
                               or (is_relative(phrase) and rng.random() < HISTORY.relative_day)):
                    said = phrase  # said as people say it, never as a stamp
                    piece = replace(piece, said_as=said)
                elif window := say_window(piece.value):  # "10:00 to 17:00", not "10:00-17:00"
                    said = window
                    piece = replace(piece, said_as=said)
            move: Move = "correct" if piece.superseded else "state"
            split = move == "state" and rng.random() < HISTORY.split
            days[fix_day].events.append(Event(move, thread, piece, said, mark=mark("evidence"), split=split))
            final_days.append(fix_day)
            updated[piece.id] = piece
            p_decline = HISTORY.decline if n <= LONG_HISTORY_DAYS else HISTORY.decline_long
            # an old value floated again, turned down (a whole clause is not: those lines are a value's)
            if piece.superseded and rng.random() < p_decline and piece.value != piece.text:
                d = rng.randint(fix_day, n - 1)
                old = rng.choice(piece.superseded)
                days[d].events.append(Event("decline", thread, piece, _spoken(old, dates[d]) if relative else old,
                                            mark=mark("superseded")))
            for near in piece.distractors:
                d = rng.randint(start, n - 1)
                near_said = _spoken(near.value, dates[d]) if relative else near.value
                # a near-miss file of a value said by reference: named for the task's own work against
                # an anchor as often as for another's, so the anchor's frame and the work's name hold the
                # final file and the wrong one alike, and only the reference says which one stands
                if relative and piece.derived is not None and piece.derived.rule == "refers" and \
                        rng.random() < HISTORY.own_wrong_anchor:
                    named = _wrong_reference(piece, near.value, thread, mark("distractor"), rng, anchors_used, details)
                    if named:
                        days[d].events.append(named[0])  # the anchor alone: the piece's own reference names its file
                        continue
                other = _work_for(piece, near.value, elsewhere, cues, kinds, rng)
                # said of another work, a near miss takes the frames another work's details take:
                # a named thing's own value as often as a detail said outright
                framed = _wrong_anchor(piece, near.value, near_said, other, mark("distractor"), rng, anchors_used,
                                       about=works[other]) if relative and other else None
                pair = _wrong_reference(piece, near.value, other, mark("distractor"), rng, anchors_used, details,
                                        about=works[other]) if relative and other and framed is None else []
                if framed is not None or pair:
                    days[d].events += [framed] if framed is not None else pair
                    continue
                # said of another work, a near miss is a detail like any other: in two turns as often
                days[d].events.append(Event("distract", other or thread, piece, near_said,
                                            near.text.replace(near.value, near_said), mark("distractor"),
                                            split=bool(other) and rng.random() < HISTORY.split,
                                            about=works[other] if other else ""))
        last = max(final_days)
        if about and last < n - 1 and rng.random() < HISTORY.recap:
            days[rng.randint(last + 1, n - 1)].events.append(Event("recap", thread, members[0]))
        _add_mentions(days, thread, members[0], start, rng, len(final_days) + anchors,
                      long_mentions if n > LONG_HISTORY_DAYS else 1)
    _free_anchors(days, groups, first_days, rng, anchors_used, details, busy_days, people, derived_kinds)
    _after_raise(days, raised, rng)
    for plan in days:  # within a day: each thread's events in the order they were planned
        plan.events = _stable_by_thread(plan.events)
    return days, [updated.get(p.id, p) for p in pieces]


def _derive(piece: MemoryPiece, fix_day: int, start: int, dates: list[date], rng: random.Random,
            used: set[str], details: set[str], people: Collection[str],
            busy_days: set[date]) -> tuple[int, Event] | None:
    """The day (index) and anchor event of ``piece``'s final value said in no single turn (the
    event's ``piece`` is the piece with ``derived`` and the relation as ``said_as``), or None when
    the value is not derived. The anchor comes on a day of the thread (from ``start``); a day is
    said before it comes, as people say it on the day the anchor is said."""
    kind = kind_of(piece.cue, piece.value)
    chance = HISTORY.derive_file_kind if kind == "file_type" else HISTORY.derive
    if not kind or rng.random() >= chance or (kind == "file_type" and not _named_apart(piece)):
        return None
    names = [a for a in anchor_names(anchor_kind(kind)) if a not in used]
    for _ in range(DERIVE_TRIES):
        derivation = draw_derivation(piece.cue, piece.value, dates[fix_day], names, rng, avoid=details, people=people,
                                     avoid_days=busy_days)
        if derivation is None:
            return None
        relation = relation_phrase(derivation, rng, piece.value)
        if not _names_detail(relation, details):  # not "10 more than ..." where 10 is another detail
            break
    else:
        return None
    if kind == "day":
        day = base_day(derivation, piece.value, dates[fix_day])
        choices = [i for i, d in enumerate(dates) if i >= start and d < day] if day is not None else []
        if not choices:
            return None
        index = rng.choice(choices)
        assert day is not None  # else there are no choices
        # a day written as digits is said as written (the verifier reads no words for it)
        said = derivation.base if written_day(piece.value) else say_day(day, dates[index])
    elif derivation.rule in PRESUPPOSED:  # "the file from the audit I mentioned": said after the audit's file,
        # on an earlier day where there is one (the reference still names the work it is for)
        index, said = rng.randint(start, max(start, fix_day - 1)), derivation.base
    else:
        index, said = rng.randint(start, len(dates) - 1), derivation.base
    used.add(derivation.anchor)
    return index, Event("anchor", piece.thread, replace(piece, said_as=relation, derived=derivation), said,
                        anchor=derivation.anchor, kind=anchor_kind(kind))


def _names_detail(relation: str, details: set[str]) -> bool:
    """Whether a relation's words name another detail of the history as a word of its own ("10
    more than the old limit" where 10 is another detail): it would say two values at once."""
    low = relation.lower()
    return any(v in low and re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", low) for v in details)


def _named_apart(piece: MemoryPiece) -> bool:
    """Whether a request names its file as a word of its own (not quoted, not glued to a folder or
    another word), so that its name and a relation for its kind read in the file's place."""
    return re.search(rf"(?<![\w'\"‘“/.\\-]){re.escape(piece.value)}(?![\w'\"’”/\\-])", piece.text) is not None


WRONG_ANCHOR_KINDS = ("day", "time", "number", "duration")


def _wrong_anchor(piece: MemoryPiece, value: str, said: str, thread: str, mark: Mark, rng: random.Random,
                  used: set[str], about: str = "") -> Event | None:
    """A near-miss ``value`` said of another work as a named thing's own value ("for the York
    offsite, keep in mind the site visit is Wednesday"), as a final value's anchor says its base:
    ``HISTORY.derive`` of the time where the value is a day, a clock, a figure or a length (an
    anchor says those as the value is written; a file or a person it names otherwise), so that the
    anchor's frame says a final value's base, a near miss and a value of nothing alike. None when
    it is said as a detail."""
    kind = kind_of(piece.cue, value)
    if kind not in WRONG_ANCHOR_KINDS or rng.random() >= HISTORY.derive:
        return None
    names = [a for a in anchor_names(kind) if a not in used]
    if not names:
        return None
    name = rng.choice(names)
    used.add(name)
    return Event("anchor", thread, piece, said, mark=mark, about=about, anchor=name, kind=kind)


def _wrong_reference(piece: MemoryPiece, value: str, thread: str, mark: Mark, rng: random.Random, used: set[str],
                     details: set[str], about: str = "") -> list[Event]:
    """An earlier or near-miss file in a folder said as a final one is derived (``HISTORY.derive``
    of the time): an anchor names a thing and the file without its folder ("the file from the old
    drive is scores_old.xlsx", marked as the value it is), and the piece's line says the file by
    that reference ("set Bob's score in the file from the old drive I mentioned to 95", unmarked:
    it holds no value). So neither the anchor's frame nor the reference says which value stands.
    ``about``: the other work a near miss is said of. [] when it is said outright. A file without
    a folder is said by its name and its kind, as a final one is (``_wrong_kind``)."""
    if kind_of(piece.cue, value) == "file_type" and kind_of(piece.cue, piece.value) == "file_type":
        return _wrong_kind(piece, value, thread, mark, rng, used, details, about)
    if "/" not in value or kind_of(piece.cue, value) != "file" or rng.random() >= HISTORY.derive:
        return []
    names = [a for a in anchor_names("file") if a not in used]
    derivation = draw_derivation(piece.cue, value, date.min, names, rng, avoid=details)
    if derivation is None:
        return []
    relation = relation_phrase(derivation, rng)
    if _names_detail(relation, details):
        return []
    used.add(derivation.anchor)
    said = replace(piece, said_as=relation, derived=derivation)
    return [Event("anchor", thread, piece, derivation.base, mark=mark, about=about, anchor=derivation.anchor,
                  kind="file"),
            Event("distract" if about else "state", thread, said, relation, about=about)]


def _wrong_kind(piece: MemoryPiece, value: str, thread: str, mark: Mark, rng: random.Random, used: set[str],
                details: set[str], about: str) -> list[Event]:
    """An earlier or near-miss file without a folder said as a final one is derived
    (``HISTORY.derive_file_kind`` of the time): an anchor names a kind of file ("the format from
    last time is .docx", unmarked: it holds no value) and the piece's line says the file by its
    name against it ("generate a file report2 in the format from last time ...", marked as the
    value it is: its name says which copy). So a file's name said without its ending is no sign
    of the value that stands. [] when it is said outright, or when its name is a plain word that
    would not say which file it is."""
    parts = file_parts(value)
    if rng.random() >= HISTORY.derive_file_kind or not _named_apart(piece) or not parts or \
            not names_a_copy(parts[0]):
        return []
    names = [a for a in anchor_names("file_type") if a not in used]
    derivation = draw_derivation(piece.cue, value, date.min, names, rng, avoid=details)
    if derivation is None:
        return []
    relation = relation_phrase(derivation, rng, value)
    if _names_detail(relation, details):
        return []
    used.add(derivation.anchor)
    said = replace(piece, said_as=relation, derived=derivation)
    return [Event("anchor", thread, piece, derivation.base, about=about, anchor=derivation.anchor, kind="file_type"),
            Event("distract" if about else "state", thread, said, relation, mark=mark, about=about)]


def _free_anchors(days: list[DayPlan], groups: list[tuple[str, list[MemoryPiece]]], first_days: dict[str, int],
                  rng: random.Random, used: set[str], details: set[str], busy_days: set[date],
                  people: Collection[str], derived_kinds: dict[str, list[str]]) -> None:
    """Anchors that no value is said against (unmarked ``anchor`` events), the task's threads and
    the siblings' alike: one of any kind in ``HISTORY.free_anchor`` of the threads, and beside
    each anchor a value is said against (``derived_kinds``), another of its kind in
    ``HISTORY.free_anchor_beside`` of them. A turn that names a thing and its value, about a
    work, is not always one its value is derived from; only a relation that names the anchor
    makes it so."""
    firsts = sorted({p.split()[0] for p in people if p.split()} - {d.split()[0].title() for d in details if d})
    kinds = tuple(k for k in ANCHOR_KINDS if firsts or k != "person")
    # where files are named by reference, files are named for nothing as often as the rest together,
    # in the form the history's own files take (a bare name where they are in folders, else spoken)
    files = [p.value for _, members in groups for p in members if kind_of(p.cue, p.value) == "file"]
    folders = any("/" in f for f in files)
    # where the history writes its days in digits (5/17/2024), a day named for nothing is written so too
    like = next((p.value for _, members in groups for p in members if written_day(p.value)), "")
    for thread, members in groups:
        wanted = [kind for kind in derived_kinds.get(thread, ()) if rng.random() < HISTORY.free_anchor_beside]
        if rng.random() < HISTORY.free_anchor:
            wanted.append("file" if files and rng.random() < 0.5 else rng.choice(kinds))
        for kind in wanted:
            _free_anchor(days, thread, members[0], kind, rng, first_days.get(thread, 0), used, details, busy_days,
                         firsts, folders, like)


def _free_anchor(days: list[DayPlan], thread: str, piece: MemoryPiece, kind: str, rng: random.Random, first: int,
                 used: set[str], details: set[str], busy_days: set[date], firsts: list[str], folders: bool,
                 like: str = "") -> None:
    """One anchor of ``kind`` named for nothing in ``thread``, on a quiet day from its first on
    (none when its names are used up or its value would be another detail's); a day is written as
    ``like`` writes one when given (the history's days in digits), else in words."""
    names = [a for a in anchor_names(kind) if a not in used]
    # on one of the quietest days from the thread's first on: talk for nothing never makes a day long
    pairs = {i: event_pairs(days[i].events) for i in range(first, len(days))}
    quiet = min(pairs.values())
    index = rng.choice([i for i, count in pairs.items() if count == quiet])
    said_on = days[index].date
    if kind == "day":  # a working day of the next weeks that no detail names
        free = [d for k in range(1, 13) if (d := said_on + timedelta(days=k)).weekday() < 5 and d not in busy_days]
        picked = rng.choice(free) if free else None
        said = "" if picked is None else write_day(picked, like) if like else say_day(picked, said_on)
    elif kind == "time":
        said = f"{rng.randint(8, 16)}:{rng.choice(('00', '30'))}"
    elif kind == "number":
        said = str(5 * rng.randint(4, 60))
    elif kind == "duration":
        said = f"{rng.choice((15, 20, 30, 45, 60, 90))} minutes"
    elif kind == "file":
        said = file_base(("files/" if folders else "") + rng.choice(FILE_NAMES))
        if any(file_base(d) == said for d in details):
            said = ""
    elif kind == "file_type":
        said = rng.choice(FILE_TYPES)
    else:
        said = rng.choice(firsts) if firsts else ""
    if not names or not said or said.lower() in details:
        return
    name = rng.choice(names)
    used.add(name)
    days[index].events.append(Event("anchor", thread, piece, said, anchor=name, kind=kind))


def event_pairs(events: list[Event]) -> int:
    """The user/assistant pairs ``events`` take in a day (a split detail takes two)."""
    return len(events) + sum(e.split for e in events)


def fit_siblings(days: list[DayPlan], utterances_per_day: int, rng: random.Random) -> None:
    """Keep of each day's sibling threads (the unmarked events of ``w`` threads) those that fit
    beside the task's work in a day of ``utterances_per_day`` (its pairs less a greeting and a
    goodbye), in a drawn order: a short day tells fewer siblings, never a longer day for them. A
    near miss of the task's said of a sibling work is the task's event: it always stays, and so
    does the unmarked half of its pair (the anchor that says a near-miss file's kind, the reference
    to a near-miss file's anchor), without which its marked half names a thing never said."""
    for plan in days:
        marked = [e for e in plan.events if e.mark]
        siblings: dict[str, list[Event]] = {}
        for event in plan.events:
            if event.thread.startswith("w") and not event.mark and not any(_pair(event, m) for m in marked):
                siblings.setdefault(event.thread, []).append(event)
        told = {id(e) for events in siblings.values() for e in events}
        task = [e for e in plan.events if id(e) not in told]
        left = utterances_per_day // 2 - 2 - event_pairs(task)
        if sum(event_pairs(v) for v in siblings.values()) <= left:
            continue
        order = list(siblings)
        rng.shuffle(order)
        dropped = set()
        for thread in order:
            if event_pairs(siblings[thread]) <= left:
                left -= event_pairs(siblings[thread])
            else:
                dropped.add(thread)
        gone = {id(e) for thread in dropped for e in siblings[thread]}
        plan.events = [e for e in plan.events if id(e) not in gone]


def _work_for(piece: MemoryPiece, near: str, threads: list[str], cues: dict[str, set[str]],
              kinds: dict[str, set[str]], rng: random.Random) -> str:
    """The thread of another work a near miss of ``piece`` is said of: one whose own details are
    of the same kind (a room said for another offsite, a file for another report); "" when none
    is, and the near miss is said in its own sentence. A near miss of a request's value (a file, a
    day, a figure, a person) is said for another work that has a detail of that kind, else for any
    other work; a near miss that is a whole changed request for another work that has requests,
    else for any other work, as a wrong plan asked for in the lines the right one is (the writer
    says it as a request). A request's near miss stays with its own work (in a register no right
    value takes) only in a history with no other work."""
    if piece.cue in SENTENCE_CUES:  # its value alone, said for another work that has one of its kind
        kind = withheld_kind(near)
        if kind is None and changed_clause(piece, near):
            fits = sorted(t for t in threads if cues[t] & SENTENCE_CUES)
        else:
            fits = sorted(t for t in threads if kind and kind in kinds[t])
        fits = fits or sorted(threads)
    else:
        fits = sorted(t for t in threads if piece.cue and piece.cue in cues[t])
    return rng.choice(fits) if fits else ""


def changed_clause(piece: MemoryPiece, near: str) -> bool:
    """Whether a near miss of ``piece`` is its whole sentence with a detail changed (four words or
    more, at least half of them the sentence's own), not a value of its own."""
    words = near.lower().split()
    own = set(piece.text.lower().split())
    return len(words) >= 4 and 2 * sum(w in own for w in words) >= len(words)


def _after_raise(days: list[DayPlan], raised: dict[str, int], rng: random.Random) -> None:
    """A near miss said of another work comes no earlier than the day that work is raised (a near
    miss said by reference with its anchor: the two on one day, in their order)."""
    for index, plan in enumerate(days):
        for event in list(plan.events):
            start = raised.get(event.about, 0) if event.about else 0
            if start > index and event in plan.events:
                at = plan.events.index(event)
                pair = [event]
                for a, b in ((at, at + 1), (at - 1, at)):  # the anchor and its reference, in their order
                    if 0 <= a and b < len(plan.events) and _pair(plan.events[a], plan.events[b]):
                        pair = plan.events[a:b + 1]
                for moved in pair:
                    plan.events.remove(moved)
                days[rng.randint(start, len(days) - 1)].events.extend(pair)


def _pair(first: Event, second: Event) -> bool:
    """Whether two events are an anchor and the reference to it (``_wrong_reference``), either way round."""
    anchor, event = (first, second) if first.move == "anchor" else (second, first)
    piece = event.piece
    return (anchor.move == "anchor" and event.move != "anchor" and piece is not None and anchor.piece is not None
            and piece.id == anchor.piece.id and piece.derived is not None and piece.derived.anchor == anchor.anchor)


def _add_mentions(days: list[DayPlan], thread: str, piece: MemoryPiece, start: int, rng: random.Random,
                  stated: int, floor: int = 1) -> None:
    """Value-free talk about ``thread`` (``mention`` events) from its first day on, enough that at
    most ``HISTORY.evidence_share`` of its user turns state a value (a split detail's first turn is
    one of those that do not), and at least ``floor`` (room for the several names a person gives
    a work where little else is said of it)."""
    naming = 0
    for plan in days:
        for event in plan.events:
            if event.thread == thread:
                naming += 1 + event.split
    wanted = max(floor, math.ceil(stated / HISTORY.evidence_share) - naming + rng.randint(0, 1))
    for _ in range(wanted):  # the less busy of two days drawn: no short session filled with mentions
        one, two = days[rng.randint(start, len(days) - 1)], days[rng.randint(start, len(days) - 1)]
        (one if len(one.events) <= len(two.events) else two).events.append(Event("mention", thread, piece))


def _stable_by_thread(events: list[Event]) -> list[Event]:
    """Events grouped by thread (first appearance order), keeping each thread's own order, with a
    thread's ``raise`` first and ``recap`` last."""
    order: dict[str, list[Event]] = {}
    for event in events:
        order.setdefault(event.thread, []).append(event)
    rank = {"raise": 0, "anchor": 1, "state": 1, "correct": 1, "distract": 1, "mention": 1, "decline": 1, "recap": 2}
    return [e for group in order.values() for e in sorted(group, key=lambda e: rank[e.move])]
