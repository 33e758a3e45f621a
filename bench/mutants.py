"""Benchmark: does every wrong answer an agent writes fail? Mutants of a build's oracle plans.

Builds an offline dataset in a temporary folder, a standard one (default 60 tasks, seed 11, the
``standard`` preset) or a Challenge one (``--challenge``: default 10 tasks, 30 days of about 250
utterances), or reads one (``--dataset DIR``). Each task's oracle plan is mutated, one wrong value
at a time, the way an agent that misread or mistyped would get it wrong:

- ``superseded`` / ``near_miss``: a memory piece's earlier or near-miss value (the task's own
  misreading plans, which recompute what follows from the wrong value);
- ``same_kind``: every other value of the same kind said in the chat history (a colleague, a file,
  a date, a clock time, a figure; the memory's earlier and near-miss values among them) in place of
  each memory value the plan writes, in the form the plan writes it: a date written "Thursday, 3
  April 2025" becomes "Friday, 4 April 2025", a colleague is his mailbox where the plan mails him,
  his calendar where it books him and his name (whole, or the first name alone) where it names him;
- ``number``: a number the plan writes, plus one and times ten;
- ``hedge``: a number the plan writes with the wrong one offered beside it ("75 or 76"), and every
  value a ``same_kind`` or ``period`` mutant puts in place of the right one offered beside it where
  the plan says it in words ("Thursday, 3 April 2025 or Friday, 4 April 2025", "Hi Elliot or Hugo",
  "Q3 or Q1"), and a look-up's answer in words with each colleague it does not name offered beside it;
- ``day``: a date the plan writes (in any form), the day after; ``time``: a clock time it writes
  an hour later, and every clock it writes an hour earlier (a meeting "from 13:00 to 14:00" for
  one at 14:00);
- ``person``: every other person of the office in place of one the plan writes: a mail's
  recipient, the calendar an event goes in or leaves, a person's name in what a write says (whole,
  or the first name alone; in a mail, never one of its own two people, whom a reply or a forward
  quotes in its greeting and sign-off);
- ``file``: a file the plan writes, written under another name of the office with its ending; the
  document a conversion reads, another of the office (a PDF made from the wrong notes); a document
  the plan copies into a mail or file, another one's text copied instead; a file a write names,
  every other of the office with its ending.
- ``period``: a period a write says in words ("Q3", "H1", "February"; never a date's month), every
  other quarter or half ("Recruiting in Q1" for "Recruiting in Q3"), a month's neighbours;
- ``order``: two periods, clock times or dates a write says as a pair ("from Q1 to Q3", "11:00-12:00",
  "Q2 vs Q3"), said the other way round ("from Q3 to Q1").

Each mutant is replayed on a copy of the testbed and scored with the task's criteria. It is
killed when a criterion fails. A mutant that passes is a survivor, unless the state it leaves is
the oracle's own (the wrong value never reaches the output: it only chose what was read, or it
sat in a call that writes nothing new): such equivalent mutants are listed apart with that reason.
Survivors are counted by kind and by the check functions of the output they changed (``unchecked``:
no criterion reads that output at all). The mutation score is killed / (mutants - equivalent);
the target is no surviving mutant whose wrong value reaches the output.

Run: ``python bench/mutants.py [--challenge] [--n N] [--seed 11] [--dataset DIR] [--show 20] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterator

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks, task_day_first, task_now  # noqa: E402
from backends.task_record import plan_calls  # noqa: E402
from office_env.apps import file_kind_pattern, get_app, registered_apps, registry_cache  # noqa: E402
from office_env.errors import OfficeError  # noqa: E402
from office_env.evaluation.content import read_document  # noqa: E402
from office_env.evaluation.keywords import clock_spans, date_spans  # noqa: E402
from office_env.evaluation.stated import file_name_re  # noqa: E402
from office_env.replays import replay_plan  # noqa: E402
from office_env.snapshot import Snapshot  # noqa: E402
from office_env.synthesis.world import make_world  # noqa: E402
from office_env.tools import default_registry  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.roles import PRESETS, BuildConfig  # noqa: E402

_TOOLS = default_registry()
WRITES = frozenset(name for name in _TOOLS.names if not _TOOLS.only_reads(name))  # the tools that change the office
# each write's argument naming the person whose mailbox or calendar it changes (its declaration's ``person``)
PERSON_ARGS = {t.name: t.person for t in _TOOLS if t.person}
# a conversion (declared converts_to) reads a file of its app's kind, as a document app's read tools do
CONVERSIONS = {t.name: get_app(t.app).extensions[0] for t in _TOOLS if t.converts_to}
READS = {tool: app.extensions[0] for app in registered_apps() if app.office and app.layout == "documents"
         for tool in app.read_tools}
DEFAULT_N = {"standard": 60, "challenge": 10}
_DAY_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_CLOCK_RE = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?::00)?(?![\d:])")
_NUMBER_RE = re.compile(r"(?<![\w.,:/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w/-]|[.,:]\d)")
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")
_WEEKDAY_LEAD_RE = re.compile(r"\b(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s(?:the\s)?$", re.IGNORECASE)
_MONTH_WORD_RE = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?", re.IGNORECASE)
_YEARLESS_RE = re.compile(rf"\b({'|'.join(m.lower() for m in _MONTH_NAMES)})\s(\d{{1,2}})(?:st|nd|rd|th)?\b"
                          rf"|\b(\d{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?({'|'.join(m.lower() for m in _MONTH_NAMES)})\b")
_MONEY_OR_UNIT_RE = re.compile(r"^\s*(?:[$€£]\s?)?[\d.,]+\s*(?:%|[A-Za-z]+)?\s*$")
# the periods a text names in words, each with the others of its kind: quarters, halves, months ("May" is
# as often a verb: left out)
_PERIODS = (("Q1", "Q2", "Q3", "Q4"), ("H1", "H2"), tuple(m for m in _MONTH_NAMES if m != "May"))
_PERIOD_RE = re.compile(rf"(?<![\w-])({'|'.join(p for kind in _PERIODS for p in kind)})(?![\w-])", re.IGNORECASE)
# what joins the two ends of a pair: "from Q1 to Q3", "11:00-12:00", "Q2 vs Q3"
_PAIR_JOIN_RE = re.compile(r"\s*(?:-|–|—)\s*|\s+(?:to|until|till|through|vs\.?|versus|and)\s+", re.IGNORECASE)


@registry_cache(maxsize=1)
def _file_re() -> re.Pattern[str]:
    """A value that is a file's name, in data/ or at the testbed's root: one ending in a kind a
    file's name may end in (``office_env.apps.file_kinds``)."""
    return re.compile(rf"^(?:data/)?[\w.-]+\.({file_kind_pattern()})$")


