"""The office tools through the registry: results, file state, validation, bad files, escapes."""

from __future__ import annotations

import email
import json
import os
import re
import shutil
from datetime import datetime
from email import policy
from email.utils import parsedate_to_datetime
from pathlib import Path

import icalendar
import openpyxl
import pytest
from jsonschema import Draft202012Validator

from office_env import ToolResult, Workspace, default_registry
from office_env.formats import docx_io, pdf_io
from office_env.sample import SAMPLE_NOW as NOW
from office_env.tools.registry import tool as declare_tool

pytestmark = pytest.mark.slow




@pytest.fixture(scope="module")
def shared_ws(_sample_office) -> Workspace:
    """One workspace for calls refused before they run; ``fails`` checks that nothing changed."""
    return Workspace(_sample_office, now=NOW)


def run(registry, ws: Workspace, name: str, args) -> ToolResult:
    """Call a tool; never an exception, never a traceback in the observation."""
    result = registry.call(ws, name, args)
    assert isinstance(result, ToolResult)
    assert result.tool == name
    assert isinstance(result.observation, str) and result.observation
    assert "Traceback" not in result.observation
    return result


def ok(registry, ws, name, args) -> str:
    result = run(registry, ws, name, args)
    assert result.ok, result.observation
    return result.observation


def fails(registry, ws, name, args) -> str:
    """A failing call: ok=False, an 'Error:' observation, and no file changed."""
    before = ws.snapshot()
    result = run(registry, ws, name, args)
    assert not result.ok, result.observation
    assert result.observation.startswith("Error: ")
    assert before.diff(ws.snapshot()).empty, before.diff(ws.snapshot()).summary()
    return result.observation


def collapse(text: str) -> str:
    return " ".join(text.split())


def body_of(observation: str) -> str:
    """Drop the 'path:' header line of a read tool's observation."""
    return observation.split("\n", 1)[1]


def ics_events(path: Path) -> list[icalendar.Event]:
    return list(icalendar.Calendar.from_ical(path.read_bytes()).walk("VEVENT"))


# A well-formed call of every tool on the sample testbed.
VALID = {
    "calendar_list_events": {"user": "alice"},
    "calendar_create_event": {"user": "alice", "summary": "Budget review", "start": "2024-05-07 15:00:00",
                              "end": "2024-05-07 16:00:00", "location": "Room 4"},
    "calendar_delete_event": {"user": "alice", "summary": "Team sync"},
    "email_list_emails": {"user": "alice"},
    "email_read_email": {"user": "alice", "email_id": "Lunch.eml"},
    "email_send_email": {"sender": "alice", "recipient": "bob", "subject": "Hello", "content": "See you at 3."},
    "excel_read_file": {"file_path": "data/scores.xlsx"},
    "excel_create_new_file": {"file_path": "data/new.xlsx", "sheet_name": "Budget"},
    "excel_set_cell": {"file_path": "data/scores.xlsx", "row": 3, "col": 2, "value": 95},
    "excel_delete_cell": {"file_path": "data/scores.xlsx", "row": 2, "col": 1},
    "excel_convert_to_pdf": {"file_path": "data/scores.xlsx"},
    "pdf_read_file": {"file_path": "data/invoice.pdf"},
    "pdf_convert_to_word": {"file_path": "data/invoice.pdf"},
    "system_list_files": {"folder": "data"},
    "system_read_text": {"file_path": "data/readme.txt"},
    "system_write_answer": {"text": "Carol"},
    "word_read_file": {"file_path": "data/notes.docx"},
    "word_create_new_file": {"file_path": "data/new.docx"},
    "word_write_to_file": {"file_path": "data/notes.docx", "content": "First line\nSecond line"},
    "word_convert_to_pdf": {"file_path": "data/notes.docx"},
}

PASSING = {
    "calendar_list_events": "2 event(s) in alice's calendar:\n"
                            "- 2024-05-06 10:00:00 to 2024-05-06 11:00:00 | Team sync | location: Room 2\n"
                            "- 2024-05-06 14:00:00 to 2024-05-06 14:30:00 | 1:1 with Bob",
    "calendar_create_event": "Added 'Budget review' to alice's calendar, 2024-05-07 15:00:00 to 2024-05-07 16:00:00.",
    "calendar_delete_event": "Deleted 1 event(s) titled 'Team sync' from alice's calendar.",
    "email_list_emails": "2 email(s) for alice:",
    "email_read_email": "From: carol@example.com\nTo: alice@example.com\n",
    "email_send_email": "Sent 'Hello' from alice to bob (id Hello.eml).",
    "excel_read_file": "data/scores.xlsx (sheet 'Scores'; sheets: Scores):\n"
                       "(1, 1): Name\t(1, 2): Score\t(1, 3): Status\t\n",
    "excel_create_new_file": "Created data/new.xlsx.",
    "excel_set_cell": "Set (3, 2) of data/scores.xlsx to 95 (was 92.5).",
    "excel_delete_cell": "Cleared (2, 1) of data/scores.xlsx (was Alice).",
    "excel_convert_to_pdf": "Converted data/scores.xlsx to data/scores.pdf.",
    "pdf_read_file": "data/invoice.pdf:\nInvoice 7731\nTotal due: 12,500.00 USD\nDue date 2024-05-31",
    "pdf_convert_to_word": "Converted data/invoice.pdf to data/invoice.docx.",
    "system_list_files": "data/invoice.pdf\ndata/notes.docx\ndata/readme.txt\ndata/scores.xlsx",
    "system_read_text": "data/readme.txt:\nPlain text file for the team.\n",
    "system_write_answer": "Wrote the answer to data/answer.txt.",
    "word_read_file": "data/notes.docx:\nMeeting notes\nBudget review on Friday\nOwner: Dana Reyes",
    "word_create_new_file": "Created data/new.docx.",
    "word_write_to_file": "Wrote data/notes.docx (2 paragraph(s)).",
    "word_convert_to_pdf": "Converted data/notes.docx to data/notes.pdf.",
}

FAILING = {
    "calendar_list_events": ({"user": "zed"}, "Error: user: no calendar for 'zed'"),
    "calendar_create_event": ({**VALID["calendar_create_event"], "start": "2024-05-07 16:00:00",
                               "end": "2024-05-07 15:00:00"},
                              "Error: end: 2024-05-07 15:00:00 is not after start 2024-05-07 16:00:00"),
    "calendar_delete_event": ({"user": "alice", "summary": "Nope"},
                              "Error: summary: no event titled 'Nope' in alice's calendar"),
    "email_list_emails": ({"user": "zed"}, "Error: user: no mailbox for 'zed' (mailboxes: alice, bob)"),
    "email_read_email": ({"user": "alice", "email_id": "Missing.eml"},
                         "Error: email_id: no message 'Missing.eml' in alice's mailbox"),
    "email_send_email": ({**VALID["email_send_email"], "recipient": "../bob"},
                         "Error: recipient: '../bob' is not a valid user name"),
    "excel_read_file": ({"file_path": "data/scores.xlsx", "sheet": "Nope"},
                        "Error: data/scores.xlsx: no sheet named 'Nope' (sheets: Scores)"),
    "excel_create_new_file": ({"file_path": "data/scores.xlsx"},
                              "Error: data/scores.xlsx: already exists; use excel_set_cell to change it"),
    "excel_set_cell": ({**VALID["excel_set_cell"], "file_path": "data/missing.xlsx"},
                       "Error: data/missing.xlsx: file does not exist"),
    "excel_delete_cell": ({**VALID["excel_delete_cell"], "sheet": "Nope"},
                          "Error: data/scores.xlsx: no sheet named 'Nope'"),
    "excel_convert_to_pdf": ({"file_path": "data/scores.xlsx", "output_path": "data/out.docx"},
                             "Error: output_path: 'data/out.docx' must end with .pdf"),
    "pdf_read_file": ({"file_path": "data/notes.docx"}, "Error: file_path: 'data/notes.docx' must end with .pdf"),
    "pdf_convert_to_word": ({"file_path": "data/missing.pdf"}, "Error: data/missing.pdf: file does not exist"),
    "system_list_files": ({"folder": "/etc"}, "Error: folder: '/etc' is absolute"),
    "system_read_text": ({"file_path": "data/notes.docx"},
                         "Error: file_path: 'data/notes.docx' must end with .txt or .csv"),
    "system_write_answer": ({"text": ""}, "Error: system_write_answer: argument 'text': '' should be non-empty"),
    "word_read_file": ({"file_path": "data/missing.docx"}, "Error: data/missing.docx: file does not exist"),
    "word_create_new_file": ({"file_path": "data/notes.docx"},
                             "Error: data/notes.docx: already exists; use word_write_to_file to change it"),
    "word_write_to_file": ({**VALID["word_write_to_file"], "mode": "replace"},
                           "Error: word_write_to_file: argument 'mode': 'replace' is not one of"),
    "word_convert_to_pdf": ({"file_path": "data/readme.txt"},
                            "Error: file_path: 'data/readme.txt' must end with .docx"),
}


