"""The one batch runner (backends.batch): lock, resume, rounds with a guard, atomic finalisation."""

from __future__ import annotations

import functools
import json
from contextlib import contextmanager
from pathlib import Path

import pytest

from backends.batch import ResultLog, Round, finish_folder, json_line, read_lines, run_batch
from backends.folder_lock import FolderLock
from backends.job_contract import JobFailure


class Refused(Exception):
    pass


def square(item: int) -> dict[str, int]:
    if item == 3:
        raise ValueError("three")
    return {"item": item, "value": item * item}


class FlakyGuard:
    """Trips once, after two outcomes (no more items start); recovers when told to."""

    def __init__(self, recovers: bool) -> None:
        self.recovers, self.trips, self.seen = recovers, 0, 0

    def tripped(self) -> bool:
        return self.trips == 0 and self.seen >= 2

    def recovered(self, on_wait=None) -> bool:
        self.trips += 1
        return self.recovers


class Squares:
    """A toy batch: items 0..4, resumed from the log, finalised into ``out.json``."""

    what, error, work_folder = "squares", Refused, False

    def __init__(self, out: Path, guard=None) -> None:
        self.out, self.guard, self.done, self.rounds, self.retried = out, guard, {}, 0, 0

    def start(self, resume: bool):
        if (self.out / "out.json").exists() and resume:
            return "finished already"
        for line in (read_lines(self.out / ".progress.jsonl", 1 << 20) or []) if resume else []:
            item = json_line(line)
            if isinstance(item, dict):
                self.done[item["item"]] = item
        return None

    @contextmanager
    def log(self):
        with ResultLog(self.out / ".progress.jsonl") as self.progress:
            yield self.progress

    def next_round(self, work):
        todo = [i for i in range(5) if i not in self.done]
        if not todo or self.rounds == 2:
            return None
        self.rounds += 1
        return Round(todo, square, 1)

    def record(self, outcome):
        if self.guard is not None:
            self.guard.seen += 1
        self.done[outcome["item"]] = outcome
        self.progress.write([outcome])

    def failed(self, item, failure: JobFailure):
        return {"item": item, "error": failure.reason}

    def retry(self):
        self.retried += 1

    def stopped(self):
        return Refused("guard gave up")

    def finalise(self):
        data = json.dumps([self.done[i] for i in sorted(self.done)]).encode()
        finish_folder(self.out, [("values.json", data)], ("out.json", b"{}"), (".progress.jsonl",))
        return self.done


def test_a_batch_runs_every_item_records_failures_and_finalises_with_its_metadata_last(tmp_path):
    done = run_batch(tmp_path, Squares(tmp_path), resume=False)
    assert [done[i].get("value") for i in range(5)] == [0, 1, 4, None, 16]
    assert "ValueError: three" in done[3]["error"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "values.json"]  # no lock, no log


def test_a_second_writer_is_refused_with_the_commands_error(tmp_path):
    with FolderLock(tmp_path, "other"), pytest.raises(Refused, match="another process .*other.* is writing"):
        run_batch(tmp_path, Squares(tmp_path), resume=False)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_a_resume_skips_what_the_log_holds_and_a_cut_line_is_redone(tmp_path):
    (tmp_path / ".progress.jsonl").write_text(json.dumps({"item": 0, "value": 99}) + "\n{\"item\": 1, \"va")
    batch = Squares(tmp_path)
    done = run_batch(tmp_path, batch, resume=True)
    assert done[0]["value"] == 99 and done[1]["value"] == 1
    assert run_batch(tmp_path, Squares(tmp_path), resume=True) == "finished already"


def test_a_guard_that_recovers_gets_another_round_and_one_that_does_not_stops_the_batch(tmp_path):
    recovering = Squares(tmp_path / "a", FlakyGuard(recovers=True))
    assert sorted(run_batch(tmp_path / "a", recovering, resume=False)) == [0, 1, 2, 3, 4]
    assert (recovering.retried, recovering.rounds) == (1, 2)
    stopping = Squares(tmp_path / "b", FlakyGuard(recovers=False))
    with pytest.raises(Refused, match="guard gave up"):
        run_batch(tmp_path / "b", stopping, resume=False)
    assert not (tmp_path / "b" / "out.json").exists()  # what finished stays in the log for a resume
    assert [json.loads(line)["item"] for line in (tmp_path / "b" / ".progress.jsonl").read_text().splitlines()] == [0, 1]


def fills_the_disk(started: str, item: int) -> dict[str, int]:
    """Items from 2 on find the disk full, as every job would once it is; each job leaves a mark
    in ``started`` (a folder on another disk) that it ran."""
    Path(started, str(item)).touch()
    if item >= 2:
        import errno
        import os

        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"/data/item-{item}.json")
    return {"item": item, "value": item * item}


class Filling(Squares):
    def next_round(self, work):
        todo = [i for i in range(6) if i not in self.done]
        if not todo:
            return None
        return Round(todo, functools.partial(fills_the_disk, str(self.started)), self.workers)

    def space_needed(self):
        return 3 * 2**20


@pytest.mark.parametrize("workers", [1, 2])
def test_the_first_job_without_space_stops_the_batch_and_none_of_them_is_an_outcome(tmp_path, workers):
    from backends.batch import NoSpaceLeft
    from backends.job_contract import Budget

    batch = Filling(tmp_path / "out")
    batch.workers, batch.started = workers, tmp_path / "started"
    batch.started.mkdir()
    tmp_path = tmp_path / "out"
    budget = Budget(seconds=30) if workers > 1 else None  # with a budget, jobs run in worker processes
    with pytest.raises(NoSpaceLeft) as raised:
        run_batch(tmp_path, batch, resume=False, budget=budget)
    message = str(raised.value)
    assert message.startswith("no space left on the device writing /data/item-")
    assert f"under {tmp_path}: " in message and "MiB free, about 3.0 MiB more needed" in message and "--resume" in message
    logged = [json.loads(line) for line in (tmp_path / ".progress.jsonl").read_text().splitlines()]
    # the items that wrote are kept; those that found no space are not outcomes (a resume runs them)
    assert sorted(item["item"] for item in logged) == [0, 1] and all("error" not in item for item in logged)
    assert not (tmp_path / "out.json").exists()
    started = sorted(int(p.name) for p in batch.started.iterdir())
    assert started[:3] == [0, 1, 2] and len(started) <= 2 + workers  # no job starts once one found no space


def test_a_synced_write_cut_by_a_full_disk_leaves_the_old_file_and_no_temporary_copy(tmp_path, monkeypatch):
    import errno
    import os

    from backends import batch as batch_module

    target = tmp_path / ".progress.jsonl"
    target.write_text("old\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(batch_module.os, "fsync", full)
    with pytest.raises(OSError):
        batch_module.write_synced(target, b"new\n" * 1000)
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == [".progress.jsonl"]


def test_a_write_of_the_parents_on_a_full_disk_is_the_same_one_line_naming_the_folder(tmp_path):
    import errno

    from backends.batch import NoSpaceLeft

    class ParentFull(Squares):
        def record(self, outcome):
            raise OSError(errno.ENOSPC, "No space left on device")  # os.write on the log's descriptor: no file name

    with pytest.raises(NoSpaceLeft) as raised:
        run_batch(tmp_path, ParentFull(tmp_path), resume=False)
    assert str(raised.value).startswith(f"no space left on the device writing into {tmp_path} (")
    assert str(raised.value).endswith("free some space and rerun with --resume")
