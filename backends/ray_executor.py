"""Run a batch's jobs as Ray tasks: on this machine, or across a Ray cluster for big runs.

The same contract as :func:`backends.workers.run_jobs` (``on_result`` / ``on_failure`` in the
calling process, once per job, in completion order; ``stop`` asked before each job starts), so
builds, regenerations and evaluations keep their resume files, and the offline backend writes the
same bytes as with local workers: a job's result depends only on the job.

- ``address=None`` starts a local Ray instance with ``workers`` CPUs (and stops it at the end);
  ``address="auto"``, ``host:6379`` or ``ray://host:10001`` joins a running cluster, where every
  node must have homeragents installed. A job's input and result travel through Ray (a build's
  job returns its staged task as bytes, ``backends.carried_folder``; a regenerate job gets its
  seed's folders as bytes and returns its task so; an eval job gets its task and returns its
  rows), so no file system needs to be shared with the nodes.
- At most ``workers`` jobs are in flight. A job over its time budget is cancelled (``timeout``);
  a job whose worker died, or that Ray killed for memory, is reported as ``crashed`` or
  ``memory``; a job that raised is reported as ``crashed`` with the exception, like a local
  worker's. The memory budget is not enforced inside Ray workers (Ray's own memory monitor is).
- Ctrl-C cancels the jobs in flight and raises :class:`~backends.workers.Interrupted`.

Ray is an optional extra: ``pip install "homeragents[ray]"``.
"""

from __future__ import annotations

import logging
import re
import signal
import time
from collections import deque
from typing import Any, Callable, Sequence

from backends.job_contract import (
    CRASHED,
    GRACE_SECONDS,
    MEMORY,
    TIMEOUT,
    Budget,
    Interrupted,
    JobFailure,
    note_of,
    raised,
)

POLL_SECONDS = 0.2
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def _run_one(fn: Callable[[Any], Any], job: Any) -> tuple:
    """Inside a Ray worker: the job's result, or why it failed (never raises)."""
    try:
        return ("ok", fn(job))
    except MemoryError as exc:
        return ("failed", MEMORY, "out of memory", note_of(exc))
    except Exception as exc:  # a bug in one job must not end the batch: it is reported
        failure = raised(exc)
        return ("failed", failure.kind, failure.detail, failure.note)


def start(workers: int, address: str | None) -> bool:
    """Connect to Ray (a local instance, or the cluster at ``address``); True when this call
    started it (and should shut it down)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable('--executor ray needs Ray: pip install "homeragents[ray]"') from None
    if ray.is_initialized():
        return False
    # Ray's own INFO and WARNING lines ("Started a local Ray instance.") would land among homer's
    # output: only its errors are shown
    quiet: dict[str, Any] = {"log_to_driver": False, "ignore_reinit_error": True, "logging_level": logging.ERROR}
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, **quiet)
    except Exception as exc:  # a cluster that cannot be reached, a port in use, ...
        raise RayUnavailable(f"cannot start or reach Ray{f' at {address}' if address else ''}: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}") from None
    return True


def run_jobs_ray(fn: Callable[[Any], Any], jobs: Sequence[Any], *, workers: int, budget: Budget,
                 on_result: Callable[[int, Any], None], on_failure: Callable[[int, JobFailure], None],
                 stop: Callable[[], bool] | None = None, wanted: Callable[[Any], bool] | None = None,
                 address: str | None = None) -> None:
    if not jobs:
        return
    stop = stop or (lambda: False)
    wanted = wanted or (lambda job: True)
    started = start(workers, address)
    import ray

    try:
        remote = ray.remote(max_retries=0)(_run_one)
        fn_ref = ray.put(fn)
        pending = deque(range(len(jobs)))
        in_flight: dict[Any, tuple[int, float]] = {}
        reported = 0
        try:
            while pending or in_flight:
                while pending and len(in_flight) < workers and not stop():
                    index = pending.popleft()
                    if wanted(jobs[index]):
                        in_flight[remote.remote(fn_ref, jobs[index])] = (index, time.monotonic())
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    index, _ = in_flight.pop(ref)
                    reported += 1
                    try:
                        message = ray.get(ref)
                    except ray.exceptions.OutOfMemoryError:
                        on_failure(index, JobFailure(MEMORY, "Ray stopped the job: the node ran out of memory"))
                        continue
                    except ray.exceptions.RayError as exc:
                        text = _ANSI.sub("", str(exc)).strip().splitlines()
                        on_failure(index, JobFailure(CRASHED, f"Ray: {type(exc).__name__}: "
                                                              f"{text[-1][:200] if text else ''}"))
                        continue
                    if message[0] == "ok":
                        on_result(index, message[1])
                    else:
                        on_failure(index, JobFailure(message[1], message[2], message[3]))
                if budget.seconds:
                    now = time.monotonic()
                    for ref, (index, since) in list(in_flight.items()):
                        if now - since > budget.seconds + GRACE_SECONDS:
                            ray.cancel(ref, force=True)
                            in_flight.pop(ref)
                            reported += 1
                            on_failure(index, JobFailure(TIMEOUT, budget.describe(TIMEOUT)))
        except KeyboardInterrupt:
            for ref in in_flight:
                ray.cancel(ref, force=True)
            raise Interrupted(reported, len(jobs), signal.SIGINT) from None
    finally:
        if started:
            ray.shutdown()
