"""Build, regenerate and eval as Ray tasks on a local Ray instance: the same bytes as local workers."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is the optional extra homeragents[ray]; the test extra installs it")

from backends.job_contract import Budget, JobFailure  # noqa: E402
from backends.workers import run_jobs  # noqa: E402
from harness.context import ContextConfig  # noqa: E402
from harness.runner import EvalConfig, evaluate  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.plus import regenerate_split  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "officebench-sample"
SMALL = BuildConfig(seed=13, days=2, utterances_per_day=12)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


@pytest.fixture(scope="module")
def local_build(tmp_path_factory) -> Path:
    """``SMALL`` built by local workers: the bytes a Ray build must give, and the dataset evaluated on Ray."""
    out = tmp_path_factory.mktemp("local") / "ds"
    assert build(out, 2, SMALL, workers=2).accepted == 2
    return out


def test_regenerate_and_eval_on_ray(tmp_path, local_build):
    seeds = tmp_path / "seeds"  # two seeds of different tasks: each job carries its own seed's folders
    for task in ("2-1", "3-1"):
        shutil.copytree(SAMPLE / "tasks" / task, seeds / "tasks" / task)
    local = regenerate_split(seeds, tmp_path / "local", seed=1, days=2, workers=2)
    on_ray = regenerate_split(seeds, tmp_path / "ray", seed=1, days=2, workers=2, executor="ray")
    assert local.written == on_ray.written == 2
    assert tree(tmp_path / "local") == tree(tmp_path / "ray")
    config = EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), workers=2)
    run = evaluate(local_build, tmp_path / "run", config, executor="ray")  # each task sent to its job as bytes
    evaluate(local_build, tmp_path / "run-local", config)
    assert run.pass_rate == 1.0 and len(run.rows) == 2
    assert (tmp_path / "run" / "results.jsonl").read_bytes() == (tmp_path / "run-local" / "results.jsonl").read_bytes()


def _job(x: int) -> int:
    if x == 3:
        raise ValueError("three is bad")
    if x == 4:
        import time

        time.sleep(30)
    return x * 10


def test_failures_and_timeouts_are_reported_like_local_workers(monkeypatch):
    import backends.ray_executor as executor

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers cannot import a test module
    monkeypatch.setattr(executor, "GRACE_SECONDS", 0.5)
    results: dict[int, int] = {}
    failures: dict[int, JobFailure] = {}
    run_jobs(_job, [1, 2, 3, 4], workers=2, budget=Budget(seconds=1.0), executor="ray",
             on_result=lambda i, r: results.__setitem__(i, r), on_failure=lambda i, f: failures.__setitem__(i, f))
    assert results == {0: 10, 1: 20}, failures
    assert failures[2].kind == "crashed" and "three is bad" in failures[2].detail
    assert failures[3].kind == "timeout"


def test_a_ray_build_from_the_command_line_writes_the_same_bytes_as_local_workers(tmp_path, local_build):
    homer = Path(sys.executable).parent / "homer"
    # the cluster this module started, joined by its address (a second local instance costs seconds of CPU)
    address = ray.get_runtime_context().gcs_address
    args = ["build", "--out", tmp_path / "ds", "--n", 2, "--seed", SMALL.seed, "--days", SMALL.days,
            "--utterances", SMALL.utterances_per_day, "--executor", "ray", "--ray-address", address,
            "--workers", 2, "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run([str(homer), *map(str, args)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "built 2 task(s)" in proc.stdout
    assert proc.stderr == "", proc.stderr[-2000:]  # --quiet: none of Ray's own INFO or WARNING lines either
    assert tree(tmp_path / "ds") == tree(local_build)
    bad = subprocess.run([str(homer), "build", "--out", str(tmp_path / "x"), "--ray-address", "auto"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--ray-address needs --executor ray" in bad.stderr


def test_the_ray_holder_keeps_a_whole_prefix_of_the_file_once_full(tmp_path, monkeypatch):
    """Past its bound the actor takes no more and the parent sends no more, so a later piece that
    would fit is not added after a gap (two half lines could read as one)."""
    import json

    from orchestrator import kept_identities
    from orchestrator.kept_identities import KeptIdentities, repeat_on_ray

    def outcome(index: int) -> dict:
        return {"index": index, "status": "accepted", "keys": [f"description:{index}" * (1 + 20 * (index == 1))],
                "words": []}

    head = len(json.dumps({"run": "0" * 32})) + 1
    line = len(json.dumps([0, ["description:0"], []])) + 1
    monkeypatch.setattr(kept_identities, "MAX_BYTES", head + 2 * line)  # line 1 is long: it does not fit
    ids = KeptIdentities(tmp_path)
    name = "homer-kept-identities-bound-test"
    ids.copy_to_ray(name)
    done: dict[int, dict] = {}
    for index in range(3):
        done[index] = outcome(index)
        ids.settle(done, lambda i: True, "error")
    assert ids.settled == 3
    assert repeat_on_ray(name, 9, ["description:0"], []) == 0
    assert repeat_on_ray(name, 9, outcome(1)["keys"], []) is None
    assert repeat_on_ray(name, 9, ["description:2"], []) is None  # it would fit, but after a gap
    ids.close()
    assert name not in ray.util.list_named_actors()


def test_a_holder_call_that_timed_out_is_not_sent_twice(tmp_path, monkeypatch):
    """The first call to a new holder times out (its worker process is slow to start) and lands
    later: the parent asks what it holds and goes on from there, so the copy is the file once (a
    copy holding it twice read as broken, and the workers learned nothing more)."""
    from orchestrator.kept_identities import NAME, KeptIdentities, repeat_on_ray

    real_get, calls = ray.get, []

    def slow_once(ref, timeout=None):
        calls.append(timeout)
        return real_get(ref, timeout=0.001 if len(calls) == 1 else timeout)

    ids = KeptIdentities(tmp_path)
    name = "homer-kept-identities-timeout-test"
    ids.copy_to_ray(name)
    monkeypatch.setattr(ray, "get", slow_once)
    ids.settle({0: {"index": 0, "status": "accepted", "keys": ["description:0"], "words": []}}, lambda i: True, "error")
    monkeypatch.setattr(ray, "get", real_get)
    assert len(calls) >= 2  # the first call timed out and the parent asked again
    _, size, data = ray.get(ray.get_actor(name).since.remote(0))
    assert data == (tmp_path / NAME).read_bytes() and size == len(data)
    assert repeat_on_ray(name, 9, ["description:0"], []) == 0
    ids.close()
