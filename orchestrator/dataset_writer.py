"""The dataset folder: layout, atomic writes, loading, and the files derived from the tasks.

```
DIR/
  build.json            the build configuration, its hash, attempt and drop counts
  attempts.jsonl        every attempt in index order: accepted, or dropped with its reason
  index.jsonl           one line per task (derived from tasks/*/task.json, sorted by id)
  README.md             the dataset card (statistics; derived)
  schemas/              task.schema.json and criteria.schema.json
  tasks/<id>/task.json  the task record
  tasks/<id>/testbed/   the initial workspace
  tasks/<id>/reference/ expected files (Plus tasks whose seed has them)
```

Testbeds and reference folders are copied into a task with :func:`office_env.untrusted.copy_tree`:
a seed's folders come from strangers, so a symlink, special file, hard link to a file outside the
folder, odd name or anything beyond the tree limits refuses the copy with an error naming the
path, and what is written holds fresh regular files only -- never a link to follow later. The
one exception is a build's own world: its tasks' ``testbed/`` files are hard links to one copy of
the world in the dataset (:func:`shared_world`), and ``index.jsonl`` names each task's ``world``
so that readers can count those links (``office_env.dataset_links``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, cast

from backends.batch import ResultLog
from backends.carried_folder import pack_folder, unpack_folder
from backends.dataset_reader import TASKS, folder_written_whole
from backends.task_record import TaskRecord, schema_text
from office_env import criteria_schema
from office_env.dataset_links import WORLD
from office_env.untrusted import copy_tree, is_real_dir
from office_env.workspace import atomic_write

WORK = ".work"
WORLDS = "worlds"  # in WORK: each world's testbed, once, for its tasks to link (shared_world)
PROGRESS = ".progress.jsonl"
ATTEMPTS = "attempts.jsonl"
BUILD = "build.json"
CARRIED = "carried"  # an outcome's task folder as bytes (backends.carried_folder), never written to a log
# A task folder's size before a command has one to measure (``homer build --n 12 --seed 3``, ``homer
# regenerate`` of datasets/officebench-sample): a Neo task's office files about 128 KiB, and task.json
# about 130 bytes a turn of the history.
OFFICE_BYTES = 128 * 1024
TURN_BYTES = 130


def carry_staged(outcome: dict[str, Any]) -> dict[str, Any]:
    """``outcome`` with the task folder a job staged on its own node (``staged``) packed as bytes
    under ``CARRIED`` and the folder removed: the driver writes it, so a node needs no shared disk."""
    staged = outcome.pop("staged", None)
    if staged is not None:
        try:
            outcome[CARRIED] = pack_folder(Path(staged))
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    return outcome


_KEY = json.JSONEncoder().encode  # json.dumps(k): a key's text (a string's, ASCII-escaped)
_VALUE = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(v, ensure_ascii=False), made once


def dumps(data: Any) -> str:
    """JSON with each top-level key on its own line: readable, and written by the C encoder
    (``indent`` would switch to the pure-Python one, 10x slower on a task record)."""
    if not isinstance(data, dict) or not data:
        return _VALUE(data) + "\n"
    items = ",\n".join(f"  {_KEY(k)}: {_VALUE(v)}" for k, v in data.items())
    return "{\n" + items + "\n}\n"


def write_json(path: Path, data: Any) -> None:
    atomic_write(path, dumps(data).encode("utf-8"))


def write_text(path: Path, text: str) -> None:
    atomic_write(path, text.encode("utf-8"))


def shared_world(work: Path, testbed: Path, world: str) -> Path:
    """The world's testbed, copied once into the dataset's work folder ``work`` (on the dataset's
    own file system, where the scratch copy may not be) for its tasks to hard-link
    (``stage_task(link=True)``; see ``office_env.dataset_links``). Written whole under a temporary
    name: a worker that finds it made meanwhile by another keeps that one."""
    folder = work / WORLDS / world
    if is_real_dir(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{world}.", dir=folder.parent))
    try:
        copy_tree(testbed, tmp / "testbed", trusted=True)
        try:
            os.rename(tmp / "testbed", folder)
        except OSError:
            if not is_real_dir(folder):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def drop_shared_worlds(out: Path) -> bool:
    """Remove the copies :func:`shared_world` made in ``out``'s work folder (True when there were
    any): a name left there is one no reader finds among the tasks, so it refuses every shared file."""
    worlds = out / WORK / WORLDS
    if not worlds.is_dir() or worlds.is_symlink():
        return False
    shutil.rmtree(worlds)
    return True


def stage_task(staging: Path, record: TaskRecord, testbed: Path | None, reference: Path | None = None, *,
               trusted: bool = False, link: bool = False, plain: dict[str, Any] | None = None) -> Path:
    """Write ``<staging>/<id>`` completely under a temporary name, then rename it into place.

    ``testbed`` is copied to ``testbed/`` (an absent one gives an empty ``testbed/``), and
    ``reference`` (expected files of a seed task), when given, to ``reference/``; both as
    untrusted trees (``UntrustedInputError`` names a refused path, and nothing is left behind);
    ``trusted``: the testbed is a world this build wrote, whose files replays may hard-link;
    ``link``: one of :func:`shared_world`, whose files the task's ``testbed/`` hard-links (a copy
    where the file system cannot link).
    ``plain``: ``record.to_dict()``, when the caller made it already (a build's card reads it too)."""
    final = staging / record.id
    with folder_written_whole(final, replace=True) as tmp:
        if testbed is not None and (is_real_dir(testbed) or testbed.is_symlink()):
            copy_tree(testbed, tmp / "testbed", trusted=trusted, link=link)
        else:
            (tmp / "testbed").mkdir()
        if reference is not None:
            copy_tree(reference, tmp / "reference")
        (tmp / "task.json").write_text(dumps(plain if plain is not None else record.to_dict()), encoding="utf-8")
    return final


def publish(staged: Path, out: Path) -> Path:
    """Move a staged task folder into ``out/tasks`` (one rename: it is there whole or not at all)."""
    target = out / TASKS / staged.name
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staged, target)
    return target


