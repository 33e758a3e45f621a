"""Shared fixtures: a small but real office testbed written with the project's own writers."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from office_env import Workspace, default_registry
from office_env.formats import docx_io, eml_io, ics_io, pdf_io, xlsx_io
from office_env.formats.ics_io import CalendarEvent

NOW = datetime(2024, 5, 3, 9, 30)


def write_office(root: Path) -> Path:
    """Write a testbed with one file of every kind; returns ``root``."""
    data = root / "data"
    data.mkdir(parents=True)
    (data / "notes.docx").write_bytes(docx_io.build("Meeting notes\nBudget review on Friday\nOwner: Dana Reyes", NOW))
    (data / "scores.xlsx").write_bytes(xlsx_io.build(
        [["Name", "Score", "Status"], ["Alice", 85, "Done"], ["Bob", 92.5, "Open"], ["Carol", 1200, "Done"]],
        sheet_name="Scores", stamp=NOW))
    (data / "invoice.pdf").write_bytes(pdf_io.build("Invoice 7731\nTotal due: 12,500.00 USD\nDue date 2024-05-31", stamp=NOW))
    (data / "readme.txt").write_text("Plain text file for the team.\n", encoding="utf-8")
    for user, sender, subject, body in [
        ("alice", "bob", "Quarterly budget", "Hi Alice, the budget is 4,200 EUR."),
        ("alice", "carol", "Lunch", "Lunch at noon?"),
        ("bob", "alice", "Re: Quarterly budget", "Thanks Bob."),
    ]:
        box = root / "emails" / user
        box.mkdir(parents=True, exist_ok=True)
        (box / f"{subject.replace(':', '')}.eml").write_bytes(eml_io.build(sender, user, subject, body, NOW))
    cal = root / "calendar"
    cal.mkdir()
    (cal / "alice.ics").write_bytes(ics_io.build([
        CalendarEvent("Team sync", datetime(2024, 5, 6, 10, 0), datetime(2024, 5, 6, 11, 0), "Room 2"),
        CalendarEvent("1:1 with Bob", datetime(2024, 5, 6, 14, 0), datetime(2024, 5, 6, 14, 30)),
    ], "alice", NOW))
    return root


@pytest.fixture
def testbed(tmp_path: Path) -> Path:
    return write_office(tmp_path / "testbed")


@pytest.fixture
def ws(testbed: Path) -> Workspace:
    return Workspace(testbed, now=NOW)


@pytest.fixture
def registry():
    return default_registry()


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
