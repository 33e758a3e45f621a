"""The evaluation-criteria catalog, exercised on real testbeds changed with the office tools."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from office_env import (
    InvalidCriteria,
    PathError,
    Workspace,
    criteria_schema,
    evaluate_criteria,
    validate_criteria,
)
from office_env.evaluation import CHECKS
from office_env.evaluation import keywords as kw
from office_env.evaluation.checks import Check, Context
from office_env.formats import docx_io, xlsx_io
from office_env.sample import SAMPLE_NOW as NOW

ALL_FUNCTIONS = {
    "evaluate_contain", "evaluate_not_contain", "evaluate_file_exist", "evaluate_file_not_exist",
    "evaluate_excel_cell_value", "evaluate_excel_cell_comparator", "evaluate_exact_match",
    "evaluate_diff_contain_text", "evaluate_calendar_no_overlap", "evaluate_calendar_event",
    "evaluate_email_sent", "evaluate_answer", "evaluate_calendar_no_event", "evaluate_email_not_sent",
    "evaluate_stated_values", "evaluate_not_pasted",
}


def run(ws: Workspace, function: str, args: dict, reference_dir=None):
    """Evaluate one criterion; returns its CriterionResult."""
    report = evaluate_criteria(ws, [{"function": function, "args": args}], reference_dir)
    assert len(report.results) == 1
    result = report.results[0]
    assert result.function == function
    assert report.passed is result.passed
    return result


def call(registry, ws, name, args):
    result = registry.call(ws, name, args)
    assert result.ok, result.observation
    return result


def test_catalog_has_exactly_the_documented_functions():
    assert set(CHECKS) == ALL_FUNCTIONS
    for name, spec in CHECKS.items():
        Draft202012Validator.check_schema(spec.args_schema)
        assert spec.description


# -- keyword semantics -----------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, keyword, found",
    [
        ("Total due: 12,500.00 USD", "12500", True),
        ("Total due: 12,500.00 USD", "12,500", True),
        ("Total due: 12,500.00 USD", "12500.0", True),
        ("Total due: 12,500.00 USD", 12500, True),
        ("Total due: 12,500.00 USD", "125", False),
        ("Total due: 12,500.00 USD", "1250", False),
        ("Total due: 12500 USD", "125000", False),
        ("Total due: 12.500,00 EUR", "12500", True),  # dots between thousands, a decimal comma
        ("Total due: 1.200,50 EUR", "1200.5", True),
        ("Version 1.200 of the file", "1200", False),  # a dot alone: no thousands mark
        ("Total due: £1,200", "1200", True),
        ("Total due: 1200 pounds", "1200", True),
        ("version 2.5 released", "2.5", True),
        ("version 2.5 released", "5", False),
        ("Budget REVIEW on Friday", "budget review", True),
        ("Budget\n   review", "budget review", True),  # runs of white space count as one space
        ("Budget review", "budget-review", False),
        ("Invoice 7731", "INVOICE", True),
        ("Booked for 9:00 on Friday", "09:00", True),  # a clock time however its hour is written
        ("Booked for 09:00 on Friday", "9:00", True),
        ("Booked for 19:00 on Friday", "9:00", False),
        ("Booked for 9:30 on Friday", "09:00", False),
        ("Room 10:005 is free", "10:00", False),
        ("from 2025-03-27 14:00 to 15:00", "14:00", True),
        ("See you at 1 pm", "13:00", True),  # a 12-hour time is the same time
        ("See you at 1:00 PM", "13:00", True),
        ("See you at 10:30am", "10:30", True),
        ("See you at 9:00 pm", "09:00", False),  # not nine in the morning
        ("See you at 9:00 pm", "21:00", True),
        ("Lunch at 12 pm", "12:00", True),
        ("See you at 1 pm", "01:00", False),
        ("Due on 18 December 2024", "2024-12-18", True),  # a date with its month's name is the same day
        ("Due on December 18, 2024", "2024-12-18", True),
        ("Due on 3rd Dec 2024", "2024-12-03", True),
        ("Due on 18 December 2024", "2024-12-19", False),
        ("Due on 18 December 2025", "2024-12-18", False),
        ("Due on 2024-12-18", "2024-12-18", True),
        ("Written on 2024-07-04", "4", False),  # a date's day or month is not a figure of its own
        ("Written on 2024-07-04", "7", False),
        ("Written on 2024-07-04", "2024", True),  # its year is
        ("Written on 4 July 2024", "4", False),
        ("Call at 4:30 pm", "4", False),  # nor a clock time's hour or minutes
        ("Call at 4 pm", "4", False),
        ("Call at 14:30", "30", False),
        ("Bills five, but we ordered four", "5", True),  # a count written in words
        ("Bills five, but we ordered four", "4", True),
        ("Bills twenty-one", "21", True),
        ("Bills fifteen", "5", False),
        ("Not the one from Redleaf", "1", False),  # "one" is a pronoun as often as a count
        ("The quote of thirty-one thousand six hundred is over budget", "31600", True),  # an amount in words
        ("They come to two hundred and two point one five EUR", "202.15", True),
        ("They come to two hundred and two point one five EUR", "202.5", False),
        ("Seventy-five hundred pounds", "7500", True),
        ("The first of them", "1", False),  # an ordinal is no count
        ("Invoice INV-2024-8935", "8935", True),  # a code's number still is
        ("Marketing 45, 1,500.00", "45", True),  # a word that starts like a month is no month
        ("Received March 15 10,500.00 EUR", "10500", True),  # nor is a month and day before a figure a date
        ("Due sept. 3, 2025", "2025-09-03", True),
        # a date as a person writes it: no year when it goes without saying, or in numbers
        ("It ends on Tuesday 21 October; notice by Wednesday 23 July.", "2025-10-21", True),
        ("It ends on Tuesday 21 October; notice by Wednesday 23 July.", "2025-07-23", True),
        ("It ends on Monday 21 October.", "2025-10-21", False),  # 21 October 2025 is a Tuesday
        ("It ends on Oct 21st.", "2025-10-21", True),
        ("It ends on the 21st of October.", "2025-10-21", True),
        ("It ends on 21 October.", "2025-10-22", False),
        ("It ends 21/10/2025.", "2025-10-21", True),
        ("It ends 10/21/2025.", "2025-10-21", True),
        ("It ends 21.10.25.", "2025-10-21", True),
        ("It ends 21/10/2024.", "2025-10-21", False),
        ("Version 1/2/3 of the plan", "2003-02-01", False),  # no four- or two-digit year
        ("It ends on 21 October.", "21", False),  # a day of a date is no figure of its own
        ("Invoice dated December 18th, 2023", "2024-12-18", False),  # another year written: not that day
        ("Invoice dated 18 Dec. 2023", "2024-12-18", False),
        ("Of the 45 invoices, 12 may be overdue", "12", True),  # "may" the verb: 12 is a count
        ("In March 12 invoices were paid", "12", True),
        ("Moved to Thursday at noon.", "12:00", True),
        ("Moved to Thursday at midday.", "12:00", True),
        ("Runs until midnight.", "00:00", True),
        ("Moved to Thursday at noon.", "13:00", False),
        ("it ends at 4:00 pm", "4:00", True),  # a seed's one-digit hour: morning or afternoon
        ("it ends at 4:00 pm", "04:00", False),
        ("it ends at 4:00 pm", "16:00", True),
    ],
)
def test_keyword_matching(text, keyword, found):
    assert kw.Haystack(text).has(keyword) is found
    assert kw.missing(text, [keyword]) == ([] if found else [str(keyword)])
    assert kw.present(text, [keyword]) == ([str(keyword)] if found else [])
    assert kw.Keywords([keyword]).any_in(text) is found
    assert kw.Keywords(["absent phrase", 999.5, keyword]).any_in(text) is found


@pytest.mark.parametrize("text, keyword, found", [
    ("The meeting is at 12.00.", "12:00", True), ("from 14.30 to 15.30", "14:30", True),
    ("costs 12.00 GBP", "12:00", False), ("the total is 14.30", "14:30", False),
    ("at eleven in the morning", "11:00", True), ("at eleven in the morning", "23:00", False),
    ("quarter past two in the afternoon", "14:15", True), ("half past ten", "10:30", True),
    ("quarter to three", "14:45", True), ("three o'clock", "15:00", True), ("two claims are open", "14:00", False),
])
def test_a_clock_time_is_found_as_people_say_it(text, keyword, found):
    """"12.00" (the British clock) and "eleven in the morning" failed a check for 12:00 and 11:00; an
    amount ("costs 12.00") and an hour word alone ("two claims") are no clock."""
    assert kw.present(text, [keyword]) == ([keyword] if found else [])


@pytest.mark.parametrize("text, keyword, found", [
    ("Revenue in Q23 grew", "Q2", False), ("Plan for Q2 2024", "Q2", True), ("EC-5231 pending", "EC-523", False),
    ("claims EC-523, EC-530", "EC-523", True), ("saved as data/report_v2.docx", "report_v2.docx", True),
    ("Room 42 is free", "Room 4", False), ("budgets", "budget", True),
])
def test_a_code_with_a_digit_is_found_whole(text, keyword, found):
    """A short not_contain keyword ("Q2") was found inside a longer code ("Q23"), failing right answers,
    and a contain keyword inside one passed wrong ones; words without a digit still match inside words."""
    assert kw.present(text, [keyword]) == ([keyword] if found else [])


@pytest.mark.parametrize("text, keyword, found", [
    ("from 13:00 to 14:00", "14:00", False),
    ("from 14:00 to 15:00", "14:00", True),
    ("from 14:00 to 15:00", "15:00", False),
    ("between 13:00 and 14:00", "14:00", False),
    ("1-2 pm", "13:00", True),
    ("1-2 pm", "14:00", False),
    ("11 a.m.-12:00", "12:00", False),
    ("from 2 p.m. to 3 p.m.", "14:00", True),
    ("moved from 13:00 to 14:30", "14:30", True),
    ("lunch 12:00 to 13:00, then the review at 13:00", "13:00", True),
])
def test_one_clock_among_the_keywords_is_a_start_not_a_range_s_end(text, keyword, found):
    """A check with one clock time looks for when something happens: "from 13:00 to 14:00" is not a
    meeting at 14:00 (an invitation an hour early passed); a move's second time is its new start.
    Two clock times among the keywords ask for a range, and find both ends."""
    assert kw.missing(text, [keyword]) == ([] if found else [keyword])
    assert kw.present(text, [keyword]) == ([keyword] if found else [])
    assert kw.missing("from 13:00 to 14:00", ["13:00", "14:00"]) == []


@pytest.mark.parametrize("text, keywords, absent", [
    ("Contact: John Smith, joining on July 15, 2024.", ["John Smith", "July", "15", "2024"], []),
    ("Contact: John Smith, joining on 15 July.", ["July", "15"], []),
    ("Contact: John Smith, joining on July 16, 2024.", ["July", "15", "2024"], ["15"]),
    ("Joining on July 15, 2024.", ["15"], ["15"]),  # no month among the keywords: 15 is a figure
    ("We ordered 15 chairs in July.", ["July", "15"], []),
])
def test_a_date_written_in_pieces_is_found_in_its_natural_forms(text, keywords, absent):
    assert kw.missing(text, keywords) == absent
    assert kw.present(text, keywords) == [str(k) for k in keywords if str(k) not in absent]


def test_no_keywords_are_in_no_text():
    assert kw.Keywords([]).any_in("anything 12 at all") is False


def test_numbers_in_removes_thousands_separators():
    assert kw.numbers_in("paid 1,200.50 and -3, total 12,500") == [1200.5, -3.0, 12500.0]


# -- evaluate_contain / evaluate_not_contain on every doc_type -------------------------------

@pytest.mark.parametrize(
    "doc_type, file, present, absent",
    [
        ("txt", "data/readme.txt", ["PLAIN TEXT file", "team"], "spreadsheet"),
        ("ics", "calendar/alice.ics", ["team sync", "Room 2", "1:1 with Bob"], "Offsite"),
        ("docx", "data/notes.docx", ["budget review", "Dana Reyes"], "Marketing"),
        ("doc", "data/notes.docx", ["meeting NOTES", "owner"], "Marketing"),
        ("xlsx", "data/scores.xlsx", ["carol", "1,200", "92.5", "Done"], "Dave"),
        ("pdf", "data/invoice.pdf", ["invoice 7731", "12500", "due date"], "125"),
    ],
)
def test_contain_each_doc_type(ws, doc_type, file, present, absent):
    ok = run(ws, "evaluate_contain", {"doc_type": doc_type, "file": file, "keywords": present})
    assert ok.passed, ok.reason
    assert file in ok.reason

    bad = run(ws, "evaluate_contain", {"doc_type": doc_type, "file": file, "keywords": present + [absent]})
    assert not bad.passed
    assert file in bad.reason and repr(absent) in bad.reason
    # only the missing keyword is named
    assert repr(present[0]) not in bad.reason

    none = run(ws, "evaluate_not_contain", {"doc_type": doc_type, "file": file, "keywords": [absent]})
    assert none.passed, none.reason
    some = run(ws, "evaluate_not_contain", {"doc_type": doc_type, "file": file, "keywords": [absent, present[0]]})
    assert not some.passed
    assert file in some.reason and repr(present[0]) in some.reason and repr(absent) not in some.reason


def test_contain_email_mailbox_username_case_insensitive(ws, registry):
    ok = run(ws, "evaluate_contain", {"doc_type": "email", "username": "ALICE", "keywords": ["quarterly budget", "4200"]})
    assert ok.passed, ok.reason

    # Bob's mailbox does not hold the 4,200 EUR message (it went to Alice)
    bad = run(ws, "evaluate_contain", {"doc_type": "email", "username": "Bob", "keywords": ["4,200"]})
    assert not bad.passed
    assert "mailbox" in bad.reason and "'4,200'" in bad.reason

    call(registry, ws, "email_send_email",
         {"sender": "alice", "recipient": "bob", "subject": "Meeting moved", "content": "The meeting is at 3 pm."})
    now_ok = run(ws, "evaluate_contain", {"doc_type": "email", "username": "Bob", "keywords": ["meeting"]})
    assert now_ok.passed, now_ok.reason
    gone = run(ws, "evaluate_not_contain", {"doc_type": "email", "username": "bob", "keywords": ["meeting moved"]})
    assert not gone.passed and "'meeting moved'" in gone.reason


def test_contain_email_unknown_user_fails_naming_the_mailboxes(ws):
    result = run(ws, "evaluate_contain", {"doc_type": "email", "username": "zed", "keywords": ["x"]})
    assert not result.passed
    assert "'zed'" in result.reason and "alice" in result.reason


def test_a_scorings_mailbox_owner_is_found_once_and_a_name_it_cannot_find_fails_each_time(ws):
    """``Context.mailbox_user`` keeps what ``find_mailbox_user`` finds for the scoring it serves (its
    mail checks ask for the same owner), never a failure: an unknown name raises at every ask."""
    from office_env.errors import OfficeError
    from office_env.evaluation.content import find_mailbox_user

    ctx = Context(ws)
    for name in ("ALICE", "alice", "Bob", "ALICE", "bob"):
        assert ctx.mailbox_user(name) == find_mailbox_user(ws, name)
    assert set(ctx._owners) == {"ALICE", "alice", "Bob", "bob"}
    for _ in range(2):
        with pytest.raises(OfficeError, match="zed"):
            ctx.mailbox_user("zed")
    assert "zed" not in ctx._owners


def test_contain_reads_documents_written_by_the_tools(ws, registry):
    call(registry, ws, "word_write_to_file", {"file_path": "data/report.docx", "content": "Q2 revenue: 48,000\nStatus final"})
    call(registry, ws, "word_convert_to_pdf", {"file_path": "data/report.docx"})
    for doc_type, file in (("docx", "data/report.docx"), ("pdf", "data/report.pdf")):
        result = run(ws, "evaluate_contain", {"doc_type": doc_type, "file": file, "keywords": ["48000", "status FINAL"]})
        assert result.passed, result.reason
        assert not run(ws, "evaluate_contain", {"doc_type": doc_type, "file": file, "keywords": ["480"]}).passed


def test_contain_missing_file_fails_and_not_contain_passes(ws):
    missing = run(ws, "evaluate_contain", {"doc_type": "txt", "file": "data/nope.txt", "keywords": ["x"]})
    assert not missing.passed
    assert "data/nope.txt" in missing.reason and "does not exist" in missing.reason
    absent = run(ws, "evaluate_not_contain", {"doc_type": "txt", "file": "data/nope.txt", "keywords": ["x"]})
    assert absent.passed
    assert "data/nope.txt" in absent.reason


def test_until_failure_stops_at_the_first_failing_criterion_with_the_same_verdict(ws):
    """A gate that asks only whether every criterion passes stops at the first that fails: the
    verdict is the full evaluation's, and the criteria after it are not scored."""
    missing = {"function": "evaluate_file_exist", "args": {"file": "data/nope.txt"}}
    absent = {"function": "evaluate_file_not_exist", "args": {"file": "data/nope.txt"}}
    for criteria in ([absent, missing, absent], [absent, absent], [missing]):
        full = evaluate_criteria(ws, criteria)
        short = evaluate_criteria(ws, criteria, until_failure=True)
        assert short.passed == full.passed
        failed_at = next((r.index for r in full.results if not r.passed), len(criteria) - 1)
        assert [r.to_dict() for r in short.results] == [r.to_dict() for r in full.results[:failed_at + 1]]


