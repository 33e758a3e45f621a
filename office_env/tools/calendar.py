"""Calendar tools: list, create and delete events."""

from __future__ import annotations

from office_env import calendar_store
from office_env.errors import OfficeError
from office_env.formats.ics_io import CalendarEvent
from office_env.limits import MAX_HEADER_CHARS
from office_env.tools.common import USER
from office_env.tools.registry import tool
from office_env.workspace import Workspace

TIME = {"type": "string", "description": "Local 'YYYY-MM-DD HH:MM:SS'"}
FMT = "%Y-%m-%d %H:%M:%S"


@tool("calendar", "list_events", "A user's calendar events by start time.", writes=False,
      properties={"user": USER}, required=["user"])
def list_events(ws: Workspace, user: str) -> str:
    items = calendar_store.events(ws, user)
    if not items:
        return f"No events in {user}'s calendar."
    lines = [f"{len(items)} event(s) in {user}'s calendar:"]
    for event in items:
        where = f" | location: {event.location}" if event.location else ""
        lines.append(f"- {event.start:{FMT}} to {event.end:{FMT}} | {event.summary}{where}")
    return "\n".join(lines)


@tool("calendar", "create_event", "Add an event to a user's calendar.",
      writes=True,
      properties={
          "user": USER,
          "summary": {"type": "string", "minLength": 1, "maxLength": MAX_HEADER_CHARS, "description": "Title"},
          "start": TIME,
          "end": TIME,
          "location": {"type": "string", "maxLength": MAX_HEADER_CHARS},
      },
      required=["user", "summary", "start", "end"], person="user", prose=("summary",), values=("start", "end"))
def create_event(ws: Workspace, user: str, summary: str, start: str, end: str, location: str = "") -> str:
    event = CalendarEvent(
        summary=summary,
        start=calendar_store.parse_time(start, "start"),
        end=calendar_store.parse_time(end, "end"),
        location=location,
    )
    calendar_store.create(ws, user, event)
    return f"Added {summary!r} to {user}'s calendar, {event.start:{FMT}} to {event.end:{FMT}}."


@tool("calendar", "delete_event", "Delete each of a user's events titled exactly summary.",
      writes=True,
      properties={"user": USER, "summary": {"type": "string", "minLength": 1}},
      required=["user", "summary"], person="user", prose=("summary",), no_words=True,
      listed_by="calendar_list_events")
def delete_event(ws: Workspace, user: str, summary: str) -> str:
    removed = calendar_store.delete(ws, user, summary)
    if not removed:
        raise OfficeError(f"summary: no event titled {summary!r} in {user}'s calendar")
    return f"Deleted {removed} event(s) titled {summary!r} from {user}'s calendar."
