"""Word documents: text out in reading order, paragraphs in, reproducible bytes.

Documents are written with python-docx. Reading text -- the hot path of agents and scoring --
walks ``word/document.xml`` directly with lxml, ten times faster than building python-docx's
object model, and gives the same text (paragraphs and table rows in body order). Both paths open
the package through :mod:`office_env.formats.ooxml`, which refuses zip bombs before inflating.
"""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import docx
from lxml import etree
from docx.document import Document as DocumentObject

from office_env.errors import CorruptFileError
from office_env.formats.ooxml import DEFAULT_STAMP, open_package, read_member, reproducible_zip, stored_copy
from office_env.formats.read_cache import cached_read


KIND = "Word (.docx)"


def load(path: Path, label: str) -> DocumentObject:
    package = stored_copy(path, label, KIND)
    try:
        return docx.Document(package)
    except Exception as exc:  # python-docx raises zip, KeyError and XML errors alike
        raise CorruptFileError(f"{label}: not a readable Word (.docx) file ({type(exc).__name__})") from None


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)


def _paragraph_text(paragraph: etree._Element) -> str:
    pieces = []
    for node in paragraph.iter(f"{_W}t", f"{_W}tab", f"{_W}br", f"{_W}cr"):
        if node.tag == f"{_W}t":
            pieces.append(node.text or "")
        else:
            pieces.append("\t" if node.tag == f"{_W}tab" else "\n")
    return "".join(pieces)


def _block_lines(container: etree._Element, lines: list[str]) -> None:
    for child in container:
        if child.tag == f"{_W}p":
            lines.append(_paragraph_text(child))
        elif child.tag == f"{_W}tbl":
            for row in child.iter(f"{_W}tr"):
                cells = ["\n".join(_paragraph_text(p) for p in cell.iterchildren(f"{_W}p"))
                         for cell in row.iterchildren(f"{_W}tc")]
                lines.append(" | ".join(cells))
        elif child.tag == f"{_W}sdt":
            for content in child.iterchildren(f"{_W}sdtContent"):
                _block_lines(content, lines)


def read_text(path: Path, label: str) -> str:
    """Body paragraphs and table rows, in document order, one per line."""
    return cached_read("docx", path, lambda: _read_text(path, label))


def _read_text(path: Path, label: str) -> str:
    with open_package(path, label, KIND) as package:
        try:
            root = etree.fromstring(read_member(package, "word/document.xml"), _PARSER)
        except Exception as exc:  # zip, missing part and XML errors alike
            raise CorruptFileError(f"{label}: not a readable Word (.docx) file ({type(exc).__name__})") from None
    body = root.find(f"{_W}body")
    if body is None:
        raise CorruptFileError(f"{label}: not a readable Word (.docx) file (no document body)")
    lines: list[str] = []
    _block_lines(body, lines)
    return "\n".join(lines)


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
    with reproducible_zip(stamp):
        document.save(buffer)
    return buffer.getvalue()


def build(text: str, stamp: datetime | None = None) -> bytes:
    """A new document holding ``text`` (empty text gives an empty document)."""
    document = new_document(stamp)
    if text:
        add_paragraphs(document, text)
    return to_bytes(document, stamp)