# -- files -----------------------------------------------------------------------------------

def test_file_exist_and_not_exist(ws, registry):
    args = {"file": "data/summary.docx"}
    before = run(ws, "evaluate_file_exist", args)
    assert not before.passed and "data/summary.docx" in before.reason and "does not exist" in before.reason
    assert run(ws, "evaluate_file_not_exist", args).passed

    call(registry, ws, "word_create_new_file", {"file_path": "data/summary.docx"})
    assert run(ws, "evaluate_file_exist", args).passed
    after = run(ws, "evaluate_file_not_exist", args)
    assert not after.passed and "data/summary.docx" in after.reason and "still exists" in after.reason


# -- spreadsheets ----------------------------------------------------------------------------

def test_excel_cell_value(ws, registry):
    call(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": 90})
    call(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 5, "col": 1, "value": "Dave"})
    ok = run(ws, "evaluate_excel_cell_value", {"file": "data/scores.xlsx", "sheet": "Scores", "matches": [
        {"row": 2, "col": 2, "value": 90}, {"row": "2", "col": "2", "value": "90.0"},
        {"row": 5, "col": 1, "value": "Dave"}, {"row": 3, "col": 2, "value": 92.5},
    ]})
    assert ok.passed, ok.reason
    spaced = run(ws, "evaluate_excel_cell_value", {"file": "data/scores.xlsx", "matches": [
        {"row": 5, "col": 1, "value": " Dave "}, {"row": 1, "col": 1, "value": "Name"}]})
    assert spaced.passed, spaced.reason  # spacing is folded; case is kept, as OfficeBench keeps it
    cased = {"file": "data/scores.xlsx", "matches": [{"row": 5, "col": 1, "value": "DAVE"}, {"row": 1, "col": 1, "value": " name "}]}
    assert not run(ws, "evaluate_excel_cell_value", cased).passed
    folded = run(ws, "evaluate_excel_cell_value", {**cased, "ignore_case": True})
    assert folded.passed, folded.reason  # unless the criterion says to fold it
    other = run(ws, "evaluate_excel_cell_value", {"file": "data/scores.xlsx", "matches": [
        {"row": 5, "col": 1, "value": "Dav"}]})
    assert not other.passed

    bad = run(ws, "evaluate_excel_cell_value", {"file": "data/scores.xlsx", "matches": [
        {"row": 1, "col": 1, "value": "Name"}, {"row": 3, "col": 3, "value": "Done"},
    ]})
    assert not bad.passed
    assert "data/scores.xlsx" in bad.reason and "(3, 3)" in bad.reason and "'Open'" in bad.reason

    empty = run(ws, "evaluate_excel_cell_value", {"file": "data/scores.xlsx", "matches": [{"row": 9, "col": 9, "value": "x"}]})
    assert not empty.passed and "(9, 9)" in empty.reason and xlsx_io.EMPTY_CELL in empty.reason


