"""The offline dialogue generator: seeded, deterministic, composed from banks, no network.

``generate_dialogue(draft, seed=..., now=..., user_first=...)`` writes ``days`` sessions of chat,
one per working day before ``now``, following ``generators.history_plan``: each thread of the
task's work is raised, its details arrive over the days in the user's own words (the value
verbatim, the sentence from ``templates/dialogue/threads.bank``), the assistant asks for details
and promises, never doing; an earlier value is corrected on a later day, near-miss details come
up. Around that work: other work that is not the task (``generators.other_work``) and small talk
that belongs to this person and this day (``generators.small_talk``). Sessions start at varied
times of day and some break for a few hours.

Marks: a turn stating a piece's final value lists it in ``evidence``; an earlier, corrected value
in ``superseded``; a near-miss in ``distractor``. Task turns carry ``thread`` "t<n>", other work
"w<n>". No other turn holds any of those values (checked as text is composed).

The thread bank is ``generators.thread_bank`` (in the dialogue banks' one format,
``generators.dialogue_bank``); other jobs talked about the same
way (unmarked) are ``generators.decoys``, said by ``generators.decoy_talk``.
"""

from __future__ import annotations

import functools
import random
import re
from datetime import date, datetime, time
from typing import Any, Callable, Mapping, Sequence

from generators.chances import HISTORY
from generators.decoy_talk import (
    DECOYS,
    DecoyTalk,
    TurnSpec,
    WriterLines,
    calls_back,
    name_words,
    names_task_day,
    task_days,
)
from generators.decoys import ToldJob
from generators.english import mid_sentence
from generators.history_plan import (
    LONG_HISTORY_MENTIONS,
    SHORT_SESSION,
    DayPlan,
    Event,
    changed_clause,
    event_pairs,
    fit_siblings,
    plan_history,
    weeks_of_full_days,
)
from generators.model import MemoryPiece, Session, TaskDraft, Turn
from generators.session_clock import SessionClock, working_days_before
from generators.sibling_works import Sibling
from generators.small_talk import WordingsExhausted
from generators.small_talk.calendar_facts import WEEKDAYS
from generators.spoken_time import is_relative, named_moments, names_any, said_in, spoken
from generators.thread_bank import OPENERS, REPLIES, SENTENCE_CUES, Decks, threads
from generators.withheld import withheld_kind, withhold
from generators.work_names import WorkNames, noun_twice
from office_env import OfficeError, Workspace, mail_store
from office_env.evaluation.keywords import Keywords
from office_env.seeding import rng as seeded
from office_env.synthesis.check import away_span

# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


class NoWordingFits(WordingsExhausted):
    """No wording of a line the history needs avoids the task's other values (a value so plain
    that every line says it, or every fitting line said already): this history cannot be written,
    and its attempt is dropped as one whose small talk ran out is."""


@functools.lru_cache(maxsize=4096)
def _anchor_pattern(anchor: str) -> re.Pattern[str]:
    """``anchor`` (lower case) as a word of its own, compiled once (tasks share their works' names)."""
    return re.compile(rf"(?<!\w){re.escape(anchor)}(?!\w)")


def capitalise_openings(text: str, said: str) -> str:
    """``text`` with ``said`` given a capital where it starts the text or a sentence of it."""
    if not _opens_sentence(text, said):
        return text
    return _sentence_opening(said).sub(lambda m: m.group(1) + said[:1].upper() + said[1:], text)


@functools.lru_cache(maxsize=1024)
def _sentence_opening(said: str) -> re.Pattern[str]:
    """``said`` where it starts a text or a sentence, compiled once: the patterns of a whole build
    pass through ``re``'s own cache between one line and the next."""
    return re.compile(rf"(^|[.?!]\s+){re.escape(said)}")


def _opens_sentence(text: str, said: str) -> bool:
    """Whether ``said`` starts ``text`` or a sentence of it (after ".", "?" or "!" and white space) in
    lower case: where a spoken value must take a capital (most lines never put one there)."""
    if said[:1].upper() == said[:1]:
        return False
    at = text.find(said)
    while at != -1:
        if at == 0 or (text[at - 1].isspace() and text[:at].rstrip()[-1:] in (".", "?", "!")):
            return True
        at = text.find(said, at + 1)
    return False


@functools.lru_cache(maxsize=1024)
def _word(name: str) -> re.Pattern[str]:
    """``name`` as a word of its own, compiled once (a colleague's name is looked for line after line)."""
    return re.compile(rf"\b{re.escape(name)}\b")


def history_dates(now: datetime | date, days: int) -> list[date]:
    today = now.date() if isinstance(now, datetime) else now
    return working_days_before(today, days)


def plan_dialogue(draft: TaskDraft, *, seed: int, now: datetime, days: int, feedback: str = "",
                  arrived: date | None = None, long_mentions: int = LONG_HISTORY_MENTIONS,
                  siblings: Sequence[Sibling] = (), utterances_per_day: int = 72,
                  people: Sequence[str] = ()) -> tuple[list[DayPlan], TaskDraft]:
    """The history plan for ``draft`` (seeded) and the draft with ``said_as`` filled in.
    ``arrived``: when the latest mail the task answers came in; its work comes up the days after.
    ``long_mentions``: value-free talk per thread at least over weeks (``history_plan.plan_history``).
    ``siblings``: other works of the office told alike, unmarked (``generators.sibling_works``), as
    much of them as ``utterances_per_day`` leaves room for (``history_plan.fit_siblings``).
    ``people``: the office's full names (a person is named by role where their first name is theirs alone)."""
    if days < 1:
        raise ValueError(f"days must be at least 1, got {days}")
    _check_memory(draft.memory)
    others = [p for sibling in siblings for p in sibling.pieces]
    rng = seeded("homeragents.history/2", seed, feedback, str(now), days, [p.to_dict() for p in draft.memory],
                 [p.to_dict() for p in others]) if others else \
        seeded("homeragents.history/1", seed, feedback, str(now), days, [p.to_dict() for p in draft.memory])
    dates = history_dates(now, days)
    first_day = next((i for i, d in enumerate(dates) if d > arrived), len(dates) - 1) if arrived else 0
    plans, memory = plan_history(list(draft.memory), dates, rng, first_day=first_day, long_mentions=long_mentions,
                                 others=others, people=people)
    if others:
        fit_siblings(plans, utterances_per_day, rng)
    return plans, TaskDraft(**{**draft.__dict__, "memory": memory})


