"""The writer's talk of other jobs for later (``generators.decoys``): raised as work for later,
their details said in the task's own sentences (some in two turns), a detail changed now and then,
talk about them without details; unmarked, so that a sentence that states a detail tells no
reader whether it is the task's.

``DecoyTalk`` is the part of ``generators.dialogue_offline.HistoryWriter`` that says them: it
uses the writer's lines and checks (``_line``, ``_lead``, ``_ask``, ``_say_withheld``, ``_slots``,
``clean``), its names and state (``names``, ``values``, ``task_words``, ``pieces``, ``colleagues``,
``absences``, ``work_threads``) and its ``rng``.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Sequence

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
from generators.spoken_time import is_relative, read_times, say_value, spoken, value_time
from generators.thread_bank import SENTENCE_CUES, threads
from generators.withheld import changed_detail, detail_to_withhold, withheld_kind

if TYPE_CHECKING:
    import random

    from generators.model import MemoryPiece
    from generators.thread_bank import Deck, ThreadLine
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


class DecoyTalk:
    """The jobs for later of one history, made on its first day and said in turn."""

    # what the writer it is part of holds (bare annotations: no class attributes)
    rng: random.Random
    decks: dict[tuple[str, str], Deck[ThreadLine]]
    pieces: list[MemoryPiece]
    values: list[str]
    task_words: set[str]
    names: WorkNames
    colleagues: list[str]
    absences: list[tuple[str, date, date]]
    work_threads: int

    if TYPE_CHECKING:  # the writer's lines and checks (generators.dialogue_offline.HistoryWriter)
        def clean(self, text: str) -> bool: ...

        def _slots(self, about: str, when: datetime) -> dict[str, Any]: ...

        def _line(self, move: str, cue: str, ctx: dict[str, Any], must: str = "", question: bool = True,
                  opener: bool = True) -> str: ...

        def _say_withheld(self, sentence: str, value: str, kind: str, cue: str,
                          ctx: dict[str, Any]) -> tuple[str, str]: ...

        def _ask(self, cue: str, ctx: dict[str, Any]) -> str: ...

        def _lead(self, text: str) -> str: ...

    def keeps_rule(self, cue: str) -> bool:
        """Whether a detail of ``cue`` given in two turns has answer lines of its own (``answer.<cue>``):
        its stated line carries a rule the answer must keep ("one hour, on the hour")."""
        return ("answer", cue) in self.decks

    def start_decoys(self, told: Sequence[ToldJob], count: int = DECOYS) -> None:
        """No jobs yet (they are made on the first day, ``told`` ones first; ``count`` at most)."""
        self.decoys: list[Decoy] | None = None
        self.decoy_count = count
        self.told = list(told)
        self.decoy_threads: dict[str, str] = {}  # a job's name -> its thread mark
        self.decoy_turn = 0

    def _decoy_ok(self, text: str) -> bool:
        """A decoy's name or value: clean, sharing no word with a name of the task's work, and
        not a day that a task value is (said in words, it would name the task's day)."""
        if not self.clean(text) or self.task_words & name_words(text):
            return False
        when = value_time(text)
        return when is None or _day_of(when) not in {_day_of(t) for t in map(value_time, self.values) if t is not None}

    def _decoys_for(self, plan: DayPlan) -> list[Decoy]:
        """The history's decoys, made on its first day from the task's pieces (or, for a writer
        given one day's events, from theirs)."""
        if self.decoys is None:
            pieces = self.pieces or list({e.piece.id: e.piece for e in plan.events
                                          if e.piece is not None and e.thread.startswith("t")}.values())
            self.task_words |= {w for p in pieces for w in name_words(p.about)}
            # nor a word of a sibling work's (generators.sibling_works) the day names
            self.task_words |= {w for e in plan.events if e.piece is not None and not e.thread.startswith("t")
                                for w in name_words(e.about or e.piece.about)}
            count = self.decoy_count
            told = make_told_decoys(self.told, self._decoy_ok, count)
            told_words = {w for d in told for w in name_words(d.about)}

            def bank_ok(text: str) -> bool:  # a bank job shares no word with a told one
                return self._decoy_ok(text) and not told_words & name_words(text)

            self.decoys = told + (make_decoys(
                pieces, threads().jobs, plan.date, self.rng, self._outsiders(), bank_ok,
                count=count - len(told), fields=threads().job_fields,
                sentences=threads().job_details) if len(told) < count else [])
            if told:  # told and bank jobs come up in no telling order
                self.rng.shuffle(self.decoys)
            for decoy in self.decoys:
                self.work_threads += 1
                self.decoy_threads[decoy.about] = f"w{min(self.work_threads, 99)}"
        return self.decoys

    def _outsiders(self) -> list[str]:
        """People a decoy may name: full names from the bank whose first name no colleague has."""
        firsts = {c.lower() for c in self.colleagues}
        return [p for p in threads().job_people if p.split()[0].lower() not in firsts and self.clean(p)]

    def _free_on(self, value: str, when: datetime) -> bool:
        """Whether ``value`` names no colleague the office shows away on ``when``'s day."""
        day = when.date()
        return not any(first <= day <= last and re.search(rf"\b{re.escape(name)}\b", value)
                       for name, first, last in self.absences)

    def _decoy_ctx(self, decoy: Decoy, when: datetime, full: bool = False, answer: bool = False) -> dict[str, Any]:
        """A decoy line's slots: every decoy pair opens an exchange of its own, so its work is
        never "that one" but in the answer of a split detail."""
        about = self.names.pick(decoy.about, full=full, opening=not answer, answer=answer)
        return self._slots(about, when)

    def decoy_block(self, pairs: int, clock: SessionClock) -> list[TurnSpec]:
        """``pairs`` pairs about the decoys (one at a time, in turn): raised as work for later,
        then its details in the task's own sentences (some in two turns), a detail changed, or
        talk about it without details. A pair that finds no fresh wording is left out."""
        turns: list[TurnSpec] = []
        left = pairs
        idle = 0  # decoys in a row with nothing left to say
        while left > 0 and self.decoys and idle < len(self.decoys):
            decoy = self.decoys[self.decoy_turn % len(self.decoys)]
            self.decoy_turn += 1
            thread = self.decoy_threads[decoy.about]
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

    def _decoy_said(self, value: str, cue: str, when: datetime) -> str:
        """A decoy's value as the task's are said (a moment in words for the day, a day relative to
        it as often as the plan says the task's, a sheet's headers in words); "" when that is a phrase
        the task says too ("Monday next week") or names a day a task value names (marks read days)."""
        phrase = say_value(value, when.date())
        if phrase and (cue not in DAY_CUES or (is_relative(phrase) and self.rng.random() < HISTORY.relative_day)):
            value = phrase
        value = spoken(value, cue)
        if not self.clean(value):
            return ""
        return "" if self.names_task_day(value, when.date()) else value

    def names_task_day(self, text: str, said_on: date) -> bool:
        """Whether ``text``, said on ``said_on``, names a day that a task value names (the marks
        read days said in words, so no unmarked line may)."""
        days = {_day_of(t) for t in (value_time(v, said_on) for v in self.values) if t is not None}
        return any(_day_of(found.when) in days for found in read_times(text, said_on))

    def _decoy_lines(self, decoy: Decoy, when: datetime, room: int) -> list[tuple[str, str]]:
        ctx = self._decoy_ctx(decoy, when, full=not decoy.raised)
        if not decoy.raised:
            decoy.raised = True
            return [(self._line("job_raise", "any", ctx), self._line("raise_reply", "job", ctx, question=False))]
        if decoy.said < len(decoy.details) and self._free_on(decoy.details[decoy.said][1], when) \
                and self.rng.random() < HISTORY.decoy_detail:
            piece, value = decoy.details[decoy.said]
            decoy.said += 1
            cue = piece.cue if piece.cue in threads().cues else "note"
            value = self._decoy_said(value, cue, when)
            if value:  # (a phrase the task says too stays unsaid)
                return self._decoy_detail(decoy, ctx, piece.cue, cue, value, when, room)
        if decoy.said and decoy.changes < MAX_CHANGES and self.rng.random() < 0.3:  # a detail said already changes
            index = self.rng.randrange(decoy.said)
            piece, old = decoy.details[index]
            if piece.cue in SENTENCE_CUES:  # a sentence's detail changes: the new detail is what is said
                changed = changed_detail(old, self.rng) if self._free_on(old, when) else None
                new, told = changed if changed and self._decoy_ok(changed[1]) else (None, "")
            else:
                new = None if not self._free_on(old, when) else changed_value(
                    decoy, piece, old, when.date(), self.rng, self._outsiders(), self._decoy_ok, threads().job_fields)
                told = new or ""
            if new is not None and self._free_on(new, when):
                cue = piece.cue if piece.cue in threads().cues else "note"
                said = self._decoy_said(told, cue, when)
                if said:  # worded as the task's are; the detail changes only when the change is said
                    decoy.details[index] = (piece, new)
                    decoy.changes += 1
                    kind = withheld_kind(told) if told != new else None
                    if kind and room >= 2 and self.rng.random() < HISTORY.split:  # in two turns, as the task's are
                        try:
                            answer = self._line("answer", "any",
                                                {**self._decoy_ctx(decoy, when, answer=True), "value": said}, said)
                            return [(self._line("correct_split", kind, ctx), self._line("ask_withheld", kind, ctx)),
                                    (answer, self._line("after", "job", ctx, question=False))]
                        except ValueError:
                            pass  # no fresh wording: said in one turn
                    text = self._line("correct", cue if told == new else "any", {**ctx, "value": said}, said)
                    return [(text, self._line("after", "job", ctx, question=False))]
        if decoy.mentions >= decoy_mention_budget(decoy):
            return []  # a job for later with nothing new comes up no more often than the task's work
        decoy.mentions += 1
        text = self._line("mention", "any", ctx)
        return [(text, self._line("mention_reply", "asked" if text.endswith("?") else "job", ctx, question=False))]

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
                opener, ask = self._say_withheld(value, held[0], held[1], cue, ctx)
                answer = self._line("answer", "any", {**self._decoy_ctx(decoy, when, answer=True), "value": held[0]},
                                    held[0])
                return [(opener, ask), (answer, self._line("after", "job", ctx, question=False))]
            except ValueError:
                pass  # no fresh wording: said as below
        if room >= 2 and shape < split + 0.3:  # the assistant asks first, as in the task's exchanges
            # (no question of the user's: the assistant's question answers nothing)
            opener = self._line("split" if shape < split else "mention", "any", ctx, question=False)
            ask = self._ask(ask_cue, ctx)
            if shape < split:  # the value alone (a sentence as the task's sentences are answered; a rule kept)
                own = "sentence" if sentence else cue if self.keeps_rule(cue) else "any"
                text = self._line("answer", own,
                                  {**self._decoy_ctx(decoy, when, answer=True), "value": value}, value)
            else:  # the detail in full
                text = self._line("state", cue, {**ctx, "value": value}, value)
            return [(opener, ask), (text, self._line("after", "job", ctx, question=False))]
        text = self._line("state", cue, {**ctx, "value": value}, value)
        return [(self._lead(text), self._line("after", "job", ctx, question=False))]
