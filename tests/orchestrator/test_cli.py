"""The ``homer`` command line's exit codes and what it prints (run in this process: ``homer_cli``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from office_env.formats import xlsx_io
from office_env.sample import write_sample_office as write_office

from tests.support.homer_cli import HOMER, homer_here
from tests.support.records import write_json

pytestmark = pytest.mark.slow


def homer(*args: str | Path, cwd: Path):
    proc = homer_here(*args, cwd=cwd)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


def homer_child(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    """The console script as a child process: a fresh interpreter whose scoring worker loads the
    file libraries within its time budget, as a user's run does."""
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
    proc = subprocess.run([str(HOMER), *map(str, args)], check=False, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def subtask(evaluation: list, **overrides) -> dict:
    return {"username": "Alice", "date": "2020-05-01", "weekday": "Friday", "time": "10:00 AM",
            "task": "Do the thing.", "evaluation": evaluation, **overrides}


MAIL = {"function": "evaluate_contain", "args": {"doc_type": "email", "username": "Bob", "keywords": ["thanks"]}}


EXACT = {"function": "evaluate_exact_match", "args": {"doc_type": "xlsx", "result_file": "data/out.xlsx",
                                                   "expected_file": "../../../../reference/expected.xlsx"}}


def make_tree(root: Path, bad_date: bool = False) -> Path:
    """tasks/1-1 (two subtasks), tasks/2-4 (expected file missing: a warning) and tasks/3-1."""
    tasks = root / "tasks"
    layout = {"1-1": [subtask([MAIL]), subtask([MAIL], date="2020-13-45" if bad_date else "2020-05-02")],
              "2-4": [subtask([MAIL, EXACT])], "3-1": [subtask([MAIL])]}
    for folder, items in layout.items():
        (tasks / folder / "testbed" / "data").mkdir(parents=True)
        for index, item in enumerate(items):
            write_json(tasks / folder / "subtasks" / f"{index}.json", item)
    return root


def test_check_fails_on_a_missing_reference_then_passes_once_it_is_there(tmp_path: Path):
    make_tree(tmp_path / "OfficeBench")
    proc = homer("officebench", "check", tmp_path / "OfficeBench", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 problem(s), 1 missing reference(s)" in proc.stdout
    assert "loaded 4 of 4 subtasks from 3 task folders (1 app: 2, 2 apps: 1, 3 apps: 1)" in proc.stdout
    assert "problem:" not in proc.stdout
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1
    assert str(Path("2-4") / "subtasks" / "0.json") in warnings[0]
    assert "evaluation[1].args.expected_file" in warnings[0] and "reference/" in warnings[0]
    reference = tmp_path / "OfficeBench" / "tasks" / "2-4" / "reference"
    reference.mkdir()
    (reference / "expected.xlsx").write_bytes(xlsx_io.build([["a"]]))
    proc = homer("officebench", "check", tmp_path / "OfficeBench", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning:" not in proc.stdout


def test_check_reports_problems(tmp_path: Path):
    make_tree(tmp_path, bad_date=True)
    (tmp_path / "tasks" / "misc").mkdir()
    proc = homer("officebench", "check", "tasks", cwd=tmp_path)
    assert proc.returncode == 1
    assert "loaded 3 of 4 subtasks from 3 task folders (1 app: 1, 2 apps: 1, 3 apps: 1)" in proc.stdout
    problems = [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]
    bad_file = str(Path("tasks") / "1-1" / "subtasks" / "1.json")
    assert len(problems) == 2
    assert any(bad_file in line and "date: '2020-13-45' is not a real date" in line for line in problems)
    assert any(str(Path("tasks") / "misc") in line and "folder:" in line for line in problems)
    assert "2 problem(s)" in proc.stdout


def test_lint_reports_findings_as_text_and_json_and_exits_1_on_an_error(tmp_path: Path):
    make_tree(tmp_path)
    proc = homer("officebench", "lint", "tasks", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [line] = [line for line in proc.stdout.splitlines() if line.startswith("error: ")]
    assert str(Path("2-4") / "subtasks" / "0.json") in line and "[missing_reference]" in line
    assert "linted 4 of 4 subtasks: 1 error(s)" in proc.stdout
    proc = homer("officebench", "lint", "tasks", "--json", cwd=tmp_path)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["errors"] == 1 and report["counts"]["missing_reference"] == 1
    [finding] = [f for f in report["findings"] if f["severity"] == "error"]
    assert finding["task"] == "2-4/0" and finding["field"] == "evaluation[1].args.expected_file"
    (tmp_path / "tasks" / "2-4" / "reference").mkdir()
    (tmp_path / "tasks" / "2-4" / "reference" / "expected.xlsx").write_bytes(xlsx_io.build([["a"]]))
    proc = homer("officebench", "lint", "tasks", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "0 error(s)" in proc.stdout


def test_check_missing_path(tmp_path: Path):
    proc = homer("officebench", "check", tmp_path / "absent", cwd=tmp_path)
    assert proc.returncode == 2
    assert "error:" in proc.stderr and "absent" in proc.stderr and "does not exist" in proc.stderr


@pytest.fixture
def criteria(tmp_path: Path) -> Path:
    return write_json(tmp_path / "criteria.json", [
        {"function": "evaluate_contain", "args": {"doc_type": "pdf", "file": "data/invoice.pdf", "keywords": ["12500"]}},
        {"function": "evaluate_excel_cell_value", "args": {"file": "data/scores.xlsx",
                                                           "matches": [{"row": 3, "col": 3, "value": "Done"}]}},
    ])


def test_score_failing_criterion_then_passing(testbed: Path, criteria: Path, ws, registry, tmp_path: Path):
    proc = homer("score", testbed, "--criteria", criteria, cwd=tmp_path)
    assert proc.returncode == 1
    assert "PASS [0] evaluate_contain" in proc.stdout
    fail = [line for line in proc.stdout.splitlines() if line.startswith("FAIL [1]")]
    assert len(fail) == 1 and "data/scores.xlsx" in fail[0] and "(3, 3)" in fail[0] and "'Open'" in fail[0]
    assert "1/2 criteria passed: task FAILED" in proc.stdout

    assert registry.call(ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 3, "col": 3, "value": "Done"}).ok
    proc = homer("score", testbed, "-c", criteria, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "2/2 criteria passed: task PASSED" in proc.stdout


def test_score_json_output(testbed: Path, criteria: Path, tmp_path: Path):
    proc = homer("score", testbed, "--criteria", criteria, "--json", cwd=tmp_path)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["passed"] is False
    assert [(r["index"], r["function"], r["passed"]) for r in report["results"]] == [
        (0, "evaluate_contain", True), (1, "evaluate_excel_cell_value", False)]
    assert "data/scores.xlsx" in report["results"][1]["reason"]


def test_score_under_officebench_semantics(testbed: Path, tmp_path: Path):
    (testbed / "data" / "answer.txt").write_text("Orders in 2012: 7\n", encoding="utf-8")
    items = write_json(tmp_path / "c.json", [
        {"function": "evaluate_contain", "args": {"doc_type": "txt", "file": "data/answer.txt", "keywords": ["12"]}}])
    assert homer("score", testbed, "--criteria", items, cwd=tmp_path).returncode == 1
    proc = homer("score", testbed, "--criteria", items, "--semantics", "officebench", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "PASS [0] evaluate_contain: passes under OfficeBench's rules" in proc.stdout
    answer = write_json(tmp_path / "a.json", [{"function": "evaluate_answer", "args": {"number": 7}}])
    assert homer("score", testbed, "--criteria", answer, cwd=tmp_path).returncode == 0
    proc = homer("score", testbed, "--criteria", answer, "--semantics", "officebench", cwd=tmp_path)
    assert proc.returncode == 1 and "does not exist in OfficeBench (NameError)" in proc.stdout
    proc = homer("score", testbed, "--criteria", answer, "--semantics", "strict", cwd=tmp_path)
    assert proc.returncode == 2 and "--semantics 'strict': must be one of homer, officebench" in proc.stderr


def test_score_reads_an_ambiguous_date_in_the_office_order(testbed: Path, tmp_path: Path):
    from office_env.synthesis.world import make_world

    (testbed / "data" / "answer.txt").write_text("Notice due by 04/05/2025.\n", encoding="utf-8")
    evaluation = [{"function": "evaluate_answer", "args": {"keywords": ["2025-05-04"]}}]
    chicago = next(s for s in range(500) if make_world(s).day_first is False)  # a month-first office: 5 April
    task = write_json(tmp_path / "task.json", {"evaluation": evaluation, "provenance": {"world_seed": chicago}})
    bare = write_json(tmp_path / "bare.json", evaluation)
    proc = homer("score", testbed, "--criteria", task, "--initial", testbed, cwd=tmp_path)
    assert proc.returncode == 1 and "lacks '2025-05-04'" in proc.stdout
    assert homer("score", testbed, "--criteria", task, "--initial", testbed, "--date-order", "day",
                 cwd=tmp_path).returncode == 0
    assert homer("score", testbed, "--criteria", bare, cwd=tmp_path).returncode == 0  # no office: either order
    assert homer("score", testbed, "--criteria", bare, "--date-order", "month", cwd=tmp_path).returncode == 1
    proc = homer("score", testbed, "--criteria", bare, "--date-order", "ymd", cwd=tmp_path)
    assert proc.returncode == 2 and "--date-order 'ymd': must be one of" in proc.stderr


def test_score_invalid_criteria(testbed: Path, tmp_path: Path):
    bad = write_json(tmp_path / "bad.json", {"evaluation": [
        {"function": "evaluate_teleport", "args": {}},
        {"function": "evaluate_file_exist", "args": {"file": "../../etc/passwd"}},
    ]})
    proc = homer("score", testbed, "--criteria", bad, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"invalid: {bad}: evaluation[0].function: unknown function 'evaluate_teleport'",
        f"invalid: {bad}: evaluation[1].args.file: '../../etc/passwd' points outside the testbed "
        "(only ../reference/ and ../cache/<i>/testbed/ are understood)",
    ]


@pytest.mark.parametrize(
    "content, words",
    [
        ('[{"function": "evaluate_file_exist",\n "args": {"file": }}]', "invalid JSON at line 2 column"),
        ('{"task": "no criteria here"}', "evaluation: missing"),
    ],
)
def test_score_unreadable_criteria_file(testbed: Path, tmp_path: Path, content: str, words: str):
    file = tmp_path / "criteria.json"
    file.write_text(content, encoding="utf-8")
    proc = homer("score", testbed, "--criteria", file, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {file}: ") and words in proc.stderr


def test_score_missing_testbed(criteria: Path, tmp_path: Path):
    proc = homer("score", tmp_path / "no-testbed", "--criteria", criteria, cwd=tmp_path)
    assert proc.returncode == 2
    assert "error:" in proc.stderr and "no-testbed" in proc.stderr and "does not exist" in proc.stderr


def test_score_runs_within_its_time_budget(testbed: Path, tmp_path: Path):
    """A testbed that takes longer to score than --task-timeout is reported, not waited on."""
    rows = [["Name", "Score"]] + [[f"person {i}", i] for i in range(20000)]
    (testbed / "data" / "big.xlsx").write_bytes(xlsx_io.build(rows))
    items = write_json(tmp_path / "big.json", [{"function": "evaluate_contain", "args": {
        "doc_type": "xlsx", "file": "data/big.xlsx", "keywords": ["person 19999"]}}])
    proc = homer_child("score", testbed, "--criteria", items, "--task-timeout", "0.05", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {items}: scoring {testbed} failed (error: timeout (over the 0.05 s time budget))")
    proc = homer("score", testbed, "--criteria", items, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1/1 criteria passed" in proc.stdout
    assert homer("score", testbed, "--criteria", items, "--task-memory", "10", cwd=tmp_path).returncode == 2


def test_score_subtask_file_finds_reference_folder(tmp_path: Path):
    task = tmp_path / "tasks" / "1-1"
    write_office(task / "testbed")
    (task / "reference").mkdir()
    shutil.copy(task / "testbed" / "data" / "scores.xlsx", task / "reference" / "expected.xlsx")
    subtask_file = write_json(task / "subtasks" / "0.json", subtask([
        {"function": "evaluate_exact_match", "args": {"doc_type": "xlsx", "result_file": "data/scores.xlsx",
                                                      "expected_file": "../../../../reference/expected.xlsx"}}]))
    proc = homer("score", task / "testbed", "--criteria", subtask_file, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS [0] evaluate_exact_match" in proc.stdout

    # --reference overrides the task's own folder
    other = tmp_path / "other-reference"
    other.mkdir()
    (other / "expected.xlsx").write_bytes(xlsx_io.build([["Name", "Score", "Status"], ["Zoe", 1, "Open"]]))
    proc = homer("score", task / "testbed", "--criteria", subtask_file, "--reference", other, "--json", cwd=tmp_path)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)["results"][0]
    assert result["passed"] is False and "(2, 1)" in result["reason"] and "'Zoe'" in result["reason"]


@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT"])
def test_a_full_disk_is_one_line_not_a_traceback(tmp_path, monkeypatch, code):
    """A disk or quota that fills while a command writes ends it with one line naming where, exit 1."""
    import errno

    import orchestrator.build

    target = tmp_path / "out" / "build.json"

    def full(*args, **kwargs):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), str(target))

    monkeypatch.setattr(orchestrator.build, "build", full)
    proc = homer_here("build", "--n", "1", "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error")]  # (the progress line aside)
    assert "Traceback" not in proc.stderr and line.startswith("error: no space left on the device writing ") and str(target) in line and "--resume" in line
    assert f"(under {tmp_path / 'out'}: " in line and re.search(r"about [\d.]+ MiB more needed", line)  # a task's size


@pytest.mark.parametrize(("args", "flag"), [
    (["build", "--task-timeout", "nan"], "--task-timeout nan"), (["build", "--task-timeout", "inf"], "--task-timeout inf"),
    (["build", "--workers", "5000"], "--workers 5000"), (["build", "--task-memory", "-1"], "--task-memory -1"),
    (["eval", ".", "--trials", "100000"], "--trials 100000"), (["probe", ".", "--workers", "0"], "--workers 0"),
    (["fake-llm", "--retry-after", "inf"], "--retry-after inf"), (["fake-llm", "--slots", "1000000000"], "--slots"),
    (["score", ".", "-c", "x.json", "--task-timeout", "nan"], "--task-timeout nan"),
    (["build", "--n", "nan"], "--n nan"), (["build", "--days", "99999999999999999999"], "--days 9"),
    (["build", "--utterances", "1e30"], "--utterances 1e30"), (["eval", ".", "--step-cap", "10000"], "--step-cap"),
    (["probe", ".", "--per-task", "0"], "--per-task 0"), (["compare", ".", ".", "--seed", "-1"], "--seed -1"),
    (["fake-llm", "--noise", "nan"], "--noise nan"), (["review", ".", "--port", "x"], "--port x")])
def test_a_numeric_flag_out_of_its_range_is_one_line_naming_it(tmp_path, args, flag):
    """Nonsense numbers are refused as the command line is read, before any work, naming the flag and
    its range: a NaN timeout once ran "0 attempts" without a word, a huge --days built for ever, a
    negative compare --seed ended in a traceback, and a word where a count goes got click's three
    lines without the range."""
    proc = homer_here(*args, "--out", tmp_path / "out") if args[0] in ("build", "eval", "probe") else \
        homer_here(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert line.startswith(f"error: {flag}") and re.search(r"must be a (whole )?number from \d", line), line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["build", "--n", "1"], ["eval", "DATASET", "--agent", "none"],
                                     ["regenerate", "--seeds", "SEEDS"]])
def test_an_output_folder_that_cannot_be_written_is_one_line_before_any_progress(tmp_path, command):
    """No progress line before the refusal: the folder is checked before the command starts its
    work (and nothing is made on the way)."""
    dataset = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"
    args = [str(dataset) if a == "SEEDS" else str(tmp_path) if a == "DATASET" else a for a in command]
    (tmp_path / "tasks").mkdir()
    plain = tmp_path / "a-file"
    plain.write_text("not a folder")
    for out, says in ((plain, "exists and is not a folder"), (plain / "sub" / "out", "cannot write there")):
        proc = homer_here(*args, "--out", out)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().splitlines() == [f"error: --out {out}: {proc.stderr.split(': ', 2)[-1].strip()}"]
        assert says in proc.stderr
    assert plain.read_text() == "not a folder"


def test_regenerate_holds_days_times_utterances_to_the_turns_a_task_may_hold(tmp_path):
    """As build does: each flag in its range, their product over the cap, one line naming both."""
    from office_env.limits import MAX_DIALOGUE_TURNS
    from orchestrator.cli.common import MAX_DAYS, MAX_UTTERANCES
    from orchestrator.plus import SHAPES

    seeds = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"
    proc = homer_here("regenerate", "--seeds", seeds, "--days", "365", "--utterances", "1000", "--out", tmp_path / "o")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: --days 365 x --utterances 1000: 365,000 turns a history, "
                                                f"over the {MAX_DIALOGUE_TURNS:,} a task may hold"]
    assert not (tmp_path / "o").exists()
    # one flag alone goes with a shape's other size: within the cap whatever the flag says
    assert all(MAX_DAYS * u <= MAX_DIALOGUE_TURNS and d * MAX_UTTERANCES <= MAX_DIALOGUE_TURNS
               for d, u in SHAPES.values())


def test_a_refused_eval_prints_its_one_error_line_and_no_progress(tmp_path):
    """An unknown --task-ids id, or an --out holding an earlier run, is refused before the progress
    starts: the error line alone ("eval: 0 done" once came first)."""
    (tmp_path / "tasks" / "neo-00000").mkdir(parents=True)
    unknown = homer_here("eval", tmp_path, "--agent", "none", "--task-ids", "neo-00007", "--out", tmp_path / "run")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [f"error: --task-ids: no task neo-00007 in {tmp_path}"]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    earlier = homer_here("eval", tmp_path, "--agent", "none", "--out", tmp_path / "run")
    assert earlier.returncode == 2
    (line,) = earlier.stderr.strip().splitlines()
    assert line.startswith(f"error: --out {tmp_path / 'run'}: holds an earlier evaluation run")


def test_every_numeric_flag_is_bounded_and_says_its_range():
    """Each int or float option of every command has the range check (so 'nan', 'inf', a huge or a
    negative number is one line naming the flag and its range) and its help says the range, so
    --help and docs/cli.md show it; the command line's copies of the builder's bounds are its own."""
    import typer

    from orchestrator import roles
    from orchestrator.cli import app, datasets

    def commands(group, prefix):
        for name, command in group.commands.items():
            yield f"{prefix} {name}", command
            if hasattr(command, "commands"):
                yield from commands(command, f"{prefix} {name}")

    numeric = []
    for name, command in commands(typer.main.get_command(app), "homer"):
        for param in command.params:
            if param.param_type_name == "option" and param.bare_type() in ("int", "float"):
                numeric.append(f"{name} {param.opts[0]}")
                assert getattr(param.callback, "__qualname__", "").startswith("in_range."), (name, param.opts)
                assert re.search(r"\d+ to [\d,]+|\d to 8 per core", param.help or ""), (name, param.opts, param.help)
    assert len(numeric) >= 35 and "homer eval --step-cap" in numeric and "homer fake-llm --noise" in numeric
    assert (datasets.BUILD_MAX_TASKS, datasets.BUILD_MIN_DAYS) == (roles.MAX_TASKS, roles.MIN_DAYS)
