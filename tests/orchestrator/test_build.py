"""``homer build`` / ``verify`` / ``stats`` through the command line's entry point.

Builds are small (a few tasks, two days of a dozen utterances) except the one that checks the
default dialogue shape. The module's builds run at once, in child processes forked from the test
process (``homer_forked``: none spends seconds importing the pipeline); a resume that must start
with nothing in memory runs the console script.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from backends.dataset_reader import dataset_identity, iter_tasks
from office_env import validate_criteria
from orchestrator.build import build
from orchestrator.dataset_writer import BUILD, PROGRESS
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_forked, homer_here
from verifier.gates import SCHEMA_DIR

pytestmark = pytest.mark.slow

HOMER = Path(sys.executable).parent / "homer"
SMALL = ("--days", "2", "--utterances", "12")
SEED = 11


def homer(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    assert HOMER.exists(), f"console script missing: {HOMER}"
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
    proc = subprocess.run([str(HOMER), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


def parallel(jobs: dict[str, tuple]) -> dict[str, subprocess.CompletedProcess]:
    """The commands (real builds, each of seconds): the first in this process, which then holds
    every module a build loads, then the others side by side in children forked from it."""
    first, *others = jobs
    done = {first: here(*jobs[first])}
    started = {name: homer_forked(*jobs[name]) for name in others}
    for name, proc in started.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert "Traceback" not in stderr + stdout, stderr + stdout
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    return done


def here(*args: str | Path) -> subprocess.CompletedProcess:
    """The command line in this process (``homer_cli``): for refusals and checks that take a moment,
    where a child process would spend its time importing."""
    proc = homer_here(*args)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def index(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "index.jsonl").read_text(encoding="utf-8").splitlines()]


def records(folder: Path) -> list[dict]:
    return [json.loads((folder / "tasks" / line["id"] / "task.json").read_text(encoding="utf-8"))
            for line in index(folder)]


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """Four builds run side by side: A (workers 1), A again (workers 2), the default dialogue
    shape, and B: another seed, 2-app tasks only, 6 days."""
    root = tmp_path_factory.mktemp("builds")
    jobs = {
        "a": ("build", "--out", root / "a", "--n", "4", "--seed", SEED, *SMALL, "--workers", "1"),
        "a2": ("build", "--out", root / "a2", "--n", "4", "--seed", SEED, *SMALL, "--workers", "2"),
        "default": ("build", "--out", root / "default", "--n", "2", "--seed", "5", "--workers", "1"),
        "b": ("build", "--out", root / "b", "--n", "3", "--seed", SEED + 1, "--apps", "2", "--days", "6",
              "--utterances", "10", "--workers", "1"),
    }
    procs = parallel(jobs)
    for name, proc in procs.items():
        assert proc.returncode == 0, (name, proc.stdout, proc.stderr)
        n = jobs[name][4]
        assert re.search(rf"^built {n} task\(s\) in ", proc.stdout, re.M), (name, proc.stdout)
    return {name: root / name for name in jobs}


# -- the folder ----------------------------------------------------------------------------------

def test_build_writes_the_dataset_layout(built):
    folder = built["a"]
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "attempts.jsonl", "build.json", "index.jsonl",
                                                       "schemas", "tasks"]
    lines = index(folder)
    ids = [line["id"] for line in lines]
    assert len(ids) == 4 and ids == sorted(ids) and len(set(ids)) == 4
    assert sorted(p.name for p in (folder / "tasks").iterdir()) == ids

    schema = json.loads((SCHEMA_DIR / "task.schema.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    assert json.loads((folder / "schemas" / "task.schema.json").read_text(encoding="utf-8")) == schema
    assert json.loads((folder / "schemas" / "criteria.schema.json").read_text(encoding="utf-8"))
    for line, record in zip(lines, records(folder)):
        errors = [e.message for e in validator.iter_errors(record)]
        assert not errors, (line["id"], errors)
        assert record["id"] == line["id"] and record["split"] == "neo"
        assert line["path"] == f"tasks/{line['id']}/task.json"
        assert line["app_count"] == record["app_count"] == len(record["apps"])
        assert line["sessions"] == len(record["dialogue"])
        assert line["utterances"] == sum(len(s["turns"]) for s in record["dialogue"])
        assert validate_criteria(record["evaluation"]) == []
        assert record["provenance"]["seed"] == SEED and record["provenance"]["backend"] == "offline"
        assert all(g["passed"] for g in record["provenance"]["gates"].values())
        testbed = folder / "tasks" / line["id"] / "testbed"
        assert {p.name for p in testbed.iterdir()} >= {"data", "emails", "calendar"}
        assert any((testbed / "data").iterdir())

    info = json.loads((folder / BUILD).read_text(encoding="utf-8"))
    assert info["status"] == "complete" and info["accepted"] == 4
    assert info["config"]["seed"] == SEED and info["config"]["days"] == 2
    attempts = [json.loads(line) for line in (folder / "attempts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [a["index"] for a in attempts] == sorted({a["index"] for a in attempts})
    assert len(attempts) == info["attempts"]
    assert sorted(a["id"] for a in attempts if a["status"] == "accepted") == ids
    assert not (folder / ".work").exists() and not (folder / PROGRESS).exists()


def test_the_tasks_of_a_world_share_its_office_by_hard_links(built, tmp_path):
    """Each testbed file has one name per task of its world and none elsewhere; readers take the
    tasks whole, with the digests a plain copy of the dataset gives."""
    for name in ("a", "a2"):
        folder = built[name]
        lines = index(folder)
        per_world = Counter(line["world"] for line in lines)
        for line, record in zip(lines, records(folder)):
            assert line["world"] == str(record["provenance"]["world_seed"])
            files = [p for p in (folder / "tasks" / line["id"] / "testbed").rglob("*") if p.is_file()]
            assert files and {p.stat().st_nlink for p in files} == {per_world[line["world"]]}
        assert max(per_world.values()) > 1
        assert [t.error for t in iter_tasks(folder)] == [None] * len(lines)
    plain = Path(shutil.copytree(built["a"], tmp_path / "plain"))  # copies every file: no links
    assert {p.stat().st_nlink for p in (plain / "tasks").rglob("*") if p.is_file()} == {1}
    assert dataset_identity(plain)["task_digests"] == dataset_identity(built["a"])["task_digests"]


def expected_rows(folder: Path) -> dict[str, str]:
    """The start of each statistics row (apps, conversations, sessions, utterances) from index.jsonl."""
    lines = index(folder)
    groups = {str(c): [l for l in lines if l["app_count"] == c] for c in sorted({l["app_count"] for l in lines})}
    groups["all"] = lines
    return {label: f"| {label} | {len(group)} | {sum(l['sessions'] for l in group) / len(group):.2f} | "
                    f"{sum(l['utterances'] for l in group) / sum(l['sessions'] for l in group):.1f} |"
            for label, group in groups.items()}


def check_table(text: str, folder: Path) -> None:
    expected = expected_rows(folder)
    rows = [line for line in text.splitlines() if re.match(r"^\| (\d|all) \|", line)]
    assert len(rows) == len(expected), (rows, expected)
    for label, start in expected.items():
        assert any(row.startswith(start) for row in rows), (start, rows)


def test_dataset_card_has_the_statistics_table_and_the_token_counter(built):
    folder = built["a"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Statistics" in card
    check_table(card, folder)
    assert "| all | 4 | 2.00 |" in card
    assert "Tokens are counted with cl100k_base" in card


def test_the_card_a_build_writes_is_the_card_its_records_give(built):
    """A build sums per-task figures its workers computed; recomputing them from the dataset's
    records gives the same card, and none of them leaks into the attempts log."""
    from orchestrator.card import render_card, statistics

    for name in ("a", "a2"):
        folder = built[name]
        info = json.loads((folder / BUILD).read_text(encoding="utf-8"))
        expected = render_card(statistics(sorted(records(folder), key=lambda r: r["id"])), info)
        assert (folder / "README.md").read_text(encoding="utf-8") == expected, name
        assert "cues" not in (folder / "attempts.jsonl").read_text(encoding="utf-8")


def test_the_build_card_sums_the_figures_its_workers_computed(tmp_path, monkeypatch):
    """The build's finish reads no task back: its index and card come from what the workers sent
    (a resumed build's earlier tasks aside)."""
    import orchestrator.build as build_module

    def read_again(folder):
        raise AssertionError(f"{folder}: the finish read back a task the worker had sent figures of")

    monkeypatch.setattr(build_module, "_own_record", read_again)
    summary = build(tmp_path / "out", 2, BuildConfig(seed=SEED, days=2, utterances_per_day=12), workers=1)
    assert summary.accepted == 2 and summary.gameability is not None


def test_default_dialogue_shape(built):
    for record in records(built["default"]):
        now = datetime.strptime(f"{record['now']['date']} {record['now']['time']}", "%Y-%m-%d %H:%M")
        sessions = record["dialogue"]
        assert len(sessions) == 5, record["id"]
        assert [s["day"] for s in sessions] == [1, 2, 3, 4, 5]
        dates = [date.fromisoformat(s["date"]) for s in sessions]
        assert dates == sorted(set(dates)), dates
        assert all(d.weekday() < 5 and d < now.date() for d in dates), (dates, now)
        for s in sessions:
            assert 58 <= len(s["turns"]) <= 88, (record["id"], s["day"], len(s["turns"]))  # 73 +- 20 %
            assert all(t["ts"].startswith(s["date"]) for t in s["turns"])


def test_apps_and_days_options(built):
    lines = index(built["b"])
    assert len(lines) == 3
    for line, record in zip(lines, records(built["b"])):
        assert line["app_count"] == 2 and len(record["apps"]) == 2, record["apps"]
        assert line["sessions"] == 6 and len(record["dialogue"]) == 6
        for s in record["dialogue"]:  # about 10, and more on a day whose task work needs it
            # the task's work: its threads, and a sibling work's exchange that says a near miss of it
            marked = {t.get("thread") for t in s["turns"] if t.get("evidence") or t.get("superseded")
                      or t.get("distractor")}
            task_turns = sum(1 for t in s["turns"] if t.get("thread", "").startswith("t") or
                             (t.get("thread") in marked))
            assert 9 <= len(s["turns"]) <= max(11, task_turns + 4), (len(s["turns"]), task_turns)


def test_app_counts_get_equal_shares_of_the_tasks(built):
    from collections import Counter

    shares = Counter(line["app_count"] for line in index(built["a"]))
    assert set(shares) == {1, 2, 3} and max(shares.values()) - min(shares.values()) <= 1, shares


# -- determinism -----------------------------------------------------------------------------------

def test_same_seed_is_byte_identical_across_worker_counts(built):
    first, second = tree(built["a"]), tree(built["a2"])
    assert sorted(first) == sorted(second)
    different = [path for path in first if first[path] != second[path]]
    assert not different, different


def test_different_seed_gives_a_different_dataset(built):
    first, other = tree(built["a"]), tree(built["b"])
    task_files = [p for p in first if p.endswith("task.json")]
    assert task_files
    assert any(first[p] != other.get(p) for p in task_files)
    assert first["index.jsonl"] != other["index.jsonl"] or first["build.json"] != other["build.json"]


# -- bad input -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bad_runs(built, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path, dict[str, bytes]]]:
    """Each bad invocation, with its output path and that path's files before."""
    root = tmp_path_factory.mktemp("bad")
    (root / "busy").mkdir()
    (root / "busy" / "notes.txt").write_text("mine\n", encoding="utf-8")
    (root / "plain.txt").write_text("not a folder\n", encoding="utf-8")
    shutil.copytree(built["a"], root / "other-seed")
    cases = {
        "n0": (root / "n0", ("--n", "0")),
        "apps4": (root / "apps4", ("--n", "2", "--apps", "4")),
        "appsx": (root / "appsx", ("--n", "2", "--apps", "x")),
        "weights-missing": (root / "weights-missing", ("--n", "2", "--apps", "1,2", "--apps-weights", "1=2")),
        "weights-zero": (root / "weights-zero", ("--n", "2", "--apps-weights", "1=0,2=1,3=1")),
        "weights-text": (root / "weights-text", ("--n", "2", "--apps-weights", "1=a")),
        "days0": (root / "days0", ("--n", "2", "--days", "0")),
        "days1": (root / "days1", ("--n", "2", "--days", "1")),
        "busy": (root / "busy", ("--n", "2", *SMALL)),
        "file": (root / "plain.txt", ("--n", "2", *SMALL)),
        "other-seed": (root / "other-seed", ("--n", "4", "--seed", SEED + 5, *SMALL, "--resume")),
    }
    before = {name: (tree(out) if out.is_dir() else {"": out.read_bytes()} if out.exists() else {})
              for name, (out, _) in cases.items()}
    procs = {name: here("build", "--out", out, *args) for name, (out, args) in cases.items()}
    return {name: (procs[name], cases[name][0], before[name]) for name in cases}


@pytest.mark.parametrize("case, message", [
    ("n0", "--n"),
    ("apps4", "--apps"),
    ("appsx", "--apps"),
    ("weights-missing", "--apps-weights: '1=2' must give each app count of --apps (1, 2)"),
    ("weights-zero", "--apps-weights"),
    ("weights-text", "--apps-weights: '1=a' must be COUNT=WEIGHT"),
    ("days0", "--days"),
    ("days1", "--days 1: must be a whole number from 2"),
    ("busy", "not empty"),
    ("file", "not a folder"),
    ("other-seed", "built with other settings: --seed"),
])
def test_bad_input_is_one_clear_error(bad_runs, case, message):
    proc, out, before = bad_runs[case]
    assert proc.returncode == 2, (case, proc.returncode, proc.stdout, proc.stderr)
    errors = error_lines(proc)
    assert len(errors) == 1, (case, proc.stderr)
    assert message in errors[0], (case, errors)
    assert "built" not in proc.stdout
    # Nothing that was there is lost or changed; nothing is created for refused options.
    after = tree(out) if out.is_dir() else {"": out.read_bytes()} if out.exists() else {}
    assert after == before, case


def test_resume_of_a_complete_build_changes_nothing(built, tmp_path):
    out = shutil.copytree(built["a"], tmp_path / "complete")
    before = tree(out)
    summary = build(out, 4, BuildConfig(seed=SEED, days=2, utterances_per_day=12), workers=1, resume=True)
    assert summary.accepted == 4
    assert tree(out) == before


def test_resume_never_shrinks_a_complete_build(built, tmp_path):
    from orchestrator.dataset_folder import BuildError

    out = shutil.copytree(built["a"], tmp_path / "complete")
    before = tree(out)
    with pytest.raises(BuildError, match=r"--n 3: .* already holds 4 tasks; resume can extend a build, not shrink it"):
        build(out, 3, BuildConfig(seed=SEED, days=2, utterances_per_day=12), workers=1, resume=True)
    assert tree(out) == before


# -- resume ----------------------------------------------------------------------------------------

RESUME_CONFIG = BuildConfig(seed=SEED + 2, days=2, utterances_per_day=12)
RESUME_ARGS = ("--n", "6", "--seed", SEED + 2, *SMALL, "--resume")


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    """An uninterrupted build with the resume tests' settings."""
    out = tmp_path_factory.mktemp("reference") / "ds"
    assert build(out, 6, RESUME_CONFIG, workers=1).accepted == 6
    return tree(out)


def check_resumed(out: Path, reference: dict[str, bytes], cli: bool) -> None:
    if cli:
        proc = homer("build", "--out", out, *RESUME_ARGS)
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
        assert "built 6 task(s)" in proc.stdout
    else:  # the Python API, in the process that made (and cached) the first build
        assert build(out, 6, RESUME_CONFIG, workers=2, resume=True).accepted == 6
    ids = [line["id"] for line in index(out)]
    assert len(ids) == 6 and len(set(ids)) == 6 and ids == sorted(ids)
    assert sorted(p.name for p in (out / "tasks").iterdir()) == ids
    attempts = [json.loads(line)["index"] for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert len(attempts) == len(set(attempts))
    resumed = tree(out)
    assert sorted(resumed) == sorted(reference)
    different = [path for path in reference if resumed[path] != reference[path]]
    assert not different, different


def test_resume_after_an_interruption_matches_an_uninterrupted_build(tmp_path, reference):
    out = tmp_path / "ds"

    def stop_after_three(done: int, total: int) -> None:
        if done >= 3:
            raise Interrupted

    with pytest.raises(Interrupted):
        build(out, 6, RESUME_CONFIG, workers=1, on_progress=stop_after_three)
    assert len(list((out / "tasks").iterdir())) == 3
    assert json.loads((out / BUILD).read_text())["status"] == "running"
    assert not (out / "index.jsonl").exists()
    check_resumed(out, reference, cli=True)


def test_resume_after_losing_tasks_matches_an_uninterrupted_build(tmp_path, reference):
    out = tmp_path / "ds"
    assert build(out, 6, RESUME_CONFIG, workers=1).accepted == 6
    lost = sorted(p.name for p in (out / "tasks").iterdir())[2:4]
    for task_id in lost:
        shutil.rmtree(out / "tasks" / task_id)
    info = json.loads((out / BUILD).read_text())
    (out / BUILD).write_text(json.dumps({**info, "status": "running"}))
    lines = (out / "attempts.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["id"] not in lost]
    assert len(kept) == len(lines) - 2
    (out / "attempts.jsonl").write_text("".join(line + "\n" for line in kept))
    check_resumed(out, reference, cli=False)


# -- verify and stats ------------------------------------------------------------------------------

def _break_oracle_value(record: dict) -> bool:
    """Change the last value an oracle call writes; False if no call writes one."""
    for call in reversed(record["oracle"]):
        for key in ("value", "text", "content", "summary"):
            value = call["args"].get(key)
            if isinstance(value, str):
                call["args"][key] = "WRONG VALUE"
                return True
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                call["args"][key] = value + 1000
                return True
    return False


def test_verify_good_truncated_and_edited_datasets(built, tmp_path):
    ids = [line["id"] for line in index(built["a"])]
    truncated, edited = tmp_path / "truncated", tmp_path / "edited"
    shutil.copytree(built["a"], truncated)
    shutil.copytree(built["a"], edited)
    bad_file = truncated / "tasks" / ids[1] / "task.json"
    bad_file.write_bytes(bad_file.read_bytes()[: len(bad_file.read_bytes()) // 2])
    target = next(i for i in ids if _break_oracle_value(json.loads((edited / "tasks" / i / "task.json").read_text())))
    task_file = edited / "tasks" / target / "task.json"
    record = json.loads(task_file.read_text())
    _break_oracle_value(record)
    task_file.write_text(json.dumps(record, indent=2))

    runs = {"good": here("verify", built["a"]), "truncated": here("verify", truncated), "edited": here("verify", edited)}

    good = runs["good"]
    assert good.returncode == 0, good.stdout + good.stderr
    assert "4/4 tasks pass" in good.stdout
    for task_id in ids:
        assert re.search(rf"^ok +{task_id}$", good.stdout, re.M), good.stdout

    bad = runs["truncated"]
    assert bad.returncode == 1, bad.stdout + bad.stderr
    line = next(l for l in bad.stdout.splitlines() if ids[1] in l)
    assert line.startswith("FAIL") and str(bad_file) in line and "JSON" in line, line
    for task_id in ids[:1] + ids[2:]:
        assert re.search(rf"^ok +{task_id}$", bad.stdout, re.M), bad.stdout
    assert "3/4 tasks pass" in bad.stdout

    edit = runs["edited"]
    assert edit.returncode == 1, edit.stdout + edit.stderr
    line = next(l for l in edit.stdout.splitlines() if target in l)
    assert line.startswith("FAIL") and "oracle_passes" in line, line
    assert "schema" not in line and "memory_evidence" not in line, line
    assert "3/4 tasks pass" in edit.stdout


def test_the_learned_reader_reports_on_held_out_halves_and_strict_holds_its_verdict(built, tmp_path, monkeypatch):
    few = here("verify", built["a"], "--learned")
    assert few.returncode == 0, few.stdout + few.stderr
    assert "learned reader: not measured (it needs 20 tasks at least" in few.stdout
    out = tmp_path / "twenty"
    proc = here("build", "--out", out, "--n", "20", "--seed", SEED, *SMALL, "--workers", "1", "--learned", "--strict")
    line = next(l for l in proc.stdout.splitlines() if l.startswith("learned reader"))
    assert re.search(r"; the 20 tasks in two halves, no (office|task) in both, each half's reader scored on the other "
                     r"half\)", line), line
    figures = [float(f) for f in re.findall(r"(?:F1|isolation|guesser) (\d+(?:\.\d+)?)", line)]
    assert len(figures) == 3, line
    missed = figures[0] > 0.35 or figures[1] > 10 or figures[2] > 10
    assert line.endswith("MISSED" if missed else "passed"), line
    assert proc.returncode == (1 if missed else 0), proc.stdout + proc.stderr
    assert ("the learned reader missed its targets" in proc.stderr) == missed
    # without scikit-learn: one line, exit 2, before anything is built
    monkeypatch.setitem(sys.modules, "sklearn", None)
    refused = here("build", "--out", tmp_path / "none", "--n", "2", "--learned")
    assert refused.returncode == 2 and "--learned: the learned reader needs scikit-learn" in refused.stderr
    assert not (tmp_path / "none").exists()


def test_verify_refuses_a_folder_that_is_not_a_dataset(tmp_path):
    proc = here("verify", tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert len(error_lines(proc)) == 1 and "not a dataset folder" in proc.stderr


def test_stats_prints_a_row_per_app_count_and_all(built):
    proc = here("stats", built["a"])
    assert proc.returncode == 0, proc.stderr
    check_table(proc.stdout, built["a"])
    card = (built["a"] / "README.md").read_text(encoding="utf-8")
    card_rows = [line for line in card.splitlines() if re.match(r"^\| (\d|all) \|", line)]
    assert all(row in proc.stdout for row in card_rows)  # the same numbers as the card
    assert "tokens:" in proc.stdout


def test_a_worker_that_would_wait_for_a_world_writes_the_next_one_meanwhile(tmp_path):
    import fcntl
    import threading

    from orchestrator import build as build_module

    worlds = tmp_path / "worlds"
    (worlds / "w00000").mkdir(parents=True)
    held = os.open(worlds / "w00000" / ".writing", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # another worker is writing world 0
    got = []
    waiting = threading.Thread(target=lambda: got.append(build_module._world(str(tmp_path), 5, 0)))
    waiting.start()
    try:
        deadline = time.monotonic() + 60
        while not (worlds / "w00001" / "testbed").is_dir() and time.monotonic() < deadline:
            time.sleep(0.02)  # world 1 is written meanwhile
        assert (worlds / "w00001" / "testbed" / "data").is_dir()
        waiting.join(timeout=0.3)
        assert waiting.is_alive(), "it must wait for world 0 rather than write it twice"
        assert not (worlds / "w00000" / "testbed").exists()
    finally:
        fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)
        waiting.join(timeout=60)
    world, testbed = got[0]
    assert testbed == worlds / "w00000" / "testbed" and (testbed / "data").is_dir()
    assert not (worlds / "w00002").exists()  # one world ahead, no more


def test_the_progress_tally_counts_each_task_once_and_no_more_than_its_app_count_asks():
    """A build's progress counts what it holds as outcomes arrive, out of index order: a repeat of
    a task counted before is not counted again, nor an attempt past its app count's quota."""
    from orchestrator.build import KeptTally

    class TwoStrata:
        quota = {1: 2, 2: 1}

        def count_of(self, index: int) -> int:
            return 1 if index % 2 else 2

    tally = KeptTally(TwoStrata())
    outcomes = [(3, "accepted", ["a"]), (1, "accepted", ["a", "b"]), (5, "dropped", ["c"]), (7, "accepted", ["c"]),
                (9, "accepted", ["d"]), (2, "accepted", ["e"]), (4, "accepted", ["f"])]
    seen = []
    for index, status, keys in outcomes:
        tally.add(index, {"status": status, "keys": keys})
        seen.append(tally.kept)
    assert seen == [1, 1, 1, 2, 2, 3, 3]


def test_the_parent_holds_an_outcome_s_recurring_texts_once():
    """``compact`` leaves an outcome's keys and values as they were, and two outcomes that say the
    same word, status or family hold one text for it, not one each (a 100,000-task build's parent
    would otherwise hold every description's words once per attempt)."""
    from orchestrator.build import compact

    def outcome(index: int) -> dict:
        return json.loads(json.dumps({"index": index, "id": f"neo-{index:05d}", "status": "accepted",
                                      "family": "sheet_total", "reason": None, "rounds": 1,
                                      "keys": [f"description:{index:016x}"],
                                      "words": ["sheet_total", "budget", "march", "total"]}))

    first, second = outcome(1), outcome(2)
    assert first["words"][1] is not second["words"][1]  # parsed apart: two texts
    assert compact(outcome(1)) == first
    first, second = compact(first), compact(second)
    assert all(a is b for a, b in zip(first["words"], second["words"]))
    assert first["status"] is second["status"] and first["family"] is second["family"]
