"""Offline surfers: notes that fit the schema, hold what is really in the files, and never write."""

from __future__ import annotations

import copy
import json
import shutil
from datetime import datetime, timedelta
from email import policy
from email.parser import BytesParser
from pathlib import Path

import docx
import openpyxl
import pytest
from pypdf import PdfReader

from backends.fake_llm import FakeLLMServer, Reply, scripted
from backends.llm import LLMClient, LLMError, LLMSettings
from office_env import Snapshot, Workspace, default_registry
from office_env.formats import ics_io, xlsx_io
from office_env.synthesis import make_world, write_workspace
from office_env.tools import ToolRegistry
from orchestrator.fake_llm.offline_responder import default_responder
from surfers import explore, notes_schema, office_apps, validate_notes
from surfers.llm import MAX_CALLS_PER_REPLY, OUT_OF_STEPS, app_files, explore_llm, item_files, note_parts
from surfers.offline import WorkspaceReader, free_slots, list_files, numbers_in, parse_cells, people_in

pytestmark = pytest.mark.slow

SEED = 21
FMT = "%Y-%m-%d %H:%M:%S"


@pytest.fixture(scope="module")
def world_bed(tmp_path_factory):
    world = make_world(SEED)
    root = tmp_path_factory.mktemp("surf") / "testbed"
    manifest = write_workspace(world, root)
    return world, root, manifest


@pytest.fixture(scope="module")
def all_notes(world_bed):
    world, root, _ = world_bed
    ws = Workspace(root, now=world.now)
    return {app: explore(app, ws) for app in office_apps()}


@pytest.fixture
def fresh_bed(world_bed, tmp_path):
    """A private copy of the world's testbed for tests that damage files."""
    world, root, manifest = world_bed
    return world, Path(shutil.copytree(root, tmp_path / "testbed")), manifest


def _path_of(manifest: dict[str, str], kind: str) -> str:
    (path,) = [p for p, k in manifest.items() if k == kind]
    return path


def _entry(notes: dict, file: str) -> dict:
    (entry,) = [e for e in notes["files"] if e["file"] == file]
    return entry


# -- shape -------------------------------------------------------------------------------------

def test_apps_and_every_note_validates(all_notes):
    assert office_apps() == ("word", "excel", "pdf", "email", "calendar")
    for app, notes in all_notes.items():
        assert notes["app"] == app
        assert validate_notes(notes) == [], app
        assert not any("error" in e for e in notes.get("files", [])), app


def test_schema_is_draft_2020_12_and_rejects_bad_notes(all_notes):
    assert notes_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    bad = copy.deepcopy(all_notes["excel"])
    bad["files"][0]["rows"][0][0] = 5  # cells are strings
    problems = validate_notes(bad)
    assert problems and problems[0].startswith("files/0/rows/0/0:")
    bad = copy.deepcopy(all_notes["calendar"])
    bad["calendars"][0]["events"][0]["start"] = "tomorrow"
    assert any("calendars/0/events/0/start" in p for p in validate_notes(bad))
    bad = copy.deepcopy(all_notes["email"])
    del bad["mailboxes"][0]["messages"][0]["body"]
    assert validate_notes(bad)
    assert validate_notes({"app": "fax", "files": []}) == ["app: 'fax' is not one of word, excel, pdf, email, calendar"]
    assert validate_notes([]) != []
    assert validate_notes({"app": "word", "files": [{"file": "x.docx", "error": "Error: broken"}]}) == []
    assert validate_notes({"app": "word", "files": [{"file": "x.docx", "error": "e", "lines": []}]})


def test_unknown_app_is_refused(world_bed):
    with pytest.raises(ValueError, match="not one of"):
        explore("fax", Workspace(world_bed[1]))


# -- facts really in the files -----------------------------------------------------------------

