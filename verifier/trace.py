"""Where every criterion argument comes from: the chat, the office, or a stated computation.

A task is only fair if an agent can derive everything its criteria check. ``trace_task`` follows
each value-bearing argument of each criterion (file names, people, keywords, cell values, times,
numbers) to one source:

- ``user``: the office user themself (the task header names them);
- ``query``: the request the agent is given when the task starts;
- ``memory:<id>``: the final value of a memory piece, said in the chat;
- ``testbed:<path>``: text of a file of the initial testbed (a mail, a sheet, a PDF ...);
- ``computed:<i>``: entry ``i`` of the record's ``computed`` list, whose inputs are traced the
  same way and whose operation is re-done here (a sum, a mean, a start plus a duration ...);
- ``derived:<path>``: an output file named after a traced one (``report.docx`` -> ``report.pdf``).

It also checks completeness and fairness:
- every memory piece that states a requirement (an output name, a subject, a recipient, a time,
  a duration, a title ...) is checked by some criterion, and every other piece is used (read by
  the oracle plan, an input of a computation, or checked);
- no check hides a convention: a value nobody said and nothing computes is untraced;
- a task checks some work on the office's data: at least one argument traced to the testbed
  or a computation that the chat never says, so pasting the chat cannot pass.

The same rules hold for both backends; a task that breaks one is dropped with the reason.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, NamedTuple, cast

from backends.task_record import TaskRecord, plan_calls
from office_env.apps import get_app, registered_apps, registry_cache
from office_env.evaluation.keywords import Haystack, normalize, without_thousands
from office_env.evaluation.stated import whole_word_re
from office_env.formats.built import remembered_text

# Memory cues that state a requirement the criteria must check.
OUTPUT_CUES = frozenset({
    "output_file", "subject", "recipient", "requester", "meeting_time", "meeting_day", "meeting_title",
    "duration", "layout", "title", "new_figure", "reply_point", "attendee", "location", "deadline", "memo_point",
    "agenda_point", "sheet_row", "row_order", "session_day", "time_window", "move_window", "start_time",
    "verdict_words", "follow_up_day", "status", "row_label",
})
FILE_KEYS = ("file", "result_file", "input_file", "output_file")
PERSON_KEYS = ("username", "sender", "recipient")
KEYWORD_KEYS = ("keywords", "subject_keywords", "body_keywords")
TIME_KEYS = ("start", "end")
# checks that something is absent: their arguments may name what a wrong plan writes
REFUSING_CHECKS = frozenset({"evaluate_email_not_sent", "evaluate_calendar_no_event", "evaluate_not_contain",
                             "evaluate_file_not_exist", "evaluate_excel_cell_comparator"})
OPS = ("sum", "mean", "min", "max", "count", "difference", "product", "ratio", "percent", "round",
       "add_minutes", "minutes_between", "argmax", "argmin", "rule")
TOLERANCE = 0.005
_ADDRESS_RE = re.compile(r"([A-Z][A-Za-z'.-]+(?: [A-Z][A-Za-z'.-]+){0,3})\s*<([A-Za-z0-9._%+-]+)@[^>\s]+>")
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M")


@dataclass(frozen=True)
class Leaf:
    """One value-bearing argument: ``where`` names it (``evaluation[0].args.keywords[1]``)."""

    criterion: int
    where: str
    role: str  # file | person | keyword | value | time
    value: Any


@dataclass
class Trace:
    sources: dict[str, str] = field(default_factory=dict)  # leaf.where -> source
    problems: list[str] = field(default_factory=list)
    leaves: int = 0

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def traced_share(self) -> float:
        return len(self.sources) / self.leaves if self.leaves else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"leaves": self.leaves, "traced": len(self.sources), "sources": dict(self.sources),
                "problems": list(self.problems)}


# -- the office as text ------------------------------------------------------------------------

MAX_FOUND = 4096  # the answers an office's text keeps of ``find`` (then it starts again empty)


@dataclass(frozen=True)
class OfficeText:
    """The initial testbed as searchable text, one entry per file, and who has which address."""

    files: dict[str, Haystack]
    names: dict[str, frozenset[str]]  # address local part -> names written next to it
    # superseded copies (``notes_old.docx``): never a checked value's source, but what a check may
    # refuse (the draft's figures a right mail must not carry)
    superseded: dict[str, Haystack] = field(default_factory=dict)
    # find's answers (the tasks of one world share its office and ask of the same people and files)
    _found: dict[tuple, str | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, texts: dict[str, str], superseded: dict[str, str] | None = None) -> "OfficeText":
        names: dict[str, set[str]] = {}
        for text in texts.values():
            for name, local in _ADDRESS_RE.findall(text):
                names.setdefault(local.lower(), set()).add(name.strip())
        return cls({path: Haystack(text) for path, text in texts.items()},
                   {k: frozenset(v) for k, v in names.items()},
                   {path: Haystack(text) for path, text in (superseded or {}).items()})

    def find(self, value: Any, first: Iterable[str] = ()) -> str | None:
        """The first file whose text holds ``value``, looking in ``first`` (the files a plan reads)
        before the rest in path order, so a short number is credited to the sheet it comes from
        rather than to a calendar that holds it by chance; a time (``2025-03-31 14:00:00``) is found
        in a file that holds both its date and its clock time (``on 2025-03-31 from 14:00``)."""
        first = tuple(first)
        if type(value) not in (str, int, float):
            return self._find(value, first)
        key = (type(value), repr(value), first)  # repr: 1, 1.0 and True are looked for apart, as 0.0 and -0.0
        if key not in self._found:
            if len(self._found) >= MAX_FOUND:
                self._found.clear()
            self._found[key] = self._find(value, first)
        return self._found[key]

    def _find(self, value: Any, first: tuple[str, ...]) -> str | None:
        when = _time(value)
        parts = [f"{when:%Y-%m-%d}", f"{when:%H:%M}"] if when is not None else [value]
        preferred = [p for p in first if p in self.files]
        for path in [*preferred, *sorted(self.files)]:
            if all(self.files[path].has(part) for part in parts):
                return path
        return None


def office_text(root: Path) -> OfficeText:
    """Read every document, mail and calendar of a testbed through the project's readers (an
    unreadable file is left out: its content cannot be a source)."""
    from office_env.errors import OfficeError
    from office_env.evaluation.content import read_document
    from office_env.formats import eml_io
    from office_env.synthesis.common import is_superseded

    texts: dict[str, str] = {}
    superseded: dict[str, str] = {}
    root = Path(root)
    # the kinds the apps write that the evaluation reads as text (docx, xlsx, pdf, ics, txt): a mail
    # is read below, in the form the checks see it
    kinds = {a.extensions[0] for a in registered_apps() if a.extensions and a.extensions[0] in a.readers}
    for path in plain_files(root):
        rel = path.relative_to(root).as_posix()
        # a superseded copy is a near miss, never the source of a checked value
        into = superseded if is_superseded(rel) else texts
        suffix = path.suffix.lower().lstrip(".")
        try:
            if suffix == "eml":
                mail = eml_io.read(path, rel)
                into[rel] = f"From: {mail.sender}\nTo: {mail.recipient}\nSubject: {mail.subject}\n{mail.body}"
            elif suffix in kinds:
                into[rel] = read_document(path, rel, suffix)
        except (OfficeError, ValueError, OSError):
            continue
    return OfficeText.of(texts, superseded)


def plain_files(root: Path) -> list[Path]:
    """Regular files below ``root``, sorted, never through a link (a testbed may come from a stranger)."""
    found = []
    for folder, dirs, files in os.walk(root):  # os.walk does not follow links to folders
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        found += [Path(folder, f) for f in files if not os.path.islink(os.path.join(folder, f))
                  and os.path.isfile(os.path.join(folder, f))]
    return sorted(found)


# -- leaves ------------------------------------------------------------------------------------

def leaves_of(criteria: list[dict[str, Any]]) -> list[Leaf]:
    out: list[Leaf] = []
    for i, item in enumerate(criteria):
        args = item.get("args", {}) if isinstance(item, dict) else {}
        base = f"evaluation[{i}].args"
        for key in FILE_KEYS:
            if isinstance(args.get(key), str):
                out.append(Leaf(i, f"{base}.{key}", "file", args[key]))
        for key in PERSON_KEYS:
            if isinstance(args.get(key), str):
                out.append(Leaf(i, f"{base}.{key}", "person", args[key]))
        for key in KEYWORD_KEYS:
            for k, word in enumerate(args.get(key) or []):
                out.append(Leaf(i, f"{base}.{key}[{k}]", "keyword", word))
        summary = args.get("summary")
        for k, word in enumerate(summary if isinstance(summary, list) else [summary] if summary else []):
            out.append(Leaf(i, f"{base}.summary" + (f"[{k}]" if isinstance(summary, list) else ""), "keyword", word))
        for k, match in enumerate(args.get("matches") or []):
            if isinstance(match, dict) and "value" in match:
                out.append(Leaf(i, f"{base}.matches[{k}].value", "value", match["value"]))
            if isinstance(match, dict) and "comparator" in match:
                for n, number in enumerate(re.findall(r"-?\d+(?:\.\d+)?", str(match["comparator"]))):
                    out.append(Leaf(i, f"{base}.matches[{k}].comparator#{n}", "value", number))
        if "number" in args:
            out.append(Leaf(i, f"{base}.number", "value", args["number"]))
        for key in TIME_KEYS:
            if isinstance(args.get(key), str):
                out.append(Leaf(i, f"{base}.{key}", "time", args[key]))
    return out


# -- matching ----------------------------------------------------------------------------------

def _number(value: Any) -> float | None:
    text = str(value).replace(",", "").strip()
    return float(text) if _NUMBER_RE.match(text) else None


def _time(value: Any) -> datetime | None:
    text = str(value).strip()
    return _parse_time(text) if text[:4].isdigit() else None  # every format starts with the year


@lru_cache(maxsize=1024)
def _parse_time(text: str) -> datetime | None:
    for fmt in _TIME_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


class _Reading(NamedTuple):
    """A value as the trace compares it: its number, its time and its text (case and spaces
    folded), each read from the value's text alone."""

    number: float | None
    time: datetime | None
    text: str


