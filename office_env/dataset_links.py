"""The hard links a dataset's tasks share, counted so a reader can tell them from links to outside.

A build gives the tasks of a world the same initial office: it writes the world's files once in
the dataset and hard-links them into each task's ``testbed/``. Creating a file costs a disk file
system far more than linking one (about 0.6 against 0.05 ms of CPU here: 30 ms of a task's 50
files), and the dataset holds one copy of each world instead of twenty.

A reader still refuses a file hard-linked from outside (:func:`office_env.untrusted.scan_tree`):
such a link could show it a file it was never given. A file with more links than its own tree
holds is accepted only when every other link is found again, by :func:`sibling_names`, for a tree
that is a task's folder, ``testbed/`` or ``reference/`` in a dataset (``<dataset>/tasks/<id>``
and below): at the same path in the trees of the tasks ``index.jsonl`` lists in the same ``world``
(the task's siblings). A file with a name anywhere else has more links than are found, and stays
refused.

The index only says where to look, and lies cannot make more names be found than exist there:

- a sibling is a plain id (a task id's own pattern: ASCII letters, digits, ``.``, ``_``, ``-``),
  opened below ``tasks/`` folder by folder without following a link;
- a name counts only when the file it names has the link count and change time the scan saw: a
  link made, removed or moved since (which changes the change time) makes the count fall short,
  and the file is refused when it is opened (``office_env.untrusted``);
- a folder holds at most one counted name of a file, told apart by its device and inode: an id
  listed twice, two spellings of one folder or one name on a case-blind file system, or a folder
  mounted twice count once;
- every name is looked up twice, and counts only when both looks find it in the same folder: on a
  file system whose change times are coarse, a name moved between siblings within one tick is
  counted once, unless it is moved back and forth in step with the reader's lookups;
- a file not owned by the owner of ``tasks/`` (someone else's, linked in) counts no name;
- the index is read to its first line that is not a task's, at most ``MAX_INDEX_BYTES`` and
  ``MAX_INDEX_LINES``, and a world has at most ``MAX_SIBLINGS`` tasks.

Between scans a process remembers the index's lines (by its size and time) and the files it found
wholly inside a world (by device, inode, link count and change time): the other tasks of the world
then cost no lookups. Counts that fell short are never kept. While the link count and change time
stay, the file has the same names it had when each was found in the dataset (moving a folder that
holds one changes neither, but moves none of the file's names to another file): it is the
dataset's own file, not someone's elsewhere. A link made, removed or renamed, or the inode reused
by another file, changes one of them, and it is looked up again.

A task the index does not list, a world of one, or a dataset without an index has no siblings:
every extra link is refused, as before datasets shared their offices.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from functools import lru_cache

from office_env.formats.bounded import FOLDER_FLAGS, READ_FLAGS

TASKS = "tasks"  # DESIGN.md: <dataset>/tasks/<id>/{task.json, testbed/, reference/}
INDEX = "index.jsonl"
TREES = ("testbed", "reference")
WORLD = "world"  # the index key naming the world whose files a task shares
MAX_INDEX_BYTES = 64 << 20  # a 100,000-task index is about 25 MB
MAX_INDEX_LINES = 200_000
MAX_INDEX_LINE = 64 << 10
MAX_SIBLINGS = 64  # tasks one world may share its files with (a build's: 20)

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # backends.task_record's id pattern

Inode = tuple[int, int]
Seen = tuple[int, int, int, int]  # a file as a scan saw it: device, inode, link count, change time (ns)
MAX_KNOWN = 200_000  # files a process remembers as wholly inside their world

_known: dict[Seen, None] = {}  # insertion-ordered: the oldest goes first


def sibling_names(root: str | os.PathLike[str], files: Iterable[tuple[tuple[str, ...], Seen]]) -> Mapping[Inode, int]:
    """For ``files`` of the tree at ``root`` (each its parts below ``root`` and how the scan saw
    it), how many directory entries at the same path in the trees of the task's siblings (itself
    included) are that file; empty when ``root`` is no task's tree or the task has no siblings.
    See the module's docstring."""
    where = _task_of(root)
    if where is None:
        return {}
    dataset, task, sub = where
    index = os.path.join(dataset, INDEX)
    try:
        st = os.lstat(index)
    except OSError:
        return {}
    siblings = _siblings(index, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns).get(task, ())
    if len(siblings) < 2:
        return {}
    counts: dict[Inode, int] = {}
    look: list[tuple[tuple[str, ...], Seen]] = []
    for parts, seen in files:
        if seen in _known:
            counts[seen[:2]] = seen[2]
        else:
            look.append((parts, seen))
    if not look:
        return counts
    try:
        tasks_fd = os.open(os.path.join(dataset, TASKS), FOLDER_FLAGS)
    except OSError:
        return counts
    try:
        owner = os.fstat(tasks_fd).st_uid
        found = _look(tasks_fd, siblings, sub, look, owner)
        again = _look(tasks_fd, siblings, sub, look, owner)  # what moved meanwhile is in one look only
    finally:
        os.close(tasks_fd)
    for _, seen in look:
        inode = seen[:2]
        counts[inode] = len(found.get(inode, set()) & again.get(inode, set()))
        if counts[inode] >= seen[2]:
            _known[seen] = None
            if len(_known) > MAX_KNOWN:
                del _known[next(iter(_known))]
    return counts


