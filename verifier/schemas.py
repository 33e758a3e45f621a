"""JSON Schemas for the llm verifier's and judges' answers."""

from __future__ import annotations

from typing import Any

VERDICT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "verdict",
    "type": "object",
    "properties": {"passed": {"type": "boolean"}, "feedback": {"type": "string"}},
    "required": ["passed", "feedback"],
    "additionalProperties": False,
}

JUDGE_VOTE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "judge vote",
    "type": "object",
    "properties": {"vote": {"enum": ["accept", "reject"]}, "reason": {"type": "string", "minLength": 1}},
    "required": ["vote", "reason"],
    "additionalProperties": False,
}