def test_the_quick_validator_says_yes_only_where_the_reference_validator_does(registry):
    """``validate`` answers a valid call with jsonschema-rs's yes; for every tool and awkward values
    (integral floats, booleans, integers past 64 bits, NaN, lone surrogates, long text, strangers'
    keys) it gives what the Python validator alone gives."""
    odd = [2.0, 2.5, True, 10**30, -1, 0, float("nan"), float("inf"), "x", "", "a" * 5000, None, [], {}, "\ud800"]
    plain = {"string": "abc", "integer": 3, "number": 1.5, "boolean": True}
    for tool in registry:
        reference = Draft202012Validator(tool.parameters)
        properties = tool.parameters["properties"]
        base = {k: plain.get(v["type"], "abc") if isinstance(v.get("type"), str) else "abc" for k, v in properties.items()}
        for key in [*properties, "extra"]:
            for value in odd:
                args = {**base, key: value}
                expected = not list(reference.iter_errors(args))
                assert (registry.validate(tool.name, args) == []) == expected, (tool.name, key, value)


def test_every_tool_has_a_passing_and_a_failing_case(registry):
    assert sorted(VALID) == sorted(registry.names)
    assert sorted(PASSING) == sorted(registry.names)
    assert sorted(FAILING) == sorted(registry.names)
    assert len(registry) == 20


def test_what_a_write_says_and_whom_it_acts_for_are_declared_with_it(registry):
    """Each write names the arguments holding what it says (prose, then values) and the person whose
    mailbox or calendar it changes; a read names none, and a name that is no argument is refused."""
    declared = {t.name: (t.person, t.says) for t in registry if t.person or t.says}
    assert declared == {
        "email_send_email": ("recipient", ("content", "subject")), "word_write_to_file": ("", ("content",)),
        "calendar_create_event": ("user", ("summary", "start", "end")), "calendar_delete_event": ("user", ("summary",)),
        "excel_set_cell": ("", ("value",)), "system_write_answer": ("", ("text",))}
    assert all(registry.get(name).writes for name in declared)
    assert {t.name: t.body for t in registry if t.body} == {
        "email_send_email": "content", "word_write_to_file": "content", "system_write_answer": "text"}
    with pytest.raises(ValueError, match="'body' is none of its arguments"):
        declare_tool("toy", "send", "Send.", writes=True, properties={"content": {"type": "string"}}, prose=("body",))
    with pytest.raises(ValueError, match="its body 'content' is none of its prose"):
        declare_tool("toy", "send", "Send.", writes=True, properties={"content": {"type": "string"}}, body="content")
    # what writes no words, and what converts a file to another app's kind, is declared too
    assert [t.name for t in registry if t.no_words] == ["calendar_delete_event"]
    assert {t.name: t.converts_to for t in registry if t.converts_to} == {
        "word_convert_to_pdf": "pdf", "excel_convert_to_pdf": "pdf", "pdf_convert_to_word": "word"}
    with pytest.raises(ValueError, match="no_words without prose"):
        declare_tool("toy", "drop", "Drop.", writes=True, properties={"title": {"type": "string"}}, no_words=True)
    with pytest.raises(ValueError, match="'file_path' is none of its arguments"):
        declare_tool("toy", "export", "Export.", writes=True, properties={"name": {"type": "string"}}, converts_to="pdf")


def test_what_an_agent_must_do_before_a_call_is_declared_with_it(registry):
    """The calls that make their file, the edits read first (an overwrite only when appending), the
    calls naming an item a listing shows, with that listing, and the one listing a folder's files,
    with its folder argument; a file step needs a file_path, a folder listing a folder argument."""
    assert sorted(t.name for t in registry if t.creates) == ["excel_create_new_file", "word_create_new_file"]
    assert {t.name: dict(t.edits_when) for t in registry if t.edits} == {
        "excel_set_cell": {}, "excel_delete_cell": {}, "word_write_to_file": {"mode": "append"}}
    assert {t.name: t.listed_by for t in registry if t.listed_by} == {
        "email_read_email": "email_list_emails", "calendar_delete_event": "calendar_list_events"}
    assert {t.name: t.lists_files for t in registry if t.lists_files} == {"system_list_files": "folder"}
    # the one listing every caller (surfers, plans, discovery, the fake agent) takes from the declaration
    from office_env.tools import file_lister, list_files_call

    assert file_lister().name == "system_list_files"
    assert list_files_call("data") == ("system_list_files", {"folder": "data"})
    assert list_files_call() == ("system_list_files", {})
    with pytest.raises(ValueError, match="'dir' is none of its arguments"):
        declare_tool("toy", "list", "List.", writes=False, properties={"folder": {"type": "string"}}, lists_files="dir")
    with pytest.raises(ValueError, match="'file_path' is none of its arguments"):
        declare_tool("toy", "new", "New.", writes=True, properties={"name": {"type": "string"}}, creates=True)
    with pytest.raises(ValueError, match="edits_when without edits"):
        declare_tool("toy", "add", "Add.", writes=True, properties={"file_path": {"type": "string"}},
                     edits_when={"file_path": "x"})


@pytest.mark.parametrize("name", sorted(PASSING))
def test_passing_call(registry, ws, name):
    before = ws.snapshot()
    observation = ok(registry, ws, name, VALID[name])
    assert PASSING[name] in observation
    diff = before.diff(ws.snapshot())
    # tools that only read never change a file; tools that write always do here
    assert diff.empty is (not registry.get(name).writes), diff.summary()


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failing_call(registry, ws, name):
    args, expected = FAILING[name]
    assert expected in fails(registry, ws, name, args)


# -- file state after each tool -----------------------------------------------------------------

def test_calendar_list_events_for_other_case_and_empty_calendar(registry, ws, testbed):
    assert "2 event(s) in ALICE's calendar" in ok(registry, ws, "calendar_list_events", {"user": "ALICE"})
    (testbed / "calendar" / "bob.ics").write_bytes(icalendar.Calendar().to_ical())
    assert ok(registry, ws, "calendar_list_events", {"user": "bob"}) == "No events in bob's calendar."


def test_calendar_create_event_writes_a_parsable_event(registry, ws, testbed):
    ok(registry, ws, "calendar_create_event", VALID["calendar_create_event"])
    events = {str(e.get("summary")): e for e in ics_events(testbed / "calendar" / "alice.ics")}
    assert sorted(events) == ["1:1 with Bob", "Budget review", "Team sync"]
    new = events["Budget review"]
    assert new.get("dtstart").dt == datetime(2024, 5, 7, 15, 0)
    assert new.get("dtend").dt == datetime(2024, 5, 7, 16, 0)
    assert str(new.get("location")) == "Room 4"
    assert str(new.get("uid"))
    listing = ok(registry, ws, "calendar_list_events", {"user": "alice"})
    assert "- 2024-05-07 15:00:00 to 2024-05-07 16:00:00 | Budget review | location: Room 4" in listing


