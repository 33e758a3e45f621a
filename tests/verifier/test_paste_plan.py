"""A paste of the sources in place of a finding: the plan, and the gate that requires it to fail."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from backends.task_record import TaskRecord, parse_record
from tests.support.records import task_record_sample
from verifier.gates import paste_gate
from verifier.paste_plan import is_forward, paste_plan

NOW = datetime(2025, 3, 25, 10, 0)
SHEET = "Item, Quantity\nPrinter paper A4 (5 boxes), 5\nStapler, 2\nToner, 7\n"


def test_the_paste_puts_every_read_where_the_oracle_writes_prose():
    oracle = [{"tool": "system_read_text", "args": {"file_path": "data/a.txt"}},
              {"tool": "email_read_email", "args": {"user": "zara", "email_id": "1"}},
              {"tool": "email_send_email", "args": {"sender": "zara", "recipient": "sofia", "subject": "Totals",
                                                    "content": "Toner is the largest: 7."}},
              {"tool": "excel_set_cell", "args": {"file_path": "data/x.xlsx", "row": 1, "col": 1, "value": 7}}]
    plan = paste_plan(oracle, [SHEET, "From: ana\nHi, can you check the totals?", "sent", "ok"])
    content = plan[2]["args"]["content"]
    assert "Printer paper A4 (5 boxes), 5" in content and "can you check the totals" in content
    assert plan[2]["args"]["subject"] == "Totals" and plan[3] == oracle[3] and plan[0] == oracle[0]
    assert paste_plan(oracle[2:], ["sent", "ok"]) is None  # it reads nothing
    assert paste_plan(oracle[:2], [SHEET, "mail"]) is None  # it writes no prose
    assert paste_plan(oracle, ["Error: system_read_text: no such file", "", "sent", "ok"]) is None


def test_a_forward_is_the_oracle_passing_on_what_it_read():
    read = ["From: Malik\nThanks for joining the vendor call on the consultants work today.\n"
            "They quoted 12,700 GBP for the first year of support."]
    forward = [{"tool": "email_send_email", "args": {"content": "Forwarding Malik's message:\n\n"
                "Thanks for joining the vendor call on the consultants work today.\n"
                "They quoted 12,700 GBP for the first year of support."}}]
    finding = [{"tool": "email_send_email", "args": {"content": "The quote of 12,700 GBP is within budget by a margin of 2,800."}}]
    assert is_forward(forward, read) and not is_forward(finding, read)


def _record(keywords: list[str], excludes: list[str]) -> TaskRecord:
    return parse_record({**task_record_sample(),
                         "oracle": [{"tool": "system_read_text", "args": {"file_path": "data/stock.txt"}},
                                    {"tool": "system_write_answer", "args": {"text": "Toner, with 7."}}],
                         "evaluation": [{"function": "evaluate_answer",
                                         "args": {"keywords": keywords, **({"excludes": excludes} if excludes else {})}}]})


@pytest.mark.parametrize("keywords, excludes, computed, passes, detail", [
    (["Toner", "7"], ["Stapler"], True, True, "a paste of the sources fails"),  # the other lines refuse a paste
    (["Toner", "7"], [], True, False, "pasting everything"),  # the best line alone: the paste holds it too
    (["Toner", "7"], [], False, False, "pasting everything"),  # a look-up too: a paste carries its value
])
def test_the_gate(tmp_path: Path, keywords, excludes, computed, passes, detail):
    testbed = tmp_path / "testbed"
    (testbed / "data").mkdir(parents=True)
    (testbed / "data" / "stock.txt").write_text(SHEET)
    trace = {"evaluation[0].args.keywords[0]": "computed:0" if computed else "testbed:data/stock.txt"}
    result = paste_gate(_record(keywords, excludes), trace, testbed, None, NOW, tmp_path / "work", [SHEET, "written"])
    assert result.passed is passes and detail in result.detail, result.detail
