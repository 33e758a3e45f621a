"""Which of the project's role prompts a request is, and the JSON input block it shows the model:
how the fake endpoint's responders tell a planner's request from an agent's."""

from __future__ import annotations

import re
from typing import Any

from backends.fake_llm.wire import message_text
from backends.llm.strict_json import JSONLimitError, loads_limited

# How each role's system prompt opens (templates/prompts/<role>.j2).
ROLE_OPENINGS = {
    "planner": "You are the planner of an office-task workshop",
    "surfer": "You are an explorer of a simulated office",
    "task_generator": "You write realistic, machine-checkable office tasks",
    "dialogue_day": "You write days of a realistic chat",
    "verifier": "You check a task's intent and multi-day chat",
    "plus_generator": "You turn a precise office instruction",
    "judge": "You are one of five independent judges",
    "summarizer": "You summarize days of chat between a user",
    "probe": "You answer questions about what a user told",
    "agent": "You are the personal assistant of",
}
_JSON_BLOCK_RE = re.compile(r"```json\n(.*?)\n```", re.S)


class UnknownPrompt(ValueError):
    """The request is not one of the project's role prompts."""


def role_of(messages: list[dict[str, Any]]) -> str:
    system = next((message_text(m) for m in messages if m.get("role") == "system"), "")
    for role, opening in ROLE_OPENINGS.items():
        if system.startswith(opening):
            return role
    raise UnknownPrompt("not a homeragents role prompt")


def inputs_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    match = _JSON_BLOCK_RE.search(user)
    if not match:
        raise UnknownPrompt("the prompt has no JSON input block")
    try:
        inputs = loads_limited(match.group(1))
    except JSONLimitError as exc:
        raise UnknownPrompt(f"the prompt's JSON input block is {exc}") from None
    if not isinstance(inputs, dict):
        raise UnknownPrompt("the prompt's JSON input block is not an object")
    return inputs