def _task_of(root: str | os.PathLike[str]) -> tuple[str, str, tuple[str, ...]] | None:
    """The dataset, task id and the tree's path below the task folder, when ``root`` is a task's
    folder or one of its trees (a path without ``..``)."""
    parts = os.path.abspath(os.fspath(root)).split(os.sep)
    if ".." in os.fspath(root).split(os.sep):
        return None
    if len(parts) >= 3 and parts[-2] == TASKS and _ID.fullmatch(parts[-1]):
        return os.sep.join(parts[:-2]) or os.sep, parts[-1], ()
    if len(parts) >= 4 and parts[-1] in TREES and parts[-3] == TASKS and _ID.fullmatch(parts[-2]):
        return os.sep.join(parts[:-3]) or os.sep, parts[-2], (parts[-1],)
    return None


def _look(tasks_fd: int, siblings: tuple[str, ...], sub: tuple[str, ...], files: list[tuple[tuple[str, ...], Seen]],
          owner: int) -> dict[Inode, set[Inode]]:
    """Per file, the folders (device and inode) holding it at its path in the siblings' trees,
    as the scan saw it: the same link count and change time (a link made, removed or moved since
    changes them), owned by the owner of ``tasks/``. One sibling at a time, its folders closed
    before the next."""
    found: dict[Inode, set[Inode]] = {seen[:2]: set() for _, seen in files}
    for task in siblings:
        folders: dict[tuple[str, ...], int | None] = {}
        held: dict[int, Inode] = {}
        try:
            for parts, seen in files:
                parent = _folder(tasks_fd, task, sub + parts[:-1], folders)
                if parent is None:
                    continue
                try:
                    st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino, st.st_nlink, st.st_ctime_ns) == seen \
                        and st.st_uid == owner:
                    if parent not in held:
                        held[parent] = _identity(parent)
                    found[seen[:2]].add(held[parent])  # one name per folder: a case-blind folder answers to two
        finally:
            for fd in folders.values():
                if fd is not None:
                    os.close(fd)
    return found


def _identity(fd: int) -> Inode:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _folder(tasks_fd: int, task: str, parts: tuple[str, ...], folders: dict[tuple[str, ...], int | None]) -> int | None:
    """The folder ``tasks/<task>/<parts>`` opened one name at a time without following a link
    (None when any step is missing or a link), kept open for the sibling's other files."""
    if parts in folders:
        return folders[parts]
    if parts:
        name, base = parts[-1], _folder(tasks_fd, task, parts[:-1], folders)
    else:
        name, base = task, tasks_fd
    fd = None
    if base is not None:
        try:
            fd = os.open(name, FOLDER_FLAGS, dir_fd=base)
        except OSError:
            fd = None
    folders[parts] = fd
    return fd


@lru_cache(maxsize=4)
def _siblings(index: str, dev: int, ino: int, size: int, mtime_ns: int) -> dict[str, tuple[str, ...]]:
    """Each task id the index gives a world to, with the ids of that world (itself included;
    none for a world past ``MAX_SIBLINGS``, whose tasks then share nothing a reader accepts)."""
    by_world: dict[str, set[str]] = {}
    for task, world in _worlds(index):
        by_world.setdefault(world, set()).add(task)
    return {task: tuple(sorted(tasks)) for tasks in by_world.values() if len(tasks) <= MAX_SIBLINGS for task in tasks}


def _worlds(index: str) -> list[tuple[str, str]]:
    """(task id, world) of the index's lines up to the first that is not a task's line with a
    plain id, or past the limits; the index is opened without following a link, and only a
    regular file is read."""
    try:
        fd = os.open(index, READ_FLAGS)
    except OSError:
        return []
    pairs: list[tuple[str, str]] = []
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return []
        read = 0
        while line := handle.readline(MAX_INDEX_LINE + 1):  # never more than a line's limit in memory
            read += len(line)
            if read > MAX_INDEX_BYTES or len(pairs) >= MAX_INDEX_LINES or len(line) > MAX_INDEX_LINE:
                break
            try:
                item = json.loads(line)
            except (ValueError, RecursionError):
                break
            if not isinstance(item, dict) or not isinstance(task := item.get("id"), str) \
                    or not _ID.fullmatch(task):
                break
            world = item.get(WORLD)
            if isinstance(world, str) and len(world) <= 64 or isinstance(world, int) and not isinstance(world, bool):
                pairs.append((task, str(world)))
    return pairs
