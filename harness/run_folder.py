"""The eval run folder's states, so that a run killed at any moment (``kill -9`` included) is
finished by ``--resume`` with exactly the rows a clean run writes.

The order of writes makes every moment recognisable:

1. ``run.json`` is written first, with ``"state": "running"``, the configuration and the dataset's
   content fingerprint: from then on the folder names the run it holds.
2. ``.progress.jsonl`` is (re)written whole under a temporary name and renamed: its header line
   (configuration and fingerprint) and the rows an earlier attempt finished; then each finished
   task's rows are appended, flushed and synced.
3. At the end ``results.jsonl`` and the reports, then ``run.json`` again (``"state":
   "finished"``), then ``.progress.jsonl`` is removed.

A resume reads whichever of these exist: an empty or cut progress file, results without a
finished ``run.json``, a finished run (its rows are kept, nothing runs again). A folder holding an
earlier run is only written with ``--resume`` (same configuration) or ``--overwrite``.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any, Callable

from backends.batch import ResultLog, json_line, read_lines, write_synced
from backends.dataset_reader import is_write_probe
from backends.folder_lock import LOCK_NAME
from office_env.untrusted import UntrustedInputError, load_json, printable

WORK = ".work"
CACHE = ".cache"
DATASET = ".dataset"  # the tasks of a Hugging Face export, rebuilt as a dataset folder (backends.hf_folder)
PROGRESS = ".progress.jsonl"
RESULTS = "results.jsonl"
REPORT = "report.md"
REPORT_HTML = "report.html"
RUN = "run.json"
RUNNING, FINISHED = "running", "finished"
_RUN_FILES = (RUN, RESULTS, PROGRESS, REPORT, REPORT_HTML, "research-report.md", "research-report.html")
_OWN_FOLDERS = (WORK, CACHE, DATASET)
_OWN_FILES = frozenset((*_RUN_FILES, LOCK_NAME))
MAX_PROGRESS_BYTES = 512 * 1024 * 1024


class RunFolderError(ValueError):
    """The output folder cannot take this run; the message is one line naming it."""


def _leftover(entry: os.DirEntry) -> bool:
    """A temporary file an interrupted atomic write of one of the run's files (or the folder's write
    probe) left: a regular file, never a folder or a link of that name."""
    name = entry.name
    return entry.is_file(follow_symlinks=False) and (is_write_probe(name) or (
        name.startswith(".") and name.endswith(".tmp") and any(name.startswith(f".{f}.") for f in _RUN_FILES)))


def _ours(entry: os.DirEntry) -> bool:
    """One of a run's own entries: its work, cache and dataset folders (and a dataset folder being
    written: ``..dataset.<random>``), its files (a folder of a file's name is not)."""
    if entry.is_dir(follow_symlinks=False) and entry.name.startswith(f".{DATASET}."):
        return True
    return entry.name in _OWN_FOLDERS or (entry.name in _OWN_FILES and not entry.is_dir(follow_symlinks=False))


def check_out(out: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse an output folder this run must not write: a link, a file, a folder holding other
    things than an eval run, or an earlier run without ``--resume`` / ``--overwrite``."""
    if resume and overwrite:
        raise RunFolderError("--resume and --overwrite exclude each other: continue the run in --out, or replace it")
    label = printable(out)
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RunFolderError(f"--out {label}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise RunFolderError(f"--out {label}: is a symlink; refused (give the real folder)")
    if not stat.S_ISDIR(st.st_mode):
        raise RunFolderError(f"--out {label}: exists and is not a folder")
    entries = list(os.scandir(out))
    names = [entry.name for entry in entries]
    foreign = sorted(e.name for e in entries if not _ours(e) and not _leftover(e))
    if foreign:
        raise RunFolderError(f"--out {label}: folder is not empty and holds no earlier evaluation run "
                             f"({printable(foreign[0])}); choose a new folder")
    if any(n in _RUN_FILES for n in names) and not (resume or overwrite):
        raise RunFolderError(f"--out {label}: holds an earlier evaluation run; pass --resume to continue it (same "
                             "options) or --overwrite to replace it, or choose a new folder")


def remove_leftovers(out: Path) -> None:
    """Remove the temporary files interrupted atomic writes left (a killed run's
    ``.run.json.<pid>.tmp``): the run that holds the folder now writes its own."""
    for entry in os.scandir(out):
        if _leftover(entry):
            os.unlink(entry.path)


def clear(out: Path) -> None:
    """Remove an earlier run's files (``--overwrite``) and the leftovers ``remove_leftovers``
    removes; the summary cache is kept."""
    for entry in os.scandir(out):
        if (entry.name in _RUN_FILES and not entry.is_dir(follow_symlinks=False)) or _leftover(entry):
            os.unlink(entry.path)


def state_bytes(run: dict[str, Any]) -> bytes:
    """``run.json``'s bytes."""
    return (json.dumps(run, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def write_state(out: Path, run: dict[str, Any]) -> None:
    write_synced(out / RUN, state_bytes(run))


def _read_lines(path: Path, label: str) -> list[str] | None:
    return read_lines(path, MAX_PROGRESS_BYTES, label)


def earlier_outcomes(out: Path, header: dict[str, Any], trials: int,
                     same_run: Callable[[dict[str, Any]], bool]) -> dict[str, dict[str, Any]]:
    """What an earlier attempt in ``out`` finished (by task id): tasks with every trial's row, and
    tasks skipped for good. Runs ended by an endpoint's or a budget's error ("error: ...") run
    again. Raises RunFolderError when the folder holds a run with another configuration."""
    label = printable(out)
    refusal = RunFolderError(f"--resume: {label} holds a run with another agent, context, dataset or trial count; "
                             "use the same options, --overwrite to replace it, or a new --out")
    run = None
    if os.path.lexists(out / RUN):
        try:
            run = load_json(out / RUN, f"{label}/{RUN}")
        except UntrustedInputError as exc:
            raise RunFolderError(f"--resume: {exc}; use --overwrite to replace the run") from None
        if not isinstance(run, dict) or not same_run(run):
            raise refusal
    lines = _read_lines(out / PROGRESS, f"{label}/{PROGRESS}") or []
    first = json_line(lines[0]) if lines else None
    if isinstance(first, dict) and "header" in first:
        if first != header:
            raise refusal
        items = [json_line(line) for line in lines[1:]]
    elif run is not None and run.get("state", FINISHED) == FINISHED:
        items = _finished_items(out, run, label)
    else:  # nothing finished yet (an empty or cut progress file), or nothing says which run: start over
        items = []
    return _outcomes(items, trials)


def _finished_items(out: Path, run: dict[str, Any], label: str) -> list[Any]:
    """A finished run's rows and skipped tasks, as progress lines."""
    lines = _read_lines(out / RESULTS, f"{label}/{RESULTS}") or []
    skipped = [{"id": s.get("id"), "skipped": s.get("error")} for s in run.get("skipped") or []
               if isinstance(s, dict)]
    return [json_line(line) for line in lines] + skipped


def _outcomes(items: list[Any], trials: int) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[int, dict[str, Any]]] = {}
    outcomes: dict[str, dict[str, Any]] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        if "skipped" in item:
            if isinstance(item["skipped"], str) and not item["skipped"].startswith("error:"):
                outcomes[item["id"]] = {"id": item["id"], "skipped": item["skipped"]}
        elif isinstance(item.get("trial"), int) and not str(item.get("error") or "").startswith("error:"):
            rows.setdefault(item["id"], {})[item["trial"]] = item
    for task_id, by_trial in rows.items():
        if set(by_trial) >= set(range(1, trials + 1)):
            outcomes[task_id] = {"id": task_id, "rows": [by_trial[t] for t in range(1, trials + 1)]}
    return outcomes


class ProgressLog(ResultLog):
    """``.progress.jsonl``: the header and the kept lines written whole (a rename), then each
    finished task's lines appended, flushed and synced (``backends.batch.ResultLog``)."""

    def __init__(self, out: Path, header: dict[str, Any], kept: list[dict[str, Any]]) -> None:
        super().__init__(out / PROGRESS, start=[header, *kept], sync=True, ensure_ascii=False)


def now_text() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")
