"""PDF tools: read text, convert to Word."""

from __future__ import annotations

from office_env.formats import docx_io, pdf_io
from office_env.formats.text import xml_safe
from office_env.tools.common import FILE_PATH, OUTPUT_PATH, existing_file, resolve, target_path, write
from office_env.tools.registry import tool
from office_env.workspace import Workspace

PDF = (".pdf",)


@tool("pdf", "read_file", "Read a PDF's text.", writes=False,
      properties={"file_path": FILE_PATH}, required=["file_path"])
def read_file(ws: Workspace, file_path: str) -> str:
    path = existing_file(ws, file_path, "file_path", PDF)
    text = pdf_io.read_text(path, file_path)
    return f"{file_path}:\n{text}" if text.strip() else f"{file_path} has no extractable text."


@tool("pdf", "convert_to_word", "Convert a PDF to a .docx document.", writes=True,
      properties={"file_path": FILE_PATH, "output_path": OUTPUT_PATH}, required=["file_path"])
def convert_to_word(ws: Workspace, file_path: str, output_path: str | None = None) -> str:
    path = existing_file(ws, file_path, "file_path", PDF)
    out = target_path(file_path, output_path, ".docx")
    resolve(ws, out, "output_path")
    text = pdf_io.read_text(path, file_path)
    write(ws, out, docx_io.build(xml_safe(text), ws.now), "output_path")
    return f"Converted {file_path} to {out}."
