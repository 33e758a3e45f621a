"""Copy a testbed, replay a plan on the copy, score it: the one way every part of homer does it.

``replay_plan`` is one plan on a copy of its own (eval's reference runs, the SFT export, the
OfficeBench export's states); ``Replays`` is the many plans of one task (its gates), and a
``Replay`` is what either leaves: the workspace, every call's result, and ``score`` with the
checks the caller names.

Copies for ``Replays``: the gates replay up to a dozen plans per task (oracle, baseline, each
misreading and its hedge, each answer form, the paste), each on the initial testbed. Making and
deleting a hard-linked copy per replay (a scan of the testbed, a link per file, an unlink per file)
cost about as much as the replays' own writes. For a testbed this project wrote (``trusted``: a
build's world), ``Replays`` links one copy and, before each further replay, puts it back: every
office tool writes by rename and never edits a file in place, so a file still linked to its testbed
file (the same device and inode) holds the testbed's bytes; anything else (a file a tool wrote or
replaced, a folder it made, a temporary name) is removed and the testbed file linked again. Entries
are looked at with ``lstat`` and never followed; a link or special file is removed like any other
stranger. Should putting back fail, the copy is deleted and made again. An untrusted testbed (a
dataset's, a seed's) gets a fresh copy per replay, as before: its files are never linked.

A build's tasks share a world (twenty to a testbed), so with ``keep_in`` the copy outlives its
task: ``close`` keeps it (the latest ``MAX_KEPT_COPIES`` of a process, in ``keep_in``), and the
next ``Replays`` of the same testbed in the same process takes it and puts it back like any other
replay's, once the testbed is seen to be still the one copied (the same folder, files and inodes;
the walk that sees it may be the trace gate's of the same folder, handed over as ``scanned``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from office_env.evaluation import EvaluationReport, evaluate_criteria
from office_env.limits import MAX_FILE_BYTES, MAX_TREE_BYTES
from office_env.tools import ToolResult, default_registry
from office_env.untrusted import Tree, copy_tree, scan_tree
from office_env.workspace import Workspace

COPY_NAME = "replay"
Scorer = Callable[..., EvaluationReport]  # evaluate_criteria or evaluate_officebench (the same call)


@dataclass
class Replay:
    """What a plan left: the workspace (a copy, never the testbed) and each call's result."""

    workspace: Workspace
    results: list[ToolResult] = field(default_factory=list)

    def failed(self) -> tuple[int, ToolResult] | None:
        """The first call that failed (its index and result), or None."""
        return next(((i, r) for i, r in enumerate(self.results) if not r.ok), None)

    def score(self, criteria: list[dict[str, Any]], reference: Path | None = None, *,
              initial_dir: Path | None = None, day_first: bool | None = None,
              scorer: Scorer = evaluate_criteria) -> EvaluationReport:
        """The criteria on the state the plan left (``scorer``: homer's checks unless named)."""
        return scorer(self.workspace, criteria, reference, initial_dir=initial_dir, day_first=day_first)


def replay_plan(testbed: Path, plan: list[dict[str, Any]], now: datetime, work: Path, name: str = COPY_NAME, *,
                trusted: bool = False) -> Replay:
    """``plan`` run on a copy of ``testbed`` of its own, ``work/name`` (which must not exist). An
    untrusted testbed (a dataset's, a seed's) is opened as a stranger's tree and copied, never
    linked (``Workspace.copy_to``); ``trusted`` (a world this project wrote) may be hard-linked."""
    return Replays(testbed, now, work, trusted, reuse=False).replay(plan, name)


MAX_KEPT_COPIES = 4  # copies of testbeds a process keeps between tasks (see the module's docstring)


@dataclass
class _Copy:
    """A linked copy of a trusted testbed: where it is, and what it holds when put back."""

    testbed: Path  # the testbed's checked path
    root: Path
    files: dict[str, tuple[int, int]]  # relative path -> (device, inode), the testbed's own file
    folders: list[str]  # in the scan's order: a parent before its children


_KEPT: OrderedDict[tuple, _Copy] = OrderedDict()  # copies no Replays holds, by _kept_key
_KEPT_LOCK = threading.Lock()
_NAMES = itertools.count()