@pytest.mark.parametrize("written, passes", [
    ("1,950 USD", True), ("$1,950.00", True), ("USD 1950", True), ("1950 eur", True), ("£1950", True),
    ("1,950 USD extra", False), ("1950usd", False), ("about 1950", False), ("1,905 USD", False), ("3 hours", False),
    ("1950 days", True), ("1,950 Hours", True), ("1950%", True), ("1950 units", True), ("1950 dayz", False),
    ("1950 days later", False), ("% 1950", False), ("1950% extra", False), ("1950days", True),
])
def test_an_amount_written_as_money_or_with_its_unit_matches_its_number(ws, registry, written, passes):
    call(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": written})
    result = run(ws, "evaluate_excel_cell_value", {"file": "data/scores.xlsx", "matches": [
        {"row": 2, "col": 2, "value": 1950}]})
    assert result.passed is passes, result.reason


def test_excel_cell_value_missing_file_and_sheet(ws):
    gone = run(ws, "evaluate_excel_cell_value", {"file": "data/other.xlsx", "matches": [{"row": 1, "col": 1, "value": 1}]})
    assert not gone.passed and "data/other.xlsx" in gone.reason
    sheet = run(ws, "evaluate_excel_cell_value",
                {"file": "data/scores.xlsx", "sheet": "Totals", "matches": [{"row": 1, "col": 1, "value": "Name"}]})
    assert not sheet.passed and "'Totals'" in sheet.reason and "Scores" in sheet.reason


def test_excel_cell_comparator(ws, registry):
    call(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 3, "value": "Done"})
    ok = run(ws, "evaluate_excel_cell_comparator", {"file": "data/scores.xlsx", "matches": [
        {"row": 3, "col": 2, "comparator": "lambda x: int(x) >= 90"},
        {"row": 4, "col": 2, "comparator": ">= 1,200"},
        {"row": 3, "col": 3, "comparator": '== "Done"'},
        {"row": 2, "col": 2, "comparator": "lambda x: float(x) < 100"},
    ]})
    assert ok.passed, ok.reason

    bad = run(ws, "evaluate_excel_cell_comparator", {"file": "data/scores.xlsx", "matches": [
        {"row": 3, "col": 2, "comparator": "> 90"}, {"row": 2, "col": 2, "comparator": "> 100"},
    ]})
    assert not bad.passed
    assert "data/scores.xlsx" in bad.reason and "(2, 2)" in bad.reason and "85 > 100 is False" in bad.reason

    text = run(ws, "evaluate_excel_cell_comparator",
               {"file": "data/scores.xlsx", "matches": [{"row": 2, "col": 1, "comparator": "> 0"}]})
    assert not text.passed and "'Alice' is not a number" in text.reason
    # a word or an empty cell is not the number a check refuses (a misread total written beside the
    # right one is refused by "!= total" on a cell the right work leaves empty)
    other = run(ws, "evaluate_excel_cell_comparator", {"file": "data/scores.xlsx", "matches": [
        {"row": 2, "col": 1, "comparator": "!= 85"}, {"row": 40, "col": 9, "comparator": "!= 85"}]})
    assert other.passed, other.reason
    same = run(ws, "evaluate_excel_cell_comparator",
               {"file": "data/scores.xlsx", "matches": [{"row": 2, "col": 2, "comparator": "!= 85"}]})
    assert not same.passed

    gone = run(ws, "evaluate_excel_cell_comparator",
               {"file": "data/missing.xlsx", "matches": [{"row": 1, "col": 1, "comparator": "> 0"}]})
    assert not gone.passed and "data/missing.xlsx" in gone.reason


# -- exact match -----------------------------------------------------------------------------

@pytest.fixture
def reference(tmp_path: Path) -> Path:
    """A task's reference/ folder beside the testbed, holding the expected results."""
    ref = tmp_path / "task" / "reference"
    ref.mkdir(parents=True)
    (ref / "scores_done.xlsx").write_bytes(xlsx_io.build(
        [["Name", "Score", "Status"], ["Alice", 85, "Done"], ["Bob", 92.5, "Done"], ["Carol", 1200, "Done"]],
        sheet_name="Scores", stamp=NOW))
    (ref / "letter.docx").write_bytes(docx_io.build("Dear Bob\nThe budget is approved.", NOW))
    return ref


def test_exact_match_xlsx_with_officebench_reference_path(ws, registry, reference):
    args = {"doc_type": "xlsx", "result_file": "data/scores.xlsx", "expected_file": "../../../../reference/scores_done.xlsx"}
    before = run(ws, "evaluate_exact_match", args, reference)
    assert not before.passed
    assert "data/scores.xlsx" in before.reason and "(3, 3)" in before.reason
    assert "'Open'" in before.reason and "'Done'" in before.reason

    call(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 3, "value": "Done"})
    after = run(ws, "evaluate_exact_match", args, str(reference))  # str or Path
    assert after.passed, after.reason


