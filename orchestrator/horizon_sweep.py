"""``homer eval ... --horizons 5,10,20,40``: evaluate the same tasks at growing history lengths
and fit how success falls (``harness.horizon``).

For each horizon the run folder gets ``horizons/d<H>/data`` (the stretched tasks, their offices
copied) and ``horizons/d<H>/run`` (an ordinary eval run on them); then ``horizon.json`` (the points,
the log-sigmoid fit and its intervals, the tasks left out at a horizon and why),
``horizon-report.md`` and ``horizon-report.html`` (the curve, inline).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from backends.dataset import iter_tasks
from harness.horizon import HorizonError, fit_line, fit_with_intervals, points_table, stretch_record
from harness.report import markdown_table
from harness.runner import EvalConfig, evaluate
from office_env.workspace import atomic_write
from orchestrator.dataset import stage_task, write_index


class SweepError(ValueError):
    """Horizons that cannot be run on this dataset; the message names the task."""


def parse_horizons(text: str) -> list[int]:
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise SweepError(f"--horizons {text!r}: a comma list of day counts, e.g. 5,10,20,40") from None
    if len(values) < 1 or values[0] < 1 or values[-1] > 365:
        raise SweepError(f"--horizons {text!r}: day counts from 1 to 365")
    return values


def run_sweep(dataset: Path, out: Path, config: EvalConfig, horizons: list[int]) -> dict[str, Any]:
    tasks = [t for t in iter_tasks(dataset) if t.record is not None]
    for task in tasks:
        own = len(task.record.get("dialogue") or [])
        if horizons[0] < own:
            raise SweepError(f"--horizons: {horizons[0]} day(s) is below the history of {task.id} ({own} days); "
                             f"start at {own} or more")
    per_task: dict[str, dict[int, float]] = {}
    left_out: dict[str, list[dict[str, str]]] = {}
    tokens: dict[int, float] = {}
    for horizon in horizons:
        folder = out / "horizons" / f"d{horizon}"
        data = folder / "data"
        if folder.exists():
            shutil.rmtree(folder)
        (data / "tasks").mkdir(parents=True)
        staging = folder / ".staging"
        staging.mkdir()
        records = []
        for task in tasks:
            try:
                record = stretch_record(task.record, horizon)
            except (HorizonError, KeyError, TypeError, ValueError) as exc:
                left_out.setdefault(str(horizon), []).append({"id": task.id, "reason": str(exc)[:300]})
                continue
            staged = stage_task(staging, record, task.testbed, task.reference)
            staged.rename(data / "tasks" / task.id)
            records.append(record)
        shutil.rmtree(staging)
        write_index(data, records)
        summary = evaluate(data, folder / "run", config)
        scored: dict[str, list[bool]] = {}
        for row in summary.rows:
            if not row.get("error"):
                scored.setdefault(row["id"], []).append(bool(row["passed"]))
        for task_id, passes in scored.items():
            per_task.setdefault(task_id, {})[horizon] = sum(passes) / len(passes)
        overall = summary.metrics["groups"]["overall"]
        tokens[horizon] = overall["context_tokens"] or 0.0
    result = fit_with_intervals(horizons, per_task)
    for point in result.get("points", []):
        point["context_tokens"] = tokens.get(point["days"])
    result.update({"agent": config.agent, "context": config.context.label(), "horizons": horizons,
                   "left_out": left_out, "dataset": str(dataset.resolve())})
    atomic_write(out / "horizon.json", json.dumps(result, indent=1).encode("utf-8"))
    atomic_write(out / "horizon-report.md", render_markdown(result).encode("utf-8"))
    atomic_write(out / "horizon-report.html", render_html(result).encode("utf-8"))
    return result


def render_markdown(result: dict[str, Any]) -> str:
    headers, rows = points_table(result)
    out = [f"# Horizon sweep: {result['agent']} agent, {result['context']}", "",
           f"{result.get('tasks', 0)} task(s) scored at every horizon. Fit S(t) = S_max / (1 + (t_mid / t)^beta), "
           f"95 % bootstrap intervals over tasks: {fit_line(result)}.", "", markdown_table(headers, rows)]
    for horizon, items in result.get("left_out", {}).items():
        out += ["", f"Left out at {horizon} days: " + "; ".join(f"{i['id']} ({i['reason']})" for i in items)]
    return "\n".join(out) + "\n"


def render_html(result: dict[str, Any]) -> str:
    from harness.plots import horizon_curve
    from harness.report_html import inline_figures, render_page

    headers, table = points_table(result)
    figures = inline_figures([("horizon-curve", horizon_curve(result),
                               "Pass rate against history length, with the log-sigmoid fit")])
    return render_page(title=f"Horizon sweep: {result['agent']} agent, {result['context']}", summary=fit_line(result),
                       headers=headers, table=table,
                       notes=["S(t) = S_max / (1 + (t_mid / t)^beta); a negative beta is success falling as the "
                              "history grows."],
                       figures=figures, config=[("dataset", result["dataset"]), ("horizons", result["horizons"])])
