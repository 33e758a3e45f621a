"""The horizon sweep: stretched histories keep the task's sessions at the same relative places, the
log-sigmoid fit recovers known curves, and homer eval --horizons end to end."""

from __future__ import annotations

import copy
import json
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pytest
from click.testing import Result
from typer.testing import CliRunner

from backends.task_record import parse_record
from generators.dialogue_offline import generate_dialogue, plan_dialogue
from generators.model import MemoryPiece, TaskDraft
from generators.spoken_time import read_times, value_time
from harness.horizon import fit_log_sigmoid, fit_with_intervals
from orchestrator.build import build
from orchestrator.cli import app
from orchestrator.horizon_sweep import HorizonError, stretch_record
from orchestrator.roles import BuildConfig
from tests.support.records import task_records
from verifier.dialogue_rules import mark_problems, marked_turns

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("horizon") / "data"
    build(out, 3, BuildConfig(seed=9))
    return out


def _unrelative(text: str, said_on: date) -> str:
    """``text`` with each day or moment it names written as a date (what a relative phrase means)."""
    from generators.spoken_time import read_times

    for found in sorted(read_times(text, said_on), key=lambda f: -f.start):
        text = text[:found.start] + str(found.when) + text[found.end:]
    return text


def _days_named(text: str, said_on: date) -> list[tuple[str, str]]:
    """Each day or moment ``text`` names: as a date, and as how far it is from ``said_on``."""
    from datetime import datetime

    from generators.spoken_time import read_times

    named = []
    for found in sorted(read_times(text, said_on), key=lambda f: f.start):
        when = found.when
        day = when.date() if isinstance(when, datetime) else when
        ahead = f"{(day - said_on).days}d" + (f" {when.time()}" if isinstance(when, datetime) else "")
        named.append((str(when), ahead))
    return named


