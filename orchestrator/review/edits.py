"""Post-edits of a reviewed task: what may be edited, how an edit is checked, and the task as edited.

A reviewer may rewrite the intent, the query, the full description, a memory piece (its text and
value) or one dialogue turn (its text and its marks). An edit is a revision ``(field, value)``:

- ``intent`` / ``query`` / ``description``: the new text;
- ``memory:<id>``: ``{"text": ..., "value": ...}``;
- ``turn:<day index>:<turn index>`` (both from 0): ``{"text": ..., "evidence": [ids],
  "superseded": [ids], "distractor": [ids]}``.

Every value comes from a browser, so it is checked here (types, sizes, control characters, marks
naming memory pieces of the task). The task as edited is the record with its stored revisions
applied in order, each giving a new typed record (an edit the type refuses is an :class:`EditError`);
before a new revision is stored, the task's gates run on the record with it applied
(:func:`check_edit`), and a failing gate refuses it with the gate's reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backends.task_record import RecordError, TaskRecord, parse_record
from office_env.untrusted import printable
from verifier.gates import GateResult, chosen_gates, run_gates

TEXT_FIELDS = ("intent", "query", "description")
MARKS = ("evidence", "superseded", "distractor")
MAX_EDIT_CHARS = 20_000


class EditError(ValueError):
    """An edit that cannot be applied; the message names the field."""


def _text(value: Any, field: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise EditError(f"{field}: must be text")
    value = value.replace("\r\n", "\n").strip()
    if not value and not allow_empty:
        raise EditError(f"{field}: must not be empty")
    if len(value) > MAX_EDIT_CHARS:
        raise EditError(f"{field}: at most {MAX_EDIT_CHARS:,} characters")
    if any(ord(ch) < 32 and ch not in "\n\t" for ch in value):
        raise EditError(f"{field}: holds control characters")
    return value


def _turn_index(record: TaskRecord, field: str) -> tuple[int, int]:
    parts = field.split(":")
    try:
        day, turn = int(parts[1]), int(parts[2])
        if len(parts) != 3:
            raise ValueError
    except (IndexError, ValueError):
        raise EditError(f"{printable(field)[:60]}: a turn is named turn:<day>:<turn>") from None
    sessions = record.dialogue
    if not 0 <= day < len(sessions) or not 0 <= turn < len(sessions[day].turns):
        raise EditError(f"{printable(field)[:60]}: no such turn in this task")
    return day, turn


def _memory_index(record: TaskRecord, field: str) -> int:
    wanted = field.split(":", 1)[1]
    for index, piece in enumerate(record.memory):
        if piece.id == wanted:
            return index
    raise EditError(f"{printable(field)[:60]}: no such memory piece in this task")


def normalize(record: TaskRecord, field: str, value: Any) -> Any:
    """The edit's value as it will be stored, or :class:`EditError` naming what is wrong."""
    if not isinstance(field, str) or len(field) > 100:
        raise EditError("field: not an editable field")
    if field in TEXT_FIELDS:
        return _text(value, field)
    if field.startswith("memory:"):
        index = _memory_index(record, field)
        if not isinstance(value, dict):
            raise EditError(f"{field}: must be an object with text and value")
        piece = record.memory[index]
        text = _text(value.get("text", piece.text), f"{field}.text")
        new_value = value.get("value", piece.value)
        if isinstance(new_value, bool) or not isinstance(new_value, (str, int, float)):
            raise EditError(f"{field}.value: must be text or a number")
        if isinstance(new_value, str):
            new_value = _text(new_value, f"{field}.value")
        return {"text": text, "value": new_value}
    if field.startswith("turn:"):
        _turn_index(record, field)
        if not isinstance(value, dict):
            raise EditError(f"{field}: must be an object with text and marks")
        ids = {piece.id for piece in record.memory}
        out: dict[str, Any] = {"text": _text(value.get("text"), f"{field}.text")}
        for mark in MARKS:
            marks = value.get(mark, [])
            if not isinstance(marks, list) or len(marks) > 50 or not all(isinstance(m, str) for m in marks):
                raise EditError(f"{field}.{mark}: must be a list of memory ids")
            unknown = [m for m in marks if m not in ids]
            if unknown:
                raise EditError(f"{field}.{mark}: {printable(unknown[0])[:40]!r} is not a memory piece of this task")
            out[mark] = sorted(set(marks))
        return out
    raise EditError(f"{printable(field)[:60]}: not an editable field (intent, query, description, memory:<id>, "
                    "turn:<day>:<turn>)")


