"""``homer eval ... --horizons 5,10,20,40``: evaluate the same tasks at growing history lengths
and fit how success falls (``harness.horizon``).

``stretch_record(record, days)`` keeps every session of the task's history, in order, at the same
relative place of a history of ``days`` working days ending before "now" (session ``i`` of ``D``
goes to day ``floor(i * days / D)``), and fills the other days with the same user's other work and
small talk (with the colleagues, company and city of the world the task was built in), written
deterministically by the offline dialogue writer (no memory value, no line the history already
has). The history's dates move with it, and a day said relatively ("tomorrow at 16:00") is said
again for its new date. The stretched record must pass the memory-evidence gate and the dialogue
rules again, else it is left out at that horizon.

For each horizon the run folder gets ``horizons/d<H>/data`` (the stretched tasks, their offices
copied) and ``horizons/d<H>/run`` (an ordinary eval run on them); then ``horizon.json`` (the points,
the log-sigmoid fit and its intervals, the tasks left out at a horizon and why),
``horizon-report.md`` and ``horizon-report.html`` (the curve, inline).
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any, cast

from backends.dataset_reader import dataset_identity, iter_tasks
from backends.task_record import TaskRecord, parse_record
from generators.bank_check import check_banks
from generators.dialogue_offline import HistoryWriter
from generators.history_plan import DayPlan
from generators.model import TaskDraft
from generators.session_clock import working_days_before
from generators.spoken_time import redate, say_value, value_time
from harness.horizon import fit_line, fit_with_intervals, points_table
from harness.report import markdown_table
from harness.runner import EvalConfig, evaluate
from office_env.seeding import LINES, derive_seed, digest
from office_env.seeding import rng as seeded
from office_env.workspace import atomic_write
from orchestrator.dataset_writer import stage_task, write_index
from verifier.dialogue_rules import check_dialogue, mark_problems, marked_turns


class SweepError(ValueError):
    """Horizons that cannot be run on this dataset; the message names the task."""


ATTEMPTS = 5  # tries at writing a horizon's filler days before the task is left out there


class HorizonError(ValueError):
    """A horizon that cannot be built for a task; the message says why."""


def _time_values(memory: list[dict[str, Any]]) -> list[str]:
    """Every value of the memory (final, earlier, near miss) that may be a day or a moment."""
    out = []
    for m in memory:
        out += [str(m.get("value") or ""), *map(str, m.get("superseded") or ())]
        out += [str(d.get("value") or "") for d in m.get("distractors") or ()]
        if isinstance(m.get("derived"), dict):  # an anchor's own day names the same day after the move
            out.append(str(m["derived"].get("base") or ""))
    return [v for v in out if v.strip()]


def _retimed(session: dict[str, Any], day: int, when: date, values: list[str]) -> dict[str, Any]:
    """``session`` moved to day ``day`` on ``when``; a day or moment of ``values`` it names in
    relative words ("tomorrow at 16:00") is said again for the new date, so it names the same one;
    any other day said relatively moves with the session ("Friday the 15th" of other work becomes
    the day as far ahead of the new date), so no weekday and date disagree."""
    moved = copy.deepcopy(session)
    old = date.fromisoformat(str(session["date"]))
    keep = {t for t in (value_time(v, old) for v in values) if t is not None}
    moved["day"], moved["date"] = day, when.isoformat()
    for turn in moved.get("turns", []):
        ts = turn.get("ts")
        if isinstance(ts, str) and "T" in ts:
            turn["ts"] = f"{when.isoformat()}T{ts.split('T', 1)[1]}"
        if isinstance(turn.get("text"), str):
            turn["text"] = redate(turn["text"], old, when, keep, shift_others=True)
    return moved


def _said_as_again(memory: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> None:
    """Each piece's ``said_as``, as its first evidence turn now says it (the day it is on moved)."""
    for piece in memory:
        if not piece.get("said_as") or piece.get("derived"):  # a relation names no day of its own
            continue
        for session in sessions:
            if any(piece["id"] in t.get("evidence", ()) for t in session["turns"]):
                piece["said_as"] = say_value(piece["value"], date.fromisoformat(session["date"])) or piece["said_as"]
                break


def _persona(record: TaskRecord) -> dict[str, Any]:
    """The user's colleagues, company, projects and city for the filler days: those of the world the
    task was built in (its ``world_seed``), or, for a task without one, of a world seeded by its id."""
    from office_env.synthesis.world import make_world

    world_seed = record.provenance.extra("world_seed")
    if isinstance(world_seed, bool) or not isinstance(world_seed, int):
        world_seed = derive_seed("homeragents.horizon.persona", record.id, legacy=LINES)
    world = make_world(world_seed)
    return {"colleagues": [p.first for p in world.colleagues], "company": world.company,
            "projects": list(world.projects), "city": world.city, "currency": world.currency}


