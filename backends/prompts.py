"""Role prompts, kept as Jinja2 templates under ``templates/prompts/``.

Each role template defines a ``system`` and a ``user`` block; ``render`` returns the chat
messages. Inputs are passed as data (and shown to the model as JSON), never spliced into
Python strings.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
ROLES = ("planner", "surfer", "task_generator", "dialogue_day", "verifier", "plus_generator", "judge",
         "agent", "summarizer", "probe")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )


def render(role: str, **context: Any) -> list[dict[str, str]]:
    """``[{"role": "system", ...}, {"role": "user", ...}]`` for one role's prompt."""
    if role not in ROLES:
        raise ValueError(f"unknown prompt role {role!r}; known: {', '.join(ROLES)}")
    template = environment().get_template(f"prompts/{role}.j2")
    ctx = template.new_context(context)
    system = "".join(template.blocks["system"](ctx)).strip()
    user = "".join(template.blocks["user"](ctx)).strip()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
