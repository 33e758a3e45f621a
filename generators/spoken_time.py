"""Days and times as people say them in chat, and read back against the day they were said.

Memory values write a day as an ISO date ("2025-02-24"), a moment as "2025-06-16 12:00" and some
days as "Monday June 16". Nobody talks in stamps: :func:`say_day` and :func:`say_moment` give the
phrase a person would use on a given day ("Thursday next week", "Monday the 24th of last month",
"tomorrow at 16:00"), relative to that day when it is near. :func:`read_times` finds such phrases
in a line and resolves each against the day the line was said on, so that the gates can tell which
value a turn names, and :func:`redate` says a line's phrases again for another day (a history whose
days are moved keeps naming the same dates).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Union

When = Union[date, datetime]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")


def ordinal(n: int) -> str:
    """1 -> "1st", 12 -> "12th", 23 -> "23rd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _month_shift(day: date, said_on: date) -> int:
    return (day.year - said_on.year) * 12 + day.month - said_on.month


def say_day(day: date, said_on: date, *, near_words: bool = False) -> str:
    """``day`` as said on ``said_on``: "this Thursday", "Thursday next week", "Thursday last week",
    "Thursday the 23rd" (this month), "Thursday the 23rd of last month" / "of next month", else
    "Thursday 23 May" (with the year when it is not ``said_on``'s). ``near_words``: "today",
    "tomorrow" and "yesterday" too (only with a clock after them: alone, they are everyday words)."""
    weekday = day.strftime("%A")
    delta = (day - said_on).days
    if near_words and delta in (-1, 0, 1):
        return {-1: "yesterday", 0: "today", 1: "tomorrow"}[delta]
    monday = said_on - timedelta(days=said_on.weekday())
    week = (day - monday).days // 7
    if week == 0 and delta:
        return f"this {weekday}"
    if week == 1:
        return f"{weekday} next week"
    if week == -1:
        return f"{weekday} last week"
    months = _month_shift(day, said_on)
    if months == 0:
        return f"{weekday} the {ordinal(day.day)}"
    if months in (-1, 1):
        return f"{weekday} the {ordinal(day.day)} of {'last' if months < 0 else 'next'} month"
    year = f" {day.year}" if day.year != said_on.year else ""
    return f"{weekday} {day.day} {day.strftime('%B')}{year}"


_ISO_DAY = re.compile(r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?![\w-])")


def say_days_within(text: str) -> str:
    """``text`` with each ISO day in it written as a person writes a day outside any chat's day
    ("on 2024-05-07" -> "on Tuesday 7 May 2024"): for a clause that is said whole, wherever it is said."""
    def spoken(match: re.Match[str]) -> str:
        try:
            day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return match.group(0)  # no such day: left as written
        return f"{day.strftime('%A')} {day.day} {day.strftime('%B')} {day.year}"

    return _ISO_DAY.sub(spoken, text)


def say_moment(when: datetime, said_on: date) -> str:
    """``when`` as said on ``said_on``: :func:`say_day` and the clock ("tomorrow at 16:00")."""
    return f"{say_day(when.date(), said_on, near_words=True)} at {when.strftime('%H:%M')}"


def is_relative(phrase: str) -> bool:
    """Whether ``phrase`` needs the day it was said on to name a day (not "Thursday 23 May 2024")."""
    m = _PHRASE.search(phrase)
    return m is not None and any(m.group(g) for g in ("near", "wd1", "wd2", "wd3"))


_ISO_VALUE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?\Z")
_DAY_VALUE = re.compile(r"(?:" + "|".join(WEEKDAYS) + r") [a-z]+ \d{1,2}\Z", re.IGNORECASE)


@lru_cache(maxsize=4096)  # a task's values are looked at by every line that might say them
def value_time(value: str, said_on: date | None = None) -> When | None:
    """The day or moment a memory value writes: "2025-02-24" (a date), "2025-06-16 12:00" (a
    moment), or, with ``said_on``, "Monday June 16" (the first such day on or after it, whose
    weekday agrees); None for anything else (told apart by shape first: most values are not days)."""
    value = value.strip()
    if _ISO_VALUE.match(value):
        try:
            return (datetime.strptime(value, "%Y-%m-%d %H:%M") if " " in value
                    else datetime.strptime(value, "%Y-%m-%d").date())
        except ValueError:
            return None
    if said_on is None or not _DAY_VALUE.match(value):
        return None
    for year in range(said_on.year, said_on.year + 8):  # a 29 February may be years ahead
        try:
            day = datetime.strptime(f"{value} {year}", "%A %B %d %Y").date()
        except ValueError:
            continue
        if day >= said_on:
            return day if day.strftime("%A").lower() == value.split()[0].lower() else None
    return None


def say_value(value: str, said_on: date) -> str | None:
    """A memory value that is a day or a moment, as said on ``said_on``; None for other values."""
    when = value_time(value, said_on)
    if isinstance(when, datetime):
        return say_moment(when, said_on)
    if isinstance(when, date):
        return say_day(when, said_on)
    return None