def test_excel_notes_hold_the_cells_openpyxl_reads(world_bed, all_notes):
    world, root, manifest = world_bed
    notes = all_notes["excel"]
    xlsx_files = sorted(p for p in manifest if p.endswith(".xlsx"))
    assert sorted(e["file"] for e in notes["files"]) == xlsx_files
    for entry in notes["files"]:
        sheet = openpyxl.load_workbook(root / entry["file"]).active
        values = list(sheet.iter_rows(values_only=True))
        assert entry["sheet"] == sheet.title
        assert entry["headers"] == [str(v) for v in values[0]]
        assert entry["rows"] == [["" if v is None else str(v) for v in row] for row in values[1:]]
    salaries = _entry(notes, _path_of(manifest, "salaries"))
    assert salaries["headers"] == ["Name", "Department", "Title", "Salary"]
    by_name = {row[0]: row[3] for row in salaries["rows"]}
    sheet = openpyxl.load_workbook(root / salaries["file"]).active
    for row in sheet.iter_rows(min_row=2, values_only=True):
        assert by_name[row[0]] == str(row[3])
    assert by_name[world.user.name] == str(next(r[3] for r in sheet.iter_rows(values_only=True) if r[0] == world.user.name))


def test_word_notes_hold_the_paragraphs_and_people(world_bed, all_notes):
    world, root, manifest = world_bed
    notes = all_notes["word"]
    assert sorted(e["file"] for e in notes["files"]) == sorted(p for p in manifest if p.endswith(".docx"))
    for entry in notes["files"]:
        paragraphs = [p.text.strip() for p in docx.Document(str(root / entry["file"])).paragraphs if p.text.strip()]
        assert entry["lines"] == paragraphs
    meeting = _entry(notes, _path_of(manifest, "meeting_notes"))
    attendees = next(line for line in meeting["lines"] if line.startswith("Attendees: "))
    named = attendees[len("Attendees: "):].split(", ")
    assert world.user.name in named
    assert meeting["people"][: len(named)] == named
    assert set(meeting["people"]) <= {p.name for p in world.people}


def test_pdf_notes_hold_the_text_and_the_invoice_total(world_bed, all_notes):
    _, root, manifest = world_bed
    notes = all_notes["pdf"]
    invoice = _entry(notes, _path_of(manifest, "invoice"))
    text = "\n".join(page.extract_text() for page in PdfReader(str(root / invoice["file"])).pages)
    assert invoice["lines"] == [line.strip() for line in text.splitlines() if line.strip()]
    total = next(line for line in invoice["lines"] if line.startswith("Total due: ")).split()[2]
    assert total in invoice["numbers"]
    assert not any(n.startswith("INV") for n in invoice["numbers"])
    handbook = _entry(notes, _path_of(manifest, "handbook"))
    assert 30 <= len(handbook["lines"]) <= 90  # a handbook of several sections over 2-3 pages


def test_email_notes_hold_every_message_with_its_body(world_bed, all_notes):
    world, root, manifest = world_bed
    (mailbox,) = all_notes["email"]["mailboxes"]
    assert mailbox["user"] == world.user.user
    paths = sorted(p for p, k in manifest.items() if k == "email")
    assert sorted(f"emails/{world.user.user}/{m['id']}" for m in mailbox["messages"]) == paths
    for message in mailbox["messages"]:
        parsed = BytesParser(policy=policy.default).parsebytes((root / "emails" / world.user.user / message["id"]).read_bytes())
        assert message["from"] == parsed["From"]
        assert message["to"] == parsed["To"] == world.user.email
        assert message["subject"] == parsed["Subject"]
        assert message["date"] == parsed["Date"]
        assert message["body"] == parsed.get_content().strip("\n")
    subjects = [m["subject"] for m in mailbox["messages"]]
    assert any(s.startswith("Re: ") and s[4:] in subjects for s in subjects)


