"""Values said in no single turn: a day, a time, a number, a length, a person or a file that follows
from two turns, often on different days.

One turn names a thing and its own value (the anchor: "The supplier visit is Thursday next
week."), another says the piece's value against it (the relation: "two days after the supplier
visit"). A reader who picks values off the page finds the anchor's value, never the piece's: it
must put the two turns together. A person is named by role in one turn ("whoever covers
payroll") and by first name in another ("Elliot covers payroll this week"); the office gives
the full name. A file is named by a reference in one turn ("the file from the handover") and
by itself in another: its name without its folder ("the file from the handover is
scores.xlsx"; the office gives the folder), or as people call it where the task names no
folder ("... is the inventory sheet"; the office gives the name). A file a request names without
a folder (most often one it makes: "save the result as admission.pdf") is said by its name in the
request and its kind in another turn ("save the result as admission in the format from the
brief" and "the format from the brief is .pdf"): no office can give a new file's name, so the two
turns give it whole.

:func:`draw_derivation` picks a rule that fits a value (the anchor's value must be a plain one
of its kind: a weekday, a working hour, a positive number); :func:`follows` is the gates'
check that the parts give the value.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from datetime import date, datetime, timedelta
from decimal import Decimal

from generators.model import Derivation
from generators.specifics import is_file_kind
from generators.spoken_time import WINDOW_VALUE, value_time
from generators.thread_bank import SENTENCE_CUES, threads

# The role a value plays decides whether it can be derived and how.
DAY_CUES = frozenset({"follow_up_day", "session_day", "meeting_day", "move_day"})
TIME_CUES = frozenset({"start_time"})
WINDOW_CUES = frozenset({"time_window", "move_window"})
NUMBER_CUES = frozenset({"threshold", "new_figure"})
DURATION_CUES = frozenset({"duration"})
PERSON_CUES = frozenset({"recipient", "sender", "attendee", "requester"})
FILE_CUES = frozenset({"source_file", "document", "compare_file", "previous_notes"})

_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_US_DAY = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})\Z")  # a day as OfficeBench's instructions write it: 5/17/2024
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})\Z")
_NUMBER = re.compile(r"[1-9]\d{0,5}(?:\.\d{1,2})?\Z")
_MINUTES = re.compile(r"([1-9]\d{0,2}) minutes\Z")
_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z'-]+)+\Z")
# a file, in a folder or not ("data/scores.xlsx"); an anchor says it as people call it ("the scores sheet")
_FILE = re.compile(r"(?:[\w.-]+/)*([\w-]+)\.([A-Za-z0-9]{2,5})\Z")
_FILE_NOUNS = {"xlsx": "sheet", "xls": "sheet", "csv": "sheet", "docx": "document", "doc": "document", "pdf": "PDF"}

# rule -> the kind of value it applies to; the amount is in days, minutes or units
RULES = {"days_after": "day", "days_before": "day", "minutes_after": "time", "minutes_before": "time",
         "more": "number", "less": "number", "twice": "number", "half": "number",
         "longer": "duration", "shorter": "duration", "twice_as_long": "duration", "half_as_long": "duration",
         "covers": "person", "window": "window", "refers": "file", "file_type": "file_type"}
ANCHOR_KINDS = ("day", "time", "number", "duration", "person")  # what a free anchor's own value may be
NAMED_KINDS = (*ANCHOR_KINDS, "file", "file_type")  # every kind an anchor is named for
# the endings a file_type anchor says for nothing (beside one a request's file is said against)
FILE_TYPES = (".pdf", ".docx", ".xlsx", ".txt", ".csv", ".ics", ".eml")


def kind_of(cue: str, value: str = "") -> str:
    """The kind of derivation a piece of ``cue`` may take ("" when none). A value inside its piece's
    own sentence (a request) is derived only where a relation reads in its place: a day, a clock,
    a file in a folder, or a file without one (its name and its kind said apart)."""
    if cue in SENTENCE_CUES:
        return ("day" if _ISO_DAY.match(value) or _US_DAY.match(value) else "time" if _clock(value) is not None
                else "file" if "/" in value and file_base(value)
                else "file_type" if "/" not in value and file_parts(value) else "")
    for kind, cues in (("day", DAY_CUES), ("time", TIME_CUES), ("window", WINDOW_CUES), ("number", NUMBER_CUES),
                       ("duration", DURATION_CUES), ("person", PERSON_CUES), ("file", FILE_CUES)):
        if cue in cues:
            return kind
    return ""


def anchor_kind(kind: str) -> str:
    """The kind of an anchor's own value: a window is said from a moment (its start) to a clock."""
    return "time" if kind == "window" else kind


