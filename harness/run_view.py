"""What an agent did on each task of a finished eval run, for ``homer view``.

A report gives totals; a researcher looking for why a run failed wants, per task, the outcome of
each trial, the criteria that failed with their reasons, the agent's tool calls with what each gave
back, its final message, steps and tokens, and the plan the task's reference solution follows. All
of it is in the run's ``results.jsonl`` (read with the run's own checks) and the dataset's
``task.json``; this module puts it per task, bounded (long observations are cut).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, cast

from harness.scores import RunError, open_run

OBSERVATION_CHARS = 600  # of each tool result shown; the run's file holds what the agent got
OUTCOMES = ("pass", "fail", "error")


def failed_criteria(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The criteria a result row failed: index, function and reason of each."""
    return [{"index": c.get("index"), "function": c.get("function"), "reason": c.get("reason")}
            for c in row.get("criteria") or [] if isinstance(c, dict) and not c.get("passed")]


def first_failure(failed: list[dict[str, Any]]) -> str:
    """``function: reason`` of the first failed criterion, on one line ("" when none failed)."""
    return " ".join(f"{failed[0]['function']}: {failed[0]['reason']}".split()) if failed else ""


def _trial(row: dict[str, Any]) -> dict[str, Any]:
    trajectory = cast("dict[str, Any]", row.get("trajectory")) if isinstance(row.get("trajectory"), dict) else {}
    calls = []
    for step in trajectory.get("steps") or []:
        if not isinstance(step, dict):
            continue
        seen = str(step.get("observation", ""))
        calls.append({"tool": step.get("tool"), "args": step.get("args"), "ok": step.get("ok"),
                      "observation": seen[:OBSERVATION_CHARS] + (f" [cut: {len(seen) - OBSERVATION_CHARS:,} more]"
                                                                 if len(seen) > OBSERVATION_CHARS else "")})
    return {"trial": row.get("trial"), "outcome": _outcome(row), "error": row.get("error"),
            "failed": failed_criteria(row),
            "steps": row.get("steps"), "usage": trajectory.get("usage"), "calls": calls,
            "final_message": trajectory.get("final_message"), "stop_reason": trajectory.get("stop_reason")}


def _outcome(row: dict[str, Any]) -> str:
    return "error" if row.get("error") else "pass" if row.get("passed") else "fail"


def run_view(folder: Path | str, task: str | None = None) -> dict[str, Any]:
    """The run's configuration and, per task (or for ``task`` only), its trials as :func:`_trial`
    gives them and the outcome over them: pass when every trial passed, error when every trial
    ended with an error, else fail. Raises :class:`RunError` for a folder that is no finished run
    or a task it did not run."""
    meta, rows = open_run(folder)
    return view_of(folder, meta, rows, task)


def view_of(folder: Path | str, meta: dict[str, Any], rows: Iterable[dict[str, Any]],
            task: str | None = None) -> dict[str, Any]:
    """:func:`run_view` of a run's ``run.json`` and rows (``harness.scores.open_run`` or
    ``read_run``), taken one at a time: only the view is held (with ``task``, only that task's)."""
    tasks: dict[str, dict[str, Any]] = {}
    others: set[str] = set()  # with ``task``: the other tasks the run ran, counted only
    for row in rows:
        if task is not None and str(row["id"]) != task:
            others.add(str(row["id"]))
            continue
        entry = tasks.setdefault(str(row["id"]), {"id": str(row["id"]), "family": row.get("family"),
                                                  "app_count": row.get("app_count"), "trials": []})
        entry["trials"].append(_trial(row))
    for entry in tasks.values():
        outcomes = {t["outcome"] for t in entry["trials"]}
        entry["outcome"] = "pass" if outcomes == {"pass"} else "error" if outcomes == {"error"} else "fail"
    if task is not None:
        if task not in tasks:
            raise RunError(f"{folder}: no task {task!r} in this run (it ran {len(others)} task(s))")
        tasks = {task: tasks[task]}
        tasks[task]["oracle"] = reference_plan(meta, task)
    config = cast("dict[str, Any]", meta.get("config")) if isinstance(meta.get("config"), dict) else {}
    return {"run": str(folder), "dataset": meta.get("dataset"), "agent": config.get("agent"),
            "model": config.get("model"), "context": config.get("context_label"),
            "counts": {o: sum(1 for t in tasks.values() if t["outcome"] == o) for o in OUTCOMES},
            "tasks": list(tasks.values())}


def reference_plan(meta: dict[str, Any], task: str) -> list[dict[str, Any]] | None:
    """The reference plan of ``task`` from the run's dataset, when it is still the task the run
    ran (same digest); None otherwise."""
    from backends.dataset_reader import load_task, task_digest

    dataset = meta.get("dataset")
    if not isinstance(dataset, str):
        return None
    loaded = load_task(Path(dataset), task)
    digests = cast("dict[str, Any]", meta.get("task_digests")) if isinstance(meta.get("task_digests"), dict) else {}
    if loaded.task is None or (digests.get(task) and digests[task] != task_digest(loaded)):
        return None
    return [{"tool": step.tool, "args": step.args} for step in loaded.task.oracle or []]


def render_view(view: dict[str, Any]) -> str:
    """The view as text for a terminal: one line per task, its failed criteria beneath; with one
    task, every trial's tool calls too, and the reference plan."""
    counts = view["counts"]
    lines = [f"{view['run']}: {view['agent']} agent" + (f" ({view['model']})" if view.get("model") else "")
             + f", {view['context']}: {counts['pass']} pass, {counts['fail']} fail, {counts['error']} error"]
    one = len(view["tasks"]) == 1
    for entry in view["tasks"]:
        lines.append(f"{entry['outcome']:5} {entry['id']}  {entry['family']}, {entry['app_count']} app(s)")
        for trial in entry["trials"]:
            if trial["outcome"] == "pass" and not one:
                continue
            head = f"      trial {trial['trial']}: {trial['outcome']}, {trial['steps']} step(s)"
            lines.append(head + (f": {trial['error']}" if trial["error"] else ""))
            for failed in trial["failed"]:
                lines.append(f"        criterion {failed['index']} {failed['function']}: {failed['reason']}")
            if one:
                for n, call in enumerate(trial["calls"], 1):
                    lines.append(f"        {n}. {call['tool']} {call['args']} -> "
                                 f"{'ok' if call['ok'] else 'error'}: {call['observation'][:160]!r}")
                lines.append(f"        final message: {str(trial['final_message'])[:300]!r}")
        if one and entry.get("oracle") is not None:
            lines.append("      reference plan:")
            lines += [f"        {n}. {step['tool']} {step['args']}" for n, step in enumerate(entry["oracle"], 1)]
    return "\n".join(lines)
