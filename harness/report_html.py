"""``report.html``: the eval report as one self-contained page (the table, the figures inline as
PNG data, the configuration), beside ``report.md``. Text is escaped by Jinja2's autoescaping."""

from __future__ import annotations

import base64
from typing import Any

import jinja2

from backends.prompts import TEMPLATES
from harness import plots
from harness.report import OVERALL, _ons, _num, _pct, _with_ci


def render_html(data: dict[str, Any], config: dict[str, Any], rows: list[dict[str, Any]], *, dataset: str) -> str:
    k = data["trials"]
    rag = (config.get("context") or {}).get("mode") == "rag"
    headers = ["apps", "tasks", "pass rate (%) [95% CI]"] + ([f"pass^{k} (%) [95% CI]"] if k > 1 else []) + \
        ["ONS [95% CI]", "avg context tokens", "avg steps"] + (["retrieval recall (%)"] if rag else []) + ["errors"]
    table = []
    for name, group in data["groups"].items():
        label = "overall" if name == OVERALL else f"{name} app{'s' if name != '1' else ''}"
        cells = [label, str(group["tasks"]), _with_ci(group["pass_rate"], group.get("pass_rate_ci"))]
        if k > 1:
            cells.append(_with_ci(group["pass_k"], group.get("pass_k_ci")))
        cells += [_ons(group.get("ons"), group.get("ons_ci")), _num(group["context_tokens"]), _num(group["steps"])]
        if rag:
            cells.append(_pct(group["recall"]))
        cells.append(str(group["errors"]))
        table.append(cells)
    figures = []
    for figure_id, png, caption in (
            ("by-app-count", plots.by_app_count(data), "Pass rate and ONS by app count, with 95 % bootstrap intervals"),
            ("pass-hat-k", plots.pass_hat_k(rows, k), f"pass^k for k = 1..{k}"),
            ("recall-vs-pass", plots.recall_vs_pass(rows), "Pass rate by the share of evidence retrieval found")):
        if png is not None:
            figures.append({"id": figure_id, "png": base64.b64encode(png).decode("ascii"), "caption": caption})
    overall = data["groups"][OVERALL]
    title = f"Evaluation: {config.get('agent')} agent, {config.get('context_label') or (config.get('context') or {}).get('mode')}"
    summary = (f"{overall['tasks']} task(s) of {dataset}, {k} trial(s) each: pass rate {_pct(overall['pass_rate'])} %, "
               f"ONS {_ons(overall.get('ons'), overall.get('ons_ci'))}.")
    notes = ["Intervals: 95 % percentile bootstrap over tasks. ONS = (agent - none) / (oracle - none) on the same tasks.",
             "Runs that ended with an error are neither passes nor fails."]
    flat = [(key, ", ".join(f"{a}={b}" for a, b in value.items()) if isinstance(value, dict) else value)
            for key, value in config.items()]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES / "report")), autoescape=True)
    return env.get_template("report.html").render(title=title, summary=summary, headers=headers, table=table,
                                                  notes=notes, figures=figures, config=flat)
