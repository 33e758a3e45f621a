"""When the turns of a day's chat are said: the working days a history covers and the timestamps
of a session (a start at a varied time of day, 20-150 s between turns, at most one break).

Both dialogue writers stamp turns here: the offline writer as it writes (``SessionClock``), the llm
writer afterwards for a day whose model-given times do not hold (``timestamps``)."""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta

_START_EARLIEST = 8 * 3600 + 30 * 60  # 08:30:00
_START_LATEST = 10 * 3600  # 10:00:00
_GAP_MIN, _GAP_MAX = 20, 150  # seconds between turns
_DATE_FORMAT = "%Y-%m-%d"
_TS_FORMAT = f"{_DATE_FORMAT}T%H:%M:%S"



def working_days_before(day: date, count: int) -> list[date]:
    """The ``count`` working days (Monday-Friday) strictly before ``day``, ascending."""
    out: list[date] = []
    current = day
    while len(out) < count:
        current -= timedelta(days=1)
        if current.weekday() < 5:
            out.append(current)
    out.reverse()
    return out


def timestamps(day: date, n: int, rng: random.Random) -> list[str]:
    """``n`` strictly increasing ISO timestamps on ``day``, starting in the morning."""
    start = rng.randint(_START_EARLIEST, _START_LATEST)
    lo, hi = _GAP_MIN, _GAP_MAX
    room = 86399 - start
    if n > 1 and (n - 1) * hi > room:  # very long days: squeeze the gaps to stay on the date
        hi = room // (n - 1)
        if hi < 1:
            start, hi = 0, 86399 // (n - 1)
        lo = min(lo, hi)
    midnight = datetime.combine(day, time())
    prefix = midnight.strftime(_DATE_FORMAT)
    out: list[str] = []
    seconds = start
    for i in range(n):
        if i:
            seconds += rng.randint(lo, hi)
        out.append(_stamp(midnight, prefix, seconds))
    return out


_TWO_DIGITS = tuple(f"{n:02d}" for n in range(60))  # an hour, minute or second as a stamp writes it


def _stamp(midnight: datetime, prefix: str, seconds: int) -> str:
    """``midnight`` + ``seconds`` in ``_TS_FORMAT`` (``prefix``: the day in ``_DATE_FORMAT``);
    built from the clock's digits within the day, since strftime (or a format spec) on every turn adds up."""
    if 0 <= seconds < 86400:
        hours, rest = divmod(seconds, 3600)
        minutes, rest = divmod(rest, 60)
        return f"{prefix}T{_TWO_DIGITS[hours]}:{_TWO_DIGITS[minutes]}:{_TWO_DIGITS[rest]}"
    return (midnight + timedelta(seconds=seconds)).strftime(_TS_FORMAT)


class SessionClock:
    """Timestamps of one session, handed out as turns are written: a start at a varied time of
    day, 20-150 s between turns, and at most one break of a few hours; never past the date."""

    def __init__(self, day: date, turns: int, rng: random.Random) -> None:
        self.rng = rng
        self.day = day
        window = rng.choices(((8 * 3600, 10 * 3600 + 1800), (10 * 3600 + 1800, 13 * 3600), (13 * 3600, 16 * 3600)),
                             weights=(5, 2, 3))[0]
        self.seconds = rng.randint(*window)
        self.budget = max(1, turns + 4)
        self.stamps: list[str] = []
        self.midnight = datetime.combine(day, time())
        self._prefix = self.midnight.strftime(_DATE_FORMAT)
        self._room = 86399
        self._peeked: tuple[int, datetime] | None = None  # the last peek: asked again until the next tick

    def peek(self) -> datetime:
        peeked = self._peeked
        if peeked is None or peeked[0] != self.seconds:
            peeked = self._peeked = (self.seconds, self.midnight + timedelta(seconds=self.seconds))
        return peeked[1]

    def tick(self, count: int = 1) -> None:
        """Stamp ``count`` turns, each followed by a gap of 20-150 s, shorter when the turns left
        (of ``budget``) would not fit before midnight otherwise."""
        stamps, draw = self.stamps, self.rng.randrange  # randint(a, b) is randrange(a, b + 1)
        for _ in range(count):
            seconds = self.seconds
            stamps.append(_stamp(self.midnight, self._prefix, seconds))
            per_turn = (self._room - seconds) // max(1, self.budget - len(stamps))
            self.seconds = seconds + max(1, min(draw(_GAP_MIN, _GAP_MAX + 1), per_turn))

    def pause(self) -> None:
        """A break of 1.5-3 hours, if the rest of the session still fits before late evening."""
        left = max(0, self.budget - len(self.stamps))
        pause = self.rng.randint(5400, 10800)
        if self.seconds + pause + left * _GAP_MAX < 21 * 3600:
            self.seconds += pause
