"""Paths in criteria that point outside the testbed, mapped without ever being followed.

OfficeBench scores an output folder whose criteria reach two places beside the testbed:
``../../../../reference/x`` (the task's expected files) and
``../../../../cache/<i>/testbed/x`` (the untouched initial testbed, for before/after diffs).
These two forms are recognised and mapped to folders given to the scorer; every other ``..``
path is refused.

Those folders come with the task, so they are strangers' trees: :func:`inside` never resolves
them. The folder itself must be a real folder (``lstat``: a ``reference`` that is a symlink to
``/etc`` is refused, not followed), and no component between it and the target may be a
symlink, even one pointing back inside.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal, NamedTuple

from office_env.errors import PathError
from office_env.workspace import relative_parts, require_folder

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
    """``root/parts`` without following any symlink: refused when ``root`` is not a real folder
    or when any existing component on the way is a symlink."""
    require_folder(root, missing=f"{field}: {relpath!r} needs the folder {root}, which does not exist",
                   symlink=f"{field}: {relpath!r}: the folder {root} is a symlink; refused",
                   not_folder=f"{field}: {relpath!r}: {root} is not a folder")
    base = Path(os.path.abspath(root))
    current = base
    for index, part in enumerate(parts):
        if part in ("", ".", ".."):
            raise PathError(f"{field}: {relpath!r} leads outside its folder")
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            break  # the rest does not exist: nothing to follow
        if stat.S_ISLNK(mode):
            link = "/".join(parts[:index + 1])
            raise PathError(f"{field}: {relpath!r} leads outside its folder (through the symlink {link!r}); "
                            "refused")
    return base.joinpath(*parts)
