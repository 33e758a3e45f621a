"""Keyword matching as OfficeBench defines it, made a little more exact.

Case is ignored and runs of white space count as one space (text wrapped in a PDF still
matches). A keyword that is a number matches a number of equal value in the text, with
thousands separators removed (``12500`` matches ``12,500``, ``12500.0`` and the continental
``12.500,00``, not ``125000``). A
keyword that is a clock time matches the same time however it is written (``13:00`` matches
``13:00``, ``1 pm`` and ``1:00 PM``; ``09:00`` matches ``9:00`` and ``9 am``, not ``19:00`` or ``9:00 pm``;
``12:00`` matches ``at 12.00``, the British clock, where a time is said; ``11:00`` matches ``eleven in
the morning``, ``14:15`` ``quarter past two``, which says neither half of the day).
A keyword that is an ISO date matches the same day written with the month's name
(``2024-12-18`` matches ``18 December 2024``, ``December 18, 2024`` and ``18 Dec 2024``), with
the month's name and no year (``Wednesday 18 December``, ``Dec 18th``: the day a person means
when the year goes without saying; a weekday written beside it must be that date's), or in
numbers, with or without the year (``18/12/2024``, ``18.12.24``, ``18/12``), read by dateutil
in the office's order (``day_first``: ``04/05/2025`` is the 4th of May where days come first,
the 5th of April where months do, either when the order is not known; ``12/18/2024`` is the 18th
of December everywhere; ``office_env.evaluation.written_dates``). "noon" and
"midday" are 12:00, "midnight" 00:00. A keyword clock time with a one-digit hour and no leading
zero (``4:00``, as OfficeBench's seeds write times) matches that time in the morning or the
afternoon (``4:00 pm``); ``04:00`` and ``16:00`` say which one they mean. When a check's keywords
hold one clock time, it is when something happens: a time the text writes only as the end of a
range is not it (``14:00`` is not in ``from 13:00 to 14:00`` or ``1-2 pm``), while the second time
of a move is a new start (``moved from 13:00 to 14:30`` holds ``14:30``).

A keyword of words that holds a digit (a code: ``Q2``, ``EC-523``) is found whole, never inside a
longer code (``Q23``, ``EC-5231``). A number keyword is a figure of its own: the day and month of a
date and the hour and minutes of a clock time are not numbers in the text (``4`` is not in
``2024-07-04`` nor in ``4:30 pm``; a date's year still is), except where a check's keywords write a
date in pieces: beside a month's name (``["July", "15", "2024"]``), a number is also found as the
day of a date in that month (``July 15, 2024``, ``15 July``). A whole number from 2 to 99 is also
found written in words, as a person writes a count (``5`` matches ``five``, ``21`` matches
``twenty-one``); ``one`` is not read as 1, being as often a pronoun ("the one from Redleaf"). An
amount of a hundred or more is found written in words too (``24000`` matches
``twenty-four thousand``, ``202.15`` ``two hundred and two point one five``). A keyword that is an
amount with its currency (``225 EUR``) matches that amount in that currency however it is written
(``225.00 EUR``, ``€225``, ``225 euros``, ``two hundred and twenty-five EUR``; a dollar sign is any
dollar's), never a longer number (``1225 EUR``). A dotted clock is also a time where it ends a date
(``2025-04-03 13.00``) or where two make a range (``10.00 to 15.00``, ``13.00-13.30``).
"""

from __future__ import annotations

import re
from datetime import date as _date_cls
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, NamedTuple, cast

from text_to_num import alpha2digit

from office_env.evaluation import written_dates
from office_env.formats.built import remembered_text
from office_env.money import CURRENCY_CODES, DOLLARS

# The patterns that read a text start with what they must match first (a digit, a comma, a month's
# name) and look behind it after that: ``\d(?<![\d.]\d)`` is ``(?<![\d.])\d``, but the regex engine
# then skips to the next digit at once instead of trying the pattern at every character, three to
# four times faster on a long chat (tests/office_env/test_keywords_fast.py holds them to the plain forms).
_DIGIT_RE = re.compile(r"\d")
_THOUSANDS_RE = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")  # (?<=\d),(?=\d{3}(?!\d))
_KEYWORD_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?$")
_TEXT_NUMBER_RE = re.compile(r"\d(?<![\d.]\d)\d*(?:\.\d+)?(?![\d])")  # (?<![\d.])\d+(?:\.\d+)?(?![\d])
_KEYWORD_CLOCK_RE = re.compile(r"^(\d{1,2}):(\d{2})$")
# (?<![\d:])(\d{1,2}):(\d{2})(?![\d])(?!\s?[ap]\.?m\b)
_TEXT_CLOCK_RE = re.compile(r"(\d(?<![\d:]\d)\d?):(\d{2})(?![\d])(?!\s?[ap]\.?m\b)")
# (?<![\d:])(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\b; the text is lower-cased first
_TEXT_12H_RE = re.compile(r"(\d(?<![\d:]\d)\d?)(?::(\d{2}))?\s?([ap])\.?m\b")
_KEYWORD_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# a month's name, whole or cut short ("march", "mar.", "sept"), never the start of a word ("marketing")
_MONTH_NAME = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
_MONTH_END = (r"(?:(?<=jan)uary|(?<=feb)ruary|(?<=mar)ch|(?<=apr)il|(?<=jun)e|(?<=jul)y|(?<=aug)ust"
              r"|(?<=sep)t(?:ember)?|(?<=oct)ober|(?<=nov)ember|(?<=dec)ember)?\.?(?![a-z])")
_MONTH = _MONTH_NAME + _MONTH_END
_WORD_MONTH = _MONTH_NAME + r"(?<!\w...)" + _MONTH_END  # \b{_MONTH}: no word character before its three letters
# (?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH},?\s(\d{4})(?![\d.,]\d)(?!\d)
_TEXT_DAY_MONTH_RE = re.compile(rf"(\d(?<!\d\d)\d?)(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH},?\s(\d{{4}})(?![\d.,]\d)(?!\d)")
# \b{_MONTH}\s(\d{1,2})(?:st|nd|rd|th)?,?\s(\d{4})(?![\d.,]\d)(?!\d)
_TEXT_MONTH_DAY_RE = re.compile(rf"{_WORD_MONTH}\s(\d{{1,2}})(?:st|nd|rd|th)?,?\s(\d{{4}})(?![\d.,]\d)(?!\d)")
_TEXT_ISO_DATE_RE = re.compile(r"(\d\d{3})(?<!\d\d{4})-(\d{2})-(\d{2})(?!\d)")  # (?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)
_WEEKDAY = (r"(mon|tue|wed|thu|fri|sat|sun)(?:day|(?<=tue)s(?:day)?|(?<=wed)nesday|(?<=thu)r(?:s(?:day)?)?"
            r"|(?<=sat)urday)?\.?")
