"""A plan that pastes its sources in place of the answer, for a gate that requires it to fail.

A task whose answer is a finding (a total, a comparison, the line that differs, a decision) is
only worth something if reading the sources is not enough: an agent that mails everything it read
must not pass. :func:`paste_plan` takes the oracle and the observations of its replay and writes,
wherever the oracle writes prose (a mail's or a document's content, the final answer), every
observation of the oracle's reads, verbatim. A task whose oracle's prose is itself made of what it
read (a forward, notes passed on: :func:`is_forward`) is left out: there, a paste is the answer.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from office_env.apps import all_read_tools
from verifier.answer_forms import text_args

MAX_PASTE_CHARS = 60_000  # what one written text holds at most (a mail or a document of the paste)
FORWARD_SHARE = 0.6  # prose whose lines are at least this share verbatim from the reads is a forward


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if len(line.split()) >= 4]


def is_forward(oracle: Sequence[dict[str, Any]], observations: Sequence[str]) -> bool:
    """Whether the oracle's prose is mostly lines it read, verbatim (a forward or notes passed on)."""
    read = " ".join(" ".join(o.split()) for o in observations)
    text = text_args()
    prose = [line for call in oracle if (key := text.get(call.get("tool", "")))
             for line in _lines(str((call.get("args") or {}).get(key, "")))]
    return bool(prose) and sum(line in read for line in prose) >= FORWARD_SHARE * len(prose)


def paste_plan(oracle: Sequence[dict[str, Any]], observations: Sequence[str]) -> list[dict[str, Any]] | None:
    """The oracle with each prose it writes replaced by everything its reads returned; None when
    it reads nothing or writes no prose. ``observations``: one per oracle call, in order."""
    reads = all_read_tools()  # every app's read tools (the file system's among them)
    read = [obs for call, obs in zip(oracle, observations) if call.get("tool") in reads and obs.strip()
            and not obs.startswith("Error")]
    paste = re.sub(r"\n{3,}", "\n\n", "\n\n".join(read))[:MAX_PASTE_CHARS]
    if not paste:
        return None
    plan, changed, text = [], False, text_args()
    for call in oracle:
        args = dict(call.get("args") or {})
        key = text.get(call.get("tool", ""))
        if key and isinstance(args.get(key), str):
            args[key], changed = paste, True
        plan.append({"tool": call["tool"], "args": args})
    return plan if changed else None
