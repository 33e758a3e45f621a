"""The oracle's prose written the ways people write it: the rewriter, and the gate that replays
each form (a check that only takes the oracle's own spelling fails it)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from verifier.answer_forms import answer_form_plans, rewrite
from backends.task_record import TaskRecord, parse_record
from tests.support.records import task_record_sample
from verifier.gates import answer_forms_gate

NOW = datetime(2025, 3, 25, 10, 0)
TEXT = ("Invoice INV-2025-9585 for 1374.45 is due on 2025-04-07 at 14:00, noon at 12:00; "
        "see report_2025-03-18.docx, PO-2809, the year 2024 and 3809000 in all.")


def test_each_form_writes_dates_times_and_amounts_as_people_do():
    assert rewrite(TEXT, "words", 2025) == (
        "Invoice INV-2025-9585 for 1,374.45 is due on Monday 7 April at 2 pm, noon at noon; "
        "see report_2025-03-18.docx, PO-2809, the year 2024 and 3809000 in all.")
    # a whole number is grouped only when it is said as money: a code or a zip stays as written
    assert rewrite("PO 10234, zip 94105, 12700 EUR and $25000", "words", 2025) == (
        "PO 10234, zip 94105, 12,700 EUR and $25,000")
    assert rewrite(TEXT, "numbers", 2025).startswith("Invoice INV-2025-9585 for 1374.45 is due on 07/04/2025 at 2:00 PM")
    assert "April 7, 2025 at 2 p.m." in rewrite(TEXT, "us", 2025)
    assert "7 April 2025" in rewrite("due 2025-04-07", "words", 2024)  # another year than the task's: said
    assert rewrite("no figures here", "words", 2025) == "no figures here"


def test_only_prose_is_rewritten_and_a_plan_without_any_gives_no_form():
    oracle = [{"tool": "email_send_email", "args": {"sender": "a", "recipient": "b", "subject": "Due 2025-04-07",
                                                    "content": "Due on 2025-04-07."}},
              {"tool": "excel_set_cell", "args": {"file_path": "data/x.xlsx", "row": 1, "col": 1, "value": "2025-04-07"}}]
    plans = answer_form_plans(oracle, NOW)
    assert [form for form, _ in plans] == ["words", "numbers", "us"]
    for _, plan in plans:
        assert plan[0]["args"]["subject"] == "Due 2025-04-07" and plan[1] == oracle[1]
        assert plan[0]["args"]["content"] != "Due on 2025-04-07."
    assert oracle[0]["args"]["content"] == "Due on 2025-04-07."  # the oracle itself is untouched
    assert answer_form_plans([{"tool": "system_write_answer", "args": {"text": "Rail ticket"}}], NOW) == []


def _record(keywords: list[str]) -> TaskRecord:
    sample = task_record_sample()
    return parse_record({
        **sample,
        "oracle": [{"tool": "system_write_answer", "args": {"text": "Due on 2025-04-07 at 14:00: 1374.45 EUR."}}],
        "evaluation": [{"function": "evaluate_answer", "args": {"keywords": keywords}}],
        "provenance": {k: v for k, v in sample["provenance"].items() if k != "world_seed"}})  # no office order known


@pytest.mark.parametrize("keywords, passes", [
    (["2025-04-07", "14:00", "1374.45"], True),  # a date, a clock time and a number: read in any form
    (["on 2025-04-07"], False),  # a phrase with the oracle's spelling in it: only that spelling passes
    (["at 14:00"], False),
])
def test_the_gate_replays_every_form_and_names_the_one_that_fails(tmp_path: Path, keywords, passes):
    testbed = tmp_path / "testbed"
    (testbed / "data").mkdir(parents=True)
    result = answer_forms_gate(_record(keywords), testbed, None, NOW, tmp_path / "work")
    assert result.passed is passes, result.detail
    if not passes:
        assert "written as words" in result.detail and "lacks" in result.detail
    else:
        assert json.dumps(result.detail).count("words") == 1
