"""``homer officebench check|lint`` and ``homer score``: OfficeBench folders and scoring a testbed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

import typer
import typer.core

from orchestrator.cli.common import MAX_TASK_MEMORY_MIB, MAX_TASK_SECONDS, fail, number_option, task_budget


def check_command(
    path: Path = typer.Argument(..., metavar="PATH",
                                help="An OfficeBench checkout, its tasks/ folder, or one task folder"),
) -> None:
    """Load and validate every subtask; print counts per app count and one line per problem. Exit 1
    when a subtask cannot be loaded or a criterion needs a reference file that is missing."""
    from office_env import load_officebench

    if not path.exists():
        fail(f"{path}: does not exist")
    report = load_officebench(path)
    counts = report.by_app_count()
    per_apps = ", ".join(f"{n} app{'s' if n > 1 else ''}: {c}" for n, c in counts.items()) or "none"
    typer.echo(f"loaded {len(report.tasks)} of {report.subtask_files} subtasks from {report.folders} task folders "
               f"({per_apps})")
    for warning in report.warnings:
        typer.echo(f"warning: {warning}")
    for problem in report.problems:
        typer.echo(f"problem: {problem}")
    if report.problems or report.warnings:
        # a criterion that needs a missing reference file can never pass: as bad as a broken file
        typer.echo(f"{len(report.problems)} problem(s), {len(report.warnings)} missing reference(s)")
        raise typer.Exit(1)


def lint_command(
    path: Path = typer.Argument(..., metavar="PATH",
                                help="An OfficeBench checkout, its tasks/ folder, or one task folder"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (findings with task, file, field, "
                                 "severity, code, message, repair)"),
) -> None:
    """Find seed defects per subtask: criteria that pass untouched, missing references, typo'd or
    unknown file names, doc_type against the extension, misplaced keys, weak criteria, the
    instruction and the criteria naming different files. Exit 1 when a finding is an error."""
    from verifier.seed_lint import lint_seeds

    if not path.exists():
        fail(f"{path}: does not exist")
    report = lint_seeds(path)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for finding in report.findings:
            typer.echo(str(finding))
        counts = ", ".join(f"{code}: {n}" for code, n in report.counts().items()) or "none"
        typer.echo(f"linted {report.loaded} of {report.subtasks} subtasks: {report.errors} error(s), "
                   f"{len(report.findings) - report.errors} warning(s) ({counts})")
    if report.errors:
        raise typer.Exit(1)


def _criteria_from(file: Path) -> tuple[list[Any], Optional[Path], Optional[Path], tuple[int, ...], bool | None]:
    """Criteria, default reference folder, default initial testbed, misplaced criteria and the
    office's order of a numeric date (``backends.dataset_reader.task_day_first``) from a subtask JSON
    (``<task>/subtasks/<i>.json``), a task JSON (``<task>/task.json``) or a bare list.

    The file is read with the JSON limits and never through a symlink; the task's own
    ``reference/`` and ``testbed/`` are taken only when they are real folders (a symlinked one
    is an error, not a fallback)."""
    from backends.dataset_reader import task_day_first
    from office_env.officebench import misplaced_criteria, normalize_criteria
    from office_env.untrusted import SYMLINK, UntrustedInputError, entry_problem, is_real_dir, load_json, printable

    try:
        data = load_json(file)
    except UntrustedInputError as exc:
        fail(str(exc))
    if isinstance(data, dict):
        if "evaluation" not in data:
            fail(f"{printable(file)}: evaluation: missing (expected a subtask or task JSON, or a list of criteria)")
        criteria = normalize_criteria(data["evaluation"])
        misplaced = misplaced_criteria(data["evaluation"])
    else:
        criteria, misplaced = data, misplaced_criteria(data)
    folder = Path(os.path.abspath(file)).parent
    task_dir = folder.parent if folder.name == "subtasks" and is_real_dir(folder) else folder
    found = []
    for name in ("reference", "testbed"):
        path = task_dir / name
        problem = entry_problem(path, folder=True)
        if problem == SYMLINK:
            fail(f"{printable(path)}: {problem}; refused (give --{'reference' if name == 'reference' else 'initial'} "
                  "explicitly to use another folder)")
        found.append(path if is_real_dir(path) else None)
    return criteria, found[0], found[1], misplaced, task_day_first(data) if isinstance(data, dict) else None


DATE_ORDERS: dict[str, bool | None] = {"office": None, "day": True, "month": False, "either": None}


def score_command(
    testbed: Path = typer.Argument(..., metavar="TESTBED", help="Testbed folder to score (data/, emails/, calendar/)"),
    criteria: Path = typer.Option(..., "--criteria", "-c", help="Subtask or task JSON, or a JSON list of criteria"),
    reference: Optional[Path] = typer.Option(None, "--reference",
                                             help="Folder for expected files (default: the task's reference/)"),
    initial: Optional[Path] = typer.Option(None, "--initial",
                                           help="The testbed before the agent acted (default: the task's testbed/)"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
    semantics: str = typer.Option("homer", "--semantics", help="homer (its checks) or officebench (OfficeBench's own "
                                  "verdicts, its substring rules and crashes as failures; see docs/officebench.md)"),
    task_timeout: float = number_option(600.0, "--task-timeout", help="Seconds scoring may take (0: no limit)",
                                        low=0, high=MAX_TASK_SECONDS, unit=" seconds (0: no limit)", whole=False,
                                        span=f"0 to {MAX_TASK_SECONDS:,} s"),
    task_memory: int = number_option(2048, "--task-memory", help="MiB of memory scoring may use (0: no limit)",
                                     low=0, high=MAX_TASK_MEMORY_MIB, unit=" MiB (0: no limit)"),
    date_order: str = typer.Option("office", "--date-order", help="How an ambiguous numeric date (04/05/2025) is "
                                   "read: office (a task JSON's office city; either order without one), day, month "
                                   "or either"),
) -> None:
    """Score a testbed with a criteria list; exit 0 only if every criterion passes.

    The testbed, the reference folder and the initial testbed are opened as untrusted trees
    (office_env.untrusted): one that is a symlink or holds a symlink, special file, hard link to a
    file outside it, odd name or more than the tree limits is refused (exit 2, one line naming the
    path), because scoring through a link could read and print any file of the machine. Scoring
    runs in a worker process within the time and memory budget: a testbed that would take longer
    or more is reported (exit 2) instead of hanging the command."""
    from office_env.untrusted import printable, tree_problem

    if not testbed.exists() and not testbed.is_symlink():
        fail(f"{printable(testbed)}: testbed folder does not exist")
    if (problem := tree_problem(testbed)) is not None:  # refused before the checks' libraries load
        fail(f"testbed: {problem}")

    from backends.job_contract import Interrupted, JobFailure
    from backends.workers import run_jobs
    from office_env import InvalidCriteria, OfficeError, Workspace
    from office_env.evaluation.officebench_semantics import scorer

    try:
        evaluate = scorer(semantics)
    except ValueError as exc:
        fail(str(exc))
    if date_order not in DATE_ORDERS:
        fail(f"--date-order {date_order!r}: must be one of {', '.join(DATE_ORDERS)}")
    items, default_reference, default_initial, misplaced, office_order = _criteria_from(criteria)
    extra: dict[str, Any] = {"misplaced": misplaced} if semantics == "officebench" else {}
    extra["day_first"] = office_order if date_order == "office" else DATE_ORDERS[date_order]
    reference_dir, initial_dir = reference or default_reference, initial or default_initial
    for option, folder in (("--reference", reference_dir), ("--initial", initial_dir)):
        problem = tree_problem(folder) if folder is not None else None
        if problem is not None:
            fail(f"{option}: {problem}")
    budget = task_budget(task_timeout, task_memory)

    def scored(_: None) -> tuple[str, Any]:
        try:
            workspace = Workspace(testbed)
            return "ok", evaluate(workspace, items, reference_dir, initial_dir=initial_dir, file=printable(criteria),
                                  **extra)
        except InvalidCriteria as exc:
            return "invalid", list(exc.problems)
        except OfficeError as exc:
            return "error", str(exc)

    outcome: list[tuple[str, Any]] = []

    def failed(_: int, failure: JobFailure) -> None:
        outcome.append(("error", f"{printable(criteria)}: scoring {printable(testbed)} failed ({failure.reason})"))

    try:
        run_jobs(scored, [None], workers=1, budget=budget, on_result=lambda _, result: outcome.append(result),
                 on_failure=failed)
    except Interrupted as exc:
        typer.echo("\ninterrupted: nothing scored", err=True)
        raise typer.Exit(exc.exit_code)
    _print_score(*outcome[0], as_json)


def _print_score(kind: str, report: Any, as_json: bool) -> None:
    """Print a scoring's outcome and exit: 0 when every criterion passed, 1 when one failed, 2 for
    invalid criteria or a testbed that could not be scored."""
    if kind == "invalid":
        for problem in report:
            typer.echo(f"invalid: {problem}", err=True)
        raise typer.Exit(2)
    if kind == "error":
        fail(report)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for result in report.results:
            mark = "PASS" if result.passed else "FAIL"
            typer.echo(f"{mark} [{result.index}] {result.function}: {result.reason}")
        passed = sum(r.passed for r in report.results)
        typer.echo(f"{passed}/{len(report.results)} criteria passed: task {'PASSED' if report.passed else 'FAILED'}")
    raise typer.Exit(0 if report.passed else 1)