def _day(value: str, said_on: date) -> date | None:
    us = _US_DAY.match(value.strip())
    if us:  # month/day/year, as written
        try:
            return date(int(us.group(3)), int(us.group(1)), int(us.group(2)))
        except ValueError:
            return None
    when = value_time(value, said_on)
    return when if isinstance(when, date) and not isinstance(when, datetime) else None


def write_day(day: date, like: str) -> str:
    """``day`` written as ``like`` writes a day (an ISO date, "5/17/2024", or "Wednesday March 26")."""
    if _US_DAY.match(like):
        return f"{day.month:0{2 if like.startswith('0') else 1}d}/{day.day:0{2 if '/0' in like else 1}d}/{day.year}"
    return day.isoformat() if _ISO_DAY.match(like) else f"{day:%A} {day:%B} {day.day}"


def written_day(value: str) -> bool:
    """Whether a day is written as digits (5/17/2024): its anchor says it as written, not in words."""
    return _US_DAY.match(value.strip()) is not None


def _clock(value: str) -> int | None:
    m = _CLOCK.match(value)
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        return None
    return int(m.group(1)) * 60 + int(m.group(2))


def _write_clock(minutes: int, like: str) -> str:
    hour, minute = divmod(minutes, 60)
    return f"{hour:02d}:{minute:02d}" if like[:1] == "0" else f"{hour}:{minute:02d}"


def _signed(rule: str, amount: int) -> int:
    """How far a value lies from its anchor's, in days or minutes: after is later, before earlier."""
    return -amount if rule.endswith("_before") else amount


def _number_steps(value: int) -> tuple[int, ...]:
    return (5, 10, 15, 20, 25) if value < 200 else (50, 100, 200, 250) if value < 5000 else (500, 1000)


