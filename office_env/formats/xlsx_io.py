"""Excel workbooks as OfficeBench sees them: ``(row, col): value`` cells, 1-based.

A workbook from a stranger can ask openpyxl for billions of cell objects: a merged range or a
hyperlink over ``A1:XFD1048576``, a comment on a whole column, or just millions of ``<c>``
elements. Reading therefore runs under a cell budget (``MAX_BOOK_CELLS``) that openpyxl's sheet
and comment readers spend before they create cells, and the views built from a sheet walk the
cells that exist (``Worksheet._cells``), never the rectangle up to the last one: a sheet with
one cell at XFD1048576 reads as fast as any other, and its listing is cut at ``MAX_RENDER_CELLS``
cells and ``MAX_TEXT_CHARS`` characters, each with a marker saying so.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import pickle
import re
import threading
import zipfile
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Iterator

import openpyxl
import openpyxl.reader.excel
import openpyxl.writer.excel
from openpyxl.cell.cell import Cell
from openpyxl.comments.comment_sheet import CommentSheet
from openpyxl.compat.strings import safe_string
from openpyxl.packaging import manifest
from openpyxl.packaging.manifest import Manifest
from openpyxl.styles.stylesheet import write_stylesheet
from openpyxl.utils.cell import range_boundaries
from openpyxl.workbook._writer import WorkbookWriter
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet._reader import WorksheetReader, _cast_number
from openpyxl.worksheet._writer import WorksheetWriter
from openpyxl.worksheet.worksheet import Worksheet
from openpyxl.xml.functions import tostring

from office_env.errors import CorruptFileError, OfficeError
from office_env.formats.bounded import read_bytes
from office_env.formats.built import Kept, key_part, remembered
from office_env.formats.ooxml import DEFAULT_STAMP, reproducible_zip, stored_copy_of
from office_env.formats.read_cache import cached_read, remember, remember_content
from office_env.limits import MAX_BOOK_CELLS, MAX_RENDER_CELLS, MAX_SHEET_COLS, MAX_TEXT_CHARS

KIND = "Excel (.xlsx)"
CREATOR = "homeragents"  # the author of every workbook this project writes
EMPTY_CELL = "[Empty Cell]"
_INT_RE = re.compile(r"^-?(0|[1-9]\d*)$")
_FLOAT_RE = re.compile(r"^-?(0|[1-9]\d*)\.\d+$")
_MAX_INT_DIGITS = 4000  # below Python's int/str conversion limit (4300 digits)


# -- reading under a cell budget -------------------------------------------------------------

class _OverBudget(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _CellBudget:
    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self, cells: int, what: str) -> None:
        self.left -= cells
        if self.left < 0:
            raise _OverBudget(what)


_BUDGET: ContextVar[_CellBudget | None] = ContextVar("xlsx_cell_budget", default=None)


def _spend(cells: int, what: str) -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.spend(cells, what)


def _cells_in(ref: str, what: str) -> int:
    """Cells in a bounded range such as ``A1:C3``; a whole row or column (``A``, ``5``, ``A:C``)
    is refused, since openpyxl walks it from the sheet's extent, once per range."""
    min_col, min_row, max_col, max_row = range_boundaries(ref)
    if None in (min_col, min_row, max_col, max_row):
        raise ValueError(f"{what} on {ref!r} is not on a cell range")
    return (max_row - min_row + 1) * (max_col - min_col + 1)


class _BudgetedWorksheetReader(WorksheetReader):
    """openpyxl's sheet reader, spending the budget before cells, merged ranges and linked ranges
    become objects."""

    def bind_cells(self) -> None:
        parse = self.parser.parse

        def counted() -> Iterator[Any]:
            for index, row in parse():
                _spend(len(row), "cells")
                yield index, row

        self.parser.parse = counted
        super().bind_cells()

    def bind_merged_cells(self) -> None:
        if self.parser.merged_cells and _BUDGET.get() is not None:
            for merged in self.parser.merged_cells.mergeCell:
                _spend(_cells_in(merged.ref, "a merged range"), "merged cells")
        super().bind_merged_cells()

    def bind_hyperlinks(self) -> None:
        if _BUDGET.get() is not None:
            for link in self.parser.hyperlinks.hyperlink:
                _spend(_cells_in(link.ref, "a hyperlink"), "linked cells")
        super().bind_hyperlinks()


class _BudgetedCommentSheet(CommentSheet):
    """openpyxl's comment part, spending the budget for the cells each comment's range makes."""

    @property
    def comments(self) -> Iterator[Any]:
        for ref, comment in super().comments:
            if _BUDGET.get() is not None:
                _spend(_cells_in(ref, "a comment"), "commented cells")
            yield ref, comment


# The workbook reader looks these two names up in its module; without a budget they behave as before.
openpyxl.reader.excel.WorksheetReader = _BudgetedWorksheetReader
openpyxl.reader.excel.CommentSheet = _BudgetedCommentSheet


