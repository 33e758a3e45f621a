"""The command-line reference, ``docs/cli.md``, made from the commands themselves so that it
cannot drift from them: ``python -m orchestrator.cli.reference > docs/cli.md`` writes it, and a
test holds the file to what this prints."""

from __future__ import annotations

from typing import Any

import typer
import typer.core

from orchestrator.cli.common import DEFAULT_WORKERS

HEADER = """# Command-line reference

Every `homer` command with its arguments and options, as `homer COMMAND --help` gives them (this page
is generated from the commands: `python -m orchestrator.cli.reference > docs/cli.md`). Exit codes: 0
success, 1 the thing checked failed (a task, a criterion, a run with more errors than allowed), 2 bad
input; errors are one line each.
"""


def reference() -> str:
    """The whole page: a section per command (and per subcommand of a group), in the order
    ``homer --help`` lists them."""
    from orchestrator.cli import app

    root = typer.main.get_command(app)
    parts = [HEADER]
    for name, command in _commands(root, "homer"):
        parts.append(_section(name, command))
    return "\n".join(parts)


def _commands(group: Any, prefix: str) -> list[tuple[str, Any]]:
    found = []
    for name, command in group.commands.items():
        if getattr(command, "hidden", False):
            continue
        full = f"{prefix} {name}"
        found.append((full, command))
        if hasattr(command, "commands"):
            found += _commands(command, full)
    return found


def _section(name: str, command: Any) -> str:
    lines = [f"## `{name}`", "", _first_paragraph(command.help or ""), ""]
    rows = [_row(param) for param in command.params if not getattr(param, "hidden", False)
            and param.name != "help"]
    if hasattr(command, "commands"):
        lines += [f"Subcommands: {', '.join(f'`{n}`' for n in command.commands)}.", ""]
    if rows:
        lines += ["| argument or option | what it takes | default |", "|---|---|---|", *rows, ""]
    return "\n".join(lines)


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def _row(param: Any) -> str:
    if param.param_type_name == "argument":
        label = f"`{param.metavar or param.name.upper()}`"
    else:
        label = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    what = " ".join(str(getattr(param, "help", "") or "").split()).replace("|", "\\|")
    if param.name == "workers":  # the machine's own count stays out of a page for every machine
        what = what.replace(f"; {DEFAULT_WORKERS} here", "")
        return f"| {label} | {what} | the CPU count, at most 4 |"
    return f"| {label} | {what} | {_default(param)} |"


def _default(param: Any) -> str:
    if param.required:
        return "required"
    value = param.default
    if value is None or value in ((), []) or (getattr(param, "is_flag", False) and value is False):
        return ""
    return f"`{value}`".replace("|", "\\|")


if __name__ == "__main__":
    print(reference(), end="")
