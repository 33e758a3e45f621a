"""Plans gain the finding an agent must do (listing folders and mailboxes, reading before editing),
and nothing they leave behind changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generators.discovery import discover, discover_plan
from generators.model import Misreading, TaskDraft, ToolCall
from office_env import Workspace, default_registry
from office_env.sample import SAMPLE_NOW as NOW
from office_env.snapshot import Snapshot
from orchestrator.build import build
from orchestrator.roles import BuildConfig

from tests.support.records import task_records

FILES = ["data/invoice.pdf", "data/notes.docx", "data/scores.xlsx", "data/readme.txt", "calendar/alice.ics",
         "emails/alice/Lunch.eml"]


def tools(plan: list[ToolCall]) -> list[str]:
    return [c.tool for c in plan]


def test_a_read_of_an_existing_file_is_preceded_by_one_listing_of_its_folder():
    plan = [ToolCall("pdf_read_file", {"file_path": "data/invoice.pdf"}),
            ToolCall("word_read_file", {"file_path": "data/notes.docx"}),
            ToolCall("system_write_answer", {"text": "12"})]
    done = discover_plan(plan, FILES)
    assert done[0] == ToolCall("system_list_files", {"folder": "data"})
    assert done[1:] == plan


def test_files_the_plan_makes_need_no_finding_and_an_existing_listing_is_not_repeated():
    plan = [ToolCall("system_list_files", {"folder": "data/"}),
            ToolCall("excel_read_file", {"file_path": "data/scores.xlsx"}),
            ToolCall("excel_create_new_file", {"file_path": "data/new.xlsx"}),
            ToolCall("excel_set_cell", {"file_path": "data/new.xlsx", "row": 1, "col": 1, "value": "x"}),
            ToolCall("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 1, "value": "y"}),
            ToolCall("word_write_to_file", {"file_path": "data/memo.docx", "content": "hi"})]
    assert discover_plan(plan, FILES) == plan


def test_a_cell_edit_is_preceded_by_a_read_of_its_sheet_and_an_append_by_a_read_of_its_document():
    plan = [ToolCall("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 1, "value": 9, "sheet": "S"}),
            ToolCall("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 1, "value": 8, "sheet": "S"}),
            ToolCall("word_write_to_file", {"file_path": "data/notes.docx", "content": "more", "mode": "append"})]
    assert discover_plan(plan, FILES) == [
        ToolCall("system_list_files", {"folder": "data"}),
        ToolCall("excel_read_file", {"file_path": "data/scores.xlsx", "sheet": "S"}),
        plan[0], plan[1],
        ToolCall("word_read_file", {"file_path": "data/notes.docx"}),
        plan[2],
    ]


def test_an_overwrite_of_an_existing_document_needs_its_folder_listed_but_not_a_read():
    plan = [ToolCall("word_write_to_file", {"file_path": "data/notes.docx", "content": "new"})]
    assert tools(discover_plan(plan, FILES)) == ["system_list_files", "word_write_to_file"]


def test_a_mail_read_needs_its_mailbox_listed_and_a_deletion_its_calendar_once_per_user():
    plan = [ToolCall("email_read_email", {"user": "alice", "email_id": "Lunch.eml"}),
            ToolCall("email_read_email", {"user": "alice", "email_id": "Quarterly budget.eml"}),
            ToolCall("email_read_email", {"user": "bob", "email_id": "Re Quarterly budget.eml"}),
            ToolCall("calendar_delete_event", {"user": "alice", "summary": "Sync"}),
            ToolCall("calendar_create_event", {"user": "alice", "summary": "Sync", "start": "a", "end": "b"})]
    assert tools(discover_plan(plan, FILES)) == [
        "email_list_emails", "email_read_email", "email_read_email", "email_list_emails", "email_read_email",
        "calendar_list_events", "calendar_delete_event", "calendar_create_event"]


def test_a_file_at_the_testbed_root_lists_the_whole_testbed():
    plan = [ToolCall("system_read_text", {"file_path": "todo.txt"})]
    assert discover_plan(plan, ["todo.txt"])[0] == ToolCall("system_list_files", {})


LOOK_ALIKES = ["data/invoice_5546.pdf", "data/invoice_9914.pdf", "data/invoice_9914_paid.pdf",
               "data/bluestem_invoice.pdf", "data/invoice_1200.docx", "data/budget_2024.xlsx", "data/budget_2024_old.xlsx"]


def test_files_named_alike_but_for_a_number_are_opened_in_listing_order_until_the_right_one():
    plan = [ToolCall("pdf_read_file", {"file_path": "data/invoice_9914.pdf"})]
    assert discover_plan(plan, LOOK_ALIKES) == [
        ToolCall("system_list_files", {"folder": "data"}),
        ToolCall("pdf_read_file", {"file_path": "data/invoice_5546.pdf"}),  # not _paid, bluestem_ or .docx
        plan[0]]
    first = [ToolCall("pdf_read_file", {"file_path": "data/invoice_5546.pdf"})]
    assert tools(discover_plan(first, LOOK_ALIKES)) == ["system_list_files", "pdf_read_file"]
    assert tools(discover_plan([ToolCall("excel_read_file", {"file_path": "data/budget_2024_old.xlsx"})],
                               LOOK_ALIKES)) == ["system_list_files", "excel_read_file"]  # "old" tells them apart


def test_a_number_the_chat_gives_names_its_file_and_a_file_the_plan_reads_anyway_is_not_read_twice():
    plan = [ToolCall("pdf_read_file", {"file_path": "data/invoice_9914.pdf"})]
    assert tools(discover_plan(plan, LOOK_ALIKES, said=["INV-2024-9914"])) == ["system_list_files", "pdf_read_file"]
    both = [*plan, ToolCall("pdf_read_file", {"file_path": "data/invoice_5546.pdf"})]
    assert discover_plan(both, LOOK_ALIKES)[1:] == both


def test_discover_completes_every_plan_of_a_draft():
    read = ToolCall("pdf_read_file", {"file_path": "data/invoice.pdf"})
    answer = ToolCall("system_write_answer", {"text": "1"})
    draft = TaskDraft(family="f", apps=["pdf"], difficulty="easy", description="d", intent="i", subtasks=["s"],
                      evaluation=[], memory=[], query="q", oracle=[read, answer], baseline=[read],
                      misreadings=[Misreading("m1", "distractor", "2", [read, answer])])
    done = discover(draft, FILES)
    assert tools(done.oracle) == ["system_list_files", "pdf_read_file", "system_write_answer"]
    assert tools(done.baseline) == ["system_list_files", "pdf_read_file"]
    assert tools(done.misreadings[0].plan) == tools(done.oracle)
    assert tools(draft.oracle) == ["pdf_read_file", "system_write_answer"]  # the draft given is left alone


def test_the_added_calls_run_and_leave_the_same_office_behind(tmp_path: Path, _sample_office: Path):
    plan = [ToolCall("excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": 77}),
            ToolCall("email_read_email", {"user": "alice", "email_id": "Lunch.eml"}),
            ToolCall("calendar_delete_event", {"user": "alice", "summary": "Team sync"}),
            ToolCall("system_write_answer", {"text": "done"})]
    states = []
    for name, steps in (("given", plan), ("found", discover_plan(plan, Workspace(_sample_office).list_files()))):
        root = Path(shutil.copytree(_sample_office, tmp_path / name))
        ws = Workspace(root, now=NOW)
        results = default_registry().run(ws, [(c.tool, c.args) for c in steps])
        assert all(r.ok for r in results), [r.observation for r in results if not r.ok]
        states.append(Snapshot.of(root).files)
    assert len(discover_plan(plan, Workspace(_sample_office).list_files())) == len(plan) + 4
    assert states[0] == states[1] and states[0] != Snapshot.of(_sample_office).files


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("discovery") / "ds"
    build(out, 12, BuildConfig(seed=3, days=2, utterances_per_day=12))
    return task_records(out)


def test_every_built_plan_finds_what_it_opens_before_it_opens_it(records):
    assert len(records) == 12
    for record in records:
        for plan in [record["oracle"], record["baseline"]] + [m["plan"] for m in record["misreadings"]]:
            folders, mailboxes = set(), set()
            for call in plan:
                args = call["args"]
                if call["tool"] == "system_list_files":
                    folders.add(args.get("folder", ""))
                elif call["tool"] == "email_list_emails":
                    mailboxes.add(args["user"])
                elif call["tool"] == "email_read_email":
                    assert args["user"] in mailboxes, (record["id"], plan)
                elif call["tool"].endswith("_read_file"):
                    assert args["file_path"].rsplit("/", 1)[0] in folders, (record["id"], plan)
