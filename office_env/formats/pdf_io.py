"""PDF files: written with fpdf2 (core fonts, reproducible), read with pypdf."""

from __future__ import annotations

import io
import logging
from datetime import datetime, timezone
from pathlib import Path

from fpdf import FPDF
from pypdf import PdfReader

from office_env.errors import CorruptFileError
from office_env.formats.ooxml import DEFAULT_STAMP
from office_env.formats.read_cache import cached_read

logging.getLogger("pypdf").setLevel(logging.ERROR)
logging.getLogger("fontTools").setLevel(logging.ERROR)

# Core PDF fonts cover Latin-1 only; common typography outside it is mapped to ASCII.
_ASCII_MAP = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
    "\u2026": "...", "\u2022": "*", "\u20ac": "EUR", "\u2212": "-", "\u00a0": " ", "\t": "    ",
})


def _latin1(text: str) -> str:
    return text.translate(_ASCII_MAP).encode("latin-1", "replace").decode("latin-1")


def build(text: str, title: str | None = None, stamp: datetime | None = None) -> bytes:
    """A PDF with one line of ``text`` per paragraph, long lines wrapped at word breaks."""
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
    for line in text.split("\n"):
        if line.strip():
            pdf.multi_cell(width, 6, _latin1(line), new_x="LMARGIN", new_y="NEXT")
        else:
            pdf.ln(6)
    return bytes(pdf.output())


def read_text(path: Path, label: str) -> str:
    return cached_read("pdf", path, lambda: _read_text(path, label))


def _read_text(path: Path, label: str) -> str:
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
        if b"%PDF-" not in head:
            raise CorruptFileError(f"{label}: not a PDF file (no %PDF header)")
        reader = PdfReader(io.BytesIO(path.read_bytes()))
        pages = [page.extract_text() or "" for page in reader.pages]
    except CorruptFileError:
        raise
    except Exception as exc:  # pypdf raises many error types for damaged files
        raise CorruptFileError(f"{label}: not a readable PDF file ({type(exc).__name__})") from None
    return "\n".join(pages).strip("\n")