@dataclass
class Mutant:
    kind: str
    what: str  # "m2 'Sofia Okafor'", "number 1374.45 -> 1375.45"
    plan: list[dict[str, Any]]


@dataclass(frozen=True)
class Person:
    name: str  # "Elliot Gutierrez"
    first: str  # "Elliot"
    user: str  # "elliot": the mailbox and the calendar


@dataclass
class Office:
    """What a task's mutants draw on: its people, its files and the values its chat history says."""

    user: str
    people: tuple[Person, ...]
    files: tuple[str, ...]  # the testbed's documents, "data/inventory.xlsx"
    said: dict[str, list[Any]] = field(default_factory=dict)  # kind -> values the chat says, in order


def _calls(plan: list[Any]) -> list[dict[str, Any]]:
    return [{"tool": c["tool"], "args": dict(c.get("args", {}))} for c in plan]


def _says(tool: str) -> tuple[str, ...]:
    """The arguments holding what a call of ``tool`` writes (its declaration's prose, then its
    values: ``Tool.says``); none for a read."""
    return _TOOLS.get(tool).says if tool in _TOOLS else ()


def _prose(tool: str) -> tuple[str, ...]:
    """The arguments holding what a call of ``tool`` says in words, not a field's value (``Tool.prose``)."""
    return _TOOLS.get(tool).prose if tool in _TOOLS else ()


def _rewrite(plan: list[dict[str, Any]], edit: Callable[[str], str],
             value: Callable[[Any], Any] = lambda v: v, prose_only: bool = False) -> list[dict[str, Any]]:
    """``plan`` with ``edit`` applied to what its writes say (``_says``; ``_prose`` when
    ``prose_only``), and ``value`` to a cell's number."""
    out = []
    for call in plan:
        args = dict(call["args"])
        if call["tool"] in WRITES:
            for key in (_prose if prose_only else _says)(call["tool"]):
                if isinstance(args.get(key), str):
                    args[key] = edit(args[key])
                elif key == "value" and isinstance(args.get(key), (int, float)) and not isinstance(args[key], bool):
                    args[key] = value(args[key])
        out.append({"tool": call["tool"], "args": args})
    return out


def _replace_text(plan: list[dict[str, Any]], old: str, new: str) -> list[dict]:
    """``plan`` with ``old`` replaced by ``new`` in what its writes say (whole words only)."""
    pattern = re.compile(rf"(?<![\w]){re.escape(old)}(?![\w])")
    return _rewrite(plan, lambda text: pattern.sub(new, text),
                    lambda v: _as_number(new) if str(v) == old else v)


def _as_number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text.replace(",", ""))
        except ValueError:
            return text


def _written(plan: list[dict[str, Any]]) -> str:
    return "\n".join(str(c["args"].get(k)) for c in plan for k in _says(c["tool"])
                     if c["args"].get(k) is not None)


