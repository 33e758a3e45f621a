"""PDF tools: read text, convert to Word."""

from __future__ import annotations

from office_env.formats import docx_io, pdf_io
from office_env.formats.text import xml_safe
from office_env.tools.common import FILE_PATH, OUTPUT_PATH, convert_document, read_document
from office_env.tools.registry import tool
from office_env.workspace import Workspace

PDF = (".pdf",)


@tool("pdf", "read_file", "Read a PDF's text.", writes=False,
      properties={"file_path": FILE_PATH}, required=["file_path"])
def read_file(ws: Workspace, file_path: str) -> str:
    return read_document(ws, file_path, PDF, pdf_io.read_text, "has no extractable text.")


@tool("pdf", "convert_to_word", "Convert a PDF to a .docx document.", writes=True,
      properties={"file_path": FILE_PATH, "output_path": OUTPUT_PATH}, required=["file_path"], converts_to="word")
def convert_to_word(ws: Workspace, file_path: str, output_path: str | None = None) -> str:
    return convert_document(ws, file_path, output_path, PDF, ".docx", pdf_io.read_text,
                            lambda text: docx_io.build(xml_safe(text), ws.now))
