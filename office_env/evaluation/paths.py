"""Paths in criteria that point outside the testbed, mapped without ever being followed.

OfficeBench scores an output folder whose criteria reach two places beside the testbed:
``../../../../reference/x`` (the task's expected files) and
``../../../../cache/<i>/testbed/x`` (the untouched initial testbed, for before/after diffs).
These two forms are recognised and mapped to folders given to the scorer; every other ``..``
path is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

from office_env.errors import PathError
from office_env.workspace import relative_parts

Place = Literal["reference", "initial"]


class ExternalTarget(NamedTuple):
    place: Place
    parts: list[str]


def external_target(relpath: str, field: str) -> ExternalTarget | None:
    """Where a ``..`` path points (reference/ or the initial testbed); ``None`` for a plain
    testbed path; ``PathError`` for anything else."""
    parts = relative_parts(relpath, field=field, allow_parent=True)
    if ".." not in parts:
        return None
    tail = parts[len(parts) - parts[::-1].index(".."):]
    if len(tail) >= 2 and tail[0] == "reference":
        return ExternalTarget("reference", tail[1:])
    if len(tail) >= 4 and tail[0] == "cache" and tail[1].isdigit() and tail[2] == "testbed":
        return ExternalTarget("initial", tail[3:])
    raise PathError(f"{field}: {relpath!r} points outside the testbed (only ../reference/ and "
                    "../cache/<i>/testbed/ are understood)")


def inside(root: Path, parts: list[str], relpath: str, field: str) -> Path:
    """``root/parts`` resolved, refusing symlinks that lead out of ``root``."""
    base = root.resolve()
    real = base.joinpath(*parts).resolve()
    if base not in real.parents:
        raise PathError(f"{field}: {relpath!r} leads outside its folder")
    return real