def _spliced(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, new) span replaced (overlapping ones after the first skipped)."""
    out, at = [], 0
    for start, end, new in sorted(spans):
        if start < at:
            continue
        out += [text[at:start], new]
        at = end
    return "".join(out + [text[at:]])


# -- values in the forms a text writes them ---------------------------------------------------

def _masked_numbers(text: str, day_first: bool | None = None) -> Iterator[re.Match]:
    """The figures of ``text`` that are neither part of a date nor of a clock time."""
    masked = _CLOCK_RE.sub(lambda m: " " * len(m.group(0)), text)
    lower = masked.lower()
    for start, end, _ in date_spans(lower, day_first):  # "3 April 2025": its year is the day's
        masked = masked[:start] + " " * (end - start) + masked[end:]
    for start, end, _ in clock_spans(lower):
        masked = masked[:start] + " " * (end - start) + masked[end:]
    return _NUMBER_RE.finditer(masked)


def _number_value(text: str) -> float:
    return round(float(text.replace(",", "")), 6)


def _edit_number(text: str, factor: int, plus: int) -> str:
    whole, frac = (text.split(".") + [""])[:2]
    n = float(text.replace(",", ""))
    new = n * factor + plus
    digits = len(frac)
    out = f"{new:,.{digits}f}" if "," in whole else f"{new:.{digits}f}"
    return out


def _number_edits(written: str) -> Iterator[tuple[str, str]]:
    seen = set()
    for m in _masked_numbers(written):
        text = m.group(0)
        if text in seen or len(text.replace(",", "").split(".")[0]) < 2:  # a lone digit is in any text
            continue
        seen.add(text)
        yield text, _edit_number(text, 1, 1)
        yield text, _edit_number(text, 10, 0)


def _with_number(plan: list[dict[str, Any]], number: float, new: str) -> list[dict[str, Any]]:
    """``plan`` with every figure its writes state equal to ``number`` written ``new`` instead."""
    def edit(text: str) -> str:
        return _spliced(text, [(m.start(), m.end(), new) for m in _masked_numbers(text)
                               if _number_value(m.group(0)) == number])

    return _rewrite(plan, edit, lambda v: _as_number(new) if round(float(v), 6) == number else v)


def _day_text(text: str, old: date, new: date) -> str | None:
    """``text``, a date written as ``old`` ("3 April 2025", "2025-04-03", "Thursday April 3",
    "03/04/2025"), written the same way as ``new``; None when its form is not read."""
    if _DAY_RE.fullmatch(text):
        return new.isoformat()
    lead = re.match(r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*", text, re.IGNORECASE)
    out = text
    if lead:
        name = _WEEKDAY_NAMES[new.weekday()]
        name = name if lead.group(0).lower() == _WEEKDAY_NAMES[old.weekday()].lower() else name[:3]
        out = (name.lower() if lead.group(0).islower() else name) + out[lead.end():]
    month = _MONTH_WORD_RE.search(out, lead.end() if lead else 0)
    if month:
        word = month.group(0).rstrip(".")
        name = _MONTH_NAMES[new.month - 1]
        name = name[:len(word)] if len(word) < len(name) and len(word) == 3 else name
        name = name.lower() if word.islower() else name
        out = out[:month.start()] + name + out[month.start() + len(word):]
        out = re.sub(r"\b\d{4}\b", str(new.year), out)

        def day(m: re.Match) -> str:
            suffix = m.group(2)
            if suffix:
                suffix = "th" if 10 <= new.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(new.day % 10, "th")
            return f"{new.day:02d}" if len(m.group(1)) == 2 and m.group(1)[0] == "0" else f"{new.day}" + (suffix or "")

        return re.sub(r"(?<!\d)(\d{1,2})(st|nd|rd|th)?(?!\d)", day, out, count=1)
    parts = re.fullmatch(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})", text)
    if not parts:
        return None
    first, sep, second, year = parts.groups()
    day_first = int(first) == old.day and int(second) == old.month
    a, b = (new.day, new.month) if day_first else (new.month, new.day)
    pad = len(first) == 2
    year_text = str(new.year) if len(year) == 4 else f"{new.year % 100:02d}"
    return f"{a:02d}{sep}{b:02d}{sep}{year_text}" if pad else f"{a}{sep}{b}{sep}{year_text}"


def _day_spans(text: str, day_first: bool | None = None) -> list[tuple[int, int, date]]:
    """(start, end, day) of each date ``text`` writes with its year, its weekday in the span."""
    out = []
    for start, end, days in date_spans(text.lower(), day_first):
        if len(days) != 1:
            continue
        year, month, day = next(iter(days))
        if not year:
            continue
        lead = _WEEKDAY_LEAD_RE.search(text[max(0, start - 16):start])
        try:
            out.append((start - len(lead.group(0)) if lead else start, end, date(year, month, day)))
        except ValueError:
            continue
    return out


def _with_day(plan: list[dict[str, Any]], old: date, new: date, day_first: bool | None = None) -> list[dict]:
    """``plan`` with every date its writes state as ``old`` written as ``new``, in the same form."""
    def edit(text: str) -> str:
        spans = []
        for start, end, day in _day_spans(text, day_first):
            written = _day_text(text[start:end], old, new) if day == old else None
            if written is not None:
                spans.append((start, end, written))
        return _spliced(text, spans)

    return _rewrite(plan, edit)


def _clock_text(text: str, new: tuple[int, int]) -> str:
    """A clock written as ``text`` ("14:00", "9:30", "2 pm", "2:30 p.m.") written the same way as ``new``."""
    hour, minute = new
    twelve = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?(\s?)([ap])(\.?m\.?)", text, re.IGNORECASE)
    if twelve:
        clock = f"{(hour - 1) % 12 + 1}" + (f":{minute:02d}" if twelve.group(2) or minute else "")
        half = "p" if hour >= 12 else "a"
        return clock + twelve.group(3) + (half.upper() if twelve.group(4).isupper() else half) + twelve.group(5)
    if re.fullmatch(r"\d:\d{2}", text):
        return f"{hour}:{minute:02d}"
    return f"{hour:02d}:{minute:02d}"


def _with_clock(plan: list[dict[str, Any]], old: tuple[int, int], new: tuple[int, int]) -> list[dict]:
    """``plan`` with every clock time its writes state as ``old`` written as ``new``, in the same form."""
    def edit(text: str) -> str:
        return _spliced(text, [(start, end, _clock_text(text[start:end], new))
                               for start, end, clock in clock_spans(text.lower()) if clock == old])

    return _rewrite(plan, edit)


def _name_pattern(person: Person) -> re.Pattern:
    return re.compile(rf"(?<![\w@.]){re.escape(person.name)}(?![\w@])|(?<![\w@.]){re.escape(person.first)}(?![\w@])")


def _with_person(plan: list[dict[str, Any]], old: Person, new: Person, *, mailbox: bool = True,
                 names: bool = True) -> list[dict[str, Any]]:
    """``plan`` with ``new`` in place of ``old``: as the one a mail goes to and whose calendar an
    event is in (``mailbox``), and named in what the writes say, whole or by the first name (``names``)."""
    pattern = _name_pattern(old)
    out = _rewrite(plan, lambda text: pattern.sub(lambda m: new.name if m.group(0) == old.name else new.first, text)) \
        if names else _calls(plan)
    if mailbox:
        for call in out:
            key = PERSON_ARGS.get(call["tool"])
            if key and str(call["args"].get(key, "")).split("@")[0].lower() == old.user:
                call["args"][key] = new.user
    return out


def _with_file(plan: list[dict[str, Any]], old: str, new: str) -> list[dict[str, Any]]:
    """``plan`` with the file named ``old`` (a base name) named ``new`` in every call's arguments
    and in what the writes say (its folder kept)."""
    pattern = re.compile(rf"(?<![\w.-]){re.escape(old)}(?![\w.-])")
    out = []
    for call in plan:
        args = {k: pattern.sub(new, v) if isinstance(v, str) else v for k, v in call["args"].items()}
        out.append({"tool": call["tool"], "args": args})
    return out



def _period_spans(text: str, day_first: bool | None = None) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, its kind's periods) of each period ``text`` names in words, not a date's month."""
    dates = [(a, b) for a, b, _ in date_spans(text.lower(), day_first)]
    out = []
    for m in _PERIOD_RE.finditer(text):
        if not any(a <= m.start() < b for a, b in dates):
            out.append((m.start(), m.end(), next(k for k in _PERIODS if m.group(0).lower() in map(str.lower, k))))
    return out


