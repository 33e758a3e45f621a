"""docs/cli.md is the command-line reference made from the commands themselves
(``orchestrator.cli.reference``): an option added, renamed or re-documented without regenerating
the page fails here."""

from __future__ import annotations

from pathlib import Path

import typer

from orchestrator.cli.reference import reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_page_is_what_the_commands_say():
    assert PAGE.read_text(encoding="utf-8") == reference(), \
        "docs/cli.md is stale: python -m orchestrator.cli.reference > docs/cli.md"


def test_every_command_and_option_is_on_the_page():
    from orchestrator.cli import app

    page = reference()
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        assert f"## `homer {name}`" in page
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                assert f"`{param.opts[0]}`" in page, (name, param.opts)
    assert " here)" not in page  # nothing of the machine the page was made on


def test_every_command_function_is_listed():
    """A ``*_command`` function written in a group module but not listed in ``orchestrator.cli``
    would be no command at all: each is on the app (or a group of it) exactly once."""
    import orchestrator.cli as cli
    from orchestrator.cli import datasets, evaluate, officebench, review, serve

    written = {getattr(module, name) for module in (datasets, evaluate, officebench, review, serve)
               for name in vars(module) if name.endswith("_command") and callable(getattr(module, name))}
    listed = [info.callback for typer_app in (cli.app, cli.officebench_app, cli.review_app)
              for info in typer_app.registered_commands]
    assert len(listed) == len(set(listed))
    assert written == set(listed)


def test_the_model_flag_says_the_order_the_settings_are_read_in():
    """--model's help once named --llm-config as its default while HOMER_MODEL (or a .env file's)
    wins over the file (``LLMSettings.load``, tested in tests/backends/test_llm_client.py)."""
    line = next(row for row in reference().splitlines() if row.startswith("| `--model` |"))
    order = [line.index(word) for word in ("HOMER_MODEL", ".env", "--llm-config", "gpt-4o-mini")]
    assert order == sorted(order)
