"""The contract every job executor keeps (local worker processes, Ray tasks): per-job budgets,
why a job gave no result, and the interrupt that stops a batch. Shared by ``backends.workers`` and
``backends.ray_executor`` so that neither imports the other's internals."""

from __future__ import annotations

import errno
import os
import traceback
from dataclasses import dataclass
from typing import Any, TypeGuard

GRACE_SECONDS = 5.0   # a worker past its budget by this much is killed from outside

TIMEOUT, MEMORY, CRASHED = "timeout", "memory", "crashed"
NO_SPACE = "no space"  # the disk (or quota) filled: every later job would fail alike, so the batch stops
_NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class BudgetExceeded(BaseException):
    """Raised inside a job that ran out of time; a ``BaseException`` so that the job's own
    ``except Exception`` handlers cannot swallow it."""


class Interrupted(Exception):
    """The batch was stopped by Ctrl-C or SIGTERM; ``done`` of ``total`` jobs reported."""

    def __init__(self, done: int, total: int, signum: int) -> None:
        super().__init__(f"interrupted: {done} of {total} done")
        self.done, self.total, self.signum = done, total, signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@dataclass(frozen=True)
class Budget:
    """Per-job limits; ``None`` means unlimited."""

    seconds: float | None = None
    memory_bytes: int | None = None

    def describe(self, kind: str) -> str:
        if kind == TIMEOUT and self.seconds:
            return f"over the {self.seconds:g} s time budget"
        if kind == MEMORY and self.memory_bytes:
            return f"over the {self.memory_bytes // (1024 * 1024)} MiB memory budget"
        return kind


NOTE = "job_note"  # the attribute a job sets on what it raises: plain data the batch is to have with the failure


@dataclass(frozen=True)
class JobFailure:
    """Why a job gave no result: ``kind`` is timeout, memory, crashed or no space (``detail`` then
    the file that could not be written). ``note``: what the job had found before it failed, when it
    said so on the exception (:func:`note_of`; a worker that died says nothing)."""

    kind: str
    detail: str
    note: Any = None

    @property
    def reason(self) -> str:
        return f"error: {self.kind} ({self.detail})"


def note_of(exc: BaseException) -> Any:
    """The note a job put on the exception it raised (``NOTE``), or None."""
    return getattr(exc, NOTE, None)


def no_space(exc: BaseException) -> TypeGuard[OSError]:
    """An error of a disk or quota that filled."""
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE_ERRNOS


def raised(exc: Exception, where: bool = True) -> JobFailure:
    """The failure of a job that raised ``exc``: no space (naming the file), else crashed with the
    exception and, with ``where``, the file and line it came from."""
    if no_space(exc):
        return JobFailure(NO_SPACE, str(getattr(exc, "filename", "") or ""), note_of(exc))
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if where else []
    at = f" at {os.path.basename(frame[0].filename)}:{frame[0].lineno}" if frame else ""
    return JobFailure(CRASHED, f"{type(exc).__name__}: {str(exc)[:300]}{at}", note_of(exc))
