"""The dialogue verifier as code: the paper's dialogue rules, checked without a model.

``check_dialogue(draft, sessions)`` returns a ``Verdict``; ``passed`` only if every rule holds.
``feedback`` is ``"ok"`` for a passing dialogue, otherwise one line per violation, naming the day
and turn (both 1-based) so that a generator can repair exactly that spot:

- at least ``min_days`` sessions, numbered 1..N, with valid, distinct, ascending dates
  (all before ``now`` when given);
- every session has turns; the user opens it; roles alternate user/assistant; no empty turn;
- timestamps parse, lie on the session's date and increase strictly within the day;
- the memory marks hold (``mark_problems``): final values exactly at their evidence turns,
  earlier values only at superseded turns before the correction's day, near-misses only at
  distractor turns; a day or a moment said in words ("Thursday next week at 14:00") counts where
  it names the value on the day it is said, and only there;
- no memory value appears in the intent;
- no utterance repeats word for word inside the history;
- the assistant never claims to have carried something out ("I've sent it", "all done", ...).
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from itertools import accumulate, chain, compress
from operator import attrgetter
from typing import Any

from generators.derivation import PRESUPPOSED, file_parts, follows, names_a_copy
from generators.model import Derivation, Session, TaskDraft, Turn, Verdict
from generators.specifics import says_value
from generators.spoken_time import read_times, say_window, value_time
from office_env.formats.built import Kept

# Completion claims: the assistant may promise ("I'll send it") but never report an action as
# carried out. Matched on lower-cased text with typographic apostrophes made plain.
_ACTION_VERBS = (
    "sent|updated|scheduled|booked|created|added|emailed|e-mailed|mailed|forwarded|saved|written|"
    "wrote|moved|deleted|removed|renamed|filled|entered|completed|finished|done|submitted|uploaded|"
    "shared|replied|invited|drafted|edited|changed|set up|arranged|converted|cancelled|canceled|"
    "taken care of|handled|sorted"
)
_COMPLETION = (
    re.compile(rf"\b(?:i've|i have|i|we've|we have)\s+(?:just\s+|already\s+|now\s+|successfully\s+)?"
               rf"(?:{_ACTION_VERBS})\b"),
    re.compile(rf"\b(?:has|have)\s+(?:now\s+|already\s+)?been\s+(?:{_ACTION_VERBS})\b"),
    re.compile(r"\b(?:it's|it is|that's|that is|all|everything's|everything is)\s+(?:now\s+|already\s+)?done\b"),
    re.compile(r"\b(?:done|finished|completed)\s*[.!]"),
    re.compile(r"\btask (?:is )?complete\b"),
)


# A claim inside a future or conditional clause is a promise ("I'll make sure it's done",
# "once I've sent it, ..."): the sentence part before the match is searched for these.
_FUTURE = re.compile(r"\b(?:i'll|i will|will|once|when|after|as soon as|until|going to|make sure|"
                     r"let you know|if)\b")
_SENTENCE = re.compile(r"[^.!?;]+[.!?;]*")
# Any claim at all, for the gate of a whole text: the first letters a claim can open with looked at
# before its alternatives are tried ("i've", "we", "has", "that's", "all", "everything", "done",
# "finished", "completed", "task"), which passes most of a line's letters at once.
_CLAIM_OPENS = "acdefhitw"
_ANY_COMPLETION = re.compile(f"(?=[{_CLAIM_OPENS}])(?:" + "|".join(f"(?:{p.pattern})" for p in _COMPLETION) + ")")


def completion_claim(text: str) -> str | None:
    """The phrase by which ``text`` claims something is already done, or None."""
    low = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    if _ANY_COMPLETION.search(low) is None:  # a claim in a sentence is one in the whole text
        return None
    for sentence in _SENTENCE.findall(low):
        for pattern in _COMPLETION:
            found = pattern.search(sentence)
            if found and not _FUTURE.search(sentence, 0, found.start()):
                return found.group(0).strip()
    return None


def _session(obj: Session | Mapping[str, Any]) -> Session:
    return obj if isinstance(obj, Session) else Session.from_dict(dict(obj))


def _where(day: int, turn: int) -> str:
    return f"day {day} turn {turn}"


def _short(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[: limit - 3] + "...")


# (where, day, role, lower-cased text, evidence ids, superseded ids, distractor ids, the date it was said)
MarkedTurn = tuple[str, int, str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...], "date | None"]


def marked_turns(sessions: Iterable[Mapping[str, Any]]) -> list[MarkedTurn]:
    """The turns of a dialogue (sessions as records hold them) as :func:`mark_problems` reads them."""
    out: list[MarkedTurn] = []
    for s in sessions:
        try:
            said_on: date | None = date.fromisoformat(str(s.get("date")))
        except ValueError:
            said_on = None
        out += [(f"day {s['day']} turn {n + 1}", s["day"], t["role"], str(t["text"]).lower(),
                 tuple(t.get("evidence", ())), tuple(t.get("superseded", ())), tuple(t.get("distractor", ())), said_on)
                for n, t in enumerate(s["turns"])]
    return out


_FOLDER_FILE = re.compile(r"(?:[\w.-]+/)+([\w.-]+\.[A-Za-z0-9]{2,5})")


def bare_file(value: str) -> str:
    """A file's name without its folder ("data/scores_old.xlsx" -> "scores_old.xlsx"); "" for a
    value that is no file in a folder."""
    m = _FOLDER_FILE.fullmatch(value.strip())
    return m.group(1) if m else ""


class ValueHolder:
    """Which turns hold a value: written out, a clock range in words ("10:00 to 17:00"), or (a day
    or a moment) named in words on the day the turn was said ("Thursday next week at 14:00";
    ``generators.spoken_time``). A value's turns are found once (:meth:`held`): the marks ask of
    each value at every turn, several times."""

    def __init__(self, turns: list[MarkedTurn]) -> None:
        self.turns = turns
        self.read: dict[int, set[Any]] = {}
        self.wanted: dict[tuple[str, Any], Any] = {}
        self._held: dict[str, list[bool]] = {}
        self._held_wrong: dict[str, list[bool]] = {}
        self._by_day: dict[date, list[int]] | None = None
        self._joined: str | None = None  # the turns' texts, "\0" between them (see _written_in)
        self._starts: list[int] = []

    def held(self, value: str) -> list[bool]:
        """For each turn, whether it holds ``value`` (:meth:`holds`); the list is shared, not to be changed."""
        found = self._held.get(value)
        if found is None:
            found = self._written_in(_written_forms(value))
            for day, indices in self._days().items():  # most values name no day: asked once a day
                wanted = self._wanted(value, day)
                if wanted is None:
                    continue
                for index in indices:
                    if not found[index]:
                        found[index] = wanted in self._times(index, day)
            self._held[value] = found
        return found

    def _written_in(self, forms: tuple[str, ...]) -> list[bool]:
        """For each turn, whether its text holds one of ``forms``: found in the turns' texts joined
        once (a value is said in a few of hundreds of turns), each turn looked at no more than once."""
        if self._joined is None:
            texts = [turn[3] for turn in self.turns]
            self._starts = list(accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
            joined = "\0".join(texts)
            self._joined = joined if joined.count("\0") == len(texts) - 1 else ""  # "": a text holds the separator
        joined, starts = self._joined, self._starts
        if not joined or any(not form or "\0" in form for form in forms):
            return [any(form in turn[3] for form in forms) for turn in self.turns]
        found = [False] * len(self.turns)
        for form in forms:
            at = joined.find(form)
            while at != -1:
                index = bisect_right(starts, at) - 1
                found[index] = True
                if index + 1 == len(starts):
                    break
                at = joined.find(form, starts[index + 1])
        return found

    def _days(self) -> dict[date, list[int]]:
        """The turns said on each known day (their indices)."""
        if self._by_day is None:
            self._by_day = {}
            for index, turn in enumerate(self.turns):
                if turn[7] is not None:
                    self._by_day.setdefault(turn[7], []).append(index)
        return self._by_day

    def _wanted(self, value: str, day: date) -> Any:
        """The day or moment ``value`` writes, read on ``day`` (``value_time``; None for most values)."""
        key = (value, day)
        if key not in self.wanted:
            self.wanted[key] = value_time(value, day)
        return self.wanted[key]

    def holds(self, index: int, value: str) -> bool:
        found = self._held.get(value)
        if found is not None:
            return found[index]
        turn = self.turns[index]
        if any(form in turn[3] for form in _written_forms(value)):
            return True
        return turn[7] is not None and self._said_in_words(index, value, turn[7])

    def _said_in_words(self, index: int, value: str, day: date) -> bool:
        """Whether turn ``index``, said on ``day``, names ``value`` (a day or a moment) in words."""
        wanted = self._wanted(value, day)
        return wanted is not None and wanted in self._times(index, day)

    def _times(self, index: int, day: date) -> set[Any]:
        """The days and moments turn ``index``, said on ``day``, names in words (read once)."""
        times = self.read.get(index)
        if times is None:
            times = self.read[index] = {found.when for found in read_times(self.turns[index][3], day)}
        return times

    def held_wrong(self, value: str) -> list[bool]:
        """For each turn, whether it holds ``value`` (:meth:`held`) or, for a file in a folder, its
        name without the folder: a turn that names an earlier or a near-miss file by its name alone
        ("the file from the old drive is scores2.xlsx") points at it as surely; so does one that
        names a file without a folder by its name without its ending, where that name is no plain
        word ("save it as report2, in the format from last time"); a figure or a clock with a point
        in it is no file. The list is shared, not to be changed."""
        found = self._held_wrong.get(value)
        if found is None:
            name = _wrong_name(value)
            found = held = self.held(value)
            if name is not None:  # looked for in the turns that hold its letters at all
                found = list(held)
                for index in compress(range(len(found)), self._written_in((name.word,))):
                    found[index] = found[index] or name.search(self.turns[index][3])
            self._held_wrong[value] = found
        return found

    def names_anchor(self, index: int, anchor: str, base: str) -> bool:
        """Whether turn ``index`` names a derived value's ``anchor`` with the anchor's own value."""
        return anchor.lower() in self.turns[index][3] and self.holds(index, base)


def _written_forms(value: str) -> tuple[str, ...]:
    """How a turn writes ``value`` out, lower case: as written, and a clock range in words too
    ("10:00 to 17:00")."""
    window = say_window(value)
    return (value.lower(), window.lower()) if window else (value.lower(),)


def _wrong_name(value: str) -> "FileName | None":
    """What else names ``value`` when it is an earlier or near-miss value (:meth:`ValueHolder.held_wrong`):
    a file in a folder by its bare name, a file without a folder by its name without its ending
    where that name is no plain word; None for any other value."""
    name = bare_file(value)
    if not name:  # a file without a folder, by its name without its ending
        parts = file_parts(value.strip())
        stem = parts[0] if parts is not None and names_a_copy(parts[0]) else ""
        return FileName(stem.lower(), stem=True) if stem else None
    return FileName(name.lower(), stem=False)


def _word_char(char: str) -> bool:
    """A character the regular expressions' ``\\w`` matches (str patterns: a letter, a digit or "_")."""
    return char.isalnum() or char == "_"


