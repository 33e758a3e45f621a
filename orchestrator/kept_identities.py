"""The identities of the tasks a build keeps for good, passed from its parent to its workers.

A task that repeats a kept one is dropped whatever else holds of it (``verifier.duplicates``), and
its identity (``verifier.duplicates.identity_keys`` and the words of its description) is known once
its draft is. A worker that knows the kept tasks' identities drops a repeat there instead of writing
its chat and running its gates, most of an attempt's cost: a large build repeats more and more
(a family that makes narrow kinds of task is used up), and each repeat was made in full.

The parent appends, in index order, the identity of each kept task below its settled prefix (every
attempt below has its outcome or never will, so none that comes later can change that the task is
kept) to one file under the build's work folder; a worker reads what was added since it last looked. What a
worker can tell from it the parent would tell too, so the bytes a build writes do not depend on
when (or whether) a worker found a repeat. With ``--executor ray`` a worker may run on a machine
that does not see the file: the parent also adds each line to a Ray actor (:class:`Holder`, named
after the build's work folder), which the workers ask instead.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.batch import write_all
from verifier.duplicates import FirstOfEach

NAME = "kept-identities.jsonl"
_HEAD = len(b'{"run": ""}\n') + 32  # the first line names the run that wrote the file (32 hex digits)
MAX_BYTES = 1 << 30  # about 2 KB a kept task: far past any build; past it a worker stops looking
PIECE = 1 << 22  # bytes read at once
HOLDER_SECONDS = 60.0  # the longest the parent waits on the Ray holder for one piece


class KeptIdentities:
    """The parent's side: the file, written afresh for each run of a build, its first line naming
    the run (a worker that read another run's file reads this one from its start: a truncated file
    may keep its inode), then one line per kept task, each with one ``write``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / NAME
        self._ray_name: str | None = None  # the Ray actor that holds a copy (``copy_to_ray``)
        self._holder: Any = None
        self._session: Any = None  # the Ray instance and job the holder lives in (a local Ray ends with each round)
        self._sent = 0  # bytes of the file the holder has
        self._full = False  # the holder took no more (its bound)
        self._stale = False  # a call to the holder failed: what it holds is asked again
        self._gave_up: Any = None  # the Ray instance whose holder failed twice: not asked again
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                           | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)  # a FIFO there: no wait
        st = os.fstat(self._fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # emptied below: never another name's file
            os.close(self._fd)
            raise OSError(f"{self.path}: not a regular file of its own")
        try:
            os.ftruncate(self._fd, 0)
            head = (json.dumps({"run": os.urandom(16).hex()}) + "\n").encode("ascii")
            write_all(self._fd, [head])
        except BaseException:
            self.close()
            raise
        self.settled = 0  # the attempts below it have their outcomes (or never will), and those kept were written
        self._written = len(head)  # bytes of the file written
        self._taken: Counter[int] = Counter()  # per app count, the kept tasks below ``settled``

    def settle(self, done: dict[int, dict[str, Any]], kept: Any, error: str, strata: Any = None,
               idle: Any = None, limit: int = 0) -> None:
        """Write the kept ones among the attempts whose outcomes now make a prefix: ``kept(index)``
        says whether an accepted attempt is kept (the first of its identity, within its app count's
        quota: ``verifier.duplicates.FirstOfEach``); an outcome with status
        ``error`` may be run again, so the prefix stops there, as at an attempt with no outcome (one
        still running may yet come first). With ``strata`` (``count_of`` and ``quota``, as
        ``orchestrator.planner.Strata``) and ``idle(index)`` (no worker holds the attempt), an
        attempt below ``limit`` (the attempts a build may use) with no outcome that is idle, of an
        app count whose quota the prefix holds already, is passed over: it never runs (its quota,
        filled for good below it, never reopens, and the build hands out no attempt past a filled
        quota), so it can displace no task written here. Else, once a quota filled, the workers
        would learn of no more kept tasks."""
        lines: list[bytes] = []
        while True:
            item = done.get(self.settled)
            if item is None:
                if not (self.settled < limit and strata is not None and idle is not None
                        and self._filled(strata, self.settled) and idle(self.settled)):
                    break
            elif item["status"] == error:
                break
            elif item["status"] == "accepted" and kept(self.settled):
                line = json.dumps([self.settled, list(item.get("keys") or []), list(item.get("words") or [])])
                lines.append((line + "\n").encode("utf-8"))
                if strata is not None:
                    self._taken[strata.count_of(self.settled)] += 1
            self.settled += 1
        if lines:  # whole lines only: a worker keeps a line's start until its end is written
            write_all(self._fd, lines)
            self._written += sum(len(line) for line in lines)
            self.sync()

    def copy_to_ray(self, name: str) -> None:
        """Keep a copy of the file in the Ray actor ``name`` too (:func:`ray_name`), for workers on
        machines that do not see the file (see :meth:`sync`)."""
        self._ray_name = name

    def sync(self) -> None:
        """Give the holder what it lacks of the file (all of it, to a holder just made: a local Ray
        instance starts and stops with each round), waiting until it has it, so that an attempt
        handed out after a line was written can read it, as from the file. Asked before each
        attempt is handed out and after each line written; costs a look at the session when
        nothing is new. After a failed call the holder is asked what it holds, once; after a second
        failure this Ray instance's holder is left be: a Ray in trouble leaves the workers knowing
        less and never ends or stalls the build (their verdicts change no byte)."""
        if self._ray_name is None or self._full:
            return
        import ray

        try:
            if not ray.is_initialized():
                return
            session = _ray_session(ray)
        except Exception:  # noqa: BLE001 - a Ray client whose connection dropped: the workers learn less
            return
        if session == self._gave_up or (self._holder is not None and session == self._session
                                        and self._sent == self._written):
            return
        for _ in range(2):
            try:
                if self._holder is None or session != self._session:
                    holder = ray.remote(num_cpus=0)(Holder)
                    self._holder = holder.options(name=self._ray_name, get_if_exists=True).remote(MAX_BYTES)
                    self._session, self._stale = session, True
                if self._stale:  # a new holder, or a call that timed out and may have landed: it says what it holds
                    self._sent = ray.get(self._holder.size.remote(), timeout=HOLDER_SECONDS)
                    self._stale = False
                    if self._sent > self._written:  # not this file's copy: nothing more is sent
                        self._full = True
                        return
                self._send(ray)
                return
            except ray.exceptions.RayActorError:  # it died (a node lost): a new one next
                self._holder = None
            except Exception:  # noqa: BLE001 - slow or unreachable: its handle is kept (dropping it may end it)
                self._stale = True
        self._gave_up = session  # no more waits on this Ray instance: the workers learn less, the bytes stay

    def _send(self, ray: Any) -> None:
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            while self._sent < self._written and (data := os.pread(fd, min(PIECE, self._written - self._sent),
                                                                     self._sent)):
                if not ray.get(self._holder.add.remote(data), timeout=HOLDER_SECONDS):
                    self._full = True  # past its bound: a whole prefix stays, nothing after a gap
                    return
                self._sent += len(data)
        finally:
            os.close(fd)

    def _filled(self, strata: Any, index: int) -> bool:
        """The prefix holds attempt ``index``'s app count's quota of kept tasks already (for good)."""
        count = strata.count_of(index)
        return self._taken[count] >= strata.quota.get(count, 0)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._holder is not None:  # no worker asks it after the rounds: its copy is let go
            import ray

            try:
                if ray.is_initialized() and _ray_session(ray) == self._session:
                    ray.kill(self._holder)
            except Exception:  # noqa: BLE001 - gone already, or a Ray client whose connection dropped
                pass
            self._holder = None


def _ray_session(ray: Any) -> tuple[str, str, str]:
    """The Ray instance and job this process is in (a local instance's job id alone recurs)."""
    context = ray.get_runtime_context()
    return context.gcs_address, context.get_node_id(), context.get_job_id()


def ray_name(work: str) -> str:
    """The name of the Ray actor that holds the file of the build whose work folder is ``work``
    (one per run of a build: a work folder is the run's own)."""
    return f"homer-kept-identities-{Path(work).name}"


class Holder:
    """The Ray actor's side: a copy of the parent's file, added to by the parent, read by workers
    in pieces from where each got to. Past ``limit`` bytes nothing more is taken (a worker learns
    no more, as of a file past its bound), and the parent sends no more: what it holds stays a
    whole prefix of the file."""

    def __init__(self, limit: int) -> None:
        self.data = bytearray()
        self.limit = limit

    def add(self, data: bytes) -> bool:
        """Whether ``data`` was taken."""
        if len(self.data) + len(data) > self.limit:
            return False
        self.data += data
        return True

    def size(self) -> int:
        return len(self.data)

    def since(self, offset: int) -> tuple[bytes, int, bytes]:
        """The first line, the bytes held, and up to ``PIECE`` of them from ``offset``."""
        return bytes(self.data[:_HEAD]), len(self.data), bytes(self.data[offset:offset + PIECE])


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
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO there: no wait
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        read = _reading(str(path), os.pread(fd, _HEAD, 0), st.st_size)
        while read is not None and read.offset < st.st_size:  # in pieces: a worker that starts late reads a long file
            data = os.pread(fd, min(st.st_size - read.offset, PIECE), read.offset)
            if not data or not _take(read, data):
                break
    finally:
        os.close(fd)
    return _answer(read, index, keys, words)


_HOLDER: tuple[str, Any] | None = None  # the Ray actor a worker asks, by name
ASK_SECONDS = 30.0  # a holder that does not answer in time tells nothing


def repeat_on_ray(name: str, index: int, keys: list[str], words: list[str]) -> int | None:
    """:func:`repeat_of`, asking the Ray actor ``name`` (:class:`Holder`) instead of a file."""
    global _HOLDER
    import ray

    if not ray.is_initialized():  # not a Ray worker (get_actor would start a Ray instance)
        return None
    try:
        if _HOLDER is None or _HOLDER[0] != name:
            _HOLDER = (name, ray.get_actor(name))
        holder = _HOLDER[1]

        def ask(offset: int) -> tuple[bytes, int, bytes]:
            return ray.get(holder.since.remote(offset), timeout=ASK_SECONDS)

        offset = _READ.offset if _READ is not None and _READ.path == name else _HEAD
        head, size, data = ask(offset)
        read = _reading(name, head, size)
        while read is not None and read.offset < size:
            if read.offset != offset:  # the next piece (or a new run's copy, from its start)
                offset = read.offset
                head, size, data = ask(offset)
            if not data or not _take(read, data):
                break
    except Exception:  # noqa: BLE001 - no holder yet (no task kept so far), one gone, a cluster in trouble
        _HOLDER = None
        return None
    return _answer(read, index, keys, words)


def _reading(key: str, head: bytes, size: int) -> _Read | None:
    """What this worker has read of the parent's file (or copy) ``key``: afresh for another run's;
    None for one that is not a parent's, not written yet, or found broken."""
    global _READ
    if len(head) < _HEAD or not head.startswith(b'{"run": "') or not head.endswith(b'"}\n'):
        return None  # not written yet, or not a parent's file
    read = _READ
    if read is None or read.path != key or read.head != head or size < read.offset:
        read = _READ = _Read(key, head)
    return None if read.broken else read


def _answer(read: _Read | None, index: int, keys: list[str], words: list[str]) -> int | None:
    if read is None or read.broken:
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
