"""The tasks an eval run takes, read, checked and digested before it runs any, in worker processes.

A run names its dataset by content before its first task runs (``run.json`` and the progress
file's header hold every task's digest and the fingerprint over them, ``harness.run_folder``) and
sets aside up front the tasks it cannot evaluate. Reading a task for that (its record parsed and
checked, its testbed scanned and hashed) takes several milliseconds: done by the parent one task
after another, it would be the part of a run that more workers do not shorten. So each task is
read in a worker process (``backends.workers.run_jobs``, the run's worker count up to the cores),
which sends back a few bytes -- its size, its digest, why it cannot be used or evaluated -- and
the parent takes them in the dataset's order, counting the testbeds' sizes against the dataset's
limit as ``backends.dataset_reader.iter_tasks`` does. The verdicts and digests are the ones that
reading the tasks in the parent gives; a worker that fails on a task leaves that task to the
parent, which reads it as before (an error there ends the run as it always did).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from backends.dataset_reader import LoadedTask, listed_tasks, load_task_folder, over_dataset_limit, task_digest
from backends.job_contract import Budget, Interrupted, JobFailure
from backends.workers import run_jobs
from office_env.limits import MAX_DATASET_BYTES


@dataclass(frozen=True)
class Surveyed:
    """What a worker says of one task: the bytes of its files, why it cannot be used (its record
    or files; None when it loaded), its digest (when it loaded) and, for a task the run takes, why
    it cannot be evaluated (``problem``, from the caller's check)."""

    size: int = 0
    error: str | None = None
    digest: str | None = None
    problem: str | None = None


def survey_task(check: Callable[[Any], str | None], job: tuple[str, Path, bool]) -> Surveyed:
    """One listed task read (``backends.dataset_reader.load_task_folder``), digested and, when the
    run takes it, checked with ``check(record)``."""
    task_id, folder, taken = job
    task = load_task_folder(task_id, folder)
    if task.record is None or task.task is None:
        return Surveyed(task.size, task.error or "unreadable")
    return Surveyed(task.size, None, task_digest(task), check(task.task) if taken else None)


@dataclass
class Survey:
    """A run's tasks: the ids of those to run (in the dataset's order), every task's digest (of
    each task, taken or not: runs on subsets of one dataset pair; "unusable" for one that cannot be
    read) and the tasks set aside, with why (``{"id", "error"}``, in the dataset's order)."""

    jobs: list[str] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)


def survey(dataset: Path, takes: Callable[[str, int], bool], check: Callable[[Any], str | None],
           workers: int) -> Survey:
    """Every task of ``dataset`` read on up to ``workers`` processes (at most the machine's cores);
    ``takes(task_id, taken)`` says whether the run takes a task, ``taken`` tasks being taken before
    it; ``check(record)`` why a task taken cannot be evaluated (None when it can). Raises
    ``Interrupted`` (none of the run's tasks done) after Ctrl-C or SIGTERM."""
    listed = list(listed_tasks(dataset))
    taken_flags: list[bool] = []
    taken = 0
    for entry in listed:
        task_id = entry.id if isinstance(entry, LoadedTask) else entry[0]
        taken_flags.append(takes(task_id, taken))
        taken += taken_flags[-1]
    loads = [(entry[0], entry[1], flag) for entry, flag in zip(listed, taken_flags)
             if not isinstance(entry, LoadedTask)]
    read: list[Surveyed | None] = [None] * len(loads)
    one = partial(survey_task, check)

    def done(at: int, surveyed: Surveyed) -> None:
        read[at] = surveyed

    def failed(at: int, failure: JobFailure) -> None:
        read[at] = one(loads[at])  # the parent reads it as it always did: an error here is the run's

    processes = max(1, min(workers, os.cpu_count() or 1, len(loads)))
    try:
        run_jobs(one, loads, workers=processes, budget=Budget(), on_result=done, on_failure=failed)
    except Interrupted as exc:
        raise Interrupted(0, sum(taken_flags), exc.signum) from None
    result = Survey()
    total = 0
    surveyed = iter(read)
    for entry, flag in zip(listed, taken_flags):
        if isinstance(entry, LoadedTask):
            task_id, folder, item = entry.id, entry.folder, Surveyed(error=entry.error or "unreadable")
        else:
            task_id, folder = entry[0], entry[1]
            item = next(surveyed) or one((task_id, folder, flag))
            total += item.size
            if item.error is None and total > MAX_DATASET_BYTES:
                item = Surveyed(item.size, over_dataset_limit(folder))
        result.digests[task_id] = item.digest if item.error is None and item.digest is not None else "unusable"
        if not flag:
            continue
        if item.error is not None:
            result.skipped.append({"id": task_id, "error": item.error})
        elif item.problem:
            result.skipped.append({"id": task_id, "error": f"{folder / 'task.json'}: {item.problem}"})
        else:
            result.jobs.append(task_id)
    return result
