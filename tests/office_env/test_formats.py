"""File formats: writers are byte-deterministic, readers give back what writers wrote."""

from __future__ import annotations

import io
import random
import re
import time
import zipfile
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import docx
import docx.table
import icalendar
import openpyxl
import pytest
from pypdf import PdfReader

from office_env import CorruptFileError, OfficeError
from office_env.formats import docx_io, eml_io, ics_io, pdf_io, xlsx_io
from office_env.formats.ics_io import CalendarEvent
from office_env.sample import SAMPLE_NOW as NOW

LATER = NOW + timedelta(days=1, hours=3)
TEXT = "Meeting notes\nBudget review on Friday\n\nOwner: Dana Reyes\nTotal: 12,500.00 USD"
ROWS = [["Name", "Score", "Status"], ["Alice", 85, "Done"], ["Bob", 92.5, None], ["Carol", 1200, "=SUM(B2:B3)"]]
EVENTS = [
    CalendarEvent("Team sync", datetime(2024, 5, 6, 10, 0), datetime(2024, 5, 6, 11, 0), "Room 2", "Weekly"),
    CalendarEvent("1:1 with Bob", datetime(2024, 5, 6, 14, 0), datetime(2024, 5, 6, 14, 30)),
]


BUILDERS = {
    "docx": lambda stamp: docx_io.build(TEXT + "\n# Heading", stamp),
    "xlsx": lambda stamp: xlsx_io.build(ROWS, sheet_name="Scores", stamp=stamp),
    "pdf": lambda stamp: pdf_io.build(TEXT, title="notes", stamp=stamp),
    "eml": lambda stamp: eml_io.build("alice", "bob", "Budget", "Hello Bob,\nthe total is 12,500.", stamp),
    "ics": lambda stamp: ics_io.build(EVENTS, "alice", stamp),
}


def build_all(stamp: datetime) -> dict[str, bytes]:
    return {kind: build(stamp) for kind, build in BUILDERS.items()}


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- determinism --------------------------------------------------------------------------------

def test_writers_are_byte_deterministic_across_wall_clock_seconds():
    first = build_all(NOW)
    time.sleep(1.1)  # python-docx, openpyxl and fpdf2 would otherwise stamp the wall clock
    second = build_all(NOW)
    for kind in first:
        assert first[kind] == second[kind], kind


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_the_stamp_is_what_varies_the_bytes(kind):
    assert BUILDERS[kind](NOW) != BUILDERS[kind](LATER)


def test_default_stamp_is_deterministic_too():
    assert docx_io.build("x") == docx_io.build("x")
    assert xlsx_io.build([[1]]) == xlsx_io.build([[1]])
    assert pdf_io.build("x") == pdf_io.build("x")
    assert ics_io.build(EVENTS, "alice") == ics_io.build(EVENTS, "alice")


@pytest.mark.parametrize("kind", ["docx", "xlsx"])
def test_ooxml_packages_carry_the_stamp(kind):
    data = BUILDERS[kind](NOW)
    package = zipfile.ZipFile(io.BytesIO(data))
    assert {info.date_time for info in package.infolist()} == {(2024, 5, 3, 9, 30, 0)}
    core = package.read("docProps/core.xml").decode()
    assert "2024-05-03T09:30:00Z" in core
    assert package.testzip() is None



def test_a_remembered_deletion_gives_the_bytes_a_fresh_parse_gives_and_never_keeps_an_error():
    """``ics_io.without_events`` is remembered (replays delete the same event again): a second call,
    answered from memory, equals the deletion made afresh, per calendar and title; a bad calendar
    raises on every call."""
    ics_io.without_events.cache_clear()
    data = ics_io.build(EVENTS, "alice", NOW)
    title = EVENTS[0].summary
    fresh = ics_io.without_events.__wrapped__(data, title.upper(), "calendar/alice.ics")
    assert fresh[1] == 1 and fresh[0] is not None and title.encode() not in fresh[0]
    for _ in range(2):
        assert ics_io.without_events(data, title.upper(), "calendar/alice.ics") == fresh
    assert ics_io.without_events(data, "no such event", "calendar/alice.ics") == (None, 0)
    other = ics_io.build(EVENTS[1:], "alice", NOW)
    assert ics_io.without_events(other, title, "calendar/alice.ics") == (None, 0)
    for _ in range(2):
        with pytest.raises(CorruptFileError, match="calendar/bad.ics"):
            ics_io.without_events(b"not a calendar", title, "calendar/bad.ics")

def test_docx_reader_returns_written_text(tmp_path):
    path = write(tmp_path, "notes.docx", docx_io.build(TEXT, NOW))
    assert docx_io.read_text(path, "notes.docx") == TEXT


def test_docx_heading_and_empty_document(tmp_path):
    path = write(tmp_path, "h.docx", docx_io.build("# Title\nBody", NOW))
    assert docx_io.read_text(path, "h.docx") == "Title\nBody"
    assert docx.Document(str(path)).paragraphs[0].style.name == "Heading 1"
    empty = write(tmp_path, "e.docx", docx_io.build("", NOW))
    assert docx_io.read_text(empty, "e.docx") == ""


def test_docx_core_properties_use_the_stamp(tmp_path):
    path = write(tmp_path, "p.docx", docx_io.build("x", NOW))
    props = docx.Document(str(path)).core_properties
    assert props.created.replace(tzinfo=None) == NOW
    assert props.modified.replace(tzinfo=None) == NOW
    assert props.author == "homeragents"