def apply_edit(record: TaskRecord, field: str, value: Any) -> TaskRecord:
    """``record`` with one (normalized) edit applied, typed again (:class:`EditError` when the
    type refuses what the edit makes, say a number for a piece's value)."""
    value = normalize(record, field, value)
    if field in TEXT_FIELDS:
        update: dict[str, Any] = {field: value}
    elif field.startswith("memory:"):
        index = _memory_index(record, field)
        memory = [piece.to_dict() for piece in record.memory]
        memory[index].update(value)
        update = {"memory": memory}
    else:
        day, turn = _turn_index(record, field)
        dialogue = [session.to_dict() for session in record.dialogue]
        target = dialogue[day]["turns"][turn]
        target["text"] = value["text"]
        for mark in MARKS:
            if value[mark]:
                target[mark] = value[mark]
            else:
                target.pop(mark, None)
        update = {"dialogue": dialogue}
    try:
        return parse_record({**record.to_dict(), **update})
    except RecordError as exc:
        raise EditError(f"{printable(field)[:60]}: {exc}") from None


def edited_record(record: TaskRecord, revisions: list[dict[str, Any]]) -> TaskRecord:
    """``record`` with every stored revision applied in order (a revision that no longer applies,
    say a stranger's row in the file, is an :class:`EditError` naming it)."""
    for revision in revisions:
        try:
            record = apply_edit(record, revision["field"], revision["value"])
        except EditError as exc:
            raise EditError(f"revision {revision.get('id')}: {exc}") from None
    return record


def recheck(record: TaskRecord, testbed: Path, reference: Path | None) -> dict[str, GateResult]:
    """The task's gates (with the extra gates it was built with) on ``record``, as ``homer verify`` runs them."""
    recorded = record.provenance.gates
    extra = tuple(g for g in chosen_gates() if g in recorded)
    agents = None
    if {"solvability", "leakage"} & set(extra):
        from verifier.agent_gates import gate_agents

        agents = gate_agents("offline", None)
    return run_gates(record, testbed, reference, extra=extra, agents=agents)


def dialogue_problems(record: TaskRecord) -> set[str]:
    """What the build's dialogue rules (``verifier.dialogue_rules``) find in the record's chat: no
    memory value in the intent or query, no claim that the work is done, no line said twice ..."""
    from backends.dataset_reader import task_now
    from generators.model import TaskDraft
    from verifier.dialogue_rules import check_dialogue

    try:
        draft = TaskDraft.from_dict(record.to_dict())  # the draft's reader takes a record as written
        sessions = [session.to_dict() for session in record.dialogue]
        verdict = check_dialogue(draft, sessions, min_days=len(sessions), now=task_now(record))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return {f"the record cannot be checked ({exc.__class__.__name__})"}
    return set() if verdict.passed else {line.strip() for line in verdict.feedback.splitlines() if line.strip()}


def check_edit(record: TaskRecord, field: str, value: Any, testbed: Path,
               reference: Path | None) -> tuple[TaskRecord, Any, list[str]]:
    """Apply an edit to the task as edited so far and run its gates and the dialogue rules: the
    edited record, the value to store and the reasons to refuse it (empty when it may be stored).
    A rule the task already broke before the edit does not refuse it; one the edit breaks does."""
    stored = normalize(record, field, value)
    edited = apply_edit(record, field, stored)
    results = recheck(edited, testbed, reference)
    failures = [f"{name}: {result.detail}" for name, result in results.items() if not result.passed]
    new = sorted(dialogue_problems(edited) - dialogue_problems(record))
    failures += [f"dialogue_rules: {problem}" for problem in new[:5]]
    return edited, stored, failures