def test_calendar_notes_hold_events_and_true_free_slots(world_bed, all_notes):
    world, root, manifest = world_bed
    calendars = all_notes["calendar"]["calendars"]
    assert sorted(c["user"] for c in calendars) == sorted(Path(p).stem for p, k in manifest.items() if k == "calendar")
    monday = world.now.date() - timedelta(days=world.now.weekday())
    all_hours = {datetime(d.year, d.month, d.day, h) for d in (monday + timedelta(days=i) for i in (*range(5), *range(7, 12)))
                 for h in range(9, 17)}
    for calendar in calendars:
        events = ics_io.read_events(root / "calendar" / f"{calendar['user']}.ics", "x")
        assert calendar["events"] == [
            {"summary": e.summary, "start": e.start.strftime(FMT), "end": e.end.strftime(FMT)} for e in events
        ]
        free = {datetime.strptime(s["start"], FMT) for s in calendar["free_slots"]}
        assert all(datetime.strptime(s["end"], FMT) - datetime.strptime(s["start"], FMT) == timedelta(hours=1)
                   for s in calendar["free_slots"])
        for hour in all_hours:
            clashes = any(e.start < hour + timedelta(hours=1) and e.end > hour for e in events)
            assert (hour in free) != clashes, (calendar["user"], hour)
    mine = next(c for c in calendars if c["user"] == world.user.user)
    for other in calendars:  # a colleague shares a free hour with the user, unless away all that time
        shared = {s["start"] for s in mine["free_slots"]} & {s["start"] for s in other["free_slots"]}
        away = [e for e in other["events"] if e["summary"].startswith("Out of office")]
        assert shared or away, f"no common free hour with {other['user']}"


def test_free_slots_edges():
    events = [
        {"summary": "a", "start": "2024-05-06 10:30:00", "end": "2024-05-06 11:00:00"},
        {"summary": "b", "start": "2024-05-06 12:00:00", "end": "2024-05-06 13:00:00"},
        {"summary": "c", "start": "2024-05-07 08:00:00", "end": "2024-05-07 09:00:00"},
        {"summary": "d", "start": "2024-05-10 16:59:00", "end": "2024-05-10 18:00:00"},
    ]
    slots = {s["start"][5:16] for s in free_slots(events, datetime(2024, 5, 6).date(), weeks=1)}
    assert len(slots) == 40 - 3
    assert "05-06 10:00" not in slots and "05-06 12:00" not in slots and "05-10 16:00" not in slots
    assert {"05-06 11:00", "05-06 13:00", "05-07 09:00", "05-06 09:00"} <= slots
    assert free_slots([], None) == []
    # two weeks: the next week's working days too, never a weekend
    both = {s["start"][5:16] for s in free_slots(events, datetime(2024, 5, 6).date())}
    assert both - slots == {f"05-{d:02d} {h:02d}:00" for d in range(13, 18) for h in range(9, 17)}


def test_users_limit_the_mailboxes_and_calendars(world_bed):
    world, root, manifest = world_bed
    ws = Workspace(root, now=world.now)
    others = [Path(p).stem for p, k in manifest.items() if k == "calendar" and Path(p).stem != world.user.user]
    notes = explore("calendar", ws, users=[others[0]])
    assert [c["user"] for c in notes["calendars"]] == [others[0]]
    assert explore("email", ws, users=[others[0]]) == {"app": "email", "mailboxes": []}
    notes = explore("email", ws, users=[world.user.email])
    assert [m["user"] for m in notes["mailboxes"]] == [world.user.user]


def test_sample_office_notes(ws):
    """The project's small sample testbed explores too, e.g. alice's week of 2024-05-06."""
    notes = {app: explore(app, ws) for app in office_apps()}
    for app in office_apps():
        assert validate_notes(notes[app]) == [], app
    assert notes["word"]["files"][0]["people"] == ["Dana Reyes"]
    assert notes["excel"]["files"][0]["rows"][1] == ["Bob", "92.5", "Open"]
    assert "12,500.00" in notes["pdf"]["files"][0]["numbers"] and "7731" in notes["pdf"]["files"][0]["numbers"]
    assert [m["user"] for m in notes["email"]["mailboxes"]] == ["alice", "bob"]
    (alice,) = notes["calendar"]["calendars"]
    assert alice["free_slots"][0] == {"start": "2024-05-06 09:00:00", "end": "2024-05-06 10:00:00"}
    assert {"start": "2024-05-06 10:00:00", "end": "2024-05-06 11:00:00"} not in alice["free_slots"]
    assert len([s for s in alice["free_slots"] if s["start"] < "2024-05-11"]) == 40 - 2
    assert len(alice["free_slots"]) == 80 - 2  # the next week holds no event


