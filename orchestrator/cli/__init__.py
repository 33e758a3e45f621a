"""The ``homer`` command line.

Exit codes: 0 success, 1 the thing checked failed (a task, a criterion), 2 bad input
(unreadable file, invalid criteria, missing folder). Errors are one line each, no tracebacks.

The commands live in modules by group (``datasets``, ``evaluate``, ``officebench``, ``review``,
``serve``), each registering on the Typer app of ``common``; importing them here puts them all on it.
"""

from __future__ import annotations

import sys

import typer

from backends.batch import NoSpaceLeft
from backends.job_contract import no_space
from orchestrator.cli import datasets, evaluate, officebench, review, serve  # noqa: F401 - they register the commands
from orchestrator.cli.common import app

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
    if isinstance(exc, NoSpaceLeft):  # a batch that stopped at its first job without space says more
        return f"error: {exc}"
    where = f" writing {exc.filename}" if exc.filename else ""
    return (f"error: no space left on the device{where}; free some space and run the command again "
            "(build, regenerate and eval go on from where they stopped with --resume)")


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


__all__ = ["app", "main"]
