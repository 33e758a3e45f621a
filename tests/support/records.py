"""Task records and JSON files for the tests: a sample record with every optional part, the records
of a written dataset, and places in a record's dialogue that are safe to edit."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from backends.task_record import TaskRecord, parse_record


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


MARKS = ("evidence", "superseded", "distractor")


def plain_turn(record: dict) -> tuple[int, int]:
    """(day index, turn index) of a turn two turns away from every marked one: a safe place for a
    harmless edit."""
    for d, session in enumerate(record["dialogue"]):
        turns = session["turns"]
        for t in range(2, len(turns) - 2):
            if not any(turns[i].get(m) for i in range(t - 2, t + 3) for m in MARKS):
                return d, t
    raise AssertionError("no unmarked turn")


def evidence_turn(record: dict) -> tuple[int, int]:
    """(day index, turn index) of the first evidence turn."""
    return next((d, t) for d, s in enumerate(record["dialogue"]) for t, turn in enumerate(s["turns"])
                if turn.get("evidence"))


def task_records(dataset: Path) -> list[dict]:
    """The task records of a written dataset, by id."""
    return [json.loads(p.read_text()) for p in sorted((dataset / "tasks").glob("*/task.json"))]


def task_record_sample(task_id: str = "neo-00001") -> dict[str, Any]:
    """A small record with every optional part the builders write."""
    return {
        "id": task_id, "split": "neo", "family": "lookup", "difficulty": "easy", "apps": ["word", "email"],
        "app_count": 2, "user": {"name": "Ann Lee", "username": "ann", "email": "ann@example.com"},
        "now": {"date": "2025-04-07", "weekday": "Monday", "time": "09:30"},
        "description": "d", "intent": "i", "subtasks": ["s"], "query": "q",
        "memory": [{"id": "m1", "kind": "fact", "text": "t", "value": "Room 4", "thread": "t1",
                    "superseded": ["Room 3"], "distractors": [{"value": "Room 5", "text": "x"}], "said_as": "r",
                    "cue": "c", "about": "a"}],
        "evaluation": [{"function": "evaluate_file_exists", "args": {"file": "data/a.docx"}}],
        "dialogue": [{"day": 1, "date": "2025-04-06", "turns": [
            {"role": "user", "text": "Room 3", "ts": "2025-04-06T09:00:00", "superseded": ["m1"], "thread": "t1"},
            {"role": "assistant", "text": "ok", "ts": "2025-04-06T09:00:05", "evidence": ["m1"]}]}],
        "oracle": [{"tool": "word_create", "args": {"file": "a.docx"}}], "baseline": [],
        "misreadings": [{"memory": "m1", "dynamic": "superseded", "value": "Room 3", "plan": []}],
        "computed": [{"value": 3, "op": "sum", "inputs": [1, 2.5, "x"], "given": ["m1"]}],
        "provenance": {"backend": "offline", "model": None, "seed": 1, "rounds": 1, "gates": {}, "world_seed": 7},
    }


def record_with(task_id: str = "neo-00001", **fields: Any) -> dict[str, Any]:
    """The sample record with ``fields`` in place of its own (a field given as None is left out):
    a whole record, as a task.json holds it, that differs where a test says."""
    return {key: value for key, value in {**task_record_sample(task_id), **fields}.items() if value is not None}


def typed_record(task_id: str = "neo-00001", **fields: Any) -> TaskRecord:
    """``record_with`` as the typed record the readers take."""
    return parse_record(record_with(task_id, **fields))


def provenance(**extra: Any) -> dict[str, Any]:
    """The provenance of an offline build, with ``extra`` keys (``world_seed``, ``tokens`` ...)."""
    return {"backend": "offline", "model": None, "seed": 1, "rounds": 1, "gates": {}, **extra}


def dialogue_record(*sessions: list[dict[str, Any]] | dict[str, Any], memory: list[dict[str, Any]] | None = None,
                    **fields: Any) -> dict[str, Any]:
    """A whole record around a dialogue a test writes: each session a list of turns
    (``{"role", "text", ...marks}``) or ``{"date", "turns"}``; a session without a date is said a
    day after the one before (from 2025-03-10), a turn's ``ts`` is filled in, and a memory piece
    without ``kind`` or ``text`` gets them."""
    dialogue, day = [], date(2025, 3, 10)
    for number, session in enumerate(sessions, start=1):
        day = date.fromisoformat(session["date"]) if isinstance(session, dict) else day + timedelta(days=number > 1)
        turns = session["turns"] if isinstance(session, dict) else session
        dialogue.append({"day": number, "date": day.isoformat(), "turns": [
            {"ts": f"{day.isoformat()}T{8 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}", **turn}
            for i, turn in enumerate(turns)]})
    pieces = [{"kind": "fact", "text": f"piece {p.get('id')}", **p} for p in memory or []]
    return record_with(dialogue=dialogue, memory=pieces, **fields)
