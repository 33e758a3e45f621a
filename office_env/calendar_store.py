"""Calendars: ``calendar/<user>.ics``, shared by the calendar tools and the catalog."""

from __future__ import annotations

from datetime import datetime

from office_env.errors import MissingFileError, OfficeError
from office_env.formats import ics_io
from office_env.formats.ics_io import CalendarEvent
from office_env.workspace import Workspace

TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M")


def parse_time(text: str, field: str) -> datetime:
    value = text.strip() if isinstance(text, str) else text
    for fmt in TIME_FORMATS:
        try:
            return datetime.strptime(value, fmt)
        except (TypeError, ValueError):
            continue
    raise OfficeError(f"{field}: {text!r} is not a time; use 'YYYY-MM-DD HH:MM:SS'")


def events(ws: Workspace, user: str, field: str = "user", missing_ok: bool = False) -> list[CalendarEvent]:
    path = ws.calendar_file(user, field=field)
    if not path.is_file():
        if missing_ok:
            return []
        raise MissingFileError(f"{field}: no calendar for {user!r} ({ws.relative(path.parent)}/{path.name} is missing)")
    return ics_io.read_events(path, ws.relative(path))


def create(ws: Workspace, user: str, event: CalendarEvent) -> None:
    if event.end <= event.start:
        raise OfficeError(f"end: {event.end:%Y-%m-%d %H:%M:%S} is not after start {event.start:%Y-%m-%d %H:%M:%S}")
    path = ws.calendar_file(user)
    label = ws.relative(path)
    calendar = ics_io.load(path, label) if path.exists() else ics_io.new_calendar()
    ics_io.add_event(calendar, event, ws.check_user(user), ws.now)
    ws.write_bytes(label, ics_io.to_bytes(calendar))


def delete(ws: Workspace, user: str, summary: str) -> int:
    path = ws.calendar_file(user)
    label = ws.relative(path)
    if not path.is_file():
        raise MissingFileError(f"user: no calendar for {user!r}")
    calendar = ics_io.load(path, label)
    removed = ics_io.remove_events(calendar, summary)
    if removed:
        ws.write_bytes(label, ics_io.to_bytes(calendar))
    return removed


def overlaps(items: list[CalendarEvent]) -> list[tuple[CalendarEvent, CalendarEvent]]:
    """Pairs of events whose time ranges intersect (touching end/start is no overlap)."""
    ordered = sorted(items, key=lambda e: (e.start, e.end))
    found = []
    for i, first in enumerate(ordered):
        for second in ordered[i + 1:]:
            if second.start >= first.end:
                break
            found.append((first, second))
    return found
