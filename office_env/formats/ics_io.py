"""iCalendar files (.ics) through the ``icalendar`` library (a plain calendar :func:`build` makes, a
plain event :func:`with_event` adds, and a plain calendar :func:`without_events` deletes from, is
written directly, in the bytes icalendar writes: tests hold the two equal).

Times are compared as naive datetimes: aware times are converted to UTC, all-day dates start
at midnight. New events get a UID and DTSTAMP derived from their content and the office clock
so that the same calls write the same bytes. A calendar file over ``MAX_ICS_BYTES`` is refused
unread. A calendar :func:`build` writes is remembered by content as the events a parse of it reads
(when every field is one the parse gives back unchanged), so a world's check and the tools reading
its calendars next find them parsed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import icalendar

from office_env.errors import CorruptFileError
from office_env.formats.bounded import read_bytes
from office_env.formats.built import remembered
from office_env.formats.ooxml import DEFAULT_STAMP
from office_env.formats.read_cache import cached_read, remember, remember_content
from office_env.limits import MAX_ICS_BYTES

PRODID = "-//homeragents//office_env//EN"


@dataclass(frozen=True)
class CalendarEvent:
    summary: str
    start: datetime
    end: datetime
    location: str = ""
    description: str = ""


def naive(value: date | datetime) -> datetime:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value.astimezone(timezone.utc).replace(tzinfo=None)
        return value
    return datetime(value.year, value.month, value.day)


def load(path: Path, label: str) -> icalendar.Calendar:
    return parse(read_bytes(path, label, MAX_ICS_BYTES), label)


def parse(data: bytes, label: str) -> icalendar.Calendar:
    """The calendar ``data`` holds; ``CorruptFileError`` naming ``label`` when it holds none."""
    try:
        calendar = icalendar.Calendar.from_ical(data)
    except Exception as exc:
        raise CorruptFileError(f"{label}: not a readable iCalendar (.ics) file ({type(exc).__name__})") from None
    if not isinstance(calendar, icalendar.Calendar):
        raise CorruptFileError(f"{label}: not an iCalendar (.ics) file (no VCALENDAR)")
    return calendar


def events_of(calendar: icalendar.Calendar, label: str) -> list[CalendarEvent]:
    events = []
    for component in calendar.walk("VEVENT"):
        start_prop = component.get("dtstart")
        if start_prop is None:
            raise CorruptFileError(f"{label}: event {str(component.get('summary', ''))!r} has no DTSTART")
        try:
            start = naive(start_prop.dt)
            end_prop = component.get("dtend")
            if end_prop is not None:
                end = naive(end_prop.dt)
            elif component.get("duration") is not None:
                end = start + component.get("duration").dt
            else:
                end = start + (timedelta(days=1) if not isinstance(start_prop.dt, datetime) else timedelta(0))
        except Exception as exc:
            raise CorruptFileError(f"{label}: event has an unreadable time ({type(exc).__name__})") from None
        events.append(
            CalendarEvent(
                summary=str(component.get("summary", "")),
                start=start,
                end=end,
                location=str(component.get("location", "")),
                description=str(component.get("description", "")),
            )
        )
    events.sort(key=lambda e: (e.start, e.end, e.summary))
    return events


def read_events(path: Path, label: str) -> list[CalendarEvent]:
    return list(cached_read("ics", path, lambda: tuple(events_of(load(path, label), label)), by_content=True))


def remember_added(path: Path, before: list[CalendarEvent], added: bytes, event: CalendarEvent) -> None:
    """``path`` was just written by ``with_event`` from a calendar whose events were ``before``,
    with the VEVENT ``added`` of ``event``: its events are those plus the added one, in the order a
    full parse gives. The added one is read without a parse when its fields are ones a parse gives
    back as they are (``_known_events``), else read on its own (it carries no TZID, so the rest of
    the file cannot change how it reads)."""
    events = before + list(_known_events([event]) or _events_alone(added))
    events.sort(key=lambda e: (e.start, e.end, e.summary))  # stable: the added event last among equals
    remember("ics", path, tuple(events))


@remembered  # a task's replays add the same event again (office_env.formats.built)
def _events_alone(added: bytes) -> tuple[CalendarEvent, ...]:
    """The events of a VEVENT ``with_event`` made, read on its own."""
    alone = icalendar.Calendar.from_ical(b"BEGIN:VCALENDAR\r\n" + added + _END + b"\r\n")
    return tuple(events_of(alone, "the added event"))


def new_calendar() -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    return calendar


def _uid(event: CalendarEvent, owner: str) -> str:
    """The event's UID: derived from its owner, title and times, so the same event gets the same one."""
    key = f"{owner}\n{event.summary}\n{event.start.isoformat()}\n{event.end.isoformat()}"
    return hashlib.sha1(key.encode()).hexdigest()[:24] + "@homeragents"


