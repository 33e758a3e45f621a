"""Offline surfers: one procedural explorer per app, reading only through read-only tools.

Each explorer sees the workspace the way an agent does -- it calls tools of
``read_only_registry()`` and parses their observation texts -- so its notes hold
only what an agent could find. A tool that fails (a corrupt file, a missing mailbox) leaves
an entry ``{"file": <path>, "error": <observation>}`` in the notes instead of an exception.
The shapes are defined in ``surfers.notes``.
"""

from __future__ import annotations

import ast
import re
from datetime import date, datetime, timedelta
from typing import Any, Callable, Iterable, Protocol

from office_env import Workspace
from office_env.apps import App, get_app, load, registered_apps
from office_env.formats.xlsx_io import EMPTY_CELL
from office_env.synthesis.world import FIRST_NAMES, LAST_NAMES
from office_env.tools import ToolResult, list_files_call, read_only_registry

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
WORK_START, WORK_END = 9, 17  # free slots are whole hours between these


class Reader(Protocol):
    """Where explorers get tool results from: a workspace through the read-only registry
    (``WorkspaceReader``), or any other source of the same observations."""

    @property
    def now(self) -> datetime | None: ...

    def call(self, name: str, args: dict[str, Any]) -> ToolResult: ...


class WorkspaceReader:
    def __init__(self, ws: Workspace) -> None:
        self.ws, self.now = ws, ws.now

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        """One read-only tool call; a writing tool is not even in this registry."""
        return read_only_registry().call(self.ws, name, args)


def _call(ws: Reader, name: str, args: dict[str, Any]) -> ToolResult:
    return ws.call(name, args)


def _error(file: str, result: ToolResult) -> dict[str, str]:
    return {"file": file, "error": result.observation}


def _body(observation: str, file: str) -> str:
    """The text after the tool's ``"<file>:"`` first line."""
    prefix = f"{file}:\n"
    return observation[len(prefix):] if observation.startswith(prefix) else observation


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


# -- finding files -----------------------------------------------------------------------------

def list_files(ws: Reader) -> list[str]:
    """Every file of the testbed, as ``system_list_files`` reports it."""
    result = _call(ws, *list_files_call())
    if not result.ok or result.observation.startswith("No files in"):
        return []
    return [line for line in result.observation.splitlines() if line.strip()]


def documents(files: Iterable[str], suffix: str) -> list[str]:
    """Documents with ``suffix``, outside the apps' own folders (mail, calendars), hidden files skipped."""
    folders = {app.folder.rstrip("/") for app in registered_apps() if app.folder}
    out = []
    for path in files:
        parts = path.split("/")
        if parts[0] in folders or any(p.startswith(".") for p in parts):
            continue
        if path.lower().endswith(suffix):
            out.append(path)
    return out


def owners(app: App, files: Iterable[str]) -> list[str]:
    """Whose items an owner-laid app holds: the ``<folder><owner>/...`` folders (a mailbox) or the
    ``<folder><owner><suffix>`` files (a calendar), sorted."""
    found = set()
    for path in files:
        if not path.startswith(app.folder):
            continue
        rest = path[len(app.folder):]
        if app.layout == "owner_folders" and "/" in rest:
            found.add(rest.split("/", 1)[0])
        elif app.layout == "owner_files" and "/" not in rest and rest.lower().endswith(app.suffix):
            found.add(rest[: -len(app.suffix)])
    return sorted(found)


def mailbox_users(files: Iterable[str]) -> list[str]:
    return owners(get_app("email"), files)


def calendar_users(files: Iterable[str]) -> list[str]:
    return owners(get_app("calendar"), files)


def _selected(found: list[str], users: list[str] | None) -> list[str]:
    if users is None:
        return found
    wanted = {u.strip().split("@", 1)[0].lower() for u in users}
    return [u for u in found if u.lower() in wanted]


