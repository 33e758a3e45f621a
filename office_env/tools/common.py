"""Path checks shared by the app tools."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from office_env.errors import MissingFileError, OfficeError
from office_env.workspace import Workspace

FILE_PATH = {"type": "string", "description": "Path relative to the testbed, e.g. data/report.docx"}
OUTPUT_PATH = {
    "type": "string",
    "description": "Where to write the result (relative to the testbed); defaults to the input's name with the new extension",
}
USER = {"type": "string", "description": "User name (mailbox / calendar owner), e.g. alice"}


def existing_file(ws: Workspace, relpath: str, field: str, suffixes: tuple[str, ...]) -> Path:
    path = ws.resolve(relpath, field=field)
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
