"""The shape of surfer context notes, as a JSON Schema (draft 2020-12), and its check.

One notes dictionary describes one app of one workspace. Every list of files, mailboxes or
calendars may also hold error entries ``{"file": ..., "error": observation}`` for what the
tools could not read, so a damaged file is reported rather than hidden.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from office_env.apps import generation, get_app, notes_object, office_apps, registered_apps

_STR = {"type": "string"}


def _notes(app: str, key: str, entry: str) -> dict[str, Any]:
    return notes_object({
        "app": {"const": app},
        key: {"type": "array", "items": {"oneOf": [{"$ref": f"#/$defs/{entry}"}, {"$ref": "#/$defs/error"}]}},
    })


@lru_cache(maxsize=4)
def _schema(_generation: int) -> dict[str, Any]:
    apps = [a for a in registered_apps() if a.office]
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://homeragents.invalid/schemas/surfer-notes.json",
        "title": "Surfer context notes (one app of one workspace)",
        "oneOf": [{"$ref": f"#/$defs/{a.name}_notes"} for a in apps],
        "$defs": {
            "error": notes_object({"file": _STR, "error": _STR}),
            **{name: definition for a in apps for name, definition in a.notes_defs.items()},
            **{f"{a.name}_notes": _notes(a.name, a.notes_key, a.notes_item) for a in apps},
        },
    }
    Draft202012Validator.check_schema(schema)
    return schema


def notes_schema() -> dict[str, Any]:
    """The schema of every registered office app's notes (one ``oneOf`` branch an app; each app's
    items as its registry entry defines them)."""
    return _schema(generation())


def app_notes_schema(app: str) -> dict[str, Any]:
    """The schema of ``app``'s notes alone (its ``$defs`` entry ``<app>_notes``)."""
    schema = notes_schema()
    return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{get_app(app).name}_notes"}


@lru_cache(maxsize=4)
def _validators(_generation: int) -> tuple[Draft202012Validator, dict[str, Draft202012Validator]]:
    return (Draft202012Validator(notes_schema()),
            {app: Draft202012Validator(app_notes_schema(app)) for app in office_apps()})


def _where(error: Any) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return path or "(top level)"


def validate_notes(notes: Any) -> list[str]:
    """Problems with ``notes`` as "<path>: <message>" lines; empty when they fit the schema.

    Notes naming a known app are checked against that app's shape alone, so the messages say
    which field is wrong instead of "matches none of the shapes".
    """
    union, per_app = _validators(generation())
    app = notes.get("app") if isinstance(notes, dict) else None
    validator = per_app.get(app) if isinstance(app, str) else None
    if validator is None:
        if isinstance(notes, dict) and "app" in notes:
            return [f"app: {app!r} is not one of {', '.join(office_apps())}"]
        validator = union
    problems = []
    for error in sorted(validator.iter_errors(notes), key=lambda e: [str(p) for p in e.absolute_path]):
        detail = error.message
        if error.validator == "oneOf" and error.context:
            # An entry that is neither a well-formed item nor an error entry: report the item's problem.
            own = [e for e in error.context if e.relative_schema_path and e.relative_schema_path[0] == 0]
            best = max(own or error.context, key=lambda e: len(e.absolute_path))
            where = _where(best)
            problems.append(f"{where}: {best.message} (entry is neither a valid item nor an error entry)")
            continue
        problems.append(f"{_where(error)}: {detail}")
    return problems