# -- read-only ---------------------------------------------------------------------------------

def test_surfers_call_only_read_tools_and_change_nothing(fresh_bed, monkeypatch):
    world, root, _ = fresh_bed
    called: list[str] = []
    original = ToolRegistry.call

    def recording(self, workspace, name, args):
        called.append(name)
        return original(self, workspace, name, args)

    monkeypatch.setattr(ToolRegistry, "call", recording)
    before = Snapshot.of(root)
    ws = Workspace(root, now=world.now)
    for app in office_apps():
        explore(app, ws)
    assert Snapshot.of(root).diff(before).empty and Snapshot.of(root).files == before.files
    read_only = set(default_registry().read_only().names)
    writing = {t.name for t in default_registry() if t.writes}
    assert called and set(called) <= read_only and not set(called) & writing
    assert {"system_list_files", "word_read_file", "excel_read_file", "pdf_read_file",
            "email_list_emails", "email_read_email", "calendar_list_events"} <= set(called)


# -- damaged input -----------------------------------------------------------------------------

def test_corrupt_files_become_error_entries(fresh_bed):
    world, root, manifest = fresh_bed
    broken = {
        "word": _path_of(manifest, "report"),
        "excel": _path_of(manifest, "budget"),
        "pdf": _path_of(manifest, "invoice"),
    }
    for path in broken.values():
        (root / path).write_bytes(b"this is not an office file")
    email_path = sorted(p for p, k in manifest.items() if k == "email")[0]
    (root / email_path).write_bytes(b"\x00\x01 garbage without headers")
    calendar_owner = next(Path(p).stem for p, k in manifest.items() if k == "calendar" and world.user.user not in p)
    (root / "calendar" / f"{calendar_owner}.ics").write_bytes(b"BEGIN:NOTHING")
    ws = Workspace(root, now=world.now)
    notes = {app: explore(app, ws) for app in office_apps()}
    for app, path in broken.items():
        entry = _entry(notes[app], path)
        assert set(entry) == {"file", "error"} and entry["error"].startswith("Error: ") and path in entry["error"]
        assert len(notes[app]["files"]) > 1  # the other files are still read
    (mailbox,) = notes["email"]["mailboxes"]
    errors = [m for m in mailbox["messages"] if "error" in m]
    assert [e["file"] for e in errors] == [email_path]
    assert len(mailbox["messages"]) == len([p for p, k in manifest.items() if k == "email"])
    calendar_errors = [c for c in notes["calendar"]["calendars"] if "error" in c]
    assert [c["file"] for c in calendar_errors] == [f"calendar/{calendar_owner}.ics"]
    for app in office_apps():
        assert validate_notes(notes[app]) == [], app


def test_excel_values_with_tabs_newlines_and_marker_text(tmp_path):
    (tmp_path / "data").mkdir()
    tricky = [["Name", "Note", "Count"], ["Ann\tLee", "line one\nline two", 3], ["(3, 1): fake", None, 4.5]]
    (tmp_path / "data" / "tricky.xlsx").write_bytes(xlsx_io.build(tricky, sheet_name="It's"))
    book = openpyxl.load_workbook(tmp_path / "data" / "tricky.xlsx")
    book.create_sheet("Second")["A1"] = "only"
    book.save(tmp_path / "data" / "tricky.xlsx")
    notes = explore("excel", Workspace(tmp_path))
    first, second = notes["files"]
    assert first["sheet"] == "It's"
    assert first["headers"] == ["Name", "Note", "Count"]
    assert first["rows"] == [["Ann\tLee", "line one\nline two", "3"], ["(3, 1): fake", "", "4.5"]]
    assert second == {"file": "data/tricky.xlsx", "sheet": "Second", "headers": ["only"], "rows": []}
    assert parse_cells("") == {}