def test_calendar_create_event_makes_a_new_calendar(registry, ws, testbed):
    observation = ok(registry, ws, "calendar_create_event",
                     {"user": "carol@example.com", "summary": "Dentist", "start": "2024-05-08T08:30",
                      "end": "2024-05-08 09:00"})
    assert "2024-05-08 08:30:00 to 2024-05-08 09:00:00" in observation
    [event] = ics_events(testbed / "calendar" / "carol.ics")
    assert str(event.get("summary")) == "Dentist"
    assert event.get("dtstart").dt == datetime(2024, 5, 8, 8, 30)


@pytest.mark.parametrize("start, message", [("tomorrow", "Error: start: 'tomorrow' is not a time"),
                                            ("2024-13-01 10:00:00", "Error: start: '2024-13-01 10:00:00' is not a time")])
def test_calendar_create_event_refuses_bad_times(registry, ws, start, message):
    args = {**VALID["calendar_create_event"], "start": start}
    assert message in fails(registry, ws, "calendar_create_event", args)


def test_calendar_delete_event_removes_only_that_event(registry, ws, testbed):
    observation = ok(registry, ws, "calendar_delete_event", {"user": "alice", "summary": "team SYNC"})
    assert observation == "Deleted 1 event(s) titled 'team SYNC' from alice's calendar."
    assert [str(e.get("summary")) for e in ics_events(testbed / "calendar" / "alice.ics")] == ["1:1 with Bob"]
    assert "Team sync" not in ok(registry, ws, "calendar_list_events", {"user": "alice"})


def test_calendar_delete_event_without_calendar(registry, ws):
    assert "Error: user: no calendar for 'zed'" in fails(
        registry, ws, "calendar_delete_event", {"user": "zed", "summary": "x"})


def test_email_list_and_read(registry, ws):
    listing = ok(registry, ws, "email_list_emails", {"user": "alice"})
    lines = listing.splitlines()
    assert len(lines) == 3
    assert "id: Lunch.eml" in listing and "subject: Lunch" in listing and "from: carol@example.com" in listing
    assert "id: Quarterly budget.eml" in listing and "Hi Alice, the budget is 4,200 EUR." in listing
    message = ok(registry, ws, "email_read_email", {"user": "alice", "email_id": "Quarterly budget"})
    assert message.startswith("From: bob@example.com\nTo: alice@example.com\n")
    assert "Subject: Quarterly budget\n\nHi Alice, the budget is 4,200 EUR." in message


def test_a_mailbox_lists_its_regular_eml_files_only_each_looked_at_once(registry, ws, testbed):
    """The listing (one scandir, one lstat per message) keeps what a glob of ``*.eml`` keeps: regular
    files only (not a link, not a folder named like a message, not another suffix), hidden names too."""
    from office_env import mail_store

    box = testbed / "emails" / "alice"
    before = len(mail_store.messages(ws, "alice"))
    first = min(box.glob("*.eml"))
    shutil.copy(first, box / ".hidden.eml")
    shutil.copy(first, box / "notes.txt")
    (box / "folder.eml").mkdir()
    (box / "link.eml").symlink_to(first)
    found = [name for name, _ in mail_store.messages(ws, "alice")]
    expected = [p.name for p in box.glob("*.eml") if not p.is_symlink() and p.is_file()]
    assert sorted(found) == sorted(expected) and ".hidden.eml" in found
    assert "link.eml" not in found and "folder.eml" not in found and "notes.txt" not in found
    assert found.count(first.name) == 1 and len(found) == before + 1


def test_a_mailbox_read_again_shows_each_change_since_the_last_read(registry, ws, testbed):
    """A mailbox read before is answered from that read only while every file is the version it saw:
    a message written again (a new file under the same name), one removed, one added or one broken
    since shows at the next read."""
    from office_env import mail_store

    box = testbed / "emails" / "alice"
    first = mail_store.scan(ws, "alice")
    assert mail_store.scan(ws, "alice") == first and first[0]
    name, mail = first[0][0]
    raw = (box / name).read_bytes()
    (box / name).unlink()
    (box / name).write_bytes(raw.replace(mail.subject.encode(), b"Changed subject"))
    assert [m.subject for n, m in mail_store.messages(ws, "alice") if n == name] == ["Changed subject"]
    (box / name).unlink()
    assert name not in [n for n, _ in mail_store.messages(ws, "alice")]
    (box / "zz-broken.eml").write_bytes(b"no headers at all")
    items, unreadable = mail_store.scan(ws, "alice")
    assert len(items) == len(first[0]) - 1 and len(unreadable) == 1
    assert unreadable[0].startswith("emails/alice/zz-broken.eml: not an e-mail message")


def test_email_list_of_empty_mailbox(registry, ws, testbed):
    (testbed / "emails" / "dave").mkdir()
    assert ok(registry, ws, "email_list_emails", {"user": "dave"}) == "No emails for dave."


def test_email_send_email_lands_in_both_mailboxes(registry, ws, testbed):
    args = {"sender": "alice@example.com", "recipient": "Bob", "subject": "Budget: final",
            "content": "The total is 12,500 EUR.\nGrüße, Alice"}
    observation = ok(registry, ws, "email_send_email", args)
    assert observation == "Sent 'Budget: final' from alice@example.com to Bob (id Budget_ final.eml)."
    sent = testbed / "emails" / "alice" / "Budget_ final.eml"
    received = testbed / "emails" / "bob" / "Budget_ final.eml"
    assert sent.read_bytes() == received.read_bytes()
    assert not (testbed / "emails" / "alice@example.com").exists()
    message = email.message_from_bytes(received.read_bytes(), policy=policy.default)
    assert message["From"] == "alice@example.com"
    assert message["To"].lower() == "bob@example.com"
    assert message["Subject"] == "Budget: final"
    assert parsedate_to_datetime(message["Date"]).replace(tzinfo=None) == NOW
    assert message.get_content().strip() == "The total is 12,500 EUR.\nGrüße, Alice"
    read_back = ok(registry, ws, "email_read_email", {"user": "bob", "email_id": "Budget_ final.eml"})
    assert read_back.endswith("The total is 12,500 EUR.\nGrüße, Alice")
    assert "subject: Budget: final" in ok(registry, ws, "email_list_emails", {"user": "alice"})


def test_email_send_email_never_overwrites_and_creates_new_mailboxes(registry, ws, testbed):
    args = {"sender": "alice", "recipient": "dave", "subject": "Lunch", "content": "Again?"}
    original = (testbed / "emails" / "alice" / "Lunch.eml").read_bytes()
    assert "(id Lunch.eml)" in ok(registry, ws, "email_send_email", args)
    assert (testbed / "emails" / "alice" / "Lunch.eml").read_bytes() == original
    assert (testbed / "emails" / "alice" / "Lunch-2.eml").is_file()
    assert (testbed / "emails" / "dave" / "Lunch.eml").is_file()
    assert "(id Lunch-2.eml)" in ok(registry, ws, "email_send_email", args)
    assert sorted(p.name for p in (testbed / "emails" / "dave").iterdir()) == ["Lunch-2.eml", "Lunch.eml"]


def test_email_send_email_to_self_is_stored_once(registry, ws, testbed):
    before = set(ws.list_files("emails/alice"))
    ok(registry, ws, "email_send_email", {"sender": "alice", "recipient": "ALICE@example.com",
                                          "subject": "Reminder", "content": "x"})
    assert set(ws.list_files("emails/alice")) - before == {"emails/alice/Reminder.eml"}


def test_email_send_email_to_self_in_a_new_mailbox_makes_one_folder(registry, ws, testbed):
    ok(registry, ws, "email_send_email", {"sender": "Dave", "recipient": "dave", "subject": "Note", "content": "x"})
    assert [p.name for p in (testbed / "emails").iterdir() if p.name.lower() == "dave"] == ["dave"]
    assert ws.list_files("emails/dave") == ["emails/dave/Note.eml"]