class FileName:
    """A file's name as a text names it: ``word`` not inside a path, a longer name or a word
    (``(?<![\\w./-])word(?![\\w-])``), and for a name without its ending (``stem``) not followed by
    one either (``(?!\\.\\w)``). Looked for with ``str.find`` rather than a pattern made for each
    value: a build checks a few new values a task, and compiling their patterns cost more than
    the look-ups."""

    def __init__(self, word: str, stem: bool) -> None:
        self.word, self.stem = word, stem

    def search(self, text: str) -> bool:
        """Whether ``text`` names the file."""
        word, size = self.word, len(self.word)
        at = text.find(word)
        while at != -1:
            end = at + size
            if ((at == 0 or not (_word_char(text[at - 1]) or text[at - 1] in "./-"))
                    and (end == len(text) or not (_word_char(text[end]) or text[end] == "-"))
                    and not (self.stem and text[end:end + 1] == "." and end + 1 < len(text)
                             and _word_char(text[end + 1]))):
                return True
            at = text.find(word, at + 1)
        return False


MAX_MARKS_SEEN = 8  # a build checks a dialogue's marks twice in a row (its verifier, then its evidence gate)
_MARKS_SEEN: Kept[tuple[str, ...]] = Kept(MAX_MARKS_SEEN)  # _Marks((frozen memory, turns)) -> problems


def _frozen(value: Any) -> Any:
    """``value`` as a hashable key that equals another only for the same types and values (``1``,
    ``1.0``, ``True`` and ``"1"`` stay apart, as the messages print them apart); None for a value
    that cannot be a key."""
    if isinstance(value, (dict, list, tuple)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        parts = []
        for k, v in items:
            frozen = _frozen(v)
            if frozen is None:
                return None
            parts.append((type(k), k, frozen))
        return (type(value), tuple(parts))
    if value is None or isinstance(value, (str, int, float, date)):
        return (type(value), value)
    return None


# the types each field of a plain turn may hold (see _plain)
_PLAIN_FIELDS: tuple[set[type], ...] = ({str}, {int}, {str}, {str}, {tuple}, {tuple}, {tuple}, {date, type(None)})


def _plain(turns: list[MarkedTurn]) -> bool:
    """Whether the turns hold only the types :func:`marked_turns` makes from a valid record (text ids,
    whole-number days, dates), so equal turns are the same turns. Read field by field (the types of
    a field's values as a set, in C loops): a build asks it of every history twice."""
    if not turns:
        return True
    if set(map(len, turns)) != {8}:
        return False
    fields = list(zip(*turns))
    if not all(set(map(type, values)) <= allowed for values, allowed in zip(fields, _PLAIN_FIELDS)):
        return False
    return set(map(type, chain.from_iterable(chain(fields[4], fields[5], fields[6])))) <= {str}


class _Marks:
    """A dialogue's memory and marks as a key of the problems kept: hashed once (a key of hundreds
    of turns is hashed again at each look-up of a dict otherwise), equal for equal content."""

    __slots__ = ("content", "_hash")

    def __init__(self, content: tuple[Any, ...]) -> None:
        self.content, self._hash = content, hash(content)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Marks) and self.content == other.content


