"""Deleting events from a plain calendar without a parse: the same bytes, counts and later reads as
icalendar's parse, removal and writing, over built calendars, calendars events were added to, and
ones mutated out of the plain form (which take icalendar's path)."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from office_env import CorruptFileError
from office_env.formats import ics_io, read_cache
from office_env.formats.ics_io import CalendarEvent
from office_env.sample import SAMPLE_NOW as NOW

ALPHABET = "abc XYZ 019 ,;:\\N\"'<>&-_/ é中😀\u00a0\n"
LABEL = "calendar/alice.ics"


def _icalendar_delete(data: bytes, summary: str) -> tuple[bytes | None, int]:
    """The deletion as icalendar makes it: parse, remove, write."""
    calendar = ics_io.parse(data, LABEL)
    removed = ics_io.remove_events(calendar, summary)
    return (ics_io.to_bytes(calendar) if removed else None), removed


def _direct_delete(data: bytes, summary: str) -> tuple[bytes | None, int]:
    """The deletion ``without_events`` makes (not from its memory)."""
    return ics_io.without_events.__wrapped__(data, summary, LABEL)


def _outcome(delete: Any, data: bytes, summary: str) -> Any:
    try:
        return delete(data, summary)
    except CorruptFileError as exc:
        return ("error", str(exc))


def _text(rng: random.Random, plain: bool) -> str:
    """A text: a plain one has no character a parse reads back otherwise, and mostly no line to fold."""
    chars = ALPHABET.replace("\\", "").replace("\n", "").replace("\u00a0", "") if plain else ALPHABET
    lengths = (0, 1, 4, 8, 12, 20, 30, 40) if plain else (0, 1, 4, 12, 30, 60, 66, 70)
    return "".join(rng.choice(chars) for _ in range(rng.choice(lengths)))


def _time(rng: random.Random, plain: bool) -> Any:
    moment = datetime(rng.choice((1, 999, 1999, 2024, 9999)), rng.randint(1, 12), rng.randint(1, 28),
                      rng.randint(0, 23), rng.randint(0, 59), rng.choice((0, 0, 7)))
    kind = 1.0 if plain else rng.random()
    if kind < 0.05:
        return moment.replace(tzinfo=timezone.utc)
    if kind < 0.1:
        return moment.date()
    if kind < 0.13:
        return moment.replace(microsecond=5)
    return moment


def _event(rng: random.Random, summaries: list[str], plain: bool) -> CalendarEvent:
    """An event, plain (but for its summary, which may be another's) or mostly so."""
    plain = plain or rng.random() < 0.7
    summary = rng.choice(summaries) if summaries and rng.random() < 0.4 else _text(rng, plain)
    start = _time(rng, plain)
    end = start + timedelta(hours=1) if type(start) is not date or rng.random() < 0.5 else start
    return CalendarEvent(summary, start, end, _text(rng, plain) if rng.random() < 0.5 else "",
                         _text(rng, plain) if rng.random() < 0.5 else "")


def _calendar(rng: random.Random) -> bytes:
    """A built calendar, with events then added one by one by ``with_event`` at other stamps."""
    events: list[CalendarEvent] = []
    plain = rng.random() < 0.85
    for _ in range(rng.randint(0, 5)):
        events.append(_event(rng, [e.summary for e in events], plain))
    data = ics_io.build(events, rng.choice(("alice", "bob")), rng.choice((None, NOW, NOW.replace(microsecond=9))))
    for _ in range(rng.choice((0, 0, 1, 3))):
        event = _event(rng, [e.summary for e in events], plain)
        events.append(event)
        stamp = rng.choice((NOW + timedelta(days=1), NOW) if plain else (NOW, NOW.replace(tzinfo=timezone.utc)))
        added = ics_io.with_event(data, event, "alice", stamp)
        assert added is not None
        data = added[0]
    return data


def _mutated(rng: random.Random, data: bytes) -> bytes:
    """``data`` changed in one place, in ways that may leave it a calendar but not a plain one."""
    lines = data.split(b"\r\n")
    at = rng.randrange(len(lines))
    line = lines[at]
    change = rng.randrange(10)
    if change == 0 and line:
        i = rng.randrange(len(line))
        lines[at] = line[:i] + line[i + 1:]
    elif change == 1:
        lines.insert(at, rng.choice((b"X-NOTE:x", b"CALSCALE:GREGORIAN", b"LOCATION:", b"DESCRIPTION:a\\nb",
                                     b"SUMMARY:twice", b" folded", b"TZID:Europe/Paris", b"")))
    elif change == 2:
        lines[at] = line.lower()
    elif change == 3:
        lines[at] = line + rng.choice((b"x", b" ", b"\\,", b";", b"\\\\", b"Z", b"x" * 70))
    elif change == 4 and at + 1 < len(lines):
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    elif change == 5:
        lines[at] = line.replace(b":", b";VALUE=DATE-TIME:", 1)
    elif change == 6:
        lines[at] = line.replace(b"T", b"", 1)
    elif change == 7:
        return b"\n".join(lines)
    elif change == 8:
        lines[at] = line.replace(b"0", b"9")
    else:
        del lines[at]
    return b"\r\n".join(lines)


def _summaries(rng: random.Random, data: bytes) -> list[str]:
    try:
        titles = [e.summary for e in ics_io.events_of(ics_io.parse(data, LABEL), LABEL)]
    except CorruptFileError:
        titles = []
    picked = rng.sample(titles, min(2, len(titles)))
    return [*picked, *(f"  {t.upper()} " for t in picked), "no such event", ""]


def test_a_plain_deletion_writes_what_icalendar_writes_and_is_remembered_as_its_parse(tmp_path: Path,
                                                                                       monkeypatch: Any) -> None:
    """Over random calendars and their mutations: the same bytes and count (or the same error) as
    icalendar's deletion; plain calendars take the direct path, the others icalendar's; and a
    calendar written by the direct path reads, from memory, as a parse of it reads."""
    parses: list[str] = []
    real = ics_io.load
    monkeypatch.setattr(ics_io, "load", lambda path, label: parses.append(label) or real(path, label))
    rng = random.Random(11)
    plain = mutated_plain = other = written = 0
    for n in range(500):
        data = _calendar(rng)
        if n % 3 == 2:
            data = _mutated(rng, data)
        blocks = ics_io._plain_blocks(data)
        if blocks is None:
            other += 1
        elif n % 3 == 2:
            mutated_plain += 1
        else:
            plain += 1
        for summary in _summaries(rng, data):
            read_cache.clear()
            got = _outcome(_direct_delete, data, summary)
            assert got == _outcome(_icalendar_delete, data, summary), (data, summary)
            if blocks is not None and got[0] is not None:
                written += 1
                path = tmp_path / f"{n}.ics"
                path.write_bytes(got[0])
                parses.clear()
                assert ics_io.read_events(path, path.name) == ics_io.events_of(real(path, path.name), path.name)
                assert parses == []  # read from what the deletion remembered
    assert plain > 200 and other > 100 and mutated_plain > 12 and written > 700  # both paths were compared


def test_calendars_outside_the_plain_form_take_icalendars_path() -> None:
    """What the direct path declines, each one place away from a plain calendar."""
    start = datetime(2024, 5, 6, 9, 0)
    data = ics_io.build([CalendarEvent("Team sync", start, start + timedelta(hours=1), "Room 2", "Weekly")], "alice", NOW)
    assert ics_io._plain_blocks(data) is not None
    declined = [
        data.replace(b"\r\n", b"\n"),  # bare line feeds
        data.replace(b"PRODID:-//homeragents", b"PRODID:-//other"),  # another writer
        data.replace(b"VERSION:2.0\r\n", b"VERSION:2.0\r\nCALSCALE:GREGORIAN\r\n"),  # a calendar property
        data.replace(b"LOCATION:Room 2", b"LOCATION:"),  # an empty field written
        data.replace(b"LOCATION:Room 2", b"LOCATION;LANGUAGE=en:Room 2"),  # a parameter
        data.replace(b"DESCRIPTION:Weekly\r\nLOCATION:Room 2", b"LOCATION:Room 2\r\nDESCRIPTION:Weekly"),  # order
        data.replace(b"Weekly", b"Week\\nly"),  # an escaped line break
        data.replace(b"Weekly", b"Week,ly"),  # an unescaped comma
        data.replace(b"Weekly", b"W" * 70),  # a line icalendar folds
        data.replace(b"DTSTART:20240506T090000", b"DTSTART:20240506T090000Z"),  # a UTC time
        data.replace(b"DTSTART:20240506T090000", b"DTSTART:20241306T090000"),  # no such month
        data.replace(b"UID:", b"UID:x"),  # a UID of another writer
        data.replace(b"END:VEVENT\r\n", b""),  # an unended event
        data + b"\r\n",  # a blank line after the end
    ]
    for other in declined:
        assert other != data
        assert ics_io._plain_blocks(other) is None, other
        assert _outcome(_direct_delete, other, "team sync") == _outcome(_icalendar_delete, other,
                                                                                           "team sync")


def test_a_non_plain_calendar_still_raises_what_a_parse_raises() -> None:
    for data in (b"not a calendar", b"BEGIN:VEVENT\r\nEND:VEVENT\r\n", b"\xff\xfe"):
        with pytest.raises(CorruptFileError, match=LABEL):
            ics_io.without_events.__wrapped__(data, "x", LABEL)
