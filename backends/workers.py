"""Run a batch of jobs in worker processes, each job within a time and memory budget.

Builds, regenerations and evaluations hand their jobs to :func:`run_jobs`. Why not a stock
process pool: a stock pool submits everything at once, cannot stop one job that hangs, and leaves
its workers behind when the parent is killed. Here:

- at most one job per worker is in flight, so an interrupt stops scheduling at once;
- a job over its time budget gets ``BudgetExceeded`` inside its worker (``SIGALRM``); a worker
  that does not answer a few seconds later is killed and replaced, and the job is reported as
  ``timeout``; a job that exhausts its memory budget (``RLIMIT_AS`` above what the worker held
  when it started) is reported as ``memory``; a worker that dies is reported as ``crashed``; the
  batch goes on in every case;
- workers ignore Ctrl-C (the terminal sends it to the whole process group) and die with their
  parent (``PR_SET_PDEATHSIG`` on Linux, and a parent check before every job);
- with one worker and no budget (a library caller), jobs run in the calling process instead;
- on the first Ctrl-C or SIGTERM the parent stops scheduling, waits at most ``drain_seconds``
  for jobs in flight, kills the rest and raises :class:`Interrupted`; a second Ctrl-C exits at once.

Workers are forked, so jobs and the job function are never pickled (only results are), and a
worker starts in milliseconds with everything the parent had imported. What the parent holds when
the workers fork is frozen out of the garbage collector's reach for the batch (``gc.freeze``): a
worker's collections then neither walk those objects nor copy the memory pages they sit on (in a
one-process batch too, the jobs' collections skip what the caller held). For the batch the
collector also waits for :data:`YOUNG_OBJECTS` new objects (not 700) before it looks
for cycles: a task makes about half a million, few of them in cycles, and the default threshold
spent some 7 % of a task's CPU in collections that found little.

With ``group``, a worker keeps to one group of jobs (a build's group is a world: its files are
parsed once, by the worker that holds it); a worker with no pending job of its group within
``spread`` (the jobs a batch expects to need) starts a group no other worker holds whose first
pending job lies within it. Past ``spread`` every worker takes the first pending job, so the last
jobs needed are shared rather than one worker running ahead into jobs that turn out not to be
needed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import signal
import threading
import time
from collections import deque
from contextlib import contextmanager
from multiprocessing import connection, get_context
from typing import AbstractSet, Any, Callable, Iterator, Sequence

from backends.job_contract import (  # noqa: F401 - the contract, as callers import it from here
    CRASHED,
    GRACE_SECONDS,
    MEMORY,
    NO_SPACE,
    TIMEOUT,
    Budget,
    BudgetExceeded,
    Interrupted,
    JobFailure,
    note_of,
    raised,
)
from backends.ray_executor import run_jobs_ray

DRAIN_SECONDS = 2.0   # how long jobs in flight may finish after an interrupt
POLL_SECONDS = 0.1
YOUNG_OBJECTS = 10_000  # new objects between two looks for cycles during a batch (the default: 700)


# -- in the worker -----------------------------------------------------------------------------

def _die_with_parent() -> None:
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent check before each job still holds


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit_memory(extra: int) -> None:
    import resource

    base = _address_space()
    if base is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = base + extra
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft == resource.RLIM_INFINITY or wanted < soft:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


_alarm = {"fired": False}  # set by the handler: a library's bare ``except:`` may swallow or re-wrap the raise


def _on_alarm(signum: int, frame: Any) -> None:
    _alarm["fired"] = True
    raise BudgetExceeded


def _worker(fn: Callable[[Any], Any], jobs: Sequence[Any], conn: Any, budget: Budget, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the line above: no signal will come, and this
        os._exit(0)             # process would hold the parent's folder lock (inherited) while it waits
    if budget.memory_bytes:
        _limit_memory(budget.memory_bytes)
    signal.signal(signal.SIGALRM, _on_alarm)
    while True:
        try:
            index = conn.recv()
        except (EOFError, OSError):
            return
        if index is None or os.getppid() != parent:
            return
        _alarm["fired"] = False
        try:
            if budget.seconds:
                signal.setitimer(signal.ITIMER_REAL, budget.seconds)
            try:
                message: tuple[Any, ...] = ("ok", index, fn(jobs[index]))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except BudgetExceeded as exc:
            message = ("failed", index, TIMEOUT, budget.describe(TIMEOUT), note_of(exc))
        except MemoryError as exc:
            message = ("failed", index, MEMORY, budget.describe(MEMORY), note_of(exc))
        except Exception as exc:  # a bug in one job must not end the batch: it is reported
            failure = raised(exc)
            message = ("failed", index, failure.kind, failure.detail, failure.note)
        if _alarm["fired"]:  # the raise was caught on the way (openpyxl's bare ``except:`` re-raises it
            message = ("failed", index, TIMEOUT, budget.describe(TIMEOUT), message[-1])  # as TypeError): a timeout
        try:
            conn.send(message)
        except Exception as exc:  # the result could not be sent (e.g. not picklable)
            conn.send(("failed", index, CRASHED, f"result not transferable: {type(exc).__name__}", None))


# -- in the parent -----------------------------------------------------------------------------

class _Slot:
    def __init__(self, context: Any, fn: Callable[[Any], Any], jobs: Sequence[Any], budget: Budget) -> None:
        parent_end, child_end = context.Pipe()
        self.process = context.Process(target=_worker, args=(fn, jobs, child_end, budget, os.getpid()), daemon=True)
        self.process.start()
        child_end.close()
        self.conn = parent_end
        self.job: int | None = None
        self.started = 0.0
        self.group: Any = None

    def give(self, index: int) -> None:
        self.job, self.started = index, time.monotonic()
        self.conn.send(index)


    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=2)
        self.conn.close()

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=2)
        self.conn.close()


def _next_job(pending: deque[int], group: Any, group_of: Callable[[int], Any] | None,
              held: AbstractSet[Any] = frozenset(), spread: int = 0) -> int:
    """The first pending job of ``group`` (the group of the worker's last job; with ``spread``,
    only among the first ``spread`` jobs of the batch); else the first pending job of a group no
    other worker holds (``held``) among the first ``spread``; else the first one."""
    if group_of is not None:
        if group is not None:
            for position, index in enumerate(pending):
                if spread and index >= spread:
                    break
                if group_of(index) == group:
                    del pending[position]
                    return index
        for position, index in enumerate(pending):
            if index >= spread:
                break
            if group_of(index) not in held:
                del pending[position]
                return index
    return pending.popleft()


class _Signals:
    """The first Ctrl-C/SIGTERM sets a flag; a second Ctrl-C kills the workers and exits."""

    def __init__(self, slots: list[_Slot]) -> None:
        self.slots = slots
        self.signum = 0
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> "_Signals":
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum:
            for slot in self.slots:
                if slot.process.is_alive():
                    slot.process.kill()
            os._exit(128 + signum)
        self.signum = signum

    def __exit__(self, *exc: Any) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def run_jobs(fn: Callable[[Any], Any], jobs: Sequence[Any], *, workers: int, budget: Budget,
             on_result: Callable[[int, Any], None], on_failure: Callable[[int, JobFailure], None],
             drain_seconds: float = DRAIN_SECONDS, group: Callable[[Any], Any] | None = None,
             stop: Callable[[], bool] | None = None, wanted: Callable[[Any], bool] | None = None,
             executor: str = "local", ray_address: str | None = None, spread: int = 0) -> None:
    """Run ``fn(job)`` for every job on ``workers`` forked processes.

    ``on_result(index, result)`` or ``on_failure(index, JobFailure)`` is called in the parent,
    in completion order, once per job. ``group(job)``, when given, keeps a worker on jobs of the
    group of its last job while any is pending (jobs that share files then share the worker's read
    caches); with ``spread``, only among the first ``spread`` jobs, and a worker with none left
    there starts a group no other worker holds (see the module's docstring); otherwise jobs start
    in order. ``stop()``, when given, is asked before each job starts: once it says True no more jobs
    start, and the batch ends when those running have reported.
    ``wanted(job)``, when given, is asked just before that job would start: a job it refuses is
    skipped, neither run nor reported (a batch may hold more jobs than turn out to be needed).
    ``executor="ray"`` runs the jobs as Ray tasks instead (``ray_address``: a cluster to join;
    see :mod:`backends.ray_executor`). Raises :class:`Interrupted` after Ctrl-C or SIGTERM (every
    job that finished by then has been reported)."""
    if not jobs:
        return
    if executor == "ray":  # the same contract on Ray (backends.ray_executor)
        run_jobs_ray(fn, jobs, workers=workers, budget=budget, on_result=on_result, on_failure=on_failure,
                     stop=stop, wanted=wanted, address=ray_address)
        return
    stop = stop or (lambda: False)
    wanted = wanted or (lambda job: True)
    with _collector_for_batch():
        if workers == 1 and budget == Budget():
            _run_here(fn, jobs, on_result, on_failure, stop, wanted)
        else:
            _run_forked(fn, jobs, workers, budget, on_result, on_failure, drain_seconds, group, stop, wanted,
                        spread)


@contextmanager
def _collector_for_batch() -> Iterator[None]:
    """The garbage collector as a batch wants it (see the module's docstring): what the caller holds
    frozen (unless the caller froze something itself, or this is a batch inside a job) and the young
    generation's threshold raised to :data:`YOUNG_OBJECTS`; both as they were afterwards."""
    freezing = gc.get_freeze_count() == 0
    threshold = gc.get_threshold()
    if freezing:
        gc.freeze()
    if 0 < threshold[0] < YOUNG_OBJECTS:
        gc.set_threshold(YOUNG_OBJECTS, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if freezing:
            gc.unfreeze()


def _run_forked(fn: Callable[[Any], Any], jobs: Sequence[Any], workers: int, budget: Budget,
                on_result: Callable[[int, Any], None], on_failure: Callable[[int, JobFailure], None],
                drain_seconds: float, group: Callable[[Any], Any] | None, stop: Callable[[], bool],
                wanted: Callable[[Any], bool], spread: int) -> None:
    context = get_context("fork")
    pending = deque(range(len(jobs)))
    group_of = (lambda index: group(jobs[index])) if group is not None else None
    slots: list[_Slot] = []
    reported = 0
    with _Signals(slots) as signals:
        try:
            for _ in range(min(workers, len(jobs))):
                slots.append(_Slot(context, fn, jobs, budget))
            stop_at: float | None = None
            while True:
                if signals.signum and stop_at is None:
                    stop_at = time.monotonic() + drain_seconds
                if stop_at is None and not stop():
                    _fill(slots, pending, jobs, wanted, group_of, spread)
                busy = [slot for slot in slots if slot.job is not None]
                if not busy:
                    break
                if stop_at is not None and time.monotonic() >= stop_at:
                    break
                ready = connection.wait([slot.conn for slot in busy], timeout=POLL_SECONDS)
                for slot in busy:
                    reported += _collect(slot, slot.conn in ready, slots, (context, fn, jobs, budget), on_result,
                                         on_failure, stopping=bool(signals.signum))
            if signals.signum:
                raise Interrupted(reported, len(jobs), signals.signum)
        finally:
            for slot in slots:
                if slot.job is not None:
                    slot.kill()
                else:
                    slot.close()


def _fill(slots: list[_Slot], pending: deque[int], jobs: Sequence[Any], wanted: Callable[[Any], bool],
          group_of: Callable[[int], Any] | None, spread: int) -> None:
    """Give each idle slot its next wanted job (by group, see :func:`_next_job`)."""
    for slot in slots:
        while slot.job is None and pending:
            held = {other.group for other in slots if other is not slot and other.job is not None}
            index = _next_job(pending, slot.group, group_of, held, spread)
            if not wanted(jobs[index]):
                continue
            slot.group = group_of(index) if group_of is not None else None
            slot.give(index)


_STOP_CODES = (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP)  # exit codes of a worker ended by a stop signal


def _collect(slot: _Slot, readable: bool, slots: list[_Slot], respawn: tuple[Any, Callable[[Any], Any],
             Sequence[Any], Budget], on_result: Callable[[int, Any], None],
             on_failure: Callable[[int, JobFailure], None], stopping: bool = False) -> int:
    """Report ``slot``'s job if its worker answered, or fail it and put a fresh worker in its place
    if it passed its budget (see :func:`_stuck`); how many jobs were reported (0 or 1). While the
    batch is ``stopping``, a worker ended by the stop signal itself (SIGTERM or SIGINT sent to the
    whole process group, as ``kill -- -PGID``, systemd or a scheduler do) reports nothing: its job
    is unfinished, not failed, and a resume runs it."""
    if readable:
        try:
            message = slot.conn.recv()
        except (EOFError, OSError):
            message = None
        if message is not None:
            index = slot.job
            assert index is not None  # only a busy slot is collected
            slot.job = None
            if message[0] == "ok":
                on_result(index, message[2])
            else:
                on_failure(index, JobFailure(message[2], message[3], message[4]))
            return 1
    budget = respawn[3]
    failure = _stuck(slot, budget)
    if failure is None:
        return 0
    index = slot.job
    assert index is not None  # only a busy slot is collected
    slot.kill()
    if stopping and slot.process.exitcode in _STOP_CODES:
        slot.job = None
        return 0
    slots[slots.index(slot)] = _Slot(*respawn)
    on_failure(index, failure)
    return 1


def _run_here(fn: Callable[[Any], Any], jobs: Sequence[Any], on_result: Callable[[int, Any], None],
              on_failure: Callable[[int, JobFailure], None], stop: Callable[[], bool],
              wanted: Callable[[Any], bool]) -> None:
    """No budget and one worker: run in this process (a library caller's objects stay shared)."""
    reported = 0
    try:
        for index, job in enumerate(jobs):
            if stop():
                break
            if not wanted(job):
                continue
            try:
                result = fn(job)
            except MemoryError as exc:
                reported += 1
                on_failure(index, JobFailure(MEMORY, "out of memory", note_of(exc)))
            except Exception as exc:  # reported like a worker's failure: the batch goes on
                reported += 1
                on_failure(index, raised(exc, where=False))
            else:
                reported += 1
                on_result(index, result)
    except KeyboardInterrupt:
        raise Interrupted(reported, len(jobs), signal.SIGINT) from None


def _stuck(slot: _Slot, budget: Budget) -> JobFailure | None:
    """A busy worker that died, or that overran its time budget and did not give up by itself."""
    if not slot.process.is_alive():
        code = slot.process.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return JobFailure(CRASHED, f"worker process ended ({how})")
    if budget.seconds and time.monotonic() - slot.started > budget.seconds + GRACE_SECONDS:
        return JobFailure(TIMEOUT, budget.describe(TIMEOUT))
    return None
