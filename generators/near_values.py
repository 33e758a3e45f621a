"""Values that could be mistaken for another: a figure a little off, the label before or after,
the hour before or after, another day, someone else, another address, another copy of a file,
another app. Near misses of regenerated tasks (``generators.plus_offline``) and the changes of
plan of other jobs' sentences (``generators.withheld``) are made of them."""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from functools import lru_cache

from generators.chances import DRAFT
from generators.spoken_time import ordinal
from office_env.apps import registered_apps, registry_cache
from office_env.seed_recast import OTHER_FIRST_NAMES
from office_env.synthesis.world import FIRST_NAMES

OTHER_PEOPLE = ("Priya", "Marcus", "Elena", "Tomasz", "Aisha", "Daniel", "Mei", "Oscar")  # whose old note, whose guess
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


@lru_cache(maxsize=1)
def _first_names() -> frozenset[str]:
    """The first names a person in a history has (lower case): those a world's people and a re-cast
    seed's are drawn from, those a seed may say besides, and the colleagues a near miss names. A
    capitalised word that is none of them ("Larger or smaller?") is no one to mistake for another."""
    return frozenset(n.lower() for n in (*FIRST_NAMES, *OTHER_FIRST_NAMES, *OTHER_PEOPLE))


def is_first_name(word: str) -> bool:
    """Whether ``word`` is a person's first name as a history names one (``_first_names``)."""
    return word.lower() in _first_names()


@registry_cache(maxsize=1)
def _app_swaps() -> dict[str, str]:
    """Another app for the same work: what a colleague misremembers ("the word file", not the excel
    one), from each registered app's ``near_miss``."""
    return {word: other for app in registered_apps() for word, other in app.near_miss.items()}


def _shift_number(text: str, rng: random.Random, small: bool) -> str | None:
    """``text`` with its last figure moved a little, written as it was written (``$1,200`` ->
    ``$1,150``, ``CS161`` -> ``CS162``, ``1.5$`` -> ``2.5$``); None when it holds no figure."""
    found = list(re.finditer(r"\d[\d,]*(?:\.\d+)?", text))
    if not found:
        return None
    m = found[-1]
    digits = m.group(0)
    whole, _, decimals = digits.replace(",", "").partition(".")
    number = float(f"{whole}.{decimals or 0}")
    if small:  # a label's number (CS161, HW2, midterm2): the one before or after
        step = rng.choice((1, -1)) if number >= 1 else 1
    else:
        step = rng.choice((1, 2, 3, 5, 10)) * (1 if number < 10 or rng.random() < DRAFT.near_miss_above else -1)
        if number >= 1000:
            step *= 10 ** (len(whole) - 3)
    alt = number + step
    if alt < 0:
        alt = number + abs(step)
    body = f"{alt:.{len(decimals)}f}" if decimals else str(int(alt))
    if "," in digits:
        head, dot, tail = body.partition(".")
        body = f"{int(head):,}" + dot + tail
    if len(whole) > 1 and whole.startswith("0"):  # zero-padded labels keep their width: 07 -> 08
        body = body.zfill(len(whole))
    return text[:m.start()] + body + text[m.end():]


def _shift_time(value: str) -> str | None:
    m = re.fullmatch(r"(\d{1,2})(:\d{2})?(:\d{2})?(\s?)([AaPp]\.?[Mm]\.?)?", value.strip())
    if not m:
        return None
    hour = int(m.group(1))
    if m.group(5):  # the hour after, on the same side of noon (12 pm -> 1 pm, 11 am -> 10 am)
        alt = 1 if hour == 12 else hour + 1 if hour < 11 else hour - 1
    else:
        if not m.group(2):
            return None
        alt = hour + 1 if hour < 17 else hour - 1
    width = len(m.group(1)) if m.group(1).startswith("0") else 1  # 09:00 -> 10:00, 9 am -> 10 am, 12 pm -> 1 pm
    return f"{alt:0{width}d}{m.group(2) or ''}{m.group(3) or ''}{m.group(4)}{m.group(5) or ''}"


_MONTH_DAY = r"(?:%s)\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?" % "|".join(m[:3] + "[a-z]*" for m in _MONTHS)
_A_DAY = rf"\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|{_MONTH_DAY}"
_RANGE = re.compile(rf"(?<![\w/-])({_A_DAY})\s*(?:to|until|through|till|-|\u2013)\s*({_A_DAY})(?![\w/])")


_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y")
_MONTH_DAY_RE = re.compile(r"([A-Z][a-z]+\.?) (\d{1,2})(st|nd|rd|th)?(,? (\d{4}))?")


def _in_digits(value: str) -> tuple[datetime, str] | None:
    """A day written in digits (2024-05-17, 5/17/2024, 5/17/24) and the format it is written in."""
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(value, fmt), fmt
        except ValueError:
            continue
    return None


def _month_day(value: str) -> tuple[date, re.Match[str], int] | None:
    """A day written with its month's name ("May 17", "Jan. 30th", "May 17, 2024"; 2024 when no year
    is written): the day, the match and the month's number; None for anything else or no such day."""
    m = _MONTH_DAY_RE.fullmatch(value)
    month = next((i for i, name in enumerate(_MONTHS, 1) if m and name.startswith(m.group(1).rstrip("."))), None)
    if m is None or month is None:
        return None
    try:
        return date(int(m.group(5) or 2024), month, int(m.group(2))), m, month
    except ValueError:
        return None


def _read_day(text: str) -> date | None:
    written = _in_digits(text)
    if written is not None:
        return written[0].date()
    named = _month_day(text)
    return named[0] if named else None


_CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?"
_CLOCKS = re.compile(rf"(?<![\w:./])(?:from\s+|between\s+)?{_CLOCK}\s*(?:to|until|till|and|-|\u2013)\s*"
                     rf"{_CLOCK}(?![\w:/])", re.IGNORECASE)


def _minutes(hour: str, minute: str | None, half: str | None) -> int | None:
    """A clock as minutes of the day (12-hour when ``half`` says a.m. or p.m.); None for a bare
    figure, which says no clock."""
    if minute is None and half is None:
        return None
    h = int(hour) % 12 + (12 if half and half.lower().startswith("p") else 0) if half else int(hour)
    return h * 60 + int(minute or 0)


def _short_spans(text: str) -> int:
    """How many spans of days or clock times ``text`` says that end before they start, or where
    they start ("from 6/26/2024 to 6/23/2024", "15:00 to 15:00", "between 6 pm and 5 pm")."""
    count = 0
    for m in _RANGE.finditer(text):
        start, end = _read_day(m.group(1)), _read_day(m.group(2))
        count += start is not None and end is not None and end <= start
    for m in _CLOCKS.finditer(text):
        begins, ends = _minutes(*m.group(1, 2, 3)), _minutes(*m.group(4, 5, 6))
        count += begins is not None and ends is not None and ends <= begins
    return count


def runs_backwards(text: str) -> bool:
    """Whether ``text`` says a span of days or of clock times that ends before it starts or where it
    starts (``_short_spans``)."""
    return _short_spans(text) > 0


def spoils_span(before: str, after: str) -> bool:
    """Whether a near value put into ``before`` (giving ``after``) made a span end before it starts,
    or where it starts: a sentence that said such a span already ("9:00 to 5:00") may keep it."""
    return _short_spans(after) > _short_spans(before)


def _shift_date(value: str, rng: random.Random) -> str | None:
    delta = timedelta(days=rng.choice((-2, -1, 1, 2, 7)))
    written = _in_digits(value)
    if written is not None:
        moment, fmt = written
        moved = moment + delta
        if fmt != "%Y-%m-%d" and not value.startswith("0"):  # written as the value is: 5/17/2024, not 05/17/2024
            return f"{moved.month}/{moved.day}/{moved.strftime(fmt[-2:])}"
        return moved.strftime(fmt)
    if value.capitalize() in _MONTHS:  # a month alone: the one before or after (March -> April)
        other = _MONTHS[(_MONTHS.index(value.capitalize()) + rng.choice((1, -1))) % 12]
        return other if value[:1].isupper() else other.lower()
    if value.capitalize() in _WEEKDAYS:
        other = _WEEKDAYS[(_WEEKDAYS.index(value.capitalize()) + rng.choice((1, 2, -1))) % 7]
        return other if value[:1].isupper() else other.lower()
    named = _month_day(value)
    if named is None:
        return None
    # May 17, 2024 -> May 19, 2024; May 31 -> June 2 (the month as it was written: May, Jan.)
    day, m, month = named
    near = day + delta
    written_month = m.group(1).rstrip(".")
    name = m.group(1) if near.month == month else _MONTHS[near.month - 1] if written_month in _MONTHS else (
        _MONTHS[near.month - 1][:3] + ("." if m.group(1).endswith(".") else ""))
    if near.year != day.year and m.group(5):
        return None
    day_text = ordinal(near.day) if m.group(3) else str(near.day)  # "May 17th" stays an ordinal
    return f"{name} {day_text}{m.group(4) or ''}"


def _other_copy(value: str, rng: random.Random) -> str:
    """Another copy of a file, told apart by a number alone (``midterm1.xlsx`` -> ``midterm2.xlsx``,
    ``report.docx`` -> ``report2.docx``): its name's words are the file's own, so a name said
    without its ending ("report2, in the format from the brief") says no more than which copy it is."""
    stem, ext = value.rsplit(".", 1)
    m = re.search(r"\d+$", stem)
    if m and rng.random() < 0.5:
        number = int(m.group())
        moved = number + (rng.choice((1, -1)) if number > 1 else 1)
        return f"{stem[:m.start()]}{str(moved).zfill(len(m.group()))}.{ext}"
    return f"{stem}{rng.choice(('_2', '_3') if m else ('2', '_2', '3', '_3'))}.{ext}"


def near_value(value: str, kind: str, rng: random.Random) -> str | None:
    """A value that could be mistaken for ``value`` (a figure a little off, the label before or
    after, the hour before or after, another day, another copy of a file, someone else, another
    app), or ``None`` for kinds that have none (quoted text, a whole clause) and for a "person" that
    is no one's first name."""
    if kind == "number":
        small = bool(re.search(r"[A-Za-z]", value.replace("percent", "")))  # CS161, HW2
        return _shift_number(value, rng, small)
    if kind == "time":
        return _shift_time(value)
    if kind == "date":
        return _shift_date(value, rng)
    if kind == "person" and value[:1].isupper() and " " not in value and is_first_name(value):
        # one first name only: capitalised words in a row are as often a title or a header ("Concert
        # Announcement"), and a capitalised word alone as often a sentence's first ("Larger or smaller?")
        return rng.choice([p for p in OTHER_PEOPLE if p != value])
    if kind == "email" and "@" in value:
        local, domain = value.split("@", 1)
        other = rng.choice([p for p in OTHER_PEOPLE if p.lower() != local.lower()]).lower()
        return f"{other}@{domain}"
    if kind == "file" and "." in value:
        return _other_copy(value, rng)
    if kind == "app" and value.strip():
        words = value.split()
        swap = _app_swaps().get(words[-1].lower())
        if swap:
            swap = swap.upper() if words[-1][:1].isupper() and swap == "pdf" else (  # PDF, never Pdf
                swap.capitalize() if words[-1][:1].isupper() else swap)
            return swap
    return None
