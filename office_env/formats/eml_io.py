"""RFC 822 messages (.eml) through the standard library's ``email`` package."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path

from office_env.errors import CorruptFileError

MAIL_DOMAIN = "example.com"


@dataclass(frozen=True)
class Mail:
    sender: str
    recipient: str
    subject: str
    date: str
    body: str

    def when(self) -> datetime | None:
        try:
            return parsedate_to_datetime(self.date) if self.date else None
        except (TypeError, ValueError):
            return None


def address(user_or_address: str) -> str:
    """``alice`` -> ``alice@example.com``; a full address is kept."""
    text = user_or_address.strip()
    return text if "@" in text else f"{text}@{MAIL_DOMAIN}"


def build(sender: str, recipient: str, subject: str, body: str, when: datetime) -> bytes:
    message = EmailMessage(policy=policy.default.clone(linesep="\n"))
    message["From"] = address(sender)
    message["To"] = address(recipient)
    message["Subject"] = subject
    message["Date"] = format_datetime(when)
    digest = hashlib.sha1(f"{sender}\n{recipient}\n{subject}\n{body}\n{when.isoformat()}".encode()).hexdigest()
    message["Message-ID"] = f"<{digest[:20]}@{MAIL_DOMAIN}>"
    message.set_content(body)
    return message.as_bytes()


def _body_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        return part.get_content()
    except (LookupError, UnicodeError, AttributeError):
        payload = part.get_payload(decode=True) or b""
        return payload.decode("utf-8", "replace")


def parse(data: bytes, label: str) -> Mail:
    try:
        message = BytesParser(policy=policy.default).parsebytes(data)
        if not any(message.get(h) for h in ("From", "To", "Subject")):
            raise CorruptFileError(f"{label}: not an e-mail message (no From, To or Subject header)")
        return Mail(
            sender=str(message.get("From", "")),
            recipient=str(message.get("To", "")),
            subject=str(message.get("Subject", "")),
            date=str(message.get("Date", "")),
            body=_body_of(message).strip("\n"),
        )
    except CorruptFileError:
        raise
    except Exception as exc:
        raise CorruptFileError(f"{label}: not a readable e-mail message ({type(exc).__name__})") from None


def read(path: Path, label: str) -> Mail:
    return parse(path.read_bytes(), label)
