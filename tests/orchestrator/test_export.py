"""Export to OfficeBench's folder layout: loadable by the importer and scorable after solving."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from office_env import default_registry, load_officebench
from office_env.evaluation.officebench_semantics import scorer
from office_env.evaluation.reference_state import apply_reference
from office_env.officebench_translate import OFFICEBENCH_FUNCTIONS, to_officebench
from office_env.formats import xlsx_io
from orchestrator.build import build
from orchestrator.plus import regenerate_split
from orchestrator.roles import BuildConfig

from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "ds"
    build(out, 6, BuildConfig(seed=21, days=2, utterances_per_day=10), workers=1)
    return out


def test_export_round_trips_through_the_importer_and_scores_under_both_semantics(dataset: Path, tmp_path: Path):
    target = tmp_path / "ob"
    proc = homer_here("export", str(dataset), "--officebench", str(target))
    assert proc.returncode == 0, proc.stderr
    records = {r["id"]: r for r in (json.loads(p.read_text()) for p in sorted((dataset / "tasks").glob("*/task.json")))}
    report = load_officebench(target)
    assert report.problems == [] and report.warnings == []
    assert len(report.tasks) + proc.stderr.count("warning: left out") == len(records)
    manifest = json.loads((target / "export.json").read_text())
    assert len(manifest["folders"]) == len(report.tasks) >= 0.8 * len(records)  # most tasks whole
    readme = (target / "README.md").read_text()
    assert f"{len(report.tasks)} task(s) exported" in readme and "Right answers OfficeBench's checks will not" in readme
    assert len(manifest["left_out"]) == proc.stderr.count("warning: left out")
    if manifest["left_out"]:  # the list comes after the summary, closed by its count
        assert proc.stderr.splitlines()[-1].startswith(f"{len(manifest['left_out'])} task(s) left out (a criterion")
    for task in report.tasks:
        record = records[manifest["folders"][task.folder.name]]  # every folder maps back to its homer task
        assert task.instruction == record["description"]
        assert {c["function"] for c in task.evaluation} <= OFFICEBENCH_FUNCTIONS
        assert task.username == record["user"]["username"]
        for semantics in ("homer", "officebench"):
            score = scorer(semantics)
            ws = task.copy_testbed(tmp_path / semantics / task.id.replace("/", "_"))
            assert not score(ws, task.evaluation, task.reference).passed
            results = default_registry().run(ws, [(c["tool"], c["args"]) for c in record["oracle"]])
            assert all(r.ok for r in results)
            assert score(ws, task.evaluation, task.reference).passed, (semantics, task.id, record["family"])


def test_translation_keeps_the_meaning_or_says_what_is_lost():
    criteria = [
        {"function": "evaluate_answer", "args": {"number": 15766.74, "tolerance": 0.01}},
        {"function": "evaluate_answer", "args": {"number": 3, "tolerance": 0.5}},
        {"function": "evaluate_calendar_event", "args": {"username": "nora", "summary": "Budget review",
                                                         "start": "2025-03-26 13:00", "end": "2025-03-26 14:00"}},
        {"function": "evaluate_email_sent", "args": {"sender": "nora", "recipient": "malik@example.com",
                                                     "subject_keywords": ["Moved"], "body_keywords": ["13:00"]}},
        {"function": "evaluate_calendar_no_event", "args": {"username": "nora", "summary": "Budget review",
                                                            "start": "2025-03-25 10:00"}},
        {"function": "evaluate_excel_cell_comparator",
         "args": {"file": "data/s.xlsx", "matches": [{"row": 2, "col": 3, "comparator": ">= 90"},
                                                     {"row": 3, "col": 3, "comparator": "in ['A', 'B']"}]}},
        {"function": "evaluate_exact_match", "args": {"doc_type": "docx", "result_file": "data/r.docx",
                                                      "expected_file": "../reference/r.docx"}},
        {"function": "evaluate_excel_cell_value", "args": {"file": "data/s.xlsx", "sheet": "Q2",
                                                           "matches": [{"row": 1, "col": 1, "value": "x"}]}},
        {"function": "evaluate_email_not_sent", "args": {"sender": "nora", "recipient": "omar", "body_keywords": ["13:00"]}},
    ]
    out = to_officebench(criteria)
    assert out.criteria == [
        {"function": "evaluate_contain", "args": {"doc_type": "txt", "file": "data/answer.txt", "keywords": ["15766.74"]}},
        {"function": "evaluate_contain", "args": {"doc_type": "ics", "file": "calendar/nora.ics",
                                                  "keywords": ["Budget", "review", "20250326T130000", "20250326T140000"]}},
        {"function": "evaluate_calendar_no_overlap", "args": {"username": "nora"}},
        {"function": "evaluate_contain", "args": {"doc_type": "email", "username": "malik",
                                                  "keywords": ["Moved", "13:00", "nora"]}},
        # no event of that title at that time: the event's first two lines are not in the file
        {"function": "evaluate_not_contain", "args": {"doc_type": "ics", "file": "calendar/nora.ics",
                                                      "keywords": ["SUMMARY:Budget review\nDTSTART:20250325T100000"]}},
        {"function": "evaluate_excel_cell_comparator",
         "args": {"file": "data/s.xlsx", "matches": [{"row": 2, "col": 3, "comparator": "lambda x: float(x) >= 90"},
                                                     {"row": 3, "col": 3, "comparator": "lambda x: x in ['A', 'B']"}]}},
        {"function": "evaluate_exact_match", "args": {"doc_type": "doc", "result_file": "data/r.docx",
                                                      "expected_file": "../../../../reference/r.docx"}},
        # the wrong person's mailbox must not hold all of the keywords
        {"function": "evaluate_not_contain", "args": {"doc_type": "email", "username": "omar", "keywords": ["13:00"]}},
    ]
    assert [line.split(":")[0] for line in out.lost] == [
        "[1] evaluate_answer", "[7] evaluate_excel_cell_value"]
    # a title the file would escape or fold, or one given as several words, cannot be tied to its event
    for summary in ("Budget, review", "A" * 70, ["Budget", "review"]):
        lost = to_officebench([{"function": "evaluate_calendar_no_event",
                                "args": {"username": "nora", "summary": summary, "start": "2025-03-25 10:00"}}]).lost
        assert [line.split(":")[0] for line in lost] == ["[0] evaluate_calendar_no_event"]
    # a person who has no mailbox and whom the solution does not mail must still have none
    wrong = criteria[8]
    assert to_officebench([wrong], frozenset({"nora"})).criteria == [
        {"function": "evaluate_file_not_exist", "args": {"file": "emails/omar"}}]
    assert to_officebench([wrong], frozenset({"nora"}), frozenset({"omar"})).criteria[0]["function"] == "evaluate_not_contain"
    # homer's "none of these" is one check per keyword there; a number is written as a sheet writes it
    assert to_officebench([{"function": "evaluate_not_contain",
                            "args": {"doc_type": "xlsx", "file": "data/s.xlsx", "keywords": ["Q3 to Q4", "7250.0"]}}]).criteria == [
        {"function": "evaluate_not_contain", "args": {"doc_type": "xlsx", "file": "data/s.xlsx", "keywords": ["Q3 to Q4"]}},
        {"function": "evaluate_not_contain", "args": {"doc_type": "xlsx", "file": "data/s.xlsx", "keywords": ["7250"]}}]
    # a keyword there is text (a number would crash its matching)
    assert to_officebench([{"function": "evaluate_contain", "args": {"doc_type": "txt", "file": "data/a.txt",
                                                                     "keywords": [7250.0, 12.5, 3]}}]).criteria[0][
        "args"]["keywords"] == ["7250", "12.5", "3"]


def test_a_no_event_check_judges_a_calendar_as_homer_does_under_officebench_rules(tmp_path: Path):
    from office_env import Workspace, evaluate_criteria

    original = [{"function": "evaluate_calendar_no_event",
                 "args": {"username": "nora", "summary": "Budget review", "start": "2025-03-25 10:00:00"}}]
    exported = to_officebench(original).criteria
    ws = Workspace(tmp_path, now=datetime(2025, 3, 24, 9, 0))
    (tmp_path / "calendar").mkdir()
    registry = default_registry()

    def verdicts() -> tuple[bool, bool]:
        return evaluate_criteria(ws, original).passed, scorer("officebench")(ws, exported).passed

    assert verdicts() == (True, True)  # no calendar: no such event
    create = {"user": "nora", "summary": "Budget review", "start": "2025-03-25 10:00:00", "end": "2025-03-25 11:00:00"}
    other = {**create, "summary": "Budget reviewed", "start": "2025-03-25 09:00:00", "end": "2025-03-25 09:30:00"}
    assert all(r.ok for r in registry.run(ws, [("calendar_create_event", other)]))
    assert verdicts() == (True, True)  # another title at another time
    assert all(r.ok for r in registry.run(ws, [("calendar_create_event", create)]))
    assert verdicts() == (False, False)  # the event is there
    moved = {**create, "start": "2025-03-26 10:00:00", "end": "2025-03-26 11:00:00"}
    assert all(r.ok for r in registry.run(ws, [("calendar_delete_event", {"user": "nora", "summary": "Budget review"}),
                                               ("calendar_create_event", moved)]))
    assert verdicts() == (True, True)  # moved to another day


def test_refused_answers_and_a_message_s_leave_outs_become_not_contain_checks():
    out = to_officebench([
        {"function": "evaluate_answer", "args": {"number": 2104.68, "tolerance": 0.01, "excludes": [3006.68, 902]}},
        {"function": "evaluate_answer", "args": {"keywords": ["EC-811"], "excludes": ["EC-779"]}},
        {"function": "evaluate_answer", "args": {"number": 3793, "excludes": [79]}},
        {"function": "evaluate_email_sent", "args": {"sender": "nora", "recipient": "malik", "body_keywords": ["Ada"],
                                                     "body_excludes": ["Ben"]}},
    ])
    answer = {"doc_type": "txt", "file": "data/answer.txt"}
    assert out.criteria == [
        {"function": "evaluate_contain", "args": {**answer, "keywords": ["2104.68"]}},
        {"function": "evaluate_not_contain", "args": {**answer, "keywords": ["3006.68"]}},
        {"function": "evaluate_not_contain", "args": {**answer, "keywords": ["902"]}},
        {"function": "evaluate_contain", "args": {**answer, "keywords": ["EC-811"]}},
        {"function": "evaluate_not_contain", "args": {**answer, "keywords": ["EC-779"]}},
        # what the message leaves out, the mailbox must not hold (an older mail naming it: lost on export)
        {"function": "evaluate_contain", "args": {"doc_type": "email", "username": "malik", "keywords": ["Ada", "nora"]}},
        {"function": "evaluate_not_contain", "args": {"doc_type": "email", "username": "malik", "keywords": ["Ben"]}},
    ]
    # "79" is inside "3793" for a text match
    assert [line.split(":")[0] for line in out.lost] == ["[2] evaluate_answer"] and "'79'" in out.lost[0]


def test_a_plus_export_keeps_its_reference_files_and_the_reference_state_passes(tmp_path: Path):
    plus = tmp_path / "plus"
    regenerate_split(SAMPLE, plus, seed=3, days=5, utterances_per_day=20)
    proc = homer_here("export", str(plus), "--officebench", str(tmp_path / "ob"))
    assert proc.returncode == 0, proc.stderr
    check = homer_here("officebench", "check", str(tmp_path / "ob"))
    assert check.returncode == 0, check.stdout
    exported = {t.instruction: t for t in load_officebench(tmp_path / "ob").tasks}
    swap = next(t for d, t in exported.items() if "Swap the rows" in d)
    assert swap.evaluation[0]["args"]["expected_file"] == "../../../../reference/scores_swapped.xlsx"
    for semantics in ("homer", "officebench"):
        ws = swap.copy_testbed(tmp_path / semantics)
        assert not scorer(semantics)(ws, swap.evaluation, swap.reference).passed
        assert apply_reference(ws, swap.evaluation, swap.reference) == [0]
        assert scorer(semantics)(ws, swap.evaluation, swap.reference).passed
    # without its reference/ the exported task can never pass, and check says so
    shutil.rmtree(swap.reference)
    check = homer_here("officebench", "check", str(tmp_path / "ob"))
    assert check.returncode == 1 and "missing reference(s)" in check.stdout


def test_lossy_keeps_a_task_without_what_cannot_be_carried(dataset: Path, tmp_path: Path):
    source = tmp_path / "ds"
    shutil.copytree(dataset, source)
    # a check OfficeBench cannot say (a named sheet), true in every state: a sheet's own header
    for task in sorted((source / "tasks").glob("*/task.json")):
        sheets = sorted((task.parent / "testbed" / "data").glob("*.xlsx"))
        if sheets:
            break
    book = xlsx_io.load(sheets[0], sheets[0].name)
    record = json.loads(task.read_text())
    record["evaluation"].append({"function": "evaluate_excel_cell_value",
                                 "args": {"file": f"data/{sheets[0].name}", "sheet": book.active.title,
                                          "matches": [{"row": 1, "col": 1, "value": book.active.cell(1, 1).value}]}})
    task.write_text(json.dumps(record))
    proc = homer_here("export", str(source), "--officebench", str(tmp_path / "strict"))
    assert proc.returncode == 0
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith(f"warning: left out {record['id']}: ")]
    assert f"[{len(record['evaluation']) - 1}] evaluate_excel_cell_value" in line  # beside any other lost check
    assert line.endswith("(--lossy keeps it without them)")
    proc = homer_here("export", str(source), "--officebench", str(tmp_path / "lossy"), "--lossy")
    assert proc.returncode == 0, proc.stderr
    assert f"warning: exported without some criteria {record['id']}" in proc.stderr
    exported = [t for t in load_officebench(tmp_path / "lossy").tasks if t.instruction == record["description"]]
    assert len(exported) == 1
    assert all(c["args"].get("file") != f"data/{sheets[0].name}" or c["function"] != "evaluate_excel_cell_value"
               for c in exported[0].evaluation)


def test_export_refuses_a_non_empty_target(dataset: Path, tmp_path: Path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x")
    proc = homer_here("export", str(dataset), "--officebench", str(tmp_path / "taken"))
    assert proc.returncode == 2
    assert "not empty" in proc.stderr and "Traceback" not in proc.stderr


def test_exported_time_is_officebench_clock(dataset: Path, tmp_path: Path):
    assert homer_here("export", str(dataset), "--officebench", str(tmp_path / "ob")).returncode == 0
    subtask = json.loads(next((tmp_path / "ob" / "tasks").glob("*/subtasks/0.json")).read_text())
    assert subtask["time"].endswith(("AM", "PM"))
    assert datetime.strptime(subtask["date"], "%Y-%m-%d").strftime("%A") == subtask["weekday"]


@pytest.mark.parametrize("keyword, written, named", [
    ("2025-10-21", "Due 21 October 2025.", "21 October 2025"), ("2025-10-21", "Due Tuesday 21 October.", "Tuesday"),
    ("13:00", "Meet at 1 pm.", "1 pm"), ("12:00", "Meet at 12.00 tomorrow.", "12.00"), ("12:00", "See you at noon.", "noon"),
    ("11:00", "Meet at eleven in the morning.", "eleven in the morning"),
    ("14:15", "Meet at quarter past two.", "quarter past two"),
    ("7500", "We agreed on seventy-five hundred pounds.", "seventy-five hundred"),
    ("7500", "We agreed on seven thousand five hundred pounds.", "seven thousand five hundred"),
    ("budget review", "the Budget\nReview", "Budget\\nReview"),
])
def test_the_natural_forms_the_export_card_names_pass_homer_and_fail_officebench(tmp_path, keyword, written, named):
    """What the OfficeBench export's README says: right answers homer takes that OfficeBench's
    substring checks do not (each form here is named in its table)."""
    from office_env import Workspace
    from orchestrator.officebench_export import NATURAL_FORMS

    assert any(named in forms for _, forms in NATURAL_FORMS)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text(written, encoding="utf-8")
    criteria = [{"function": "evaluate_contain", "args": {"doc_type": "txt", "file": "data/a.txt",
                                                         "keywords": [keyword]}}]
    workspace = Workspace(tmp_path, now=datetime(2025, 10, 20, 9, 0))
    assert scorer("homer")(workspace, criteria, None).passed
    assert not scorer("officebench")(workspace, criteria, None).passed
