"""The parsed-content cache never serves a stale version of a file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from office_env.formats import docx_io, read_cache, xlsx_io
from office_env.sample import SAMPLE_NOW as NOW

pytestmark = pytest.mark.slow


def test_a_rewritten_file_is_parsed_again(ws, registry):
    assert "85" in registry.call(ws, "excel_read_file", {"file_path": "data/scores.xlsx"}).observation
    registry.call(ws, "excel_set_cell", {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": 61})
    text = registry.call(ws, "excel_read_file", {"file_path": "data/scores.xlsx"}).observation
    assert "(2, 2): 61" in text and "(2, 2): 85" not in text


def test_an_in_place_edit_of_the_same_size_is_seen(tmp_path: Path):
    path = tmp_path / "a.docx"
    path.write_bytes(docx_io.build("first version"))
    assert docx_io.read_text(path, "a.docx") == "first version"
    before = path.stat()
    path.write_bytes(docx_io.build("other version"))  # same length, same inode, new mtime
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert docx_io.read_text(path, "a.docx") == "other version"


def test_hard_links_share_one_parse_and_the_cache_is_bounded(tmp_path: Path, monkeypatch):
    read_cache.clear()
    path = tmp_path / "s.xlsx"
    path.write_bytes(xlsx_io.build([["a", 1]]))
    os.link(path, tmp_path / "t.xlsx")
    first = xlsx_io.read_book(path, "s.xlsx")
    assert xlsx_io.read_book(tmp_path / "t.xlsx", "t.xlsx") is first
    monkeypatch.setattr(read_cache, "MAX_ENTRIES", 2)
    for i in range(3):
        other = tmp_path / f"o{i}.xlsx"
        other.write_bytes(xlsx_io.build([["b", i]]))
        xlsx_io.read_book(other, other.name)
    assert len(read_cache._CACHE) == 2
    assert xlsx_io.read_book(path, "s.xlsx") is not first  # evicted, parsed again


def test_a_loaded_workbook_is_the_callers_own_and_saves_as_a_fresh_parse(tmp_path: Path):
    read_cache.clear()
    path = tmp_path / "s.xlsx"
    path.write_bytes(xlsx_io.build([["name", "amount"], ["a", 1], ["b", 2.5]], "Data"))
    first = xlsx_io.load(path, "s.xlsx")
    xlsx_io.set_value(first.active, 2, 2, 99)  # a change to one copy never reaches the next
    second = xlsx_io.load(path, "s.xlsx")
    assert second.active.cell(row=2, column=2).value == 1
    read_cache.clear()
    fresh = xlsx_io.load(path, "s.xlsx")  # parsed by openpyxl, not from the snapshot
    for book in (second, fresh):
        xlsx_io.set_value(book.active, 3, 1, "c")
    assert xlsx_io.to_bytes(second) == xlsx_io.to_bytes(fresh)


def test_an_added_event_is_remembered_as_a_full_parse_reads_it(tmp_path: Path):
    import random
    from datetime import datetime, timedelta

    from office_env.formats import ics_io

    rng = random.Random(5)
    for trial in range(30):
        calendar = ics_io.new_calendar()
        base = datetime(2025, 3, 3, 9)
        for i in range(rng.randint(0, 6)):
            start = base + timedelta(hours=rng.choice([0, 1, 2, 26]))  # ties in start and end on purpose
            ics_io.add_event(calendar, ics_io.CalendarEvent(rng.choice(["Sync", "Review", "sync"]), start,
                                                            start + timedelta(hours=1), "Room 2"), "ana", None)
        path = tmp_path / f"c{trial}.ics"
        path.write_bytes(ics_io.to_bytes(calendar))
        before = ics_io.read_events(path, path.name)
        start = base + timedelta(hours=rng.choice([0, 1, 2]))
        event = ics_io.CalendarEvent(rng.choice(["Sync", "Review", "Plan"]), start, start + timedelta(hours=1),
                                     description="Agenda: budget")
        data, added = ics_io.with_event(path.read_bytes(), event, "ana", None)
        new = tmp_path / f"n{trial}.ics"
        new.write_bytes(data)
        ics_io.remember_added(new, before, added, event)
        remembered = ics_io.read_events(new, new.name)
        read_cache.clear()
        assert remembered == ics_io.read_events(new, new.name)
        assert event in remembered


def test_a_copy_with_the_same_bytes_is_parsed_once_when_the_value_depends_on_the_bytes_alone(tmp_path: Path):
    read_cache.clear()
    calls = []

    def reader(path: Path):
        return lambda: calls.append(path.name) or path.read_bytes().decode()

    first, copy, other = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    first.write_text("same words")
    copy.write_text("same words")  # another inode, the same bytes
    other.write_text("other word")  # the same size, other bytes
    assert read_cache.cached_read("t", first, reader(first), by_content=True) == "same words"
    assert read_cache.cached_read("t", copy, reader(copy), by_content=True) == "same words"
    assert read_cache.cached_read("t", other, reader(other), by_content=True) == "other word"
    assert calls == ["a.txt", "c.txt"]
    # without by_content a copy is read again (its value may name its path), and kinds never mix
    assert read_cache.cached_read("u", copy, reader(copy)) == "same words"
    assert read_cache.cached_read("v", first, reader(first), by_content=True) == "same words"
    assert calls == ["a.txt", "c.txt", "b.txt", "a.txt"]


def test_a_workbook_written_again_with_the_same_bytes_is_not_parsed_again(tmp_path: Path, monkeypatch):
    read_cache.clear()
    parses = []
    real = xlsx_io._parse
    monkeypatch.setattr(xlsx_io, "_parse", lambda path, label: parses.append(label) or real(path, label))
    data = xlsx_io.build([["Region", "Sales"], ["North", 120]])
    xlsx_io._BUILT.clear()  # its parse is no longer known without parsing
    for name in ("one.xlsx", "two.xlsx"):
        (tmp_path / name).write_bytes(data)
        assert xlsx_io.load(tmp_path / name, name).active.cell(row=2, column=2).value == 120
    assert parses == ["one.xlsx"]


def _book(workbook) -> tuple:
    """Everything a reader sees of a workbook: names, active sheet, extents, values and types."""
    return (tuple(workbook.sheetnames), workbook.active.title,
            tuple((ws.title, ws.max_row, ws.max_column, ws._current_row, xlsx_io.render(ws),
                   tuple(sorted((k, type(c.value).__name__, c.value, c.data_type, c.number_format)
                                for k, c in ws._cells.items())))
                  for ws in workbook.worksheets))


def test_a_cell_set_by_the_tool_is_remembered_exactly_as_a_parse_of_the_written_file_reads_it(tmp_path, ws, registry):
    """Sequences of excel_set_cell on a world workbook: after each, the version the cache remembers
    (no parse) opens to what parsing the written file gives, its view (built from the base's kept
    cells) is the parse's, and saving either after one more edit gives the same bytes."""
    import random

    from office_env import Workspace
    from office_env.synthesis import make_world, write_workspace

    world = tmp_path / "world"
    write_workspace(make_world(4), world)
    books = sorted(p.relative_to(world).as_posix() for p in (world / "data").glob("*.xlsx"))
    values = [3, 3.0, 0.1 + 0.2, 1e20, -0.0, 123456789012345678, 2.5, True, False, "hello", " padded ", "=SUM(A1)",
              "12", "12.50", "", "line\nbreak", "1e5", 7.125, -4, "Ünïcode ✓", None]
    rng = random.Random(5)
    remembered = 0
    for trial in range(12):
        read_cache.clear()
        office = Workspace(world, now=NOW).copy_to(tmp_path / f"t{trial}")
        name = rng.choice(books)
        path = office.root / name
        for _ in range(rng.randint(1, 6)):
            sheet = xlsx_io.load(path, name).active
            row = rng.choice([1, 2, 5, sheet.max_row, sheet.max_row + 1, sheet.max_row + 30])
            col = rng.choice([1, 2, sheet.max_column, sheet.max_column + 2])
            value = rng.choice(values)
            tool = "excel_delete_cell" if value is None else "excel_set_cell"
            args = {"file_path": name, "row": row, "col": col} | ({} if value is None else {"value": value})
            assert registry.call(office, tool, args).ok
            known = xlsx_io.snapshot(path, name)
            remembered += isinstance(known, xlsx_io.Edited)
            from_cache = xlsx_io.open_snapshot(known)
            parsed = xlsx_io._parse(path.read_bytes(), name)
            assert _book(from_cache) == _book(parsed), (name, row, col, value)
            assert xlsx_io._read_book(path, name) == xlsx_io._book_view(parsed)  # an Edited's view: no unpickling
            for workbook in (from_cache, parsed):
                xlsx_io.set_value(workbook.active, 2, 1, "next edit")
            assert xlsx_io.to_bytes(from_cache, NOW) == xlsx_io.to_bytes(parsed, NOW)
    assert remembered >= 10  # the tool's usual writes are remembered, not parsed again


