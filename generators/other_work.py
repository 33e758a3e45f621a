"""Talk about work that is not the task: other projects, colleagues, meetings, reports, files.

One :class:`OtherWork` object serves one history. ``exchange(when, pairs)`` returns ``pairs``
user/assistant pairs about one piece of other work. The user only reports (status, figures,
news, things done, things for much later); the user never asks for anything, and the assistant
acknowledges, reacts, asks a follow-up question, or promises something for a clearly later
time (a named month or quarter well ahead of ``when``). Never a claim that it did anything.

These turns are meant to look like task turns to a scanning agent: most user lines carry a
value-like token (money, percentages, decimals, clock times, dates, file names, e-mail
addresses) and about half of the replies use the same acknowledging words as task turns
(:data:`ACK_WORDS`).

Storylines ("arcs") run across days: a project milestone (planned or running, progress,
slipped, finished, looked back on), a supplier's contact away (out, still out, back) and a hiring
round (open, interviews, offer, accepted).

What the office itself records, the talk does not invent: no colleague of the office (the names
in ``colleagues``) goes on leave, to a course or abroad, and none gets an address (the office's
mail has theirs); people away and outside addresses belong to suppliers' staff (names from the
bank that are not the office's). A colleague the office shows away (``absences``: the spans its
mail gives) is not named in an exchange on a day of theirs away, nor in one whose lines name such
a day: someone else chairs that meeting or sends those figures, and a storyline whose owner is
away rests until they are back. Office documents are named as what they are (a figure is in a
sheet, never in a PDF) and nothing is invented about one once it is named; invented file names
live elsewhere (a team site, a shared drive) and are never an office document's name extended.
A fact is told once a history (a fragment is not used again, with other figures, while others
are left), a reaction names no figure, date or place but the answered line's, and a time of
something that already happened today lies before the moment it is told. Every date is computed from ``when`` and each arc's own
dates, so a later day never contradicts an earlier one: an arc is mentioned at most once a day,
a finish date lies between its last mention and today, a new deadline lies after today.
Calls are expected in chronological order; a call earlier than an arc's last mention leaves
that arc alone.

Composition: a user line is an optional lead ("By the way,") + an intro, answer or remark
fragment + an optional tail; a reply is one or two of acknowledgement / reaction / question /
far-off promise. Slot values (amounts, counts, dates, names, file names) are drawn per exchange
and kept per storyline. The assistant only echoes values the user has said. Lines that would
read the same in every history (no name, project or value in them) are avoided. Every line is
new within the history (the object remembers what it produced) and passes ``avoid(text)``;
a fragment that fails is recomposed with other fragments or values, an exchange that cannot be
completed is recomposed on another topic. Exchanges of up to about 25 pairs are supported.

Wording lives in ``templates/dialogue/work/*.txt`` (format described at the top of
``common.txt``): ``[section]`` headers followed by one fragment per line, ``{slot}`` fields
filled by str.format, ``[data.x: a | b]`` sections whose lines give several related slots at
once. The banks are parsed and checked once, at import; a malformed line raises
:class:`WorkBankError` naming the file and line.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable, Iterable, Sequence

from generators.english import repeats_itself
from office_env.money import spoken_prefix

__all__ = ["OtherWork", "ACK_WORDS", "WorkBankError", "WORK_DIR", "load_work_banks", "parse_work_bank"]

WORK_DIR = Path(__file__).resolve().parent.parent / "templates" / "dialogue" / "work"

# Acknowledging words the replies share with the replies to task turns (lower case).
ACK_WORDS = (
    "noted", "got it", "understood", "good to know", "thanks for the update", "thanks for letting me know",
    "thanks for filling me in", "will do", "i'll remember", "i'll keep", "keep that in mind", "keep it in mind",
)

# Calendar constants (not wording), locale-independent.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")


class WorkBankError(ValueError):
    """A bank under templates/dialogue/work is malformed (the message names the file and line)."""


# --------------------------------------------------------------------------------------------
# Slots
# --------------------------------------------------------------------------------------------

# Slots only the date-phrase sections (``date.*``) use, and only they.
_DATE_SLOTS = frozenset({"wday", "month", "day", "ord"})

# Slots computed in Python (values, dates, people); data sections add their own fields.
_PY_SLOTS = frozenset("""
user company domain colleague colleague2 colleague3 colleague_lc project project2 slug
money money2 money_small budget final_cost salary pct pct2 old_pct count count2 attendees pages
years week floor decimal hours score score_pct desk clock start end file file2 v mon mmdd
iso qn code q prev_q next_q this_month prev_month prev_month2 later_month later_date start_date
past_on met_on next_on next_date later_date2 few some office_file office_sheet office_doc ext colleague2_lc
prev_mon away_lc cover_lc outsider outsider_lc past_clock
owner helper away cover due_on due_day due_date old_due_day old_due_date first_due_date done_on
started_on last_on done_count total left late_days slip_days back_on back_day back_date
applicants shortlist interview_on interview_day interviewed_on
""".split())

# Slots the assistant may use although the user has not said them in this storyline.
_ASSISTANT_FREE = frozenset({"user", "company", "later", "later_month", "next_q", "this_month", "q"})

# Slots that make a line particular to one history (people, projects, values, dates).
_SPECIFIC_SLOTS = (_PY_SLOTS | {"vendor", "reason", "email", "later_date"}) - frozenset(
    "company domain q prev_q next_q this_month prev_month prev_month2 later_month mon qn week floor v years".split())

# Slots naming the topic rather than a reported value (ignored when deciding whether a
# follow-up question has already been answered).
_TOPIC_SLOTS = frozenset({
    "user", "company", "domain", "project", "project2", "slug", "owner", "away", "colleague", "colleague2",
    "colleague3", "colleague_lc", "milestone", "unit", "verb", "meeting", "role", "leave", "leave_noun",
    "later", "later_month", "next_q", "this_month", "prev_month", "prev_month2", "q", "prev_q", "vendor",
    "city", "system", "cert", "report", "it_thing", "plan", "outsider",
})

# Slots a reaction may name although the line it answers does not: the storyline's topic (its
# people, project, the piece of work). Any other slot in a reaction (a figure, a date, a place)
# must come from the user line it answers, or the reply would answer another turn.
_REACT_TOPIC = frozenset({
    "user", "company", "project", "project2", "slug", "owner", "helper", "away", "cover", "outsider", "colleague",
    "colleague2", "colleague3", "milestone", "unit", "verb", "role", "meeting", "leave_noun", "vendor", "system",
})

# Arc values kept from one mention to the next (in addition to the arc's own state).
_KEEP = frozenset({"helper", "budget", "file", "cover", "email", "vendor", "vendor_slug", "final_cost", "salary", "city",
                   "leave", "leave_noun", "role", "milestone", "unit", "verb", "hours", "applicants",
                   "shortlist", "system"})

_PEOPLE_KEYS = ("owner", "helper", "colleague", "colleague2", "colleague3")
# People outside the office (a supplier's staff): storylines about someone being away and new
# outside contacts name only them, never a colleague of the office, whose absences and addresses
# the office itself records (out-of-office mails, calendars, its own mail domain).
_OUTSIDER_KEYS = ("away", "cover", "outsider")
# Every slot that names a person (a "cover" outside a supplier's storyline is a colleague).
_PERSON_SLOTS = _PEOPLE_KEYS + _OUTSIDER_KEYS

# Follow-ups that would invent facts about an office file the user line named (its size, where
# its data came from, older versions, another file holding its figures): dropped once one is named.
_OFFICE_FILE_SLOTS = frozenset({"office_file", "office_sheet", "office_doc"})
_OFFICE_FILE_BLOCKED = frozenset({("file", "size"), ("file", "source"), ("file", "version"), ("report", "file")})

# Follow-up tags per (kind, stage); each tag has ask.<kind>.<tag> and answer.<kind>.<tag>[.<stage>].
_TAGS: dict[tuple[str, str], tuple[str, ...]] = {
    ("milestone", "planned"): ("cost", "who", "next", "file"),
    ("milestone", "running"): ("cost", "who", "figures", "next", "file"),
    ("milestone", "started"): ("cost", "who", "figures", "next"),
    ("milestone", "progress"): ("cost", "who", "figures", "next", "file"),
    ("milestone", "ontrack"): ("cost", "who", "figures", "next"),
    ("milestone", "slipped"): ("cause", "who", "cost", "next"),
    ("milestone", "overdue"): ("cause", "who", "cost", "next"),
    ("milestone", "done"): ("cost", "who", "file"),
    ("milestone", "done_late"): ("cost", "who", "file"),
    ("milestone", "after"): ("who", "file"),
    ("away", "out"): ("cover", "contact", "why"),
    ("away", "still"): ("cover", "contact"),
    ("away", "back"): ("why",),
    ("hiring", "open"): ("who", "count", "next"),
    ("hiring", "interviews"): ("who", "count", "next"),
    ("hiring", "offer"): ("salary", "who"),
    ("hiring", "accepted"): ("salary", "who"),
    ("meeting", ""): ("outcome", "next", "file", "who"),
    ("report", ""): ("compare", "cause", "file", "who"),
    ("praise", ""): ("feel", "next"),
    ("change", ""): ("feel", "team"),
    ("contact", ""): ("why",),
    ("file", ""): ("size", "source", "version"),
    ("later", ""): ("cost", "who", "why"),
    ("finished", ""): ("time", "figures", "file"),
}

# The slots whose mention in a user line answers a follow-up before it is asked (for tags not
# listed: any value slot of the tag's answer lines).
_KEYS: dict[tuple[str, str], frozenset[str]] = {
    ("milestone", "cause"): frozenset({"reason"}),
    ("milestone", "cost"): frozenset({"budget", "final_cost"}),
    ("milestone", "who"): frozenset({"helper"}),
    ("milestone", "figures"): frozenset({"done_count", "left"}),
    ("milestone", "next"): frozenset({"next_on", "clock"}),
    ("away", "cover"): frozenset({"cover"}),
    ("away", "contact"): frozenset({"away_lc", "cover_lc"}),
    ("hiring", "count"): frozenset({"applicants"}),
    ("hiring", "salary"): frozenset({"salary"}),
    ("hiring", "next"): frozenset({"next_on", "next_date"}),
    ("meeting", "next"): frozenset({"next_on", "next_date", "later_date"}),
    ("meeting", "outcome"): frozenset({"money"}),
    ("later", "cost"): frozenset({"money", "money2", "money_small"}),
    ("finished", "figures"): frozenset({"pct2"}),
    ("finished", "time"): frozenset({"decimal", "hours"}),
    ("file", "size"): frozenset({"decimal"}),
}

# Mood of a stage, for the optional tail of the user's first line.
_MOOD = {"slipped": "bad", "overdue": "bad", "done": "good", "done_late": "good", "back": "good",
         "accepted": "good", "offer": "good", "planned": "plan", "out": "plan", "open": "plan", "later": "plan",
         "praise": "good"}

# Kinds whose news is worth keeping in mind for months: they may use the generic [promise] lines.
_LONG_VIEW = frozenset({"report", "finished", "file", "contact", "praise", "change", "later", "meeting"})

_ONE_OFF = ("meeting", "report", "praise", "change", "contact", "file", "later", "finished")
_ONE_OFF_WEIGHTS = (3, 3, 1, 1, 1, 2, 2, 2)
_ARC_KINDS = ("milestone", "milestone", "away", "hiring")

_P_LEAD_FIRST = 0.35
_P_TAIL = 0.22
_P_ASK = 0.6
_TRIES = 14


# --------------------------------------------------------------------------------------------
# Banks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)  # identity hashing: fragments go into per-exchange sets
class _Frag:
    text: str  # a str.format template with named fields only
    slots: frozenset[str]
    lower: bool  # the first letter may be lowered after a lead such as "By the way,"
    where: str
    need: frozenset[str]  # slots the user must have said before the assistant may use this
    specific: bool  # names something particular to this history (a person, project, value)
    alone: bool = False  # written with its own opening ("Good news: ..."): never after a lead
    head: str = ""  # the first word, to avoid "Good to know. Good ..."
    an: bool = False  # has "a {slot}": the article may have to become "an"


@dataclass
class _Section:
    name: str
    fields: tuple[str, ...] | None  # data sections: the slot names each line gives
    where: str
    rows: list[tuple[_Frag, ...]] = field(default_factory=list)


_A_SLOT = re.compile(r"\b[Aa] \{")
_HEADER = re.compile(r"^\[\s*([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)\s*(?::\s*([^\]]*))?\]$")
_FIELD = re.compile(r"^[a-z][a-z0-9_]*$")
_FORMATTER = string.Formatter()
_KEEP_CASE = frozenset({"I", "I'm", "I've", "I'd", "I'll"})


def _compile(text: str, where: str, allowed: Callable[[str], bool]) -> _Frag:
    alone = text.startswith("^ ")
    if alone:
        text = text[2:].lstrip()
        if not text:
            raise WorkBankError(f"{where}: empty fragment after '^'")
    if not text.isascii():
        raise WorkBankError(f"{where}: non-ASCII character in {text!r}")
    slots: set[str] = set()
    try:
        for literal, name, spec, conv in _FORMATTER.parse(text):
            if name is None:
                continue
            if not _FIELD.match(name):
                raise WorkBankError(f"{where}: bad slot {{{name}}} (use a lower-case name like {{project}})")
            if spec or conv:
                raise WorkBankError(f"{where}: slot {{{name}}} must not have a format spec or conversion")
            if not allowed(name):
                raise WorkBankError(f"{where}: unknown slot {{{name}}}")
            slots.add(name)
    except ValueError as exc:  # unbalanced braces
        raise WorkBankError(f"{where}: malformed braces in {text!r} ({exc})") from None
    first = text.split(" ", 1)[0]
    lower = not (first.startswith("{") or first in _KEEP_CASE or any(c.isupper() or c.isdigit() for c in first[1:]))
    return _Frag(text, frozenset(slots), lower, where, frozenset(slots - _ASSISTANT_FREE),
                 bool(slots & _SPECIFIC_SLOTS), alone, text.split(" ", 1)[0], bool(_A_SLOT.search(text)))


def parse_work_bank(text: str, name: str, sections: dict[str, _Section] | None = None,
                    data_fields: Iterable[str] = ()) -> dict[str, _Section]:
    """Parse one bank file into ``sections`` (a new dict unless given; sections may continue
    across files). ``data_fields`` are slot names that other files' data sections supply."""
    sections = {} if sections is None else sections
    fields_known = set(data_fields)
    for sec in sections.values():
        fields_known.update(sec.fields or ())
    # First pass: the data fields this file declares (a template may use a field declared later).
    lines = text.splitlines()
    for lineno, raw in enumerate(lines, 1):
        m = _HEADER.match(raw.strip())
        if m and m.group(2) is not None:
            fields_known.update(f.strip() for f in m.group(2).split("|"))

    def allowed_in(section: str) -> Callable[[str], bool]:
        if section.startswith("date."):
            return _DATE_SLOTS.__contains__
        return lambda s: s in _PY_SLOTS or s in fields_known

    current: _Section | None = None
    allowed: Callable[[str], bool] = lambda s: False
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        where = f"{name}:{lineno}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            m = _HEADER.match(line)
            if not m:
                raise WorkBankError(f"{where}: malformed section header {line!r} (expected [name] or [data.name: a | b])")
            sec_name, spec = m.group(1), m.group(2)
            fields: tuple[str, ...] | None = None
            if spec is not None:
                if not sec_name.startswith("data."):
                    raise WorkBankError(f"{where}: only data.* sections declare fields")
                fields = tuple(f.strip() for f in spec.split("|"))
                bad = [f for f in fields if not _FIELD.match(f)]
                if bad or len(set(fields)) != len(fields):
                    raise WorkBankError(f"{where}: bad field list {spec!r}")
                clash = [f for f in fields if f in _PY_SLOTS or f in _DATE_SLOTS]
                if clash:
                    raise WorkBankError(f"{where}: field {clash[0]!r} is a built-in slot")
            elif sec_name.startswith("data."):
                raise WorkBankError(f"{where}: data section [{sec_name}] must declare its fields: [{sec_name}: name]")
            old = sections.get(sec_name)
            if old is not None:
                if old.fields != fields:
                    raise WorkBankError(f"{where}: [{sec_name}] continues {old.where} with different fields")
                current = old
            else:
                current = sections[sec_name] = _Section(sec_name, fields, where)
            allowed = allowed_in(sec_name)
            continue
        if current is None:
            raise WorkBankError(f"{where}: text outside a [section]")
        if current.fields is None:
            current.rows.append((_compile(line, where, allowed),))
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != len(current.fields):
            raise WorkBankError(f"{where}: expected {len(current.fields)} fields "
                                f"({' | '.join(current.fields)}), got {len(parts)}")
        if not all(parts):
            raise WorkBankError(f"{where}: empty field")
        row = tuple(_compile(p, where, allowed) for p in parts)
        for fname, frag in zip(current.fields, row):
            if fname in frag.slots:
                raise WorkBankError(f"{where}: field {fname!r} refers to itself")
        current.rows.append(row)
    return sections


