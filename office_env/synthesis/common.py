"""What every kind of a world's files shares: the kinds, the seeded stream of each, money and
dates as the documents write them, the staff list, and the types the builders pass along."""

from __future__ import annotations

import functools
import random
import re
from datetime import date, datetime, timedelta

from office_env.formats import xlsx_io
from office_env.seeding import COLON, rng
from office_env.synthesis.world import FIRST_NAMES, LAST_NAMES, ROLES, World

KINDS: tuple[str, ...] = (
    "salaries", "budget", "budget_old", "inventory", "sales", "sales_previous", "scores", "expenses",
    "purchase_orders", "meeting_notes", "meeting_notes_old", "report", "invoice", "invoice_paid", "contract",
    "handbook", "email", "calendar",
)

Files = list[tuple[str, str, bytes]]  # (testbed-relative path, kind, bytes)
Facts = dict[str, str]  # what later kinds (the mailbox) may mention: file names, invoice number

NEAR_MISS_MARK = "_old"  # a superseded copy beside the current file: budget_2025.xlsx, budget_2025_old.xlsx


def is_superseded(path: str) -> bool:
    """A file kept beside the one that replaced it (``budget_old.xlsx``): no task is set on it, no
    checked value may come from it alone; an agent must tell the two apart."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].endswith(NEAR_MISS_MARK)


def superseded_path(path: str) -> str:
    """Where the superseded copy of ``path`` is kept: ``data/budget_2025.xlsx`` -> ``data/budget_2025_old.xlsx``."""
    base, _, ext = path.rpartition(".")
    return f"{base}{NEAR_MISS_MARK}.{ext}"

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
UNSAFE = re.compile(r"[^A-Za-z0-9 _.-]+")


# -- helpers -----------------------------------------------------------------------------------

def kind_rng(world: World, kind: str) -> random.Random:
    return rng(world.seed, kind, legacy=COLON)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def format_money(value: float) -> str:
    return f"{value:,.2f}"


def iso(day: date | datetime) -> str:
    return day.strftime("%Y-%m-%d")


def workday_before(now: datetime, rng: random.Random, low: int, high: int) -> date:
    """A weekday from ``low`` to ``high`` days before ``now`` (the nearest earlier one if the
    range holds only a weekend)."""
    weekdays = _weekdays_back(now.date(), low, high)
    if weekdays:
        return rng.choice(weekdays)
    day = now.date() - timedelta(days=range(low, high + 1)[-1])  # the farthest day (IndexError for none)
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return day


@functools.lru_cache(maxsize=256)
def _weekdays_back(today: date, low: int, high: int) -> tuple[date, ...]:
    """The weekdays ``low`` to ``high`` days before ``today``, nearest first: a world's papers
    draw hundreds of days from the same few ranges."""
    days = [today - timedelta(days=k) for k in range(low, high + 1)]
    return tuple(day for day in days if day.weekday() < 5)


def due_date(issued: date) -> date:
    """When an invoice issued on ``issued`` falls due: 30 days on, moved to the next weekday (the
    invoice's terms say so), so no payment is due on a weekend."""
    due = issued + timedelta(days=30)
    while due.weekday() >= 5:
        due += timedelta(days=1)
    return due


def _extra_people(world: World, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """(name, role) of invented employees whose first and last names the world does not use."""
    used_first = {p.first for p in world.people}
    used_last = {p.last for p in world.people}
    firsts = rng.sample([f for f in FIRST_NAMES if f not in used_first], count)
    lasts = rng.sample([n for n in LAST_NAMES if n not in used_last], count)
    return [(f"{f} {n}", rng.choice(ROLES)) for f, n in zip(firsts, lasts)]


def staff(world: World) -> list[tuple[str, str]]:
    """(name, role) of everyone on the payroll: the world's people and 25-45 more, in a seeded
    order. Every sheet that lists employees draws from this one directory."""
    rng = kind_rng(world, "staff")
    people = [(p.name, p.role) for p in world.people]
    people += _extra_people(world, rng, rng.randint(25, 45))
    rng.shuffle(people)
    return people


def xlsx(rows: list[list], sheet: str, world: World) -> bytes:
    return xlsx_io.build(rows, sheet_name=sheet, stamp=world.now)


# -- spreadsheets ------------------------------------------------------------------------------

Away = dict[str, list[tuple[date, date]]]  # user -> (first, last) days their mail says they are away