def _as_written(new: str, old: str) -> str:
    """``new`` in the case ``old`` is written in ("q3", "Q3", "FEBRUARY", "February")."""
    return new.lower() if old.islower() else new.upper() if old.isupper() else new


def _with_period(plan: list[dict[str, Any]], old: str, new: str, day_first: bool | None = None) -> list[dict]:
    """``plan`` with every period its writes name as ``old`` (any case) named ``new`` instead."""
    def edit(text: str) -> str:
        return _spliced(text, [(a, b, _as_written(new, text[a:b])) for a, b, _ in _period_spans(text, day_first)
                               if text[a:b].lower() == old.lower()])

    return _rewrite(plan, edit)


def _pairs(text: str, day_first: bool | None = None) -> list[tuple[int, int, int, int]]:
    """(start, end) of both ends of each pair ``text`` says: two periods of one kind, two clock times
    or two dates with a range's or a comparison's word between them, the two not the same."""
    lower = text.lower()
    spans = [(a, b, ("period", kind, text[a:b].lower())) for a, b, kind in _period_spans(text, day_first)]
    spans += [(a, b, ("time", (), clock)) for a, b, clock in clock_spans(lower)]
    spans += [(a, b, ("day", (), days)) for a, b, days in date_spans(lower, day_first)]
    spans.sort()
    out = []
    for (a, b, first), (c, d, second) in zip(spans, spans[1:]):
        if b <= c and first[:2] == second[:2] and first[2] != second[2] and _PAIR_JOIN_RE.fullmatch(text[b:c]):
            out.append((a, b, c, d))
    return out


