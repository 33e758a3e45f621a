"""Dates as people write them, read by python-dateutil in the office's own order.

``04/05/2025`` is the 4th of May in Leeds and the 5th of April in Chicago: which one a numeric date
means is the office city's convention (``day_first``: True day first, False month first, None
unknown: both readings count). A date no order can misread (``13/10/2025``, ``10/13``, ``5 May``)
reads the same everywhere. Finding where a text writes a date is the caller's (its regular
expressions only mark candidate spans); what a span means is dateutil's parser's.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from dateutil import parser as _parser

# the year a date written without one is read in: a leap year, so that 29 February is a date too
NO_YEAR = datetime(2000, 1, 1)
_FILLER_RE = re.compile(r"\bthe\s")  # "the 18th of December", "March the 5th": dateutil reads neither
# a day and a month in numbers with no year after them: "21/10", "10/21" (a slash only: "10.5" is a
# number, "10-12" a range)
YEARLESS_NUMERIC_RE = re.compile(r"(?<![\d/.,-])(\d{1,2})/(\d{1,2})(?![\d/]|[.,]\d)")


@lru_cache(maxsize=1024)  # a mailbox repeats its dates, and check after check reads it
def read(span: str, day_first: bool | None) -> frozenset[tuple[int, int, int]]:
    """(year, month, day) of each date ``span`` may mean in an office whose order is ``day_first``
    (both orders when None); the year is 2000 when the span writes none. Empty when it is no date."""
    text = _FILLER_RE.sub("", span)
    out = set()
    # the office's order first; a date that order cannot read ("13/10" month first) is read the other
    # way, being the only date it can be (dateutil swaps a three-part date itself, not a two-part one)
    for order in (True, False) if day_first is None else (day_first, not day_first):
        try:
            moment = _parser.parse(text, dayfirst=order, yearfirst=False, default=NO_YEAR)
        except (ValueError, OverflowError):
            continue
        out.add((moment.year, moment.month, moment.day))
        if day_first is not None:
            break
    return frozenset(out)


def numeric_yearless(text: str, day_first: bool | None) -> set[tuple[int, int]]:
    """(month, day) of each date ``text`` writes in numbers without a year ("21/10")."""
    found: set[tuple[int, int]] = set()
    if "/" not in text:  # what every match holds: a long text is spared the pattern's pass
        return found
    for match in YEARLESS_NUMERIC_RE.finditer(text):
        found |= {(month, day) for _, month, day in read(match.group(0), day_first)}
    return found
