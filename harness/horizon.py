"""The horizon sweep: the same tasks with their history embedded in longer ones, and the
log-sigmoid fit of success against horizon.

``stretch_record(record, days)`` keeps every session of the task's history, in order, at the same
relative place of a history of ``days`` working days ending before "now" (session ``i`` of ``D``
goes to day ``floor(i * days / D)``), and fills the other days with the same user's other work and
small talk (with the colleagues, company and city of the world the task was built in), written
deterministically by the offline dialogue writer (no memory value, no line the history already has). The history's
dates move with it, and a day said relatively ("tomorrow at 16:00") is said again for its new date. The
stretched record must pass the
memory-evidence gate and the dialogue rules again, else it is left out at that horizon.

``fit_log_sigmoid(points)``: S(t) = S_max / (1 + (t_mid / t) ** beta) by least squares (S_max
closed-form for each (t_mid, beta) of a grid, then the best), with bootstrap intervals over tasks.
A negative beta is success falling as the horizon grows.
"""

from __future__ import annotations

import copy
import hashlib
import random
from datetime import date, datetime
from typing import Any

import numpy as np

from generators.dialogue_offline import HistoryWriter, working_days_before
from generators.history_plan import DayPlan
from generators.model import TaskDraft
from generators.spoken_time import redate, say_value, value_time
from verifier.dialogue_rules import check_dialogue, mark_problems, marked_turns


ATTEMPTS = 5  # tries at writing a horizon's filler days before the task is left out there


class HorizonError(ValueError):
    """A horizon that cannot be built for a task; the message says why."""


def _time_values(memory: list[dict[str, Any]]) -> list[str]:
    """Every value of the memory (final, earlier, near miss) that may be a day or a moment."""
    out = []
    for m in memory:
        out += [str(m.get("value") or ""), *map(str, m.get("superseded") or ())]
        out += [str(d.get("value") or "") for d in m.get("distractors") or ()]
    return [v for v in out if v.strip()]


def _retimed(session: dict[str, Any], day: int, when: date, values: list[str]) -> dict[str, Any]:
    """``session`` moved to day ``day`` on ``when``; a day or moment of ``values`` it names in
    relative words ("tomorrow at 16:00") is said again for the new date, so it names the same one."""
    moved = copy.deepcopy(session)
    old = date.fromisoformat(str(session["date"]))
    keep = {t for t in (value_time(v, old) for v in values) if t is not None}
    moved["day"], moved["date"] = day, when.isoformat()
    for turn in moved.get("turns", []):
        ts = turn.get("ts")
        if isinstance(ts, str) and "T" in ts:
            turn["ts"] = f"{when.isoformat()}T{ts.split('T', 1)[1]}"
        if keep and isinstance(turn.get("text"), str):
            turn["text"] = redate(turn["text"], old, when, keep)
    return moved


