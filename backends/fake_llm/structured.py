"""What a server does with a ``json_schema`` response format, for the fake endpoint.

OpenAI refuses a strict schema that breaks strict mode's rules (HTTP 400, naming the place), and
every server that decodes to a schema (OpenAI, and llama.cpp, vLLM and Ollama by grammar) writes
each property the schema requires: a field a role may leave out comes as ``null`` when the strict
form made it required and nullable. :func:`strict_problem` and :func:`with_nulls` do the same here,
so the client's reading of such replies is tested against the fake as against the real servers.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator


def strict_problem(schema: Any, where: str = "()") -> str | None:
    """Why strict mode refuses ``schema`` (OpenAI's wording), or None."""
    if not isinstance(schema, dict):
        return None
    if where == "()" and schema.get("type") != "object":
        return "schema must be a JSON Schema of 'type: \"object\"', got 'type: None'." if "type" not in schema \
            else f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema['type']}\"'."
    kinds = schema.get("type")
    if kinds == "object" or (isinstance(kinds, list) and "object" in kinds):
        if schema.get("additionalProperties") is not False:
            return f"In context={where}, 'additionalProperties' is required to be supplied and to be false."
        properties = schema.get("properties") or {}
        missing = [key for key in properties if key not in (schema.get("required") or ())]
        if missing:
            return (f"In context={where}, 'required' is required to be supplied and to be an array including every "
                    f"key in properties. Missing '{missing[0]}'.")
    for key in ("allOf", "not", "if", "patternProperties", "uniqueItems", "minLength", "maxLength"):
        if key in schema:
            return f"In context={where}, '{key}' is not permitted."
    children = [(f"{where}, 'properties', '{k}'", v) for k, v in (schema.get("properties") or {}).items()]
    children += [(f"{where}, '$defs', '{k}'", v) for k, v in (schema.get("$defs") or {}).items()]
    children += [(f"{where}, 'anyOf', '{i}'", v) for i, v in enumerate(schema.get("anyOf") or ())]
    if isinstance(schema.get("items"), dict):
        children.append((f"{where}, 'items'", schema["items"]))
    for place, child in children:
        problem = strict_problem(child, place)
        if problem is not None:
            return problem
    return None


def with_nulls(value: Any, schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """``value`` as a decoder held to ``schema`` writes it: every required property present, a
    nullable one the value leaves out as null."""
    if not isinstance(schema, dict):
        return value
    defs = schema.get("$defs", defs or {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return with_nulls(value, defs.get(ref[len("#/$defs/"):]), defs)
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            filled = with_nulls(value, branch, defs)
            if Draft202012Validator({**branch, "$defs": defs}).is_valid(filled):
                return filled
        return value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        out = {key: with_nulls(item, properties.get(key), defs) for key, item in value.items()}
        for key in schema.get("required") or ():
            if key not in out and key in properties \
                    and Draft202012Validator({**properties[key], "$defs": defs}).is_valid(None):
                out[key] = None
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_nulls(item, schema["items"], defs) for item in value]
    return value
