"""The other-work banks (``templates/dialogue/work/*.bank``, in the dialogue banks' format of
``generators.dialogue_bank``): the slots Python fills, the sections every bank must have, and
the fragments compiled (``{slot}`` filled by str.format; ``^ `` at the start: never after a
lead). Read and checked on first use (:func:`load`); a malformed line raises :class:`BankError`
naming the file and line."""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from generators.dialogue_bank import DIALOGUE_DIR, BankError, Section, parse_banks, read_bank_dir

WORK_DIR = DIALOGUE_DIR / "work"

# Acknowledging words the replies share with the replies to task turns (lower case).
ACK_WORDS = (
    "noted", "got it", "understood", "good to know", "thanks for the update", "thanks for letting me know",
    "thanks for filling me in", "will do", "i'll remember", "i'll keep", "keep that in mind", "keep it in mind",
)

# Calendar constants (not wording), locale-independent.
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")


WorkBankError = BankError  # a malformed bank under templates/dialogue/work (the message names the file and line)


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
TOPIC_SLOTS = frozenset({
    "user", "company", "domain", "project", "project2", "slug", "owner", "away", "colleague", "colleague2",
    "colleague3", "colleague_lc", "milestone", "unit", "verb", "meeting", "role", "leave", "leave_noun",
    "later", "later_month", "next_q", "this_month", "prev_month", "prev_month2", "q", "prev_q", "vendor",
    "city", "system", "cert", "report", "it_thing", "plan", "outsider",
})

# Slots a reaction may name although the line it answers does not: the storyline's topic (its
# people, project, the piece of work). Any other slot in a reaction (a figure, a date, a place)
# must come from the user line it answers, or the reply would answer another turn.
REACT_TOPIC = frozenset({
    "user", "company", "project", "project2", "slug", "owner", "helper", "away", "cover", "outsider", "colleague",
    "colleague2", "colleague3", "milestone", "unit", "verb", "role", "meeting", "leave_noun", "vendor", "system",
})

# Arc values kept from one mention to the next (in addition to the arc's own state).
KEEP = frozenset({"helper", "budget", "file", "cover", "email", "vendor", "vendor_slug", "final_cost", "salary", "city",
                   "leave", "leave_noun", "role", "milestone", "unit", "verb", "hours", "applicants",
                   "shortlist", "system"})

PEOPLE_KEYS = ("owner", "helper", "colleague", "colleague2", "colleague3")
# People outside the office (a supplier's staff): storylines about someone being away and new
# outside contacts name only them, never a colleague of the office, whose absences and addresses
# the office itself records (out-of-office mails, calendars, its own mail domain).
OUTSIDER_KEYS = ("away", "cover", "outsider")
# Every slot that names a person (a "cover" outside a supplier's storyline is a colleague).
PERSON_SLOTS = PEOPLE_KEYS + OUTSIDER_KEYS

# Follow-ups that would invent facts about an office file the user line named (its size, where
# its data came from, older versions, another file holding its figures): dropped once one is named.
OFFICE_FILE_SLOTS = frozenset({"office_file", "office_sheet", "office_doc"})
OFFICE_FILE_BLOCKED = frozenset({("file", "size"), ("file", "source"), ("file", "version"), ("report", "file")})

