"""The parse of a workbook ``xlsx_io.build`` wrote, made without parsing it, against a real parse."""

from __future__ import annotations

import hashlib
import pickletools
import random
from datetime import datetime, timezone
from pathlib import Path

from openpyxl.styles.cell_style import StyleArray
from openpyxl.workbook.defined_name import DefinedName

from office_env.formats import read_cache, xlsx_io

NOW = datetime(2024, 3, 15, 10, 30, 12, 5000)
_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"}
_GET_OPS = {"GET", "BINGET", "LONG_BINGET"}


def _canonical(snap: bytes) -> list:
    """A pickle's opcodes with every reference to a memoized text replaced by the text: two pickles
    of equal object graphs that differ only in which equal texts are one object read alike (a parse
    decodes each cell's text anew, a built workbook's texts may be shared)."""
    out: list = []
    texts: dict[int, str] = {}
    objects: dict[int, int] = {}
    memo = 0
    last_text: str | None = None
    for op, arg, _ in pickletools.genops(snap):
        name = op.name
        if name == "FRAME":
            continue
        if name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
            index = memo if name == "MEMOIZE" else arg
            memo += name == "MEMOIZE"
            if last_text is not None:
                texts[index] = last_text
            else:
                objects[index] = len(objects)
                out.append(("memo",))
            last_text = None
            continue
        if name in _GET_OPS:
            out.append(("text", texts[arg]) if arg in texts else ("ref", objects[arg]))
            last_text = texts.get(arg)
            continue
        last_text = arg if name in _STRING_OPS else None
        out.append(("text", arg) if name in _STRING_OPS else (name, arg))
    return out


def _random_rows(rng: random.Random) -> list[list]:
    shared = "Shared text"
    values = [0, 1, -4, 7, 256, 257, 123456789012345678, 10 ** 30, 2.5, 0.1 + 0.2, 1e20, -0.0, 3.0, 548.0, True,
              False, "a", "b", "n", "s", "é", "hello", " padded ", "line\nbreak", "cr\rhere", "tab\there",
              "=SUM(A1)", "=", "12", "12.50", "1e5", "Ünïcode ✓", "Sales", "Sheet", shared, shared, None]
    if rng.random() < 0.1:
        values.append("")  # an empty text: written as an empty cell, not modelled
    return [[rng.choice(values) for _ in range(rng.randint(0, 7))] for _ in range(rng.randint(0, 30))]


def _title(rng: random.Random) -> str | None:
    return rng.choice([None, "Sheet", "sheet", "Template", "Sales", "Budget 2025", "Q1 (draft)", "a", "x" * 31,
                       "R&D, it's-done."])


def _stamp(rng: random.Random) -> datetime | None:
    return rng.choice([None, NOW, datetime(1999, 12, 31, 23, 59, 59, 999999), datetime(2030, 1, 1),
                       datetime(2024, 6, 1, 8, tzinfo=timezone.utc)])


def test_a_built_workbooks_snapshot_is_what_parsing_its_bytes_gives():
    """Over random sheets (every kind of value, shared and one-character texts), titles and stamps:
    the snapshot made without parsing reads as the real parse's opcode for opcode, opens to the
    same workbook, saves after an edit to the same bytes and keeps the same cells for edited
    versions; the template is left as it was."""
    rng = random.Random(7)
    made = 0
    for trial in range(80):
        rows, title, stamp = _random_rows(rng), _title(rng), _stamp(rng)
        data = xlsx_io.build(rows, title, stamp)
        built = xlsx_io._BUILT.find(hashlib.sha256(data).digest())
        if "" in (value for row in rows for value in row):  # an empty text is not modelled: no view, no recipe
            assert built is None
            continue
        assert built is not None, (rows, title, stamp)
        made += 1
        fast = xlsx_io._built_snapshot(built)
        fast_cells = xlsx_io._BASE_CELLS.find(fast)
        parsed = xlsx_io._parse(data, "book.xlsx")
        slow = xlsx_io._snapshot_of(parsed)
        assert _canonical(fast) == _canonical(slow), (rows, title, stamp)
        assert fast_cells == xlsx_io._BASE_CELLS.find(slow) == xlsx_io._cells_of(parsed)
        books = [xlsx_io.open_snapshot(fast), xlsx_io.open_snapshot(slow)]
        assert _book(books[0]) == _book(books[1]) == _book(parsed)
        edit = rng.randint(1, 9), rng.randint(1, 9), rng.choice([5, "new", 2.5])
        for workbook in books:
            xlsx_io.set_value(workbook.active, *edit)
        assert xlsx_io.to_bytes(books[0], stamp) == xlsx_io.to_bytes(books[1], stamp)
        template = xlsx_io._template()
        assert (template.active.title, template.active._cells, template.active._current_row) == ("Sheet", {}, 0)
    assert made > 50