def test_excel_read_file_lists_cells(registry, ws):
    observation = ok(registry, ws, "excel_read_file", {"file_path": "./data/scores.xlsx", "sheet": "Scores"})
    assert "(3, 1): Bob\t(3, 2): 92.5\t(3, 3): Open\t" in observation
    assert "(4, 2): 1200\t" in observation


def test_excel_create_new_file_writes_an_empty_workbook(registry, ws, testbed):
    ok(registry, ws, "excel_create_new_file", {"file_path": "data/reports/new.xlsx", "sheet_name": "Budget"})
    workbook = openpyxl.load_workbook(testbed / "data" / "reports" / "new.xlsx")
    assert workbook.sheetnames == ["Budget"]
    assert workbook.active["A1"].value is None
    assert ok(registry, ws, "excel_read_file", {"file_path": "data/reports/new.xlsx"}).endswith("(empty sheet)")


@pytest.mark.parametrize("value, stored", [
    (95, 95), ("95", 95), ("-3.25", -3.25), (7.5, 7.5), ("007", "007"), ("Done", "Done"), (True, True),
    ("=SUM(B2:B4)", "=SUM(B2:B4)"),
])
def test_excel_set_cell_stores_the_value(registry, ws, testbed, value, stored):
    ok(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 2, "value": value})
    sheet = openpyxl.load_workbook(testbed / "data" / "scores.xlsx").active
    assert sheet["B3"].value == stored
    assert type(sheet["B3"].value) is type(stored)
    assert sheet["B3"].data_type != "f"  # text from an agent is never a formula
    assert [sheet["A3"].value, sheet["C3"].value, sheet["B2"].value] == ["Bob", "Open", 85]


def test_excel_set_cell_null_clears_and_new_cell_grows_sheet(registry, ws, testbed):
    ok(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 3, "value": None})
    observation = ok(registry, ws, "excel_set_cell",
                     {"file_path": "data/scores.xlsx", "row": 6, "col": 5, "value": "new"})
    assert observation == "Set (6, 5) of data/scores.xlsx to new (was [Empty Cell])."
    sheet = openpyxl.load_workbook(testbed / "data" / "scores.xlsx").active
    assert sheet["C2"].value is None
    assert sheet["E6"].value == "new"


def test_excel_set_cell_accepts_integral_floats_for_row_and_col(registry, ws, testbed):
    # JSON has one number type: 3.0 is a valid integer for JSON Schema and must not crash the tool.
    observation = ok(registry, ws, "excel_set_cell",
                     {"file_path": "data/scores.xlsx", "row": 3.0, "col": 2.0, "value": "x"})
    assert observation == "Set (3, 2) of data/scores.xlsx to x (was 92.5)."
    assert openpyxl.load_workbook(testbed / "data" / "scores.xlsx").active["B3"].value == "x"


def test_excel_set_cell_on_named_sheet_only(registry, ws, testbed):
    workbook = openpyxl.Workbook()
    workbook.active.title = "First"
    workbook.active["A1"] = "one"
    workbook.create_sheet("Second")["A1"] = "two"
    workbook.save(testbed / "data" / "two.xlsx")
    ok(registry, ws, "excel_set_cell", {"file_path": "data/two.xlsx", "row": 1, "col": 1, "value": "2!",
                                        "sheet": "Second"})
    reread = openpyxl.load_workbook(testbed / "data" / "two.xlsx")
    assert reread["First"]["A1"].value == "one"
    assert reread["Second"]["A1"].value == "2!"
    assert "(1, 1): 2!" in ok(registry, ws, "excel_read_file", {"file_path": "data/two.xlsx", "sheet": "Second"})


def test_formula_text_stays_literal_across_later_edits(registry, ws, testbed):
    ok(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 5, "col": 1,
                                        "value": "=HYPERLINK(\"http://x\")"})
    ok(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 5, "col": 2, "value": 1})
    sheet = openpyxl.load_workbook(testbed / "data" / "scores.xlsx").active
    assert sheet["A5"].value == "=HYPERLINK(\"http://x\")"
    assert sheet["A5"].data_type == "s"


def test_excel_delete_cell_clears_only_that_cell(registry, ws, testbed):
    ok(registry, ws, "excel_delete_cell", {"file_path": "data/scores.xlsx", "row": 4, "col": 2})
    sheet = openpyxl.load_workbook(testbed / "data" / "scores.xlsx").active
    assert sheet["B4"].value is None
    assert [sheet["A4"].value, sheet["C4"].value, sheet["B3"].value] == ["Carol", "Done", 92.5]
    assert "(4, 2): [Empty Cell]" in ok(registry, ws, "excel_read_file", {"file_path": "data/scores.xlsx"})


def test_excel_convert_to_pdf_contains_the_cell_values(registry, ws, testbed):
    ok(registry, ws, "excel_convert_to_pdf", {"file_path": "data/scores.xlsx", "output_path": "data/out/table.pdf"})
    text = pdf_io.read_text(testbed / "data" / "out" / "table.pdf", "table.pdf")
    for value in ("Name", "Score", "Status", "Alice", "85", "Bob", "92.5", "Open", "Carol", "1200", "Done"):
        assert value in text
    assert "Bob | 92.5 | Open" in text
    assert "Bob | 92.5 | Open" in ok(registry, ws, "pdf_read_file", {"file_path": "data/out/table.pdf"})


def test_pdf_convert_to_word_to_named_output(registry, ws, testbed):
    ok(registry, ws, "pdf_convert_to_word", {"file_path": "data/invoice.pdf", "output_path": "data/inv.docx"})
    assert docx_io.read_text(testbed / "data" / "inv.docx", "inv.docx") == (
        "Invoice 7731\nTotal due: 12,500.00 USD\nDue date 2024-05-31")
    assert not (testbed / "data" / "invoice.docx").exists()


def test_system_list_files_whole_testbed_and_empty_folder(registry, ws, testbed):
    listing = ok(registry, ws, "system_list_files", {}).splitlines()
    assert listing == ws.list_files()
    assert "emails/bob/Re Quarterly budget.eml" in listing
    (testbed / "empty").mkdir()
    assert ok(registry, ws, "system_list_files", {"folder": "empty"}) == "No files in empty."


def test_system_read_text_reads_eml_and_ics(registry, ws):
    assert "Subject: Lunch" in ok(registry, ws, "system_read_text", {"file_path": "emails/alice/Lunch.eml"})
    assert "BEGIN:VCALENDAR" in ok(registry, ws, "system_read_text", {"file_path": "calendar/alice.ics"})


def test_system_read_text_truncates_long_files(registry, ws, testbed):
    (testbed / "data" / "long.txt").write_text("y" * 20050, encoding="utf-8")
    observation = ok(registry, ws, "system_read_text", {"file_path": "data/long.txt"})
    header = "data/long.txt:\n"
    assert observation.endswith(f"\n... [cut: {20050 + len(header) - 20000} more characters]")
    assert observation.count("y") == 20000 - len(header)


def test_system_write_answer_writes_and_replaces(registry, ws, testbed):
    ok(registry, ws, "system_write_answer", {"text": "First answer"})
    ok(registry, ws, "system_write_answer", {"text": "Carol — 1,200 points"})
    assert (testbed / "data" / "answer.txt").read_text(encoding="utf-8") == "Carol — 1,200 points"
    assert "Carol — 1,200 points" in ok(registry, ws, "system_read_text", {"file_path": "data/answer.txt"})


def test_word_create_new_file_is_empty(registry, ws, testbed):
    ok(registry, ws, "word_create_new_file", {"file_path": "data/sub/empty.docx"})
    assert docx_io.read_text(testbed / "data" / "sub" / "empty.docx", "empty.docx") == ""
    assert ok(registry, ws, "word_read_file", {"file_path": "data/sub/empty.docx"}) == "data/sub/empty.docx is empty."


def test_word_write_to_file_overwrites_and_appends(registry, ws, testbed):
    path = testbed / "data" / "notes.docx"
    ok(registry, ws, "word_write_to_file", {"file_path": "data/notes.docx", "content": "Replaced"})
    assert docx_io.read_text(path, "notes.docx") == "Replaced"
    observation = ok(registry, ws, "word_write_to_file",
                     {"file_path": "data/notes.docx", "content": "More\n# Heading", "mode": "append"})
    assert observation == "Appended to data/notes.docx (2 paragraph(s))."
    assert docx_io.read_text(path, "notes.docx") == "Replaced\nMore\nHeading"


