"""Sibling works: other tasks of the same office, told in a history exactly as its task is.

A reader trained on labelled builds learns whatever sets the task's turns apart. When the only
other jobs in a history are made up for it (bank job names, values shaped after the task's), their
names and values give them away, and so the task's turns too. Sibling works close that: other task
families are drawn on the same office (``orchestrator`` samples them as it samples the task), and
their memory pieces (values from the office, earlier values, near misses, the families' own names
for the work) are planned by ``generators.history_plan`` with the same steps and chances as the
task's and written by the same writer, unmarked. A line's form then says nothing of whose work it
is; only its content (which work, which value) does, and the task's query names the task's work.

``sibling_pieces`` keeps what a history can carry: a sibling shares no word of its work's names with
the task's or another sibling's, and no value of it (final, earlier or near miss) is or holds a
task value, or names a day a task value names.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Iterable, Sequence

from generators.decoy_talk import name_words
from generators.model import MemoryPiece, TaskDraft
from generators.spoken_time import value_time
from generators.thread_bank import SENTENCE_CUES

MAX_SIBLINGS = 4  # with the task's work, a history carries five works told alike
MAX_SIBLING_PIECES = 4  # details of one sibling: about as many as a task has


@dataclass(frozen=True)
class Sibling:
    """One sibling work as a history tells it: the family it came from and its pieces (threads
    ``w1``, ``w2``, ... across the siblings of a history, ids ``s<k>m<i>``)."""

    family: str
    pieces: tuple[MemoryPiece, ...]

    @property
    def abouts(self) -> list[str]:
        return sorted({p.about for p in self.pieces if p.about})


def _day(value: str) -> date | None:
    when = value_time(value)
    if when is None:
        return None
    return when.date() if isinstance(when, datetime) else when


def _holds_any(text: str, taken: Sequence[str]) -> bool:
    low = text.lower()
    return any(t in low for t in taken)


def _clashes(value: str, taken: Sequence[str], days: set[date]) -> bool:
    low = value.lower().strip()
    if not low:
        return True
    if any(low in t or t in low for t in taken):
        return True
    return _day(value) in days if days else False


def sibling_pieces(task: TaskDraft, drafts: Iterable[TaskDraft], *, count: int = MAX_SIBLINGS,
                   avoid: Sequence[str] = ()) -> list[Sibling]:
    """Up to ``count`` siblings from ``drafts`` (other families' tasks on the task's office), in
    order: a draft of the task's family, or one whose work names share a word with the task's or a
    sibling taken before, is passed over; a piece whose value clashes with a task value (``avoid``
    too: values the task's checks need) is left out, and so is an earlier or near-miss value that
    clashes; a draft with no piece left is passed over."""
    taken = [v.lower() for p in task.memory
             for v in (p.value, p.said_as, *p.superseded, *(d.value for d in p.distractors)) if v and v.strip()]
    taken += [str(a).lower() for a in avoid if str(a).strip()]
    days = {d for d in map(_day, taken) if d is not None}
    words = {w for p in task.memory for w in name_words(p.about)}
    out: list[Sibling] = []
    for draft in drafts:
        if len(out) == count:
            break
        if draft.family == task.family or not draft.memory:
            continue
        own = {w for p in draft.memory for w in name_words(p.about)}
        if not own or own & words or any(not p.about for p in draft.memory):
            continue
        number = len(out) + 1
        threads: dict[str, str] = {}
        first = sum(len({p.thread for p in s.pieces}) for s in out) + 1
        kept: list[MemoryPiece] = []
        for piece in draft.memory:
            if len(kept) == MAX_SIBLING_PIECES or _clashes(piece.value, taken, days):
                continue
            # a piece said in its own sentence says all of it: no task value may be in there
            if (not piece.cue or piece.cue in SENTENCE_CUES) and _holds_any(piece.text, taken):
                continue
            thread = threads.setdefault(piece.thread or piece.id, f"w{first + len(threads)}")
            kept.append(replace(
                piece, id=f"s{number}m{len(kept) + 1}", thread=thread,
                superseded=tuple(v for v in piece.superseded if not _clashes(v, taken, days)),
                distractors=tuple(d for d in piece.distractors
                                  if not _clashes(d.value, taken, days) and not _holds_any(d.text, taken))))
        if kept:
            out.append(Sibling(draft.family or "", tuple(kept)))
            words |= own
            taken += [v.lower() for p in kept for v in (p.value, *p.superseded, *(d.value for d in p.distractors))]
    return out
