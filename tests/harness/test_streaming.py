"""An eval run streams: its rows go to the progress file as tasks finish and nothing holds them all;
``results.jsonl`` is the progress file's rows sorted by a merge of bounded pieces, the figures and
reports come from one pass over them, a resume reads the progress file a line at a time.

Each part is held to what holding every row gives: the figures to the list-based computation the
reports used before (kept here as the reference), the bootstrap drawn in chunks to the one draw, the
merged file to a sort in memory, and a whole run (streamed, pieces spilled to files) to the rows of
its tasks run one by one and sorted; a resume after a torn last line runs exactly the missing tasks.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from pathlib import Path
from statistics import fmean

import numpy as np
import pytest

from harness import report as report_module
from harness import run_folder, scores
from harness.context import ContextConfig
from harness.plots import pass_hat_k_values, recall_bins
from harness.report import failed_runs, metrics, render_report
from harness.run_folder import PROGRESS, RESULTS, write_results
from harness.scores import group_scores, interval, per_task
from harness.totals import ExactMean, Head, RunTotals, stream_totals, totals_of

# -- the figures: one pass against the list-based computation ------------------------------------


def _reference_group(all_rows):
    """``harness.report._group`` and ``_scored`` as they were when the report held every row."""
    rows = [r for r in all_rows if not r.get("error")]
    by_task = defaultdict(list)
    for row in rows:
        by_task[row["id"]].append(row)
    recalls = [r["evidence_recall"] for r in rows if r.get("evidence_recall") is not None]
    group = {
        "tasks": len(by_task), "runs": len(rows),
        "pass_rate": fmean(fmean(1.0 if r["passed"] else 0.0 for r in runs) for runs in by_task.values())
        if by_task else None,
        "pass_k": fmean(1.0 if all(r["passed"] for r in runs) else 0.0 for runs in by_task.values())
        if by_task else None,
        "context_tokens": fmean(r["context_tokens"] for r in rows) if rows else None,
        "steps": fmean(r["steps"] for r in rows) if rows else None,
        "recall": fmean(recalls) if recalls else None,
        "errors": len(all_rows) - len(rows)}
    group.update(group_scores(per_task(all_rows)))
    return group


def _reference_metrics(rows, trials):
    groups = {str(n): _reference_group([r for r in rows if r.get("app_count") == n]) for n in (1, 2, 3)}
    for n in sorted({r.get("app_count") for r in rows} - {1, 2, 3}, key=str):
        groups[str(n)] = _reference_group([r for r in rows if r.get("app_count") == n])
    groups["overall"] = _reference_group(rows)
    usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for row in rows:
        for key, value in ((row.get("trajectory") or {}).get("usage") or {}).items():
            if key in usage:
                usage[key] += int(value)
    whole = len({r["id"] for r in rows if r.get("context_whole")})
    return {"trials": trials, "groups": groups, "agent_usage": usage if usage["calls"] else None,
            **({"whole_history": whole} if whole else {})}


def _rows(seed: int, tasks: int, trials: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for t in range(tasks):
        app_count = rng.choice([1, 1, 2, 3, 3, 4])
        reference = rng.choice([None, {"none": False, "oracle": True}, {"none": True, "oracle": True},
                                {"none": None, "oracle": False}])
        for trial in range(1, trials + 1):
            error = rng.random() < 0.15
            passed = not error and rng.random() < 0.55
            row = {"id": f"t{t:04d}", "trial": trial, "app_count": app_count, "passed": passed,
                   "criteria": [] if passed else [{"index": 0, "function": "f", "passed": False, "reason": "r"}],
                   "steps": rng.randrange(0, 30), "context_tokens": rng.randrange(100, 90_000),
                   "evidence_recall": rng.choice([None, 0.0, 0.25, 0.5, 0.8, 1.0, rng.random()]),
                   "trajectory": {"usage": {"calls": rng.randrange(0, 4), "prompt_tokens": rng.randrange(0, 999),
                                            "completion_tokens": 7}},
                   "error": "error: endpoint: down" if error else None}
            if reference is not None:
                row["reference"] = reference
            if rng.random() < 0.05:
                row["context_whole"] = True
            out.append(row)
    return out


@pytest.mark.parametrize("seed, tasks, trials", [(1, 40, 1), (2, 60, 3), (3, 1, 2), (4, 0, 1)])
def test_the_figures_of_one_pass_are_those_of_every_row_held(seed, tasks, trials):
    rows = _rows(seed, tasks, trials)
    totals = stream_totals(iter(rows), trials)  # sorted by task, as results.jsonl is
    assert totals.metrics() == _reference_metrics(rows, trials)
    assert totals.pass_hat_k() == pass_hat_k_values(rows, trials)
    assert totals.recall_bins() == recall_bins(rows)
    assert list(totals.failed) == failed_runs(rows)[:totals.failed.cap] and len(totals.failed) == len(failed_runs(rows))
    assert totals.errors == [{"id": r["id"], "trial": r["trial"], "error": r["error"]} for r in rows if r["error"]]
    shuffled = rows[:]
    random.Random(seed).shuffle(shuffled)  # metrics() of rows in any order: the same as the list-based one
    assert metrics(shuffled, trials) == _reference_metrics(shuffled, trials)


def test_the_report_lists_the_first_failed_trials_and_counts_the_rest():
    rows = _rows(5, 400, 1)
    totals = totals_of(rows, 1)
    data = totals.metrics()
    assert len(totals.failed) > totals.failed.cap == 100 and len(totals.failed.items) == 100
    held = render_report(data, {"agent": "oracle"}, dataset="ds", skipped=[], errors=totals.errors, rows=rows)
    assert render_report(data, {"agent": "oracle"}, dataset="ds", skipped=[], errors=totals.errors,
                         failed=totals.failed) == held
    assert f"- ... and {len(totals.failed) - 100} more" in held


def test_an_exact_running_mean_is_fmean_whatever_the_values():
    rng = random.Random(7)
    values = [rng.choice([1e16, -1e16, 1.0, 0.1, 3, rng.random() * 1e-9]) for _ in range(5000)]
    mean = ExactMean()
    for value in values:
        mean.add(value)
    assert mean.value() == fmean(values)
    assert ExactMean().value() is None
    head = Head(2)
    for item in "abc":
        head.append(item)
    assert len(head) == 3 and list(head) == ["a", "b"] and head[:5] == ["a", "b"]


def test_the_bootstrap_drawn_in_chunks_is_the_one_draw(monkeypatch):
    rng = random.Random(9)
    values = np.array([rng.random() for _ in range(123)])
    none, oracle = np.array([rng.random() < 0.2 for _ in range(123)], float), np.ones(123)
    whole = (interval(values, 500, 3), scores.ons_interval(values, none, oracle, 500, 3))
    monkeypatch.setattr(scores, "CHUNK_VALUES", 1000)  # 8 resamples of 123 at a time
    assert (interval(values, 500, 3), scores.ons_interval(values, none, oracle, 500, 3)) == whole
    monkeypatch.setattr(scores, "CHUNK_VALUES", 1)  # one resample at a time
    assert (interval(values, 500, 3), scores.ons_interval(values, none, oracle, 500, 3)) == whole
    assert interval(values, 0) is None


# -- results.jsonl: a merge of sorted pieces ----------------------------------------------------

def test_results_are_the_progress_rows_sorted_whatever_the_pieces(tmp_path, monkeypatch):
    rows = _rows(11, 150, 2)
    random.Random(1).shuffle(rows)  # in the order the tasks finished
    lines = [{"header": {"config": {}}}, *rows[:70], {"id": "t9999", "skipped": "unusable"}, *rows[70:]]
    (tmp_path / PROGRESS).write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    expected = "".join(json.dumps(r, ensure_ascii=False) + "\n"
                       for r in sorted(rows, key=lambda r: (r["id"], r["trial"])))
    monkeypatch.setattr(run_folder, "SORT_PIECE_BYTES", 4000)  # a dozen rows a piece: 25 files
    monkeypatch.setattr(run_folder, "MERGE_FAN_IN", 4)  # merged in rounds
    seen = []
    assert write_results(tmp_path, seen.append) == len(rows)
    assert (tmp_path / RESULTS).read_text() == expected
    assert seen == [json.loads(line) for line in expected.splitlines()]
    assert sorted(os.listdir(tmp_path)) == [PROGRESS, RESULTS]  # no piece left


# -- a whole run, streamed, against its tasks run one by one -------------------------------------

def _oracle(workers: int = 1):
    from harness.runner import EvalConfig

    return EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), workers=workers)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    out = tmp_path_factory.mktemp("streaming") / "ds"
    assert build(out, 7, BuildConfig(seed=3, days=2, utterances_per_day=8), workers=1).accepted == 7
    return out


@pytest.fixture(scope="module")
def held(dataset, tmp_path_factory) -> list[dict]:
    """The rows of every task, each task run on its own in this process and all of them held:
    what a run gives without streaming."""
    from backends.dataset_reader import iter_tasks
    from harness.runner import run_task

    out = tmp_path_factory.mktemp("held")
    rows = []
    for task in iter_tasks(dataset):
        rows += run_task(str(dataset), task.id, task.task, str(out), _oracle())["rows"]
    return sorted(rows, key=lambda r: (r["id"], r["trial"]))


def _figures(run: Path) -> dict:
    data = json.loads((run / "run.json").read_text())
    return {k: data[k] for k in ("tasks", "runs", "skipped", "metrics", "task_digests", "dataset_fingerprint")}


@pytest.mark.slow
def test_a_streamed_run_writes_what_holding_every_row_gives(dataset, held, tmp_path, monkeypatch):
    from harness.report_html import render_html
    from harness.runner import evaluate

    monkeypatch.setattr(run_folder, "SORT_PIECE_BYTES", 5000)  # the rows sorted in pieces spilled to files
    pieces = []
    real_piece = run_folder._write_piece
    monkeypatch.setattr(run_folder, "_write_piece", lambda path, lines: pieces.append(path) or real_piece(path, lines))
    monkeypatch.setattr(report_module, "counter_name", lambda: "not the workers' counter")  # they name theirs
    summary = evaluate(dataset, tmp_path / "run", _oracle(workers=2))
    monkeypatch.undo()
    assert len(pieces) >= 2
    text = (tmp_path / "run" / RESULTS).read_text()
    assert text == "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in held)
    assert summary.runs == len(held) == 7 and summary.rows == held
    data = metrics(held, 1)
    assert summary.metrics == data == _reference_metrics(held, 1)
    assert _figures(tmp_path / "run")["metrics"] == json.loads(json.dumps(data))
    config = summary.config.to_dict()
    report = (tmp_path / "run" / "report.md").read_text()
    assert report == render_report(data, config, dataset=str(dataset), skipped=[], errors=[],
                                   elapsed=summary.elapsed, rows=held)
    assert (tmp_path / "run" / "report.html").read_text() == render_html(data, config, held, dataset=str(dataset))
    assert sorted(os.listdir(tmp_path / "run")) == ["report.html", "report.md", RESULTS, "run.json"]  # no piece left


@pytest.mark.slow
def test_a_resume_after_a_torn_last_line_runs_exactly_the_missing_tasks(dataset, held, tmp_path, monkeypatch):
    from backends.job_contract import Interrupted
    from harness import runner
    from harness.runner import evaluate

    full = tmp_path / "full"
    evaluate(dataset, full, _oracle())
    out = tmp_path / "run"

    def crash_after_four(done: int, total: int) -> None:
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        evaluate(dataset, out, _oracle(), on_progress=crash_after_four)
    progress = (out / PROGRESS).read_bytes().splitlines(keepends=True)
    assert len(progress) == 1 + 4  # the header and four tasks' rows, each appended as it finished
    (out / PROGRESS).write_bytes(b"".join(progress[:-1]) + progress[-1][: len(progress[-1]) // 2])  # torn by a kill
    ran = []
    real = runner.run_task
    monkeypatch.setattr(runner, "run_task", lambda *args: ran.append(args[1]) or real(*args))
    resumed = evaluate(dataset, out, _oracle(), resume=True)
    assert ran == [r["id"] for r in held[3:]]  # the torn task and the three never started, nothing else
    assert (out / RESULTS).read_bytes() == (full / RESULTS).read_bytes()
    assert _figures(out) == _figures(full) and resumed.metrics == metrics(held, 1)
    assert not (out / PROGRESS).exists()


# -- reading a finished run back: a row at a time ------------------------------------------------

def test_a_finished_run_is_read_a_row_at_a_time(tmp_path):
    from harness.run_view import view_of
    from harness.scores import RunError, compare_runs, open_run, read_run

    rows = [{"id": f"t{n}", "trial": 1, "passed": n % 2 == 0, "criteria": [],
             "trajectory": {"final_message": "a line\u2028and a paragraph\u2029end"}} for n in range(5)]
    (tmp_path / "run.json").write_text(json.dumps({"state": "finished", "dataset": "ds"}))
    (tmp_path / RESULTS).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + "{not json\n")
    meta, read = open_run(tmp_path)
    assert meta["dataset"] == "ds"
    assert [next(read) for _ in range(5)] == rows  # U+2028 inside a string does not end a line
    with pytest.raises(RunError, match="line 6"):  # a bad line is found when it is reached
        next(read)
    with pytest.raises(RunError, match="line 6"):
        read_run(tmp_path)
    (tmp_path / RESULTS).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    view = view_of(tmp_path, meta, open_run(tmp_path)[1], "t3")
    assert [t["id"] for t in view["tasks"]] == ["t3"] and view["counts"] == {"pass": 0, "fail": 1, "error": 0}
    with pytest.raises(RunError, match=r"it ran 5 task\(s\)"):
        view_of(tmp_path, meta, open_run(tmp_path)[1], "t9")
    assert compare_runs(open_run(tmp_path)[1], iter(rows))["same"] == 5


@pytest.mark.slow
def test_a_task_that_gives_no_result_fails_with_its_own_fields(dataset, held, tmp_path):
    """A task over its time budget gives no rows: the parent reads its record again for the rows it
    writes in their place (its app count, apps and family), and the figures count them as errors."""
    from backends.job_contract import Budget
    from harness.runner import evaluate

    summary = evaluate(dataset, tmp_path / "run", _oracle(workers=2), budget=Budget(seconds=0.001))
    rows = summary.rows
    assert [r["id"] for r in rows] == [r["id"] for r in held]
    assert all(r["error"].startswith("error: timeout") and not r["passed"] for r in rows)
    assert [(r["app_count"], r["apps"], r["family"]) for r in rows] == \
        [(r["app_count"], r["apps"], r["family"]) for r in held]
    assert summary.overall["errors"] == len(held) and summary.overall["tasks"] == 0
    assert summary.errors == [{"id": r["id"], "trial": 1, "error": r["error"]} for r in rows]
