"""One writer per folder, and resumes that repair what an interruption left behind."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import harness.runner as runner
from backends.folder_lock import FolderLock
from backends.job_contract import Budget, Interrupted
from harness.context import ContextConfig
from harness.runner import EvalConfig, EvalError, evaluate
from orchestrator.build import build
from orchestrator.dataset_folder import BuildError
from orchestrator.dataset_writer import BUILD, PROGRESS, WORK
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_forked, homer_here

pytestmark = pytest.mark.slow

CONFIG = BuildConfig(seed=5, days=2, utterances_per_day=12)
BUILD_ARGS = ("build", "--seed", "5", "--days", "2", "--utterances", "12")  # CONFIG on the command line
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ds"
    build(out, 4, CONFIG)
    return out


def test_a_second_build_into_a_locked_folder_is_refused_and_changes_nothing(tmp_path, reference):
    out = tmp_path / "ds"
    with FolderLock(out, "homer build"):
        with pytest.raises(BuildError, match="writing this folder"):
            build(out, 4, CONFIG, resume=True)
        assert [p.name for p in out.iterdir()] == [".lock"]


def test_resume_repairs_strays_left_by_a_kill_and_gives_the_same_bytes(tmp_path, reference):
    out = tmp_path / "ds"
    build(out, 4, CONFIG)
    info = json.loads((out / BUILD).read_text())
    # what a kill during finalisation, or between publishing and recording, leaves behind
    (out / WORK / "staging" / ".neo-00009.abc").mkdir(parents=True)
    (out / PROGRESS).write_text("")
    (out / "tasks" / "neo-00074").mkdir()
    # and a kill in the middle of a write: the temporary copies of the card, build.json and a schema
    for name in (".build.json.0eck7ld2.tmp", ".README.md.x1_y2z3w.tmp", "schemas/.task.schema.json.a1b2c3d4.tmp",
                 f".{PROGRESS}.4242.tmp"):  # and the outcome log's, rewritten whole by a resume
        (out / name).write_bytes(b"")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    (out / ".index.jsonl.qqqqqqqq.tmp").symlink_to(outside)  # a link of that name is nobody's write: kept
    assert info["status"] == "complete"
    build(out, 4, CONFIG, resume=True)
    assert (out / ".index.jsonl.qqqqqqqq.tmp").is_symlink() and outside.read_text() == "not ours"
    (out / ".index.jsonl.qqqqqqqq.tmp").unlink()
    assert tree(out) == tree(reference)


def test_resume_redoes_an_accepted_attempt_whose_folder_is_empty(tmp_path, reference):
    out = tmp_path / "ds"
    build(out, 4, CONFIG)
    victim = out / "tasks" / "neo-00002"
    for path in sorted(victim.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    info = json.loads((out / BUILD).read_text())
    info["status"] = "running"
    (out / BUILD).write_text(json.dumps(info))
    build(out, 4, CONFIG, resume=True)
    assert tree(out) == tree(reference)


def test_attempts_that_ran_out_of_budget_are_dropped_then_retried_on_resume(tmp_path, reference):
    out = tmp_path / "ds"
    summary = build(out, 2, CONFIG, budget=Budget(seconds=0.001))
    assert summary.accepted == 0 and summary.drops == {"error": summary.attempts}
    attempts = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert {a["reason"] for a in attempts} == {"error: timeout (over the 0.001 s time budget)"}
    build(out, 4, CONFIG, resume=True)
    assert tree(out) == tree(reference)


def _eval_config(workers: int = 1) -> EvalConfig:
    return EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), workers=workers)


def test_eval_resume_keeps_finished_rows_and_runs_only_the_rest(tmp_path, reference, monkeypatch):
    full = evaluate(reference, tmp_path / "full", _eval_config())
    out = tmp_path / "run"

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as caught:
        evaluate(reference, out, _eval_config(), on_progress=stop_after_two)
    assert (caught.value.done, caught.value.total) == (2, 4)
    assert not (out / "results.jsonl").exists()
    ran = []
    real = runner.run_task
    monkeypatch.setattr(runner, "run_task", lambda *args: ran.append(args[1]) or real(*args))
    resumed = evaluate(reference, out, _eval_config(), resume=True)
    assert ran == [row["id"] for row in full.rows[2:]]
    assert [(r["id"], r["passed"], r["criteria"]) for r in resumed.rows] == \
        [(r["id"], r["passed"], r["criteria"]) for r in full.rows]
    assert not (out / PROGRESS).exists() and not (out / ".lock").exists()


def test_eval_resume_refuses_a_run_with_other_options(tmp_path, reference):
    out = tmp_path / "run"

    def stop(done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        evaluate(reference, out, _eval_config(), on_progress=stop)
    other = EvalConfig(agent="none", context=ContextConfig(mode="long-context"))
    with pytest.raises(EvalError, match="--resume: .* another agent"):
        evaluate(reference, out, other, resume=True)


def test_ctrl_c_stops_a_build_before_it_finishes_and_resume_finishes_it(tmp_path, reference):
    out = tmp_path / "ds"
    proc = homer_forked(*BUILD_ARGS, "--out", out, "--n", "400", "--workers", "2")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "tasks").is_dir():
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    # how fast it stops is a figure of bench/crash.py; here: it stops, cleanly, part way
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130
    assert "Traceback" not in err
    done = int(err.split("interrupted: ")[1].split(" of ")[0])
    assert 0 < done < 400
    progress = (out / PROGRESS).read_text().splitlines()
    assert len(progress) == done
    assert not (out / ".lock").exists()
    # what reads the half-built dataset says so, and how to finish it
    stats = homer_here("stats", out)
    assert stats.returncode == 0, stats.stderr
    assert stats.stderr.startswith(f"warning: {out}: its build stopped before it finished; "
                                   f"`homer build --out {out} --resume` completes it"), stats.stderr
    finish = homer_here(*BUILD_ARGS, "--out", out, "--n", "4", "--resume")
    # a resume with a smaller --n keeps the first n in index order: the same bytes as a fresh 4-task build
    assert finish.returncode == 0, finish.stderr
    assert tree(out) == tree(reference)
    assert "warning" not in homer_here("stats", out).stderr


def test_a_dataset_being_built_is_read_with_a_warning_that_it_is_not_all_there(tmp_path, reference):
    out = tmp_path / "ds"
    out.mkdir()
    for path, data in tree(reference).items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(data)
    info = json.loads((out / BUILD).read_text())
    (out / BUILD).write_text(json.dumps({**info, "status": "running"}))
    with FolderLock(out, "homer build"):  # this process writes it
        stats = homer_here("stats", out)
    assert stats.returncode == 0 and "| apps |" in stats.stdout
    assert stats.stderr == f"warning: {out}: its build is writing it now: these are the tasks so far\n"
    for hostile in ("/dev/zero", "fifo"):  # a lock file that is a link or a pipe says nothing, and never hangs
        if hostile == "fifo":
            os.mkfifo(out / ".lock")
        else:
            (out / ".lock").symlink_to(hostile)
        stats = homer_here("stats", out)
        assert "its build stopped before it finished" in stats.stderr, stats.stderr
        (out / ".lock").unlink()
    (out / BUILD).write_text(json.dumps({**info, "status": "incomplete"}))
    stats = homer_here("stats", out)
    assert stats.stderr.startswith(f"warning: {out}: its build kept fewer tasks than asked"), stats.stderr


def test_eval_into_an_earlier_run_needs_resume_or_overwrite(tmp_path, reference):
    out = tmp_path / "run"
    evaluate(reference, out, _eval_config())
    before = (out / "results.jsonl").read_bytes()
    other = EvalConfig(agent="none", context=ContextConfig(mode="long-context"))
    with pytest.raises(EvalError, match="holds an earlier evaluation run; pass --resume .* or --overwrite"):
        evaluate(reference, out, other)
    assert (out / "results.jsonl").read_bytes() == before  # nothing replaced without a word
    with pytest.raises(EvalError, match="another agent"):
        evaluate(reference, out, other, resume=True)
    replaced = evaluate(reference, out, other, overwrite=True)
    assert {r["passed"] for r in replaced.rows} == {False}
    assert json.loads((out / "run.json").read_text())["config"]["agent"] == "none"
    # a finished run resumed: its rows are kept, nothing runs again
    again = evaluate(reference, out, other, resume=True)
    assert again.rows == replaced.rows
    (out / "notes.txt").write_text("mine")
    with pytest.raises(EvalError, match="holds no earlier evaluation run"):
        evaluate(reference, out, other, overwrite=True)


def _rows(run: Path) -> list[tuple]:
    return [(r["id"], r["trial"], r["passed"], r["criteria"]) for r in
            map(json.loads, (run / "results.jsonl").read_text().splitlines())]


@pytest.mark.parametrize("state", ["empty progress", "results without run.json", "running run.json only"])
def test_eval_resume_recognises_every_state_a_kill_leaves(tmp_path, reference, state):
    clean = tmp_path / "clean"
    evaluate(reference, clean, _eval_config())
    out = tmp_path / "run"
    evaluate(reference, out, _eval_config())
    run = json.loads((out / "run.json").read_text())
    if state == "empty progress":  # killed before the first task finished
        (out / "results.jsonl").unlink()
        (out / PROGRESS).write_text("")
        (out / "run.json").write_text(json.dumps({**run, "state": "running"}))
    elif state == "results without run.json":  # killed after results.jsonl, before run.json (an older writer)
        (out / "run.json").unlink()
    else:
        (out / "results.jsonl").unlink()
        (out / "run.json").write_text(json.dumps({**run, "state": "running"}))
    with pytest.raises(EvalError, match="--resume"):
        evaluate(reference, out, _eval_config())
    evaluate(reference, out, _eval_config(), resume=True)
    assert _rows(out) == _rows(clean)
    assert json.loads((out / "run.json").read_text())["state"] == "finished"


def test_a_resumed_eval_removes_the_temporary_files_a_kill_left(tmp_path, reference):
    """A kill in the middle of an atomic write leaves ``.run.json.<pid>.tmp``: the resumed run (which
    holds the folder's lock) removes it, and leaves anything that is not a run's leftover alone."""
    clean = tmp_path / "clean"
    evaluate(reference, clean, _eval_config())
    out = tmp_path / "run"
    evaluate(reference, out, _eval_config())
    run = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**run, "state": "running"}))  # killed while finishing
    stale = [out / ".run.json.4242.tmp", out / ".results.jsonl.4242.tmp"]
    for path in stale:
        path.write_text("half a write")
    (out / ".run.json.4242.tmp.d").mkdir()  # a folder of such a name is no leftover of ours: refused, not removed
    with pytest.raises(EvalError, match="not empty"):
        evaluate(reference, out, _eval_config(), resume=True)
    (out / ".run.json.4242.tmp.d").rmdir()
    evaluate(reference, out, _eval_config(), resume=True)
    assert not any(path.exists() for path in stale)
    assert _rows(out) == _rows(clean) and json.loads((out / "run.json").read_text())["state"] == "finished"


def _killed_then_resumed(args: list[str], out: Path, ready) -> subprocess.CompletedProcess:
    """Start ``homer ARGS --out OUT`` as a child process, SIGKILL it as soon as ``ready(out)`` holds,
    then resume it (in this process: what is checked is what the kill left behind)."""
    proc = homer_forked(*args, "--out", out)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and not ready(out):
        time.sleep(0.005)
    proc.kill()
    proc.communicate()
    _wait_for_the_workers_to_die(out)
    return homer_here(*args, "--out", out, "--resume")


def _wait_for_the_workers_to_die(out: Path) -> None:
    """The killed command's worker processes hold the folder lock they inherited until the kernel
    ends them (they die with their parent, a moment later): a user's resume comes after that."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            fd = os.open(out / ".lock", os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return
        try:  # a shared lock, let go at once: the file stays as the kill left it
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(0.05)
        finally:
            os.close(fd)


def _has(*names: str):
    return lambda out: all((out / name).exists() for name in names)


def _tasks_at_least(n: int):
    return lambda out: (out / "tasks").is_dir() and len(list((out / "tasks").iterdir())) >= n


@pytest.mark.parametrize("command", ["build", "regenerate", "eval"])
def test_kill_9_at_a_couple_of_points_then_resume_equals_a_clean_run(tmp_path, reference, command):
    seeds = tmp_path / "seeds"  # two seeds of different tasks: a kill can fall between them
    for task in ("2-1", "3-1"):
        shutil.copytree(SAMPLE / "tasks" / task, seeds / "tasks" / task)
    args, view, points = {
        "build": ([*BUILD_ARGS, "--n", "4", "--workers", "2"], tree,
                  [_has(".lock"), _tasks_at_least(2), _has("build.json", "README.md")]),
        "regenerate": (["regenerate", "--seeds", str(seeds), "--seed", "3", "--days", "2", "--utterances", "12"],
                       tree, [_has(".lock"), _tasks_at_least(1)]),
        "eval": (["eval", str(reference), "--agent", "oracle", "--mode", "rag", "--workers", "2"], _rows,
                 [_has("run.json"), _has(PROGRESS, "run.json"), _has("results.jsonl")]),
    }[command]
    if command == "build":  # the reference is this build (the Ctrl-C test finishes one into the same bytes)
        clean = reference
    else:
        clean = tmp_path / "clean"
        ran = homer_here(*args, "--out", clean)
        assert ran.returncode == 0, ran.stderr
    for i, ready in enumerate(points):
        out = tmp_path / f"killed-{i}"
        finished = _killed_then_resumed(args, out, ready)
        assert finished.returncode == 0 and "Traceback" not in finished.stderr, finished.stderr
        assert view(out) == view(clean)