def test_a_workbook_whose_parse_is_not_modelled_is_parsed(tmp_path: Path, monkeypatch):
    """No recipe for a title of other characters, an empty text, more than ``MAX_BUILT_CELLS``
    cells or more than ``MAX_BUILT_CHARS`` characters of text, so their snapshots come from a parse; a modelled one (a ``str`` subclass is stored as a
    ``str``) is read with no parse at all."""
    class Text(str):
        pass

    parses = []
    real = xlsx_io._parse
    monkeypatch.setattr(xlsx_io, "_parse", lambda data, label: parses.append(label) or real(data, label))
    read_cache.clear()
    monkeypatch.setattr(xlsx_io, "MAX_BUILT_CELLS", 4)
    monkeypatch.setattr(xlsx_io, "MAX_BUILT_CHARS", 8)
    cases = {"title.xlsx": ([["x", 1]], "Ü sheet"), "subclass.xlsx": ([[Text("x"), 1]], "S"),
             "empty.xlsx": ([["", 1]], "S"), "large.xlsx": ([["x", 1, 2], [3, 4]], "S"),
             "wordy.xlsx": ([["abcde", "fghij"]], "S"), "plain.xlsx": ([["x", 1]], "S")}
    for name, (rows, title) in cases.items():
        (tmp_path / name).write_bytes(xlsx_io.build(rows, title, NOW))
        snap = xlsx_io.snapshot(tmp_path / name, name)
        xlsx_io._BUILT.clear()
        assert _canonical(snap) == _canonical(xlsx_io._snapshot_of(real((tmp_path / name).read_bytes(), name)))
    assert parses == ["title.xlsx", "empty.xlsx", "large.xlsx", "wordy.xlsx"]


def _book(workbook) -> tuple:
    """Everything a reader sees of a workbook: names, active sheet, extents, values and types."""
    return (tuple(workbook.sheetnames), workbook.active.title, workbook.properties.created,
            workbook.properties.modified,
            tuple((ws.title, ws.max_row, ws.max_column, ws._current_row, xlsx_io.render(ws),
                   tuple(sorted((k, type(c.value).__name__, c.value, c.data_type, c.number_format)
                                for k, c in ws._cells.items())))
                  for ws in workbook.worksheets))


def test_a_cells_general_format_is_told_as_the_format_look_up_tells_it():
    """``_general`` against ``cell.number_format == "General"`` over cells with no style, a style
    with format 0, built-in and custom formats, and a custom format whose text is "General"."""
    workbook = xlsx_io.new_workbook("S", NOW)
    sheet = workbook.active
    custom_general = workbook._number_formats.add("General") + 164
    cases = [(None, None), (None, 0), ("0.00", None), ("d-mmm-yy", None), ("yyyy-mm-dd;@", None), ("General", None),
             (None, custom_general), ("@", None)]
    for index, (number_format, format_id) in enumerate(cases, start=1):
        cell = sheet.cell(row=index, column=1)
        cell._value = index
        if number_format is not None:
            cell.number_format = number_format
        if format_id is not None:
            cell._style = StyleArray() if cell._style is None else cell._style
            cell._style.numFmtId = format_id
        told = xlsx_io._general(cell)
        assert told == (cell.number_format == "General"), (number_format, format_id)


def _stranger_book(rng: random.Random, index: int) -> bytes:
    """A workbook as another program may write it: several sheets (one hidden, another active),
    defined names, a print area and titles, an auto filter."""
    workbook = xlsx_io.new_workbook(f"Main {index}", NOW)
    workbook.properties.creator = "someone else"
    for extra in range(rng.randint(0, 2)):
        sheet = workbook.create_sheet(f"Extra {index}.{extra}")
        sheet["A1"] = extra
        if rng.random() < 0.5:
            sheet.sheet_state = "hidden"
    main = workbook.worksheets[0]
    main["A1"], main["B2"] = "x", 2
    if rng.random() < 0.5:
        main.print_area = "A1:C5"
        main.print_title_rows = "1:1"
    if rng.random() < 0.5:
        main.auto_filter.ref = "A1:B2"
    if rng.random() < 0.5:
        workbook.defined_names[f"total{index}"] = DefinedName(f"total{index}", attr_text=f"'Main {index}'!$B$2")
    if len(workbook.worksheets) > 1 and workbook.worksheets[-1].sheet_state == "visible":
        workbook.active = len(workbook.worksheets) - 1
    return xlsx_io.to_bytes(workbook, NOW)


def test_a_workbooks_own_parts_are_kept_by_what_decides_them(tmp_path: Path):
    """Saves whose workbook parts come from the kept ones write what saving afresh writes: built
    workbooks of many titles, and edits of the snapshots of several other workbooks (sheets, names,
    print settings, filters, a hidden or active sheet), interleaved, each edited at other cells."""
    rng = random.Random(5)
    for trial in range(30):
        title, stamp = _title(rng), _stamp(rng)
        rows = [["Name", "Value"], ["a", rng.randint(1, 99)]]
        workbook = xlsx_io.new_workbook(title, stamp)
        for r, row in enumerate(rows, start=1):
            for c, value in enumerate(row, start=1):
                xlsx_io.set_value(workbook.active, r, c, value)
        assert xlsx_io.build(rows, title, stamp) == xlsx_io._save(workbook, stamp, new_styles=True), title
    snapshots = []
    for index in range(6):
        path = tmp_path / f"book{index}.xlsx"
        path.write_bytes(_stranger_book(rng, index))
        snapshots.append(xlsx_io.snapshot(path, path.name))
    for trial in range(40):
        before = rng.choice(snapshots)
        edits = [(rng.randint(1, 12), rng.randint(1, 6), rng.choice([1, "text", 2.5, NOW]))]
        edit = xlsx_io.saved_edit(before, None, edits, "test", _set, NOW, "book.xlsx")
        workbook = xlsx_io.open_snapshot(before)
        for row, col, value in edits:
            _set(workbook.active, row, col, value)
        assert edit.data == xlsx_io.to_bytes(workbook, NOW), (snapshots.index(before), edits)


def _set(sheet, row: int, col: int, value) -> None:
    xlsx_io.set_value(sheet, row, col, value)
