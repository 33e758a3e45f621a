"""Progress of build, regenerate and eval: lines off a terminal, JSON for scripts, nothing when quiet."""

from __future__ import annotations

import io
import json
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.progress import Reporter, mode_for

from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "officebench-sample"


def homer(*args: object) -> subprocess.CompletedProcess:
    return homer_here(*args)  # off a terminal, as a child process with captured output would be


def test_build_progress_in_each_mode(tmp_path):
    small = ("--n", 3, "--days", 2, "--utterances", 12)
    lines = homer("build", "--out", tmp_path / "a", *small)
    scripted = homer("build", "--out", tmp_path / "b", *small, "--json-progress")
    quiet = homer("build", "--out", tmp_path / "c", *small, "--quiet")
    assert lines.returncode == scripted.returncode == quiet.returncode == 0
    # off a terminal: plain lines (the first outcome at least), never a bar's control codes
    assert "build: 1/3 kept from 1 attempt(s), 0 dropped, 0 errors" in lines.stderr and "\x1b[" not in lines.stderr
    events = [json.loads(line) for line in scripted.stderr.splitlines()]
    attempts = json.loads((tmp_path / "b" / "build.json").read_text())["attempts"]
    # one event per attempt that ended; a worker may finish one attempt past the third kept task
    assert [e["done"] for e in events] == list(range(1, len(events) + 1)) and attempts <= len(events) <= attempts + 1
    last = events[-1]  # an attempt past the third kept task is counted as not needed, never as kept
    assert last["kept"] == 3 and last["kept"] + last["not_needed"] + last["dropped"] + last["errors"] == last["done"]
    assert all(e["event"] == "progress" and e["what"] == "build" for e in events)
    assert quiet.stderr == "" and "built 3 task(s)" in quiet.stdout


def test_regenerate_and_eval_report_progress(tmp_path):
    regen = homer("regenerate", "--seeds", SAMPLE, "--out", tmp_path / "plus", "--days", 2, "--json-progress")
    events = [json.loads(line) for line in regen.stderr.splitlines() if line.startswith("{")]
    assert regen.returncode == 0 and events[-1]["done"] == 5 and events[-1]["total"] == 5
    run = homer("eval", tmp_path / "plus", "--agent", "none", "--mode", "long-context", "--out", tmp_path / "run")
    assert run.returncode == 0 and "eval: 1/5 done (1 scored, 0 dropped, 0 errors)" in run.stderr


def test_lines_come_every_few_seconds_while_nothing_finishes():
    stream = io.StringIO()
    with Reporter("build", 10, "lines", stream=stream, seconds=0.2, target="kept") as progress:
        time.sleep(0.7)
        progress.outcome({"status": "dropped"})
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3 and lines[0].startswith("build: 0/10 kept from 0 attempt(s)")
    assert lines[-1].startswith("build: 0/10 kept from 1 attempt(s), 1 dropped")


def test_a_build_never_shows_more_kept_than_it_asked_for():
    stream = io.StringIO()
    with Reporter("build", 2, "json", stream=stream, target="kept") as progress:
        for status in ("accepted", "dropped", "accepted", "accepted"):
            progress.outcome({"status": status})
        line = progress.line()
    last = json.loads(stream.getvalue().splitlines()[-1])
    assert (last["done"], last["total"], last["kept"], last["dropped"], last["not_needed"]) == (4, 2, 2, 1, 1)
    assert line.startswith("build: 2/2 kept from 4 attempt(s), 1 dropped, 0 errors, 1 not needed")