def stretch_record(record: TaskRecord, days: int) -> TaskRecord:
    """A new task made of ``record`` with its history stretched to ``days``: the record as written,
    every key in its place, with the new dialogue and ``said_as`` (the sessions and pieces are moved
    as the JSON they are written as, and the new record is typed again, which checks it)."""
    original = len(record.dialogue)
    if days < original:
        raise HorizonError(f"{days} day(s) is below the task's own history of {original} day(s)")
    if days == original:
        return record
    sessions = [s.to_dict() for s in record.dialogue]
    memory = [m.to_dict() for m in record.memory]
    now = datetime.strptime(record.now.date, "%Y-%m-%d").date()
    dates = working_days_before(now, days)
    places = {(i * days) // original: i for i in range(original)}
    written = record.to_dict()
    draft = TaskDraft.from_dict(written)
    lines = [t.text for s in record.dialogue for t in s.turns]
    user_first = record.user.name.split(" ")[0]
    persona = _persona(record)
    values = _time_values(memory)
    per_day = max(4, round(len(lines) / original))
    problem = ""
    for attempt in range(ATTEMPTS):  # a filler line that happens to echo the history: write the days again
        seed = digest("homeragents.horizon/1", record.id, days, attempt, legacy=LINES)
        writer = HistoryWriter(draft.memory, rng=seeded(seed, "horizon"), user_first=user_first, banned=lines,
                               **persona)
        stretched = []
        for index, when in enumerate(dates):
            if index in places:
                stretched.append(_retimed(sessions[places[index]], index + 1, when, values))
            else:
                stretched.append(writer.day(DayPlan(index + 1, when), per_day).to_dict())
        problems = mark_problems(memory, marked_turns(stretched))
        if problems:
            problem = f"memory marks: {problems[0]}"
            continue
        verdict = check_dialogue(draft, stretched, min_days=days, now=now)
        if not verdict.passed:
            problem = f"dialogue rules: {verdict.feedback.splitlines()[0][:200]}"
            continue
        _said_as_again(memory, stretched)
        return parse_record({**written, "dialogue": stretched, "memory": memory})
    raise HorizonError(problem)



def parse_horizons(text: str) -> list[int]:
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise SweepError(f"--horizons {text!r}: a comma list of day counts, e.g. 5,10,20,40") from None
    if len(values) < 1 or values[0] < 1 or values[-1] > 365:
        raise SweepError(f"--horizons {text!r}: day counts from 1 to 365")
    return values


def run_sweep(dataset: Path, out: Path, config: EvalConfig, horizons: list[int],
              on_outcome: Callable[[dict[str, Any]], None] | None = None,
              on_total: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Stretch every task to each horizon, evaluate each stretched dataset, fit the curve and write
    the sweep's folder; ``on_outcome`` hears of every task evaluated (tasks x horizons in all)."""
    check_banks()  # a broken dialogue bank stops the sweep here, before any folder is written
    tasks = [t for t in iter_tasks(dataset) if t.record is not None and t.task is not None]
    if on_total is not None:
        on_total(len(tasks) * len(horizons))
    for task in tasks:
        own = len(cast("TaskRecord", task.task).dialogue)  # tasks without one are left out above
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
                # a RecordError (a ValueError) names what the type refuses in the stretched record
                record = stretch_record(cast("TaskRecord", task.task), horizon)
            except (HorizonError, KeyError, TypeError, ValueError) as exc:
                left_out.setdefault(str(horizon), []).append({"id": task.id, "reason": str(exc)[:300]})
                continue
            staged = stage_task(staging, record, task.testbed, task.reference)
            staged.rename(data / "tasks" / task.id)
            records.append(record)
        shutil.rmtree(staging)
        write_index(data, records)
        summary = evaluate(data, folder / "run", config, on_outcome=on_outcome)
        for _ in range(len(tasks) - len(records)):  # left out at this horizon: counted as done, not scored
            if on_outcome is not None:
                on_outcome({"status": "dropped"})
        scored: dict[str, list[bool]] = {}
        for row in summary.iter_rows():
            if not row.get("error"):
                scored.setdefault(row["id"], []).append(bool(row["passed"]))
        for task_id, passes in scored.items():
            per_task.setdefault(task_id, {})[horizon] = sum(passes) / len(passes)
        overall = summary.metrics["groups"]["overall"]
        tokens[horizon] = overall["context_tokens"] or 0.0
    result = fit_with_intervals(horizons, per_task)
    for point in result.get("points", []):
        point["context_tokens"] = tokens.get(point["days"])
    result.update({"agent": config.agent, "model": config.model, "context": config.context.label(),
                   "horizons": horizons,
                   "left_out": left_out, **dataset_identity(dataset)})
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