def load(path: Path, label: str) -> Workbook:
    """The workbook at ``path``, the caller's own to change. It is parsed once per file version:
    the cache keeps a pickled snapshot of the parsed workbook (made here, in this process, never
    read from a file), and each call unpickles a fresh copy, several times faster than openpyxl
    parsing the package again and saving to the same bytes."""
    return open_snapshot(snapshot(path, label))


def snapshot(path: Path, label: str) -> "bytes | Edited":
    """What :func:`load` opens: a pickled parse, or an :class:`Edited` one."""
    return cached_read("xlsx-workbook", path, lambda: _parsed_snapshot(path, label), weigh=_weight, by_content=True)


def _parsed_snapshot(path: Path, label: str) -> bytes:
    """The pickled parse of the workbook at ``path``: made without parsing for the bytes of a
    workbook :func:`build` wrote lately (:func:`_built_snapshot`)."""
    data = read_bytes(path, label)
    built = _BUILT.find(hashlib.sha256(data).digest())
    if built is not None:
        return _built_snapshot(built)
    return _snapshot_of(_parse(data, label))


def _snapshot_of(workbook: Workbook) -> bytes:
    """The pickled parse ``workbook``. One this project wrote may become the base of :class:`Edited`
    versions, whose views read the base's cells: they are taken now, from the parse in hand, rather
    than from unpickling the snapshot again later (:func:`_base_cells`)."""
    snap = pickle.dumps(workbook, pickle.HIGHEST_PROTOCOL)
    if (workbook.properties.creator == CREATOR and workbook.active is not None  # see read_backs
            and len(snap) <= MAX_SAVED_SNAPSHOT):  # see _read_book
        _BASE_CELLS.get(snap, lambda: _cells_of(workbook))
    return snap


def open_snapshot(snap: "bytes | Edited") -> Workbook:
    if isinstance(snap, Edited):
        workbook = pickle.loads(snap.base)  # noqa: S301 -- our own snapshot, see load()
        for title, row, col, value in snap.edits:
            cell = workbook[title].cell(row=row, column=col)
            cell.value = value
            if isinstance(value, str):
                cell.data_type = "s"  # as the file holds it: an inline string, never a formula
        for sheet in workbook.worksheets:
            drop_empty(sheet)
        return workbook
    return pickle.loads(snap)  # noqa: S301 -- our own snapshot, see load()


def drop_empty(sheet: Worksheet) -> None:
    """Forget the cells a parse of the saved file would not have (no value or an empty text, no
    style or comment): a workbook edited in memory then saves as one read back."""
    for key in [k for k, c in sheet._cells.items() if _dropped(c)]:
        del sheet._cells[key]
    sheet._current_row = sheet.max_row if sheet._cells else 0


def _dropped(cell: Any) -> bool:
    """Whether :func:`drop_empty` forgets ``cell``."""
    return cell._value in (None, "") and not cell.has_style and not cell._comment


@dataclass(frozen=True)
class Edited:
    """A workbook version known without parsing it: an earlier version's pickled parse and the
    cells written since, each as openpyxl reads the written file back (see :func:`read_back`)."""

    base: bytes
    edits: tuple[tuple[str, int, int, Any], ...]


MAX_EDITS = 64  # past this many cells written since a parse, the next version is parsed again
_UNSURE = object()


def _weight(snap: "bytes | Edited") -> int:
    return len(snap.base) + 64 * len(snap.edits) if isinstance(snap, Edited) else len(snap)


def read_back(cell: Any) -> Any:
    """What parsing the saved file gives for ``cell`` (numbers through the text openpyxl writes
    for them), or ``_UNSURE`` for what this does not model: empty values, formats other than
    General (a number in a date-formatted cell reads back as a date), other data types."""
    value = cell._value
    if value is None or value == "" or not _general(cell):
        return _UNSURE
    if cell.data_type == "b" and isinstance(value, bool):
        return value
    if cell.data_type == "s" and isinstance(value, str):
        return value
    if cell.data_type == "n" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return _cast_number(safe_string(value))
    return _UNSURE


def _general(cell: Any) -> bool:
    """Whether the cell's number format is General: format 0 (a new cell's) is, without the look-up
    through the workbook's formats (which also gives a cell with no style a style of its own)."""
    style = cell._style
    return style is None or style.numFmtId == 0 or cell.number_format == "General"


def read_backs(sheet: Worksheet, cells: Iterable[tuple[int, int]]) -> tuple[tuple[str, int, int, Any], ...] | None:
    """``cells`` (row, col) of ``sheet``, just set and saved, as a parse of the saved file reads them
    back: the edits an :class:`Edited` adds. None for a workbook this project did not write
    (openpyxl's round trip of a stranger's may differ), a value :func:`read_back` does not model,
    or more cells than an :class:`Edited` holds."""
    if sheet.parent.properties.creator != CREATOR:
        return None
    values = [(row, col, read_back(sheet.cell(row=row, column=col))) for row, col in cells]
    if len(values) > MAX_EDITS or any(value is _UNSURE for _, _, value in values):
        return None
    return tuple((sheet.title, row, col, value) for row, col, value in values)


