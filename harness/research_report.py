"""``homer report RUN [--probes PROBE_RUN] [--horizons SWEEP_RUN]``: one report of what a researcher
asks of an agent, from runs already made on the same dataset.

``research-report.md`` and ``research-report.html`` (self-contained, figures inline) in ``RUN``:
pass rate, pass^k and ONS by app count with their intervals, the pass^k curve and pass rate by
evidence recall (from the eval run); probe accuracy per memory dynamic and the split of the eval's
failures into "did not remember" and "remembered but did not act" (from a probe run); the horizon
curve and its log-sigmoid fit (from a sweep). A run on another dataset is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from harness import plots
from harness.horizon import fit_line, points_table
from harness.probe_run import probe_table, split_line
from harness.report import markdown_table, pct, table_rows, usage_line
from harness.report_html import eval_figures, inline_figures, render_page
from harness.scores import RunError, open_run, pairing_problem
from harness.totals import OVERALL, stream_totals
from office_env.untrusted import UntrustedInputError, load_json, printable


def _same_dataset(label: str, folder: Path, data: Any, run: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("dataset"), str):
        raise RunError(f"{label} {printable(str(folder))}: field dataset: missing")
    problem = pairing_problem(run, data)
    if problem is not None:
        raise RunError(f"{label} {printable(str(folder))}: not a run on the eval run's dataset: {problem}")
    return data


def _load(label: str, folder: Path, name: str, dataset: dict[str, Any]) -> dict[str, Any]:
    if not (folder / name).is_file():
        raise RunError(f"{label} {printable(str(folder))}: no {name} (not the run this option takes)")
    try:
        return _same_dataset(label, folder, load_json(folder / name), dataset)
    except UntrustedInputError as exc:
        raise RunError(f"{label}: {exc}") from None


def compose(run: Path, probes: Path | None = None, horizons: Path | None = None) -> tuple[str, str]:
    meta, rows = open_run(run)
    metrics = meta.get("metrics")
    if not isinstance(metrics, dict) or not isinstance(metrics.get("groups"), dict):
        raise RunError(f"{printable(str(run))}/run.json: field metrics: missing")
    probe = _load("--probes", probes, "probe.json", meta) if probes is not None else None
    sweep = _load("--horizons", horizons, "horizon.json", meta) if horizons is not None else None
    config = cast("dict[str, Any]", meta.get("config")) if isinstance(meta.get("config"), dict) else {}
    try:
        headers, table = table_rows(metrics, rag=(config.get("context") or {}).get("mode") == "rag")
        figures = eval_figures(metrics, stream_totals(rows, metrics["trials"]))
    except (KeyError, TypeError) as exc:
        raise RunError(f"{printable(str(run))}/run.json: field metrics: malformed ({exc.__class__.__name__})") from None
    figures += inline_figures([
        ("probe-accuracy", plots.probe_accuracy(probe) if probe else None, "Memory probes by dynamic"),
        ("horizon-curve", plots.horizon_curve(sweep) if sweep else None, "Pass rate against history length")])
    notes = ["Intervals: 95 % percentile bootstrap over tasks. ONS = (agent - none) / (oracle - none)."]
    agent = _agent(config.get("agent"), config.get("model"))
    title = f"Research report: {agent}, {config.get('context_label')}"
    md = [f"# {title}", "", f"Dataset `{meta['dataset']}` (fingerprint {meta.get('dataset_fingerprint', '-')}).",
          "", "## Scores", "", f"From eval run `{run}`: {agent}, {config.get('context_label')}.", "",
          markdown_table(headers, table, bold_last=True)]
    if usage_line(metrics):
        md += ["", f"Agent model usage: {usage_line(metrics)}"]
        notes.append(f"Agent model usage: {usage_line(metrics)}")
    if probe:
        theirs = _agent(probe.get("agent"), probe.get("model"))
        md += ["", "## Memory probes", "", f"From probe run `{probes}`: {theirs}, {probe.get('context')}."]
        if theirs != agent:
            md += ["", f"**These are the {theirs}'s probes, not the {agent}'s**: they describe another agent's "
                       "memory."]
        md += ["", markdown_table(*probe_table(probe), bold_last=True)]
        split = split_line(probe)
        this_run = probe.get("eval_run") == str(Path(run).resolve())
        hint = f"`homer probe ... --agent {printable(str(config.get('agent')))} --eval {run}` splits them"
        if split and theirs == agent and this_run:
            md += ["", f"{split} (the failures of eval run `{run}`)"]
            notes.append(split)
        elif split and this_run:  # this run's failures, but what another agent remembers of them
            md += ["", f"The probe run split this eval run's failures by the {theirs}'s memory, not the {agent}'s; "
                       f"it is left out here ({hint} by this run's agent)."]
        elif split:
            where = f" (`{printable(str(probe.get('eval_run')))}`)" if probe.get("eval_run") else ""
            md += ["", f"The probe run split another eval run's failures{where}; it is left out here ({hint})."]
    if sweep:
        theirs = _agent(sweep.get("agent"), sweep.get("model"))
        md += ["", "## Horizon", "", f"From horizon sweep `{horizons}`: {theirs}, {sweep.get('context')}."]
        if theirs != agent:
            md += ["", f"**This is the {theirs}'s horizon curve, not the {agent}'s.**"]
        md += ["", markdown_table(*points_table(sweep)), "", f"Fit: {fit_line(sweep)}."]
        notes.append(f"Horizon fit ({theirs}): {fit_line(sweep)}.")
    md += ["", notes[0], ""]
    overall = metrics["groups"].get(OVERALL, {})
    html = render_page(
        title=title, summary=f"{overall.get('tasks', 0)} task(s) of {meta['dataset']}: pass rate "
                             f"{pct(overall.get('pass_rate'))} %.",
        headers=headers, table=table, notes=notes, figures=figures,
        config=[("eval run", f"{run} ({agent})"),
                ("probe run", f"{probes} ({_agent(probe.get('agent'), probe.get('model'))})" if probe else "-"),
                ("horizon sweep", f"{horizons} ({_agent(sweep.get('agent'), sweep.get('model'))})" if sweep else "-")])
    return "\n".join(md), html


def _agent(name: Any, model: Any) -> str:
    """How a report names the agent of a run: "llm agent (gpt-4o-mini)", "oracle agent"."""
    return f"{name} agent" + (f" ({model})" if name == "llm" and model else "")
