"""Composed small talk: the chat of one person in one week, not lines drawn from a fixed bank.

``SmallTalk`` is made once per history. From the ``rng`` it is given it derives a persona (a
hobby and where they do it, a pet or none, a partner, children, a sibling, a friend and a
neighbour with names, how they get to work and the line or road they take, a street, a cafe, a
park and a bakery near home, a lunch place near the office, a favourite food, a show, a book, a
podcast, a trip later in the year) and then composes openers, closers and small-talk exchanges
that mention that persona, the given colleagues, company, city and projects, and fit the moment
(``when``):

- season and weather from the city's climate and hemisphere (:data:`CITY_CLIMATE`): one weather
  per date, drawn from the season's weights (Singapore has no winter; Melbourne, Auckland and
  Cape Town have theirs in July);
- the weekday: weekend stories on Monday (and the weekend planned on Thursday or Friday is the
  one told on Monday), weekend plans on Thursday and Friday, "last night" not on Monday;
- the time of day: the greeting of the hour, breakfast, sleep and the trip in before 11:00, lunch
  plans from 10:00, lunch stories from 13:00, evening plans from noon;
- rare events (first snow, a heat wave, a holiday of the city's country, a birthday) at most once
  per history; everyday topics at most so often a day (:data:`TOPICS`).

Every utterance is assembled from fragments (alternatives, slots, nested pools), assistant lines
echo what the user just said, and the object remembers everything it produced: no utterance
repeats within its history (compared case-folded), none says a word twice in a row or a phrase of
three words twice. A persona fact (how long they have lived there, had the pet, done the hobby and
with whom: :data:`_FACT_POOL`) is drawn once and told once, the same way; a story (a ``*.news``
entry) is told once a history, and only a history that has told every one tells one again. A
hobby whose place names a weekday ("my Thursday lessons") happens that evening only. Lines are short, like real chat: about a
dozen tokens (``backends.tokens.count_tokens``), at least ``MIN_WORDS`` words and at most
``MAX_TOKENS`` tokens. Small talk asks for nothing and promises nothing. ``avoid(text)``
returning False rejects a text (and persona values) containing a task value; such texts are
recomposed. :class:`ValueError` only when nothing can be composed.

The words live in fragment banks under ``templates/dialogue/small_talk/`` (``*.bank``), parsed
and checked once at import. Format, one statement per line::

    # a comment (also: blank lines)
    == pool.name            start a pool: a named list of interchangeable fragments
    when flag !flag ...     the following entries of the pool need these calendar/persona flags
                            (``!flag``: must not hold; ``when *`` lifts the condition)
    - text                  one entry; ``- ~`` is the empty entry
    - first | second        an entry with fields (see captures below)

Inside an entry ``{slot}`` inserts a value (a persona or calendar value, or a capture),
``[a|b|c]`` one of the alternatives (``[a|]``: a or nothing), ``<pool>`` a fragment drawn from
another pool, ``<pool=name>`` also captures the drawn fragment as slot ``name`` (its further
fields as ``name.1``, ``name.2`` ... , expanded where they are used) for the later lines of the
same exchange, and ``^`` (``{^slot}``, ``<^pool>``) upper-cases the first letter. In the fields
of a captured entry, an ``[a|b|c]`` group with the same alternatives as one in an earlier field
makes the same choice (``- a [rose|fig] cutting | a [rose|fig] from {neighbour}``). A pool
reference whose first segment is an alias (``hob``, ``pet``, ``com``, ``wx``, ``hol``, ``city``)
goes to this persona's (or this day's) member of a family of pools: ``<hob.news>`` is
``hobbies.<id>.news`` for the person's hobby. An entry that names a persona slot the person
lacks (``{pet}`` for a person without a pet) is left out automatically. The composer capitalises
the first letter of every utterance, writes "an" before a capitalised vowel ("a {park} mural"
with Elm Park: "an Elm Park mural") and addresses the user by name at most once per turn.

A topic ``T`` is a set of pools: ``T.open`` (the user's first line), ``T.reply`` (the assistant's
answer when the exchange is one pair) and beats ``T.<beat>.ask`` (the assistant's follow-up
question), ``T.<beat>.ans`` (the user answers) and ``T.<beat>.end`` (the assistant's last word).
An exchange of ``n`` pairs is the opening line, ``n - 1`` beats (in the order the banks define
them) and the last beat's end. The follow-up to the user's opening line starts with the reaction
to it (``T.reply``), a later one now and then (``_REACT_SHARE``) with the reaction to the user's
answer: a short question (under ``MIN_WORDS`` words) after a reaction, a longer one on its own.
Malformed banks raise :class:`BankError` naming the file and line: unknown flags, slots, pools or
aliases, stray brackets, captures that an earlier line of the exchange does not always set,
cycles, non-ASCII text, missing topics or families.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable, Iterable, Sequence

from backends.tokens import count_tokens
from generators.english import near_key, repeats_itself

__all__ = ["SmallTalk", "BankError", "BANK_DIR", "parse_banks", "CITY_CLIMATE", "TOPICS"]

BANK_DIR = Path(__file__).resolve().parent.parent / "templates" / "dialogue" / "small_talk"

# Every utterance has at least MIN_WORDS words and at most MAX_TOKENS tokens (as counted by
# backends.tokens.count_tokens); the banks aim at about a dozen tokens, like real chat.
MIN_WORDS, MAX_TOKENS = 4, 28
# Texts of at most this many characters cannot exceed MAX_TOKENS (bank text has well under 0.4
# tokens per character), so only longer ones are counted: counting is the slow part.
_SURELY_SHORT = int(MAX_TOKENS / 0.4)
_REACT_SHARE = 0.4  # share of later follow-up questions that start with a reaction to the user's answer


class BankError(ValueError):
    """A small-talk fragment bank is malformed (the message names the file and line)."""


# --------------------------------------------------------------------------------------------
# Calendar facts (not wording): climate, hemisphere and country of the cities in use
# --------------------------------------------------------------------------------------------

# Weather kinds (each one is a family ``weather.<kind>`` in the banks) and the flags they imply.
WEATHER_FLAGS: dict[str, tuple[str, ...]] = {
    "snow": ("cold", "wet"),
    "frost": ("cold", "bright"),
    "rain": ("wet",),
    "fog": ("grey",),
    "wind": (),
    "grey": ("grey",),
    "mild": ("bright",),
    "warm": ("bright", "warmish"),
    "hot": ("bright", "warmish", "hotday"),
    "humid": ("warmish", "hotday"),
    "storm": ("wet",),
}

# climate -> season -> weather weights
_CLIMATES: dict[str, dict[str, dict[str, float]]] = {
    "pacific": {  # Portland, Seattle, Vancouver
        "winter": {"rain": 5, "grey": 3, "fog": 1.5, "frost": 1, "wind": 1, "snow": 0.4},
        "spring": {"rain": 3, "mild": 3, "grey": 2, "wind": 1, "warm": 0.5},
        "summer": {"warm": 4, "mild": 2, "hot": 1.5},
        "autumn": {"rain": 4, "fog": 2, "grey": 2, "mild": 1.5, "wind": 1},
    },
    "maritime": {  # Leeds, Bristol, Dublin, Edinburgh, Manchester, Rotterdam
        "winter": {"rain": 3, "grey": 3, "wind": 2, "frost": 2, "fog": 1, "snow": 0.5},
        "spring": {"rain": 2.5, "mild": 3, "grey": 2, "wind": 1.5, "warm": 0.5},
        "summer": {"warm": 3, "mild": 3, "rain": 1.5, "hot": 0.7, "storm": 0.5},
        "autumn": {"rain": 3, "wind": 3, "fog": 1, "grey": 2, "mild": 1},
    },
    "continental": {  # Toronto, Chicago, Minneapolis, Boston
        "winter": {"snow": 4, "frost": 3, "grey": 2, "wind": 2},
        "spring": {"rain": 3, "mild": 3, "grey": 1.5, "wind": 1.5, "warm": 1},
        "summer": {"warm": 3, "hot": 3, "humid": 2, "storm": 2},
        "autumn": {"mild": 3, "rain": 2, "wind": 2, "grey": 2, "frost": 1},
    },
    "mountain": {  # Denver
        "winter": {"snow": 3, "frost": 3, "mild": 2, "wind": 1},
        "spring": {"mild": 3, "wind": 2, "snow": 1, "storm": 1, "warm": 1},
        "summer": {"hot": 3, "warm": 3, "storm": 2},
        "autumn": {"mild": 4, "frost": 1, "wind": 1, "snow": 0.5},
    },
    "south_us": {  # Austin, Atlanta
        "winter": {"mild": 4, "grey": 2, "rain": 2, "frost": 1},
        "spring": {"warm": 3, "storm": 3, "mild": 3},
        "summer": {"hot": 5, "humid": 4, "storm": 2},
        "autumn": {"warm": 4, "mild": 3, "storm": 1},
    },
    "rhone": {  # Lyon
        "winter": {"frost": 3, "fog": 3, "grey": 3, "snow": 0.5},
        "spring": {"mild": 3, "rain": 2, "warm": 1},
        "summer": {"hot": 4, "warm": 3, "storm": 2},
        "autumn": {"fog": 2, "rain": 3, "mild": 3},
    },
    "atlantic": {  # Porto
        "winter": {"rain": 4, "wind": 2, "mild": 2, "grey": 2},
        "spring": {"mild": 4, "rain": 2, "warm": 1},
        "summer": {"warm": 4, "mild": 2, "hot": 1, "fog": 1},
        "autumn": {"rain": 3, "mild": 3, "wind": 1},
    },
    "south_temperate": {  # Melbourne, Auckland
        "winter": {"grey": 3, "rain": 3, "wind": 2, "frost": 1, "mild": 1},
        "spring": {"wind": 3, "rain": 2, "mild": 3},
        "summer": {"hot": 2, "warm": 4, "mild": 1, "storm": 1},
        "autumn": {"mild": 4, "fog": 1, "rain": 2},
    },
    "cape": {  # Cape Town
        "winter": {"rain": 4, "wind": 2, "mild": 2, "grey": 1},
        "spring": {"wind": 4, "mild": 3},
        "summer": {"hot": 2, "warm": 3, "wind": 3},
        "autumn": {"mild": 4, "warm": 2},
    },
    "tropical": {  # Singapore: one season
        "all": {"humid": 3, "hot": 2, "rain": 3, "storm": 2},
    },
}

# city -> (climate, hemisphere "north"/"south"/"tropical", country, dark winter mornings)
CITY_CLIMATE: dict[str, tuple[str, str, str, bool]] = {
    "Portland": ("pacific", "north", "us", False), "Seattle": ("pacific", "north", "us", True),
    "Vancouver": ("pacific", "north", "ca", True), "Denver": ("mountain", "north", "us", False),
    "Austin": ("south_us", "north", "us", False), "Atlanta": ("south_us", "north", "us", False),
    "Toronto": ("continental", "north", "ca", True), "Chicago": ("continental", "north", "us", False),
    "Minneapolis": ("continental", "north", "us", True), "Boston": ("continental", "north", "us", False),
    "Leeds": ("maritime", "north", "uk", True), "Bristol": ("maritime", "north", "uk", True),
    "Manchester": ("maritime", "north", "uk", True), "Edinburgh": ("maritime", "north", "uk", True),
    "Dublin": ("maritime", "north", "ie", True), "Rotterdam": ("maritime", "north", "nl", True),
    "Lyon": ("rhone", "north", "fr", False), "Porto": ("atlantic", "north", "pt", False),
    "Melbourne": ("south_temperate", "south", "au", False),
    "Auckland": ("south_temperate", "south", "nz", False),
    "Cape Town": ("cape", "south", "za", False), "Singapore": ("tropical", "tropical", "sg", False),
}
_DEFAULT_CLIMATE = ("maritime", "north", "xx", False)
# Where snow can fall at all, and so where a "first snow" makes sense.
_SNOWY = frozenset({"continental", "mountain", "pacific", "maritime", "rhone"})
# Where a summer heat wave is a thing people talk about.
_HEAT = frozenset({"continental", "mountain", "south_us", "rhone", "atlantic", "south_temperate",
                   "pacific", "maritime", "cape"})

_NORTH_SEASONS = ("winter", "winter", "spring", "spring", "spring", "summer", "summer", "summer",
                  "autumn", "autumn", "autumn", "winter")
_SOUTH_SEASONS = ("summer", "summer", "autumn", "autumn", "autumn", "winter", "winter", "winter",
                  "spring", "spring", "spring", "summer")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DAY_FLAGS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_LUNAR_NEW_YEAR = {2023: date(2023, 1, 22), 2024: date(2024, 2, 10), 2025: date(2025, 1, 29),
                   2026: date(2026, 2, 17)}


def _easter(year: int) -> date:
    """Western Easter Sunday (anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month, day = divmod(h + l_ - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The n-th (1-based; -1: last) ``weekday`` of a month."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def holiday_on(day: date, country: str) -> str | None:
    """The holiday (a family ``hols.<id>`` in the banks) people talk about around ``day``, if any."""
    y, m, d = day.year, day.month, day.day
    if m == 12 and 2 <= d <= 22:
        return "xmas"
    if m == 1 and 2 <= d <= 10:
        return "newyear"
    if country == "sg":
        lny = _LUNAR_NEW_YEAR.get(y)
        if lny and -9 <= (day - lny).days <= -1:
            return "lunar"
        return None
    easter = _easter(y)
    if -9 <= (day - easter).days <= -3 and country != "us":
        return "easter"
    if country == "us":
        thanks = _nth_weekday(y, 11, 3, 4)
        if -9 <= (day - thanks).days <= -1:
            return "thanksgiving"
        if m == 7 and d <= 3 or m == 6 and d >= 27:
            return "summer_day"
        if m == 10 and 24 <= d <= 30:
            return "halloween"
    if country == "ca":
        if m == 6 and d >= 24:
            return "summer_day"
        if m == 10 and 24 <= d <= 30:
            return "halloween"
    if country in ("uk", "ie"):
        if m == 10 and 24 <= d <= 30:
            return "halloween"
        for month in (5, 8):
            monday = _nth_weekday(y, month, 0, -1) if country == "uk" else _nth_weekday(y, month, 0, 1)
            if -4 <= (day - monday).days <= -1:
                return "long_weekend"
    if country == "nl" and m == 4 and 20 <= d <= 26:
        return "kings_day"
    if country == "fr" and m == 7 and 7 <= d <= 13:
        return "summer_day"
    return None


# --------------------------------------------------------------------------------------------
# Flags and slots the banks may use
# --------------------------------------------------------------------------------------------

_TIME_FLAGS = ("early", "morning", "prelunch", "lunchtime", "postlunch", "afternoon", "late", "evening")
_CAL_FLAGS = (*_DAY_FLAGS, "weekend", "workday", "late_week", "winter", "spring", "summer", "autumn",
              "tropical", "south", "north", "dark_am", "snowy", "holiday", "first_snow", "heat_wave",
              "hobby_day", "hobby_eve",
              "us", "uk", "ie", "ca", "au", "nz", "za", "nl", "fr", "pt", "sg", "english",
              "cold", "wet", "grey", "bright", "warmish", "hotday", *(f"wx_{k}" for k in WEATHER_FLAGS))
_PERSONA_FLAGS = ("pet", "dog", "cat", "partner", "kids", "kid_small", "kid_school", "kid_teen", "two_kids",
                  "sib", "house", "flat", "garden", "balcony", "bike", "bus", "train", "drive", "walk",
                  "transit", "outdoor_hobby", "indoor_hobby")
KNOWN_FLAGS: frozenset[str] = frozenset(_TIME_FLAGS + _CAL_FLAGS + _PERSONA_FLAGS)

# Slots Python supplies (persona, calendar, exchange). Captures are declared in the banks.
KNOWN_SLOTS: frozenset[str] = frozenset("""
user assistant company city colleague colleague2 project project2
partner partner_rel kid kid_rel kid_age kid2 sib sib_rel mum dad friend neighbour pet pet_kind
hobby hob_spot street cafe park bakery lunch_spot fav_food show book podcast trip_place home
line bus_no commute_min football vacation apartment
weekday month season tomorrow yesterday next_month wk_plan wk_past
""".split())

# Aliases in pool references: the person's (or the day's) member of a family of pools.
ALIASES: dict[str, str] = {"hob": "hobbies", "pet": "pets", "com": "commute", "wx": "weather", "hol": "hols",
                           "city": "city"}

# Topics: name -> (group, weight, rare, at most so many exchanges a day). Their pools are
# "<name>.open", "<name>.reply" and beats "<name>.<beat>.ask|ans|end" (used in bank order).
TOPICS: dict[str, tuple[str, float, bool, int]] = {
    "hello": ("opener", 1.0, False, 99),
    "bye": ("closer", 1.0, False, 99),
    "sky": ("talk", 2.0, False, 2),
    "trip_in": ("talk", 1.3, False, 1),
    "weekend_past": ("talk", 3.0, False, 1),
    "weekend_next": ("talk", 2.5, False, 1),
    "last_night": ("talk", 1.5, False, 1),
    "hobby": ("talk", 2.0, False, 2),
    "pet": ("talk", 1.6, False, 2),
    "family": ("talk", 1.6, False, 2),
    "breakfast": ("talk", 1.0, False, 1),
    "lunch": ("talk", 1.3, False, 1),
    "tonight": ("talk", 1.6, False, 1),
    "office": ("talk", 1.6, False, 2),
    "local": ("talk", 1.3, False, 2),
    "media": ("talk", 1.3, False, 2),
    "sleep": ("talk", 0.8, False, 1),
    "home": ("talk", 1.2, False, 2),
    "travel": ("talk", 1.0, False, 1),
    "first_snow": ("talk", 6.0, True, 1),
    "heat_wave": ("talk", 4.0, True, 1),
    "holiday": ("talk", 4.0, True, 1),
    "birthday": ("talk", 0.6, True, 1),
}

# --------------------------------------------------------------------------------------------
# Bank parsing
# --------------------------------------------------------------------------------------------

_NAME = r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*"
_TOKEN = re.compile(r"\{(\^?)(" + _NAME + r")\}|<(\^?)(" + _NAME + r")(?:=([a-z_][a-z0-9_]*))?>")
_POOL_NAME = re.compile(_NAME + r"\Z")
_FIELD_SEP = " | "
_ALTERNATIVES = re.compile(r"\[([^\[\]]*)\]")
_ANON_COUNTER: list[str] = []


@dataclass(frozen=True, slots=True)
class _Entry:
    parts: tuple[tuple, ...]  # (0, text) | (1, slot, upper) | (2, alias head or "", tail, full name, upper, capture)
    fields: tuple[tuple[tuple, ...], ...]  # further fields (parts), for captures
    need: int
    forbid: int
    where: str


@dataclass
class _Pool:
    name: str
    where: str
    entries: list[_Entry]


class _FlagBits:
    def __init__(self) -> None:
        self.bits: dict[str, int] = {}

    def bit(self, name: str) -> int:
        b = self.bits.get(name)
        if b is None:
            b = self.bits[name] = 1 << len(self.bits)
        return b

    def mask(self, names: Iterable[str]) -> int:
        m = 0
        for n in names:
            m |= self.bit(n)
        return m


_FLAGS = _FlagBits()
for _f in sorted(KNOWN_FLAGS):
    _FLAGS.bit(_f)


def _slot_flag(slot: str) -> int:
    return _FLAGS.bit("$" + slot)


_SLOT_BITS: dict[str, int] = {slot: _slot_flag(slot) for slot in sorted(KNOWN_SLOTS)}


def _split_fields(body: str, where: str) -> list[str]:
    """Split an entry at " | " outside [alternatives]; check the brackets pair up."""
    fields: list[str] = []
    depth = start = i = 0
    while i < len(body):
        ch = body[i]
        if ch == "[":
            if depth:
                raise BankError(f"{where}: nested [ ] alternatives are not supported")
            depth = 1
        elif ch == "]":
            if not depth:
                raise BankError(f"{where}: ']' without '['")
            depth = 0
        elif not depth and body.startswith(_FIELD_SEP, i):
            fields.append(body[start:i])
            i += len(_FIELD_SEP)
            start = i
            continue
        i += 1
    if depth:
        raise BankError(f"{where}: '[' without ']'")
    fields.append(body[start:])
    return fields


def _inline_alternatives(text: str, where: str, anon: list[tuple[str, list[str]]]) -> str:
    """Replace each ``[a|b|c]`` by a reference to a new anonymous pool (collected in ``anon``)."""
    if "[" not in text:
        return text
    out = []
    pos = 0
    for match in _ALTERNATIVES.finditer(text):
        out.append(text[pos:match.start()])
        name = f"_alt.{len(_ANON_COUNTER)}"
        _ANON_COUNTER.append(where)
        options = match.group(1).split("|")
        if len(options) < 2:
            raise BankError(f"{where}: [{match.group(1)}] needs at least two alternatives separated by '|'")
        anon.append((name, options))
        out.append(f"<{name}>")
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _parse_text(text: str, where: str) -> tuple[tuple, set[str], set[str], list[tuple[str, str]]]:
    """Parts of one field, the slots it uses, the captures it sets, and its pool references."""
    parts: list[tuple] = []
    slots: set[str] = set()
    caps: set[str] = set()
    refs: list[tuple[str, str]] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        lit = text[pos:match.start()]
        if lit:
            parts.append((0, lit))
        pos = match.end()
        if match.group(2) is not None:
            slots.add(match.group(2))
            parts.append((1, match.group(2), bool(match.group(1))))
        else:
            name = match.group(4)
            head, _, tail = name.partition(".")
            alias = head if head in ALIASES and tail else ""
            capture = match.group(5) or ""
            if capture:
                caps.add(capture)
            field_names = tuple(f"{capture}.{i}" for i in range(1, 10)) if capture else ()
            parts.append((2, alias, "." + tail if alias else "", name, bool(match.group(3)), capture, field_names))
            refs.append((name, where))
    lit = text[pos:]
    if lit:
        parts.append((0, lit))
    for part in parts:
        if part[0] == 0 and any(ch in part[1] for ch in "{}<>[]|"):
            raise BankError(f"{where}: stray bracket or '|' in {text!r}: slots are {{name}}, pools <name> or "
                            "<name=capture>, alternatives [a|b], fields 'first | second'")
    return tuple(parts), slots, caps, refs


@dataclass
class _Bank:
    pools: dict[str, _Pool]
    captures: set[str]
    entry_caps: dict[int, frozenset[str]]  # id(entry) -> captures it sets directly (all fields)
    entry_slots: dict[int, frozenset[str]]


def parse_banks(files: Sequence[tuple[str, str]]) -> _Bank:
    """Parse bank texts (``(name, text)`` pairs) into pools; check them (see the module docstring)."""
    pools: dict[str, _Pool] = {}
    all_caps: set[str] = set()
    used_slots: list[tuple[str, str]] = []
    all_refs: list[tuple[str, str]] = []
    entry_caps: dict[int, frozenset[str]] = {}
    entry_slots: dict[int, frozenset[str]] = {}
    for fname, text in files:
        pool: _Pool | None = None
        need = forbid = 0
        for lineno, raw in enumerate(text.splitlines(), 1):
            where = f"{fname}:{lineno}"
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if not line.isascii():
                bad = next(ch for ch in line if not ch.isascii())
                raise BankError(f"{where}: non-ASCII character {bad!r}; banks are plain ASCII")
            if line.startswith("=="):
                name = line[2:].strip()
                if not _POOL_NAME.match(name):
                    raise BankError(f"{where}: bad pool name {name!r} (lower case, digits, _ and dots)")
                if name in pools:
                    raise BankError(f"{where}: pool {name!r} is already defined at {pools[name].where}")
                pool = pools[name] = _Pool(name, where, [])
                need = forbid = 0
                continue
            if pool is None:
                raise BankError(f"{where}: expected '== pool.name' before any entry or condition")
            if line == "when" or line.startswith("when "):
                words = line[4:].split()
                if not words:
                    raise BankError(f"{where}: 'when' needs flags (or '*')")
                need = forbid = 0
                if words == ["*"]:
                    continue
                for word in words:
                    neg = word.startswith("!")
                    flag = word[1:] if neg else word
                    if flag not in KNOWN_FLAGS:
                        raise BankError(f"{where}: unknown flag {flag!r}")
                    if neg:
                        forbid |= _FLAGS.bit(flag)
                    else:
                        need |= _FLAGS.bit(flag)
                if need & forbid:
                    raise BankError(f"{where}: a flag is both required and forbidden")
                continue
            if not line.startswith("- ") and line != "-":
                raise BankError(f"{where}: expected '- text', 'when flags', '== pool' or '#', got {line[:40]!r}")
            body = line[1:].strip()
            if not body:
                raise BankError(f"{where}: empty entry (write '- ~' for the empty fragment)")
            if body == "~":
                body = ""
            fields_parts = []
            slots: set[str] = set()
            caps: set[str] = set()
            anon: list[tuple[str, list[str]]] = []
            for field in _split_fields(body, where) if body else [""]:
                if body and not field.strip():
                    raise BankError(f"{where}: empty field in {body!r}")
                parts, s, c, refs = _parse_text(_inline_alternatives(field.strip(), where, anon), where)
                fields_parts.append(parts)
                slots |= s
                caps |= c
                all_refs.extend(refs)
            for anon_name, options in anon:
                anon_pool = pools[anon_name] = _Pool(anon_name, where, [])
                for option in options:
                    parts, s, c, refs = _parse_text(option, where)
                    if c:
                        raise BankError(f"{where}: no captures inside [ ] alternatives")
                    need_s = 0
                    for slot in s:
                        used_slots.append((slot, where))
                        if slot in KNOWN_SLOTS:
                            need_s |= _slot_flag(slot)
                    all_refs.extend(refs)
                    alt = _Entry(parts, (), need_s, 0, where)
                    anon_pool.entries.append(alt)
                    entry_caps[id(alt)] = frozenset()
                    entry_slots[id(alt)] = frozenset(s)
            slot_need = 0
            for s in slots:
                used_slots.append((s, where))
                if s in KNOWN_SLOTS:
                    slot_need |= _slot_flag(s)
            entry = _Entry(fields_parts[0], tuple(fields_parts[1:]), need | slot_need, forbid, where)
            pool.entries.append(entry)
            entry_caps[id(entry)] = frozenset(caps)
            entry_slots[id(entry)] = frozenset(slots)
            all_caps |= caps
    for name, p in pools.items():
        if not p.entries:
            raise BankError(f"{p.where}: pool {name!r} has no entries")
    bad_caps = all_caps & KNOWN_SLOTS
    if bad_caps:
        raise BankError(f"captures may not reuse slot names: {sorted(bad_caps)}")
    for slot, where in used_slots:
        if slot not in KNOWN_SLOTS and slot not in all_caps and slot.split(".")[0] not in all_caps:
            raise BankError(f"{where}: unknown slot {{{slot}}} (not supplied and never captured)")
    families = _families(pools)
    for name, where in all_refs:
        head, _, tail = name.partition(".")
        if head in ALIASES and tail:
            members = families.get(ALIASES[head], ())
            if not members:
                raise BankError(f"{where}: <{name}>: no pools '{ALIASES[head]}.<id>.*' to alias")
            for member in members:
                target = f"{ALIASES[head]}.{member}.{tail}"
                if target not in pools and not (head == "city" and f"city.default.{tail}" in pools):
                    raise BankError(f"{where}: <{name}>: pool {target!r} is missing")
        elif name not in pools:
            raise BankError(f"{where}: <{name}>: no such pool")
    bank = _Bank(pools, all_caps, entry_caps, entry_slots)
    _check_cycles(bank)
    return bank


def _families(pools: dict[str, _Pool]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for family in set(ALIASES.values()):
        members = sorted({n.split(".")[1] for n in pools if n.startswith(family + ".") and n.count(".") >= 2})
        out[family] = [m for m in members if m != "default"] if family == "city" else members
    return out


def _check_cycles(bank: _Bank) -> None:
    state: dict[str, int] = {}

    def targets(entry: _Entry) -> Iterable[str]:
        for fparts in (entry.parts, *entry.fields):
            for part in fparts:
                if part[0] == 2:
                    if part[1]:
                        fam = ALIASES[part[1]]
                        yield from (n for n in bank.pools if n.startswith(fam + ".") and n.endswith(part[2]))
                    else:
                        yield part[3]

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise BankError(f"{bank.pools[name].where}: pool {name!r} refers to itself: {' -> '.join(path + [name])}")
        state[name] = 1
        for entry in bank.pools[name].entries:
            for t in targets(entry):
                if t in bank.pools:
                    visit(t, path + [name])
        state[name] = 2

    for name in bank.pools:
        visit(name, [])


def _load_bank_dir(directory: Path) -> _Bank:
    files = sorted(directory.glob("*.bank"))
    if not files:
        raise BankError(f"{directory}: no *.bank files")
    texts = []
    for path in files:
        try:
            texts.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise BankError(f"{path}: cannot read small-talk bank ({exc})") from exc
    bank = parse_banks(texts)
    _check_topics(bank)
    return bank


_REQUIRED_POOLS = ("names.f", "names.m", "names.pet.dog", "names.pet.cat", "street.a", "street.b",
                   "cafe.name", "park.name", "bakery.name", "lunch_spot.name", "food.fav", "media.show",
                   "media.book", "media.podcast", "trip.place", "weekend.plan", "word.mum", "word.dad",
                   "word.vacation", "word.football", "word.apartment", "word.home", "word.partner_rel",
                   "word.sib_rel.f", "word.sib_rel.m", "word.kid_rel.f", "word.kid_rel.m")


def _check_topics(bank: _Bank) -> None:
    pools = bank.pools
    for pool in _REQUIRED_POOLS:
        if pool not in pools:
            raise BankError(f"small-talk banks: required pool {pool!r} is missing")
    fams = _families(pools)
    for kind in WEATHER_FLAGS:
        if kind not in fams["weather"]:
            raise BankError(f"small-talk banks: no pools for weather kind {kind!r} ('weather.{kind}.*')")
    for mode in ("bike", "bus", "train", "drive", "walk"):
        if mode not in fams["commute"]:
            raise BankError(f"small-talk banks: no pools for commute mode {mode!r}")
    for kind in ("dog", "cat"):
        if kind not in fams["pets"]:
            raise BankError(f"small-talk banks: no pools for pet kind {kind!r}")
    for topic in TOPICS:
        for part in ("open", "reply"):
            if f"{topic}.{part}" not in pools:
                raise BankError(f"small-talk banks: topic {topic!r} has no pool '{topic}.{part}'")
        opened = _guaranteed(bank, pools[f"{topic}.open"])
        for beat in _beats(pools, topic):
            missing = [p for p in ("ask", "ans", "end") if f"{topic}.{beat}.{p}" not in pools]
            if missing:
                some = next(f"{topic}.{beat}.{p}" for p in ("ask", "ans", "end") if f"{topic}.{beat}.{p}" in pools)
                raise BankError(f"{pools[some].where}: beat {topic}.{beat} lacks {', '.join(missing)}")
            answered = opened | _guaranteed(bank, pools[f"{topic}.{beat}.ans"])
            for part, known in (("ask", opened), ("ans", opened), ("end", answered)):
                _check_captures(bank, pools[f"{topic}.{beat}.{part}"], known)
        _check_captures(bank, pools[f"{topic}.reply"], opened)


def _guaranteed(bank: _Bank, pool: _Pool) -> frozenset[str]:
    sets = [bank.entry_caps[id(e)] for e in pool.entries]
    return frozenset.intersection(*sets) if sets else frozenset()


def _check_captures(bank: _Bank, pool: _Pool, known: frozenset[str]) -> None:
    """Captures a pool (or the pools it draws from) reads must be set by the exchange's earlier lines."""
    seen: set[str] = set()

    def walk(p: _Pool) -> None:
        if p.name in seen:
            return
        seen.add(p.name)
        for entry in p.entries:
            for slot in bank.entry_slots[id(entry)]:
                base = slot.split(".")[0]
                if slot not in KNOWN_SLOTS and base not in known and base not in bank.entry_caps[id(entry)]:
                    raise BankError(f"{entry.where}: {{{slot}}} is not captured by every earlier line of the "
                                    f"exchange (pool {pool.name!r})")
            for fparts in (entry.parts, *entry.fields):
                for part in fparts:
                    if part[0] == 2 and not part[1] and part[3] in bank.pools:
                        walk(bank.pools[part[3]])

    walk(pool)


def _beats(pools: dict[str, _Pool], topic: str) -> list[str]:
    """The beats of a topic, in the order the banks define them (the order they are talked about)."""
    prefix = topic + "."
    return list(dict.fromkeys(n.split(".")[1] for n in pools if n.startswith(prefix) and n.count(".") == 2))


BANK: _Bank = _load_bank_dir(BANK_DIR)
_POOLS: dict[str, _Pool] = BANK.pools
_FAMILIES: dict[str, list[str]] = _families(_POOLS)
_TOPIC_BEATS: dict[str, tuple[str, ...]] = {t: tuple(_beats(_POOLS, t)) for t in TOPICS}
_GROUP_TOPICS: dict[str, tuple[str, ...]] = {g: tuple(t for t, spec in TOPICS.items() if spec[0] == g)
                                             for g in ("opener", "closer", "talk")}
_BEATS_NOW: dict[tuple[str, int], tuple[str, ...]] = {}
_TOPIC_INFO: dict[str, tuple[float, bool, str, int]] = {t: (w, rare, f"{t}.open", cap)
                                                        for t, (_, w, rare, cap) in TOPICS.items()}
_FITTING: dict[tuple[str, int, int], tuple[str, ...]] = {}

# --------------------------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------------------------

_ELIGIBLE: dict[tuple[str, int], tuple[_Entry, ...]] = {}
_SPACE_PUNCT = re.compile(r" +([,.!?;:])")
# "a" before a slot value with a capital vowel becomes "an" (the article is the end of a literal)
_VOWELS = frozenset("AEIOU")
_A_SPACE = frozenset({"a ", "A "})
_BEFORE_A = frozenset({"", " ", "(", '"'})


def _group(pool: _Pool) -> tuple[tuple[int, int, tuple[_Entry, ...]], ...]:
    groups: dict[tuple[int, int], list[_Entry]] = {}
    for entry in pool.entries:
        groups.setdefault((entry.need, entry.forbid), []).append(entry)
    return tuple((need, forbid, tuple(entries)) for (need, forbid), entries in groups.items())


def _literal_options(name: str) -> tuple[str, ...] | None:
    """The texts of a pool that is a plain choice among literal strings (no conditions, slots, pools)."""
    pool = _POOLS.get(name)
    if pool is None:
        return None
    options = []
    for entry in pool.entries:
        if entry.need or entry.forbid or entry.fields:
            return None
        if not entry.parts:
            options.append("")
        elif len(entry.parts) == 1 and entry.parts[0][0] == 0:
            options.append(entry.parts[0][1])
        else:
            return None
    return tuple(options)


_ADDRESS_POOL = "m.you"  # how the assistant addresses the user: ", {user}" or nothing


def _compile_choices(parts: tuple) -> tuple:
    """Turn references to plain literal pools (most [a|b] groups, the markers) into direct choices:
    part ``(3, options)``; no recursion, no condition check when composing."""
    out = []
    for part in parts:
        if part[0] == 2 and part[3] == _ADDRESS_POOL and not part[4] and not part[5]:
            out.append((4,))  # the address: its texts are fixed per history (SmallTalk._you)
            continue
        if part[0] == 2 and not part[1] and not part[5]:
            options = _literal_options(part[3])
            if options is not None:
                if part[4]:
                    options = tuple(o[:1].upper() + o[1:] for o in options)
                out.append((3, options))
                continue
        out.append(part)
    return tuple(out)


for _pool in _POOLS.values():
    _pool.entries = [_Entry(_compile_choices(e.parts), tuple(_compile_choices(f) for f in e.fields),
                            e.need, e.forbid, e.where) for e in _pool.entries]


def _word_bounds(parts: tuple) -> tuple[int, float]:
    """At most the fewest and at least the most words the text of ``parts`` can have (most: inf
    when a slot or a pool of unknown length is in it): an empty choice can swallow a space."""
    lo, hi = 0, 0.0
    for part in parts:
        kind = part[0]
        if kind == 0:
            lo += part[1].count(" ")
            hi += part[1].count(" ")
        elif kind == 3:
            lo += min(o.count(" ") for o in part[1]) - ("" in part[1])
            hi += max(o.count(" ") for o in part[1])
        elif kind == 4:
            lo -= 1
            hi += 1  # ", Dana"
        else:
            hi = float("inf")
    return max(lo, 0) + 1, hi + 1


# Each pool's entries grouped by condition: filtering looks at a few groups, not every entry.
_GROUPS: dict[str, tuple[tuple[int, int, tuple[_Entry, ...]], ...]] = {n: _group(p) for n, p in _POOLS.items()}
# id(entry) -> the word bounds of its text (first field), for drawing only entries that can fit
_WORDS: dict[int, tuple[int, float]] = {id(e): _word_bounds(e.parts) for p in _POOLS.values() for e in p.entries}
_FITS: dict[tuple[str, int, int, int], tuple[_Entry, ...]] = {}  # the entries of a pool with so many words


# The flag bits each pool's conditions look at: caches are keyed on these bits only.
_RELEVANT: dict[str, int] = {}
for _name, _groups in _GROUPS.items():
    _mask = 0
    for _need, _forbid, _ in _groups:
        _mask |= _need | _forbid
    _RELEVANT[_name] = _mask
_TOPIC_RELEVANT: dict[str, int] = {}
for _topic, _beat_names in _TOPIC_BEATS.items():
    _mask = 0
    for _beat in _beat_names:
        for _part in ("ask", "ans", "end"):
            _mask |= _RELEVANT[f"{_topic}.{_beat}.{_part}"]
    _TOPIC_RELEVANT[_topic] = _mask
_GROUP_RELEVANT: dict[str, int] = {}
for _topic, (_group_name, _, _, _) in TOPICS.items():
    _GROUP_RELEVANT[_group_name] = (_GROUP_RELEVANT.get(_group_name, 0) | _TOPIC_RELEVANT[_topic]
                                    | _RELEVANT[f"{_topic}.open"])


def _eligible(name: str, flags: int) -> tuple[_Entry, ...]:
    """The entries of pool ``name`` whose conditions hold under ``flags`` (cached)."""
    key = (name, flags & _RELEVANT[name])
    found = _ELIGIBLE.get(key)
    if found is None:
        if len(_ELIGIBLE) > 500_000:
            _ELIGIBLE.clear()
        passing = [entries for need, forbid, entries in _GROUPS[name] if need & flags == need and not forbid & flags]
        found = passing[0] if len(passing) == 1 else tuple(e for entries in passing for e in entries)
        _ELIGIBLE[key] = found
    return found


_TIME_FLAG_CACHE: dict[int, int] = {}  # minute of the day -> time-of-day flags


class _Lazy:
    """A capture's further field, expanded only where a later line uses it (afresh each time, so
    that a retry can give other words). ``links`` holds the [a|b] choices made in the entry's
    fields so far: a group with the same alternatives picks the same one (``- a [rose|fig]
    cutting | a [rose|fig] from {neighbour}`` never turns a rose into a fig). ``overlay``: the
    slot values a persona fact was first told with (the same colleague in goal every time)."""

    __slots__ = ("parts", "flags", "aliases", "links", "overlay")

    def __init__(self, parts: tuple, flags: int, aliases: dict[str, str], links: dict,
                 overlay: dict[str, str] | None = None) -> None:
        self.parts, self.flags, self.aliases, self.links, self.overlay = parts, flags, aliases, links, overlay


# Persona facts: the pools whose entry is drawn once a history and kept (the same entry, the same
# [a|b] choices, the same names), so that a fact told twice is told the same way: how long the
# person has lived where they live, had their pet, where it sleeps and what it likes, how they
# got into their hobby, with whom and with what kit, where their family lives.
_FACT_POOL = re.compile(r"(?:hobbies\.[a-z0-9_]+\.(?:why|people|gear)|pets\.[a-z0-9_]+\.(?:age|spot|treat)"
                        r"|home\.years|family\.near|travel\.with)\Z")
# Stories: a news entry is told once a history (no partner learning the drums on Monday and the
# trumpet on Thursday, no second first mug out of the kiln); when all are told, the topic rests.
_STORY_POOL = re.compile(r"(?:[a-z0-9_.]+\.)?news\Z")


def _entry_slots(entry: "_Entry") -> frozenset[str]:
    """The slots an entry's text and fields name directly."""
    return frozenset(part[1] for fparts in (entry.parts, *entry.fields) for part in fparts if part[0] == 1)


_KEPT: dict[str, str] = {n: "fact" if _FACT_POOL.match(n) else "story" for n in sorted(_POOLS)
                         if _FACT_POOL.match(n) or _STORY_POOL.match(n)}




def _too_long(text: str) -> bool:
    """More than MAX_TOKENS tokens (counted only for texts that could be that long)."""
    return len(text) > _SURELY_SHORT and count_tokens(text) > MAX_TOKENS


class _NoFit(Exception):
    """A pool has no entry for the current flags."""


def _weighted(rng: random.Random, weights: dict[str, float]) -> str:
    total = sum(weights.values())
    x = rng.random() * total
    for key, w in weights.items():
        x -= w
        if x < 0:
            return key
    return next(reversed(weights))


@dataclass
class _Day:
    flags: int
    slots: dict[str, str]
    aliases: dict[str, str]
    weather: str
    base: dict[str, str]  # persona and day slots together: the context of the day's exchanges


class WordingsExhausted(ValueError):
    """A history so long that every fitting small-talk wording was said already (none is said twice)."""


class SmallTalk:
    """Composes the small talk of one history (one object per history)."""

    def __init__(self, *, rng: random.Random, user_first: str, assistant: str,
                 colleagues: Sequence[str], company: str, city: str, projects: Sequence[str],
                 avoid: Callable[[str], bool] = lambda text: True,
                 absences: Sequence[tuple[str, date, date]] = ()) -> None:
        """``absences``: ``(first name, first day, last day)`` of each span the office shows a
        colleague away; the small talk of those days does not name them."""
        self._avoid = avoid
        self._absent: dict[str, list[tuple[date, date]]] = {}
        for name, first, last in absences:
            self._absent.setdefault(name, []).append((first, last))
        self._aliases_base: dict[str, str] = {}
        self._ec_flags: int | None = None  # flags of self._ec, a per-flags cache of _eligible
        self._ec: dict[str, tuple[_Entry, ...]] = {}
        self._address = ""  # ", <user>" as the assistant addresses the user
        seed = rng.getrandbits(64)
        self._seed = seed
        self._rng = random.Random(seed)
        self.city = city
        climate = CITY_CLIMATE.get(city, _DEFAULT_CLIMATE)
        self._climate, self._hemisphere, self._country, self._dark = climate
        self._said: set[str] = set()
        self._cores: set[str] = set()  # near_key of every line said: no line comes back with another name
        self._facts: dict[str, tuple[_Entry, dict, dict[str, str]]] = {}  # fact pool -> what it says
        self._told: set[str] = set()  # fact pools told in this history
        self._stories: set[int] = set()  # id() of story entries told in this history
        self._drawn: list[tuple[str, object]] = []  # facts and stories drawn in the current exchange
        self._kinds = _KEPT
        self._retell = False  # a story told already may be told again (nothing else fits)
        # strict: the caller has other talk to fill in with (``WordingsExhausted`` is not the end),
        # so no story is told again and no line comes back with only its names changed
        self.strict = False
        self._rare_used: set[str] = set()
        self._topic_uses: dict[str, int] = {}
        self._today: date | None = None
        self._today_uses: dict[str, int] = {}  # topic -> uses on self._today
        self._recent: list[str] = []
        self._days: dict[date, _Day] = {}
        self._weekends: dict[date, tuple[str, str]] = {}
        self._snow_days: set[date] = set()
        self.log: list[tuple[datetime, str, list[tuple[str, str]]]] = []
        """Everything produced, in order: ``(when, topic, [(role, text), ...])``."""
        self._colleagues = [c for c in dict.fromkeys(colleagues) if c and c.strip() and avoid(c)]
        self._projects = [p for p in dict.fromkeys(projects) if p and p.strip() and avoid(p)]
        self._make_persona(random.Random(seed ^ 0x5EED), user_first, assistant, company)

    # -- persona -----------------------------------------------------------------------------

    def _draw(self, rng: random.Random, pool: str, ctx: dict[str, str], flags: int,
              taken: set[str] | None = None) -> str:
        """A fragment of ``pool`` that ``avoid`` accepts (and not in ``taken``)."""
        entries = _eligible(pool, flags)
        if not entries:
            raise ValueError(f"small talk: pool {pool!r} has no entry for this persona")
        for _ in range(40):
            text = self._expand(entries[int(rng.random() * len(entries))].parts, ctx, flags,
                                self._aliases_base, rng)
            if (taken is None or text.lower() not in taken) and self._avoid(text):
                if taken is not None:
                    taken.add(text.lower())
                return text
        raise ValueError(f"small talk: every {pool!r} value is rejected by avoid(); cannot compose a persona")

    def _number(self, rng: random.Random, draw: Callable[[], int]) -> str:
        """A persona's number (a bus route, minutes of commute) that ``avoid`` accepts: drawn
        again while it is one of the task's values, since every fragment would hold it."""
        for _ in range(40):
            text = str(draw())
            if self._avoid(text):
                return text
        raise ValueError("small talk: every number drawn is rejected by avoid(); cannot compose a persona")

    def _make_persona(self, rng: random.Random, user_first: str, assistant: str, company: str) -> None:
        names: set[str] = {n.lower() for n in (user_first, assistant, *self._colleagues) if n}
        ctx: dict[str, str] = {"city": self.city}
        flags: set[str] = set()
        aliases: dict[str, str] = {}
        base = _FLAGS.mask([self._country]) if self._country in KNOWN_FLAGS else 0

        def person(gender: str | None = None) -> tuple[str, str]:
            g = gender or ("f" if rng.random() < 0.5 else "m")
            return self._draw(rng, f"names.{g}", ctx, base, names), g

        if user_first and self._avoid(user_first):
            ctx["user"] = user_first
            self._address = ", " + user_first
        if assistant and self._avoid(assistant):
            ctx["assistant"] = assistant
        if company and self._avoid(company):
            ctx["company"] = company
        for slot in ("mum", "dad", "vacation", "football", "apartment", "partner_rel"):
            ctx[slot] = self._draw(rng, f"word.{slot}", ctx, base)
        if self._country in ("us", "ca", "uk", "ie", "au", "nz", "za", "sg"):
            flags.add("english")

        hobby = _FAMILIES["hobbies"][int(rng.random() * len(_FAMILIES["hobbies"]))]
        aliases["hob"] = f"hobbies.{hobby}"
        flags.add("outdoor_hobby" if f"hobbies.{hobby}.outdoor" in _POOLS else "indoor_hobby")

        r = rng.random()
        if r < 0.36:
            pet = "dog"
        elif r < 0.60:
            pet = "cat"
        else:
            pet = ""
        if pet:
            flags |= {"pet", pet}
            aliases["pet"] = f"pets.{pet}"
            ctx["pet"] = self._draw(rng, f"names.pet.{pet}", ctx, base, names)
            ctx["pet_kind"] = pet

        if rng.random() < 0.65:
            flags.add("partner")
            ctx["partner"], g = person()
        self._kids: list[tuple[str, str, int]] = []
        if rng.random() < 0.5:
            flags.add("kids")
            for _ in range(1 + (rng.random() < 0.45)):
                name, g = person()
                self._kids.append((name, self._draw(rng, f"word.kid_rel.{g}", ctx, base), 2 + int(rng.random() * 15)))
            if len(self._kids) == 2:
                flags.add("two_kids")
        if rng.random() < 0.6:
            flags.add("sib")
            ctx["sib"], g = person()
            ctx["sib_rel"] = self._draw(rng, f"word.sib_rel.{g}", ctx, base)
        ctx["friend"], _ = person()
        ctx["neighbour"], _ = person()

        home = rng.random()
        if home < 0.5:
            flags |= {"house", "garden"}
        else:
            flags.add("flat")
            if home < 0.8:
                flags.add("balcony")

        modes = {"bike": 2, "bus": 2.5, "train": 2.5, "drive": 2, "walk": 1.2}
        if self._climate in ("south_us",):
            modes["drive"] = 5
        mode = _weighted(rng, modes)
        flags.add(mode)
        if mode in ("bus", "train"):
            flags.add("transit")
        aliases["com"] = f"commute.{mode}"
        city_key = re.sub(r"[^a-z]", "", self.city.lower())
        aliases["city"] = f"city.{city_key}" if city_key in _FAMILIES["city"] else "city.default"
        self._aliases_base = aliases
        ctx["bus_no"] = self._number(rng, lambda: 2 + int(rng.random() * 90))
        ctx["commute_min"] = self._number(rng, lambda: 15 + 5 * int(rng.random() * 8))

        pflags = _FLAGS.mask(flags) | base

        def draw(slot: str, pool: str, taken: set[str] | None = None) -> None:
            ctx[slot] = self._draw(rng, pool, ctx, pflags | self._slot_bits(ctx), taken)

        for _ in range(40):
            street = self._draw(rng, "street.a", ctx, pflags) + " " + self._draw(rng, "street.b", ctx, pflags)
            if self._avoid(street):
                ctx["street"] = street
                break
        else:
            raise ValueError("small talk: every street name is rejected by avoid(); cannot compose a persona")
        draw("home", "word.home")
        draw("line", f"commute.{mode}.line")
        taken: set[str] = set()
        for slot, pool in (("cafe", "cafe.name"), ("park", "park.name"), ("bakery", "bakery.name"),
                           ("lunch_spot", "lunch_spot.name"), ("fav_food", "food.fav"), ("show", "media.show"),
                           ("book", "media.book"), ("podcast", "media.podcast"), ("trip_place", "trip.place")):
            draw(slot, pool, taken)
        draw("hobby", f"hobbies.{hobby}.name")
        draw("hob_spot", f"hobbies.{hobby}.spot")
        # "my Thursday lessons": the hobby happens that weekday only (flags hobby_day, hobby_eve)
        days = [i for i, name in enumerate(_WEEKDAYS) if re.search(rf"\b{name}\b", ctx["hob_spot"])]
        self._hob_day: int | None = days[0] if days else None

        # The address pool's texts for this person (", Dana" or nothing), drawn from directly.
        you = []
        for entry in _POOLS[_ADDRESS_POOL].entries:
            try:
                you.append(self._expand(entry.parts, ctx, pflags, aliases, rng))
            except _NoFit:  # no usable name: that entry is left out
                continue
        self._you = tuple(you) or ("",)
        self._persona_flags = pflags | self._slot_bits(ctx)
        self._exchange_bits = -1  # slot bits of a whole exchange context: the same for every exchange
        self._persona = ctx
        self.persona: dict[str, str] = dict(ctx, hobby_id=hobby, pet_kind=pet, commute=mode,
                                            kids=", ".join(f"{n} ({a})" for n, _, a in self._kids))
        """The persona, for reports and tests (slot -> value)."""

    # -- calendar ----------------------------------------------------------------------------

    def _season(self, day: date) -> str:
        if self._hemisphere == "tropical":
            return ""
        table = _SOUTH_SEASONS if self._hemisphere == "south" else _NORTH_SEASONS
        return table[day.month - 1]

    def _day(self, day: date) -> _Day:
        found = self._days.get(day)
        if found is not None:
            return found
        rng = random.Random(self._seed * 1_000_003 + day.toordinal())
        season = self._season(day)
        weights = _CLIMATES[self._climate]["all" if not season else season]
        kind = _weighted(rng, weights)
        names = set(WEATHER_FLAGS[kind]) | {f"wx_{kind}", _DAY_FLAGS[day.weekday()]}
        if season:
            names.add(season)
        names.add(self._hemisphere)
        if self._climate in _SNOWY:
            names.add("snowy")
        if self._dark and season == "winter":
            names.add("dark_am")
        wd = day.weekday()
        names.add("weekend" if wd >= 5 else "workday")
        if wd in (3, 4):
            names.add("late_week")
        if self._hob_day is None or self._hob_day == wd:
            names.add("hobby_day")  # the hobby can happen this evening
        if self._hob_day is None or self._hob_day == (wd - 1) % 7:
            names.add("hobby_eve")  # ... and could have happened last night
        # Rare events: the first snow (early winter, no snow talked about before), a heat wave.
        if kind == "snow":
            early_winter = day.month in (10, 11, 12) and self._hemisphere == "north"
            if early_winter and self._climate in _SNOWY and not any(d < day for d in self._snow_days):
                names.add("first_snow")
            self._snow_days.add(day)
        if kind == "hot" and season == "summer" and self._climate in _HEAT:
            names.add("heat_wave")
        holiday = holiday_on(day, self._country)
        aliases = dict(self._aliases_base, wx=f"weather.{kind}")
        if holiday and f"hols.{holiday}.open" in _POOLS:
            names.add("holiday")
            aliases["hol"] = f"hols.{holiday}"
        slots = {
            "weekday": _WEEKDAYS[wd],
            "month": _MONTHS[day.month - 1],
            "next_month": _MONTHS[day.month % 12],
            "tomorrow": "tomorrow" if wd < 4 else _WEEKDAYS[(wd + 1) % 7],
            "yesterday": "yesterday" if wd != 0 else "on Sunday",
        }
        if season:
            slots["season"] = season
        slots.update(self._weekend_slots(day))
        flags = _FLAGS.mask(names) | self._slot_bits(slots)
        found = self._days[day] = _Day(flags, slots, aliases, kind, {**self._persona, **slots})
        return found

    def _weekend_slots(self, day: date) -> dict[str, str]:
        """The weekend talked about on ``day``: the coming one (Thu/Fri), the last one (Monday)."""
        wd = day.weekday()
        if wd in (3, 4):
            saturday = day + timedelta(days=5 - wd)
        elif wd == 0:
            saturday = day - timedelta(days=2)
        else:
            return {}
        plan = self._weekends.get(saturday)
        if plan is None:
            rng = random.Random(self._seed * 7_368_787 + saturday.toordinal())
            ctx = dict(self._persona)
            flags = self._persona_flags | self._slot_bits(ctx)
            self._kid_slots(rng, ctx)
            flags |= self._kid_flags(ctx) | self._slot_bits(ctx)
            for _ in range(40):
                entries = _eligible("weekend.plan", flags)
                entry = entries[int(rng.random() * len(entries))]
                if len(entry.fields) != 1:
                    raise BankError(f"{entry.where}: weekend.plan entries need two fields: plan | past")
                texts = [self._expand(p, ctx, flags, self._aliases_base, rng) for p in (entry.parts, *entry.fields)]
                if all(self._avoid(t) for t in texts):
                    plan = self._weekends[saturday] = (texts[0], texts[1])
                    break
            else:
                raise ValueError("small talk: every weekend plan is rejected by avoid()")
        return {"wk_plan": plan[0], "wk_past": plan[1]}

    @staticmethod
    def _slot_bits(slots: dict[str, str]) -> int:
        m = 0
        get = _SLOT_BITS.get
        for s in slots:
            m |= get(s, 0)
        return m

    def _kid_slots(self, rng: random.Random, ctx: dict[str, str]) -> None:
        if not self._kids:
            return
        i = int(rng.random() * len(self._kids))
        name, rel, age = self._kids[i]
        ctx["kid"], ctx["kid_rel"], ctx["kid_age"] = name, rel, str(age)
        if len(self._kids) > 1:
            ctx["kid2"] = self._kids[1 - i][0]

    @staticmethod
    def _kid_flags(ctx: dict[str, str]) -> int:
        if "kid_age" not in ctx:
            return 0
        age = int(ctx["kid_age"])
        return _FLAGS.bit("kid_small" if age < 5 else "kid_school" if age < 13 else "kid_teen")

    @staticmethod
    def _time_flags(when: datetime) -> int:
        minutes = when.hour * 60 + when.minute
        found = _TIME_FLAG_CACHE.get(minutes)
        if found is not None:
            return found
        names = []
        if minutes < 11 * 60:
            names.append("early")
        if minutes < 12 * 60:
            names.append("morning")
        if 10 * 60 <= minutes < 12 * 60 + 30:
            names.append("prelunch")
        if 12 * 60 <= minutes < 14 * 60:
            names.append("lunchtime")
        if minutes >= 13 * 60:
            names.append("postlunch")
        if minutes >= 12 * 60:
            names.append("afternoon")
        if minutes >= 16 * 60:
            names.append("late")
        if minutes >= 18 * 60:
            names.append("evening")
        found = _TIME_FLAG_CACHE[minutes] = _FLAGS.mask(names)
        return found

    # -- expansion ---------------------------------------------------------------------------

    def _expand(self, parts: tuple, ctx: dict[str, str], flags: int, aliases: dict[str, str],
                rng: random.Random, links: dict | None = None) -> str:
        """The text of ``parts``. With ``links`` (the fields of a captured entry), [a|b] groups
        with the same alternatives make the same choice."""
        out: list[str] = []
        add = out.append
        rand = rng.random
        for part in parts:
            kind = part[0]
            if kind == 0:
                add(part[1])
            elif kind == 3:
                options = part[1]
                if links is None:
                    add(options[int(rand() * len(options))])
                else:
                    i = links.get(options)
                    if i is None:
                        i = links[options] = int(rand() * len(options))
                    add(options[i])
            elif kind == 4:
                you = self._you
                add(you[int(rand() * len(you))])
            elif kind == 1:
                value = ctx.get(part[1])
                if value is None:
                    raise _NoFit(part[1])
                if value.__class__ is _Lazy:  # a capture's further field: expanded where it is used
                    sub = ctx if value.overlay is None else {**ctx, **value.overlay}
                    value = self._expand(value.parts, sub, value.flags, value.aliases, rng, value.links)
                if part[2] and value:
                    value = value[0].upper() + value[1:]
                elif value[:1] in _VOWELS and out and out[-1][-2:] in _A_SPACE and out[-1][-3:-2] in _BEFORE_A:
                    out[-1] = out[-1][:-1] + "n "  # "a {park} mural" with Elm Park: "an Elm Park mural"
                add(value)
            else:
                if part[1]:
                    target = aliases.get(part[1])
                    if target is None:
                        raise _NoFit(part[3])
                    name = target + part[2]
                    if part[1] == "city" and name not in _POOLS:
                        name = "city.default" + part[2]
                else:
                    name = part[3]
                if flags is not self._ec_flags:
                    self._ec_flags = flags
                    self._ec = {}
                entries = self._ec.get(name)
                if entries is None:
                    entries = self._ec[name] = _eligible(name, flags)
                if not entries:
                    raise _NoFit(name)
                if name in self._kinds:
                    value = self._expand_kept(name, entries, part, ctx, flags, aliases, rng)
                    if part[4] and value:
                        value = value[0].upper() + value[1:]
                    add(value)
                    continue
                entry = entries[int(rand() * len(entries))]
                if part[5]:  # a capture: its fields share their [a|b] choices
                    chosen: dict = {}
                    value = self._expand(entry.parts, ctx, flags, aliases, rng, chosen)
                    ctx[part[5]] = value
                    for field_name, fparts in zip(part[6], entry.fields):
                        ctx[field_name] = _Lazy(fparts, flags, aliases, chosen)
                else:
                    value = self._expand(entry.parts, ctx, flags, aliases, rng)
                if part[4] and value:
                    value = value[0].upper() + value[1:]
                add(value)
        return "".join(out)

    def _expand_kept(self, name: str, entries: tuple[_Entry, ...], part: tuple, ctx: dict, flags: int,
                     aliases: dict[str, str], rng: random.Random) -> str:
        """A draw from a persona-fact or story pool (``self._kinds[name]``): a fact keeps the entry,
        choices and names it was first drawn with; a story skips the entries told already."""
        if self._kinds[name] == "fact":
            kept = self._facts.get(name)
            if kept is not None and any(e is kept[0] for e in entries):
                entry, chosen, overlay = kept
                value = self._expand(entry.parts, {**ctx, **overlay}, flags, aliases, rng, chosen)
            else:
                entry = entries[int(rng.random() * len(entries))]
                chosen = {}
                overlay = {s: ctx[s] for s in _entry_slots(entry) if isinstance(ctx.get(s), str)}
                value = self._expand(entry.parts, ctx, flags, aliases, rng, chosen)
                self._facts[name] = (entry, chosen, overlay)  # kept once it could be told
            self._drawn.append(("fact", name))
        else:
            told = self._stories
            fresh = [e for e in entries if id(e) not in told]
            if not fresh:
                if not self._retell:
                    raise _NoFit(name)  # every story of the pool was told: the topic rests
                fresh = list(entries)
            entry = fresh[int(rng.random() * len(fresh))]
            self._drawn.append(("story", id(entry)))
            chosen, overlay = {}, None
            value = self._expand(entry.parts, ctx, flags, aliases, rng, chosen)
        if part[5]:
            ctx[part[5]] = value
            for field_name, fparts in zip(part[6], entry.fields):
                ctx[field_name] = _Lazy(fparts, flags, aliases, chosen, overlay)
        return value

    def _told_beat(self, topic: str, beat: str, aliases: dict[str, str]) -> bool:
        """The beat's answer is a persona fact told already (asked again, it would be told again)."""
        told = self._told
        if not told:
            return False
        for entry in _POOLS[f"{topic}.{beat}.ans"].entries:
            names = [(aliases.get(p[1], "") + p[2]) if p[1] else p[3] for p in entry.parts if p[0] == 2]
            if not any(n in told for n in names):
                return False
        return True

    def _name_once(self, text: str) -> str:
        """Address the user by name once per turn at most (keep the first ", <name>")."""
        address = self._address
        if not address or text.count(address) < 2:
            return text
        head, _, tail = text.partition(address)
        return head + address + tail.replace(address, "")

    def _line(self, pool: str, ctx: dict[str, str], flags: int, aliases: dict[str, str],
              pending: set[str], minimum: int = MIN_WORDS, most: int = 99, fit: bool = False) -> str | None:
        """A fresh utterance from ``pool``: not said before, accepted by ``avoid``, with
        ``minimum`` (MIN_WORDS unless told) to ``most`` words and at most MAX_TOKENS tokens.
        ``fit``: draw only from the entries that can have so many words (for pools of plain text)."""
        rng = self._rng
        rand = rng.random
        if flags is not self._ec_flags:
            self._ec_flags = flags
            self._ec = {}
        entries = self._ec.get(pool)
        if entries is None:
            entries = self._ec[pool] = _eligible(pool, flags)
        if fit:  # only the entries that can have so many words
            key = (pool, flags & _RELEVANT[pool], minimum, most)
            fit = _FITS.get(key)
            if fit is None:
                if len(_FITS) > 200_000:
                    _FITS.clear()
                fit = _FITS[key] = tuple(e for e in entries if _WORDS[id(e)][0] <= most and _WORDS[id(e)][1] >= minimum)
            entries = fit
        if not entries:
            return None
        said = self._said
        address = self._address
        stale = 0  # attempts that gave a text already rejected: the pool has nothing new
        rejected: set[str] | None = None
        for _ in range(10):
            entry = entries[int(rand() * len(entries))]
            try:
                text = self._expand(entry.parts, ctx, flags, aliases, rng)
            except _NoFit:
                continue
            if "  " in text or text[:1] == " " or text[-1:] == " ":
                text = " ".join(text.split())
            if " ," in text or " ." in text or " ?" in text or " !" in text:
                text = _SPACE_PUNCT.sub(r"\1", text)
            if not text:
                continue
            text = text[0].upper() + text[1:]
            if address and text.count(address) > 1:
                text = self._name_once(text)
            key = text.casefold()
            words = text.count(" ") + 1
            if (words < minimum or words > most or key in said or key in pending
                    or len(text) > _SURELY_SHORT and count_tokens(text) > MAX_TOKENS or repeats_itself(text)
                    or self.strict and near_key(text) in self._cores or not self._avoid(text)):
                if rejected is None:
                    rejected = {key}
                elif key in rejected:
                    stale += 1
                    if stale >= 3:
                        return None
                else:
                    rejected.add(key)
                continue
            pending.add(key)
            if self.strict:
                self._cores.add(near_key(text))
            return text
        return None

    # -- topics ------------------------------------------------------------------------------

    def _context(self, when: datetime) -> tuple[dict[str, str], int, dict[str, str]]:
        day = self._day(when.date())
        # One context dict per day, reused: exchange slots are reassigned below, and a capture
        # is always set before it is read within an exchange (checked when the banks load).
        ctx = day.base
        rng = self._rng
        names = self._colleagues
        if self._absent:  # nobody the office shows away that day is in the day's talk
            names = [c for c in names if not any(a <= when.date() <= b for a, b in self._absent.get(c, ()))] or names
        if names:
            i = int(rng.random() * len(names))
            ctx["colleague"] = names[i]
            if len(names) > 1:
                j = int(rng.random() * (len(names) - 1))
                ctx["colleague2"] = names[j + (j >= i)]
        if self._projects:
            i = int(rng.random() * len(self._projects))
            ctx["project"] = self._projects[i]
            if len(self._projects) > 1:
                j = int(rng.random() * (len(self._projects) - 1))
                ctx["project2"] = self._projects[j + (j >= i)]
        self._kid_slots(rng, ctx)
        if self._exchange_bits < 0:
            self._exchange_bits = self._slot_bits(ctx)
        flags = self._persona_flags | day.flags | self._time_flags(when) | self._kid_flags(ctx) | self._exchange_bits
        return ctx, flags, day.aliases

    def _fitting(self, group: str, pairs: int, flags: int) -> tuple[str, ...]:
        """The topics of ``group`` that can make ``pairs`` pairs under ``flags`` (cached)."""
        key = (group, min(pairs, 6), flags & _GROUP_RELEVANT[group])
        found = _FITTING.get(key)
        if found is None:
            if len(_FITTING) > 200_000:
                _FITTING.clear()
            found = _FITTING[key] = tuple(
                t for t in _GROUP_TOPICS[group]
                if _eligible(_TOPIC_INFO[t][2], flags) and (pairs == 1 or len(self._usable_beats(t, flags)) >= pairs - 1))
        return found

    @staticmethod
    def _usable_beats(topic: str, flags: int) -> list[str]:
        key = (topic, flags & _TOPIC_RELEVANT[topic])
        found = _BEATS_NOW.get(key)
        if found is None:
            if len(_BEATS_NOW) > 200_000:
                _BEATS_NOW.clear()
            found = _BEATS_NOW[key] = tuple(
                beat for beat in _TOPIC_BEATS[topic]
                if _eligible(f"{topic}.{beat}.ask", flags) and _eligible(f"{topic}.{beat}.ans", flags)
                and _eligible(f"{topic}.{beat}.end", flags))
        return list(found)

    def _compose(self, topic: str, pairs: int, ctx: dict[str, str], flags: int,
                 aliases: dict[str, str]) -> list[tuple[str, str]] | None:
        self._drawn = []
        out = self._compose_lines(topic, pairs, ctx, flags, aliases)
        if out is not None:  # the facts and stories of this exchange are told now
            for kind, what in self._drawn:
                if kind == "fact":
                    self._told.add(what)  # type: ignore[arg-type]
                else:
                    self._stories.add(what)  # type: ignore[arg-type]
        self._drawn = []
        return out

    def _compose_lines(self, topic: str, pairs: int, ctx: dict[str, str], flags: int,
                       aliases: dict[str, str]) -> list[tuple[str, str]] | None:
        pending: set[str] = set()
        first = self._line(f"{topic}.open", ctx, flags, aliases, pending)
        if first is None:
            return None
        out = [("user", first)]
        if pairs == 1:
            reply = self._line(f"{topic}.reply", ctx, flags, aliases, pending)
            if reply is None:
                return None
            out.append(("assistant", reply))
            self._said.update(pending)
            return out
        usable = [b for b in self._usable_beats(topic, flags) if not self._told_beat(topic, b, aliases)]
        if len(usable) < pairs - 1:
            return None
        if pairs == 2:
            beats = [usable[int(self._rng.random() * len(usable))]]
        else:
            chosen = set(self._rng.sample(usable, pairs - 1))
            beats = [b for b in usable if b in chosen]  # bank order: the order of a natural conversation
        # The assistant reacts to what the user just said (the reply to the opening line, or the
        # last word of the previous beat) and then asks the next follow-up, in one turn.
        react = f"{topic}.reply"
        for beat in beats[:pairs - 1]:
            pre = f"{topic}.{beat}."
            # The user's opening line always gets a reaction, later answers now and then: a short
            # question after a reaction, a longer one on its own (either, if the pool has no other).
            joined = react.endswith(".reply") or self._rng.random() < _REACT_SHARE
            ask = self._line(pre + "ask", ctx, flags, aliases, pending, minimum=1, most=MIN_WORDS - 1, fit=True) \
                if joined else self._line(pre + "ask", ctx, flags, aliases, pending, fit=True)
            if ask is None:
                ask = self._line(pre + "ask", ctx, flags, aliases, pending, minimum=1)
            if ask is None:
                return None
            ask_words = ask.count(" ") + 1
            if ask_words < MIN_WORDS or joined:
                # the reaction and the question together make the utterance: MIN_WORDS between them
                reaction = self._line(react, ctx, flags, aliases, pending, minimum=max(1, MIN_WORDS - ask_words))
                joined = self._name_once(f"{reaction} {ask}") if reaction is not None else ""
                if (joined and joined.casefold() not in self._said and joined.casefold() not in pending
                        and not _too_long(joined) and not repeats_itself(joined)):
                    pending.discard(ask.casefold())
                    ask = joined
                    pending.add(ask.casefold())
                elif ask_words < MIN_WORDS:
                    return None
            ans = self._line(pre + "ans", ctx, flags, aliases, pending)
            if ans is None:
                return None
            out += [("assistant", ask), ("user", ans)]
            react = pre + "end"
        end = self._line(react, ctx, flags, aliases, pending)
        if end is None:
            return None
        out.append(("assistant", end))
        self._said.update(pending)  # the reactions said inside a follow-up count as said, too
        return out

    def _run(self, group: str, when: datetime, pairs: int) -> list[tuple[str, str]]:
        if pairs < 1:
            raise ValueError(f"pairs must be at least 1, got {pairs}")
        day = when.date()
        if day != self._today:
            self._today = day
            self._today_uses = {}
        lines = self._draw_topic(group, when, pairs, retell=False)
        if lines is not None:
            return lines
        if group == "talk" and pairs > 1:
            # No single topic has room for so many pairs now: talk about two things in a row.
            first = pairs // 2
            return self._run(group, when, first) + self._run(group, when, pairs - first)
        # Only now may a story be told again (a history of weeks has told every one), and only
        # when the caller has nothing else to say (not ``strict``): a history that can fill the
        # time with other talk never tells the same story twice.
        if not self.strict:
            lines = self._draw_topic(group, when, pairs, retell=True)
            if lines is not None:
                return lines
        raise WordingsExhausted(f"small talk: cannot compose a {group} of {pairs} pair(s) for {when.isoformat()}: "
                                "every fitting wording was used already or rejected by avoid()")

    def _draw_topic(self, group: str, when: datetime, pairs: int, retell: bool) -> list[tuple[str, str]] | None:
        """An exchange on a topic that fits now, or None; ``retell``: stories told already may be
        told again."""
        self._retell = retell
        try:
            return self._draw_topic_now(group, when, pairs)
        finally:
            self._retell = False

    def _draw_topic_now(self, group: str, when: datetime, pairs: int) -> list[tuple[str, str]] | None:
        ctx, flags, aliases = self._context(when)
        # The topics that fit now (cached checks), weighted: less weight for topics used often,
        # used today already, or among the last few.
        recent = self._recent[-3:]
        uses, today_uses, rare_used = self._topic_uses, self._today_uses, self._rare_used
        fitting = self._fitting(group, pairs, flags)
        rand = self._rng.random
        tried: set[str] = set()
        for capped in (True, False):  # past a topic's daily cap only when nothing else fits
            topics: list[str] = []
            weights: list[float] = []
            for topic in fitting:
                base, rare, _, per_day = _TOPIC_INFO[topic]
                today = today_uses.get(topic, 0)
                if capped and today >= per_day or rare and topic in rare_used or topic in tried:
                    continue
                w = base / ((1.0 + 0.35 * uses.get(topic, 0)) * (1.0 + 4.0 * today))
                topics.append(topic)
                weights.append(w * 0.05 if topic in recent else w)
            while topics:
                x = rand() * sum(weights)
                k = 0
                for k, w in enumerate(weights):  # noqa: B007 - k is the drawn index
                    x -= w
                    if x < 0:
                        break
                topic = topics.pop(k)
                del weights[k]
                tried.add(topic)
                lines = None
                for _attempt in range(1 if group == "talk" else 8):  # openers and closers: one topic each
                    lines = self._compose(topic, pairs, ctx, flags, aliases)
                    if lines is not None:
                        break
                    ctx, flags, aliases = self._context(when)  # fresh colleague, project ... for the next try
                if lines is None:
                    continue
                uses[topic] = uses.get(topic, 0) + 1
                today_uses[topic] = today_uses.get(topic, 0) + 1
                if _TOPIC_INFO[topic][1]:
                    rare_used.add(topic)
                self._recent.append(topic)
                del self._recent[:-6]
                self.log.append((when, topic, lines))
                return lines
        return None

    # -- public ------------------------------------------------------------------------------

    def opener(self, when: datetime) -> list[tuple[str, str]]:
        """The first exchange of a session: [("user", ...), ("assistant", ...)], fitting the time of day and weekday."""
        return self._run("opener", when, 1)

    def closer(self, when: datetime) -> list[tuple[str, str]]:
        """The last exchange of a session (user says they are stopping / heading off), one pair."""
        return self._run("closer", when, 1)

    def exchange(self, when: datetime, pairs: int) -> list[tuple[str, str]]:
        """Exactly `pairs` (>= 1) user/assistant pairs of small talk, user first, alternating, fitting `when`."""
        return self._run("talk", when, pairs)