def remember_edit(path: Path, before: "bytes | Edited", added: tuple[tuple[str, int, int, Any], ...] | None) -> None:
    """After a workbook opened from ``before`` had cells set and was saved to ``path``: remember the
    new version as ``before`` plus ``added`` (:func:`read_backs`), so reading it back costs no parse.
    Nothing is remembered when ``added`` is None or past ``MAX_EDITS`` cells since a parse (tests
    compare both ways over many edits)."""
    if added is None:
        return
    base, edits = (before.base, before.edits) if isinstance(before, Edited) else (before, ())
    if len(edits) + len(added) > MAX_EDITS:
        return
    remember("xlsx-workbook", path, Edited(base, edits + added), weight=_weight)


_CELL_TAGS = (b"<c ", b"<c>", b"<c/>", b":c ", b":c>", b":c/>")  # a cell element, with or without a prefix


def _count_cells(package: io.BytesIO) -> int:
    """Cell elements in the package's XML parts, counted in the raw bytes (a fraction of a second
    for a million): enough to refuse a workbook at once instead of after parsing it. Counting
    every part errs on the safe side (a sheet may live under any name)."""
    with zipfile.ZipFile(package) as book:
        total = 0
        for info in book.infolist():
            if info.filename.endswith(".xml"):
                data = book.read(info)
                total += sum(data.count(tag) for tag in _CELL_TAGS)
    package.seek(0)
    return total


def _parse(data: bytes, label: str) -> Workbook:
    package = stored_copy_of(data, label, KIND)
    try:
        count = _count_cells(package)
    except Exception as exc:  # zip failures: not a workbook
        raise CorruptFileError(f"{label}: not a readable Excel (.xlsx) file ({type(exc).__name__})") from None
    if count > MAX_BOOK_CELLS:
        raise CorruptFileError(f"{label}: holds {count:,} cells, over the limit of {MAX_BOOK_CELLS:,} cells a "
                               "workbook may hold")
    token = _BUDGET.set(_CellBudget(MAX_BOOK_CELLS))
    try:
        return openpyxl.load_workbook(package)
    except _OverBudget as exc:
        raise CorruptFileError(f"{label}: its {exc.what} pass the limit of {MAX_BOOK_CELLS:,} cells "
                               "a workbook may hold") from None
    except Exception as exc:  # zip, XML and KeyError failures all mean "not a workbook"
        raise CorruptFileError(f"{label}: not a readable Excel (.xlsx) file ({type(exc).__name__})") from None
    finally:
        _BUDGET.reset(token)


def sheet_of(workbook: Workbook, sheet: str | None, label: str) -> Worksheet:
    if sheet is None:
        return workbook.active
    if sheet not in workbook.sheetnames:
        names = ", ".join(workbook.sheetnames)
        raise OfficeError(f"{label}: no sheet named {sheet!r} (sheets: {names})")
    return workbook[sheet]


def render_value(value: Any) -> str:
    return EMPTY_CELL if value is None else str(value)


def _extent(sheet: Worksheet) -> tuple[int, int]:
    """(last row, last column) as openpyxl's ``iter_rows()`` sees them; (0, 0) for an empty sheet."""
    if sheet._current_row == 0:
        return 0, 0
    return sheet.max_row, sheet.max_column


def _values(sheet: Worksheet) -> dict[tuple[int, int], Any]:
    return {key: cell.value for key, cell in sheet._cells.items()}


