"""A role's output schema in the form strict structured output takes, and its replies read back.

OpenAI enforces a ``json_schema`` response format only with ``strict: true``, and strict mode takes
a subset of JSON Schema: every object lists all its properties as required and forbids others
(an optional field becomes nullable instead), the root is an object, and keywords outside the
subset are refused. :func:`strict_form` rewrites a schema so, leaving out what strict mode cannot
say (``allOf``, ``not``, ``if``, string lengths, uniqueness); a schema with a free-form object (a
map whose keys are not known in advance) has no strict form, and is sent as before, not strict.
The reply to a strict schema carries ``null`` for each optional field left out; :func:`unstrict`
removes those, so the reply is checked against the role's own schema, whose every bound (lengths,
uniqueness) still holds through the repair loop.

Servers that enforce schemas by grammar (llama.cpp, vLLM, Ollama) take the strict form as well:
it says the same, with every field present.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

# what strict mode accepts, by the part of a schema it appears in; anything else is left out
_KEPT = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref",
         "$defs", "description", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
         "multipleOf", "minItems", "maxItems"}
_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


class NoStrictForm(ValueError):
    """The schema holds something strict mode cannot say (a free-form object); the message says where."""


def strict_form(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` rewritten for strict mode, or None when it has no strict form."""
    defs = schema.get("$defs", {})
    root = _resolve(schema, defs)
    try:
        if root.get("type") != "object":
            raise NoStrictForm("the root is not an object")
        strict = _strict(root, "#")
        if defs:
            strict["$defs"] = {name: _strict(part, f"#/$defs/{name}") for name, part in defs.items()}
    except NoStrictForm:
        return None
    return strict


def root_object(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a root that only names one of its definitions replaced by that definition
    (the definitions kept beside it): the object at the top that servers and strict mode expect."""
    defs = schema.get("$defs", {})
    root = _resolve(schema, defs)
    return schema if root is schema else {**root, **({"$defs": defs} if defs else {})}


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A schema that is only a ``$ref`` into ``$defs``: the schema it names."""
    while set(schema) <= {"$ref", "$defs", "$schema"} and isinstance(schema.get("$ref"), str) \
            and schema["$ref"].startswith("#/$defs/"):
        schema = defs[schema["$ref"][len("#/$defs/"):]]
    return schema


def _strict(schema: Any, where: str) -> Any:
    if not isinstance(schema, dict):
        return schema
    if "patternProperties" in schema:
        raise NoStrictForm(f"{where}: an object whose keys are patterns")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "format" and value in _FORMATS:
            out[key] = value
        elif key == "oneOf":  # strict mode says anyOf; the role's own schema still checks one-of
            out["anyOf"] = [_strict(part, f"{where}/oneOf/{i}") for i, part in enumerate(value)]
        elif key not in _KEPT or key in ("properties", "required", "additionalProperties", "$defs"):
            continue
        elif key == "items":
            out[key] = _strict(value, f"{where}/items")
        elif key == "anyOf":
            out[key] = [_strict(part, f"{where}/anyOf/{i}") for i, part in enumerate(value)]
        else:
            out[key] = value
    kinds = schema.get("type")
    if kinds == "object" or (isinstance(kinds, list) and "object" in kinds) or "properties" in schema:
        properties = schema.get("properties")
        if not properties or schema.get("additionalProperties") not in (None, False):
            raise NoStrictForm(f"{where}: an object without a fixed set of properties")
        required = set(schema.get("required", ()))
        out["properties"] = {name: _strict(part, f"{where}/properties/{name}") if name in required
                             else _nullable(_strict(part, f"{where}/properties/{name}"))
                             for name, part in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also takes null (how strict mode says a field may be left out)."""
    kinds = schema.get("type")
    if isinstance(kinds, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [kinds, "null"]}
    if isinstance(kinds, list):
        return {**schema, "type": [*kinds, "null"] if "null" not in kinds else kinds}
    return {"anyOf": [schema, {"type": "null"}]}


def unstrict(value: Any, schema: dict[str, Any]) -> Any:
    """A reply to ``strict_form(schema)`` as ``schema`` has it: a ``null`` the strict form put in
    place of a field left out is removed (where ``schema`` itself does not take null there)."""
    return _unstrict(value, schema, schema.get("$defs", {}))


def _unstrict(value: Any, schema: Any, defs: dict[str, Any]) -> Any:
    if not isinstance(schema, dict):
        return value
    schema = _resolve(schema, defs) if "$ref" in schema else schema
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        for branch in branches:
            candidate = _unstrict(value, branch, defs)
            if Draft202012Validator({**branch, "$defs": defs}).is_valid(candidate):
                return candidate
        return value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required", ()))
        properties = schema["properties"]
        return {key: _unstrict(item, properties.get(key), defs) for key, item in value.items()
                if not (item is None and key in properties and key not in required
                        and not _takes_null(properties[key], defs))}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_unstrict(item, schema["items"], defs) for item in value]
    return value


def _takes_null(schema: Any, defs: dict[str, Any]) -> bool:
    return isinstance(schema, dict) and Draft202012Validator({**schema, "$defs": defs}).is_valid(None)


__all__ = ["NoStrictForm", "root_object", "strict_form", "unstrict"]
