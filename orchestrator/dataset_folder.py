"""A dataset folder as a build or regeneration finds it: refused, resumed or repaired.

``homer build`` and ``homer regenerate`` share these: the refusal of a folder that is not empty
(unless resuming one built with the same configuration hash), the outcomes an interrupted run
recorded (``attempts.jsonl`` and ``.progress.jsonl``), and the repair of what an interruption
left behind. The batch itself runs in ``backends.batch``.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path
from typing import Any

from backends.batch import json_line, read_lines
from backends.dataset_reader import ensure_writable_folder, is_write_probe
from backends.folder_lock import LOCK_NAME
from office_env.untrusted import UntrustedInputError, load_json, read_file
from orchestrator import dataset_writer as dataset

MAX_LOG_BYTES = 512 * 1024 * 1024  # attempts.jsonl, .progress.jsonl and index.jsonl read back on resume


class BuildError(Exception):
    """Bad build input (the message names the option or folder)."""


def previous_build(out: Path) -> dict[str, Any] | None:
    """The folder's ``build.json`` (None when absent or unreadable: nothing to resume from)."""
    try:
        previous = load_json(out / dataset.BUILD)
    except UntrustedInputError:
        return None
    return previous if isinstance(previous, dict) else None


def drop_category(reason: str) -> str:
    """The part of a drop reason before its first colon: ``verifier``, ``gate schema``, ..."""
    return reason.split(":", 1)[0].strip() or "unknown"



_FLAGS = {"utterances_per_day": "--utterances", "app_counts": "--apps", "app_weights": "--apps-weights",
          "llm_config": "--llm-config",
          "base_url": "--base-url", "cache_path": "--cache", "repair": "--repair",
          "seeds_fingerprint": "--seeds (their files)",
          "generator": "the generator version"}


def config_differences(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """What differs between a folder's ``build.json`` and this run's, as ``--flag: then -> now``."""
    out = []
    then, now = dict(previous.get("config") or {}), dict(current.get("config") or {})
    for key in ("generator", "seeds_fingerprint"):
        if key in current and key in previous:
            then[key], now[key] = previous.get(key), current.get(key)
    for key in sorted(set(then) | set(now)):
        if then.get(key) != now.get(key):
            flag = _FLAGS.get(key, "--" + key.replace("_", "-"))
            if key == "seeds_fingerprint":
                out.append(f"{flag} changed")
            else:
                out.append(f"{flag}: {then.get(key)!r} then, {now.get(key)!r} now")
    return out


_START_LEFTOVER = re.compile(rf"^\.{re.escape(dataset.BUILD)}\..+\.tmp$")


def _drop_unrecorded_start(out: Path) -> None:
    """A run killed while it proved the folder writable or wrote its first ``build.json`` leaves only
    the empty probe or that file's temporary copy (and the lock): nothing was recorded, so the
    folder counts as empty and they go."""
    if not out.is_dir() or out.is_symlink() or (out / dataset.BUILD).exists():
        return
    entries = list(out.iterdir())
    leftovers = [p for p in entries if (_START_LEFTOVER.match(p.name) or is_write_probe(p.name))
                 and p.is_file() and not p.is_symlink()]
    if leftovers and all(p.name == LOCK_NAME or p in leftovers for p in entries):
        for path in leftovers:
            path.unlink(missing_ok=True)


def check_out_folder(out: Path, digest: str, resume: bool, same_options: str = "--seed/--apps/--days",
                     current: dict[str, Any] | None = None) -> None:
    """Refuse an output folder that is not empty (unless resuming a build with the same
    configuration hash ``digest``) or not writable. ``same_options`` names the options a
    resumed run must repeat; ``current`` (the ``build.json`` this run writes) lets the refusal
    name the settings that differ."""
    build_file = out / dataset.BUILD
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {out}: exists and is not a folder")
    _drop_unrecorded_start(out)
    if out.exists() and any(p.name != LOCK_NAME for p in out.iterdir()):
        if not resume:
            raise BuildError(f"--out {out}: folder is not empty (use --resume to continue an interrupted build, "
                             "or --overwrite to replace it)")
        if not build_file.is_file():
            raise BuildError(f"--out {out}: not a homeragents build folder (no {dataset.BUILD}); cannot resume")
        try:
            previous = load_json(build_file)
        except UntrustedInputError as exc:
            raise BuildError(f"--resume: {exc}; start a new folder") from None
        if not isinstance(previous, dict):
            raise BuildError(f"--resume: {build_file}: not an object; start a new folder")
        if previous.get("config_hash") != digest:
            differ = config_differences(previous, current or {})
            which = f": {'; '.join(differ)}" if differ else f" ({previous.get('config')})"
            raise BuildError(f"--resume: {out} was built with other settings{which}; use the same {same_options} "
                             "or a new folder")
    try:
        ensure_writable_folder(out)
    except OSError as exc:
        raise BuildError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None


def read_outcomes(out: Path, resume: bool) -> dict[int, dict[str, Any]]:
    """Outcomes already recorded by an interrupted run, by attempt index (empty unless resuming);
    an accepted attempt whose task folder is gone is left out, so it is redone."""
    done: dict[int, dict[str, Any]] = {}
    for log in (out / dataset.ATTEMPTS, out / dataset.PROGRESS):
        if not resume or not log.is_file():
            continue
        # a log that is a link, a pipe or too large says nothing (None): its attempts are redone; so is
        # an attempt whose line an interruption cut short (json_line gives None)
        for line in read_lines(log, MAX_LOG_BYTES) or []:
            item = json_line(line)
            if not isinstance(item, dict) or not isinstance(item.get("index"), int):
                continue
            if (item.get("status") == "accepted"
                    and not (out / dataset.TASKS / str(item.get("id")) / "task.json").is_file()):
                continue
            if str(item.get("reason", "")).startswith("error:"):
                continue  # ran out of time or memory, or its worker died: worth another try
            done[item["index"]] = item
    return done


def repair(out: Path, done: dict[int, dict[str, Any]]) -> list[str]:
    """Bring a resumed folder back to a state its outcomes explain: remove the temporary copies of
    writes a kill cut short, staging leftovers and task folders that no recorded accepted outcome
    owns (a run killed between publishing a task and recording it, or a task folder left
    half-written). Returns what was removed, for the log."""
    removed = []
    for path in _write_leftovers(out):
        path.unlink(missing_ok=True)
        removed.append(path.relative_to(out).as_posix())
    if dataset.drop_shared_worlds(out):  # copied again from this run's worlds when a task needs one
        removed.append(f"{dataset.WORK}/{dataset.WORLDS}")
    staging = out / dataset.WORK / "staging"
    if staging.is_dir():
        for entry in staging.iterdir():
            shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)
            removed.append(f"{dataset.WORK}/staging/{entry.name}")
    owned = {str(item.get("id")) for item in done.values() if item.get("status") == "accepted"}
    tasks = out / dataset.TASKS
    if tasks.is_dir():
        for folder in sorted(tasks.iterdir()):
            if folder.name in owned and (folder / "task.json").is_file():
                continue
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)
            else:
                folder.unlink(missing_ok=True)
            removed.append(f"{dataset.TASKS}/{folder.name}")
    return removed


