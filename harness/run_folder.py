"""The eval run folder's states, so that a run killed at any moment (``kill -9`` included) is
finished by ``--resume`` with exactly the rows a clean run writes.

The order of writes makes every moment recognisable:

1. ``run.json`` is written first, with ``"state": "running"``, the configuration and the dataset's
   content fingerprint: from then on the folder names the run it holds.
2. ``.progress.jsonl`` is (re)written whole under a temporary name and renamed: its header line
   (configuration and fingerprint) and the rows an earlier attempt finished; then each finished
   task's rows are appended, flushed and synced, as they come (no row is held in memory).
3. At the end ``results.jsonl`` (the progress file's rows sorted by task and trial: sorted pieces
   of bounded size merged, :func:`write_results`, under a temporary name, synced and renamed) and
   the reports (figures summed in the same pass, ``harness.totals``), then ``run.json`` again
   (``"state": "finished"``), then ``.progress.jsonl`` is removed.

A resume reads whichever of these exist, a line at a time (:func:`earlier_run`): an empty or cut
progress file (a line cut short by the kill is dropped and its task runs again), results without
a finished ``run.json``, a finished run (its rows are kept, nothing runs again). A folder holding
an earlier run is only written with ``--resume`` (same configuration) or ``--overwrite``.
"""

from __future__ import annotations

import heapq
import json
import os
import stat
import time
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from backends.batch import ResultLog, iter_lines, json_line, sync_folder, write_all, write_synced
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


class RunFolderError(ValueError):
    """The output folder cannot take this run; the message is one line naming it."""


def _temporary_name(name: str) -> bool:
    """The name of a temporary file an atomic write of one of the run's files (or the folder's
    write probe) makes: ``.run.json.<pid>.tmp``."""
    return is_write_probe(name) or (
        name.startswith(".") and name.endswith(".tmp") and any(name.startswith(f".{f}.") for f in _RUN_FILES))


def _leftover(entry: os.DirEntry) -> bool:
    """A temporary file an interrupted atomic write left: a regular file, never a folder or a link
    of that name."""
    return entry.is_file(follow_symlinks=False) and _temporary_name(entry.name)


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
    planted = [e.name for e in entries if e.name in foreign and _temporary_name(e.name)]
    if planted:  # a link (or a folder) under a temporary file's name: named as what it is
        kind = "a symlink" if os.path.islink(os.path.join(out, planted[0])) else "not a regular file"
        raise RunFolderError(f"--out {label}: {printable(planted[0])} has a temporary file's name but is {kind}; "
                             "refused (remove it)")
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


MAX_LINE_BYTES = 64 * 1024 * 1024  # one result row read back (a longer line is treated as cut short)


def _items(path: Path, label: str) -> Iterator[Any]:
    """The JSON values of a log's lines, one at a time (None for a line cut short or too long);
    nothing when the file is absent or not a regular file (then what it held is redone)."""
    try:
        for line in iter_lines(path, label, max_line=MAX_LINE_BYTES):
            yield None if line is None else json_line(line.decode("utf-8", "replace"))
    except UntrustedInputError:
        return