@pytest.mark.parametrize("text", [
    "", "x", "# Title\nBody", "# \n\n", "  lead and trail \nA & B < C > D \"q\" 'a'", "\u00a0nbsp\u2003", "é € 中 \U0001F600",
    "tab\there", "carriage\rreturn", "# Heading\twith tab", "\t", "a\t\t b \t\r", "\r\r",
    "\x85next line\x7f", "\n".join(f"line {i}" for i in range(50)),
])
@pytest.mark.parametrize("stamp", [None, NOW, datetime(2025, 1, 2, 9, 0, tzinfo=timezone(timedelta(hours=2)))])
def test_new_documents_are_the_bytes_python_docx_writes(text, stamp, tmp_path):
    """The paragraphs spliced into a kept empty document give python-docx's own bytes."""
    document = docx_io.new_document(stamp)
    docx_io.add_paragraphs(document, text)
    assert docx_io.written.__wrapped__(text, stamp) == docx_io.to_bytes(document, stamp)
    if text:
        assert docx_io.build(text, stamp) == docx_io.to_bytes(document, stamp)
    else:
        assert docx_io.build(text, stamp) == docx_io.to_bytes(docx_io.new_document(stamp), stamp)
    # what the writer tells the read cache its document reads as is what a reader gets from it
    path = write(tmp_path, "d.docx", docx_io.to_bytes(document, stamp))
    assert docx_io._text_read_back(text) == docx_io._read_text(path, "d.docx")


def test_new_documents_refuse_what_xml_cannot_hold_as_python_docx_does():
    with pytest.raises(ValueError):
        docx_io.written.__wrapped__("bell\x07", NOW)


def test_new_documents_use_a_trimmed_template_whose_style_references_all_resolve(tmp_path):
    data = docx_io.build("# Title\nBody", NOW)
    package = zipfile.ZipFile(io.BytesIO(data))
    names = set(package.namelist())
    assert "word/stylesWithEffects.xml" not in names and "docProps/thumbnail.jpeg" not in names
    assert len(data) < 16_000  # python-docx's own template gives 36 KB before any text
    styles = docx.Document(io.BytesIO(data)).styles
    ids = {s.style_id for s in styles}
    assert {"Normal", "Heading1", "Title", "ListBullet", "TableGrid"} <= ids
    referenced = set()
    for part in ("word/styles.xml", "word/numbering.xml"):
        xml = package.read(part).decode()
        referenced |= set(re.findall(r'w:(?:basedOn|next|link|pStyle) w:val="([^"]+)"', xml))
    assert referenced <= ids
    # an agent's later edit through python-docx still finds the styles it asks for
    document = docx_io.load(write(tmp_path, "t.docx", data), "t.docx")
    document.add_paragraph("item", style="List Bullet")
    document.add_table(rows=1, cols=2).style = "Table Grid"


def test_docx_reader_matches_python_docx_for_tables_tabs_and_breaks(tmp_path):
    document = docx_io.new_document(NOW)
    document.add_paragraph("Before the table")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Name", "Total"], ["Alice", "4,200"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    paragraph = document.add_paragraph("col A")
    paragraph.add_run().add_tab()
    paragraph.add_run("col B")
    paragraph.add_run().add_break()
    paragraph.add_run("next line")
    document.add_paragraph("After")
    path = write(tmp_path, "t.docx", docx_io.to_bytes(document, NOW))
    text = docx_io.read_text(path, "t.docx")
    assert text == "Before the table\nName | Total\nAlice | 4,200\ncol A\tcol B\nnext line\nAfter"
    # the fast lxml reader agrees with python-docx's own object model
    reference = []
    for block in docx.Document(str(path)).iter_inner_content():
        if isinstance(block, docx.table.Table):
            reference.extend(" | ".join(cell.text for cell in row.cells) for row in block.rows)
        else:
            reference.append(block.text)
    assert text == "\n".join(reference)


@pytest.mark.parametrize("content", [b"just text", b"PK\x03\x04broken zip", b""])
def test_docx_reader_refuses_non_documents(tmp_path, content):
    path = write(tmp_path, "bad.docx", content)
    with pytest.raises(CorruptFileError, match=r"^data/bad.docx: not a readable Word \(.docx\) file"):
        docx_io.read_text(path, "data/bad.docx")
    with pytest.raises(CorruptFileError, match="^data/bad.docx: "):
        docx_io.load(path, "data/bad.docx")


def test_docx_reader_refuses_a_workbook(tmp_path):
    path = write(tmp_path, "wb.docx", xlsx_io.build([[1]], stamp=NOW))
    with pytest.raises(CorruptFileError, match="wb.docx: not a readable Word"):
        docx_io.read_text(path, "wb.docx")


# -- xlsx ---------------------------------------------------------------------------------------

def test_xlsx_reader_returns_written_cells(tmp_path):
    path = write(tmp_path, "s.xlsx", xlsx_io.build(ROWS, sheet_name="Scores", stamp=NOW))
    workbook = xlsx_io.load(path, "s.xlsx")
    assert workbook.sheetnames == ["Scores"]
    cells = xlsx_io.cells(xlsx_io.sheet_of(workbook, "Scores", "s.xlsx"))
    assert cells == {
        (1, 1): "Name", (1, 2): "Score", (1, 3): "Status",
        (2, 1): "Alice", (2, 2): 85, (2, 3): "Done",
        (3, 1): "Bob", (3, 2): 92.5,
        (4, 1): "Carol", (4, 2): 1200, (4, 3): "=SUM(B2:B3)",
    }
    assert xlsx_io.read_text(path, "s.xlsx").splitlines() == [
        "(1, 1): Name\t(1, 2): Score\t(1, 3): Status\t",
        "(2, 1): Alice\t(2, 2): 85\t(2, 3): Done\t",
        "(3, 1): Bob\t(3, 2): 92.5\t(3, 3): [Empty Cell]\t",
        "(4, 1): Carol\t(4, 2): 1200\t(4, 3): =SUM(B2:B3)\t",
    ]


def test_xlsx_render_of_empty_sheet_is_empty(tmp_path):
    path = write(tmp_path, "e.xlsx", xlsx_io.build([], stamp=NOW))
    assert xlsx_io.read_text(path, "e.xlsx") == ""


