"""The fake endpoint's answer to the Plus generator prompt, computed by the offline rewriter.

The prompt asks for one part: the days in its "part" (and, when it shows no "memory" yet, the
intent, query, subtasks and memory). Every part of one rewrite is read from the same offline draft
(seeded by what the parts share), so the parts put together are the draft the offline backend
writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
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
    part = inputs.get("part", list(range(1, inputs["days"] + 1)))
    if not isinstance(part, list) or not part or not all(
            isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= inputs["days"] for d in part):
        return {"error": f"'part' must be a list of day numbers from 1 to {inputs['days']}"}
    shared = {k: v for k, v in inputs.items() if k not in PART_FIELDS}  # the same in every part
    draft = _draft(json.dumps(shared, sort_keys=True), feedback)
    head = {} if "memory" in inputs else {k: draft[k] for k in ("intent", "query", "subtasks", "memory")}
    return {**head, "dialogue": [d for d in draft["dialogue"] if d["day"] in part]}


PART_FIELDS = ("part", "memory", "marked")  # what tells one part of a rewrite from another


@lru_cache(maxsize=8)
def _draft(shared: str, feedback: str) -> dict[str, Any]:
    """The whole rewrite the parts are read from (kept for the next parts of the same one)."""
    inputs = json.loads(shared)
    now = datetime.strptime(inputs["now"][:16], "%Y-%m-%d %H:%M")
    seed = derive_seed(inputs, feedback, legacy=SORTED_JSON)
    draft = regenerate(_Seed(inputs["instruction"], inputs["username"], now), seed=seed, days=inputs["days"],
                       utterances_per_day=inputs["utterances_per_day"], feedback=feedback,
                       others=inputs.get("other_instructions", []))
    return {
        "intent": draft.intent, "query": draft.query, "subtasks": draft.subtasks,
        "memory": [m.to_dict() for m in draft.memory],
        "dialogue": [{"day": s.day, "date": s.date, "turns": [_spoken(t.to_dict()) for t in s.turns]}
                     for s in draft.sessions],
    }


def _spoken(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn as the schema has it written: its speaker as the key of its text, then its marks."""
    return {turn["role"]: turn["text"], **{k: v for k, v in turn.items() if k not in ("role", "text", "ts")}}
