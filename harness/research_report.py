"""``homer report RUN [--probes PROBE_RUN] [--horizons SWEEP_RUN]``: one report of what a researcher
asks of an agent, from runs already made on the same dataset.

``research-report.md`` and ``research-report.html`` (self-contained, figures inline) in ``RUN``:
pass rate, pass^k and ONS by app count with their intervals, the pass^k curve and pass rate by
evidence recall (from the eval run); probe accuracy per memory dynamic and the split of the eval's
failures into "did not remember" and "remembered but did not act" (from a probe run); the horizon
curve and its log-sigmoid fit (from a sweep). A run on another dataset is refused.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import jinja2

from backends.prompts import TEMPLATES
from harness import plots
from harness.report import OVERALL, _ons, _pct, _with_ci
from harness.scores import RunError, read_run, same_dataset
from office_env.untrusted import UntrustedInputError, load_json, printable


def _same_dataset(label: str, folder: Path, data: Any, dataset: str) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("dataset"), str):
        raise RunError(f"{label} {printable(str(folder))}: field dataset: missing")
    if not same_dataset(data["dataset"], dataset):
        raise RunError(f"{label} {printable(str(folder))}: a run on another dataset ({printable(data['dataset'])})")
    return data


def _load(label: str, folder: Path, name: str, dataset: str) -> dict[str, Any]:
    if not (folder / name).is_file():
        raise RunError(f"{label} {printable(str(folder))}: no {name} (not the run this option takes)")
    try:
        return _same_dataset(label, folder, load_json(folder / name), dataset)
    except UntrustedInputError as exc:
        raise RunError(f"{label}: {exc}") from None


def compose(run: Path, probes: Path | None = None, horizons: Path | None = None) -> tuple[str, str]:
    meta, rows = read_run(run)
    metrics = meta.get("metrics")
    if not isinstance(metrics, dict) or not isinstance(metrics.get("groups"), dict):
        raise RunError(f"{printable(str(run))}/run.json: field metrics: missing")
    probe = _load("--probes", probes, "probe.json", meta["dataset"]) if probes is not None else None
    sweep = _load("--horizons", horizons, "horizon.json", meta["dataset"]) if horizons is not None else None
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    k = int(metrics.get("trials") or 1)
    headers = ["apps", "tasks", "pass rate (%) [95% CI]"] + ([f"pass^{k} (%) [95% CI]"] if k > 1 else []) + \
        ["ONS [95% CI]"]
    table = []
    for name, group in metrics["groups"].items():
        label = "overall" if name == OVERALL else f"{name} app{'s' if name != '1' else ''}"
        cells = [label, str(group.get("tasks", 0)), _with_ci(group.get("pass_rate"), group.get("pass_rate_ci"))]
        if k > 1:
            cells.append(_with_ci(group.get("pass_k"), group.get("pass_k_ci")))
        cells.append(_ons(group.get("ons"), group.get("ons_ci")))
        table.append(cells)
    figures = []
    for figure_id, png, caption in (
            ("by-app-count", plots.by_app_count(metrics), "Pass rate and ONS by app count (95 % intervals)"),
            ("pass-hat-k", plots.pass_hat_k(rows, k), f"pass^k for k = 1..{k}"),
            ("recall-vs-pass", plots.recall_vs_pass(rows), "Pass rate by the share of evidence retrieval found"),
            ("probe-accuracy", plots.probe_accuracy(probe) if probe else None, "Memory probes by dynamic"),
            ("horizon-curve", plots.horizon_curve(sweep) if sweep else None, "Pass rate against history length")):
        if png is not None:
            figures.append({"id": figure_id, "png": base64.b64encode(png).decode("ascii"), "caption": caption})
    notes = ["Intervals: 95 % percentile bootstrap over tasks. ONS = (agent - none) / (oracle - none)."]
    md = [f"# Research report: {config.get('agent')} agent, {config.get('context_label')}", "",
          f"Dataset `{meta['dataset']}`; eval run `{run}`.", "", "## Scores", "",
          "| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    md += ["| " + " | ".join(row) + " |" for row in table]
    if probe:
        md += ["", "## Memory probes", "", "| dynamic | questions | closed-book (%) | with the history (%) |",
               "| --- | ---: | ---: | ---: |"]
        for name, row in probe.get("by_dynamic", {}).items():
            md.append(f"| {name.replace('_', ' ')} | {row.get('questions')} | {_pct(row.get('closed_book'))} | "
                      f"{_pct(row.get('with_history'))} |")
        split = probe.get("eval_split")
        if isinstance(split, dict):
            line = (f"Failures of the eval the probes were joined with: {split.get('did_not_remember')} did not "
                    f"remember, {split.get('remembered_but_did_not_act')} remembered but did not act.")
            md += ["", line]
            notes.append(line)
    if sweep:
        fit = sweep.get("fit") or {}
        md += ["", "## Horizon", "", "| days | pass rate (%) |", "| ---: | ---: |"]
        md += [f"| {p['days']} | {100 * p['pass_rate']:.1f} |" for p in sweep.get("points", [])]
        if fit:
            line = (f"Fit S(t) = S_max / (1 + (t_mid / t)^beta): S_max {fit['s_max']:.2f}, t_mid {fit['t_mid']:.1f} "
                    f"days, beta {fit['beta']:.2f}.")
            md += ["", line]
            notes.append(line)
    md += ["", notes[0], ""]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES / "report")), autoescape=True)
    overall = metrics["groups"].get(OVERALL, {})
    html = env.get_template("report.html").render(
        title=f"Research report: {config.get('agent')} agent, {config.get('context_label')}",
        summary=f"{overall.get('tasks', 0)} task(s) of {meta['dataset']}: pass rate {_pct(overall.get('pass_rate'))} %.",
        headers=headers, table=table, notes=notes, figures=figures,
        config=[("eval run", str(run)), ("probe run", str(probes or "-")), ("horizon sweep", str(horizons or "-"))])
    return "\n".join(md), html
