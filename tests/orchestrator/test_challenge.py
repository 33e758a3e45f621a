"""The challenge preset (weeks of history, the memory spread over them) and --max-context-tokens."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.roles import PRESETS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def challenge(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("challenge") / "data"
    result = CliRunner().invoke(app, ["build", "--out", str(out), "--n", "2", "--seed", "5", "--preset", "challenge",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    return out


def test_weeks_of_history_with_the_memory_spread_over_them(challenge: Path):
    days, per_day = PRESETS["challenge"]
    build_json = json.loads((challenge / "build.json").read_text())
    assert build_json["config"]["days"] == days and build_json["config"]["utterances_per_day"] == per_day
    for line in (challenge / "index.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert row["sessions"] == days >= 30 and row["utterances"] >= 0.9 * days * per_day
        assert row["tokens"] >= 100_000
        record = json.loads((challenge / row["path"]).read_text())
        texts = [t["text"] for s in record["dialogue"] for t in s["turns"]]
        assert len(set(texts)) == len(texts)  # still no line said twice
        # after weeks of chat the query says which work it means, not "that meeting"
        abouts = {p["about"].lower() for p in record["memory"] if p.get("about")}
        assert any(about in record["query"].lower() for about in abouts), (record["query"], abouts)
    verified = CliRunner().invoke(app, ["verify", str(challenge)])
    assert verified.exit_code == 0, verified.output


def test_threads_of_a_long_history_are_laid_over_the_whole_span():
    import random
    from datetime import date, timedelta

    from generators.history_plan import plan_history
    from generators.model import MemoryPiece

    def evidence_days(n: int, seed: int) -> list[int]:
        pieces = [MemoryPiece(f"m{i}", "fact", f"detail {i}", f"value {i}", thread=f"t{i % 3}") for i in range(6)]
        dates = [date(2024, 1, 1) + timedelta(days=d) for d in range(n)]
        plans, _ = plan_history(pieces, dates, random.Random(seed))
        return [plan.day for plan in plans for event in plan.events if event.mark == "evidence"]

    long = [d for seed in range(60) for d in evidence_days(30, seed)]
    thirds = [sum(1 for d in long if lo < d <= lo + 10) for lo in (0, 10, 20)]
    assert min(thirds) >= 0.15 * len(long), thirds  # every third of the weeks holds evidence
    short = [d for seed in range(60) for d in evidence_days(5, seed)]
    assert set(short) <= {1, 2, 3, 4, 5} and len(set(short)) >= 4


def test_a_history_over_the_models_context_is_an_error_run(challenge: Path, tmp_path: Path):
    result = CliRunner().invoke(app, ["eval", str(challenge), "--agent", "oracle", "--mode", "long-context",
                                      "--max-context-tokens", "100000", "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 1 and "more than --max-errors 0" in result.output
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["error"].startswith("error: context: the history context has") for r in rows)
    assert all(r["context_tokens"] > 100_000 and not r["passed"] for r in rows)
    fits = CliRunner().invoke(app, ["eval", str(challenge), "--agent", "oracle", "--mode", "rag", "--top-k", "3",
                                    "--max-context-tokens", "100000", "--out", str(tmp_path / "rag"), "--quiet"])
    assert fits.exit_code == 0, fits.output  # retrieval keeps it inside the window


def test_preset_and_bad_values():
    runner = CliRunner()
    bad = runner.invoke(app, ["build", "--out", "/tmp/never-written", "--preset", "epic"])
    assert bad.exit_code == 2 and "--preset" in bad.output
    assert runner.invoke(app, ["eval", ".", "--agent", "none", "--mode", "long-context", "--out", "/tmp/x",
                               "--max-context-tokens", "0"]).exit_code == 2


def test_a_plus_split_at_the_challenge_size(tmp_path: Path):
    sample = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample" / "tasks"
    seeds = tmp_path / "seeds"
    for task in ("3-1",):  # three apps: one weeks-long history, not the sample's five
        shutil.copytree(sample / task, seeds / "tasks" / task)
    result = CliRunner().invoke(app, ["regenerate", "--seeds", str(seeds), "--out", str(tmp_path / "plus"),
                                      "--preset", "challenge", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "plus" / "index.jsonl").read_text().splitlines()]
    assert rows and all(r["sessions"] == PRESETS["challenge"][0] and r["tokens"] >= 100_000 for r in rows)
    assert CliRunner().invoke(app, ["verify", str(tmp_path / "plus")]).exit_code == 0


def test_each_task_of_weeks_has_an_office_and_a_person_of_its_own(challenge: Path):
    from orchestrator.planner import planned_here
    from orchestrator.roles import BuildConfig, tasks_per_world

    users = [json.loads((challenge / json.loads(line)["path"]).read_text())["user"]["username"]
             for line in (challenge / "index.jsonl").read_text().splitlines()]
    assert len(users) == 2 and len(set(users)) == 2  # two months of one person over the same days would repeat
    assert json.loads((challenge / "build.json").read_text())["tasks_per_world"] == 1
    days, per_day = PRESETS["challenge"]
    assert tasks_per_world(BuildConfig(seed=5, days=days, utterances_per_day=per_day)) == 1
    assert tasks_per_world(BuildConfig(seed=5, days=days, utterances_per_day=10)) == 20  # quick chats share
    assert tasks_per_world(BuildConfig(seed=5)) == 20
    assert planned_here(5, 3, [1, 2, 3], per_world=1) == []  # no other task is set in its office
