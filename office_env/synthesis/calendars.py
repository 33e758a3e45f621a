"""The calendars of a world: the user's and a few colleagues' weeks around "now", a day someone's
mail says they are away kept free in their calendar."""

from __future__ import annotations

import functools
import random
from datetime import date, datetime, timedelta

from office_env.apps import get_app
from office_env.formats import ics_io
from office_env.formats.ics_io import CalendarEvent
from office_env.synthesis.check import OUT_OF_OFFICE
from office_env.synthesis.common import Away, Files, iso
from office_env.synthesis.world import CALENDAR_WEEKS, ROLES, Person, World

_EVENT_TITLES = (
    "{project} status review", "Budget check-in", "Vendor call", "Quarterly planning", "Design review",
    "Interview: {role} candidate", "Focus time", "Training: data privacy", "Client demo", "All-hands",
    "Hiring sync", "Expense approvals", "{project} kickoff", "Team retrospective", "Office move planning",
    "Supplier negotiation", "Onboarding session", "Board prep",
)
_LOCATIONS = ("Room 2A", "Room 3B", "Board room", "Video call", "Cafe corner", "")
_DURATIONS = (30, 60, 60, 60, 90, 120)


class _Weeks:
    """Busy intervals of one person over the calendar's weeks; places events without overlap."""

    def __init__(self, monday: date, weeks: int) -> None:
        self.monday, self.weeks = monday, weeks
        self.busy: list[tuple[datetime, datetime]] = []

    def free(self, start: datetime, end: datetime) -> bool:
        return all(end <= s or start >= e for s, e in self.busy)

    def candidates(self, rng: random.Random, minutes: int, week: int | None = None) -> list[datetime]:
        """Free-or-not start times on the half hour, 09:00-17:00 on weekdays, shuffled; ``week``:
        only that week's."""
        out = list(_starts(self.monday, self.weeks, minutes, week))
        rng.shuffle(out)
        return out


@functools.lru_cache(maxsize=256)
def _starts(monday: date, weeks: int, minutes: int, week: int | None) -> tuple[datetime, ...]:
    """The start times :meth:`_Weeks.candidates` shuffles, in order: a world places a hundred
    events on the same few weeks, each asking for the same lists."""
    out = []
    offsets = range(7 * weeks) if week is None else range(7 * week, 7 * week + 7)
    for offset in offsets:
        day = monday + timedelta(days=offset)
        if day.weekday() >= 5:
            continue
        first = datetime(day.year, day.month, day.day, 9)
        for step in range(0, (17 * 60 - 9 * 60 - minutes) // 30 + 1):
            out.append(first + timedelta(minutes=30 * step))
    return tuple(out)


def calendars(world: World, rng: random.Random, away: Away | None = None) -> Files:
    """The user's calendar and a few colleagues' over ``CALENDAR_WEEKS``. A colleague whose mail
    says they are away (``away``) has a calendar, and those days are blocked in it before anything
    is placed: a meeting found free for them never falls on a day they said they are out."""
    monday = world.now.date() - timedelta(days=world.now.weekday()) - timedelta(days=7)
    owners = [p for p in world.colleagues if p.user in (away or {})]  # at most three: one per kind of absence
    count = max(rng.randint(2, 3), len(owners))
    owners = [world.user] + owners + rng.sample([p for p in world.colleagues if p not in owners], count - len(owners))
    weeks = {p.user: _Weeks(monday, CALENDAR_WEEKS) for p in owners}
    events: dict[str, list[CalendarEvent]] = {p.user: [] for p in owners}
    titles: dict[str, set[str]] = {p.user: set() for p in owners}
    for person in owners:
        days = {first + timedelta(days=offset) for first, last in (away or {}).get(person.user, ())
                for offset in range((last - first).days + 1)}
        for day in sorted(d for d in days if d.weekday() < 5 and 0 <= (d - monday).days < 7 * CALENDAR_WEEKS):
            start, end = datetime(day.year, day.month, day.day, 9), datetime(day.year, day.month, day.day, 17)
            weeks[person.user].busy.append((start, end))
            events[person.user].append(CalendarEvent(f"{OUT_OF_OFFICE} ({iso(day)})", start, end, ""))

    def place(people: list[Person], summary: str, location: str, durations: tuple[int, ...] = _DURATIONS,
              week: int | None = None) -> bool:
        if any(summary in titles[p.user] for p in people):
            return False
        minutes = rng.choice(durations)
        for start in weeks[people[0].user].candidates(rng, minutes, week):
            end = start + timedelta(minutes=minutes)
            if all(weeks[p.user].free(start, end) for p in people):
                for p in people:
                    weeks[p.user].busy.append((start, end))
                    events[p.user].append(CalendarEvent(summary, start, end, location))
                    titles[p.user].add(summary)
                return True
        return False

    # Meetings the user shares with each colleague who has a calendar, every week.
    for colleague in owners[1:]:
        for week in range(CALENDAR_WEEKS):
            for _ in range(rng.randint(1, 2)):
                summary = rng.choice((f"1:1 with {colleague.first}", f"{rng.choice(world.projects)} sync",
                                      f"{colleague.first} / {world.user.first} catch-up",
                                      f"Planning with {colleague.first}",
                                      f"{rng.choice(world.projects)} working session"))
                # a title once per person
                place([world.user, colleague], summary, rng.choice(_LOCATIONS), (30, 60), week)
    for person in owners:
        for week in range(CALENDAR_WEEKS):  # every week gets its own events
            placed, attempts = 0, 0
            target = rng.randint(3, 7)
            while placed < target and attempts < 50:
                attempts += 1
                summary = rng.choice(_EVENT_TITLES).format(project=rng.choice(world.projects), role=rng.choice(ROLES))
                placed += place([person], summary, rng.choice(_LOCATIONS), week=week)
    out: Files = []
    for person in owners:
        items = sorted(events[person.user], key=lambda e: (e.start, e.summary))
        path = f"{get_app('calendar').folder}{person.user}{get_app('calendar').suffix}"
        out.append((path, "calendar", ics_io.build(items, person.user, world.now)))
    return out


# -- the testbed -------------------------------------------------------------------------------