@pytest.mark.parametrize("text", ["=SUM(A1:A3)", "=1+1", "=cmd|' /C calc'!A0", "=HYPERLINK(\"http://x\",\"y\")"])
def test_formula_looking_text_stays_literal(tmp_path, text):
    workbook = xlsx_io.new_workbook("S", NOW)
    xlsx_io.set_value(workbook.active, 2, 3, text)
    assert workbook.active.cell(2, 3).data_type == "s"
    path = write(tmp_path, "f.xlsx", xlsx_io.to_bytes(workbook, NOW))
    sheet_xml = zipfile.ZipFile(path).read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet_xml and "<f " not in sheet_xml
    for data_only in (False, True):
        cell = openpyxl.load_workbook(path, data_only=data_only).active.cell(2, 3)
        assert cell.value == text
        assert cell.data_type == "s"
    # and it stays text after another load / edit / save cycle
    again = xlsx_io.load(path, "f.xlsx")
    xlsx_io.set_value(again.active, 1, 1, "other")
    path2 = write(tmp_path, "f2.xlsx", xlsx_io.to_bytes(again, NOW))
    assert "<f>" not in zipfile.ZipFile(path2).read("xl/worksheets/sheet1.xml").decode()
    assert openpyxl.load_workbook(path2).active.cell(2, 3).value == text


@pytest.mark.parametrize("given, expected", [
    ("42", 42), ("-7", -7), ("0", 0), ("3.25", 3.25), ("-0.5", -0.5), (" 12 ", 12),
    ("007", "007"), ("1e5", "1e5"), ("1,200", "1,200"), ("12.", "12."), (".5", ".5"), ("abc", "abc"),
    (5, 5), (2.5, 2.5), (True, True), (None, None),
])
def test_coerce(given, expected):
    value = xlsx_io.coerce(given)
    assert value == expected
    assert type(value) is type(expected)


def test_sheet_of_unknown_sheet_names_the_file_and_sheets(tmp_path):
    workbook = xlsx_io.load(write(tmp_path, "s.xlsx", xlsx_io.build(ROWS, "Scores", NOW)), "s.xlsx")
    assert xlsx_io.sheet_of(workbook, None, "s.xlsx").title == "Scores"
    with pytest.raises(OfficeError, match=r"^data/s.xlsx: no sheet named 'Other' \(sheets: Scores\)$"):
        xlsx_io.sheet_of(workbook, "Other", "data/s.xlsx")


def test_xlsx_created_property_uses_the_stamp(tmp_path):
    path = write(tmp_path, "s.xlsx", xlsx_io.build(ROWS, stamp=NOW))
    assert openpyxl.load_workbook(path).properties.created == NOW


@pytest.mark.parametrize("content", [b"not a workbook", None])
def test_xlsx_reader_refuses_non_workbooks(tmp_path, content):
    data = content if content is not None else xlsx_io.build(ROWS, stamp=NOW)[:100]
    path = write(tmp_path, "bad.xlsx", data)
    with pytest.raises(CorruptFileError, match=r"^data/bad.xlsx: not a readable Excel \(.xlsx\) file"):
        xlsx_io.read_text(path, "data/bad.xlsx")


# -- pdf ----------------------------------------------------------------------------------------

def test_pdf_reader_returns_written_text(tmp_path):
    path = write(tmp_path, "n.pdf", pdf_io.build(TEXT, title="Notes", stamp=NOW))
    assert pdf_io.read_text(path, "n.pdf") == TEXT.replace("\n\n", "\n")


def test_pdf_long_lines_wrap_but_keep_every_word(tmp_path):
    words = " ".join(f"word{i}" for i in range(200))
    path = write(tmp_path, "long.pdf", pdf_io.build(words, stamp=NOW))
    text = pdf_io.read_text(path, "long.pdf")
    assert "\n" in text
    assert " ".join(text.split()) == words


def test_pdf_many_lines_span_pages(tmp_path):
    lines = [f"Line number {i}" for i in range(120)]
    path = write(tmp_path, "pages.pdf", pdf_io.build("\n".join(lines), stamp=NOW))
    assert len(PdfReader(path).pages) > 1
    assert pdf_io.read_text(path, "pages.pdf").split() == " ".join(lines).split()


def test_pdf_typography_outside_latin1_is_mapped(tmp_path):
    path = write(tmp_path, "t.pdf", pdf_io.build("\u201cQuoted\u201d \u2013 costs \u20ac5 \u2026 caf\u00e9", stamp=NOW))
    assert pdf_io.read_text(path, "t.pdf") == "\"Quoted\" - costs EUR5 ... caf\u00e9"


def test_pdf_metadata_uses_title_and_stamp(tmp_path):
    path = write(tmp_path, "m.pdf", pdf_io.build("x", title="Report", stamp=NOW))
    meta = PdfReader(path).metadata
    assert meta.title == "Report"
    assert meta.creation_date.replace(tzinfo=None) == NOW


def _plain_texts() -> list[str]:
    """Texts of many shapes for the PDF reader's known text: every printable ASCII character
    (PDF string escapes too), words past a line's width, lines that wrap, blank lines, page breaks
    first, last and in a row, pages that fill and break by themselves, and texts that are not plain
    (spaces at an end or in a row, tabs, Latin-1, typography, a page break inside a line)."""
    import random

    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0x21, 0x7F)]

    def word() -> str:
        size = rng.choice([1, 2, 3, 5, 8, 12, 30, 140])
        return "".join(rng.choice(alphabet) for _ in range(size))

    def line() -> str:
        roll = rng.random()
        if roll < 0.15:
            return rng.choice(["", " ", "   ", "\t"])
        if roll < 0.2:
            return pdf_io.PAGE_BREAK
        gaps = [" "] * 12 + ["  ", "\t", " \t "]
        text = "".join(word() + rng.choice(gaps) for _ in range(rng.choice([1, 2, 4, 9, 25, 60])))
        return rng.choice(["", " ", "  ", "\t"]) + text[:rng.choice([-1, len(text)])]

    texts = ["", "x", "\f", "\f\nx", "x\n\f", "x\n\f\n\f\ny", "\n\nx\n\n", "(a) \\b) c\\", "0.5% of 100 = $0.50",
             "\n".join(f"Line {i}" for i in range(130)), "\n".join([""] * 60 + ["after blanks"]),
             " ".join(["w" * 7] * 400), "W" * 500, " lead", "trail ", "two  spaces", "tab\there", "caf\u00e9",
             "\u201cq\u201d \u2013 \u20ac5 \u2026", "\u65e5\u672c", "a\fb", "   ", "x\n  \ny", "\r\n", "\x7f",
             "(1, 1): Item\t(1, 2): SKU\t\n(2, 1): Shredder\t(2, 2): S-3738\t", "\t".join(["(9, 9): cell"] * 40),
             " ".join(["w" * 7] * 60) + " " + " " * 40, ("x" * 88 + "  ") * 6, "(" * 3000, "\n".join(["\\" * 90] * 300)]
    texts += ["\n".join(line() for _ in range(rng.choice([1, 3, 10, 50, 120]))) for _ in range(120)]
    return texts


