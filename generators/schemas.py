"""JSON Schemas for what the llm generators must return (validated before anything is used)."""

from __future__ import annotations

from typing import Any

from office_env.apps import office_apps

MEMORY_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^m[0-9]+$"},
        "kind": {"enum": ["fact", "action"]},
        "text": {"type": "string", "minLength": 1},
        "value": {"type": "string", "minLength": 1},
        "thread": {"type": "string", "pattern": "^t[0-9]+$"},
        "superseded": {"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 1}},
        "distractors": {"type": "array", "maxItems": 3, "items": {
            "type": "object", "properties": {"value": {"type": "string", "minLength": 1},
                                             "text": {"type": "string", "minLength": 1}},
            "required": ["value", "text"], "additionalProperties": False}},
        "said_as": {"type": "string", "minLength": 1},
        "cue": {"type": "string"},
        "about": {"type": "string"},
        "derived": {"type": "object", "properties": {
            "rule": {"type": "string", "minLength": 1, "maxLength": 40},
            "amount": {"type": "integer", "minimum": 0, "maximum": 100_000},
            "anchor": {"type": "string", "minLength": 1, "maxLength": 200},
            "base": {"type": "string", "minLength": 1, "maxLength": 200}},
            "required": ["rule", "amount", "anchor", "base"], "additionalProperties": False},
    },
    "required": ["id", "kind", "text", "value"],
    "additionalProperties": False,
}

PLAN_CALL: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
              "required": ["tool", "args"], "additionalProperties": False},
}

# A misreading's plan keeps most of the oracle's calls: such a call is written as its number in the
# oracle ({"step": 3}, from 1) instead of copied out (``generators.task_llm.expand_steps`` reads it back).
STEP_REF: dict[str, Any] = {"type": "object", "properties": {"step": {"type": "integer", "minimum": 1}},
                            "required": ["step"], "additionalProperties": False}
MISREAD_PLAN: dict[str, Any] = {"type": "array", "items": {"anyOf": [PLAN_CALL["items"], STEP_REF]}}

