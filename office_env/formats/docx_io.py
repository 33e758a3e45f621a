"""Word documents: text out in reading order, paragraphs in, reproducible bytes."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import docx
from docx.document import Document as DocumentObject
from docx.table import Table
from docx.text.paragraph import Paragraph

from office_env.errors import CorruptFileError
from office_env.formats.ooxml import DEFAULT_STAMP, normalize_package


def load(path: Path, label: str) -> DocumentObject:
    try:
        return docx.Document(str(path))
    except Exception as exc:  # python-docx raises zip, KeyError and XML errors alike
        raise CorruptFileError(f"{label}: not a readable Word (.docx) file ({type(exc).__name__})") from None


def text_of(document: DocumentObject) -> str:
    """Body paragraphs and table rows, in document order, one per line."""
    lines: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            lines.append(block.text)
        elif isinstance(block, Table):
            for row in block.rows:
                lines.append(" | ".join(cell.text for cell in row.cells))
    return "\n".join(lines)


def read_text(path: Path, label: str) -> str:
    return text_of(load(path, label))


def new_document(stamp: datetime | None = None) -> DocumentObject:
    document = docx.Document()
    props = document.core_properties
    when = stamp or DEFAULT_STAMP
    props.created = when
    props.modified = when
    props.author = "homeragents"
    props.last_modified_by = "homeragents"
    return document


def add_paragraphs(document: DocumentObject, text: str) -> None:
    """Each line of ``text`` becomes one paragraph (a lone ``# `` prefix makes a heading)."""
    for line in text.split("\n"):
        if line.startswith("# "):
            document.add_heading(line[2:], level=1)
        else:
            document.add_paragraph(line)


def to_bytes(document: DocumentObject, stamp: datetime | None = None) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return normalize_package(buffer.getvalue(), stamp)


def build(text: str, stamp: datetime | None = None) -> bytes:
    """A new document holding ``text`` (empty text gives an empty document)."""
    document = new_document(stamp)
    if text:
        add_paragraphs(document, text)
    return to_bytes(document, stamp)