def test_a_built_pdf_reads_back_as_pypdf_extracts_its_text(tmp_path, monkeypatch):
    """build remembers the pages' text of a PDF it makes from plain text (what pypdf would extract,
    known from the lines it laid out on each page); over texts of many shapes each read gives what
    pypdf gives, a text not plain is read by pypdf, and the content bound holds."""
    from office_env.formats import read_cache

    laid: list[tuple[int, list[tuple[int, str]]]] = []
    remember = pdf_io._remember_pages
    monkeypatch.setattr(pdf_io, "_remember_pages", lambda data, pages, cells: (laid.append((pages, cells)),
                                                                               remember(data, pages, cells)))
    plain = 0
    for i, text in enumerate(_plain_texts()):
        read_cache.clear()
        laid.clear()
        data = pdf_io.build(text, title="T", stamp=NOW)
        path = write(tmp_path, f"p{i}.pdf", data)
        known = read_cache._CACHE.get(read_cache._digest_key(pdf_io._kind("pdf-pages"), data))
        pages = pdf_io.read_pages(path, "p.pdf")
        assert pages == pdf_io._read_pages(path, "p.pdf"), repr(text)
        assert pdf_io.read_text(path, "p.pdf") == "\n".join(pdf_io._read_pages(path, "p.pdf")).strip("\n"), repr(text)
        assert known is None or pdf_io._plain(text), repr(text)  # a plain text with a cell of spaces is read
        if known is not None:
            plain += 1
            reader = PdfReader(io.BytesIO(data))
            content = sum(len(page.get_contents().get_data()) for page in reader.pages
                          if page.get_contents() is not None)
            assert 0 < content <= pdf_io._content_bound(*laid[0]), repr(text)
    assert plain > 100 and plain < len(_plain_texts())


@pytest.mark.parametrize("content, reason", [(b"<html>nope</html>", "no %PDF header"),
                                             (b"%PDF-1.7\nnothing else", "not a readable PDF file")])
def test_pdf_reader_refuses_non_pdfs(tmp_path, content, reason):
    path = write(tmp_path, "bad.pdf", content)
    with pytest.raises(CorruptFileError, match=f"^data/bad.pdf: .*{reason}"):
        pdf_io.read_text(path, "data/bad.pdf")


# -- eml ----------------------------------------------------------------------------------------

def test_eml_parse_returns_written_fields():
    body = "Hello Bob,\nthe total is 12,500.\nGrüße — Alice"
    mail = eml_io.parse(eml_io.build("alice", "bob@corp.org", "Budget: Q3 ✓", body, NOW), "m.eml")
    assert mail.sender == "alice@example.com"
    assert mail.recipient == "bob@corp.org"
    assert mail.subject == "Budget: Q3 ✓"
    assert mail.body == body
    assert mail.when().replace(tzinfo=None) == NOW


def test_eml_message_id_depends_on_content():
    def message_id(data: bytes) -> str:
        return next(line for line in data.decode().splitlines() if line.startswith("Message-ID:"))

    base = message_id(eml_io.build("alice", "bob", "S", "body", NOW))
    assert base == message_id(eml_io.build("alice", "bob", "S", "body", NOW))
    assert base != message_id(eml_io.build("alice", "bob", "S", "other body", NOW))
    assert base != message_id(eml_io.build("alice", "bob", "S", "body", LATER))


def _standard_message(sender, recipient, subject, body, when, cc=()):
    """The message as the standard library's default policy writes it, header by header."""
    import hashlib
    from email import policy
    from email.message import EmailMessage
    from email.utils import format_datetime

    message = EmailMessage(policy=policy.default.clone(linesep="\n"))
    message["From"], message["To"] = eml_io.address(sender), eml_io.address(recipient)
    if cc:
        message["Cc"] = ", ".join(eml_io.address(c) for c in cc)
    message["Subject"], message["Date"] = subject, format_datetime(when)
    copied = "".join(f"\n{c}" for c in cc)
    digest = hashlib.sha1(f"{sender}\n{recipient}\n{subject}\n{body}\n{when.isoformat()}{copied}".encode()).hexdigest()
    message["Message-ID"] = f"<{digest[:20]}@{eml_io.MAIL_DOMAIN}>"
    message.set_content(body)
    return message.as_bytes()


def test_eml_build_writes_what_the_standard_policy_writes_every_time():
    """Header classes made once, headers parsed once and their folds kept change no byte, also for
    a folded Cc line, a folded subject, non-ASCII text and an address that does not parse."""
    long_cc = tuple(f"person.number{i}.with.a.long.name@department{i}.example.com" for i in range(8))
    cases = [("alice", "bob", "Budget", "Hello", NOW, ()),
             ("alice", "bob@corp.org", "Budget: Q3 \u2713", "Gr\u00fc\u00dfe,\nthe total is 12,500.", LATER, ("carol",)),
             ("alice", "bob", "Team", "x" * 2000, NOW, long_cc),
             ("alice", "not an <address", "Odd", "body", NOW, ()),
             ("alice", "bob", "A long subject that folds " * 6, "body", LATER, ())]
    for _ in range(2):  # the second time every header comes from the caches
        for case in cases:
            assert eml_io.build(*case[:5], cc=case[5]) == _standard_message(*case), case[:4]
    for sender, recipient, cc in (("alice\nBcc: eve@evil.org", "bob", ()), ("alice", "bob\r\nBcc: eve", ()),
                                  ("alice", "bob", ("carol\u2028x",))):
        with pytest.raises(ValueError, match="linefeed"):  # as the message refuses a header injection
            eml_io.build(sender, recipient, "Hi", "body", NOW, cc=cc)


