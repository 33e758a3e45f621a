"""Calendars: ``calendar/<user>.ics``, shared by the calendar tools and the catalog.

Event titles and places are one line each (``MAX_HEADER_CHARS`` at most), and a calendar is never
written larger than a reader accepts (``MAX_ICS_BYTES``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from office_env.errors import MissingFileError, OfficeError
from office_env.formats import ics_io
from office_env.formats.bounded import read_bytes, size_text
from office_env.formats.built import remembered_text
from office_env.formats.ics_io import CalendarEvent
from office_env.formats.text import check_line
from office_env.limits import MAX_ICS_BYTES
from office_env.workspace import Workspace

MAX_OVERLAPS = 1_000  # clashes reported at most: a calendar of thousands of clashing events has millions of pairs

TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M")


def parse_time(text: str, field: str) -> datetime:
    value = text.strip() if isinstance(text, str) else text
    if isinstance(value, str):
        try:
            return _time_of(value)
        except ValueError:
            pass
    raise OfficeError(f"{field}: {text!r} is not a time; use 'YYYY-MM-DD HH:MM:SS'")


@remembered_text(entries=256, max_chars=64)  # each replay of a task creates and checks the same events
def _time_of(value: str) -> datetime:
    """``value`` as the first of ``TIME_FORMATS`` that reads it takes it; ``ValueError`` when none does."""
    for fmt in TIME_FORMATS:
        try:
            return datetime.strptime(value, fmt)
        except ValueError:
            continue
    raise ValueError(f"{value!r} is not a time")


def calendar_path(ws: Workspace, user: str, field: str = "user") -> Path:
    """``ws.calendar_file`` for a user name that is one line (no control character in a file name)."""
    check_line(user, field)
    return ws.calendar_file(user, field=field)


def events(ws: Workspace, user: str, field: str = "user", missing_ok: bool = False) -> list[CalendarEvent]:
    path = calendar_path(ws, user, field)
    if not path.is_file():
        if missing_ok:
            return []
        raise MissingFileError(f"{field}: no calendar for {user!r} ({ws.relative(path.parent)}/{path.name} is missing)")
    return ics_io.read_events(path, ws.relative(path))


def _write(ws: Workspace, label: str, data: bytes) -> None:
    if len(data) > MAX_ICS_BYTES:
        raise OfficeError(f"{label}: the calendar would be {size_text(len(data))}, over the "
                          f"{size_text(MAX_ICS_BYTES)} limit for one calendar")
    ws.write_bytes(label, data)


def create(ws: Workspace, user: str, event: CalendarEvent) -> None:
    check_line(event.summary, "summary")
    check_line(event.location, "location")
    if event.end <= event.start:
        raise OfficeError(f"end: {event.end:%Y-%m-%d %H:%M:%S} is not after start {event.start:%Y-%m-%d %H:%M:%S}")
    path = calendar_path(ws, user)
    label = ws.relative(path)
    owner = ws.check_user(user)
    if path.exists():
        before = ics_io.read_events(path, label)  # a valid calendar (parsed once per file version), or CorruptFileError
        written = ics_io.with_event(read_bytes(path, label, MAX_ICS_BYTES), event, owner, ws.now)
        if written is not None:
            _write(ws, label, written[0])
            ics_io.remember_added(path, before, written[1], event)
            return
    calendar = ics_io.load(path, label) if path.exists() else ics_io.new_calendar()
    ics_io.add_event(calendar, event, owner, ws.now)
    _write(ws, label, ics_io.to_bytes(calendar))


def delete(ws: Workspace, user: str, summary: str) -> int:
    path = calendar_path(ws, user)
    label = ws.relative(path)
    if not path.is_file():
        raise MissingFileError(f"user: no calendar for {user!r}")
    written, removed = ics_io.without_events(read_bytes(path, label, MAX_ICS_BYTES), summary, label)
    if written is not None:
        _write(ws, label, written)
    return removed


def clash_text(first: CalendarEvent, second: CalendarEvent) -> str:
    """Two overlapping events as a reason names them: titles and times."""
    return (f"{first.summary!r} ({first.start:%Y-%m-%d %H:%M}-{first.end:%H:%M}) overlaps "
            f"{second.summary!r} ({second.start:%Y-%m-%d %H:%M}-{second.end:%H:%M})")


def overlaps(items: list[CalendarEvent], limit: int = MAX_OVERLAPS) -> list[tuple[CalendarEvent, CalendarEvent]]:
    """Pairs of events whose time ranges intersect (touching end/start is no overlap), in time
    order, at most ``limit`` of them."""
    ordered = sorted(items, key=lambda e: (e.start, e.end))
    found = []
    for i, first in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            second = ordered[j]
            if second.start >= first.end:
                break
            found.append((first, second))
            if len(found) >= limit:
                return found
    return found