def mail_arrival(draft: TaskDraft, ws: Workspace) -> date | None:
    """The day the latest mail the oracle reads came in: the chat cannot speak of it before."""
    days = []
    for call in draft.oracle:
        if call.tool == "email_read_email":
            try:
                sent = mail_store.read(ws, str(call.args.get("user", "")), str(call.args.get("email_id", ""))).when()
            except OfficeError:
                continue
            if sent is not None:
                days.append(sent.date())
    return max(days, default=None)


def office_absences(ws: Workspace, user: str, colleagues: Mapping[str, str]) -> list[tuple[str, date, date]]:
    """The spans the office shows colleagues away, as the world check reads them: each mail in
    ``user``'s mailbox (not a reply or forward) that says its sender is away ("out from ... for N
    days", "out of the office until ..."). ``colleagues``: address -> the name the chat uses.
    Returns ``(name, first day, last day)``, sorted."""
    try:
        mails = mail_store.messages(ws, user)
    except OfficeError:
        return []
    out = set()
    for _, mail in mails:
        name = colleagues.get(mail.sender.strip().lower())
        sent = mail.when()
        if not name or sent is None or mail.subject.startswith(("Re:", "Fwd:")):
            continue
        span = away_span(mail.body, sent.replace(tzinfo=None).date())
        if span is not None:
            out.add((name, span[0], span[1]))
    return sorted(out)


def _check_memory(pieces: Sequence[MemoryPiece]) -> None:
    seen: set[str] = set()
    for piece in pieces:
        if not piece.value or not piece.value.strip():
            raise ValueError(f"memory piece {piece.id!r} has an empty value")
        if piece.id in seen:
            raise ValueError(f"memory id {piece.id!r} is used twice")
        seen.add(piece.id)


def task_values(pieces: Sequence[MemoryPiece]) -> list[str]:
    """Every specific a history says about the task, lower-cased: final values (and their
    relative phrases), superseded values and near-miss values."""
    out: list[str] = []
    for p in pieces:
        out += [p.value, *p.superseded, *(d.value for d in p.distractors)]
        if p.said_as:
            out.append(p.said_as)
    return [v.lower() for v in out if v.strip()]


def _part_of_day(when: datetime) -> str:
    if when.hour < 12:
        return "this morning"
    return "this afternoon" if when.hour < 17 else "this evening"


def in_place(sentence: str, value: str, said: str) -> str:
    """``sentence`` with ``said`` in the place of ``value`` where ``value`` stands as a word of its own
    (the 5 of "midterm 5", never the 5 of "hw5" or "12.5"); "" when it does not."""
    alone = re.compile(rf"(?<![\w.]){re.escape(value)}(?!\w|\.\w)")
    return alone.sub(lambda _: said, sentence, count=1) if alone.search(sentence) else ""


class LineChecks:
    """What a history's lines may not say: a task value, a value the agent must find in the office
    (even by chance, "4" in "4 pm"), a line said already elsewhere; nor, for its small talk and
    other talk, a named thing the values are said against or a day a task value names. Apart from
    the writer: the parts it holds are given these checks, and hold no reference back to it."""

    def __init__(self, *, values: Sequence[str], answers: Sequence[str] = (), banned: Sequence[str] = (),
                 anchors: Sequence[str] = ()) -> None:
        """``values``: the task's, lower case."""
        self.values = list(values)
        self.answers = Keywords(str(a) for a in answers if str(a).strip())
        self.banned = {" ".join(t.lower().split()) for t in banned}  # lines said already elsewhere
        # (a line is searched for them only when it holds one as a plain substring: most hold none)
        self.anchor_words = tuple(sorted({a.lower() for a in anchors}))
        self._task_moments: dict[date, set[Any]] = {}  # a day -> the days and moments the values write, read then

    def clean(self, text: str) -> bool:
        """Whether ``text`` holds no task value, no checked answer and is no line said elsewhere."""
        low = text.lower()
        for value in self.values:  # a plain loop: the line is asked of every candidate line
            if value in low:
                return False
        if self.banned and " ".join(low.split()) in self.banned:
            return False
        return not self.answers.any_in(text)

    def talk_clean(self, text: str) -> bool:
        """``clean``, and naming none of the history's anchors (what small talk and other talk may
        say; asked of every line they draw, so ``clean`` is written out here)."""
        low = text.lower()
        for value in self.values:
            if value in low:
                return False
        if self.banned and " ".join(low.split()) in self.banned:
            return False
        if self.answers.any_in(text):
            return False
        for anchor in self.anchor_words:  # a plain loop, as for the values
            if anchor in low and _anchor_pattern(anchor).search(low):
                return False
        return True

    def names_task_moment(self, text: str, day: date) -> bool:
        """Whether ``text``, said on ``day``, names in words a day or moment a task value writes
        (``spoken_time.names_any``); the values are read once a day, not for every line drawn."""
        wanted = self._task_moments.get(day)
        if wanted is None:
            wanted = self._task_moments[day] = named_moments(self.values, day)
        return names_any(text, self.values, day, wanted)


