"""JSON from the other side of an HTTP connection, parsed within the project's JSON limits.

Both ends of the endpoint read JSON they did not write: the client reads replies (and the tool-call
arguments inside them), the fake endpoint reads requests. ``json.loads`` recurses once per nesting
level, so text nested a hundred thousand levels deep raises ``RecursionError`` (or worse) instead of
a clean error. :func:`loads_limited` measures the nesting first, on the raw text and without
recursion, and parses only what is within ``MAX_JSON_DEPTH`` and ``MAX_JSON_BYTES``.
"""

from __future__ import annotations

import json
from itertools import accumulate
from typing import Any

from office_env.limits import MAX_JSON_BYTES, MAX_JSON_DEPTH, MiB
from office_env.untrusted import JSON_STRING_RE

_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[{]}")


class JSONLimitError(ValueError):
    """Text that is not JSON within the limits; the message says what is wrong, in one line."""


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of JSON text, brackets inside strings not counted.

    Linear and recursion-free (the loops run in C). Strings are found the way JSON finds them, so
    on broken text the count is never below the depth ``json.loads`` reaches before it fails."""
    steps = JSON_STRING_RE.sub("", text).encode("utf-8", "replace").translate(_STEPS, _NOT_BRACKETS)
    return max(accumulate(memoryview(steps).cast("b")), default=0)


def loads_limited(text: str | bytes, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` for text from a stranger: at most ``max_bytes`` long, UTF-8, nested at most
    ``max_depth`` levels. Raises :class:`JSONLimitError` otherwise."""
    if len(text) > max_bytes:
        raise JSONLimitError(f"larger than {max_bytes / MiB:g} MiB ({len(text)} bytes)")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONLimitError(f"not UTF-8 (invalid byte at position {exc.start})") from None
    if nesting_depth(text) > max_depth:
        raise JSONLimitError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONLimitError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer with more digits than Python converts
        raise JSONLimitError(f"not valid JSON ({str(exc).splitlines()[0][:200]})") from None


__all__ = ["JSONLimitError", "loads_limited", "nesting_depth"]


def json_kind(value: Any) -> str:
    """A JSON value's type as the API documentation names it: string, number, boolean, null,
    array, object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    kinds: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return kinds.get(type(value), type(value).__name__)
