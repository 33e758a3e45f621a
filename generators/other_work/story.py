"""A storyline's pieces: working-day arithmetic, an exchange's slot values (made on first use,
undone on rejection), the arcs that run over several days, and the plan of one exchange."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from generators.other_work.bank import Frag

# --------------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------------


def add_workdays(d: date, n: int) -> date:
    step = 1 if n >= 0 else -1
    left = abs(n)
    while left:
        d += timedelta(days=step)
        if d.weekday() < 5:
            left -= 1
    return d


def workdays_between(a: date, b: date) -> int:
    """Working days after ``a`` up to and including ``b`` (0 when b <= a)."""
    n = 0
    while a < b:
        a += timedelta(days=1)
        if a.weekday() < 5:
            n += 1
    return n


def month_add(d: date, n: int) -> tuple[int, int]:
    m = d.month - 1 + n
    return d.year + m // 12, m % 12 + 1



class NoValue(Exception):
    """A slot cannot be filled here (no free colleague, say); the fragment is skipped."""




class Ctx(dict):
    """Slot values for one storyline's exchange, made on first use and undone on rejection."""

    __slots__ = ("maker", "new", "deps", "seen", "days", "told")
    # days: the day each date slot names (made or given by the storyline); told: the days the
    # lines said so far in this exchange name
    maker: Callable[[Ctx, str], str]
    new: list[str]
    deps: dict[str, set[str]]
    seen: set[Frag]
    days: dict[str, date]
    told: list[date]

    def __missing__(self, key: str) -> str:
        value = self.maker(self, key)
        self[key] = value
        self.new.append(key)
        return value

    def put(self, key: str, value: str) -> None:
        if key not in self:
            self.new.append(key)
        self[key] = value

    def rollback(self) -> None:
        for key in self.new:
            self.pop(key, None)
            self.deps.pop(key, None)
            self.days.pop(key, None)
        self.new.clear()


@dataclass(eq=False)
class Arc:
    """One storyline: its kind, stage, dates and the values said about it so far."""

    kind: str
    vals: dict[str, str]
    stage: str = ""
    last: date | None = None
    said: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    dates: dict[str, date] = field(default_factory=dict)
    nums: dict[str, int] = field(default_factory=dict)
    mentions: int = 0
    closed: bool = False


@dataclass
class Plan:
    kind: str
    stage: str
    base: dict[str, str]
    arc: Arc | None = None
    said: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    update: Callable[[], None] | None = None  # the arc's state change, applied on success
    ctx: dict[str, str] = field(default_factory=dict)  # the slot values the exchange used
    days: dict[str, date] = field(default_factory=dict)  # the day each date slot of ``base`` names


def working_days(n: int) -> str:
    """``1 working day``, ``3 working days`` (the slots late_days and slip_days carry their noun)."""
    return f"{n} working day" if n == 1 else f"{n} working days"


# "a" before a slot value that is said with a vowel sound: "an invoice audit", "an 8% raise",
# "an Umbra Security Hardening review", "an Urban ..." (a capital U only where it sounds "uh", not
# "you": "a Unity rollout", "a UX review", "a Utah office").
AN = re.compile(r"\b([Aa]) (?!EUR )(?=[aeioAEIO]|U(?:m|l|p|rb|nd|nt|nc|gl|tt)|8|1[18](?!\d))")


FILE_NAME = re.compile(r"\b[\w-]+\.(?:xlsx|xls|csv|docx|doc|pdf|pptx|zip|txt)\b", re.I)
# a file name's ending alone: found (or not) at once, where FILE_NAME tries every word of a line
FILE_ENDING = re.compile(r"\.(?:xlsx|xls|csv|docx|doc|pdf|pptx|zip|txt)\b", re.I)


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _NOT_SLUG.sub("_", text.lower()).strip("_") or "project"


def fill(frag: Frag, ctx: Ctx) -> tuple[str, set[str]]:
    """``frag`` with its slots filled from ``ctx`` (values made on first use), and the slots it used:
    its own and those its values were made from (a supplier's address from its name)."""
    text = frag.text.format_map(ctx) if frag.slots else frag.text
    if frag.an:
        text = AN.sub(r"\1n ", text)
    used = set(frag.slots)
    deps = ctx.deps
    if deps:
        for s in frag.slots:
            extra = deps.get(s)
            if extra:
                used |= extra
                for e in extra:
                    more = deps.get(e)
                    if more:
                        used |= more
    return text, used
