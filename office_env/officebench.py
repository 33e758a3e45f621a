"""Import OfficeBench task folders: ``tasks/<apps>-<k>/subtasks/<i>.json`` + ``testbed/``.

Every subtask is validated (fields, date and time formats, the criteria list against the
catalog); a bad one is reported with its file and field and the rest still load. Expected
files missing from ``reference/`` are warnings: the task loads, and that criterion fails when
scored. A folder without ``testbed/`` (git keeps no empty folders) is an empty office. The
number of apps comes from the folder name's prefix.

Seed folders come from strangers, so they are opened as untrusted trees
(:mod:`office_env.untrusted`) before anything in them is read. A task folder, ``subtasks/``,
``testbed/`` or ``reference/`` that is a symlink, or a testbed or reference holding a symlink, a
special file, a hard link to a file outside it, a badly named file or more than the tree limits,
is one problem naming that path, and none of the folder's subtasks load: scoring against a
partial testbed would be wrong. A subtask file is read with the JSON limits (size, nesting);
one with an odd name (control characters, bytes that are not UTF-8, ...) or that is not a
regular file is named and skipped, and the others load. :func:`write_task_folder` copies a
testbed the same way, so an export never holds a link.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from office_env.evaluation.catalog import Problem, validate_criteria
from office_env.evaluation.checks import CHECKS
from office_env.evaluation.paths import external_target
from office_env.limits import (
    MAX_DATASET_BYTES,
    MAX_SCHEMA_ERRORS,
    MAX_SEED_CRITERIA,
    MAX_SEED_FIELD_CHARS,
    MAX_SEED_INSTRUCTION_CHARS,
    MiB,
)
from office_env.untrusted import (
    UntrustedInputError,
    copy_tree,
    entry_problem,
    is_real_dir,
    load_json,
    name_problem,
    printable,
    scan_tree,
)
from office_env.workspace import Workspace

FOLDER_RE = re.compile(r"^(\d+)-(\d+)$", re.ASCII)
SUBTASK_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.json$", re.ASCII)  # the stem goes into task ids
MAX_PROBLEMS_PER_TREE = 5  # refused entries named one by one per testbed / reference
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIME_FORMATS = ("%I:%M %p", "%I:%M%p", "%H:%M", "%H:%M:%S", "%I:%M:%S %p")

SUBTASK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "OfficeBench subtask",
    "type": "object",
    "properties": {
        "username": {"type": "string", "minLength": 1, "maxLength": MAX_SEED_FIELD_CHARS},
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "maxLength": MAX_SEED_FIELD_CHARS},
        "weekday": {"type": "string", "maxLength": MAX_SEED_FIELD_CHARS},
        "time": {"type": "string", "minLength": 1, "maxLength": MAX_SEED_FIELD_CHARS},
        "task": {"type": "string", "minLength": 1, "maxLength": MAX_SEED_INSTRUCTION_CHARS},
        "evaluation": {"type": "array", "maxItems": MAX_SEED_CRITERIA},
    },
    "required": ["username", "date", "weekday", "time", "task", "evaluation"],
}
_SUBTASK_VALIDATOR = Draft202012Validator(SUBTASK_SCHEMA)


@dataclass(frozen=True)
class SeedTask:
    """One OfficeBench subtask, validated and located on disk."""

    id: str
    app_count: int
    username: str
    date: str
    weekday: str
    time: str
    instruction: str
    evaluation: list[dict[str, Any]]
    folder: Path
    subtask_file: Path
    testbed: Path
    reference: Path | None
    misplaced: tuple[int, ...] = ()  # criteria whose argument sat beside ``args`` (moved in on load)

    @property
    def now(self) -> datetime:
        return datetime.combine(datetime.strptime(self.date, "%Y-%m-%d").date(), parse_clock(self.time).time())

    def copy_testbed(self, dest: Path) -> Workspace:
        """A scratch copy of the initial testbed (an absent testbed/ is an empty office)."""
        if self.testbed.is_dir():
            return Workspace(self.testbed, now=self.now).copy_to(dest)
        dest.mkdir(parents=True)
        return Workspace(dest, now=self.now)

    def to_subtask_json(self) -> dict[str, Any]:
        return {"username": self.username, "date": self.date, "weekday": self.weekday, "time": self.time,
                "task": self.instruction, "evaluation": self.evaluation}


@dataclass
class LoadReport:
    tasks: list[SeedTask] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    folders: int = 0
    subtask_files: int = 0

    def by_app_count(self) -> dict[int, int]:
        return dict(sorted(Counter(t.app_count for t in self.tasks).items()))

    @property
    def ok(self) -> bool:
        return not self.problems


def parse_clock(text: str) -> datetime:
    for fmt in TIME_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    raise ValueError(f"{text!r} is not a time like '10:00 AM' or '14:30'")


def tasks_root(path: Path) -> Path:
    """Accept a checkout (with tasks/), the tasks/ folder itself, or one task folder."""
    if (path / "tasks").is_dir():
        return path / "tasks"
    return path


def _task_folders(root: Path, report: LoadReport) -> list[tuple[Path, int, int]]:
    if (root / "subtasks").exists() or (root / "subtasks").is_symlink():
        match = FOLDER_RE.match(root.name)
        if not match:
            report.problems.append(Problem("folder", "task folder name must look like <apps>-<k>, e.g. 2-15",
                                           printable(root)))
            return []
        return [(root, int(match.group(1)), int(match.group(2)))]
    folders = []
    try:
        children = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        report.problems.append(Problem("path", f"cannot be read ({exc.strerror or exc.__class__.__name__})",
                                       printable(root)))
        return []
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_symlink():
            if child.is_dir():  # a linked task folder; a linked file here is ignored like any file
                report.problems.append(Problem("folder", "is a symlink; refused", printable(child.path)))
            continue
        if not child.is_dir(follow_symlinks=False):
            continue
        match = FOLDER_RE.match(child.name)
        if not match:
            report.problems.append(Problem("folder", "task folder name must look like <apps>-<k>, e.g. 2-15",
                                           printable(child.path)))
            continue
        folders.append((Path(child.path), int(match.group(1)), int(match.group(2))))
    folders.sort(key=lambda item: (item[1], item[2]))
    return folders


def _subtask_key(path: Path) -> tuple[int, str]:
    stem = path.stem
    return (int(stem), "") if stem.isascii() and stem.isdigit() else (10**9, stem)


def _subtask_files(subtask_dir: Path, report: LoadReport) -> list[Path]:
    """The ``*.json`` regular files of ``subtasks/``; odd names and non-files are problems."""
    files = []
    try:
        entries = list(os.scandir(subtask_dir))
    except OSError as exc:
        report.problems.append(Problem("subtasks", f"cannot be read ({exc.strerror or exc.__class__.__name__})",
                                       printable(subtask_dir)))
        return []
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        label = printable(entry.path)
        if not SUBTASK_NAME_RE.match(entry.name):
            odd = name_problem(entry.name) or "use ASCII letters, digits, '.', '_' and '-', like 0.json"
            report.subtask_files += 1
            report.problems.append(Problem("file", f"odd file name ({odd}); skipped", label))
            continue
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            report.subtask_files += 1
            kind = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
            report.problems.append(Problem("file", f"is {kind}; skipped", label))
            continue
        files.append(Path(entry.path))
    return sorted(files, key=_subtask_key)


def _folder_problems(folder: Path) -> tuple[list[Problem], int]:
    """What makes a seed folder unusable: a symlinked subtasks/, testbed/ or reference/, or a
    refused entry anywhere in testbed/ or reference/ (named, up to a few per tree); and the bytes
    of its testbed and reference files."""
    problems = []
    size = 0
    for name in ("subtasks", "testbed", "reference"):
        path = folder / name
        problem = entry_problem(path, folder=True)
        if problem is not None:
            problems.append(Problem(name, f"{problem}; the task folder is skipped", printable(path)))
            continue
        if name == "subtasks":
            continue
        tree = scan_tree(path)
        size += tree.total_bytes
        if tree.ok or tree.refused:  # refused here only when missing: an absent testbed is an empty office
            continue
        for skipped in tree.skipped[:MAX_PROBLEMS_PER_TREE]:
            problems.append(Problem(name, f"{skipped.reason}; the task folder is skipped",
                                    printable(path / skipped.path)))
        more = tree.skipped_count - MAX_PROBLEMS_PER_TREE
        if more > 0:
            problems.append(Problem(name, f"{more} more refused entr{'y' if more == 1 else 'ies'}", printable(path)))
    return problems, size


def load_officebench(path: str | Path) -> LoadReport:
    """Load every subtask under ``path``; problems are collected, never raised."""
    report = LoadReport()
    root = tasks_root(Path(path))
    if not root.is_dir():
        report.problems.append(Problem("path", "is not a folder", str(path)))
        return report
    folders = _task_folders(root, report)
    if not folders and not report.problems:
        report.problems.append(Problem("tasks", "no task folders (<apps>-<k>/subtasks/*.json) found", str(path)))
    total = 0
    for folder, app_count, _ in folders:
        report.folders += 1
        subtask_dir = folder / "subtasks"
        testbed = folder / "testbed"
        unusable, size = _folder_problems(folder)
        total += size
        if not unusable and total > MAX_DATASET_BYTES:
            unusable = [Problem("testbed", f"the seed folders' testbeds pass {MAX_DATASET_BYTES // MiB:,} MiB in total "
                                           "here; the task folder is skipped", printable(folder))]
        if unusable:
            report.problems.extend(unusable)
            if is_real_dir(subtask_dir):
                report.subtask_files += sum(1 for _ in subtask_dir.glob("*.json"))
            continue
        if not subtask_dir.is_dir():
            report.problems.append(Problem("subtasks", "folder is missing", printable(folder)))
            continue
        reference = folder / "reference" if is_real_dir(folder / "reference") else None
        for file in _subtask_files(subtask_dir, report):
            report.subtask_files += 1
            task, problems, warnings = load_subtask(file, app_count, testbed, reference)
            report.problems.extend(problems)
            report.warnings.extend(warnings)
            if task is not None:
                report.tasks.append(task)
    return report


def load_subtask(file: Path, app_count: int, testbed: Path, reference: Path | None
                 ) -> tuple[SeedTask | None, list[Problem], list[Problem]]:
    """One subtask file -> (task or None, problems, warnings)."""
    label = printable(file)
    try:
        data = load_json(file, label)
    except UntrustedInputError as exc:
        return None, [Problem(exc.kind, exc.reason, label)], []
    problems = _schema_problems(data, label)
    if problems:
        return None, problems, []
    try:
        datetime.strptime(data["date"], "%Y-%m-%d")
    except ValueError:
        problems.append(Problem("date", f"{data['date']!r} is not a real date (YYYY-MM-DD)", label))
    try:
        parse_clock(data["time"])
    except ValueError as exc:
        problems.append(Problem("time", str(exc), label))
    if data["weekday"].strip().capitalize() not in WEEKDAYS:
        problems.append(Problem("weekday", f"{data['weekday']!r} is not a weekday name", label))
    evaluation = normalize_criteria(data["evaluation"])
    problems.extend(validate_criteria(evaluation, file=label))
    if problems:
        return None, problems, []
    folder = file.parent.parent
    task = SeedTask(
        id=f"{folder.name}/{file.stem}",
        app_count=app_count,
        username=data["username"],
        date=data["date"],
        weekday=data["weekday"],
        time=data["time"],
        instruction=data["task"].strip(),
        evaluation=evaluation,
        folder=folder,
        subtask_file=file,
        testbed=testbed,
        reference=reference,
        misplaced=misplaced_criteria(data["evaluation"]),
    )
    return task, [], _reference_warnings(evaluation, reference, label)


def _schema_problems(data: Any, label: str) -> list[Problem]:
    """The first few schema problems (validation stops there: a file with 150,000 bad criteria
    costs one bounded error, not a list of them)."""
    return [_schema_problem(e, label) for e in islice(_SUBTASK_VALIDATOR.iter_errors(data), MAX_SCHEMA_ERRORS)]


def _schema_problem(error: Any, label: str) -> Problem:
    """Name the field: a missing one by its own name, others by their path; an over-long value
    is described by its size, never quoted."""
    if error.validator == "required":
        missing = next((k for k in error.validator_value if k in error.message), None)
        if missing:
            return Problem(missing, "is missing", label)
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "maxLength":
        return Problem(where, f"is {len(error.instance):,} characters long, over the limit of "
                              f"{error.validator_value:,}", label)
    if error.validator == "maxItems":
        return Problem(where, f"holds {len(error.instance):,} items, over the limit of {error.validator_value:,}",
                       label)
    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    return Problem(where, message, label)


def misplaced_criteria(items: Any) -> tuple[int, ...]:
    """Indices of the criteria :func:`normalize_criteria` moves an argument into ``args`` for:
    OfficeBench's evaluator reads it from ``args`` and fails them (``KeyError``)."""
    if not isinstance(items, list):
        return ()
    out = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("args"), dict) and item.get("function") in CHECKS:
            known = CHECKS[item["function"]].args_schema["properties"]
            if any(k in known and k not in item["args"] for k in item if k not in ("function", "args")):
                out.append(index)
    return tuple(out)


