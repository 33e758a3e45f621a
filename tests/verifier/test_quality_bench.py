"""bench/quality.py measures several builds side by side and reuses the builds it keeps (only those
written by the same code)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "quality.py"
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"


def load_bench():
    spec = importlib.util.spec_from_file_location("quality_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args: str) -> subprocess.CompletedProcess:
    """``python bench/quality.py ARGS`` in this process (one import of the stack and the learners for
    every run): its exit code, standard output and error."""
    out, err, code = io.StringIO(), io.StringIO(), 0
    argv = sys.argv
    sys.argv = [str(SCRIPT), *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            load_bench().main()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        if not isinstance(stop.code, int) and stop.code is not None:
            err.write(f"{stop.code}\n")
    finally:
        sys.argv = argv
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_standard_and_plus_builds_in_one_table_and_the_cache_is_reused(tmp_path: Path):
    cache = tmp_path / "cache"
    seeds = tmp_path / "seeds"  # two of the sample's seeds, of different tasks, for the Plus runs
    for task in ("2-1", "3-1"):
        shutil.copytree(SAMPLE / "tasks" / task, seeds / "tasks" / task)
    args = ("--builds", "standard,plus", "--n", "2", "--seed", "3", "--train-seed", "5", "--workers", "1",
            "--cache", str(cache), "--no-oracle", "--plus-runs", "2", "--plus", str(seeds))
    first = run(*args, "--json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert set(data) == {"standard", "plus"}
    for kind, found in data.items():
        figures = {line["figure"]: line for line in found["figures"]}
        assert figures["ISO date stamps in speech"]["value"] == 0, kind
        assert figures["attempts ending 'error: crashed'"]["status"] == "PASS", kind
        assert figures["small-talk question answered two ways in a day"]["value"] == 0, kind
        assert figures["small-talk answers not of the kind asked"]["value"] == 0, kind
        assert figures["small-talk reactions echoing their line"]["status"] in ("PASS", "MISS"), kind
        held = " (held-out seeds)" if kind == "plus" else ""  # a Plus split: scored on seeds it did not train on
        assert figures[f"adversary query_topic precision{held}"]["status"] in ("PASS", "MISS"), kind
        assert figures[f"adversary tfidf_logreg isolates{held}"]["status"] in ("PASS", "MISS"), kind
    plus = {line["figure"]: line for line in data["plus"]["figures"]}
    assert "clause fragments (< 4 words)" in plus
    # ... and the readers that trained on every seed, the measured ones too, as info
    assert plus["adversary tfidf_logreg isolates (seeds seen in training)"]["status"] == "info"
    assert "two folds" in plus["adversaries trained on (held-out seeds)"]["shown"]
    assert "adversary tfidf_logreg isolates" not in plus
    assert plus["tfidf_logreg + query overlap: isolates (held-out seeds)"]["status"] == "info"
    builds = {"standard-n2-s3", "standard-n2-s5", "plus-s3", "plus-s4", "plus-s5", "plus-s6"}
    # two Plus runs measured, two trained on; beside each build, the fingerprint of the code that wrote it
    assert {p.name for p in cache.iterdir()} == builds | {f"{b}.code" for b in builds}
    assert data["plus"]["source"].startswith("2 runs (seeds 3-4)")
    second = run(*args)  # the table, from the kept builds
    assert second.returncode == 0, second.stderr
    assert "standard: cached standard build" in second.stdout
    assert "plus: 2 runs (seeds 3-4): cached plus build" in second.stdout
    header = next(line for line in second.stdout.splitlines() if line.startswith("figure"))
    assert "standard" in header and "plus" in header
    assert "targets met" in second.stdout
    # an info figure's target is a reference in brackets, its status says info, and a line says why
    overlap = next(line for line in second.stdout.splitlines()
                   if line.startswith("tfidf_logreg + query overlap: isolates"))
    assert "(<= 10 %)" in overlap and "info" in overlap and "PASS" not in overlap and "MISS" not in overlap
    assert "shown for comparison, not held" in second.stdout
    (cache / "standard-n2-s3.code").write_text("another code's build")  # written before a change: built again
    third = run(*args)
    assert third.returncode == 0, third.stderr
    assert "standard: standard build of 2 tasks (seed 3)" in third.stdout, third.stdout
    assert "plus: 2 runs (seeds 3-4): cached plus build" in third.stdout
    other = tmp_path / "other-seeds"  # a Plus build regenerated from other seeds is built again
    shutil.copytree(SAMPLE / "tasks" / "2-1", other / "tasks" / "2-1")
    fourth = run(*args, "--plus", str(other), "--json")
    assert fourth.returncode == 0, fourth.stderr
    found = json.loads(fourth.stdout)
    assert found["standard"]["source"].startswith("cached standard build")
    assert found["plus"]["source"].startswith(f"2 runs (seeds 3-4): Plus regeneration of 1 tasks from {other} "
                                              "(seed 3)"), found["plus"]["source"]
    one_seed = {line["figure"]: line for line in found["plus"]["figures"]}
    # one seed task: no reader can be kept from it, so its figures are info
    assert one_seed["adversary tfidf_logreg isolates (one seed task, seen in training)"]["status"] == "info"
    assert not any(line["status"] != "info" for name, line in one_seed.items() if "adversary" in name)


def test_bad_options_are_one_line():
    result = run("--builds", "neo")
    assert result.returncode == 2 and "--builds: neo" in result.stderr


def test_a_plus_task_could_say_a_day_relatively_only_as_the_writer_would():
    _near_day = load_bench()._near_day

    def record(value: str) -> dict:
        return {"dialogue": [{"date": "2024-04-22"}, {"date": "2024-04-29"}],
                "memory": [{"value": "Bob"}, {"value": value}]}

    assert _near_day(record("2024-05-07"))  # "Tuesday next week" from the 29th
    assert not _near_day(record("5/7/2024"))  # the writer says such a day as written
    assert not _near_day(record("2021-05-07"))  # years from the chat
    assert not _near_day({"dialogue": [], "memory": [{"value": "2024-05-07"}]})


def test_a_large_builds_cross_task_share_is_held_over_chunks_of_the_size_its_target_is_set_for():
    cross_task_lines = load_bench().cross_task_lines

    def record(i: int, lines: list[str]) -> dict:
        turns = [{"role": "user", "text": line} for line in lines]
        return {"id": f"t{i:03d}", "dialogue": [{"day": 1, "turns": turns}], "memory": []}

    # in each run of 60 tasks, task pairs share one of their two lines: about half of the lines said
    # elsewhere within a chunk; across chunks every line is shared, since the pairs repeat
    records = [record(i, [f"shared {(i % 60) // 2}", f"own line {i}"]) for i in range(180)]
    small = cross_task_lines(records[:119], 0.42)
    assert [line["figure"] for line in small] == ["cross-task verbatim share"]  # under two chunks: as it is
    assert small[0]["status"] == "MISS"
    held, whole = cross_task_lines(records, 0.9)
    assert held["figure"] == "cross-task verbatim share (in chunks of 60+ tasks)" and "mean of 3" in held["shown"]
    assert held["value"] == pytest.approx(0.5) and held["status"] == "MISS"
    assert whole["status"] == "info" and whole["value"] == 0.9
    parted = [record(i, [f"shared {(i % 60) // 2 if i % 4 else i}", f"own line {i}"]) for i in range(180)]
    assert cross_task_lines(parted, 0.9)[0]["value"] < 0.5  # fewer lines shared in each chunk: lower
