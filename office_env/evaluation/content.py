"""Text views of testbed content that criteria search: documents by type, mailboxes, calendars."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Callable

from office_env import mail_store
from office_env.apps import generation, load, text_readers
from office_env.errors import CorruptFileError, MissingFileError, OfficeError
from office_env.formats import ics_io
from office_env.formats.bounded import read_bytes
from office_env.workspace import EMAILS_DIR, Workspace

MAILBOX = "email"  # the doc type a criterion searches a person's mailbox as (by username), not a file
# OfficeBench's doc types in the order its catalog lists them: a schema's enum keeps that order (the same
# bytes as before the enum followed the registry); only what the registry reads is listed, the rest after
OFFICEBENCH_ORDER = ("txt", "ics", "doc", "docx", "xlsx", "pdf", MAILBOX)
_FOLD_RE = re.compile(r"\r?\n[ \t]")


def read_plain(path: Path, label: str) -> str:
    """The text of a UTF-8 file of at most ``MAX_FILE_BYTES``."""
    data = read_bytes(path, label)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptFileError(f"{label}: not a UTF-8 text file") from None


def read_ics(path: Path, label: str) -> str:
    """The raw text (long lines unfolded) followed by a readable list of its events.

    OfficeBench reads ``ics`` as plain text, and some of its tasks name a .txt file so; a file
    that does not parse as a calendar is therefore searched as its raw text alone."""
    raw = _FOLD_RE.sub("", read_plain(path, label))
    lines = [raw]
    try:
        events = ics_io.read_events(path, label)
    except CorruptFileError:
        events = []
    for event in events:
        lines.append(f"{event.summary} {event.start:%Y-%m-%d %H:%M:%S} {event.end:%Y-%m-%d %H:%M:%S} "
                     f"{event.location} {event.description}")
    return "\n".join(lines)


def read_document(path: Path, label: str, doc_type: str) -> str:
    """Text of one file read as ``doc_type``; raises OfficeError naming the file (and, when the
    file's name says another type than the criterion's, both: a wrong file type is the answer's
    fault, said in words)."""
    if not path.exists():
        raise MissingFileError(f"{label}: file does not exist")
    if not path.is_file():
        raise OfficeError(f"{label}: is a folder, not a file")
    try:
        return _read_as(path, label, doc_type)
    except CorruptFileError as exc:
        suffix = path.suffix.lower()[1:]
        named = suffix if suffix in _readers(generation()) else None
        if named and named != doc_type and {named, doc_type} != {"doc", "docx"}:
            raise CorruptFileError(f"{label}: its name says {named}, but the criterion reads it as {doc_type} "
                                   f"({exc})") from None
        raise


def doc_types(first: tuple[str, ...] = OFFICEBENCH_ORDER, *, mailbox: bool = True) -> tuple[str, ...]:
    """The doc types a criterion may read, from the app registry: each app's text readers
    (``App.readers``) and, with ``mailbox``, a person's mailbox; those in ``first`` in its order."""
    return _doc_types(generation(), first, mailbox)


@lru_cache(maxsize=16)
def _doc_types(_generation: int, first: tuple[str, ...], mailbox: bool) -> tuple[str, ...]:
    known = [*text_readers(), *([MAILBOX] if mailbox else [])]
    return tuple(d for d in first if d in known) + tuple(d for d in known if d not in first)


@lru_cache(maxsize=4)
def _readers(_generation: int) -> dict[str, Callable[[Path, str], str]]:
    return {doc_type: load(ref) for doc_type, ref in text_readers().items()}


def _read_as(path: Path, label: str, doc_type: str) -> str:
    """``path`` read by the reader the app of ``doc_type`` names (``office_env.apps``)."""
    reader = _readers(generation()).get(doc_type)
    if reader is not None:
        return reader(path, label)
    raise OfficeError(f"doc_type: {doc_type!r} is not one of {', '.join(doc_types())}")


def find_mailbox_user(ws: Workspace, username: str) -> str:
    """Mailbox owner for ``username``: exact, case-insensitive, then a unique partial match."""
    name = ws.check_user(username, field="username")
    if ws.find_user_entry(EMAILS_DIR, name) is not None:
        return name
    folder = ws.root / EMAILS_DIR
    boxes = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    partial = [b for b in boxes if name.lower() in b.lower() or b.lower() in name.lower()]
    if len(partial) == 1:
        return partial[0]
    raise MissingFileError(f"username: no mailbox for {username!r} (mailboxes: {', '.join(boxes) or 'none'})")


def mailbox_text(ws: Workspace, username: str) -> tuple[str, list[str]]:
    """All readable messages of a mailbox as one text, and a line per unreadable file."""
    user = find_mailbox_user(ws, username)
    items, unreadable = mail_store.scan(ws, user, field="username")
    parts = [f"Email ID: {email_id}\nFrom: {mail.sender}\nTo: {mail.recipient}\n"
             f"Subject: {mail.subject}\nContent: {mail.body}" for email_id, mail in items]
    return "\n".join(parts), unreadable