# a day and a month's name with no year after them; a weekday before them is read too
_TEXT_DAY_MONTH_NY_RE = re.compile(rf"(?:\b{_WEEKDAY},?\s(?:the\s)?)?(?<![\d.,/])(\d{{1,2}})(?:st|nd|rd|th)?"
                                   rf"\s(?:of\s)?{_MONTH}"
                                   r"(?!\.?,?\s\d)")
# what every match of the pattern above holds (a day's last digit up to a month's first letters), found
# in a single quick pass; where it is missing, so are the pattern's matches
_DAY_BEFORE_MONTH_RE = re.compile(rf"\d(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH_NAME}")
_TEXT_MONTH_DAY_NY_RE = re.compile(rf"(?:\b{_WEEKDAY},?\s)?\b{_MONTH}\s(?:the\s)?(\d{{1,2}})"
                                   r"(?:(?:st|nd|rd|th)(?![a-z])|(?![a-z\d.,:/]))(?!,?\s\d)")
# the two patterns above without the weekday in front, and the weekday that may stand right before
# what they match: a pass that starts at the day or the month skips a text at the speed of its first
# letters, where the weekday in front made it try a weekday at every word (see _yearless_out)
_DAY_MONTH_NY_CORE_RE = re.compile(rf"(\d(?<![\d.,/]\d)\d?)(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH}(?!\.?,?\s\d)")
_WEEKDAY_BEFORE_DAY_RE = re.compile(rf"\b{_WEEKDAY},?\s(?:the\s)?\Z")
_MONTH_DAY_NY_CORE_RE = re.compile(rf"{_WORD_MONTH}\s(?:the\s)?(\d{{1,2}})"
                                   r"(?:(?:st|nd|rd|th)(?![a-z])|(?![a-z\d.,:/]))(?!,?\s\d)")
_WEEKDAY_BEFORE_MONTH_RE = re.compile(rf"\b{_WEEKDAY},?\s\Z")
_LONGEST_WEEKDAY_BEFORE = len("wednesday., the ") + 1
# a year-less date hides its day from the figures unless its month is also an everyday word and
# nothing else (a weekday, an ordinal, "of") says it is a date: "12 may be overdue" and "in March
# 12 invoices" keep their counts
_SURE_YEARLESS_RE = re.compile(rf"\b{_WEEKDAY}|\d(?:st|nd|rd|th)\b|\bof\s|\b(?!may\b|mar\b|march\b){_MONTH}")
# a date in numbers: day first or month first, with a four- or two-digit year
# (?<![\d./-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?![\d./-]\d|\d)
_TEXT_NUMERIC_DATE_RE = re.compile(r"(\d(?<![\d./-]\d)\d?)([/.-])(\d{1,2})\2(\d{4}|\d{2})(?![\d./-]\d|\d)")
_TEXT_NOON_RE = re.compile(r"\b(?:12\s)?(noon|midday|midnight)\b")


def _says_noon(text: str) -> bool:
    """Whether ``_TEXT_NOON_RE`` matches in ``text``: only where one of its words is (a quick look first)."""
    return ("noon" in text or "mid" in text) and _TEXT_NOON_RE.search(text) is not None


# a number written the continental way, dots between thousands and a decimal comma ("1.200,50"):
# with both marks in that order it can be read no other way
# (?<![\d.,])(\d{1,3}(?:\.\d{3})+),(\d{1,2})(?![\d.,]\d|\d)
_CONTINENTAL_RE = re.compile(r"(\d(?<![\d.,]\d)\d{0,2}(?:\.\d{3})+),(\d{1,2})(?![\d.,]\d|\d)")


def without_thousands(text: str) -> str:
    """``text`` with thousands separators taken out of its numbers (``12,500.00`` -> ``12500.00``,
    ``1.200,50`` -> ``1200.50``)."""
    patterns = _figure_patterns(_reads_as_ascii(text))
    text = patterns.continental.sub(lambda m: f"{m.group(1).replace('.', '')}.{m.group(2)}", text)
    return patterns.thousands.sub("", text)


def normalize(text: str) -> str:
    return " ".join(text.split()).lower()  # str.split's white space is the regex's \s, seven times faster


class Haystack:
    """A text prepared once for many keyword look-ups; ``day_first``: the office's order of a
    date's day and month in numbers (None: unknown, both readings count)."""

    def __init__(self, text: str, day_first: bool | None = None, *, normalized: bool = False) -> None:
        self.text = text if normalized else normalize(text)  # normalized: ``normalize`` already gave it
        self.day_first = day_first
        self._amounts: frozenset[tuple[float, str]] | None = None
        self._spans: list[tuple[int, int, tuple[int, int]]] | None = None
        self._clocks: set[tuple[int, int]] | None = None
        self._starts: set[tuple[int, int]] | None = None
        self._dates: set[tuple[int, int, int]] | None = None
        self._yearless: set[tuple[int, int, int]] | None = None

    def _clock_spans(self) -> list[tuple[int, int, tuple[int, int]]]:
        if self._spans is None:
            self._spans = _clock_spans(self.text)
        return self._spans

    def clocks(self) -> set[tuple[int, int]]:
        if self._clocks is None:
            self._clocks = {clock for _, _, clock in self._clock_spans()}
        return self._clocks

    def starts(self) -> set[tuple[int, int]]:
        """The clock times the text writes other than only as a range's end (see ``_range_ends``)."""
        if self._starts is None:
            self._starts = self.clocks() - _range_ends(self.text, self._clock_spans())
        return self._starts

    def dates(self) -> set[tuple[int, int, int]]:
        if self._dates is None:
            self._dates = _dates_in(self.text, self.day_first)
        return self._dates

    def yearless(self) -> set[tuple[int, int, int]]:
        """(month, day, weekday or -1) of each date written without its year."""
        if self._yearless is None:
            self._yearless = _yearless_in(self.text, self.day_first)
        return self._yearless

    def has_date(self, day: tuple[int, int, int]) -> bool:
        """Whether the text names ``day`` (year, month, day), with its year or without one."""
        if day in self.dates():
            return True
        if day[2] != _NO_DAY and self.text.isascii() and str(day[2]) not in self.text:
            # (see ``_NO_DAY``) spares reading the text's year-less dates with dateutil; a text with
            # other digits (Arabic, full-width) may write the day in them, and is read
            return False
        return _names_yearless(day, self.yearless())

    def days_of(self, month: int) -> set[int]:
        """The days of the dates of ``month`` the text names (a date written in pieces)."""
        return {d for _, m, d in self.dates() if m == month} | {d for m, d, _ in self.yearless() if m == month}

    def numbers(self) -> frozenset[float]:
        """The numbers number keywords find in the text (its parts are kept by the text)."""
        return _numbers_in(self.text)

    def has(self, keyword: Any) -> bool:
        return self.holds(*_kind(keyword))

    def holds(self, kind: str, value: Any) -> bool:
        """``has`` of a keyword read already (its ``_kind``)."""
        if kind == "text":
            if value not in self.text:
                return False
            # a code with a digit is found whole: "Q2" is not in "Q23", "EC-523" not in "EC-5231"
            return not _DIGIT_RE.search(value) or _code_re(value).search(self.text) is not None
        if kind == "clock":
            return not self.clocks().isdisjoint(value)
        if kind == "date":
            return self.has_date(value)
        if kind == "amount":
            return value in self.amounts()
        return _has_number(self.text, (value,), value >= _WORDED_AMOUNTS_FROM)

    def amounts(self) -> frozenset[tuple[float, str]]:
        if self._amounts is None:
            self._amounts = _amounts_in(self.text)
        return self._amounts


