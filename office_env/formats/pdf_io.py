"""PDF files: written with fpdf2 (core fonts, reproducible), read with pypdf.

A PDF from a stranger is read within the PDF limits: at most ``MAX_FILE_BYTES`` on disk, at most
``MAX_PDF_PAGES`` pages, each decompressed stream at most ``MAX_PDF_STREAM_BYTES`` (pypdf's own
defaults allow 75 MB per stream) and the page content of all pages together at most
``MAX_PDF_CONTENT_BYTES``: pypdf extracts text from content at about half a megabyte a second, so
a 20 KB file whose stream inflates to 8 MB of text operators would otherwise cost many seconds.
At most ``MAX_TEXT_CHARS`` characters of text are returned. Writing refuses text that would need more pages
than a reader accepts.
"""

from __future__ import annotations

import dataclasses
import io
import logging
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, cast

import pypdf
from pypdf import PdfReader
from pypdf.errors import LimitReachedError

from office_env.errors import CorruptFileError, OfficeError
from office_env.formats.bounded import read_bytes, size_text
from office_env.formats.built import remembered
from office_env.formats.ooxml import DEFAULT_STAMP
from office_env.formats.read_cache import cached_read, remember_content
from office_env.limits import MAX_PDF_CONTENT_BYTES, MAX_PDF_PAGES, MAX_PDF_STREAM_BYTES, MAX_TEXT_CHARS

if TYPE_CHECKING:  # the writer (fonts, images) loads on the first PDF written: readers never need it
    from fpdf import FPDF
    from fpdf.fonts import CoreFont

logging.getLogger("pypdf").setLevel(logging.ERROR)
logging.getLogger("fontTools").setLevel(logging.ERROR)

# Core PDF fonts cover Latin-1 only; common typography outside it is mapped to ASCII.
_ASCII_MAP = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
    "\u2026": "...", "\u2022": "*", "\u20ac": "EUR", "\u2212": "-", "\u00a0": " ", "\t": "    ",
})


def _latin1(text: str) -> str:
    return text.translate(_ASCII_MAP).encode("latin-1", "replace").decode("latin-1")


PAGE_BREAK = "\f"  # a line that is only this starts a new page
# What one A4 page holds at 11 pt with 6 mm lines: used to refuse text before laying it out.
_LINES_PER_PAGE = 44
_CHARS_PER_PAGE = _LINES_PER_PAGE * 100


def build(text: str, title: str | None = None, stamp: datetime | None = None) -> bytes:
    """A PDF with one line of ``text`` per paragraph, long lines wrapped at word breaks, a new page
    at each ``PAGE_BREAK`` line; more than ``MAX_PDF_PAGES`` pages is refused (``OfficeError``
    naming ``title``)."""
    label = title or "text"
    lines = text.count("\n") + 1
    if len(text) > MAX_PDF_PAGES * _CHARS_PER_PAGE or lines > MAX_PDF_PAGES * _LINES_PER_PAGE:
        raise OfficeError(f"{label}: {len(text):,} characters in {lines:,} lines would make more than "
                          f"{MAX_PDF_PAGES} PDF pages (the PDF limit)")
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    when = (stamp or DEFAULT_STAMP).replace(microsecond=0)
    pdf.set_creation_date(when if when.tzinfo else when.replace(tzinfo=timezone.utc))
    pdf.set_creator("homeragents")
    pdf.set_producer("homeragents")
    if title:
        pdf.set_title(_latin1(title))
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    width = pdf.w - pdf.l_margin - pdf.r_margin
    known = _plain(text)
    cells: list[tuple[int, str]] = []  # (page, text) of each line laid out, for the pages' known text
    for line in text.split("\n"):
        if line == PAGE_BREAK:
            pdf.add_page()
        elif line.strip():
            for part in _wrap(pdf, _latin1(line), width):
                pdf.cell(width, 6, part, new_x="LMARGIN", new_y="NEXT")
                known = known and part.strip(" ") != ""  # a cell of spaces alone is not modelled
                cells.append((pdf.page, part))
        else:
            pdf.ln(6)
        if pdf.page > MAX_PDF_PAGES:
            raise OfficeError(f"{label}: the text needs more than {MAX_PDF_PAGES} PDF pages (the PDF limit)")
    data = bytes(pdf.output())
    if known:
        _remember_pages(data, pdf.page, cells)
    return data


_PLAIN_CHARS = frozenset(map(chr, range(0x20, 0x7F))) | {"\n"}
_CELL_CONTENT_BYTES = 128  # the content stream a cell writes besides its text (position, font, operators)


def _plain(text: str) -> bool:
    """Text whose pages' extracted text :func:`_remember_pages` knows: lines that are printable
    ASCII as laid out (typography mapped, a tab as spaces; a page break alone on its line)."""
    return all(line == PAGE_BREAK or _PLAIN_CHARS.issuperset(_latin1(line)) for line in text.split("\n"))


def _content_bound(pages: int, cells: list[tuple[int, str]]) -> int:
    """At least the page content the cells write, decompressed (a text escaped at worst doubles)."""
    return sum(len(part) * 2 + _CELL_CONTENT_BYTES for _, part in cells) + pages * _CELL_CONTENT_BYTES