def test_a_stretched_history_keeps_the_sessions_at_their_relative_places(dataset: Path):
    record = task_records(dataset)[0]
    original = record["dialogue"]
    stretched = stretch_record(parse_record(record), 20).to_dict()["dialogue"]
    assert len(stretched) == 20
    for i, session in enumerate(original):
        moved = stretched[(i * 20) // len(original)]
        # the same lines, but a task's day said relatively ("Tuesday next week") is said again for the
        # new date (other talk keeps its words: _retimed re-says only the task's days)
        said_on, moved_on = date.fromisoformat(session["date"]), date.fromisoformat(moved["date"])
        for new, old in zip(moved["turns"], session["turns"], strict=True):
            # each day it names is the same day (a task's), or as far from the new date as it was
            # from the old one (other talk moves with its session)
            before, after = _days_named(old["text"], said_on), _days_named(new["text"], moved_on)
            assert len(before) == len(after), (old["text"], new["text"])
            for (was, was_ahead), (now, now_ahead) in zip(before, after):
                assert now == was or now_ahead == was_ahead, (old["text"], new["text"])
        redated = [t for t in moved["turns"] if t.get("evidence") or t.get("superseded") or t.get("distractor")]
        assert all(_unrelative(t["text"], moved_on) == _unrelative(o["text"], said_on)
                   for t, o in zip(moved["turns"], session["turns"]) if t in redated)
        assert [t.get("evidence") for t in moved["turns"]] == [t.get("evidence") for t in session["turns"]]
        assert all(t["ts"].startswith(moved["date"]) for t in moved["turns"])
    dates = [date.fromisoformat(s["date"]) for s in stretched]
    assert dates == sorted(dates) and all(d.weekday() < 5 for d in dates)
    assert dates[-1] < date.fromisoformat(record["now"]["date"])
    texts = [t["text"] for s in stretched for t in s["turns"]]
    assert len(texts) == len(set(texts))  # the filler days say nothing the history said
    values = [str(m["value"]).lower() for m in record["memory"]]
    filler = [t["text"].lower() for i, s in enumerate(stretched) if i not in {(k * 20) // len(original)
                                                                            for k in range(len(original))}
              for t in s["turns"]]
    assert not any(v in line for v in values for line in filler)
    assert stretch_record(parse_record(record), 20) == stretch_record(parse_record(record), 20)  # deterministic
    with pytest.raises(HorizonError, match="below the task's own history"):
        stretch_record(parse_record(record), len(original) - 1)


def test_a_day_said_relatively_still_names_its_day_once_moved(dataset: Path):
    """A session that says "tomorrow at 16:00" and moves to an earlier date says the same moment
    again for that date; the record's ``said_as`` follows its first evidence turn."""
    record = copy.deepcopy(task_records(dataset)[0])
    now = datetime(2024, 5, 20, 9, 30)
    pieces = [MemoryPiece("m1", "fact", "the review is at 2024-05-17 16:00", "2024-05-17 16:00", thread="t1",
                          superseded=("2024-05-16 10:00",), cue="meeting_time", about="the review meeting"),
              MemoryPiece("m2", "fact", "the numbers are from 2024-04-22", "2024-04-22", thread="t2",
                          cue="filter_value", about="the average sales")]
    draft = TaskDraft(family="hand", apps=["calendar"], difficulty="easy", description="d", intent=record["intent"],
                      subtasks=["do it"], evaluation=[], memory=pieces, query="Do the task.", oracle=[])
    for seed in range(8):
        plan, planned = plan_dialogue(draft, seed=seed, now=now, days=5)
        sessions = generate_dialogue(planned, seed=seed, plan=plan, now=now, user_first="Alex")
        record.update(now={"date": "2024-05-20", "weekday": "Monday", "time": "09:30"},
                      memory=[p.to_dict() for p in planned.memory], dialogue=[s.to_dict() for s in sessions])
        out = stretch_record(parse_record(record), 15).to_dict()
        assert not mark_problems(out["memory"], marked_turns(out["dialogue"]))
        for piece in out["memory"]:
            first = next(s for s in out["dialogue"] for t in s["turns"] if piece["id"] in t.get("evidence", ()))
            said_on = date.fromisoformat(first["date"])
            assert [t.when for t in read_times(piece["said_as"], said_on)] == [value_time(piece["value"])]
            assert piece["value"] not in " ".join(t["text"] for s in out["dialogue"] for t in s["turns"])


def test_the_fit_recovers_known_curves():
    t = np.array([5.0, 10, 20, 40, 80])
    falling = 0.8 / (1 + (15 / t) ** -1.5)
    fit = fit_log_sigmoid(t, falling)
    assert fit["beta"] < 0 and abs(fit["s_max"] - 0.8) < 0.05 and 10 < fit["t_mid"] < 22
    assert fit_log_sigmoid(t[:2], falling[:2]) is None
    per_task = {f"t{i}": {int(h): float(v > 0.5) for h, v in zip(t, falling + 0.3 * (i % 3 - 1))} for i in range(30)}
    result = fit_with_intervals([int(h) for h in t], per_task, resamples=50)
    assert result["tasks"] == 30 and all(lo <= result["fit"][k] <= hi for k, (lo, hi) in result["intervals"].items())


def test_the_fit_says_what_flat_or_one_sided_data_leave_undetermined():
    from harness.horizon import fit_line
    from harness.plots import horizon_curve

    flat = fit_with_intervals([5, 10, 20], {f"t{i}": {5: 1.0, 10: 1.0, 20: 1.0} for i in range(6)}, resamples=20)
    assert flat["fit"]["status"] == "flat" and flat["fit"]["t_mid"] is None and flat["fit"]["beta"] is None
    assert fit_line(flat) == "the pass rate is 100.0 % at every horizon: flat data have no t_mid and no beta"
    step = fit_with_intervals([5, 10, 20, 40], {f"t{i}": {5: 1.0, 10: 1.0, 20: 0.0, 40: 0.0} for i in range(6)},
                              resamples=20)
    assert step["fit"]["status"] == "step" and step["fit"]["t_mid_between"] == [10.0, 20.0]
    assert "t_mid between 10 and 20 days, beta undetermined" in fit_line(step)
    tail = fit_with_intervals([5, 10, 20, 40], {f"t{i}": {5: 1.0, 10: 1.0, 20: 0.9, 40: 0.7} for i in range(6)},
                              resamples=20)
    assert tail["fit"]["status"] == "no_midpoint" and "t_mid undetermined, beta undetermined" in fit_line(tail)
    assert "[0.2, 0.2]" not in fit_line(tail) and "8.00" not in fit_line(tail)
    for result in (flat, step, tail):  # no curve is drawn from parameters the data do not determine
        assert horizon_curve(result) is not None


@pytest.fixture(scope="module")
def sweep(dataset: Path, tmp_path_factory) -> tuple[Path, Result]:
    """The oracle's sweep of the dataset over 5, 10 and 20 days, and what the command said: read by
    its own test and by the research report's."""
    out = tmp_path_factory.mktemp("sweep") / "sweep"
    swept = CliRunner().invoke(app, ["eval", str(dataset), "--agent", "oracle", "--mode", "long-context",
                                     "--horizons", "5,10,20", "--out", str(out)])
    return out, swept


def test_eval_horizons_end_to_end(dataset: Path, sweep: tuple[Path, Result], tmp_path: Path):
    runner = CliRunner()
    folder, swept = sweep
    assert swept.exit_code == 0, swept.output
    result = json.loads((folder / "horizon.json").read_text())
    assert [p["days"] for p in result["points"]] == [5, 10, 20] and all(p["pass_rate"] == 1.0 for p in result["points"])
    tokens = [p["context_tokens"] for p in result["points"]]
    assert tokens == sorted(tokens) and tokens[-1] > 3 * tokens[0]
    assert 'id="horizon-curve"' in (folder / "horizon-report.html").read_text()
    assert result["fit"]["status"] == "flat" and "flat data have no t_mid and no beta" in swept.output
    stretched = json.loads(next((folder / "horizons" / "d20" / "data" / "tasks").glob("*/task.json"))
                           .read_text())
    assert len(stretched["dialogue"]) == 20
    below = runner.invoke(app, ["eval", str(dataset), "--agent", "none", "--mode", "long-context",
                                "--horizons", "2,10", "--out", str(tmp_path / "below")])
    assert below.exit_code == 2 and "below the history of" in below.output and not (tmp_path / "below").exists()
    bad = runner.invoke(app, ["eval", str(dataset), "--agent", "none", "--mode", "long-context",
                              "--horizons", "ten", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "--horizons" in bad.output


def test_one_research_report_from_the_runs(dataset: Path, sweep: tuple[Path, Result], tmp_path: Path):
    runner = CliRunner()
    swept, ran = sweep
    assert ran.exit_code == 0, ran.output
    for args in (["eval", str(dataset), "--agent", "oracle", "--mode", "rag", "--trials", "2", "--out",
                  str(tmp_path / "eval"), "--quiet"],
                 ["probe", str(dataset), "--agent", "oracle", "--out", str(tmp_path / "probe"),
                  "--eval", str(tmp_path / "eval")]):
        assert runner.invoke(app, args).exit_code == 0
    made = runner.invoke(app, ["report", str(tmp_path / "eval"), "--probes", str(tmp_path / "probe"),
                               "--horizons", str(swept)])
    assert made.exit_code == 0, made.output
    page = (tmp_path / "eval" / "research-report.html").read_text()
    for figure in ("by-app-count", "pass-hat-k", "recall-vs-pass", "probe-accuracy", "horizon-curve"):
        assert f'id="{figure}"' in page
    text = (tmp_path / "eval" / "research-report.md").read_text()
    assert "## Memory probes" in text and "## Horizon" in text and "ONS [95% CI]" in text
    # every section names the run it comes from; the split is this eval run's failures
    assert f"From eval run `{tmp_path / 'eval'}`: oracle agent" in text
    assert f"From probe run `{tmp_path / 'probe'}`: oracle agent" in text and "not the" not in text
    assert f"(the failures of eval run `{tmp_path / 'eval'}`)" in text
    # a none agent's report with the oracle's probes and sweep says whose they are, and splits nothing
    assert runner.invoke(app, ["eval", str(dataset), "--agent", "none", "--out", str(tmp_path / "none"),
                               "--quiet"]).exit_code == 0
    credited = runner.invoke(app, ["report", str(tmp_path / "none"), "--probes", str(tmp_path / "probe"),
                                   "--horizons", str(swept)])
    assert credited.exit_code == 0, credited.output
    text = (tmp_path / "none" / "research-report.md").read_text()
    assert text.startswith("# Research report: none agent")
    assert "**These are the oracle agent's probes, not the none agent's**" in text
    assert "**This is the oracle agent's horizon curve, not the none agent's.**" in text
    assert "remembered every probed detail" not in text
    assert f"split another eval run's failures (`{tmp_path / 'eval'}`); it is left out here" in text
    # docs/eval.md's own example: the oracle probes the none run's failures: this run's, another agent's memory
    assert runner.invoke(app, ["probe", str(dataset), "--agent", "oracle", "--out", str(tmp_path / "probe-none"),
                               "--eval", str(tmp_path / "none")]).exit_code == 0
    assert runner.invoke(app, ["report", str(tmp_path / "none"), "--probes",
                               str(tmp_path / "probe-none")]).exit_code == 0
    text = (tmp_path / "none" / "research-report.md").read_text()
    assert "split this eval run's failures by the oracle agent's memory, not the none agent's" in text
    assert "another eval run" not in text and "remembered every probed detail" not in text
    assert f"`homer probe ... --agent none --eval {tmp_path / 'none'}` splits them by this run's agent" in text
    wrong = runner.invoke(app, ["report", str(tmp_path / "eval"), "--probes", str(swept)])
    assert wrong.exit_code == 2 and "no probe.json" in wrong.output
    other = tmp_path / "other"
    build(other, 1, BuildConfig(seed=2, days=2, utterances_per_day=12))  # any other contents
    assert runner.invoke(app, ["probe", str(other), "--agent", "none", "--out", str(tmp_path / "p2")]).exit_code == 0
    elsewhere = runner.invoke(app, ["report", str(tmp_path / "eval"), "--probes", str(tmp_path / "p2")])
    assert elsewhere.exit_code == 2 and "other dataset contents: task neo-00000 differs" in elsewhere.output
