"""The llm dialogue generator: one call per day, each given exactly that day's planned events.

The history plan (``generators.history_plan``, the same one the offline writer follows) says
what happens in each thread of the task's work on each day: raised, a detail stated, an earlier
value corrected, a near-miss mentioned, a check-in. The model writes the day around those
events, with other work and small talk, and marks the turns; the rules and gates then check it.
"""

from __future__ import annotations

import json
import random
from datetime import date, datetime
from typing import Any, Sequence

from backends.prompts import render
from generators.dialogue_offline import task_values, timestamps
from generators.history_plan import DayPlan
from generators.model import Session, TaskDraft, Turn
from generators.schemas import DIALOGUE_DAY_SCHEMA
from office_env.seeding import rng as seeded


def turn_times(turns: list[dict[str, Any]], day: date, rng: random.Random) -> list[str]:
    """The model's timestamps when every turn has one, on ``day`` and strictly increasing;
    otherwise times made in code (so a day is never rejected for its clock alone)."""
    given = [t.get("ts") for t in turns]
    if all(given) and all(ts.startswith(day.isoformat()) for ts in given) and all(a < b for a, b in zip(given, given[1:])):
        return given  # type: ignore[return-value]
    return timestamps(day, len(turns), rng)


def generate_dialogue_llm(client: Any, draft: TaskDraft, plan: list[DayPlan], *, now: datetime, user_first: str,
                          colleagues: Sequence[str], company: str, projects: Sequence[str], city: str = "",
                          currency: str = "", files: Sequence[str] = (), utterances_per_day: int, feedback: str = "",
                          answers: Sequence[str] = (), absences: Sequence[tuple[str, date, date]] = ()) -> list[Session]:
    """``absences``: ``(first name, first day, last day)`` for each span the office shows a
    colleague away; the prompt lists them so that the chat has nobody do anything on those days."""
    sessions: list[Session] = []
    away = [{"name": name, "first": first.isoformat(), "last": last.isoformat()} for name, first, last in absences]
    said: dict[str, str] = {}  # folded text -> where it was said
    values = sorted(set(task_values(draft.memory)))
    for day in plan:
        inputs = {
            "day": day.day, "total_days": len(plan), "date": day.date.isoformat(), "weekday": day.date.strftime("%A"),
            "utterances": utterances_per_day, "user_first": user_first, "colleagues": list(colleagues),
            "company": company, "projects": list(projects), "city": city, "currency": currency, "files": list(files),
            "events": [e.to_dict() for e in day.events], "task_values": values,
            "checked_values": sorted(set(map(str, answers))), "away": away,
        }
        note = feedback
        for attempt in range(1 + DAY_RETRIES):
            messages = render("dialogue_day", inputs=inputs, schema=DIALOGUE_DAY_SCHEMA, feedback=note)
            data = client.structured("dialogue_day", messages, DIALOGUE_DAY_SCHEMA)
            repeats = _repeats(data["turns"], said, day.day)
            if not repeats or attempt == DAY_RETRIES:
                break  # what is left is the verifier's to report
            note = "\n".join(([feedback] if feedback else []) + [
                "These lines were already said; write new ones instead:"] + repeats[:20])
        stamps = turn_times(data["turns"], day.date, seeded(now.isoformat(), day.day, "stamps", feedback))
        turns = tuple(Turn(t["role"], t["text"], ts, tuple(t.get("evidence", ())), tuple(t.get("superseded", ())),
                           tuple(t.get("distractor", ())), t.get("thread", ""))
                      for t, ts in zip(data["turns"], stamps))
        for index, turn in enumerate(turns, 1):
            said.setdefault(_fold(turn.text), f"day {day.day} turn {index}")
        sessions.append(Session(day.day, day.date.isoformat(), turns))
    return sessions


DAY_RETRIES = 2  # a day that repeats earlier lines is asked again, with those lines quoted


def _fold(text: str) -> str:
    return " ".join(str(text).lower().split())


def _repeats(turns: list[dict[str, Any]], said: dict[str, str], day: int) -> list[str]:
    """The lines of a day's answer already said on an earlier day or earlier that day."""
    seen = dict(said)
    out = []
    for index, turn in enumerate(turns, 1):
        key = _fold(turn.get("text", ""))
        if key in seen:
            out.append(f"- {json.dumps(str(turn.get('text', '')))} (said at {seen[key]})")
        else:
            seen[key] = f"day {day} turn {index}"
    return out
