"""``homer show``: one task readable in the terminal, and the newcomer's one-line errors (the command
line run in this process, ``homer_cli``; its help from the console script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks
from orchestrator.build import build
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import HOMER, homer_here

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "officebench-sample"


def homer(*args: object) -> subprocess.CompletedProcess:
    proc = homer_here(*args)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def homer_child(*args: object) -> subprocess.CompletedProcess:
    """The console script as a child process: the help a terminal shows, from a fresh interpreter."""
    proc = subprocess.run([str(HOMER), *map(str, args)], check=False, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("show") / "ds"
    assert build(out, 2, BuildConfig(seed=9, days=2, utterances_per_day=14), workers=1).accepted == 2
    return out


def test_show_puts_each_memory_piece_beside_the_turns_that_say_it(dataset):
    task = next(iter(iter_tasks(dataset)))
    record = task.record
    proc = homer("show", dataset, task.id)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert record["intent"] in out and record["description"] in out
    for piece in record["memory"]:
        assert f"{piece['id']} [{piece['kind']}]" in out
    evidence = [(s["day"], n + 1, t["text"]) for s in record["dialogue"] for n, t in enumerate(s["turns"])
                if t.get("evidence")]
    assert evidence
    for day, number, text in evidence:
        assert f"day {day} turn {number} (evidence" in out and text in out
    assert out.count("evaluate_") >= len(record["evaluation"])
    assert f"testbed ({len(list((task.folder / 'testbed').rglob('*.*')))} file(s))" in out
    for step in record["oracle"]:
        assert step["tool"] in out


def test_show_json_and_one_day(dataset):
    task = next(iter(iter_tasks(dataset)))
    view = json.loads(homer("show", dataset, task.id, "--json").stdout)
    assert view["id"] == task.id and len(view["memory"]) == len(task.record["memory"])
    assert all(mark["context"] for piece in view["memory"] for mark in piece["turns"])
    day = json.loads(homer("show", dataset, task.id, "--day", 2, "--json").stdout)
    assert day["day"] == 2 and len(day["turns"]) == len(task.record["dialogue"][1]["turns"])
    text = homer("show", dataset, task.id, "--day", 1).stdout
    assert text.startswith("day 1 (") and "[evidence:" in text + homer("show", dataset, task.id, "--day", 2).stdout


@pytest.mark.parametrize("task_id, message", [("neo-99999", "no such task"), ("../ds", "not a task id"),
                                              (".", "not a task id")])
def test_show_refuses_an_unknown_or_odd_task_id(dataset, task_id, message):
    proc = homer("show", dataset, task_id)
    assert proc.returncode == 2 and message in proc.stderr and proc.stderr.count("\n") == 1


def test_show_refuses_a_missing_day(dataset):
    task = next(iter(iter_tasks(dataset)))
    proc = homer("show", dataset, task.id, "--day", 9)
    assert proc.returncode == 2 and "has no such day (days: 1, 2)" in proc.stderr


def test_a_seed_folder_is_named_as_one_and_regenerate_is_pointed_to(tmp_path):
    for args in (("stats", SAMPLE), ("verify", SAMPLE), ("show", SAMPLE, "x"),
                 ("eval", SAMPLE, "--agent", "none", "--mode", "long-context", "--out", tmp_path / "run")):
        proc = homer(*args)
        assert proc.returncode == 2 and "an OfficeBench seed folder, not a dataset" in proc.stderr
        assert "homer regenerate --seeds" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_regenerate_refuses_a_folder_without_seeds(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = homer("regenerate", "--seeds", tmp_path / "empty", "--out", tmp_path / "out")
    assert proc.returncode == 2 and "no OfficeBench subtask could be loaded" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_oracle_agent_needs_oracle_plans(tmp_path):
    plus = tmp_path / "plus"
    assert homer("regenerate", "--seeds", SAMPLE, "--out", plus, "--days", 2).returncode == 0
    proc = homer("eval", plus, "--agent", "oracle", "--mode", "long-context", "--out", tmp_path / "run")
    assert proc.returncode == 2 and "has an oracle plan to replay" in proc.stderr
    assert not (tmp_path / "run").exists()
    stats = homer("stats", plus).stdout
    assert "families: ?" not in stats
    assert "1 days" not in (plus / "README.md").read_text()
    first = min(p.name for p in (plus / "tasks").iterdir())
    shown = homer("show", plus, first).stdout.splitlines()[0]
    # a seed task has no family nor difficulty: neither is printed as "None"
    assert "None" not in shown and shown.startswith(f"{first} (plus, seed task, apps: ") and shown.endswith(")")


def test_resume_names_the_settings_that_differ(tmp_path):
    assert homer("build", "--out", tmp_path / "ds", "--n", 1, "--days", 2, "--utterances", 12).returncode == 0
    proc = homer("build", "--out", tmp_path / "ds", "--n", 1, "--days", 3, "--utterances", 12, "--seed", 4, "--resume")
    assert proc.returncode == 2
    assert "--days: 2 then, 3 now" in proc.stderr and "--seed: 0 then, 4 now" in proc.stderr


def test_help_is_plain_and_loads_no_file_format_library():
    proc = homer_child("--help")
    assert proc.returncode == 0 and "<bool>" not in proc.stdout
    # how fast it starts is measured by bench/cli_start.py; what it must not import is checked here
    probe = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['homer', '--help']\n"
                            "from orchestrator.cli import main\n"
                            "try:\n    main()\nexcept SystemExit:\n    pass\n"
                            "print(sorted(m for m in ('openpyxl', 'docx', 'pypdf', 'fpdf', 'icalendar', 'langgraph', "
                            "'openai') if m in sys.modules))"], capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip().splitlines()[-1] == "[]", probe.stdout + probe.stderr
    flags = homer_child("build", "--help").stdout
    assert "--resume " in flags and "<bool>" not in flags
    assert homer_child("build", "-h").stdout == flags and homer_child("-h").stdout == proc.stdout
    version = homer_child("--version")
    assert version.returncode == 0 and version.stdout.startswith("homer (homeragents) ")
    assert "--mode <str>" in homer_child("eval", "-h").stdout and "[required]" not in homer_child("eval", "-h").stdout.split(
        "--mode")[1].split("--")[0]  # --mode defaults to long-context, as probe's does


def test_export_to_an_unwritable_folder_is_one_line(dataset):
    proc = homer("export", dataset, "--officebench", "/proc/no-such/x")
    assert proc.returncode == 2 and "cannot write there" in proc.stderr and proc.stderr.count("\n") == 1


def test_show_refuses_a_symlinked_tasks_folder(tmp_path, dataset):
    import shutil

    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "tasks").symlink_to(dataset / "tasks")
    task = next(iter(iter_tasks(dataset)))
    proc = homer("show", fake, task.id)
    assert proc.returncode == 2 and "is a symlink; refused" in proc.stderr
    shutil.rmtree(fake)


def test_show_strips_terminal_escapes_and_survives_odd_fields(tmp_path, dataset):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    task = next(iter(iter_tasks(copy)))
    record = dict(task.record, intent="\x1b]0;owned\x07 read this")
    (task.folder / "task.json").write_text(json.dumps(record))
    proc = homer("show", copy, task.id)
    assert proc.returncode == 0 and "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "]0;owned read this" in proc.stdout
    # odd fields: one line naming the file and the first bad field, no traceback
    (task.folder / "task.json").write_text(json.dumps(dict(record, user="bob", apps=[1, 2], dialogue=5)))
    proc = homer("show", copy, task.id)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{task.folder / 'task.json'}: apps.0: Input should be" in proc.stderr


def test_verify_refuses_a_dataset_of_hostile_records_without_loading_the_gates(tmp_path):
    """A record refused as it is read needs none of the gates' modules: verify says so per task and
    ends without them (a refusal in a fraction of a second, not the gates' start-up)."""
    import subprocess
    import sys

    tasks = tmp_path / "ds" / "tasks" / "neo-00000"
    tasks.mkdir(parents=True)
    (tasks / "task.json").write_text("[" + "[0, 0]," * 200_000 + "[0, 0]]")
    probe = ("import sys; from typer.testing import CliRunner; from orchestrator.cli import app; "
             "r = CliRunner().invoke(app, ['verify', sys.argv[1]]); print(r.output); "
             "print('gates loaded' if 'verifier.gates' in sys.modules else 'gates not loaded'); sys.exit(r.exit_code)")
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "ds")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "FAIL neo-00000" in proc.stdout and "lists, objects and items" in proc.stdout
    assert "no task passed its schema" in proc.stdout and "gates not loaded" in proc.stdout
