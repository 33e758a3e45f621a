"""RFC 822 messages (.eml) through the standard library's ``email`` package.

Messages are written with the modern ``EmailMessage`` API. They are read with the compat32
parser and explicit header decoding: the same result for our purposes, twenty times faster,
which matters when a mailbox is listed or searched on every step.

A message file over ``MAX_MAIL_BYTES`` is refused unread. Decoding encoded words takes time
quadratic in a header's length, so a header is decoded from at most ``_MAX_RAW_HEADER`` characters.
A message written here has a one-line subject (no header injection) of at most
``MAX_HEADER_CHARS`` characters: folding a long header is quadratic too.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime
from email import policy, quoprimime
from email.header import decode_header, make_header
from email.headerregistry import HeaderRegistry
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import format_datetime, parsedate_to_datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from office_env.errors import CorruptFileError
from office_env.formats.bounded import read_bytes
from office_env.formats.built import Kept, remembered
from office_env.formats.read_cache import cached_read, remember_content
from office_env.formats.text import check_line
from office_env.limits import MAX_HEADER_CHARS, MAX_MAIL_BYTES

MAIL_DOMAIN = "example.com"
_MAX_RAW_HEADER = 16 * MAX_HEADER_CHARS


@dataclass(frozen=True)
class Mail:
    sender: str
    recipient: str
    subject: str
    date: str
    body: str
    cc: str = ""

    def when(self) -> datetime | None:
        return _when(self.date) if self.date else None


@lru_cache(maxsize=1024)
def _when(date: str) -> datetime | None:
    """A Date header as a time (parsed once: a mailbox is sorted by it on every listing)."""
    try:
        return parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return None


def address(user_or_address: str) -> str:
    """``alice`` -> ``alice@example.com``; a full address is kept."""
    text = user_or_address.strip()
    return text if "@" in text else f"{text}@{MAIL_DOMAIN}"


class _HeaderClasses(HeaderRegistry):
    """The standard header registry, making each header name's class once (the standard one makes
    a new class for every header it parses: most of the cost of writing a message) and each header
    once per value: a parsed header is immutable, and the message sets the same content headers
    (its type, its encoding, its MIME version) message after message."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type] = {}
        self._headers: Kept[Any] = Kept(512)

    def __call__(self, name: str, value: Any) -> Any:
        if not isinstance(value, str):
            return super().__call__(name, value)
        return self._headers.get((name, value), lambda: super(_HeaderClasses, self).__call__(name, value))

    def __getitem__(self, name: str) -> type:
        key = name.lower()
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = super().__getitem__(name)
        return made


class _KeptFolds(policy.EmailPolicy):
    """The default policy, remembering how it folded a header (``_HeaderClasses`` gives the same
    object for the same value): the same headers are written message after message, and folding a
    parsed header cost as much as parsing it. A fold is kept with the header object it folded
    (which it keeps alive, so no other object takes its id) and the settings it depends on."""

    def fold_binary(self, name: str, value: Any) -> bytes:
        settings = (name, self.max_line_length, self.linesep, self.utf8, self.cte_type)
        kept = _FOLDS.get(id(value), lambda: (value, {}))
        if kept[0] is not value:  # not reached while the entry keeps its header alive; kept to be sure
            return super().fold_binary(name, value)
        folded = kept[1].get(settings)
        if folded is None:
            folded = kept[1][settings] = super().fold_binary(name, value)
        return folded


_FOLDS: Kept[tuple[Any, dict[tuple, bytes]]] = Kept(512)
_POLICY = _KeptFolds(linesep="\n", header_factory=_HeaderClasses())


def _parsed(name: str, value: str) -> Any:
    """A header as the policy parses it; parsed once per value (the same few people write most
    mails, a task's replays the same subject on the same day), since a parsed header is immutable
    and the message takes it as it is. A value with a line break is refused as the message would
    refuse it (a header injection)."""
    if len(value.splitlines()) > 1:
        raise ValueError("Header values may not contain linefeed or carriage return characters")
    return _header_of(name, value)


@lru_cache(maxsize=512)
def _header_of(name: str, value: str) -> Any:
    return _POLICY.header_factory(name, value)


def build(sender: str, recipient: str, subject: str, body: str, when: datetime,
          cc: tuple[str, ...] | list[str] = ()) -> bytes:
    """One message (``cc``: users or addresses copied); ``OfficeError`` when the subject is not
    one line of at most ``MAX_HEADER_CHARS``."""
    check_line(subject, "subject")
    copied = "".join(f"\n{c}" for c in cc)  # no cc: the same id as before cc existed
    digest = hashlib.sha1(f"{sender}\n{recipient}\n{subject}\n{body}\n{when.isoformat()}{copied}".encode()).hexdigest()
    message_id = f"<{digest[:20]}@{MAIL_DOMAIN}>"
    copies = ", ".join(address(c) for c in cc)
    plain = _plain_message(address(sender), address(recipient), subject, body, when, message_id, copies)
    if plain is not None:
        return plain
    message = EmailMessage(policy=_POLICY)
    message["From"] = _parsed("From", address(sender))
    message["To"] = _parsed("To", address(recipient))
    if cc:
        message["Cc"] = _parsed("Cc", copies)
    message["Subject"] = _parsed("Subject", subject)  # a replay sends the same subject on the same day again
    message["Date"] = _parsed("Date", format_datetime(when))
    message["Message-ID"] = message_id
    message.set_content(body)
    return message.as_bytes()


# what a plain message's headers hold: a simple address (copies: such addresses, a comma and a space
# apart), words of printable ASCII one space apart
_PLAIN_ADDRESS_RE = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_PLAIN_ADDRESSES_RE = re.compile(rf"{_PLAIN_ADDRESS_RE.pattern}(?:, {_PLAIN_ADDRESS_RE.pattern})*")
_PLAIN_WORDS_RE = re.compile(r"[!-~]+(?: [!-~]+)*")
_MAX_LINE = 78  # the policy's line length: a header or body line longer than this is folded or encoded