# -- reading ---------------------------------------------------------------------------------------

_WD = "(?P<wd>" + "|".join(WEEKDAYS) + ")"
_MON = "(?P<mon>" + "|".join(MONTHS) + ")"
_DAY = (r"(?P<near>today|tomorrow|yesterday)"
        rf"|this {_WD.replace('wd', 'wd1')}"
        rf"|{_WD.replace('wd', 'wd2')} (?P<wk>next|last) week"
        rf"|{_WD.replace('wd', 'wd3')} the (?P<ord>\d{{1,2}})(?:st|nd|rd|th)(?: of (?P<mo>last|next) month)?"
        rf"|{_WD.replace('wd', 'wd4')} (?P<dom>\d{{1,2}}) {_MON}(?: (?P<yr>\d{{4}}))?"
        rf"|{_WD.replace('wd', 'wd5')} {_MON.replace('mon', 'mon5')} (?P<dom5>\d{{1,2}})(?!\d)")
# A phrase ends where a word does; a colon may follow it ("Tuesday next week: one hour"), but
# not more digits of a clock ("at 10:00:30" is not read as 10:00).
_PHRASE = re.compile(rf"(?<![\w-])(?:{_DAY})(?: at (?P<clock>\d{{1,2}}:\d\d))?(?!\w|:\d)", re.IGNORECASE)


@dataclass(frozen=True)
class SpokenTime:
    """A phrase found in a line: where it is, and the day or moment it names."""

    start: int
    end: int
    when: When


