"""The parsed-content cache never serves a stale version of a file."""

from __future__ import annotations

import os
from pathlib import Path

from office_env.formats import docx_io, read_cache, xlsx_io


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
