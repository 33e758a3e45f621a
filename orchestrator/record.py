"""Turn a finished graph state into the task record (``backends.task_record.TaskRecord``; its
schema: ``verifier/schemas/task.schema.json``), and add to a built record what its build learns
later (the model usage, the gates' results), each time as a new record."""

from __future__ import annotations

from typing import Any, cast

from backends.task_record import (
    App,
    Computed,
    Memory,
    Misreading,
    Now,
    Provenance,
    Session,
    Step,
    TaskRecord,
    User,
    Weekday,
)
from backends.tokens import count_tokens, counter_name
from generators.difficulty import measure_difficulty
from generators.model import Session as DraftSession
from generators.model import TaskDraft, ToolCall
from office_env.evaluation.criterion import Criterion
from orchestrator.roles import Job
from verifier.duplicates import description_words, identity_keys
from verifier.gate_result import GateResult
from verifier.gates import kept_findings


def dialogue_tokens(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    per_session = [sum(count_tokens(t["text"]) for t in s["turns"]) for s in sessions]
    return {"counter": counter_name(), "dialogue": sum(per_session), "per_session": per_session}


def _plan(calls: list[ToolCall]) -> list[Step]:
    return [Step(tool=c.tool, args=c.args) for c in calls]


def draft_identity(job: Job, draft: TaskDraft) -> tuple[list[str], list[str]]:
    """The duplicate keys and near words (``verifier.duplicates``) of the task ``draft`` becomes:
    its record holds these parts as they are here, typed as :func:`build_record` types them (the
    chat changes none of them), so a build can tell a repeat before the chat is written."""
    memory = [Memory.model_validate(m.to_dict()) for m in draft.memory]
    computed = [Computed.model_validate(dict(c)) for c in draft.computed]
    keys = identity_keys(world=job.world.seed, family=draft.family, description=draft.description,
                         criteria=[Criterion.model_validate(c).to_dict() for c in draft.evaluation],
                         user=job.world.user.user, said=[m.value for m in memory],
                         computed=[(c.op, c.value) for c in computed])
    return keys, description_words(draft.family, draft.description)


def build_record(job: Job, draft: TaskDraft, sessions: list[DraftSession], rounds: int,
                 feedback_log: list[str]) -> TaskRecord:
    world = job.world
    dialogue = [s.to_dict() for s in sessions]
    difficulty = measure_difficulty(draft)
    record = TaskRecord(
        id=job.task_id, split="neo", family=draft.family, difficulty=difficulty["label"],
        apps=cast("list[App]", list(draft.apps)), app_count=len(draft.apps),
        user=User(name=world.user.name, username=world.user.user, email=world.user.email),
        now=Now(date=f"{world.now:%Y-%m-%d}", weekday=cast(Weekday, f"{world.now:%A}"), time=f"{world.now:%H:%M}"),
        description=draft.description, intent=draft.intent, subtasks=list(draft.subtasks), query=draft.query,
        memory=[Memory.model_validate(m.to_dict()) for m in draft.memory],
        evaluation=[Criterion.model_validate(c) for c in draft.evaluation],
        dialogue=[Session.model_validate(s) for s in dialogue],
        oracle=_plan(draft.oracle), baseline=_plan(draft.baseline),
        misreadings=[Misreading.model_validate(m.to_dict()) for m in draft.misreadings],
        computed=[Computed.model_validate(dict(c)) for c in draft.computed],
        provenance=Provenance.model_validate({  # an open object: its keys beyond the schema's are kept as given
            "backend": job.config.backend, "model": job.config.model, "seed": job.config.seed, "index": job.index,
            "world_seed": world.seed, "rounds": rounds, "verifier_feedback": feedback_log, "gates": {},
            "tokens": dialogue_tokens(dialogue), "difficulty": difficulty}),
    )
    record.keep_dialogue_dicts(dialogue)  # the chat's dicts serve the gates and the writer as they are
    return record


def with_provenance(record: TaskRecord, **keys: Any) -> TaskRecord:
    """``record`` with ``keys`` set in its provenance (a new record: a built one is never changed)."""
    return record.model_copy(update={"provenance": record.provenance.model_copy(update=keys)})


def with_usage(record: TaskRecord, spent: dict[str, Any], cost: float | None) -> TaskRecord:
    """``record`` with the model calls its task made (``tokens.llm``) and, when prices are known, their cost."""
    tokens = {**(record.provenance.tokens or {}), "llm": spent}
    return with_provenance(record, tokens=tokens, **({"cost_usd": cost} if cost is not None else {}))


def with_gates(record: TaskRecord, results: dict[str, GateResult]) -> TaskRecord:
    """``record`` with its gates' results and what it keeps of their findings (the trace): the
    writer stores them, the gates do not."""
    return with_provenance(record, gates={name: r.to_dict() for name, r in results.items()},
                           **kept_findings(results))
