"""A JSON Schema's errors for a value, with jsonschema-rs's yes first.

Every gate replay validates every tool call, and every task's criteria are validated by its
gates: jsonschema-rs says yes in a few microseconds where the reference validator takes twenty
times longer. A no, or a value jsonschema-rs cannot take (an integer past 64 bits, a lone
surrogate), goes to the reference validator, which decides and whose errors say why.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator, ValidationError


class SchemaErrors:
    """One schema, compiled by both validators."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.reference = Draft202012Validator(schema)
        self.quick = jsonschema_rs.Draft202012Validator(schema)

    def __call__(self, value: Any) -> list[ValidationError]:
        """The reference validator's errors for ``value``, by their place in it; none when valid."""
        try:
            if self.quick.is_valid(value):
                return []
        except Exception:  # noqa: BLE001 - any doubt goes to the reference validator
            pass
        return sorted(self.reference.iter_errors(value), key=lambda e: list(e.absolute_path))