def test_numbers_and_people_parsing():
    assert numbers_in("Invoice INV-2024-0412 dated 2024-05-31: 3 x 12.50 = 37.50, total 1,250.00 USD at 12:30.") == [
        "3", "12.50", "37.50", "1,250.00"]
    assert people_in("Attendees: Dana Reyes, Monday Team, Nora Whitaker and Zed Quibble. Dana Reyes again.") == [
        "Dana Reyes", "Nora Whitaker"]


def test_empty_testbed_gives_empty_notes(tmp_path):
    ws = Workspace(tmp_path)
    for app in office_apps():
        notes = explore(app, ws)
        assert validate_notes(notes) == []
        assert list(notes.values())[1] == []


# -- the llm surfer against the fake endpoint --------------------------------------------------

def llm_client(server: FakeLLMServer) -> LLMClient:
    return LLMClient(LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10, max_retries=0))


def tool_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def last_observations(body: dict) -> list[str]:
    """The results of the last reply's tool calls (after the reads made up front)."""
    last = max(i for i, m in enumerate(body["messages"]) if m["role"] == "assistant")
    return [m["content"] for m in body["messages"][last:] if m["role"] == "tool"]


def test_llm_surfer_matches_the_offline_notes_in_one_call_and_survives_a_malformed_reply(ws):
    with FakeLLMServer(default_responder()) as server:
        clean = explore_llm(llm_client(server), "excel", ws)
        (first,) = server.chat_requests()  # the reads are made up front: the notes come in one call
        server.reset()
        server.queue_faults("malformed")
        notes = explore_llm(llm_client(server), "excel", ws)
        statuses = [r.status for r in server.chat_requests()]
        repair = server.chat_requests()[-1].body
    assert notes == clean == explore("excel", ws)
    assert "tool_choice" not in first.body or first.body["tool_choice"] == "auto"  # the first reply may read more
    assert repair["tool_choice"] == "none"  # a reply meant as the notes is repaired as the notes, not explored
    read = [call["function"]["arguments"] for m in first.body["messages"] for call in m.get("tool_calls") or []]
    assert sorted(json.loads(a)["file_path"] for a in read) == app_files("excel", list_files(WorkspaceReader(ws)))
    assert len(tool_messages(first.body)) == len(read)
    assert statuses == [200, 200]  # the broken notes, asked again


def test_llm_surfer_answers_bad_tool_calls_with_errors_and_goes_on(ws):
    calls = [
        {"name": "email_send_email", "arguments": {"to": "bob"}},                    # not one of its tools
        {"name": "system_list_files", "arguments": {"folder": "f" * 300}},            # a 300-character folder
        {"name": "word_read_file", "arguments": {"file_path": "d" * 300 + "/a.docx"}},
        {"name": "word_read_file", "arguments": '["data/report.docx"]'},             # JSON, not an object
        {"name": "word_read_file", "arguments": '{"file_path": "data/'},             # not JSON
        {"name": "word_read_file", "arguments": "[" * 1_000 + "]" * 1_000},          # nested too deep
        {"name": "word_read_file", "arguments": {"file_path": 7}},                   # the wrong type
        {"name": "word_read_file", "arguments": {"file_path": "../../etc/passwd"}},  # outside the testbed
    ]
    final = json.dumps({"app": "word", "files": []})
    with FakeLLMServer(scripted(Reply(tool_calls=calls), final)) as server:
        notes = explore_llm(llm_client(server), "word", ws)
        second = server.chat_requests()[1].body
    assert notes == {"app": "word", "files": []}
    observations = last_observations(second)
    assert len(observations) == len(calls) and all(o.startswith("Error: ") for o in observations), observations
    assert "unknown tool 'email_send_email'" in observations[0]
    assert "not a JSON object" in observations[3] and "not a JSON object" in observations[5]