class _Listing:
    """Lines of text up to ``MAX_TEXT_CHARS`` characters; past it, only a count of what is left."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.chars = 0

    def add(self, line: str) -> bool:
        if self.chars + len(line) + 1 > MAX_TEXT_CHARS:
            return False
        self.lines.append(line)
        self.chars += len(line) + 1
        return True


def render(sheet: Worksheet) -> str:
    """The OfficeBench cell listing: ``(row, col): value`` tab-separated, one line per row.

    A sheet whose rectangle up to its last cell holds more than ``MAX_RENDER_CELLS`` cells lists
    only the cells that hold a value, after a line saying so; every listing stops at
    ``MAX_TEXT_CHARS`` characters with a marker."""
    return _render(_values(sheet), *_extent(sheet))


def _render(values: dict[tuple[int, int], Any], rows: int, cols: int) -> str:
    if rows == 0:
        return ""
    listing = _Listing()
    if rows * cols <= MAX_RENDER_CELLS:
        for r in range(1, rows + 1):
            line = "".join(f"({r}, {c}): {render_value(values.get((r, c)))}\t" for c in range(1, cols + 1))
            if not listing.add(line):
                listing.lines.append(f"... [cut at {MAX_TEXT_CHARS:,} characters: rows {r:,} to {rows:,} not listed]")
                break
        return "\n".join(listing.lines) + "\n"
    filled = sorted(key for key, value in values.items() if value is not None)
    listing.add(f"[sheet of {rows:,} rows x {cols:,} columns, too large to list every cell: "
                f"only the {len(filled):,} cell(s) holding a value are listed]")
    shown = 0
    for r, group in _by_row(filled[:MAX_RENDER_CELLS]):
        line = "".join(f"({r}, {c}): {render_value(values[(r, c)])}\t" for c in group)
        if not listing.add(line):
            break
        shown += len(group)
    if shown < len(filled):
        listing.lines.append(f"... [cut: {len(filled) - shown:,} more cell(s) not listed]")
    return "\n".join(listing.lines) + "\n"


def _by_row(keys: list[tuple[int, int]]) -> Iterator[tuple[int, list[int]]]:
    row: int | None = None
    cols: list[int] = []
    for r, c in keys:
        if r != row and cols:
            assert row is not None  # set with the first column taken
            yield row, cols
            cols = []
        row = r
        cols.append(c)
    if cols:
        assert row is not None
        yield row, cols


def cells(sheet: Worksheet) -> dict[tuple[int, int], Any]:
    """Non-empty cells keyed by (row, col), in row order."""
    if sheet._current_row == 0:
        return {}
    return _filled(_values(sheet))


def _filled(values: dict[tuple[int, int], Any]) -> dict[tuple[int, int], Any]:
    return {key: value for key, value in sorted(values.items()) if value is not None}


def value_rows(sheet: Worksheet) -> tuple[tuple[tuple[Any, ...], ...], bool]:
    """The values of the rectangle up to the last cell, row by row, and whether that is all of it.

    Past ``MAX_RENDER_CELLS`` cells only a top-left part is kept: as many columns as hold a value
    within ``MAX_SHEET_COLS`` and as many rows as then fit, trimmed to the last row with a value."""
    return _value_rows(_values(sheet), *_extent(sheet))


def _value_rows(values: dict[tuple[int, int], Any], rows: int, cols: int) -> tuple[tuple[tuple[Any, ...], ...], bool]:
    if rows == 0:
        return (), True
    complete = rows * cols <= MAX_RENDER_CELLS
    if not complete:
        inside = [key for key, value in values.items() if value is not None and key[1] <= MAX_SHEET_COLS]
        cols = max((c for _, c in inside), default=1)
        fit = max(1, MAX_RENDER_CELLS // cols)
        rows = max((r for r, _ in inside if r <= fit), default=1)
    return tuple(tuple(values.get((r, c)) for c in range(1, cols + 1)) for r in range(1, rows + 1)), complete


@dataclass(frozen=True)
class SheetView:
    """A read-only snapshot of one sheet: its OfficeBench rendering, cells and value rows."""

    title: str
    text: str
    cells: dict[tuple[int, int], Any]
    rows: tuple[tuple[Any, ...], ...]
    complete: bool = True  # False when ``rows`` holds only the top-left part of a huge sheet

    def value(self, row: int, col: int) -> Any:
        return self.cells.get((row, col))


@dataclass(frozen=True)
class BookView:
    sheetnames: tuple[str, ...]
    active: str
    sheets: dict[str, SheetView]

    def sheet(self, name: str | None, label: str) -> SheetView:
        if name is None:
            return self.sheets[self.active]
        if name not in self.sheets:
            raise OfficeError(f"{label}: no sheet named {name!r} (sheets: {', '.join(self.sheetnames)})")
        return self.sheets[name]


def read_book(path: Path, label: str) -> BookView:
    """Every sheet of a workbook, parsed once per file version (see ``read_cache``)."""
    return cached_read("xlsx", path, lambda: _read_book(path, label), by_content=True)


def _read_book(path: Path, label: str) -> BookView:
    snap = snapshot(path, label)
    if isinstance(snap, Edited) and len(snap.base) <= MAX_SAVED_SNAPSHOT:
        return _edited_view(snap)
    return _book_view(open_snapshot(snap))


def _book_view(workbook: Workbook) -> BookView:
    sheets = {ws.title: _view(ws.title, _values(ws), _extent(ws)) for ws in workbook.worksheets}
    return BookView(tuple(workbook.sheetnames), workbook.active.title, sheets)


_Cells = tuple[tuple[str, ...], str, dict[str, dict[tuple[int, int], Any]]]  # sheet names, active, values
MAX_VIEWED_BASES = 8  # snapshots whose cells are kept for the views of their edited versions
_BASE_CELLS: Kept[_Cells] = Kept(MAX_VIEWED_BASES)


def _base_cells(base: bytes) -> _Cells:
    """A snapshot's sheets as :func:`open_snapshot` leaves them for an :class:`Edited` (empty
    cells dropped): the values of each, by (row, col)."""
    return _cells_of(pickle.loads(base))  # noqa: S301 -- our own snapshot, see load()


def _cells_of(workbook: Workbook) -> _Cells:
    """The sheet names, the active sheet and each sheet's values by (row, col), as the workbook
    reads once :func:`drop_empty` has dropped its empty cells (the workbook is left as it is)."""
    values = {ws.title: {key: cell.value for key, cell in ws._cells.items() if not _dropped(cell)}
              for ws in workbook.worksheets}
    return tuple(workbook.sheetnames), workbook.active.title, values


def _edited_view(snap: Edited) -> BookView:
    """The view of an :class:`Edited` version without unpickling its base again: the base's cells
    (kept for its latest edits' versions) with the edits set. Each edit holds a value (never an
    empty one, see :func:`read_back`), so the cells :func:`open_snapshot` drops after the edits are
    the base's own, and a sheet's extent is that of the cells left."""
    names, active, base = _BASE_CELLS.get(snap.base, lambda: _base_cells(snap.base))
    sheets = {title: dict(values) for title, values in base.items()}
    for title, row, col, value in snap.edits:
        sheets[title][(row, col)] = value
    views = {}
    for title, values in sheets.items():
        extent = (max(r for r, _ in values), max(c for _, c in values)) if values else (0, 0)
        views[title] = _view(title, values, extent)
    return BookView(names, active, views)


def _view(title: str, values: dict[tuple[int, int], Any], extent: tuple[int, int]) -> SheetView:
    filled = _filled(values) if extent[0] else {}
    return SheetView(title, _render(values, *extent), filled, *_value_rows(values, *extent))


def _read_back_values(sheet: Worksheet) -> dict[tuple[int, int], Any] | None:
    """Each cell of ``sheet`` as a parse of its saved workbook reads it (:func:`read_back`), in the
    order of ``sheet._cells``; None when a cell is not modelled."""
    values = {}
    for key, cell in sheet._cells.items():
        value = read_back(cell)
        if value is _UNSURE:
            return None
        values[key] = value
    return values


def _known_view(title: str, values: dict[tuple[int, int], Any]) -> BookView:
    """What :func:`read_book` gives for a saved one-sheet workbook whose sheet ``title`` reads back
    as ``values`` (:func:`_read_back_values`), known without parsing it."""
    extent = (max(r for r, _ in values), max(c for _, c in values)) if values else (0, 0)
    return BookView((title,), title, {title: _view(title, values, extent)})


def read_text(path: Path, label: str, sheet: str | None = None) -> str:
    return read_book(path, label).sheet(sheet, label).text


def coerce(value: Any) -> Any:
    """Numbers stay numbers; numeric strings become numbers; other text stays text (so does a
    numeric string too long for an int or too large for a float)."""
    if isinstance(value, str):
        stripped = value.strip()
        if len(stripped) <= _MAX_INT_DIGITS and _INT_RE.match(stripped):
            return int(stripped)
        if len(stripped) <= _MAX_INT_DIGITS and _FLOAT_RE.match(stripped):
            number = float(stripped)
            return number if math.isfinite(number) else value
    return value


def set_value(sheet: Worksheet, row: int, col: int, value: Any) -> None:
    cell = sheet.cell(row=row, column=col)
    value = coerce(value)
    cell.value = value
    if isinstance(value, str) and value.startswith("="):
        cell.data_type = "s"  # text typed by a user or agent is data, never a formula


@lru_cache(maxsize=1)
def _blank() -> bytes:
    return pickle.dumps(openpyxl.Workbook(), pickle.HIGHEST_PROTOCOL)


def new_workbook(sheet_name: str | None = None, stamp: datetime | None = None) -> Workbook:
    """A new one-sheet workbook: a fresh copy of a new workbook pickled once (a third of the time
    of openpyxl making one, and saved to the same bytes, as every :func:`load` shows; the creation
    time it holds is the save's ``stamp`` anyway, see ``ooxml.reproducible_zip``)."""
    workbook = pickle.loads(_blank())  # noqa: S301 -- our own snapshot, made in this process
    if sheet_name:
        workbook.active.title = sheet_name
    workbook.properties.creator = CREATOR
    if stamp is not None:
        workbook.properties.created = stamp
    return workbook


def build(rows: Iterable[Iterable[Any]], sheet_name: str | None = None, stamp: datetime | None = None) -> bytes:
    """A one-sheet workbook of ``rows``. Its view (:func:`read_book`) is remembered by content:
    a world's check and the tools reading it then find it parsed."""
    workbook = new_workbook(sheet_name, stamp)
    sheet = workbook.active
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row, start=1):
            if value is not None:
                set_value(sheet, r, c, value)
    data = _save(workbook, stamp, new_styles=True, book=("new", sheet.title))  # all else is a new workbook's
    values = _read_back_values(sheet)
    if values is not None:
        remember_content("xlsx", data, _known_view(sheet.title, values))
        _remember_built(data, sheet.title, stamp, values)
    _free_cells(workbook)
    return data


