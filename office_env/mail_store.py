"""Mailboxes: ``emails/<user>/*.eml``, read and delivered as real RFC 822 files.

Shared by the e-mail tools and the evaluation catalog so both see mail the same way.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from office_env.errors import CorruptFileError, MissingFileError, OfficeError
from office_env.formats import eml_io
from office_env.formats.eml_io import Mail
from office_env.workspace import EMAILS_DIR, Workspace

_UNSAFE = re.compile(r"[^A-Za-z0-9 _.-]+")


def mailbox_or_error(ws: Workspace, user: str, field: str = "user") -> Path:
    folder = ws.mailbox(user, field=field)
    if not folder.is_dir():
        known = [p.name for p in sorted((ws.root / EMAILS_DIR).glob("*")) if p.is_dir()]
        hint = f" (mailboxes: {', '.join(known)})" if known else " (this testbed has no mailboxes)"
        raise MissingFileError(f"{field}: no mailbox for {user!r}{hint}")
    return folder


def scan(ws: Workspace, user: str, field: str = "user") -> tuple[list[tuple[str, Mail]], list[str]]:
    """Readable messages of ``user`` as ``(email_id, Mail)``, oldest first (then by id), and one
    line for each file that could not be read, so one damaged message hides no others."""
    folder = mailbox_or_error(ws, user, field)
    out, unreadable = [], []
    for path in sorted(folder.glob("*.eml")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            out.append((path.name, eml_io.read(path, ws.relative(path))))
        except CorruptFileError as exc:
            unreadable.append(str(exc))
    out.sort(key=lambda item: (_sort_time(item[1]), item[0]))
    return out, unreadable


def messages(ws: Workspace, user: str, field: str = "user") -> list[tuple[str, Mail]]:
    """The readable messages of ``user`` (see ``scan``)."""
    return scan(ws, user, field)[0]


def _sort_time(mail: Mail) -> datetime:
    when = mail.when()
    if when is None:
        return datetime.min
    return when.replace(tzinfo=None)


def read(ws: Workspace, user: str, email_id: str) -> Mail:
    folder = mailbox_or_error(ws, user)
    name = email_id if email_id.endswith(".eml") else f"{email_id}.eml"
    if "/" in name or "\\" in name or name.startswith("."):
        raise OfficeError(f"email_id: {email_id!r} is not a message id from email_list_emails")
    path = ws.resolve(f"{ws.relative(folder)}/{name}", field="email_id")
    if not path.is_file():
        raise MissingFileError(f"email_id: no message {email_id!r} in {user}'s mailbox")
    return eml_io.read(path, ws.relative(path))


def _file_name(folder: Path, subject: str) -> str:
    stem = _UNSAFE.sub("_", subject).strip(" ._")[:80] or "message"
    name, counter = f"{stem}.eml", 2
    while (folder / name).exists():
        name, counter = f"{stem}-{counter}.eml", counter + 1
    return name


def deliver(ws: Workspace, sender: str, recipient: str, subject: str, body: str) -> str:
    """Write one message into the sender's and the recipient's mailbox; return its id."""
    sender_box = ws.check_user(sender, field="sender")
    recipient_box = ws.check_user(recipient, field="recipient")
    when = ws.now or datetime.now().replace(microsecond=0)
    data = eml_io.build(sender, recipient, subject, body, when)
    ids, folders = [], set()
    for box in (recipient_box, sender_box):
        folder = ws.mailbox(box)  # looked up after the recipient's folder exists: "Bob" and "bob" are one box
        if folder in folders:
            continue
        folders.add(folder)
        folder.mkdir(parents=True, exist_ok=True)
        name = _file_name(folder, subject)
        ws.write_bytes(f"{ws.relative(folder)}/{name}", data)
        ids.append(name)
    return ids[0]