class Earlier:
    """What an earlier attempt in the folder finished, read in two streaming passes over its
    lines (the progress file's, or a finished run's ``results.jsonl`` and skipped tasks), never
    held: ``done`` holds the ids of the tasks with every trial's row and those skipped for good
    (runs ended by an endpoint's or a budget's error, "error: ...", run again); :meth:`items`
    reads their lines again (the last row of each task and trial, the last skip of a task)."""

    def __init__(self, source: Callable[[], Iterator[Any]], trials: int) -> None:
        self.source, self.trials = source, trials
        self.last_row: dict[tuple[str, int], int] = {}  # (task, trial): the line of its last row
        self.last_skip: dict[str, int] = {}
        trials_seen: dict[str, int] = {}
        for n, item in enumerate(source()):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            if "skipped" in item:
                if isinstance(item["skipped"], str) and not item["skipped"].startswith("error:"):
                    self.last_skip[item["id"]] = n
            elif isinstance(item.get("trial"), int) and not str(item.get("error") or "").startswith("error:"):
                key = (item["id"], item["trial"])
                if key not in self.last_row and 1 <= item["trial"] <= trials:
                    trials_seen[item["id"]] = trials_seen.get(item["id"], 0) + 1
                self.last_row[key] = n
        self.complete = {task for task, count in trials_seen.items() if count >= trials}
        self.done = self.complete | set(self.last_skip)

    def items(self, wanted: Callable[[str], bool]) -> Iterator[dict[str, Any]]:
        """The finished tasks' lines, of the tasks ``wanted`` keeps: rows, and ``{"id", "skipped"}``."""
        for n, item in enumerate(self.source()):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not wanted(item["id"]):
                continue
            task = item["id"]
            if "skipped" in item:
                if task not in self.complete and self.last_skip.get(task) == n:
                    yield {"id": task, "skipped": item["skipped"]}
            elif (task in self.complete and isinstance(item.get("trial"), int) and 1 <= item["trial"] <= self.trials
                  and self.last_row.get((task, item["trial"])) == n):
                yield item


def earlier_run(out: Path, header: dict[str, Any], trials: int,
                same_run: Callable[[dict[str, Any]], bool]) -> Earlier:
    """What an earlier attempt in ``out`` finished (:class:`Earlier`). Raises RunFolderError when
    the folder holds a run with another configuration."""
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
    progress, progress_label = out / PROGRESS, f"{label}/{PROGRESS}"
    first = next(_items(progress, progress_label), None)
    if isinstance(first, dict) and "header" in first:
        if first != header:
            raise refusal

        def logged() -> Iterator[Any]:
            lines = _items(progress, progress_label)
            next(lines, None)  # the header
            return lines

        return Earlier(logged, trials)
    if run is not None and run.get("state", FINISHED) == FINISHED:
        skipped = [{"id": s.get("id"), "skipped": s.get("error")} for s in run.get("skipped") or []
                   if isinstance(s, dict)]
        return Earlier(lambda: chain(_items(out / RESULTS, f"{label}/{RESULTS}"), iter(skipped)), trials)
    # nothing finished yet (an empty or cut progress file), or nothing says which run: start over
    return Earlier(lambda: iter(()), trials)


class ProgressLog(ResultLog):
    """``.progress.jsonl``: the header and the kept lines written whole (streamed to a temporary
    file, then renamed), then each finished task's lines appended, flushed and synced
    (``backends.batch.ResultLog``)."""

    def __init__(self, out: Path, header: dict[str, Any], kept: Iterable[dict[str, Any]]) -> None:
        super().__init__(out / PROGRESS, start=chain([header], kept), sync=True, ensure_ascii=False)


# -- results.jsonl: the progress file's rows sorted, by a merge of bounded sorted pieces -----------

SORT_PIECE_BYTES = 4 * 1024 * 1024  # rows sorted in memory at once (a piece): memory flat in the run's size
MERGE_FAN_IN = 64  # pieces merged at once (more are merged in rounds)


def _piece_name(out: Path, n: int) -> Path:
    """A sorted piece's file: named as an interrupted write of results.jsonl is, so that the next
    run that holds the folder removes it when a kill left it (``remove_leftovers``)."""
    return out / f".{RESULTS}.piece{n}.{os.getpid()}.tmp"


def _write_piece(path: Path, lines: Iterable[bytes]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, lines)
    finally:
        os.close(fd)


def _keyed(key: tuple[str, int], line: bytes) -> bytes:
    """A piece's line: the sort key as JSON (which holds no raw tab), a tab, the row's line."""
    return json.dumps(key).encode("utf-8") + b"\t" + line + b"\n"


def _read_piece(path: Path) -> Iterator[tuple[tuple[str, int], bytes]]:
    for keyed in iter_lines(path, max_line=MAX_LINE_BYTES + 4096):
        assert keyed is not None  # written here, from lines within the limit
        key, line = keyed.split(b"\t", 1)
        task, trial = json.loads(key)
        yield (task, trial), line


