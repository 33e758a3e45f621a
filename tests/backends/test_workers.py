"""The worker pool: budgets, failures, interrupts and dying with the parent; the folder lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from backends.folder_lock import LOCK_NAME, FolderBusy, FolderLock
from backends.job_contract import CRASHED, MEMORY, TIMEOUT, Budget, Interrupted
from backends.workers import run_jobs

pytestmark = pytest.mark.slow


def _collect(fn, jobs, **kwargs):
    results, failures = {}, {}
    run_jobs(fn, jobs, on_result=results.__setitem__, on_failure=failures.__setitem__, **kwargs)
    return results, failures


def _job(kind):
    if kind == "sleep":
        time.sleep(60)
    if kind == "busy":
        while True:
            pass
    if kind == "swallow":  # a job that catches every Exception must still be stopped
        while True:
            try:
                time.sleep(60)
            except Exception:
                pass
    if kind == "rewrap":  # a library's bare ``except:`` that turns whatever it caught into its own error
        try:
            time.sleep(60)
        except:  # noqa: E722
            raise TypeError("expected <class 'int'>")
    if kind == "swallow-all":  # a bare ``except:`` that catches the raise and carries on to a result
        try:
            time.sleep(60)
        except:  # noqa: E722
            pass
        return "LATE"
    if kind == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(50 * 1024 * 1024))
    if kind == "raise":
        raise ValueError("bad input in job")
    if kind == "die":
        os._exit(3)
    if kind == "stopped":  # SIGTERM to the whole process group (kill -- -PGID): the parent, then this worker
        os.kill(os.getppid(), signal.SIGTERM)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
    return kind.upper()


def test_results_come_back_for_every_job_with_several_workers():
    jobs = [f"j{i}" for i in range(12)]
    results, failures = _collect(_job, jobs, workers=3, budget=Budget(seconds=30))
    assert failures == {}
    assert results == {i: f"J{i}" for i in range(12)}


@pytest.mark.parametrize("kind", ["sleep", "busy", "swallow", "rewrap", "swallow-all"])
def _pid_after_a_nap(job):
    time.sleep(0.1)
    return os.getpid()


class _FakeSlot:
    """A slot without a process: what the scheduler gives it is recorded."""

    def __init__(self) -> None:
        self.job: int | None = None
        self.group = None
        self.given: list[int] = []

    def give(self, index: int) -> None:
        self.job = index
        self.given.append(index)


def test_a_worker_stays_on_the_group_of_its_last_job_while_one_is_pending():
    """The scheduler itself, step by step (which worker finishes first is the machine's business)."""
    from collections import deque

    from backends.workers import _fill

    jobs = ["a0", "b0", "a1", "b1", "a2", "b2"]
    slots, pending = [_FakeSlot(), _FakeSlot()], deque(range(len(jobs)))
    fill = lambda: _fill(slots, pending, jobs, lambda job: True, lambda i: jobs[i][0], len(jobs))  # noqa: E731
    fill()
    assert [s.given for s in slots] == [[0], [1]]  # the second worker starts the group nobody holds
    slots[0].job = None  # the a-worker is done first, twice: it stays on a
    fill()
    slots[0].job = None
    fill()
    assert slots[0].given == [0, 2, 4] and slots[1].given == [1]
    slots[1].job = None  # the b-worker keeps to b
    fill()
    assert slots[1].given == [1, 3]
    slots[0].job = None  # no a left: the a-worker takes what is pending, b's last job
    fill()
    assert slots[0].given == [0, 2, 4, 5] and not pending


def test_grouped_jobs_all_come_back_from_the_workers():
    jobs = ["a0", "b0", "a1", "b1", "a2", "b2"]
    results, failures = _collect(_pid_after_a_nap, jobs, workers=2, budget=Budget(seconds=30),
                                 group=lambda job: job[0])
    assert not failures and set(results) == set(range(len(jobs))) and len(set(results.values())) <= 2


def _pid_and_start(job):
    start = time.monotonic()
    time.sleep(0.1)
    return os.getpid(), start


@pytest.mark.parametrize("spread", [6, 0])
def test_workers_start_groups_no_other_worker_holds_only_within_spread(spread):
    jobs = ["a0", "a1", "a2", "b0", "b1", "b2"]
    results, failures = _collect(_pid_and_start, jobs, workers=2, budget=Budget(seconds=30),
                                 group=lambda job: job[0], spread=spread)
    assert not failures
    pids = {letter: {results[i][0] for i, job in enumerate(jobs) if job[0] == letter} for letter in "ab"}
    first_b = min(results[i][1] for i, job in enumerate(jobs) if job[0] == "b")
    last_a = max(results[i][1] for i, job in enumerate(jobs) if job[0] == "a")
    if spread:  # each worker its own group, from the start
        firsts: dict[int, tuple[float, str]] = {}  # each worker's first job: its start and group
        for i, job in enumerate(jobs):
            pid, start = results[i][0], results[i][1]
            if pid not in firsts or start < firsts[pid][0]:
                firsts[pid] = (start, job[0])
        # on a loaded machine the second worker may start after the first finished every job: then
        # there is no second group to start
        if len(firsts) == 2:
            assert sorted(group for _, group in firsts.values()) == ["a", "b"]
            if len(pids["a"]) == 1 and len(pids["b"]) == 1:  # neither finished its group before the other began
                assert pids["a"] != pids["b"] and first_b < last_a
    else:  # in job order: both workers on group a first
        assert len(pids["a"]) == 2


def test_next_job_keeps_to_the_group_then_spreads_then_follows_job_order():
    from collections import deque

    from backends.workers import _next_job

    group_of = lambda index: index // 4  # noqa: E731 -- jobs 0-3 are group 0, 4-7 group 1, ...
    # no spread: the worker's own group while any is pending, else job order
    assert _next_job(deque([1, 2, 5, 6]), 1, group_of) == 5
    assert _next_job(deque([1, 2, 5, 6]), None, group_of) == 1
    # spread 10: a free worker starts a group nobody holds, within the first 10 jobs
    assert _next_job(deque([1, 2, 4, 5, 8, 9]), None, group_of, held={0}, spread=10) == 4
    assert _next_job(deque([1, 2, 4, 5, 8, 9]), None, group_of, held={0, 1}, spread=10) == 8
    assert _next_job(deque([1, 2, 4, 5, 12]), None, group_of, held={0, 1}, spread=10) == 1  # 12 is past it
    # past the spread a worker leaves its own group for the first pending job
    assert _next_job(deque([5, 10, 11]), 2, group_of, held={1}, spread=10) == 5
    assert _next_job(deque([6, 10, 11]), 2, group_of, held={1}, spread=10) == 6
    assert _next_job(deque([5, 9, 10]), 2, group_of, held={1}, spread=10) == 9  # its own group, within it
    pending = deque([6, 8, 9, 10])
    assert _next_job(pending, 2, group_of, held={1}, spread=10) == 8 and list(pending) == [6, 9, 10]


def test_a_batch_leaves_the_garbage_collector_as_it_found_it():
    import gc

    gc.unfreeze()
    results, failures = _collect(_job, ["a", "b"], workers=2, budget=Budget(seconds=30))
    assert results == {0: "A", 1: "B"} and not failures
    assert gc.get_freeze_count() == 0  # frozen for the batch only
    gc.freeze()  # a caller's own freeze is kept
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        results, failures = _collect(_job, ["c", "d"], workers=2, budget=Budget(seconds=30))
        assert results == {0: "C", 1: "D"} and not failures
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def _young_threshold(job):
    import gc

    return gc.get_threshold()[0]


@pytest.mark.parametrize("workers, budget", [(2, Budget(seconds=30)), (1, Budget())])
def test_a_batch_looks_for_cycles_less_often_and_gives_the_threshold_back(workers, budget):
    import gc

    from backends.workers import YOUNG_OBJECTS

    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    try:
        results, _ = _collect(_young_threshold, ["a", "b"], workers=workers, budget=budget)
        assert results == {0: YOUNG_OBJECTS, 1: YOUNG_OBJECTS}  # in forked workers and in this process
        assert gc.get_threshold() == (700, before[1], before[2])
        gc.set_threshold(50_000, before[1], before[2])  # a caller's higher threshold is left as it is
        results, _ = _collect(_young_threshold, ["a"], workers=workers, budget=budget)
        assert results == {0: 50_000} and gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)


