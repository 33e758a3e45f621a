"""Memory probes: multiple-choice questions about what a task's history established.

Built by rules from the task's memory pieces, so every answer is computed, never written:

- ``final`` (a value said once and kept): what was settled for the thing;
- ``current`` (a value that was corrected): which of the earlier and the final value holds now;
- ``corrected`` (the same pieces): what the value was before the correction;
- ``near_miss`` (a value with a look-alike said nearby): what was settled, the look-alike offered;
- ``relative_time`` (a day or time): whether the thing falls before, on or after a given day.

Wrong options are plausible by construction: the piece's own earlier and near-miss values first,
then the other values of the same task. About half of the value questions are unanswerable as
offered (the right value is left out, and "none of these" is right), so guessing the familiar
option does not pay. Each question is asked closed-book (no history: near chance if the task does
not leak) and with the history; accuracy is reported per dynamic.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from typing import Any

from backends.task_record import Memory, TaskRecord
from office_env.seeding import rng as seeded

NONE_OF_THESE = "None of these: the history settles on something else"
LETTERS = "ABCDEF"
MAX_OPTIONS = 5
DYNAMICS = ("final", "current", "corrected", "near_miss", "relative_time")


@dataclass(frozen=True)
class Probe:
    task: str
    piece: str
    dynamic: str
    question: str
    options: tuple[str, ...]
    answer: str  # the letter of the right option
    answerable: bool  # the right value is among the options (else "none of these" is right)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "options": list(self.options)}


def _rng(*parts: str) -> random.Random:
    return seeded("probes", *parts)


def _words(cue: str | None) -> str:
    return str(cue or "detail").replace("_", " ")


def _values(piece: Memory) -> tuple[str, list[str], list[str]]:
    final = piece.value
    earlier = [v for v in piece.superseded or [] if v != final]
    near = [d.value for d in piece.distractors or [] if d.value != final]
    return final, earlier, near


def _choice(record: TaskRecord, piece: Memory, dynamic: str, question: str, right: str,
            wrong: list[str], pool: list[str], *, may_hide: bool) -> Probe:
    rng = _rng(record.id, piece.id, dynamic)
    own = [v for v in dict.fromkeys(wrong) if v != right]
    rest = [v for v in dict.fromkeys(pool) if v != right and v not in own]
    rng.shuffle(rest)
    others = own + rest  # the piece's own earlier and near-miss values first: the plausible ones
    hide = may_hide and rng.random() < 0.5 and len(others) >= 2
    chosen = ([] if hide else [right]) + others[: MAX_OPTIONS - 2 + (1 if hide else 0)] + [NONE_OF_THESE]
    rng.shuffle(chosen)  # "none of these" too: no letter is right more often than chance
    options = tuple(chosen)
    answer = LETTERS[options.index(NONE_OF_THESE if hide else right)]
    return Probe(record.id, piece.id, dynamic, question, options, answer, not hide)


def _when(value: str, now: date) -> date | None:
    for fmt in ("%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            pass
    parts = value.split()
    if len(parts) != 3:
        return None
    try:  # "Thursday February 29": the month and day, with no year (so Feb 29 cannot go through strptime)
        month = datetime.strptime(parts[1], "%B").month
        day_of_month = int(parts[2])
    except ValueError:
        return None
    best = None
    for year in (now.year - 1, now.year, now.year + 1):
        try:
            candidate = date(year, month, day_of_month)
        except ValueError:
            continue
        if candidate.strftime("%A").lower() != parts[0].lower():
            continue
        if best is None or abs((candidate - now).days) < abs((best - now).days):
            best = candidate
    return best


def cue_pool(records: list[TaskRecord]) -> dict[str, list[str]]:
    """Every value said for each kind of detail (cue) across a dataset, in first-seen order: the
    plausible wrong options for a piece with no earlier or near-miss value of its own."""
    pool: dict[str, dict[str, None]] = {}
    for record in records:
        for piece in record.memory:
            final, earlier, near = _values(piece)
            pool.setdefault(str(piece.cue), {}).update(dict.fromkeys([final, *earlier, *near]))
    return {cue: list(values) for cue, values in pool.items()}


def probes_for(record: TaskRecord, pool_by_cue: dict[str, list[str]] | None = None) -> list[Probe]:
    """Every probe of one task record, in memory order. Wrong options come from the piece itself,
    then from the same kind of detail elsewhere (``pool_by_cue``), then from the task's other values."""
    memory = record.memory
    task_pool: list[str] = []
    for piece in memory:
        final, earlier, near = _values(piece)
        task_pool += [final, *earlier, *near]
    now = datetime.strptime(record.now.date, "%Y-%m-%d").date()
    subjects: dict[tuple[str, str], int] = {}
    for piece in memory:
        key = (str(piece.cue), str(piece.about))
        subjects[key] = subjects.get(key, 0) + 1
    out: list[Probe] = []
    for piece in memory:
        if subjects[(str(piece.cue), str(piece.about))] > 1:
            continue  # several values of one kind for one thing: "which one was settled" has no single answer
        final, earlier, near = _values(piece)
        thing, cue = piece.about or "the task", _words(piece.cue)
        same_kind = [v for v in (pool_by_cue or {}).get(str(piece.cue), []) if v != final]
        pool = same_kind if len(same_kind) >= 3 else same_kind + task_pool
        if earlier:
            out.append(_choice(record, piece, "current", f"Which {cue} holds now for {thing}?", final, earlier, [],
                               may_hide=False))
            out.append(_choice(record, piece, "corrected", f"Before it was changed, what was the {cue} for {thing}?",
                               earlier[-1], [final, *earlier[:-1], *near], pool, may_hide=True))
        if near:
            out.append(_choice(record, piece, "near_miss", f"Which {cue} was settled for {thing}?", final,
                               [*near, *earlier], pool, may_hide=True))
        if not earlier and not near:
            out.append(_choice(record, piece, "final", f"Which {cue} was settled for {thing}?", final, [], pool,
                               may_hide=True))
        when = _when(final, now)
        if when is not None:
            rng = _rng(record.id, piece.id, "relative_time")
            reference = when + timedelta(days=rng.choice([-2, -1, 0, 1, 2]))
            options = ("before that day", "on that day", "after that day")
            right = options[0] if when < reference else options[1] if when == reference else options[2]
            question = f"Is {thing} before, on or after {reference:%A %Y-%m-%d}?"
            out.append(Probe(record.id, piece.id, "relative_time", question, options,
                             LETTERS[options.index(right)], True))
    return out


def option_text(probe: Probe, letter: str) -> str:
    index = LETTERS.find(letter)
    return probe.options[index] if 0 <= index < len(probe.options) else ""
