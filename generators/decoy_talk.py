"""The writer's talk of other jobs for later (``generators.decoys``): raised as work for later,
their details said in the task's own sentences (some in two turns), a detail changed now and then,
talk about them without details; unmarked, so that a sentence that states a detail tells no
reader whether it is the task's.

``DecoyTalk`` is the part of ``generators.dialogue_offline.HistoryWriter`` that says them. The
writer holds one and makes it with what it needs: the history's ``rng``, the writer's lines and
checks (:class:`WriterLines`), the names the work is called by, the task's pieces and values, the
words of the task's work names no job may share, the colleagues and the jobs other tasks tell.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Callable, ParamSpec, Protocol, Sequence, TypeVar

from generators.chances import HISTORY
from generators.decoys import (
    MAX_CHANGES,
    Decoy,
    ToldJob,
    changed_value,
    decoy_mention_budget,
    make_decoys,
    make_told_decoys,
)
from generators.history_plan import DAY_CUES, DayPlan
from generators.session_clock import SessionClock
from generators.spoken_time import is_relative, named_moments, read_times, say_value, spoken, value_time
from generators.thread_bank import SENTENCE_CUES, threads
from generators.withheld import changed_detail, detail_to_withhold, withheld_kind

if TYPE_CHECKING:
    import random

    from generators.model import MemoryPiece
    from generators.work_names import WorkNames

TurnSpec = tuple[str, str, dict[str, tuple[str, ...]], str]  # (role, text, marks, thread)

# Other jobs for later talked about like the task (generators.decoys): with four, each sentence
# that states a task detail is said two to three times as often of work that is not the task.
DECOYS = 4


def name_words(text: str) -> set[str]:
    """The words of a work's name (or of a value) that two names may not share: longer than three
    letters, lower case."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def _day_of(when: date | datetime) -> date:
    return when.date() if isinstance(when, datetime) else when


def task_days(said_on: date, values: Sequence[str]) -> set[date]:
    """The days the task's ``values`` name, read on ``said_on`` (none for most tasks)."""
    return {_day_of(t) for t in named_moments(values, said_on)}


def names_task_day(text: str, said_on: date, values: Sequence[str], days: set[date] | None = None) -> bool:
    """Whether ``text``, said on ``said_on``, names a day that one of the task's ``values`` names
    (the marks read days said in words, so no unmarked line may). ``days``: ``task_days(said_on,
    values)``, when the caller keeps it; with none, the text is not read."""
    days = task_days(said_on, values) if days is None else days
    return bool(days) and any(_day_of(found.when) in days for found in read_times(text, said_on))


class LineMaker(Protocol):
    """A fresh line of ``move`` (for ``cue``, else any cue) that holds ``must`` and no other task
    value (``generators.dialogue_offline.HistoryWriter``'s); ``ValueError`` when none is left.
    ``question``: whether it may be a question; ``opener``: whether a reply may open with a nod."""

    def __call__(self, move: str, cue: str, ctx: dict[str, Any], must: str = "", question: bool = True,
                 opener: bool = True) -> str: ...


P = ParamSpec("P")
R = TypeVar("R")


def calls_back(method: Callable[P, R]) -> Callable[P, R]:
    """A bound ``method`` called without holding its object: a part that the history writer holds
    and that calls back into it this way makes no reference cycle with it, so a history's objects
    are freed by reference counting once it is written (not left to the cycle collector). The
    object must outlive the callable, as a writer outlives the parts it holds."""
    func, owner = method.__func__, weakref.ref(method.__self__)  # type: ignore[attr-defined]

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return func(owner(), *args, **kwargs)

    return call


