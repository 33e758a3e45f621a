"""The llm verifier: the dialogue rules as code first (free), then the model's judgement.

The model is sent what it judges: the intent, the memory, and the turns of the work (the task's
threads, the other work, every marked turn). Small talk is left out: the rules it could break that
code can check (values, repeats, times, claims of completion) are checked above, and it is most of
a history's tokens."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backends.prompts import render
from generators.model import Session, TaskDraft, Verdict, transcript
from verifier.dialogue_rules import check_dialogue
from verifier.schemas import VERDICT_SCHEMA


def verify_llm(client: Any, draft: TaskDraft, sessions: list[Session], *, min_days: int,
               now: datetime | None = None) -> Verdict:
    ruled = check_dialogue(draft, sessions, min_days=min_days, now=now)
    if not ruled.passed:
        return ruled  # a rule broken in code needs no model to say so
    inputs = {"min_days": min_days, "intent": draft.intent,
              "memory": [{k: v for k, v in m.to_dict().items() if k not in ("cue", "about")} for m in draft.memory]}
    shown = transcript(sessions, evidence=True, work_only=True, seconds=False)  # times to the minute name a turn
    messages = render("verifier", inputs=inputs, transcript=shown, schema=VERDICT_SCHEMA)
    data = client.structured("verifier", messages, VERDICT_SCHEMA)
    return Verdict(bool(data["passed"]), data["feedback"].strip() or ("ok" if data["passed"] else "rejected"))
