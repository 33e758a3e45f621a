"""A dataset exported with ``homer export --hf`` read back as a dataset folder, so that ``homer
eval`` (and what reads a run's dataset afterwards) runs on it as on the folder it came from.

An export row holds a task's record in columns (some as JSON text) and ``record_rest``, the
record's fields no column holds as they are; its office and reference folders are zips (base64).
:func:`rebuild_record` joins them again: the same record, so the same task digests and the same
dataset fingerprint as the source dataset (runs on either pair up in ``homer compare``).

Rows come from strangers: every shard is a regular file read with a size limit, every row is
parsed with the JSON limits, every zip member is a plain relative path extracted as a regular
file within the file-size, member-count and total limits. A bad row is skipped with its reason;
the rest is written.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from backends.dataset_reader import folder_written_whole
from office_env.limits import (
    MAX_FILE_BYTES,
    MAX_JSON_BYTES,
    MAX_RECORD_VALUES,
    MAX_TREE_BYTES,
    MAX_TREE_DEPTH,
    MAX_TREE_FILES,
)
from office_env.untrusted import UntrustedInputError, name_problem, open_regular, parse_json, printable

DATA = "data"
SHARD_SUFFIX = ".jsonl"
MAX_ROW_BYTES = MAX_JSON_BYTES + 2 * (4 * MAX_TREE_BYTES // 3)  # the record and two folders' zips, base64

# Columns that hold a record field as it is (the rest is rebuilt from JSON text or record_rest).
PLAIN = ("id", "split", "family", "difficulty", "apps", "app_count", "intent", "query", "description", "subtasks")
AS_JSON = {"evaluation": "evaluation", "memory": "memory", "dialogue": "dialogue", "now": "now"}
REST = "record_rest"


class HfFolderError(ValueError):
    """The folder is no readable export; the message is one line naming it."""


@dataclass
class Rebuilt:
    written: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (which row, why)


def is_hf_export(path: Path) -> bool:
    """A folder ``homer export --hf`` wrote: ``data/*.jsonl`` shards and no ``tasks/``."""
    data = path / DATA
    try:
        if os.path.lexists(path / "tasks") or not stat.S_ISDIR(os.lstat(data).st_mode):
            return False
        return any(name.endswith(SHARD_SUFFIX) for name in os.listdir(data))
    except OSError:
        return False


def record_rest(record: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``record`` that :func:`rebuild_record` would not get back from ``row``'s
    other columns (a field a column holds differently is kept here as it is)."""
    rebuilt = _from_columns(row)
    return {key: value for key, value in record.items() if key not in rebuilt or rebuilt[key] != value}


def rebuild_record(row: dict[str, Any]) -> dict[str, Any]:
    """The task record an export row was made of. Raises ``ValueError`` naming the column."""
    record = _from_columns(row)
    rest = row.get(REST, "{}")
    if not isinstance(rest, str):
        raise ValueError(f"{REST}: not JSON text")
    extra = parse_json(rest, REST, max_values=MAX_RECORD_VALUES)
    if not isinstance(extra, dict):
        raise ValueError(f"{REST}: not a JSON object")
    record.update(extra)
    return record


def _from_columns(row: dict[str, Any]) -> dict[str, Any]:
    record = {key: row[key] for key in PLAIN if key in row}
    for column, key in AS_JSON.items():
        text = row.get(column)
        if isinstance(text, str):
            record[key] = parse_json(text, column, max_values=MAX_RECORD_VALUES)
    if isinstance(row.get("user"), str) and isinstance(row.get("username"), str):
        record["user"] = {"name": row["user"], "username": row["username"]}
    return record


def rebuild_dataset(hf: Path, out: Path) -> Rebuilt:
    """Write the dataset folder an export holds into ``out`` (absent or empty; it appears whole).
    Raises :class:`HfFolderError` when no shard can be read at all."""
    shards = _shards(hf)
    summary = Rebuilt()
    seen: set[str] = set()
    with folder_written_whole(out) as tmp:
        (tmp / "tasks").mkdir()
        for shard in shards:
            for number, line in _lines(shard):
                where = f"row {number} of {DATA}/{printable(shard.name)}"
                try:
                    task_id = _write_task(line, tmp / "tasks", where, seen)
                except (ValueError, UntrustedInputError) as exc:
                    summary.skipped.append((where, str(exc)[:300]))
                    continue
                seen.add(task_id)
                summary.written += 1
    return summary


def _shards(hf: Path) -> list[Path]:
    data = hf / DATA
    try:
        names = sorted(n for n in os.listdir(data) if n.endswith(SHARD_SUFFIX))
    except OSError as exc:
        raise HfFolderError(f"{printable(data)}: cannot be read ({exc.strerror or exc})") from None
    if not names:
        raise HfFolderError(f"{printable(data)}: no {SHARD_SUFFIX} shard")
    return [data / n for n in names]


def _lines(shard: Path) -> Iterator[tuple[int, bytes]]:
    """A shard's rows (numbered from 1), one at a time: a regular file, never followed through a
    link; a row over ``MAX_ROW_BYTES`` is given cut (and refused as too long)."""
    fd, _ = open_regular(shard, printable(shard))
    with os.fdopen(fd, "rb") as handle:
        number = 0
        while line := handle.readline(MAX_ROW_BYTES + 1):
            number += 1
            if len(line) > MAX_ROW_BYTES:
                yield number, line
                while line and not line.endswith(b"\n"):  # the rest of the long row
                    line = handle.readline(MAX_ROW_BYTES + 1)
                continue
            if line.strip():
                yield number, line


def _write_task(line: bytes, tasks: Path, where: str, seen: set[str]) -> str:
    if len(line) > MAX_ROW_BYTES:
        raise ValueError(f"is {len(line):,} bytes, over the limit of {MAX_ROW_BYTES:,}")
    row = parse_json(line, where, max_bytes=MAX_ROW_BYTES, max_values=MAX_RECORD_VALUES)
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    task_id = row.get("id")
    if not isinstance(task_id, str) or name_problem(task_id) is not None or task_id in (".", ".."):
        raise ValueError(f"id: {printable(str(task_id))[:80]!r} is not a task id")
    if task_id in seen:
        raise ValueError(f"id: {task_id} is given twice")
    record = rebuild_record(row)
    folder = tasks / task_id
    folder.mkdir()
    try:  # a task is written whole or not at all
        (folder / "task.json").write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        for name, column in (("testbed", "testbed_zip"), ("reference", "reference_zip")):
            packed = row.get(column, "")
            if not isinstance(packed, str):
                raise ValueError(f"{column}: not base64 text")
            if packed or name == "testbed":
                _unzip(packed, folder / name, column)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return task_id


def _unzip(packed: str, into: Path, column: str) -> None:
    """A zip of plain relative paths, written as regular files within the limits."""
    try:
        data = base64.b64decode(packed, validate=True)
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (binascii.Error, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{column}: not a base64 zip ({exc})") from None
    into.mkdir()
    members = archive.infolist()
    if len(members) > MAX_TREE_FILES:
        raise ValueError(f"{column}: {len(members):,} files, over the limit of {MAX_TREE_FILES:,}")
    total = 0
    for info in members:
        parts = info.filename.split("/")
        if info.is_dir():
            continue
        if info.filename.startswith("/") or "\\" in info.filename or len(parts) > MAX_TREE_DEPTH + 1 or any(
                p in ("", ".", "..") or name_problem(p) is not None for p in parts):
            raise ValueError(f"{column}: member {printable(info.filename)[:120]!r} is not a plain relative path")
        if stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG):
            raise ValueError(f"{column}: member {printable(info.filename)[:120]!r} is not a regular file")
        if info.file_size > MAX_FILE_BYTES:
            raise ValueError(f"{column}: member {printable(info.filename)[:120]!r} is over {MAX_FILE_BYTES:,} bytes")
        total += info.file_size
        if total > MAX_TREE_BYTES:
            raise ValueError(f"{column}: over {MAX_TREE_BYTES:,} bytes in all")
        with archive.open(info) as source:
            body = source.read(MAX_FILE_BYTES + 1)
        if len(body) != info.file_size:  # a member that states one size and holds another
            raise ValueError(f"{column}: member {printable(info.filename)[:120]!r} is not the size it states")
        target = into.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(body)