def add_event(calendar: icalendar.Calendar, event: CalendarEvent, owner: str, stamp: datetime | None) -> None:
    component = icalendar.Event()
    component.add("uid", _uid(event, owner))
    component.add("dtstamp", (stamp or DEFAULT_STAMP).replace(microsecond=0))
    component.add("summary", event.summary)
    component.add("dtstart", event.start)
    component.add("dtend", event.end)
    if event.location:
        component.add("location", event.location)
    if event.description:
        component.add("description", event.description)
    calendar.add_component(component)


_END = b"END:VCALENDAR"


def with_event(data: bytes, event: CalendarEvent, owner: str, stamp: datetime | None) -> tuple[bytes, bytes] | None:
    """``data`` (a calendar already read and found valid) with ``event`` added just before its
    last ``END:VCALENDAR``, and the added VEVENT's bytes; None when the file does not end that way.
    Everything else in the file stays byte for byte, and no re-parse is needed."""
    tail = data.rstrip()
    if not tail.endswith(_END):
        return None
    head = tail[: -len(_END)]
    if not head.endswith(b"\n"):
        return None
    added = _event_bytes(owner, stamp, event.summary, event.start, event.end, event.location, event.description)
    return head + added + _END + b"\r\n", added


@remembered  # a task's replays add the same event again (office_env.formats.built)
def _event_bytes(owner: str, stamp: datetime | None, *fields: Any) -> bytes:
    """The VEVENT ``add_event`` writes for the event of ``fields`` (``CalendarEvent``'s, in order):
    written directly when it is plain (:func:`_plain_calendar`), else by icalendar."""
    event = CalendarEvent(*fields)
    stamp_line = _plain_stamp(stamp)
    lines = None if stamp_line is None else _plain_event(event, _uid(event, owner), stamp_line)
    plain = None if lines is None else _plain_text(lines)
    if plain is not None:
        return plain
    holder = icalendar.Calendar()
    add_event(holder, event, owner, stamp)
    return holder.subcomponents[0].to_ical()


def _title_key(summary: str) -> str:
    """What two event titles share when a delete takes one for the other: case and outer spaces aside."""
    return summary.strip().lower()


def remove_events(calendar: icalendar.Calendar, summary: str) -> int:
    """Remove every event whose summary equals ``summary`` (ignoring case); return the count."""
    wanted = _title_key(summary)
    keep, removed = [], 0
    for component in calendar.subcomponents:
        if component.name == "VEVENT" and _title_key(str(component.get("summary", ""))) == wanted:
            removed += 1
        else:
            keep.append(component)
    calendar.subcomponents[:] = keep
    return removed


@remembered  # a task's replays delete the same event from the same calendar again (office_env.formats.built)
def without_events(data: bytes, summary: str, label: str) -> tuple[bytes | None, int]:
    """The calendar ``data`` (read from ``label``) with every event titled ``summary`` removed
    (``remove_events``), and how many were; no bytes when none was. A plain calendar
    (:func:`_plain_blocks`) loses the lines of those events without a parse, and the events left
    are remembered by content as a parse reads them; any other is parsed and written by icalendar."""
    blocks = _plain_blocks(data)
    if blocks is None:
        calendar = parse(data, label)
        removed = remove_events(calendar, summary)
        return (to_bytes(calendar) if removed else None), removed
    wanted = _title_key(summary)
    kept = [(event, lines) for event, lines in blocks if _title_key(event.summary) != wanted]
    if len(kept) == len(blocks):
        return None, 0
    text = "\r\n".join([*_PLAIN_HEAD, *(line for _, lines in kept for line in lines), _PLAIN_END, ""])
    written = text.encode("utf-8")
    known = _known_events([event for event, _ in kept])
    if known is not None:  # always: a plain calendar's texts and times are known ones
        remember_content("ics", written, known)
    return written, len(blocks) - len(kept)


