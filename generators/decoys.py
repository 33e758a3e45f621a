"""Other jobs talked about the way the task's work is: the history's decoys.

A reader who has seen one labelled build learns the sentences that carry a task's details ("Use
X as the source for Y", "Let's call the file for Y X"). If only the task's work is ever said that
way, the sentence gives the turn away. So each history also carries up to four jobs for later
(``Decoy``): named, raised, given details of the same kinds in the same sentences, sometimes
changed, and talked about without details, like the task's threads; but they are not the task,
the user says they are for later, and no mark points at them. With four, a sentence that states
a task detail is said two to three times as often of a decoy as of the task; some job names share
the words tasks are called by ("the catering invoice"), never the words of their own task.

A decoy's details mirror the task's: for each memory piece whose value has a shape that can be
made up without touching the office (a file of its own, a person outside the office, a count, a
time, a day, a duration, a mail still to come, a field of its own sheet), the decoy gets a detail
with the same cue and a value of that shape. A detail that is a whole sentence of the user's (a
request, a note or a question, as regenerated seed tasks carry) gets a made-up sentence about the
job from the bank's ``job_detail`` lines, said in the same lines as the task's; without such lines
it is left out.

A regenerated split may tell its histories' jobs for later from its other seeds (``ToldJob``: an
other instruction's topic and its clauses, ``make_told_decoys``). Then a seed's own sentences
are also said, as work for later, in histories where they are not the task: a reader who learnt
them from one build finds them in the other seeds' histories of the next.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Callable, Mapping, Protocol, Sequence

from generators.model import MemoryPiece
from generators.value_pools import INVITEES, ROW_LABELS, STATUS_WORDS
from office_env.apps import file_kind_pattern, registry_cache

MAX_DETAILS = 6
_PERSON_RE = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z'-]+)+$")
_CLOCK_RE = re.compile(r"^\d{1,2}:\d{2}$")
_WINDOW_RE = re.compile(r"^\d{1,2}:\d{2}-\d{1,2}:\d{2}$")
_DURATION_RE = re.compile(r"^\d+ minutes$")
_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?$")
_DAY_RE = re.compile(r"^(Monday|Tuesday|Wednesday|Thursday|Friday) [A-Z][a-z]+ \d{1,2}$")
_STAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TITLE_CUES = ("meeting_title", "move_title")
_FILE_CUES = ("source_file", "document", "output_file", "compare_file", "previous_notes")
_TITLE_ENDS = ("check-in", "review", "catch-up", "sync", "planning")
_SUBJECT_CUES = ("mail_subject", "subject")
_SUBJECT_ENDS = ("next steps", "first thoughts", "dates", "question", "plan")
# cues whose value names a column, a group or a point of a sheet or a note: a field of the job's own
_FIELD_CUES = ("column_total", "filter_value", "question", "memo_point", "agenda_point", "budget_line",
               "reply_point", "row_order", "new_starter", "vendor", "supplier")


@registry_cache(maxsize=1)
def _file_re() -> re.Pattern[str]:
    """A file a detail names, with its folder if it is ``data/`` and its kind if it has one of
    ``file_kinds`` ("data/scores.xlsx", "budget_notes")."""
    return re.compile(rf"^(data/)?[\w-]+(?:\.({file_kind_pattern()}))?$")


@dataclass(frozen=True)
class ToldJob:
    """A job for later that another task tells: its name and its sentences, each with its cue
    (``requested``, ``note`` or ``asked``), in the order that task gives them."""

    about: str
    sentences: tuple[tuple[str, str], ...]


class SentenceLine(Protocol):
    """A bank line that renders a sentence from its slots (``generators.thread_bank.ThreadLine``)."""

    def render(self, ctx: Mapping[str, Any]) -> str: ...


@dataclass
class Decoy:
    """One job for later: its name and its details (the task's piece it mirrors, its value),
    said in order (``said`` of them so far)."""

    about: str
    details: list[tuple[MemoryPiece, str]]
    said: int = 0
    raised: bool = False
    mentions: int = 0  # talk about it without a detail so far
    changes: int = 0  # its details changed so far (at most MAX_CHANGES)


# A job for later changes its plan no more often than the task's work does: a thread corrected
# three times over would never be the task.
MAX_CHANGES = 2

# Talk about a decoy without details, per detail it has: a little less than the task's own work
# is talked about without values (``generators.chances.HistoryChances.evidence_share``), so that a job for
# later never comes up more than the task's, nor fills weeks of history with the same few lines.
MENTIONS_PER_DETAIL = 1.2


def decoy_mention_budget(decoy: "Decoy") -> int:
    """How many value-free lines ``decoy`` may have in one history."""
    return max(1, math.ceil(MENTIONS_PER_DETAIL * len(decoy.details)))


def _words(about: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]+", about.lower()) if w not in ("the", "a", "an", "for", "of", "and")]


def _weekday_after(start: date, rng: random.Random, low: int, high: int) -> date:
    day = start + timedelta(days=rng.randint(low, high))
    while day.weekday() > 4:
        day += timedelta(days=1)
    return day


_FOLDER_RE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*)[\w-]+\.(?:docx|xlsx|pdf|txt|csv|pptx|eml|ics)\b")


def make_sentence(line: SentenceLine, about: str, start: date, rng: random.Random, people: Sequence[str],
                  fields: Sequence[str], like: str = "") -> str | None:
    """A made-up request, note or question about the job ``about`` from a ``job_detail`` line: a
    person outside the office, a day and a time written as seed tasks write them, a file named
    after the job (and its sheet, and a file to write, named as seed tasks name theirs), a count
    and a sheet field. None without people or fields to name. ``like``: the task's sentence this
    one stands beside; its file's folder ("data/", or none) is the job's file's too, so that no
    path tells a job from the task (where the task names no file, a folder by chance)."""
    if not people or not fields:
        return None
    who = rng.choice(list(people))
    day = _weekday_after(start, rng, 2, 16)
    month = day.strftime("%B")
    hour = rng.randint(8, 17)
    minute = rng.choice(("00", "30"))
    words = _words(about)[:2]
    stem = "_".join(words) or "notes"
    found = _FOLDER_RE.search(like)
    folder = found.group(1) if found else rng.choice(("", "data/"))
    ctx = {"about": about, "who": who, "first": who.split()[0], "number": str(rng.randint(2, 400)),
           "field": rng.choice(list(fields)),
           "day": rng.choice((f"{day.month}/{day.day}/{day.year}", f"{month} {day.day}",
                              f"{month} {day.day}, {day.year}")),
           "time": rng.choice((f"{hour}:{minute}", f"{(hour - 1) % 12 + 1}:{minute} {'a.m' if hour < 12 else 'p.m'}")),
           "file": f"{folder}{stem}.{rng.choice(('xlsx', 'docx', 'pdf'))}",
           # the job's sheet and a file to write, named as seed tasks name theirs ("salary excel file")
           "sheet": f"the {' '.join(words) or 'notes'} excel file",
           "out": f"{stem}_{rng.choice(('summary', 'list', 'table', 'report', 'new', 'result'))}"}
    return line.render(ctx)


def make_value(piece: MemoryPiece, about: str, start: date, rng: random.Random,
               people: Sequence[str], fields: Sequence[str] = (),
               sentences: Mapping[str, Sequence[SentenceLine]] | None = None, like: str = "") -> str | None:
    """A made-up value with the shape (and cue) of ``piece``'s, for the job ``about``; None when
    that shape cannot be made up safely. ``people``: full names outside the office; ``fields``:
    what a sheet of such a job holds (for the words a task's piece names a column or a group by);
    ``sentences``: ``job_detail`` lines by cue, for a piece whose detail is a whole sentence;
    ``like``: the task's sentences (``make_sentence``; default: the piece's own)."""
    value, cue = piece.value.strip(), piece.cue
    if sentences and sentences.get(cue):
        return make_sentence(rng.choice(list(sentences[cue])), about, start, rng, people, fields,
                             like=like or piece.text)
    ahead = _weekday_after(start, rng, 15, 40)
    if cue in _TITLE_CUES:
        return f"{' '.join(_words(about)[:2]).capitalize()} {rng.choice(_TITLE_ENDS)}"
    soon = _weekday_after(start, rng, 2, 16)  # a day or a moment as near as the task's
    if _STAMP_RE.match(value):  # said in words as the task's are (the writer says it for its day)
        return f"{soon.isoformat()} {rng.randint(9, 16):02d}:{rng.choice(('00', '30'))}"
    if _DAY_RE.match(value):
        return f"{soon.strftime('%A %B')} {soon.day}"
    if _DATE_RE.match(value):  # a day the job must name (a follow-up, a filter): said in words as well
        return soon.isoformat()
    if _WINDOW_RE.match(value):
        first = rng.randint(8, 11)
        return f"{first}:00-{first + rng.randint(5, 8)}:00"
    if _CLOCK_RE.match(value):
        return f"{rng.randint(9, 16)}:{rng.choice(('00', '30'))}"
    if _DURATION_RE.match(value):
        return f"{rng.choice((15, 20, 45, 90))} minutes"
    if _NUMBER_RE.match(value):
        whole = "".join(str(rng.randint(1, 9)) for _ in range(max(1, len(value.split('.')[0]))))
        return whole + (f".{rng.randint(10, 99)}" if "." in value else "")
    if _PERSON_RE.match(value) and people:
        return rng.choice(list(people))
    found = _file_re().match(value)
    if cue in _FILE_CUES and found and ("_" in value or found.group(2)):
        month = ahead.strftime("%b").lower()
        stem = "_".join(_words(about)[:2] + [rng.choice(("notes", "plan", "draft", "list", "summary"))])
        # in the task's folder when the task's file is ("data/scores.xlsx"): a path tells no job from the task
        return f"{found.group(1) or ''}{stem}_{month}{ahead.day}" + (f".{found.group(2)}" if found.group(2) else "")
    if cue in _SUBJECT_CUES:  # a mail still to come about the job
        return f"{' '.join(_words(about)[:2]).capitalize()} {rng.choice(_SUBJECT_ENDS)}"
    if cue == "status":  # a word written into a sheet's rows, from the one pool tasks draw theirs from
        return rng.choice(STATUS_WORDS)
    if cue == "row_label":
        return rng.choice(ROW_LABELS)
    if cue == "invitees":
        return rng.choice(INVITEES)
    if cue == "layout" and len(fields) >= 3:  # the columns of a table, in order
        one, two, three = rng.sample(list(fields), 3)
        return f"{one} then {two}" if " then " in value else f"{one}, {two} and {three}"
    if cue in _FIELD_CUES and fields and re.fullmatch(r"[A-Za-z][\w' -]{0,40}", value):
        return rng.choice(list(fields))
    return None


def make_decoys(pieces: Sequence[MemoryPiece], jobs: Sequence[str], start: date, rng: random.Random,
                people: Sequence[str], ok: Callable[[str], bool], count: int = 2,
                fields: Sequence[str] = (), sentences: Mapping[str, Sequence[SentenceLine]] | None = None
                ) -> list[Decoy]:
    """Up to ``count`` jobs named from ``jobs`` (names that pass ``ok``), each with details
    mirroring ``pieces`` (values that pass ``ok``; at most :data:`MAX_DETAILS`; ``sentences`` as
    for :func:`make_value`)."""
    out: list[Decoy] = []
    like = " ".join(p.text for p in pieces)  # the task's files' folder is the jobs' files' too
    names = [j for j in jobs if ok(j)]
    rng.shuffle(names)
    for about in names[:count]:
        details: list[tuple[MemoryPiece, str]] = []
        for piece in pieces:
            for _ in range(3):  # a value that ``ok`` refuses (a task's day, say) is drawn again
                value = make_value(piece, about, start, rng, people, fields, sentences, like=like)
                if value and ok(value) and piece.cue and all(value != v for _, v in details):
                    details.append((piece, value))
                    break
                if value is None or not piece.cue:
                    break
            if len(details) == MAX_DETAILS:
                break
        rng.shuffle(details)  # said in their own order: a late detail of the task's is not a rare one
        if details:
            out.append(Decoy(about, details))
    return out


# A sentence that leans on the one before it: its verb's object is a pronoun ("email them the
# scores", "put it in ...", "save their emails"), not "this year" nor a word inside quotes.
_REFERS_BACK = re.compile(r"^\W*[A-Za-z'-]+(?:\s+[A-Za-z'-]+)?\s+(?:it|its|them|their|this|these|those)\b"
                          r"(?!\s+(?:year|week|month|quarter|morning|afternoon|evening|time)\b)", re.IGNORECASE)


def told_in_order(sentences: Sequence[str], usable: Callable[[str], bool]) -> list[int]:
    """The positions of ``sentences`` to tell: each that ``usable`` accepts, but one that refers
    back ("email them ...", "put it in ...") only when the sentence before it is told too."""
    kept: list[int] = []
    for i, text in enumerate(sentences):
        if usable(text) and (not _REFERS_BACK.match(text) or (i > 0 and kept[-1:] == [i - 1])):
            kept.append(i)
    return kept


def make_told_decoys(told: Sequence[ToldJob], ok: Callable[[str], bool], count: int) -> list[Decoy]:
    """Up to ``count`` decoys from ``told``, in its order: a job whose name passes ``ok`` and shares
    no word with a name taken before (two jobs are never both "the spreadsheet"), with its
    sentences that pass ``ok`` (in order, as :func:`told_in_order` keeps them; at most
    :data:`MAX_DETAILS`); a job with none is passed over."""
    out: list[Decoy] = []
    taken: set[str] = set()
    for job in told:
        words = set(_words(job.about))
        if len(out) == count or not words or words & taken or not ok(job.about):
            continue
        kept = told_in_order([text for _, text in job.sentences], ok)[:MAX_DETAILS]
        details = [(MemoryPiece(id=f"j{n + 1}", kind="fact" if cue == "note" else "action", text=text,
                                value=text, cue=cue), text)
                   for n, (cue, text) in enumerate(job.sentences[i] for i in kept)]
        if details:
            taken |= words
            out.append(Decoy(job.about, details))
    return out


def changed_value(decoy: Decoy, piece: MemoryPiece, old: str, start: date, rng: random.Random,
                  people: Sequence[str], ok: Callable[[str], bool], fields: Sequence[str] = ()) -> str | None:
    """A new value for a decoy detail said already (its change of plan), or None."""
    for _ in range(4):
        value = make_value(piece, decoy.about, start + timedelta(days=rng.randint(1, 9)), rng, people, fields)
        if value and value != old and ok(value):
            return value
    return None