def _free_cells(workbook: Workbook) -> None:
    """Drop the cells of a workbook done with: each cell and its sheet refer to one another, so
    the cells (most of a workbook's objects) would wait for the cycle collector, and their numbers
    make it run more often."""
    for sheet in workbook.worksheets:
        sheet._cells.clear()


# -- the parse of a built workbook, known without parsing it ---------------------------------

@dataclass(frozen=True)
class _Built:
    """What a parse of a workbook :func:`build` wrote depends on: its sheet's title, its stamp (the
    times ``docProps/core.xml`` holds) and its cells as they read back, in the order a parse makes
    them (row by row, each row's columns in order)."""

    title: str
    when: datetime
    cells: tuple[tuple[int, int, Any], ...]


MAX_BUILT = 64  # workbooks built lately whose parse is known, by their bytes' SHA-256
MAX_BUILT_CELLS = 10_000  # a larger built workbook is parsed when opened rather than held as cells
MAX_BUILT_CHARS = 256 * 1024  # so is one whose cells hold more text
_BUILT: Kept[_Built] = Kept(MAX_BUILT)
_PLAIN_TITLE = re.compile(r"[A-Za-z0-9 _.,&()'-]{1,31}")
_DATA_TYPES = {str: "s", bool: "b", int: "n", float: "n"}  # a read-back value's type -> a parse's data type


