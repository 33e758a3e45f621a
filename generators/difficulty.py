"""How hard a task is, measured from what solving it takes rather than declared by its family.

The score adds what an agent must do and keep straight:
- the oracle plan's steps (tool calls); a draft without a plan counts two steps a subtask;
- the memory pieces it must recall from the chat;
- twice each correction or near-miss it must see through;
- twice each computation it must carry out (a sum, a difference, a start plus a duration ...);
- twice each app beyond the first (moving a value between apps).

``hard`` needs a score of at least ``HARD_SCORE`` and at least ``HARD_STEPS`` steps; ``easy`` is a
score below ``EASY_SCORE``; the rest is ``medium``.
"""

from __future__ import annotations

from typing import Any

from generators.model import TaskDraft

EASY_SCORE = 9
HARD_SCORE = 16
HARD_STEPS = 6


def measure_difficulty(draft: TaskDraft) -> dict[str, Any]:
    """The label and the parts it was measured from."""
    steps = len(draft.oracle) if draft.oracle else 2 * len(draft.subtasks)
    memory = len(draft.memory)
    dynamics = sum(len(m.superseded) + len(m.distractors) for m in draft.memory)
    computations = len(draft.computed)
    apps = len(set(draft.apps))
    score = steps + memory + 2 * dynamics + 2 * computations + 2 * (apps - 1)
    if score >= HARD_SCORE and steps >= HARD_STEPS:
        label = "hard"
    elif score < EASY_SCORE:
        label = "easy"
    else:
        label = "medium"
    return {"label": label, "score": score, "steps": steps, "steps_from": "oracle" if draft.oracle else "subtasks",
            "memory": memory, "dynamics": dynamics, "computations": computations, "apps": apps}