def test_word_write_to_file_creates_missing_file_in_append_mode(registry, ws, testbed):
    ok(registry, ws, "word_write_to_file", {"file_path": "data/new/log.docx", "content": "Line", "mode": "append"})
    assert docx_io.read_text(testbed / "data" / "new" / "log.docx", "log.docx") == "Line"


def test_word_convert_to_pdf_output_onto_a_folder_names_the_output(registry, ws, testbed):
    (testbed / "data" / "taken.pdf").mkdir()
    observation = fails(registry, ws, "word_convert_to_pdf",
                        {"file_path": "data/notes.docx", "output_path": "data/taken.pdf"})
    assert observation == "Error: data/taken.pdf: is a folder, not a file"
    assert str(testbed) not in observation


def test_read_tool_on_a_folder_with_the_right_suffix(registry, ws, testbed):
    (testbed / "data" / "folder.docx").mkdir()
    assert fails(registry, ws, "word_read_file", {"file_path": "data/folder.docx"}) == (
        "Error: data/folder.docx: is a folder, not a file")


# -- round trips --------------------------------------------------------------------------------

ROUND_TRIP_TEXT = (
    "Quarterly report for the Northwind account\n"
    "Total due: 12,500.00 USD by 2024-05-31\n"
    "Owner: Dana Reyes (finance); reviewers Bob and Carol will sign off after the budget meeting "
    "on Friday, when the remaining open items from the spring planning cycle are closed."
)


def test_word_to_pdf_to_word_round_trip(registry, ws):
    ok(registry, ws, "word_write_to_file", {"file_path": "data/report.docx", "content": ROUND_TRIP_TEXT})
    ok(registry, ws, "word_convert_to_pdf", {"file_path": "data/report.docx"})
    pdf_text = body_of(ok(registry, ws, "pdf_read_file", {"file_path": "data/report.pdf"}))
    assert collapse(pdf_text) == collapse(ROUND_TRIP_TEXT)
    ok(registry, ws, "pdf_convert_to_word", {"file_path": "data/report.pdf", "output_path": "data/report2.docx"})
    word_text = body_of(ok(registry, ws, "word_read_file", {"file_path": "data/report2.docx"}))
    assert collapse(word_text) == collapse(ROUND_TRIP_TEXT)


# -- argument validation ------------------------------------------------------------------------

def _required(registry, name):
    return registry.get(name).parameters["required"]


MISSING = [(name, arg) for name, args in VALID.items() for arg in args
           if arg in {"file_path", "user", "summary", "start", "end", "email_id", "sender", "recipient",
                      "subject", "content", "row", "col", "value", "text"}]


@pytest.mark.parametrize("name, arg", MISSING)
def test_missing_required_argument_is_named(registry, shared_ws, name, arg):
    assert arg in _required(registry, name)
    args = {k: v for k, v in VALID[name].items() if k != arg}
    assert f"'{arg}' is a required property" in fails(registry, shared_ws, name, args)


def test_every_required_argument_is_exercised(registry):
    assert sorted(MISSING) == sorted((t.name, arg) for t in registry for arg in t.parameters["required"])


@pytest.mark.parametrize("name", sorted(VALID))
def test_unknown_argument_is_named(registry, shared_ws, name):
    observation = fails(registry, shared_ws, name, {**VALID[name], "bogus_arg": 1})
    assert observation.startswith(f"Error: {name}: ")
    assert "'bogus_arg' was unexpected" in observation


@pytest.mark.parametrize("name", sorted(VALID))
@pytest.mark.parametrize("args, type_name", [(None, "NoneType"), ([], "list"), ("file_path=x", "str"), (3, "int")])
def test_non_object_arguments(registry, shared_ws, name, args, type_name):
    assert fails(registry, shared_ws, name, args) == f"Error: {name}: arguments must be an object, got {type_name}"


WRONG_TYPES = []
for _name, _args in VALID.items():
    for _arg in _args:
        WRONG_TYPES.append((_name, _arg, {"nested": 1} if _arg == "value" else ("two" if _arg in ("row", "col") else 5)))


@pytest.mark.parametrize("name, arg, bad", WRONG_TYPES)
def test_wrong_type_is_named(registry, shared_ws, name, arg, bad):
    observation = fails(registry, shared_ws, name, {**VALID[name], arg: bad})
    assert f"argument '{arg}': {bad!r} is not of type" in observation


@pytest.mark.parametrize("args, message", [
    ({"row": "two"}, "argument 'row': 'two' is not of type 'integer'"),
    ({"row": 2.5}, "argument 'row': 2.5 is not of type 'integer'"),
    ({"row": True}, "argument 'row': True is not of type 'integer'"),
    ({"col": 0}, "argument 'col': 0 is less than the minimum of 1"),
    ({"col": 1001}, "argument 'col': 1001 is greater than the maximum of 1000"),
    ({"row": 10001}, "argument 'row': 10001 is greater than the maximum of 10000"),
    ({"sheet": ""}, None),  # allowed by the schema, refused as an unknown sheet
])
def test_excel_cell_argument_checks(registry, ws, args, message):
    observation = fails(registry, ws, "excel_set_cell", {**VALID["excel_set_cell"], **args})
    assert (message or "no sheet named ''") in observation


def test_several_problems_are_reported_together(registry, ws):
    observation = fails(registry, ws, "excel_set_cell",
                        {"file_path": "data/scores.xlsx", "row": "two", "value": 1, "zzz": 0})
    for part in ("'col' is a required property", "'zzz' was unexpected", "argument 'row'"):
        assert part in observation


def test_unknown_tool_lists_available_tools(registry, ws):
    observation = fails(registry, ws, "word_delete_file", {"file_path": "data/notes.docx"})
    assert observation.startswith("Error: word_delete_file: unknown tool 'word_delete_file' (available: ")
    assert "word_read_file" in observation and "excel_set_cell" in observation


# -- corrupt files ------------------------------------------------------------------------------

def _truncated_xlsx(testbed: Path) -> bytes:
    return (testbed / "data" / "scores.xlsx").read_bytes()[:100]


CORRUPT = [
    # (file to plant, content maker, tool, args, words the message must contain)
    ("data/bad.xlsx", _truncated_xlsx, "excel_read_file", {"file_path": "data/bad.xlsx"}, "Excel"),
    ("data/bad.xlsx", _truncated_xlsx, "excel_set_cell",
     {"file_path": "data/bad.xlsx", "row": 1, "col": 1, "value": "x"}, "Excel"),
    ("data/bad.xlsx", _truncated_xlsx, "excel_delete_cell", {"file_path": "data/bad.xlsx", "row": 1, "col": 1}, "Excel"),
    ("data/bad.xlsx", _truncated_xlsx, "excel_convert_to_pdf", {"file_path": "data/bad.xlsx"}, "Excel"),
    ("data/bad.docx", lambda tb: b"just some text, not a zip\n", "word_read_file", {"file_path": "data/bad.docx"}, "Word"),
    ("data/bad.docx", lambda tb: b"just some text, not a zip\n", "word_convert_to_pdf",
     {"file_path": "data/bad.docx"}, "Word"),
    ("data/bad.docx", lambda tb: b"just some text, not a zip\n", "word_write_to_file",
     {"file_path": "data/bad.docx", "content": "more", "mode": "append"}, "Word"),
    ("data/bad.pdf", lambda tb: b"<html>not a pdf</html>", "pdf_read_file", {"file_path": "data/bad.pdf"}, "PDF"),
    ("data/bad.pdf", lambda tb: b"<html>not a pdf</html>", "pdf_convert_to_word", {"file_path": "data/bad.pdf"}, "PDF"),
    ("data/bad.pdf", lambda tb: b"%PDF-1.7\ngarbage garbage", "pdf_read_file", {"file_path": "data/bad.pdf"}, "PDF"),
    ("calendar/mallory.ics", lambda tb: b"garbage here\n\x00\xff more", "calendar_list_events",
     {"user": "mallory"}, "iCalendar"),
    ("calendar/mallory.ics", lambda tb: b"garbage here\nmore", "calendar_create_event",
     {**VALID["calendar_create_event"], "user": "mallory"}, "iCalendar"),
    ("calendar/mallory.ics", lambda tb: b"garbage here\nmore", "calendar_delete_event",
     {"user": "mallory", "summary": "Team sync"}, "iCalendar"),
    ("emails/mallory/body.eml", lambda tb: b"just body text\nand more body text\n", "email_read_email",
     {"user": "mallory", "email_id": "body.eml"}, "e-mail"),
]