MAX_KEPT_READING_CHARS = 256  # a longer value is read again at each comparison, not kept


def _read(value: Any) -> _Reading:
    """``value``'s reading, the same one for the latest texts: a trace and the search for the
    office's values compare every argument with every said value, each read again per pair."""
    return _reading_of(str(value))


@remembered_text(4096, MAX_KEPT_READING_CHARS)
def _reading_of(text: str) -> _Reading:
    return _Reading(_number(text), _time(text), normalize(text))


def same_value(a: Any, b: Any) -> bool:
    """Equal as numbers (within a cent), as times (to the minute) or as text (case and spaces
    folded)."""
    return _same(_read(a), _read(b))


def _same(a: _Reading, b: _Reading) -> bool:
    if a.number is not None and b.number is not None:
        return abs(a.number - b.number) <= TOLERANCE
    if a.time is not None and b.time is not None:
        return a.time.replace(second=0) == b.time.replace(second=0)
    return a.text == b.text


def _says(read: _Reading, memory: _Reading) -> bool:
    """A value (``read``) is a memory value (``memory``), holds it (a path ``data/x.docx`` for
    ``x.docx``), or is a time it states (``2025-03-26 13:00``). Readings, not values: a caller
    comparing one value with many reads each of them once."""
    if _same(read, memory):
        return True
    text, said = read.text, memory.text
    if len(said) >= 4 and (text.endswith("/" + said) or said == text.rsplit("/", 1)[-1]):
        return True
    return read.time is not None and f"{read.time:%Y-%m-%d %H:%M}" in said


