"""E-mail tools: list a mailbox, read a message, send a message."""

from __future__ import annotations

from office_env import mail_store
from office_env.limits import MAX_HEADER_CHARS
from office_env.tools.common import USER
from office_env.tools.registry import tool
from office_env.workspace import Workspace

PREVIEW = 80
PERSON = {"type": "string", "description": "Username or address"}


@tool("email", "list_emails", "A user's mailbox: id, date, from, to, subject, preview.",
      writes=False, properties={"user": USER}, required=["user"])
def list_emails(ws: Workspace, user: str) -> str:
    items, unreadable = mail_store.scan(ws, user)
    lines = [f"{len(items)} email(s) for {user}:" if items else f"No emails for {user}."]
    for email_id, mail in items:
        preview = " ".join(mail.body.split())
        if len(preview) > PREVIEW:
            preview = preview[:PREVIEW] + "..."
        lines.append(
            f"- id: {email_id} | date: {mail.date} | from: {mail.sender} | to: {mail.recipient} | "
            f"subject: {mail.subject} | {preview}"
        )
    lines.extend(f"- unreadable: {problem}" for problem in unreadable)
    return "\n".join(lines)


@tool("email", "read_email", "Read a message by id from email_list_emails.",
      writes=False,
      properties={"user": USER, "email_id": {"type": "string", "description": "e.g. Budget.eml"}},
      required=["user", "email_id"], listed_by="email_list_emails")
def read_email(ws: Workspace, user: str, email_id: str) -> str:
    mail = mail_store.read(ws, user, email_id)
    copied = f"Cc: {mail.cc}\n" if mail.cc else ""
    return (
        f"From: {mail.sender}\nTo: {mail.recipient}\n{copied}Date: {mail.date}\nSubject: {mail.subject}\n\n"
        f"{mail.body}"
    )


@tool("email", "send_email",
      "Send an email (kept in both mailboxes).", writes=True,
      properties={
          "sender": PERSON,
          "recipient": PERSON,
          "subject": {"type": "string", "minLength": 1, "maxLength": MAX_HEADER_CHARS},
          "content": {"type": "string"},
      },
      required=["sender", "recipient", "subject", "content"], person="recipient", prose=("content", "subject"),
      body="content")
def send_email(ws: Workspace, sender: str, recipient: str, subject: str, content: str) -> str:
    email_id = mail_store.deliver(ws, sender, recipient, subject, content)
    return f"Sent {subject!r} from {sender} to {recipient} (id {email_id})."