@pytest.mark.parametrize("relpath, make, name, args, kind", CORRUPT,
                         ids=[f"{c[2]}-{c[0].rsplit('.', 1)[1]}" for c in CORRUPT])
def test_corrupt_file_gives_a_clear_error(registry, ws, testbed, relpath, make, name, args, kind):
    target = testbed / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(make(testbed))
    observation = fails(registry, ws, name, args)
    assert observation.startswith(f"Error: {relpath}: not ")
    assert kind in observation
    assert str(testbed) not in observation


def test_corrupt_mail_is_named_and_hides_no_other_message(registry, ws, testbed):
    (testbed / "emails" / "alice" / "zz-broken.eml").write_bytes(b"no headers at all")
    listing = ok(registry, ws, "email_list_emails", {"user": "alice"})
    assert "unreadable: emails/alice/zz-broken.eml: not an e-mail message" in listing
    assert listing.startswith("2 email(s) for alice:") and "id: Lunch.eml" in listing
    # the other messages are still readable one by one
    assert "Lunch at noon?" in ok(registry, ws, "email_read_email", {"user": "alice", "email_id": "Lunch.eml"})


# -- path escapes -------------------------------------------------------------------------------

PATH_FIELDS = {
    # tool: {field: suffix the field needs}
    "excel_read_file": {"file_path": ".xlsx"},
    "excel_create_new_file": {"file_path": ".xlsx"},
    "excel_set_cell": {"file_path": ".xlsx"},
    "excel_delete_cell": {"file_path": ".xlsx"},
    "excel_convert_to_pdf": {"file_path": ".xlsx", "output_path": ".pdf"},
    "pdf_read_file": {"file_path": ".pdf"},
    "pdf_convert_to_word": {"file_path": ".pdf", "output_path": ".docx"},
    "system_list_files": {"folder": ""},
    "system_read_text": {"file_path": ".txt"},
    "word_read_file": {"file_path": ".docx"},
    "word_create_new_file": {"file_path": ".docx"},
    "word_write_to_file": {"file_path": ".docx"},
    "word_convert_to_pdf": {"file_path": ".docx", "output_path": ".pdf"},
}

ESCAPES = ["../escape{s}", "data/../../escape{s}", "/tmp/escape{s}", "~/escape{s}", "C:\\escape{s}",
           "..\\escape{s}", "data/\x00escape{s}"]


def test_path_fields_cover_every_path_taking_tool(registry):
    taking = {t.name: sorted(f for f in t.parameters["properties"] if f in ("file_path", "output_path", "folder"))
              for t in registry}
    assert {name: sorted(fields) for name, fields in PATH_FIELDS.items()} == {n: f for n, f in taking.items() if f}


@pytest.mark.parametrize("name, field", [(n, f) for n, fields in PATH_FIELDS.items() for f in fields])
@pytest.mark.parametrize("pattern", ESCAPES)
def test_path_escape_is_refused(registry, shared_ws, name, field, pattern):
    path = pattern.format(s=PATH_FIELDS[name][field])
    observation = fails(registry, shared_ws, name, {**VALID[name], field: path})
    assert observation.startswith(f"Error: {field}: ")
    assert re.search(r"is absolute|contains '\.\.'|NUL byte", observation)
    assert sorted(p.name for p in shared_ws.root.parent.iterdir()) == ["testbed"]


@pytest.mark.parametrize("name, args", [
    ("word_read_file", {"file_path": "data/link.docx"}),
    ("word_write_to_file", {"file_path": "data/link.docx", "content": "pwned"}),
    ("word_create_new_file", {"file_path": "data/out/new.docx"}),
    ("word_convert_to_pdf", {"file_path": "data/notes.docx", "output_path": "data/out/notes.pdf"}),
    ("excel_read_file", {"file_path": "data/link.xlsx"}),
    ("excel_set_cell", {"file_path": "data/link.xlsx", "row": 1, "col": 1, "value": "pwned"}),
    ("excel_delete_cell", {"file_path": "data/out/secret.xlsx", "row": 1, "col": 1}),
    ("excel_create_new_file", {"file_path": "data/out/new.xlsx"}),
    ("excel_convert_to_pdf", {"file_path": "data/scores.xlsx", "output_path": "data/link.pdf"}),
    ("pdf_read_file", {"file_path": "data/link.pdf"}),
    ("pdf_convert_to_word", {"file_path": "data/out/secret.pdf"}),
    ("system_read_text", {"file_path": "data/out/secret.txt"}),
    ("system_list_files", {"folder": "data/out"}),
    ("email_list_emails", {"user": "eve"}),
    ("email_read_email", {"user": "eve", "email_id": "secret.eml"}),
    ("email_send_email", {"sender": "alice", "recipient": "eve", "subject": "x", "content": "pwned"}),
    ("calendar_list_events", {"user": "eve"}),
    ("calendar_create_event", {**VALID["calendar_create_event"], "user": "eve"}),
    ("calendar_delete_event", {"user": "eve", "summary": "Secret"}),
])
def test_symlink_escape_is_refused_and_outside_untouched(registry, ws, testbed, tmp_path, name, args):
    outside = Path(shutil.copytree(testbed, tmp_path / "outside"))
    outside_files = outside / "data"
    (outside_files / "secret.txt").write_text("secret", encoding="utf-8")
    for suffix, source in ((".docx", "notes.docx"), (".xlsx", "scores.xlsx"), (".pdf", "invoice.pdf")):
        (outside_files / f"secret{suffix}").write_bytes((outside_files / source).read_bytes())
        os.symlink(outside_files / f"secret{suffix}", testbed / "data" / f"link{suffix}")
    os.symlink(outside_files, testbed / "data" / "out")
    (outside / "emails" / "alice" / "Lunch.eml").rename(outside / "emails" / "alice" / "secret.eml")
    os.symlink(outside / "emails" / "alice", testbed / "emails" / "eve")
    os.symlink(outside / "calendar" / "alice.ics", testbed / "calendar" / "eve.ics")
    before = Workspace(outside).snapshot()

    observation = fails(registry, ws, name, args)
    assert "leads outside the testbed" in observation
    assert Workspace(outside).snapshot() == before


@pytest.mark.parametrize("name, field", [("email_list_emails", "user"), ("email_read_email", "user"),
                                         ("email_send_email", "sender"), ("email_send_email", "recipient"),
                                         ("calendar_list_events", "user"), ("calendar_create_event", "user"),
                                         ("calendar_delete_event", "user")])
@pytest.mark.parametrize("bad", ["../alice", "/etc", "a/b", "..", "x\\y"])
def test_bad_user_names_are_refused(registry, shared_ws, name, field, bad):
    observation = fails(registry, shared_ws, name, {**VALID[name], field: bad})
    assert f"Error: {field}: {bad!r} is not a valid user name" in observation


@pytest.mark.parametrize("email_id", ["../bob/Re Quarterly budget.eml", "..", ".hidden.eml", "a\\b.eml"])
def test_email_id_escape_is_refused(registry, shared_ws, email_id):
    assert "is not a message id from email_list_emails" in fails(
        registry, shared_ws, "email_read_email", {"user": "alice", "email_id": email_id})


# -- registry views -----------------------------------------------------------------------------

