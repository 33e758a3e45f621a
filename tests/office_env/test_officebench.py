"""Importing OfficeBench task folders: ``tasks/<apps>-<k>/subtasks/<i>.json`` next to ``testbed/``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from office_env import Workspace, evaluate_criteria, load_officebench
from office_env.formats import xlsx_io

from tests.support.records import write_json

EMAIL_CHECK = {"function": "evaluate_contain", "args": {"doc_type": "email", "username": "Bob", "keywords": ["meeting"]}}


def subtask(**overrides) -> dict:
    data = {"username": "Alice", "date": "2020-05-01", "weekday": "Friday", "time": "10:00 AM",
            "task": "Email Bob about the meeting.", "evaluation": [EMAIL_CHECK]}
    data.update(overrides)
    return data


def make_task(tasks: Path, folder: str, subtasks: dict[str, dict | str], *, testbed: bool = True,
              reference: dict[str, bytes] | None = None) -> Path:
    """One task folder; a str subtask is written as raw text (to make broken files)."""
    task = tasks / folder
    (task / "subtasks").mkdir(parents=True)
    for name, content in subtasks.items():
        path = task / "subtasks" / f"{name}.json"
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            write_json(path, content)
    if testbed:
        (task / "testbed" / "data").mkdir(parents=True)
        (task / "testbed" / "data" / "readme.txt").write_text("hello\n", encoding="utf-8")
    if reference is not None:
        (task / "reference").mkdir()
        for name, data in reference.items():
            (task / "reference" / name).write_bytes(data)
    return task


EXACT = {"function": "evaluate_exact_match",
         "args": {"doc_type": "xlsx", "result_file": "data/out.xlsx", "expected_file": "../../../../reference/expected.xlsx"}}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A clean OfficeBench-like checkout with 1-, 2- and 3-app tasks and one reference folder."""
    root = tmp_path / "OfficeBench"
    tasks = root / "tasks"
    make_task(tasks, "1-1", {"0": subtask(), "10": subtask(task="Tenth."), "2": subtask(task="Second.", time="2:30 PM")})
    make_task(tasks, "1-10", {"0": subtask(date="2021-02-28", weekday="sunday", time="23:05")})
    make_task(tasks, "1-2", {"0": subtask(evaluation=[EXACT])},
              reference={"expected.xlsx": xlsx_io.build([["a", 1]])})
    make_task(tasks, "2-3", {"0": subtask(evaluation=[EMAIL_CHECK, {"function": "evaluate_file_exist",
                                                                     "args": {"file": "data/readme.txt"}}])})
    make_task(tasks, "3-1", {"0": subtask(username="Carol")})
    (tasks / "README.md").write_text("not a task\n", encoding="utf-8")
    (tasks / ".cache").mkdir()
    return root


def test_load_counts_ids_and_fields(checkout: Path):
    report = load_officebench(checkout)
    assert report.ok, report.problems
    assert report.folders == 5
    assert report.subtask_files == 7
    # folders in numeric order (1-2 before 1-10), subtasks in numeric order (2 before 10)
    assert [t.id for t in report.tasks] == ["1-1/0", "1-1/2", "1-1/10", "1-2/0", "1-10/0", "2-3/0", "3-1/0"]
    assert report.by_app_count() == {1: 5, 2: 1, 3: 1}
    assert [t.app_count for t in report.tasks] == [1, 1, 1, 1, 1, 2, 3]

    first = report.tasks[0]
    tasks = checkout / "tasks"
    assert first.username == "Alice" and first.instruction == "Email Bob about the meeting."
    assert first.evaluation == [EMAIL_CHECK]
    assert first.folder == tasks / "1-1"
    assert first.subtask_file == tasks / "1-1" / "subtasks" / "0.json"
    assert first.testbed == tasks / "1-1" / "testbed"
    assert first.reference is None
    assert first.to_subtask_json() == subtask()
    assert report.tasks[-1].username == "Carol"


def test_now_combines_date_and_time(checkout: Path):
    by_id = {t.id: t for t in load_officebench(checkout).tasks}
    assert by_id["1-1/0"].now == datetime(2020, 5, 1, 10, 0)
    assert by_id["1-1/2"].now == datetime(2020, 5, 1, 14, 30)
    assert by_id["1-10/0"].now == datetime(2021, 2, 28, 23, 5)


def test_reference_folder_is_mapped(checkout: Path):
    by_id = {t.id: t for t in load_officebench(checkout).tasks}
    assert by_id["1-2/0"].reference == checkout / "tasks" / "1-2" / "reference"
    assert by_id["1-2/0"].evaluation == [EXACT]
    assert by_id["2-3/0"].reference is None