class HistoryWriter:
    """Writes the sessions of one history, day by day, from its plan. Holds what must not repeat
    (every composer remembers what it produced) and the values no unmarked turn may hold, and the
    parts that write its other talk: other work, small talk and jobs for later (``decoys``)."""

    def __init__(self, pieces: Sequence[MemoryPiece], *, rng: random.Random, user_first: str,
                 assistant_name: str = "Assistant", colleagues: Sequence[str] = (), company: str = "",
                 projects: Sequence[str] = (), city: str = "", files: Sequence[str] = (),
                 values: Sequence[str] | None = None, banned: Sequence[str] = (),
                 work_share: float | None = None, stated_full_names: float = HISTORY.full_name,
                 full_name: float = HISTORY.full_name,
                 answers: Sequence[str] = (), currency: str = "",
                 absences: Sequence[tuple[str, date, date]] = (), told: Sequence[ToldJob] = (),
                 siblings: Sequence[Sibling] = (), named_answers: float = 0.0, anchors: Sequence[str] = (),
                 bare_values: bool = True) -> None:
        """``absences``: ``(first name, first day, last day)`` of each span the office shows a
        colleague away; the other work names none of them doing anything on those days, and the
        small talk of those days does not name them. ``told``: jobs for later that other tasks
        tell, taken as the history's decoys before the bank's (``generators.decoys.ToldJob``);
        ``siblings``: the sibling works the plan tells (threads ``w1``...; fewer jobs for later then).
        ``named_answers``: the share of two-turn details whose answer names the work (``answer.named``).
        ``anchors``: the named things the history's values are said against (``history_plan``): no
        small talk or other talk names one, so "the day after the audit" can mean one audit only.
        ``bare_values``: whether a turn may be a value alone ("1." after "What's the number, then?");
        without, a two-turn detail's answer always says it in words ("It's 1."), the task's, its
        near misses' and the other works' alike."""
        self.rng = rng
        self.bare_values = bare_values
        self.shape_seed = rng.random()  # drawn first: what lines must avoid never changes the days' lengths
        self.work_share = HISTORY.work_share if work_share is None else work_share
        self.pieces = list(pieces)
        self.piece_ids = {p.id for p in self.pieces}
        self.checks = LineChecks(values=[v.lower() for v in values] if values is not None else task_values(pieces),
                                 answers=answers, banned=banned, anchors=anchors)
        self.values, self.answers, self.banned = self.checks.values, self.checks.answers, self.checks.banned
        # the parts below are given the checks, which do not hold the writer: no reference cycle
        clean = self.checks.talk_clean
        self.user = user_first if user_first and clean(user_first) else ""
        # the office's names a line may say, asked once for the small talk, the other work and the threads
        colleagues = [c for c in colleagues if clean(c)]
        projects = [p for p in projects if clean(p)]
        company = company if clean(company) else ""
        from generators.other_work import OtherWork  # the composers read their banks on first use
        from generators.small_talk import SmallTalk

        self.small = SmallTalk(rng=rng, user_first=self.user, assistant=assistant_name, colleagues=colleagues,
                               company=company, city=city, projects=projects, avoid=clean, absences=absences)
        self.small.strict = True  # other work fills in when small talk runs dry (``_talk``)
        self.work = OtherWork(rng=rng, user_first=self.user, colleagues=colleagues, company=company,
                              projects=projects, files=[f for f in files if clean(f)], avoid=clean,
                              currency=currency, absences=absences,
                              names_day=self.checks.names_task_moment)
        self.decks = Decks(threads().lines, rng)
        self.said: set[str] = set()
        # a name for the work of pieces that came without one
        self.abouts: dict[tuple[str, str] | str, str] = {}
        self._clean_works: dict[str, bool] = {}  # work name -> clean(name) (see _clean_work)
        self._task_days: dict[date, set[date]] = {}  # a day -> the days the task's values name, read then
        self._others: dict[tuple[str, str], tuple[str, ...]] = {}  # (must, also) -> the values a line may not hold
        self.colleagues = [c for c in colleagues if c]
        self.absences = list(absences)
        self._free: dict[date, list[str]] = {}  # the colleagues in on a day (see _who)
        self.names = WorkNames(rng, clean, [p.about for p in self.pieces], stated_full_names, full_name)
        self.task_words = {w for about in self.names.names for w in name_words(about)}
        self.work_threads = len({p.thread for s in siblings for p in s.pieces})  # their threads come first
        self.task_words |= {w for s in siblings for about in s.abouts for w in name_words(about)}  # no job shares them
        self.named_answers = named_answers
        lines = WriterLines(line=calls_back(self._line), lead=calls_back(self._lead), ask=calls_back(self._ask),
                            say_withheld=calls_back(self._say_withheld), slots=calls_back(self._slots),
                            clean=self.checks.clean, free_on=calls_back(self.free_on),
                            keeps_rule=calls_back(self.keeps_rule), new_thread=calls_back(self.new_thread),
                            answer_names_work=calls_back(self.answer_names_work))
        self.decoys = DecoyTalk(rng=rng, lines=lines, names=self.names, pieces=self.pieces, values=self.values,
                                task_words=self.task_words, colleagues=self.colleagues, told=told)

    def told_siblings(self, plan: Sequence[DayPlan], siblings: Sequence[Sibling]) -> None:
        """One job for later fewer for each sibling the plan still tells (a short day may tell none)."""
        present = {e.thread for day in plan for e in day.events if not e.mark}  # (a task's near miss is not one)
        told = [s for s in siblings if {p.thread for p in s.pieces} & present]
        self.decoys.count = max(0, DECOYS - len(told))

    def new_thread(self) -> str:
        """The mark of a new work thread (other work's exchange or a job for later): "w1", "w2"...
        after the sibling works' (at most "w99")."""
        self.work_threads += 1
        return f"w{min(self.work_threads, 99)}"

    def answer_names_work(self) -> bool:
        """Drawn per two-turn detail, the task's and the other jobs' alike: its answer names its work
        (over weeks a retriever must find it; a share of ``named_answers``)."""
        return bool(self.named_answers) and self.rng.random() < self.named_answers

    def keeps_rule(self, cue: str) -> bool:
        """Whether a detail of ``cue`` given in two turns has answer lines of its own (``answer.<cue>``):
        its stated line carries a rule the answer must keep ("one hour, on the hour"), or words the
        value needs (a memo's point, "the hiring plan")."""
        return ("answer", cue) in self.decks

    def free_on(self, value: str, when: datetime) -> bool:
        """Whether ``value`` names no colleague the office shows away on ``when``'s day."""
        day = when.date()
        return not any(first <= day <= last and name in value and _word(name).search(value)
                       for name, first, last in self.absences)

    def names_task_moment(self, text: str, day: date) -> bool:
        """``LineChecks.names_task_moment``."""
        return self.checks.names_task_moment(text, day)

    def talk_clean(self, text: str) -> bool:
        """``LineChecks.talk_clean``."""
        return self.checks.talk_clean(text)

    def clean(self, text: str) -> bool:
        """``LineChecks.clean``."""
        return self.checks.clean(text)

    # -- task threads -------------------------------------------------------------------------

    def _line(self, move: str, cue: str, ctx: dict[str, Any], must: str = "", question: bool = True,
              opener: bool = True, also: str = "") -> str:
        """A fresh line of ``move`` (for ``cue``, else any cue) that holds ``must`` and no other
        task value but those ``also`` holds; lines already said in this history are skipped while
        others remain. ``question``: whether the line may be a question (only where the next turn
        answers it); ``opener``: whether a reply may open with a short nod (not an answer to a question)."""
        about = str(ctx.get("about") or "").lower()
        others = self._others_than(must, also)
        # a value said with its article ("the salary column") takes a capital where it opens a sentence
        opens = must[:4] == "the "

        def ok(text: str) -> bool:
            low = text.lower()
            if must and must not in text:
                return False
            if must and not self.bare_values and text.strip(" .!?") == must.strip(" .!?"):
                return False  # the value alone: a template's slot, not what a person says
            if not question and text.rstrip().endswith("?"):
                return False
            if self.answers.any_in(text.replace(must, " ") if must else text):  # "a gap or two" says 2
                return False
            for value in others:  # a plain loop, as in clean
                if value in low:
                    return False
            return (text not in self.said and not (self.banned and " ".join(low.split()) in self.banned)
                    and not noun_twice(low, about))

        keys = _deck_keys(move, cue)
        blank = {k for k, v in ctx.items() if not v}  # e.g. no usable user name: skip lines that use it

        def fitting(text: str | None) -> str | None:  # a rendered line if ok, capitalised where it must be
            if text is None or not ok(text):
                return None
            if opens:
                text = capitalise_openings(text, must)
                if text in self.said:
                    return None
            return text

        def draw(prefix: str, join: Callable[[str, str], str | None] = lambda p, t: p + t) -> str | None:
            for key in keys:
                deck = self.decks.get(key)
                text = deck.draw(lambda e: None if e.needs & blank else fitting(join(prefix, e.render(ctx)))) \
                    if deck else None
                if text is not None:
                    self.said.add(text)
                    return text
            return None

        text = None
        if move in _ACKNOWLEDGING and opener and self.rng.random() < HISTORY.reply_opener:
            # a short opener before the reply: an assistant's stock lines then rarely come out the
            # same in two histories (an answer to the user's question opens as an answer does)
            openers = (_ANSWER_OPENERS if cue == "asked" else _PLAIN_OPENERS if move in _PLAIN_REPLIES
                       else _REPLY_OPENERS)
            text = draw(self.rng.choice(openers), with_opener)
        text = text or draw("")
        if text is None and (move in REPLIES or move == "ask"):  # every reply said: a short opener widens the choice
            for opening in self.rng.sample(OPENERS, len(OPENERS)):
                text = draw(f"{opening} ")
                if text is not None:
                    break
        if text is not None:
            return text
        raise NoWordingFits(f"no {move} wording for {cue or 'any'} avoids the other task values "
                            f"({', '.join(repr(v) for v in self.values)}); are they too generic?")

    def _others_than(self, must: str, also: str) -> tuple[str, ...]:
        """The task values a line holding ``must`` (and ``also``) may not hold: those neither holds.
        Kept per pair: a history asks it of every line it writes, with a few values to state."""
        key = (must, also)
        others = self._others.get(key)
        if others is None:
            must_low, also_low = must.lower(), also.lower()
            others = self._others[key] = tuple(v for v in self.values
                                               if not ((must and v in must_low) or (also and v in also_low)))
        return others

    def _lead(self, text: str) -> str:
        if self.rng.random() < HISTORY.lead:
            lead = self.decks[("lead", "any")].draw(lambda e: e.render({}))
            if lead:
                return f"{lead} {text}"
        return text

    def _who(self, when: datetime) -> str:
        """A colleague the office does not show away on ``when``'s day."""
        day = when.date()
        free = self._free.get(day)
        if free is None:
            free = self._free[day] = [c for c in self.colleagues
                                      if not any(n == c and a <= day <= b for n, a, b in self.absences)]
        return self.rng.choice(free) if free else ""

    def _ctx(self, event: Event, when: datetime, answer: bool = False, opening: bool = False) -> dict[str, Any]:
        piece = event.piece
        work = event.about or (piece.about if piece is not None else "")
        if work and self._clean_work(work):
            about = self.names.pick(work, full=event.move == "raise", opening=opening,
                                    answer=answer,
                                    stated=event.move in ("state", "correct", "distract", "decline", "anchor"))
        else:
            # one filler per work: pieces about the same thing keep the same words for it
            key = ("about", piece.about) if piece is not None and piece.about else (piece.id if piece else event.thread)
            if key not in self.abouts:
                self.abouts[key] = (abouts := threads().generic_abouts)[len(self.abouts) % len(abouts)]
            about = self.abouts[key]
        return self._slots(about, when)

    def _clean_work(self, work: str) -> bool:
        """``clean(work)`` for a work's name, worked out once a history: a line's context asks it of
        the same few works event after event (what ``clean`` reads never changes in a history)."""
        found = self._clean_works.get(work)
        if found is None:
            found = self._clean_works[work] = self.checks.clean(work)
        return found

    def _slots(self, about: str, when: datetime) -> dict[str, Any]:
        """What a thread line may name (``thread_bank``'s slots but the value and a near miss)."""
        return {"about": about, "user": self.user,
                "weekday": WEEKDAYS[when.weekday()], "when": _part_of_day(when), "who": self._who(when)}

    def _user_line(self, event: Event, when: datetime, answer: bool = False, opening: bool = False,
                   bare: bool = False) -> tuple[str, dict[str, tuple[str, ...]]]:
        """The user's line for ``event``; ``answer``: the second turn of a split detail (the
        value, the work at most called by a short name; ``bare``: the value alone, even of a
        sentence); ``opening``: the exchange's first line."""
        ctx = self._ctx(event, when, answer, opening)
        piece = event.piece
        marks: dict[str, tuple[str, ...]] = {}
        if event.mark and piece is not None:
            marks[event.mark] = (piece.id,)
        if event.move in ("raise", "recap", "mention"):
            return self._line(event.move, "any", ctx), marks
        if event.move == "anchor":  # what a derived value is said against: a named thing's own value
            return self._line("anchor", event.kind, {**ctx, "anchor": event.anchor, "value": event.said},
                              event.said), marks
        if event.move == "decline":
            said = spoken(event.said, piece.cue if piece else "")
            ctx["value"] = said
            final = self._kept(piece)
            if final and self.rng.random() < HISTORY.decline_kept:  # the value that stands, said beside it
                text = self._line("decline", "kept", {**ctx, "final": final}, said, also=final)
                if event.mark and piece is not None and re.search(rf"(?<!\w){re.escape(final)}(?!\w)", text, re.I):
                    marks["evidence"] = (piece.id,)
                return text, marks
            return self._line("decline", "any", ctx, said), marks
        assert piece is not None
        cue = piece.cue if piece.cue in threads().cues else "note"
        if event.move == "distract" and not event.about:  # its own sentence, its value as the user says it
            # its sentence gives the value its article, and is said inside the line's own
            ctx["text"] = mid_sentence(said_in(event.text, event.said, piece.cue))
            return self._line("distract", "any", ctx, spoken(event.said, piece.cue, article=False)), marks
        # a near miss said of another work: in the words a detail is stated in
        move = "correct" if event.move == "correct" else "state"
        if answer:
            move = "answer"
        if event.move == "distract" and cue in SENTENCE_CUES:  # a request's near value, as another work's detail
            said = spoken(event.said, cue)
            sentence = "" if bare else self._near_request(piece, said)  # (bare: the value its request left out)
            if sentence:  # a wrong plan asked for in the lines the right one is: only the work it is for differs
                return self._line(move, "sentence" if answer else cue, {**ctx, "value": sentence}, sentence), marks
            named = not answer or self.answer_names_work()
            return self._line("answer", "named" if named else "any", {**ctx, "value": said}, said), marks
        whole = piece.value == piece.text  # a whole clause is said as one, even as an answer
        if (cue not in SENTENCE_CUES or bare) and not whole:
            said = spoken(event.said, cue)
            ctx["value"] = said
            if move in ("state", "correct") or self.keeps_rule(cue):
                line_cue = cue
            else:  # over weeks, a two-turn detail's answer often names its work: a retriever must find it
                line_cue = "named" if self.answer_names_work() else "any"
            text = self._line(move, line_cue, ctx, said)
            # words, not a name (a spoken form, a relation): a sentence that starts with them starts with a
            # capital; a relation that opens with a file's own name keeps the name as it is written
            if (said != event.said or (piece.derived is not None and event.said == piece.said_as
                                       and piece.derived.rule != "file_type")):
                text = capitalise_openings(text, said)
            return text, marks
        if move == "correct":  # a correction names the new value only ("make it 98 instead"), or the new clause
            ctx["value"] = event.said
            return self._line(move, "sentence" if whole else "any", ctx, event.said), marks
        # No cue: the piece's own sentence carries the value. When that sentence names another
        # piece's value too, the turn states both and is marked for both.
        sentence = piece.text.rstrip(" .")
        ctx["value"] = in_place(sentence, piece.value, event.said) or f"{sentence}: {event.said}"
        text = self._line(move, {"state": cue, "answer": "sentence"}.get(move, "any"), ctx, ctx["value"])
        low = text.lower()
        also = tuple(p.id for p in self.pieces if p.id != piece.id and p.said.lower() in low)
        if also and event.mark == "evidence":
            marks["evidence"] = (piece.id, *also)
        return text, marks

    def _kept(self, piece: MemoryPiece | None) -> str:
        """The value that stands, as a turn turning an earlier one down says it ("we keep 14:00"):
        a piece's final value said as people say it; "" for a whole sentence or clause (said only
        as itself), a derived value (said only against its anchor) and a day said relative to the
        day it was said on ("Thursday next week" means another day a week later)."""
        if (piece is None or piece.derived is not None or piece.value == piece.text or len(piece.said.split()) > 8
                or is_relative(piece.said)):
            return ""
        return spoken(piece.said, piece.cue)

    def _near_request(self, piece: MemoryPiece, said: str) -> str:
        """A request's near miss said as a request: a whole changed clause (``changed_clause``)
        always, a near value inside the request's sentence ``HISTORY.near_in_sentence`` of the time
        (the sentence with it, ``said``, in the value's place); "" when it is said alone. A question
        stays one."""
        if changed_clause(piece, said):
            sentence = said
        elif in_place(piece.text, piece.value, said) and self.rng.random() < HISTORY.near_in_sentence:
            sentence = in_place(piece.text.rstrip(" ."), piece.value, said)
        else:
            return ""
        sentence = sentence.rstrip(" .")
        return sentence.rstrip(" ?") + "?" if piece.cue == "asked" else sentence

    def _withheld(self, event: Event, when: datetime,
                  opening: bool) -> tuple[str, dict[str, tuple[str, ...]], str] | None:
        """A sentence detail's first turn with its value left out (``generators.withheld``), its
        marks (other values the sentence names) and the assistant's question for the value; None
        when the sentence cannot leave it out or no fresh wording is left. A near value of the
        sentence said as another work's request comes the same way as often (the same opener,
        question and answer), so the form of a two-turn request does not tell the right value."""
        piece = event.piece
        if piece is None or piece.cue not in SENTENCE_CUES:
            return None
        near = event.move == "distract" and bool(event.about) and not changed_clause(piece, event.said)
        if event.move != "state" and not near:
            return None
        sentence, kind = piece.text.rstrip(" ."), withheld_kind(piece.value)
        if kind is None or withhold(sentence, piece.value, "_", kind) is None:
            return None
        try:
            ctx = self._ctx(event, when, opening=opening)
            text, ask = self._say_withheld(sentence, piece.value, kind, piece.cue, ctx)
        except ValueError:
            return None
        also = tuple(p.id for p in self.pieces if p.id != piece.id and p.said.lower() in text.lower())
        return text, ({"evidence": also} if also else {}), ask

    def _say_withheld(self, sentence: str, value: str, kind: str, cue: str, ctx: dict[str, Any]) -> tuple[str, str]:
        """``sentence`` said in a ``cue`` line with ``value`` left out (a ``withheld.<kind>``
        placeholder), and the assistant's question for it; the task's requests and the decoys'
        are said alike. ``ValueError`` when no fresh wording is left."""
        held = withhold(sentence, value, self._line("withheld", kind, ctx), kind)
        assert held is not None  # the caller checked that the sentence can leave the value out
        return self._line("state", cue, {**ctx, "value": held}, held), self._line("ask_withheld", kind, ctx)

    def _ask_detail(self, piece: MemoryPiece | None, ctx: dict[str, Any]) -> str:
        """The assistant asking which detail of a sentence changed ("Which file?"); "" when its
        value is of no kind a question names (the caller asks plainly)."""
        kind = withheld_kind(piece.value) if piece is not None else None
        try:
            return self._line("ask_withheld", kind, ctx) if kind else ""
        except ValueError:
            return ""

    def _asks_for(self, event: Event, when: datetime) -> str:
        """The assistant asking for ``event``'s detail (``_ask``)."""
        assert event.piece is not None
        return self._ask(event.piece.cue or "any", self._ctx(event, when))

    def _ask(self, cue: str, ctx: dict[str, Any]) -> str:
        """The assistant asking for a detail of ``cue``: its cue's question, else a plain prompt."""
        try:
            line = self._line("ask", cue, ctx)
        except ValueError:
            line = ""
        return line if line.rstrip().endswith("?") else self._line("prompt", "any", ctx)

    def sayable(self, event: Event, when: datetime) -> bool:
        """Whether a sibling work's detail (an unmarked event with a value) may be said: it holds
        no task value nor a checked answer, names no day a task value names and no colleague the
        office shows away that day. A task's event always may (the plan made its values)."""
        piece = event.piece
        if event.mark or not event.said or (piece is not None and piece.id in self.piece_ids
                                            and piece.derived is not None and event.said == piece.said_as):
            return True  # (a task's earlier value said by reference holds no value: it is unmarked)
        # what the line may say besides the value: a near miss's sentence, a sentence-said detail
        said = [event.said, event.text, event.anchor]
        if event.piece is not None and (not event.piece.cue or event.piece.cue in SENTENCE_CUES):
            said.append(event.piece.text)
        day = when.date()
        days = self._task_days.get(day)
        if days is None:
            days = self._task_days[day] = task_days(day, self.values)
        return all(self.checks.clean(t) and not names_task_day(t, day, self.values, days) and self.free_on(t, when)
                   for t in said if t)

    def thread_block(self, events: list[Event], clock: SessionClock) -> list[TurnSpec]:
        """The turns of one thread's events on one day, as one exchange. The assistant asks a
        question only where the user's next line answers it."""
        turns: list[TurnSpec] = []
        for index, event in enumerate(events):
            when = clock.peek()
            piece = event.piece
            # a request is said with its detail left out more often than other details come in two turns
            held = self._withheld(event, when, opening=index == 0) if event.split or (
                piece is not None and piece.cue in SENTENCE_CUES and self.rng.random() < HISTORY.withhold) else None
            # a sentence's correction, too, often comes in two turns: what changed, then the new value
            fix = (held is None and not event.split and event.move == "correct" and piece is not None
                   and piece.cue in SENTENCE_CUES and self.rng.random() < HISTORY.split)
            # the work named (or the request with its detail left out), the assistant asks, the value
            if event.split or held or fix:
                kind = (withheld_kind(piece.value) if fix and piece is not None else None) or "any"
                text, marks, ask = held or (self._line("correct_split" if fix else "split", kind,
                                                       self._ctx(event, when, opening=index == 0)), {},
                                            self._ask_detail(piece, self._ctx(event, when)) if fix else "")
                turns.append(("user", text, marks, event.thread))
                clock.tick()
                turns.append(("assistant", ask or self._asks_for(event, clock.peek()), {}, event.thread))
                clock.tick()
                text, marks = self._user_line(event, clock.peek(), answer=True, bare=held is not None or fix)
            else:
                try:
                    text, marks = self._user_line(event, when, opening=index == 0)
                except ValueError:
                    if event.move == "mention":  # value-free talk that ran out of fresh wording: left out
                        continue
                    raise
                if index == 0 and event.move in ("state", "correct"):
                    text = self._lead(text)
            turns.append(("user", text, marks, event.thread))
            clock.tick()
            nxt = events[index + 1] if index + 1 < len(events) else None
            # the reply calls the work by a short name, as a person does right after hearing it ("Okay,
            # no rush on the reminder."), but when it is first raised
            ctx = self._ctx(event, clock.peek(), answer=event.move != "raise")
            if event.move == "recap":  # an answer to a question opens without a nod ("Got it." to "Where are we?")
                reply = self._line("recap_reply", "any", ctx, question=False, opener=not text.rstrip().endswith("?"))
            elif event.move == "anchor":  # the assistant takes the named thing in, by its name (and value)
                # an earlier or near-miss value is the user's to say: the reply names the thing only
                value = "" if event.mark in ("superseded", "distractor") else event.said
                reply = self._line("anchor_reply", "any", {**ctx, "anchor": event.anchor, "value": value},
                                   question=False)
            elif event.move == "mention":  # a question about the work gets an answer, not a nod
                reply = self._line("mention_reply", "asked" if text.rstrip().endswith("?") else "any", ctx,
                                   question=False)
            elif (nxt is not None and nxt.move == "state" and not nxt.split and nxt.piece is not None
                  and self.rng.random() < HISTORY.ask_next):
                reply = self._asks_for(nxt, clock.peek())
            elif event.move == "raise":
                reply = self._line("raise_reply", "any", ctx, question=nxt is not None and nxt.move == "state")
            else:
                reply = self._line("after", "any", ctx, question=False)
            turns.append(("assistant", reply, {}, event.thread))
            clock.tick()
        for _, text, _, _ in turns:
            self.said.add(text)
        return turns

    # -- the day ------------------------------------------------------------------------------

    def _edge(self, make: Callable[[datetime], list[tuple[str, str]]], when: datetime) -> list[tuple[str, str]]:
        """A session's opening or closing pair: fresh if it can be, else one like an earlier
        day's (people greet alike), else none (weeks of history may start on the point)."""
        for strict in (True, False):
            self.small.strict = strict
            try:
                return make(when)
            except WordingsExhausted:
                continue
            finally:
                self.small.strict = True
        return []

    def _talk(self, kind: str, when: datetime, pairs: int) -> tuple[list[tuple[str, str]], str]:
        """``pairs`` pairs of other work (``kind`` "work") or small talk, and their thread mark.
        Weeks of history can use up one kind's fresh wordings: the other kind takes over; when both
        are spent a story may be told again, and failing that the pairs are left out (a shorter
        day), never an error."""
        for which in ((kind, "small" if kind == "work" else "work")):
            try:
                if which == "work":
                    talk = self.work.exchange(when, pairs)
                    return ([turn for user, reply in talk for turn in (("user", user), ("assistant", reply))],
                            self.new_thread())
                return self.small.exchange(when, pairs), ""
            except (WordingsExhausted, RuntimeError):
                continue
        self.small.strict = False  # last resort: a story told again rather than a day cut short
        try:
            return self.small.exchange(when, pairs), ""
        except WordingsExhausted:
            return [], ""
        finally:
            self.small.strict = True

    def day(self, plan: DayPlan, utterances: int) -> Session:
        rng = self.rng
        lo, hi = -(-utterances * 9 // 10), utterances * 11 // 10
        evens = [n for n in range(lo, hi + 1) if n % 2 == 0]
        # a day's length has a stream of its own: what the wording had to avoid does not change it
        shape = seeded(self.shape_seed, "shape", plan.day)
        pairs = max(2, (shape.choice(evens) if evens else utterances + utterances % 2) // 2)
        by_thread: dict[str, list[Event]] = {}
        on_the_day = datetime.combine(plan.date, time(12))
        for event in plan.events:
            # a sibling's detail the day cannot say: its room goes to other talk
            if not self.sayable(event, on_the_day):
                continue
            by_thread.setdefault(event.thread, []).append(event)
            if event.thread.startswith("w") and event.thread[1:].isdigit():  # a sibling work's thread
                self.work_threads = max(self.work_threads, int(event.thread[1:]))
        # A short session (the Plus shape) is a quick chat: it often starts on the point or ends
        # without a goodbye.
        short = utterances <= SHORT_SESSION
        opens = not short or rng.random() < HISTORY.short_opens
        closes = not short or rng.random() < HISTORY.short_closes
        task_pairs = sum(event_pairs(v) for v in by_thread.values())
        room = max(0, pairs - opens - closes - task_pairs)
        work_pairs = min(room, max(1 if short else 2, round(self.work_share * pairs) - task_pairs))
        small_pairs = room - work_pairs
        blocks: list[tuple[str, Any]] = [("task", events) for events in _works_in_any_order(by_thread, rng)]
        decoys = self.decoys.made_for(plan)
        decoy_pairs = min(work_pairs - (0 if short else 1), task_pairs + 3) if decoys else 0
        blocks += [("work", n) for n in _split(work_pairs - decoy_pairs, 1, 3, rng)]
        blocks += [("decoy", n) for n in _split(decoy_pairs, 1, 3, rng)]
        smalls = [("small", n) for n in _split(small_pairs, 1, 4, rng)]
        # Task blocks keep their order; the rest is shuffled around them.
        rest = blocks[len(by_thread):] + smalls
        rng.shuffle(rest)
        order: list[tuple[str, Any]] = []
        tasks = blocks[:len(by_thread)]
        slots = sorted(rng.sample(range(len(rest) + 1), len(tasks))) if len(tasks) <= len(rest) + 1 else \
            [min(i, len(rest)) for i in range(len(tasks))]
        t = 0
        for g in range(len(rest) + 1):
            while t < len(tasks) and slots[t] == g:
                order.append(tasks[t])
                t += 1
            if g < len(rest):
                order.append(rest[g])
        clock = SessionClock(plan.date, 2 * (opens + closes + task_pairs + room), rng)
        specs: list[TurnSpec] = []
        if opens:
            opener = self._edge(self.small.opener, clock.peek())
            specs += [(r, t, {}, "") for r, t in opener]
            clock.tick(len(opener))
        breaks_at = rng.randrange(1, len(order)) if len(order) > 3 and rng.random() < HISTORY.session_break else -1
        for index, (kind, item) in enumerate(order):
            if index == breaks_at:
                clock.pause()
            if kind == "task":
                specs += self.thread_block(item, clock)
                continue
            if kind == "decoy":
                decoy_turns = self.decoys.block(item, clock)
                specs += decoy_turns
                item -= len(decoy_turns) // 2  # what the decoys could not fill goes to other talk
                if item <= 0:
                    continue
                kind = "work"
            turns, thread = self._talk(kind, clock.peek(), item)
            specs += [(r, t, {}, thread) for r, t in turns]
            clock.tick(len(turns))
        if closes:
            closer = self._edge(self.small.closer, clock.peek())
            specs += [(r, t, {}, "") for r, t in closer]
            clock.tick(len(closer))
        stamps = clock.stamps[:len(specs)]
        said = tuple(Turn(role=role, text=text, ts=ts, evidence=marks.get("evidence", ()),  # type: ignore[arg-type]
                          superseded=marks.get("superseded", ()), distractor=marks.get("distractor", ()),
                          thread=thread) if marks else
                     Turn(role=role, text=text, ts=ts, thread=thread)  # type: ignore[arg-type]  # (most turns: no marks)
                     for (role, text, marks, thread), ts in zip(specs, stamps))
        return Session(day=plan.day, date=plan.date.isoformat(), turns=said)


def _works_in_any_order(by_thread: dict[str, list[Event]], rng: random.Random) -> list[list[Event]]:
    """A day's thread blocks, the works in a drawn order (the task's work comes first no more often
    than a sibling's), the threads of one work in their planned order (its raise first)."""
    if not any(e.thread.startswith("w") for events in by_thread.values() for e in events):
        return list(by_thread.values())  # the task's work alone: its threads in their planned order
    works: dict[str, list[list[Event]]] = {}
    for thread, events in by_thread.items():
        first = events[0]
        work = first.about or (first.piece.about if first.piece is not None else "") or thread
        works.setdefault(work, []).append(events)
    order = list(works.values())
    rng.shuffle(order)
    return [events for group in order for events in group]


# replies that may open with a short word: those taking in what the user said (_REPLY_OPENERS) and,
# cue "asked", an answer to the user's own question (_ANSWER_OPENERS)
_ACKNOWLEDGING = ("after", "raise_reply", "mention_reply", "recap_reply", "prompt", "ask", "ask_withheld")
_REPLY_OPENERS = ("Okay", "Right", "Thanks", "Ah", "Mm", "Alright", "Sure", "Oh", "Good", "Noted", "Got it", "I see")
# a mention may be a worry or a slip ("I meant to sort it out and didn't"): its reply, and a question
# (which may follow one), open without a nod or thanks
_PLAIN_OPENERS = (*(o for o in _REPLY_OPENERS if o not in ("Good", "Thanks")), "Fine", "Understood", "Hm")
_PLAIN_REPLIES = frozenset(("mention_reply", "prompt", "ask", "ask_withheld"))
_ANSWER_OPENERS = ("Well", "Mm", "Hmm", "Honestly", "Let me see", "So")  # before an answer to "Where are we on it?"
_LEADS_ON = frozenset(("Well", "Honestly", "Let me see", "So"))  # read on into the line: "Well, only a few ..."
_ACKS = {"okay", "right", "alright", "mm", "ah", "oh", "sure", "thanks", "fine"}
# first words of replies that read on in lower case after "Okay, ..." (a name or "I" keeps its capital)
_READS_ON = {"got", "noted", "good", "great", "perfect", "understood", "that", "that's", "which", "what", "who",
             "how", "when", "where", "do", "does", "is", "are", "still", "nothing", "makes", "fair", "let", "it",
             "it'll", "it's", "sounds", "no", "one", "so", "and", "then", "ready", "will", "glad", "handy",
             "useful", "clear", "all", "any", "should", "could", "would", "did", "have", "has", "can"}


_FIRST_WORD = re.compile(r"[A-Za-z']+")


@functools.lru_cache(maxsize=256)
def _deck_keys(move: str, cue: str) -> tuple[tuple[str, str], ...]:
    """The decks a line of ``move`` for ``cue`` is drawn from, in order (``HistoryWriter._line``): an
    answer to the user's question from answers only; other replies can borrow from each other before
    giving up (a prompt for a detail only where one is asked for: never "What is it?" after a detail is
    given); a mention from recaps. Worked out once per pair: a history asks it for every line."""
    keys = [(move, cue)] if cue == "asked" else [(move, cue), (move, "any")]
    if (move in REPLIES and cue != "asked") or move == "ask":
        keys += [(reply, "any") for reply in REPLIES if reply != "prompt" or move in ("prompt", "ask")]
    elif move == "mention":
        keys.append(("recap", "any"))
    return tuple(keys)


def with_opener(opener: str, line: str) -> str | None:
    """``line`` after a short opener ("Okay, good to have that.", "Right. I'll hold on to it."), or
    with it in place of the one-word acknowledgement it opens with ("Okay, that fits." as "Right,
    that fits."); None when the line opens with that word already."""
    first = _FIRST_WORD.match(line)
    word = first.group(0).lower() if first else ""
    if word == opener.lower():
        return None
    if word in _ACKS:  # no "Okay, right, ...": the opener takes the acknowledgement's place
        return f"{opener}{line[len(word):]}" if line[len(word):len(word) + 1] in (",", ".") else None
    if opener in _LEADS_ON and word.partition("'")[0] == "i":  # "Well, I have ..."
        return f"{opener}, {line}"
    if word in _READS_ON or opener in _LEADS_ON:  # "Okay, got it.", "Well, only a few ..."
        return f"{opener}, {line[:1].lower()}{line[1:]}"
    return f"{opener}. {line}"


def _split(total: int, low: int, high: int, rng: random.Random) -> list[int]:
    """``total`` as a list of sizes between ``low`` and ``high`` (the last may be smaller)."""
    out = []
    while total > 0:
        size = min(total, rng.randint(low, high))
        out.append(size)
        total -= size
    return out


def generate_dialogue(
    draft: TaskDraft,
    *,
    seed: int,
    now: datetime,
    user_first: str,
    assistant_name: str = "Assistant",
    colleagues: Sequence[str] = (),
    company: str = "",
    projects: Sequence[str] = (),
    city: str = "",
    currency: str = "",
    files: Sequence[str] = (),
    days: int = 5,
    utterances_per_day: int = 72,
    feedback: str = "",
    plan: list[DayPlan] | None = None,
    answers: Sequence[str] = (),
    absences: Sequence[tuple[str, date, date]] = (),
    stated_full_names: float | None = None,
    told: Sequence[ToldJob] = (),
    siblings: Sequence[Sibling] = (),
    bare_values: bool = True,
) -> list[Session]:
    """Write ``days`` sessions of chat for ``draft`` (see the module docstring).

    ``plan`` is the history plan (``plan_dialogue``); without one it is made here, and the
    draft's pieces must then already carry any ``said_as`` (use ``plan_dialogue`` to get both).
    ``answers``: values the criteria check that only the office gives; no line states one.
    ``currency``: the office's currency code, which the chat's other work quotes its amounts in.
    ``absences``: ``(first name, first day, last day)`` for each span the office shows a colleague
    away (``office_absences``); the other work never has them do anything on those days.
    ``stated_full_names``: the share of lines stating a value (final, earlier or near miss) that
    call the work by its full name (default: ``HISTORY.stated_full_names``; over weeks of history the
    other lines about the work call it so nearly as often, ``HISTORY.long_history_full_name``).
    ``told``: other tasks' jobs, said as this history's jobs for later before the bank's.
    ``siblings``: the sibling works the plan tells (``plan_dialogue``); with them, fewer jobs for later.
    ``bare_values``: whether a turn may be a value alone (``HistoryWriter``; Plus says none).
    The same arguments give the same sessions; another ``seed`` or ``feedback`` another history.
    Raises ``ValueError`` for impossible input (``days`` < 1, ``utterances_per_day`` < 2, an
    empty memory value, duplicate memory ids, a correction with one day, or a value so generic
    that no wording avoids it).
    """
    if utterances_per_day < 2:
        raise ValueError(f"utterances_per_day must be at least 2, got {utterances_per_day}")
    if plan is None:
        plan, draft = plan_dialogue(draft, seed=seed, now=now, days=days, feedback=feedback, siblings=siblings,
                                    utterances_per_day=utterances_per_day)
    _check_memory(draft.memory)
    rng = seeded("homeragents.dialogue_offline/2", seed, feedback, str(now), user_first, assistant_name,
                 list(colleagues), company, list(projects), city, list(files), days, utterances_per_day,
                 draft.intent, [p.to_dict() for p in draft.memory])
    # weeks of full working days hold more work talk: the small talk would otherwise run out of
    # fresh lines (weeks of quick chats, the Plus shape, keep the usual share)
    # and a retriever given the task's question must still find its details among weeks of talk
    long = weeks_of_full_days(days, utterances_per_day)
    writer = HistoryWriter(draft.memory, rng=rng, user_first=user_first, assistant_name=assistant_name,
                           colleagues=colleagues, company=company, projects=projects, city=city, files=files,
                           work_share=HISTORY.long_history_work_share if long else None,
                           stated_full_names=stated_full_names if stated_full_names is not None else
                           HISTORY.stated_full_names,
                           full_name=HISTORY.long_history_full_name if long else HISTORY.full_name,
                           answers=answers, currency=currency, absences=absences, told=told, siblings=siblings,
                           named_answers=HISTORY.long_history_named_answers if long else HISTORY.named_answers,
                           anchors=sorted({e.anchor for d in plan for e in d.events if e.anchor}),
                           bare_values=bare_values)
    writer.told_siblings(plan, siblings)
    return [writer.day(day_plan, utterances_per_day) for day_plan in plan]