def _remember_built(data: bytes, title: str, stamp: datetime | None,
                    values: dict[tuple[int, int], Any]) -> None:
    """Keep what the parse of ``data`` holds, for :func:`_built_snapshot`: only for a title of plain
    characters, a stamp of a four-digit year (as ``docProps/core.xml`` writes it) and values of
    the types a parse makes (not a subclass of ``str``), whose parse :func:`_built_snapshot` is
    tested to make, and at most ``MAX_BUILT_CELLS`` cells holding at most ``MAX_BUILT_CHARS``
    characters of text (the cache's bound in memory: a cell may hold about 32,000)."""
    when = (stamp or DEFAULT_STAMP).replace(tzinfo=None, microsecond=0)
    if (len(values) > MAX_BUILT_CELLS or not _PLAIN_TITLE.fullmatch(title) or not 1000 <= when.year <= 9999
            or not all(type(value) in _DATA_TYPES for value in values.values())
            or sum(len(value) for value in values.values() if type(value) is str) > MAX_BUILT_CHARS):
        return
    cells = tuple((row, col, values[(row, col)]) for row, col in sorted(values))
    _BUILT.get(hashlib.sha256(data).digest(), lambda: _Built(title, when, cells))


_TEMPLATE_LOCK = threading.Lock()  # the template is filled, pickled and emptied under it
_TITLE = "_WorkbookChild__title"  # where openpyxl keeps a sheet's title (its setter may rename it)


@lru_cache(maxsize=1)
def _template() -> Workbook:
    """A parse of a built workbook with no cells: a parse of any built workbook of :class:`_Built`'s
    kind holds the same but for its title, times and cells. Kept as parsed (openpyxl's row and
    column dimension tables lose their default factories in a pickle round trip)."""
    return _parse(_save(new_workbook(), None, new_styles=True), "template")


def _built_snapshot(built: _Built) -> bytes:
    """The pickled parse of the workbook ``built`` describes, made from :func:`_template` with the
    title, times and cells a parse of it sets, as openpyxl's reader sets them (equal to the parse's
    own snapshot, tests show, but for which equal texts are one object). The template is given back
    empty."""
    with _TEMPLATE_LOCK:
        workbook = _template()
        sheet, properties = workbook.worksheets[0], workbook.properties
        kept = sheet.title, properties.created, properties.modified
        style = workbook._cell_styles[0]
        try:
            setattr(sheet, _TITLE, built.title)  # as the reader names a new sheet: never renamed
            properties.created = datetime(*built.when.timetuple()[:6])
            properties.modified = datetime(*built.when.timetuple()[:6])
            for row, col, value in built.cells:
                cell = Cell(sheet, row=row, column=col, style_array=style)
                cell._value = value
                cell.data_type = _DATA_TYPES[type(value)]
                sheet._cells[(row, col)] = cell
            if sheet._cells:
                sheet._current_row = sheet.max_row
            return _snapshot_of(workbook)
        finally:
            sheet._cells.clear()
            sheet._current_row = 0
            setattr(sheet, _TITLE, kept[0])
            properties.created, properties.modified = kept[1:]


@remembered  # a task's replays make the same new workbook again (office_env.formats.built)
def empty(sheet_name: str | None = None, stamp: datetime | None = None) -> bytes:
    """A new workbook with one empty sheet: the same bytes every time for the same name and stamp."""
    return build([], sheet_name, stamp)


class _SheetInMemory(WorksheetWriter):
    """openpyxl's worksheet writer with the sheet's XML in a buffer: its own writer streams each
    sheet into a temporary file on disk, reads it back into the package and removes it (three
    file-system calls and a disk file per sheet per save; the same bytes either way)."""

    def __init__(self, ws: Worksheet, out: Any = None) -> None:
        super().__init__(ws, io.BytesIO() if out is None else out)

    def cleanup(self) -> None:
        if not isinstance(self.out, io.BytesIO):
            super().cleanup()