def _plain_message(sender: str, recipient: str, subject: str, body: str, when: datetime,
                   message_id: str, copies: str = "") -> bytes | None:
    """The bytes ``EmailMessage`` writes for a plain message (simple addresses, and the ``copies``,
    if any, such addresses one line holds; a subject of printable ASCII words that fits its line, no
    encoded word; a date from 1900 on; an ASCII body, which ``set_content`` sends as it is when every
    line fits, else quoted-printable), written out directly: building the message object and its
    headers was most of the cost of sending a mail. Its parse is remembered by content, so reading
    it back costs nothing. None for any other message (tests/office_env/test_eml_plain.py compares
    both ways over many messages)."""
    date = format_datetime(when)
    if (when.year < 1900 or not body.isascii() or not _PLAIN_ADDRESS_RE.fullmatch(sender)
            or not _PLAIN_ADDRESS_RE.fullmatch(recipient) or (copies and not _PLAIN_ADDRESSES_RE.fullmatch(copies))):
        return None
    headers = (("From", sender), ("To", recipient), *((("Cc", copies),) if copies else ()), ("Subject", subject),
               ("Date", date))
    for name, value in headers:
        if len(name) + 2 + len(value) > _MAX_LINE or "=?" in value or not _PLAIN_WORDS_RE.fullmatch(value):
            return None
    lines = body.encode("ascii").splitlines()  # as set_content splits it (at \n, \r and \r\n only)
    text = "\n".join(line.decode("ascii") for line in lines) + "\n"
    if max((len(line) for line in lines), default=0) <= _MAX_LINE:
        encoding, payload = "7bit", text
    else:
        sniff = b"\n".join(lines[:10]) + b"\n"  # set_content's choice, from the first ten lines
        if len(quoprimime.body_encode(sniff.decode("ascii"), _MAX_LINE)) > len(binascii.b2a_base64(sniff)):
            return None  # base64 suits it better: left to the message
        encoding, payload = "quoted-printable", quoprimime.body_encode(text, _MAX_LINE)
    head = "".join(f"{name}: {value}\n" for name, value in headers)
    data = (f"{head}Message-ID: {message_id}\n"
            f'Content-Type: text/plain; charset="utf-8"\nContent-Transfer-Encoding: {encoding}\n'
            f"MIME-Version: 1.0\n\n{payload}").encode("ascii")
    if len(data) <= MAX_MAIL_BYTES:
        remember_content(_kind(), data, Mail(sender, recipient, subject, date, text.strip("\n"), copies))
    return data


# the office tools' mails: a task's replays send the same mail again (see office_env.formats.built)
remembered_build = remembered(build)


def _header(message: Message, name: str) -> str:
    raw = message.get(name)
    if raw is None:
        return ""
    raw = str(raw)
    if len(raw) > _MAX_RAW_HEADER:
        raw = raw[:_MAX_RAW_HEADER] + " [cut]"
    try:
        return str(make_header(decode_header(raw)))
    except (LookupError, UnicodeError, ValueError):
        return raw


def _decode(part: Message) -> str:
    payload = cast(bytes, part.get_payload(decode=True) or b"")  # decoded, a leaf part's payload is bytes
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, "replace")
    except LookupError:
        return payload.decode("utf-8", "replace")


def _body_of(message: Message) -> str:
    """The first text/plain part (else the first text/html part), decoded."""
    fallback = None
    for part in message.walk():
        if part.is_multipart() or part.get_content_disposition() == "attachment":
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            return _decode(part)
        if kind == "text/html" and fallback is None:
            fallback = part
    return _decode(fallback) if fallback is not None else ""


def parse(data: bytes, label: str) -> Mail:
    try:
        message = BytesParser(policy=policy.compat32).parsebytes(data)
        if not any(message.get(h) for h in ("From", "To", "Subject")):
            raise CorruptFileError(f"{label}: not an e-mail message (no From, To or Subject header)")
        return Mail(
            sender=_header(message, "From"),
            recipient=_header(message, "To"),
            subject=_header(message, "Subject"),
            date=_header(message, "Date"),
            cc=_header(message, "Cc"),
            body=_body_of(message).replace("\r\n", "\n").strip("\n"),
        )
    except CorruptFileError:
        raise
    except Exception as exc:
        raise CorruptFileError(f"{label}: not a readable e-mail message ({type(exc).__name__})") from None


def read(path: str | os.PathLike[str], label: str, st: os.stat_result | None = None) -> Mail:
    """The message at ``path``; ``CorruptFileError`` for one over ``MAX_MAIL_BYTES`` or unparsable.
    ``st``: its status from a folder listing (see ``read_cache.cached_read``). A message is its bytes'
    alone, so one delivered again (to the sender's copy, or by the next replay) is parsed once."""
    return cached_read(_kind(), path, lambda: parse(read_bytes(path, label, MAX_MAIL_BYTES), label), st=st,
                       by_content=True)


def _kind() -> str:
    """The read cache's kind of a message read under the limits in force (what was read or
    remembered under other limits is not taken for it)."""
    return f"eml:{MAX_MAIL_BYTES}:{_MAX_RAW_HEADER}"


def read_text(path: Path, label: str) -> str:
    """What a person reading the message at ``path`` sees: its sender, recipient, copies, subject
    and body, a line each (read anew, never from the cache)."""
    mail = parse(read_bytes(path, label, MAX_MAIL_BYTES), label)
    return "\n".join((mail.sender, mail.recipient, mail.cc, mail.subject, mail.body))
