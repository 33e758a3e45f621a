"""An answer that names the right value beside a wrong one is a hedge, and it must not pass.

A question's check looks for the right number or words in the answer file; an agent unsure which
invoice, month or person the user meant could write every candidate and pass. The wrong
candidates worth refusing are known: what the intent-only plan answers and what each misreading
(the earlier or the near-miss value taken for the final one) answers. ``exclude_hedges`` puts
those answers into the check's ``excludes``. Only answers that are a bare value are used: a
sentence holds words a right answer may hold too. A question answered in words refuses only the
misreadings' answers: they answer the same question about another thing, while the intent-only
plan may have answered another question whose words a right answer may use as context.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from typing import Any

from generators.model import TaskDraft, ToolCall

_PLAIN_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
MAX_EXCLUDED_CHARS = 80  # a value, not a sentence


def written_answers(plan: list[ToolCall]) -> list[str]:
    """What a plan writes as its answer (the last write wins; earlier ones are kept too: they were said)."""
    return [str(c.args.get("text", "")).strip() for c in plan
            if c.tool == "system_write_answer" and isinstance(c.args, dict)]


def _number(text: str) -> float | None:
    cleaned = text.replace(",", "")
    return float(cleaned) if _PLAIN_NUMBER_RE.match(cleaned) else None


def _overlaps(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a in b or b in a


def answer_excludes(args: dict[str, Any], wrong: list[str]) -> list[Any]:
    """The wrong answers an ``evaluate_answer`` check with ``args`` should refuse beside the right one."""
    out: list[Any] = []
    if "number" in args:
        target, tolerance = float(args["number"]), float(args.get("tolerance", 1e-6))
        for text in wrong:
            value = _number(text)
            if value is not None and abs(value - target) > tolerance and all(abs(value - v) > tolerance for v in out):
                out.append(int(value) if value == int(value) else value)
        return out
    expected = [str(k) for k in args.get("keywords", [])]
    for text in wrong:
        if (text and len(text) <= MAX_EXCLUDED_CHARS and "\n" not in text and not any(_overlaps(text, k) for k in expected)
                and not any(_overlaps(text, str(o)) for o in out)):
            out.append(text)
    return out


def exclude_hedges(draft: TaskDraft) -> TaskDraft:
    """The draft with each answer check refusing the intent-only and the misreadings' answers."""
    misread = [a for m in draft.misreadings for a in written_answers(m.plan)]
    wrong = written_answers(draft.baseline) + misread
    if not wrong:
        return draft
    evaluation = copy.deepcopy(draft.evaluation)
    for item in evaluation:
        args = item.get("args") if isinstance(item, dict) else None
        if not isinstance(args, dict) or item.get("function") != "evaluate_answer" or "excludes" in args:
            continue
        excludes = answer_excludes(args, wrong if "number" in args else misread)
        if excludes:
            args["excludes"] = excludes
    return replace(draft, evaluation=evaluation)