# -- word --------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"\b([A-Z][a-z]+) ([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b")
_COMMON_FIRST = frozenset({  # everyday first names seen in imported (non-synthesised) testbeds
    "Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Helen", "James", "John", "Kate", "Laura",
    "Mary", "Michael", "Paul", "Peter", "Robert", "Sarah", "Thomas", "William", "Linda", "Susan", "Tom",
})
_KNOWN_FIRST = frozenset(FIRST_NAMES) | _COMMON_FIRST
_KNOWN_LAST = frozenset(LAST_NAMES)
_NOT_NAMES = frozenset({
    "The", "This", "That", "These", "Next", "Last", "Open", "Date", "Team", "Room", "Monday", "Tuesday",
    "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February", "March", "April",
    "May", "June", "July", "August", "September", "October", "November", "December", "Dear", "Hi",
    "Hello", "Thanks", "Best", "Regards", "Cheers", "Attendees", "Decision", "Risks", "Subject",
})


def people_in(text: str) -> list[str]:
    """"First Last" names in order of appearance, without repeats.

    A pair counts when both words are known names, or when one is and the pair does not sit
    inside a longer run of capitalised words (so "Iris Office Move" is a project, not Iris).
    """
    found: list[str] = []
    for match in _NAME_RE.finditer(text):
        first, last = match.groups()
        if first in _NOT_NAMES or last in _NOT_NAMES:
            continue
        strong = first in _KNOWN_FIRST and last in _KNOWN_LAST
        if not strong:
            if first not in _KNOWN_FIRST and last not in _KNOWN_LAST:
                continue
            if re.match(r" [A-Z]", text[match.end():]) or re.search(r"[A-Z][a-z]* $", text[: match.start()]):
                continue
        name = f"{first} {last}"
        if name not in found:
            found.append(name)
    return found


def _explore_texts(ws: Reader, suffix: str, tool: str, empty: str, key: str,
                   extract: Callable[[str], list[str]]) -> list[dict[str, Any]]:
    """Read every document with ``suffix`` through ``tool``: its lines and ``key`` = extract(text)."""
    files: list[dict[str, Any]] = []
    for path in documents(list_files(ws), suffix):
        result = _call(ws, tool, {"file_path": path})
        if not result.ok:
            files.append(_error(path, result))
            continue
        lines = [] if result.observation == f"{path} {empty}" else _lines(_body(result.observation, path))
        files.append({"file": path, "lines": lines, key: extract("\n".join(lines))})
    return files


def explore_word(ws: Reader, users: list[str] | None = None) -> dict[str, Any]:
    return {"app": "word", "files": _explore_texts(ws, ".docx", "word_read_file", "is empty.", "people", people_in)}


# -- excel -------------------------------------------------------------------------------------

_SHEET_HEADER_RE = re.compile(r"^(?P<file>.*) \(sheet (?P<sheet>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"); "
                              r"sheets: (?P<all>.*)\):$")
_CELL_RE = re.compile(r"\((\d+), (\d+)\): ")


def parse_cells(body: str) -> dict[tuple[int, int], str]:
    """``(row, col): value`` cells of an ``excel_read_file`` observation, values as rendered.

    Cells come row by row, tab-terminated, one line per row; a marker counts only where the
    next cell is due (same row, next column; or next row, first column), so values holding
    tabs, newlines or marker-like text stay whole.
    """
    markers = list(_CELL_RE.finditer(body))
    if not markers or markers[0].start() != 0:
        return {}
    accepted = [markers[0]]
    first_col = int(markers[0].group(2))
    for marker in markers[1:]:
        row, col = int(accepted[-1].group(1)), int(accepted[-1].group(2))
        r, c = int(marker.group(1)), int(marker.group(2))
        before = body[: marker.start()]
        if (r, c) == (row, col + 1) and before.endswith("\t"):
            accepted.append(marker)
        elif (r, c) == (row + 1, first_col) and before.endswith("\t\n"):
            accepted.append(marker)
    cells: dict[tuple[int, int], str] = {}
    for index, marker in enumerate(accepted):
        end = accepted[index + 1].start() if index + 1 < len(accepted) else len(body)
        value = body[marker.end(): end]
        if value.endswith("\t\n"):
            value = value[:-2]
        elif value.endswith("\t"):
            value = value[:-1]
        cells[(int(marker.group(1)), int(marker.group(2)))] = "" if value == EMPTY_CELL else value
    return cells


