"""Word tools: read, create, write, convert to PDF."""

from __future__ import annotations

from office_env.errors import OfficeError
from office_env.formats import docx_io, pdf_io
from office_env.formats.text import check_xml_text
from office_env.tools.common import (
    FILE_PATH,
    OUTPUT_PATH,
    check_suffix,
    convert_document,
    read_document,
    resolve,
    write,
)
from office_env.tools.registry import tool
from office_env.workspace import Workspace

DOCX = (".docx",)


@tool("word", "read_file", "Read a .docx document's text.", writes=False,
      properties={"file_path": FILE_PATH}, required=["file_path"])
def read_file(ws: Workspace, file_path: str) -> str:
    return read_document(ws, file_path, DOCX, docx_io.read_text, "is empty.")


@tool("word", "create_new_file", "Create an empty .docx.", writes=True,
      properties={"file_path": FILE_PATH}, required=["file_path"], creates=True)
def create_new_file(ws: Workspace, file_path: str) -> str:
    path = resolve(ws, file_path, "file_path")
    check_suffix(file_path, "file_path", DOCX)
    if path.exists():
        raise OfficeError(f"{file_path}: already exists; use word_write_to_file to change it")
    write(ws, file_path, docx_io.build("", ws.now), "file_path")
    return f"Created {file_path}."


@tool("word", "write_to_file",
      "Write content to a .docx (created if needed), a paragraph per line; mode defaults to overwrite.",
      writes=True,
      properties={
          "file_path": FILE_PATH,
          "content": {"type": "string"},
          "mode": {"type": "string", "enum": ["overwrite", "append"]},
      },
      required=["file_path", "content"], prose=("content",), body="content", edits=True,
      edits_when={"mode": "append"})
def write_to_file(ws: Workspace, file_path: str, content: str, mode: str = "overwrite") -> str:
    path = resolve(ws, file_path, "file_path")
    check_suffix(file_path, "file_path", DOCX)
    check_xml_text(content, "content", "a Word document")
    if mode == "append" and path.exists():
        document = docx_io.load(path, file_path)
        docx_io.add_paragraphs(document, content)
        data = docx_io.to_bytes(document, ws.now)
    else:
        data = docx_io.written(content, ws.now)
    write(ws, file_path, data, "file_path")
    verb = "Appended to" if mode == "append" else "Wrote"
    return f"{verb} {file_path} ({len(content.splitlines()) or 1} paragraph(s))."


@tool("word", "convert_to_pdf", "Convert a .docx document to PDF.", writes=True,
      properties={"file_path": FILE_PATH, "output_path": OUTPUT_PATH}, required=["file_path"], converts_to="pdf")
def convert_to_pdf(ws: Workspace, file_path: str, output_path: str | None = None) -> str:
    return convert_document(ws, file_path, output_path, DOCX, ".pdf", docx_io.read_text,
                            lambda text: pdf_io.remembered_build(text, title=file_path, stamp=ws.now))
