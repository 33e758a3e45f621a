"""Excel tools: read cells, create, set and delete cells, convert to PDF."""

from __future__ import annotations

import math
from typing import Any

from office_env.errors import OfficeError
from office_env.formats import pdf_io, xlsx_io
from office_env.formats.text import MAX_SHEET_TITLE_CHARS, check_sheet_title, check_xml_text
from office_env.limits import MAX_SHEET_COLS, MAX_SHEET_ROWS
from office_env.tools.common import FILE_PATH, OUTPUT_PATH, check_suffix, existing_file, resolve, target_path, write
from office_env.tools.registry import tool
from office_env.workspace import Workspace

XLSX = (".xlsx",)
SHEET = {"type": "string", "description": "Default: active sheet"}
ROW = {"type": "integer", "minimum": 1, "maximum": MAX_SHEET_ROWS}
COL = {"type": "integer", "minimum": 1, "maximum": MAX_SHEET_COLS}
VALUE = {"type": ["string", "number", "boolean", "null"]}


@tool("excel", "read_file",
      "Read an .xlsx sheet as '(row, col): value' cells, a line per row.",
      writes=False, properties={"file_path": FILE_PATH, "sheet": SHEET}, required=["file_path"])
def read_file(ws: Workspace, file_path: str, sheet: str | None = None) -> str:
    path = existing_file(ws, file_path, "file_path", XLSX)
    book = xlsx_io.read_book(path, file_path)
    target = book.sheet(sheet, file_path)
    header = f"{file_path} (sheet {target.title!r}; sheets: {', '.join(book.sheetnames)}):"
    body = target.text
    return f"{header}\n{body}" if body else f"{header}\n(empty sheet)"


@tool("excel", "create_new_file", "Create an empty .xlsx.", writes=True,
      properties={"file_path": FILE_PATH,
                  "sheet_name": {"type": "string", "minLength": 1, "maxLength": MAX_SHEET_TITLE_CHARS,
                                 "description": "First sheet's name, none of \\*?:/[]"}},
      required=["file_path"], creates=True)
def create_new_file(ws: Workspace, file_path: str, sheet_name: str | None = None) -> str:
    path = resolve(ws, file_path, "file_path")
    check_suffix(file_path, "file_path", XLSX)
    if sheet_name is not None:
        check_sheet_title(sheet_name, "sheet_name")
    if path.exists():
        raise OfficeError(f"{file_path}: already exists; use excel_set_cell to change it")
    write(ws, file_path, xlsx_io.empty(sheet_name, ws.now), "file_path")
    return f"Created {file_path}."


def _check_cell(row: int, col: int, value: Any) -> None:
    """Refuse what a sheet cannot hold; the schema states the same bounds for agents to see."""
    if not 1 <= row <= MAX_SHEET_ROWS:
        raise OfficeError(f"row: {row} is outside 1..{MAX_SHEET_ROWS:,}")
    if not 1 <= col <= MAX_SHEET_COLS:
        raise OfficeError(f"col: {col} is outside 1..{MAX_SHEET_COLS:,}")
    if isinstance(value, float) and not math.isfinite(value):
        raise OfficeError(f"value: {value} is not a number a cell can hold")
    if isinstance(value, int) and value.bit_length() > 1023:
        raise OfficeError("value: a number of more than 300 digits is too large for a cell")
    if isinstance(value, str):
        check_xml_text(value, "value", "an Excel cell")


def _set_one(sheet: Any, row: int, col: int, value: Any) -> Any:
    old = sheet.cell(row=row, column=col).value
    xlsx_io.set_value(sheet, row, col, value)
    return old


def _set_in_row(sheet: Any, row: int, col: int, value: Any) -> Any:
    xlsx_io.drop_empty(sheet)  # what the previous call saved, as this call would open it again
    return _set_one(sheet, row, col, value)


def _edit_cell(ws: Workspace, file_path: str, row: int, col: int, value: Any, sheet: str | None) -> str:
    """The cell's value before the edit, as the tool says it."""
    _check_cell(row, col, value)
    path = existing_file(ws, file_path, "file_path", XLSX)
    before = xlsx_io.snapshot(path, file_path)
    edit = xlsx_io.saved_edit(before, sheet, [(row, col, value)], "one cell", _set_one, ws.now, file_path)
    written = write(ws, file_path, edit.data, "file_path")
    xlsx_io.remember_edit(written, before, edit.added)  # the next read of this version needs no parse
    return edit.olds[0]