def _swapped(plan: list[dict[str, Any]], text: str, pair: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """``plan`` with the pair at ``pair`` of the write text ``text`` said the other way round."""
    a, b, c, d = pair
    turned = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return _rewrite(plan, lambda t: turned if t == text else t)

# -- what a task's office holds and its chat says ---------------------------------------------

def office_of(record: Any, testbed: Path) -> Office:
    """The task's people (its world's, else the testbed's mailboxes and calendars), files and the
    values its chat history says, by kind."""
    seed = record.provenance.to_dict().get("world_seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
        world = make_world(seed)
        people = tuple(Person(p.name, p.first, p.user) for p in world.people)
    else:
        calendars, mailboxes = (testbed / get_app("calendar").folder), (testbed / get_app("email").folder)
        users = sorted({p.stem.lower() for p in calendars.glob("*.ics")}
                       | {p.name.lower() for p in mailboxes.glob("*") if p.is_dir()})
        people = tuple(Person(u.title(), u.title(), u) for u in users)
    data = testbed / "data"
    files = tuple(sorted(str(p.relative_to(testbed)) for p in data.rglob("*") if p.is_file())) \
        if data.is_dir() else ()
    office = Office(record.user.username.lower(), people, files)
    office.said = _said(record, office, task_day_first(record))
    return office


def _said(record: Any, office: Office, day_first: bool | None) -> dict[str, list[Any]]:
    """Every value the chat history says (and the memory's own, earlier and near-miss values), by
    kind: "number" (its text), "day" (a date), "time" ((hour, minute)), "file" (a base name),
    "person" (a ``Person`` of the office)."""
    said: dict[str, dict[Any, Any]] = {k: {} for k in ("number", "day", "time", "file", "person")}
    year = record.now.to_dict()["date"][:4]
    texts = [(int(str(session.date)[:4]), turn.text) for session in record.dialogue for turn in session.turns]
    texts += [(int(year), str(v)) for p in record.memory
              for v in (p.value, *(p.superseded or ()), *(d.value for d in p.distractors or ()))]
    for session_year, text in texts:
        for key, shown in _values_in(text, session_year, office, day_first):
            said[key[0]].setdefault(key[1], shown)
    return {kind: list(values.values()) for kind, values in said.items()}


def _values_in(text: str, year: int, office: Office, day_first: bool | None) -> Iterator[tuple[tuple[str, Any], Any]]:
    """((kind, key), value) of each value ``text`` says (a date without its year in ``year``)."""
    lower = text.lower()
    for m in _masked_numbers(text, day_first):
        yield ("number", _number_value(m.group(0))), m.group(0)
    for _, _, days in date_spans(lower, day_first):
        for y, m, d in days:
            try:
                day = date(y or year, m, d)
            except ValueError:
                continue
            yield ("day", day), day
    for m in _YEARLESS_RE.finditer(lower):  # "April 9", "the 2nd of April": what date_spans leaves for a year
        month = m.group(1) or m.group(4)
        number = int(m.group(2) or m.group(3))
        try:
            day = date(year, [n.lower() for n in _MONTH_NAMES].index(month) + 1, number)
        except ValueError:
            continue
        yield ("day", day), day
    for _, _, clock in clock_spans(lower):
        yield ("time", clock), clock
    for m in file_name_re().finditer(text):
        name = m.group(0).rsplit("/", 1)[-1]
        yield ("file", name.lower()), name
    for person in office.people:
        if _name_pattern(person).search(text):
            yield ("person", person.user), person


def _memory_keys(value: str, office: Office, year: int, day_first: bool | None) -> list[tuple[str, Any]]:
    """(kind, key) of each value of a memory piece's value: a figure (alone or with its unit), a
    date, a clock time, a file, a person of the office; none for words."""
    text = value.strip()
    for person in office.people:
        if text.lower() in (person.name.lower(), person.first.lower()):
            return [("person", person.user)]
    if _file_re().match(text):
        return [("file", text.rsplit("/", 1)[-1].lower())]
    keys: list[tuple[str, Any]] = [(kind, key) for (kind, key), _ in _values_in(text, year, office, day_first)
                                   if kind in ("day", "time")]
    if not keys and _MONEY_OR_UNIT_RE.match(text):
        keys = [(kind, key) for (kind, key), _ in _values_in(text, year, office, day_first) if kind == "number"][:1]
    return list(dict.fromkeys(keys))


def _same_kind(record: Any, oracle: list[dict[str, Any]], office: Office, day_first: bool | None
               ) -> Iterator[Mutant]:
    """Every other value of the same kind the chat says in place of each memory value the plan writes."""
    year = int(record.now.to_dict()["date"][:4])
    people = {p.user: p for p in office.people}
    for piece in record.memory:
        for kind, key in _memory_keys(str(piece.value), office, year, day_first):
            others = [v for v in office.said.get(kind, [])]
            for other in others:
                if kind == "number":
                    if _number_value(other) == key:
                        continue
                    plan = _with_number(oracle, key, other)
                elif kind == "day":
                    if other == key:
                        continue
                    plan = _with_day(oracle, key, other, day_first)
                elif kind == "time":
                    if other == key:
                        continue
                    plan = _with_clock(oracle, key, other)
                elif kind == "file":
                    if other.lower() == key:
                        continue
                    written = {str(c["args"].get(k)) for c in oracle if c["tool"] in WRITES for k in c["args"]}
                    if not any(key in w.lower() for w in written):
                        continue  # a file the plan only reads
                    name = next((f for f in _file_names(oracle) if f.lower() == key), None)
                    if name is None:
                        continue
                    plan = _with_file(oracle, name, other)
                else:
                    if other.user == key:
                        continue
                    plan = _with_person(oracle, people[key], other)
                if plan != oracle:
                    yield Mutant("same_kind", f"{piece.id} {piece.value!r} -> {_shown(other)!r}", plan)
                if kind == "person" and other.user in _parties(oracle, people[key]):
                    continue  # a reply or a forward quotes its own two people (as ``_person_mutants``)
                hedge = _hedged(oracle, _beside(kind, key, other, people, day_first))
                if hedge != oracle:
                    yield Mutant("hedge", f"{piece.id} {piece.value!r} or {_shown(other)!r}", hedge)


Spans = Callable[[str], list[tuple[int, int, str]]]


def _beside(kind: str, key: Any, other: Any, people: dict[str, Person], day_first: bool | None) -> Spans:
    """Where a text states the value ``key`` of ``kind``, with ``other`` written in that value's form."""
    def spans(text: str) -> list[tuple[int, int, str]]:
        if kind == "number":
            return [(m.start(), m.end(), str(other)) for m in _masked_numbers(text, day_first)
                    if _number_value(m.group(0)) == key and _number_value(str(other)) != key]
        if kind == "day":
            return [(a, b, new) for a, b, day in _day_spans(text, day_first)
                    if day == key != other and (new := _day_text(text[a:b], key, other)) is not None]
        if kind == "time":
            return [(a, b, _clock_text(text[a:b], other)) for a, b, clock in clock_spans(text.lower())
                    if clock == key != other]
        if kind == "file":
            pattern = re.compile(rf"(?<![\w.-]){re.escape(key)}(?![\w.-])", re.IGNORECASE)
            return [(m.start(), m.end(), other) for m in pattern.finditer(text) if other.lower() != key]
        if other.user == key:
            return []
        old = people[key]
        return [(m.start(), m.end(), other.name if m.group(0) == old.name else other.first)
                for m in _name_pattern(old).finditer(text)]
    return spans


def _hedged(plan: list[dict[str, Any]], spans: Spans) -> list[dict[str, Any]]:
    """``plan`` with each value its writes state in words (``spans``) offered beside a wrong one:
    "75 or 76", "Thursday, 3 April 2025 or Friday, 4 April 2025", "Hi Elliot or Hugo"."""
    return _rewrite(plan, lambda text: _spliced(text, [(a, b, f"{text[a:b]} or {new}") for a, b, new in spans(text)]),
                    prose_only=True)


def _shown(value: Any) -> str:
    if isinstance(value, Person):
        return value.name
    if isinstance(value, tuple):
        return f"{value[0]:02d}:{value[1]:02d}"
    return str(value)


def _file_names(plan: list[dict[str, Any]]) -> list[str]:
    """The base names of the files a plan's calls name, in its arguments or in what it writes."""
    names = []
    for call in plan:
        for key, value in call["args"].items():
            if isinstance(value, str):
                names += [m.group(0).rsplit("/", 1)[-1] for m in file_name_re().finditer(value)]
    return list(dict.fromkeys(names))


# -- the mutants --------------------------------------------------------------------------------

def mutants(record: Any, testbed: Path, office: Office | None = None) -> Iterator[Mutant]:
    """Every mutant of ``record``'s oracle plan (see the module docstring)."""
    office = office or office_of(record, testbed)
    day_first = task_day_first(record)
    oracle = _calls(plan_calls(record.oracle))
    for m in record.misreadings:
        kind = "superseded" if m.dynamic == "superseded" else "near_miss"
        yield Mutant(kind, f"{m.memory} {m.value!r}", _calls(plan_calls(m.plan)))
    yield from _same_kind(record, oracle, office, day_first)
    written = _written(oracle)
    hedged = set()
    for old, new in _number_edits(written):
        yield Mutant("number", f"{old} -> {new}", _with_number(oracle, _number_value(old), new))
        if old not in hedged:  # the right figure with a wrong one offered beside it
            hedged.add(old)
            yield Mutant("hedge", f"{old} -> {old} or {new}", _replace_text(oracle, old, f"{old} or {new}"))
    for old_day in sorted({day for _, _, day in _day_spans(written, day_first)}):
        new_day = old_day + timedelta(days=1)
        yield Mutant("day", f"{old_day} -> {new_day}", _with_day(oracle, old_day, new_day, day_first))
    for hour, minute in sorted(set(_CLOCK_RE.findall(written))):
        old = f"{hour}:{minute}"
        later = (datetime(2000, 1, 1, int(hour), int(minute)) + timedelta(hours=1))
        new = later.strftime("%H:%M") if len(hour) == 2 else f"{later.hour}:{later:%M}"
        yield Mutant("time", f"{old} -> {new}", _replace_text(oracle, old, new))
    clocks = sorted(set(_CLOCK_RE.findall(written)))
    if clocks:  # every time an hour earlier: a meeting "from 13:00 to 14:00" for one at 14:00-15:00
        plan = oracle
        for hour, minute in clocks:
            plan = _replace_text(plan, f"{hour}:{minute}", f"\x00{hour}:{minute}")  # marked: shifted once
        for hour, minute in clocks:
            earlier = datetime(2000, 1, 1, int(hour), int(minute)) - timedelta(hours=1)
            new = earlier.strftime("%H:%M") if len(hour) == 2 else f"{earlier.hour}:{earlier:%M}"
            plan = _replace_text(plan, f"\x00{hour}:{minute}", new)
        yield Mutant("time", "every clock an hour earlier", plan)
    yield from _person_mutants(oracle, office)
    yield from _file_mutants(oracle, office, testbed)
    yield from _word_mutants(oracle, day_first)
    yield from _answer_hedges(oracle, office)


def _answer_hedges(oracle: list[dict[str, Any]], office: Office) -> Iterator[Mutant]:
    """A look-up's answer in words with another candidate offered beside it: every colleague it does
    not name ("Fiona Quintero or Hugo Wakefield")."""
    for i, call in enumerate(oracle):
        text = str(call["args"].get("text", "")).strip() if call["tool"] == "system_write_answer" else ""
        if not text or not re.search(r"[A-Za-z]", text) or _MONEY_OR_UNIT_RE.match(text):
            continue
        for other in office.people:
            if not _name_pattern(other).search(text):
                plan = _calls(oracle)
                plan[i]["args"]["text"] = f"{text} or {other.name}"
                yield Mutant("hedge", f"answer {text!r} or {other.name!r}", plan)


def _word_mutants(oracle: list[dict[str, Any]], day_first: bool | None) -> Iterator[Mutant]:
    """Mistakes in plain words: another period of the same kind, a pair said the other way round."""
    written = _written(oracle)
    named = dict.fromkeys(text for a, b, _ in _period_spans(written, day_first) if (text := written[a:b]))
    for old in named:
        kind = next(k for k in _PERIODS if old.lower() in map(str.lower, k))
        at = [p.lower() for p in kind].index(old.lower())
        # every other quarter or half; a month's neighbours (the month before and the month after)
        others = [p for p in kind if p != kind[at]] if len(kind) <= 4 else [kind[at - 1], kind[(at + 1) % len(kind)]]
        for new in others:
            yield Mutant("period", f"{old} -> {_as_written(new, old)}", _with_period(oracle, old, new, day_first))
            yield Mutant("hedge", f"{old} or {_as_written(new, old)}", _hedged(oracle, lambda text, o=old, n=new: [
                (a, b, _as_written(n, text[a:b])) for a, b, _ in _period_spans(text, day_first)
                if text[a:b].lower() == o.lower()]))
    texts = dict.fromkeys(str(c["args"][k]) for c in oracle for k in _says(c["tool"])
                          if isinstance(c["args"].get(k), str))
    for text in texts:
        for pair in _pairs(text, day_first):
            a, b, c, d = pair
            yield Mutant("order", f"{text[a:d]!r} -> {text[c:d] + text[b:c] + text[a:b]!r}",
                         _swapped(oracle, text, pair))


def _person_mutants(oracle: list[dict[str, Any]], office: Office) -> Iterator[Mutant]:
    for i, call in enumerate(oracle):
        key = PERSON_ARGS.get(call["tool"])
        if not key:
            continue
        who = str(call["args"].get(key, "")).split("@")[0].lower()
        sender = str(call["args"].get("sender", "")).split("@")[0].lower()
        for other in office.people:
            if other.user in (who, sender):
                continue
            plan = _calls(oracle)
            plan[i]["args"][key] = other.user
            yield Mutant("person", f"{call['tool'].split('_', 1)[1]} {key} {who} -> {other.user}", plan)
    written = _written(oracle)
    for person in office.people:
        pattern = _name_pattern(person)
        if not pattern.search(written):
            continue
        parties = _parties(oracle, person)
        for other in office.people:
            if other != person and other.user not in parties:
                plan = _with_person(oracle, person, other, mailbox=False)
                if plan != oracle:
                    yield Mutant("person", f"named {person.name} -> {other.name}", plan)


def _parties(oracle: list[dict[str, Any]], person: Person) -> set[str]:
    """The two people (users) of each mail that names ``person``: a reply or a forward quotes their
    names in its greeting and sign-off, so neither is a mistake for him there."""
    pattern = _name_pattern(person)
    return {str(c["args"].get(k, "")).split("@")[0].lower() for c in oracle if c["tool"] == "email_send_email"
            and pattern.search(_written([c])) for k in ("sender", "recipient")}


def _file_mutants(oracle: list[dict[str, Any]], office: Office, testbed: Path) -> Iterator[Mutant]:
    files = list(office.files)
    made = [c["args"]["file_path"] for c in oracle if c["tool"] in ("word_write_to_file", "excel_create_new_file")]
    for path in dict.fromkeys(made):
        ext = path.rsplit(".", 1)[-1]
        other = next((f for f in files if f.endswith("." + ext) and f != path), None)
        if other:  # the output (and its PDF copy) written under the name of another of the office's files
            pdf, other_pdf = path.rsplit(".", 1)[0] + ".pdf", other.rsplit(".", 1)[0] + ".pdf"

            def rename(v: Any) -> Any:
                return v.replace(path, other).replace(pdf, other_pdf) if isinstance(v, str) else v

            yield Mutant("file", f"{path} -> {other}",
                         [{"tool": c["tool"], "args": {k: rename(v) for k, v in c["args"].items()}} for c in oracle])
    for i, call in enumerate(oracle):  # a conversion of another document of the office
        ext = CONVERSIONS.get(call["tool"])
        source = str(call["args"].get("file_path", ""))
        if not ext or source not in files:
            continue
        for other in files:
            if other.endswith("." + ext) and other != source:
                plan = _calls(oracle)
                plan[i]["args"]["file_path"] = other
                yield Mutant("file", f"converts {source} -> {other}", plan)
    for i, call in enumerate(oracle):  # a document copied into a write: another one's text copied
        ext = READS.get(call["tool"])
        source = str(call["args"].get("file_path", ""))
        if not ext or source not in files:
            continue
        text = _document_text(testbed, source, ext)
        if not text or len(text) < 40 or not any(text in str(c["args"].get(k, "")) for c in oracle
                                                  for k in _says(c["tool"])):
            continue
        for other in files:
            other_text = _document_text(testbed, other, ext) if other.endswith("." + ext) and other != source else None
            if other_text and other_text != text:
                plan = _rewrite(oracle, lambda t, old=text, new=other_text: t.replace(old, new))
                plan[i]["args"]["file_path"] = other
                yield Mutant("file", f"copies {source} -> {other}", plan)
    written = _written(oracle)
    for name in dict.fromkeys(m.group(0).rsplit("/", 1)[-1] for m in file_name_re().finditer(written)):
        ext = name.rsplit(".", 1)[-1]
        for other in files:
            other_name = other.rsplit("/", 1)[-1]
            if other_name.endswith("." + ext) and other_name != name:
                pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
                plan = _rewrite(oracle, lambda t, p=pattern, o=other_name: p.sub(o, t))
                if plan != oracle:
                    yield Mutant("file", f"names {name} -> {other_name}", plan)


def _document_text(testbed: Path, relpath: str, ext: str) -> str | None:
    try:
        return read_document(testbed / relpath, relpath, ext).strip()
    except (OfficeError, OSError):
        return None


def _targets(call: dict[str, Any]) -> set[tuple[str, str]]:
    args = call["args"]
    if call["tool"] == "email_send_email":
        return {("email", str(args.get("recipient", "")).split("@")[0].lower())}
    if call["tool"] in ("calendar_create_event", "calendar_delete_event"):
        return {("calendar", str(args.get("user", "")).lower())}
    if call["tool"] == "system_write_answer":
        return {("answer", "")}
    path = str(args.get("output_path") or args.get("file_path") or "")
    out = {("file", path)}
    if call["tool"] in ("word_write_to_file", "word_convert_to_pdf", "excel_convert_to_pdf"):
        out.add(("file", path.rsplit(".", 1)[0] + ".pdf"))
    return out


def _criterion_targets(criterion: dict[str, Any]) -> set[tuple[str, str]]:
    args, function = criterion.get("args", {}), criterion.get("function", "")
    if "email" in function or args.get("doc_type") == "email":
        who = args.get("recipient") or args.get("username") or ""
        return {("email", str(who).split("@")[0].lower())}
    if "calendar" in function:
        return {("calendar", str(args.get("username", "")).lower())}
    if function == "evaluate_answer":
        return {("answer", "")}
    return {("file", str(args.get(k))) for k in ("file", "result_file", "output_file") if args.get(k)}


def _changed_checks(oracle: list[dict], plan: list[dict], criteria: list[dict[str, Any]]) -> list[str]:
    """The check functions that read an output the mutant writes differently ("unchecked": none)."""
    changed = [c for c in plan if c["tool"] in WRITES and c not in oracle]
    targets = set().union(*(_targets(c) for c in changed)) if changed else set()
    found = sorted({c["function"] for c in criteria if _criterion_targets(c) & targets})
    return found or ["unchecked"]


READS_ONLY = "the same state as the oracle's: the value only picks what is read (the plan's writes are the oracle's)"
SAME_STATE = "the same state as the oracle's: the writes it changes leave the oracle's output"


def measure(dataset: Path, work: Path, on_task: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    kinds: Counter = Counter()
    killed: Counter = Counter()
    equivalent: Counter = Counter()
    survivors_by_kind: Counter = Counter()
    survivors_by_check: Counter = Counter()
    shown: list[str] = []
    equivalents: list[str] = []
    reasons: Counter = Counter()
    tasks = 0
    for task in iter_tasks(dataset):
        record = task.task
        if record is None or not record.oracle:
            continue
        tasks += 1
        on_task(task.id)
        now, day_first, criteria = task_now(record), task_day_first(record), record.criteria()
        scratch = work / task.id
        scratch.mkdir(parents=True)
        oracle = _calls(plan_calls(record.oracle))
        base = Snapshot.of(replay_plan(task.testbed, oracle, now, scratch, "oracle").workspace.root)
        seen = {json.dumps(oracle, sort_keys=True, default=str)}
        for k, mutant in enumerate(mutants(record, task.testbed)):
            key = json.dumps(mutant.plan, sort_keys=True, default=str)
            if key in seen:  # the oracle itself, or a mutant another kind made already
                continue
            seen.add(key)
            kinds[mutant.kind] += 1
            replay = replay_plan(task.testbed, mutant.plan, now, scratch, f"m{k}")
            report = replay.score(criteria, task.reference, day_first=day_first)
            line = f"{task.id} {record.family}: {mutant.kind} {mutant.what}"
            if not report.passed:
                killed[mutant.kind] += 1
            elif Snapshot.of(replay.workspace.root) == base:
                equivalent[mutant.kind] += 1
                writes = [c for c in mutant.plan if c["tool"] in WRITES] == [c for c in oracle if c["tool"] in WRITES]
                reason = READS_ONLY if writes else SAME_STATE
                reasons[reason] += 1
                equivalents.append(f"{line} ({'reads only' if writes else 'same output'})")
            else:
                survivors_by_kind[mutant.kind] += 1
                checks = _changed_checks(oracle, mutant.plan, criteria)
                for check in checks:
                    survivors_by_check[check] += 1
                shown.append(f"{line} [{', '.join(checks)}]")
            shutil.rmtree(replay.workspace.root, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    total, dead, same = sum(kinds.values()), sum(killed.values()), sum(equivalent.values())
    return {"tasks": tasks, "mutants": total, "killed": dead, "equivalent": same,
            "survivors": total - dead - same, "score": dead / (total - same) if total - same else None,
            "by_kind": {k: {"mutants": kinds[k], "killed": killed[k], "equivalent": equivalent[k],
                            "survivors": survivors_by_kind[k]} for k in sorted(kinds)},
            "survivors_by_check": dict(survivors_by_check.most_common()), "equivalent_reasons": dict(reasons),
            "survivor_list": shown, "equivalent_list": equivalents}


def print_figures(figures: dict[str, Any], show: int) -> None:
    print(f"{'kind':12} mutants  killed  equivalent  SURVIVORS")
    for kind, row in figures["by_kind"].items():
        print(f"{kind:12} {row['mutants']:7} {row['killed']:7} {row['equivalent']:11} {row['survivors']:10}")
    score = figures["score"]
    print(f"mutants {figures['mutants']} over {figures['tasks']} tasks: killed {figures['killed']}, equivalent "
          f"{figures['equivalent']}, survivors {figures['survivors']}; mutation score "
          f"{'n/a' if score is None else f'{100 * score:.1f} %'}  target: 0 survivors  "
          f"{'PASS' if not figures['survivors'] else 'MISS'}")
    print("survivors by check of the output they changed: "
          + (", ".join(f"{k} {v}" for k, v in figures["survivors_by_check"].items()) or "none"))
    for line in figures["survivor_list"][:show]:
        print(f"  survivor: {line}")
    for reason, count in figures["equivalent_reasons"].items():
        print(f"equivalent {count}: {reason}")
    for line in figures["equivalent_list"][:show]:
        print(f"  equivalent: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=sorted(PRESETS), default="standard",
                        help="The build's history preset (standard: 5 days of about 72 utterances; challenge: 30 "
                             "of about 250)")
    parser.add_argument("--challenge", action="store_true", help="Same as --kind challenge")
    parser.add_argument("--n", type=int, default=None, help="Tasks to build (60 standard, 10 Challenge)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=2, help="Build workers")
    parser.add_argument("--dataset", type=Path, default=None, help="Read this dataset instead of building one")
    parser.add_argument("--show", type=int, default=20, help="Survivors and equivalent mutants to list")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kind = "challenge" if args.challenge else args.kind
    work = Path(tempfile.mkdtemp(prefix="bench-mutants-"))
    try:
        dataset = args.dataset
        if dataset is None:
            dataset = work / "ds"
            days, utterances = PRESETS[kind]
            n = args.n if args.n is not None else DEFAULT_N.get(kind, 60)
            built = build(dataset, n, BuildConfig(seed=args.seed, days=days, utterances_per_day=utterances),
                          workers=args.workers)
            print(f"{kind} build: {built.accepted} tasks, seed {args.seed}, {days} days of about {utterances} "
                  f"utterances", file=sys.stderr)
        figures = measure(dataset, work / "scratch")
        if args.json:
            print(json.dumps(figures, indent=2))
            return
        print_figures(figures, args.show)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