@lru_cache(maxsize=512)
def _code_re(value: str) -> re.Pattern:
    return re.compile(rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])")


MAX_KEPT_KEYWORD_CHARS = 256  # a longer keyword is read again at each look-up, not kept


def _kind(keyword: Any) -> tuple[str, Any]:
    """How a keyword is looked up: ("number", value), ("amount", (value, currency code)), ("clock",
    (h, m)), ("date", (y, m, d)) or ("text", its normalized text). It depends on the keyword's text
    alone, so the latest keywords' are kept: a check reads each keyword three times per text it
    searches, and a search of the office once per file."""
    return _kind_of(str(keyword))


@remembered_text(2048, MAX_KEPT_KEYWORD_CHARS)
def _kind_of(text: str) -> tuple[str, Any]:
    """``_kind`` of a keyword written ``text`` (its value is immutable: it is kept)."""
    needle, number = _needle(text)
    if number is not None:
        return "number", number
    amount = _KEYWORD_AMOUNT_RE.match(needle.replace(",", ""))
    if amount:
        figure, code = (amount.group(1), amount.group(2)) if amount.group(1) else (amount.group(4), amount.group(3))
        return "amount", (float(figure), code)
    clock = _clock(needle)
    if clock is not None:
        return "clock", clock
    day = _date(needle)
    return ("date", day) if day is not None else ("text", needle)


def _needle(keyword: Any) -> tuple[str, float | None]:
    """A keyword as looked up: its normalized text, and its value when it is a number."""
    needle = normalize(str(keyword))
    number_text = needle.replace(",", "")
    return needle, float(number_text) if _KEYWORD_NUMBER_RE.match(number_text) else None


def _clock(needle: str) -> frozenset[tuple[int, int]] | None:
    """The (hour, minute) a keyword that is a clock time may mean: ``09:00`` one; ``9:00`` (a
    one-digit hour without its zero) 9:00 or 21:00. None for a keyword that is no clock time."""
    match = _KEYWORD_CLOCK_RE.match(needle)
    if not match:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    ambiguous = len(match.group(1)) == 1 and 1 <= hour <= 9
    return frozenset({(hour, minute), (hour + 12, minute)} if ambiguous else {(hour, minute)})


