"""The identities of the tasks a build keeps for good, passed from its parent to its workers.

A task that repeats a kept one is dropped whatever else holds of it (``verifier.duplicates``), and
its identity (``verifier.duplicates.identity_keys`` and the words of its description) is known once
its draft is. A worker that knows the kept tasks' identities drops a repeat there instead of writing
its chat and running its gates, most of an attempt's cost: a large build repeats more and more
(a family that makes narrow kinds of task is used up), and each repeat was made in full.

The parent appends, in index order, the identity of each kept task below its settled prefix (every
attempt below has its outcome, so none that comes later can change that the task is kept) to one
file under the build's work folder; a worker reads what was added since it last looked. What a
worker can tell from it the parent would tell too, so the bytes a build writes do not depend on
when (or whether: a Ray node on another machine sees no such file) a worker found a repeat.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.batch import write_all
from verifier.duplicates import FirstOfEach

NAME = "kept-identities.jsonl"
_HEAD = len(b'{"run": ""}\n') + 32  # the first line names the run that wrote the file (32 hex digits)
MAX_BYTES = 1 << 30  # about 2 KB a kept task: far past any build; past it a worker stops looking
PIECE = 1 << 22  # bytes read at once


class KeptIdentities:
    """The parent's side: the file, written afresh for each run of a build, its first line naming
    the run (a worker that read another run's file reads this one from its start: a truncated file
    may keep its inode), then one line per kept task, each with one ``write``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / NAME
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                           | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)  # a FIFO there: no wait
        st = os.fstat(self._fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # emptied below: never another name's file
            os.close(self._fd)
            raise OSError(f"{self.path}: not a regular file of its own")
        try:
            os.ftruncate(self._fd, 0)
            write_all(self._fd, [(json.dumps({"run": os.urandom(16).hex()}) + "\n").encode("ascii")])
        except BaseException:
            self.close()
            raise
        self.settled = 0  # the attempts below it have their outcomes, and those kept were written

    def settle(self, done: dict[int, dict[str, Any]], kept: Any, error: str) -> None:
        """Write the kept ones among the attempts whose outcomes now make a prefix: ``kept(index)``
        says whether an accepted attempt is the first of its identity; an outcome with status
        ``error`` may be run again, so the prefix stops there (as at an attempt with no outcome:
        one still running may yet come first)."""
        lines: list[bytes] = []
        while (item := done.get(self.settled)) is not None and item["status"] != error:
            if item["status"] == "accepted" and kept(self.settled):
                line = json.dumps([self.settled, list(item.get("keys") or []), list(item.get("words") or [])])
                lines.append((line + "\n").encode("utf-8"))
            self.settled += 1
        if lines:  # whole lines only: a worker keeps a line's start until its end is written
            write_all(self._fd, lines)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@dataclass
class _Read:
    """What a worker has read of one file: where it is, and the kept identities so far."""

    path: str
    head: bytes  # the file's first line: a new run's file is read from its start
    offset: int = _HEAD
    rest: bytes = b""  # the start of a line whose end is not written yet
    firsts: FirstOfEach = field(default_factory=lambda: FirstOfEach(in_order=True))  # the parent writes in order
    broken: bool = False  # a line that is not one of ours: the file is not looked at again


_READ: _Read | None = None  # one build runs in a process at a time


def repeat_of(path: Path, index: int, keys: list[str], words: list[str]) -> int | None:
    """The kept task attempt ``index`` repeats, as far as the file at ``path`` tells (None: no
    such file, or none found there)."""
    global _READ
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO there: no wait
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        head = os.pread(fd, _HEAD, 0)
        if len(head) < _HEAD or not head.startswith(b'{"run": "') or not head.endswith(b'"}\n'):
            return None  # not written yet, or not a parent's file
        read = _READ
        if read is None or read.path != str(path) or read.head != head or st.st_size < read.offset:
            read = _READ = _Read(str(path), head)
        if read.broken:
            return None
        while read.offset < st.st_size:  # in pieces: a worker that starts late reads a long file
            data = os.pread(fd, min(st.st_size - read.offset, PIECE), read.offset)
            if not data or not _take(read, data):
                break
    finally:
        os.close(fd)
    if read.broken:
        return None
    return read.firsts.repeat_of(index, keys, words)


def _take(read: _Read, data: bytes) -> bool:
    """Put the whole lines of ``data`` (read at ``read.offset``) in; False when one is not ours."""
    read.offset += len(data)
    *lines, read.rest = (read.rest + data).split(b"\n")
    for line in lines:
        item = _line(line)
        if item is not None:
            try:
                read.firsts.add(*item)
                continue
            except ValueError:  # a line out of index order
                pass
        read.broken = True  # not a line of ours: the file is not looked at again
        return False
    return True


def _line(line: bytes) -> tuple[int, list[str], list[str]] | None:
    try:
        item = json.loads(line)
    except ValueError:
        return None
    if (not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], int)
            or not all(isinstance(part, list) and all(isinstance(x, str) for x in part) for part in item[1:])):
        return None
    return item[0], item[1], [sys.intern(word) for word in item[2]]  # a word held once, however many say it
