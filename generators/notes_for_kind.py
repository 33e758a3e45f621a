"""The office notes a task writer is shown for one kind of task: of each app's files (sheets,
documents, PDFs), the ones a task of that kind can be built on.

A sheet task's prompt carried every sheet of the office (some 7K tokens for eight sheets) when
the kind uses one of them, or none (a quote logged into a new sheet). Whether a kind can use a file
is asked of the kind's offline family, given that file alone: a file it builds a task on (in one of
``TRIES`` seeded draws) is shown. An app whose files the kind builds on with none of them shows
none; an app where no single file serves (a kind that needs two at once) shows them all, as does a
kind without a family.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from generators.families import FAMILIES
from office_env.seeding import rng as seeded

TRIES = 3  # seeded draws of the family per file: a family may draw a part of a file it cannot use


def notes_for_kind(kind: str, notes: dict[str, dict[str, Any]], *, user: str, user_name: str,
                   colleagues: Sequence[tuple[str, str]], now: datetime) -> dict[str, dict[str, Any]]:
    """``notes`` with each app's ``files`` cut to those a task of ``kind`` can be built on."""
    family = FAMILIES.get(kind)
    if family is None:
        return notes

    def builds(shown: dict[str, dict[str, Any]]) -> bool:
        return any(family.build(family.input(seeded("notes_for_kind", kind, attempt), shown, user, user_name,
                                             tuple(colleagues), now)) is not None for attempt in range(TRIES))

    out = dict(notes)
    for app, note in notes.items():
        files = note.get("files") if isinstance(note, dict) else None
        if not isinstance(files, list) or len(files) < 2:
            continue
        if builds({**out, app: {**note, "files": []}}):
            out[app] = {**note, "files": []}
            continue
        usable = [f for f in files if builds({**out, app: {**note, "files": [f]}})]
        if usable:
            out[app] = {**note, "files": usable}
    return out