def table_of(cells: dict[tuple[int, int], str]) -> tuple[list[str], list[list[str]]]:
    """Row 1 as headers, rows 2.. as rows (rows[i] is sheet row i + 2), rectangular."""
    if not cells:
        return [], []
    max_row = max(r for r, _ in cells)
    max_col = max(c for _, c in cells)
    grid = [[cells.get((r, c), "") for c in range(1, max_col + 1)] for r in range(1, max_row + 1)]
    return grid[0], grid[1:]


def _sheet_entry(ws: Reader, path: str, sheet: str | None) -> tuple[dict[str, Any], list[str]]:
    """One sheet's notes and the names of all sheets (empty when unknown)."""
    args: dict[str, Any] = {"file_path": path}
    if sheet is not None:
        args["sheet"] = sheet
    result = _call(ws, "excel_read_file", args)
    if not result.ok:
        return _error(path, result), []
    head, _, body = result.observation.partition("\n")
    match = _SHEET_HEADER_RE.match(head)
    name, sheets = sheet or "", []
    if match:
        try:
            name = ast.literal_eval(match.group("sheet"))  # a Python repr of a string literal, nothing else
        except (ValueError, SyntaxError):
            pass
        sheets = [s for s in match.group("all").split(", ") if s]
    cells = {} if body.strip() == "(empty sheet)" else parse_cells(body)
    headers, rows = table_of(cells)
    return {"file": path, "sheet": name, "headers": headers, "rows": rows}, sheets


def explore_excel(ws: Reader, users: list[str] | None = None) -> dict[str, Any]:
    """Every sheet of every workbook: the active sheet first, then the others by name."""
    files: list[dict[str, Any]] = []
    for path in documents(list_files(ws), ".xlsx"):
        entry, sheets = _sheet_entry(ws, path, None)
        files.append(entry)
        if "error" in entry:
            continue
        for sheet in sheets:
            if sheet != entry["sheet"]:
                other, _ = _sheet_entry(ws, path, sheet)
                files.append(other)
    return {"app": "excel", "files": files}


# -- pdf ---------------------------------------------------------------------------------------

# Numbers standing alone: "12,500.00", "42", "8.5"; not parts of codes or dates (INV-2024-0412).
_NUMBER_RE = re.compile(r"(?<![\w\-/.,:])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w\-/]|[.,:]\d)")


def numbers_in(text: str) -> list[str]:
    found: list[str] = []
    for match in _NUMBER_RE.finditer(text):
        if match.group(1) not in found:
            found.append(match.group(1))
    return found


def explore_pdf(ws: Reader, users: list[str] | None = None) -> dict[str, Any]:
    files = _explore_texts(ws, ".pdf", "pdf_read_file", "has no extractable text.", "numbers", numbers_in)
    return {"app": "pdf", "files": files}


# -- email -------------------------------------------------------------------------------------

_LIST_ID_RE = re.compile(r"^- id: (.*?) \| date: ")
_UNREADABLE_RE = re.compile(r"^- unreadable: (.*)$")
_HEADERS = (("From: ", "from"), ("To: ", "to"), ("Cc: ", "cc"), ("Date: ", "date"), ("Subject: ", "subject"))


def parse_message(observation: str) -> dict[str, str]:
    """``email_read_email``'s text: header lines (From, To, Cc when copied, Date, Subject), a blank
    line, the body."""
    head, _, body = observation.partition("\n\n")
    fields = {key: "" for _, key in _HEADERS}
    for line in head.split("\n"):
        for prefix, key in _HEADERS:
            if line.startswith(prefix) and not fields[key]:
                fields[key] = line[len(prefix):]
                break
    fields["body"] = body
    return fields


def _read_path(app: str, tool: str, **args: str) -> str:
    """The file a read call of an owner-laid app opens, as its entry says (``App.read_paths``)."""
    return get_app(app).read_paths()[tool].format_map(args)


def _mailbox(ws: Reader, user: str) -> dict[str, Any]:
    listing = _call(ws, "email_list_emails", {"user": user})
    if not listing.ok:
        return _error(get_app("email").folder + user, listing)  # the mailbox it could not list
    messages: list[dict[str, Any]] = []
    for line in listing.observation.splitlines()[1:]:
        bad = _UNREADABLE_RE.match(line)
        if bad:
            problem = bad.group(1)
            messages.append({"file": problem.split(": ", 1)[0], "error": problem})
            continue
        match = _LIST_ID_RE.match(line)
        if not match:
            continue
        email_id = match.group(1)
        result = _call(ws, "email_read_email", {"user": user, "email_id": email_id})
        if not result.ok:
            messages.append(_error(_read_path("email", "email_read_email", user=user, email_id=email_id), result))
            continue
        messages.append({"id": email_id, **parse_message(result.observation)})
    return {"user": user, "messages": messages}


