"""Turn a finished graph state into the ``task.json`` record (its schema:
``verifier/schemas/task.schema.json``)."""

from __future__ import annotations

from typing import Any

from backends.tokens import count_tokens, counter_name
from generators.difficulty import measure_difficulty
from generators.model import Session, TaskDraft
from orchestrator.roles import Job


def dialogue_tokens(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    per_session = [sum(count_tokens(t["text"]) for t in s["turns"]) for s in sessions]
    return {"counter": counter_name(), "dialogue": sum(per_session), "per_session": per_session}


def build_record(job: Job, draft: TaskDraft, sessions: list[Session], rounds: int,
                 feedback_log: list[str]) -> dict[str, Any]:
    world = job.world
    dialogue = [s.to_dict() for s in sessions]
    difficulty = measure_difficulty(draft)
    return {
        "id": job.task_id,
        "split": "neo",
        "family": draft.family,
        "difficulty": difficulty["label"],
        "apps": list(draft.apps),
        "app_count": len(draft.apps),
        "user": {"name": world.user.name, "username": world.user.user, "email": world.user.email},
        "now": {"date": f"{world.now:%Y-%m-%d}", "weekday": f"{world.now:%A}", "time": f"{world.now:%H:%M}"},
        "description": draft.description,
        "intent": draft.intent,
        "subtasks": list(draft.subtasks),
        "query": draft.query,
        "memory": [m.to_dict() for m in draft.memory],
        "evaluation": draft.evaluation,
        "dialogue": dialogue,
        "oracle": [{"tool": c.tool, "args": c.args} for c in draft.oracle],
        "baseline": [{"tool": c.tool, "args": c.args} for c in draft.baseline],
        "misreadings": [m.to_dict() for m in draft.misreadings],
        "computed": [dict(c) for c in draft.computed],
        "provenance": {
            "backend": job.config.backend,
            "model": job.config.model,
            "seed": job.config.seed,
            "index": job.index,
            "world_seed": world.seed,
            "rounds": rounds,
            "verifier_feedback": feedback_log,
            "gates": {},
            "tokens": dialogue_tokens(dialogue),
            "difficulty": difficulty,
        },
    }