_CLOCK_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])")
# a number of its own: not part of a clock, a date, a code or a word ("Q3", "9am", "2nd", "INV-2024")
_RULE_NUMBER_RE = re.compile(r"(?<![\w:.,-])\d+(?:\.\d+)?(?![\w:]|[.,]\d)")
_LENGTH_RE = re.compile(r"(?<!half )\b(?:an|one) hour\b(?! and a half)")


def rule_specifics(rule: str) -> list[str]:
    """What a rule fixes that an agent could not guess: its clock times (``10:00``), its numbers and
    a stated length (``one hour``). Each must be said in the chat, where the pieces the
    rule is ``given`` are said; the rest of a rule's wording is the family's to make plain."""
    times = [f"{int(h)}:{m}" for h, m in _CLOCK_RE.findall(rule)]
    plain = without_thousands(_CLOCK_RE.sub(" ", rule))
    numbers = _RULE_NUMBER_RE.findall(plain)
    return [*times, *numbers, *(["one hour"] if _LENGTH_RE.search(rule.lower()) else [])]


def says(text: str, specific: str) -> bool:
    """``text`` (normalized) holds ``specific`` as a word of its own: a clock time however its hour
    is written (``09:00`` says ``9:00``; ``19:00`` does not), a number by value (``1,500`` says
    ``1500``; ``2.5`` does not say ``2``), ``one hour`` also as ``an hour``."""
    if specific == "one hour":
        return _LENGTH_RE.search(text) is not None
    clock = _CLOCK_RE.fullmatch(specific)
    if clock:
        return (int(clock.group(1)), int(clock.group(2))) in {(int(h), int(m)) for h, m in _CLOCK_RE.findall(text)}
    number = _number(specific)
    if number is not None:
        plain = without_thousands(_CLOCK_RE.sub(" ", text))
        return any(float(n) == number for n in _RULE_NUMBER_RE.findall(plain))
    return re.search(rf"(?<![\w:]){re.escape(specific.lower())}(?!\w)", text) is not None