_MARKS: dict[str, Any] = {  # a turn's optional fields; a timestamp too: code assigns one when the model gives none
    "ts": {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$"},
    "evidence": {"type": "array", "items": {"type": "string", "pattern": "^m[0-9]+$"}},
    "superseded": {"type": "array", "items": {"type": "string", "pattern": "^m[0-9]+$"}},
    "distractor": {"type": "array", "items": {"type": "string", "pattern": "^m[0-9]+$"}},
    "thread": {"type": "string", "pattern": "^[tw][0-9]+$"},
}

TURN: dict[str, Any] = {
    "type": "object",
    "properties": {"role": {"enum": ["user", "assistant"]}, "text": {"type": "string", "minLength": 1}, **_MARKS},
    "required": ["role", "text"],
    "additionalProperties": False,
}


def _said_by(role: str) -> dict[str, Any]:
    return {"type": "object", "properties": {role: {"type": "string", "minLength": 1}, **_MARKS},
            "required": [role], "additionalProperties": False}


# A dialogue day's turn names its speaker by its key ({"user": "Morning!"}): a day of some 70 turns is
# written in about a fifth fewer tokens than with "role" and "text" keys. ``spoken_turn`` reads it.
DAY_TURN: dict[str, Any] = {"anyOf": [_said_by("user"), _said_by("assistant")]}


def spoken_turn(turn: dict[str, Any]) -> dict[str, Any]:
    """A :data:`DAY_TURN` (validated) as a :data:`TURN`: ``{"role", "text"}`` and its marks."""
    role = "user" if "user" in turn else "assistant"
    return {"role": role, "text": turn[role], **{k: v for k, v in turn.items() if k in _MARKS}}


SCALAR: dict[str, Any] = {"type": ["string", "number"]}
COMPUTED: dict[str, Any] = {
    "type": "array", "maxItems": 50,
    "items": {"type": "object",
              "properties": {"value": SCALAR, "op": {"enum": ["sum", "mean", "min", "max", "count", "difference",
                                                              "product", "ratio", "percent", "round", "add_minutes",
                                                              "minutes_between", "argmax", "argmin", "rule"]},
                             "inputs": {"type": "array", "maxItems": 10_000, "items": SCALAR},
                             "rule": {"type": "string", "maxLength": 500}, "note": {"type": "string", "maxLength": 500},
                             "given": {"type": "array", "maxItems": 20,
                                       "items": {"type": "string", "pattern": "^m[0-9]+$"}}},
              "required": ["value", "op", "inputs"], "additionalProperties": False},
}

TEXT: dict[str, Any] = {"type": "string", "minLength": 1}
SUBTASKS: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": 5, "items": TEXT}
MEMORY: dict[str, Any] = {"type": "array", "minItems": 1, "items": MEMORY_ITEM}


def document(title: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A whole answer's schema: an object of exactly ``properties`` (those in ``required`` must be there)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, "type": "object",
            "properties": properties, "required": required, "additionalProperties": False}


def task_draft_schema() -> dict[str, Any]:
    """What the llm task generator returns: a task draft whose apps are the registered office apps."""
    return document("task draft", {
        "family": TEXT,
        "apps": {"type": "array", "minItems": 1, "items": {"enum": list(office_apps())}},
        "difficulty": {"enum": ["easy", "medium", "hard"]},
        "description": TEXT,
        "intent": TEXT,
        "subtasks": SUBTASKS,
        "evaluation": {"type": "array", "minItems": 1,
                       "items": {"type": "object",
                                 "properties": {"function": {"type": "string"}, "args": {"type": "object"}},
                                 "required": ["function", "args"], "additionalProperties": False}},
        "memory": MEMORY,
        "query": TEXT,
        "oracle": PLAN_CALL,
        "baseline": PLAN_CALL,
        "misreadings": {"type": "array", "items": {
            "type": "object",
            "properties": {"memory": {"type": "string", "pattern": "^m[0-9]+$"},
                           "dynamic": {"enum": ["superseded", "distractor"]},
                           "value": {"type": "string", "minLength": 1}, "plan": MISREAD_PLAN},
            "required": ["memory", "dynamic", "value", "plan"], "additionalProperties": False}},
        "computed": COMPUTED,
    }, ["family", "apps", "difficulty", "description", "intent", "subtasks", "evaluation", "memory", "query"])

DIALOGUE_DAY_SCHEMA: dict[str, Any] = document(
    "one day of dialogue", {"turns": {"type": "array", "minItems": 2, "items": DAY_TURN}}, ["turns"])


# What a dialogue day's turn may carry besides its text: its marks (a list of memory ids each, defined
# once in the schema); its time is given in code, and its thread by the run of turns it is in.
_IDS: dict[str, Any] = {"type": "array", "items": {"type": "string", "pattern": "^m[0-9]+$"}}
_DAY_MARKS: dict[str, Any] = {mark: {"$ref": "#/$defs/ids"} for mark in ("evidence", "superseded", "distractor")}


def _day_turn(role: str, thread: bool) -> dict[str, Any]:
    return {"type": "object",
            "properties": {role: {"type": "string", "minLength": 1}, **_DAY_MARKS,
                           **({"thread": _MARKS["thread"]} if thread else {})},
            "required": [role], "additionalProperties": False}


# The dialogue writer gives a thread once for a run of its turns ({"thread": "t1", "turns": [...]}):
# about half of a day's turns belong to a thread, in runs of some five, and the tag on each turn
# was a seventh of a day's reply. ``thread_turns`` reads a day back as turns, each with its thread.
THREAD_RUN: dict[str, Any] = {
    "type": "object",
    "properties": {"thread": _MARKS["thread"],
                   "turns": {"type": "array", "minItems": 1,
                             "items": {"anyOf": [_day_turn("user", False), _day_turn("assistant", False)]}}},
    "required": ["thread", "turns"], "additionalProperties": False}
DAY_ITEM: dict[str, Any] = {"anyOf": [_day_turn("user", True), _day_turn("assistant", True), THREAD_RUN]}


def thread_turns(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A day's :data:`DAY_ITEM` list (validated) as :data:`TURN` dicts, a run's turns each given its thread."""
    out = []
    for item in items:
        if "turns" in item:
            out += [{**spoken_turn(turn), "thread": item["thread"]} for turn in item["turns"]]
        else:
            out.append(spoken_turn(item))
    return out


def thread_runs(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inverse of :func:`thread_turns`: consecutive :data:`DAY_TURN` dicts of one thread as one run."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        thread = turn.get("thread")
        bare = {k: v for k, v in turn.items() if k != "thread"}
        if not thread:
            out.append(bare)
        elif out and out[-1].get("thread") == thread and "turns" in out[-1]:
            out[-1]["turns"].append(bare)
        else:
            out.append({"thread": thread, "turns": [bare]})
    return out


def dialogue_days_schema(days: int) -> dict[str, Any]:
    """Several consecutive days of dialogue in one answer, in the order asked (one call writes
    ``days`` days: the instructions and the office are sent once for all of them). The number of
    days comes last, so calls for different numbers of days share all of the schema before it."""
    day = {"type": "object", "properties": {"turns": {"type": "array", "minItems": 1, "items": DAY_ITEM}},
           "required": ["turns"], "additionalProperties": False}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "days of dialogue", "type": "object",
            "$defs": {"ids": _IDS},
            "properties": {"days": {"type": "array", "items": day, "minItems": days, "maxItems": days}},
            "required": ["days"], "additionalProperties": False}


# One part of a Plus rewrite: a few consecutive days of its chat, and, in the first part only, the
# intent, query, subtasks and memory (optional here, so that every part is held to one schema and the
# prompt's instructions and schema are the same for every call; the generator checks the first part's).
PLUS_SCHEMA: dict[str, Any] = document("part of a regenerated task (intent and memory first, then days of dialogue)", {
        "intent": TEXT,
        "query": TEXT,
        "subtasks": SUBTASKS,
        "memory": MEMORY,
        "dialogue": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "properties": {"day": {"type": "integer", "minimum": 1},
                           "date": {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
                           "turns": {"type": "array", "minItems": 2, "items": DAY_TURN}},
            "required": ["day", "date", "turns"], "additionalProperties": False}},
    }, ["dialogue"])
PLUS_HEAD = ("intent", "query", "subtasks", "memory")  # what the first part gives besides its days