def test_checkout_tasks_folder_and_single_task_are_accepted(checkout: Path):
    ids = [t.id for t in load_officebench(checkout).tasks]
    from_tasks = load_officebench(checkout / "tasks")
    assert from_tasks.ok and [t.id for t in from_tasks.tasks] == ids
    single = load_officebench(str(checkout / "tasks" / "2-3"))
    assert single.ok
    assert single.folders == 1
    assert [t.id for t in single.tasks] == ["2-3/0"]
    assert single.by_app_count() == {2: 1}


def test_missing_path_is_one_problem(tmp_path: Path):
    report = load_officebench(tmp_path / "nowhere")
    assert not report.ok and report.tasks == []
    assert [(p.field, p.file) for p in report.problems] == [("path", str(tmp_path / "nowhere"))]


@pytest.mark.parametrize(
    "content, field, words",
    [
        ('{"username": "Alice",\n  "date": ,\n}', "json", "line 2 column"),
        ({k: v for k, v in subtask().items() if k != "task"}, "task", "is missing"),
        (subtask(task=""), "task", "non-empty"),
        (subtask(date="2020-13-45"), "date", "'2020-13-45' is not a real date"),
        (subtask(date="May 1"), "date", "does not match"),
        (subtask(time="25 o'clock"), "time", "\"25 o'clock\" is not a time"),
        (subtask(time="25:00"), "time", "is not a time"),
        (subtask(weekday="Funday"), "weekday", "'Funday'"),
        (subtask(evaluation=[{"function": "evaluate_teleport", "args": {}}]), "evaluation[0].function",
         "unknown function 'evaluate_teleport'"),
        (subtask(evaluation=[]), "evaluation", "is empty"),
        (subtask(evaluation=[EMAIL_CHECK, {"function": "evaluate_file_exist", "args": {"file": "/etc/passwd"}}]),
         "evaluation[1].args.file", "absolute"),
        (subtask(evaluation=[{"function": "evaluate_file_exist", "args": {"file": "../../etc/passwd"}}]),
         "evaluation[0].args.file", "points outside the testbed"),
        (subtask(evaluation="evaluate_contain"), "evaluation", "not of type 'array'"),
        ([subtask()], "(top level)", "not of type 'object'"),
    ],
)
def test_bad_subtask_is_one_problem_and_the_others_load(tmp_path: Path, content, field, words):
    tasks = tmp_path / "tasks"
    make_task(tasks, "1-1", {"0": subtask(), "1": content, "2": subtask(task="After the bad one.")},
              reference={"expected.xlsx": xlsx_io.build([["a"]])})
    make_task(tasks, "2-1", {"0": subtask()})
    report = load_officebench(tmp_path)
    assert len(report.problems) == 1, report.problems
    problem = report.problems[0]
    bad_file = str(tasks / "1-1" / "subtasks" / "1.json")
    assert problem.file == bad_file
    assert problem.field == field
    assert words in problem.message
    assert str(problem) == f"{bad_file}: {field}: {problem.message}"
    assert [t.id for t in report.tasks] == ["1-1/0", "1-1/2", "2-1/0"]
    assert report.subtask_files == 4
    assert not report.ok


def test_non_utf8_subtask_is_reported(tmp_path: Path):
    tasks = tmp_path / "tasks"
    task = make_task(tasks, "1-1", {"0": subtask()})
    (task / "subtasks" / "1.json").write_bytes(b'{"task": "caf\xe9"}')
    report = load_officebench(tasks)
    assert [(p.field, p.file) for p in report.problems] == [("file", str(task / "subtasks" / "1.json"))]
    assert [t.id for t in report.tasks] == ["1-1/0"]


@pytest.mark.parametrize(
    "reference, words",
    [({"other.xlsx": b"x"}, "expected.xlsx is missing from reference/"), (None, "needs a reference/ folder")],
)
def test_missing_expected_file_is_a_warning_and_the_task_loads(tmp_path: Path, reference, words):
    tasks = tmp_path / "tasks"
    task = make_task(tasks, "1-1", {"0": subtask(), "1": subtask(evaluation=[EMAIL_CHECK, EXACT])}, reference=reference)
    report = load_officebench(tasks)
    assert report.ok
    assert [t.id for t in report.tasks] == ["1-1/0", "1-1/1"]
    assert len(report.warnings) == 1
    warning = report.warnings[0]
    assert warning.file == str(task / "subtasks" / "1.json")
    assert warning.field == "evaluation[1].args.expected_file"
    assert words in warning.message
    # and scoring that task fails the criterion with a reason instead of raising
    seed = report.tasks[1]
    ws = seed.copy_testbed(tmp_path / "run")
    ws.write_bytes("data/out.xlsx", xlsx_io.build([["a", 1]]))
    result = evaluate_criteria(ws, seed.evaluation, seed.reference).results[1]
    assert not result.passed
    assert "reference/expected.xlsx" in result.reason
    assert ("missing" if reference else "reference folder") in result.reason