def test_exact_match_docx_and_in_testbed_expected(ws, registry, reference):
    args = {"doc_type": "docx", "result_file": "data/letter.docx", "expected_file": "../reference/letter.docx"}
    call(registry, ws, "word_write_to_file", {"file_path": "data/letter.docx", "content": "Dear Bob\nThe budget is rejected."})
    bad = run(ws, "evaluate_exact_match", args, reference)
    assert not bad.passed
    assert "data/letter.docx" in bad.reason and "line 2" in bad.reason and "rejected" in bad.reason

    call(registry, ws, "word_write_to_file", {"file_path": "data/letter.docx", "content": "Dear Bob\nThe budget is approved."})
    assert run(ws, "evaluate_exact_match", args, reference).passed

    # an expected file inside the testbed needs no reference folder
    shutil.copy(ws.root / "data/letter.docx", ws.root / "data/letter_copy.docx")
    same = run(ws, "evaluate_exact_match",
               {"doc_type": "docx", "result_file": "data/letter_copy.docx", "expected_file": "data/letter.docx"})
    assert same.passed, same.reason
    other = run(ws, "evaluate_exact_match",
                {"doc_type": "docx", "result_file": "data/notes.docx", "expected_file": "data/letter.docx"})
    assert not other.passed and "line 1" in other.reason


def test_exact_match_missing_files(ws, reference):
    no_result = run(ws, "evaluate_exact_match", {"doc_type": "xlsx", "result_file": "data/out.xlsx",
                                                 "expected_file": "../../reference/scores_done.xlsx"}, reference)
    assert not no_result.passed and "data/out.xlsx" in no_result.reason and "does not exist" in no_result.reason
    no_expected = run(ws, "evaluate_exact_match", {"doc_type": "xlsx", "result_file": "data/scores.xlsx",
                                                   "expected_file": "../../reference/absent.xlsx"}, reference)
    assert not no_expected.passed and "absent.xlsx" in no_expected.reason


def test_exact_match_reference_path_without_reference_dir_fails_with_reason(ws):
    result = run(ws, "evaluate_exact_match", {"doc_type": "xlsx", "result_file": "data/scores.xlsx",
                                              "expected_file": "../../../../reference/scores_done.xlsx"})
    assert not result.passed
    assert "expected_file" in result.reason and "reference folder" in result.reason


def test_exact_match_refuses_escapes(ws, reference, tmp_path):
    args = {"doc_type": "txt", "result_file": "data/readme.txt", "expected_file": "../../etc/passwd"}
    problems = validate_criteria([{"function": "evaluate_exact_match", "args": args}])
    assert [p.field for p in problems] == ["evaluation[0].args.expected_file"]
    assert "reference/" in problems[0].message
    with pytest.raises(InvalidCriteria):
        evaluate_criteria(ws, [{"function": "evaluate_exact_match", "args": args}], reference)
    # the check itself never follows such a path either
    with pytest.raises(PathError):
        Context(ws, reference).path("../../etc/passwd", "expected_file")

    # a symlink inside reference/ that leads out of it: the criterion fails, nothing is raised
    secret = tmp_path / "secret.txt"
    secret.write_text("Plain text file for the team.\n", encoding="utf-8")
    os.symlink(secret, reference / "link.txt")
    escaped = run(ws, "evaluate_exact_match", {"doc_type": "txt", "result_file": "data/readme.txt",
                                               "expected_file": "../../reference/link.txt"}, reference)
    assert not escaped.passed
    assert "expected_file" in escaped.reason and "leads outside" in escaped.reason


# -- diff ------------------------------------------------------------------------------------

def test_diff_contain_text_docx(ws, registry):
    call(registry, ws, "word_write_to_file",
         {"file_path": "data/notes_v2.docx", "content": "Meeting notes\nBudget review on Friday\nOwner: Sam Lee"})
    args = {"doc_type": "docx", "input_file": "data/notes.docx", "output_file": "data/notes_v2.docx"}
    ok = run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["sam lee", "Owner"]})
    assert ok.passed, ok.reason

    bad = run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["Sam Lee", "Friday"]})
    assert not bad.passed
    assert "data/notes_v2.docx" in bad.reason and "'Friday'" in bad.reason and "'Sam Lee'" not in bad.reason

    # the change is on line 3; the diff's '@@ -3 +3 @@' line numbers are not part of the change
    numbers = run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["3"]})
    assert not numbers.passed, numbers.reason

    same = run(ws, "evaluate_diff_contain_text",
               {"doc_type": "doc", "input_file": "data/notes.docx", "output_file": "data/notes.docx", "keywords": ["x"]})
    assert not same.passed and "same content" in same.reason


def test_diff_against_the_initial_testbed(ws, registry, tmp_path):
    """OfficeBench's ``../../../../cache/<i>/testbed/x`` is the testbed before the agent acted."""
    initial = tmp_path / "initial"
    ws.copy_to(initial)
    call(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": 77})
    args = {"doc_type": "xlsx", "input_file": "../../../../cache/0/testbed/data/scores.xlsx",
            "output_file": "data/scores.xlsx", "keywords": ["77"]}
    report = evaluate_criteria(ws, [{"function": "evaluate_diff_contain_text", "args": args}], initial_dir=initial)
    assert report.passed, report.results[0].reason
    wrong = evaluate_criteria(ws, [{"function": "evaluate_diff_contain_text", "args": {**args, "keywords": ["92.5"]}}],
                              initial_dir=initial)
    assert not wrong.passed and "'92.5'" in wrong.results[0].reason

    without = run(ws, "evaluate_diff_contain_text", args)
    assert not without.passed
    assert "input_file" in without.reason and "initial testbed" in without.reason


def test_diff_contain_text_counts_only_changed_lines_of_long_documents(ws, registry):
    """Past MAX_DIFF_LINES the diff is a multiset difference of lines, linear in length: lines kept
    (even moved) are not changes; a line added among thousands is."""
    lines = [f"Item {i}: unchanged line" for i in range(3000)]
    call(registry, ws, "word_write_to_file", {"file_path": "data/long_a.docx", "content": "\n".join(lines)})
    changed = lines[1500:] + lines[:1500] + ["Approved by Dana on Friday"]
    call(registry, ws, "word_write_to_file", {"file_path": "data/long_b.docx", "content": "\n".join(changed)})
    args = {"doc_type": "docx", "input_file": "data/long_a.docx", "output_file": "data/long_b.docx"}
    assert run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["approved by dana"]}).passed
    assert not run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["Item 2999"]}).passed


def test_diff_contain_text_xlsx(ws, registry):
    shutil.copy(ws.root / "data/scores.xlsx", ws.root / "data/scores_v2.xlsx")
    call(registry, ws, "excel_set_cell", {"file_path": "data/scores_v2.xlsx", "row": 3, "col": 3, "value": "Done"})
    args = {"doc_type": "xlsx", "input_file": "data/scores.xlsx", "output_file": "data/scores_v2.xlsx"}
    assert run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["Bob", "Done"]}).passed
    bad = run(ws, "evaluate_diff_contain_text", {**args, "keywords": ["Carol"]})  # row 4 did not change
    assert not bad.passed and "'Carol'" in bad.reason

    gone = run(ws, "evaluate_diff_contain_text", {**args, "output_file": "data/nope.xlsx", "keywords": ["Bob"]})
    assert not gone.passed and "data/nope.xlsx" in gone.reason


# -- calendars -------------------------------------------------------------------------------

def test_calendar_no_overlap(ws, registry):
    ok = run(ws, "evaluate_calendar_no_overlap", {"username": "alice"})
    assert ok.passed and "2 event(s)" in ok.reason

    # touching end and start is no overlap
    call(registry, ws, "calendar_create_event",
         {"user": "alice", "summary": "Review", "start": "2024-05-06 11:00:00", "end": "2024-05-06 12:00:00"})
    assert run(ws, "evaluate_calendar_no_overlap", {"username": "Alice"}).passed

    call(registry, ws, "calendar_create_event",
         {"user": "alice", "summary": "Dentist", "start": "2024-05-06 14:15:00", "end": "2024-05-06 15:00:00"})
    bad = run(ws, "evaluate_calendar_no_overlap", {"username": "alice"})
    assert not bad.passed
    assert "'1:1 with Bob'" in bad.reason and "'Dentist'" in bad.reason

    nobody = run(ws, "evaluate_calendar_no_overlap", {"username": "zed"})
    assert not nobody.passed and "'zed'" in nobody.reason and "no calendar" in nobody.reason


