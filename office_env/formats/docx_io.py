"""Word documents: text out in reading order, paragraphs in, reproducible bytes.

Documents are written with python-docx. Reading text -- the hot path of agents and scoring --
walks ``word/document.xml`` directly with lxml, ten times faster than building python-docx's
object model, and gives the same text (paragraphs and table rows in body order). Both paths open
the package through :mod:`office_env.formats.ooxml`, which refuses zip bombs before inflating.
"""

from __future__ import annotations

import copy
import io
import re
import zipfile
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import docx
from docx.document import Document as DocumentObject
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import qn
from lxml import etree

from office_env.errors import CorruptFileError
from office_env.formats.built import Kept, key_part, remembered
from office_env.formats.ooxml import DEFAULT_STAMP, open_package, read_member, reproducible_zip, stored_copy
from office_env.formats.read_cache import cached_read, remember_content

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
    return cached_read("docx", path, lambda: _read_text(path, label), by_content=True)


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


# The styles a new document keeps: the defaults, headings, title, lists, a plain table grid,
# header and footer. python-docx's own template carries 164 styles (876 KB of XML in styles.xml
# and stylesWithEffects.xml) that every new document parsed and wrote out again.
_KEPT_STYLES = frozenset({
    "Normal", "DefaultParagraphFont", "TableNormal", "NoList", "Title", "TitleChar", "Subtitle", "SubtitleChar",
    "Heading1", "Heading1Char", "Heading2", "Heading2Char", "Heading3", "Heading3Char", "ListParagraph",
    "ListBullet", "ListBullet2", "ListBullet3", "ListNumber", "ListNumber2", "ListNumber3", "TableGrid", "NoSpacing",
    "Header", "HeaderChar", "Footer", "FooterChar",
})
_STYLES_WITH_EFFECTS = "http://schemas.microsoft.com/office/2007/relationships/stylesWithEffects"  # Word 2010 only
_DROPPED_PARTS = frozenset({_STYLES_WITH_EFFECTS, RT.CUSTOM_XML, RT.WEB_SETTINGS, RT.THUMBNAIL})


@lru_cache(maxsize=1)
def _template() -> bytes:
    """python-docx's default template, trimmed to the styles in ``_KEPT_STYLES`` and without its
    optional parts (styles with effects, custom XML, web settings, thumbnail): new documents open
    and save in a fraction of the time and weigh a few KB instead of 36 KB."""
    document = docx.Document()
    styles = document.styles.element
    for style in styles.findall(qn("w:style")):
        if style.get(qn("w:styleId")) not in _KEPT_STYLES:
            styles.remove(style)
    for latent in styles.findall(qn("w:latentStyles")):
        styles.remove(latent)
    for owner in (document.part, document.part.package):
        for rel_id, rel in list(owner.rels.items()):
            if rel.reltype in _DROPPED_PARTS:
                owner.rels.pop(rel_id)
    buffer = io.BytesIO()
    with reproducible_zip(DEFAULT_STAMP):
        document.save(buffer)
    return buffer.getvalue()


@lru_cache(maxsize=1)
def _blank() -> DocumentObject:
    """The template opened once; each new document is a deep copy of it, a third of the time of
    opening the package again (the copy saves to the same bytes)."""
    return docx.Document(io.BytesIO(_template()))


def new_document(stamp: datetime | None = None) -> DocumentObject:
    document = copy.deepcopy(_blank())
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


@remembered  # a task's replays write the same document again (see office_env.formats.built)
def written(text: str, stamp: datetime | None = None) -> bytes:
    """A new document whose paragraphs are the lines of ``text`` (an empty text: one empty
    paragraph), as the word tool writes it."""
    fast = _spliced(text, stamp)
    if fast is not None:
        return fast
    document = new_document(stamp)
    add_paragraphs(document, text)
    return to_bytes(document, stamp)


def build(text: str, stamp: datetime | None = None) -> bytes:
    """A new document holding ``text`` (empty text gives an empty document)."""
    if not text:
        return _empty(stamp)
    fast = _spliced(text, stamp)
    if fast is not None:
        return fast
    document = new_document(stamp)
    add_paragraphs(document, text)
    return to_bytes(document, stamp)


# -- new documents without python-docx's object model ------------------------------------------
#
# A new document differs from the empty one of its stamp in its body's paragraphs alone, and a
# paragraph of plain text is a fixed piece of XML: the parts of the empty document are kept per
# stamp, and a document is its paragraphs spliced in before the section properties, zipped as
# ``to_bytes`` zips (the same bytes; tests/office_env compare the two ways). A text with a
# character XML cannot hold takes python-docx's way (its error).

_DOCUMENT_PART = "word/document.xml"
_PLAIN_TEXT_RE = re.compile(r"[^\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff\n\t\r]")
_RUN_BREAKS = {"\t": "<w:tab/>", "\r": "<w:br/>"}
_RUN_BREAK_RE = re.compile(r"([\t\r])")
_HEADING = '<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>'
_SECTION = b"<w:sectPr"
_EMPTY: Kept[tuple[bytes, tuple[tuple[str, bytes], ...]]] = Kept(8)


def _empty(stamp: datetime | None) -> bytes:
    return _empty_parts(stamp)[0]


def _empty_parts(stamp: datetime | None) -> tuple[bytes, tuple[tuple[str, bytes], ...]]:
    """The empty document of ``stamp``: its bytes and its parts (name, bytes) in the zip's order."""
    def make() -> tuple[bytes, tuple[tuple[str, bytes], ...]]:
        data = to_bytes(new_document(stamp), stamp)
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return data, tuple((info.filename, package.read(info)) for info in package.infolist())
    return _EMPTY.get(key_part(stamp), make)


def _paragraph_xml(line: str) -> str:
    """``add_paragraphs``' paragraph for one line of plain text, as lxml writes it."""
    head = ""
    if line.startswith("# "):
        line, head = line[2:], _HEADING
    if not line:
        return f"<w:p>{head}</w:p>" if head else "<w:p/>"
    run = "".join(_run_piece(piece) for piece in _RUN_BREAK_RE.split(line))
    return f"<w:p>{head}<w:r>{run}</w:r></w:p>"


def _run_piece(piece: str) -> str:
    """A tab, a carriage return (a break) or a stretch of text between them, as python-docx writes it."""
    if piece in _RUN_BREAKS:
        return _RUN_BREAKS[piece]
    if not piece:
        return ""
    space = ' xml:space="preserve"' if len(piece.strip()) < len(piece) else ""
    text = piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<w:t{space}>{text}</w:t>"


def _spliced(text: str, stamp: datetime | None) -> bytes | None:
    """The document ``add_paragraphs`` makes of ``text``, or None for a text it must make itself."""
    if _PLAIN_TEXT_RE.search(text):
        return None
    parts = _empty_parts(stamp)[1]
    body = "".join(_paragraph_xml(line) for line in text.split("\n")).encode("utf-8")
    buffer = io.BytesIO()
    with reproducible_zip(stamp), zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as package:
        for name, data in parts:
            if name == _DOCUMENT_PART:
                at = data.rindex(_SECTION)
                data = data[:at] + body + data[at:]
            package.writestr(name, data)
    document = buffer.getvalue()
    remember_content("docx", document, _text_read_back(text))
    return document


def _text_read_back(text: str) -> str:
    """What ``read_text`` gives of the document ``_spliced`` makes of ``text``: a heading's line
    without its mark, a carriage return as the line break it is written as."""
    return "\n".join((line[2:] if line.startswith("# ") else line).replace("\r", "\n") for line in text.split("\n"))