def test_misplaced_argument_is_moved_into_args(tmp_path: Path):
    tasks = tmp_path / "tasks"
    make_task(tasks, "1-1", {"0": subtask(evaluation=[
        {"function": "evaluate_contain", "file": "data/readme.txt", "args": {"doc_type": "txt", "keywords": ["hello"]}},
        {"function": "evaluate_file_exist", "file": "data/other.txt", "args": {"file": "data/readme.txt"}},
    ])})
    report = load_officebench(tasks)
    assert report.ok, report.problems
    assert report.tasks[0].evaluation == [
        {"function": "evaluate_contain", "args": {"doc_type": "txt", "keywords": ["hello"], "file": "data/readme.txt"}},
        {"function": "evaluate_file_exist", "args": {"file": "data/readme.txt"}},
    ]


def test_badly_named_folder_is_reported_and_skipped(tmp_path: Path):
    tasks = tmp_path / "tasks"
    make_task(tasks, "foo", {"0": subtask()})
    make_task(tasks, "1-1", {"0": subtask()})
    report = load_officebench(tasks)
    assert [(p.field, p.file) for p in report.problems] == [("folder", str(tasks / "foo"))]
    assert "<apps>-<k>" in report.problems[0].message
    assert [t.id for t in report.tasks] == ["1-1/0"]
    assert report.folders == 1


def test_single_badly_named_task_folder(tmp_path: Path):
    task = make_task(tmp_path, "mytask", {"0": subtask()})
    report = load_officebench(task)
    assert [(p.field, p.file) for p in report.problems] == [("folder", str(task))]
    assert report.tasks == []


def test_task_folder_without_testbed_is_an_empty_office(tmp_path: Path):
    tasks = tmp_path / "tasks"
    make_task(tasks, "1-1", {"0": subtask(evaluation=[{"function": "evaluate_file_not_exist",
                                                       "args": {"file": "data/readme.txt"}}])}, testbed=False)
    make_task(tasks, "1-2", {"0": subtask()})
    (tasks / "1-3").mkdir()  # no subtasks/ folder: that is a problem
    report = load_officebench(tasks)
    assert [(p.field, p.file) for p in report.problems] == [("subtasks", str(tasks / "1-3"))]
    assert "missing" in report.problems[0].message
    assert [t.id for t in report.tasks] == ["1-1/0", "1-2/0"]
    assert report.subtask_files == 2

    seed = report.tasks[0]
    ws = seed.copy_testbed(tmp_path / "scratch")
    assert ws.list_files() == []
    assert ws.now == seed.now
    assert evaluate_criteria(ws, seed.evaluation).passed
    # a real testbed is copied, not shared
    other = report.tasks[1].copy_testbed(tmp_path / "scratch2")
    assert other.list_files() == ["data/readme.txt"] and other.root != report.tasks[1].testbed.resolve()


def test_loaded_criteria_score_their_testbed(tmp_path: Path):
    """A loaded seed task's criteria run against its own testbed and reference/."""
    tasks = tmp_path / "tasks"
    expected = xlsx_io.build([["a", 1]])
    task = make_task(tasks, "1-1", {"0": subtask(evaluation=[EXACT])}, reference={"expected.xlsx": expected})
    seed = load_officebench(tasks).tasks[0]
    ws = Workspace(seed.testbed, now=seed.now)
    report = evaluate_criteria(ws, seed.evaluation, seed.reference)
    assert not report.passed and "data/out.xlsx" in report.results[0].reason
    (task / "testbed" / "data" / "out.xlsx").write_bytes(expected)
    assert evaluate_criteria(ws, seed.evaluation, seed.reference).passed
    assert json.loads(seed.subtask_file.read_text(encoding="utf-8")) == seed.to_subtask_json()


def test_a_folder_without_tasks_is_a_problem(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    report = load_officebench(tmp_path / "empty")
    assert report.tasks == []
    assert [(p.field, p.file) for p in report.problems] == [("tasks", str(tmp_path / "empty"))]