def test_calendar_event(ws, registry):
    call(registry, ws, "calendar_create_event",
         {"user": "bob", "summary": "Budget review with Alice", "start": "2024-05-07 09:00:00", "end": "2024-05-07 10:00:00"})
    ok = run(ws, "evaluate_calendar_event",
             {"username": "Bob", "summary": ["budget", "alice"], "start": "2024-05-07 09:00", "end": "2024-05-07T10:00:00"})
    assert ok.passed, ok.reason
    assert run(ws, "evaluate_calendar_event", {"username": "bob", "summary": "budget review"}).passed

    late = run(ws, "evaluate_calendar_event", {"username": "bob", "summary": "budget", "start": "2024-05-07 10:00"})
    assert not late.passed
    assert "not at the required time" in late.reason and "2024-05-07 09:00-10:00," in late.reason

    # a second late fails, and the reason shows the second that fails it
    call(registry, ws, "calendar_create_event",
         {"user": "dana", "summary": "Milestone", "start": "2024-05-07 15:00:01", "end": "2024-05-07 15:15:00"})
    second = run(ws, "evaluate_calendar_event",
                 {"username": "dana", "summary": "milestone", "start": "2024-05-07 15:00", "end": "2024-05-07 15:15"})
    assert not second.passed and "are at 2024-05-07 15:00:01-15:15:00, not at the required time" in second.reason

    untitled = run(ws, "evaluate_calendar_event", {"username": "bob", "summary": "Offsite"})
    assert not untitled.passed and "no event titled" in untitled.reason and "Offsite" in untitled.reason

    # a user without a calendar simply has no such event
    nobody = run(ws, "evaluate_calendar_event", {"username": "carol", "summary": "Offsite"})
    assert not nobody.passed and "no event titled" in nobody.reason


def test_calendar_no_event_passes_once_the_meeting_left_its_old_time(ws, registry):
    call(registry, ws, "calendar_create_event",
         {"user": "bob", "summary": "Budget review", "start": "2024-05-07 09:00:00", "end": "2024-05-07 10:00:00"})
    args = {"username": "bob", "summary": ["budget"], "start": "2024-05-07 09:00"}
    still = run(ws, "evaluate_calendar_no_event", args)
    assert not still.passed and "still has 'Budget review' at 2024-05-07 09:00" in still.reason
    # another title at that time, or the same title at another time, is not the meeting
    assert run(ws, "evaluate_calendar_no_event", {**args, "summary": "offsite"}).passed
    assert run(ws, "evaluate_calendar_no_event", {**args, "start": "2024-05-07 10:00"}).passed
    call(registry, ws, "calendar_delete_event", {"user": "bob", "summary": "Budget review"})
    call(registry, ws, "calendar_create_event",
         {"user": "bob", "summary": "Budget review", "start": "2024-05-08 09:00:00", "end": "2024-05-08 10:00:00"})
    assert run(ws, "evaluate_calendar_no_event", args).passed
    assert run(ws, "evaluate_calendar_no_event", {**args, "username": "carol"}).passed  # no calendar: no event


# -- e-mail ----------------------------------------------------------------------------------

def test_email_sent(ws, registry):
    call(registry, ws, "email_send_email", {"sender": "alice", "recipient": "bob", "subject": "Meeting on Friday",
                                            "content": "Agenda: budget, hiring."})
    args = {"sender": "Alice", "recipient": "bob@example.com", "subject_keywords": ["meeting"], "body_keywords": ["budget"]}
    ok = run(ws, "evaluate_email_sent", args)
    assert ok.passed, ok.reason
    assert run(ws, "evaluate_email_sent", {"recipient": "bob", "subject_keywords": ["friday"]}).passed

    wrong_body = run(ws, "evaluate_email_sent", {**args, "body_keywords": ["salary"]})
    assert not wrong_body.passed
    assert "sender Alice" in wrong_body.reason and "none has all the subject and body keywords" in wrong_body.reason

    nobody = run(ws, "evaluate_email_sent", {"sender": "alice", "recipient": "carol"})
    assert not nobody.passed and "no message with sender alice recipient carol" in nobody.reason

    # a list that must leave something out: over-inclusion fails, naming the extra word
    assert run(ws, "evaluate_email_sent", {**args, "body_excludes": ["payroll"]}).passed
    too_much = run(ws, "evaluate_email_sent", {**args, "body_excludes": ["payroll", "hiring"]})
    assert not too_much.passed and "'hiring'" in too_much.reason and "leave out" in too_much.reason


def test_email_sent_matches_whole_names_not_substrings(ws, registry):
    call(registry, ws, "email_send_email", {"sender": "bob", "recipient": "carolyn", "subject": "Invoice",
                                            "content": "See attached."})
    assert run(ws, "evaluate_email_sent", {"sender": "bob", "recipient": "carolyn"}).passed
    # a message to Carolyn is not a message to Carol
    result = run(ws, "evaluate_email_sent", {"sender": "bob", "recipient": "carol", "subject_keywords": ["invoice"]})
    assert not result.passed, result.reason


def test_the_messages_between_two_are_found_once_per_scoring_as_each_look_finds_them(ws, registry):
    """``_mails_between`` keeps the messages it finds for a sender and a recipient in the scoring's
    context: asked again, and for other pairs in between, it gives what filtering the mailbox
    afresh gives; a new scoring reads the mail sent since."""
    from office_env.evaluation import checks

    for sender, recipient, subject in (("alice", "bob", "One"), ("alice", "carol", "Two"), ("bob", "alice", "Three"),
                                       ("carol", "bob", "Four"), ("alice", "carolyn", "Five")):
        call(registry, ws, "email_send_email", {"sender": sender, "recipient": recipient, "subject": subject,
                                                "content": "x"})
    pairs = [("alice", "bob"), ("Alice", None), (None, "bob"), ("alice", "carol"), (" ALICE@example.com ", "Carol"),
             ("alice", "carolyn"), ("bob", None), ("alice", "bob"), (None, "carol@x.org"), ("alice", "dave")]

    def afresh(ctx, sender, recipient):
        user = ctx.mailbox_user(sender or recipient)
        return [(i, m) for i, m in checks.mail_store.messages(ws, user, field="sender" if sender else "recipient")
                if (not sender or sender.strip().lower().split("@")[0] in checks._header_names(m.sender))
                and (not recipient or recipient.strip().lower().split("@")[0] in checks._header_names(m.recipient))]

    ctx = Context(ws)
    subjects = []
    for sender, recipient in [*pairs, *reversed(pairs)]:
        user, found = checks._mails_between(ctx, sender, recipient)
        assert (user, found) == (ctx.mailbox_user(sender or recipient), afresh(ctx, sender, recipient))
        subjects.append(sorted(m.subject for _, m in found))
    assert subjects[0] == ["One"] and {"Four", "One"} <= set(subjects[2]) and subjects[5] == ["Five"]
    call(registry, ws, "email_send_email", {"sender": "alice", "recipient": "bob", "subject": "Six", "content": "x"})
    assert len(checks._mails_between(ctx, "alice", "bob")[1]) == 1  # this scoring's
    assert len(checks._mails_between(Context(ws), "alice", "bob")[1]) == 2


# -- answers ---------------------------------------------------------------------------------

def test_answer(ws, registry):
    missing = run(ws, "evaluate_answer", {"keywords": ["12500"]})
    assert not missing.passed and "data/answer.txt" in missing.reason and "no answer" in missing.reason

    call(registry, ws, "system_write_answer", {"text": "The total due is 12,500.00 USD for invoice 7731."})
    assert run(ws, "evaluate_answer", {"keywords": ["12500", "usd"]}).passed
    assert run(ws, "evaluate_answer", {"number": 12500}).passed
    assert run(ws, "evaluate_answer", {"number": 12450, "tolerance": 50}).passed

    lacks = run(ws, "evaluate_answer", {"keywords": ["EUR"]})
    assert not lacks.passed and "data/answer.txt" in lacks.reason and "'EUR'" in lacks.reason
    off = run(ws, "evaluate_answer", {"number": 12000, "tolerance": 100})
    assert not off.passed and "12500" in off.reason and "12000 +/- 100" in off.reason

    other = run(ws, "evaluate_answer", {"file": "data/readme.txt", "keywords": ["team"]})
    assert other.passed, other.reason

    # pasting a whole document that holds the figure somewhere is not an answer
    pasted = "Invoice 7731\n" + "Line item 42.00 USD\n" * 40 + "Total due: 12,500.00 USD\n"
    call(registry, ws, "system_write_answer", {"text": pasted})
    long = run(ws, "evaluate_answer", {"number": 12500})
    assert not long.passed and "more than an answer's 500" in long.reason
    assert run(ws, "evaluate_answer", {"number": 12500, "max_chars": 2000}).passed