def explore_email(ws: Reader, users: list[str] | None = None) -> dict[str, Any]:
    """Every message of every (selected) mailbox, oldest first, with its full body."""
    found = mailbox_users(list_files(ws))
    return {"app": "email", "mailboxes": [_mailbox(ws, user) for user in _selected(found, users)]}


# -- calendar ----------------------------------------------------------------------------------

_EVENT_RE = re.compile(r"^- (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) to (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) \| (.*)$")


def parse_events(observation: str) -> list[dict[str, str]]:
    events = []
    for line in observation.splitlines()[1:]:
        match = _EVENT_RE.match(line)
        if not match:
            continue
        summary = match.group(3)
        cut = summary.rfind(" | location: ")
        if cut != -1:
            summary = summary[:cut]
        events.append({"summary": summary, "start": match.group(1), "end": match.group(2)})
    return events


def calendar_week(events: list[dict[str, str]], now: datetime | None) -> date | None:
    """Monday of the week the office works in: the week of ``now`` (a weekend day looks ahead to
    the next week) when the calendar has events in it; else the week holding most events among
    those not over by ``now`` (earliest on a tie); with no events, the week of ``now``."""
    counts: dict[date, int] = {}
    for event in events:
        day = datetime.strptime(event["start"], TIME_FORMAT).date()
        monday = day - timedelta(days=day.weekday())
        counts[monday] = counts.get(monday, 0) + 1
    current = None
    if now is not None:
        day = now.date()
        if day.weekday() >= 5:
            day += timedelta(days=7 - day.weekday())
        current = day - timedelta(days=day.weekday())
        if current in counts or not counts:
            return current
        counts = {m: c for m, c in counts.items() if m >= current} or counts
    if not counts:
        return current
    return min(counts, key=lambda m: (-counts[m], m))


FREE_WEEKS = 2  # the office's week and the next: a task set late in a week still has days ahead


def free_slots(events: list[dict[str, str]], monday: date | None, weeks: int = FREE_WEEKS) -> list[dict[str, str]]:
    """Whole hours from 09:00 to 17:00, Monday to Friday of that week and the ``weeks - 1`` after
    it, that overlap no event."""
    if monday is None:
        return []
    busy = [(datetime.strptime(e["start"], TIME_FORMAT), datetime.strptime(e["end"], TIME_FORMAT)) for e in events]
    slots = []
    for offset in (7 * week + d for week in range(weeks) for d in range(5)):
        day = monday + timedelta(days=offset)
        for hour in range(WORK_START, WORK_END):
            start = datetime(day.year, day.month, day.day, hour)
            end = start + timedelta(hours=1)
            if all(e <= start or s >= end for s, e in busy):
                slots.append({"start": start.strftime(TIME_FORMAT), "end": end.strftime(TIME_FORMAT)})
    return slots


def _calendar(ws: Reader, user: str) -> dict[str, Any]:
    result = _call(ws, "calendar_list_events", {"user": user})
    if not result.ok:
        return _error(_read_path("calendar", "calendar_list_events", user=user), result)
    events = parse_events(result.observation)
    return {"user": user, "events": events, "free_slots": free_slots(events, calendar_week(events, ws.now))}


def explore_calendar(ws: Reader, users: list[str] | None = None) -> dict[str, Any]:
    found = calendar_users(list_files(ws))
    return {"app": "calendar", "calendars": [_calendar(ws, user) for user in _selected(found, users)]}


Explorer = Callable[[Reader, list[str] | None], dict[str, Any]]


def explorer(app: str) -> Explorer:
    """The offline surfer of ``app``, as its registry entry names it (``KeyError`` for an app
    without one)."""
    entry = get_app(app)
    if not entry.surfer:
        raise KeyError(app)
    found: Explorer = load(entry.surfer)
    return found
