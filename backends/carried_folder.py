"""A folder a job made, carried back to the driver as bytes: how a job on another machine (a Ray
node that does not see the output folder) hands over a staged task folder.

The job packs what it staged (:func:`pack_folder`: its folders and files, read without following
a link) and returns it with its outcome; the driver writes it under its own staging folder
(:func:`unpack_folder`) as a local staging does: fresh files and folders under a temporary name,
then one rename, so the folder is there whole or not at all. Paths are checked on the way in (a
part that is empty, ``.``, ``..`` or holds a slash or a NUL is refused), files are created without
following a link and never over an existing one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from backends.dataset_reader import folder_written_whole
from office_env.untrusted import UntrustedInputError, iter_files, scan_tree

_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class CarriedFolder:
    """A folder's name, its sub-folders (parents first) and its files, each by its parts below it."""

    name: str
    folders: tuple[tuple[str, ...], ...]
    files: tuple[tuple[tuple[str, ...], bytes], ...]

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.files)


def pack_folder(folder: Path, *, untrusted: bool = False) -> CarriedFolder:
    """What ``folder`` holds, as bytes; anything but plain folders and regular files (a link, a
    pipe) raises :class:`~office_env.untrusted.UntrustedInputError`. ``untrusted``: a stranger's
    folder (a dataset's task), also refused past the tree limits of ``office_env.untrusted`` or
    holding a hard link to a file outside it; else a folder this batch wrote itself."""
    tree = (scan_tree(folder) if untrusted
            else scan_tree(folder, check_links=False, max_file_bytes=None, max_total_bytes=None))
    if tree.skipped_count:
        first = tree.skipped[0] if tree.skipped else None
        raise UntrustedInputError(str(folder), f"{tree.skipped_count} entr(ies) neither a folder nor a regular file"
                                               f"{f' ({first})' if first else ''}")
    files = []
    for entry, fd in iter_files(tree, check_links=untrusted):
        pieces = []
        while piece := os.read(fd, 1 << 20):
            pieces.append(piece)
        files.append((entry.parts, b"".join(pieces)))
    return CarriedFolder(folder.name, tuple(tree.folders), tuple(files))


def _checked(parts: tuple[str, ...]) -> tuple[str, ...]:
    if not parts or any(not p or p in (".", "..") or "/" in p or "\0" in p for p in parts):
        raise UntrustedInputError("/".join(parts), "not a path below the folder")
    return parts


def unpack_folder(carried: CarriedFolder, parent: Path) -> Path:
    """Write ``carried`` as ``parent/<name>`` (a folder there already is replaced); returns its path."""
    (name,) = _checked((carried.name,))
    final = parent / name
    with folder_written_whole(final, replace=True) as tmp:
        for parts in carried.folders:
            os.mkdir(tmp.joinpath(*_checked(parts)))
        for parts, data in carried.files:
            fd = os.open(tmp.joinpath(*_checked(parts)), _OPEN_FLAGS, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
    return final
