"""The ``homer`` command line: every command is listed here, on the Typer apps made here.

Exit codes: 0 success, 1 the thing checked failed (a task, a criterion), 2 bad input
(unreadable file, invalid criteria, missing folder). Errors are one line each, no tracebacks.

The commands' functions live in modules by group (``datasets``, ``evaluate``, ``officebench``,
``review``, ``serve``), which register nothing themselves; each loads its heavy modules when it
runs, so listing them all costs ``homer --help`` nothing more.
"""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import typer
import typer.core

from backends.batch import NoSpaceLeft
from backends.job_contract import no_space
from orchestrator.cli import datasets, evaluate, officebench, review, serve
from orchestrator.cli.common import HELP_OPTIONS

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings=HELP_OPTIONS,
                  help="homeragents: build, check and score long-horizon office-agent tasks.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"homer (homeragents) {version('homeragents')}")
        except PackageNotFoundError:
            typer.echo("homer (homeragents): version unknown (not installed as a package)")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                       help="Print the version and exit")) -> None:
    """homeragents: build, check and score long-horizon office-agent tasks."""


class ReviewGroup(typer.core.TyperGroup):
    """``homer review DATASET`` serves the page; ``homer review report|apply ...`` are subcommands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        formatter.write_usage(ctx.command_path, "DATASET [--port P] [--annotator NAME] [OPTIONS] | COMMAND [ARGS]...")

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The page's options first: they are given at this level (``homer review DATASET --port 8000``)."""
        serve = self.commands.get("serve")
        if serve is not None:
            options = [p for p in serve.get_params(ctx) if p.param_type_name == "option" and p.name != "help"]
            records = [r for r in (p.get_help_record(ctx) for p in options) if r is not None]
            with formatter.section("Options of the review page (homer review DATASET ...)"):
                formatter.write_dl(records)
        super().format_options(ctx, formatter)


officebench_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=HELP_OPTIONS,
                              help="Work with OfficeBench task folders.")
review_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, cls=ReviewGroup, context_settings=HELP_OPTIONS,
                         help="Human review of a dataset: `homer review DATASET` serves the review page; "
                              "report and apply work on its annotations.")

# Every command, in the order ``homer --help`` and docs/cli.md list them (the groups come last).
app.command("build")(datasets.build_command)
app.command("verify")(datasets.verify_command)
app.command("stats")(datasets.stats_command)
app.command("show")(datasets.show_command)
app.command("export")(datasets.export_command)
app.command("regenerate")(datasets.regenerate_command)
app.command("eval")(evaluate.eval_command)
app.command("probe")(evaluate.probe_command)
app.command("report")(evaluate.report_command)
app.command("view")(evaluate.view_command)
app.command("compare")(evaluate.compare_command)
app.command("score")(officebench.score_command)
app.command("fake-llm")(serve.fake_llm_command)
app.add_typer(officebench_app, name="officebench")
officebench_app.command("check")(officebench.check_command)
officebench_app.command("lint")(officebench.lint_command)
app.add_typer(review_app, name="review")
review_app.command("report")(review.review_report_command)
review_app.command("serve")(review.review_serve_command)
review_app.command("apply")(review.review_apply_command)


# The errors of the project's own definition files (families' phrasing, dialogue banks, prompt
# templates), each naming its file and line. Known by (module, class) name: the modules that
# define them need not be imported for a command that never reads such a file.
_DEFINITION_ERRORS = frozenset({("generators.families.phrasing", "FamilyDefinitionError"),
                                ("generators.dialogue_bank", "BankError"), ("backends.prompts", "PromptTemplateError")})


def _definition_error(exc: BaseException) -> bool:
    return any((cls.__module__, cls.__name__) in _DEFINITION_ERRORS for cls in type(exc).__mro__)


def _no_space(exc: BaseException) -> str | None:
    """The one line for a disk (or quota) that filled while a command wrote, else None."""
    if not no_space(exc):
        return None
    if isinstance(exc, NoSpaceLeft):  # every writing command's own (backends.batch.space_named)
        return f"error: {exc}"
    # a write no command wrapped: the same line, under the folder of the file it names
    folder = Path(str(exc.filename)).parent if exc.filename else Path.cwd()
    return f"error: {NoSpaceLeft(str(exc.filename or folder), folder, None, 'run the command again')}"


def main() -> None:
    try:
        app()
    except Exception as exc:
        if (line := _no_space(exc)) is not None:
            typer.echo(line, err=True)
            sys.exit(1)
        if not _definition_error(exc):
            raise
        typer.echo(f"error: {exc}", err=True)  # a broken definition file: found at start, before any work
        sys.exit(2)
    except KeyboardInterrupt:  # Ctrl-C outside a batch (while starting, or in a one-shot command)
        typer.echo("\ninterrupted", err=True)
        sys.exit(130)


def run_forked(argv: Sequence[str]) -> NoReturn:
    """``homer ARGV`` as the rest of this process's life, in a process forked from one that has
    already imported the pipeline (the test and bench launchers that skip a console script's
    imports): the exit code, traceback and exit handlers the console script would give; never
    returns, whatever happens."""
    code = 1
    try:
        sys.argv = ["homer", *map(str, argv)]
        try:
            main()
            code = 0
        except SystemExit as stop:
            if stop.code is None or isinstance(stop.code, int):
                code = stop.code or 0
            else:
                sys.stderr.write(f"{stop.code}\n")
        except BaseException:  # noqa: BLE001 - shown as the interpreter would show it
            traceback.print_exc()
        atexit._run_exitfuncs()  # what the command registered (os._exit below skips them)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)


__all__ = ["app", "main", "run_forked"]
