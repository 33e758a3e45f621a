"""An eval run's tasks read on worker processes (``harness.task_survey``) give the verdicts and
digests that reading them one by one in the parent gives, bad tasks and the dataset's size limit
included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import backends.dataset_reader as dataset_reader
import harness.task_survey as task_survey
from backends.dataset_reader import iter_tasks, task_digest
from harness.task_survey import survey
from tests.support.records import task_record_sample, write_json


def _dataset(root: Path) -> Path:
    """Nine task folders: six that load (one the check refuses, one too large for the limit set
    below), one of broken JSON, one linked, one with an odd name."""
    tasks = root / "tasks"
    for n in range(6):
        task_id = f"neo-{n:05d}"
        record = task_record_sample(task_id)
        record["query"] = "refuse me" if n == 2 else f"query {n}"
        write_json(tasks / task_id / "task.json", record)
        (tasks / task_id / "testbed" / "data").mkdir(parents=True)
        (tasks / task_id / "testbed" / "data" / "notes.txt").write_text("x" * (400 if n == 4 else 10 * n))
    (tasks / "neo-00006").mkdir()
    (tasks / "neo-00006" / "task.json").write_text("{ not json")
    (tasks / "neo-00007").symlink_to(tasks / "neo-00001")
    (tasks / "neo 8").mkdir()
    return root


def _check(record) -> str | None:
    return "refused by the check" if record.query == "refuse me" else None


def _one_by_one(dataset: Path, takes) -> tuple[list[str], dict[str, str], list[dict[str, str]]]:
    """What the run read in its parent before: every task in turn, from ``iter_tasks``."""
    jobs, digests, skipped, taken = [], {}, [], 0
    for task in iter_tasks(dataset):
        if not takes(task.id, taken):
            digests[task.id] = task_digest(task) if task.task is not None else "unusable"
            continue
        taken += 1
        if task.task is None:
            digests[task.id] = "unusable"
            skipped.append({"id": task.id, "error": task.error or "unreadable"})
            continue
        digests[task.id] = task_digest(task)
        problem = _check(task.task)
        if problem:
            skipped.append({"id": task.id, "error": f"{task.folder / 'task.json'}: {problem}"})
            continue
        jobs.append(task.id)
    return jobs, digests, skipped


@pytest.mark.parametrize("skip_one", [False, True])
def test_tasks_read_on_workers_are_judged_as_in_the_parent(tmp_path, monkeypatch, skip_one):
    dataset = _dataset(tmp_path)
    for module in (dataset_reader, task_survey):  # the fifth task's testbed passes the limit (set before the fork)
        monkeypatch.setattr(module, "MAX_DATASET_BYTES", 200)

    def takes(task_id: str, taken: int) -> bool:
        return not (skip_one and task_id == "neo-00001")

    found = survey(dataset, takes, _check, workers=2)
    jobs, digests, skipped = _one_by_one(dataset, takes)
    assert (found.jobs, found.digests, found.skipped) == (jobs, digests, skipped)
    assert found.jobs == ["neo-00000", "neo-00003"] if skip_one else ["neo-00000", "neo-00001", "neo-00003"]
    errors = {s["id"]: s["error"] for s in found.skipped}
    assert list(errors) == ["neo 8", "neo-00002", "neo-00004", "neo-00005", "neo-00006", "neo-00007"]
    assert errors["neo-00002"].endswith("neo-00002/task.json: refused by the check")
    assert "in total here" in errors["neo-00004"] and "in total here" in errors["neo-00005"]  # counted in order
    assert "not valid JSON" in errors["neo-00006"] and "symlink" in errors["neo-00007"]
    assert found.digests["neo-00001"] != "unusable"  # digested, taken or not
    assert [t for t, d in found.digests.items() if d == "unusable"] == list(errors)[:1] + list(errors)[2:]


def test_the_tasks_are_read_by_other_processes_and_a_failure_there_is_read_again_here(tmp_path):
    dataset = _dataset(tmp_path)
    parent = os.getpid()
    found = survey(dataset, lambda task_id, taken: True, lambda record: f"read by {os.getpid()}", workers=2)
    readers = {int(s["error"].rsplit(" ", 1)[1]) for s in found.skipped if "read by" in s["error"]}
    assert readers and parent not in readers

    def fails_in_a_worker(record) -> str | None:
        if os.getpid() != parent and record.query == "refuse me":
            raise RuntimeError("a worker's failure")
        return None

    found = survey(dataset, lambda task_id, taken: True, fails_in_a_worker, workers=2)
    assert "neo-00002" in found.jobs  # read again in the parent, where the check passes

    def fails_everywhere(record) -> str | None:
        raise ValueError("everywhere")

    with pytest.raises(ValueError, match="everywhere"):  # the parent's error ends the survey, as it always did
        survey(dataset, lambda task_id, taken: True, fails_everywhere, workers=2)
