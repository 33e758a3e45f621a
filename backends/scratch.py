"""Where a batch keeps its short-lived files: the worlds it writes and the copies its gates replay in.

A build creates, replaces and deletes hundreds of small files per task in those copies; on a disk
file system that churn (journal commits, discards) costs more than the work itself. So they go to
a memory file system when the machine has one with room (``/dev/shm`` holding at least
``MIN_FREE_BYTES`` free), else to the temp folder; ``HOMER_SCRATCH`` names another place. Only
short-lived files go there: every task is still written and published under the output folder.

Each work folder holds the id of the process that owns it (and its PID namespace); one whose owner
is gone (a batch that was killed) is removed when the next batch starts, so an interrupted run does
not leave its files in memory for good. A folder of another PID namespace (another container sharing
the memory file system) is left alone: its owner's id means nothing here. Nor is one a live process
still works in: every process that works in a node's folder (``node_work_folder``) holds a shared
``flock`` on its ``IN_USE`` file, and a sweep removes a folder only under an exclusive one (a Ray
worker that made the folder may be gone while the batch's later workers still use it).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

ENV = "HOMER_SCRATCH"
SHM = Path("/dev/shm")
MIN_FREE_BYTES = 1 << 30
PREFIX = "homer-work-"
OWNER = "owner.pid"
IN_USE = ".in-use"  # locked shared by each process working in the folder, exclusively by a sweep
_HELD: dict[str, int] = {}  # the node folder this process works in, and its in-use file's descriptor


def scratch_root() -> Path:
    """``$HOMER_SCRATCH`` when set, else ``/dev/shm`` when it is a writable folder with room, else
    the temp folder."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    try:
        st = os.statvfs(SHM)
        if SHM.is_dir() and os.access(SHM, os.W_OK | os.X_OK) and st.f_bavail * st.f_frsize >= MIN_FREE_BYTES:
            return SHM
    except OSError:
        pass
    return Path(tempfile.gettempdir())


def claim_work_folder() -> Path:
    """A new work folder of this process (private, under a random name); work folders of batches
    whose process is gone are removed first."""
    root = scratch_root()
    root.mkdir(parents=True, exist_ok=True)
    _sweep(root)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root))
    (folder / OWNER).write_text(f"{os.getpid()} {_pid_namespace()}", encoding="utf-8")
    return folder


def node_work_folder(batch_work: str) -> Path:
    """The work folder, on this machine, of a batch whose driver runs elsewhere (a Ray node's
    jobs): one per machine and batch, named after the driver's own (``batch_work``), shared by the
    machine's workers so that each world is written once per machine. It names the worker process
    that made it, and every process working in it holds it (``IN_USE``): the next batch to make one
    here (or to claim one) after they all ended removes it, so a node that never runs a driver keeps
    no more than its last batch's. A folder of that name that is not this user's own plain folder is
    refused (``PermissionError``)."""
    root = scratch_root()
    folder = root / f"{Path(batch_work).name}-node"
    if not folder.name.startswith(PREFIX):
        raise ValueError(f"not a batch's work folder: {batch_work}")
    for _ in range(3):  # a sweep that removed it between the look and the hold: made again
        if not os.path.lexists(folder):
            root.mkdir(parents=True, exist_ok=True)
            _sweep(root)
            tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
            (tmp / OWNER).write_text(f"{os.getpid()} {_pid_namespace()}", encoding="utf-8")
            try:
                os.rename(tmp, folder)  # whole, with its owner: a sweep never sees it without one
            except OSError:  # another worker of this machine was first
                shutil.rmtree(tmp, ignore_errors=True)
        try:
            st = folder.lstat()
        except FileNotFoundError:  # swept just now
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise PermissionError(f"{folder}: not a folder of this user's")
        if _hold(folder):
            break
    return folder


def _hold(folder: Path) -> bool:
    """Hold ``folder`` for this process (a shared lock on its in-use file, kept until the process
    ends or works in another batch's folder); False when a sweep took it meanwhile (it moves the
    folder away before removing it, so the file held must still be the one at the folder's name)."""
    key = str(folder)
    if key in _HELD:
        return True
    for other in list(_HELD):  # a process works for one batch at a time: the last one's is let go
        os.close(_HELD.pop(other))
    try:
        fd = _open_in_use(folder)
    except OSError:  # gone (swept), a link or a full file system: not held
        return False
    try:
        held = os.fstat(fd)
        if not stat.S_ISREG(held.st_mode):
            raise OSError("not a regular file")
        fcntl.flock(fd, fcntl.LOCK_SH)  # a sweep holds it exclusively only while it moves the folder away
        now = os.lstat(folder / IN_USE)
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            raise OSError("swept")
    except OSError:
        os.close(fd)
        return False
    _HELD[key] = fd
    return True


def _open_in_use(folder: Path) -> int:
    """The folder's in-use file, made if missing; never through a link, never waiting on a FIFO."""
    return os.open(folder / IN_USE, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)


def release_work_folder(folder: Path) -> None:
    """Remove a batch's work folder, and the one its jobs made on this machine (``node_work_folder``)."""
    shutil.rmtree(folder, ignore_errors=True)
    node = folder.parent / f"{folder.name}-node"
    if node.is_dir() and not node.is_symlink():
        shutil.rmtree(node, ignore_errors=True)


def _sweep(root: Path) -> None:
    try:
        entries = [p for p in root.iterdir() if p.name.startswith(PREFIX)]
    except OSError:
        return
    for folder in entries:
        try:
            st = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            continue
        try:
            owner = (folder / OWNER).read_text(encoding="utf-8").split()
            pid, namespace = int(owner[0]), (owner[1] if len(owner) > 1 else "")
        except (OSError, ValueError, IndexError):
            pid, namespace = 0, _pid_namespace()
        if namespace != _pid_namespace():
            continue
        if pid <= 0 or not _alive(pid):
            _remove_unheld(folder)


def _remove_unheld(folder: Path) -> None:
    """Remove ``folder`` unless a live process holds it (``_hold``): under an exclusive lock on its
    in-use file it is moved to a name of its own (a process that looks it up then finds none and
    makes a new one; one that took the old file finds it is not the one at the name), then removed."""
    try:
        fd = _open_in_use(folder)
    except OSError:  # gone already, or a link planted there: left alone
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live process works in it
            return
        doomed = folder.parent / f"{PREFIX}swept-{os.urandom(8).hex()}"  # ownerless: a later sweep ends it
        try:
            os.rename(folder, doomed)
        except OSError:
            return
    finally:
        os.close(fd)
    shutil.rmtree(doomed, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # somebody else's process: alive
    return True


def _pid_namespace() -> str:
    """This process's PID namespace (``pid:[4026531836]`` on Linux; empty where unknown)."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
