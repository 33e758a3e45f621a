"""Numeric dates read in the office city's order: an ambiguous 04/05 is one date in Leeds and
another in Chicago; a date no order can misread passes everywhere."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from backends.dataset_reader import task_day_first, task_now
from office_env import Workspace, evaluate_criteria
from office_env.evaluation import keywords as kw
from office_env.evaluation.written_dates import read
from office_env.synthesis.world import make_world
from verifier.answer_forms import rewrite
from backends.task_record import parse_record
from tests.support.records import task_record_sample
from verifier.gates import answer_forms_gate

NOW = datetime(2025, 3, 25, 10, 0)
DAY_FIRST, MONTH_FIRST, EITHER = True, False, None


@pytest.mark.parametrize("text, keyword, order, found", [
    ("due 04/05/2025", "2025-05-04", DAY_FIRST, True),  # Leeds: the 4th of May
    ("due 04/05/2025", "2025-04-05", DAY_FIRST, False),
    ("due 04/05/2025", "2025-04-05", MONTH_FIRST, True),  # Chicago: the 5th of April
    ("due 04/05/2025", "2025-05-04", MONTH_FIRST, False),
    ("due 04/05/2025", "2025-05-04", EITHER, True),  # an office of unknown order: either reading
    ("due 04/05/2025", "2025-04-05", EITHER, True),
    ("due 4.5.25", "2025-05-04", DAY_FIRST, True),
    ("due 4.5.25", "2025-05-04", MONTH_FIRST, False),
    # no order can misread these: they pass everywhere
    ("due 13/10/2025", "2025-10-13", MONTH_FIRST, True),
    ("due 10/13/2025", "2025-10-13", DAY_FIRST, True),
    ("due 21 October 2025", "2025-10-21", MONTH_FIRST, True),
    ("due October 21st", "2025-10-21", DAY_FIRST, True),
    ("due Tuesday the 21st of October", "2025-10-21", DAY_FIRST, True),
    ("due Wednesday 21 October", "2025-10-21", DAY_FIRST, False),  # the 21st is a Tuesday
    # without the year, as a person writes a date of the task's year
    ("due 13/10", "2025-10-13", MONTH_FIRST, True),
    ("due 10/13", "2025-10-13", DAY_FIRST, True),
    ("due 4/5", "2025-05-04", DAY_FIRST, True),
    ("due 4/5", "2025-05-04", MONTH_FIRST, False),
    ("due 4/5", "2025-04-05", MONTH_FIRST, True),
    # not dates: a decimal, a range, a fraction inside a longer date
    ("grew 10.5 percent", "2025-05-10", EITHER, False),
    ("pages 10-12", "2025-12-10", EITHER, False),
    ("due 31/02/2025", "2025-02-28", EITHER, False),
])
def test_a_date_keyword_reads_a_numeric_date_in_the_office_order(text, keyword, order, found):
    assert (kw.missing(text, [keyword], order) == []) is found
    assert (kw.present(text, [keyword], order) == [keyword]) is found


def test_the_parser_reads_one_date_per_order_and_none_from_nonsense():
    assert read("04/05/2025", True) == {(2025, 5, 4)}
    assert read("04/05/2025", None) == {(2025, 5, 4), (2025, 4, 5)}
    assert read("12/18/24", True) == {(2024, 12, 18)}
    assert read("29/02", True) == {(2000, 2, 29)}  # no year written: a leap year, so the 29th is a date
    assert read("45/45/2025", None) == frozenset()


def _answer(tmp_path: Path, text: str) -> Workspace:
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "answer.txt").write_text(text, encoding="utf-8")
    return Workspace(tmp_path, now=NOW)


@pytest.mark.parametrize("order, passes", [(DAY_FIRST, True), (MONTH_FIRST, False), (EITHER, True)])
def test_an_answer_check_follows_the_office_order(tmp_path: Path, order, passes):
    ws = _answer(tmp_path, "The notice is due by 04/05/2025.")
    criteria = [{"function": "evaluate_answer", "args": {"keywords": ["2025-05-04"]}}]
    report = evaluate_criteria(ws, criteria, day_first=order)
    assert report.passed is passes, report.results[0].reason
    # a mail check reads the same way
    assert evaluate_criteria(ws, [{"function": "evaluate_contain", "args": {
        "doc_type": "txt", "file": "data/answer.txt", "keywords": ["2025-05-04"]}}], day_first=order).passed is passes


def _seed(day_first: bool | None) -> int:
    return next(s for s in range(500) if make_world(s).day_first is day_first)


def test_the_office_order_comes_from_the_world_city():
    us, uk, canada = make_world(_seed(False)), make_world(_seed(True)), make_world(_seed(None))
    assert us.currency == "USD" and uk.currency != "USD" and canada.currency == "CAD"
    assert task_day_first({"provenance": {"world_seed": _seed(False)}}) is False
    assert task_day_first({"provenance": {"world_seed": _seed(True)}}) is True
    for record in ({}, {"provenance": None}, {"provenance": {"world_seed": "7"}}, {"provenance": {"world_seed": True}}):
        assert task_day_first(record) is None  # an imported task: no city known


def test_answer_forms_write_numeric_dates_in_the_office_order():
    assert rewrite("due 2025-04-07", "numbers", 2025, day_first=True) == "due 07/04/2025"
    assert rewrite("due 2025-04-07", "numbers", 2025, day_first=False) == "due 04/07/2025"
    assert rewrite("due 2025-04-07", "numbers", 2025, day_first=None) == "due 07/04/2025"  # either order reads it


@pytest.mark.parametrize("order", [True, False])
def test_the_answer_forms_gate_passes_in_each_office_order(tmp_path: Path, order):
    sample = task_record_sample()
    record = parse_record({**sample,
                           "oracle": [{"tool": "system_write_answer", "args": {"text": "Notice due 2025-04-07."}}],
                           "evaluation": [{"function": "evaluate_answer", "args": {"keywords": ["2025-04-07"]}}],
                           "provenance": {**sample["provenance"], "world_seed": _seed(order)}})
    (tmp_path / "testbed" / "data").mkdir(parents=True)
    result = answer_forms_gate(record, tmp_path / "testbed", None, NOW, tmp_path / "work")
    assert result.passed, result.detail
    assert "3 other form(s)" in result.detail


def test_a_typed_record_reads_its_office_order_and_now_as_its_json_does():
    """``task_day_first`` and ``task_now`` read a typed record's fields without dumping them: the
    same answers as from the record as JSON, whatever ``world_seed`` holds."""
    for seed in (_seed(False), _seed(True), _seed(None), 0, "7", True, -3, 2.0, None, [1]):
        data = task_record_sample()
        if seed is None:
            data["provenance"].pop("world_seed", None)
        else:
            data["provenance"]["world_seed"] = seed
        data["now"] = {"date": "2025-02-28", "weekday": "Friday", "time": "23:59"}
        typed = parse_record(data)
        assert task_day_first(typed) is task_day_first(typed.to_dict()) is task_day_first(data)
        assert task_now(typed) == task_now(typed.to_dict()) == task_now(data)