def mark_problems(memory: list[dict[str, Any]], turns: list[MarkedTurn]) -> list[str]:
    """:func:`find_mark_problems`, kept for the last few dialogues: a build checks the same marks in
    its verifier and again in its evidence gate. Keyed on the whole content, so an answer is never
    one for other marks."""
    frozen = _frozen(memory)
    if frozen is None or not _plain(turns):
        return find_mark_problems(memory, turns)
    return list(_MARKS_SEEN.get(_Marks((frozen, tuple(turns))), lambda: tuple(find_mark_problems(memory, turns))))


def find_mark_problems(memory: list[dict[str, Any]], turns: list[MarkedTurn]) -> list[str]:
    """What is wrong with the memory marks of a dialogue (one line each, naming day and turn):

    - each piece's final value (written out, or a day or moment named in words) is in at least one turn, every turn
      holding it lists the piece in ``evidence``, every turn listing it holds it, and the first
      such turn is the user's;
    - each superseded value is held only by turns that list the piece in ``superseded`` (and
      every such turn holds one; a file in a folder is held by its name alone too: an earlier
      value may be said against an anchor, as a final one is); it is said at least once on a day
      before the first evidence turn's day, and any later mention comes after the final value (an old proposal turned
      down again); a superseded turn between the two is misplaced;
    - each near-miss value is held only by turns that list the piece in ``distractor`` (and
      every such turn holds one);
    - a derived value (``derived``) is said in no turn: its relation (``said_as``) stands for it
      above, its anchor is said with the anchor's own value in an evidence turn, and its rule
      gives the value from that base;
    - marks name only memory ids.
    """
    problems: list[str] = []
    known = {m.get("id") for m in memory}
    marked_any = []  # the turns with any mark: each piece's marked turns are looked for among these few
    for index, (where, _, _, _, evidence, superseded, distractor, _) in enumerate(turns):
        if evidence or superseded or distractor:
            marked_any.append(index)
            for mid in (*evidence, *superseded, *distractor):
                if mid not in known:
                    problems.append(f"{where}: marks {mid!r}, which is not a memory id")
    holder = ValueHolder(turns)
    everywhere = range(len(turns))
    for m in memory:
        mid, value = m["id"], str(m.get("value") or "")
        name = f"memory {mid} (value {_short(m.get('said_as') or value)})"
        if not value.strip():
            problems.append(f"memory {mid}: empty value")
            continue
        derivation = _derivation(m)
        if m.get("derived") is not None and derivation is None:
            problems.append(f"memory {mid}: 'derived' is not a rule, amount, anchor and base")
            continue
        if derivation is not None:
            problems += _derived_problems(m, derivation, name, turns, holder)
            relation = str(m.get("said_as") or "").lower()
            finals = [bool(relation) and relation in t[3] for t in turns]
        else:
            finals = holder.held(value)
        holding = list(compress(everywhere, finals))
        marked = [i for i in holding if mid in turns[i][4]]
        if not holding:
            problems.append(f"{name} is missing from the dialogue")
        for i in holding:
            if mid not in turns[i][4]:
                problems.append(f"{turns[i][0]}: holds {name} but its evidence does not list {mid!r}")
        if derivation is None:
            for i in marked_any:
                if mid in turns[i][4] and not finals[i]:
                    problems.append(f"{turns[i][0]}: evidence lists {mid!r} but the text does not hold its value")
        first_at = marked[0] if marked else None  # the first turn that holds the final value and lists it
        if first_at is not None and turns[first_at][2] != "user":
            problems.append(f"{turns[first_at][0]}: {name} is first said by the {turns[first_at][2]}; the user "
                            "must say it")
        first_day = turns[first_at][1] if first_at is not None else None
        olds = [str(v) for v in m.get("superseded", ()) if str(v).strip()]
        olds_at = _any_of([holder.held_wrong(v) for v in olds], len(turns))
        before = 0  # superseded turns before the correction: the value that was corrected
        for i in _either(compress(everywhere, olds_at), (i for i in marked_any if mid in turns[i][5])):
            t, holds_old = turns[i], olds_at[i]
            if holds_old and mid not in t[5]:
                problems.append(f"{t[0]}: holds an earlier value of {mid} but is not marked superseded")
            if mid in t[5]:
                if not holds_old:
                    problems.append(f"{t[0]}: marked superseded for {mid} but holds none of its earlier values")
                if first_at is not None and i > first_at:
                    continue  # after the final value: an old proposal brought up again and turned down
                before += 1
                if first_day is not None and t[1] >= first_day:
                    problems.append(f"{t[0]}: an earlier value of {mid} is said on or after the day of its "
                                    f"correction (day {first_day}); say it on an earlier day")
        if olds and not before:
            problems.append(f"{name}: its earlier value is never said before the correction")
        nears = [str(d.get("value", "")) for d in m.get("distractors", ()) if str(d.get("value", "")).strip()]
        nears_at = _any_of([holder.held_wrong(v) for v in nears], len(turns))
        for i in _either(compress(everywhere, nears_at), (i for i in marked_any if mid in turns[i][6])):
            t, holds_near = turns[i], nears_at[i]
            if holds_near and mid not in t[6]:
                problems.append(f"{t[0]}: holds a near-miss of {mid} but is not marked distractor")
            if mid in t[6] and not holds_near:
                problems.append(f"{t[0]}: marked distractor for {mid} but holds none of its near-miss values")
    return problems