# Follow-up tags per (kind, stage); each tag has ask.<kind>.<tag> and answer.<kind>.<tag>[.<stage>].
TAGS: dict[tuple[str, str], tuple[str, ...]] = {
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
KEYS: dict[tuple[str, str], frozenset[str]] = {
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
MOOD = {"slipped": "bad", "overdue": "bad", "done": "good", "done_late": "good", "back": "good",
         "accepted": "good", "offer": "good", "planned": "plan", "out": "plan", "open": "plan", "later": "plan",
         "praise": "good"}

# Kinds whose news is worth keeping in mind for months: they may use the generic [promise] lines.
LONG_VIEW = frozenset({"report", "finished", "file", "contact", "praise", "change", "later", "meeting"})

ONE_OFF = ("meeting", "report", "praise", "change", "contact", "file", "later", "finished")
ONE_OFF_WEIGHTS = (3, 3, 1, 1, 1, 2, 2, 2)
ARC_KINDS = ("milestone", "milestone", "away", "hiring")

TRIES = 14


# --------------------------------------------------------------------------------------------
# Banks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)  # identity hashing: fragments go into per-exchange sets
class Frag:
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
    rows: list[tuple[Frag, ...]] = field(default_factory=list)


_A_SLOT = re.compile(r"\b[Aa] \{")
_FIELD = re.compile(r"^[a-z][a-z0-9_]*$")
_FORMATTER = string.Formatter()
_KEEP_CASE = frozenset({"I", "I'm", "I've", "I'd", "I'll"})


def _compile(text: str, where: str, allowed: Callable[[str], bool]) -> Frag:
    if not text:
        raise WorkBankError(f"{where}: empty fragment")
    alone = text.startswith("^ ")
    if alone:
        text = text[2:].lstrip()
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
    return Frag(text, frozenset(slots), lower, where, frozenset(slots - _ASSISTANT_FREE),
                 bool(slots & _SPECIFIC_SLOTS), alone, text.split(" ", 1)[0], bool(_A_SLOT.search(text)))


def _data_fields(sections: Mapping[str, Section]) -> set[str]:
    """The slot names the data sections give; each is given by one section and is no built-in slot."""
    owners: dict[str, str] = {}
    for sec in sections.values():
        if sec.columns is None:
            if sec.name.startswith("data."):
                raise WorkBankError(f"{sec.where}: data section '{sec.name}' must declare its fields: "
                                    f"'== {sec.name}: name'")
            continue
        if not sec.name.startswith("data."):
            raise WorkBankError(f"{sec.where}: only data.* sections declare fields")
        clash = [f for f in sec.columns if f in _PY_SLOTS or f in _DATE_SLOTS]
        if clash:
            raise WorkBankError(f"{sec.where}: field {clash[0]!r} is a built-in slot")
        for f in sec.columns:
            if f in owners:
                raise WorkBankError(f"{sec.where}: field {f!r} is also given by '{owners[f]}'")
            owners[f] = sec.name
    return set(owners)


def _compile_section(sec: Section, fields_known: set[str]) -> _Section:
    if sec.name.startswith("date."):
        allowed: Callable[[str], bool] = _DATE_SLOTS.__contains__
    else:
        def known(s: str) -> bool:
            return s in _PY_SLOTS or s in fields_known
        allowed = known
    out = _Section(sec.name, sec.columns, sec.where)
    for entry in sec.entries:
        if sec.columns is None and len(entry.fields) != 1:
            raise WorkBankError(f"{entry.where}: a fragment is one text; only data sections have fields")
        row = tuple(_compile(text, entry.where, allowed) for text in entry.fields)
        for fname, frag in zip(sec.columns or (), row):
            if fname in frag.slots:
                raise WorkBankError(f"{entry.where}: field {fname!r} refers to itself")
        out.rows.append(row)
    return out


def parse_work_banks(files: Sequence[tuple[str, str]]) -> dict[str, _Section]:
    """Parse the other-work bank's files (``(name, text)`` pairs) into compiled sections. A
    fragment may use the fields of any file's data sections."""
    sections = parse_banks(files)
    fields_known = _data_fields(sections)
    return {name: _compile_section(sec, fields_known) for name, sec in sections.items()}


def _required_sections() -> set[str]:
    req = {"lead.aside", "lead.more", "ack", "promise", "react.any", "chat.any", "tail.good", "tail.bad",
           "tail.neutral", "tail.plan", "date.abs", "data.name", "data.project", "data.filename", "data.later"}
    for span in ("on", "day"):
        for rel in ("today", "yesterday", "past_week", "last_week", "past_far", "tomorrow", "this_week",
                    "next_week", "far"):
            if span == "day" and rel in ("today",):
                continue
            req.add(f"date.{span}.{rel}")
    for (kind, stage), tags in TAGS.items():
        req.add(f"intro.{kind}.{stage}" if stage else f"intro.{kind}")
        req.add(f"chat.{kind}")
        req.add(f"react.{kind}.{stage}" if stage else f"react.{kind}")
        for tag in tags:
            req.add(f"ask.{kind}.{tag}")
            req.add(f"answer.{kind}.{tag}")
    return req


def load_work_banks(directory: Path = WORK_DIR) -> dict[str, _Section]:
    """Parse every ``*.bank`` file in ``directory`` and check that nothing is missing."""
    sections = parse_work_banks(read_bank_dir(directory, "the work banks"))
    missing = sorted(_required_sections() - sections.keys())
    if missing:
        raise WorkBankError(f"{directory}: missing section(s) {', '.join(missing)}")
    for row in sections["data.milestone"].rows:  # chosen when a storyline starts, outside any exchange
        if any(f.slots for f in row):
            raise WorkBankError(f"{row[0].where}: data.milestone fields must be plain text")
    return sections


@functools.cache
def load() -> dict[str, _Section]:
    """The other-work bank, read and checked on first use (then kept)."""
    return load_work_banks(WORK_DIR)
