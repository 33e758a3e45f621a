"""Times a task checks that follow a rule, with the rule's specifics said in the chat.

A booking's start is either a free hour found in the calendars ("the earliest hour we are both
free") or a fixed hour on a day found in the office ("at 10:00 on the day it falls due"). Either
way the clock times that decide it are a memory piece of their own -- a window of office hours or
a start time -- said by the user, sometimes said first and corrected later, so an agent that
forgets them or keeps the old value books the wrong hour. The verifier's trace checks that every
time, number and length of a rule is said where its pieces are said.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import NamedTuple

from generators.chances import DRAFT
from generators.families.base import TIME_FORMAT, FamilyInput, calendar_of, chance, computed, event_time, piece
from generators.model import MemoryPiece

# Office hours a booking must fall in (start hour, end hour); the calendars' free hours lie in 9-17.
WINDOWS = ((9, 17), (9, 16), (10, 17), (10, 16), (11, 17))
START_HOURS = (9, 10, 11, 14, 15)


def window_text(window: tuple[int, int]) -> str:
    return f"{window[0]}:00-{window[1]}:00"


def in_window(slot: tuple[datetime, datetime], window: tuple[int, int]) -> bool:
    start, end = slot
    return (start.hour >= window[0] and start.date() == end.date()
            and (end.hour, end.minute) <= (window[1], 0))


@dataclass(frozen=True)
class SlotChoice:
    """The first free slot of each future day under each window, and the window the chat gives."""

    window: tuple[int, int]
    firsts: dict[str, dict[date, tuple[datetime, datetime]]]  # window text -> day -> first slot in it
    superseded: tuple[str, ...]  # a window said first and corrected (it gives another slot that day)
    plain: dict[date, tuple[datetime, datetime]]  # day -> its first free slot, whatever the window

    @property
    def text(self) -> str:
        return window_text(self.window)

    def days(self) -> list[date]:
        """The days the chat may name: those where the window rules out the day's first free hour and
        the first free hour in it is not the window's own start (both the window and the calendar
        decide the time), else those where the calendar does, else all."""
        mine = self.firsts[self.text]
        found = [d for d, slot in mine.items() if slot[0].hour > self.window[0]]
        deciding = [d for d in found if self.plain.get(d) != mine[d]]
        return sorted(deciding or found or mine)

    def slot(self, day: date, window: str | None = None) -> tuple[datetime, datetime] | None:
        return self.firsts.get(window or self.text, {}).get(day)


def choose_window(inp: FamilyInput, slots: list[tuple[datetime, datetime]]) -> SlotChoice | None:
    """A window that leaves a free slot on a day after today, preferring one that on some day rules
    out the first free hour while the calendar still decides the time in it (``DRAFT.deciding_window`` of
    the time when there is one). Today is never offered: the chat was said on earlier days and
    cannot know how late it is now."""
    future = sorted(s for s in slots if s[0].date() > inp.now.date())
    if not future:
        return None
    plain: dict[date, tuple[datetime, datetime]] = {}
    for s in future:
        plain.setdefault(s[0].date(), s)
    firsts: dict[str, dict[date, tuple[datetime, datetime]]] = {}
    for window in WINDOWS:
        got: dict[date, tuple[datetime, datetime]] = {}
        for s in future:
            if in_window(s, window):
                got.setdefault(s[0].date(), s)
        if got:
            firsts[window_text(window)] = got
    options = [w for w in WINDOWS if window_text(w) in firsts]
    if not options:
        return None
    # a window is worth saying when on some day it rules out the first free hour, and the calendar
    # still decides the time (the first free hour in it is not its own start)
    deciding = [w for w in options
                if any(plain[d] != s and s[0].hour > w[0] for d, s in firsts[window_text(w)].items())]
    found = [w for w in options if any(s[0].hour > w[0] for s in firsts[window_text(w)].values())]
    pool = deciding if deciding and chance(inp, DRAFT.deciding_window) else found or options
    return SlotChoice(inp.rng.choice(pool), firsts, (), plain)


def with_correction(inp: FamilyInput, choice: SlotChoice, day: date) -> SlotChoice:
    """Sometimes a window said first and corrected later: one that gives another slot on ``day``
    (or none), so keeping the old window books the wrong hour."""
    mine = choice.slot(day)
    others = [w for w in WINDOWS if window_text(w) != choice.text and choice.slot(day, window_text(w)) != mine
              and window_text(w) not in choice.text and choice.text not in window_text(w)]
    if not others or not chance(inp, DRAFT.corrected_window):
        return choice
    return SlotChoice(choice.window, choice.firsts, (window_text(inp.rng.choice(others)),), choice.plain)


def window_piece(index: int, choice: SlotChoice, rule: str, about: str, thread: int = 1,
                 one_hour: bool = True) -> MemoryPiece:
    """The window as a piece of its own, whose text states the booking's ``rule``; said with the
    booking's length (one hour) unless the booking keeps the length it has (a meeting moved)."""
    return piece(index, "fact", f"for {about}, {rule}", choice.text, cue="time_window" if one_hour else "move_window",
                 about=about, thread=thread, superseded=choice.superseded)