class OutcomeLog:
    """The append-only log of attempt outcomes (``.progress.jsonl``) of a build or regeneration
    (a ``backends.batch.ResultLog``).

    An accepted attempt's staged folder (or its bytes, ``carried``, from a worker on a machine that
    does not see this folder: written under the staging folder first) is published before its line
    is written: a kill between
    the two leaves a task folder no line owns, which resume's repair removes, never a line
    without its task. ``done`` (index -> outcome) is kept up to date; ``on_record(done)`` is
    called after each line."""

    def __init__(self, out: Path, done: dict[int, dict[str, Any]],
                 on_record: Callable[[dict[int, dict[str, Any]]], None] | None = None) -> None:
        self.out, self.done, self.on_record = out, done, on_record
        self._log: ResultLog | None = None

    def __enter__(self) -> "OutcomeLog":
        self._log = ResultLog(self.out / PROGRESS)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._log is not None:
            self._log.close()

    def record(self, item: dict[str, Any]) -> None:
        if item["status"] == "accepted":
            carried = item.pop(CARRIED, None)  # staged on a machine that does not see this folder
            staged = unpack_folder(carried, self.out / WORK / "staging") if carried is not None else item.pop("staged")
            publish(Path(staged), self.out)
        self.done[item["index"]] = item
        cast(ResultLog, self._log).write([item])  # open: __enter__ made it
        if self.on_record:
            self.on_record(self.done)


def index_line(record: TaskRecord) -> dict[str, Any]:
    sessions = record.dialogue
    return {
        "id": record.id, "split": record.split, "family": record.family,
        "difficulty": record.difficulty, "apps": list(record.apps), "app_count": record.app_count,
        "sessions": len(sessions), "utterances": sum(len(s.turns) for s in sessions),
        "tokens": (record.provenance.tokens or {}).get("dialogue"),
        "path": f"{TASKS}/{record.id}/task.json",
        # the tasks of one world share its testbed's files (office_env.dataset_links)
        **({WORLD: str(world)} if (world := record.provenance.extra("world_seed")) is not None else {}),
    }


def index_text(records: list[TaskRecord]) -> str:
    """``index.jsonl``: one line per task, sorted by id."""
    return "".join(json.dumps(index_line(r), ensure_ascii=False) + "\n" for r in sorted(records, key=lambda r: r.id))


def write_index(out: Path, records: list[TaskRecord]) -> None:
    write_text(out / "index.jsonl", index_text(records))


def schema_files() -> list[tuple[str, bytes]]:
    """The ``schemas/`` files a dataset carries, as (path in the folder, bytes)."""
    return [("schemas/criteria.schema.json", dumps(criteria_schema()).encode("utf-8")),
            ("schemas/task.schema.json", schema_text().encode("utf-8"))]  # the registered apps' enum


def write_schemas(out: Path) -> None:
    for name, data in schema_files():
        atomic_write(out / name, data)