def test_a_built_workbook_is_remembered_as_a_parse_of_its_bytes_reads_it(tmp_path: Path, monkeypatch):
    """xlsx_io.build remembers its view by content: a world's workbooks and sheets of every kind of
    value read (from the cache, no parse) exactly as parsing the written file reads them; a value
    the read-back model does not cover ("") is left to the parse."""
    import random

    from office_env.synthesis import make_world, write_workspace

    parses = []
    real = xlsx_io._parse
    monkeypatch.setattr(xlsx_io, "_parse", lambda path, label: parses.append(label) or real(path, label))
    read_cache.clear()
    world = tmp_path / "world"
    write_workspace(make_world(6), world)  # its check reads every workbook
    assert parses == []
    rng = random.Random(3)
    values = [3, 3.0, 0.1 + 0.2, 1e20, -0.0, 123456789012345678, 2.5, True, False, "hello", " padded ", "=SUM(A1)",
              "12", "12.50", "line\nbreak", "1e5", 7.125, -4, "Ünïcode ✓", None]
    sheets = [[[rng.choice(values) for _ in range(rng.randint(1, 6))] for _ in range(rng.randint(0, 40))]
              for _ in range(30)]
    books = [(p.name, p.read_bytes()) for p in sorted((world / "data").glob("*.xlsx"))]
    books += [(f"random{i}.xlsx", xlsx_io.build(rows, f"S{i}", NOW)) for i, rows in enumerate(sheets)]
    assert len(books) > 35
    for name, data in books:
        path = tmp_path / "copies" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)  # another file with those bytes: found by content
        remembered = xlsx_io.read_book(path, name)
        assert parses == [], name
        xlsx_io._BUILT.clear()  # the snapshot below comes from a real parse
        assert remembered == xlsx_io._read_book(path, name), name
        assert parses == [name]  # that was a real parse
        parses.clear()
    data = xlsx_io.build([["Name", ""], ["Bo", 4]])
    (tmp_path / "blank.xlsx").write_bytes(data)
    xlsx_io.read_book(tmp_path / "blank.xlsx", "blank.xlsx")
    assert parses == ["blank.xlsx"]


