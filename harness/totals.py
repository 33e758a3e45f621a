"""An eval run's figures in one pass over its result rows, a task at a time: what ``report.md``,
``report.html`` and ``run.json`` show, without holding the rows.

:class:`RunTotals` takes each task's rows together (``add_task``) and keeps running counts and
exact running sums (the same values ``statistics.fmean`` gives, whatever the order), per app-count
group and overall; per task it keeps only the few numbers the bootstrap intervals resample (pass
fraction, all passed, the two reference scores: a few bytes a task). The failed trials are kept
up to ``FAILED_SHOWN`` (what the reports list) with their count; the runs that ended with an
error are kept whole (the command's exit status and its commonest reasons come from them).

:func:`stream_totals` reads rows sorted by task (a run's ``results.jsonl``); ``harness.report.metrics``
groups a list of rows by task first, so the two give the same figures.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from math import comb, fsum
from typing import Any, overload

import numpy as np

from harness.plots import RECALL_BINS
from harness.run_view import failed_criteria, first_failure
from harness.scores import scores_of

APP_COUNTS = (1, 2, 3)
OVERALL = "overall"
FAILED_SHOWN = 100  # failed trials listed in report.md; results.jsonl and homer view hold them all


class ExactMean:
    """A running mean equal to ``statistics.fmean`` of the values added: their sum is kept exact
    (Shewchuk's partials, as ``math.fsum`` keeps it) and rounded once at the end."""

    __slots__ = ("partials", "odd", "count")

    def __init__(self) -> None:
        self.partials: list[float] = []
        self.odd: list[float] = []  # infinities and NaN, summed by fsum at the end as fmean would
        self.count = 0

    def add(self, value: Any) -> None:
        x = float(value)
        self.count += 1
        if not math.isfinite(x):
            self.odd.append(x)
            return
        kept = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self.partials[kept] = low
                kept += 1
            x = high
        self.partials[kept:] = [x]

    def value(self) -> float | None:
        return fsum(self.partials + self.odd) / self.count if self.count else None


class Head(Sequence[Any]):
    """The first ``cap`` items of a list, and how long the whole list is (``len``)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.total = cap, 0
        self.items: list[Any] = []

    def append(self, item: Any) -> None:
        self.total += 1
        if len(self.items) < self.cap:
            self.items.append(item)

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return self.items[index]  # only the head is held: an index past it is an IndexError

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)


class _Group:
    """One app-count group's (or the overall) running figures."""

    def __init__(self) -> None:
        self.tasks = self.runs = self.errors = 0
        self.pass_rate, self.pass_k = ExactMean(), ExactMean()
        self.context_tokens, self.steps, self.recall = ExactMean(), ExactMean(), ExactMean()
        self.passes, self.alls = array("d"), array("d")  # per task, for the bootstrap
        self.agent, self.none, self.oracle = array("d"), array("d"), array("d")  # tasks with both references

    def add_task(self, rows: list[dict[str, Any]]) -> None:
        scored = [r for r in rows if not r.get("error")]
        self.errors += len(rows) - len(scored)
        if not scored:
            return
        self.tasks += 1
        self.runs += len(scored)
        fraction = sum(1 for r in scored if r["passed"]) / len(scored)
        every = all(r["passed"] for r in scored)
        self.pass_rate.add(fraction)
        self.pass_k.add(1.0 if every else 0.0)
        for row in scored:
            self.context_tokens.add(row["context_tokens"])
            self.steps.add(row["steps"])
            if row.get("evidence_recall") is not None:
                self.recall.add(row["evidence_recall"])
        self.passes.append(fraction)
        self.alls.append(1.0 if every else 0.0)
        reference = scored[0].get("reference") or {}
        none, oracle = _score(reference.get("none")), _score(reference.get("oracle"))
        if none is not None and oracle is not None:
            self.agent.append(fraction)
            self.none.append(none)
            self.oracle.append(oracle)

    def figures(self) -> dict[str, Any]:
        group = {"tasks": self.tasks, "runs": self.runs, "pass_rate": self.pass_rate.value(),
                 "pass_k": self.pass_k.value(), "context_tokens": self.context_tokens.value(),
                 "steps": self.steps.value(), "recall": self.recall.value(), "errors": self.errors}
        group.update(scores_of(*(np.array(a, dtype=float) for a in (self.passes, self.alls, self.agent, self.none,
                                                                   self.oracle))))
        return group


def _score(value: Any) -> float | None:
    return None if value is None else (1.0 if value is True else 0.0 if value is False else float(value))


def _key(value: Any) -> Any:
    """A row's app count as a group key (an unhashable one, which no run writes, by its text)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class RunTotals:
    """Everything the reports show of a run's rows, fed a task at a time (``add_task``)."""

    def __init__(self, trials: int, failed_cap: int = FAILED_SHOWN) -> None:
        self.trials = trials
        self.groups: dict[Any, _Group] = {}
        self.overall = _Group()
        self.rows = 0
        self.usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self.whole = 0
        self.failed = Head(failed_cap)  # (task, trial, first failed criterion) of each failed trial
        self.errors: list[dict[str, Any]] = []
        self.hat_sums = [0.0] * trials  # pass^k: the sum over tasks with every trial scored, k = 1..trials
        self.hat_tasks = 0
        self.recall_runs = [0] * len(RECALL_BINS)
        self.recall_passed = [0] * len(RECALL_BINS)
        self.recall_scored = 0

    def add_task(self, rows: list[dict[str, Any]]) -> None:
        """All the rows of one task (its trials, in order)."""
        self.rows += len(rows)
        by_group: dict[Any, list[dict[str, Any]]] = {}
        for row in rows:
            by_group.setdefault(_key(row.get("app_count")), []).append(row)
            for name, value in ((row.get("trajectory") or {}).get("usage") or {}).items():
                if name in self.usage:
                    self.usage[name] += int(value)
            if row.get("error"):
                self.errors.append({"id": row["id"], "trial": row["trial"], "error": row["error"]})
            elif not row.get("passed"):
                why = first_failure(failed_criteria(row)) or "no criterion passed it"
                self.failed.append((str(row.get("id")), int(row.get("trial") or 1), why[:300]))
        for key, group_rows in by_group.items():
            self.groups.setdefault(key, _Group()).add_task(group_rows)
        self.overall.add_task(rows)
        if any(r.get("context_whole") for r in rows):
            self.whole += 1
        scored = [r for r in rows if not r.get("error")]
        if scored and len(scored) >= self.trials:
            passed = sum(1 for r in scored if r["passed"])
            self.hat_tasks += 1
            for k in range(1, self.trials + 1):
                self.hat_sums[k - 1] += comb(passed, k) / comb(len(scored), k)
        for row in scored:
            recall = row.get("evidence_recall")
            if recall is None:
                continue
            self.recall_scored += 1
            for n, (_, test) in enumerate(RECALL_BINS):
                if test(recall):
                    self.recall_runs[n] += 1
                    self.recall_passed[n] += 1 if row["passed"] else 0

    def metrics(self) -> dict[str, Any]:
        """``harness.report.metrics`` of the rows added."""
        empty = _Group()
        groups = {str(n): self.groups.get(n, empty).figures() for n in APP_COUNTS}
        for n in sorted(set(self.groups) - set(APP_COUNTS), key=str):  # an odd app count still shows up
            groups[str(n)] = self.groups[n].figures()
        groups[OVERALL] = self.overall.figures()
        usage = dict(self.usage) if self.usage["calls"] else None
        return {"trials": self.trials, "groups": groups, "agent_usage": usage,
                **({"whole_history": self.whole} if self.whole else {})}

    def pass_hat_k(self) -> tuple[list[float], int]:
        """``harness.plots.pass_hat_k_values`` of the rows added (the same sums, in the tasks' order)."""
        if not self.hat_tasks:
            return [], 0
        return [total / self.hat_tasks for total in self.hat_sums], self.hat_tasks

    def recall_bins(self) -> list[tuple[str, int, float]] | None:
        """``harness.plots.recall_bins`` of the rows added: each bin's label, runs and pass rate (%),
        for ``harness.plots.recall_figure``; None when no run had a recall."""
        if not self.recall_scored:
            return None
        return [(label, runs, 100 * passed / runs if runs else 0.0)
                for (label, _), runs, passed in zip(RECALL_BINS, self.recall_runs, self.recall_passed)]


def by_task(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The rows of each task together, from rows sorted by task (a run's ``results.jsonl``)."""
    current: list[dict[str, Any]] = []
    for row in rows:
        if current and row["id"] != current[0]["id"]:
            yield current
            current = []
        current.append(row)
    if current:
        yield current


def grouped(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The rows of each task together from rows in any order: tasks in the order of their first
    row that did not end with an error (the order the figures' per-task lists take), then the tasks
    with no such row; a task's rows in their order."""
    tasks: dict[Any, list[dict[str, Any]]] = {}
    only_errors: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        task = row["id"]
        if task in tasks:
            tasks[task].append(row)
        elif not row.get("error"):
            tasks[task] = [*only_errors.pop(task, []), row]
        else:
            only_errors.setdefault(task, []).append(row)
    yield from tasks.values()
    yield from only_errors.values()


def stream_totals(rows: Iterable[dict[str, Any]], trials: int) -> RunTotals:
    """The totals of rows sorted by task."""
    totals = RunTotals(trials)
    for task_rows in by_task(rows):
        totals.add_task(task_rows)
    return totals


def totals_of(rows: Iterable[dict[str, Any]], trials: int) -> RunTotals:
    """The totals of rows in any order (held, grouped by task)."""
    totals = RunTotals(trials)
    for task_rows in grouped(rows):
        totals.add_task(task_rows)
    return totals


__all__ = ["RunTotals", "ExactMean", "Head", "stream_totals", "totals_of", "by_task", "grouped", "FAILED_SHOWN",
           "APP_COUNTS", "OVERALL"]