def test_read_only_view(registry):
    view = registry.read_only()
    names = set(view.names)
    assert names == {t.name for t in registry if not t.writes}
    assert all(not t.writes for t in view)
    assert "word_read_file" in names and "pdf_read_file" in names and "email_list_emails" in names
    for writer in ("excel_set_cell", "email_send_email", "system_write_answer", "word_convert_to_pdf"):
        assert writer not in names
    assert len(view) == 8


def test_read_only_view_does_not_run_writers(registry, ws):
    observation = fails(registry.read_only(), ws, "excel_set_cell", VALID["excel_set_cell"])
    assert "unknown tool 'excel_set_cell'" in observation


def test_for_apps_view(registry):
    assert sorted(registry.for_apps(["pdf"]).names) == ["pdf_convert_to_word", "pdf_read_file"]
    assert {t.app for t in registry.for_apps(["word", "email"])} == {"word", "email"}


def test_openai_tools_are_valid_function_definitions(registry):
    definitions = registry.openai_tools()
    assert len(definitions) == len(registry)
    names = []
    for definition in definitions:
        assert definition["type"] == "function"
        function = definition["function"]
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", function["name"])
        assert isinstance(function["description"], str) and function["description"].strip()
        parameters = function["parameters"]
        Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object"
        # sent without additionalProperties (grammar engines allow no unlisted key anyway);
        # the schema the registry validates a call against refuses them
        assert "additionalProperties" not in parameters
        assert registry.get(function["name"]).parameters["additionalProperties"] is False
        assert set(parameters.get("required", [])) <= set(parameters["properties"])
        names.append(function["name"])
        assert json.loads(json.dumps(definition)) == definition
    assert names == registry.names
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_arguments_match_the_published_schema(registry, name):
    Draft202012Validator(registry.get(name).parameters).validate(VALID[name])
    assert registry.validate(name, VALID[name]) == []


# -- determinism --------------------------------------------------------------------------------

SEQUENCE = [
    ("word_write_to_file", {"file_path": "data/summary.docx", "content": "Invoice 7731\nTotal 12,500.00"}),
    ("word_write_to_file", {"file_path": "data/summary.docx", "content": "Approved", "mode": "append"}),
    ("word_create_new_file", {"file_path": "data/blank.docx"}),
    ("word_convert_to_pdf", {"file_path": "data/summary.docx"}),
    ("pdf_convert_to_word", {"file_path": "data/invoice.pdf", "output_path": "data/invoice_copy.docx"}),
    ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 2, "value": 95}),
    ("excel_delete_cell", {"file_path": "data/scores.xlsx", "row": 4, "col": 3}),
    ("excel_create_new_file", {"file_path": "data/budget.xlsx", "sheet_name": "Budget"}),
    ("excel_set_cell", {"file_path": "data/budget.xlsx", "row": 1, "col": 1, "value": "=1+1"}),
    ("excel_convert_to_pdf", {"file_path": "data/scores.xlsx"}),
    ("email_send_email", {"sender": "alice", "recipient": "carol", "subject": "Invoice", "content": "Total 12,500"}),
    ("calendar_create_event", {"user": "alice", "summary": "Budget review", "start": "2024-05-07 15:00:00",
                               "end": "2024-05-07 16:00:00"}),
    ("calendar_create_event", {"user": "bob", "summary": "Budget review", "start": "2024-05-07 15:00:00",
                               "end": "2024-05-07 16:00:00"}),
    ("calendar_delete_event", {"user": "alice", "summary": "Team sync"}),
    ("system_write_answer", {"text": "Carol"}),
]


def test_same_calls_give_byte_identical_files(registry, ws, tmp_path):
    import time

    copies = [ws.copy_to(tmp_path / name) for name in ("first", "second")]
    original = ws.snapshot()
    snapshots = []
    for index, copy in enumerate(copies):
        if index:
            time.sleep(1.1)  # a different wall-clock second must not leak into the bytes
        for name, args in SEQUENCE:
            ok(registry, Workspace(copy.root, now=NOW), name, args)
        snapshots.append(copy.snapshot())
    assert snapshots[0] == snapshots[1]
    diff = original.diff(snapshots[0])
    assert "data/summary.pdf" in diff.added and "calendar/bob.ics" in diff.added
    assert "data/scores.xlsx" in diff.changed and "calendar/alice.ics" in diff.changed


def test_a_different_office_clock_changes_the_bytes(registry, ws, tmp_path):
    later = ws.copy_to(tmp_path / "later")
    args = {"sender": "alice", "recipient": "carol", "subject": "Invoice", "content": "x"}
    ok(registry, ws, "email_send_email", args)
    ok(registry, Workspace(later.root, now=datetime(2024, 5, 4, 9, 30)), "email_send_email", args)
    assert (ws.root / "emails/carol/Invoice.eml").read_bytes() != (later.root / "emails/carol/Invoice.eml").read_bytes()


def test_list_files_refuses_a_file_as_folder(registry, ws):
    assert "is a file, not a folder" in fails(registry, ws, "system_list_files", {"folder": "data/readme.txt"})
    assert "data/readme.txt" in ok(registry, ws, "system_list_files", {"folder": "data"})


# -- input a file cannot hold: refused by a deliberate check, naming the argument ---------------

@pytest.mark.parametrize("name, args, message", [
    ("word_write_to_file", {"file_path": "data/" + "a" * 300 + ".docx", "content": "x"},
     "Error: file_path: the name 'aaaa"),
    ("word_write_to_file", {"file_path": "data/" + "\u00e9" * 130 + ".docx", "content": "x"},
     "bytes in UTF-8, over the file system's 255-byte limit"),
    ("system_read_text", {"file_path": "/".join(["d"] * 40) + "/x.txt"}, "deeper than the 16-folder limit"),
    ("system_list_files", {"folder": "data/new\nline"}, "contains a control character"),
    ("word_write_to_file", {"file_path": "data/v.docx", "content": "a\x0bb"},
     "Error: content: contains the control character U+000B at position 1, which a Word document cannot hold"),
    ("word_write_to_file", {"file_path": "data/v.docx", "content": "a\ufffe"}, "U+FFFE at position 1"),
    ("word_write_to_file", {"file_path": "data/v.docx", "content": "x\ud800"},
     "Error: word_write_to_file: argument 'content': contains the unpaired surrogate U+D800 at position 1"),
    ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 1, "col": 1, "value": "a\x01"},
     "Error: value: contains the control character U+0001 at position 1, which an Excel cell cannot hold"),
    ("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 1, "col": 1, "value": float("nan")},
     "Error: value: nan is not a number a cell can hold"),
    ("excel_create_new_file", {"file_path": "data/n.xlsx", "sheet_name": "a/b"},
     "Error: sheet_name: a sheet name cannot contain '/'"),
    ("excel_create_new_file", {"file_path": "data/n.xlsx", "sheet_name": "a\x01"}, "Error: sheet_name: contains"),
    ("email_send_email", {"sender": "alice", "recipient": "bob", "subject": "Hi\nBcc: eve@example.com", "content": "x"},
     "Error: subject: contains a line break (U+000A) at position 2; it must be one line"),
    ("email_send_email", {"sender": "alice", "recipient": "bob@example.com\r\nBcc: eve", "subject": "Hi", "content": "x"},
     "Error: recipient: contains a line break"),
    ("email_send_email", {"sender": "ali\n@example.com", "recipient": "bob", "subject": "Hi", "content": "x"},
     "Error: sender: contains a line break"),
    ("email_send_email", {"sender": "alice@exa mple.com", "recipient": "bob", "subject": "Hi", "content": "x"},
     "is not a user name or an address like bob@example.com"),
    ("email_read_email", {"user": "alice", "email_id": "x" * 300}, "is not a message id from email_list_emails"),
    ("calendar_create_event", {"user": "alice", "summary": "Sync\r\nX-INJECT: 1", "start": "2024-05-07 10:00:00",
                               "end": "2024-05-07 11:00:00"}, "Error: summary: contains a line break"),
    ("calendar_list_events", {"user": "ali\n@example.com"}, "Error: user: contains a line break"),
])
def test_input_files_cannot_hold_is_refused(registry, ws, name, args, message):
    assert message in fails(registry, ws, name, args)


