"""Homer's scoring against OfficeBench's own verdicts (``--semantics officebench``), on small
states built here: one state per documented difference, scored both ways."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import docx
import icalendar
import pytest

from office_env import Workspace, evaluate_criteria
from office_env.evaluation.officebench_semantics import evaluate_officebench, scorer
from office_env.formats import docx_io, pdf_io, xlsx_io

NOW = datetime(2024, 5, 3, 9, 30)


@pytest.fixture
def office(tmp_path: Path) -> Workspace:
    (tmp_path / "tb" / "data").mkdir(parents=True)
    return Workspace(tmp_path / "tb", now=NOW)


def put(ws: Workspace, relpath: str, data: bytes | str) -> None:
    ws.write_bytes(relpath, data.encode("utf-8") if isinstance(data, str) else data)


def verdicts(ws: Workspace, function: str, args: dict, reference: Path | None = None) -> tuple[bool, bool]:
    criteria = [{"function": function, "args": args}]
    return (evaluate_criteria(ws, criteria, reference).passed, evaluate_officebench(ws, criteria, reference).passed)


def contain(file: str, *keywords, doc_type: str = "txt") -> dict:
    return {"doc_type": doc_type, "file": file, "keywords": list(keywords)}


def test_a_number_inside_a_longer_number(office):
    put(office, "data/answer.txt", "Orders in 2012: 7")
    assert verdicts(office, "evaluate_contain", contain("data/answer.txt", "12")) == (False, True)
    assert verdicts(office, "evaluate_contain", contain("data/answer.txt", "7")) == (True, True)


def test_a_line_break_or_a_leading_space_inside_a_keyword(office):
    put(office, "data/note.txt", "Budget\nreview on Friday.\nTotal: 5")
    assert verdicts(office, "evaluate_contain", contain("data/note.txt", "budget review")) == (True, False)
    assert verdicts(office, "evaluate_contain", contain("data/note.txt", " total")) == (True, False)


def test_keywords_in_a_word_table(office):
    document = docx.Document()
    document.add_paragraph("Quarterly figures")
    document.add_table(rows=1, cols=2).rows[0].cells[1].text = "Budget 4200"
    document.save(office.root / "data" / "figures.docx")
    args = contain("data/figures.docx", "4200", doc_type="docx")
    assert verdicts(office, "evaluate_contain", args) == (True, False)
    assert verdicts(office, "evaluate_contain", {**args, "keywords": ["quarterly"]}) == (True, True)


def test_a_folded_ics_line(office):
    title = "Planning session for the regional budget review with the finance and sales teams"
    calendar = icalendar.Calendar()
    event = icalendar.Event()
    event.add("summary", title)
    event.add("dtstart", datetime(2024, 5, 7, 9))
    event.add("dtend", datetime(2024, 5, 7, 10))
    calendar.add_component(event)
    put(office, "calendar/alice.ics", calendar.to_ical())
    assert b"\r\n " in (office.root / "calendar" / "alice.ics").read_bytes()  # the summary is folded
    args = contain("calendar/alice.ics", "finance and sales teams", doc_type="ics")
    assert verdicts(office, "evaluate_contain", args) == (True, False)


def test_not_contain_with_several_words(office):
    put(office, "data/note.txt", "the draft is done")
    args = contain("data/note.txt", "draft", "final")
    # homer: none may remain; OfficeBench: not all of them together
    assert verdicts(office, "evaluate_not_contain", args) == (False, True)
    assert verdicts(office, "evaluate_not_contain", {**args, "keywords": ["draft", "done"]}) == (False, False)


def test_a_cell_value_prefix_and_a_plain_comparator(office):
    put(office, "data/scores.xlsx", xlsx_io.build([["Name", "Score"], ["Ann", 100], ["Bo", "Done"]]))
    value = {"file": "data/scores.xlsx", "matches": [{"row": 2, "col": 2, "value": "10"}]}
    assert verdicts(office, "evaluate_excel_cell_value", value) == (False, True)
    value["matches"][0]["value"] = "100"
    assert verdicts(office, "evaluate_excel_cell_value", value) == (True, True)
    plain = {"file": "data/scores.xlsx", "matches": [{"row": 2, "col": 2, "comparator": ">= 90"}]}
    assert verdicts(office, "evaluate_excel_cell_comparator", plain) == (True, False)  # a syntax error there
    for comparator, both in (("lambda x: int(x) >= 90", True), ("lambda x: int(x) < 90", False)):
        plain["matches"][0]["comparator"] = comparator
        assert verdicts(office, "evaluate_excel_cell_comparator", plain) == (both, both)
    text = {"file": "data/scores.xlsx", "matches": [{"row": 3, "col": 2, "comparator": "lambda x: x == 'Done'"}]}
    assert verdicts(office, "evaluate_excel_cell_comparator", text) == (True, True)
    text["matches"][0]["comparator"] = "lambda x: int(x) > 1"  # int('Done') raises there: a failure
    assert evaluate_officebench(office, [{"function": "evaluate_excel_cell_comparator", "args": text}]).results[0] \
        .reason.startswith("OfficeBench's evaluator crashes here")


def test_exact_match_of_word_and_pdf_files_never_passes_there(office, tmp_path):
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "report.pdf").write_bytes(pdf_io.build("Revenue 4200"))
    (reference / "report.docx").write_bytes(docx_io.build("Revenue 4200"))
    (reference / "out.txt").write_text("same text\n", encoding="utf-8")
    for name, doc_type in (("report.pdf", "pdf"), ("report.docx", "doc"), ("out.txt", "txt")):
        put(office, f"data/{name}", (reference / name).read_bytes())
        args = {"doc_type": doc_type, "result_file": f"data/{name}", "expected_file": f"../../../../reference/{name}"}
        assert verdicts(office, "evaluate_exact_match", args, reference) == (True, doc_type == "txt"), name


def test_all_day_and_duration_events_crash_the_overlap_check_there(office):
    calendar = icalendar.Calendar()
    for summary, start, end in (("Offsite", date(2024, 5, 9), None), ("Standup", datetime(2024, 5, 7, 9),
                                                                     datetime(2024, 5, 7, 9, 15))):
        event = icalendar.Event()
        event.add("summary", summary)
        event.add("dtstart", start)
        if end is not None:
            event.add("dtend", end)
        calendar.add_component(event)
    put(office, "calendar/alice.ics", calendar.to_ical())
    assert verdicts(office, "evaluate_calendar_no_overlap", {"username": "alice"}) == (True, False)
    # its loop reads DTEND of every event but the last (by start): a DURATION event that sorts last passes
    put(office, "calendar/bob.ics", calendar.to_ical().replace(b"DTSTART;VALUE=DATE:20240509",
                                                               b"DTSTART:20240509T120000\r\nDURATION:PT1H"))
    assert verdicts(office, "evaluate_calendar_no_overlap", {"username": "bob"}) == (True, True)
    put(office, "calendar/dan.ics", calendar.to_ical().replace(b"DTSTART;VALUE=DATE:20240509",
                                                               b"DTSTART:20240506T120000\r\nDURATION:PT1H"))
    assert verdicts(office, "evaluate_calendar_no_overlap", {"username": "dan"}) == (True, False)
    assert evaluate_officebench(office, [{"function": "evaluate_calendar_no_overlap",
                                          "args": {"username": "carol"}}]).results[0].passed is False


def test_homer_only_checks_do_not_exist_there(office):
    put(office, "data/answer.txt", "42")
    report = evaluate_officebench(office, [{"function": "evaluate_answer", "args": {"number": 42}}])
    assert not report.passed and "does not exist in OfficeBench" in report.results[0].reason
    assert evaluate_criteria(office, [{"function": "evaluate_answer", "args": {"number": 42}}]).passed


def test_a_mailbox_is_found_by_exact_or_lower_case_name_only_there(office, registry):
    registry.call(office, "email_send_email", {"sender": "alice", "recipient": "bob.smith", "subject": "Hi",
                                               "content": "The plan is ready."})
    args = {"doc_type": "email", "username": "Bob.Smith", "keywords": ["plan is ready"]}
    assert verdicts(office, "evaluate_contain", args) == (True, True)
    args["username"] = "bob"  # homer finds the one mailbox that holds the name; its fallback loop breaks
    assert verdicts(office, "evaluate_contain", args) == (True, False)


def test_scorer_names():
    assert scorer("officebench") is evaluate_officebench and scorer("homer") is evaluate_criteria
    with pytest.raises(ValueError, match="must be one of homer, officebench"):
        scorer("strict")


def test_a_sheet_named_otherwise_than_xlsx_is_not_opened_there(office):
    put(office, "data/list.docx", xlsx_io.build([["Rachel"], ["Tina"]]))  # a workbook under a Word name
    args = contain("data/list.docx", "Rachel", doc_type="xlsx")
    assert verdicts(office, "evaluate_contain", args) == (True, False)
    assert verdicts(office, "evaluate_not_contain", {**args, "keywords": ["Liam"]}) == (True, False)


def mail(body_parts: list[tuple[str, str, str | None, str | None]], nested: bool = False) -> bytes:
    """A message: (subtype, text, charset, disposition) parts, in multipart/mixed (the body in a
    multipart/alternative inside it when ``nested``)."""
    from email.mime.multipart import MIMEMultipart
    from email.mime.nonmultipart import MIMENonMultipart

    outer = MIMEMultipart("mixed")
    outer["From"], outer["To"], outer["Subject"] = "bob@example.com", "alice@example.com", "Note"
    holder = outer
    if nested:
        holder = MIMEMultipart("alternative")
        outer.attach(holder)
    for subtype, text, charset, disposition in body_parts:
        part = MIMENonMultipart("text", subtype)
        part.set_payload(text.encode("utf-8"))
        if charset:
            part.set_param("charset", charset)
        if disposition:
            part.add_header("Content-Disposition", disposition, filename="notes.txt")
        holder.attach(part)
    return outer.as_bytes()


def mailbox_verdicts(ws: Workspace, *keywords: str) -> tuple[bool, bool]:
    return verdicts(ws, "evaluate_contain", {"doc_type": "email", "username": "alice", "keywords": list(keywords)})


def test_its_mailbox_listing_reads_direct_text_parts_and_fails_whole_on_one_bad_entry(office):
    put(office, "emails/alice/1.eml", mail([("plain", "budget approved", "utf-8", None),
                                            ("plain", "ATTACHED FIGURES", "utf-8", "attachment"),
                                            ("html", "<b>HTMLONLY</b>", "utf-8", None)]))
    assert mailbox_verdicts(office, "budget approved") == (True, True)
    assert mailbox_verdicts(office, "attached figures") == (False, True)  # it reads a text attachment
    assert mailbox_verdicts(office, "htmlonly") == (False, True)  # and the HTML alternative beside the text
    put(office, "emails/alice/2.eml", mail([("plain", "nested body", "utf-8", None)], nested=True))
    assert mailbox_verdicts(office, "nested body") == (True, False)  # a body one level deeper is not read there
    put(office, "emails/alice/.3.eml", mail([("plain", "hidden note", "utf-8", None)]))
    assert mailbox_verdicts(office, "hidden note")[1] is False  # a hidden file is no match of its glob
    put(office, "emails/alice/4.eml", mail([("plain", "no charset here", None, None)]))
    assert mailbox_verdicts(office, "budget approved") == (True, False)  # one undecodable part fails the listing
    (office.root / "emails/alice/4.eml").unlink()
    assert mailbox_verdicts(office, "budget approved") == (True, True)
    (office.root / "emails/alice/5.eml").mkdir()  # a folder named like a message
    assert mailbox_verdicts(office, "budget approved") == (True, False)
    assert verdicts(office, "evaluate_not_contain",
                    {"doc_type": "email", "username": "alice", "keywords": ["budget approved"]}) == (False, True)


def test_its_text_reads_with_universal_newlines_and_pdf_pages_run_together(office):
    put(office, "data/a.txt", "line one\r\nline two\r\n")
    put(office, "data/b.txt", "line one\nline two\n")
    args = {"doc_type": "txt", "result_file": "data/a.txt", "expected_file": "data/b.txt"}
    assert verdicts(office, "evaluate_exact_match", args)[1] is True
    put(office, "data/two.pdf", pdf_io.build(f"Total due on\n{pdf_io.PAGE_BREAK}\npage two"))
    assert pdf_io.read_pages(office.root / "data/two.pdf", "two.pdf") == ("Total due on", "page two")
    # its pages' text is joined with nothing between: a keyword runs across the break there
    assert verdicts(office, "evaluate_contain", contain("data/two.pdf", "due onpage", doc_type="pdf")) == (False, True)


def test_an_integer_keyword_in_a_diff_crashes_there_and_a_misplaced_argument_fails_there(office):
    put(office, "data/in.xlsx", xlsx_io.build([["Item", "Qty"], ["Pens", 10]]))
    put(office, "data/out.xlsx", xlsx_io.build([["Item", "Qty"], ["Pens", 12]]))
    args = {"doc_type": "xlsx", "input_file": "data/in.xlsx", "output_file": "data/out.xlsx"}
    assert evaluate_officebench(office, [{"function": "evaluate_diff_contain_text", "args": {**args, "keywords": ["12"]}}]).passed
    report = evaluate_officebench(office, [{"function": "evaluate_diff_contain_text", "args": {**args, "keywords": [12]}}])
    assert not report.passed and "not a string" in report.results[0].reason
    from office_env.officebench import misplaced_criteria, normalize_criteria

    raw = [{"function": "evaluate_excel_cell_value", "file": "data/out.xlsx",
            "args": {"matches": [{"row": 2, "col": 2, "value": 12}]}}]
    assert misplaced_criteria(raw) == (0,)
    criteria = normalize_criteria(raw)
    assert evaluate_criteria(office, criteria).passed  # homer reads it where it belongs
    assert evaluate_officebench(office, criteria).passed
    report = evaluate_officebench(office, criteria, misplaced=misplaced_criteria(raw))
    assert not report.passed and "KeyError" in report.results[0].reason


def test_cell_values_keep_their_case_as_there_unless_the_task_says_otherwise(office):
    put(office, "data/s.xlsx", xlsx_io.build([["Request", "Status"], ["Laptop", "approved"]]))
    args = {"file": "data/s.xlsx", "matches": [{"row": 2, "col": 2, "value": "Approved"}]}
    assert verdicts(office, "evaluate_excel_cell_value", args) == (False, False)
    assert verdicts(office, "evaluate_excel_cell_value", {**args, "ignore_case": True}) == (True, False)
    assert verdicts(office, "evaluate_excel_cell_value",
                    {**args, "matches": [{"row": 2, "col": 2, "value": "approved"}]}) == (True, True)


def test_a_stranger_s_mailbox_or_calendar_never_crashes_the_scoring(office):
    deep = b"From: a@x.com\r\nTo: " + b"(" * 400 + b"\r\nSubject: s\r\n\r\nbody text\r\n"
    put(office, "emails/alice/1.eml", deep)  # its header parser recurses too deep: the listing fails
    assert mailbox_verdicts(office, "body text")[1] is False
    (office.root / "emails/alice/1.eml").unlink()
    slow = mail([("plain", "budget " * 10, "punycode", None)])  # a decoder quadratic in the text: refused
    put(office, "emails/alice/2.eml", slow)
    assert mailbox_verdicts(office, "budget")[1] is False
    bad = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nSUMMARY:a\r\nDTSTART:20240507T090000\r\n"
           b"DTSTART:20240507T100000\r\nDTEND:20240507T110000\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:b\r\n"
           b"DTSTART:20240508T090000\r\nDTEND:20240508T100000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    put(office, "calendar/erin.ics", bad)  # two DTSTARTs in one event: it crashes there, a failure here
    report = evaluate_officebench(office, [{"function": "evaluate_calendar_no_overlap", "args": {"username": "erin"}}])
    assert not report.passed and "crashes" in report.results[0].reason