def test_a_parsed_workbooks_cells_are_kept_as_its_unpickled_snapshot_reads_them(tmp_path: Path):
    """The cells kept from a parse for the views of its edited versions are those unpickling its
    snapshot and dropping the empty cells gives: over sheets with empty texts, styled or commented
    empty cells, several sheets and another active one; a workbook not written here keeps none."""
    import random

    from openpyxl.comments import Comment
    from openpyxl.styles import Font

    rng = random.Random(11)
    values = [None, "", " ", 0, 0.0, -0.0, False, True, 7, 2.5, "x", "=A1", NOW]
    for trial in range(24):
        workbook = xlsx_io.new_workbook("First", NOW)
        if trial % 3 == 0:
            workbook.create_sheet("Second")
        if trial % 4 == 1:
            workbook.properties.creator = "someone else"
        for sheet in workbook.worksheets:
            for _ in range(rng.randint(0, 30)):
                cell = sheet.cell(row=rng.randint(1, 9), column=rng.randint(1, 5))
                cell.value = rng.choice(values)
                if rng.random() < 0.2:
                    cell.font = Font(bold=True)
                if rng.random() < 0.1:
                    cell.comment = Comment("note", "me")
        if len(workbook.worksheets) > 1 and trial % 2:
            workbook.active = 1
        path = tmp_path / f"b{trial}.xlsx"
        path.write_bytes(xlsx_io.to_bytes(workbook, NOW))
        read_cache.clear()
        xlsx_io._BASE_CELLS.clear()
        snap = xlsx_io.snapshot(path, path.name)
        assert isinstance(snap, bytes)
        opened = xlsx_io.open_snapshot(xlsx_io.Edited(snap, ()))  # what an Edited's base opens to
        expected = (tuple(opened.sheetnames), opened.active.title,
                    {ws.title: xlsx_io._values(ws) for ws in opened.worksheets})
        assert xlsx_io._base_cells(snap) == expected
        kept = snap in xlsx_io._BASE_CELLS
        assert kept == (workbook.properties.creator == xlsx_io.CREATOR)
        if kept:
            assert xlsx_io._BASE_CELLS.get(snap, lambda: pytest.fail("kept at the parse")) == expected


def test_an_added_event_of_plain_fields_is_read_without_a_parse_as_a_parse_reads_it(tmp_path):
    """``remember_added`` reads the event ``with_event`` added without a parse when every field is one
    a parse gives back unchanged: over tricky texts (separators, quotes, non-ASCII, long lines) that
    reading is the parse's; an event with a field outside that (a backslash, a line break,
    microseconds, a zone) is parsed."""
    from datetime import datetime, timedelta, timezone

    from office_env.formats import ics_io

    texts = ["", "a, b; c: d", ' "quoted" <x> & y ', "Ünïcode ✓ 中文 😀 " * 12, "x" * 200, "  two  spaces  "]
    start = datetime(2025, 3, 3, 9)
    calendar = ics_io.to_bytes(ics_io.new_calendar())
    known = [ics_io.CalendarEvent(texts[i % 6], start + timedelta(minutes=i), start + timedelta(hours=2),
                                  texts[(i + 1) % 6], texts[(i + 2) % 6]) for i in range(12)]
    unknown = [ics_io.CalendarEvent("back\\slash", start, start), ics_io.CalendarEvent("line\nbreak", start, start),
               ics_io.CalendarEvent("micro", start.replace(microsecond=5), start),
               ics_io.CalendarEvent("zoned", start.replace(tzinfo=timezone.utc), start.replace(tzinfo=timezone.utc))]
    for n, event in enumerate(known + unknown):
        data, added = ics_io.with_event(calendar, event, "ana", start)
        assert (ics_io._known_events([event]) is not None) == (event in known)
        parsed = tuple(ics_io.events_of(ics_io.parse(data, "c.ics"), "c.ics"))
        assert ics_io._events_alone(added) == parsed
        path = tmp_path / f"c{n}.ics"
        path.write_bytes(data)
        ics_io.remember_added(path, [], added, event)
        assert tuple(ics_io.read_events(path, "c.ics")) == parsed  # what remember_added kept