@pytest.mark.parametrize("kind", ["sleep", "busy", "swallow", "rewrap", "swallow-all"])
def test_a_job_over_its_time_budget_is_a_timeout_and_the_batch_goes_on(kind):
    results, failures = _collect(_job, ["a", kind, "b"], workers=1, budget=Budget(seconds=0.5))
    assert results == {0: "A", 2: "B"}
    assert failures[1].kind == TIMEOUT
    assert failures[1].reason == "error: timeout (over the 0.5 s time budget)"


def test_a_job_over_its_memory_budget_is_reported_as_memory():
    results, failures = _collect(_job, ["memory", "after"], workers=1,
                                 budget=Budget(seconds=60, memory_bytes=300 * 1024 * 1024))
    assert failures[0].kind == MEMORY
    assert results == {1: "AFTER"}


def test_a_raising_job_and_a_dying_worker_are_reported_and_replaced():
    results, failures = _collect(_job, ["raise", "die", "ok"], workers=1, budget=Budget(seconds=30))
    assert failures[0].kind == CRASHED and "ValueError: bad input in job" in failures[0].detail
    assert failures[1].kind == CRASHED and "exit code 3" in failures[1].detail
    assert results == {2: "OK"}


def test_without_a_budget_one_worker_runs_in_this_process():
    seen = []
    results, failures = _collect(lambda job: seen.append(job) or job, ["x", "y"], workers=1, budget=Budget())
    assert seen == ["x", "y"] and results == {0: "x", 1: "y"}


