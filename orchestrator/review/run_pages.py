"""An eval run's pages on the review server (``homer view RUN --serve``, or ``homer review serve
DATASET --run RUN``): the run's tasks with their outcomes, filtered by app count, family and
outcome, and per task each trial's failed criteria, tool calls with what they gave back, final
message, steps and tokens beside the reference plan, linked to the task's review page and back.

The data is :func:`harness.run_view.run_view`'s (what ``homer view RUN --json`` prints), read once
per run and kept; a task page adds the reference plan from the run's dataset. Pages are bounded: a
call's result is cut as ``run_view`` cuts it, and the list shows at most ``MAX_ROWS`` tasks.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from harness.run_view import OUTCOMES, first_failure, reference_plan, view_of
from harness.scores import RunError, open_run
from office_env.untrusted import printable

MAX_ROWS = 2_000  # tasks listed on one page (a filter narrows a larger run)


class RunPages:
    """The runs a review server shows, by name (the run folder's name, made unique); each run is
    read once (``harness.scores.open_run``, a row at a time) and kept as its per-task view."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders: dict[str, Path] = {}
        for folder in folders:
            base = folder.resolve().name or "run"
            name, n = base, 2
            while name in self.folders:
                name, n = f"{base}-{n}", n + 1
            self.folders[name] = folder
        self._loaded: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}  # name -> (run.json, view)
        self._lock = threading.Lock()

    def _load(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        folder = self.folders[name]
        with self._lock:
            if name not in self._loaded:
                meta, rows = open_run(folder)
                self._loaded[name] = (meta, view_of(folder, meta, rows))
            return self._loaded[name]

    def load_all(self) -> None:
        """Read every run now: a folder that is no finished run raises :class:`RunError` at start."""
        for name in self.folders:
            self._load(name)

    def view(self, name: str) -> dict[str, Any]:
        """The run's per-task view. Raises ``KeyError`` for a name no run has and
        :class:`RunError` for a folder that is no finished run."""
        return self._load(name)[1]

    def dataset(self, name: str) -> Path:
        """The dataset the run ran on, as its run.json says."""
        return Path(str(self._load(name)[0].get("dataset") or ""))

    def task(self, name: str, task_id: str) -> dict[str, Any]:
        """One task of the run: its entry of the view (trials copied, each with its tokens) and the
        reference plan of the dataset's task when it is still the task that ran. Raises
        :class:`RunError` for a task the run did not run."""
        meta, view = self._load(name)
        entry = next((t for t in view["tasks"] if t["id"] == task_id), None)
        if entry is None:
            raise RunError(f"{self.folders[name]}: no task {task_id!r} in this run (it ran {len(view['tasks'])} "
                           "task(s))")
        trials = [{**trial, "tokens": _tokens(trial)} for trial in entry["trials"]]
        return {**entry, "trials": trials, "oracle": reference_plan(meta, task_id)}

    def path(self, name: str, task_id: str | None = None) -> str:
        """The page of the run, or of one of its tasks."""
        return f"/run/{quote(name, safe='')}" + (f"/task/{quote(task_id, safe='')}" if task_id else "")

    def outcomes_of(self, task_id: str) -> list[tuple[str, str]]:
        """(run name, outcome) of ``task_id`` in every run shown that ran it, for the task's review page."""
        found = []
        for name in self.folders:
            try:
                view = self.view(name)
            except RunError:
                continue
            entry = next((t for t in view["tasks"] if t["id"] == task_id), None)
            if entry is not None:
                found.append((name, entry["outcome"]))
        return found


def run_list(server: Any, request: Request) -> Response:
    name = request.path_params["name"]
    if name not in server.runs.folders:
        return server.error(f"no run {printable(name)[:100]!r} on this server", 404)
    try:
        view = server.runs.view(name)
    except RunError as exc:
        return server.error(printable(str(exc))[:300], 422)
    params = request.query_params
    families = sorted({str(t["family"]) for t in view["tasks"]})
    app_counts = sorted({t["app_count"] for t in view["tasks"] if isinstance(t["app_count"], int)})
    rows = [t for t in view["tasks"]
            if (not params.get("apps") or str(t["app_count"]) == params["apps"])
            and (not params.get("family") or str(t["family"]) == params["family"])
            and (not params.get("outcome") or t["outcome"] == params["outcome"])]
    shown = rows[:MAX_ROWS]
    return server.render("run.html", run=name, view=view, rows=[_row(t) for t in shown], matched=len(rows),
                         total=len(view["tasks"]), families=families, app_counts=app_counts, outcomes=OUTCOMES,
                         params=params)


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    trials = entry["trials"]
    failed = next((first_failure(t["failed"]) for t in trials if t["failed"]), "")
    error = next((t["error"] for t in trials if t["error"]), None)
    tokens = sum(_tokens(t) for t in trials)
    return {"id": entry["id"], "family": entry["family"], "app_count": entry["app_count"],
            "outcome": entry["outcome"], "steps": sum(t["steps"] or 0 for t in trials), "tokens": tokens,
            "why": error or failed}


def _tokens(trial: dict[str, Any]) -> int:
    usage = cast("dict[str, Any]", trial.get("usage")) if isinstance(trial.get("usage"), dict) else {}
    return sum(v for k, v in usage.items() if k in ("prompt_tokens", "completion_tokens") and isinstance(v, int))


def run_task(server: Any, request: Request) -> Response:
    name, task_id = request.path_params["name"], request.path_params["task_id"]
    if name not in server.runs.folders:
        return server.error(f"no run {printable(name)[:100]!r} on this server", 404)
    try:
        view, entry = server.runs.view(name), server.runs.task(name, task_id)
    except RunError as exc:
        return server.error(printable(str(exc))[:300], 404)
    in_dataset = "/" not in task_id and task_id not in (".", "..") and (server.dataset / "tasks" / task_id).is_dir()
    return server.render("run_task.html", run=name, view=view, entry=entry, in_dataset=in_dataset)
