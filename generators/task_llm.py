"""The llm task generator: one structured call, checked against the catalog and memory rules."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from backends.prompts import render
from generators.model import TaskDraft
from generators.schemas import TASK_DRAFT_SCHEMA
from generators.specifics import says_value
from office_env.evaluation import catalog_summary, validate_criteria
from office_env.synthesis.documents import is_superseded


def draft_problems(data: dict[str, Any]) -> list[str]:
    """What the schema cannot see: criteria against the catalog, and the memory rules."""
    problems = [str(p) for p in validate_criteria(data["evaluation"])]
    ids = [m["id"] for m in data["memory"]]
    if len(set(ids)) != len(ids):
        problems.append("memory: ids must be unique")
    intent = data["intent"]
    for piece in data["memory"]:
        if piece["value"].lower() not in piece["text"].lower():
            problems.append(f"memory {piece['id']}: value {piece['value']!r} must appear verbatim in its text")
        if says_value(intent, piece["value"]):
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


_QUOTE_HEAD_RE = re.compile(r"^On .{1,120} wrote:$")


def notes_for_prompt(notes: dict[str, Any]) -> dict[str, Any]:
    """The surfer notes a model needs to write a task, without what costs tokens and adds nothing:
    superseded copies (no task is set on them) and the quoted lines of replies and forwards'
    earlier messages (each is in the inbox as its own message)."""
    out: dict[str, Any] = {}
    for app, note in notes.items():
        note = dict(note)
        if isinstance(note.get("files"), list):
            note["files"] = [f for f in note["files"] if not (isinstance(f, dict) and is_superseded(str(f.get("file", ""))))]
        if isinstance(note.get("mailboxes"), list):
            note["mailboxes"] = [dict(box, messages=[_unquoted(m) for m in box.get("messages", [])])
                                 if isinstance(box, dict) else box for box in note["mailboxes"]]
        out[app] = note
    return out


def _unquoted(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("body"), str):
        return message
    lines = [line for line in message["body"].split("\n") if not line.startswith(">") and not _QUOTE_HEAD_RE.match(line)]
    return {**message, "body": "\n".join(lines).strip()}


def generate_task_llm(client: Any, *, plan: dict[str, Any], notes: dict[str, Any], user: dict[str, str],
                      colleagues: list[dict[str, str]], now: datetime, attempts: int = 2) -> TaskDraft:
    """Ask for a task; re-ask with the problems quoted, at most ``attempts`` times in all."""
    inputs = {"plan": plan, "notes": notes_for_prompt(notes), "user": user, "colleagues": colleagues,
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