def set_cells(ws: Workspace, calls: list[dict[str, Any]]) -> list[str | OfficeError] | None:
    """Consecutive ``set_cell`` calls on one sheet of one file, the workbook saved once: each call's
    observation or error, and the file, as the calls one by one give them. None when that cannot
    be promised (a cell written twice reports the value read back from the file between), and a
    failure no single call owns (the file missing, too large to save) raises: the calls then run
    one by one."""
    if len({(c["row"], c["col"]) for c in calls}) < len(calls):
        return None
    file_path, sheet = calls[0]["file_path"], calls[0].get("sheet")
    path = existing_file(ws, file_path, "file_path", XLSX)
    before = xlsx_io.snapshot(path, file_path)
    refused: dict[int, OfficeError] = {}
    edits: list[tuple[int, int, Any]] = []
    for i, call in enumerate(calls):
        try:
            _check_cell(call["row"], call["col"], call["value"])
        except OfficeError as exc:
            refused[i] = exc
            continue
        edits.append((call["row"], call["col"], call["value"]))
    if not edits:
        xlsx_io.sheet_of(xlsx_io.open_snapshot(before), sheet, file_path)  # a missing sheet still raises
        return list(refused.values())
    edit = xlsx_io.saved_edit(before, sheet, edits, "cells in a row", _set_in_row, ws.now, file_path)
    written = write(ws, file_path, edit.data, "file_path")
    xlsx_io.remember_edit(written, before, edit.added)
    olds = iter(edit.olds)
    return [refused[i] if i in refused else
            f"Set ({c['row']}, {c['col']}) of {file_path} to {xlsx_io.render_value(xlsx_io.coerce(c['value']))} "
            f"(was {next(olds)})." for i, c in enumerate(calls)]


@tool("excel", "set_cell", "Set a cell of an .xlsx sheet; row, col 1-based.", writes=True,
      properties={"file_path": FILE_PATH, "row": ROW, "col": COL, "value": VALUE, "sheet": SHEET},
      required=["file_path", "row", "col", "value"], batch=set_cells, batch_key=("file_path", "sheet"),
      values=("value",), edits=True)
def set_cell(ws: Workspace, file_path: str, row: int, col: int, value: Any, sheet: str | None = None) -> str:
    old = _edit_cell(ws, file_path, row, col, value, sheet)
    return f"Set ({row}, {col}) of {file_path} to {xlsx_io.render_value(xlsx_io.coerce(value))} (was {old})."


@tool("excel", "delete_cell", "Clear a cell of an .xlsx sheet; row, col 1-based.", writes=True,
      properties={"file_path": FILE_PATH, "row": ROW, "col": COL, "sheet": SHEET},
      required=["file_path", "row", "col"], edits=True)
def delete_cell(ws: Workspace, file_path: str, row: int, col: int, sheet: str | None = None) -> str:
    old = _edit_cell(ws, file_path, row, col, None, sheet)
    return f"Cleared ({row}, {col}) of {file_path} (was {old})."


@tool("excel", "convert_to_pdf", "Convert an .xlsx's active sheet to a PDF table.",
      writes=True, properties={"file_path": FILE_PATH, "output_path": OUTPUT_PATH}, required=["file_path"],
      converts_to="pdf")
def convert_to_pdf(ws: Workspace, file_path: str, output_path: str | None = None) -> str:
    path = existing_file(ws, file_path, "file_path", XLSX)
    out = target_path(file_path, output_path, ".pdf")
    resolve(ws, out, "output_path")
    sheet = xlsx_io.read_book(path, file_path).sheet(None, file_path)
    lines = [" | ".join("" if v is None else str(v) for v in row) for row in sheet.rows]
    if not sheet.complete:
        lines.append(f"[only the first {len(sheet.rows):,} rows and {len(sheet.rows[0]):,} columns of a larger sheet]")
    write(ws, out, pdf_io.remembered_build("\n".join(lines), title=file_path, stamp=ws.now), "output_path")
    suffix = "" if sheet.complete else f" (only its first {len(sheet.rows):,} rows and {len(sheet.rows[0]):,} columns)"
    return f"Converted {file_path} to {out}{suffix}."
