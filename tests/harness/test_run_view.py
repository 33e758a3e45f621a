"""``homer view RUN``: per task, what the agent did and why a task failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.build import build
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_here


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("view")
    assert build(root / "ds", 3, BuildConfig(seed=9, days=2, utterances_per_day=12), workers=1).accepted == 3
    for agent in ("oracle", "none"):
        assert homer_here("eval", root / "ds", "--agent", agent, "--out", root / agent, "-q").returncode == 0
    return {"ds": root / "ds", "oracle": root / "oracle", "none": root / "none"}


def test_a_runs_tasks_with_their_outcomes_and_failed_criteria(runs):
    shown = homer_here("view", runs["none"])
    assert shown.returncode == 0 and shown.stdout.splitlines()[0].endswith("0 pass, 3 fail, 0 error")
    data = json.loads(homer_here("view", runs["none"], "--json").stdout)
    assert data["agent"] == "none" and data["counts"] == {"pass": 0, "fail": 3, "error": 0}
    results = [json.loads(line) for line in (runs["none"] / "results.jsonl").read_text().splitlines()]
    for task, row in zip(sorted(data["tasks"], key=lambda t: t["id"]), sorted(results, key=lambda r: r["id"])):
        failed = [c for c in row["criteria"] if not c["passed"]]
        assert task["outcome"] == "fail" and [f["index"] for f in task["trials"][0]["failed"]] == \
            [c["index"] for c in failed]
        assert f"criterion {failed[0]['index']} {failed[0]['function']}: {failed[0]['reason']}" in shown.stdout
    passed = json.loads(homer_here("view", runs["oracle"], "--json").stdout)
    assert passed["counts"]["pass"] == 3 and all(not t["trials"][0]["failed"] for t in passed["tasks"])


def test_one_task_shows_its_tool_calls_and_the_reference_plan(runs):
    task = sorted(p.name for p in (runs["ds"] / "tasks").iterdir())[0]
    record = json.loads((runs["ds"] / "tasks" / task / "task.json").read_text())
    data = json.loads(homer_here("view", runs["oracle"], "--task", task, "--json").stdout)
    (entry,) = data["tasks"]
    assert [c["tool"] for c in entry["trials"][0]["calls"]] == [s["tool"] for s in record["oracle"]]
    assert entry["oracle"] == [{"tool": s["tool"], "args": s["args"]} for s in record["oracle"]]
    text = homer_here("view", runs["oracle"], "--task", task).stdout
    assert "reference plan:" in text and f"1. {record['oracle'][0]['tool']}" in text
    missing = homer_here("view", runs["oracle"], "--task", "neo-99999")
    assert missing.returncode == 2 and "no task 'neo-99999' in this run" in missing.stderr
    assert homer_here("view", runs["ds"]).returncode == 2  # a dataset is no run