def test_a_build_reads_each_accepted_attempt_against_its_own_count():
    """The build counts the tasks it holds (a duplicate of an earlier task does not raise it): an
    accepted attempt that leaves the count where it was is not needed, and a later one that
    raises it is kept, even once as many attempts as the total were accepted."""
    stream = io.StringIO()
    with Reporter("build", 2, "json", stream=stream, target="kept") as progress:
        for count, status in ((1, "accepted"), (1, "accepted"), (1, "dropped"), (2, "accepted"), (2, "accepted")):
            progress.counted(count, 2)  # the batch reports its count before the outcome reaches the display
            progress.outcome({"status": status})
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(e["kept"], e["not_needed"], e["dropped"]) for e in events] == [(1, 0, 0), (1, 1, 0), (1, 1, 1), (2, 1, 1),
                                                                           (2, 2, 1)]


def test_tokens_and_cost_are_summed():
    stream = io.StringIO()
    with Reporter("build", 2, "json", stream=stream, target="kept") as progress:
        progress.outcome({"status": "accepted", "tokens": {"planner": {"prompt_tokens": 100, "completion_tokens": 20,
                                                                        "cached_prompt_tokens": 64}},
                          "cost_usd": 0.5})
        progress.outcome({"status": "error", "tokens": {"surfer": {"prompt_tokens": 7, "completion_tokens": 3}}})
        line = progress.line()
    last = json.loads(stream.getvalue().splitlines()[-1])
    assert (last["kept"], last["errors"], last["tokens"], last["cost_usd"]) == (1, 1, 130, 0.5)
    assert last["cached_prompt_tokens"] == 64 and "130 tokens (64 prompt-cached)" in line


def test_mode_follows_the_flags_and_the_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert mode_for(False, False, Tty()) == "bar" and mode_for(False, False, io.StringIO()) == "lines"
    assert mode_for(True, False, Tty()) == "quiet" and mode_for(True, True, Tty()) == "json"


def test_probe_export_and_horizons_report_progress_and_the_build_its_start(tmp_path):
    data = tmp_path / "data"
    built = homer("build", "--out", data, "--n", 3, "--days", 2, "--utterances", 12)
    # off a terminal the first line comes at the start, before any attempt ends
    assert built.returncode == 0 and built.stderr.splitlines()[0].startswith("build: 0/3 kept from 0 attempt(s)")
    probed = homer("probe", data, "--agent", "oracle", "--out", tmp_path / "p", "--workers", 2, "--json-progress")
    events = [json.loads(line) for line in probed.stderr.splitlines() if line.startswith("{")]
    assert probed.returncode == 0 and [e["done"] for e in events] == [1, 2, 3]
    assert all(e["what"] == "probe" and e["total"] == 3 for e in events)
    exported = homer("export", data, "--hf", tmp_path / "hf", "--json-progress")
    events = [json.loads(line) for line in exported.stderr.splitlines() if line.startswith("{")]
    assert exported.returncode == 0 and [(e["done"], e["kept"]) for e in events] == [(1, 1), (2, 2), (3, 3)]
    swept = homer("eval", data, "--agent", "none", "--horizons", "2,3,4", "--out", tmp_path / "sweep", "--json-progress")
    events = [json.loads(line) for line in swept.stderr.splitlines() if line.startswith("{")]
    assert swept.returncode == 0, swept.stderr
    assert events[-1]["done"] == events[-1]["total"] == 9 and all(e["what"] == "horizons" for e in events)


def test_probe_gives_the_same_run_with_one_or_two_workers(tmp_path):
    data = tmp_path / "data"
    assert homer("build", "--out", data, "--n", 3, "--days", 2, "--utterances", 12, "-q").returncode == 0
    for workers in (1, 2):
        assert homer("probe", data, "--agent", "none", "--out", tmp_path / f"w{workers}", "-w", workers,
                     "-q").returncode == 0
    assert (tmp_path / "w1" / "probes.jsonl").read_bytes() == (tmp_path / "w2" / "probes.jsonl").read_bytes()
    bad = homer("probe", data, "--agent", "none", "--out", tmp_path / "w0", "--workers", 0)
    assert bad.returncode == 2 and "--workers 0: must be a whole number from 1 to" in bad.stderr