def _required_sections() -> set[str]:
    req = {"lead.aside", "lead.more", "ack", "promise", "react.any", "chat.any", "tail.good", "tail.bad", "tail.neutral", "tail.plan", "date.abs",
           "data.name", "data.project", "data.filename", "data.later"}
    for span in ("on", "day"):
        for rel in ("today", "yesterday", "past_week", "last_week", "past_far", "tomorrow", "this_week",
                    "next_week", "far"):
            if span == "day" and rel in ("today",):
                continue
            req.add(f"date.{span}.{rel}")
    for (kind, stage), tags in _TAGS.items():
        req.add(f"intro.{kind}.{stage}" if stage else f"intro.{kind}")
        req.add(f"chat.{kind}")
        req.add(f"react.{kind}.{stage}" if stage else f"react.{kind}")
        for tag in tags:
            req.add(f"ask.{kind}.{tag}")
            req.add(f"answer.{kind}.{tag}")
    return req


def load_work_banks(directory: Path = WORK_DIR) -> dict[str, _Section]:
    """Parse every ``*.txt`` bank in ``directory`` and check that nothing is missing or empty."""
    try:
        paths = sorted(p for p in directory.iterdir() if p.suffix == ".txt")
    except OSError as exc:
        raise WorkBankError(f"{directory}: cannot list the work banks ({exc.strerror or exc})") from exc
    if not paths:
        raise WorkBankError(f"{directory}: no *.txt banks")
    texts = []
    fields: set[str] = set()
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise WorkBankError(f"{path}: cannot read ({exc})") from exc
        texts.append((path, text))
        for raw in text.splitlines():
            m = _HEADER.match(raw.strip())
            if m and m.group(2) is not None:
                fields.update(f.strip() for f in m.group(2).split("|"))
    sections: dict[str, _Section] = {}
    for path, text in texts:
        parse_work_bank(text, str(path), sections, fields)
    for sec in sections.values():
        if not sec.rows:
            raise WorkBankError(f"{sec.where}: section [{sec.name}] has no lines")
    missing = sorted(_required_sections() - sections.keys())
    if missing:
        raise WorkBankError(f"{directory}: missing section(s) {', '.join('[' + m + ']' for m in missing)}")
    owners: dict[str, str] = {}
    for sec in sections.values():
        for f in sec.fields or ():
            if f in owners and owners[f] != sec.name:
                raise WorkBankError(f"{sec.where}: field {f!r} is also given by [{owners[f]}]")
            owners[f] = sec.name
    return sections


