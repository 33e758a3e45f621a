"""The shape of surfer context notes, as a JSON Schema (draft 2020-12), and its check.

One notes dictionary describes one app of one workspace. Every list of files, mailboxes or
calendars may also hold error entries ``{"file": ..., "error": observation}`` for what the
tools could not read, so a damaged file is reported rather than hidden.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from office_env.apps import OFFICE_APPS

_STR = {"type": "string"}
_STRINGS = {"type": "array", "items": _STR}
_TIME = {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


def _notes(app: str, key: str, entry: str) -> dict[str, Any]:
    return _obj({
        "app": {"const": app},
        key: {"type": "array", "items": {"oneOf": [{"$ref": f"#/$defs/{entry}"}, {"$ref": "#/$defs/error"}]}},
    })


NOTES_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://homeragents.invalid/schemas/surfer-notes.json",
    "title": "Surfer context notes (one app of one workspace)",
    "oneOf": [{"$ref": f"#/$defs/{app}_notes"} for app in OFFICE_APPS],
    "$defs": {
        "error": _obj({"file": _STR, "error": _STR}),
        "word_file": _obj({"file": _STR, "lines": _STRINGS, "people": _STRINGS}),
        "excel_file": _obj({
            "file": _STR, "sheet": _STR, "headers": _STRINGS,
            "rows": {"type": "array", "items": _STRINGS},
        }),
        "pdf_file": _obj({
            "file": _STR, "lines": _STRINGS,
            "numbers": {"type": "array", "items": {"type": "string", "pattern": r"^[0-9][0-9,]*(\.[0-9]+)?$"}},
        }),
        "message": _obj({"id": _STR, "from": _STR, "to": _STR, "cc": _STR, "subject": _STR, "date": _STR, "body": _STR},
                    required=["id", "from", "to", "subject", "date", "body"]),
        "mailbox": _obj({
            "user": _STR,
            "messages": {"type": "array", "items": {"oneOf": [{"$ref": "#/$defs/message"}, {"$ref": "#/$defs/error"}]}},
        }),
        "event": _obj({"summary": _STR, "start": _TIME, "end": _TIME}),
        "calendar": _obj({
            "user": _STR,
            "events": {"type": "array", "items": {"$ref": "#/$defs/event"}},
            "free_slots": {"type": "array", "items": _obj({"start": _TIME, "end": _TIME})},
        }),
        "word_notes": _notes("word", "files", "word_file"),
        "excel_notes": _notes("excel", "files", "excel_file"),
        "pdf_notes": _notes("pdf", "files", "pdf_file"),
        "email_notes": _notes("email", "mailboxes", "mailbox"),
        "calendar_notes": _notes("calendar", "calendars", "calendar"),
    },
}

Draft202012Validator.check_schema(NOTES_SCHEMA)

_UNION = Draft202012Validator(NOTES_SCHEMA)
_PER_APP = {
    app: Draft202012Validator({
        "$schema": NOTES_SCHEMA["$schema"], "$defs": NOTES_SCHEMA["$defs"], "$ref": f"#/$defs/{app}_notes",
    })
    for app in OFFICE_APPS
}


def _where(error: Any) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return path or "(top level)"


def validate_notes(notes: Any) -> list[str]:
    """Problems with ``notes`` as "<path>: <message>" lines; empty when they fit the schema.

    Notes naming a known app are checked against that app's shape alone, so the messages say
    which field is wrong instead of "matches none of the shapes".
    """
    app = notes.get("app") if isinstance(notes, dict) else None
    validator = _PER_APP.get(app) if isinstance(app, str) else None
    if validator is None:
        if isinstance(notes, dict) and "app" in notes:
            return [f"app: {app!r} is not one of word, excel, pdf, email, calendar"]
        validator = _UNION
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
