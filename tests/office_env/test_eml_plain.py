"""A plain message written out directly is the message ``EmailMessage`` writes, and the parse it
remembers is what reading its bytes gives."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from office_env.errors import CorruptFileError
from office_env.formats import eml_io, read_cache

WORDS = ["Budget", "Q3", "re:", "Re:", "(draft)", '"quoted"', "=?utf-8?q?x?=", "=", "a=b", "--", "x" * 70, "total:",
         "1,374.45", "EUR", "<tag>", "@", "é", "naïve", "\t", "a;b", "[x]", "50%", "From", "\\", "~", "'"]
ADDRESSES = ["bob", "alice", "Bob", "o-neil", "a_b", "a.b", "sofia@example.com", "x@mail.co.uk", "a..b", ".a", "a.",
             "bob@", "bob@-x.com", "bob@x-.com", "o'neil", "a+b@example.com", "名@example.com", "b" * 70]
LINES = ["Hi Bob,", "", "  indented", "trailing  ", "tab\t", "From the team", "=3D", "a=b", "x" * 77, "y" * 78,
         "z" * 79, "w " * 60, "é", "\x0c", "\x0b form", "\x1c", "line\rcarriage", "crlf\r\n", ".", "Best,", "Alice",
         "=" * 100, "\x00", "\u2028", "- item 1,200.00 EUR"]


def _messages(count: int, seed: int) -> list[tuple]:
    """Messages of every kind; half of them of the kind the office sends (plain words and lines)."""
    rng = random.Random(seed)
    out = []
    for index in range(count):
        usual = index % 2 == 0
        words = [w for w in WORDS if w.isascii() and w.isprintable()] if usual else WORDS
        spaces = [" "] if usual else [" ", "  ", " "]
        subject = rng.choice(spaces).join(rng.choice(words) for _ in range(rng.randint(1, 5)))
        if not usual and rng.random() < 0.2:
            subject = " " + subject if rng.random() < 0.5 else subject + " "
        separators = ["\n"] if usual else ["\n", "\n", "\n", "\r\n", "\r", "\n\n"]
        body = "".join(rng.choice(LINES) + rng.choice(separators) for _ in range(rng.randint(0, 16)))
        if rng.random() < 0.2:
            body = rng.choice(["\n", "\n\n", ""]) + body
        zone = rng.choice([None, timezone.utc, timezone(timedelta(hours=2)),
                           timezone(timedelta(hours=-5, minutes=-30))])
        year = 2025 if usual else rng.choice([1, 99, 1899, 1900, 1999, 2025, 9999])
        when = datetime(year, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59),
                        rng.randint(0, 59), tzinfo=zone)
        people = ADDRESSES[:8] if usual else ADDRESSES
        copies = tuple(rng.choice(people) for _ in range(rng.choice([0, 0, 1, 2, 3, 6])))
        out.append((rng.choice(people), rng.choice(people), subject, body, when, copies))
    return out


def test_a_plain_message_is_written_as_the_message_writes_it_and_read_back_as_remembered(tmp_path: Path, monkeypatch):
    made, copied = [], []
    for sender, recipient, subject, body, when, cc in _messages(3000, 5):
        if "\n" in subject or not subject.strip():
            continue
        try:
            direct = eml_io.build(sender, recipient, subject, body, when, cc)
        except Exception as exc:  # noqa: BLE001 -- the same failure either way
            with monkeypatch.context() as m, pytest.raises(type(exc)):
                m.setattr(eml_io, "_plain_message", lambda *args: None)
                eml_io.build(sender, recipient, subject, body, when, cc)
            continue
        with monkeypatch.context() as m:
            m.setattr(eml_io, "_plain_message", lambda *args: None)
            assert direct == eml_io.build(sender, recipient, subject, body, when, cc), (sender, recipient, cc, subject)
        plain = eml_io._plain_message(eml_io.address(sender), eml_io.address(recipient), subject, body, when,
                                      direct.split(b"Message-ID: ")[1].split(b"\n")[0].decode(),
                                      ", ".join(eml_io.address(c) for c in cc)) is not None
        made.append(plain)
        copied.append(plain and bool(cc))
        if plain:
            read_cache.clear()
            eml_io.build(sender, recipient, subject, body, when, cc)  # remembers its parse
            path = tmp_path / "m.eml"
            path.write_bytes(direct)
            assert eml_io.read(path, "m.eml") == eml_io.parse(direct, "m.eml"), (subject, body, cc)
    assert sum(made) > 300 and len(made) - sum(made) > 300  # both ways are exercised
    assert sum(copied) > 100  # plain messages with copies among them


def test_a_remembered_message_is_read_under_the_limits_in_force(tmp_path: Path, monkeypatch):
    when = datetime(2025, 3, 4, 9, 30)
    data = eml_io.build("alice", "bob", "Totals", "x " * 2000, when)
    path = tmp_path / "m.eml"
    path.write_bytes(data)
    monkeypatch.setattr(eml_io, "MAX_MAIL_BYTES", len(data) - 1)
    with pytest.raises(CorruptFileError):
        eml_io.read(path, "m.eml")