def test_a_count_may_be_written_in_words(ws, registry):
    call(registry, ws, "system_write_answer", {"text": "Twenty-one claims are still open; someone filed one-offs."})
    assert run(ws, "evaluate_answer", {"number": 21, "tolerance": 0}).passed
    for wrong in (1, 20, 2):
        result = run(ws, "evaluate_answer", {"number": wrong, "tolerance": 0})
        assert not result.passed, (wrong, result.reason)
    call(registry, ws, "system_write_answer", {"text": "Three."})
    assert run(ws, "evaluate_answer", {"number": 3, "tolerance": 0}).passed
    assert not run(ws, "evaluate_answer", {"number": 3.5, "tolerance": 0.1}).passed


def test_an_amount_may_be_written_in_words_and_a_worded_hedge_still_fails(ws, registry):
    call(registry, ws, "system_write_answer", {"text": "It comes to twelve hundred and fifty pounds."})
    assert run(ws, "evaluate_answer", {"number": 1250, "tolerance": 0}).passed
    for wrong in (1200, 50, 12):
        assert not run(ws, "evaluate_answer", {"number": wrong, "tolerance": 0}).passed, wrong
    call(registry, ws, "system_write_answer", {"text": "Twelve hundred, or eleven hundred if the refund counts."})
    hedged = run(ws, "evaluate_answer", {"number": 1200, "tolerance": 0, "excludes": [1100]})
    assert not hedged.passed and "also 1100" in hedged.reason
    # two values offered: a hedge even when the misreadings' answers are not listed
    assert "hedges between 1200 and 1100" in run(ws, "evaluate_answer",
                                                  {"number": 1200, "tolerance": 0, "excludes": [900]}).reason


def test_an_answer_naming_a_refused_candidate_beside_the_right_one_fails(ws, registry):
    call(registry, ws, "system_write_answer", {"text": "Either 12,500.00 or 3,191.40 USD, for invoice 7731."})
    hedged = run(ws, "evaluate_answer", {"number": 12500, "excludes": [3191.4, 175]})
    assert not hedged.passed and "3191.4" in hedged.reason and "12500" in hedged.reason
    # offering two values is a hedge whatever the excludes list
    assert "hedges between 12500 and 3191.4" in run(ws, "evaluate_answer", {"number": 12500, "excludes": [175]}).reason
    call(registry, ws, "system_write_answer", {"text": "12,500.00 USD for invoice 7731; 3,191.40 was paid."})
    assert run(ws, "evaluate_answer", {"number": 12500, "excludes": [175, "Kestrel"]}).passed
    # a refused value within the tolerance of the right one is the right one
    assert run(ws, "evaluate_answer", {"number": 12500, "tolerance": 1, "excludes": [12500.5]}).passed

    call(registry, ws, "system_write_answer", {"text": "EC-811 (or maybe EC-779)"})
    words = run(ws, "evaluate_answer", {"keywords": ["EC-811"], "excludes": ["EC-779"]})
    assert not words.passed and "'EC-779'" in words.reason
    # another code offered beside the right one is a hedge whatever the excludes list
    assert "offers 'ec-779' beside" in run(ws, "evaluate_answer",
                                           {"keywords": ["EC-811"], "excludes": ["EC-780", 811.5]}).reason
    call(registry, ws, "system_write_answer", {"text": "EC-811"})
    assert run(ws, "evaluate_answer", {"keywords": ["EC-811"], "excludes": ["EC-780", 811.5]}).passed


@pytest.mark.parametrize("text, passes", [
    ("18", True), ("Eighteen.", True), ("It's 18, not 28.", True), ("18 of the 45 rows", True),
    ("18 (the sheet has 45 rows or so)", True), ("18 people, as of 2024-05-01 at 14:00", True),
    ("either 18 or 28", False), ("18 (or maybe 28)", False), ("18, possibly 28", False),
    ("Between 18 and 28", False), ("18/28", False), ("Eighteen, or 28", False),
])
def test_a_number_answer_hedging_between_two_values_fails_without_excludes(ws, registry, text, passes):
    """"either 18 or 28" passed wherever the misreadings' answers were not listed as excludes: a
    careful reader wants one value, and takes "18, not 28" as one."""
    call(registry, ws, "system_write_answer", {"text": text})
    result = run(ws, "evaluate_answer", {"number": 18})
    assert result.passed is passes, result.reason
    if not passes:
        assert "hedges between 18 and 28" in result.reason



@pytest.mark.parametrize("text, passes", [
    ("Fiona Quintero", True), ("The top scorer is Fiona Quintero (92 points).", True),
    ("Fiona Quintero, not Ada Ellsworth.", True), ("Fiona Quintero; Ada has fewer.", True),
    ("Fiona Quintero or Ada Ellsworth", False), ("either Ada Ellsworth or Fiona Quintero", False),
    ("Fiona Quintero (maybe Ada)", False), ("Fiona Quintero/Hugo", False), ("Fiona Quintero, or possibly Hugo", False),
])
def test_a_word_answer_offering_another_beside_it_fails_without_excludes(ws, registry, text, passes):
    """A look-up answered "Fiona Quintero or Ada Ellsworth" passed wherever Ada was not a listed
    misreading: a careful reader wants one answer, and takes "Fiona, not Ada" as one."""
    call(registry, ws, "system_write_answer", {"text": text})
    result = run(ws, "evaluate_answer", {"keywords": ["Fiona Quintero"], "excludes": ["Quinn Lindqvist"]})
    assert result.passed is passes, result.reason
    if not passes:
        assert "beside the expected answer" in result.reason

def test_a_file_of_another_type_than_the_criterion_names_fails_saying_both(ws, registry):
    """A criterion that reads an xlsx, given a Word file of that name, failed on a parser's error."""
    call(registry, ws, "word_write_to_file", {"file_path": "data/totals.docx", "content": "Total 12500"})
    wrong = run(ws, "evaluate_contain", {"doc_type": "xlsx", "file": "data/totals.docx", "keywords": ["12500"]})
    assert not wrong.passed and "its name says docx, but the criterion reads it as xlsx" in wrong.reason
    assert run(ws, "evaluate_contain", {"doc_type": "docx", "file": "data/totals.docx", "keywords": ["12500"]}).passed


# -- validation ------------------------------------------------------------------------------

GOOD = {"function": "evaluate_file_exist", "args": {"file": "data/notes.docx"}}


@pytest.mark.parametrize(
    "item, field, words",
    [
        ({"function": "evaluate_magic", "args": {}}, "evaluation[1].function", "unknown function 'evaluate_magic'"),
        ({"function": "evaluate_contain", "args": {"doc_type": "txt", "keywords": ["x"]}}, "evaluation[1].args", "'file'"),
        ({"function": "evaluate_contain", "args": {"doc_type": "email", "keywords": ["x"]}}, "evaluation[1].args", "'username'"),
        ({"function": "evaluate_contain", "args": {"doc_type": "txt", "file": "a.txt", "keywords": "x"}},
         "evaluation[1].args.keywords", "not of type 'array'"),
        ({"function": "evaluate_contain", "args": {"doc_type": "txt", "file": "a.txt", "keywords": []}},
         "evaluation[1].args.keywords", "non-empty"),
        ({"function": "evaluate_contain", "args": {"doc_type": "rtf", "file": "a.rtf", "keywords": ["x"]}},
         "evaluation[1].args.doc_type", "'rtf'"),
        ({"function": "evaluate_file_exist", "args": {"file": 3}}, "evaluation[1].args.file", "not of type 'string'"),
        ({"function": "evaluate_file_exist", "args": {"file": "/etc/passwd"}}, "evaluation[1].args.file", "absolute"),
        ({"function": "evaluate_file_exist", "args": {"file": "../other/x.txt"}}, "evaluation[1].args.file",
         "points outside the testbed"),
        ({"function": "evaluate_file_exist", "args": {"file": "../../cache/x/testbed/a.txt"}}, "evaluation[1].args.file",
         "points outside the testbed"),
        ({"function": "evaluate_file_exist", "args": {"file": "a", "extra": 1}}, "evaluation[1].args", "'extra'"),
        ({"function": "evaluate_excel_cell_value", "args": {"file": "a.xlsx", "matches": [{"row": 0, "col": 1, "value": 1}]}},
         "evaluation[1].args.matches[0].row", "minimum"),
        ({"function": "evaluate_excel_cell_comparator",
          "args": {"file": "a.xlsx", "matches": [{"row": 1, "col": 1, "comparator": "__import__('os').system('x')"}]}},
         "evaluation[1].args.matches[0].comparator", "not allowed"),
        ({"function": "evaluate_calendar_event",
          "args": {"username": "bob", "summary": "x", "start": "2024-05-07 10:00", "end": "2024-05-07 09:00"}},
         "evaluation[1].args", "end: must be after start"),
        ({"function": "evaluate_calendar_event", "args": {"username": "bob", "summary": "x", "start": "2024-13-07 10:00"}},
         "evaluation[1].args", "not a time"),
        ({"function": "evaluate_answer", "args": {"keywords": ["a"], "number": 3}}, "evaluation[1].args", "valid under each"),
        ({"function": "evaluate_email_sent", "args": {"subject_keywords": ["a"]}}, "evaluation[1].args", "not valid under any"),
        ({"args": {}}, "evaluation[1]", "'function'"),
        ("evaluate_contain", "evaluation[1]", "not of type 'object'"),
    ],
)
def test_validate_reports_one_problem_with_field_path(item, field, words):
    problems = validate_criteria([GOOD, item], file="task.json")
    assert len(problems) == 1, problems
    problem = problems[0]
    assert problem.field == field
    assert words in problem.message
    assert problem.file == "task.json"
    assert str(problem).startswith(f"task.json: {field}: ")