def _named_day(m: re.Match[str], said_on: date) -> date | None:
    g = {k: (v.lower() if isinstance(v, str) else v) for k, v in m.groupdict().items()}
    monday = said_on - timedelta(days=said_on.weekday())
    if g["near"]:
        return said_on + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[g["near"]])
    if g["wd1"]:
        return monday + timedelta(days=WEEKDAYS.index(g["wd1"]))
    if g["wd2"]:
        return monday + timedelta(days=WEEKDAYS.index(g["wd2"]) + (7 if g["wk"] == "next" else -7))
    weekday: str
    if g["wd3"]:
        shift = {"last": -1, "next": 1}.get(g["mo"] or "", 0)
        months = said_on.year * 12 + said_on.month - 1 + shift
        candidates = [(months // 12, months % 12 + 1, int(g["ord"]))]
        weekday = g["wd3"]
    elif g["wd4"]:
        month = MONTHS.index(g["mon"]) + 1
        years = [int(g["yr"])] if g["yr"] else [said_on.year, said_on.year + 1, said_on.year - 1]
        candidates = [(y, month, int(g["dom"])) for y in years]
        weekday = g["wd4"]
    else:
        month = MONTHS.index(g["mon5"]) + 1
        candidates = [(y, month, int(g["dom5"])) for y in (said_on.year, said_on.year + 1, said_on.year - 1)]
        weekday = g["wd5"]
    for year, month, dom in candidates:  # the year whose date falls on the weekday said
        try:
            day = date(year, month, dom)
        except ValueError:
            continue
        if WEEKDAYS[day.weekday()] == weekday:
            return day
    return None


def read_times(text: str, said_on: date) -> list[SpokenTime]:
    """Every day or moment ``text`` names, said on ``said_on``. "today", "tomorrow" and
    "yesterday" count only with a clock after them; a weekday must agree with the date it names."""
    low = text.lower()
    if "day" not in low and "tomorrow" not in low:  # every phrase has one (and no other letters match theirs)
        return []
    out = []
    for m in _PHRASE.finditer(text):
        if m.group("near") and not m.group("clock"):
            continue
        day = _named_day(m, said_on)
        if day is None:
            continue
        when: When = day
        if m.group("clock"):
            try:
                when = datetime.combine(day, time.fromisoformat(m.group("clock").zfill(5)))
            except ValueError:
                continue
        out.append(SpokenTime(m.start(), m.end(), when))
    return out


def names_value(text: str, value: str, said_on: date | None) -> bool:
    """Whether ``text`` (said on ``said_on``) names the day or moment ``value`` writes, in words."""
    if said_on is None:
        return False
    wanted = value_time(value, said_on)
    return wanted is not None and any(found.when == wanted for found in read_times(text, said_on))


def last_named(text: str, value: str, said_on: date | None) -> int:
    """Where ``text`` (lower-cased, said on ``said_on``) last names ``value``: written as it is, or,
    for a day or a moment, said in words ("monday the 7th of next month"); -1 when it does not."""
    at = text.rfind(value.lower())
    wanted = value_time(value, said_on) if said_on is not None else None
    if wanted is not None:
        assert said_on is not None  # else nothing is wanted
        for found in read_times(text, said_on):
            if found.when == wanted:
                at = max(at, found.start)
    return at


def named_moments(values: Iterable[str], said_on: date) -> set[When]:
    """The days and moments ``values`` write, read on ``said_on`` (none for most values)."""
    return {when for when in (value_time(v, said_on) for v in values) if when is not None}


def names_any(text: str, values: Iterable[str], said_on: date, wanted: set[When] | None = None) -> bool:
    """Whether ``text`` (said on ``said_on``) names in words a day or moment one of ``values``
    writes, as the memory marks read it: an unmarked line that does reads as the task's.
    ``wanted``: ``named_moments(values, said_on)``, when the caller keeps it (a writer asks of
    every line it draws on a day); with none, the text is not read."""
    wanted = named_moments(values, said_on) if wanted is None else wanted
    return bool(wanted) and any(found.when in wanted for found in read_times(text, said_on))


def _same_day_as_any(when: When, days: set[When]) -> bool:
    day = when.date() if isinstance(when, datetime) else when
    return any((d.date() if isinstance(d, datetime) else d) == day for d in days)


def redate(text: str, old: date, new: date, keep: set[When] | None = None, shift_others: bool = False) -> str:
    """``text`` said on ``old``, its relative day and time phrases said again for ``new`` (only those
    naming a day or moment in ``keep``, when given), each keeping a capital where it had one; a day
    said outright ("Monday 16 September") stays as it is. With ``shift_others``, a relative phrase
    naming a day outside ``keep`` is said again for the day as far from ``new`` as it was from ``old``
    (talk moved to another date keeps its meaning: "Friday the 15th" does not become a wrong weekday),
    unless that day is one ``keep`` names: then for the day it named."""
    pieces, last = [], 0
    for found in read_times(text, old):
        if not is_relative(text[found.start:found.end]):
            continue
        when = found.when
        if keep is not None and when not in keep:
            if not shift_others:
                continue
            shifted = when + (new - old)
            if not _same_day_as_any(shifted, keep):  # never onto a day ``keep`` names: that would name it
                when = shifted
        phrase = say_moment(when, new) if isinstance(when, datetime) else say_day(when, new)
        if text[found.start].isupper():
            phrase = phrase[:1].upper() + phrase[1:]
        pieces += [text[last:found.start], phrase]
        last = found.end
    return "".join(pieces) + text[last:]


# -- values that are no time ----------------------------------------------------------------------

HEADER_CUES = ("column_total", "question", "layout")  # values made of a sheet's column headers
TITLE_WORD_RE = re.compile(r"\b[A-Z][a-z]+\b")  # a header word as a sheet writes it ("Category"; not "Q3")


WINDOW_VALUE = re.compile(r"(\d{1,2}:\d{2})-(\d{1,2}:\d{2})\Z")  # a clock range as a value writes it


def say_window(value: str) -> str | None:
    """A clock range as people say it ("10:00-17:00" as "10:00 to 17:00"); None for other values.
    The memory marks read either form."""
    match = WINDOW_VALUE.match(value.strip())
    return f"{match.group(1)} to {match.group(2)}" if match else None


ARTICLE_CUES = ("column_total", "question")  # values that are a noun phrase: said with their article


def spoken(value: str, cue: str, article: bool = True) -> str:
    """A value as the user says it: a clock range in words (:func:`say_window`), a sheet's headers
    in a value that names columns ("the Item with the highest Quantity") turned into words ("the
    item with the highest quantity"; "Q3" and "IT" stay), and a noun phrase with its article, as
    any frame says it ("It's the salary column.", "The answer is the office move."; a bare
    "salary" or "office move" is a template's slot; ``article=False``: without it, for a sentence
    that gives its own). The memory marks match either way, case aside."""
    window = say_window(value)
    if window:
        return window
    if cue not in HEADER_CUES:
        return value
    words = TITLE_WORD_RE.sub(lambda m: m.group(0).lower(), value)
    return with_definite_article(words, cue) if article and cue in ARTICLE_CUES else words


def with_definite_article(phrase: str, cue: str) -> str:
    """``phrase`` as a noun phrase with its article: a column's name as the column ("the salary
    column"; "the total of the salary column", "the total salary", "the bonus figures" as they are)."""
    low = phrase.lower()
    if not phrase or low.startswith("the "):
        return phrase
    if cue == "column_total" and not re.search(r"\b(?:totals?|columns?|figures)\b", low):
        return f"the {phrase} column"
    return f"the {phrase}"


# a word before a value that gives it its article already ("our Salary column", "a Salary figure")
_DETERMINER = r"(?:\b((?i:the|an?|our|this|that|their|your|my|its)) )?"


def said_in(text: str, raw: str, cue: str) -> str:
    """``text`` (a sentence that says ``raw``, a value of ``cue``) with ``raw`` said as people say it
    (:func:`spoken`), where the sentence gives it a word of its own before it ("the", "our", "a")
    without the article ("the salary total was sent", "a salary figure"; never "the the salary
    total" or "a the salary column figure")."""
    said = spoken(raw, cue)
    if said == raw:  # (an empty value too)
        return text
    bare = spoken(raw, cue, article=False)
    if bare == said:
        return text.replace(raw, said)
    return re.sub(_DETERMINER + re.escape(raw), lambda m: f"{m.group(1)} {bare}" if m.group(1) else said, text)