def rule_wording(entry: dict[str, Any]) -> list[str]:
    """The words a ``rule`` entry makes the answer say: its value when that is text the rule holds
    (``over budget`` of "... within budget ..., else over budget"), not a number or a time."""
    value, rule = str(entry.get("value", "")), str(entry.get("rule", ""))
    return [value] if _number(value) is None and _time(value) is None and normalize(value) in normalize(rule) else []


def clock_specifics(text: str) -> list[str]:
    """The clock times and stated length of a piece's text (``within 10:00-16:00, one hour``)."""
    return [s for s in rule_specifics(text) if s == "one hour" or _CLOCK_RE.fullmatch(s)]


def office_values(criteria: list[dict[str, Any]], said: Iterable[str]) -> list[str]:
    """The values the criteria check that the history does not say (``said``: every specific it
    does, ``generators.dialogue_offline.task_values``, and the query, which names the work): what
    the agent must find in the office or compute, so a history that states one by chance would let
    pasting the chat pass. A value said as whole words of a longer one is said."""
    return leaf_office_values(leaves_of(criteria), said)


def leaf_office_values(leaves: list[Leaf], said: Iterable[str]) -> list[str]:
    """:func:`office_values` of the criteria's leaves (``leaves_of``), for a caller that has them."""
    readings = [_read(v) for v in said if v.strip()]  # each read once, not once per leaf
    out: list[str] = []
    for leaf in leaves:
        value = str(leaf.value)
        if leaf.role not in ("keyword", "value", "time") or not value.strip() or value in out:
            continue
        read = _read(value)
        if not any(_says(read, memory) or _words_in(read, memory) for memory in readings):
            out.append(value)
    return out


def _words_in(read: _Reading, memory: _Reading) -> bool:
    """A value (``read``) is whole words of a memory value: a sheet's header ``Invoice`` the chat
    says as part of its layout ``Invoice then Total``."""
    return bool(read.text) and f" {read.text} " in f" {memory.text} "


def _stem(path: str) -> str:
    name = str(path).rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0].lower() if "." in name else name.lower()


# -- computations ------------------------------------------------------------------------------

