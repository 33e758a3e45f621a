"""The embedded OfficeBench-format sample: reproducible, loadable, and solvable by tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from office_env import Snapshot, Workspace, default_registry, evaluate_criteria, load_officebench
from office_env.sample import write_sample_officebench

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"

# A solution for each sample subtask, as office tool calls.
SOLUTIONS = {
    "1-1/0": [("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 2, "value": 95})],
    "1-1/1": [("system_write_answer", {"text": "Carol"})],
    "1-2/0": [
        ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 1, "value": "Bob"}),
        ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": 92.5}),
        ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 3, "value": "Open"}),
        ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 1, "value": "Alice"}),
        ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 2, "value": 85}),
        ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 3, "value": "Done"}),
    ],
    "2-1/0": [
        ("calendar_create_event", {"user": "alice", "summary": "Budget review",
                                   "start": "2024-05-07 15:00:00", "end": "2024-05-07 16:00:00"}),
        ("email_send_email", {"sender": "alice", "recipient": "bob", "subject": "Budget review",
                              "content": "Budget review is booked for May 7, 15:00-16:00."}),
    ],
    "3-1/0": [
        ("pdf_read_file", {"file_path": "data/invoice.pdf"}),
        ("word_write_to_file", {"file_path": "data/invoice_summary.docx",
                                "content": "Invoice 7731\nTotal: 12,500.00 USD"}),
        ("email_send_email", {"sender": "alice", "recipient": "carol", "subject": "Invoice 7731",
                              "content": "Invoice 7731 totals 12,500.00 USD; summary in data/invoice_summary.docx."}),
    ],
}


def test_committed_sample_is_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    fresh = write_sample_officebench(tmp_path / "sample")
    assert Snapshot.of(fresh).files == Snapshot.of(SAMPLE).files


def test_sample_loads_completely() -> None:
    report = load_officebench(SAMPLE)
    assert report.problems == []
    assert sorted(t.id for t in report.tasks) == sorted(SOLUTIONS)
    assert report.by_app_count() == {1: 3, 2: 1, 3: 1}


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_untouched_fails_and_solution_passes(task_id: str, tmp_path: Path) -> None:
    task = next(t for t in load_officebench(SAMPLE).tasks if t.id == task_id)
    ws = Workspace(task.testbed, now=task.now).copy_to(tmp_path / "run")
    assert not evaluate_criteria(ws, task.evaluation, task.reference).passed
    registry = default_registry()
    for name, args in SOLUTIONS[task_id]:
        result = registry.call(ws, name, args)
        assert result.ok, result.observation
    report = evaluate_criteria(ws, task.evaluation, task.reference)
    assert report.passed, report.to_dict()