_BANK = load_work_banks()
for _row in _BANK["data.milestone"].rows:  # chosen when a storyline starts, outside any exchange
    if any(_f.slots for _f in _row):
        raise WorkBankError(f"{_row[0].where}: [data.milestone] fields must be plain text")
_SOURCE = {f: name for name, sec in _BANK.items() for f in (sec.fields or ())}
_DATA = {name: tuple(sec.rows) for name, sec in _BANK.items() if sec.fields}
_FRAGS = {name: tuple(row[0] for row in sec.rows) for name, sec in _BANK.items() if not sec.fields}
_EMPTY: tuple[_Frag, ...] = ()


def _frags(*names: str) -> tuple[_Frag, ...]:
    out: list[_Frag] = []
    for n in names:
        out.extend(_FRAGS.get(n, _EMPTY))
    return tuple(out)


def _value_slots(frags: Iterable[_Frag]) -> frozenset[str]:
    out: set[str] = set()
    for f in frags:
        out |= f.slots
    return frozenset(out - _TOPIC_SLOTS)


# Precomputed fragment lists per (kind, stage) and per tag.
_INTRO = {ks: _frags(f"intro.{ks[0]}.{ks[1]}" if ks[1] else f"intro.{ks[0]}") for ks in _TAGS}
_REACT = {ks: _frags(f"react.{ks[0]}.{ks[1]}", f"react.{ks[0]}") if ks[1] else _frags(f"react.{ks[0]}")
          for ks in _TAGS}
_PROMISE = {(k, s): _frags(f"promise.{k}.{s}", f"promise.{k}", *(("promise",) if k in _LONG_VIEW else ()))
            for k, s in _TAGS}
_CHAT = {(k, s): _frags(f"chat.{k}.{s}", f"chat.{k}") for k, s in _TAGS}
_ASK: dict[tuple[str, str], tuple[_Frag, ...]] = {}
_ANSWER: dict[tuple[str, str, str], tuple[str, tuple[_Frag, ...]]] = {}
_VOLUNTEER: dict[tuple[str, str, str], tuple[_Frag, ...]] = {}
_TAG_REACT: dict[tuple[str, str], tuple[_Frag, ...]] = {}
_TAG_KEYS: dict[tuple[str, str], frozenset[str]] = {}
for (_k, _s), _tags in _TAGS.items():
    for _t in _tags:
        _ASK[(_k, _t)] = _frags(f"ask.{_k}.{_t}")
        _name = f"answer.{_k}.{_t}.{_s}" if f"answer.{_k}.{_t}.{_s}" in _FRAGS else f"answer.{_k}.{_t}"
        _ANSWER[(_k, _s, _t)] = (_name, _FRAGS[_name])
        _VOLUNTEER[(_k, _s, _t)] = tuple(f for f in _FRAGS[_name] if not f.alone)
        _TAG_REACT[(_k, _t)] = _frags(f"react.{_k}.{_t}", f"react.tag.{_t}")
        _TAG_KEYS[(_k, _t)] = _KEYS.get((_k, _t)) or _value_slots(_frags(f"answer.{_k}.{_t}"))
_REACT_ANY = _FRAGS["react.any"]
_CHAT_ANY = _FRAGS["chat.any"]
_LEAD_ASIDE = _FRAGS["lead.aside"]
_LEAD_MORE = _FRAGS["lead.more"]
_ACK = _FRAGS["ack"]
_TAIL = {m: _FRAGS[f"tail.{m}"] for m in ("good", "bad", "neutral", "plan")}


# --------------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------------


def _add_workdays(d: date, n: int) -> date:
    step = 1 if n >= 0 else -1
    left = abs(n)
    while left:
        d += timedelta(days=step)
        if d.weekday() < 5:
            left -= 1
    return d


def _workdays_between(a: date, b: date) -> int:
    """Working days after ``a`` up to and including ``b`` (0 when b <= a)."""
    n = 0
    while a < b:
        a += timedelta(days=1)
        if a.weekday() < 5:
            n += 1
    return n


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return str(n) + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _month_add(d: date, n: int) -> tuple[int, int]:
    m = d.month - 1 + n
    return d.year + m // 12, m % 12 + 1


# --------------------------------------------------------------------------------------------
# The composer
# --------------------------------------------------------------------------------------------


class _Ctx(dict):
    """Slot values for one storyline's exchange, made on first use and undone on rejection."""

    __slots__ = ("maker", "new", "deps", "seen", "days", "told")
    # days: the day each date slot names (made or given by the storyline); told: the days the
    # lines said so far in this exchange name

    def __missing__(self, key: str) -> str:
        value = self.maker(self, key)
        self[key] = value
        self.new.append(key)
        return value

    def put(self, key: str, value: str) -> None:
        if key not in self:
            self.new.append(key)
        self[key] = value

    def rollback(self) -> None:
        for key in self.new:
            self.pop(key, None)
            self.deps.pop(key, None)
            self.days.pop(key, None)
        self.new.clear()


@dataclass(eq=False)
class _Arc:
    """One storyline: its kind, stage, dates and the values said about it so far."""

    kind: str
    vals: dict[str, str]
    stage: str = ""
    last: date | None = None
    said: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    dates: dict[str, date] = field(default_factory=dict)
    nums: dict[str, int] = field(default_factory=dict)
    mentions: int = 0
    closed: bool = False


@dataclass
class _Plan:
    kind: str
    stage: str
    base: dict[str, str]
    arc: _Arc | None = None
    said: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    update: Callable[[], None] | None = None  # the arc's state change, applied on success
    ctx: dict[str, str] = field(default_factory=dict)  # the slot values the exchange used
    days: dict[str, date] = field(default_factory=dict)  # the day each date slot of ``base`` names


def _working_days(n: int) -> str:
    """``1 working day``, ``3 working days`` (the slots late_days and slip_days carry their noun)."""
    return f"{n} working day" if n == 1 else f"{n} working days"