def test_an_item_told_well_formed_is_one_the_item_schema_finds_nothing_wrong_with(monkeypatch):
    """``catalog._well_formed`` answers for the item schema's validator where it says yes: never
    for an item the validator finds something wrong with, and a list's problems are the same as
    the validator's alone find."""
    from collections import OrderedDict

    from office_env.evaluation import catalog

    class Named(str):
        pass

    items = [GOOD, {"function": "x", "args": {}}, {"function": Named("x"), "args": OrderedDict()},
             OrderedDict(GOOD), {"function": "x"}, {"args": {}}, {"function": "x", "args": {}, "extra": 1},
             {"function": 1, "args": {}}, {"function": None, "args": {}}, {"function": "x", "args": []},
             {"function": "x", "args": None}, {"function": b"x", "args": {}}, {1: "x", "args": {}},
             {"function": "x", 2: {}}, [], "evaluate_contain", None, 3, ("function", "args")]
    told = 0
    for item in items:
        valid = not list(catalog._ITEM_VALIDATOR.iter_errors(item))
        if catalog._well_formed(item):
            told += 1
            assert valid, item
    assert told == 3
    quick = [validate_criteria([GOOD, item]) for item in items]
    monkeypatch.setattr(catalog, "_well_formed", lambda item: False)
    assert quick == [validate_criteria([GOOD, item]) for item in items]


def test_validate_collects_problems_of_every_criterion():
    problems = validate_criteria([
        {"function": "evaluate_magic", "args": {}},
        GOOD,
        {"function": "evaluate_file_exist", "args": {"file": "/abs"}},
    ])
    assert [p.field for p in problems] == ["evaluation[0].function", "evaluation[2].args.file"]
    assert validate_criteria([GOOD]) == []


@pytest.mark.parametrize("criteria, words", [([], "is empty"), ({"function": "evaluate_file_exist"}, "must be a list"),
                                             ("evaluate_contain", "must be a list"), (None, "must be a list")])
def test_validate_rejects_empty_and_non_lists(criteria, words):
    problems = validate_criteria(criteria, base="task.evaluation")
    assert len(problems) == 1
    assert problems[0].field == "task.evaluation" and words in problems[0].message


def test_evaluate_raises_before_running_anything(ws, monkeypatch):
    calls = []
    real = CHECKS["evaluate_file_exist"]

    def spy(ctx, args):
        calls.append(args)
        return real.func(ctx, args)

    monkeypatch.setitem(CHECKS, "evaluate_file_exist", Check(real.name, real.description, real.args_schema, spy, real.path_args))
    assert run(ws, "evaluate_file_exist", {"file": "data/notes.docx"}).passed
    assert len(calls) == 1

    with pytest.raises(InvalidCriteria) as info:
        evaluate_criteria(ws, [GOOD, {"function": "evaluate_file_exist", "args": {"file": "../x"}}], file="t.json")
    assert len(calls) == 1  # the valid first criterion did not run
    assert [p.field for p in info.value.problems] == ["evaluation[1].args.file"]
    assert "t.json: evaluation[1].args.file" in str(info.value)


def test_corrupt_file_fails_only_its_criterion(ws):
    (ws.root / "data" / "scores.xlsx").write_bytes(b"this is not a zip file")
    (ws.root / "data" / "invoice.pdf").write_bytes(b"%PDF-1.4 garbage")
    report = evaluate_criteria(ws, [
        {"function": "evaluate_contain", "args": {"doc_type": "docx", "file": "data/notes.docx", "keywords": ["budget"]}},
        {"function": "evaluate_excel_cell_value", "args": {"file": "data/scores.xlsx", "matches": [{"row": 1, "col": 1, "value": "Name"}]}},
        {"function": "evaluate_contain", "args": {"doc_type": "pdf", "file": "data/invoice.pdf", "keywords": ["7731"]}},
        {"function": "evaluate_file_exist", "args": {"file": "data/scores.xlsx"}},
    ])
    assert [r.passed for r in report.results] == [True, False, False, True]
    assert [r.index for r in report.results] == [0, 1, 2, 3]
    assert "data/scores.xlsx" in report.results[1].reason and "Excel" in report.results[1].reason
    assert "data/invoice.pdf" in report.results[2].reason and "PDF" in report.results[2].reason
    assert not report.passed
    assert [r.index for r in report.failures()] == [1, 2]
    as_dict = report.to_dict()
    assert as_dict["passed"] is False and len(as_dict["results"]) == 4
    assert as_dict["results"][1] == {"index": 1, "function": "evaluate_excel_cell_value", "passed": False,
                                     "reason": report.results[1].reason}


def test_corrupt_mailbox_message_is_skipped_and_named(ws):
    (ws.root / "emails" / "bob" / "broken.eml").write_bytes(b"\x00\x01 no headers here")
    found = run(ws, "evaluate_contain", {"doc_type": "email", "username": "bob", "keywords": ["thanks"]})
    assert found.passed
    missing = run(ws, "evaluate_contain", {"doc_type": "email", "username": "bob", "keywords": ["invoice"]})
    assert not missing.passed
    assert "broken.eml" in missing.reason and "'invoice'" in missing.reason


def test_report_passes_only_if_all_pass(ws):
    all_ok = evaluate_criteria(ws, [GOOD, {"function": "evaluate_file_not_exist", "args": {"file": "data/x.txt"}}])
    assert all_ok.passed and all_ok.failures() == []
    one_bad = evaluate_criteria(ws, [GOOD, {"function": "evaluate_file_exist", "args": {"file": "data/x.txt"}}])
    assert not one_bad.passed and [r.index for r in one_bad.failures()] == [1]


# -- JSON Schema -----------------------------------------------------------------------------

def test_criteria_schema_is_valid_and_matches_validation():
    schema = criteria_schema()
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert set(schema["items"]["properties"]["function"]["enum"]) == ALL_FUNCTIONS

    valid = [
        GOOD,
        {"function": "evaluate_contain", "args": {"doc_type": "email", "username": "Bob", "keywords": ["meeting"]}},
        {"function": "evaluate_excel_cell_value", "args": {"file": "data/a.xlsx", "matches": [{"row": 1, "col": "2", "value": 3}]}},
        {"function": "evaluate_answer", "args": {"number": 3.5, "tolerance": 0.1}},
    ]
    assert list(validator.iter_errors(valid)) == []
    assert validate_criteria(valid) == []

    for invalid in (
        [],
        [{"function": "evaluate_magic", "args": {}}],
        [{"function": "evaluate_contain", "args": {"doc_type": "email", "keywords": ["meeting"]}}],  # no username
        [{"function": "evaluate_file_exist", "args": {"file": "a", "mode": "x"}}],
        [{"function": "evaluate_file_exist", "args": {"file": "a"}, "note": "extra"}],
        [{"function": "evaluate_excel_cell_value", "args": {"file": "a.xlsx", "matches": []}}],
    ):
        assert not validator.is_valid(invalid), invalid
        assert validate_criteria(invalid), invalid


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