def to_bytes(calendar: icalendar.Calendar) -> bytes:
    return calendar.to_ical()


def build(events: list[CalendarEvent], owner: str, stamp: datetime | None = None) -> bytes:
    """A new calendar of ``events``; what :func:`read_events` reads of it is remembered by content
    (:func:`_known_events`), so reading it back costs no parse."""
    data = _plain_calendar(events, owner, stamp)
    if data is None:
        calendar = new_calendar()
        for event in events:
            add_event(calendar, event, owner, stamp)
        data = to_bytes(calendar)
    known = _known_events(events)
    if known is not None:
        remember_content("ics", data, known)
    return data


# The longest content line icalendar writes unfolded (75 octets and more are folded).
_UNFOLDED_BYTES = 74
_PLAIN_HEAD = ("BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODID}")  # a plain calendar's first lines
_PLAIN_END = "END:VCALENDAR"  # and its last


def _plain_calendar(events: list[CalendarEvent], owner: str, stamp: datetime | None) -> bytes | None:
    """The bytes icalendar writes for the calendar :func:`build` makes of ``events``, written
    directly, or None when a line is outside the plain form this writes: floating times, a
    floating (or absent) stamp, and printable texts whose every line is short enough to stay
    unfolded (a world's calendars are all of this form; icalendar writes the others). The lines
    are icalendar's: the calendar's properties, then each event's in its canonical order
    (SUMMARY, DTSTART, DTEND, DTSTAMP, UID, then the others by name), texts escaped as its TEXT
    values are. A test holds the two writers equal over many calendars."""
    stamp_line = _plain_stamp(stamp)
    if stamp_line is None:
        return None
    lines = list(_PLAIN_HEAD)
    for event in events:
        event_lines = _plain_event(event, _uid(event, owner), stamp_line)
        if event_lines is None:
            return None
        lines += event_lines
    lines.append(_PLAIN_END)
    return _plain_text(lines)


def _plain_stamp(stamp: datetime | None) -> str | None:
    """The DTSTAMP line of a plain calendar's events, or None for a stamp that is not plain."""
    when = (stamp or DEFAULT_STAMP).replace(microsecond=0)
    if type(when) is not datetime or when.tzinfo is not None:
        return None
    return f"DTSTAMP:{_ical_time(when)}Z"  # icalendar writes a floating stamp as UTC


def _plain_event(event: CalendarEvent, uid: str, stamp_line: str) -> list[str] | None:
    """The lines of one plain event (see :func:`_plain_calendar`), or None when it is not plain."""
    texts = (event.summary, event.location, event.description)
    if not (_plain_time(event.start) and _plain_time(event.end)
            and all(type(t) is str and t.isprintable() for t in texts)):
        return None
    lines = ["BEGIN:VEVENT", f"SUMMARY:{_escaped(event.summary)}", f"DTSTART:{_ical_time(event.start)}",
             f"DTEND:{_ical_time(event.end)}", stamp_line, f"UID:{uid}"]
    if event.description:
        lines.append(f"DESCRIPTION:{_escaped(event.description)}")
    if event.location:
        lines.append(f"LOCATION:{_escaped(event.location)}")
    lines.append("END:VEVENT")
    return lines


def _plain_text(lines: list[str]) -> bytes | None:
    """The content lines, each ended by CRLF, or None when one is long enough for icalendar to fold."""
    text = "\r\n".join(lines) + "\r\n"
    if any(len(line) > _UNFOLDED_BYTES for line in lines) or (
            not text.isascii() and any(len(line.encode("utf-8")) > _UNFOLDED_BYTES for line in lines)):
        return None
    return text.encode("utf-8")


_PLAIN_UID = re.compile(r"[0-9a-f]{24}@homeragents")  # as _uid makes them
_PLAIN_FIELDS = ("BEGIN", "SUMMARY", "DTSTART", "DTEND", "DTSTAMP", "UID")  # a plain event's first lines, in order