def test_llm_surfer_asks_again_under_the_same_limit_after_a_reply_cut_at_it(ws):
    final = json.dumps({"app": "word", "files": []})
    with FakeLLMServer(scripted(final, final, final)) as server:
        server.queue_faults("truncated", "truncated")
        notes = explore_llm(llm_client(server), "word", ws)
        limits = [r.body.get("max_tokens") or r.body.get("max_completion_tokens") for r in server.chat_requests()]
    assert notes == {"app": "word", "files": []}
    assert limits == [limits[0]] * 3, limits  # never resent with a higher limit


def test_llm_surfer_notes_a_large_app_in_parts_that_fit_the_limit(ws):
    """Under a small reply limit the items are explored in several conversations, no reply is cut,
    and the parts' notes put together are the whole app's."""
    settings = LLMSettings(base_url=None, api_key=None, model="fake-model", timeout=10, max_retries=0,
                           max_tokens={"default": 300})
    files = list_files(WorkspaceReader(ws))
    parts = note_parts("email", ws, files, 300)
    assert parts == [["alice"], ["bob"]] and note_parts("email", ws, files, 4096) == [["alice", "bob"]]
    with FakeLLMServer(default_responder()) as server:
        settings.base_url = server.url
        notes = explore_llm(LLMClient(settings), "email", ws)
        requests = server.chat_requests()
    listed = {r.body["messages"][1]["content"] for r in requests}
    assert len(listed) == len(parts) == len(requests)  # one conversation per part, its reads made up front
    asked = [m.get("content") or "" for r in requests for m in r.body["messages"] if m["role"] == "user"]
    assert not any("could not be used" in text for text in asked)  # no reply was cut (nor repaired)
    assert {r.body["max_tokens"] for r in requests} == {300}
    assert notes == explore("email", ws)


def test_llm_surfer_turns_a_raising_tool_into_an_observation(ws, monkeypatch):
    original = ToolRegistry.call

    def explode(self, workspace, name, args):
        if name == "word_read_file":
            raise OSError(36, "File name too long")
        return original(self, workspace, name, args)

    monkeypatch.setattr(ToolRegistry, "call", explode)
    script = scripted(Reply(tool_calls=[{"name": "word_read_file", "arguments": {"file_path": "data/a.docx"}}]),
                      json.dumps({"app": "word", "files": []}))
    with FakeLLMServer(script) as server:
        assert explore_llm(llm_client(server), "word", ws) == {"app": "word", "files": []}
        (observation,) = last_observations(server.chat_requests()[1].body)
    assert observation.startswith("Error: word_read_file failed: OSError")


def test_llm_surfer_runs_at_most_the_calls_it_allows_per_reply(ws):
    many = [{"name": "system_list_files", "arguments": {}}] * (MAX_CALLS_PER_REPLY + 4)
    with FakeLLMServer(scripted(Reply(tool_calls=many), json.dumps({"app": "word", "files": []}))) as server:
        explore_llm(llm_client(server), "word", ws)
        observations = last_observations(server.chat_requests()[1].body)
    assert len(observations) == len(many)
    assert [o.startswith("Error: not run") for o in observations] == [False] * MAX_CALLS_PER_REPLY + [True] * 4


def test_llm_surfer_out_of_steps_asks_once_for_the_notes_without_tools(ws):
    def responder(body):
        if body.get("tool_choice") == "none":
            return json.dumps({"app": "word", "files": []})
        return Reply(tool_calls=[{"name": "system_list_files", "arguments": {}}])

    with FakeLLMServer(responder) as server:
        assert explore_llm(llm_client(server), "word", ws, max_steps=3) == {"app": "word", "files": []}
        bodies = [r.body for r in server.chat_requests()]
    assert len(bodies) == 4 and bodies[-1]["tool_choice"] == "none"
    assert bodies[-1]["messages"][-1] == {"role": "user", "content": OUT_OF_STEPS.format(steps=3)}