# a file the kill caught mid-write: ``office_env.workspace.atomic_write``'s temporary copy of one of the
# folder's own files (".build.json.0eck7ld2.tmp") or ``backends.batch.write_synced``'s (".progress.jsonl.4242.tmp"),
# never renamed into place
_WRITE_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?:[A-Za-z0-9_]{8}|\d{1,10})\.tmp$")
_ATOMIC_FILES = {"": {dataset.BUILD, dataset.ATTEMPTS, dataset.PROGRESS, "README.md", "index.jsonl"},
                 "schemas": {Path(name).name for name, _ in dataset.schema_files()}}


def _write_leftovers(out: Path) -> list[Path]:
    """The temporary copies a killed write left in the folder (regular files only, links never)."""
    found = []
    for sub, names in _ATOMIC_FILES.items():
        folder = out / sub if sub else out
        if not folder.is_dir() or folder.is_symlink():
            continue
        for entry in folder.iterdir():
            match = _WRITE_LEFTOVER.match(entry.name)
            if match and match.group("name") in names and stat.S_ISREG(entry.lstat().st_mode):
                found.append(entry)
    return sorted(found)


def is_consistent(out: Path) -> bool:
    """A finished folder whose index lines and task folders agree, with no work files left."""
    if (out / dataset.WORK).exists() or (out / dataset.PROGRESS).exists():
        return False
    try:
        lines = read_file(out / "index.jsonl", max_bytes=MAX_LOG_BYTES).decode("utf-8").splitlines()
        listed = {json.loads(line)["id"] for line in lines if line.strip()}
    except (UntrustedInputError, ValueError, KeyError, TypeError):
        return False
    tasks = out / dataset.TASKS
    present = {p.name for p in tasks.iterdir()} if tasks.is_dir() else set()
    return listed == present and all((tasks / name / "task.json").is_file() for name in present)