def _with(value, path, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _with(value[path[0]], path[1:], new)
    return copy


def test_criteria_pass_validation_only_where_the_reference_validator_passes_them():
    """Criteria are validated by a compiled validator first and by the reference one where it says
    no: every leaf of valid criteria put to values the two might read apart (a pattern's last line
    break, digits of another script, an integer past 64 bits, a bool for a number) is refused
    wherever the reference validator refuses it, with its field named."""
    items = [
        GOOD,
        {"function": "evaluate_contain", "args": {"doc_type": "email", "username": "bob", "keywords": ["meeting"]}},
        {"function": "evaluate_excel_cell_value", "args": {"file": "data/a.xlsx", "matches": [{"row": 1, "col": "2", "value": 3}]}},
        {"function": "evaluate_answer", "args": {"number": 3.5, "tolerance": 0.1}},
        {"function": "evaluate_calendar_event", "args": {"username": "bob", "summary": "Sync", "start": "2024-05-20 10:00"}},
        {"function": "evaluate_email_sent", "args": {"sender": "bob", "subject_keywords": ["budget"]}},
    ]
    edges = ["", "x\n", "\u0661\u0662", "2024-05-20 10:00\n", "12\n", 10**30, -1, 0, True, 1.5, None, [], {}]
    refused = 0
    for item in items:
        reference = Draft202012Validator(CHECKS[item["function"]].args_schema)
        assert not list(reference.iter_errors(item["args"])), item
        for path, _ in _leaves(item["args"]):
            for edge in edges:
                args = _with(item["args"], path, edge)
                errors = list(reference.iter_errors(args))
                problems = validate_criteria([{"function": item["function"], "args": args}])
                if errors:
                    refused += 1
                    assert problems and all(str(p).startswith("evaluation[0].args") for p in problems), (args, errors)
    assert refused > 50


def test_answer_number_reads_a_date_as_its_year_not_as_negative_numbers(ws):
    (ws.root / "data" / "answer.txt").write_text("Due 2024-05-31, balance -5.5", encoding="utf-8")
    assert run(ws, "evaluate_answer", {"number": -5.5}).passed
    assert run(ws, "evaluate_answer", {"number": 2024}).passed
    assert not run(ws, "evaluate_answer", {"number": -31}).passed
    assert not run(ws, "evaluate_answer", {"number": 5}).passed  # the date's month is no figure of its own


def test_an_answer_s_date_and_clock_time_are_neither_its_figure_nor_a_hedge(ws):
    """"4 Travel claims (as of 2024-07-12, 4:30 pm)" failed as a hedge when a misreading counted 7 or
    12; a target of 30 was "found" in 4:30 pm."""
    (ws.root / "data" / "answer.txt").write_text("4 Travel claims (as of 2024-07-12, 4:30 pm)", encoding="utf-8")
    assert run(ws, "evaluate_answer", {"number": 4, "excludes": [7, 12, 30]}).passed
    assert not run(ws, "evaluate_answer", {"number": 30}).passed
    assert not run(ws, "evaluate_answer", {"number": 4, "excludes": [2024]}).passed  # a year still is one
    (ws.root / "data" / "answer.txt").write_text("Marketing: 45 claims, 1,500.00 in March 15 invoices",
                                                 encoding="utf-8")
    assert run(ws, "evaluate_answer", {"number": 45, "excludes": [1500, 15]}).passed is False  # 15 is a count here
    assert run(ws, "evaluate_answer", {"number": 45, "excludes": [1500]}).passed is False
    assert run(ws, "evaluate_answer", {"number": 45, "excludes": [44]}).passed


@pytest.mark.parametrize("row", ["9" * 5000, 10**30, 1_048_577, "12345678"])
def test_a_cell_index_beyond_any_sheet_is_invalid_not_a_crash(row):
    item = {"function": "evaluate_excel_cell_value",
            "args": {"file": "data/a.xlsx", "matches": [{"row": row, "col": 1, "value": "x"}]}}
    problems = validate_criteria([item])
    assert len(problems) == 1 and "evaluation[0].args.matches[0].row" in str(problems[0])
    assert validate_criteria([{**item, "args": {**item["args"], "matches": [{"row": "1048576", "col": 1, "value": "x"}]}}]) == []


def test_a_valid_criteria_list_is_validated_once_and_an_invalid_one_always_raises(ws, monkeypatch):
    from office_env.evaluation import catalog

    calls = []
    real = catalog.validate_criteria
    monkeypatch.setattr(catalog, "validate_criteria", lambda criteria, **kw: calls.append(1) or real(criteria, **kw))
    monkeypatch.setattr(catalog, "_VALID", set())
    criteria = [{"function": "evaluate_file_exist", "args": {"file": "data/notes.docx"}}]
    for _ in range(3):
        assert evaluate_criteria(ws, criteria).passed
    assert len(calls) == 1
    bad = [{"function": "evaluate_file_exist", "args": {"file": "../notes.docx"}}]
    extra = [{"function": "evaluate_file_exist", "args": {"file": "data/notes.docx", "extra": 1}}]
    for invalid in (bad, bad, extra, [("evaluate_file_exist",)]):
        with pytest.raises(InvalidCriteria):
            evaluate_criteria(ws, invalid)
    criteria[0]["args"]["file"] = "../changed.docx"  # the same list, changed in place: validated again
    with pytest.raises(InvalidCriteria):
        evaluate_criteria(ws, criteria)
    calls.clear()
    sent = [{"function": "evaluate_email_sent",
             "args": {"sender": "a@x.com", "recipient": "b@x.com", "subject_keywords": ["".join(["Bud", "get"])]}}]
    catalog.criteria_problems(sent)
    held = [sent[0]["args"]["subject_keywords"][0]] * 3  # noqa: F841 - other references to its strings, as caches hold
    interned = [{**sent[0], "args": {**sent[0]["args"], "subject_keywords": [sys.intern("Budget")]}}]
    catalog.criteria_problems(sent)
    catalog.criteria_problems(interned)
    assert len(calls) == 1  # the same values, however referenced or interned


def test_a_list_found_valid_vouches_only_for_lists_of_the_same_values_and_types(monkeypatch):
    """``criteria_problems`` answers from the lists found valid only for a list written the same,
    each value with its type: a variant that differs by a type alone (``True`` for ``1``, ``1.0``,
    a tuple, a subclass) gets the problems validating it gives."""
    from collections import OrderedDict

    from office_env.evaluation import catalog

    class Name(str):
        pass

    def cell(value, row=1):
        return {"function": "evaluate_excel_cell_value",
                "args": {"file": "data/a.xlsx", "matches": [{"row": row, "col": 1, "value": value}]}}

    variants = [[cell(1)], [cell(True)], [cell(1.0)], [cell("1")], [cell(1, True)], [cell(1, 1.0)], [cell(1, "1")],
                [cell(1, "01")], [cell([1])], [cell((1,))], [(cell(1),)], [OrderedDict(cell(1))],
                [{"function": Name("evaluate_file_exist"), "args": {"file": "a"}}], [cell(None)], [cell(1), cell(2)],
                [{"args": cell(1)["args"], "function": "evaluate_excel_cell_value"}], [cell(float("nan"))]]
    monkeypatch.setattr(catalog, "_VALID", set())
    for _ in range(2):
        for criteria in [*variants, *reversed(variants)]:
            assert catalog.criteria_problems(criteria) == validate_criteria(criteria), criteria
    valid = [c for c in variants if not validate_criteria(c)]
    assert 3 <= len(valid) < len(variants) and len(catalog._VALID) == len(valid) - 2  # nor kept: the subclasses


def test_a_text_asked_about_again_is_read_once_for_each_day_order():
    """The checks of a task's replays ask of the same messages again: a text's haystack is kept
    per day order (a numeric date reads apart in the two), and a long text gets one of its own."""
    text = "Due 03/04/2024 at 4 pm"
    assert kw.haystack(text, True) is kw.haystack(text, True)
    assert kw.haystack(text, True) is not kw.haystack(text, False)
    assert kw.missing(text, ["2024-04-03"], True) == [] and kw.missing(text, ["2024-04-03"], False) == ["2024-04-03"]
    assert kw.missing(text, ["2024-04-03"], True) == []  # asked again, the kept one answers the same
    long = "x " * kw.MAX_KEPT_HAYSTACK_CHARS
    assert kw.haystack(long) is not kw.haystack(long)