def _sorted_pieces(out: Path, rows: Iterable[tuple[tuple[str, int], bytes]], pieces: list[Path]) -> list[Any]:
    """Cut ``rows`` into pieces of about ``SORT_PIECE_BYTES``, each sorted (stably); every piece but
    the last written to a file (named in ``pieces``, for the caller to remove); what to merge."""
    held: list[tuple[tuple[str, int], bytes]] = []
    size = 0
    sources: list[Any] = []
    for key, line in rows:
        held.append((key, line))
        size += len(line) + 200  # and what holding it costs (the key, the tuple, the list's slot)
        if size >= SORT_PIECE_BYTES:
            held.sort(key=lambda item: item[0])
            pieces.append(_piece_name(out, len(pieces)))
            _write_piece(pieces[-1], (_keyed(k, v) for k, v in held))
            sources.append(pieces[-1])
            held, size = [], 0
    held.sort(key=lambda item: item[0])
    while len(sources) >= MERGE_FAN_IN:  # too many files to read at once: merge some into one
        merged = _piece_name(out, len(pieces))
        _write_piece(merged, (_keyed(k, v) for k, v in _merge(sources[:MERGE_FAN_IN])))
        pieces.append(merged)
        sources = [merged, *sources[MERGE_FAN_IN:]]
    return [*sources, held]


def _merge(sources: list[Any]) -> Iterator[tuple[tuple[str, int], bytes]]:
    """The rows of sorted pieces (files, or a list held), merged in order; equal keys in the
    pieces' order (the order they were written in)."""
    return heapq.merge(*(iter(s) if isinstance(s, list) else _read_piece(s) for s in sources),
                       key=lambda item: item[0])


def _progress_rows(out: Path) -> Iterator[tuple[tuple[str, int], bytes]]:
    """The result rows of the progress file, keyed by task and trial, each as its line was written
    (``json.dumps(row, ensure_ascii=False)``: the bytes results.jsonl holds)."""
    try:
        for line in iter_lines(out / PROGRESS, f"{printable(out)}/{PROGRESS}", max_line=MAX_LINE_BYTES):
            if line is None:
                continue
            try:
                text, plain = line.decode("utf-8"), True
            except UnicodeDecodeError:  # not this program's writing: the row as its text reads
                text, plain = line.decode("utf-8", "replace"), False
            item = json_line(text)
            if isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("trial"), int) \
                    and "skipped" not in item and "header" not in item:
                yield (item["id"], item["trial"]), (line if plain else json.dumps(item, ensure_ascii=False).encode())
    except UntrustedInputError:
        return


def write_results(out: Path, on_row: Callable[[dict[str, Any]], None]) -> int:
    """``results.jsonl``: the progress file's rows sorted by task and trial (the order and the
    bytes a run that held every row writes), through a temporary file synced and renamed; each row
    handed to ``on_row`` in that order. Sorted in pieces of ``SORT_PIECE_BYTES`` merged from files,
    so that what is held does not grow with the run. How many rows."""
    pieces: list[Path] = []
    target = out / RESULTS
    tmp = out / f".{RESULTS}.{os.getpid()}.tmp"
    count = 0
    try:
        sources = _sorted_pieces(out, _progress_rows(out), pieces)

        def lines() -> Iterator[bytes]:
            nonlocal count
            for _, line in _merge(sources):
                count += 1
                on_row(json.loads(line))
                yield line + b"\n"

        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            write_all(fd, lines())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        sync_folder(out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        for piece in pieces:
            piece.unlink(missing_ok=True)
    return count


def read_results(out: Path) -> Iterator[dict[str, Any]]:
    """A run's ``results.jsonl`` rows, one at a time (a line that is no JSON object is left out)."""
    for item in _items(out / RESULTS, f"{printable(out)}/{RESULTS}"):
        if isinstance(item, dict):
            yield item


def now_text() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")
