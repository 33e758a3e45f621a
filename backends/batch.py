"""One batch runner for every command that fills an output folder item by item: ``homer build``
(attempts), ``homer regenerate`` (seed subtasks) and ``homer eval`` (tasks and their trials).

The layers are those of tau2-bench: one item is the command's own function, run in a worker (an
attempt, a seed, a task's trials); what a batch is made of -- which items, what an outcome means,
which files the folder holds -- is the command's :class:`Batch`; running a batch is this module,
the same for all three:

1. lock the folder (``backends.folder_lock``): a second writer is refused at once with one line;
2. ``batch.start(resume)``: the command refuses a folder holding another configuration (a
   configuration hash), writes its metadata as running and reads what an earlier run finished
   (or says the folder is finished already);
3. rounds of items over the workers (``backends.workers.run_jobs``), each outcome recorded as it
   arrives (:class:`ResultLog`: a line per finished item, read back by a resume); a guard that
   trips (an endpoint down, or refusing every request) pauses the run and goes on when it
   recovers, else stops it with what finished kept;
4. ``batch.finalise()``: the folder's files, each written under a temporary name and renamed
   (:func:`finish_folder`), its metadata last, then the work files removed.

Ctrl-C stops a round (``backends.workers.Interrupted``) and ``kill -9`` stops everything: either
way the folder keeps its running metadata and its log, and ``--resume`` goes on from there.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Protocol, Self, Sequence, cast

from backends.folder_lock import FolderBusy, FolderLock
from backends.job_contract import NO_SPACE, Budget, JobFailure, no_space
from backends.scratch import claim_work_folder, release_work_folder
from backends.workers import run_jobs
from office_env.untrusted import UntrustedInputError, open_regular, printable, read_file
from office_env.workspace import atomic_write


class Guard(Protocol):
    """What stops a batch early: an endpoint that keeps failing, a server that refuses alike."""

    def tripped(self) -> bool: ...

    def recovered(self, on_wait: Callable[[float], None] | None = None) -> bool: ...


@dataclass
class Round:
    """Items to run over the workers at once: ``run(item)`` in a worker (picklable for Ray);
    ``group``, ``wanted`` and ``spread`` as ``backends.workers.run_jobs`` takes them."""

    items: Sequence[Any]
    run: Callable[[Any], Any]
    workers: int
    group: Callable[[Any], Any] | None = None
    wanted: Callable[[Any], bool] | None = None
    spread: int = 0


class Batch(Protocol):
    """What a command tells the runner (see the module's docstring for the order of calls)."""

    what: str                      # the command, named to a second writer: "homer build"
    work_folder: bool              # claim a work folder (``backends.scratch``) for the rounds

    @property
    def error(self) -> type[Exception]: ...     # the command's one-line error for a folder it cannot have

    @property
    def guard(self) -> Guard | None: ...        # asked after each round; None: nothing stops the batch early

    def start(self, resume: bool) -> Any: ...          # not None: the folder is finished already

    def log(self) -> ContextManager[Any]: ...          # the result log, open while rounds run

    def next_round(self, work: str | None) -> Round | None: ...

    def record(self, outcome: Any) -> None: ...        # in the parent, once per item, as it ends

    def failed(self, item: Any, failure: JobFailure) -> Any: ...   # the outcome of an item that gave none

    def retry(self) -> None: ...                       # the guard recovered: errored items run again

    def stopped(self) -> Exception: ...                # the guard gave up: what to raise

    def finalise(self) -> Any: ...


class NoSpaceLeft(OSError):
    """A job could not write for want of space (the disk or a quota filled): the batch stopped at
    once, every later job would have failed alike. Its one line names the file, the folder, the
    space free there and, where the batch can tell (``space_needed``), how much more it needs."""

    def __init__(self, filename: str, out: Path, needed: int | None, again: str = "rerun with --resume") -> None:
        super().__init__(errno.ENOSPC, "no space left on the device", filename or str(out))
        self.out, self.needed, self.again = out, needed, again

    def __str__(self) -> str:
        try:
            free = f"{_mib(shutil.disk_usage(self.out).free)} free"
        except OSError:
            free = "free space unknown"
        need = f", about {_mib(self.needed)} more needed" if self.needed else ", space needed unknown"
        where = (f"writing {self.filename} (under {self.out}: " if self.filename != str(self.out)
                 else f"writing into {self.out} (")
        return f"no space left on the device {where}{free}{need}); free some space and {self.again}"


def _mib(size: int) -> str:
    """A size in MiB to one decimal; a size that would read 0.0 MiB in KiB."""
    return f"{size / 2**20:.1f} MiB" if size >= 0.05 * 2**20 else f"{max(1, round(size / 1024)) if size else 0} KiB"


Needed = int | Callable[[], int | None] | None  # the bytes still to write, or how to estimate them once a write failed


@contextmanager
def space_named(out: Path, again: str = "rerun with --resume", needed: Needed = None) -> Iterator[None]:
    """A disk that fills under writes into ``out`` ends as :class:`NoSpaceLeft`: one line naming
    the file (or the folder, for a write with no file name), the space free there and the space
    the command still needs (``needed``: bytes, or a function estimating them, asked only then).
    Every writing command goes through it (a batch's jobs through :func:`run_batch`)."""
    try:
        yield
    except OSError as exc:
        if no_space(exc) and not isinstance(exc, NoSpaceLeft):
            raise NoSpaceLeft(str(exc.filename or ""), out, needed() if callable(needed) else needed, again) from None
        if isinstance(exc, NoSpaceLeft) and exc.needed is None and needed is not None:
            exc.needed = needed() if callable(needed) else needed  # a batch that could not tell: the command can
        raise


def hold_folder(out: Path, what: str, error: type[Exception]) -> FolderLock:
    """Take ``out``'s writer lock, or raise ``error`` naming why not (busy, not a folder, not writable)."""
    if out.exists() and not out.is_dir():
        raise error(f"--out {out}: exists and is not a folder")
    try:
        return FolderLock(out, what).acquire()
    except FolderBusy as exc:
        raise error(str(exc)) from None
    except OSError as exc:
        raise error(f"--out {out}: cannot write there ({exc.strerror or exc})") from None


def run_batch(out: Path, batch: Batch, *, resume: bool, budget: Budget | None = None,
              executor: str = "local", ray_address: str | None = None,
              on_pause: Callable[[float], None] | None = None) -> Any:
    """Lock ``out``, start, run the rounds and finalise ``batch``; what ``finalise`` returns (or
    ``start``, for a folder finished already). Raises ``backends.workers.Interrupted`` after
    Ctrl-C and ``batch.stopped()`` when its guard gives up; what finished is kept for a resume."""
    lock = hold_folder(out, batch.what, batch.error)
    try:
        with space_named(out, needed=getattr(batch, "space_needed", None)):  # a write of the parent's: as a job's
            finished = batch.start(resume)
            if finished is not None:
                return finished
            with batch.log():
                work = claim_work_folder() if batch.work_folder else None
                try:
                    _rounds(out, batch, work, budget or Budget(), executor, ray_address, on_pause)
                finally:
                    if work is not None:
                        release_work_folder(work)
            return batch.finalise()
    finally:
        lock.release()


def _rounds(out: Path, batch: Batch, work: Path | None, budget: Budget, executor: str, ray_address: str | None,
            on_pause: Callable[[float], None] | None) -> None:
    guard = batch.guard
    full: list[JobFailure] = []  # jobs that found no space to write: none is an outcome, all run again on resume

    def failed(item: Any, failure: JobFailure) -> None:
        if failure.kind == NO_SPACE:
            full.append(failure)
        else:
            batch.record(batch.failed(item, failure))

    def stop() -> bool:
        return bool(full) or (guard is not None and guard.tripped())

    while (round_ := batch.next_round(str(work) if work is not None else None)) is not None:
        items = round_.items
        run_jobs(round_.run, items, workers=round_.workers, budget=budget,
                 on_result=lambda at, outcome: batch.record(outcome),
                 on_failure=cast("Callable[[int, JobFailure], None]",
                                 lambda at, failure, items=items: failed(items[at], failure)),
                 group=round_.group, stop=stop, wanted=round_.wanted,
                 executor=executor, ray_address=ray_address, spread=round_.spread)
        if full:
            needed = getattr(batch, "space_needed", None)
            raise NoSpaceLeft(full[0].detail, out, needed() if needed is not None else None)
        if guard is not None and guard.tripped():
            if not guard.recovered(on_pause):
                raise batch.stopped()
            batch.retry()


# -- the folder's files ------------------------------------------------------------------------

class ResultLog:
    """An append-only JSON-lines log of finished items (``.progress.jsonl``), read back by a resume.

    ``start``, when given, first replaces the file whole (synced, then renamed) with those lines
    (written as they come: an iterator is never held whole); else lines are appended to what is
    there. ``sync``: each append is synced to disk (an eval run's rows cost minutes each), else only
    flushed (a kill of the process loses nothing)."""

    def __init__(self, path: Path, *, start: Iterable[Any] | None = None, sync: bool = False,
                 ensure_ascii: bool = True) -> None:
        self.path, self.sync, self.ensure_ascii = path, sync, ensure_ascii
        if start is not None:
            write_synced(path, (self._encode((line,)) for line in start))
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        else:
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def _encode(self, lines: Iterable[Any]) -> bytes:
        return "".join(json.dumps(line, ensure_ascii=self.ensure_ascii) + "\n" for line in lines).encode("utf-8")

    def write(self, lines: Iterable[Any]) -> None:
        _write_bytes(self.fd, self._encode(lines))
        if self.sync:
            os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


LINE_PIECE = 1 << 20


def iter_lines(path: Path, label: str | None = None, *, max_line: int) -> Iterator[bytes | None]:
    """The lines of a log or a JSON-lines file, read a piece at a time (the file is opened without
    following a link and refused unless it is a regular file: ``UntrustedInputError``), each
    without its newline; only ``\\n`` ends a line (JSON text never holds a raw one). A line longer
    than ``max_line`` bytes is given as None, never held; the last line, when no newline ends it
    (a write cut short), is given as it is."""
    fd, _ = open_regular(path, printable(label if label is not None else path))
    try:
        pending: list[bytes] = []
        held = 0
        over = False
        while piece := os.read(fd, LINE_PIECE):
            start = 0
            while (end := piece.find(b"\n", start)) >= 0:
                if over or held + end - start > max_line:
                    yield None
                else:
                    yield b"".join((*pending, piece[start:end]))
                pending, held, over = [], 0, False
                start = end + 1
            if start < len(piece) and not over:
                held += len(piece) - start
                if held > max_line:
                    pending, over = [], True
                else:
                    pending.append(piece[start:])
        if over:
            yield None
        elif pending:
            yield b"".join(pending)
    finally:
        os.close(fd)


def read_lines(path: Path, max_bytes: int, label: str | None = None) -> list[str] | None:
    """The lines of a log a resume reads back; None when it is absent, not a regular file or too
    large (then what it holds is redone). A line cut short by a kill is the caller's to skip."""
    try:
        return read_file(path, label, max_bytes=max_bytes).decode("utf-8", "replace").splitlines()
    except UntrustedInputError:
        return None


def json_line(line: str) -> Any:
    """One log line, or None for a line cut short by an interruption."""
    try:
        return json.loads(line)
    except ValueError:
        return None


def write_synced(target: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or pieces of them written as they come) to ``target`` through a
    temporary name, synced before and after the rename, so that a kill (or a power cut) leaves the
    old file or the new one."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            write_all(fd, [data] if isinstance(data, bytes) else data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:  # a full disk or an interrupt: no temporary copy is left behind
        tmp.unlink(missing_ok=True)
        raise
    sync_folder(target.parent)


def write_all(fd: int, pieces: Iterable[bytes], buffer: int = LINE_PIECE) -> None:
    """Write ``pieces`` to ``fd`` in writes of about ``buffer`` bytes."""
    held: list[bytes] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size >= buffer:
            _write_bytes(fd, b"".join(held))
            held, size = [], 0
    if held:
        _write_bytes(fd, b"".join(held))


def _write_bytes(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def finish_folder(out: Path, files: Iterable[tuple[str, bytes]], state: tuple[str, bytes],
                  leftovers: Iterable[str] = (), *, sync_state: bool = False) -> None:
    """Finalise a batch's folder: each file written atomically, in order, then the metadata
    ``state`` (last: until then the folder says the run is still running; ``sync_state``: synced),
    then the work files ``leftovers`` removed (folders or files, relative to ``out``)."""
    for name, data in files:
        atomic_write(out / name, data)
    (write_synced if sync_state else atomic_write)(out / state[0], state[1])
    for name in leftovers:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