def _remember_pages(data: bytes, pages: int, cells: list[tuple[int, str]]) -> None:
    """What :func:`read_pages` and :func:`read_text` give for ``data``, a PDF just built from plain
    text (:func:`_plain`) that laid out ``cells`` (none of spaces alone) on ``pages`` pages: each
    page's cells, one a line, as pypdf extracts them (tests compare with pypdf over many texts).
    Nothing is remembered for text a reader would cut or whose content could pass the reading
    limit: those are read."""
    texts: list[list[str]] = [[] for _ in range(pages)]
    for page, part in cells:
        texts[page - 1].append(part)
    read = tuple("\n".join(lines) for lines in texts)
    if _content_bound(pages, cells) > MAX_PDF_CONTENT_BYTES or sum(len(text) + 1 for text in read) > MAX_TEXT_CHARS:
        return
    size = sum(len(text) for text in read)  # the cache weighs what it holds: the text, not the compressed file
    remember_content(_kind("pdf-pages"), data, read, size)
    remember_content(_kind("pdf"), data, "\n".join(read).strip("\n"), size)


def _kind(kind: str) -> str:
    """The read cache's kind of a PDF's reading under the limits in force (what was read or
    remembered under other limits is not taken for it)."""
    return f"{kind}:{MAX_TEXT_CHARS}:{MAX_PDF_CONTENT_BYTES}:{MAX_PDF_STREAM_BYTES}:{MAX_PDF_PAGES}"


# the office tools' conversions: a task's replays convert the same text again (office_env.formats.built)
remembered_build = remembered(build)


def _wrap(pdf: "FPDF", line: str, width: float) -> list[str]:
    """``line`` broken at spaces into pieces that fit ``width`` (a word wider than that is broken
    between characters): one ``cell`` per piece lays text out far faster than ``multi_cell``.
    Widths come from the core font's metrics (Latin-1 text, one table lookup per character)."""
    widths: dict[str, int] = cast("CoreFont", pdf.current_font).cw  # set_font chose a core font
    scale = pdf.font_size / 1000

    def size(text: str) -> float:
        return sum(widths.get(ch, 600) for ch in text) * scale

    if size(line) <= width:
        return [line]
    out: list[str] = []
    current, space = "", size(" ")
    used = 0.0
    for word in line.split(" "):
        needed = size(word)
        if current and used + space + needed <= width:
            current, used = f"{current} {word}", used + space + needed
            continue
        if current:
            out.append(current)
        current, used = word, needed
        while used > width:
            cut, taken = 0, 0.0
            while cut < len(current) and taken + widths.get(current[cut], 600) * scale <= width:
                taken += widths.get(current[cut], 600) * scale
                cut += 1
            cut = max(cut, 1)
            out.append(current[:cut])
            current = current[cut:]
            used = size(current)
    out.append(current)
    return out


def read_text(path: Path, label: str) -> str:
    return cached_read(_kind("pdf"), path, lambda: "\n".join(read_pages(path, label)).strip("\n"), by_content=True)


def read_pages(path: Path, label: str) -> tuple[str, ...]:
    """The text of each page (a cut note last when the text limit stops the reading)."""
    return cached_read(_kind("pdf-pages"), path, lambda: _read_pages(path, label), by_content=True)


_STREAM_LIMITS = {
    "zlib_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "lzw_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "run_length_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "brotli_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "jbig2_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "array_based_stream_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "image_maximum_buffer_size": MAX_PDF_STREAM_BYTES,
    "stream_decoding_work_maximum_length": 4 * MAX_PDF_STREAM_BYTES,
    "xform_maximum_invocations_per_extraction": 200,
}


def _stream_limits() -> ContextManager[Any]:
    """pypdf's configuration with our stream limits, for the fields this pypdf version has."""
    apply = getattr(pypdf, "apply_configuration", None)
    configuration = getattr(pypdf, "Configuration", None)
    if apply is None or configuration is None:
        return nullcontext()
    known = {f.name for f in dataclasses.fields(configuration)}
    return apply(**{name: value for name, value in _STREAM_LIMITS.items() if name in known})


def _read_pages(path: Path, label: str) -> tuple[str, ...]:
    data = read_bytes(path, label)
    if b"%PDF-" not in data[:1024]:
        raise CorruptFileError(f"{label}: not a PDF file (no %PDF header)")
    pieces, chars = [], 0
    try:
        with _stream_limits():
            reader = PdfReader(io.BytesIO(data))
            count = len(reader.pages)
            if count > MAX_PDF_PAGES:
                raise CorruptFileError(f"{label}: has {count:,} pages, over the {MAX_PDF_PAGES}-page limit")
            content = 0
            for page in reader.pages:
                stream = page.get_contents()
                content += len(stream.get_data()) if stream is not None else 0
                if content > MAX_PDF_CONTENT_BYTES:
                    raise CorruptFileError(f"{label}: its page content unpacks past the "
                                           f"{size_text(MAX_PDF_CONTENT_BYTES)} limit")
            for number, page in enumerate(reader.pages, start=1):
                text = page.extract_text() or ""
                if chars + len(text) > MAX_TEXT_CHARS:
                    pieces.append(text[:MAX_TEXT_CHARS - chars])
                    pieces.append(f"... [cut at {MAX_TEXT_CHARS:,} characters: pages {number} to {count} "
                                  "not fully read]")
                    break
                pieces.append(text)
                chars += len(text) + 1
    except CorruptFileError:
        raise
    except LimitReachedError:
        raise CorruptFileError(f"{label}: a stream in it unpacks past the {size_text(MAX_PDF_STREAM_BYTES)} "
                               "limit (or past another PDF reading limit)") from None
    except Exception as exc:  # pypdf raises many error types for damaged files
        raise CorruptFileError(f"{label}: not a readable PDF file ({type(exc).__name__})") from None
    return tuple(pieces)