def test_an_interrupt_stops_scheduling_drains_and_raises():
    before = signal.getsignal(signal.SIGINT)  # the default, or "ignore" when the suite runs in the background

    def interrupt_soon():
        time.sleep(0.6)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_soon, daemon=True).start()
    results, failures = {}, {}
    with pytest.raises(Interrupted) as caught:
        run_jobs(lambda job: time.sleep(0.25) or job, list(range(100)), workers=2, budget=Budget(seconds=30),
                 on_result=results.__setitem__, on_failure=failures.__setitem__, drain_seconds=1.0)
    assert caught.value.total == 100 and caught.value.done == len(results) < 100  # stopped long before the end
    assert caught.value.exit_code == 130
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back


def test_a_worker_ended_by_the_stop_signal_is_unfinished_not_failed():
    """SIGTERM sent to a build's whole process group ends the workers too: their jobs are left for a
    resume, not reported as crashed; a worker that dies on its own is still a crash."""
    results, failures = {}, {}
    with pytest.raises(Interrupted) as caught:
        run_jobs(_job, ["ok", "stopped", "sleep"], workers=1, budget=Budget(seconds=30),
                 on_result=results.__setitem__, on_failure=failures.__setitem__, drain_seconds=1.0)
    assert results == {0: "OK"} and failures == {} and caught.value.done == 1

def test_workers_die_with_their_parent(tmp_path):
    """A parent killed with SIGKILL leaves no worker behind."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(f"""
        import os, time
        from backends.workers import Budget, run_jobs
        def job(i):
            with open({str(pids)!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(60)
        run_jobs(job, [0, 1], workers=2, budget=Budget(seconds=120), on_result=print, on_failure=print)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < 2):
        time.sleep(0.05)
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 2
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5
    alive = children
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in children if _alive(pid)]
        time.sleep(0.05)
    assert alive == []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def test_a_second_writer_is_refused_and_the_lock_file_goes_away(tmp_path):
    with FolderLock(tmp_path, "homer build"):
        with pytest.raises(FolderBusy, match=rf"{os.getpid()}.*writing this folder"):
            FolderLock(tmp_path).acquire()
        assert (tmp_path / LOCK_NAME).is_file()
    assert not (tmp_path / LOCK_NAME).exists()
    with FolderLock(tmp_path):  # free again
        pass


def test_a_lock_held_by_another_process_is_refused_and_freed_when_it_dies(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        from backends.folder_lock import FolderLock
        FolderLock(Path({str(tmp_path)!r}), "homer eval").acquire()
        print("locked", flush=True)
        time.sleep(60)
    """)], cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    with pytest.raises(FolderBusy, match=r"homer eval, pid"):
        FolderLock(tmp_path).acquire()
    holder.kill()
    holder.wait()
    with FolderLock(tmp_path):  # the kernel released the dead holder's lock
        pass


@pytest.mark.parametrize("workers,budget", [(1, Budget()), (2, Budget(seconds=30))])
def test_a_job_no_longer_wanted_is_neither_run_nor_reported(workers, budget):
    ran: list[int] = []

    def wanted(job):  # asked as each job would start: the later half is not wanted once 3 are back
        return job < 6 or len(ran) < 3

    results, failures = {}, {}

    def keep(index, result):
        results[index] = result
        ran.append(result)

    run_jobs(lambda job: job, list(range(12)), workers=workers, budget=budget, on_result=keep,
             on_failure=failures.__setitem__, wanted=wanted)
    assert failures == {} and set(range(6)) <= set(results.values())
    assert len(results) < 12 and all(results[i] == i for i in results)
