"""Path checks and writes shared by the app tools.

Every path argument is checked here before the file system sees it: each part must be a name a
testbed may hold (no control characters, at most ``MAX_NAME_CHARS`` characters and
``MAX_NAME_BYTES`` bytes, so the file system's own name limit never fails a call) and the path at
most ``MAX_TREE_DEPTH`` folders deep and ``MAX_PATH_BYTES`` bytes long. Every write checks the
bytes against the size a reader accepts, so a tool never writes a file that no tool could read
back.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Callable

from office_env.errors import MissingFileError, OfficeError, PathError
from office_env.formats.bounded import size_text
from office_env.limits import MAX_FILE_BYTES, MAX_NAME_BYTES, MAX_NAME_CHARS, MAX_PATH_BYTES, MAX_TREE_DEPTH
from office_env.untrusted import name_problem
from office_env.workspace import Workspace, relative_parts

FILE_PATH = {"type": "string"}  # the agent prompt says paths are relative to the testbed, with examples
OUTPUT_PATH = {"type": "string", "description": "Default: same path, new extension"}
USER = {"type": "string"}  # the agent prompt names the user's username and says it acts as them


def check_path(relpath: str, field: str) -> None:
    """Refuse a path that could leave the testbed (``relative_parts``), has a part no testbed
    file may be named, or is nested too deep."""
    parts = relative_parts(relpath, field=field)
    if len(parts) > MAX_TREE_DEPTH + 1:
        raise PathError(f"{field}: {len(parts)} parts, deeper than the {MAX_TREE_DEPTH}-folder limit")
    for part in parts:
        problem = name_problem(part)
        if problem is None and len(part.encode("utf-8")) > MAX_NAME_BYTES:
            problem = f"{len(part.encode('utf-8'))} bytes in UTF-8, over the file system's {MAX_NAME_BYTES}-byte limit"
        if problem is not None:
            shown = part if len(part) <= 60 else part[:60] + "..."
            if len(part) > MAX_NAME_CHARS:
                problem = f"{len(part)} characters, longer than the {MAX_NAME_CHARS}-character limit"
            raise PathError(f"{field}: the name {shown!r} is not allowed ({problem})")
    size = len("/".join(parts).encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise PathError(f"{field}: {size:,} bytes in UTF-8, over the {MAX_PATH_BYTES:,}-byte limit for a path")


def resolve(ws: Workspace, relpath: str, field: str) -> Path:
    """``ws.resolve`` after :func:`check_path`."""
    check_path(relpath, field)
    return ws.resolve(relpath, field=field)


def existing_file(ws: Workspace, relpath: str, field: str, suffixes: tuple[str, ...]) -> Path:
    path = resolve(ws, relpath, field)
    check_suffix(relpath, field, suffixes)
    if not path.exists():
        raise MissingFileError(f"{relpath}: file does not exist")
    if not path.is_file():
        raise OfficeError(f"{relpath}: is a folder, not a file")
    return path


def check_suffix(relpath: str, field: str, suffixes: tuple[str, ...]) -> None:
    if PurePosixPath(relpath.strip().replace("\\", "/")).suffix.lower() not in suffixes:
        raise OfficeError(f"{field}: {relpath!r} must end with {' or '.join(suffixes)}")


def target_path(relpath: str, output: str | None, suffix: str, field: str = "output_path") -> str:
    if output:
        check_suffix(output, field, (suffix,))
        return output
    return str(PurePosixPath(relpath.replace("\\", "/")).with_suffix(suffix))


def write(ws: Workspace, relpath: str, data: bytes, field: str, limit: int = MAX_FILE_BYTES) -> Path:
    """Write ``data`` to ``relpath`` atomically, refusing more than a reader accepts (``limit``)."""
    check_path(relpath, field)
    if len(data) > limit:
        raise OfficeError(f"{relpath}: the result would be {size_text(len(data))}, over the "
                          f"{size_text(limit)} limit for one file")
    try:
        return ws.write_bytes(relpath, data, field=field)
    except OfficeError:
        raise
    except OSError as exc:
        raise OfficeError(f"{relpath}: cannot be written ({exc.strerror or type(exc).__name__})") from None


def read_document(ws: Workspace, file_path: str, suffixes: tuple[str, ...], reader: Callable[[Path, str], str],
                  empty: str) -> str:
    """A document's text as a read tool answers: its path, then the text (``reader(path, file_path)``);
    ``empty`` follows the path where there is none."""
    path = existing_file(ws, file_path, "file_path", suffixes)
    text = reader(path, file_path)
    return f"{file_path}:\n{text}" if text.strip() else f"{file_path} {empty}"


def convert_document(ws: Workspace, file_path: str, output_path: str | None, suffixes: tuple[str, ...],
                     suffix: str, reader: Callable[[Path, str], str], build: Callable[[str], bytes]) -> str:
    """Write ``build(text)`` of the document at ``file_path`` (read by ``reader``) to ``output_path``,
    by default the same path with ``suffix``; both paths are checked before anything is read."""
    path = existing_file(ws, file_path, "file_path", suffixes)
    out = target_path(file_path, output_path, suffix)
    resolve(ws, out, "output_path")
    write(ws, out, build(reader(path, file_path)), "output_path")
    return f"Converted {file_path} to {out}."
