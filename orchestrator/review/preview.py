"""Previews of a task's office for the review page: Word text and tables, sheet grids, PDF text
per page, mailboxes as threads and calendars as week views.

Every path comes from a URL, so it goes through ``Workspace.resolve`` (no ``..``, no symlink out
of the testbed) and every reader keeps its size limits; a file that cannot be read becomes one
line saying why, never an exception.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable

from office_env import OfficeError, Workspace
from office_env.apps import load, registered_apps
from office_env.formats import docx_io, eml_io, ics_io, pdf_io, xlsx_io
from office_env.formats.bounded import read_bytes
from office_env.untrusted import UntrustedInputError
from office_env.workspace import EMAILS_DIR

MAX_ROWS = 300
MAX_COLS = 40
MAX_FILES = 500
_REPLY = re.compile(r"^\s*((re|fw|fwd|aw)\s*:\s*)+", re.IGNORECASE)


def list_files(testbed: Path) -> list[str]:
    if not testbed.is_dir():
        return []
    try:
        return Workspace(testbed).list_files()[:MAX_FILES]
    except (OfficeError, UntrustedInputError, OSError):
        return []


def preview(testbed: Path, relpath: str) -> dict[str, Any]:
    """``{"path", "kind", ...}``: the view of one testbed file; ``kind == "error"`` with a reason
    when the path is refused or the file cannot be read."""
    try:
        ws = Workspace(testbed)
        path = ws.resolve(relpath, field="file")
        if not path.is_file():
            return {"path": relpath, "kind": "error", "error": f"{relpath}: no such file in this testbed"}
        label = ws.relative(path)
        view = _view_of(path.suffix.lower())
        if view is not None:
            return {"path": label, **view(path, label)}
        return {"path": label, "kind": "text",
                "text": read_bytes(path, label, 1 << 20)[:20_000].decode("utf-8", "replace")}
    except (OfficeError, UntrustedInputError, OSError, ValueError) as exc:
        return {"path": relpath, "kind": "error", "error": str(exc)[:300]}


def _view_of(suffix: str) -> Callable[[Path, str], dict[str, Any]] | None:
    """The view of the app whose files have ``suffix``, as its registry entry names it."""
    app = next((a for a in registered_apps() if a.preview and a.suffix == suffix), None)
    return load(app.preview) if app else None


def word_view(path: Path, label: str) -> dict[str, Any]:
    return {"kind": "docx", "blocks": _docx_blocks(docx_io.read_text(path, label))}


def sheet_view(path: Path, label: str) -> dict[str, Any]:
    book = xlsx_io.read_book(path, label)
    sheets = [{"title": name, "rows": [list(r[:MAX_COLS]) for r in book.sheets[name].rows[:MAX_ROWS]],
               "cut": len(book.sheets[name].rows) > MAX_ROWS or not book.sheets[name].complete}
              for name in book.sheetnames]
    return {"kind": "xlsx", "sheets": sheets}


def pdf_view(path: Path, label: str) -> dict[str, Any]:
    return {"kind": "pdf", "pages": list(pdf_io.read_pages(path, label))}


def mail_view(path: Path, label: str) -> dict[str, Any]:
    return {"kind": "eml", "mail": _mail(eml_io.read(path, label))}


def calendar_view(path: Path, label: str) -> dict[str, Any]:
    return {"kind": "ics", "weeks": week_view(ics_io.read_events(path, label))}


def _docx_blocks(text: str) -> list[dict[str, Any]]:
    """Paragraphs and tables (runs of ``a | b`` lines, as the reader writes table rows)."""
    blocks: list[dict[str, Any]] = []
    for line in text.splitlines():
        if " | " in line:
            cells = line.split(" | ")
            if blocks and blocks[-1]["kind"] == "table":
                blocks[-1]["rows"].append(cells)
            else:
                blocks.append({"kind": "table", "rows": [cells]})
        elif line.strip():
            blocks.append({"kind": "p", "text": line})
    return blocks


def _mail(mail: eml_io.Mail) -> dict[str, Any]:
    return {"from": mail.sender, "to": mail.recipient, "cc": mail.cc, "subject": mail.subject, "date": mail.date,
            "body": mail.body[:20_000]}


def mailbox(testbed: Path, user: str) -> list[dict[str, Any]]:
    """A user's mailbox as threads (mails grouped by subject without Re:/Fwd:), oldest mail first
    in each thread, threads by their latest mail, newest first."""
    ws = Workspace(testbed)
    threads: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rel in ws.list_files(f"{EMAILS_DIR}/{user}"):
        if not rel.lower().endswith(".eml"):
            continue
        try:
            mail = eml_io.read(ws.resolve(rel), rel)
        except (OfficeError, UntrustedInputError, OSError) as exc:
            threads["(unreadable)"].append({"path": rel, "error": str(exc)[:200]})
            continue
        key = _REPLY.sub("", mail.subject).strip().lower() or "(no subject)"
        when = mail.when()
        threads[key].append({"path": rel, **_mail(mail), "sort": when.replace(tzinfo=None).isoformat() if when else ""})
    out = []
    for key, mails in threads.items():
        mails.sort(key=lambda m: m.get("sort", ""))
        out.append({"subject": mails[0].get("subject", key), "mails": mails, "latest": mails[-1].get("sort", "")})
    out.sort(key=lambda t: t["latest"], reverse=True)
    return out


def week_view(events: list[ics_io.CalendarEvent]) -> list[dict[str, Any]]:
    """Events by ISO week, each week seven days (Monday first) with that day's events."""
    weeks: dict[date, list[list[dict[str, str]]]] = {}
    for event in events[:2000]:
        day = event.start.date()
        monday = day - timedelta(days=day.weekday())
        week = weeks.setdefault(monday, [[] for _ in range(7)])
        week[day.weekday()].append({"summary": event.summary, "start": event.start.strftime("%H:%M"),
                                    "end": event.end.strftime("%H:%M"), "location": event.location})
    return [{"monday": monday.isoformat(),
             "days": [{"date": (monday + timedelta(days=i)).isoformat(), "events": week[i]} for i in range(7)]}
            for monday, week in sorted(weeks.items())]