def _either(*indices: Iterable[int]) -> list[int]:
    """The turn indices in any of ``indices``, in order, each once."""
    return sorted(set(chain(*indices)))


def _any_of(columns: list[list[bool]], count: int) -> list[bool]:
    """For each of ``count`` turns, whether any of ``columns`` (one flag per turn each) holds there."""
    if not columns:
        return [False] * count
    if len(columns) == 1:
        return columns[0]
    return [any(flags) for flags in zip(*columns)]


def _derivation(piece: Mapping[str, Any]) -> Derivation | None:
    """A piece's ``derived`` as a :class:`Derivation`; None when it has none or it is malformed."""
    data = piece.get("derived")
    if not isinstance(data, Mapping):
        return None
    try:
        derivation = Derivation.from_dict(dict(data))
    except (KeyError, TypeError, ValueError):
        return None
    return derivation if derivation.anchor.strip() and derivation.base.strip() else None


def _derived_problems(m: Mapping[str, Any], derivation: Derivation, name: str, turns: list[MarkedTurn],
                      holder: "ValueHolder") -> list[str]:
    """A value said in no single turn: its parts give it, no turn says it outright, and its evidence
    turns are its relation's (the piece's ``said_as``) and its anchor's (the anchor named with its
    own value), at least one of each."""
    mid, value = m["id"], str(m["value"])
    relation = str(m.get("said_as") or "").lower()
    anchor = derivation.anchor.lower()
    problems = []
    if not relation or anchor not in relation:
        problems.append(f"{name}: its relation {relation!r} does not name its anchor {derivation.anchor!r}")
    relation_day = next((t[7] for t in turns if mid in t[4] and relation and relation in t[3]), None)
    if not follows(derivation, value, relation_day, relation):
        problems.append(f"{name}: {derivation.rule} {derivation.amount} of {derivation.base!r} does not give it")
    anchors = 0
    outright = holder.held(value)
    for i, t in enumerate(turns):
        if outright[i]:
            problems.append(f"{t[0]}: says {name} outright; a derived value is said in no single turn")
        if mid not in t[4]:
            continue
        names_anchor = holder.names_anchor(i, derivation.anchor, derivation.base)
        anchors += names_anchor
        if not names_anchor and not (relation and relation in t[3]):
            problems.append(f"{t[0]}: evidence lists {mid!r} but the text holds neither its relation nor "
                            f"{derivation.anchor!r} with {derivation.base!r}")
    if not anchors:
        problems.append(f"{name}: its anchor ({derivation.anchor!r} is {derivation.base!r}) is never said")
    elif derivation.rule in PRESUPPOSED and relation:  # "the file ... I mentioned" before it was mentioned
        said = next(i for i, t in enumerate(turns) if holder.names_anchor(i, derivation.anchor, derivation.base))
        early = next((t for t in turns[:said] if relation in t[3]), None)
        if early is not None:
            problems.append(f"{early[0]}: says {relation!r} before {derivation.anchor!r} is told ({turns[said][0]})")
    return problems