def normalize_criteria(items: Any) -> Any:
    """OfficeBench quirk: some items put an argument (``file``) beside ``function`` instead of
    inside ``args``. Move such a key into ``args`` when the function takes it and ``args`` lacks
    it; drop it when ``args`` already says the same thing. Anything else is left for validation."""
    if not isinstance(items, list):
        return items
    fixed = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("args"), dict) and item.get("function") in CHECKS:
            extra = {k: v for k, v in item.items() if k not in ("function", "args")}
            if extra:
                known = CHECKS[item["function"]].args_schema["properties"]
                args = dict(item["args"])
                for key, value in extra.items():
                    if key in known and key not in args:
                        args[key] = value
                item = {"function": item["function"], "args": args}
        fixed.append(item)
    return fixed


def _reference_warnings(evaluation: list[dict[str, Any]], reference: Path | None, label: str) -> list[Problem]:
    """Expected files that point into reference/ should exist there; the task still loads (its
    criterion will fail with that reason when scored)."""
    warnings = []
    for index, item in enumerate(evaluation):
        for key, value in item["args"].items():
            if key not in CHECKS[item["function"]].path_args:
                continue
            target = external_target(value, key)
            if target is None or target.place != "reference":
                continue
            where = f"evaluation[{index}].args.{key}"
            if reference is None:
                warnings.append(Problem(where, f"{value!r} needs a reference/ folder next to testbed/", label))
            elif not reference.joinpath(*target.parts).is_file():
                warnings.append(Problem(where, f"{'/'.join(target.parts)} is missing from reference/", label))
    return warnings


def write_task_folder(folder: Path, subtasks: list[dict[str, Any]], testbed: Path,
                      reference: Path | None = None) -> None:
    """Write one OfficeBench task folder: ``subtasks/<i>.json``, a copy of ``testbed/`` and, when
    given, of ``reference/`` (the expected files exact-match criteria need).

    Every subtask is validated and the testbed copied (as an untrusted tree: refused paths raise
    ``UntrustedInputError``, an ``OfficeError`` naming the path) before any subtask is written,
    and a failure leaves no folder behind; the copy never holds a link."""
    for subtask in subtasks:
        problems = _schema_problems(subtask, str(folder))
        problems += validate_criteria(subtask.get("evaluation"), file=str(folder))
        if problems:
            raise ValueError("; ".join(str(p) for p in problems))
    created = not folder.exists()
    try:
        copy_tree(testbed, folder / "testbed")
        if reference is not None and reference.is_dir():
            copy_tree(reference, folder / "reference")
        for index, subtask in enumerate(subtasks):
            path = folder / "subtasks" / f"{index}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(subtask, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except BaseException:
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise
