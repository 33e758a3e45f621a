"""The horizon sweep's fit: success against history length, as a log-sigmoid.

``fit_log_sigmoid(points)``: S(t) = S_max / (1 + (t_mid / t) ** beta) by least squares (S_max
closed-form for each (t_mid, beta) of a grid, then the best), with bootstrap intervals over tasks.
A negative beta is success falling as the horizon grows. The histories are stretched by
``orchestrator.horizon_sweep`` (writing and checking them is generation and verification, not
scoring).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from office_env.seeding import RAW, np_rng

# -- the fit -------------------------------------------------------------------------------------

_T_MID = np.geomspace(0.25, 400.0, 120)
_BETA = np.concatenate([np.linspace(-8, -0.05, 60), np.linspace(0.05, 8, 60)])


def fit_log_sigmoid(t: np.ndarray, s: np.ndarray) -> dict[str, Any] | None:
    """Least-squares S_max, t_mid, beta of S(t) = S_max / (1 + (t_mid / t) ** beta); None for
    fewer than three horizons. ``status`` says what the data determine (``_determined``): ``fit``,
    ``flat`` (no t_mid, no beta), ``no_midpoint`` (t_mid outside the horizons measured: neither it
    nor beta is determined) or ``step`` (beta at the grid's edge: a step between two horizons, which
    ``t_mid_between`` names)."""
    t, s = np.asarray(t, dtype=float), np.asarray(s, dtype=float)
    if len(t) < 3 or np.any(t <= 0):
        return None
    ratio = (_T_MID[:, None, None] / t[None, None, :]) ** _BETA[None, :, None]  # (mid, beta, points)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        shape = 1.0 / (1.0 + ratio)
        shape = np.nan_to_num(shape, nan=0.0, posinf=0.0, neginf=0.0)
        smax = np.clip((shape * s).sum(axis=2) / np.maximum((shape * shape).sum(axis=2), 1e-12), 0.0, 1.0)
        error = ((smax[:, :, None] * shape - s) ** 2).sum(axis=2)
    i, j = np.unravel_index(int(np.argmin(error)), error.shape)
    fit = {"s_max": float(smax[i, j]), "t_mid": float(_T_MID[i]), "beta": float(_BETA[j]), "sse": float(error[i, j])}
    return _determined(fit, t, s)


def _determined(fit: dict[str, Any], t: np.ndarray, s: np.ndarray) -> dict[str, Any]:
    """The fit with what the data cannot determine set to None, and why (``status``)."""
    if float(np.ptp(s)) < 1e-9:  # the same pass rate at every horizon: any t_mid and beta fit it
        return {"s_max": float(s[0]), "t_mid": None, "beta": None, "sse": 0.0, "status": "flat"}
    if not t.min() <= fit["t_mid"] <= t.max():  # only one tail of the curve was measured
        return {**fit, "t_mid": None, "beta": None, "status": "no_midpoint"}
    if abs(fit["beta"]) >= _BETA.max() - 1e-9:  # sharper than the grid: a step somewhere between two horizons
        below = float(t[t <= fit["t_mid"]].max())
        above = float(t[t >= fit["t_mid"]].min())
        return {**fit, "t_mid": None, "t_mid_between": [below, above], "beta": None, "status": "step"}
    return {**fit, "status": "fit"}


def fit_with_intervals(horizons: list[int], per_task: dict[str, dict[int, float]], resamples: int = 200,
                       seed: int = 0) -> dict[str, Any]:
    """The fit on the mean pass rate per horizon, and 95 % intervals of each parameter from
    refits on tasks resampled with replacement (tasks scored at every horizon only); a parameter
    that fewer than half of the refits determine has no interval."""
    tasks = [task for task, by_h in per_task.items() if all(h in by_h for h in horizons)]
    if not tasks:
        return {"tasks": 0, "fit": None, "intervals": None}
    matrix = np.array([[per_task[task][h] for h in horizons] for task in tasks])
    t = np.array(horizons, dtype=float)
    fit = fit_log_sigmoid(t, matrix.mean(axis=0))
    intervals = None
    if fit is not None and fit["status"] != "flat":
        rng = np_rng(seed, legacy=RAW)
        samples: dict[str, list[float]] = {"s_max": [], "t_mid": [], "beta": []}
        for _ in range(resamples):
            picks = rng.integers(0, len(tasks), size=len(tasks))
            refit = fit_log_sigmoid(t, matrix[picks].mean(axis=0))
            for key in samples:
                if refit is not None and refit[key] is not None:
                    samples[key].append(refit[key])
        intervals = {key: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))]
                     for key, v in samples.items() if fit[key] is not None and len(v) * 2 >= resamples}
    return {"tasks": len(tasks), "points": [{"days": h, "pass_rate": float(m)} for h, m in
                                            zip(horizons, matrix.mean(axis=0))], "fit": fit, "intervals": intervals}


_WHY = {"flat": "the pass rate is {level} at every horizon: flat data have no t_mid and no beta",
        "no_midpoint": "the curve's midpoint lies outside the horizons measured: t_mid and beta are undetermined",
        "step": "a step between two horizons; measure horizons in between to see its slope"}


def fit_line(result: dict[str, Any]) -> str:
    """The fit and its intervals in one line, saying what the data leave undetermined."""
    fit, ci = result.get("fit"), result.get("intervals") or {}
    if not fit:
        return "no fit (it needs at least three horizons with scored tasks)"
    status = fit.get("status", "fit")
    if status == "flat":
        return _WHY["flat"].format(level=f"{100 * fit['s_max']:.1f} %")

    def part(key: str, fmt: str) -> str:
        if fit.get(key) is None:
            return "undetermined"
        bounds = ci.get(key)
        return format(fit[key], fmt) + (f" [{format(bounds[0], fmt)}, {format(bounds[1], fmt)}]" if bounds
                                        else " [interval undetermined]")
    between = fit.get("t_mid_between")
    middle = (f"between {between[0]:g} and {between[1]:g} days" if between
              else part("t_mid", ".1f") + (" days" if fit.get("t_mid") else ""))
    line = f"S_max {part('s_max', '.2f')}, t_mid {middle}"
    line += f", beta {part('beta', '.2f')}"
    return line + (f" ({_WHY[status]})" if status in _WHY else "")


def points_table(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Pass rate and context tokens per horizon, as text cells."""
    rows = [[str(p["days"]), f"{100 * p['pass_rate']:.1f}", f"{p.get('context_tokens') or 0:,.0f}"]
            for p in result.get("points", [])]
    return ["days", "pass rate (%)", "avg context tokens"], rows