def test_eml_address():
    assert eml_io.address(" alice ") == "alice@example.com"
    assert eml_io.address("x@y.org") == "x@y.org"


def test_eml_when_of_bad_date_is_none():
    mail = eml_io.parse(b"From: a@example.com\nDate: not a date\n\nbody\n", "m.eml")
    assert mail.when() is None
    assert mail.body == "body"


@pytest.mark.parametrize("content", [b"just body text\nmore body\n", b"", b"\n\n"])
def test_eml_without_headers_is_refused(tmp_path, content):
    path = write(tmp_path, "x.eml", content)
    with pytest.raises(CorruptFileError, match=r"^emails/bob/x.eml: not an e-mail message"):
        eml_io.read(path, "emails/bob/x.eml")


# -- ics ----------------------------------------------------------------------------------------

def test_ics_reader_returns_written_events(tmp_path):
    path = write(tmp_path, "a.ics", ics_io.build(list(reversed(EVENTS)), "alice", NOW))
    assert ics_io.read_events(path, "a.ics") == EVENTS  # sorted by start


def test_a_built_calendar_is_remembered_as_a_parse_of_its_bytes_reads_it(tmp_path, monkeypatch):
    """ics_io.build remembers its events by content: calendars of tricky texts (separators, quotes,
    spaces at the ends, long lines folded inside non-ASCII characters, empty fields) and times (all-day,
    equal starts) read from the cache exactly as a parse of the written file reads them; a field the
    model leaves out (a backslash, a line break, a no-break space, microseconds, a zone) is left to the parse."""
    from office_env.formats import read_cache

    parses = []
    real = ics_io.load
    monkeypatch.setattr(ics_io, "load", lambda path, label: parses.append(label) or real(path, label))
    texts = ["", "a, b; c: d", ' "quoted" <x> & y ', "Ünïcode ✓ 中文 😀 " * 12, "x" * 200, "  two  spaces  "]
    start = datetime(2024, 5, 6, 9, 0)
    known = [[CalendarEvent(texts[i % 6], start + timedelta(hours=i % 3), start + timedelta(hours=2),
                            texts[(i + 1) % 6], texts[(i + 2) % 6]) for i in range(n)] for n in range(8)]
    known.append([CalendarEvent("Holiday", date(2024, 5, 9), date(2024, 5, 10)),  # type: ignore[arg-type]
                  CalendarEvent("Same start", start, start), CalendarEvent("Same start", start, start, "b")])
    unknown = [CalendarEvent("back\\slash", start, start), CalendarEvent("line\nbreak", start, start),
               CalendarEvent("no-break\u00a0space", start, start),
               CalendarEvent("micro", start.replace(microsecond=5), start),
               CalendarEvent("zoned", start.replace(tzinfo=timezone.utc), start.replace(tzinfo=timezone.utc))]
    read_cache.clear()
    for i, events in enumerate(known + [[event] for event in unknown]):
        path = write(tmp_path, f"{i}.ics", ics_io.build(events, "alice", NOW))
        expected = ics_io.events_of(real(path, path.name), path.name)
        parses.clear()
        assert ics_io.read_events(path, path.name) == expected, events
        assert parses == ([] if i < len(known) else [path.name])


def _icalendar_build(events: list[CalendarEvent], owner: str, stamp: datetime | None) -> bytes:
    calendar = ics_io.new_calendar()
    for event in events:
        ics_io.add_event(calendar, event, owner, stamp)
    return ics_io.to_bytes(calendar)


def test_ics_build_writes_the_bytes_icalendar_writes():
    """ics_io.build writes a plain calendar (floating times, short printable lines) itself: the same
    bytes icalendar writes, over texts with every character TEXT escaping changes, non-ASCII ones,
    lines just under and over the folding length (in characters and in UTF-8 bytes), empty fields,
    seconds and microseconds, stamps given or not; the others (a zone, a date, a line break, a long
    line) are icalendar's own, and the direct writer declines them."""
    rng = random.Random(5)
    alphabet = "abc XYZ 019 ,;:\\N\"'<>&-_/ é中😀\u00a0"
    start = datetime(2024, 5, 6, 9, 0)
    plain = 0
    for n in range(400):
        texts = ["".join(rng.choice(alphabet) for _ in range(rng.choice((0, 1, 5, 20, 45, 60, 64, 65, 66, 80))))
                 for _ in range(3)]
        events = [CalendarEvent(texts[i % 3], start + timedelta(minutes=37 * i, seconds=rng.choice((0, 7)),
                                                                   microseconds=rng.choice((0, 0, 3))),
                                start + timedelta(minutes=37 * i + 30), texts[(i + 1) % 3] if i % 2 else "",
                                texts[(i + 2) % 3] if i % 3 else "")
                  for i in range(rng.randint(0, 4))]
        stamp = rng.choice((None, NOW, NOW.replace(microsecond=250)))
        assert ics_io.build(events, "alice", stamp) == _icalendar_build(events, "alice", stamp), events
        plain += ics_io._plain_calendar(events, "alice", stamp) is not None
    assert 100 < plain < 400  # both writers were compared
    declined = [[CalendarEvent("zoned", start.replace(tzinfo=timezone.utc), start.replace(tzinfo=timezone.utc))],
                [CalendarEvent("Holiday", date(2024, 5, 9), date(2024, 5, 10))],  # type: ignore[arg-type]
                [CalendarEvent("line\nbreak", start, start)], [CalendarEvent("x" * 67, start, start)],
                [CalendarEvent("é" * 34, start, start)]]
    for events in declined:
        assert ics_io._plain_calendar(events, "alice", NOW) is None
        assert ics_io.build(events, "alice", NOW) == _icalendar_build(events, "alice", NOW)
    assert ics_io._plain_calendar(EVENTS, "alice", NOW.replace(tzinfo=timezone.utc)) is None
    assert ics_io._plain_calendar([CalendarEvent("x" * 66, start, start)], "alice", NOW) is not None


