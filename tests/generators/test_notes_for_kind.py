"""The task writer's notes cut to the files a kind of task can be built on."""

from __future__ import annotations

import copy

from generators.notes_for_kind import notes_for_kind
from office_env.sample import SAMPLE_NOW as NOW
from surfers import explore


def test_a_kind_is_shown_the_sheets_it_builds_on_and_an_unknown_kind_every_sheet(ws):
    excel = explore("excel", ws)
    scores = excel["files"][0]
    books = {"file": "data/reading_list.xlsx", "sheet": "Books", "headers": ["Title"],
             "rows": [["Dune"], ["Emma"], ["Ulysses"]]}
    older = {**copy.deepcopy(scores), "file": "data/scores_2023.xlsx"}
    notes = {"excel": {**excel, "files": [scores, books, older]}}
    kept = notes_for_kind("sheet_update", notes, user="alice", user_name="Alice Moss", colleagues=[], now=NOW)
    assert [f["file"] for f in kept["excel"]["files"]] == [scores["file"], older["file"]]  # no score column to update
    assert notes["excel"]["files"] == [scores, books, older]  # the office's notes are left as they were
    assert notes_for_kind("no_such_kind", notes, user="alice", user_name="Alice Moss", colleagues=[], now=NOW) == notes
