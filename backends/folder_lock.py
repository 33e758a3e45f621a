"""One writer per output folder: an exclusive lock held while a build, regeneration or evaluation
writes it.

Two runs writing one dataset interleave their task folders and index lines and each believes
it finished. The lock is ``flock`` on ``<folder>/.lock`` (released by the kernel when the
process dies, so a killed run never leaves a stale lock); the file holds the owner's pid for the
error message and is removed on release. A waiting writer that finds the file replaced under
it (removed by the previous owner) locks the new one instead.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

LOCK_NAME = ".lock"


class FolderBusy(Exception):
    """Another process holds the folder's lock."""


class FolderLock:
    """``with FolderLock(folder, "homer build"):`` -- raises :class:`FolderBusy` at once when taken."""

    def __init__(self, folder: Path, what: str = "homer") -> None:
        self.path = Path(folder) / LOCK_NAME
        self.what = what
        self.fd: int | None = None

    def acquire(self) -> "FolderLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _read_owner(fd)
                os.close(fd)
                raise FolderBusy(f"{self.path.parent}: another process{owner} is writing this folder; "
                                 "wait for it to finish or stop it first") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path, follow_symlinks=False).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous owner removed the file between our open and lock: retry
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {self.what}\n".encode())
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def writer_alive(folder: Path) -> bool:
    """Whether the process named in ``folder``'s lock file still runs: a reader's question, answered
    without taking the lock (a probe could make a starting writer see the folder busy)."""
    try:  # a dataset folder is anyone's: the lock file may be a link, a pipe or huge
        fd = os.open(Path(folder) / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        pid, _ = _owner(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    if not pid.isdigit() or int(pid) <= 0:
        return False
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _owner(fd: int) -> tuple[str, str]:
    """(pid, command) as the lock's holder wrote them in the file."""
    pid, _, what = os.pread(fd, 200, 0).decode("utf-8", "replace").strip().partition(" ")
    return pid, what


def _read_owner(fd: int) -> str:
    try:
        pid, what = _owner(fd)
    except OSError:
        return ""
    return f" ({what or 'homer'}, pid {pid})" if pid.isdigit() else ""