MAX_SAVED = 64  # edits of workbooks kept (office_env.tools.excel: a task's replays edit alike)
MAX_SAVED_SNAPSHOT = 1024 * 1024  # an edit of a larger workbook is made every time, not kept


@dataclass(frozen=True)
class SavedEdit:
    """What an edit of a workbook gives: the saved bytes, each edited cell's value before its edit
    as a tool says it (:func:`render_value`), and the cells as the saved file reads them back
    (:func:`read_backs`)."""

    data: bytes
    olds: tuple[str, ...]
    added: tuple[tuple[str, int, int, Any], ...] | None


_SAVED: Kept[SavedEdit] = Kept(MAX_SAVED)
Setter = Callable[[Worksheet, int, int, Any], Any]  # sets one cell, returns the value it held


def edit_key(before: "bytes | Edited", sheet: str | None, edits: Iterable[tuple[int, int, Any]],
             how: str) -> tuple | None:
    """What decides the outcome of an edit of the workbook opened from the snapshot ``before``
    (:func:`snapshot`) whose ``sheet`` had ``edits`` (row, col, value) set, in order, by ``how`` (the
    editing code's name: each opens and sets cells its own way); None for a snapshot too large to
    keep. Cell values Python holds equal are written apart (``1``, ``1.0``, ``True``; ``0.0``,
    ``-0.0``), and so are apart in it (``office_env.formats.built.key_part``)."""
    if isinstance(before, Edited):
        if len(before.base) > MAX_SAVED_SNAPSHOT:
            return None
        origin: tuple = (before.base, tuple((t, r, c, key_part(v)) for t, r, c, v in before.edits))
    else:
        if len(before) > MAX_SAVED_SNAPSHOT:
            return None
        origin = (before,)
    return (how, origin, sheet, tuple((r, c, key_part(v)) for r, c, v in edits))


def saved_edit(before: "bytes | Edited", sheet: str | None, edits: list[tuple[int, int, Any]], how: str,
               setter: Setter, stamp: datetime | None, label: str) -> SavedEdit:
    """The workbook opened from ``before`` with ``edits`` set on ``sheet`` by ``setter`` (the code
    named ``how``), saved with ``stamp``; kept for the next edit alike (:func:`edit_key`), so the
    gates' replays of a task, which repeat the oracle's edits, neither open nor save it again.
    ``setter`` changes cells only (their values and styles): the workbook's own parts are then
    those of every save of the snapshot (:class:`_KeptBookParts`)."""
    key = edit_key(before, sheet, edits, how)
    make = lambda: _edit(before, sheet, edits, setter, stamp, label)  # noqa: E731 -- made on a miss only
    return make() if key is None else _SAVED.get((key, key_part(stamp)), make)


def _edit(before: "bytes | Edited", sheet: str | None, edits: list[tuple[int, int, Any]], setter: Setter,
          stamp: datetime | None, label: str) -> SavedEdit:
    workbook = open_snapshot(before)
    target = sheet_of(workbook, sheet, label)
    olds = tuple(render_value(setter(target, row, col, value)) for row, col, value in edits)
    base = before.base if isinstance(before, Edited) else before
    book = ("snapshot", base) if len(base) <= MAX_SAVED_SNAPSHOT else None  # a larger one is not held as a key
    data = _save(workbook, stamp, new_styles=False, book=book)  # cells alone changed: see saved_edit
    edit = SavedEdit(data, olds, read_backs(target, [(row, col) for row, col, _ in edits]))
    _free_cells(workbook)
    return edit


def to_bytes(workbook: Workbook, stamp: datetime | None = None) -> bytes:
    return _save(workbook, stamp, new_styles=False)


MAX_STYLESHEETS = 16
_STYLESHEETS: Kept[Any] = Kept(MAX_STYLESHEETS)


def _kept_stylesheet(workbook: Workbook) -> Any:
    """openpyxl's styles part of a workbook whose style tables are a new workbook's but for the
    cell styles and number formats its cells' values added (a date's format): those two decide it,
    so it is made once per pair, not on every save (a fifth of saving a small workbook). The part is
    only serialised, never changed, by the save that takes it."""
    key = (tuple(workbook._number_formats), tuple(tuple(style) for style in workbook._cell_styles))
    return _STYLESHEETS.get(key, lambda: write_stylesheet(workbook))


MAX_STYLE_KEY = 64 * 1024  # style tables that pickle larger than this make their part every time
_STYLESHEETS_BY_TABLES: Kept[Any] = Kept(MAX_STYLESHEETS)


def _style_tables(workbook: Workbook) -> bytes:
    """Everything openpyxl's ``write_stylesheet`` reads from a workbook, pickled: tables that pickle
    alike hold the same values of the same types (``1`` and ``1.0`` pickle apart), so they make the
    same part. A named style is taken by the parts of it the styles part writes (the style may be
    bound to its workbook, which is not pickled with it)."""
    named = [(style.name, style.builtinId, style.hidden, tuple(style._style), style.alignment, style.protection)
             for style in workbook._named_styles]
    tables = (list(workbook._fonts), list(workbook._fills), list(workbook._borders),
              list(workbook._differential_styles.styles), workbook._colors, list(workbook._number_formats),
              [tuple(style) for style in workbook._cell_styles], list(workbook._alignments),
              list(workbook._protections), named, workbook._table_styles)
    return pickle.dumps(tables, pickle.HIGHEST_PROTOCOL)


