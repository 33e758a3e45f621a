"""System tools: list files, read plain text, write the answer file."""

from __future__ import annotations

from office_env.errors import OfficeError
from office_env.tools.common import FILE_PATH, existing_file
from office_env.tools.registry import tool
from office_env.workspace import ANSWER_FILE, Workspace

TEXT = (".txt", ".csv", ".md", ".json", ".ics", ".eml")
MAX_CHARS = 20000


@tool("system", "list_files", "List the files in the testbed (or in one folder of it).", writes=False,
      properties={"folder": {"type": "string", "description": "Folder relative to the testbed, e.g. data"}})
def list_files(ws: Workspace, folder: str = "") -> str:
    if folder.strip() not in ("", ".", "./") and ws.resolve(folder, field="folder").is_file():
        raise OfficeError(f"folder: {folder!r} is a file, not a folder")
    files = ws.list_files(folder)
    if not files:
        return f"No files in {folder or 'the testbed'}."
    return "\n".join(files)


@tool("system", "read_text", "Read a plain-text file (.txt, .csv, .md, .json, .ics, .eml).", writes=False,
      properties={"file_path": FILE_PATH}, required=["file_path"])
def read_text(ws: Workspace, file_path: str) -> str:
    path = existing_file(ws, file_path, "file_path", TEXT)
    text = path.read_bytes().decode("utf-8", "replace")
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + f"\n... ({len(text) - MAX_CHARS} more characters)"
    return f"{file_path}:\n{text}"


@tool("system", "write_answer", f"Write the final answer to {ANSWER_FILE} (replaces earlier answers).",
      writes=True, properties={"text": {"type": "string", "minLength": 1}}, required=["text"])
def write_answer(ws: Workspace, text: str) -> str:
    ws.write_bytes(ANSWER_FILE, text.encode("utf-8"))
    return f"Wrote the answer to {ANSWER_FILE}."
