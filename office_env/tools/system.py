"""System tools: list files, read plain text, write the answer file."""

from __future__ import annotations

from office_env.errors import OfficeError
from office_env.formats.bounded import read_bytes
from office_env.tools.common import FILE_PATH, existing_file, resolve, write
from office_env.tools.registry import tool
from office_env.workspace import ANSWER_FILE, Workspace

TEXT = (".txt", ".csv", ".md", ".json", ".ics", ".eml")


@tool("system", "list_files", "List the testbed's files (or one folder's).", writes=False,
      properties={"folder": {"type": "string", "description": "e.g. data"}}, lists_files="folder")
def list_files(ws: Workspace, folder: str = "") -> str:
    if folder.strip() not in ("", ".", "./") and resolve(ws, folder, "folder").is_file():
        raise OfficeError(f"folder: {folder!r} is a file, not a folder")
    files = ws.list_files(folder)
    if not files:
        return f"No files in {folder or 'the testbed'}."
    return "\n".join(files)


@tool("system", "read_text", "Read a text file (.txt .csv .md .json .ics .eml).", writes=False,
      properties={"file_path": FILE_PATH}, required=["file_path"])
def read_text(ws: Workspace, file_path: str) -> str:
    """The whole text; the registry cuts long observations at ``MAX_OBSERVATION_CHARS``."""
    path = existing_file(ws, file_path, "file_path", TEXT)
    return f"{file_path}:\n{read_bytes(path, file_path).decode('utf-8', 'replace')}"


@tool("system", "write_answer", f"Write the final answer to {ANSWER_FILE}, replacing any earlier one.",
      writes=True, properties={"text": {"type": "string", "minLength": 1}}, required=["text"],
      prose=("text",), body="text")
def write_answer(ws: Workspace, text: str) -> str:
    write(ws, ANSWER_FILE, text.encode("utf-8"), "text")
    return f"Wrote the answer to {ANSWER_FILE}."