def _clock_spans(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """(start, end, (hour, minute)) of every clock time in ``text`` (lower-cased), in order: 24-hour,
    with am/pm, with a dot where a time is said, in words, or noon, midday and midnight. A pattern
    runs only on a text holding what each of its matches holds (``_CLOCK_NEEDS``): most hold few."""
    spans = [(m.start(), m.end(), (int(m.group(1)), int(m.group(2)))) for m in _TEXT_CLOCK_RE.finditer(text)] \
        if ":" in text else []
    half_day = any(mark in text for mark in _CLOCK_NEEDS["half_day"])
    for m in _TEXT_12H_RE.finditer(text) if half_day else ():
        h, minute, half = m.group(1), m.group(2), m.group(3)
        if 1 <= int(h) <= 12:
            spans.append((m.start(), m.end(), (int(h) % 12 + (12 if half == "p" else 0), int(minute or 0))))
    if any(word in text for word in _CLOCK_NEEDS["noon"]):
        spans += [(m.start(), m.end(), (0 if m.group(1) == "midnight" else 12, 0))
                  for m in _TEXT_NOON_RE.finditer(text)]
    if "." in text:
        for m in _DOTTED_CLOCK_RE.finditer(text):  # "at 12.00", "from 14.30": the British clock
            spans.append((m.start(1), m.end(), (int(m.group(1)), int(m.group(2)))))
        for m in _DATED_DOTTED_RE.finditer(text):  # "2025-04-03 13.00": a time where it ends a date
            spans.append((m.start(1), m.end(), (int(m.group(1)), int(m.group(2)))))
        for m in _DOTTED_RANGE_RE.finditer(text):  # "10.00 to 15.00", "13.00-13.30": two make a range
            spans += [(m.start(1), m.end(2), (int(m.group(1)), int(m.group(2)))),
                      (m.start(3), m.end(4), (int(m.group(3)), int(m.group(4))))]
    if any(word in text for word in _CLOCK_NEEDS["spoken"]):  # else each time in words says no clock
        for m in _SPOKEN_CLOCK_RE.finditer(text):
            spans += [(m.start(), m.end(), clock) for clock in _spoken_clock(m)]
    for m in _BARE_START_RE.finditer(text) if half_day else ():  # "1-2 pm": the first hour takes the second's half
        first, second = int(m.group(1)), int(m.group(3))
        if 1 <= first <= 12 and 1 <= second <= 12:
            pm = (m.group(5) == "p") != (first > second and first != 12)  # "11-1 pm" starts at 11 am
            spans.append((m.start(1), m.end(2) if m.group(2) else m.end(1),
                          (first % 12 + (12 if pm else 0), int(m.group(2)[1:]) if m.group(2) else 0)))
    return sorted(set(spans))


def _spoken_clock(m: re.Match) -> list[tuple[int, int]]:
    """The clock time(s) a time said in words means: both halves of the day when it says neither."""
    minutes_word, direction, hour_word, oclock, part = m.groups()
    if not (minutes_word or oclock or part):
        return []
    hour, minute = _HOUR_WORDS.index(hour_word) + 1, 0
    if minutes_word:
        minute = _MINUTE_WORDS[minutes_word]
        if direction == "to":
            hour, minute = (hour - 2) % 12 + 1, 60 - minute
    if part == "in the morning":
        return [(hour % 12, minute)]
    if part:
        return [(hour % 12 + 12, minute)] if not (part == "at night" and hour == 12) else [(0, minute)]
    return [(hour % 12, minute), (hour % 12 + 12, minute)]


def _range_ends(text: str, spans: list[tuple[int, int, tuple[int, int]]]) -> set[tuple[int, int]]:
    """The clock times ``text`` (lower-cased; ``spans``: its ``_clock_spans``) writes only as the end
    of a range ("from 13:00 to 14:00", "1-2 pm", "13:00 until 14:30"): 14:00 there is when something
    ends, not when it starts."""
    ends, elsewhere = set(), set()
    for i, (start, _, clock) in enumerate(spans):
        before = spans[i - 1] if i else None
        joint = text[before[1]:start] if before is not None else ""
        lead = text[max(0, before[0] - 60):before[0]] if before is not None else ""
        if before is not None and not _MOVE_RE.search(lead.rsplit(".", 1)[-1]) and (
                _RANGE_JOIN_RE.fullmatch(joint) or (joint.strip() == "and" and lead.rstrip().endswith("between"))):
            ends.add(clock)
        else:
            elsewhere.add(clock)
    return ends - elsewhere


# "at 12.00", "from 14.30 to 15.30": a clock with a dot, only where a time is said (an amount is "12.00" too)
_DOTTED_CLOCK_RE = re.compile(r"\b(?:at|from|to|until|till|by|before|after|starts?|starting|begins?|ends?|around|"
                              r"between|and)\s+([01]?\d|2[0-3])\.([0-5]\d)(?![\d.,]\d)")
_NOT_MONEY = r"(?![\d.,]\d)(?!\s?(?:" + "|".join(c.lower() for c in CURRENCY_CODES) + r"|pounds?|euros?|dollars?|%)\b)"
# (the two below and _BARE_START_RE start at a digit and look behind it, as the patterns at the top do)
# (?<![\d.])(?:\d{4}-\d{2}-\d{2}|(?:19|20)\d{2}),?\s+(?:at\s+)?([01]?\d|2[0-3])\.([0-5]\d){_NOT_MONEY}
_DATED_DOTTED_RE = re.compile(r"\d(?<![\d.]\d)(?:\d{3}-\d{2}-\d{2}|(?<=1)9\d{2}|(?<=2)0\d{2}),?\s+(?:at\s+)?"
                              r"([01]?\d|2[0-3])\.([0-5]\d)" + _NOT_MONEY)
# (?<![\d.,])([01]?\d|2[0-3])\.([0-5]\d)\s?(?:-|–|to|until|till)\s?([01]?\d|2[0-3])\.([0-5]\d){_NOT_MONEY}: the hour's
# readings ("1", "12", "23") are the same, each told apart from the others by the character after it
_DOTTED_RANGE_RE = re.compile(r"(\d(?<![\d.,]\d)(?:(?<=[01])\d|(?<=2)[0-3])?)\.([0-5]\d)\s?(?:-|–|to|until|till)\s?"
                              r"([01]?\d|2[0-3])\.([0-5]\d)" + _NOT_MONEY)
_HOUR_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_MINUTE_WORDS = {"five": 5, "ten": 10, "quarter": 15, "a quarter": 15, "twenty": 20, "twenty-five": 25, "half": 30}
# "eleven in the morning", "quarter past two in the afternoon", "half past ten", "three o'clock": a time
# said in words (an hour word alone, "two claims", is none)
_SPOKEN_CLOCK_RE = re.compile(
    r"\b(?:(a quarter|quarter|half|twenty-five|twenty|ten|five)\s+(past|to)\s+)?"
    rf"({'|'.join(_HOUR_WORDS)})(\s+o'clock)?"
    r"(?:\s+(in the morning|in the afternoon|in the evening|at night))?\b")
# a bare hour that starts a range its end says the half of the day of ("1-2 pm", "10:30 to 11 am")
# (?<![\d:])(\d{1,2})(:\d{2})?(?!\s?[ap]\.?m\b)\s*(?:-|–|to)\s*(\d{1,2})(:\d{2})?\s?([ap])\.?m\b
_BARE_START_RE = re.compile(r"(\d(?<![\d:]\d)\d?)(:\d{2})?(?!\s?[ap]\.?m\b)\s*(?:-|–|to)\s*"
                            r"(\d{1,2})(:\d{2})?\s?([ap])\.?m\b")
_RANGE_JOIN_RE = re.compile(r"\.?\s*(?:-|–|—|to|until|till)\s*")  # the dot ends "p.m." before it
# "moved from 13:00 to 14:30": a change of time, whose second clock is the new start
_MOVE_RE = re.compile(r"\b(?:mov|shift|push|pull|reschedul|chang|brought|bring|switch)\w*")
# what a text holds wherever a pattern of _clock_spans finds a clock time: an "am" or "pm" (_TEXT_12H_RE,
# _BARE_START_RE), a word for noon (_TEXT_NOON_RE), and for a time in words (_SPOKEN_CLOCK_RE) the words
# that give it a clock at all (the minutes' "past" or "to", "o'clock", or the part of the day)
_CLOCK_NEEDS = {"half_day": ("am", "pm", "a.m", "p.m"), "noon": ("noon", "mid"),
                "spoken": ("past", "to", "o'clock", "in the ", "at night")}


def _date(needle: str) -> tuple[int, int, int] | None:
    """(year, month, day) of a keyword that is an ISO date; None otherwise."""
    match = _KEYWORD_DATE_RE.match(needle)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def _dates_in(text: str, day_first: bool | None = None) -> set[tuple[int, int, int]]:
    """Every date in ``text`` (lower-cased) with its year: ISO, with the month's name before or
    after the day, or in numbers in the office's order (``written_dates.read``)."""
    iso, *others = _dated_passes(text)
    found = {(int(y), int(m), int(d)) for y, m, d in iso.findall(text)} if "-" in text else set()  # one reading
    for pattern in others:
        for match in pattern.finditer(text):
            found |= written_dates.read(match.group(0), day_first)
    return found


def _dated_passes(text: str) -> list[re.Pattern[str]]:
    """The ISO date pattern, then those of the other dates with a year that can match in ``text``
    (a day before a month's name, a month's name, a "/", "." or "-"), in their order, compiled for
    ``text`` (``_figure_patterns``)."""
    patterns = _figure_patterns(_reads_as_ascii(text))
    months = _MONTH_LETTERS_RE.search(text) is not None
    passes = [patterns.iso_date]
    if months and patterns.day_before_month.search(text):
        passes.append(patterns.day_month)
    if months:
        passes.append(patterns.month_day)
    if "/" in text or "." in text or "-" in text:
        passes.append(patterns.numeric_date)
    return passes


def _yearless_passes(text: str) -> list[tuple[re.Pattern[str], re.Pattern[str]]]:
    """(core, weekday before it) of the year-less date patterns with a month's name that can match in
    ``text`` (``_yearless_found``), in their order, compiled for ``text``."""
    if _MONTH_LETTERS_RE.search(text) is None:
        return []
    patterns = _figure_patterns(_reads_as_ascii(text))
    passes = [(patterns.month_day_core, patterns.weekday_before_month)]
    if patterns.day_before_month.search(text):  # else no day stands before a month: that pattern cannot match
        passes.insert(0, (patterns.day_month_core, patterns.weekday_before_day))
    return passes


def _yearless_in(text: str, day_first: bool | None = None) -> set[tuple[int, int, int]]:
    """(month, day, weekday or -1) of each date ``text`` (lower-cased) writes without its year, with
    the month's name ("wednesday 18 december", "dec 18th"; a weekday beside it is kept) or in
    numbers in the office's order ("18/12")."""
    found = set()
    for core, before in _yearless_passes(text):
        for _, date_start, end, weekday in _yearless_found(core, before, text):
            found |= {(m, d, _WEEKDAYS.index(weekday) if weekday else -1)
                      for _, m, d in written_dates.read(text[date_start:end], day_first)}
    found |= {(m, d, -1) for m, d in written_dates.numeric_yearless(text, day_first)}
    return found


# a year-less date's day is one of its figures ("18" of "dec 18th", "5" of "05/12"), or the day dateutil
# gives a date that writes none it can read as one ("dec 45" is December 2045): a text without the
# figures of a day names it without a year only if it is that day
_NO_DAY = written_dates.NO_YEAR.day


def _names_yearless(day: tuple[int, int, int], yearless: set[tuple[int, int, int]]) -> bool:
    """Whether a date written without its year is ``day``: the same month and day, and the same
    weekday where one is written."""
    try:
        weekday = _date_cls(*day).weekday()
    except ValueError:
        return False
    return any(m == day[1] and d == day[2] and w in (-1, weekday) for m, d, w in yearless)


_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


DateSpan = tuple[int, int, frozenset[tuple[int, int, int]]]
MAX_KEPT_SPANS_CHARS = 64 * 1024  # a longer text's dates are read at each call, not kept


def date_spans(text: str, day_first: bool | None = None) -> list[DateSpan]:
    """(start, end, days) of each date ``text`` (lower-cased) writes, in order; ``days`` holds every
    (year, month, day) it may mean, with year 0 where it writes none. The latest texts' are kept:
    a check reads an output's dates for each value it states, by kind, and each gate scores it again."""
    return list(_kept_date_spans(text, day_first))


@remembered_text(256, MAX_KEPT_SPANS_CHARS)
def _kept_date_spans(text: str, day_first: bool | None) -> tuple[DateSpan, ...]:
    return tuple(_date_spans(text, day_first))


def _date_spans(text: str, day_first: bool | None) -> list[DateSpan]:
    """``date_spans`` read afresh."""
    iso, *others = _dated_passes(text)
    spans = [(m.start(), m.end(), frozenset({(int(m.group(1)), int(m.group(2)), int(m.group(3)))}))
             for m in (iso.finditer(text) if "-" in text else ())]
    for pattern in others:
        spans += [(m.start(), m.end(), written_dates.read(m.group(0), day_first)) for m in pattern.finditer(text)]
    taken = [(a, b) for a, b, _ in spans]
    yearless = [match for core, before in _yearless_passes(text) for match in _yearless_found(core, before, text)]
    if "/" in text:  # what every year-less date in numbers holds
        yearless += [(m.start(), m.start(), m.end(), None) for m in written_dates.YEARLESS_NUMERIC_RE.finditer(text)]
    for start, date_start, end, _ in yearless:
        if any(a < end and start < b for a, b in taken):
            continue  # the same date's day and month, its year written after them
        days = frozenset((0, mo, d) for _, mo, d in written_dates.read(text[date_start:end], day_first))
        if days:
            spans.append((start, end, days))
    return sorted(s for s in spans if s[2])


def clock_spans(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """(start, end, (hour, minute)) of every clock time ``text`` (lower-cased) writes, in order."""
    return _clock_spans(text)


MAX_SEEN_TEXTS = 4096  # the answers one Keywords keeps (then it starts again empty)


class Keywords:
    """Keywords prepared once for look-ups in many texts (the same matching as ``Haystack.has``)."""

    def __init__(self, keywords: Iterable[Any]) -> None:
        self._seen: dict[str, bool] = {}  # text -> any_in's answer: a writer asks again of lines it drew before
        self.texts: list[str] = []
        self.numbers: set[float] = set()
        self.clocks: set[tuple[int, int]] = set()
        self.dates: set[tuple[int, int, int]] = set()
        self.amounts: set[tuple[float, str]] = set()
        for keyword in keywords:
            kind, value = _kind(keyword)
            if kind == "text":
                self.texts.append(value)
            elif kind == "clock":
                self.clocks |= value
            elif kind == "amount":
                self.amounts.add(value)
            else:
                sets: dict[str, set[Any]] = {"number": self.numbers, "date": self.dates}
                sets[kind].add(value)
        # whether a count or an amount in words can be one of the numbers (worked out once: asked of every text)
        self._spelled = bool(self.numbers) and (not self.numbers.isdisjoint(_SPELLED_VALUES)
                                                or max(self.numbers) >= _WORDED_AMOUNTS_FROM)
        self._number_digits = _digits_of(self.numbers)
        self._worded = bool(self.numbers) and max(self.numbers) >= _WORDED_AMOUNTS_FROM

    def any_in(self, text: str) -> bool:
        """Whether ``text`` holds any of the keywords (its numbers are read only when it has a digit);
        the answers for the latest texts asked about are kept (the keywords never change)."""
        seen = self._seen
        found = seen.get(text)
        if found is None:
            if len(seen) >= MAX_SEEN_TEXTS:
                seen.clear()
            found = seen[text] = self._any_in(text)
        return found

    def _any_in(self, text: str) -> bool:
        normal: str | None = None
        if self.texts:
            normal = normalize(text)
            for needle in self.texts:  # a plain loop: asked of every line a writer draws
                if needle in normal:
                    return True
        if self.amounts:
            normal = normal if normal is not None else normalize(text)
            if not self.amounts.isdisjoint(_amounts_in(normal)):
                return True
        if not (self.numbers or self.clocks or self.dates):
            return False
        # a text without a digit holds none of them unless it spells a number or says noon: the
        # quickest question first, the others only for a text it leaves open
        if not (_DIGIT_RE.search(text) or (self._spelled and _spells_number(text))
                or (self.clocks and _says_noon(text.lower()))):
            return False
        normal = normal if normal is not None else normalize(text)
        numbers = bool(self.numbers) and self._may_hold_number(normal)
        if not (numbers or self.clocks or self.dates):
            return False
        hay = Haystack(normal, normalized=True)
        if self.clocks and not self.clocks.isdisjoint(hay.clocks()):
            return True
        if self.dates and any(hay.has_date(day) for day in self.dates):
            return True
        return numbers and _has_number(hay.text, self.numbers, self._worded)

    def _may_hold_number(self, normal: str) -> bool:
        """False where the normalized text surely holds none of the numbers (``_numbers_in`` would
        find none of them), True where it may or is not known: an ASCII text that may spell no
        number in words holds them only as figures (``_may_write``). A text without figures that
        spells a number holds the counts it spells and the amounts its words give in figures
        (``words_as_digits``); the others are read in full."""
        if self._number_digits is None or not normal.isascii():  # no number's digits are known
            return True
        if self._spelled and _NUMBER_WORD_PIECE_RE.search(normal):
            if _DIGIT_RE.search(normal):
                return True
            if not self.numbers.isdisjoint(_SPELLED_VALUES.intersection(map(float, spelled_numbers(normal)))):
                return True
            # the amounts in words: text2num writes one of a hundred or more only from an amount's word
            return (self._worded and _AMOUNT_WORD_RE.search(normal) is not None
                    and _may_write(words_as_digits(normal), self._number_digits))
        return _may_write(normal, self._number_digits)


# what a text without digits holds wherever text2num (``words_as_digits``) writes a figure of a hundred or more in it:
# a scale word, a decimal point, or a zero ("thirty, zero seventy" is "30,070", 30070 without its separator); in
# words alone, the figures it writes are of one or two digits
_AMOUNT_WORD_RE = re.compile(r"hundred|thousand|illion|point|zero|nought|\bo\b")


def _may_write(text: str, digits: tuple[str, ...]) -> bool:
    """Whether a figure of ``text`` may be a number whose ``digits`` (``_digits_of``) are given: only
    where its digits (without the ``,`` and ``.`` that ``without_thousands`` takes out or a figure
    holds) write them in a row; a figure of more than 15 digits, or digits outside ASCII, may be any."""
    if not text.isascii():
        return True
    runs = text.replace(",", "").replace(".", "")
    return any(d in runs for d in digits) or _LONG_DIGIT_RUN_RE.search(runs) is not None


_LONG_DIGIT_RUN_RE = re.compile(r"\d{16}", re.ASCII)  # a figure this long may be a number it does not write


def _digits_of(numbers: set[float]) -> tuple[str, ...] | None:
    """The digits every figure equal to one of ``numbers`` writes, in a row (``28.0``: "28", ``6.43``:
    "643", ``0.5``: "05"): the shortest decimal that reads as the number (``repr``), without its
    point and the zeros that end it. A figure of at most 15 significant digits that reads as a
    number is that decimal with zeros around it (two such decimals never read as one float). None
    where a number has no such decimal (a sign, an exponent, no finite value)."""
    out = []
    for number in numbers:
        written = repr(number)
        if _PLAIN_DECIMAL_RE.fullmatch(written) is None:
            return None
        out.append(written.rstrip("0").rstrip(".").replace(".", ""))
    return tuple(out)


_PLAIN_DECIMAL_RE = re.compile(r"[0-9]+\.[0-9]+")


# A minus sign counts only where it cannot be a hyphen (2024-05-31 reads as 2024, 5, 31).
_SIGNED_NUMBER_RE = re.compile(r"(?:(?<![\w.-])-)?(?<![\d.])\d+(?:\.\d+)?(?!\d)")


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text``, in order, thousands separators removed."""
    return [float(n) for n in _SIGNED_NUMBER_RE.findall(without_thousands(text))]


_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
# a look at the first letter before the rest (the same flags): a text's other letters are passed at once
_SPELLED_RE = re.compile(rf"(?=[{''.join(sorted({w[0] for w in [*_TENS, *_UNITS]}))}])(?<![\w-])"
                         rf"(?:({'|'.join(_TENS)})(?:[- ]({'|'.join(_UNITS[1:10])}))?|({'|'.join(_UNITS)}))"
                         r"(?![\w-])", re.IGNORECASE)
# a piece of every number word above (each holds one: "thirt" of "thirteen" and "thirty"), looked for in a
# lower-cased ASCII text: a plain pattern, several times quicker than the case-blind one
_NUMBER_WORD_PIECE_RE = re.compile(r"zero|one|t(?:wo|hree|hirt|en|welve|went)|f(?:our|ort|ive|ift)|s(?:ix|even)"
                                   r"|eigh|nine|eleven")


def _spells_number(text: str) -> bool:
    """Whether ``_SPELLED_RE`` finds a number word in ``text``. Most texts hold none: an ASCII text
    without a piece of one (``_NUMBER_WORD_PIECE_RE``) is passed without the case-blind pattern; any
    other text is read by it (its case-blind letters take "ſeven" for "seven")."""
    if text.isascii() and _NUMBER_WORD_PIECE_RE.search(text.lower()) is None:
        return False
    return _SPELLED_RE.search(text) is not None


_SPELLED_VALUES = frozenset(float(n) for n in range(2, 100))  # what a keyword finds in words ("one" is a pronoun too)
_WORDED_AMOUNTS_FROM = 100  # an amount in words from here up ("twenty-four thousand"); below, the counts above


def _numbers_in(text: str) -> frozenset[float]:
    """The numbers of a normalized text as number keywords find them: figures of their own (a date
    stands for its year alone, a clock time for none), counts from 2 to 99 written in words, and
    amounts of a hundred or more written in words."""
    return _figures_and_counts(text)[0] | _worded_amounts(text)


def _has_number(text: str, numbers: Iterable[float], worded: bool = True) -> bool:
    """Whether ``_numbers_in(text)`` holds one of ``numbers``, each part read only where the ones
    before hold none of them: the figures, then the counts in words (only where one of ``numbers``
    is a count, from 2 to 99), then the amounts in words, the slowest to read (text2num and every
    figure pass again; ``worded``: one of them is a hundred or more, what such an amount always is)."""
    figures, plain = _figures_and_plain(text)
    if not figures.isdisjoint(numbers):
        return True
    if plain is None:  # the text spells no number
        return False
    if not _SPELLED_VALUES.isdisjoint(numbers) and not _counts(text).isdisjoint(numbers):
        return True
    return worded and not _worded_amounts(text).isdisjoint(numbers)


MAX_KEPT_HAYSTACK_CHARS = 64 * 1024  # a longer text is read afresh each time, never kept


def _figures_and_counts(text: str) -> tuple[frozenset[float], str | None]:
    """The figures of their own of a normalized text and the counts from 2 to 99 it writes in words;
    and, where it spells a number, the text with its thousands separators, dates and clock times
    taken out, whose words ``_worded_amounts`` reads (None: it writes no amount in words)."""
    figures, plain = _figures_and_plain(text)
    return (figures, None) if plain is None else (figures | _counts(text), plain)


@remembered_text(512, MAX_KEPT_HAYSTACK_CHARS)  # one office's files are searched by check after check
def _figures_and_plain(text: str) -> tuple[frozenset[float], str | None]:
    """The figures of their own of a normalized text, and where it spells a number, the text with
    its thousands separators, dates and clock times taken out (None: it spells none), whose words
    ``_counts`` and ``_worded_amounts`` read."""
    plain = _figures_only(without_thousands(text))
    found = frozenset(map(float, set(_figure_patterns(_reads_as_ascii(plain)).number.findall(plain))))  # each once
    return found, (plain if _spells_number(plain) else None)


@remembered_text(512, MAX_KEPT_HAYSTACK_CHARS)
def _counts(text: str) -> frozenset[float]:
    """The counts from 2 to 99 a normalized text writes in words ("five", "twenty-one"): read apart
    from its figures, as most numbers looked for (an amount, a year) are no count."""
    plain = _figures_and_plain(text)[1]
    if plain is None:
        return frozenset()
    return frozenset(float(n) for n in spelled_numbers(plain)) & _SPELLED_VALUES


@remembered_text(512, MAX_KEPT_HAYSTACK_CHARS)
def _worded_amounts(text: str) -> frozenset[float]:
    """The amounts of a hundred or more a normalized text writes in words ("twenty-four thousand",
    "two hundred and two point one five"); below a hundred only the counts stand ("first" is no 1,
    "one" is a pronoun too). The words are read in what ``_figures_and_plain`` took out already."""
    plain = _figures_and_plain(text)[1]
    if plain is None:
        return frozenset()
    worded = _figures_only(without_thousands(words_as_digits(plain)))
    return frozenset(v for v in map(float, _figure_patterns(_reads_as_ascii(worded)).number.findall(worded))
                     if v >= _WORDED_AMOUNTS_FROM)


_CODES = "|".join(c.lower() for c in CURRENCY_CODES)
_KEYWORD_AMOUNT_RE = re.compile(rf"^(?:(\d+(?:\.\d+)?)\s?({_CODES})|({_CODES})\s?(\d+(?:\.\d+)?))$")
# a currency said by a sign or a word, as its code ("dollar": any of the dollars)
_CURRENCY_SAID_RE = re.compile(r"£|€|\$|\b(?:pounds?|euros?|dollars?)\b")
_CURRENCY_SAID = {"£": "gbp", "€": "eur", "$": "dollar", "pound": "gbp", "pounds": "gbp", "euro": "eur",
                  "euros": "eur", "dollar": "dollar", "dollars": "dollar"}
_TEXT_AMOUNT_RE = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\s*({_CODES}|dollar)\b"
                             rf"|\b({_CODES}|dollar)\s*(\d+(?:\.\d+)?)(?![\d.]\d|\w)")


@lru_cache(maxsize=512)
def _amounts_in(text: str) -> frozenset[tuple[float, str]]:
    """(value, currency code) of each amount a normalized text writes beside its currency, in
    figures or in words, with its code, sign or name."""
    if _spells_number(text):
        text = words_as_digits(text)
    plain = _CURRENCY_SAID_RE.sub(lambda m: f" {_CURRENCY_SAID[m.group(0)]} ", without_thousands(text))
    found: set[tuple[float, str]] = set()
    for m in _TEXT_AMOUNT_RE.finditer(plain):
        figure, code = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        codes = [c.lower() for c in DOLLARS] if code == "dollar" else [code]
        found |= {(float(figure), c) for c in codes}
    return frozenset(found)


_MONTH_LETTERS_RE = re.compile(_MONTH_NAME)  # what every match of a month pattern holds
_ANY_CLOCK_RE = re.compile(r"\d(?<![\d:]\d)\d?:\d{2}(?::\d{2})?(?![\d])")  # (?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d])


def _compiled_for_ascii(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` compiled with ``re.ASCII``: the regex engine tests a character of a class (``\\d``,
    ``\\w``, ``\\s``) faster, and finds what ``pattern`` finds in a text that ``_reads_as_ascii``."""
    return re.compile(pattern.pattern, (pattern.flags & ~re.UNICODE) | re.ASCII)


def _reads_as_ascii(text: str) -> bool:
    """Whether a pattern compiled with ``re.ASCII`` finds in ``text`` what it finds as written: every
    character is ASCII, where ``\\d``, ``\\w``, ``\\b`` and case-blind letters mean the same either
    way, and none is one of the four separators (``\\x1c``-``\\x1f``) that only Unicode's ``\\s`` holds."""
    return text.isascii() and not ("\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text)


class _Figures(NamedTuple):
    """The patterns that take a text's figures out (``without_thousands``, ``_figures_only``) and
    read them, compiled as written and for ASCII text (``_figure_patterns``)."""

    continental: re.Pattern[str]
    thousands: re.Pattern[str]
    iso_date: re.Pattern[str]
    day_before_month: re.Pattern[str]
    day_month: re.Pattern[str]
    month_day: re.Pattern[str]
    numeric_date: re.Pattern[str]
    day_month_core: re.Pattern[str]
    weekday_before_day: re.Pattern[str]
    month_day_core: re.Pattern[str]
    weekday_before_month: re.Pattern[str]
    any_clock: re.Pattern[str]
    twelve_hour: re.Pattern[str]
    number: re.Pattern[str]


_AS_WRITTEN = _Figures(_CONTINENTAL_RE, _THOUSANDS_RE, _TEXT_ISO_DATE_RE, _DAY_BEFORE_MONTH_RE, _TEXT_DAY_MONTH_RE,
                       _TEXT_MONTH_DAY_RE, _TEXT_NUMERIC_DATE_RE, _DAY_MONTH_NY_CORE_RE, _WEEKDAY_BEFORE_DAY_RE,
                       _MONTH_DAY_NY_CORE_RE, _WEEKDAY_BEFORE_MONTH_RE, _ANY_CLOCK_RE, _TEXT_12H_RE, _TEXT_NUMBER_RE)


@lru_cache(maxsize=2)  # compiled on first use: a process that reads no figures is spared compiling them
def _figure_patterns(ascii_text: bool) -> _Figures:
    """The figure patterns for a text that ``_reads_as_ascii`` (``ascii_text``) or any other."""
    return _Figures(*map(_compiled_for_ascii, _AS_WRITTEN)) if ascii_text else _AS_WRITTEN


def _figures_only(plain: str) -> str:
    """A lower-cased text without thousands separators, each date replaced by its year and each
    clock time taken out: what is left of its numbers are figures of their own. A pattern runs only
    on a text holding what each of its matches holds (a "-" or "/", a month's letters, a ":", an
    "am" or "pm"); a pass puts only digits and spaces where it takes a date out, so it gives no later
    pattern anything new to find (and an ASCII text stays one: it is read by the ASCII patterns)."""
    patterns = _figure_patterns(_reads_as_ascii(plain))
    year_of = cast("Callable[[int], Callable[[re.Match[str]], str]]", lambda g: lambda m: f" {m.group(g)} ")
    if "-" in plain:
        plain = patterns.iso_date.sub(year_of(1), plain)
    months = _MONTH_LETTERS_RE.search(plain) is not None
    if months:
        if patterns.day_before_month.search(plain):  # what every day-month date holds
            plain = patterns.day_month.sub(year_of(3), plain)
        plain = patterns.month_day.sub(year_of(3), plain)
    if "/" in plain or "." in plain or "-" in plain:
        plain = patterns.numeric_date.sub(year_of(4), plain)
    if months:
        if patterns.day_before_month.search(plain):  # else the pattern finds nothing: a long text is spared the pass
            plain = _yearless_out(patterns.day_month_core, patterns.weekday_before_day, plain)
        plain = _yearless_out(patterns.month_day_core, patterns.weekday_before_month, plain)
    if ":" in plain:
        plain = patterns.any_clock.sub(" ", plain)
    if "am" in plain or "pm" in plain or "a.m" in plain or "p.m" in plain:
        plain = patterns.twelve_hour.sub(" ", plain)
    return plain


def _yearless_found(core: re.Pattern[str], weekday: re.Pattern[str],
                    text: str) -> Iterator[tuple[int, int, int, str | None]]:
    """(start, start of the date, end, the weekday's first three letters or None) of each match of
    ``core`` with an optional ``weekday`` in front, in order: the matches of ``_TEXT_DAY_MONTH_NY_RE``
    (``_DAY_MONTH_NY_CORE_RE``, ``_WEEKDAY_BEFORE_DAY_RE``) or ``_TEXT_MONTH_DAY_NY_RE``
    (``_MONTH_DAY_NY_CORE_RE``, ``_WEEKDAY_BEFORE_MONTH_RE``). Each match of ``core`` takes the
    weekday that ends where it starts, after the match before it, as the whole pattern's would: a
    pass that starts at the day or the month skips a text at the speed of its first letters, where
    the weekday in front made the whole pattern try a weekday at every word."""
    last = 0
    for m in core.finditer(text):
        before = weekday.search(text, max(last, m.start() - _LONGEST_WEEKDAY_BEFORE), m.start())
        yield (m.start() if before is None else before.start()), m.start(), m.end(), \
            (None if before is None else before.group(1))
        last = m.end()


def _yearless_out(core: re.Pattern[str], weekday: re.Pattern[str], text: str) -> str:
    """``text`` with each year-less date that is surely one (``_SURE_YEARLESS_RE``) made a space
    (the ``sub`` of the whole pattern, see :func:`_yearless_found`)."""
    out: list[str] = []
    last = 0
    for start, _, end, _ in _yearless_found(core, weekday, text):
        found = text[start:end]
        out += (text[last:start], " " if _SURE_YEARLESS_RE.search(found) else found)
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def figures_in(text: str) -> list[float]:
    """The figures of ``text`` in order, signed: ``numbers_in`` without the parts of dates and clock
    times (``4`` is not in ``2024-07-04`` nor in ``4:30 pm``; a date's year is)."""
    return [float(n) for n in _SIGNED_NUMBER_RE.findall(_figures_only(without_thousands(normalize(text))))]


def words_as_digits(text: str) -> str:
    """``text`` with the numbers it writes in words turned into digits by text2num ("twelve hundred
    and fifty pounds" -> "1250 pounds", "twenty-one" -> "21"); "one" alone stays a word."""
    try:
        return alpha2digit(text, "en")
    except (ValueError, TypeError):  # a text the reader cannot take is left as it is
        return text


def spelled_numbers(text: str) -> list[int]:
    """Whole numbers below a hundred written in words ("three", "twenty-one"), in order: how a
    person often writes a count."""
    out = []
    for tens, unit, small in _SPELLED_RE.findall(text):
        out.append(_TENS[_ascii_word(tens)] + (_UNITS.index(_ascii_word(unit)) if unit else 0) if tens
                   else _UNITS.index(_ascii_word(small)))
    return out


# the letters outside ASCII that a case-blind pattern takes for an ASCII one ("ſeven" is matched as
# "seven"), and that ``lower`` does not turn into it
_CASE_BLIND_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _ascii_word(word: str) -> str:
    """A number word ``_SPELLED_RE`` matched, as its lower-case ASCII spelling."""
    return word.translate(_CASE_BLIND_ASCII).lower()


_MONTH_RE = re.compile(_MONTH)  # compiled once, not looked up in re's cache for each keyword


def _month_keyword(keyword: Any) -> int | None:
    """The month (1-12) a keyword names by itself ("July", "Jul"), or None."""
    match = _MONTH_RE.fullmatch(normalize(str(keyword)))
    return _MONTHS.index(match.group(1)) + 1 if match else None


class _Together(NamedTuple):
    """What a check's keywords say together: the months named by themselves (``_month_keyword``),
    and whether they hold one clock time."""

    months: frozenset[int]
    one_clock: bool


MAX_KEPT_TOGETHER_CHARS = 4 * MAX_KEPT_KEYWORD_CHARS  # longer keywords are read again at each look-up


def _together(keywords: list[Any]) -> _Together:
    """``_Together`` of ``keywords``; it depends on their texts alone, so the latest lists' are kept:
    a check asks it of every message, event and file it searches."""
    texts = tuple(map(str, keywords))
    if sum(map(len, texts)) > MAX_KEPT_TOGETHER_CHARS:
        return _read_together(texts)
    return _kept_together(texts)


def _read_together(texts: tuple[str, ...]) -> _Together:
    """``_together`` of keywords written ``texts``, read afresh."""
    months = frozenset(m for m in map(_month_keyword, texts) if m is not None)
    # one clock time among the keywords is when something happens: a range that ends at it starts
    # at another time ("from 13:00 to 14:00" is not a meeting at 14:00); two or more ask for a range
    return _Together(months, sum(_kind(k)[0] == "clock" for k in texts) == 1)


_kept_together = lru_cache(maxsize=1024)(_read_together)


def _finder(keywords: list[Any], hay: Haystack) -> Callable[[Any], bool]:
    """Keyword look-up in ``hay``, where a date written in pieces (a month's name among the
    keywords) also finds a number as the day of a date of that month."""
    months, one_clock = _together(keywords)

    def has(keyword: Any) -> bool:
        kind, value = _kind(keyword)
        if kind == "clock" and one_clock:
            return not hay.starts().isdisjoint(value)
        if hay.holds(kind, value):
            return True
        return (kind == "number" and bool(months) and value == int(value) and 1 <= value <= 31
                and any(int(value) in hay.days_of(m) for m in months))
    return has


def missing(text: str, keywords: Iterable[Any], day_first: bool | None = None) -> list[str]:
    """The keywords not found in ``text`` (empty when all are present); ``day_first``: the
    office's order of a numeric date (``Haystack``)."""
    keywords = list(keywords)
    has = _finder(keywords, haystack(text, day_first))
    return [str(k) for k in keywords if not has(k)]


def present(text: str, keywords: Iterable[Any], day_first: bool | None = None) -> list[str]:
    keywords = list(keywords)
    has = _finder(keywords, haystack(text, day_first))
    return [str(k) for k in keywords if has(k)]


def haystack(text: str, day_first: bool | None = None) -> Haystack:
    """``Haystack(text, day_first)``, the same one for the latest texts asked about: the checks of
    every replay of a task read the same messages and files of its office (what a haystack works
    out depends on its text and day order alone). A long text gets a haystack of its own."""
    if len(text) > MAX_KEPT_HAYSTACK_CHARS:
        return Haystack(text, day_first)
    return _kept_haystack(text, day_first)


@lru_cache(maxsize=256)
def _kept_haystack(text: str, day_first: bool | None) -> Haystack:
    return Haystack(text, day_first)