def _kept_key(testbed: Path, keep_in: Path) -> tuple | None:
    """Whose copy may serve ``testbed``: this process's (a forked worker never takes its parent's),
    in ``keep_in``, of this very folder; None when the testbed cannot be looked at."""
    try:
        st = os.stat(testbed)
    except OSError:
        return None
    return os.getpid(), str(keep_in), str(testbed), st.st_dev, st.st_ino


def _take(key: tuple) -> _Copy | None:
    with _KEPT_LOCK:
        return _KEPT.pop(key, None)


def _keep(key: tuple, copy: _Copy) -> None:
    dropped = []
    with _KEPT_LOCK:
        if key in _KEPT:
            dropped.append(_KEPT.pop(key))
        _KEPT[key] = copy
        while len(_KEPT) > MAX_KEPT_COPIES:
            dropped.append(_KEPT.popitem(last=False)[1])
    for old in dropped:
        shutil.rmtree(old.root, ignore_errors=True)


def _still_copied(copy: _Copy, scanned: Tree | None = None) -> bool:
    """Whether the testbed holds exactly the folders and files (by inode) ``copy`` was made of, as
    the project's walk finds them (never following a link; any link or special file refuses it).
    ``scanned``: a walk the caller already made, used when it is the one this look would make."""
    tree = scanned if scanned is not None and _same_walk(scanned, copy.testbed) else scan_tree(
        copy.testbed, check_links=False)
    return (tree.ok and {f.rel: (f.dev, f.ino) for f in tree.files} == copy.files
            and {"/".join(parts) for parts in tree.folders} == set(copy.folders))


def _same_walk(tree: Tree, testbed: Path) -> bool:
    """Whether ``tree``, a walk of ``check_links=False`` without size limits (the trace gate's),
    finds what ``scan_tree(testbed, check_links=False)`` would: it walked this very folder (the same
    device and inode) and no file, nor all of them together, passes the limits that walk applies
    (within them, the two walks accept and refuse the same entries)."""
    try:
        st = os.lstat(testbed)
    except OSError:
        return False
    return (tree.root_id == (st.st_dev, st.st_ino) and all(f.size <= MAX_FILE_BYTES for f in tree.files)
            and tree.total_bytes <= MAX_TREE_BYTES)