def test_numeric_text_too_long_for_a_number_stays_text(registry, ws, testbed):
    digits = "9" * 5000
    ok(registry, ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 1, "col": 5, "value": digits})
    assert openpyxl.load_workbook(testbed / "data" / "scores.xlsx").active.cell(1, 5).value == digits


def test_control_characters_in_pdf_text_are_dropped_on_conversion(registry, ws, testbed, monkeypatch):
    monkeypatch.setattr(pdf_io, "read_text", lambda path, label: "Invoice\x00 7731\x0b")
    ok(registry, ws, "pdf_convert_to_word", {"file_path": "data/invoice.pdf", "output_path": "data/inv.docx"})
    assert docx_io.read_text(testbed / "data" / "inv.docx", "inv.docx") == "Invoice 7731"


# -- the registry's last line of defence --------------------------------------------------------

def _raising(exc: BaseException):
    from office_env.tools.registry import Tool, ToolRegistry

    def func(ws):
        raise exc
    return ToolRegistry([Tool("test_boom", "test", "Raises.", {"type": "object", "properties": {}}, func, False)])


def test_an_unexpected_exception_becomes_an_internal_error_observation(ws):
    result = _raising(ValueError(f"bad value in {ws.root}/data/x")).call(ws, "test_boom", {})
    assert not result.ok
    assert result.observation == "Error: test_boom: internal error (ValueError: bad value in <testbed>/data/x)"


@pytest.mark.parametrize("exc", [MemoryError(), KeyboardInterrupt(), SystemExit(3)])
def test_memory_errors_interrupts_and_exits_pass_through(ws, exc):
    with pytest.raises(type(exc)):
        _raising(exc).call(ws, "test_boom", {})


def test_budget_exceptions_pass_through_even_as_exception_subclasses(ws):
    class BudgetExceeded(BaseException):
        pass

    class TaskBudgetExceeded(RuntimeError):
        pass

    for exc in (BudgetExceeded(), TaskBudgetExceeded()):
        with pytest.raises(type(exc)):
            _raising(exc).call(ws, "test_boom", {})


def test_creating_an_event_keeps_the_rest_of_a_foreign_calendar_byte_for_byte(tmp_path):
    (tmp_path / "calendar").mkdir()
    foreign = ("BEGIN:VCALENDAR\r\nPRODID:-//Other//EN\r\nVERSION:2.0\r\nX-WR-CALNAME:Team\r\n"
               "BEGIN:VEVENT\r\nUID:a1@other\r\nSUMMARY:Standup\r\nDTSTART:20240506T090000\r\n"
               "DTEND:20240506T091500\r\nX-OTHER-FIELD:kept\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()
    (tmp_path / "calendar" / "alice.ics").write_bytes(foreign)
    ws = Workspace(tmp_path, now=datetime(2024, 5, 3, 9, 0))
    result = default_registry().call(ws, "calendar_create_event", {
        "user": "alice", "summary": "Review", "start": "2024-05-06 10:00:00", "end": "2024-05-06 11:00:00"})
    assert result.ok, result.observation
    data = (tmp_path / "calendar" / "alice.ics").read_bytes()
    assert data.startswith(foreign[: -len(b"END:VCALENDAR\r\n")])  # nothing of the original is rewritten
    assert data.endswith(b"END:VEVENT\r\nEND:VCALENDAR\r\n") and b"SUMMARY:Review" in data
    listing = default_registry().call(ws, "calendar_list_events", {"user": "alice"}).observation
    assert "Standup" in listing and "Review" in listing


def test_creating_an_event_in_a_corrupt_calendar_is_an_error_observation(tmp_path):
    (tmp_path / "calendar").mkdir()
    (tmp_path / "calendar" / "alice.ics").write_bytes(b"not a calendar\r\nEND:VCALENDAR\r\n")
    ws = Workspace(tmp_path, now=datetime(2024, 5, 3, 9, 0))
    result = default_registry().call(ws, "calendar_create_event", {
        "user": "alice", "summary": "Review", "start": "2024-05-06 10:00:00", "end": "2024-05-06 11:00:00"})
    assert not result.ok and "calendar/alice.ics" in result.observation
    assert (tmp_path / "calendar" / "alice.ics").read_bytes() == b"not a calendar\r\nEND:VCALENDAR\r\n"


def test_a_plan_s_consecutive_cell_edits_run_as_one_with_the_results_and_file_of_one_by_one(testbed, tmp_path):
    """A plan's run of set_cell calls on one sheet saves the workbook once: every observation, the
    bytes written and what a read gives back are those of the calls made one by one, bad calls too."""
    import hashlib
    import random
    import shutil

    from office_env.formats import xlsx_io
    from office_env.sample import SAMPLE_NOW

    registry = default_registry()
    values = [7, 2.5, -3, "Done", "", None, True, "x" * 30, 10 ** 20, float("nan"), "Open"]
    for seed in range(60):
        rng = random.Random(seed)
        file = rng.choice(["data/scores.xlsx", "data/new.xlsx"])
        plan = [("excel_create_new_file", {"file_path": "data/new.xlsx"})]
        for _ in range(rng.randint(2, 14)):
            args = {"file_path": file, "row": rng.randint(1, 6), "col": rng.randint(1, 4), "value": rng.choice(values)}
            if rng.random() < 0.1:
                args["row"] = 0  # refused by the schema: breaks the run
            if rng.random() < 0.1:
                args["sheet"] = rng.choice(["Scores", "Nope"])
            plan.append(("excel_set_cell", args))
        plan.append(("excel_read_file", {"file_path": file}))
        roots = []
        for how in ("batched", "one by one"):
            root = tmp_path / f"{seed}-{how.replace(' ', '-')}"
            shutil.copytree(testbed, root)
            ws = Workspace(root, now=SAMPLE_NOW)
            results = registry.run(ws, plan) if how == "batched" else [registry.call(ws, n, a) for n, a in plan]
            roots.append((results, hashlib.sha256((root / file).read_bytes()).hexdigest(),
                          xlsx_io.read_book(root / file, file).sheet(None, file).text))
        assert roots[0] == roots[1], seed


def test_an_event_time_is_read_as_strptime_reads_it_every_time_it_is_asked():
    """parse_time keeps its readings of a text (the replays of a task create and check the same
    events); each is what the first format strptime takes gives, and a text none takes is refused
    every time, never kept as a reading."""
    from office_env import OfficeError, calendar_store

    def afresh(text):
        value = text.strip() if isinstance(text, str) else text
        for fmt in calendar_store.TIME_FORMATS:
            try:
                return datetime.strptime(value, fmt)
            except (TypeError, ValueError):
                continue
        return None

    texts = ["2024-05-06 10:00:00", " 2024-05-06 10:00:00 ", "2024-05-06 10:00", "2024-05-06T10:00:00",
             "2024-05-06T10:00", "2024-5-6 9:0:0", "2024-05-06", "2024-02-30 10:00:00", "2024-05-06 24:00:00",
             "10:00", "", "  ", "2024-05-06 10:00:00.5", "2024-05-06  10:00:00", "0001-01-01 00:00:00", "x" * 100,
             "2024-05-06 10:00:00" + " " * 60, 20240506, None, b"2024-05-06 10:00:00"]
    calendar_store._time_of.cache_clear()
    for _ in range(2):  # read afresh, then from what was kept
        for text in texts:
            expected = afresh(text)
            if expected is None:
                with pytest.raises(OfficeError, match="^start: .* is not a time"):
                    calendar_store.parse_time(text, "start")
            else:
                assert calendar_store.parse_time(text, "start") == expected, text
    kept = {t.strip() for t in texts if isinstance(t, str) and afresh(t) is not None and len(t.strip()) <= 64}
    assert calendar_store._time_of.cache_info().currsize == len(kept)  # the readings, and never a refusal
