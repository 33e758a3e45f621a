"""The build's parent keeps its tasks' card figures and index lines in a file, not in memory."""

from __future__ import annotations

import json

from orchestrator import figure_log
from orchestrator.figure_log import FigureLog


def test_figures_come_back_as_given_by_index(tmp_path):
    log = FigureLog(tmp_path)
    log.add(7, json.dumps({"turns": 374, "family": "sheet_total"}), json.dumps({"id": "neo-00007"}))
    log.add(3, "{}", json.dumps({"id": "neo-00003", "note": "café ✓"}, ensure_ascii=False))
    assert log.get(7) == ('{"turns": 374, "family": "sheet_total"}', '{"id": "neo-00007"}')
    assert log.get(3) == ("{}", '{"id": "neo-00003", "note": "café ✓"}')
    assert log.get(5) is None and 5 not in log and 3 in log and len(log) == 2
    log.close()


def test_the_first_figures_of_an_index_stay(tmp_path):
    """A worker's outcome may arrive twice (a retried round): the figures first kept are the task's."""
    log = FigureLog(tmp_path)
    log.add(1, "first", "line-1")
    log.add(1, "second", "line-2")
    log.add(2, "other", "line-3")
    assert log.get(1) == ("first", "line-1") and log.get(2) == ("other", "line-3")
    log.close()


def test_past_its_memory_the_log_goes_to_a_file_in_the_folder_and_still_reads_back(tmp_path, monkeypatch):
    monkeypatch.setattr(figure_log, "IN_MEMORY_BYTES", 1000)
    log = FigureLog(tmp_path)
    cards = {i: json.dumps({"index": i, "pad": "x" * (i % 17)}) for i in range(200)}
    for i in reversed(range(200)):
        log.add(i, cards[i], f'{{"id": "neo-{i:05d}"}}')
    assert log._file._rolled  # type: ignore[attr-defined]  # the spooled file went to disk
    assert all(log.get(i) == (cards[i], f'{{"id": "neo-{i:05d}"}}') for i in range(200))
    log.close()
