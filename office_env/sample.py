"""A tiny fixed office (one file of every kind) for demos, benchmarks and tests."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from office_env.apps import get_app
from office_env.formats import docx_io, eml_io, ics_io, pdf_io, xlsx_io
from office_env.formats.ics_io import CalendarEvent

SAMPLE_NOW = datetime(2024, 5, 3, 9, 30)

SAMPLE_MAIL = [
    ("alice", "bob", "Quarterly budget", "Hi Alice, the budget is 4,200 EUR."),
    ("alice", "carol", "Lunch", "Lunch at noon?"),
    ("bob", "alice", "Re: Quarterly budget", "Thanks Bob."),
]


def write_sample_office(root: Path, now: datetime = SAMPLE_NOW) -> Path:
    """Write a testbed with a docx, an xlsx, a pdf, a txt, three mails and a calendar."""
    data = root / "data"
    data.mkdir(parents=True)
    (data / "notes.docx").write_bytes(docx_io.build("Meeting notes\nBudget review on Friday\nOwner: Dana Reyes", now))
    (data / "scores.xlsx").write_bytes(xlsx_io.build(
        [["Name", "Score", "Status"], ["Alice", 85, "Done"], ["Bob", 92.5, "Open"], ["Carol", 1200, "Done"]],
        sheet_name="Scores", stamp=now))
    (data / "invoice.pdf").write_bytes(pdf_io.build("Invoice 7731\nTotal due: 12,500.00 USD\nDue date 2024-05-31",
                                                    stamp=now))
    (data / "readme.txt").write_text("Plain text file for the team.\n", encoding="utf-8")
    for user, sender, subject, body in SAMPLE_MAIL:
        box = root / get_app("email").folder / user
        box.mkdir(parents=True, exist_ok=True)
        (box / f"{subject.replace(':', '')}.eml").write_bytes(eml_io.build(sender, user, subject, body, now))
    cal = root / get_app("calendar").folder
    cal.mkdir()
    (cal / f"alice{get_app('calendar').suffix}").write_bytes(ics_io.build([
        CalendarEvent("Team sync", datetime(2024, 5, 6, 10, 0), datetime(2024, 5, 6, 11, 0), "Room 2"),
        CalendarEvent("1:1 with Bob", datetime(2024, 5, 6, 14, 0), datetime(2024, 5, 6, 14, 30)),
    ], "alice", now))
    return root


# -- a small OfficeBench-format task tree built on the sample office --------------------------

def _subtask(task: str, evaluation: list[dict]) -> dict:
    return {"username": "alice", "date": "2024-05-03", "weekday": "Friday", "time": "09:30 AM",
            "task": task, "evaluation": evaluation}


SAMPLE_TASKS: dict[str, list[dict]] = {
    "1-1": [
        _subtask("Set Bob's score in data/scores.xlsx to 95.",
                 [{"function": "evaluate_excel_cell_value",
                   "args": {"file": "./data/scores.xlsx", "matches": [{"row": 3, "col": 2, "value": 95}]}}]),
        _subtask("Find who has the highest score in data/scores.xlsx and write the name into answer.txt.",
                 [{"function": "evaluate_contain",
                   "args": {"doc_type": "txt", "file": "./data/answer.txt", "keywords": ["Carol"]}}]),
    ],
    "1-2": [
        _subtask("Swap the rows of Alice and Bob in data/scores.xlsx.",
                 [{"function": "evaluate_exact_match",
                   "args": {"doc_type": "xlsx", "result_file": "./data/scores.xlsx",
                            "expected_file": "../../../../reference/scores_swapped.xlsx"}}]),
    ],
    # a task in OfficeBench's format names a calendar by OfficeBench's own layout, not by the registry's folders
    "2-1": [
        _subtask("Add 'Budget review' to my calendar on 2024-05-07 from 15:00 to 16:00 and email Bob to confirm it.",
                 [{"function": "evaluate_contain",
                   "args": {"doc_type": "ics", "file": "./calendar/alice.ics", "keywords": ["Budget review"]}},
                  {"function": "evaluate_calendar_no_overlap", "args": {"username": "alice"}},
                  {"function": "evaluate_contain",
                   "args": {"doc_type": "email", "username": "bob", "keywords": ["Budget review"]}}]),
    ],
    "3-1": [
        _subtask("Read the invoice PDF, write its number and total into data/invoice_summary.docx, "
                 "and email the summary to Carol.",
                 [{"function": "evaluate_file_exist", "args": {"file": "./data/invoice_summary.docx"}},
                  {"function": "evaluate_contain",
                   "args": {"doc_type": "docx", "file": "./data/invoice_summary.docx", "keywords": ["7731", "12500"]}},
                  {"function": "evaluate_contain",
                   "args": {"doc_type": "email", "username": "carol", "keywords": ["7731"]}}]),
    ],
}


def write_sample_officebench(root: Path, now: datetime = SAMPLE_NOW) -> Path:
    """Write ``root/tasks/<apps>-<k>/{subtasks,testbed,reference}`` in OfficeBench's layout."""
    tasks = root / "tasks"
    for folder, subtasks in SAMPLE_TASKS.items():
        task_dir = tasks / folder
        write_sample_office(task_dir / "testbed", now)
        (task_dir / "subtasks").mkdir(parents=True)
        for index, subtask in enumerate(subtasks):
            (task_dir / "subtasks" / f"{index}.json").write_text(json.dumps(subtask, indent=2) + "\n", encoding="utf-8")
    reference = tasks / "1-2" / "reference"
    reference.mkdir()
    (reference / "scores_swapped.xlsx").write_bytes(xlsx_io.build(
        [["Name", "Score", "Status"], ["Bob", 92.5, "Open"], ["Alice", 85, "Done"], ["Carol", 1200, "Done"]],
        sheet_name="Scores", stamp=now))
    return root
