"""The figures of an eval report (matplotlib, drawn off screen to PNG bytes).

- ``by_app_count``: pass rate and ONS per app count and overall, with their 95 % intervals;
- ``pass_hat_k``: pass^k for k = 1..trials (the unbiased estimator over each task's trials);
- ``recall_vs_pass``: in RAG runs, the pass rate of runs grouped by how much of the evidence the
  retrieval found.
Each returns None when the run has nothing to draw for it.
"""

from __future__ import annotations

import io
from collections import defaultdict
from functools import cache
from math import comb
from typing import Any


@cache
def _pyplot() -> Any:
    """matplotlib's pyplot, drawing off screen; loaded at the first figure (half a second that a
    run with nothing to draw, or a refused one, does not spend)."""
    import matplotlib

    matplotlib.use("Agg")  # no screen: render to PNG only
    import matplotlib.pyplot as plt

    return plt

COLORS = ("#2563eb", "#16a34a", "#d97706", "#6b7280")


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    _pyplot().close(figure)
    return buffer.getvalue()


def _groups(metrics: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, group in metrics["groups"].items():
        if group.get("tasks"):
            out.append(("overall" if name == "overall" else f"{name} app{'s' if name != '1' else ''}", group))
    return out


def by_app_count(metrics: dict[str, Any]) -> bytes | None:
    groups = _groups(metrics)
    if not groups:
        return None
    figure, axes = _pyplot().subplots(1, 2, figsize=(9, 3.4))
    for ax, key, title, scale in ((axes[0], "pass_rate", "pass rate (%)", 100), (axes[1], "ons", "ONS", 1)):
        labels, values, lows, highs = [], [], [], []
        for label, group in groups:
            value = group.get(key)
            if value is None:
                continue
            ci = group.get(f"{key}_ci") or (value, value)
            labels.append(label)
            values.append(value * scale)
            lows.append(max(0.0, value - ci[0]) * scale)
            highs.append(max(0.0, ci[1] - value) * scale)
        bars = ax.bar(labels, values, color=COLORS[: len(labels)], yerr=[lows, highs], capsize=4)
        _label_bars(ax, bars, values, "{:.1f}" if scale == 100 else "{:.2f}", [v + h for v, h in zip(values, highs)])
        ax.set_title(f"{title}, 95 % CI")
        top = 100 * 1.05 if scale == 100 else max([1.05, *[v + h for v, h in zip(values, highs)]])
        ax.set_ylim(min([0.0, *[v - lo for v, lo in zip(values, lows)]]), top * 1.08)
        ax.grid(axis="y", alpha=0.3)
    return _png(figure)


def _label_bars(ax: Any, bars: Any, values: list[float], fmt: str, tops: list[float] | None = None) -> None:
    """The value above each bar (above its error bar, ``tops``), a zero one too (else a bar of 0
    looks like a missing one)."""
    for bar, value, top in zip(bars, values, tops or values):
        ax.annotate(fmt.format(value), (bar.get_x() + bar.get_width() / 2, max(top, value, 0.0)), ha="center",
                    va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")


def pass_hat_k_values(rows: list[dict[str, Any]], trials: int) -> tuple[list[float], int]:
    """pass^k for k = 1..trials: the mean over tasks (those with every trial scored) of
    C(c, k) / C(n, k), c of n trials passed; and how many tasks it is over. (A run's report
    sums the same in one pass: ``harness.totals.RunTotals.pass_hat_k``.)"""
    runs: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        if not row.get("error"):
            runs[row["id"]].append(bool(row["passed"]))
    tasks = [r for r in runs.values() if len(r) >= trials]
    if not tasks:
        return [], 0
    return ([sum(comb(sum(r), k) / comb(len(r), k) for r in tasks) / len(tasks) for k in range(1, trials + 1)],
            len(tasks))


def pass_hat_k(rows: list[dict[str, Any]], trials: int) -> bytes | None:
    if trials < 2:
        return None
    return pass_hat_k_figure(*pass_hat_k_values(rows, trials), trials)


def pass_hat_k_figure(fractions: list[float], count: int, trials: int) -> bytes | None:
    """The pass^k curve of :func:`pass_hat_k_values`' figures (``harness.totals.RunTotals.pass_hat_k``)."""
    if trials < 2 or not count:
        return None
    ks = list(range(1, trials + 1))
    values = [100 * f for f in fractions]
    figure, ax = _pyplot().subplots(figsize=(5, 3.2))
    ax.plot(ks, values, marker="o", color=COLORS[0])
    ax.set_xticks(ks)
    ax.set_xlabel("k (trials that must all pass)")
    ax.set_ylabel("pass^k (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.set_title(f"pass^k over {count} task(s)")
    return _png(figure)


RECALL_BINS = (("0", lambda r: r == 0), ("under 50 %", lambda r: 0 < r < 0.5), ("50-99 %", lambda r: 0.5 <= r < 1),
               ("all", lambda r: r >= 1))


def recall_bins(rows: list[dict[str, Any]]) -> list[tuple[str, int, float]] | None:
    """Each recall bin's label, runs and pass rate (%) over the runs with a recall (None when no
    run has one). (A run's report counts the same in one pass: ``harness.totals.RunTotals.recall_bins``.)"""
    scored = [r for r in rows if not r.get("error") and r.get("evidence_recall") is not None]
    if not scored:
        return None
    out = []
    for label, test in RECALL_BINS:
        runs = [r for r in scored if test(r["evidence_recall"])]
        out.append((label, len(runs), 100 * sum(1 for r in runs if r["passed"]) / len(runs) if runs else 0.0))
    return out


def recall_vs_pass(rows: list[dict[str, Any]]) -> bytes | None:
    return recall_figure(recall_bins(rows))


def recall_figure(bins: list[tuple[str, int, float]] | None) -> bytes | None:
    """Pass rate by recall bin: each bin's label, runs and pass rate in % (``harness.totals.RunTotals.recall_bins``)."""
    if bins is None:
        return None
    labels = [label for label, _, _ in bins]
    counts = [runs for _, runs, _ in bins]
    values = [value for _, _, value in bins]
    figure, ax = _pyplot().subplots(figsize=(5.5, 3.2))
    bars = ax.bar(labels, values, color=COLORS[1])
    for bar, count in zip(bars, counts):
        ax.annotate(f"n={count}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                    fontsize=8)
    ax.set_xlabel("evidence found by retrieval (recall@k)")
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(0, 110)
    ax.grid(axis="y", alpha=0.3)
    return _png(figure)


def probe_accuracy(summary: dict[str, Any]) -> bytes | None:
    """Probe accuracy per memory dynamic, closed-book beside with the history."""
    rows = [(name, row) for name, row in summary.get("by_dynamic", {}).items() if row.get("questions")]
    if not rows:
        return None
    figure, ax = _pyplot().subplots(figsize=(7, 3.4))
    width = 0.38
    for offset, key, label, color in ((-width / 2, "closed_book", "closed-book", COLORS[3]),
                                      (width / 2, "with_history", "with the history", COLORS[0])):
        values = [100 * (row.get(key) or 0.0) for _, row in rows]
        bars = ax.bar([i + offset for i in range(len(rows))], values, width, label=label, color=color)
        _label_bars(ax, bars, values, "{:.0f}")
    ax.set_xticks(range(len(rows)), [f"{name.replace('_', ' ')}\n(n={row['questions']})" for name, row in rows],
                  fontsize=8)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 128)  # room above 100 % for the value labels and the legend, which covers no bar
    ax.set_yticks(range(0, 101, 20))
    ax.legend(fontsize=8, loc="upper left", ncol=2, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Memory probes by dynamic")
    return _png(figure)


def horizon_curve(result: dict[str, Any]) -> bytes | None:
    """Pass rate per horizon (days of history) and the fitted log-sigmoid."""
    points = result.get("points") or []
    if not points:
        return None
    import numpy as np

    days = [p["days"] for p in points]
    figure, ax = _pyplot().subplots(figsize=(6, 3.4))
    ax.plot(days, [100 * p["pass_rate"] for p in points], "o", color=COLORS[0], label="measured")
    fit = result.get("fit")
    if fit and fit.get("t_mid") is not None and fit.get("beta") is not None:
        t = np.geomspace(min(days), max(days), 100)
        with np.errstate(over="ignore"):
            curve = fit["s_max"] / (1 + (fit["t_mid"] / t) ** fit["beta"])
        ax.plot(t, 100 * curve, "-", color=COLORS[2], label=f"fit: t_mid {fit['t_mid']:.1f}, beta {fit['beta']:.2f}")
    elif fit:  # flat data, or a fit whose midpoint or slope the horizons do not determine: no curve drawn
        ax.set_title({"flat": "flat: no fit", "step": "a step between two horizons: no slope to fit",
                      "no_midpoint": "no fit: the midpoint is outside the horizons measured"}
                     .get(fit.get("status", ""), "no fit"), fontsize=9)
    ax.set_xscale("log")
    ax.set_xticks(days, [str(d) for d in days])
    ax.set_xticks([], minor=True)  # a log axis labels some minor ticks (6x10^0): only the horizons are shown
    ax.set_xlabel("days of history")
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(figure)
