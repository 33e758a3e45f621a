"""The fake endpoint's answer to the Plus generator prompt, computed by the offline rewriter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from generators.plus_offline import regenerate
from office_env.limits import MAX_TOLD_INSTRUCTION_CHARS
from office_env.seeding import SORTED_JSON, derive_seed


@dataclass(frozen=True)
class _Seed:
    instruction: str
    username: str
    now: datetime
    app_count: int = 1


MAX_DAYS = 366
MAX_UTTERANCES_PER_DAY = 1_000
MAX_OTHERS = 32
MAX_OTHER_CHARS = MAX_TOLD_INSTRUCTION_CHARS


def answer_plus(inputs: dict[str, Any], feedback: str) -> dict[str, Any]:
    for field, most in (("days", MAX_DAYS), ("utterances_per_day", MAX_UTTERANCES_PER_DAY)):
        value = inputs.get(field)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
            return {"error": f"'{field}' must be an integer from 1 to {most}"}  # the work grows with it
    others = inputs.get("other_instructions", [])
    if (not isinstance(others, list) or len(others) > MAX_OTHERS
            or not all(isinstance(o, str) and len(o) <= MAX_OTHER_CHARS for o in others)):
        return {"error": f"'other_instructions' must be a list of at most {MAX_OTHERS} strings of at most "
                         f"{MAX_OTHER_CHARS} characters"}
    now = datetime.strptime(inputs["now"][:16], "%Y-%m-%d %H:%M")
    seed = derive_seed(inputs, feedback, legacy=SORTED_JSON)
    draft = regenerate(_Seed(inputs["instruction"], inputs["username"], now), seed=seed, days=inputs["days"],
                       utterances_per_day=inputs["utterances_per_day"], feedback=feedback, others=others)
    return {
        "intent": draft.intent, "query": draft.query, "subtasks": draft.subtasks,
        "memory": [m.to_dict() for m in draft.memory],
        "dialogue": [{"day": s.day, "date": s.date,
                      "turns": [{k: v for k, v in t.to_dict().items() if k != "ts"} for t in s.turns]}
                     for s in draft.sessions],
    }
