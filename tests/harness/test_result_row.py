"""A run's result row: one type, written one way, whichever place made the row."""

from __future__ import annotations

import json

from backends.job_contract import JobFailure
from harness.result_row import ResultRow
from harness.runner import failed_rows

KEYS = ["id", "trial", "app_count", "apps", "family", "passed", "criteria", "steps", "context_tokens",
        "context_units", "evidence_recall", "trajectory", "error"]


def test_a_row_is_written_in_one_key_order_with_its_optional_keys_only_when_they_say_something():
    row = ResultRow(id="neo-1", trial=2, app_count=1, apps=["pdf"], family="lookup", passed=True, steps=3)
    assert list(row.to_dict()) == KEYS
    row.context_whole, row.reference = True, {"none": False, "oracle": None}
    data = row.to_dict()
    assert list(data) == KEYS + ["context_whole", "reference"] and data["reference"] == {"none": False, "oracle": None}
    assert json.loads(json.dumps(data)) == data  # JSON types only


def test_a_task_whose_runs_gave_no_result_gets_failed_rows_of_the_same_shape():
    rows = failed_rows("neo-7", None, 2, JobFailure("timeout", "over 60 s"))["rows"]
    assert [list(r) for r in rows] == [KEYS, KEYS] and [r["trial"] for r in rows] == [1, 2]
    assert rows[0] == {"id": "neo-7", "trial": 1, "app_count": None, "apps": [], "family": None, "passed": False,
                       "criteria": [], "steps": 0, "context_tokens": 0, "context_units": [], "evidence_recall": None,
                       "trajectory": {}, "error": "error: timeout (over 60 s)"}