@pytest.mark.parametrize("mode", ["json_schema", "none"])
def test_llm_surfer_asks_for_its_last_notes_under_the_apps_schema_where_the_server_keeps_to_one(ws, mode):
    def responder(body):
        if body.get("tool_choice") == "none":
            return json.dumps({"app": "word", "files": []})
        return Reply(tool_calls=[{"name": "system_list_files", "arguments": {}}])

    with FakeLLMServer(responder) as server:
        client = LLMClient(LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10, max_retries=0,
                                       structured_output=mode))
        assert explore_llm(client, "word", ws, max_steps=1) == {"app": "word", "files": []}
        bodies = [r.body for r in server.chat_requests()]
    assert "response_format" not in bodies[0]  # a step that may still call tools is not bound to the notes
    if mode == "none":
        assert "response_format" not in bodies[-1]
    else:
        sent = bodies[-1]["response_format"]
        shape = sent["json_schema"]["schema"]  # the app's notes at the top, the definitions beside them
        assert sent["type"] == "json_schema" and shape["type"] == "object" and "$ref" not in shape
        assert shape["properties"]["app"] == {"const": "word"} and "word_notes" in shape["$defs"]


def test_llm_surfer_that_never_stops_calling_tools_is_an_llm_error(ws):
    with FakeLLMServer(lambda body: Reply(tool_calls=[{"name": "system_list_files", "arguments": {}}])) as server:
        with pytest.raises(LLMError, match=r"surfer \(word\): no valid notes after 4 replies .*got tool calls"):
            explore_llm(llm_client(server), "word", ws, max_steps=3)
        assert len(server.chat_requests()) == 4


def test_llm_surfer_reports_a_malformed_reply_as_an_llm_error(ws):
    with FakeLLMServer(lambda body: json.dumps({"app": "word", "files": []})) as server:
        server.queue_faults("message_string")
        with pytest.raises(LLMError, match=r"'choices\[0\]\.message' is a string, not an object"):
            explore_llm(llm_client(server), "word", ws)
        assert explore_llm(llm_client(server), "word", ws) == {"app": "word", "files": []}


def test_the_llm_surfer_is_shown_only_its_app_s_files():
    from surfers.llm import app_files

    files = ["data/a.xlsx", "data/b.docx", "data/.hidden.xlsx", "emails/dana/x.eml", "calendar/dana.ics",
             "emails/dana/y.xlsx"]
    assert app_files("excel", files) == ["data/a.xlsx"]
    assert app_files("word", files) == ["data/b.docx"]
    assert app_files("email", files) == ["emails/dana/x.eml", "emails/dana/y.xlsx"]
    assert app_files("calendar", files) == ["calendar/dana.ics"]


def test_llm_surfer_notes_a_mailbox_larger_than_a_reply_a_few_messages_at_a_time(ws):
    """A mailbox whose notes outgrow the part planned for a reply is explored a few messages at a
    time: each part's conversation shows the reads of its messages alone, no reply is cut, and the
    parts make one entry per mailbox, as the offline surfer notes it."""
    files = list_files(WorkspaceReader(ws))
    parts = note_parts("email", ws, files, 120)
    assert any("/" in item for part in parts for item in part)  # messages, not whole mailboxes
    settings = LLMSettings(base_url=None, api_key=None, model="fake-model", timeout=10, max_retries=0,
                           max_tokens={"default": 120})
    with FakeLLMServer(default_responder()) as server:
        settings.base_url = server.url
        notes = explore_llm(LLMClient(settings), "email", ws)
        requests = server.chat_requests()
    assert notes == explore("email", ws)
    assert len(requests) == len(parts)  # one call a part: its reads made up front
    assert all(r.body["messages"][-1]["role"] == "tool" for r in requests)
    for request, part in zip(requests, parts):
        read = [json.loads(c["function"]["arguments"]) for m in request.body["messages"]
                for c in m.get("tool_calls") or [] if c["function"]["name"] == "email_read_email"]
        assert {f"emails/{a['user']}/{a['email_id']}" for a in read} == set(item_files("email", files, part))
