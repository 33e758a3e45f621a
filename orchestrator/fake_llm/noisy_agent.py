"""The fake endpoint's noisy agent: the oracle plan with the mistakes real agents make, at a set rate.

So that an ``--agent llm`` evaluation against ``homer fake-llm --agent noisy`` exercises the whole
tool-calling loop and gives pass rates between 0 and 100 %, each task draws, seeded by ``--seed``
and the task's own prompt (the same prompt always gets the same script):

- with probability ``noise`` one *fatal* mistake: a misremembered value (a digit of the last
  write's value changed), the right value in the wrong row, the last write skipped, or stopping
  after the reads;
- independently, with probability ``noise``, one *slip* it recovers from: tool-call arguments that
  are not JSON, a tool that does not exist, or a look around the files first. The agent's loop
  answers each with an error or a result, and the script goes on with the right call.

The script is a list of steps; which step comes next is read from the conversation (how many
usable and how many broken tool calls the assistant already made), never from server state.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from office_env.seeding import LINES, RAW, digest
from office_env.seeding import rng as seeded
from office_env.tools import list_files_call

FATAL = ("misremembered_value", "wrong_row", "skipped_write", "stopped_early")
SLIPS = ("broken_arguments", "unknown_tool", "looks_around")
READ_TOOLS = re.compile(r"(?:_read|_list)")
VALUE_KEYS = ("value", "start", "content", "recipient", "summary", "text")
BROKEN_ARGUMENTS = '{"file_path": "data/'  # arguments cut mid-string: not JSON


@dataclass(frozen=True)
class Step:
    tool: str
    args: Any            # a dict, or a raw string for broken arguments
    broken: bool = False


def draw(seed: int, noise: float, prompt: str) -> tuple[str | None, str | None, random.Random]:
    """The task's fatal mistake and slip (None: none), and the generator that places them."""
    rng = seeded(digest(seed, prompt, legacy=LINES), legacy=RAW)
    fatal = rng.choice(FATAL) if rng.random() < noise else None
    slip = rng.choice(SLIPS) if rng.random() < noise else None
    return fatal, slip, rng


def script(plan: list[dict[str, Any]], seed: int, noise: float, prompt: str) -> list[Step]:
    """The steps the noisy agent takes for ``plan`` (then it gives its final message)."""
    fatal, slip, rng = draw(seed, noise, prompt)
    steps = [Step(c["tool"], dict(c["args"])) for c in plan]
    writes = [i for i, s in enumerate(steps) if not READ_TOOLS.search(s.tool)]
    if fatal and writes:
        last = writes[-1]
        if fatal == "misremembered_value":
            steps[last] = Step(steps[last].tool, _misremember(steps[last].args))
        elif fatal == "wrong_row" and "row" in steps[last].args:
            steps[last] = Step(steps[last].tool, {**steps[last].args, "row": int(steps[last].args["row"]) + 1})
        elif fatal == "skipped_write" or fatal == "wrong_row":
            del steps[last]
        else:  # stopped early: the reads only
            steps = steps[:writes[0]]
    if slip == "looks_around":
        steps.insert(0, Step(*list_files_call("data")))
    elif slip in ("broken_arguments", "unknown_tool") and steps:
        at = rng.randrange(len(steps))
        wrong = Step(steps[at].tool, BROKEN_ARGUMENTS, broken=True) if slip == "broken_arguments" \
            else Step(steps[at].tool.replace("_", "_do_", 1), steps[at].args)
        steps.insert(at, wrong)
    return steps


def _misremember(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with one value off: a number one more, the last digit of a text changed, else a word added."""
    for key in VALUE_KEYS:
        value = args.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            return {**args, key: value + 1}
        if isinstance(value, str) and value:
            digits = [m.start() for m in re.finditer(r"[0-9]", value)]
            if digits:
                at = digits[-1]
                return {**args, key: value[:at] + str((int(value[at]) + 1) % 10) + value[at + 1:]}
            return {**args, key: value + " (to be confirmed)"}
    return args


def next_step(steps: list[Step], usable: int, broken: int) -> Step | None:
    """The step after ``usable`` tool calls that ran and ``broken`` ones that did not (a broken
    call the script did not plan, e.g. a reply cut by a fault, only means that step is asked again)."""
    for step in steps:
        if step.broken:
            if broken:
                broken -= 1
                continue
            return step
        if usable:
            usable -= 1
            continue
        return step
    return None


def call_of(step: Step) -> dict[str, Any]:
    """The step as a responder's tool call."""
    return {"name": step.tool, "arguments": step.args if isinstance(step.args, str) else json.dumps(step.args)}


__all__ = ["FATAL", "SLIPS", "Step", "script", "next_step", "call_of", "draw"]