def _stylesheet_by_tables(workbook: Workbook) -> Any:
    """openpyxl's styles part of any workbook, made once per style tables (:func:`_style_tables`):
    a task's edits of one workbook save the same tables again. The part is only serialised, never
    changed, by the save that takes it."""
    try:
        key = _style_tables(workbook)
    except (pickle.PicklingError, TypeError, AttributeError):  # a table pickle cannot take: made anew
        return write_stylesheet(workbook)
    if len(key) > MAX_STYLE_KEY:
        return write_stylesheet(workbook)
    return _STYLESHEETS_BY_TABLES.get(key, lambda: write_stylesheet(workbook))


MAX_MANIFESTS = 16
_MANIFESTS: Kept[bytes] = Kept(MAX_MANIFESTS)


_MANIFEST_WRITE = Manifest._write  # openpyxl's own


def _kept_manifest_write(self: Manifest, archive: zipfile.ZipFile, workbook: Workbook) -> None:
    """openpyxl's ``Manifest._write``, its ``[Content_Types].xml`` made once per list of parts: its
    entries are the parts registered with it and the content type of each part's extension (in
    openpyxl's own table), so a save of a workbook with the same parts writes the same bytes. A
    workbook keeping macros reads more and is made anew."""
    if workbook.vba_archive:
        _MANIFEST_WRITE(self, archive, workbook)
        return
    self.append(workbook)
    names = tuple(archive.namelist())
    exts = {os.path.splitext(name)[-1] for name in names} | {os.path.splitext(o.PartName)[-1] for o in self.Override}
    key = (tuple((d.Extension, d.ContentType) for d in self.Default),
           tuple((o.PartName, o.ContentType) for o in self.Override), names,
           tuple((ext, manifest.mimetypes.types_map[True].get(ext)) for ext in sorted(exts)))

    def make() -> bytes:
        self._register_mimetypes(filenames=names)
        return tostring(self.to_tree())

    archive.writestr(self.path, _MANIFESTS.get(key, make))


MAX_BOOK_PARTS = 64
_BOOK_PARTS: Kept[tuple[bytes, bytes, bytes]] = Kept(MAX_BOOK_PARTS)


class _KeptBookParts(WorkbookWriter):
    """openpyxl's writer of a workbook's own parts (the package's relationships, ``xl/workbook.xml``
    and its relationships), each made once per ``book`` key: a key names what decides them (a new
    workbook's sheet title, the snapshot an edited workbook was opened from), so a save under the
    same key writes the same three. They are made together, in the order a save asks for them."""

    def __init__(self, wb: Workbook, book: Hashable) -> None:
        super().__init__(wb)
        self._book = book

    def _parts(self) -> tuple[bytes, bytes, bytes]:
        return _BOOK_PARTS.get(self._book, lambda: (super(_KeptBookParts, self).write_root_rels(),
                                                    super(_KeptBookParts, self).write(),
                                                    super(_KeptBookParts, self).write_rels()))

    def write_root_rels(self) -> bytes:
        return self._parts()[0]

    def write(self) -> bytes:
        return self._parts()[1]

    def write_rels(self) -> bytes:
        return self._parts()[2]


def _save(workbook: Workbook, stamp: datetime | None, *, new_styles: bool, book: Hashable | None = None) -> bytes:
    """The workbook's bytes; ``new_styles``: its style tables are a new workbook's but for cell
    styles and number formats (as :func:`build` makes it), so its styles part may be kept by those
    two alone; any other's is kept by its full style tables. ``book``: what decides the workbook's
    own parts (:class:`_KeptBookParts`), or None to make them anew."""
    buffer = io.BytesIO()
    with reproducible_zip(stamp):  # holds the lock that serialises saves, so the swaps below are this save's
        openpyxl.writer.excel.WorksheetWriter = _SheetInMemory  # swapped back below
        openpyxl.writer.excel.write_stylesheet = _kept_stylesheet if new_styles else _stylesheet_by_tables
        if book is not None:
            openpyxl.writer.excel.WorkbookWriter = partial(_KeptBookParts, book=book)  # swapped back below
        Manifest._write = _kept_manifest_write  # swapped back below
        try:
            workbook.save(buffer)
        finally:
            openpyxl.writer.excel.WorksheetWriter = WorksheetWriter  # openpyxl's own
            openpyxl.writer.excel.write_stylesheet = write_stylesheet  # openpyxl's own
            openpyxl.writer.excel.WorkbookWriter = WorkbookWriter  # openpyxl's own
            Manifest._write = _MANIFEST_WRITE  # openpyxl's own
    return buffer.getvalue()
