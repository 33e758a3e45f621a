"""The task page's history, cut into pages of bounded size.

A stranger's task.json may hold 16 MiB of turns; rendered whole, with marks and escaping, that is
a page of tens of megabytes a browser struggles with. The history is split, in order, into pages
of at most ``PAGE_TURNS`` turns and ``PAGE_TEXT_CHARS`` characters of text (a build's Challenge
history, about 550,000 characters, fits on one), and every other field of the record together
may hold at most ``OTHER_TEXT_CHARS`` characters: the page never renders more than a bounded
amount, whatever the record."""

from __future__ import annotations

from typing import Any

from backends.task_record import TaskRecord, Turn
from orchestrator.show import MARKS

PAGE_TURNS = 5_000
PAGE_TEXT_CHARS = 1_500_000
OTHER_TEXT_CHARS = 1_000_000


def page_of_each_turn(record: TaskRecord) -> list[list[int]]:
    """For each day, the page (from 0) each of its turns is shown on."""
    pages, page, turns, chars = [], 0, 0, 0
    for session in record.dialogue:
        day = []
        for turn in session.turns:
            size = len(turn.text) + 200  # the markup around a turn
            if turns and (turns + 1 > PAGE_TURNS or chars + size > PAGE_TEXT_CHARS):
                page, turns, chars = page + 1, 0, 0
            turns, chars = turns + 1, chars + size
            day.append(page)
        pages.append(day)
    return pages


Days = list[dict[str, Any]]
Marked = dict[str, list[dict[str, Any]]]


def history_page(record: TaskRecord, page: int, only_marked: bool = False) -> tuple[Days, Marked, int]:
    """The days with their turns on ``page`` (marks, anchors, their number in the day and their
    time), for each memory id every turn that marks it (with the page it is on, for links across
    pages), and how many pages there are. ``only_marked``: the marked turns only, each with the
    turn before it (the question a marked answer replies to)."""
    pages = page_of_each_turn(record)
    days: Days = []
    marked: Marked = {}
    for d, session in enumerate(record.dialogue):
        turns = []
        for t, turn in enumerate(session.turns):
            anchor = f"d{d}-t{t}"
            marks = {mark: list(ids) for mark, ids in _marks(turn).items() if ids}
            for mark, ids in marks.items():
                for mid in ids:
                    marked.setdefault(mid, []).append({"anchor": anchor, "mark": mark, "day": session.day,
                                                       "page": pages[d][t]})
            shown = not only_marked or marks or any(turn_marked(n) for n in session.turns[t + 1:t + 2])
            if pages[d][t] == page and shown:
                turns.append({"anchor": anchor, "role": turn.role, "text": turn.text,
                              "marks": marks, "field": f"turn:{d}:{t}", "index": t,
                              "time": turn.ts[11:16]})
        if turns:
            days.append({"index": d, "day": session.day, "date": session.date, "turns": turns})
    count = 1 + max((day[-1] for day in pages if day), default=0)
    return days, marked, count


def _marks(turn: Turn) -> dict[str, list[str] | None]:
    """The turn's marks by name (``MARKS``), None where it has none."""
    return {mark: getattr(turn, mark) for mark in MARKS}


def turn_marked(turn: Turn) -> bool:
    return any(_marks(turn).values())


def other_text_chars(record: dict[str, Any]) -> int:
    """Characters of text in the record outside its history (what the page shows beside it)."""
    total, stack = 0, [value for key, value in record.items() if key != "dialogue"]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            total += len(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
            total += sum(len(key) for key in node if isinstance(key, str))
        elif isinstance(node, list):
            stack.extend(node)
    return total