@dataclass(frozen=True)
class WriterLines:
    """What a decoy is said with: the history writer's lines, checks and thread marks
    (``generators.dialogue_offline.HistoryWriter``'s), the same the task's lines use."""

    line: LineMaker
    lead: Callable[[str], str]  # a user line, now and then after a lead-in ("By the way, ...")
    ask: Callable[[str, dict[str, Any]], str]  # the assistant asking for a detail of a cue
    # a sentence said with a value left out (value, its kind, the cue), and the assistant's question for it
    say_withheld: Callable[[str, str, str, str, dict[str, Any]], tuple[str, str]]
    slots: Callable[[str, datetime], dict[str, Any]]  # what a line may name, for a work's name and a moment
    clean: Callable[[str], bool]  # a text holds no task value, no checked answer, no line said elsewhere
    free_on: Callable[[str, datetime], bool]  # a text names no colleague the office shows away that day
    keeps_rule: Callable[[str], bool]  # a cue's two-turn detail has answer lines of its own
    answer_names_work: Callable[[], bool]  # drawn per answer: it names its work, as the task's as often do
    new_thread: Callable[[], str]  # the mark of a new work thread ("w7")


class DecoyTalk:
    """The jobs for later of one history, made on its first day and said in turn."""

    def __init__(self, *, rng: random.Random, lines: WriterLines, names: WorkNames, pieces: Sequence[MemoryPiece],
                 values: Sequence[str], task_words: set[str], colleagues: Sequence[str],
                 told: Sequence[ToldJob] = (), count: int = DECOYS) -> None:
        """No jobs yet (they are made on the first day, ``told`` ones first; ``count`` at most).
        ``pieces``: the task's (none: those of the first day's events); ``values``: the task's, lower
        case; ``task_words``: the words of the task's work names no job may share (a copy is kept,
        and grows by those of the works the first day names); ``colleagues``: first names no person
        a job names may have."""
        self.rng = rng
        self.lines = lines
        self.names = names
        self.pieces = list(pieces)
        self.values = list(values)
        self.task_words = set(task_words)
        self.colleagues = list(colleagues)
        self.jobs: list[Decoy] | None = None
        self.count = count
        self.told = list(told)
        self.threads: dict[str, str] = {}  # a job's name -> its thread mark
        self.turn = 0

    def ok(self, text: str) -> bool:
        """A decoy's name or value: clean, sharing no word with a name of the task's work, and
        not a day that a task value is (said in words, it would name the task's day)."""
        if not self.lines.clean(text) or self.task_words & name_words(text):
            return False
        when = value_time(text)
        return when is None or _day_of(when) not in {_day_of(t) for t in map(value_time, self.values) if t is not None}

    def made_for(self, plan: DayPlan) -> list[Decoy]:
        """The history's decoys, made on its first day from the task's pieces (or, for a writer
        given one day's events, from theirs)."""
        if self.jobs is None:
            pieces = self.pieces or list({e.piece.id: e.piece for e in plan.events
                                          if e.piece is not None and e.thread.startswith("t")}.values())
            self.task_words |= {w for p in pieces for w in name_words(p.about)}
            # nor a word of a sibling work's (generators.sibling_works) the day names
            self.task_words |= {w for e in plan.events if e.piece is not None and not e.thread.startswith("t")
                                for w in name_words(e.about or e.piece.about)}
            count = self.count
            told = make_told_decoys(self.told, self.ok, count)
            told_words = {w for d in told for w in name_words(d.about)}

            def bank_ok(text: str) -> bool:  # a bank job shares no word with a told one
                return self.ok(text) and not told_words & name_words(text)

            self.jobs = told + (make_decoys(
                pieces, threads().jobs, plan.date, self.rng, self._outsiders(), bank_ok,
                count=count - len(told), fields=threads().job_fields,
                sentences=threads().job_details) if len(told) < count else [])
            if told:  # told and bank jobs come up in no telling order
                self.rng.shuffle(self.jobs)
            for decoy in self.jobs:
                self.threads[decoy.about] = self.lines.new_thread()
        return self.jobs

    def _outsiders(self) -> list[str]:
        """People a decoy may name: full names from the bank whose first name no colleague has."""
        firsts = {c.lower() for c in self.colleagues}
        return [p for p in threads().job_people if p.split()[0].lower() not in firsts and self.lines.clean(p)]

    def _decoy_ctx(self, decoy: Decoy, when: datetime, full: bool = False, answer: bool = False) -> dict[str, Any]:
        """A decoy line's slots: every decoy pair opens an exchange of its own, so its work is
        never "that one" but in the answer of a split detail or the assistant's reply (``answer``)."""
        about = self.names.pick(decoy.about, full=full, opening=not answer, answer=answer)
        return self.lines.slots(about, when)

    def _after(self, decoy: Decoy, when: datetime) -> str:
        """The assistant taking in a decoy's detail, its work called by a short name, as the task's
        replies call theirs ("Noted for the survey.")."""
        return self.lines.line("after", "job", self._decoy_ctx(decoy, when, answer=True), question=False)

    def block(self, pairs: int, clock: SessionClock) -> list[TurnSpec]:
        """``pairs`` pairs about the decoys (one at a time, in turn): raised as work for later,
        then its details in the task's own sentences (some in two turns), a detail changed, or
        talk about it without details. A pair that finds no fresh wording is left out."""
        turns: list[TurnSpec] = []
        left = pairs
        idle = 0  # decoys in a row with nothing left to say
        while left > 0 and self.jobs and idle < len(self.jobs):
            decoy = self.jobs[self.turn % len(self.jobs)]
            self.turn += 1
            thread = self.threads[decoy.about]
            try:
                lines = self._decoy_lines(decoy, clock.peek(), left)
            except ValueError:
                lines = []
            if not lines:
                idle += 1
                continue
            idle = 0
            for user, reply in lines:
                turns.append(("user", user, {}, thread))
                clock.tick()
                turns.append(("assistant", reply, {}, thread))
                clock.tick()
            left -= len(lines)
        return turns

    def worded(self, value: str, cue: str, when: datetime) -> str:
        """A decoy's value as the task's are said (a moment in words for the day, a day relative to
        it as often as the plan says the task's, a sheet's headers in words); "" when that is a phrase
        the task says too ("Monday next week") or names a day a task value names (marks read days)."""
        phrase = say_value(value, when.date())
        if phrase and (cue not in DAY_CUES or (is_relative(phrase) and self.rng.random() < HISTORY.relative_day)):
            value = phrase
        value = spoken(value, cue)
        if not self.lines.clean(value):
            return ""
        return "" if names_task_day(value, when.date(), self.values) else value

    def _decoy_lines(self, decoy: Decoy, when: datetime, room: int) -> list[tuple[str, str]]:
        ctx = self._decoy_ctx(decoy, when, full=not decoy.raised)
        if not decoy.raised:
            decoy.raised = True
            return [(self.lines.line("job_raise", "any", ctx),
                     self.lines.line("raise_reply", "job", ctx, question=False))]
        if decoy.said < len(decoy.details) and self.lines.free_on(decoy.details[decoy.said][1], when) \
                and self.rng.random() < HISTORY.decoy_detail:
            piece, value = decoy.details[decoy.said]
            decoy.said += 1
            cue = piece.cue if piece.cue in threads().cues else "note"
            value = self.worded(value, cue, when)
            if value:  # (a phrase the task says too stays unsaid)
                return self._decoy_detail(decoy, ctx, piece.cue, cue, value, when, room)
        if decoy.said and decoy.changes < MAX_CHANGES and self.rng.random() < HISTORY.decoy_change:
            index = self.rng.randrange(decoy.said)
            piece, old = decoy.details[index]
            if piece.cue in SENTENCE_CUES:  # a sentence's detail changes: the new detail is what is said
                changed = changed_detail(old, self.rng) if self.lines.free_on(old, when) else None
                new, told = changed if changed and self.ok(changed[1]) else (None, "")
            else:
                new = None if not self.lines.free_on(old, when) else changed_value(
                    decoy, piece, old, when.date(), self.rng, self._outsiders(), self.ok, threads().job_fields)
                told = new or ""
            if new is not None and self.lines.free_on(new, when):
                cue = piece.cue if piece.cue in threads().cues else "note"
                said = self.worded(told, cue, when)
                if said:  # worded as the task's are; the detail changes only when the change is said
                    decoy.details[index] = (piece, new)
                    decoy.changes += 1
                    kind = withheld_kind(told) if told != new else None
                    if kind and room >= 2 and self.rng.random() < HISTORY.split:  # in two turns, as the task's are
                        try:
                            answer = self.lines.line("answer", self._answer_lines(),
                                                     {**self._decoy_ctx(decoy, when, answer=True), "value": said},
                                                     said)
                            return [(self.lines.line("correct_split", kind, ctx),
                                     self.lines.line("ask_withheld", kind, ctx)),
                                    (answer, self._after(decoy, when))]
                        except ValueError:
                            pass  # no fresh wording: said in one turn
                    text = self.lines.line("correct", cue if told == new else "any", {**ctx, "value": said}, said)
                    return [(text, self._after(decoy, when))]
        if decoy.mentions >= decoy_mention_budget(decoy):
            return []  # a job for later with nothing new comes up no more often than the task's work
        decoy.mentions += 1
        text = self.lines.line("mention", "any", ctx)
        return [(text, self.lines.line("mention_reply", "asked" if text.endswith("?") else "job",
                                        self._decoy_ctx(decoy, when, answer=True), question=False))]

    def _answer_lines(self) -> str:
        """The answer lines a detail given after the assistant asks is drawn from: those that name
        the work as often as the task's answers do (``answer.named``), else any."""
        return "named" if self.lines.answer_names_work() else "any"

    def _decoy_detail(self, decoy: Decoy, ctx: dict[str, Any], ask_cue: str, cue: str, value: str, when: datetime,
                      room: int) -> list[tuple[str, str]]:
        """A decoy's detail said as the task's are: after the assistant's question (the value
        alone, or in full), or in one turn."""
        shape = self.rng.random()
        # A sentence: its detail left out (as the task's are when they can be), or more often than
        # other details in whole after a lead-in (the task's sentences that cannot leave one out).
        sentence = ask_cue in SENTENCE_CUES
        split = HISTORY.split + HISTORY.decoy_sentence_split if sentence else HISTORY.split
        held = detail_to_withhold(value) if sentence and room >= 2 and shape < HISTORY.split / 2 else None
        if held is not None:
            try:
                opener, ask = self.lines.say_withheld(value, held[0], held[1], cue, ctx)
                answer = self.lines.line("answer", self._answer_lines(),
                                         {**self._decoy_ctx(decoy, when, answer=True), "value": held[0]}, held[0])
                return [(opener, ask), (answer, self._after(decoy, when))]
            except ValueError:
                pass  # no fresh wording: said as below
        if room >= 2 and shape < split + HISTORY.decoy_asked:  # the assistant asks first, as in the task's exchanges
            # (no question of the user's: the assistant's question answers nothing)
            opener = self.lines.line("split" if shape < split else "mention", "any", ctx, question=False)
            ask = self.lines.ask(ask_cue, ctx)
            if shape < split:  # the value alone (a sentence as the task's sentences are answered; a rule kept)
                own = "sentence" if sentence else cue if self.lines.keeps_rule(cue) else self._answer_lines()
                text = self.lines.line("answer", own,
                                       {**self._decoy_ctx(decoy, when, answer=True), "value": value}, value)
            else:  # the detail in full
                text = self.lines.line("state", cue, {**ctx, "value": value}, value)
            return [(opener, ask), (text, self._after(decoy, when))]
        text = self.lines.line("state", cue, {**ctx, "value": value}, value)
        return [(self.lines.lead(text), self._after(decoy, when))]