# "a" before a slot value that is said with a vowel sound: "an invoice audit", "an 8% raise",
# "an Umbra Security Hardening review", "an Urban ..." (a capital U only where it sounds "uh", not
# "you": "a Unity rollout", "a UX review", "a Utah office").
_AN = re.compile(r"\b([Aa]) (?!EUR )(?=[aeioAEIO]|U(?:m|l|p|rb|nd|nt|nc|gl|tt)|8|1[18](?!\d))")


_FILE_NAME = re.compile(r"\b[\w-]+\.(?:xlsx|xls|csv|docx|doc|pdf|pptx|zip|txt)\b", re.I)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "project"


class OtherWork:
    """Composes talk about work that is not the task, for one history."""

    def __init__(self, *, rng: random.Random, user_first: str, colleagues: Sequence[str], company: str,
                 projects: Sequence[str], files: Sequence[str], avoid: Callable[[str], bool] = lambda t: True,
                 currency: str = "", absences: Iterable[tuple[str, date, date]] = ()) -> None:
        """``currency``: the office's currency code (its documents' money); without one, a
        history's amounts take a currency of their own. ``absences``: ``(first name, first day,
        last day)`` for each span the office shows a colleague away."""
        self.rng = rng
        self.avoid = avoid
        self.banned: set[str] = set()
        self.user = user_first.strip()
        if not self.user or not avoid(self.user):
            self.banned.add("user")
        self.company = company.strip() or "the company"
        if not avoid(self.company):
            self.banned.add("company")
        given = [c.strip() for c in dict.fromkeys(colleagues) if c and c.strip()]
        people = [c for c in given if c != self.user and avoid(c)]
        extra = [row[0].text for row in _DATA["data.name"]]
        rng.shuffle(extra)
        extra = [n for n in extra if n not in given and n != self.user and avoid(n)]
        if len(people) < 4:  # too few to keep storylines apart: add names from the bank
            people += extra[: 4 - len(people)]
        self.people = people
        # the days the office shows each colleague away, by name (spans in order, first day first)
        absent: dict[str, list[tuple[date, date]]] = {}
        for name, first, last in absences:
            name = name.strip()
            if name and first <= last:
                absent.setdefault(name, []).append((first, last))
        self.absent = {name: sorted(spans) for name, spans in absent.items()}
        # people outside the office (a supplier's staff): never one of the office's colleagues
        self.outsiders = [n for n in extra if n not in people and n not in self.absent]
        projs = [p.strip() for p in dict.fromkeys(projects) if p and p.strip() and avoid(p.strip())]
        if len(projs) < 3:
            extra = [row[0].text for row in _DATA["data.project"]]
            rng.shuffle(extra)
            projs += [p for p in extra if p not in projs and avoid(p)][: 3 - len(projs)]
        self.projects = projs
        # the office's documents, by name as the user sees them (no folder), and by kind: a line
        # about rows or figures names a sheet, never a PDF
        names = [f.replace("\\", "/").rsplit("/", 1)[-1] for f in dict.fromkeys(files) if f]
        self.files = [f for f in dict.fromkeys(names) if f and f.isascii() and " " not in f and "." in f and avoid(f)]
        self.sheets = [f for f in self.files if f.lower().endswith((".xlsx", ".xls", ".csv"))]
        self.docs = [f for f in self.files if f.lower().endswith((".docx", ".doc", ".pdf"))]
        self._office_stems = {f.rsplit(".", 1)[0].lower() for f in self.files}
        self.domain = _slug(self.company).replace("_", "") + ".com"
        drawn = rng.choice(("$", "$", "EUR ", "GBP "))
        self.currency = spoken_prefix(currency) if currency else drawn
        self.arcs: list[_Arc] = []
        self.used: set[str] = set()
        self.away_until: dict[str, date] = {}  # supplier's contact -> first day back
        self.busy: set[str] = set()  # people and projects tied to open arcs
        self.frags_used: set[_Frag] = set()  # every fragment of this history's finished exchanges
        self._makers: dict[str, Callable[[_Ctx], str]] = self._build_makers()
        self.today = date(2000, 1, 3)
        self.now = datetime(2000, 1, 3, 9)

    # ---- public -------------------------------------------------------------------------

    def exchange(self, when: datetime, pairs: int) -> list[tuple[str, str]]:
        """Exactly `pairs` (>= 1) user/assistant pairs about one piece of other work, user first, alternating."""
        if pairs < 1:
            raise ValueError("pairs must be at least 1")
        self.now = when
        self.today = when.date()
        for attempt in range(12):
            plan = self._pick(attempt)
            out = self._compose(plan, pairs)
            if out is not None:
                self._commit(plan)
                self.frags_used.update(plan.ctx.seen)
                return out
        raise RuntimeError(f"could not compose {pairs} pairs of other-work talk: avoid() rejects almost "
                           "everything, or the exchange is longer than the banks can vary (about 25 pairs)")

    # ---- topic choice -------------------------------------------------------------------

    def _pick(self, attempt: int) -> _Plan:
        rng = self.rng
        if attempt < 6:
            live = [a for a in self.arcs if not a.closed and (a.last is None or a.last < self.today)]
            rng.shuffle(live)
            if live and rng.random() < 0.5:
                for arc in live:
                    plan = self._arc_plan(arc)
                    if plan is not None:
                        return plan
            if sum(not a.closed for a in self.arcs) < 3 and rng.random() < 0.45:
                plan = self._new_arc()
                if plan is not None:
                    return plan
        kind = rng.choices(_ONE_OFF, _ONE_OFF_WEIGHTS)[0]
        return _Plan(kind, "", {})

    def _free_people(self, n: int) -> list[str] | None:
        """``n`` colleagues for a new storyline: none tied to another one, and none the office shows
        away in the days its first mentions may name (a week back, two weeks ahead)."""
        free = [p for p in self.people if p not in self.busy and not self._is_away(p)]
        if self.absent:
            window = [self.today + timedelta(days=i) for i in range(-9, 15)]
            free = [p for p in free if self._clear(p, window)]
        if len(free) < n:
            return None
        return self.rng.sample(free, n)

    def _free_outsiders(self, n: int) -> list[str] | None:
        free = [p for p in self.outsiders if p not in self.busy and not self._is_away(p)]
        if len(free) < n:
            return None
        return self.rng.sample(free, n)

    def _is_away(self, person: str) -> bool:
        back = self.away_until.get(person)
        return back is not None and self.today < back

    # ---- the office's absences ------------------------------------------------------------

    def _clear(self, person: str, days: Iterable[date]) -> bool:
        """``person`` is not shown away by the office on any of ``days``."""
        spans = self.absent.get(person)
        return not spans or not any(first <= d <= last for d in days for first, last in spans)

    def _known_days(self, ctx: _Ctx) -> list[date]:
        """Today and every day this exchange's slots name so far."""
        return [self.today, *(d for k, d in ctx.days.items() if k in ctx)]

    def _fits_absences(self, ctx: _Ctx, slots: Iterable[str]) -> bool:
        """No colleague of this exchange is away today, on a day its lines have named, or on a day
        ``slots`` (the next line's) name."""
        if not self.absent:
            return True
        days = [self.today, *ctx.told, *(ctx.days[s] for s in slots if s in ctx.days and s in ctx)]
        return all(self._clear(v, days) for k in _PERSON_SLOTS if (v := dict.get(ctx, k)) is not None)

    def _told(self, ctx: _Ctx, slots: Iterable[str]) -> None:
        if self.absent:
            ctx.told.extend(ctx.days[s] for s in slots if s in ctx.days and s in ctx)

    def _arc_clear(self, arc: _Arc, days: Iterable[date]) -> bool:
        """The colleagues of storyline ``arc`` are in the office today and on ``days``."""
        days = [self.today, *days]
        return all(self._clear(v, days) for k, v in arc.vals.items() if k in _PEOPLE_KEYS)

    def _new_arc(self) -> _Plan | None:
        rng, today = self.rng, self.today
        kind = rng.choice(_ARC_KINDS)
        if kind == "milestone":
            projects = [p for p in self.projects if p not in self.busy]
            who = self._free_people(1)
            if not projects or not who:
                return None
            arc = _Arc(kind, {"project": rng.choice(projects), "owner": who[0]})
            done_before = {a.vals.get("milestone") for a in self.arcs}  # never the same piece of work twice
            rows = [row for row in _DATA["data.milestone"] if row[0].text not in done_before] or _DATA["data.milestone"]
            arc.vals.update(zip(_BANK["data.milestone"].fields or (), (f.text for f in rng.choice(rows))))
            total = rng.choice((rng.randint(40, 400), rng.randint(1_000, 9_800)))
            arc.nums.update(total=total, done=0, budget=rng.randint(160, 4_800) * 50)
            if rng.random() < 0.5:
                arc.dates["due"] = arc.dates["first_due"] = _add_workdays(today, rng.randint(4, 9))
                return self._milestone_plan(arc, "planned", {})
            arc.dates["due"] = arc.dates["first_due"] = _add_workdays(today, rng.randint(3, 8))
            arc.dates["start"] = _add_workdays(today, -rng.randint(2, 6))
            arc.nums["done"] = int(total * rng.uniform(0.15, 0.5))
            return self._milestone_plan(arc, "running", {})
        if kind == "away":  # a supplier's contact is away: never a colleague of the office
            who = self._free_outsiders(2)
            if not who or any(a.kind == "away" and not a.closed for a in self.arcs):
                return None  # one supplier's absence at a time is news; three would be a pattern
            row = rng.choice([r for r in _DATA["data.vendor"] if r[0].text not in self.busy] or _DATA["data.vendor"])
            arc = _Arc(kind, {"away": who[0], "cover": who[1],
                              **dict(zip(_BANK["data.vendor"].fields or (), (f.text for f in row)))})
            arc.dates["back"] = _add_workdays(today, rng.randint(2, 5))
            return self._away_plan(arc, "out")
        who = self._free_people(1)
        if not who:
            return None
        arc = _Arc("hiring", {"owner": who[0]})
        arc.dates["interview"] = _add_workdays(today, rng.randint(1, 3))
        arc.nums.update(applicants=rng.randint(12, 140), shortlist=rng.randint(3, 6))
        return self._hiring_plan(arc, "open")

    def _arc_plan(self, arc: _Arc) -> _Plan | None:
        """The storyline's next mention; none while one of its colleagues is away (today or on a
        day the mention names): it rests until they are back."""
        if self.absent and not self._arc_clear(arc, ()):
            return None
        if arc.kind == "milestone":
            plan = self._milestone_next(arc)
        elif arc.kind == "away":
            plan = self._away_plan(arc, "back" if self.today >= arc.dates["back"] else "still")
        else:
            plan = self._hiring_next(arc)
        if plan is not None and self.absent and not self._arc_clear(arc, plan.days.values()):
            return None
        return plan

    # milestone ------------------------------------------------------------------------------

    def _milestone_next(self, arc: _Arc) -> _Plan | None:
        rng, today = self.rng, self.today
        d = arc.dates
        if arc.stage in ("done", "done_late"):
            return self._milestone_plan(arc, "after", {})
        last = arc.last or today
        due = d["due"]
        options: list[tuple[str, float]] = []
        if today > due:
            options = [("overdue", 1.0), ("finish", 1.4)]
        elif arc.stage == "planned":
            options = [("progress", 1.0), ("slipped", 0.2)]  # "progress" from "planned" is "started"
        else:
            near = _workdays_between(today, due) <= 2
            finish = 0.0 if arc.mentions < 2 else 0.5 * (arc.mentions - 1) + (1.5 if near else 0.0)
            options = [("progress", 1.0), ("ontrack", 0.5), ("slipped", 0.7 if arc.stage != "slipped" else 0.2),
                       ("finish", finish)]
        choice = rng.choices([o for o, _ in options], [w for _, w in options])[0]
        if choice == "finish":
            days = [last + timedelta(days=i) for i in range(1, (today - last).days + 1)]
            days = [x for x in days if x.weekday() < 5] or [today]
            if self.absent:  # finished on a day its people were in
                days = [x for x in days if self._arc_clear(arc, (x,))]
                if not days:
                    return None
            done = rng.choice(days[-3:])
            stage = "done" if done <= d["first_due"] else "done_late"
            return self._milestone_plan(arc, stage, {"done": done})
        if choice == "overdue" or choice == "slipped":
            new_due = _add_workdays(max(due, today), rng.randint(2, 5))
            return self._milestone_plan(arc, choice, {"due": new_due, "old_due": due})
        if arc.stage == "planned":
            starts = [x for x in (last + timedelta(days=i) for i in range(1, (today - last).days + 1))
                      if x.weekday() < 5] or [today]
            if self.absent:  # started on a day its people were in
                starts = [x for x in starts if self._arc_clear(arc, (x,))]
                if not starts:
                    return None
            start = rng.choice(starts)
            return self._milestone_plan(arc, "started", {"start": start})
        return self._milestone_plan(arc, choice, {})

    def _milestone_plan(self, arc: _Arc, stage: str, change: dict[str, date]) -> _Plan:
        rng, today = self.rng, self.today
        d = dict(arc.dates)
        d.update(change)
        total, done_n = arc.nums["total"], arc.nums["done"]
        old_pct = round(100 * done_n / total)
        if stage in ("started", "progress", "ontrack", "slipped", "overdue"):
            lo = done_n + max(1, total // 12) if stage != "started" else max(1, total // 20)
            hi = int(total * (0.95 if stage != "started" else 0.3))
            if lo <= hi and not (stage in ("ontrack", "slipped", "overdue") and rng.random() < 0.5):
                done_n = rng.randint(lo, hi)  # otherwise no new progress to tell
            elif stage == "progress":
                stage = "ontrack"  # nearly there and nothing new: it is simply on track
        base = dict(arc.vals)
        if stage in ("done", "done_late"):
            done_n = total
            share = rng.uniform(0.82, 0.99) if stage == "done" else rng.uniform(1.03, 1.25)
            base["final_cost"] = f"{self.currency}{int(arc.nums['budget'] * share):,}"
        base["budget"] = f"{self.currency}{arc.nums['budget']:,}"
        pct = round(100 * done_n / total)
        base.update(total=f"{total:,}", done_count=f"{done_n:,}", left=f"{total - done_n:,}", pct=f"{pct}%",
                    old_pct=f"{old_pct}%", due_on=self._on(d["due"]), due_day=self._day(d["due"]),
                    due_date=self._abs(d["due"]), first_due_date=self._abs(d["first_due"]))
        if arc.last is not None:
            base["last_on"] = self._on(arc.last)
        if d.get("start") is not None and d["start"] <= today:
            base["started_on"] = self._on(d["start"])
        if "old_due" in change:
            base["old_due_day"] = self._day(change["old_due"])
            base["old_due_date"] = self._abs(change["old_due"])
            base["slip_days"] = _working_days(_workdays_between(change["old_due"], d["due"]))
        if "done" in d:
            base["done_on"] = self._on(d["done"])
            base["late_days"] = _working_days(max(1, _workdays_between(d["first_due"], d["done"])))

        def update() -> None:
            arc.dates.update(change)
            arc.nums["done"] = done_n
            arc.stage = stage
            if stage == "after":
                arc.closed = True

        plan = _Plan("milestone", stage, base, arc, set(arc.said), set(arc.asked), update)
        plan.days.update(due_on=d["due"], due_day=d["due"], due_date=d["due"], first_due_date=d["first_due"])
        if arc.last is not None:
            plan.days["last_on"] = arc.last
        if "started_on" in base:
            plan.days["started_on"] = d["start"]
        if "old_due" in change:
            plan.days.update(old_due_day=change["old_due"], old_due_date=change["old_due"])
        if "done" in d:
            plan.days["done_on"] = d["done"]
        return plan

    # away ------------------------------------------------------------------------------------

    def _away_plan(self, arc: _Arc, stage: str) -> _Plan:
        base = dict(arc.vals)
        back = arc.dates["back"]
        if stage == "back":
            base["back_on"] = self._on(back) if back <= self.today else self._on(self.today)
            days = {"back_on": min(back, self.today)}
        else:
            base.update(back_on=self._on(back), back_day=self._day(back), back_date=self._abs(back))
            days = {"back_on": back, "back_day": back, "back_date": back}

        def update() -> None:
            arc.stage = stage
            self.away_until[arc.vals["away"]] = back
            if stage == "back":
                arc.closed = True

        return _Plan("away", stage, base, arc, set(arc.said), set(arc.asked), update, days=days)

    # hiring ----------------------------------------------------------------------------------

    def _hiring_next(self, arc: _Arc) -> _Plan | None:
        if arc.stage == "open":
            if self.today < arc.dates["interview"]:
                return None
            return self._hiring_plan(arc, "interviews")
        if arc.stage == "interviews":
            return self._hiring_plan(arc, "offer")
        if arc.stage == "offer":
            return self._hiring_plan(arc, "accepted")
        return None

    def _hiring_plan(self, arc: _Arc, stage: str) -> _Plan:
        base = dict(arc.vals)
        iv = arc.dates["interview"]
        base.update(applicants=str(arc.nums["applicants"]), shortlist=str(arc.nums["shortlist"]))
        if stage == "open":
            base.update(interview_on=self._on(iv), interview_day=self._day(iv))
            days = {"interview_on": iv, "interview_day": iv}
        else:
            base["interviewed_on"] = self._on(iv)
            days = {"interviewed_on": iv}
        start = arc.dates.get("start")
        if stage == "accepted":
            start = self.today + timedelta(days=self.rng.randint(16, 40))
            while start.weekday() != 0:
                start += timedelta(days=1)
            base["start_date"] = self._abs(start)
        if arc.last is not None:
            base["last_on"] = self._on(arc.last)
            days["last_on"] = arc.last  # (the new hire's start_date is theirs, not the panel's)

        def update() -> None:
            arc.stage = stage
            if start is not None:
                arc.dates["start"] = start
            if stage == "accepted":
                arc.closed = True

        return _Plan("hiring", stage, base, arc, set(arc.said), set(arc.asked), update, days=days)

    def _commit(self, plan: _Plan) -> None:
        arc = plan.arc
        if arc is None:
            return
        if plan.update is not None:
            plan.update()
        if arc not in self.arcs:
            self.arcs.append(arc)
        arc.last = self.today
        arc.mentions += 1
        arc.said = plan.said
        arc.asked = plan.asked
        for key in _KEEP:
            if key in plan.ctx:
                arc.vals[key] = plan.ctx[key]
        # People and projects tied to open arcs stay out of new arcs.
        self.busy = set()
        for a in self.arcs:
            if not a.closed:
                self.busy.update(v for k, v in a.vals.items()
                                 if k in ("project", "owner", "away", "cover", "helper", "vendor"))

    # ---- composing ----------------------------------------------------------------------

    def _ok(self, frags: Sequence[_Frag], seen: set[_Frag], said: set[str] | None = None) -> list[_Frag]:
        """Fragments not yet used in this exchange whose slots can be filled (and, for the
        assistant, whose values the user has said)."""
        banned = self.banned
        if said is None:
            if not banned:
                return [f for f in frags if f not in seen]
            return [f for f in frags if f not in seen and not (f.slots & banned)]
        if banned:
            return [f for f in frags if f.need <= said and f not in seen and not (f.slots & banned)]
        return [f for f in frags if f.need <= said and f not in seen]

    def _compose(self, plan: _Plan, pairs: int) -> list[tuple[str, str]] | None:
        produced: list[str] = []
        out = self._compose_into(plan, pairs, produced)
        if out is None:
            self.used.difference_update(produced)
        return out

    def _compose_into(self, plan: _Plan, pairs: int, produced: list[str]) -> list[tuple[str, str]] | None:
        rng = self.rng
        kind, stage = plan.kind, plan.stage
        ctx = _Ctx(plan.base)
        ctx.maker = self._make
        ctx.new = []
        ctx.deps = {}
        ctx.seen = set()  # fragments already used in this exchange
        ctx.days = dict(plan.days)
        ctx.told = []
        plan.ctx = ctx
        said = plan.said
        asked = plan.asked
        fresh: set[str] = set()  # slots the user said in this exchange
        # follow-ups not asked in this storyline, with an answer not told yet in this history
        tags = [t for t in _TAGS[(kind, stage)] if _ANSWER[(kind, stage, t)][0] not in asked
                and any(f not in self.frags_used for f in _ANSWER[(kind, stage, t)][1])]
        out: list[tuple[str, str]] = []
        pending: str | None = None
        for i in range(pairs):
            # ---- the user's line: the news, then answers or further details
            if i == 0:
                tag = None
                user = self._user_first(plan, ctx, said)
            else:
                tag = pending
                if tag is None:
                    open_tags = [t for t in tags if not (_TAG_KEYS[(kind, t)] & fresh)
                                 and any(f not in self.frags_used for f in _VOLUNTEER[(kind, stage, t)])]
                    tag = rng.choice(open_tags) if open_tags else None
                if tag is not None:
                    if pending is None:  # volunteered: only lines that make sense without the question
                        user = self._user_line(_VOLUNTEER[(kind, stage, tag)], ctx, said, _LEAD_MORE)
                    else:
                        user = self._user_line(_ANSWER[(kind, stage, tag)][1], ctx, said, None)
                    tags.remove(tag)
                    asked.add(_ANSWER[(kind, stage, tag)][0])
                else:
                    user = (self._user_line(_CHAT[(kind, stage)], ctx, said, None)
                            or self._user_line(_CHAT_ANY, ctx, said, None)
                            or self._user_line(_CHAT_ANY, ctx, said, None, fresh_frags=True))
            if user is None:
                return None
            text, used = user
            fresh |= used
            if i == 0 and used & _OFFICE_FILE_SLOTS:  # an office file: nothing invented about it
                tags = [t for t in tags if (kind, t) not in _OFFICE_FILE_BLOCKED]
            produced.append(text)
            self.used.add(text)
            # ---- the assistant's reply: maybe a question the next user line answers
            final = i == pairs - 1
            pending = None
            if not final and rng.random() < _P_ASK:
                open_tags = [t for t in tags if not (_TAG_KEYS[(kind, t)] & fresh)
                             and self._ok(_ASK[(kind, t)], ctx.seen, said)]
                if open_tags:
                    pending = rng.choice(open_tags)
            reply = self._reply(plan, ctx, said, pending, tag, final, used)
            if reply is None:
                return None
            produced.append(reply)
            self.used.add(reply)
            out.append((text, reply))
        return out

    def _fill(self, frag: _Frag, ctx: _Ctx) -> tuple[str, set[str]]:
        text = frag.text.format_map(ctx) if frag.slots else frag.text
        if frag.an:
            text = _AN.sub(r"\1n ", text)
        used = set(frag.slots)
        deps = ctx.deps
        if deps:
            for s in frag.slots:
                extra = deps.get(s)
                if extra:
                    used |= extra
                    for e in extra:
                        more = deps.get(e)
                        if more:
                            used |= more
        return text, used

    def _accept(self, text: str) -> bool:
        """The line is usable: 5-30 words, new in this history, free of task values, no word or
        phrase said twice over ("The Prism Dashboard dashboard"), and no invented file name that
        could be taken for one of the office's documents."""
        if not (5 <= text.count(" ") + 1 <= 30) or text in self.used or repeats_itself(text):
            return False
        if self._office_stems and "." in text:
            for name in _FILE_NAME.findall(text):
                if name not in self.files and self._like_office_file(name):
                    return False
        return self.avoid(text)

    def _user_first(self, plan: _Plan, ctx: _Ctx, said: set[str]) -> tuple[str, set[str]] | None:
        ks = (plan.kind, plan.stage)
        rng = self.rng
        lead = None
        if rng.random() < _P_LEAD_FIRST:
            lead = _LEAD_ASIDE
        tail = _TAIL[_MOOD.get(plan.stage or plan.kind, "neutral")] if rng.random() < _P_TAIL else None
        return self._user_line(_INTRO[ks], ctx, said, lead, tail)

    def _user_line(self, frags: tuple[_Frag, ...], ctx: _Ctx, said: set[str], leads: tuple[_Frag, ...] | None,
                   tails: tuple[_Frag, ...] | None = None, fresh_frags: bool = False
                   ) -> tuple[str, set[str]] | None:
        """One user line from ``frags`` (plus an optional lead and tail); with ``fresh_frags``,
        fragments already used in this exchange may come back (with new values)."""
        rng = self.rng
        seen = ctx.seen
        cands = self._ok(frags, set() if fresh_frags else seen)
        if not cands:
            return None
        if not fresh_frags:
            # a fragment states its fact once a history: told again later with other values, it
            # would contradict itself ("at least 493 CVs", then "at least 390"); a history long
            # enough to have used them all tells them again
            untold = [f for f in cands if f not in self.frags_used]
            cands = untold or cands
        lead_c = self._ok(leads, seen) if leads else None
        tail_c = self._ok(tails, seen) if tails else None
        for attempt in range(_TRIES):
            frag = rng.choice(cands)
            lead = tail = None
            if fresh_frags:  # the same wording again: with new values, not the ones said before
                for slot in frag.slots - _TOPIC_SLOTS:
                    if slot not in _PEOPLE_KEYS:
                        ctx.pop(slot, None)
            if not frag.specific and attempt < _TRIES - 4 and any(f.specific for f in cands):
                continue  # a line with nothing particular in it would read the same in every history
            try:
                body, used = self._fill(frag, ctx)
                text = body
                if lead_c and not frag.alone and attempt < _TRIES - 4:
                    lead = rng.choice(lead_c)
                    lt, lu = self._fill(lead, ctx)
                    if lt.endswith((":", ".")):
                        text = f"{lt} {body[0].upper()}{body[1:]}"
                    else:
                        text = f"{lt} {body[0].lower()}{body[1:]}" if frag.lower else f"{lt} {body}"
                    used |= lu
                else:
                    text = body[0].upper() + body[1:]
                if tail_c and attempt < _TRIES - 4:
                    tail = rng.choice(tail_c)
                    tt, tu = self._fill(tail, ctx)
                    text = f"{text} {tt[0].upper()}{tt[1:]}"
                    used |= tu
            except _NoValue:
                ctx.rollback()
                continue
            if self._accept(text) and self._fits_absences(ctx, used):
                self._told(ctx, used)
                ctx.new.clear()
                said |= used
                seen.update(f for f in (frag, lead, tail) if f is not None)
                return text, used
            ctx.rollback()
        return None

    def _reply(self, plan: _Plan, ctx: _Ctx, said: set[str], ask: str | None, last_tag: str | None,
               final: bool, answered: set[str] = frozenset()) -> str | None:
        """The assistant's turn after a user line that used the slots ``answered``: a reaction
        names no figure, date or place but that line's (it answers that line, not another)."""
        rng = self.rng
        kind = plan.kind
        seen = ctx.seen
        free = _REACT_TOPIC | answered

        def fits(frags: Sequence[_Frag], seen: set[_Frag]) -> list[_Frag]:
            return [f for f in self._ok(frags, seen, said) if f.slots <= free]

        ok = self._ok
        react = fits(_TAG_REACT[(kind, last_tag)], seen) if last_tag else []
        if len(react) < 3:
            react += fits(_REACT[(kind, plan.stage)], seen)
        if len(react) < 2:
            react += fits(_REACT_ANY, seen)
        if not react and not ask:  # a very long exchange: reactions may come back
            react = fits(_REACT_ANY, set()) + fits(_REACT[(kind, plan.stage)], set())
        special = [f for f in react if f.specific]
        if special and len(special) < len(react) and rng.random() < 0.8:
            react = special  # most replies name something particular to this history
        acks: list[_Frag] | None = None
        promises = ok(_PROMISE[(kind, plan.stage)], seen, said) if final else None
        asks = ok(_ASK[(kind, ask)], seen, said) if ask else None
        for attempt in range(_TRIES):
            r = rng.random()
            if asks:
                shape = "ack+ask" if r < 0.25 else "react+ask" if r < 0.75 and react else "ask"
            elif not final or not promises:
                shape = "ack+react" if r < 0.35 else "react"
            else:
                shape = ("ack+react" if r < 0.25 else "react" if r < 0.58 else "ack+promise" if r < 0.78
                         else "react+promise")
            parts: list[_Frag] = []
            pieces = shape.split("+")
            for piece in pieces:
                if piece == "react":
                    pool = react
                elif piece == "ask":
                    pool = asks
                elif piece == "ack":
                    pool = acks = ok(_ACK, seen, said) if acks is None else acks
                else:
                    pool = promises
                if not pool:
                    break
                if len(parts) == len(pieces) - 1 and not any(p.specific for p in parts):
                    special = [f for f in pool if f.specific]  # the last piece has to name something
                    pool = special or pool
                parts.append(rng.choice(pool))
            else:
                if attempt < _TRIES - 3:
                    if not any(p.specific for p in parts):
                        continue  # a line with nothing particular in it would read the same in every history
                    if len(parts) > 1 and (parts[0].head == parts[1].head
                                           or sum("user" in p.slots for p in parts) > 1):
                        continue  # "Noted, Sam. Thanks, Sam, ..." or "Good to know. Good ..."
                try:
                    texts = []
                    for p in parts:
                        t = p.text.format_map(ctx) if p.slots else p.text
                        if p.an:
                            t = _AN.sub(r"\1n ", t)
                        texts.append(t[0].upper() + t[1:])
                except _NoValue:
                    ctx.rollback()
                    continue
                text = " ".join(texts)
                slots = [s for p in parts for s in p.slots]
                if self._accept(text) and self._fits_absences(ctx, slots):
                    self._told(ctx, slots)
                    ctx.new.clear()
                    seen.update(parts)
                    return text
                ctx.rollback()
        return None

    # ---- slot values --------------------------------------------------------------------

    def _make(self, ctx: _Ctx, key: str) -> str:
        maker = self._makers.get(key)
        if maker is not None:
            return maker(ctx)
        section = _SOURCE.get(key)
        if section is None:
            raise _NoValue(key)
        fields = _BANK[section].fields or ()
        rows = _DATA[section]
        # a row that agrees with the fields already set (a supplier's address with its own name)
        fixed = [(i, ctx[f]) for i, f in enumerate(fields) if f != key and f in ctx]
        if fixed:
            rows = tuple(r for r in rows if all(not r[i].slots and r[i].text == v for i, v in fixed)) or rows
        row = self.rng.choice(rows)
        value = ""
        for fname, frag in zip(fields, row):
            if fname in ctx and fname != key:
                continue
            text, used = self._fill(frag, ctx)
            if fname == key:
                value = text
            else:
                ctx.put(fname, text)
            if used:
                ctx.deps[fname] = used
        if not value:
            raise _NoValue(key)
        return value

    def _person(self, ctx: _Ctx) -> str:
        taken = {ctx.get(k) for k in _PEOPLE_KEYS}
        free = [p for p in self.people if p not in taken and not self._is_away(p)]
        if self.absent:  # in the office today and on every day this exchange names
            days = self._known_days(ctx)
            free = [p for p in free if self._clear(p, days)]
        if not free:
            raise _NoValue("colleague")
        return self.rng.choice(free)

    def _outsider(self, ctx: _Ctx) -> str:
        taken = {ctx.get(k) for k in _OUTSIDER_KEYS}
        free = [p for p in self.outsiders if p not in taken and p not in self.busy and not self._is_away(p)]
        if not free:
            raise _NoValue("outsider")
        return self.rng.choice(free)

    def _project(self, ctx: _Ctx) -> str:
        taken = {ctx.get("project"), ctx.get("project2")}
        free = [p for p in self.projects if p not in taken]
        if not free:
            raise _NoValue("project")
        return self.rng.choice(free)

    def _money(self, lo: int, hi: int, cents: float = 0.15) -> str:
        rng = self.rng
        v = rng.randint(lo, hi)
        if v >= 1000:
            v = v // 50 * 50 if rng.random() < 0.7 else v
        if rng.random() < cents:
            return f"{self.currency}{v:,}.{rng.randint(1, 99):02d}"
        return f"{self.currency}{v:,}"

    def _pct(self) -> str:
        rng = self.rng
        if rng.random() < 0.45:
            return f"{rng.randint(2, 40)}.{rng.randint(1, 9)}%"
        return f"{rng.randint(2, 48)}%"

    def _count(self, lo: int = 12, hi: int = 9_800) -> str:
        return f"{self.rng.randint(lo, hi):,}"

    def _clock(self, lo: int = 8 * 60, hi: int = 17 * 60 + 30) -> str:
        m = self.rng.randrange(lo, hi, 15)
        return f"{m // 60}:{m % 60:02d}"

    def _past_clock(self) -> str:
        """A time earlier today, at least half an hour before now ("sent at 9:15" said at 10:02)."""
        latest = self.now.hour * 60 + self.now.minute - 30
        if latest < 8 * 60:
            raise _NoValue("past_clock")
        return self._clock(8 * 60, latest + 1)

    @staticmethod
    def _dated(ctx: _Ctx, key: str, day: date) -> date:
        """``day``, noted as the day slot ``key`` names."""
        ctx.days[key] = day
        return day

    def _past_day(self, min_hour_today: int = 11) -> date:
        now = self.now
        if now.hour >= min_hour_today and now.weekday() < 5 and self.rng.random() < 0.3:
            return self.today
        return _add_workdays(self.today, -self.rng.choice((1, 1, 2, 3, 4)))

    def _met_on(self, ctx: _Ctx) -> str:
        rng = self.rng
        day = self._past_day(12)
        if day == self.today:
            latest = self.now.hour * 60 + self.now.minute - 20
            start = rng.randrange(8 * 60, max(8 * 60 + 15, latest - 45), 15)
            end = min(start + rng.choice((30, 45, 60, 75, 90)), latest // 15 * 15)
            if end <= start:
                day = _add_workdays(self.today, -1)
        if day != self.today:
            start = rng.randrange(8 * 60 + 30, 16 * 60, 15)
            end = start + rng.choice((30, 45, 60, 75, 90, 120))
        ctx.put("start", f"{start // 60}:{start % 60:02d}")
        ctx.put("end", f"{end // 60}:{end % 60:02d}")
        return self._on(self._dated(ctx, "met_on", day))

    def _meeting_time(self, ctx: _Ctx, key: str) -> str:
        if "met_on" not in ctx:
            ctx["met_on"]  # sets start and end as well
        if key not in ctx:
            raise _NoValue(key)
        return ctx[key]

    def _file(self, ctx: _Ctx, key: str) -> str:
        rng = self.rng
        other = ctx.get("file2" if key == "file" else "file")
        for _ in range(6):
            row = rng.choice(_DATA["data.filename"])
            name = row[0].text.format_map(ctx) if row[0].slots else row[0].text
            if name != other and not self._like_office_file(name):
                return name
        raise _NoValue(key)

    def _like_office_file(self, name: str) -> bool:
        """An invented file name that starts with an office document's name, or whose name an
        office document's starts with: it could be taken for the office's own file."""
        stem = name.rsplit(".", 1)[0].lower()
        return any(stem.startswith(o) or o.startswith(stem) for o in self._office_stems)

    def _office_file(self, pool: list[str], key: str) -> str:
        if not pool:
            raise _NoValue(key)
        return self.rng.choice(pool)

    def _later_month(self) -> tuple[int, int]:
        return _month_add(self.today, 1 if self.today.day <= 12 else 2)

    def _next_q(self) -> str:
        t = self.today
        q = (t.month - 1) // 3 + 1
        y = t.year
        q, y = (q + 1, y) if q < 4 else (1, y + 1)
        first = date(y, 3 * q - 2, 1)
        if (first - t).days < 30:
            q, y = (q + 1, y) if q < 4 else (1, y + 1)
        return f"Q{q}" if y == t.year else f"Q{q} {y}"

    def _build_makers(self) -> dict[str, Callable[[_Ctx], str]]:
        rng = self.rng

        def month_name(n: int) -> Callable[[_Ctx], str]:
            return lambda c: _MONTHS[_month_add(self.today, n)[1] - 1]

        def later_date(key: str) -> Callable[[_Ctx], str]:
            def make(c: _Ctx) -> str:
                y, m = self._later_month()
                return self._abs(self._dated(c, key, date(y, m, rng.randint(3, 26))))
            return make

        def start_date(c: _Ctx) -> str:
            return self._abs(self._dated(c, "start_date", _add_workdays(self.today, rng.randint(10, 25))))

        def next_day(c: _Ctx) -> date:
            return _add_workdays(self.today, rng.randint(1, 7))

        return {
            "user": lambda c: self.user,
            "company": lambda c: self.company,
            "domain": lambda c: self.domain,
            "colleague": self._person, "colleague2": self._person, "colleague3": self._person,
            "helper": self._person, "cover": self._person, "owner": self._person,
            "colleague_lc": lambda c: _slug(c["colleague"]).replace("_", "."),
            "colleague2_lc": lambda c: _slug(c["colleague2"]).replace("_", "."),
            "away_lc": lambda c: _slug(c["away"]).replace("_", "."),
            "cover_lc": lambda c: _slug(c["cover"]).replace("_", "."),
            "ext": lambda c: str(rng.randint(2000, 7999)),
            "prev_mon": lambda c: _MONTHS[_month_add(self.today, -1)[1] - 1][:3].lower(),
            "project": self._project, "project2": self._project,
            "slug": lambda c: _slug(c["project"]),
            "money": lambda c: self._money(300, 95_000),
            "money2": lambda c: self._money(300, 95_000),
            "money_small": lambda c: self._money(12, 480, 0.5),
            "budget": lambda c: self._money(8_000, 240_000, 0.0),
            "salary": lambda c: self._money(34_000, 92_000, 0.0),
            "pct": lambda c: self._pct(), "pct2": lambda c: self._pct(),
            "count": lambda c: self._count(), "count2": lambda c: self._count(),
            "few": lambda c: str(rng.randint(3, 60)),
            "some": lambda c: str(rng.randint(40, 900)),
            "office_file": lambda c: self._office_file(self.files, "office_file"),
            "office_sheet": lambda c: self._office_file(self.sheets, "office_sheet"),
            "office_doc": lambda c: self._office_file(self.docs, "office_doc"),
            "outsider": self._outsider,
            "outsider_lc": lambda c: _slug(c["outsider"]).replace("_", "."),
            "past_clock": lambda c: self._past_clock(),
            "attendees": lambda c: str(rng.randint(5, 46)),
            "pages": lambda c: str(rng.randint(3, 64)),
            "years": lambda c: str(rng.randint(3, 22)),
            "week": lambda c: str(max(1, self.today.isocalendar()[1] - rng.randint(0, 1))),
            "floor": lambda c: str(rng.randint(2, 9)),
            "decimal": lambda c: f"{rng.randint(1, 9)}.{rng.choice((2, 25, 4, 5, 6, 75, 8))}",
            "hours": lambda c: f"{rng.randint(4, 38)}.5" if rng.random() < 0.4 else str(rng.randint(4, 40)),
            "score": lambda c: f"{rng.randint(6, 9)}.{rng.randint(0, 9)}",
            "score_pct": lambda c: f"{rng.randint(71, 98)}%",
            "desk": lambda c: f"{rng.randint(2, 6)}.{rng.randint(10, 48)}",
            "clock": lambda c: self._clock(), "start": lambda c: self._meeting_time(c, "start"),
            "end": lambda c: self._meeting_time(c, "end"),
            "file": lambda c: self._file(c, "file"), "file2": lambda c: self._file(c, "file2"),
            "v": lambda c: str(rng.randint(2, 6)),
            "mon": lambda c: _MONTHS[self.today.month - 1][:3].lower(),
            "mmdd": lambda c: f"{self.today.month:02d}{_add_workdays(self.today, -rng.randint(0, 3)).day:02d}",
            "iso": lambda c: self._dated(c, "iso", _add_workdays(self.today, -rng.randint(0, 4))).isoformat(),
            "qn": lambda c: str((self.today.month - 1) // 3 + 1),
            "code": lambda c: f"{''.join(rng.choice('ABCDEFGHJKLMNPRSTUVW') for _ in range(2))}-{rng.randint(10_000, 99_999)}",
            "q": lambda c: f"Q{(self.today.month - 1) // 3 + 1}",
            "prev_q": lambda c: f"Q{(self.today.month - 1) // 3 or 4}",
            "next_q": lambda c: self._next_q(),
            "this_month": month_name(0), "prev_month": month_name(-1), "prev_month2": month_name(-2),
            "later_month": lambda c: _MONTHS[self._later_month()[1] - 1],
            "later_date": later_date("later_date"), "later_date2": later_date("later_date2"),
            "start_date": start_date,
            "past_on": lambda c: self._on(self._dated(c, "past_on", self._past_day())),
            "met_on": self._met_on,
            "next_on": lambda c: self._on(self._dated(c, "next_on", next_day(c))),
            "next_date": lambda c: self._abs(self._dated(c, "next_date", next_day(c))),
        }

    # ---- date phrases -------------------------------------------------------------------

    def _phrase(self, section: str, d: date) -> str:
        frag = self.rng.choice(_FRAGS[section])
        if not frag.slots:
            return frag.text
        return frag.text.format(wday=_WEEKDAYS[d.weekday()], month=_MONTHS[d.month - 1], day=d.day,
                                ord=_ordinal(d.day))

    def _rel(self, d: date) -> str:
        t = self.today
        diff = (d - t).days
        if diff == 0:
            return "today"
        if diff == -1:
            return "yesterday"
        if diff == 1:
            return "tomorrow"
        wk = (d - timedelta(days=d.weekday())) - (t - timedelta(days=t.weekday()))
        weeks = wk.days // 7
        if diff < 0:
            return "past_week" if weeks == 0 else "last_week" if weeks == -1 else "past_far"
        return "this_week" if weeks == 0 else "next_week" if weeks == 1 else "far"

    def _on(self, d: date) -> str:
        """An adverbial phrase for day ``d`` seen from today: "yesterday", "on Tuesday", "next Friday"."""
        return self._phrase(f"date.on.{self._rel(d)}", d)

    def _day(self, d: date) -> str:
        """A noun phrase for a future day ``d``: "tomorrow", "Friday", "next Tuesday", "March 14"."""
        rel = self._rel(d)
        if rel == "today":
            rel = "this_week"
        return self._phrase(f"date.day.{rel}", d)

    def _abs(self, d: date) -> str:
        return self._phrase("date.abs", d)


class _NoValue(Exception):
    """A slot cannot be filled here (no free colleague, say); the fragment is skipped."""
