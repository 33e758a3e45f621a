"""The resource limits hold: zip bombs, huge sheets, oversized files, PDF bombs, long observations.

Each test builds its hostile file here and would fail without the protection it covers: either
the refusal message names the limit, or memory stays small (``tracemalloc``), or a timer fails a
read that would otherwise walk billions of cells.
"""

from __future__ import annotations

import io
import re
import resource
import signal
import struct
import tracemalloc
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path

import openpyxl
import pytest
from fpdf import FPDF

from office_env import CorruptFileError, OfficeError, Workspace, default_registry, limits
from office_env.evaluation.content import mailbox_text, read_document
from office_env.formats import docx_io, eml_io, pdf_io, read_cache, xlsx_io
from office_env.formats.bounded import size_text
from office_env.sample import SAMPLE_NOW as NOW
from office_env.tools.registry import cut

pytestmark = pytest.mark.slow

MiB = limits.MiB
MARKER = "\n... [cut: "


def _virtual_size() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@contextmanager
def within(seconds: float, memory: int = 1 << 30):
    """Fail, instead of hanging or exhausting the machine, when the block takes longer than
    ``seconds`` or more than ``memory`` bytes of new address space (a ``MemoryError``)."""
    def expire(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = _virtual_size()
    if size is not None:
        cap = size + memory if hard == resource.RLIM_INFINITY else min(size + memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextmanager
def peak_memory_below(limit: int):
    tracemalloc.start()
    try:
        yield
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < limit, f"peak memory {peak / MiB:.1f} MiB, expected under {limit / MiB:.0f} MiB"


@pytest.fixture(autouse=True)
def _fresh_cache():
    read_cache.clear()
    yield
    read_cache.clear()


def repack(data: bytes, change: dict[str, bytes | None], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A copy of the package ``data`` with members replaced, added or (``None``) left out."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", compression) as target:
        for info in source.infolist():
            if info.filename not in change:
                target.writestr(info.filename, source.read(info))
        for name, content in change.items():
            if content is not None:
                target.writestr(name, content)
    return out.getvalue()


def understate(data: bytes, member: str, size: int) -> bytes:
    """The zip ``data`` whose central directory claims ``member`` unpacks to ``size`` bytes (with
    the CRC of that prefix), while its deflate stream still holds everything."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        prefix = package.read(member)[:size]
    name = member.encode()
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        name_len = struct.unpack("<H", data[at + 28:at + 30])[0]
        if data[at + 46:at + 46 + name_len] == name:
            break
        at += 4
    patched = bytearray(data)
    struct.pack_into("<I", patched, at + 16, zlib.crc32(prefix))
    struct.pack_into("<I", patched, at + 24, size)
    return bytes(patched)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes on disk that costs nothing to make."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def zeros() -> bytes:
    return b"\0" * (100 * MiB)  # highly compressible: about 100 KB deflated


# -- zip bombs --------------------------------------------------------------------------------

def _docx_bomb() -> bytes:
    base = docx_io.build("hello", NOW)
    with zipfile.ZipFile(io.BytesIO(base)) as package:
        document = package.read("word/document.xml")
    return repack(base, {"word/document.xml": document + b"<!--" + zeros() + b"-->"})


def _xlsx_bomb() -> bytes:
    base = xlsx_io.build([["a"]], stamp=NOW)
    return repack(base, {"xl/sharedStrings.bin": zeros()})


def test_a_docx_bomb_is_refused_before_inflating(tmp_path):
    path = write(tmp_path, "bomb.docx", _docx_bomb())
    assert path.stat().st_size < 1 * MiB
    for read in (docx_io.read_text, docx_io.load):
        with peak_memory_below(8 * MiB), within(5):
            with pytest.raises(CorruptFileError, match=r"^data/bomb.docx: unpacks to 10\d\.\d MiB, over the 64 MiB limit$"):
                read(path, "data/bomb.docx")


def test_an_xlsx_bomb_is_refused_before_inflating(tmp_path):
    path = write(tmp_path, "bomb.xlsx", _xlsx_bomb())
    with peak_memory_below(8 * MiB), within(5):
        with pytest.raises(CorruptFileError, match=r"^data/bomb.xlsx: unpacks to 10\d\.\d MiB, over the 64 MiB limit$"):
            xlsx_io.read_book(path, "data/bomb.xlsx")


def test_a_bomb_is_refused_by_the_tools_and_the_evaluation(tmp_path, registry):
    ws = Workspace(tmp_path, now=NOW)
    write(tmp_path, "data/bomb.docx", _docx_bomb())
    result = registry.call(ws, "word_read_file", {"file_path": "data/bomb.docx"})
    assert not result.ok
    assert re.fullmatch(r"Error: data/bomb.docx: unpacks to 10\d\.\d MiB, over the 64 MiB limit", result.observation)
    with pytest.raises(CorruptFileError, match="over the 64 MiB limit"):
        read_document(tmp_path / "data/bomb.docx", "data/bomb.docx", "docx")


def test_a_member_that_understates_its_size_is_read_no_further(tmp_path):
    """A directory that claims 4 KiB for a part holding 100 MiB passes the size checks; the
    reader must still inflate no more than the claimed size (ZipExtFile.read() without a size
    would inflate up to 1 GiB before cutting)."""
    bomb = understate(_docx_bomb(), "word/document.xml", 4096)
    path = write(tmp_path, "liar.docx", bomb)
    for read in (docx_io.read_text, docx_io.load):
        with peak_memory_below(16 * MiB), within(5):
            with pytest.raises(CorruptFileError, match=r"^data/liar.docx: not a readable Word \(.docx\) file"):
                read(path, "data/liar.docx")


def test_a_part_that_inflates_too_well_is_refused(tmp_path):
    data = repack(docx_io.build("x", NOW), {"word/media/blank.bin": b"\0" * (8 * MiB)})
    path = write(tmp_path, "ratio.docx", data)
    with pytest.raises(CorruptFileError, match=r"^data/ratio.docx: part 'word/media/blank.bin' unpacks [\d,]+ times "
                                               r"its packed size \(8 MiB\), over the 200x limit$"):
        docx_io.read_text(path, "data/ratio.docx")


def test_too_many_parts_are_refused(tmp_path):
    data = repack(xlsx_io.build([["a"]], stamp=NOW),
                  {f"xl/media/p{i}.bin": b"x" for i in range(limits.MAX_PACKAGE_MEMBERS)})
    path = write(tmp_path, "parts.xlsx", data)
    with pytest.raises(CorruptFileError, match=r"^data/parts.xlsx: holds 1,0\d\d parts, over the 1,000-part limit$"):
        xlsx_io.read_book(path, "data/parts.xlsx")


def test_only_stored_and_deflated_parts_are_read(tmp_path):
    data = repack(docx_io.build("x", NOW), {}, compression=zipfile.ZIP_BZIP2)
    path = write(tmp_path, "bz.docx", data)
    with pytest.raises(CorruptFileError, match="uses zip compression method 12; only stored and deflated"):
        docx_io.read_text(path, "data/bz.docx")


def test_normal_packages_still_read(tmp_path):
    docx_path = write(tmp_path, "ok.docx", docx_io.build("hello\nworld", NOW))
    assert docx_io.read_text(docx_path, "ok.docx") == "hello\nworld"
    assert [p.text for p in docx_io.load(docx_path, "ok.docx").paragraphs] == ["hello", "world"]
    xlsx_path = write(tmp_path, "ok.xlsx", xlsx_io.build([["a", 1]], stamp=NOW))
    assert xlsx_io.read_text(xlsx_path, "ok.xlsx") == "(1, 1): a\t(1, 2): 1\t\n"


# -- files over the size limits ---------------------------------------------------------------

@pytest.mark.parametrize("name, doc_type", [("big.docx", "docx"), ("big.xlsx", "xlsx"), ("big.pdf", "pdf"),
                                            ("big.txt", "txt"), ("big.ics", "ics")])
def test_the_evaluation_refuses_files_over_the_size_limit(tmp_path, name, doc_type):
    path = sparse(tmp_path / name, limits.MAX_FILE_BYTES + 1)
    with peak_memory_below(4 * MiB):
        with pytest.raises(CorruptFileError, match=rf"^{name}: is 32\.0 MiB, over the 32 MiB limit$"):
            read_document(path, name, doc_type)


@pytest.mark.parametrize("tool, path", [("word_read_file", "data/big.docx"), ("excel_read_file", "data/big.xlsx"),
                                        ("pdf_read_file", "data/big.pdf"), ("system_read_text", "data/big.txt")])
def test_the_tools_refuse_files_over_the_size_limit(tmp_path, registry, tool, path):
    sparse(tmp_path / path, limits.MAX_FILE_BYTES + 1)
    result = registry.call(Workspace(tmp_path, now=NOW), tool, {"file_path": path})
    assert result.observation == f"Error: {path}: is 32.0 MiB, over the 32 MiB limit"


def test_a_mail_over_the_limit_is_listed_unreadable_and_hides_nothing(ws, testbed, registry):
    big = eml_io.build("bob", "alice", "Huge", "x" * limits.MAX_MAIL_BYTES, NOW)
    (testbed / "emails" / "alice" / "Huge.eml").write_bytes(big)
    listing = registry.call(ws, "email_list_emails", {"user": "alice"}).observation
    assert "2 email(s) for alice" in listing
    problem = f"emails/alice/Huge.eml: is {size_text(len(big))}, over the 2 MiB limit"
    assert f"- unreadable: {problem}" in listing
    read = registry.call(ws, "email_read_email", {"user": "alice", "email_id": "Huge.eml"})
    assert read.observation == f"Error: {problem}"
    text, unreadable = mailbox_text(ws, "alice")
    assert "Quarterly budget" in text and unreadable == [problem]


def test_a_calendar_over_the_limit_is_refused(ws, testbed, registry):
    path = testbed / "calendar" / "alice.ics"
    path.write_bytes(path.read_bytes() + b" " * limits.MAX_ICS_BYTES)
    result = registry.call(ws, "calendar_list_events", {"user": "alice"})
    assert result.observation == "Error: calendar/alice.ics: is 8.0 MiB, over the 8 MiB limit"


def test_a_write_never_makes_a_mail_too_large_to_read(ws, registry):
    result = registry.call(ws, "email_send_email", {"sender": "alice", "recipient": "bob", "subject": "Big",
                                                    "content": "y " * limits.MAX_MAIL_BYTES})
    assert result.observation.startswith("Error: content: the message would be") and "over the 2 MiB limit" in result.observation


# -- huge sheets ------------------------------------------------------------------------------

def _far_workbook(path: Path) -> Path:
    workbook = openpyxl.Workbook()
    workbook.active.title = "Far"
    workbook.active["A1"] = "first"
    workbook.active.cell(1_048_576, 16_384, "last")
    workbook.save(path)
    return path


def test_a_cell_at_the_last_address_reads_fast_and_bounded(tmp_path, registry):
    ws = Workspace(tmp_path, now=NOW)
    (tmp_path / "data").mkdir()
    _far_workbook(tmp_path / "data" / "far.xlsx")
    with within(10):
        result = registry.call(ws, "excel_read_file", {"file_path": "data/far.xlsx"})
        book = xlsx_io.read_book(tmp_path / "data" / "far.xlsx", "far.xlsx")
    assert result.ok
    assert result.observation.splitlines()[1:] == [
        "[sheet of 1,048,576 rows x 16,384 columns, too large to list every cell: only the 2 cell(s) holding a "
        "value are listed]",
        "(1, 1): first\t",
        "(1048576, 16384): last\t",
    ]
    sheet = book.sheet(None, "far.xlsx")
    assert sheet.cells == {(1, 1): "first", (1_048_576, 16_384): "last"}
    assert sheet.rows == (("first",),) and not sheet.complete
    with within(10):
        converted = registry.call(ws, "excel_convert_to_pdf", {"file_path": "data/far.xlsx"})
    assert converted.ok and "only its first 1 rows and 1 columns" in converted.observation


def test_an_edit_of_a_far_workbook_keeps_its_far_cell(tmp_path, registry):
    ws = Workspace(tmp_path, now=NOW)
    (tmp_path / "data").mkdir()
    _far_workbook(tmp_path / "data" / "far.xlsx")
    with within(10):
        assert registry.call(ws, "excel_set_cell", {"file_path": "data/far.xlsx", "row": 2, "col": 2, "value": 7}).ok
        cells = xlsx_io.read_book(tmp_path / "data" / "far.xlsx", "far.xlsx").sheet(None, "far.xlsx").cells
    assert cells == {(1, 1): "first", (2, 2): 7, (1_048_576, 16_384): "last"}


@pytest.mark.parametrize("args, message", [
    ({"row": 1_048_576, "col": 1}, "argument 'row': 1048576 is greater than the maximum of 10000"),
    ({"row": 1, "col": 16_384}, "argument 'col': 16384 is greater than the maximum of 1000"),
])
def test_writes_beyond_the_sheet_bounds_are_refused(ws, registry, args, message):
    result = registry.call(ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "value": 1, **args})
    assert not result.ok and message in result.observation
    schema = registry.get("excel_set_cell").parameters["properties"]
    assert schema["row"]["maximum"] == limits.MAX_SHEET_ROWS and schema["col"]["maximum"] == limits.MAX_SHEET_COLS


def _sheet_with(tmp_path: Path, name: str, extra: bytes, where: bytes = b"</sheetData>") -> Path:
    base = xlsx_io.build([["a"]], sheet_name="S", stamp=NOW)
    with zipfile.ZipFile(io.BytesIO(base)) as package:
        sheet = package.read("xl/worksheets/sheet1.xml")
    return write(tmp_path, name, repack(base, {"xl/worksheets/sheet1.xml": sheet.replace(where, where + extra)}))


@pytest.mark.parametrize("extra, what", [
    (b'<mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells>', "merged cells"),
    (b'<hyperlinks><hyperlink ref="A1:XFD1048576" location="S!A1"/></hyperlinks>', "linked cells"),
])
def test_ranges_over_the_whole_sheet_are_refused(tmp_path, extra, what):
    path = _sheet_with(tmp_path, "ranges.xlsx", extra)
    with within(10), peak_memory_below(64 * MiB):
        with pytest.raises(CorruptFileError, match=f"^data/ranges.xlsx: its {what} pass the limit of "
                                                    f"{limits.MAX_BOOK_CELLS:,} cells"):
            xlsx_io.read_book(path, "data/ranges.xlsx")


def test_a_million_real_cells_are_refused_before_any_parsing(tmp_path, monkeypatch):
    cells = b"".join(b'<c r="A%d"><v>1</v></c>' % (i % 1000 + 1) for i in range(1_000_000))
    path = _sheet_with(tmp_path, "cells.xlsx", cells, where=b"<sheetData>")
    assert path.stat().st_size < limits.MAX_FILE_BYTES  # small on disk, inside the per-file limit

    def never(*args, **kwargs):
        raise AssertionError("the workbook was parsed")

    monkeypatch.setattr(xlsx_io.openpyxl, "load_workbook", never)
    with pytest.raises(CorruptFileError, match=rf"^data/cells.xlsx: holds 1,000,00\d cells, over the limit of "
                                               rf"{limits.MAX_BOOK_CELLS:,} cells"):
        xlsx_io.read_book(path, "data/cells.xlsx")
    result = default_registry().call(Workspace(tmp_path), "excel_read_file", {"file_path": "cells.xlsx"})
    assert not result.ok and "over the limit of" in result.observation


def test_a_comment_on_a_whole_range_is_refused(tmp_path):
    base = xlsx_io.build([["a"]], sheet_name="S", stamp=NOW)
    workbook = openpyxl.load_workbook(io.BytesIO(base))
    workbook.active["A1"].comment = openpyxl.comments.Comment("note", "me")
    buffer = io.BytesIO()
    workbook.save(buffer)
    data = buffer.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        name = next(n for n in package.namelist() if n.startswith("xl/comments"))
        comments = package.read(name).replace(b'ref="A1"', b'ref="A1:XFD1048576"')
    path = write(tmp_path, "comment.xlsx", repack(data, {name: comments}))
    with within(10):
        with pytest.raises(CorruptFileError, match="its commented cells pass the limit"):
            xlsx_io.read_book(path, "data/comment.xlsx")


def test_the_listing_is_cut_at_the_render_limits(tmp_path, monkeypatch):
    rows = [[f"v{r}.{c}" for c in range(1, 11)] for r in range(1, 11)]
    path = write(tmp_path, "grid.xlsx", xlsx_io.build(rows, stamp=NOW))
    normal = xlsx_io.read_text(path, "grid.xlsx")
    assert normal.count("\n") == 10 and "(10, 10): v10.10\t" in normal
    read_cache.clear()
    monkeypatch.setattr(xlsx_io, "MAX_RENDER_CELLS", 30)
    text = xlsx_io.read_text(path, "grid.xlsx")
    assert text.startswith("[sheet of 10 rows x 10 columns, too large to list every cell: only the 100 cell(s)")
    assert text.count("): v") == 30 and text.endswith("... [cut: 70 more cell(s) not listed]\n")
    read_cache.clear()
    monkeypatch.setattr(xlsx_io, "MAX_RENDER_CELLS", 1000)
    monkeypatch.setattr(xlsx_io, "MAX_TEXT_CHARS", 300)
    text = xlsx_io.read_text(path, "grid.xlsx")
    assert len(text) < 400 and "... [cut at 300 characters: rows 3 to 10 not listed]" in text


# -- PDF --------------------------------------------------------------------------------------

def _pdf_with_stream(content: bytes) -> bytes:
    """A one-page PDF whose page content is ``content``, flate-compressed."""
    stream = zlib.compress(content, 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_flate_bomb_in_a_content_stream_is_refused(tmp_path):
    path = write(tmp_path, "bomb.pdf", _pdf_with_stream(b" " * (10 * MiB)))
    assert path.stat().st_size < 64 * 1024
    with within(5):
        with pytest.raises(CorruptFileError, match=r"^data/bomb.pdf: a stream in it unpacks past the 8 MiB limit"):
            pdf_io.read_text(path, "data/bomb.pdf")


def test_too_much_page_content_is_refused_before_text_extraction(tmp_path):
    content = b"BT /F1 12 Tf 72 712 Td (Hello) Tj ET\n" * (limits.MAX_PDF_CONTENT_BYTES // 37 + 1000)
    path = write(tmp_path, "slow.pdf", _pdf_with_stream(content))
    with within(5):
        with pytest.raises(CorruptFileError, match=r"^data/slow.pdf: its page content unpacks past the 4 MiB limit$"):
            pdf_io.read_text(path, "data/slow.pdf")


def test_a_pdf_over_the_page_limit_is_refused(tmp_path):
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for number in range(limits.MAX_PDF_PAGES + 1):
        pdf.add_page()
        pdf.text(20, 20, f"page {number}")
    path = write(tmp_path, "long.pdf", bytes(pdf.output()))
    with pytest.raises(CorruptFileError, match=r"^data/long.pdf: has 501 pages, over the 500-page limit$"):
        pdf_io.read_text(path, "data/long.pdf")


def test_writing_refuses_text_that_needs_too_many_pages():
    with within(5):
        with pytest.raises(OfficeError, match=r"^notes.docx: .* would make more than 500 PDF pages"):
            pdf_io.build("line\n" * (limits.MAX_PDF_PAGES * 45), title="notes.docx")


@pytest.mark.parametrize("limit_first", [True, False])
def test_extracted_text_is_cut_at_the_text_limit(tmp_path, monkeypatch, limit_first):
    """Whether the limit was in force when the PDF was built (its text remembered) or not."""
    if limit_first:
        monkeypatch.setattr(pdf_io, "MAX_TEXT_CHARS", 100)
    path = write(tmp_path, "n.pdf", pdf_io.build("\n".join(f"line {i}" for i in range(200)), stamp=NOW))
    monkeypatch.setattr(pdf_io, "MAX_TEXT_CHARS", 100)
    text = pdf_io.read_text(path, "n.pdf")
    assert len(text) < 200 and "... [cut at 100 characters: pages 1 to " in text


# -- observations -----------------------------------------------------------------------------

def test_every_observation_is_cut_with_a_marker(ws, registry):
    huge = "s" * (20 * 1024 * 1024)
    result = registry.call(ws, "excel_read_file", {"file_path": "data/scores.xlsx", "sheet": huge})
    assert not result.ok
    head = "Error: data/scores.xlsx: no sheet named '"
    assert result.observation.startswith(head)
    cut_chars = len(head) + len(huge) + len("' (sheets: Scores)") - limits.MAX_OBSERVATION_CHARS
    assert result.observation.endswith(f"{MARKER}{cut_chars:,} more characters]")
    assert len(result.observation) == limits.MAX_OBSERVATION_CHARS + len(f"{MARKER}{cut_chars:,} more characters]")


def test_a_20_mb_subject_does_not_come_back_whole(ws, registry):
    result = registry.call(ws, "email_send_email", {"sender": "alice", "recipient": "bob",
                                                    "subject": "s " * (10 * 1024 * 1024), "content": "x"})
    assert result.observation == ("Error: email_send_email: argument 'subject': 20,971,520 characters, over the "
                                  "998-character limit")


def test_cut_leaves_short_text_alone_and_replaces_surrogates():
    assert cut("short") == "short"
    assert cut("x" * 30, limit=10) == "x" * 10 + f"{MARKER}20 more characters]"
    assert cut("bad \udcff name") == "bad \ufffd name"
