"""Self-contained HTML reports (``templates/report/report.html``): a title, a summary, one table,
notes, figures inline as PNG data and the configuration. The eval's ``report.html`` is built here;
the probe, horizon and research reports use the same page. Text is escaped by Jinja2's
autoescaping."""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import Any, Iterable, Sequence

import jinja2

from backends.prompts import TEMPLATES
from harness import plots
from harness.report import ons, pct, table_rows, usage_line
from harness.totals import FAILED_SHOWN, OVERALL, RunTotals, totals_of


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES / "report")), autoescape=True)


def inline_figures(items: Iterable[tuple[str, bytes | None, str]]) -> list[dict[str, str]]:
    """``(id, png, caption)`` triples as the page's figures; a figure with nothing to draw (None) is left out."""
    return [{"id": figure_id, "png": base64.b64encode(png).decode("ascii"), "caption": caption}
            for figure_id, png, caption in items if png is not None]


def render_page(*, title: str, summary: str, headers: list[str], table: list[list[str]], notes: list[str],
                figures: list[dict[str, str]], config: list[tuple[str, Any]],
                failed: Sequence[tuple[str, int, str]] | None = None) -> str:
    return _environment().get_template("report.html").render(title=title, summary=summary, headers=headers,
                                                             table=table, notes=notes, figures=figures, config=config,
                                                             failed=failed or [], shown=FAILED_SHOWN)


def eval_figures(data: dict[str, Any], totals: RunTotals) -> list[dict[str, str]]:
    """The eval's figures: pass rate and ONS by app count, the pass^k curve, pass rate by recall
    (the last two from the run's rows, as ``totals`` holds them)."""
    return inline_figures((
        ("by-app-count", plots.by_app_count(data), "Pass rate and ONS by app count, with 95 % bootstrap intervals"),
        ("pass-hat-k", plots.pass_hat_k_figure(*totals.pass_hat_k(), data["trials"]),
         f"pass^k for k = 1..{data['trials']}"),
        ("recall-vs-pass", plots.recall_figure(totals.recall_bins()),
         "Pass rate by the share of evidence retrieval found")))


def render_html(data: dict[str, Any], config: dict[str, Any], rows: list[dict[str, Any]] | None = None, *,
                dataset: str, totals: RunTotals | None = None) -> str:
    """The eval's ``report.html`` from its figures ``data`` and its ``rows`` (or their ``totals``,
    ``harness.totals.RunTotals``, which an eval run keeps instead of its rows)."""
    if totals is None:
        totals = totals_of(rows or [], data["trials"])
    rag = (config.get("context") or {}).get("mode") == "rag"
    headers, table = table_rows(data, rag=rag)
    overall = data["groups"][OVERALL]
    title = (f"Evaluation: {config.get('agent')} agent, "
             f"{config.get('context_label') or (config.get('context') or {}).get('mode')}")
    summary = (f"{overall['tasks']} task(s) of {dataset}, {data['trials']} trial(s) each: pass rate "
               f"{pct(overall['pass_rate'])} %, ONS {ons(overall.get('ons'), overall.get('ons_ci'))}.")
    notes = ["Intervals: 95 % percentile bootstrap over tasks. "
             "ONS = (agent - none) / (oracle - none) on the same tasks.",
             "Runs that ended with an error are neither passes nor fails."]
    if usage_line(data):
        notes.append(f"Agent model usage: {usage_line(data)}")
    flat = [(key, ", ".join(f"{a}={b}" for a, b in value.items()) if isinstance(value, dict) else value)
            for key, value in config.items()]
    return render_page(title=title, summary=summary, headers=headers, table=table, notes=notes,
                       figures=eval_figures(data, totals), config=flat, failed=totals.failed)