def _said_as_again(memory: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> None:
    """Each piece's ``said_as``, as its first evidence turn now says it (the day it is on moved)."""
    for piece in memory:
        if not piece.get("said_as"):
            continue
        for session in sessions:
            if any(piece["id"] in t.get("evidence", ()) for t in session["turns"]):
                piece["said_as"] = say_value(piece["value"], date.fromisoformat(session["date"])) or piece["said_as"]
                break


def _persona(record: dict[str, Any]) -> dict[str, Any]:
    """The user's colleagues, company, projects and city for the filler days: those of the world the
    task was built in (its ``world_seed``), or, for a task without one, of a world seeded by its id."""
    from office_env.synthesis.world import make_world

    provenance = record.get("provenance") if isinstance(record.get("provenance"), dict) else {}
    world_seed = provenance.get("world_seed")
    if isinstance(world_seed, bool) or not isinstance(world_seed, int):
        world_seed = int(hashlib.sha256(f"homeragents.horizon.persona\n{record.get('id')}".encode()).hexdigest()[:8], 16)
    world = make_world(world_seed)
    return {"colleagues": [p.first for p in world.colleagues], "company": world.company,
            "projects": list(world.projects), "city": world.city, "currency": world.currency}


def stretch_record(record: dict[str, Any], days: int) -> dict[str, Any]:
    sessions = record["dialogue"]
    original = len(sessions)
    if days < original:
        raise HorizonError(f"{days} day(s) is below the task's own history of {original} day(s)")
    if days == original:
        return copy.deepcopy(record)
    now = datetime.strptime(record["now"]["date"], "%Y-%m-%d").date()
    dates = working_days_before(now, days)
    places = {(i * days) // original: i for i in range(original)}
    draft = TaskDraft.from_dict(record)
    lines = [t["text"] for s in sessions for t in s["turns"]]
    user_first = str(record.get("user", {}).get("name", "")).split(" ")[0]
    persona = _persona(record)
    values = _time_values(record["memory"])
    per_day = max(4, round(len(lines) / original))
    problem = ""
    for attempt in range(ATTEMPTS):  # a filler line that happens to echo the history: write the days again
        seed = hashlib.sha256(f"homeragents.horizon/1\n{record['id']}\n{days}\n{attempt}".encode()).hexdigest()
        writer = HistoryWriter(draft.memory, rng=random.Random(seed), user_first=user_first, banned=lines, **persona)
        stretched = []
        for index, when in enumerate(dates):
            if index in places:
                stretched.append(_retimed(sessions[places[index]], index + 1, when, values))
            else:
                stretched.append(writer.day(DayPlan(index + 1, when), per_day).to_dict())
        problems = mark_problems(record["memory"], marked_turns(stretched))
        if problems:
            problem = f"memory marks: {problems[0]}"
            continue
        verdict = check_dialogue(draft, stretched, min_days=days, now=now)
        if not verdict.passed:
            problem = f"dialogue rules: {verdict.feedback.splitlines()[0][:200]}"
            continue
        out = copy.deepcopy(record)
        out["dialogue"] = stretched
        _said_as_again(out["memory"], stretched)
        return out
    raise HorizonError(problem)


# -- the fit -------------------------------------------------------------------------------------

_T_MID = np.geomspace(0.25, 400.0, 120)
_BETA = np.concatenate([np.linspace(-8, -0.05, 60), np.linspace(0.05, 8, 60)])


def fit_log_sigmoid(t: np.ndarray, s: np.ndarray) -> dict[str, float] | None:
    """Least-squares S_max, t_mid, beta of S(t) = S_max / (1 + (t_mid / t) ** beta); None for
    fewer than three horizons."""
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
    return {"s_max": float(smax[i, j]), "t_mid": float(_T_MID[i]), "beta": float(_BETA[j]),
            "sse": float(error[i, j])}


def fit_with_intervals(horizons: list[int], per_task: dict[str, dict[int, float]], resamples: int = 200,
                       seed: int = 0) -> dict[str, Any]:
    """The fit on the mean pass rate per horizon, and 95 % intervals of each parameter from
    refits on tasks resampled with replacement (tasks scored at every horizon only)."""
    tasks = [task for task, by_h in per_task.items() if all(h in by_h for h in horizons)]
    if not tasks:
        return {"tasks": 0, "fit": None, "intervals": None}
    matrix = np.array([[per_task[task][h] for h in horizons] for task in tasks])
    t = np.array(horizons, dtype=float)
    fit = fit_log_sigmoid(t, matrix.mean(axis=0))
    intervals = None
    if fit is not None:
        rng = np.random.default_rng(seed)
        samples = {"s_max": [], "t_mid": [], "beta": []}
        for _ in range(resamples):
            picks = rng.integers(0, len(tasks), size=len(tasks))
            refit = fit_log_sigmoid(t, matrix[picks].mean(axis=0))
            if refit is not None:
                for key in samples:
                    samples[key].append(refit[key])
        intervals = {key: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] for key, v in samples.items()}
    return {"tasks": len(tasks), "points": [{"days": h, "pass_rate": float(m)} for h, m in
                                            zip(horizons, matrix.mean(axis=0))], "fit": fit, "intervals": intervals}


def fit_line(result: dict[str, Any]) -> str:
    """The fit and its intervals in one line."""
    fit, ci = result.get("fit"), result.get("intervals") or {}
    if not fit:
        return "no fit (it needs at least three horizons with scored tasks)"

    def part(key: str, fmt: str) -> str:
        bounds = ci.get(key)
        return format(fit[key], fmt) + (f" [{format(bounds[0], fmt)}, {format(bounds[1], fmt)}]" if bounds else "")
    return f"S_max {part('s_max', '.2f')}, t_mid {part('t_mid', '.1f')} days, beta {part('beta', '.2f')}"


def points_table(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Pass rate and context tokens per horizon, as text cells."""
    rows = [[str(p["days"]), f"{100 * p['pass_rate']:.1f}", f"{p.get('context_tokens') or 0:,.0f}"]
            for p in result.get("points", [])]
    return ["days", "pass rate (%)", "avg context tokens"], rows
