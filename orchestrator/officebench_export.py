"""``homer export --officebench``: a dataset written in OfficeBench's task layout, scorable there.

Each task becomes ``tasks/<apps>-<k>/`` with ``subtasks/0.json``, ``testbed/`` and, when the
task has one, ``reference/``. Its criteria are rewritten into OfficeBench's nine functions
(``office_env.officebench_translate``); a task with a criterion that cannot be carried over is
left out with a warning naming it, or kept without that criterion under ``lossy``. A check of a
value where the output states it (``evaluate_stated_values``) has no OfficeBench form and is not
carried over; such tasks are listed as ``widened``: they pass a wrong restated value there.

An export is checked before it counts: scored by OfficeBench's rules (``--semantics officebench``),
the translated criteria must judge every state of the task as homer judges the original: the
untouched testbed, the solved state (the oracle plan replayed, or the expected files applied), the
intent-only baseline and each misreading. A translation that does not is reported as lost too, so
an exported task is never easier or harder than the task it came from without a word said.
``export.json`` maps every exported folder to its homer task id, and lists what was left out;
``README.md`` says so, and which right answers homer's checks take that OfficeBench's do not.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from backends.dataset_reader import folder_written_whole, iter_tasks, task_day_first, task_now, ticking
from backends.job_contract import no_space
from backends.task_record import TaskRecord, plan_calls
from generators.spoken_time import value_time
from office_env import OfficeError
from office_env.apps import get_app
from office_env.evaluation.officebench_semantics import evaluate_officebench
from office_env.evaluation.reference_state import apply_reference
from office_env.officebench import write_task_folder
from office_env.officebench_translate import to_officebench
from office_env.replays import Replay, replay_plan
from office_env.untrusted import printable
from orchestrator.dataset_writer import write_json
from verifier.gates import schema_gate


@dataclass
class ExportSummary:
    written: int = 0
    skipped: list[str] = field(default_factory=list)   # tasks that could not be exported: errors
    left_out: list[str] = field(default_factory=list)  # tasks with lost criteria, not exported
    lossy: list[str] = field(default_factory=list)     # tasks exported without some criteria
    widened: list[str] = field(default_factory=list)   # tasks exported without their where-stated checks
    folders: dict[str, str] = field(default_factory=dict)  # exported folder (tasks/<name>) -> homer task id


def _subtask(record: TaskRecord, evaluation: list[dict[str, Any]]) -> dict[str, Any]:
    clock = datetime.strptime(record.now.time, "%H:%M").strftime("%I:%M %p")
    return {"username": record.user.username, "date": record.now.date,
            "weekday": record.now.weekday, "time": clock, "task": record.description,
            "evaluation": evaluation}


def _states(record: TaskRecord, testbed: Path, reference: Path | None, scratch: Path,
            now: datetime) -> list[tuple[str, Replay]]:
    """The states an export must judge as the task does: untouched, solved (the oracle replayed,
    else the expected files applied), the intent-only baseline and every misreading; each on a
    copy of its own (``office_env.replays``)."""
    plans: list[tuple[str, list[dict[str, Any]]]] = [("untouched", [])]
    if record.oracle:
        plans.append(("solved", plan_calls(record.oracle)))
    if record.baseline:
        plans.append(("baseline", plan_calls(record.baseline)))
    plans += [(f"misreading {m.memory} {m.value!r}", plan_calls(m.plan)) for m in record.misreadings or []]
    out = [(name, replay_plan(testbed, plan, now, scratch, f"state-{index}"))
           for index, (name, plan) in enumerate(plans)]
    if not record.oracle:
        solved = replay_plan(testbed, [], now, scratch, "solved")
        if apply_reference(solved.workspace, record.criteria(), reference, testbed):
            out.append(("solved", solved))
    return out


def _check_export(record: TaskRecord, criteria: list[dict[str, Any]], folder: Path, now: datetime) -> str | None:
    """Why the exported task, scored by OfficeBench's rules (``--semantics officebench``), does
    not judge each of the task's states (``_states``) as homer judges the original, or ``None``.
    A task with neither an oracle plan nor expected files has no solved state: it is left out
    (nothing would show that its translation can pass)."""
    reference: Path | None
    testbed, reference = folder / "testbed", folder / "reference"
    reference = reference if reference.is_dir() else None
    scratch = Path(tempfile.mkdtemp(prefix="export-check-"))
    try:
        states = _states(record, testbed, reference, scratch, now)
        if not any(name == "solved" for name, _ in states):
            return "it has no solved state (no oracle plan, no expected files) to check its translation on"
        for name, state in states:
            original = state.score(record.criteria(), reference, initial_dir=testbed,
                                   day_first=task_day_first(record)).passed
            there = state.score(criteria, reference, initial_dir=testbed, scorer=evaluate_officebench)
            if there.passed != original:
                why = ("; ".join(f"[{r.index}] {r.function} {json.dumps(criteria[r.index]['args'])[:120]}: {r.reason}"
                                 for r in there.failures())[:400] if not there.passed else "every criterion passes")
                return (f"on the {name} state the task {'passes' if original else 'fails'} but its translation "
                        f"{'passes' if there.passed else 'fails'} under OfficeBench's rules ({why})")
        return None
    except OfficeError as exc:
        return f"cannot be checked: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _date_forms(day: date) -> list[str]:
    # no commas: after a number keyword OfficeBench looks in the text with its commas removed
    return [f"{day.day} {day:%B %Y}", f"{day:%B} {day.day}", f"{day.day} {day:%B}"]


def as_written(evaluation: list[dict[str, Any]], oracle: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``evaluation`` with each date a mail check asks for (``2025-04-02``) spelt as the solution's
    mail writes it ("Wednesday, 2 April 2025") when that mail does not write the stamp itself.
    Homer's check takes a date in any written form; OfficeBench's takes the exact text, so the
    exported check asks for the text a solution is known to write."""
    out = []
    for check in evaluation:
        args = check.get("args") or {}
        mails = [str(c.get("args", {}).get("content", "")) for c in oracle
                 if c.get("tool") == "email_send_email" and c.get("args", {}).get("recipient") == args.get("recipient")]
        if (check.get("function") != "evaluate_email_sent" or not mails
                or not isinstance(args.get("body_keywords"), list)):
            out.append(check)
            continue
        keywords = []
        for keyword in args["body_keywords"]:
            day = value_time(keyword) if isinstance(keyword, str) else None  # a day, not a moment
            if day is not None and not isinstance(day, datetime) and not any(str(keyword) in m for m in mails):
                keyword = next((f for f in _date_forms(day) if any(f in m for m in mails)), keyword)
            keywords.append(keyword)
        out.append({**check, "args": {**args, "body_keywords": keywords}})
    return out


