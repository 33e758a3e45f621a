"""Export to OfficeBench's folder layout: loadable by the importer and scorable after solving."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from office_env import default_registry, evaluate_criteria, load_officebench
from orchestrator.build import build
from orchestrator.roles import BuildConfig

HOMER = Path(sys.executable).parent / "homer"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "ds"
    build(out, 6, BuildConfig(seed=21, days=2, utterances_per_day=10), workers=1)
    return out


def test_export_round_trips_through_the_importer_and_scores(dataset: Path, tmp_path: Path):
    target = tmp_path / "ob"
    proc = subprocess.run([str(HOMER), "export", str(dataset), "--officebench", str(target)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(p.read_text()) for p in sorted((dataset / "tasks").glob("*/task.json"))]
    report = load_officebench(target)
    assert report.problems == []
    expected_counts: dict[int, int] = {}
    for record in records:
        expected_counts[record["app_count"]] = expected_counts.get(record["app_count"], 0) + 1
    assert report.by_app_count() == dict(sorted(expected_counts.items()))
    by_description = {r["description"]: r for r in records}
    for task in report.tasks:
        record = by_description[task.instruction]
        assert task.evaluation == record["evaluation"]
        assert task.username == record["user"]["username"]
        ws = task.copy_testbed(tmp_path / "runs" / task.id.replace("/", "_"))
        assert not evaluate_criteria(ws, task.evaluation).passed
        results = default_registry().run(ws, [(c["tool"], c["args"]) for c in record["oracle"]])
        assert all(r.ok for r in results)
        assert evaluate_criteria(ws, task.evaluation).passed


def test_export_refuses_a_non_empty_target(dataset: Path, tmp_path: Path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x")
    proc = subprocess.run([str(HOMER), "export", str(dataset), "--officebench", str(tmp_path / "taken")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "not empty" in proc.stderr and "Traceback" not in proc.stderr


def test_exported_time_is_officebench_clock(dataset: Path, tmp_path: Path):
    subprocess.run([str(HOMER), "export", str(dataset), "--officebench", str(tmp_path / "ob")], check=True,
                   capture_output=True)
    subtask = json.loads(next((tmp_path / "ob" / "tasks").glob("*/subtasks/0.json")).read_text())
    assert subtask["time"].endswith(("AM", "PM"))
    assert datetime.strptime(subtask["date"], "%Y-%m-%d").strftime("%A") == subtask["weekday"]
