"""The llm Plus generator: one structured call turns an instruction into intent, memory and a
multi-day dialogue (timestamps are assigned in code)."""

from __future__ import annotations

from datetime import date
from typing import Any, Sequence

from backends.prompts import render
from generators.dialogue_llm import turn_times
from generators.model import MemoryPiece, Session, Turn
from generators.plus_offline import PlusDraft, SeedLike, infer_apps, tellable
from generators.schemas import PLUS_SCHEMA
from generators.session_clock import working_days_before
from generators.specifics import find_specifics
from office_env.seeding import rng as seeded

# The other seeds' instructions one prompt carries, for its jobs for later to tell.
OTHER_INSTRUCTIONS = 6


def regenerate_llm(client: Any, seed_task: SeedLike, *, days: int = 5, utterances_per_day: int = 70,
                   feedback: str = "", others: Sequence[str] = ()) -> PlusDraft:
    """``others``: the split's other instructions, in the order to try them; the prompt gives the
    first few that this history may tell (``plus_offline.tellable``) as its jobs for later."""
    instruction = seed_task.instruction.strip()
    now = seed_task.now
    dates = working_days_before(now.date(), days)
    specifics = find_specifics(instruction)
    told = tellable(others, instruction)[:OTHER_INSTRUCTIONS]
    inputs = {"instruction": instruction, "username": seed_task.username, "now": now.strftime("%Y-%m-%d %H:%M (%A)"),
              "days": days, "dates": [d.isoformat() for d in dates], "utterances_per_day": utterances_per_day,
              "specifics": [s.text for s in specifics], **({"other_instructions": told} if told else {})}
    messages = render("plus_generator", inputs=inputs, schema=PLUS_SCHEMA, feedback=feedback)
    data = client.structured("plus_generator", messages, PLUS_SCHEMA)
    sessions = []
    for day in data["dialogue"]:
        stamps = turn_times(day["turns"], date.fromisoformat(day["date"]), seeded(day["date"], "stamps", feedback))
        sessions.append(Session(day["day"], day["date"], tuple(
            Turn(t["role"], t["text"], ts, tuple(t.get("evidence", ())), tuple(t.get("superseded", ())),
                 tuple(t.get("distractor", ())), t.get("thread", "")) for t, ts in zip(day["turns"], stamps))))
    return PlusDraft(intent=data["intent"], query=data["query"],
                     memory=[MemoryPiece.from_dict(m) for m in data["memory"]], subtasks=list(data["subtasks"]),
                     sessions=sessions, apps=infer_apps(instruction), description=instruction, specifics=specifics)
