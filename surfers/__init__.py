"""Surfers: one explorer per app that reads a workspace through read-only office tools.

``explore(app, workspace)`` returns that app's context notes, a plain JSON-able dictionary
whose shape ``surfers.notes.NOTES_SCHEMA`` defines (``validate_notes`` checks it).
"""

from __future__ import annotations

import os
from typing import Any

from office_env import Workspace
from office_env.apps import OFFICE_APPS
from surfers.notes import NOTES_SCHEMA, validate_notes
from surfers.offline import EXPLORERS, Reader, WorkspaceReader

APPS: tuple[str, ...] = OFFICE_APPS


def explore(app: str, workspace: Workspace | str | os.PathLike[str], users: list[str] | None = None) -> dict[str, Any]:
    """Context notes for one app; ``users`` limits which mailboxes and calendars are read."""
    if app not in EXPLORERS:
        raise ValueError(f"app: {app!r} is not one of {', '.join(APPS)}")
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    return EXPLORERS[app](WorkspaceReader(ws), users)


__all__ = ["APPS", "NOTES_SCHEMA", "Reader", "WorkspaceReader", "explore", "validate_notes"]
