"""Calendar facts, not wording: the climate, hemisphere and country of the cities in use, the
seasons and the holidays small talk may speak of."""

from __future__ import annotations

from datetime import date, timedelta

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
CLIMATES: dict[str, dict[str, dict[str, float]]] = {
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
DEFAULT_CLIMATE = ("maritime", "north", "xx", False)
# Where snow can fall at all, and so where a "first snow" makes sense.
SNOWY = frozenset({"continental", "mountain", "pacific", "maritime", "rhone"})
# Where a summer heat wave is a thing people talk about.
HEAT = frozenset({"continental", "mountain", "south_us", "rhone", "atlantic", "south_temperate",
                   "pacific", "maritime", "cape"})

NORTH_SEASONS = ("winter", "winter", "spring", "spring", "spring", "summer", "summer", "summer",
                  "autumn", "autumn", "autumn", "winter")
SOUTH_SEASONS = ("summer", "summer", "autumn", "autumn", "autumn", "winter", "winter", "winter",
                  "spring", "spring", "spring", "summer")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DAY_FLAGS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
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
