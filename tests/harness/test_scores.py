"""Bootstrap intervals, ONS, the sign test and paired comparisons (harness.scores), and homer compare."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.scores import compare_runs, group_scores, interval, ons, per_task, sign_test
from orchestrator.build import build
from orchestrator.cli import app
from orchestrator.roles import BuildConfig

pytestmark = pytest.mark.slow


def rows(passes: dict[str, list[bool]], none: bool = False, oracle: bool = True, app_count: int = 1) -> list[dict]:
    return [{"id": task, "trial": i + 1, "passed": p, "app_count": app_count, "error": None,
             "reference": {"none": none, "oracle": oracle}} for task, ps in passes.items() for i, p in enumerate(ps)]


def test_the_interval_matches_the_normal_approximation_for_many_tasks():
    rng = random.Random(3)
    values = np.array([1.0 if rng.random() < 0.3 else 0.0 for _ in range(2000)])
    low, high = interval(values, resamples=4000, seed=1)
    mean, half = values.mean(), 1.96 * math.sqrt(values.mean() * (1 - values.mean()) / len(values))
    assert abs(low - (mean - half)) < 0.006 and abs(high - (mean + half)) < 0.006
    assert interval(values, seed=1) == interval(values, seed=1)  # seeded: the same rows, the same interval
    assert interval(np.array([])) is None


def test_ons_by_hand_and_undefined_without_a_gap():
    agent, none, oracle = np.array([1.0, 0, 1, 1]), np.array([0.0, 0, 1, 0]), np.array([1.0, 1, 1, 1])
    assert ons(agent, none, oracle) == pytest.approx((0.75 - 0.25) / (1 - 0.25))
    assert ons(agent, oracle, oracle) is None
    scored = group_scores(per_task(rows({"a": [True], "b": [False], "c": [True], "d": [True]})))
    assert scored["ons"] == pytest.approx(0.75) and scored["ons_tasks"] == 4
    low, high = scored["ons_ci"]
    assert 0 <= low <= 0.75 <= high <= 1


def test_pass_k_and_errors_per_task():
    tasks = per_task(rows({"a": [True, True], "b": [True, False]}) +
                     [{"id": "c", "trial": 1, "passed": False, "error": "error: endpoint: down", "app_count": 1}])
    assert set(tasks) == {"a", "b"} and tasks["b"]["pass"] == 0.5 and not tasks["b"]["all"] and tasks["a"]["all"]


def test_sign_test_exact_values():
    assert sign_test(4, 0) == pytest.approx(0.125)
    assert sign_test(10, 2) == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert sign_test(3, 3) == 1.0 and sign_test(0, 0) == 1.0


def test_compare_pairs_tasks_and_reports_the_rest():
    a = rows({"t1": [True], "t2": [False], "t3": [False], "t4": [True], "only_a": [True]})
    b = rows({"t1": [True], "t2": [True], "t3": [True], "t4": [True], "only_b": [False]})
    result = compare_runs(a, b)
    assert result["tasks"] == 4 and result["only_a"] == 1 and result["only_b"] == 1
    assert result["difference"] == pytest.approx(0.5) and (result["b_better"], result["a_better"]) == (2, 0)
    assert (result["b_better_tasks"], result["a_better_tasks"]) == (["t2", "t3"], [])
    assert compare_runs(b, a)["a_better_tasks"] == ["t2", "t3"]
    low, high = result["difference_ci"]
    assert 0 <= low <= 0.5 <= high <= 1


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("scores")
    build(base / "data", 3, BuildConfig(seed=4))
    runner = CliRunner()
    out = {}
    for agent in ("none", "oracle"):
        result = runner.invoke(app, ["eval", str(base / "data"), "--agent", agent, "--mode", "long-context",
                                     "--out", str(base / agent), "--quiet"])
        assert result.exit_code == 0, result.output
        out[agent] = base / agent
    shutil.copytree(base / "data", base / "other")
    result = runner.invoke(app, ["eval", str(base / "other"), "--agent", "none", "--mode", "long-context",
                                 "--out", str(base / "elsewhere"), "--quiet"])
    assert result.exit_code == 0
    out["elsewhere"] = base / "elsewhere"
    return out


def test_eval_reports_intervals_and_ons(runs):
    none = json.loads((runs["none"] / "run.json").read_text())["metrics"]["groups"]["overall"]
    oracle = json.loads((runs["oracle"] / "run.json").read_text())["metrics"]["groups"]["overall"]
    assert none["ons"] == 0.0 and oracle["ons"] == 1.0 and none["pass_rate_ci"] == [0.0, 0.0]
    assert "ONS [95% CI]" in (runs["oracle"] / "report.md").read_text()


def test_compare_command(runs, tmp_path):
    runner = CliRunner()
    shown = runner.invoke(app, ["compare", str(runs["none"]), str(runs["oracle"])])
    assert shown.exit_code == 0 and "+100.0 points" in shown.output and "sign test p = 0.25" in shown.output
    data = json.loads(runner.invoke(app, ["compare", str(runs["none"]), str(runs["oracle"]), "--json"]).output)
    assert data["tasks"] == 3 and data["b_better"] == 3 and len(data["b_better_tasks"]) == 3
    assert f"B did better on: {', '.join(sorted(data['b_better_tasks']))}" in shown.output
    copy = runner.invoke(app, ["compare", str(runs["oracle"]), str(runs["elsewhere"])])  # same bytes elsewhere: paired
    assert copy.exit_code == 0 and "-100.0 points" in copy.output, copy.output
    missing = runner.invoke(app, ["compare", str(runs["none"]), str(tmp_path)])
    assert missing.exit_code == 2 and "not a finished eval run" in missing.output
    (tmp_path / "run.json").write_text(json.dumps({"dataset": "x"}))
    (tmp_path / "results.jsonl").write_text('{"id": "a"}\n')
    broken = runner.invoke(app, ["compare", str(runs["none"]), str(tmp_path)])
    assert broken.exit_code == 2 and "line 1: fields id and passed" in broken.output
    (tmp_path / "results.jsonl").write_text('{"id": "a", "passed": true, "reference": {"none": "yes"}}\n')
    odd = runner.invoke(app, ["compare", str(runs["none"]), str(tmp_path)])
    assert odd.exit_code == 2 and "field reference" in odd.output


def test_runs_are_paired_by_dataset_contents_not_by_path(runs, tmp_path):
    runner = CliRunner()
    data = Path(json.loads((runs["none"] / "run.json").read_text())["dataset"])
    changed = tmp_path / "data"
    shutil.copytree(data, changed)
    first = sorted(p.name for p in (changed / "tasks").iterdir())[1]
    record = json.loads((changed / "tasks" / first / "task.json").read_text())
    record["intent"] += " (rebuilt)"
    (changed / "tasks" / first / "task.json").write_text(json.dumps(record))
    result = runner.invoke(app, ["eval", str(changed), "--agent", "none", "--mode", "long-context",
                                 "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 0, result.output
    refused = runner.invoke(app, ["compare", str(runs["oracle"]), str(tmp_path / "run")])
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines()[-1].endswith(
        f"other dataset contents: task {first} differs; compare runs on the same tasks")
    probe = runner.invoke(app, ["probe", str(changed), "--agent", "oracle", "--out", str(tmp_path / "probe"),
                                "--eval", str(runs["oracle"])])
    assert probe.exit_code == 2 and f"task {first} differs" in probe.output
    assert not (tmp_path / "probe").exists()


def test_pass_hat_k_is_the_unbiased_estimator():
    from harness.plots import pass_hat_k_values

    values, count = pass_hat_k_values(rows({"a": [True, True, False], "b": [True, True, True]}), 3)
    assert count == 2 and values == pytest.approx([(2 / 3 + 1) / 2, (1 / 3 + 1) / 2, (0 + 1) / 2])


def test_the_html_report_is_self_contained(runs):
    page = (runs["oracle"] / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') >= 1 and 'id="by-app-count"' in page
    assert "<table id=\"results\">" in page and "1.00 [1.00, 1.00]" in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from elsewhere
