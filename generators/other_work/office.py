"""What one history's talk about other work may name, and when: the office (its people, projects
and documents), where people are (away, or tied to a storyline) and the moment an exchange is said
at. The composer (:class:`generators.other_work.composer.OtherWork`) makes them and moves the clock;
its slot values (:class:`generators.other_work.makers.SlotValues`) read them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterable


@dataclass(frozen=True)
class Office:
    """Who and what a history's other work may name, fixed for the history."""

    user: str  # the user's first name
    company: str
    domain: str  # the company's mail domain ("northwind.com")
    currency: str  # the spoken prefix of an amount ("$", "EUR ")
    people: tuple[str, ...]  # the office's colleagues: never away on leave, never given an address
    outsiders: tuple[str, ...]  # people outside the office (a supplier's staff), never a colleague
    projects: tuple[str, ...]
    files: tuple[str, ...]  # the office's documents, by name as the user sees them (no folder)
    sheets: tuple[str, ...]  # those of them with rows and figures (a figure is in a sheet, never a PDF)
    docs: tuple[str, ...]  # those of them that are documents or PDFs
    stems: frozenset[str]  # each document's name without its extension, in lower case

    def like_office_file(self, name: str) -> bool:
        """An invented file name that starts with an office document's name, or whose name an
        office document's starts with: it could be taken for the office's own file."""
        stem = name.rsplit(".", 1)[0].lower()
        return any(stem.startswith(o) or o.startswith(stem) for o in self.stems)


class Whereabouts:
    """Who may be named on which day: the colleagues the office shows away, the suppliers'
    contacts a storyline has away, and the people and projects tied to open storylines."""

    def __init__(self, absent: dict[str, list[tuple[date, date]]]) -> None:
        self.absent = absent  # colleague -> the spans the office shows them away (first day first)
        self.away_until: dict[str, date] = {}  # a supplier's contact -> their first day back
        self.busy: set[str] = set()  # people and projects tied to open storylines

    def is_away(self, person: str, today: date) -> bool:
        """A supplier's contact a storyline has away today."""
        back = self.away_until.get(person)
        return back is not None and today < back

    def clear(self, person: str, days: Iterable[date]) -> bool:
        """``person`` is not shown away by the office on any of ``days``."""
        spans = self.absent.get(person)
        return not spans or not any(first <= d <= last for d in days for first, last in spans)

    def clear_through(self, person: str, first: date, last: date) -> bool:
        """``person`` is not shown away by the office on any day from ``first`` to ``last``
        (``clear`` of every day between, told by the spans alone)."""
        spans = self.absent.get(person)
        return not spans or not any(start <= last and first <= end for start, end in spans)


class Clock:
    """The moment the exchange being composed is said at (its day, and the time of day)."""

    now: datetime
    today: date

    def __init__(self, now: datetime) -> None:
        self.move_to(now)

    def move_to(self, when: datetime) -> None:
        self.now = when
        self.today = when.date()