def _mailboxes(testbed: Path) -> frozenset[str]:
    folder = testbed / get_app("email").folder
    return (frozenset(p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink()) if folder.is_dir()
            else frozenset())


def export_officebench(dataset_dir: Path, out: Path, *, lossy: bool = False,
                       on_outcome: Callable[[dict[str, Any]], None] | None = None) -> ExportSummary:
    """Export every usable task of ``dataset_dir`` into ``out/tasks``; see the module docstring.
    The folder appears whole or not at all (an export cut short, by a full disk, leaves none)."""
    with folder_written_whole(out) as tmp:
        return _export_into(dataset_dir, tmp, lossy, on_outcome)


def _export_into(dataset_dir: Path, out: Path, lossy: bool,
                 on_outcome: Callable[[dict[str, Any]], None] | None) -> ExportSummary:
    summary = ExportSummary()
    counters: dict[int, int] = {}
    for task in ticking(iter_tasks(dataset_dir), on_outcome, lambda: summary.written):
        if task.record is None or task.task is None:
            summary.skipped.append(printable(f"{task.id}: {task.error}"))
            continue
        record = task.task
        schema = schema_gate(task.record)  # the criteria the catalog takes, no contradiction, unique memory ids
        if not schema.passed:
            summary.skipped.append(printable(f"{task.id}: {task.folder / 'task.json'}: {schema.detail}"))
            continue
        sent_to = frozenset(str(step.args.get("recipient", "")).split("@")[0].lower()
                            for step in record.oracle or [] if step.tool == "email_send_email")
        criteria = as_written(record.criteria(), plan_calls(record.oracle))
        translation = to_officebench(criteria, _mailboxes(task.testbed), sent_to)
        lost = list(translation.lost)
        if lost and (not lossy or not translation.criteria):
            hint = " (--lossy keeps it without them)" if translation.criteria else ""
            summary.left_out.append(printable(f"{task.id}: " + "; ".join(lost) + hint))
            continue
        apps = record.app_count
        folder = out / "tasks" / f"{apps}-{counters.get(apps, 0) + 1}"
        try:
            now = task_now(record)
            write_task_folder(folder, [_subtask(record, translation.criteria)], task.testbed, task.reference)
        except (ValueError, OSError, OfficeError) as exc:
            if no_space(exc):  # every later task would fail alike: the export stops with one line
                raise
            summary.skipped.append(printable(f"{task.id}: {exc}"))
            continue
        problem = _check_export(record, translation.criteria, folder, now)
        if problem is not None:
            shutil.rmtree(folder, ignore_errors=True)
            summary.left_out.append(printable(f"{task.id}: {problem}"))
            continue
        if lost:
            summary.lossy.append(printable(f"{task.id} ({folder.name}): " + "; ".join(lost)))
        if translation.widened:
            summary.widened.append(printable(f"{task.id} ({folder.name}): " + "; ".join(translation.widened)))
        counters[apps] = counters.get(apps, 0) + 1
        summary.written += 1
        summary.folders[folder.name] = task.id
    write_json(out / "export.json", {"folders": summary.folders, "left_out": summary.left_out,
                                     "skipped": summary.skipped, "lossy": summary.lossy,
                                     "widened": summary.widened})
    (out / "README.md").write_text(card(dataset_dir, summary), encoding="utf-8")
    return summary


