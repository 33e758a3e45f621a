"""Surfers: one explorer per app that reads a workspace through read-only office tools.

``explore(app, workspace)`` returns that app's context notes, a plain JSON-able dictionary
whose shape ``surfers.notes.notes_schema()`` defines (``validate_notes`` checks it); the explorer
of an app is the one its registry entry names (``office_env.apps``).
"""

from __future__ import annotations

import os
from typing import Any

from office_env import Workspace
from office_env.apps import office_apps
from surfers.notes import notes_schema, validate_notes
from surfers.offline import Reader, WorkspaceReader, explorer


def explore(app: str, workspace: Workspace | str | os.PathLike[str], users: list[str] | None = None) -> dict[str, Any]:
    """Context notes for one app; ``users`` limits which mailboxes and calendars are read."""
    if app not in office_apps():
        raise ValueError(f"app: {app!r} is not one of {', '.join(office_apps())}")
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    return explorer(app)(WorkspaceReader(ws), users)


__all__ = ["Reader", "WorkspaceReader", "explore", "notes_schema", "office_apps", "validate_notes"]
