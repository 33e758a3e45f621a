"""Excel workbooks as OfficeBench sees them: ``(row, col): value`` cells, 1-based."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

import openpyxl
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from office_env.errors import CorruptFileError, OfficeError
from office_env.formats.ooxml import reproducible_zip
from office_env.formats.read_cache import cached_read

EMPTY_CELL = "[Empty Cell]"
_INT_RE = re.compile(r"^-?(0|[1-9]\d*)$")
_FLOAT_RE = re.compile(r"^-?(0|[1-9]\d*)\.\d+$")


def load(path: Path, label: str) -> Workbook:
    try:
        return openpyxl.load_workbook(str(path))
    except Exception as exc:  # zip, XML and KeyError failures all mean "not a workbook"
        raise CorruptFileError(f"{label}: not a readable Excel (.xlsx) file ({type(exc).__name__})") from None


def sheet_of(workbook: Workbook, sheet: str | None, label: str) -> Worksheet:
    if sheet is None:
        return workbook.active
    if sheet not in workbook.sheetnames:
        names = ", ".join(workbook.sheetnames)
        raise OfficeError(f"{label}: no sheet named {sheet!r} (sheets: {names})")
    return workbook[sheet]


def render_value(value: Any) -> str:
    return EMPTY_CELL if value is None else str(value)


def render(sheet: Worksheet) -> str:
    """The OfficeBench cell listing: ``(row, col): value`` tab-separated, one line per row."""
    lines = []
    for row in sheet.iter_rows():
        lines.append("".join(f"({cell.row}, {cell.column}): {render_value(cell.value)}\t" for cell in row))
    return "\n".join(lines) + ("\n" if lines else "")


def cells(sheet: Worksheet) -> dict[tuple[int, int], Any]:
    """Non-empty cells keyed by (row, col)."""
    return {
        (cell.row, cell.column): cell.value
        for row in sheet.iter_rows()
        for cell in row
        if cell.value is not None
    }


@dataclass(frozen=True)
class SheetView:
    """A read-only snapshot of one sheet: its OfficeBench rendering, cells and value rows."""

    title: str
    text: str
    cells: dict[tuple[int, int], Any]
    rows: tuple[tuple[Any, ...], ...]

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
    return cached_read("xlsx", path, lambda: _read_book(path, label))


def _read_book(path: Path, label: str) -> BookView:
    workbook = load(path, label)
    sheets = {
        ws.title: SheetView(ws.title, render(ws), cells(ws), tuple(ws.iter_rows(values_only=True)))
        for ws in workbook.worksheets
    }
    return BookView(tuple(workbook.sheetnames), workbook.active.title, sheets)


def read_text(path: Path, label: str, sheet: str | None = None) -> str:
    return read_book(path, label).sheet(sheet, label).text


def coerce(value: Any) -> Any:
    """Numbers stay numbers; numeric strings become numbers; other text stays text."""
    if isinstance(value, str):
        stripped = value.strip()
        if _INT_RE.match(stripped):
            return int(stripped)
        if _FLOAT_RE.match(stripped):
            return float(stripped)
    return value


def set_value(sheet: Worksheet, row: int, col: int, value: Any) -> None:
    cell = sheet.cell(row=row, column=col)
    value = coerce(value)
    cell.value = value
    if isinstance(value, str) and value.startswith("="):
        cell.data_type = "s"  # text typed by a user or agent is data, never a formula


def new_workbook(sheet_name: str | None = None, stamp: datetime | None = None) -> Workbook:
    workbook = openpyxl.Workbook()
    if sheet_name:
        workbook.active.title = sheet_name
    workbook.properties.creator = "homeragents"
    if stamp is not None:
        workbook.properties.created = stamp
    return workbook


def build(rows: Iterable[Iterable[Any]], sheet_name: str | None = None, stamp: datetime | None = None) -> bytes:
    workbook = new_workbook(sheet_name, stamp)
    sheet = workbook.active
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row, start=1):
            if value is not None:
                set_value(sheet, r, c, value)
    return to_bytes(workbook, stamp)


def to_bytes(workbook: Workbook, stamp: datetime | None = None) -> bytes:
    buffer = io.BytesIO()
    with reproducible_zip(stamp):
        workbook.save(buffer)
    return buffer.getvalue()
