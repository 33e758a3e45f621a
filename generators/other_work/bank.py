"""The other-work banks (``templates/dialogue/work/*.txt``): the slots Python fills, the
sections and fragments, parsed and checked once at import; a malformed line raises
:class:`WorkBankError` naming the file and line."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

WORK_DIR = Path(__file__).resolve().parents[2] / "templates" / "dialogue" / "work"

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
