"""The llm Plus generator: an instruction turned into intent, memory and a multi-day dialogue,
written in parts that each fit one reply (timestamps are assigned in code).

The first part gives the intent, query, subtasks and memory with the first few days; each later
part gives the next few days, shown the memory and which pieces earlier days marked. Parts are
sized from the role's reply limit (``part_days``); a part cut at the limit anyway is asked again
as two halves, never resent with a higher limit (that costs its text twice).
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any, Sequence

from backends.llm.client import ReplyCutError
from backends.prompts import render
from generators.dialogue_llm import turn_times
from generators.model import MemoryPiece, Session, Turn
from generators.plus_offline import PlusDraft, SeedLike, infer_apps, tellable
from generators.schemas import PLUS_HEAD, PLUS_SCHEMA, spoken_turn
from generators.session_clock import working_days_before
from generators.specifics import find_specifics
from office_env.seeding import rng as seeded

__all__ = ["PLUS_SCHEMA", "part_days", "regenerate_llm"]

# The other seeds' instructions one prompt carries, for its jobs for later to tell.
OTHER_INSTRUCTIONS = 6
DEFAULT_REPLY_TOKENS = 4096   # a client that does not say its limit
TURN_TOKENS = 20              # about what one turn and its marks take in a reply
PART_SHARE = 0.75             # of the reply limit, planned for a part's days: room for the intent and memory
MARKS = ("evidence", "superseded", "distractor")


def part_days(days: int, utterances_per_day: int, reply_tokens: int = DEFAULT_REPLY_TOKENS) -> list[list[int]]:
    """Days 1..``days`` in consecutive parts of about equal size, each planned to fit
    ``PART_SHARE`` of a ``reply_tokens`` reply."""
    per_part = max(1, int(reply_tokens * PART_SHARE) // max(1, utterances_per_day * TURN_TOKENS))
    count = math.ceil(days / per_part)
    size = math.ceil(days / count)
    return [list(range(first, min(days, first + size - 1) + 1)) for first in range(1, days + 1, size)]


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
    limit = client.reply_tokens("plus_generator") if hasattr(client, "reply_tokens") else DEFAULT_REPLY_TOKENS
    pending = part_days(days, utterances_per_day, limit)
    head: dict[str, Any] | None = None
    written: list[dict[str, Any]] = []
    while pending:
        part = pending.pop(0)
        try:
            data = _ask(client, inputs, part, head, written, feedback)
        except ReplyCutError:
            if len(part) == 1:
                raise
            half = len(part) // 2
            pending[:0] = [part[:half], part[half:]]
            continue
        if head is None:
            head = {key: data[key] for key in PLUS_HEAD}
        written += data["dialogue"]
    assert head is not None  # the first part gives it or raises
    sessions = []
    for day in written:
        turns = [spoken_turn(t) for t in day["turns"]]
        stamps = turn_times(turns, date.fromisoformat(day["date"]), seeded(day["date"], "stamps", feedback))
        sessions.append(Session(day["day"], day["date"], tuple(
            Turn(t["role"], t["text"], ts, tuple(t.get("evidence", ())), tuple(t.get("superseded", ())),
                 tuple(t.get("distractor", ())), t.get("thread", "")) for t, ts in zip(turns, stamps))))
    return PlusDraft(intent=head["intent"], query=head["query"],
                     memory=[MemoryPiece.from_dict(m) for m in head["memory"]], subtasks=list(head["subtasks"]),
                     sessions=sessions, apps=infer_apps(instruction), description=instruction, specifics=specifics)


def _ask(client: Any, inputs: dict[str, Any], part: list[int], head: dict[str, Any] | None,
         written: list[dict[str, Any]], feedback: str) -> dict[str, Any]:
    """One part's reply: the days of ``part`` (and the head when none is written yet), each day
    the one asked and on its date."""
    later = {} if head is None else {"memory": head["memory"], "marked": marked(written)}
    asked = {**inputs, **later, "part": part}
    messages = render("plus_generator", inputs=asked, schema=PLUS_SCHEMA, feedback=feedback)
    data = client.structured("plus_generator", messages, PLUS_SCHEMA, split_on_cut=len(part) > 1)
    if head is None and any(key not in data for key in PLUS_HEAD):
        raise ValueError(f"the first part must give {', '.join(PLUS_HEAD)}")
    got = [(d["day"], d["date"]) for d in data["dialogue"]]
    want = [(day, inputs["dates"][day - 1]) for day in part]
    if got != want:
        raise ValueError(f"the part gave days {[d for d, _ in got]} ({', '.join(x for _, x in got)}); "
                         f"asked {part} ({', '.join(x for _, x in want)})")
    return data


def marked(days: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Which memory pieces the days written so far mark, how and on which day: what a later part
    needs to know of them (not their text)."""
    out: list[dict[str, Any]] = []
    for day in days:
        for turn in day["turns"]:
            for mark in MARKS:
                for piece in turn.get(mark) or ():
                    entry = {"memory": piece, "mark": mark, "day": day["day"]}
                    if entry not in out:
                        out.append(entry)
    return out