class Replays:
    """Where the plans of one task's gates run (see the module's docstring)."""

    def __init__(self, testbed: Path, now: datetime, work: Path, trusted: bool = False, *, reuse: bool = True,
                 keep_in: Path | None = None, scanned: Tree | None = None) -> None:
        """``scanned``: the testbed as ``scan_tree(testbed, check_links=False, max_file_bytes=None,
        max_total_bytes=None)`` found it just before (the trace gate's walk), so a kept copy is
        checked against it instead of walking the testbed again (``_same_walk`` says when it may)."""
        self.testbed, self.now, self.work, self.trusted = Path(testbed), now, Path(work), trusted
        self.scanned = scanned
        self.reuse = reuse and trusted
        self.keep_in = Path(keep_in) if keep_in is not None and self.reuse else None
        self._copy: _Copy | None = None
        self._key: tuple | None = None
        self._opened: tuple[_Copy, Workspace] | None = None  # the workspace made for the copy in use

    def workspace(self, name: str) -> Workspace:
        """A workspace holding exactly the testbed, for the replay ``name``; with reuse, the one copy
        (the workspace an earlier call returned is then no longer valid)."""
        if not self.reuse:
            return Workspace(self.testbed, now=self.now, trusted=self.trusted).copy_to(self.work / name, link=True)
        if self._copy is None and self.keep_in is not None:
            self._key = _kept_key(self.testbed, self.keep_in)
            kept = _take(self._key) if self._key is not None else None
            if kept is not None and _still_copied(kept, self.scanned):
                self._copy = kept
            elif kept is not None:
                shutil.rmtree(kept.root, ignore_errors=True)
        if self._copy is not None:
            try:
                self._put_back(self._copy)
                return self._open(self._copy)
            except OSError:
                shutil.rmtree(self._copy.root, ignore_errors=True)
        self._copy = self._copy_testbed()
        return self._open(self._copy)

    def _open(self, copy: _Copy) -> Workspace:
        """The workspace on ``copy``, made once per copy this object uses: a workspace holds its
        checked and resolved root and the office time alone, so the one made for the first replay
        serves the next ones (checking and resolving the root again cost a third of a put back;
        ``_put_back`` sees that the root is still a real folder)."""
        if self._opened is None or self._opened[0] is not copy:
            self._opened = (copy, Workspace(copy.root, now=self.now, trusted=True))
        return self._opened[1]

    def close(self) -> None:
        """Keep the copy for the next task's replays of the same testbed (with ``keep_in``); the
        workspaces this object returned are then no longer valid."""
        if self._copy is not None and self._key is not None:
            _keep(self._key, self._copy)
        self._copy = self._opened = None

    def _copy_testbed(self) -> _Copy:
        if self.keep_in is None:
            root = self.work / COPY_NAME
        else:
            root = self.keep_in / f".replay-{os.getpid()}-{next(_NAMES)}"
        testbed = Workspace(self.testbed, now=self.now, trusted=True).root  # its checks, as a plain copy's
        tree = copy_tree(testbed, root, link=True)
        files = {}
        for entry in tree.files:
            st = os.lstat(root.joinpath(*entry.parts))
            files[entry.rel] = (st.st_dev, st.st_ino)
        return _Copy(testbed, root, files, ["/".join(parts) for parts in tree.folders])

    def _put_back(self, copy: _Copy) -> None:
        """Remove what is not the testbed's own file or folder; link again what is missing. A file
        is known by the folder listing alone (its type and inode; the copy's files are links made
        on the copy's own device), so a put back costs one listing per folder."""
        root = str(copy.root)
        st = os.lstat(root)
        if not stat.S_ISDIR(st.st_mode):  # the copy's root itself replaced (a link): made again
            raise OSError(f"{root}: not a folder")
        device = st.st_dev
        kept: set[str] = set()
        folders = set(copy.folders)
        seen: set[str] = set()
        stack = [""]
        while stack:
            rel = stack.pop()
            with os.scandir(f"{root}/{rel}" if rel else root) as entries:
                for entry in entries:
                    path = f"{rel}/{entry.name}" if rel else entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if path in folders:
                            seen.add(path)
                            stack.append(path)
                        else:
                            shutil.rmtree(entry.path)
                        continue
                    if entry.is_file(follow_symlinks=False) and copy.files.get(path) == (device, entry.inode()):
                        kept.add(path)
                    else:
                        os.unlink(entry.path)
        for folder in copy.folders:  # in the scan's order: a parent before its children
            if folder not in seen:
                os.mkdir(f"{root}/{folder}")
        for path, identity in copy.files.items():
            if path in kept:
                continue
            target = f"{root}/{path}"
            os.link(copy.testbed / path, target, follow_symlinks=False)
            st = os.lstat(target)
            if (st.st_dev, st.st_ino) != identity:  # the testbed file is not the one first linked
                raise OSError(f"{path}: changed in the testbed")

    def state(self, plan: list[dict[str, Any]], name: str) -> Workspace:
        """The workspace ``plan`` leaves, for a gate that reads no observation: the calls of tools
        that only read are left out (they change no file), and the calls between two of them run
        as one stretch, so a batch (cells of one sheet) is the batch the whole plan makes."""
        ws = self.workspace(name)
        registry = default_registry()
        stretch: list[tuple[Any, Any]] = []
        for call in plan:
            if not registry.only_reads(call["tool"]):
                stretch.append((call["tool"], call["args"]))
            elif stretch:
                registry.run(ws, stretch)
                stretch = []
        if stretch:
            registry.run(ws, stretch)
        return ws

    def run(self, plan: list[dict[str, Any]], name: str) -> tuple[Workspace, list[ToolResult]]:
        """The workspace ``plan`` leaves and every call's result (observations included)."""
        ws = self.workspace(name)
        return ws, default_registry().run(ws, [(c["tool"], c["args"]) for c in plan])

    def replay(self, plan: list[dict[str, Any]], name: str, *, observe: bool = True) -> Replay:
        """``run`` (``observe``) or ``state`` (no results kept), as a ``Replay`` to score."""
        if not observe:
            return Replay(self.state(plan, name))
        return Replay(*self.run(plan, name))
