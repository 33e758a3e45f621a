"""Reading a dataset folder (``tasks/<id>/task.json`` + ``testbed/`` + ``reference/``).

Shared by everything that consumes datasets -- the harness, ``homer verify``/``stats``/``export``
-- so it sits below them; writing datasets is the orchestrator's (``orchestrator.dataset_writer``).

A dataset may come from a stranger, so every task is opened with :mod:`office_env.untrusted`
before anything uses it, and a bad task is reported (``LoadedTask.error``, one line naming the
file and the reason) while the others go on:

- a task folder, ``task.json``, ``testbed/`` or ``reference/`` that is a symlink is refused;
- ``task.json`` is read with the JSON limits (a regular file, at most ``MAX_JSON_BYTES``, nested
  at most ``MAX_JSON_DEPTH`` levels) and must hold a task record (``backends.task_record``: the
  first field that is not what the schema says is named), its dialogue at most
  ``MAX_DIALOGUE_TURNS`` turns, any other list or object at most ``MAX_RECORD_ITEMS`` long and any
  string at most ``MAX_RECORD_TEXT_CHARS`` (checked before it is typed);
- a ``testbed/`` or ``reference/`` holding anything :func:`~office_env.untrusted.scan_tree`
  refuses (a symlink, a special file, a hard link to a file outside it, an odd name, more than
  the tree limits) makes the whole task unusable rather than skipping the entry: scoring an
  agent against a partial testbed would silently give a wrong result.

Task folder names that would not print on one line are shown escaped (``\\n``, ``\\xff``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from office_env.formats.bounded import size_text
from office_env.limits import (
    MAX_DATASET_BYTES,
    MAX_DIALOGUE_TURNS,
    MAX_RECORD_ITEMS,
    MAX_RECORD_TEXT_CHARS,
    MAX_RECORD_VALUES,
)
from office_env.untrusted import (
    MISSING,
    Skipped,
    UntrustedInputError,
    is_real_dir,
    load_json,
    name_problem,
    printable,
    scan_tree,
)

if TYPE_CHECKING:  # the record's types import every check and file reader: loaded only for a record worth typing
    from backends.task_record import TaskRecord

TASKS = "tasks"


WRITE_PROBE = ".write-test."  # the prefix of the empty file that proves a folder takes files (a kill may leave it)


def is_write_probe(name: str) -> bool:
    """The name of a write probe (``.write-test.*``; ``.write-test`` as earlier versions named it)."""
    return name.startswith(WRITE_PROBE) or name == WRITE_PROBE.rstrip(".")


def ensure_writable_folder(out: Path) -> None:
    """Create ``out`` if needed and prove it takes files (raises ``OSError`` otherwise; a link is
    refused, never written through)."""
    _refuse_link(out)
    out.mkdir(parents=True, exist_ok=True)
    _refuse_link(out)
    fd, probe = tempfile.mkstemp(prefix=WRITE_PROBE, dir=out)  # a new name: a planted link is never written through
    os.close(fd)
    os.unlink(probe)


@contextmanager
def folder_written_whole(out: Path, *, replace: bool = False) -> Iterator[Path]:
    """A temporary folder beside ``out`` to fill; when the block ends it becomes ``out`` (which must
    be absent or an empty folder; with ``replace``, a folder there is removed first) in one rename,
    and on an error it is removed: a reader sees the whole folder or none of it."""
    _refuse_link(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        tmp.chmod(0o755)  # mkdtemp makes 0700; an export is meant to be shared
        yield tmp
        if replace and out.exists():
            shutil.rmtree(out)
        elif out.exists():
            out.rmdir()  # empty, as the caller checked (a folder that filled meanwhile raises)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _refuse_link(out: Path) -> None:
    if os.path.islink(out):
        raise IsADirectoryError(errno.ELOOP, "is a symlink; refused (give the real folder)", str(out))


def task_now(record: TaskRecord | dict[str, Any]) -> datetime:
    """The simulated "now" of a task record (typed, or as JSON before it is checked)."""
    if isinstance(record, dict):
        day, clock = record["now"]["date"], record["now"]["time"]
    else:  # the typed fields as they are, not a dump of them (the gates ask often)
        day, clock = record.now.date, record.now.time
    return datetime.strptime(f"{day} {clock}", "%Y-%m-%d %H:%M")


def task_day_first(record: TaskRecord | dict[str, Any]) -> bool | None:
    """Whether the task's office writes a numeric date day first: its world's city's order (the
    world comes back from ``provenance.world_seed``); None when the record names no world (an
    imported task), where an ambiguous numeric date is read both ways."""
    if isinstance(record, dict):
        provenance = record.get("provenance")
        seed = provenance.get("world_seed") if isinstance(provenance, dict) else None
    else:  # the key as it is: a dump of the whole provenance (the gates' results, the tokens) cost more
        seed = record.provenance.extra("world_seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        return None
    return _world_day_first(seed)


@lru_cache(maxsize=256)  # a task is scored state after state
def _world_day_first(seed: int) -> bool | None:
    from office_env.synthesis.world import make_world

    return make_world(seed).day_first


@dataclass(frozen=True)
class LoadedTask:
    """A task folder: ``task`` is its typed record, ``record`` the same as read (plain JSON, for the
    digest and the readers not yet typed); both None, and ``error`` one line, when it is unusable."""

    id: str
    folder: Path
    record: dict[str, Any] | None
    error: str | None = None
    size: int = 0  # bytes of its testbed and reference files together
    task: TaskRecord | None = None

    @property
    def testbed(self) -> Path:
        return self.folder / "testbed"

    @property
    def reference(self) -> Path | None:
        ref = self.folder / "reference"
        return ref if is_real_dir(ref) else None


def count_tasks(out: Path) -> int:
    """How many entries ``iter_tasks`` will yield, about (a progress total; 0 when unreadable)."""
    try:
        return sum(1 for entry in os.scandir(out / TASKS) if not entry.name.startswith("."))
    except OSError:
        return 0


def ticking(tasks: Iterable[LoadedTask], on_outcome: Callable[[dict[str, Any]], None] | None,
            written: Callable[[], int]) -> Iterator[LoadedTask]:
    """``tasks``, telling ``on_outcome`` about each once it is handled (when the next is asked
    for): ``accepted`` when ``written()`` grew meanwhile, else ``dropped``."""
    before = written()
    for task in tasks:
        yield task
        if on_outcome is not None:
            now = written()
            on_outcome({"status": "accepted" if now > before else "dropped"})
            before = now


def iter_tasks(out: Path) -> Iterator[LoadedTask]:
    """Every task folder, sorted by id; a task that cannot be used is reported, not raised."""
    total = 0
    for entry in listed_tasks(out):
        if isinstance(entry, LoadedTask):
            yield entry
            continue
        task = load_task_folder(*entry)
        total += task.size
        if task.record is not None and total > MAX_DATASET_BYTES:
            yield replace(task, record=None, task=None, error=over_dataset_limit(task.folder))
            continue
        yield task


def listed_tasks(out: Path) -> Iterator[LoadedTask | tuple[str, Path]]:
    """:func:`iter_tasks`'s listing, sorted by id: the id and folder of each task to load
    (:func:`load_task_folder`), or an entry refused as it is listed (a link, an odd name, an
    unreadable ``tasks/``) as an unusable task. A caller that loads the tasks elsewhere (in worker
    processes) counts their sizes in this order against ``MAX_DATASET_BYTES``
    (:func:`over_dataset_limit`), as :func:`iter_tasks` does."""
    root = out / TASKS
    try:
        mode = os.lstat(root).st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode):
        yield LoadedTask(TASKS, root, None, f"{printable(root)}: is a symlink; refused")
        return
    if not stat.S_ISDIR(mode):
        return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        yield LoadedTask(TASKS, root, None, f"{printable(root)}: cannot be read ({exc.strerror or exc})")
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        folder = Path(entry.path)
        task_id = printable(entry.name)
        if entry.is_symlink():
            yield LoadedTask(task_id, folder, None, f"{printable(folder)}: is a symlink; refused")
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        odd = name_problem(entry.name)
        if odd is not None:
            yield LoadedTask(task_id, folder, None, f"{printable(folder)}: odd folder name ({odd}); refused")
            continue
        yield task_id, folder


def over_dataset_limit(folder: Path) -> str:
    """Why a task is unusable when the testbeds up to it (in the dataset's order) pass
    ``MAX_DATASET_BYTES``."""
    return f"{printable(folder)}: the dataset's testbeds pass {size_text(MAX_DATASET_BYTES)} in total here; " \
           "the task is unusable"


def load_task(out: Path, task_id: str) -> LoadedTask:
    """One task of a dataset by id, with the checks :func:`iter_tasks` makes (``record`` is None
    and ``error`` says why when it cannot be used, or does not exist)."""
    folder = out / TASKS / task_id
    root = out / TASKS
    if root.is_symlink():
        return LoadedTask(printable(task_id), folder, None, f"{printable(root)}: is a symlink; refused")
    odd = name_problem(task_id) if task_id not in (".", "..") else "not a task id"
    if odd is not None or "/" in task_id or "\\" in task_id:
        return LoadedTask(printable(task_id), folder, None, f"{printable(task_id)}: not a task id ({odd or 'a path'})")
    if folder.is_symlink():
        return LoadedTask(task_id, folder, None, f"{printable(folder)}: is a symlink; refused")
    if not folder.is_dir():
        return LoadedTask(task_id, folder, None, f"{printable(task_id)}: no such task in {printable(out)}")
    return load_task_folder(task_id, folder)


def load_task_folder(task_id: str, folder: Path) -> LoadedTask:
    """The task in ``folder`` (listed under ``task_id``), read and checked (see the module's docstring)."""
    path = folder / "task.json"
    try:
        record = load_json(path, max_values=MAX_RECORD_VALUES)  # counted before parsing: cheap to refuse
    except UntrustedInputError as exc:
        if exc.reason == MISSING:
            return LoadedTask(task_id, folder, None, f"{printable(path)}: missing")
        if exc.line is not None:
            return LoadedTask(task_id, folder, None, f"{printable(path)}: not valid JSON at line {exc.line} "
                                                     f"column {exc.column}: {exc.detail}")
        return LoadedTask(task_id, folder, None, str(exc))
    if not isinstance(record, dict):
        return LoadedTask(task_id, folder, None, f"{printable(path)}: not valid JSON for a task (the top level "
                                                 "is not an object)")
    problem = record_bounds_problem(record)  # before typing it: a model per item of 300,000 would take a gigabyte
    if problem is not None:
        return LoadedTask(task_id, folder, None, f"{printable(path)}: {printable(problem)}")
    from backends.task_record import RecordError, parse_record

    try:
        typed = parse_record(record)
    except RecordError as exc:
        return LoadedTask(task_id, folder, None, printable(f"{path}: {exc}"))
    size = 0
    for name in ("testbed", "reference"):
        tree = scan_tree(folder / name)
        if tree.skipped and tree.skipped[0] == Skipped("", MISSING):
            continue
        if not tree.ok:
            return LoadedTask(task_id, folder, None, f"{tree.problem(folder / name)}; the task is unusable")
        size += tree.total_bytes
    return LoadedTask(task_id, folder, record, size=size, task=typed)


def record_bounds_problem(record: dict[str, Any]) -> str | None:
    """Why a parsed ``task.json`` is too large to use, naming the field; None when it is within the
    limits: at most ``MAX_DIALOGUE_TURNS`` turns in all, ``MAX_RECORD_ITEMS`` items in any other list
    or keys in any object, ``MAX_RECORD_TEXT_CHARS`` characters in any string. One pass over the
    parsed JSON, before anything builds objects of it or renders it (every later step grows with
    these sizes, some with their product)."""
    turns = dialogue_turns(record)
    if turns > MAX_DIALOGUE_TURNS:
        return f"dialogue: {turns:,} turns, over the limit of {MAX_DIALOGUE_TURNS:,}"
    stack: list[tuple[Any, tuple[Any, ...]]] = [(record, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if len(node) > MAX_RECORD_TEXT_CHARS:
                return f"{_field(where)}: {len(node):,} characters, over the limit of {MAX_RECORD_TEXT_CHARS:,}"
            continue
        if isinstance(node, dict):
            items: Iterable[tuple[Any, Any]] = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if len(node) > MAX_RECORD_ITEMS and not (where and where[-1] == "turns"):  # turns: counted above
            return f"{_field(where)}: {len(node):,} {'keys' if isinstance(node, dict) else 'items'}, " \
                   f"over the limit of {MAX_RECORD_ITEMS:,}"
        stack.extend((value, (*where, key)) for key, value in items if isinstance(value, (str, dict, list)))
    return None


def _field(where: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in where)[:200] or "(top level)"


def dialogue_turns(record: dict[str, Any]) -> int:
    """How many turns a record's dialogue holds, whatever its shape (0 where it has none)."""
    dialogue = record.get("dialogue")
    if not isinstance(dialogue, list):
        return 0
    return sum(len(s["turns"]) for s in dialogue if isinstance(s, dict) and isinstance(s.get("turns"), list))


def task_digest(task: LoadedTask) -> str:
    """A digest of what a task is (its record and every file of its testbed and reference), so
    that runs are paired by content, not by the path the dataset was read from: a byte-identical
    copy elsewhere has the same digests, a rebuilt dataset at the same path does not."""
    from office_env.untrusted import iter_files, scan_tree

    digest = hashlib.sha256(json.dumps(task.record, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    for name in ("testbed", "reference"):
        root = task.folder / name
        if not is_real_dir(root):
            continue
        tree = scan_tree(root)
        for entry, fd in iter_files(tree, skip_errors=True):
            digest.update(json.dumps([name, entry.rel, entry.size]).encode("utf-8"))
            while chunk := os.read(fd, 1 << 20):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def dataset_fingerprint(digests: dict[str, str]) -> str:
    """One digest over every task id and its :func:`task_digest` (16 hex digits)."""
    return hashlib.sha256(json.dumps(sorted(digests.items())).encode("utf-8")).hexdigest()[:16]


def dataset_identity(out: Path) -> dict[str, Any]:
    """What a run records about the dataset it ran on: its path, and its content (every task id
    with :func:`task_digest`, and the fingerprint over them), by which runs are paired."""
    digests = {task.id: task_digest(task) if task.record is not None else "unusable" for task in iter_tasks(out)}
    return {"dataset": str(Path(out).resolve()), "dataset_fingerprint": dataset_fingerprint(digests),
            "task_digests": digests}
