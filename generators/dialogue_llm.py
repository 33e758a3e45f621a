"""The llm dialogue generator: one call per few consecutive days (as many as fit a reply,
``days_per_call``), each day given exactly its planned events.

The history plan (``generators.history_plan``, the same one the offline writer follows) says
what happens in each thread of the task's work on each day: raised, a detail stated, an earlier
value corrected, a near-miss mentioned, a check-in. The model writes the day around those
events, with other work and small talk, and marks the turns; the rules and gates then check it.
The prompt shows what is the same for every day of the task first (the office, the people, the
values to keep out) and the days last, so that a prompt cache holds the first part.
"""

from __future__ import annotations

import json
import random
from datetime import date, datetime
from typing import Any, Sequence

from backends.llm.client import ReplyCutError
from backends.prompts import render
from generators.dialogue_offline import task_values
from generators.history_plan import DayPlan, events_for_prompt
from generators.model import Session, TaskDraft, Turn
from generators.schemas import dialogue_days_schema, thread_turns
from generators.session_clock import timestamps
from office_env.seeding import rng as seeded


def turn_times(turns: list[dict[str, Any]], day: date, rng: random.Random) -> list[str]:
    """The model's timestamps when every turn has one, on ``day`` and strictly increasing;
    otherwise times made in code (so a day is never rejected for its clock alone)."""
    given: list[Any] = [t.get("ts") for t in turns]
    if (all(given) and all(ts.startswith(day.isoformat()) for ts in given)
            and all(a < b for a, b in zip(given, given[1:]))):
        return given
    return timestamps(day, len(turns), rng)


def generate_dialogue_llm(client: Any, draft: TaskDraft, plan: list[DayPlan], *, now: datetime, user_first: str,
                          colleagues: Sequence[str], company: str, projects: Sequence[str], city: str = "",
                          currency: str = "", files: Sequence[str] = (), utterances_per_day: int, feedback: str = "",
                          answers: Sequence[str] = (),
                          absences: Sequence[tuple[str, date, date]] = ()) -> list[Session]:
    """``absences``: ``(first name, first day, last day)`` for each span the office shows a
    colleague away; the prompt lists them so that the chat has nobody do anything on those days."""
    sessions: list[Session] = []
    away = [{"name": name, "first": first.isoformat(), "last": last.isoformat()} for name, first, last in absences]
    said: dict[str, str] = {}  # folded text -> where it was said
    shared = {  # the same for every call of this task: first in the prompt
        "total_days": len(plan), "utterances": utterances_per_day, "user_first": user_first,
        "colleagues": list(colleagues), "company": company, "projects": list(projects), "city": city,
        "currency": currency, "files": list(files), "task_values": sorted(set(task_values(draft.memory))),
        "checked_values": sorted(set(map(str, answers))), "away": away,
    }
    limit = client.reply_tokens("dialogue_day") if hasattr(client, "reply_tokens") else DEFAULT_REPLY_TOKENS
    pending = parts(plan, days_per_call(utterances_per_day, limit))
    while pending:
        chunk = pending.pop(0)
        inputs = {**shared, "days": [{"day": d.day, "date": d.date.isoformat(), "weekday": d.date.strftime("%A"),
                                      "events": events_for_prompt(d.events)} for d in chunk]}
        try:
            written = _write_days(client, inputs, chunk, said, feedback)
        except ReplyCutError:  # longer than planned: the days asked again in two halves, never a higher limit
            if len(chunk) == 1:
                raise
            pending[:0] = [chunk[:len(chunk) // 2], chunk[len(chunk) // 2:]]
            continue
        for day, turns_data in zip(chunk, written):
            stamps = turn_times(turns_data, day.date, seeded(now.isoformat(), day.day, "stamps", feedback))
            turns = tuple(Turn(t["role"], t["text"], ts, tuple(t.get("evidence", ())), tuple(t.get("superseded", ())),
                               tuple(t.get("distractor", ())), t.get("thread", ""))
                          for t, ts in zip(turns_data, stamps))
            for index, turn in enumerate(turns, 1):
                said.setdefault(_fold(turn.text), f"day {day.day} turn {index}")
            sessions.append(Session(day.day, day.date.isoformat(), turns))
    return sessions


def _write_days(client: Any, inputs: dict[str, Any], chunk: list[DayPlan], said: dict[str, str],
                feedback: str) -> list[list[dict[str, Any]]]:
    """The turns of each day of ``chunk``, asked again (with the lines quoted) while they repeat
    lines already said, at most ``DAY_RETRIES`` more times."""
    schema = dialogue_days_schema(len(chunk))
    note = feedback
    for attempt in range(1 + DAY_RETRIES):
        messages = render("dialogue_day", inputs=inputs, schema=schema, feedback=note)
        days = [thread_turns(d["turns"])
                for d in client.structured("dialogue_day", messages, schema, split_on_cut=len(chunk) > 1)["days"]]
        seen, repeats = dict(said), []
        for day, turns in zip(chunk, days):
            repeats += _repeats(turns, seen, day.day)
        if not repeats or attempt == DAY_RETRIES:
            break  # what is left is the verifier's to report
        note = "\n".join(([feedback] if feedback else []) + [
            "These lines were already said; write new ones instead:"] + repeats[:20])
    return days


DEFAULT_REPLY_TOKENS = 4096  # a client that does not say its limit
TURN_TOKENS = 17   # about what one turn takes in a reply (compact JSON, a thread given once per run of turns)
DAY_SHARE = 0.9    # of the reply limit, planned for a call's days


def days_per_call(utterances_per_day: int, reply_tokens: int = DEFAULT_REPLY_TOKENS) -> int:
    """How many days of ``utterances_per_day`` turns one reply of ``reply_tokens`` is planned to hold."""
    return max(1, int(reply_tokens * DAY_SHARE) // max(1, utterances_per_day * TURN_TOKENS))


def parts(plan: list[DayPlan], most: int) -> list[list[DayPlan]]:
    """``plan`` in consecutive parts of at most ``most`` days, as equal in size as they can be."""
    count = -(-len(plan) // max(1, most))
    size = -(-len(plan) // max(1, count))
    return [plan[first:first + size] for first in range(0, len(plan), size)]


DAYS_PER_CALL = days_per_call(70)  # at the default limit, days of 70 turns (the standard shape): three
DAY_RETRIES = 2  # a day that repeats earlier lines is asked again, with those lines quoted


def _fold(text: str) -> str:
    return " ".join(str(text).lower().split())


def _repeats(turns: list[dict[str, Any]], seen: dict[str, str], day: int) -> list[str]:
    """The lines of a day's answer already said on an earlier day or earlier that day (``seen``
    grows with this day's lines)."""
    out = []
    for index, turn in enumerate(turns, 1):
        key = _fold(turn.get("text", ""))
        if key in seen:
            out.append(f"- {json.dumps(str(turn.get('text', '')))} (said at {seen[key]})")
        else:
            seen[key] = f"day {day} turn {index}"
    return out
