"""The ``homer`` command line.

Exit codes: 0 success, 1 the thing checked failed (a task, a criterion), 2 bad input
(unreadable file, invalid criteria, missing folder). Errors are one line each, no tracebacks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from office_env import InvalidCriteria, OfficeError, Workspace, evaluate_criteria, load_officebench
from office_env.officebench import normalize_criteria

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="homeragents: build, check and score long-horizon office-agent tasks.")
officebench_app = typer.Typer(no_args_is_help=True, help="Work with OfficeBench task folders.")
app.add_typer(officebench_app, name="officebench")


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@officebench_app.command("check")
def officebench_check(path: Path = typer.Argument(..., help="An OfficeBench checkout, its tasks/ folder, or one task folder")) -> None:
    """Load and validate every subtask; print counts per app count and one line per problem."""
    if not path.exists():
        _fail(f"{path}: does not exist")
    report = load_officebench(path)
    counts = report.by_app_count()
    per_apps = ", ".join(f"{n} app{'s' if n > 1 else ''}: {c}" for n, c in counts.items()) or "none"
    typer.echo(f"loaded {len(report.tasks)} of {report.subtask_files} subtasks from {report.folders} task folders "
               f"({per_apps})")
    for warning in report.warnings:
        typer.echo(f"warning: {warning}")
    for problem in report.problems:
        typer.echo(f"problem: {problem}")
    if report.problems:
        typer.echo(f"{len(report.problems)} problem(s)")
        raise typer.Exit(1)


def _criteria_from(file: Path) -> tuple[list[Any], Optional[Path], Optional[Path]]:
    """Criteria, default reference folder and default initial testbed from a subtask JSON
    (``<task>/subtasks/<i>.json``), a task JSON (``<task>/task.json``) or a bare list."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{file}: cannot read ({exc.__class__.__name__})")
    except json.JSONDecodeError as exc:
        _fail(f"{file}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
    if isinstance(data, dict):
        if "evaluation" not in data:
            _fail(f"{file}: evaluation: missing (expected a subtask or task JSON, or a list of criteria)")
        criteria = normalize_criteria(data["evaluation"])
    else:
        criteria = data
    folder = file.resolve().parent
    task_dir = folder.parent if folder.name == "subtasks" else folder
    reference = task_dir / "reference" if (task_dir / "reference").is_dir() else None
    initial = task_dir / "testbed" if (task_dir / "testbed").is_dir() else None
    return criteria, reference, initial


@app.command("score")
def score(
    testbed: Path = typer.Argument(..., help="Testbed folder to score (data/, emails/, calendar/)"),
    criteria: Path = typer.Option(..., "--criteria", "-c", help="Subtask or task JSON, or a JSON list of criteria"),
    reference: Optional[Path] = typer.Option(None, "--reference", help="Folder for expected files (default: the task's reference/)"),
    initial: Optional[Path] = typer.Option(None, "--initial", help="The testbed before the agent acted (default: the task's testbed/)"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
) -> None:
    """Score a testbed with a criteria list; exit 0 only if every criterion passes."""
    items, default_reference, default_initial = _criteria_from(criteria)
    try:
        workspace = Workspace(testbed)
        report = evaluate_criteria(workspace, items, reference or default_reference,
                                   initial_dir=initial or default_initial, file=str(criteria))
    except InvalidCriteria as exc:
        for problem in exc.problems:
            typer.echo(f"invalid: {problem}", err=True)
        raise typer.Exit(2)
    except OfficeError as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for result in report.results:
            mark = "PASS" if result.passed else "FAIL"
            typer.echo(f"{mark} [{result.index}] {result.function}: {result.reason}")
        passed = sum(r.passed for r in report.results)
        typer.echo(f"{passed}/{len(report.results)} criteria passed: task {'PASSED' if report.passed else 'FAILED'}")
    raise typer.Exit(0 if report.passed else 1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
