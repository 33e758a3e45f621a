"""Mailboxes: ``emails/<user>/*.eml``, read and delivered as real RFC 822 files.

Shared by the e-mail tools and the evaluation catalog so both see mail the same way. A message
file over ``MAX_MAIL_BYTES`` or otherwise unreadable is reported by name and skipped, never
parsed. Addresses and subjects are checked before a message is built, so a line break cannot
add a header.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

from office_env.errors import CorruptFileError, MissingFileError, OfficeError
from office_env.formats import eml_io
from office_env.formats.bounded import size_text
from office_env.formats.built import Kept
from office_env.formats.eml_io import Mail
from office_env.formats.text import check_line
from office_env.limits import MAX_MAIL_BYTES, MAX_NAME_BYTES
from office_env.untrusted import name_problem
from office_env.workspace import EMAILS_DIR, Workspace

_UNSAFE = re.compile(r"[^A-Za-z0-9 _.-]+")
_LABEL_RE = re.compile(r"^[A-Za-z0-9-]{1,63}$")


def mailbox_or_error(ws: Workspace, user: str, field: str = "user") -> Path:
    check_line(user, field)
    folder = ws.mailbox(user, field=field)
    if not folder.is_dir():
        known = [p.name for p in sorted((ws.root / EMAILS_DIR).glob("*")) if p.is_dir()]
        hint = f" (mailboxes: {', '.join(known)})" if known else " (this testbed has no mailboxes)"
        raise MissingFileError(f"{field}: no mailbox for {user!r}{hint}")
    return folder


def scan(ws: Workspace, user: str, field: str = "user") -> tuple[list[tuple[str, Mail]], list[str]]:
    """Readable messages of ``user`` as ``(email_id, Mail)``, oldest first (then by id), and one
    line for each file that could not be read, so one damaged message hides no others. A mailbox
    whose files are all the versions a scan saw before (each file's device, inode, size and time,
    as ``read_cache`` keys a file) is answered from that scan: the gates read one mailbox replay
    after replay."""
    folder = mailbox_or_error(ws, user, field)
    where = ws.relative(folder)  # the folder is resolved: its files' labels need no resolving
    files, versions = [], []
    for entry in _listing(folder):
        # one look per message (the listing's type, one lstat): a mailbox is read by every check of the mail
        if not entry.is_file(follow_symlinks=False):  # a link or a folder is no message
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:  # gone since the listing
            continue
        files.append((entry.name, entry.path, st))
        versions.append((entry.name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    out, unreadable = _SCANS.get((where, tuple(versions)), lambda: _read_all(where, files))
    return list(out), list(unreadable)


def _read_all(where: str, files: list[tuple[str, str, os.stat_result]]
              ) -> tuple[tuple[tuple[str, Mail], ...], tuple[str, ...]]:
    """The messages of ``files`` (name, path as the listing joined it, lstat) in the folder ``where``,
    sorted, and the lines of those unread."""
    out, unreadable = [], []
    for name, path, st in files:
        try:
            out.append((name, eml_io.read(path, f"{where}/{name}", st)))
        except CorruptFileError as exc:
            unreadable.append(str(exc))
    out.sort(key=lambda item: (_sort_time(item[1]), item[0]))
    return tuple(out), tuple(unreadable)


MAX_SCANS = 64
_SCANS: Kept[tuple[tuple[tuple[str, Mail], ...], tuple[str, ...]]] = Kept(MAX_SCANS)


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    """The folder's ``*.eml`` entries by name (hidden names and folders too, as a glob lists them;
    an unreadable folder lists nothing)."""
    try:
        with os.scandir(folder) as entries:
            return sorted((e for e in entries if e.name.endswith(".eml")), key=lambda e: e.name)
    except PermissionError:
        return []


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
    if ("/" in name or "\\" in name or name.startswith(".") or name_problem(name) is not None
            or len(name.encode("utf-8")) > MAX_NAME_BYTES):
        shown = email_id if len(email_id) <= 80 else email_id[:80] + "..."
        raise OfficeError(f"email_id: {shown!r} is not a message id from email_list_emails")
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


def check_address(user_or_address: str, field: str) -> None:
    """A user name, or ``name@domain`` with a plain host name: nothing that could end a header."""
    check_line(user_or_address, field)
    text = user_or_address.strip()
    if "@" in text:
        domain = text.split("@", 1)[1]
        if len(domain) > 253 or not all(_LABEL_RE.fullmatch(label) for label in domain.split(".")):
            shown = text if len(text) <= 80 else text[:80] + "..."
            raise OfficeError(f"{field}: {shown!r} is not a user name or an address like bob@example.com")


def deliver(ws: Workspace, sender: str, recipient: str, subject: str, body: str) -> str:
    """Write one message into the sender's and the recipient's mailbox; return its id."""
    check_address(sender, "sender")
    check_address(recipient, "recipient")
    sender_box = ws.check_user(sender, field="sender")
    recipient_box = ws.check_user(recipient, field="recipient")
    when = ws.now or datetime.now().replace(microsecond=0)
    data = eml_io.remembered_build(sender, recipient, subject, body, when)
    if len(data) > MAX_MAIL_BYTES:
        raise OfficeError(f"content: the message would be {size_text(len(data))}, over the "
                          f"{size_text(MAX_MAIL_BYTES)} limit for one message")
    ids, folders = [], set()
    for box in (recipient_box, sender_box):
        folder = ws.mailbox(box)  # looked up after the recipient's folder exists: "Bob" and "bob" are one box
        if folder in folders:
            continue
        folders.add(folder)
        if not folder.is_dir():  # made only when missing (a file in its place: mkdir refuses, as before)
            folder.mkdir(parents=True, exist_ok=True)
        name = _file_name(folder, subject)
        ws.write_bytes(f"{ws.relative(folder)}/{name}", data)
        ids.append(name)
    return ids[0]