def check_dialogue(draft: TaskDraft, sessions: Iterable[Session | Mapping[str, Any]], *, min_days: int = 5,
                   now: datetime | date | None = None) -> Verdict:
    """Check ``sessions`` against the dialogue rules for ``draft`` (see the module docstring)."""
    try:
        read = [_session(s) for s in sessions]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return Verdict(False, f"dialogue is malformed: {exc!r}")
    problems, dates = _day_problems(read, min_days, now)
    problems += _turn_problems(read, dates)
    flat: list[tuple[str, Turn, str]] = []  # (where, turn, lower-cased text)
    marked: list[MarkedTurn] = []  # the same turns as mark_problems reads them
    for session, said_on in zip(read, dates):
        day = session.day
        for number, turn in enumerate(session.turns, 1):
            where, low = f"day {day} turn {number}", (turn.text if isinstance(turn.text, str) else "").lower()
            flat.append((where, turn, low))
            marked.append((where, day, turn.role, low, turn.evidence, turn.superseded, turn.distractor, said_on))
    problems += _memory_problems(draft, marked)
    problems += _repeat_and_claim_problems(flat)
    return Verdict(not problems, "\n".join(problems) if problems else "ok")


def _day_problems(sessions: list[Session], min_days: int, now: datetime | date | None
                  ) -> tuple[list[str], list[date | None]]:
    """Enough days, numbered in order, on distinct ascending dates before ``now``; and each
    session's date (None where it cannot be read)."""
    problems: list[str] = []
    if len(sessions) < min_days:
        problems.append(f"too few days: {len(sessions)} session(s), at least {min_days} required")
    limit = None
    if now is not None:
        limit = now.date() if isinstance(now, datetime) else now
    previous: tuple[int, date] | None = None
    dates: list[date | None] = []
    for index, session in enumerate(sessions, 1):
        label = f"day {session.day}"
        if session.day != index:
            problems.append(f"{label}: session {index} is numbered {session.day}, expected {index}")
        try:
            day = date.fromisoformat(session.date)
        except (TypeError, ValueError):
            problems.append(f"{label}: bad date {session.date!r} (expected YYYY-MM-DD)")
            dates.append(None)
            continue
        dates.append(day)
        if previous is not None and day <= previous[1]:
            same = "the same date as" if day == previous[1] else "a date before"
            problems.append(f"{label}: date {day} is {same} day {previous[0]} ({previous[1]}); "
                            "dates must be distinct and ascending")
        if limit is not None and day >= limit:
            problems.append(f"{label}: date {day} is not before now ({limit})")
        previous = (session.day, day)
    return problems, dates