def _icalendar_event(event: CalendarEvent, owner: str, stamp: datetime | None) -> bytes:
    holder = icalendar.Calendar()
    ics_io.add_event(holder, event, owner, stamp)
    return holder.subcomponents[0].to_ical()


def test_an_added_events_bytes_are_the_bytes_icalendar_writes():
    """The VEVENT with_event adds is written directly when plain: icalendar's bytes for it, over
    texts with every character TEXT escaping changes, lines about the folding length, empty
    fields, seconds and microseconds, stamps given or not, zoned and floating; the others
    (a zone, a date, a line break, a long line) are icalendar's own."""
    rng = random.Random(8)
    alphabet = "abc XYZ 019 ,;:\\N\"'<>&-_/ é中😀\u00a0"
    start = datetime(2024, 5, 6, 9, 0)
    plain = 0
    for n in range(400):
        chars = alphabet if rng.random() < 0.3 else alphabet.replace("\u00a0", "")  # a no-break space is not plain
        lengths = [rng.choice((0, 1, 5, 20, 45, 60, 64, 65, 66, 80)), rng.choice((0, 1, 5, 20, 60)),
                   rng.choice((0, 1, 5, 20, 60))]  # the summary about the folding length, the others mostly short
        texts = ["".join(rng.choice(chars) for _ in range(length)) for length in lengths]
        begin = start + timedelta(minutes=37 * n, seconds=rng.choice((0, 7)), microseconds=rng.choice((0, 0, 3)))
        event = rng.choice([CalendarEvent(texts[0], begin, begin + timedelta(minutes=30), texts[1], texts[2])] * 5 + [
                            CalendarEvent(texts[0], begin, begin + timedelta(minutes=30)),
                            CalendarEvent(texts[0], begin.replace(tzinfo=timezone.utc), begin.replace(tzinfo=timezone.utc)),
                            CalendarEvent(texts[0], date(2024, 5, 9), date(2024, 5, 10)),  # type: ignore[arg-type]
                            CalendarEvent(texts[0] + "\n" + texts[1], begin, begin)])
        stamp = rng.choice((None, NOW, NOW, NOW.replace(microsecond=250), NOW.replace(tzinfo=timezone.utc)))
        fields = (event.summary, event.start, event.end, event.location, event.description)
        assert ics_io._event_bytes.__wrapped__("alice", stamp, *fields) == _icalendar_event(event, "alice", stamp), event
        stamp_line = ics_io._plain_stamp(stamp)
        lines = None if stamp_line is None else ics_io._plain_event(event, ics_io._uid(event, "alice"), stamp_line)
        plain += lines is not None and ics_io._plain_text(lines) is not None
    assert 50 < plain < 350  # both writers were compared


def test_ics_events_have_stable_uids_and_stamp():
    calendar = icalendar.Calendar.from_ical(ics_io.build(EVENTS, "alice", NOW))
    components = list(calendar.walk("VEVENT"))
    uids = [str(c.get("uid")) for c in components]
    assert len(set(uids)) == 2 and all(u.endswith("@homeragents") for u in uids)
    assert all(c.get("dtstamp").dt.replace(tzinfo=None) == NOW for c in components)
    other_owner = icalendar.Calendar.from_ical(ics_io.build(EVENTS, "bob", NOW))
    assert uids != [str(c.get("uid")) for c in other_owner.walk("VEVENT")]
    assert str(calendar.get("prodid")) == ics_io.PRODID


def test_ics_remove_events_ignores_case(tmp_path):
    calendar = icalendar.Calendar.from_ical(ics_io.build(EVENTS + [EVENTS[0]], "alice", NOW))
    assert ics_io.remove_events(calendar, "  team SYNC ") == 2
    assert ics_io.remove_events(calendar, "missing") == 0
    assert [e.summary for e in ics_io.events_of(calendar, "a.ics")] == ["1:1 with Bob"]


def test_ics_reader_handles_aware_all_day_and_duration(tmp_path):
    path = write(tmp_path, "c.ics", (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
        "BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Call\r\nDTSTART;TZID=Europe/Berlin:20240506T120000\r\n"
        "DURATION:PT45M\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:2\r\nSUMMARY:Standup\r\nDTSTART:20240506T080000Z\r\n"
        "DTEND:20240506T081500Z\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:3\r\nSUMMARY:Holiday\r\nDTSTART;VALUE=DATE:20240509\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n").encode())
    # aware times become naive UTC (Berlin is UTC+2 in May); an all-day event lasts one day
    assert ics_io.read_events(path, "c.ics") == [
        CalendarEvent("Standup", datetime(2024, 5, 6, 8, 0), datetime(2024, 5, 6, 8, 15)),
        CalendarEvent("Call", datetime(2024, 5, 6, 10, 0), datetime(2024, 5, 6, 10, 45)),
        CalendarEvent("Holiday", datetime(2024, 5, 9), datetime(2024, 5, 10)),
    ]


def test_naive():
    assert ics_io.naive(datetime(2024, 5, 6, 12, 0, tzinfo=timezone(timedelta(hours=2)))) == datetime(2024, 5, 6, 10, 0)
    assert ics_io.naive(date(2024, 5, 9)) == datetime(2024, 5, 9)
    assert ics_io.naive(NOW) is NOW


@pytest.mark.parametrize("content", [b"garbage here\nmore", b"", b"\x00\xff\xfe"])
def test_ics_reader_refuses_garbage(tmp_path, content):
    path = write(tmp_path, "bad.ics", content)
    with pytest.raises(CorruptFileError, match=r"^calendar/bad.ics: not "):
        ics_io.read_events(path, "calendar/bad.ics")


