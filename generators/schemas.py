"""JSON Schemas for what the llm generators must return (validated before anything is used)."""

from __future__ import annotations

from typing import Any

from office_env.apps import office_apps, registry_cache

# A prose field's bound: what a model writes is untrusted, and the longest prose of a task (its
# description) is some 500 characters. The bound is above the repetitions a grammar engine is sent
# (``backends.llm.client.GRAMMAR_MAX_REPEAT``): checked on the reply, never unrolled into a grammar.
PROSE_MAX_CHARS = 4_000
TEXT: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": PROSE_MAX_CHARS}

MEMORY_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^m[0-9]+$"},
        "kind": {"enum": ["fact", "action"]},
        "text": TEXT,
        "value": TEXT,
        "thread": {"type": "string", "pattern": "^t[0-9]+$"},
        "superseded": {"type": "array", "maxItems": 3, "items": TEXT},
        "distractors": {"type": "array", "maxItems": 3, "items": {
            "type": "object", "properties": {"value": TEXT, "text": TEXT},
            "required": ["value", "text"], "additionalProperties": False}},
        "said_as": TEXT,
        "cue": {"type": "string", "maxLength": 40},  # the task draft's: one of the thread bank's (task_draft_schema)
        "about": {"type": "string", "maxLength": PROSE_MAX_CHARS},
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

# A misreading's plan keeps most of the oracle's calls: such a call is written as its number in the
# oracle ({"step": 3}, from 1) instead of copied out (``generators.task_llm.expand_steps`` reads it back).
STEP_REF: dict[str, Any] = {"type": "object", "properties": {"step": {"type": "integer", "minimum": 1}},
                            "required": ["step"], "additionalProperties": False}

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


SCALAR: dict[str, Any] = {"type": ["string", "number"], "maxLength": PROSE_MAX_CHARS}
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

SUBTASKS: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": 5, "items": TEXT}
MEMORY: dict[str, Any] = {"type": "array", "minItems": 1, "items": MEMORY_ITEM}


def document(title: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A whole answer's schema: an object of exactly ``properties`` (those in ``required`` must be there)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, "type": "object",
            "properties": properties, "required": required, "additionalProperties": False}


@registry_cache(maxsize=1)
def task_draft_schema() -> dict[str, Any]:
    """What the llm task generator returns, as the server holds the reply to it and the reply is
    checked (its prompt shows :func:`task_draft_prompt_schema`): the family one of the registered
    task kinds, the apps the registered office apps, each criterion one of the registered checks
    with that check's arguments, each plan call one of the registered tools with that tool's
    arguments (defined once, in ``$defs``), each memory cue one the dialogue writer has lines for.
    Every object has a fixed set of properties, so strict mode takes it (``backends.llm.strict_schema``).
    Made once per state of the app registry and shared: not to be changed."""
    from generators.families import FAMILIES
    from generators.thread_bank import threads
    from office_env import default_registry
    from office_env.evaluation.checks import CHECKS

    criteria = [_named("function", name, _decodable(spec.args_schema)) for name, spec in sorted(CHECKS.items())]
    calls = [_named("tool", tool["function"]["name"], {**tool["function"]["parameters"], "additionalProperties": False})
             for tool in default_registry().openai_tools()]
    plan = {"type": "array", "items": {"$ref": "#/$defs/call"}}
    memory_item = {**MEMORY_ITEM, "properties": {**MEMORY_ITEM["properties"], "cue": {"enum": sorted(threads().cues)}}}
    schema = document("task draft", {
        "family": {"enum": sorted(FAMILIES)},
        "apps": {"type": "array", "minItems": 1, "items": {"enum": list(office_apps())}},
        "difficulty": {"enum": ["easy", "medium", "hard"]},
        "description": TEXT,
        "intent": TEXT,
        "subtasks": SUBTASKS,
        "evaluation": {"type": "array", "minItems": 1, "items": {"anyOf": criteria}},
        "memory": {**MEMORY, "items": memory_item},
        "query": TEXT,
        "oracle": plan,
        "baseline": plan,
        "misreadings": {"type": "array", "items": {
            "type": "object",
            "properties": {"memory": {"type": "string", "pattern": "^m[0-9]+$"},
                           "dynamic": {"enum": ["superseded", "distractor"]},
                           "value": TEXT,
                           "plan": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/call"}, STEP_REF]}}},
            "required": ["memory", "dynamic", "value", "plan"], "additionalProperties": False}},
        "computed": COMPUTED,
    }, ["family", "apps", "difficulty", "description", "intent", "subtasks", "evaluation", "memory", "query"])
    schema["$defs"] = {"call": {"anyOf": calls}}
    return schema


@registry_cache(maxsize=1)
def task_draft_prompt_schema() -> dict[str, Any]:
    """:func:`task_draft_schema` as the task generator's prompt shows it, in a fifth of its
    tokens, so that the prompt still fits an 8K-token window beside the office: a criterion's and a
    plan call's arguments are left to the catalog and the tool list the prompt gives beside it, the
    family to the plan that names it, and the prose bounds, which no honest draft comes near, left
    out. The reply is held to, and checked against, the whole schema. Shared: not to be changed."""
    schema = _unbounded(task_draft_schema())
    schema["properties"]["family"] = {"type": "string", "minLength": 1}
    schema["properties"]["evaluation"]["items"] = _by_name("function")
    schema["$defs"]["call"] = _by_name("tool")
    return schema


def _by_name(key: str) -> dict[str, Any]:
    """A call named by ``key``, its arguments as the prompt lists them."""
    return {"type": "object", "properties": {key: {"type": "string"}, "args": {"type": "object"}},
            "required": [key, "args"], "additionalProperties": False}


def _unbounded(schema: Any) -> Any:
    """A copy of ``schema`` without the prose bound (``PROSE_MAX_CHARS``)."""
    if isinstance(schema, list):
        return [_unbounded(part) for part in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: _unbounded(value) for key, value in schema.items()
            if not (key == "maxLength" and value == PROSE_MAX_CHARS)}


def _named(key: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One branch of a list of calls: ``{key: name, "args": ...}`` with ``args`` as ``name`` takes them."""
    return {"type": "object", "properties": {key: {"const": name}, "args": args},
            "required": [key, "args"], "additionalProperties": False}


def _decodable(schema: Any) -> Any:
    """A check's argument schema as a decoder can hold a reply to it. Left out: an object's rules
    that only say which of its optional arguments a value needs (``if``/``then``/``else``; an
    ``anyOf`` or ``oneOf`` of ``required`` lists): llama.cpp's grammar reads an ``anyOf`` beside
    ``properties`` as the whole object's alternatives, so any object (an array even) would pass, and
    strict mode cannot say them; a draft's criteria are checked against the catalog's own schemas
    afterwards (``office_env.evaluation.validate_criteria``), those rules included. A pattern's
    ``\\d`` is written ``[0-9]``: llama.cpp's grammar engine refuses ``\\d`` (and the schema with it)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("if", "then", "else") or (key in ("anyOf", "oneOf") and isinstance(value, list) and all(
                isinstance(branch, dict) and set(branch) == {"required"} for branch in value)):
            continue
        if key == "pattern" and isinstance(value, str):
            out[key] = value.replace("\\d", "[0-9]")
        elif key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _decodable(part) for name, part in value.items()}
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [_decodable(part) for part in value]
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _decodable(value)
        else:
            out[key] = value
    return out


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