def _plain_blocks(data: bytes) -> list[tuple[CalendarEvent, list[str]]] | None:
    """The events of a calendar in the plain form :func:`_plain_calendar` (and :func:`with_event`)
    writes, each with its lines, read without a parse; None when ``data`` is not exactly in that
    form: the plain writer must write each event's lines again from what they read as, and its
    texts must be ones a parse reads back as they are (:func:`_known_text`). The calendar icalendar
    writes from a parse of such a calendar, less some events, is then the lines of the others (a
    test compares the two over many calendars)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\r\n")
    if tuple(lines[:3]) != _PLAIN_HEAD or lines[-2:] != [_PLAIN_END, ""] or _plain_text(lines[:-1]) is None:
        return None
    blocks = []
    at, end = 3, len(lines) - 2
    while at < end:
        try:
            stop = lines.index("END:VEVENT", at, end) + 1
        except ValueError:
            return None
        event = _plain_block_event(lines[at:stop])
        if event is None:
            return None
        blocks.append((event, lines[at:stop]))
        at = stop
    return blocks


def _plain_block_event(lines: list[str]) -> CalendarEvent | None:
    """The event of one plain event's ``lines``, BEGIN to END (see :func:`_plain_blocks`), or None."""
    fields = dict(line.partition(":")[::2] for line in lines[:-1])  # a repeated one: not written again below
    if tuple(fields)[:6] != _PLAIN_FIELDS:
        return None
    summary, description, location = (_unescaped(fields.get(name, "")) for name in ("SUMMARY", "DESCRIPTION",
                                                                                      "LOCATION"))
    start, end, stamp = _plain_time_of(fields["DTSTART"]), _plain_time_of(fields["DTEND"]), fields["DTSTAMP"]
    if (summary is None or description is None or location is None or start is None or end is None
            or not stamp.endswith("Z") or _plain_time_of(stamp[:-1]) is None
            or not _PLAIN_UID.fullmatch(fields["UID"])):
        return None
    event = CalendarEvent(summary, start, end, location, description)
    return event if _plain_event(event, fields["UID"], f"DTSTAMP:{stamp}") == lines else None


def _unescaped(value: str) -> str | None:
    """A TEXT value as a parse reads it, when that is a :func:`_known_text` (else None)."""
    text = value.replace(r"\,", ",").replace(r"\;", ";")
    return text if _known_text(text) else None


def _plain_time_of(value: str) -> datetime | None:
    """A floating DATE-TIME as :func:`_ical_time` writes it, or None."""
    if len(value) != 15 or value[8] != "T" or not (value[:8] + value[9:]).isdigit() or not value.isascii():
        return None
    try:
        return datetime(int(value[:4]), int(value[4:6]), int(value[6:8]), int(value[9:11]), int(value[11:13]),
                        int(value[13:]))
    except ValueError:
        return None


def _plain_time(value: object) -> bool:
    return type(value) is datetime and value.tzinfo is None


def _ical_time(value: datetime) -> str:
    """A floating DATE-TIME as icalendar writes it (whole seconds)."""
    return f"{value.year:04}{value.month:02}{value.day:02}T{value.hour:02}{value.minute:02}{value.second:02}"


def _escaped(text: str) -> str:
    """``text`` as an iCalendar TEXT value, escaped as icalendar escapes it (in its order)."""
    return (text.replace(r"\N", "\n").replace("\\", "\\\\").replace(";", r"\;").replace(",", r"\,")
            .replace("\r\n", r"\n").replace("\n", r"\n").replace("\r", r"\n"))


def _known_text(text: str) -> bool:
    """Text that TEXT escaping writes and a parse reads back as it was: printable, without a
    backslash (``\\n`` and ``\\N`` read back as line breaks)."""
    return isinstance(text, str) and text.isprintable() and "\\" not in text


def _known_time(value: object) -> bool:
    """A time a parse reads back as :func:`naive` makes it: a date, or a floating (zone-less)
    time in whole seconds (DTSTART drops microseconds)."""
    return type(value) is date or (type(value) is datetime and value.tzinfo is None and value.microsecond == 0)


def _known_events(events: list[CalendarEvent]) -> tuple[CalendarEvent, ...] | None:
    """What :func:`events_of` reads from the calendar :func:`build` writes of ``events``, or None
    when a field is outside what the model covers (then the file is parsed when read)."""
    known = []
    for event in events:
        if not (all(_known_text(t) for t in (event.summary, event.location, event.description))
                and _known_time(event.start) and _known_time(event.end)):
            return None
        known.append(CalendarEvent(event.summary, naive(event.start), naive(event.end), event.location,
                                   event.description))
    known.sort(key=lambda e: (e.start, e.end, e.summary))
    return tuple(known)
