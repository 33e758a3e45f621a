"""The hard links a dataset's tasks share, counted so a reader can tell them from links to outside.

A build gives the twenty tasks of a world the same initial office: it writes the world's files
once in the dataset and hard-links them into each task's ``testbed/``. Creating a file costs a
disk file system far more than linking one (about 0.6 against 0.07 ms of CPU here: 30 ms of a
task's 50 files), and the dataset holds one copy of each world instead of twenty.

A reader still refuses a file hard-linked from outside (:func:`office_env.untrusted.scan_tree`):
such a link could show it a file it was never given. A file with more links than its own tree
holds is accepted only when the other links are all found again: :func:`shared_names` counts, for
a tree that is a task's folder, ``testbed/`` or ``reference/`` in a dataset (``<dataset>/tasks/
<id>[/testbed|/reference]``), the names each multiply-linked file has in the trees of the tasks
``index.jsonl`` lists with the same ``world`` (the task's siblings). A file with any name outside
them has more links than that count, and stays refused. The index only says where to look: a
line that lies names the wrong siblings, whose trees then hold fewer names, never more; a task
the index does not list, or a dataset without one, has no siblings (every extra link refused).

Counts are kept per process: the index's while its size and time stay, each world's for the
process's life (a reader re-counts a world only in a new process: changing a dataset's links while
a command reads it is for someone who can write into it, who can change its files anyway)."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

from office_env.limits import MAX_NAME_CHARS, MAX_TREE_DEPTH, MAX_TREE_FILES

TASKS = "tasks"  # DESIGN.md: <dataset>/tasks/<id>/{task.json, testbed/, reference/}
INDEX = "index.jsonl"
TREES = ("testbed", "reference")
WORLD = "world"  # the index key naming the world whose files a task shares
MAX_INDEX_BYTES = 256 << 20  # a 100,000-task index is about 25 MB
MAX_SIBLINGS = 1_000  # tasks one world may share its files with (a build's: 20)

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

Census = Mapping[tuple[int, int], int]


def shared_names(root: str | os.PathLike[str]) -> Census:
    """For the tree at ``root``, the names each multiply-linked file has in its dataset's sibling
    tasks (``(st_dev, st_ino)`` to a count, the tree's own names included); empty when ``root`` is
    no task's tree or the task has no siblings. See the module's docstring."""
    parts = os.path.abspath(os.fspath(root)).split(os.sep)
    if parts and parts[-1] in TREES:
        parts = parts[:-1]
    if len(parts) < 3 or parts[-2] != TASKS:
        return {}
    dataset, task = os.sep.join(parts[:-2]) or os.sep, parts[-1]
    index = os.path.join(dataset, INDEX)
    try:
        st = os.lstat(index)
    except OSError:
        return {}
    siblings = _siblings(index, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns).get(task)
    return _census(os.path.join(dataset, TASKS), siblings) if siblings else {}


@lru_cache(maxsize=4)
def _siblings(index: str, dev: int, ino: int, size: int, mtime_ns: int) -> dict[str, tuple[str, ...]]:
    """Each task id the index gives a world to, with the ids of that world (itself included, at
    most ``MAX_SIBLINGS``, sorted)."""
    by_world: dict[str, list[str]] = {}
    for task, world in _worlds(index).items():
        by_world.setdefault(world, []).append(task)
    groups = {world: tuple(sorted(tasks)[:MAX_SIBLINGS]) for world, tasks in by_world.items()}
    return {task: groups[world] for world, tasks in by_world.items() for task in tasks}


def _worlds(index: str) -> dict[str, str]:
    """Task id to world, from the index's lines that name both (anything else is passed over); the
    index is opened without following a link, and only a regular file within its limit is read."""
    try:
        fd = os.open(index, _OPEN_FLAGS)
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_INDEX_BYTES:
            return {}
        with os.fdopen(os.dup(fd), "rb") as handle:
            text = handle.read(MAX_INDEX_BYTES + 1)
    finally:
        os.close(fd)
    worlds = {}
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        task, world = item.get("id"), item.get(WORLD)
        if isinstance(task, str) and _plain_name(task) and isinstance(world, (str, int)) \
                and not isinstance(world, bool):
            worlds[task] = str(world)
    return worlds


def _plain_name(name: str) -> bool:
    """One path component: never a way out of ``tasks/`` (the census walks only below it)."""
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\0" not in name \
        and len(name) <= MAX_NAME_CHARS


def _real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


@lru_cache(maxsize=8)
def _census(tasks: str, siblings: tuple[str, ...]) -> Census:
    """The names of each multiply-linked file in the siblings' trees. No link is followed: a
    sibling, tree or folder that is a symlink holds none; at most ``MAX_TREE_FILES`` entries and
    ``MAX_TREE_DEPTH`` levels are looked at per tree, as a reader looks at one."""
    if not _real_dir(tasks):
        return {}
    names: Counter[tuple[int, int]] = Counter()
    for task in siblings:
        if not _real_dir(os.path.join(tasks, task)):
            continue
        for tree in TREES:
            root = os.path.join(tasks, task, tree)
            if _real_dir(root):
                _count_names(root, names)
    return dict(names)


def _count_names(root: str, names: Counter[tuple[int, int]]) -> None:
    budget, stack = MAX_TREE_FILES, [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            if budget < 0:
                return
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and depth < MAX_TREE_DEPTH:
                stack.append((entry.path, depth + 1))
            elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                names[(st.st_dev, st.st_ino)] += 1