# Right answers homer's checks take that OfficeBench's substring checks do not (docs/officebench.md
# has the whole table): an agent scored there fails them.
NATURAL_FORMS = (
    ("a date `2025-10-21`", "`21 October 2025`, `Tuesday 21 October`, `21/10/2025` (in the office city's order)"),
    ("a clock time `13:00`", "`1 pm`, `1:00 PM`; `12:00` as `noon` or `12.00`; `11:00` as `eleven in the morning`; "
                            "`14:15` as `quarter past two`"),
    ("an amount `7500`", "`seventy-five hundred`, `seven thousand five hundred` (both take `7,500`)"),
    ("a keyword over a line break or in other case", "`Budget\\nReview` for `budget review`"),
    ("a keyword in a Word table", "read from the table's cells"),
)


def card(dataset: Path, summary: ExportSummary) -> str:
    """The export's README: what it holds, how to score it, and the right answers only homer takes."""
    rows = "\n".join(f"| {what} | {forms} |" for what, forms in NATURAL_FORMS)
    return f"""# {dataset.resolve().name} in OfficeBench's task layout

{summary.written} task(s) exported by homeragents (`homer export --officebench`): `tasks/<apps>-<k>/` with
`subtasks/0.json`, `testbed/` and, where a criterion needs one, `reference/`. `export.json` maps each folder
to its homer task id and lists the tasks left out ({len(summary.left_out)}), those kept without a criterion
OfficeBench cannot express ({len(summary.lossy)}, `lossy`) and those whose where-stated value checks were
left out ({len(summary.widened)}, `widened`: a wrong restated value passes there).

Every exported task was scored with OfficeBench's own rules before it was written: its criteria judge the
untouched office, the solved office and each planted misreading as homer judges the original.

## Right answers OfficeBench's checks will not take

OfficeBench's keyword checks look for the keyword as a substring. An agent that writes a right answer in
another natural form passes homer's checks of the same task but fails here:

| the criterion's keyword | also right for homer (`homer score --semantics homer`) |
|---|---|
{rows}

The reverse holds too: OfficeBench passes `12` inside `2012` and `14:00` where it only ends a range
(`from 13:00 to 14:00`); homer does not. To score outputs with homer's checks, run `homer score TESTBED
--criteria tasks/<folder>/subtasks/0.json`; `--semantics officebench` reproduces OfficeBench's verdicts.
"""