def free_hours(calendar: dict | None, day: datetime, minutes: int, hours: tuple[int, ...]) -> tuple[int, ...]:
    """The ``hours`` at which a booking of ``minutes`` on ``day`` overlaps none of the calendar's
    events (a reminder the task asks for never double-books the user)."""
    return tuple(hour for hour in hours
                 if is_free(calendar, datetime(day.year, day.month, day.day, hour),
                            datetime(day.year, day.month, day.day, hour) + timedelta(minutes=minutes)))


def is_free(calendar: dict | None, start: datetime, end: datetime) -> bool:
    """Whether a booking from ``start`` to ``end`` overlaps none of the calendar's events."""
    return all(event_time(e["end"]) <= start or event_time(e["start"]) >= end
               for e in (calendar or {}).get("events", []))


def start_hour(inp: FamilyInput, day: datetime, minutes: int,
               hours: tuple[int, ...]) -> tuple[int, tuple[str, ...]] | None:
    """A start hour for a booking of ``minutes`` on ``day``: one of ``hours`` the user's calendar has
    free, and sometimes another one said first (any of ``START_HOURS``); None when none is free."""
    free = free_hours(calendar_of(inp.notes, inp.user), day, minutes, hours)
    if not free:
        return None
    hour = inp.rng.choice(free)
    others = [h for h in START_HOURS if h != hour and f"{h}:00" not in f"{hour}:00" and f"{hour}:00" not in f"{h}:00"]
    superseded = (f"{inp.rng.choice(others)}:00",) if others and chance(inp, DRAFT.corrected_window) else ()
    return hour, superseded


class Slot(NamedTuple):
    minutes: int
    hour: int
    said_first: tuple[str, ...]  # another start time, said first and corrected
    start: datetime
    end: datetime


def slot_on(inp: FamilyInput, day: datetime, lengths: tuple[int, ...], hours: tuple[int, ...]) -> Slot | None:
    """A booking on ``day`` at a fixed hour: its length drawn from ``lengths``, then its start hour
    (:func:`start_hour`); None when none of ``hours`` is free."""
    minutes = inp.rng.choice(lengths)
    picked = start_hour(inp, day, minutes, hours)
    if picked is None:
        return None
    hour, said_first = picked
    start = day.replace(hour=hour)
    return Slot(minutes, hour, said_first, start, start + timedelta(minutes=minutes))


def slot_times(start: datetime, minutes: int, rule: str, rule_given: tuple[str, ...],
               length_given: tuple[str, ...]) -> list[dict]:
    """How a booking's start (by its rule) and end (its length on) are worked out, and from which pieces."""
    begins = start.strftime(TIME_FORMAT)
    return [computed(begins, "rule", [], rule=rule, given=rule_given),
            computed((start + timedelta(minutes=minutes)).strftime(TIME_FORMAT), "add_minutes", [begins, str(minutes)],
                     given=length_given)]


def hour_of(said: str) -> int:
    """The hour of a start time as a start-time piece says it (``10:00`` -> 10)."""
    return int(said.split(":")[0])


def hour_piece(index: int, hour: int, rule: str, about: str, superseded: tuple[str, ...] = (),
               thread: int = 1) -> MemoryPiece:
    """The start time as a piece of its own; its text states ``rule`` (which names the hour)."""
    return piece(index, "action", f"{about} starts {rule}", f"{hour}:00", cue="start_time", about=about,
                 thread=thread, superseded=superseded)
