"""Import OfficeBench task folders: ``tasks/<apps>-<k>/subtasks/<i>.json`` + ``testbed/``.

Every subtask is validated (fields, date and time formats, the criteria list against the
catalog, expected files present in ``reference/``); a bad one is reported with its file and
field and the rest still load. The number of apps comes from the folder name's prefix.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from office_env.evaluation.catalog import Problem, validate_criteria
from office_env.evaluation.checks import reference_tail

FOLDER_RE = re.compile(r"^(\d+)-(\d+)$")
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIME_FORMATS = ("%I:%M %p", "%I:%M%p", "%H:%M", "%H:%M:%S", "%I:%M:%S %p")

SUBTASK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "OfficeBench subtask",
    "type": "object",
    "properties": {
        "username": {"type": "string", "minLength": 1},
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "weekday": {"type": "string"},
        "time": {"type": "string", "minLength": 1},
        "task": {"type": "string", "minLength": 1},
        "evaluation": {"type": "array"},
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

    @property
    def now(self) -> datetime:
        return datetime.combine(datetime.strptime(self.date, "%Y-%m-%d").date(), parse_clock(self.time).time())

    def to_subtask_json(self) -> dict[str, Any]:
        return {"username": self.username, "date": self.date, "weekday": self.weekday, "time": self.time,
                "task": self.instruction, "evaluation": self.evaluation}


@dataclass
class LoadReport:
    tasks: list[SeedTask] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
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
    if (root / "subtasks").is_dir():
        match = FOLDER_RE.match(root.name)
        if not match:
            report.problems.append(Problem("folder", "task folder name must look like <apps>-<k>, e.g. 2-15", str(root)))
            return []
        return [(root, int(match.group(1)), int(match.group(2)))]
    folders = []
    for child in sorted(root.iterdir()):
        if not child.is_dir() or child.name.startswith("."):
            continue
        match = FOLDER_RE.match(child.name)
        if not match:
            report.problems.append(Problem("folder", "task folder name must look like <apps>-<k>, e.g. 2-15", str(child)))
            continue
        folders.append((child, int(match.group(1)), int(match.group(2))))
    folders.sort(key=lambda item: (item[1], item[2]))
    return folders


def _subtask_key(path: Path) -> tuple[int, str]:
    return (int(path.stem), "") if path.stem.isdigit() else (10**9, path.stem)


def load_officebench(path: str | Path) -> LoadReport:
    """Load every subtask under ``path``; problems are collected, never raised."""
    report = LoadReport()
    root = tasks_root(Path(path))
    if not root.is_dir():
        report.problems.append(Problem("path", "is not a folder", str(path)))
        return report
    for folder, app_count, _ in _task_folders(root, report):
        report.folders += 1
        subtask_dir = folder / "subtasks"
        testbed = folder / "testbed"
        if not subtask_dir.is_dir():
            report.problems.append(Problem("subtasks", "folder is missing", str(folder)))
            continue
        if not testbed.is_dir():
            report.problems.append(Problem("testbed", "folder is missing", str(folder)))
            continue
        reference = folder / "reference" if (folder / "reference").is_dir() else None
        for file in sorted(subtask_dir.glob("*.json"), key=_subtask_key):
            report.subtask_files += 1
            task, problems = load_subtask(file, app_count, testbed, reference)
            report.problems.extend(problems)
            if task is not None:
                report.tasks.append(task)
    return report


def load_subtask(file: Path, app_count: int, testbed: Path, reference: Path | None) -> tuple[SeedTask | None, list[Problem]]:
    label = str(file)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return None, [Problem("file", "is not UTF-8 text", label)]
    except json.JSONDecodeError as exc:
        return None, [Problem("json", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", label)]
    problems = [
        Problem(".".join(str(p) for p in e.absolute_path) or "(top level)", e.message, label)
        for e in _SUBTASK_VALIDATOR.iter_errors(data)
    ]
    if problems:
        return None, problems
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
    problems.extend(validate_criteria(data["evaluation"], file=label))
    if not problems:
        problems.extend(_reference_problems(data["evaluation"], reference, label))
    if problems:
        return None, problems
    folder = file.parent.parent
    return SeedTask(
        id=f"{folder.name}/{file.stem}",
        app_count=app_count,
        username=data["username"],
        date=data["date"],
        weekday=data["weekday"],
        time=data["time"],
        instruction=data["task"],
        evaluation=data["evaluation"],
        folder=folder,
        subtask_file=file,
        testbed=testbed,
        reference=reference,
    ), []


def _reference_problems(evaluation: list[dict[str, Any]], reference: Path | None, label: str) -> list[Problem]:
    """Expected files that point into reference/ must exist there."""
    problems = []
    for index, item in enumerate(evaluation):
        expected = item["args"].get("expected_file")
        if not expected:
            continue
        tail = reference_tail(expected)
        if tail is None:
            continue
        where = f"evaluation[{index}].args.expected_file"
        if reference is None:
            problems.append(Problem(where, f"{expected!r} needs a reference/ folder next to testbed/", label))
        elif not reference.joinpath(*tail).is_file():
            problems.append(Problem(where, f"{'/'.join(tail)} is missing from reference/", label))
    return problems
