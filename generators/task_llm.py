"""The llm task generator: one structured call, checked against the catalog and memory rules."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backends.prompts import render
from generators.model import TaskDraft
from generators.schemas import TASK_DRAFT_SCHEMA
from office_env.evaluation import catalog_summary, validate_criteria


def draft_problems(data: dict[str, Any]) -> list[str]:
    """What the schema cannot see: criteria against the catalog, and the memory rules."""
    problems = [str(p) for p in validate_criteria(data["evaluation"])]
    ids = [m["id"] for m in data["memory"]]
    if len(set(ids)) != len(ids):
        problems.append("memory: ids must be unique")
    intent = data["intent"].lower()
    for piece in data["memory"]:
        if piece["value"].lower() not in piece["text"].lower():
            problems.append(f"memory {piece['id']}: value {piece['value']!r} must appear verbatim in its text")
        if piece["value"].lower() in intent:
            problems.append(f"intent: contains the memory value {piece['value']!r}; remove every specific")
        for near in piece.get("distractors", ()):
            if near["value"].lower() not in near["text"].lower():
                problems.append(f"memory {piece['id']}: distractor value {near['value']!r} must appear verbatim in its text")
    values = [(p["id"], v) for p in data["memory"]
              for v in (p["value"], *p.get("superseded", ()), *(d["value"] for d in p.get("distractors", ())))]
    for index, (mid, value) in enumerate(values):
        for other_id, other in values[index + 1:]:
            if value.lower() in other.lower() or other.lower() in value.lower():
                problems.append(f"memory {mid} and {other_id}: the values {value!r} and {other!r} overlap; "
                                "every value must be distinct and contain no other")
    known = {(p["id"], v) for p in data["memory"] for v in p.get("superseded", ())} | \
        {(p["id"], d["value"]) for p in data["memory"] for d in p.get("distractors", ())}
    for m in data.get("misreadings", ()):
        if (m["memory"], m["value"]) not in known:
            problems.append(f"misreadings: {m['memory']} has no superseded or near-miss value {m['value']!r}")
    return problems


def generate_task_llm(client: Any, *, plan: dict[str, Any], notes: dict[str, Any], user: dict[str, str],
                      colleagues: list[dict[str, str]], now: datetime, attempts: int = 2) -> TaskDraft:
    """Ask for a task; re-ask with the problems quoted, at most ``attempts`` times in all."""
    inputs = {"plan": plan, "notes": notes, "user": user, "colleagues": colleagues,
              "now": now.strftime("%Y-%m-%d %H:%M (%A)"), "catalog": catalog_summary()}
    feedback = ""
    for _ in range(attempts):
        messages = render("task_generator", inputs=inputs, schema=TASK_DRAFT_SCHEMA, feedback=feedback)
        data = client.structured("task_generator", messages, TASK_DRAFT_SCHEMA)
        problems = draft_problems(data)
        if not problems:
            return TaskDraft.from_dict({**data, "oracle": data.get("oracle", []), "baseline": data.get("baseline", []),
                                        "misreadings": data.get("misreadings", []) if data.get("oracle") else []})
        feedback = "\n".join(problems)
    raise ValueError(f"task generator: {feedback.splitlines()[0]}")
