"""``homer export --officebench``: a dataset written in OfficeBench's task layout, scorable there.

Each task becomes ``tasks/<apps>-<k>/`` with ``subtasks/0.json``, ``testbed/`` and, when the
task has one, ``reference/``. Its criteria are rewritten into OfficeBench's nine functions
(``office_env.officebench_translate``); a task with a criterion that cannot be carried over is
left out with a warning naming it, or kept without that criterion under ``lossy``.

An export is checked before it counts: the translated criteria must fail on the exported,
untouched testbed and pass on its solved state (the task's oracle plan replayed, or its expected
files applied) when the task has one. A translation that loses that is reported as lost too,
so an exported task is never easier or harder than the task it came from without a word said.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from backends.dataset import LoadedTask, iter_tasks
from office_env import OfficeError, Workspace, default_registry, evaluate_criteria
from office_env.evaluation.reference_state import apply_reference
from office_env.officebench import write_task_folder
from office_env.officebench_translate import to_officebench
from office_env.untrusted import printable
from verifier.gates import schema_gate


@dataclass
class ExportSummary:
    written: int = 0
    skipped: list[str] = field(default_factory=list)   # tasks that could not be exported: errors
    left_out: list[str] = field(default_factory=list)  # tasks with lost criteria, not exported
    lossy: list[str] = field(default_factory=list)     # tasks exported without some criteria


def _subtask(record: dict[str, Any], evaluation: list[dict[str, Any]]) -> dict[str, Any]:
    clock = datetime.strptime(record["now"]["time"], "%H:%M").strftime("%I:%M %p")
    return {"username": record["user"]["username"], "date": record["now"]["date"],
            "weekday": record["now"]["weekday"], "time": clock, "task": record["description"],
            "evaluation": evaluation}


def _solved_state(task: LoadedTask, testbed: Path, reference: Path | None, scratch: Path,
                  now: datetime) -> Workspace | None:
    """The exported testbed with the task solved: its oracle replayed, else its expected files
    applied; ``None`` when the task has neither."""
    record = task.record
    ws = Workspace(testbed, now=now).copy_to(scratch / "solved")
    if record.get("oracle"):
        default_registry().run(ws, [(c["tool"], c["args"]) for c in record["oracle"]])
        return ws
    return ws if apply_reference(ws, record["evaluation"], reference, testbed) else None


def _check_export(task: LoadedTask, criteria: list[dict[str, Any]], folder: Path, now: datetime) -> str | None:
    """Why the exported task does not keep the original's verdicts, or ``None``."""
    testbed, reference = folder / "testbed", folder / "reference"
    reference = reference if reference.is_dir() else None
    scratch = Path(tempfile.mkdtemp(prefix="export-check-"))
    try:
        untouched = Workspace(testbed, now=now).copy_to(scratch / "untouched")
        if evaluate_criteria(untouched, criteria, reference, initial_dir=testbed).passed:
            return "the translated criteria already pass on the untouched testbed"
        solved = _solved_state(task, testbed, reference, scratch, now)
        if solved is None:
            return None
        original = evaluate_criteria(solved, task.record["evaluation"], reference, initial_dir=testbed)
        report = evaluate_criteria(solved, criteria, reference, initial_dir=testbed)
        if original.passed and not report.passed:
            return "the solved state fails the translated criteria: " + "; ".join(r.reason for r in report.failures())[:300]
        return None
    except OfficeError as exc:
        return f"cannot be checked: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def export_officebench(dataset_dir: Path, out: Path, *, lossy: bool = False) -> ExportSummary:
    """Export every usable task of ``dataset_dir`` into ``out/tasks``; see the module docstring."""
    summary = ExportSummary()
    counters: dict[int, int] = {}
    for task in iter_tasks(dataset_dir):
        if task.record is None:
            summary.skipped.append(printable(f"{task.id}: {task.error}"))
            continue
        record = task.record
        schema = schema_gate(record)  # app_count, now and user must be what the layout needs
        if not schema.passed:
            summary.skipped.append(printable(f"{task.id}: {task.folder / 'task.json'}: {schema.detail}"))
            continue
        translation = to_officebench(record["evaluation"])
        lost = list(translation.lost)
        if lost and (not lossy or not translation.criteria):
            hint = " (--lossy keeps it without them)" if translation.criteria else ""
            summary.left_out.append(printable(f"{task.id}: " + "; ".join(lost) + hint))
            continue
        apps = record["app_count"]
        folder = out / "tasks" / f"{apps}-{counters.get(apps, 0) + 1}"
        try:
            now = datetime.strptime(f"{record['now']['date']} {record['now']['time']}", "%Y-%m-%d %H:%M")
            write_task_folder(folder, [_subtask(record, translation.criteria)], task.testbed, task.reference)
        except (ValueError, OSError, OfficeError) as exc:
            summary.skipped.append(printable(f"{task.id}: {exc}"))
            continue
        problem = _check_export(task, translation.criteria, folder, now)
        if problem is not None:
            shutil.rmtree(folder, ignore_errors=True)
            summary.left_out.append(printable(f"{task.id}: {problem}"))
            continue
        if lost:
            summary.lossy.append(printable(f"{task.id} ({folder.name}): " + "; ".join(lost)))
        counters[apps] = counters.get(apps, 0) + 1
        summary.written += 1
    return summary