def _candidates(kind: str, value: str, said_on: date, people: Collection[str]) -> list[tuple[str, int, str]]:
    """Every ``(rule, amount, base)`` that gives ``value``."""
    out: list[tuple[str, int, str]] = []
    if kind == "day":
        day = _day(value, said_on)
        if day is None:
            return out
        for rule, amount in (("days_after", 1), ("days_after", 2), ("days_before", 1)):
            base = day - timedelta(_signed(rule, amount))
            if base.weekday() < 5:
                out.append((rule, amount, write_day(base, value)))
    elif kind == "time":
        clock = _clock(value)
        if clock is None:
            return out
        for rule, amount in (("minutes_after", 30), ("minutes_after", 60), ("minutes_before", 30),
                             ("minutes_before", 60)):
            minute = clock - _signed(rule, amount)
            if 8 * 60 <= minute <= 18 * 60:
                out.append((rule, amount, _write_clock(minute, value)))
    elif kind == "window":  # from the anchor's moment to the end said as a clock
        m = WINDOW_VALUE.match(value)
        start, end = (_clock(m.group(1)), _clock(m.group(2))) if m else (None, None)
        if m and start is not None and end is not None and start < end:
            out.append(("window", end, m.group(1)))
    elif kind == "number":
        if not _NUMBER.match(value):
            return out
        n = Decimal(value)
        for step in _number_steps(int(n)):
            if n - step > 0 and n - step != step:
                out.append(("more", step, str(n - step)))
            out.append(("less", step, str(n + step)))
        if "." not in value:  # a whole number: halves and doubles stay whole
            if int(n) % 2 == 0 and n >= 4:
                out.append(("twice", 0, str(int(n) // 2)))
            out.append(("half", 0, str(2 * int(n))))
    elif kind == "duration":
        m = _MINUTES.match(value)
        if not m:
            return out
        minutes = int(m.group(1))
        for step in (15, 30):
            if minutes - step >= 15:
                out.append(("longer", step, f"{minutes - step} minutes"))
            if minutes + step <= 180:
                out.append(("shorter", step, f"{minutes + step} minutes"))
        if minutes % 2 == 0 and minutes // 2 >= 15:
            out.append(("twice_as_long", 0, f"{minutes // 2} minutes"))
        if 2 * minutes <= 180:
            out.append(("half_as_long", 0, f"{2 * minutes} minutes"))
    elif kind == "person":
        first = value.split()[0] if _NAME.match(value) else ""
        if first and value in people and sum(p.split()[0] == first for p in people if p.split()) == 1:
            out.append(("covers", 0, first))
    elif kind == "file" and (said := file_base(value)):
        out.append(("refers", 0, said))
    elif kind == "file_type" and (parts := file_parts(value)):
        out.append(("file_type", 0, parts[1]))
    return out


def file_parts(value: str) -> tuple[str, str] | None:
    """A file name without a folder as its name and its ending ("admission.pdf" -> ("admission",
    ".pdf")): the words a request says it in and what another turn says of its kind; None for
    anything else: a name with no letter or an ending that is no file kind is a figure, a clock or a
    web address ("12.50", "10.30", "example.com"), not a file."""
    m = _FILE.match(value)
    if m is None or "/" in value or not any(c.isalpha() for c in m.group(1)):
        return None
    return (m.group(1), f".{m.group(2)}") if is_file_kind(m.group(2).lower()) else None


def names_a_copy(name: str) -> bool:
    """Whether a file's name without its ending is no plain word: it holds "_" or a digit
    ("report2", "notes_2"), so said alone it still says which copy of a file it is."""
    return re.search(r"[_\d]", name) is not None


def file_base(value: str) -> str:
    """What an anchor says of a file: its name without the folder ("data/scores.xlsx" ->
    "scores.xlsx"), or for a name without a folder, the file as people call it (``spoken_file``)."""
    if "/" in value:
        m = _FILE.match(value)
        return value.rsplit("/", 1)[1] if m else ""
    return spoken_file(value)


def spoken_file(value: str) -> str:
    """A file as people call it: its name's words and what it is ("data/onboarding_guide.pdf" ->
    "the onboarding guide PDF"); "" for a name that is not one word run or a kind of file without
    a spoken noun."""
    m = _FILE.match(value)
    noun = _FILE_NOUNS.get(m.group(2).lower()) if m else None
    words = " ".join(m.group(1).replace("-", "_").split("_")).strip() if m else ""
    return f"the {words} {noun}" if noun and words and not words.isdigit() else ""


def day_of(value: str, said_on: date) -> date | None:
    """The day a value writes (a day, or a moment's day), read as said on ``said_on``; else None."""
    when = value_time(value, said_on)
    return when.date() if isinstance(when, datetime) else when


def draw_derivation(cue: str, value: str, said_on: date, anchors: list[str], rng: random.Random, *,
                    avoid: Collection[str] = (), people: Collection[str] = (),
                    avoid_days: Collection[date] = ()) -> Derivation | None:
    """A derivation of ``value`` (a piece of ``cue``), its anchor one of ``anchors`` (names not yet
    used in the history), or None when the value cannot be derived. ``avoid``: values (lower-cased)
    the anchor's value must not be (another detail of the history); ``people``: the office's full
    names (a person is derived only when their first name is one nobody else there has);
    ``avoid_days``: days the anchor's own day must not be (a day another detail names)."""
    kind = kind_of(cue, value)
    if not kind or not anchors:
        return None
    options = [c for c in _candidates(kind, value, said_on, people) if c[2].lower() not in avoid and c[2] != value
               and not (kind == "day" and _day(c[2], said_on - timedelta(10)) in avoid_days)]
    if not options:
        return None
    rule, amount, base = rng.choice(options)
    return Derivation(rule=rule, amount=amount, anchor=rng.choice(anchors), base=base)


def anchor_names(kind: str) -> list[str]:
    """What anchors of ``kind`` may be called (``anchor_name.<kind>`` in the thread bank)."""
    return [line.render({}) for line in threads().lines.get(("anchor_name", kind), ())]


PRESUPPOSED = frozenset({"refers"})  # relations that say their anchor was told before ("the file ... I mentioned")

def relation_phrase(derivation: Derivation, rng: random.Random, value: str = "") -> str:
    """The words that say ``value`` against its anchor ("two days after the supplier visit"), drawn
    from the thread bank's ``relation.<rule>`` (``relation.<rule>_<amount>`` for days and clocks);
    a file_type relation names the file's name (``{name}``)."""
    key = f"{derivation.rule}_{derivation.amount}" if RULES[derivation.rule] in ("day", "time") else derivation.rule
    lines = threads().lines[("relation", key)]
    amount = _write_clock(derivation.amount, derivation.base) if derivation.rule == "window" else derivation.amount
    parts = file_parts(value)
    return rng.choice(lines).render({"anchor": derivation.anchor, "amount": amount, "name": parts[0] if parts else ""})


def base_day(derivation: Derivation, value: str, said_on: date) -> date | None:
    """The anchor's own day, for a day value read as said on ``said_on``."""
    day = _day(value, said_on)
    if day is None or RULES.get(derivation.rule) != "day":
        return None
    return day - timedelta(_signed(derivation.rule, derivation.amount))


def follows(derivation: Derivation, value: str, said_on: date | None = None, relation: str = "") -> bool:
    """Whether ``derivation``'s rule, applied to its base, gives ``value`` (a person: the value is a
    full name whose first name is the base; a file_type: the ``relation`` names the file's name as a
    word of its own and the base is its ending)."""
    rule, amount, base = derivation.rule, derivation.amount, derivation.base
    kind = RULES.get(rule)
    if kind == "day":
        want = _day(value, said_on or date(2000, 1, 1))
        # a day written without its year is read from just before the value's own day
        have = _day(base, want - timedelta(10)) if want is not None else None
        if have is None or want is None:
            return False
        return want - have == timedelta(_signed(rule, amount))
    if kind == "time":
        have_t, want_t = _clock(base), _clock(value)
        return have_t is not None and want_t is not None and want_t - have_t == _signed(rule, amount)
    if kind == "number":
        if not (_NUMBER.match(base) and _NUMBER.match(value)):
            return False
        nb, nv = Decimal(base), Decimal(value)
        return {"more": nb + amount, "less": nb - amount, "twice": 2 * nb, "half": nb / 2}[rule] == nv
    if kind == "duration":
        mb, mv = _MINUTES.match(base), _MINUTES.match(value)
        if not (mb and mv):
            return False
        b, v = int(mb.group(1)), int(mv.group(1))
        return {"longer": b + amount, "shorter": b - amount, "twice_as_long": 2 * b, "half_as_long": b / 2}[rule] == v
    if kind == "person":
        return bool(_NAME.match(value)) and value.split()[0] == base
    if kind == "file":
        return bool(base) and file_base(value) == base
    if kind == "file_type":
        parts = file_parts(value)
        return parts is not None and parts[1] == base and re.search(
            rf"(?<![\w.]){re.escape(parts[0].lower())}(?![\w.])", relation.lower()) is not None
    if kind == "window":
        m = WINDOW_VALUE.match(value)
        return m is not None and m.group(1) == base and _clock(m.group(2)) == amount
    return False