def recompute(entry: dict[str, Any]) -> Any:
    """The value an entry of ``computed`` should have, or raise ValueError saying why not."""
    op, inputs = entry.get("op"), entry.get("inputs", [])
    if op not in OPS:
        raise ValueError(f"op {op!r} is not one of {', '.join(OPS)}")
    if op == "rule":
        return entry.get("value")
    if op == "add_minutes":
        start, minutes = _time(inputs[0]) if inputs else None, _number(inputs[1]) if len(inputs) > 1 else None
        if start is None or minutes is None:
            raise ValueError("add_minutes needs a time and a number of minutes")
        return (start + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M:%S")
    if op == "minutes_between":  # the length of something the office holds (a meeting's start and end)
        times = [_time(v) for v in inputs]
        if len(times) != 2 or None in times:
            raise ValueError("minutes_between needs two times")
        return int((times[1] - times[0]).total_seconds() // 60)  # type: ignore[operator]  # neither is None (above)
    if op == "count":
        return len(inputs)
    if op in ("argmax", "argmin"):  # inputs: label, number, label, number ...; a tie has no answer
        if len(inputs) < 2 or len(inputs) % 2:
            raise ValueError(f"{op} needs label, number pairs")
        pairs = [(inputs[i], _number(inputs[i + 1])) for i in range(0, len(inputs), 2)]
        if any(n is None for _, n in pairs):
            raise ValueError(f"{op} needs a number after each label")
        best = (max if op == "argmax" else min)(n for _, n in pairs)  # type: ignore[type-var]  # none is None (above)
        winners = [label for label, n in pairs if n == best]
        if len(winners) != 1:
            raise ValueError(f"{op} has a tie between {winners[:3]!r}")
        return winners[0]
    numbers = [_number(v) for v in inputs]
    if not numbers or any(n is None for n in numbers):
        raise ValueError(f"{op} needs numbers, got {inputs!r}"[:200])
    values: list[float] = numbers  # type: ignore[assignment]  # none is None (above)
    if op == "sum":
        return round(sum(values), 2)
    if op == "mean":
        return round(sum(values) / len(values), 2)
    if op == "min":
        return min(values)
    if op == "max":
        return max(values)
    if op == "round":
        return round(values[0], int(values[1]) if len(values) > 1 else 0)
    if len(values) != 2:
        raise ValueError(f"{op} needs two inputs")
    a, b = values
    if op == "difference":
        return round(a - b, 2)
    if op == "product":
        return round(a * b, 2)
    if b == 0:
        raise ValueError(f"{op} divides by zero")
    return round(a / b, 4) if op == "ratio" else round(100 * a / b, 2)


# -- the trace ---------------------------------------------------------------------------------

class _Tracer:
    def __init__(self, record: TaskRecord, office: OfficeText) -> None:
        self.record, self.office = record, office
        # the pieces, computations and plans as written: their values are compared as the JSON they are
        self.memory = [m.to_dict() for m in record.memory]
        self.readings = [_read(str(m.get("value", ""))) for m in self.memory]  # each piece's value, read once
        user = record.user
        self.user_ids = {normalize(v) for v in (user.username, user.email or "", user.name)} - {""}
        self.query = Haystack(record.query)
        self.dialogue = normalize(" ".join(t.text for s in record.dialogue for t in s.turns))
        self.said_at: dict[str, list[str]] = {}  # memory id -> its evidence turns' text
        self.said_before: dict[str, list[str]] = {}  # memory id -> the turns with a value it corrects
        for session in record.dialogue:
            for turn in session.turns:
                for mid in turn.evidence or ():
                    self.said_at.setdefault(mid, []).append(normalize(turn.text))
                for mid in turn.superseded or ():
                    self.said_before.setdefault(mid, []).append(normalize(turn.text))
        self.computed = [c.to_dict() for c in record.computed or []]
        self.calls = plan_calls(record.oracle)
        self.read = sorted(_read_paths(self.calls))  # the files the oracle plan reads
        self.used: set[str] = set()  # memory ids a leaf, an input or the oracle uses
        self.checked: set[str] = set()  # memory ids a criterion checks
        self.problems: list[str] = []
        self.inputs_said: dict[int, set[str]] = {}  # computed entry -> memory ids among its inputs
        self.computed_ok = [self._check_computed(i, c) for i, c in enumerate(self.computed)]
        self._wrong_hay: list[Any] | None = None  # every argument value of the wrong plans

    def _memory_source(self, value: Any) -> str | None:
        read = _read(value)
        for m, memory in zip(self.memory, self.readings):
            if _says(read, memory):
                return str(m.get("id"))
        words = read.text
        if len(words) >= 2:  # part of a stated requirement: "Invoice" of "Invoice then Total", "60" of "60 minutes"
            number = _number(words) is not None
            for m, memory in zip(self.memory, self.readings):
                said = memory.text
                if number and _CLOCK_RE.search(said):
                    continue  # "30" is not said by "14:30", nor "16" by "10:00-16:00"
                if m.get("cue") in OUTPUT_CUES and _word_in(words, said):
                    return str(m.get("id"))
        return None

    def _check_computed(self, i: int, entry: dict[str, Any]) -> bool:
        where = f"computed[{i}]"
        try:
            expected = recompute(entry)
        except (ValueError, TypeError, IndexError) as exc:
            self.problems.append(f"{where}: {exc}")
            return False
        if not same_value(expected, entry.get("value")):
            self.problems.append(f"{where}: {entry.get('op')} of the inputs is {expected!r}, "
                                 f"not {entry.get('value')!r}")
            return False
        given = [str(g) for g in entry.get("given", [])]
        unknown = [g for g in given if g not in {str(m.get("id")) for m in self.memory}]
        if unknown:
            self.problems.append(f"{where}.given: {unknown[0]!r} is not a memory piece")
            return False
        self.used.update(given)
        self.inputs_said.setdefault(i, set()).update(given)
        if entry.get("op") == "rule":
            rule = str(entry.get("rule", ""))
            stated = [m["id"] for m in self.memory if rule and normalize(rule) in normalize(str(m.get("text", "")))]
            if not rule or not stated:
                self.problems.append(f"{where}: the rule {rule!r} it follows is not stated in any memory piece")
                return False
            self.used.update(stated)
            heard = [text for mid in given for text in self.said_at.get(mid, ())]
            # a derived value is said in no turn: its parts are, and the value is what they give
            heard += [normalize(str(m.get("value", ""))) for m in self.memory if m["id"] in given and m.get("derived")]
            # a correction changes a piece's value, not the length said with the value it corrects
            heard_before = [text for mid in given for text in self.said_before.get(mid, ())]
            # the clock times and length of the sentences that state the rule count too, so a rule cut
            # short ("the earliest when we are both free") cannot leave its window unsaid
            stated_text = " ".join(str(m.get("text", "")) for m in self.memory if m["id"] in stated)
            specifics = list(dict.fromkeys([*rule_specifics(rule), *clock_specifics(stated_text),
                                            *rule_wording(entry)]))
            for specific in specifics:
                if not any(says(text, specific) for text in heard + (heard_before if specific == "one hour" else [])):
                    self.problems.append(f"{where}: the rule's {specific!r} is not said where its pieces "
                                         f"({', '.join(given) or 'none given'}) are said: a hidden convention")
                    return False
        if entry.get("op") == "minutes_between" and not self._one_meeting(entry.get("inputs", [])):
            self.problems.append(f"{where}: minutes_between needs a start and a later end that one calendar holds")
            return False
        for k, value in enumerate(entry.get("inputs", [])):
            source = self._plain_source(value, earlier=i)
            if entry.get("op") == "add_minutes" and k == 1 and source is not None and not (
                    source.startswith("memory:") or (source.startswith("computed:") and self.computed[
                        int(source.split(":")[1])].get("op") == "minutes_between")):
                self.problems.append(f"{where}.inputs[1]: the length {str(value)[:20]!r} is neither said in the chat "
                                     "nor a meeting's length in the office (a hidden convention?)")
                return False
            if source and source.startswith("memory:"):
                self.inputs_said.setdefault(i, set()).add(source.split(":", 1)[1])
            if source and source.startswith("computed:"):
                self.inputs_said.setdefault(i, set()).update(self.inputs_said.get(int(source.split(":")[1]), ()))
            if source is None:
                self.problems.append(f"{where}.inputs[{k}]: {str(value)[:80]!r} is neither said, in the office, "
                                     "nor computed before")
                return False
        return True

    def _exclude_problems(self, criteria: list[Any]) -> list[str]:
        """What a list must leave out (``body_excludes``) are rows of the office, and never something a
        right answer holds anyway: a keyword it must contain (either way round) or a name of the
        sender or the recipient (every greeting and signature holds them)."""
        out = []
        for i, item in enumerate(criteria):
            args = cast("dict[str, Any]", item.get("args")) \
                if isinstance(item, dict) and isinstance(item.get("args"), dict) else {}
            required = [str(k) for key in ("subject_keywords", "body_keywords") for k in args.get(key) or []]
            names = set(self.user_ids)
            for key in ("sender", "recipient"):
                local = normalize(str(args.get(key, ""))).split("@")[0]
                names |= {local} | {normalize(n) for full in self.office.names.get(local, ())
                                     for n in (full, *full.split())}
            for k, word in enumerate(args.get("body_excludes") or []):
                where, text = f"evaluation[{i}].args.body_excludes[{k}]", normalize(str(word))
                if any(Haystack(text).has(r) or Haystack(normalize(r)).has(word) for r in required):
                    out.append(f"{where}: {str(word)[:60]!r} overlaps a keyword the mail must hold")
                elif any(text == n or _word_in(text, n) or _word_in(n, text) for n in names if n):
                    out.append(f"{where}: {str(word)[:60]!r} is a name every mail between them holds")
                elif not text or (self.office.find(word, self.read) is None
                                  and not any(hay.has(word) for hay in self.office.superseded.values())):
                    out.append(f"{where}: {str(word)[:60]!r} is not in the office, so leaving it out proves nothing")
            if item.get("function") == "evaluate_answer":
                out += self._hedge_problems(i, args)
        return out

    def _hedge_problems(self, i: int, args: dict[str, Any]) -> list[str]:
        """What an answer must not also name (``excludes``) is what the intent-only plan or a misreading
        answers, and never the right answer itself."""
        wrong = [normalize(str(c.get("args", {}).get("text", ""))) for plan in self._wrong_plans() for c in plan
                 if isinstance(c, dict) and c.get("tool") == "system_write_answer" and isinstance(c.get("args"), dict)]
        right = [str(k) for k in args.get("keywords") or []] + ([str(args["number"])] if "number" in args else [])
        out = []
        for k, value in enumerate(args.get("excludes") or []):
            where, text = f"evaluation[{i}].args.excludes[{k}]", normalize(str(value))
            if any(same_value(value, r) or Haystack(text).has(r) or Haystack(normalize(r)).has(str(value))
                   for r in right):
                out.append(f"{where}: {str(value)[:60]!r} is the right answer, or part of it")
            elif not any(w == text or same_value(w, value) for w in wrong):
                out.append(f"{where}: {str(value)[:60]!r} is not what the intent-only plan or a misreading answers")
        return out

    def _refuses(self, criteria: Any, leaf: Leaf) -> bool:
        """A check that something is absent may name what a wrong plan (the intent-only one, or a
        misreading) writes: the misread recipient, time, value or file it refuses."""
        item = criteria[leaf.criterion] if isinstance(criteria, list) and leaf.criterion < len(criteria) else {}
        if not isinstance(item, dict) or item.get("function") not in REFUSING_CHECKS:
            return False
        if self._wrong_hay is None:
            self._wrong_hay = [v for plan in self._wrong_plans() for call in plan if isinstance(call, dict)
                               for v in _flat(call.get("args", {}))]
        value = str(leaf.value)
        return any(same_value(value, v) or (leaf.role != "file" and Haystack(str(v)).has(value))
                   or (leaf.role in ("file", "person")
                       and normalize(str(v)).split("@")[0] == normalize(value).split("@")[0])
                   for v in self._wrong_hay)

    def _wrong_plans(self) -> list[list[Any]]:
        return [plan_calls(self.record.baseline)] + [plan_calls(m.plan) for m in self.record.misreadings or []]

    def _one_meeting(self, inputs: list[Any]) -> bool:
        """A start and a later end, both written in one calendar of the office (one meeting's span)."""
        times = [_time(v) for v in inputs]
        if len(times) != 2 or None in times or not times[0] < times[1]:  # type: ignore[operator]  # None is ruled out first
            return False
        parts = [f"{t:%Y-%m-%d}" for t in times] + [f"{t:%H:%M}" for t in times]
        return any(path.startswith(get_app("calendar").folder) and all(hay.has(p) for p in parts)
                   for path, hay in self.office.files.items())

    def _plain_source(self, value: Any, earlier: int | None = None) -> str | None:
        mid = self._memory_source(value)
        if mid:
            self.used.add(mid)
            return f"memory:{mid}"
        limit = len(self.computed) if earlier is None else earlier
        for j in range(limit):
            if (earlier is not None or self.computed_ok[j]) and same_value(value, self.computed[j].get("value")):
                return f"computed:{j}"
        path = self.office.find(value, self.read)
        return f"testbed:{path}" if path else None

    def _person(self, value: str) -> str | None:
        key = normalize(value)
        if key in self.user_ids or key.split("@")[0] in {u.split("@")[0] for u in self.user_ids}:
            return "user"
        local = key.split("@")[0]
        for name in sorted(self.office.names.get(local, ())):
            whole, first = normalize(name), normalize(name.split()[0]) if name.split() else None
            for m, reading in zip(self.memory, self.readings):
                said = reading.text
                if said and (said == whole or said == first):
                    self.used.add(str(m["id"]))
                    self.checked.add(str(m["id"]))
                    return f"memory:{m['id']}"
        for m, reading in zip(self.memory, self.readings):  # a mailbox is named after its owner's first name
            words = reading.text.split()  # ("sofia" for Sofia Okafor)
            if words and words[0] == local and m.get("cue") in OUTPUT_CUES | {"requester", "person"}:
                self.used.add(str(m["id"]))
                self.checked.add(str(m["id"]))
                return f"memory:{m['id']}"
        mid = self._memory_source(value)
        if mid:
            self.used.add(mid)
            self.checked.add(mid)
            return f"memory:{mid}"
        if len(local) >= 3 and _word_in(local, self.query.text):
            return "query"
        path = self.office.find(f"{local}@") or (self.office.find(value) if "@" in value else None)
        return f"testbed:{path}" if path else None

    def _names_office(self, value: str) -> bool:
        """Without an oracle plan, a piece is taken as used when it names a file of the office or
        something written in one (what an agent would look for)."""
        name = normalize(value)
        return (any(path.lower().endswith("/" + name) for path in self.office.files)
                or self.office.find(value) is not None)

    def _file(self, value: str, named: dict[str, str]) -> str | None:
        mid = self._memory_source(value)
        if mid:
            self.used.add(mid)
            self.checked.add(mid)
            return f"memory:{mid}"
        if value in self.office.files or value.lstrip("./") in self.office.files:
            return f"testbed:{value}"
        stem = _stem(value)
        for m in self.memory:
            if _stem(str(m.get("value", ""))) == stem and len(stem) >= 3:
                self.checked.add(str(m["id"]))
                return f"derived:{m['value']}"
        for path in named:
            if _stem(path) == stem:
                return f"derived:{path}"
        return None

    def run(self) -> Trace:
        trace = Trace()
        criteria = self.record.criteria()
        leaves = leaves_of(criteria)
        trace.leaves = len(leaves)
        named = {p: "" for p in self.office.files}
        data_work = False
        for item in criteria if isinstance(criteria, list) else []:
            item = item if isinstance(item, dict) else {}
            args = cast("dict[str, Any]", item.get("args")) if isinstance(item.get("args"), dict) else {}
            if (str(item.get("function", "")).startswith("evaluate_excel_cell")
                    and args.get("file") in self.office.files):
                data_work = True  # the cell to change is found in the office's own sheet
        said_in_chat = Haystack(self.dialogue, normalized=True)  # prepared once for every leaf
        for leaf in leaves:
            if leaf.role == "file":
                source = self._file(str(leaf.value), named)
            elif leaf.role == "person":
                source = self._person(str(leaf.value))
            else:
                source = self._plain_source(leaf.value)
                if source and source.startswith("memory:"):
                    self.checked.add(source.split(":", 1)[1])
                if source and source.startswith("computed:"):  # a checked result checks what it was made of
                    self.checked.update(self.inputs_said.get(int(source.split(":")[1]), ()))
            if source is None and self._refuses(criteria, leaf):
                source = "misreading"
            if source is None:
                trace.problems.append(f"{leaf.where}: {str(leaf.value)[:80]!r} is neither said in the chat, "
                                      "in the office, nor computed (a hidden convention?)")
                continue
            trace.sources[leaf.where] = source
            if (not data_work and leaf.role in ("keyword", "value", "time")  # once found, no need to look again:
                    and source.startswith(("testbed:", "computed:"))):    # the chat's figures are read only if needed
                if not said_in_chat.has(leaf.value):
                    data_work = True
        calls = self.calls
        oracle_hay = Haystack(" ".join(str(v) for call in calls for v in _flat(call.get("args", {}))))
        read = [self.office.files[p] for p in self.read if p in self.office.files]
        for m in self.memory:
            mid, value = str(m.get("id")), str(m.get("value", ""))
            if m.get("cue") in OUTPUT_CUES:
                if mid not in self.checked:
                    trace.problems.append(f"memory {mid} ({m.get('cue')}: {value[:60]!r}) states a requirement "
                                          "that no criterion checks")
            elif mid not in self.used and not (value and (oracle_hay.has(value) or any(h.has(value) for h in read)
                                                          or any(_signs(value, h) for h in read)
                                                          or (not calls and self._names_office(value)))):
                trace.problems.append(f"memory {mid} ({m.get('cue') or m.get('kind')}: {value[:60]!r}) is never "
                                      "used: no criterion, computation or oracle step needs it")
        trace.problems += self._exclude_problems(criteria if isinstance(criteria, list) else [])
        if leaves and not data_work:
            trace.problems.append("no criterion checks a value taken from the office or computed from it that the "
                                  "chat does not already say: pasting the chat would pass")
        trace.problems[:0] = self.problems
        return trace


def _read_paths(calls: list[dict[str, Any]]) -> set[str]:
    """Testbed files an oracle plan reads (documents by path, mails by mailbox and id, calendars by
    their owner), as each app's entry says its read tools read them (``App.read_paths``)."""
    reads = _tool_reads()
    paths = set()
    for call in calls:
        template = reads.get(str(call.get("tool", "")))
        args = call.get("args")
        if template is None or not isinstance(args, dict):
            continue
        try:
            path = template.format_map({k: v for k, v in args.items() if isinstance(v, str)})
        except (KeyError, ValueError, IndexError):  # an argument it names is missing, or not a string
            continue
        paths.add(path.lstrip("./"))
    return paths


@registry_cache(maxsize=1)
def _tool_reads() -> dict[str, str]:
    """Every registered app's read tools that read one file, with that file's path template."""
    return {tool: template for app in registered_apps() for tool, template in app.read_paths().items()}


def _signs(value: str, text: Haystack) -> bool:
    """A person's full name whose mailbox (their first name) sent or received the text."""
    words = normalize(value).split()
    return len(words) >= 2 and f"{words[0]}@" in text.text


def _word_in(words: str, text: str) -> bool:
    """``words`` stand in ``text`` as words of their own (``whole_word_re``); the pattern is looked
    at only for a text that holds them (most names are in no other)."""
    return words in text and whole_word_re(words).search(text) is not None


def _flat(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _flat(v)
    elif isinstance(value, list):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def rule_specifics_said(record: TaskRecord) -> tuple[int, int]:
    """(said, all): the times, numbers, lengths and words of every ``rule`` entry of ``record``'s
    ``computed`` list, and how many of them its chat says anywhere -- a survey figure for a
    dataset, looser than the trace (which wants them where the rule's pieces are said)."""
    chat = normalize(" ".join(t.text for s in record.dialogue for t in s.turns))
    # a derived value is said in no turn; its parts are, and they give it
    derived = [normalize(m.value) for m in record.memory if m.derived is not None]
    said = total = 0
    for entry in record.computed or []:
        if entry.op != "rule":
            continue
        for specific in [*rule_specifics(entry.rule or ""), *rule_wording(entry.to_dict())]:
            total += 1
            said += says(chat, specific) or any(says(value, specific) for value in derived)
    return said, total


def trace_task(record: TaskRecord, office: OfficeText) -> Trace:
    """Trace every criterion argument of ``record`` against its memory, ``office`` (its initial
    testbed as text) and its ``computed`` entries; the trace lists every problem found."""
    return _Tracer(record, office).run()