def _turn_problems(sessions: list[Session], dates: list[date | None]) -> list[str]:
    """Known roles, the user first, roles alternating, no empty turn, timestamps on the session's
    date and increasing."""
    problems: list[str] = []
    for session, day in zip(sessions, dates):
        if _turns_hold(session.turns, day):
            continue  # (most sessions: the turns are looked at one by one only when some rule fails)
        label = f"day {session.day}"
        if not session.turns:
            problems.append(f"{label}: the session has no turns")
            continue
        last_ts: datetime | None = None
        previous = ""  # the role of the turn before
        for number, turn in enumerate(session.turns, 1):
            role = turn.role
            # (where a problem is, written out only for a problem: most turns have none)
            if role not in ("user", "assistant"):
                problems.append(f"{_where(session.day, number)}: unknown role {role!r}")
            elif number == 1 and role != "user":
                problems.append(f"{_where(session.day, number)}: the session is opened by the {role}; "
                                "the user opens each session")
            elif number > 1 and role == previous:
                problems.append(f"{_where(session.day, number)}: two {role} turns in a row (turns {number - 1} "
                                f"and {number}); roles must alternate")
            previous = role
            if not isinstance(turn.text, str) or not turn.text.strip():
                problems.append(f"{_where(session.day, number)}: empty turn")
            try:
                stamp = datetime.fromisoformat(turn.ts)
            except (TypeError, ValueError):
                problems.append(f"{_where(session.day, number)}: bad timestamp {turn.ts!r} "
                                "(expected YYYY-MM-DDTHH:MM:SS)")
                continue
            if day is not None and stamp.date() != day:
                problems.append(f"{_where(session.day, number)}: timestamp {turn.ts} is not on the session date {day}")
            if last_ts is not None and stamp <= last_ts:
                problems.append(f"{_where(session.day, number)}: timestamp {turn.ts} is not after the previous "
                                f"turn's ({last_ts.isoformat(timespec='seconds')}); timestamps must increase")
            last_ts = stamp
    return problems


_ROLE, _TEXT, _TS = attrgetter("role"), attrgetter("text"), attrgetter("ts")


def _turns_hold(turns: tuple[Turn, ...], day: date | None) -> bool:
    """Whether a session's turns keep every rule :func:`_turn_problems` checks: told field by field
    in C loops (the loop there asks each turn in Python, for the words of a problem)."""
    if not turns:
        return False
    roles = list(map(_ROLE, turns))
    users, assistants = roles[::2], roles[1::2]
    if users.count("user") != len(users) or assistants.count("assistant") != len(assistants):
        return False
    texts = list(map(_TEXT, turns))
    if set(map(type, texts)) != {str} or not all(map(str.strip, texts)):
        return False
    try:
        stamps = list(map(datetime.fromisoformat, map(_TS, turns)))
        return ((day is None or set(map(datetime.date, stamps)) == {day})
                and all(map(operator.lt, stamps, stamps[1:])))
    except (TypeError, ValueError):  # a bad timestamp, or one with a zone beside one without
        return False


def _memory_problems(draft: TaskDraft, turns: list[MarkedTurn]) -> list[str]:
    """Distinct memory ids, the marks of each piece (:func:`mark_problems`), and no value in the intent."""
    problems: list[str] = []
    ids = [p.id for p in draft.memory]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"memory id {dup!r} is used by more than one piece")
    problems += mark_problems([p.to_dict() for p in draft.memory], turns)
    intent = draft.intent or ""
    for piece in draft.memory:
        if piece.value and says_value(intent, piece.value):
            problems.append(f"intent leaks memory {piece.id} (value {_short(piece.value)})")
    return problems


def _repeat_and_claim_problems(flat: list[tuple[str, Turn, str]]) -> list[str]:
    """No utterance said twice word for word; the assistant promises, never claims a deed done."""
    problems: list[str] = []
    first_at: dict[str, str] = {}
    for where, _turn, low in flat:
        key = " ".join(low.split())
        if key in first_at:
            problems.append(f"{where}: repeats {first_at[key]} word for word; no utterance may repeat")
        else:
            first_at[key] = where
    for where, turn, _ in flat:
        if turn.role == "assistant" and isinstance(turn.text, str):
            claim = completion_claim(turn.text)
            if claim:
                problems.append(f"{where}: the assistant claims completion ({claim!r}); "
                                "it may only say it will do things")
    return problems
