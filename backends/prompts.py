"""Role prompts, kept as Jinja2 templates under ``templates/prompts/``.

Each role template defines a ``system`` and a ``user`` block; ``render`` returns the chat
messages. Inputs are passed as data (and shown to the model as JSON), never spliced into
Python strings. The ``compact`` filter writes that JSON without spaces and in the caller's key
order: a model reads it as well, it costs about a fifth fewer tokens, and a caller can put what
stays the same across tasks first (a prompt cache then holds it).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
ROLES = ("planner", "surfer", "task_generator", "dialogue_day", "verifier", "plus_generator", "judge",
         "agent", "summarizer", "probe")


def compact_json(value: Any) -> str:
    """JSON with no spaces and non-ASCII kept as is (fewer tokens than ``tojson``'s)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )
    env.filters["compact"] = compact_json
    return env


class PromptTemplateError(ValueError):
    """A role's template is missing, malformed or lacks a block (the message names the file and line)."""


def check_prompts() -> None:
    """Compile every role's template now: a command that talks to a model calls this first, so a
    broken template stops it at start with one line, not on its first request."""
    shared = sorted(f"prompts/{path.name}" for path in (TEMPLATES / "prompts").glob("*.j2")
                    if path.stem not in ROLES)  # what the roles import ("_rules.j2"), compiled only on use
    for name in [f"prompts/{role}.j2" for role in ROLES] + shared:
        try:
            template = environment().get_template(name)
        except jinja2.TemplateNotFound:
            raise PromptTemplateError(f"{TEMPLATES / name}: no such template") from None
        except jinja2.TemplateSyntaxError as exc:
            raise PromptTemplateError(f"{exc.filename or TEMPLATES / name}:{exc.lineno}: {exc.message}") from None
        missing = [block for block in ("system", "user") if block not in template.blocks]
        if missing and name not in shared:
            raise PromptTemplateError(f"{TEMPLATES / name}: no {{% block {missing[0]} %}}")


def render(role: str, **context: Any) -> list[dict[str, str]]:
    """``[{"role": "system", ...}, {"role": "user", ...}]`` for one role's prompt."""
    if role not in ROLES:
        raise ValueError(f"unknown prompt role {role!r}; known: {', '.join(ROLES)}")
    template = environment().get_template(f"prompts/{role}.j2")
    ctx = template.new_context(context)
    system = "".join(template.blocks["system"](ctx)).strip()
    user = "".join(template.blocks["user"](ctx)).strip()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
