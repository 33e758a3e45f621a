"""Criteria that cannot all hold: a list that asks for a thing and for its absence.

A repair or a hand edit can turn a near-miss check into one that refuses what a neighbouring check
requires (``evaluate_file_exist`` and ``evaluate_file_not_exist`` of one file). No state passes
such a list, so no agent can: :func:`contradictions` names each such pair, and ``homer verify``
and the Plus lint refuse them.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any


def _norm(value: Any) -> str:
    return " ".join(str(value).split()).lower()


def _path(value: Any) -> str:
    return str(PurePosixPath(str(value).replace("\\", "/")))


def _words(value: Any) -> frozenset[str]:
    items = value if isinstance(value, list) else [value] if value not in (None, "") else []
    return frozenset(_norm(v) for v in items)


# checks that fail on a missing file, and the argument naming it
NEEDS_FILE = {"evaluate_file_exist": "file", "evaluate_contain": "file", "evaluate_excel_cell_value": "file",
              "evaluate_excel_cell_comparator": "file", "evaluate_exact_match": "result_file"}


def contradictions(criteria: list[dict[str, Any]]) -> list[str]:
    """One line per pair of criteria no state can both pass (indices as in the list)."""
    out: list[str] = []
    items = [(i, c.get("function"), c.get("args") or {}) for i, c in enumerate(criteria) if isinstance(c, dict)]
    for i, function, args in items:
        for j, other, them in items:
            key = NEEDS_FILE.get(str(function))
            if key and other == "evaluate_file_not_exist" and isinstance(args.get(key), str) \
                    and args.get("doc_type") != "email" and _path(args[key]) == _path(them.get("file")):
                out.append(f"evaluation[{i}] requires {args[key]} and evaluation[{j}] requires it absent")
            if function == "evaluate_contain" and other == "evaluate_not_contain" \
                    and args.get("doc_type") == them.get("doc_type") \
                    and _path(args.get("file", args.get("username"))) == _path(them.get("file", them.get("username"))):
                shared = _words(args.get("keywords")) & _words(them.get("keywords"))
                if shared:
                    out.append(f"evaluation[{i}] requires {sorted(shared)[0]!r} "
                               f"in {args.get('file') or args.get('username')} and evaluation[{j}] refuses it")
            if function == "evaluate_calendar_event" and other == "evaluate_calendar_no_event" \
                    and _norm(args.get("username")) == _norm(them.get("username")) and args.get("start") \
                    and _norm(args.get("start")) == _norm(them.get("start")) \
                    and _words(them.get("summary")) <= _words(args.get("summary")):
                out.append(f"evaluation[{i}] requires the event at {args.get('start')} and evaluation[{j}] refuses it")
            if function == "evaluate_email_sent" and other == "evaluate_email_not_sent" \
                    and args.get("sender") and _norm(args.get("sender")) == _norm(them.get("sender")) \
                    and (not them.get("recipient")
                         or _norm(them.get("recipient")) == _norm(args.get("recipient", ""))) \
                    and _words(them.get("subject_keywords")) <= _words(args.get("subject_keywords")) \
                    and _words(them.get("body_keywords")) <= _words(args.get("body_keywords")):
                out.append(f"evaluation[{i}] requires a mail that evaluation[{j}] refuses")
    return out
