"""The llm dialogue generator: one call per day, each given exactly that day's memory pieces."""

from __future__ import annotations

import random
from datetime import date, datetime
from typing import Any

from backends.prompts import render
from generators.dialogue_offline import timestamps, working_days_before
from generators.model import MemoryPiece, Session, TaskDraft, Turn
from generators.schemas import DIALOGUE_DAY_SCHEMA


def assign_days(memory: list[MemoryPiece], days: int) -> list[list[MemoryPiece]]:
    """Spread the pieces over the days in order, as evenly as possible."""
    plan: list[list[MemoryPiece]] = [[] for _ in range(days)]
    for index, piece in enumerate(memory):
        plan[min(days - 1, index * days // max(1, len(memory)))].append(piece)
    return plan


def turn_times(turns: list[dict[str, Any]], day: date, rng: random.Random) -> list[str]:
    """The model's timestamps when every turn has one, on ``day`` and strictly increasing;
    otherwise times made in code (so a day is never rejected for its clock alone)."""
    given = [t.get("ts") for t in turns]
    if all(given) and all(ts.startswith(day.isoformat()) for ts in given) and all(a < b for a, b in zip(given, given[1:])):
        return given  # type: ignore[return-value]
    return timestamps(day, len(turns), rng)


def generate_dialogue_llm(client: Any, draft: TaskDraft, *, now: datetime, user_first: str,
                          colleagues: list[str], company: str, projects: list[str], days: int,
                          utterances_per_day: int, feedback: str = "") -> list[Session]:
    dates = working_days_before(now.date(), days)
    sessions = []
    for day, (when, pieces) in enumerate(zip(dates, assign_days(draft.memory, days)), start=1):
        inputs = {
            "day": day, "total_days": days, "date": when.isoformat(), "start_time": "09:00",
            "utterances": utterances_per_day, "user_first": user_first, "colleagues": colleagues,
            "company": company, "projects": projects,
            "memory": [{"id": p.id, "text": p.text, "value": p.value} for p in pieces],
        }
        messages = render("dialogue_day", inputs=inputs, schema=DIALOGUE_DAY_SCHEMA, feedback=feedback)
        data = client.structured("dialogue_day", messages, DIALOGUE_DAY_SCHEMA)
        stamps = turn_times(data["turns"], when, random.Random(f"{now.isoformat()}:{day}:{feedback}"))
        turns = tuple(Turn(t["role"], t["text"], ts, tuple(t.get("evidence", ())))
                      for t, ts in zip(data["turns"], stamps))
        sessions.append(Session(day, when.isoformat(), turns))
    return sessions