def test_ics_event_without_start_is_refused(tmp_path):
    path = write(tmp_path, "nostart.ics",
                 b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nSUMMARY:Lost\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    with pytest.raises(CorruptFileError, match="^calendar/nostart.ics: event 'Lost' has no DTSTART"):
        ics_io.read_events(path, "calendar/nostart.ics")


def test_xlsx_sheets_are_written_in_memory_with_openpyxls_bytes(monkeypatch):
    """to_bytes streams each sheet into a buffer, not a temporary file, and gives the bytes openpyxl's
    own writer (a file per sheet) gives under the same reproducible zip; the swap ends with the save."""
    import openpyxl.worksheet._writer
    import openpyxl.writer.excel

    from office_env.formats.ooxml import reproducible_zip

    workbook = xlsx_io.new_workbook("Scores", NOW)
    for r, row in enumerate(ROWS, 1):
        for c, value in enumerate(row, 1):
            xlsx_io.set_value(workbook.active, r, c, value)
    workbook.create_sheet("Second").cell(2, 2).value = "x"
    made: list[str] = []
    create = openpyxl.worksheet._writer.create_temporary_file
    monkeypatch.setattr(openpyxl.worksheet._writer, "create_temporary_file",
                        lambda suffix="": made.append(create(suffix)) or made[-1])  # the real one, counted
    data = xlsx_io.to_bytes(workbook, NOW)
    assert made == []
    stock = openpyxl.writer.excel.WorksheetWriter
    assert stock.__module__ == "openpyxl.worksheet._writer"
    buffer = io.BytesIO()
    with reproducible_zip(NOW):
        workbook.save(buffer)
    assert buffer.getvalue() == data


def test_a_built_workbook_has_the_bytes_of_one_openpyxl_makes_and_saves():
    """build starts from a new workbook pickled once and takes a styles part kept per cell styles
    and number formats (dates add some); its bytes are those of a workbook openpyxl makes and saves
    in full, in whatever order workbooks of different formats are built, and no new workbook shares
    a cell with another."""
    import openpyxl.writer.excel

    from office_env.formats.ooxml import reproducible_zip

    dated = [["When", "Day", "Time", "Amount"], [datetime(2024, 5, 6, 9, 30), date(2024, 5, 7), NOW.time(), 1.5]]
    sheets = [ROWS, dated, [["Day"], [date(2024, 1, 2)]], [["Time"], [NOW.time()]], ROWS + dated, [], [[None, "x"]]]

    def full(rows, name, stamp):
        workbook = openpyxl.Workbook()
        workbook.active.title = name
        workbook.properties.creator = xlsx_io.CREATOR
        workbook.properties.created = stamp
        for r, row in enumerate(rows, 1):
            for c, value in enumerate(row, 1):
                if value is not None:
                    xlsx_io.set_value(workbook.active, r, c, value)
        buffer = io.BytesIO()
        with reproducible_zip(stamp):
            workbook.save(buffer)
        return buffer.getvalue()

    xlsx_io._STYLESHEETS.clear()
    for order in (sheets, sheets[::-1]):
        for i, rows in enumerate(order):
            assert xlsx_io.build(rows, f"S{i}", NOW) == full(rows, f"S{i}", NOW), rows
    assert openpyxl.writer.excel.write_stylesheet.__module__ == "openpyxl.styles.stylesheet"  # swapped back
    first = xlsx_io.new_workbook("A")
    first.active.cell(1, 1).value = "taken"
    assert xlsx_io.new_workbook("B").active._cells == {}


def _styled_workbooks() -> list[tuple[str, Any]]:
    """Makers of workbooks whose style tables and parts differ in one thing each: fonts of sizes
    Python holds equal, fills, borders, alignments, protections, a named style, number formats, a
    comment (a part of another extension), a second sheet, a merged range."""
    from openpyxl.comments import Comment
    from openpyxl.styles import Alignment, Border, Font, NamedStyle, PatternFill, Protection, Side

    def book(change) -> Any:
        workbook = xlsx_io.new_workbook("S", NOW)
        for r, row in enumerate(ROWS, 1):
            for c, value in enumerate(row, 1):
                if value is not None:
                    xlsx_io.set_value(workbook.active, r, c, value)
        change(workbook)
        return workbook

    def cell(workbook):
        return workbook.active.cell(2, 2)

    def named(workbook):
        style = NamedStyle(name="loud", font=Font(bold=True), alignment=Alignment(horizontal="center"))
        workbook.add_named_style(style)
        cell(workbook).style = "loud"

    changes = {
        "plain": lambda wb: None,
        "bold": lambda wb: setattr(cell(wb), "font", Font(bold=True)),
        "size 11": lambda wb: setattr(cell(wb), "font", Font(size=11)),
        "size 11.0": lambda wb: setattr(cell(wb), "font", Font(size=11.0)),
        "size 11.5": lambda wb: setattr(cell(wb), "font", Font(size=11.5)),
        "fill": lambda wb: setattr(cell(wb), "fill", PatternFill("solid", fgColor="FFFF00")),
        "border": lambda wb: setattr(cell(wb), "border", Border(left=Side(style="thin"))),
        "alignment": lambda wb: setattr(cell(wb), "alignment", Alignment(wrap_text=True)),
        "protection": lambda wb: setattr(cell(wb), "protection", Protection(locked=False)),
        "named": named,
        "format": lambda wb: setattr(cell(wb), "number_format", "0.00%"),
        "date": lambda wb: xlsx_io.set_value(wb.active, 5, 1, datetime(2024, 5, 6, 9, 30)),
        "comment": lambda wb: setattr(cell(wb), "comment", Comment("checked", "ann")),
        "sheet": lambda wb: wb.create_sheet("T").cell(1, 1, "x"),
        "merged": lambda wb: wb.active.merge_cells("A6:B6"),
    }
    return [(name, lambda change=change: book(change)) for name, change in changes.items()]


def test_a_saved_workbook_takes_kept_styles_and_content_types_parts_with_the_bytes_openpyxl_makes():
    """to_bytes keeps the styles part by the workbook's full style tables and the content types
    part by its parts: over workbooks that differ in one style or part each, saved in two orders
    and again, and a saved one read back and saved, its bytes are those of openpyxl's own save."""
    import openpyxl.writer.excel
    from openpyxl.packaging.manifest import Manifest

    from office_env.formats.ooxml import reproducible_zip

    def full(workbook) -> bytes:
        buffer = io.BytesIO()
        with reproducible_zip(NOW):
            workbook.save(buffer)
        return buffer.getvalue()

    books = _styled_workbooks()
    xlsx_io._STYLESHEETS_BY_TABLES.clear()
    xlsx_io._MANIFESTS.clear()
    saved = {}
    for order in (books, books[::-1], books):
        for name, make in order:
            data = xlsx_io.to_bytes(make(), NOW)
            assert data == full(make()), name
            assert saved.setdefault(name, data) == data
    assert saved["size 11"] == saved["size 11.0"]  # a font's size is a float either way
    assert len(set(saved.values())) == len(saved) - 1  # every other change is written
    for order in (list(saved.items()), list(saved.items())[::-1]):
        for name, data in order:
            read = openpyxl.load_workbook(io.BytesIO(data))
            assert xlsx_io.to_bytes(read, NOW) == full(openpyxl.load_workbook(io.BytesIO(data))), name
    unpicklable = books[1][1]()
    unpicklable._table_styles.__dict__["made_by"] = lambda: None  # a table pickle cannot take: made anew
    assert xlsx_io.to_bytes(unpicklable, NOW) == full(unpicklable)
    assert openpyxl.writer.excel.write_stylesheet.__module__ == "openpyxl.styles.stylesheet"  # swapped back
    assert Manifest._write.__module__ == "openpyxl.packaging.manifest"


@pytest.mark.parametrize("batched", [False, True])
def test_an_edit_made_again_is_saved_alike_and_equal_values_apart(tmp_path, batched):
    """The excel tools keep an edit of a workbook for the next edit alike (a task's replays repeat
    the oracle's edits): an edit made again writes what a fresh edit writes, says the same (each
    cell's old value, a refused call's error) and leaves the same remembered version to read, and
    values Python holds equal (1, 1.0 and True; 0.0 and -0.0) are still written apart."""
    from office_env import Workspace, default_registry

    registry = default_registry()
    original = xlsx_io.build([["name", "amount"], ["a", 1]], "S", stamp=NOW)

    def edit(folder: str, value: object) -> tuple:
        (tmp_path / folder / "data").mkdir(parents=True)
        (tmp_path / folder / "data" / "s.xlsx").write_bytes(original)
        ws = Workspace(tmp_path / folder, now=NOW)
        calls = [("excel_set_cell", {"file_path": "data/s.xlsx", "row": 2, "col": 2, "value": value})]
        if batched:
            calls.append(("excel_set_cell", {"file_path": "data/s.xlsx", "row": 3, "col": 1, "value": "b"}))
            calls.append(("excel_set_cell", {"file_path": "data/s.xlsx", "row": 4, "col": 1, "value": "bad\x00"}))
        results = registry.run(ws, calls)
        assert [result.ok for result in results] == [True] * len(calls[:2]) + [False] * (len(calls) - 2)
        path = tmp_path / folder / "data" / "s.xlsx"
        known = xlsx_io.snapshot(path, "data/s.xlsx")
        assert isinstance(known, xlsx_io.Edited)  # remembered: the next read needs no parse
        return path.read_bytes(), [result.observation for result in results], known.edits

    values = [1, 1.0, True, 0.0, -0.0]
    kept = [edit(f"kept-{i}", v) for i, v in enumerate(values)]  # each after the others' edits were kept
    assert "(was 1)." in kept[0][1][0]
    assert [edit(f"again-{i}", v) for i, v in enumerate(values)] == kept
    for i, value in enumerate(values):
        xlsx_io._SAVED.clear()
        assert edit(f"fresh-{i}", value) == kept[i]
    assert kept[0][0] != kept[2][0] and kept[3][0] != kept[4][0]  # 1 and True, 0.0 and -0.0 are written apart


def test_kept_deflate_gives_zlibs_bytes_for_every_part_and_every_way_of_writing_it(monkeypatch):
    """A package written while reproducible_zip keeps deflated parts has the bytes of one whose parts
    are all deflated afresh: parts seen before, parts of the same length but other bytes, an empty
    part, a part past the kept size, a part written in pieces through ``ZipFile.open``; and after the
    save zipfile's own compressor is back."""
    import random

    from office_env.formats import ooxml

    rng = random.Random(7)
    text = "".join(rng.choice("abc <>/=\"\n") for _ in range(5000)).encode()
    noise = bytes(rng.getrandbits(8) for _ in range(3000))
    parts = [("a.xml", text), ("b.xml", text[::-1]), ("c.xml", b""), ("d.xml", noise),
             ("big.xml", text * (ooxml.MAX_KEPT_PART_BYTES // len(text) + 2))]

    def package(pieces: int) -> bytes:
        buffer = io.BytesIO()
        with ooxml.reproducible_zip(NOW), zipfile.ZipFile(buffer, "w") as out:
            for name, data in parts:
                out.writestr(name, data)
            entry = zipfile.ZipInfo("pieces.xml", date_time=(2024, 1, 1, 0, 0, 0))
            entry.compress_type, entry._compresslevel = zipfile.ZIP_DEFLATED, ooxml.LEVEL
            with out.open(entry, "w") as member:
                size = len(text) // pieces + 1
                for at in range(0, len(text), size):
                    member.write(text[at:at + size])
        return buffer.getvalue()

    kept = [package(pieces) for pieces in (1, 1, 3, 7)]
    parts[1] = ("b.xml", text.replace(b"a", b"b"))  # the same length, other bytes
    kept.append(package(1))
    monkeypatch.setattr(ooxml, "_kept_compressor", ooxml._ORIGINAL_GET_COMPRESSOR)  # deflated afresh
    fresh = package(1)
    parts[1] = ("b.xml", text[::-1])
    assert kept[:4] == [package(pieces) for pieces in (1, 1, 3, 7)]
    assert kept[4] == fresh
    assert zipfile._get_compressor is ooxml._ORIGINAL_GET_COMPRESSOR
    with zipfile.ZipFile(io.BytesIO(kept[4])) as back:
        assert back.read("big.xml") == parts[4][1] and back.read("c.xml") == b"" and back.read("pieces.xml") == text
