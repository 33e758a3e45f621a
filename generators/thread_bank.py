"""The thread bank: how the user and the assistant talk about a task's work
(``templates/dialogue/threads.bank``).

The bank is in the dialogue banks' format (``generators.dialogue_bank``): a section per move,
``== move`` or ``== move.cue`` (the role the value plays; without one the lines suit every cue),
each entry one line of text whose ``{slot}`` / ``{^slot}`` are filled from ``_THREAD_SLOTS``. It
is read, checked and compiled on first use (:func:`threads`), once; a malformed entry stops the
command naming its file and line.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

from generators.dialogue_bank import DIALOGUE_DIR, BankError, Section, parse_banks, read_bank_files

THREADS_BANK = DIALOGUE_DIR / "threads.bank"

# --------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------

_SLOT = re.compile(r"\{(\^?)([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class ThreadLine:
    """One compiled line: literal text and slots (``(name, upper)``), rendered without a template engine."""

    parts: tuple[str | tuple[str, bool], ...]
    static: str | None  # the text when the line has no slots
    needs: frozenset[str]  # the slots this line uses
    where: str  # "file:line" of the entry, for messages

    def render(self, ctx: Mapping[str, Any]) -> str:
        if self.static is not None:
            return self.static
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                # a value that ends a sentence of its own ("... in each class?") takes no full stop after it
                stop = part[:1] == "." and part[1:2] in ("", " ", '"', "'", ")")  # a full stop, not ".pdf"
                out.append(part[1:] if stop and out and out[-1][-1:] in ("?", "!", ".") else part)
            else:
                value = str(ctx[part[0]])
                out.append(value[:1].upper() + value[1:] if part[1] else value)
        return "".join(out)


def compile_line(text: str, where: str, allowed: frozenset[str]) -> ThreadLine:
    """A line's text compiled: ``{slot}`` and ``{^slot}`` (first letter upper-cased) of ``allowed``."""
    parts: list[str | tuple[str, bool]] = []
    pos = 0
    for match in _SLOT.finditer(text):
        if match.start() > pos:
            parts.append(text[pos:match.start()])
        name = match.group(2)
        if name not in allowed:
            raise BankError(f"{where}: unknown slot {{{name}}}; a thread line may use {', '.join(sorted(allowed))}")
        parts.append((name, bool(match.group(1))))
        pos = match.end()
    if pos < len(text):
        parts.append(text[pos:])
    if any(isinstance(p, str) and ("{" in p or "}" in p) for p in parts):
        raise BankError(f"{where}: stray brace in {text!r}: a slot is {{name}} or {{^name}}")
    needs = frozenset(p[0] for p in parts if not isinstance(p, str))
    return ThreadLine(tuple(parts), None if needs else text, needs, where)


T = TypeVar("T")
K = TypeVar("K")


class Deck(Generic[T]):
    """Draws items in shuffled order without repeats until the deck is exhausted, then reshuffles."""

    def __init__(self, items: Sequence[T], rng: random.Random) -> None:
        self.items = list(items)
        self.rng = rng
        self.cards: list[T] = []

    def draw(self, accept: Callable[[T], Any]) -> Any:
        """Return the first ``accept(item)`` that is not None; None if no item is accepted."""
        if not self.items:
            return None
        for _ in range(len(self.items) + 1):
            if not self.cards:
                self.cards = list(self.items)
                self.rng.shuffle(self.cards)
            result = accept(self.cards.pop())
            if result is not None:
                return result
        order = list(self.items)
        self.rng.shuffle(order)
        for item in order:
            result = accept(item)
            if result is not None:
                return result
        return None


class Decks(Generic[K, T]):
    """A :class:`Deck` for each key of ``lines``, made when first asked for: a history draws from
    a few dozen of the bank's keys, and a deck draws nothing from ``rng`` until it is drawn from."""

    def __init__(self, lines: Mapping[K, Sequence[T]], rng: random.Random) -> None:
        self._lines = lines
        self._rng = rng
        self._made: dict[K, Deck[T]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._lines

    def get(self, key: K) -> Deck[T] | None:
        deck = self._made.get(key)
        if deck is None:
            entries = self._lines.get(key)
            if entries is None:
                return None
            deck = self._made[key] = Deck(entries, self._rng)
        return deck

    def __getitem__(self, key: K) -> Deck[T]:
        deck = self.get(key)
        if deck is None:
            raise KeyError(key)
        return deck


# --------------------------------------------------------------------------------------------
# The thread bank
# --------------------------------------------------------------------------------------------

_MOVES = ("raise", "raise_reply", "state", "correct", "ask", "after", "distract", "lead", "recap", "recap_reply",
          "about", "mention", "mention_reply", "split", "prompt", "answer", "decline", "job", "job_raise",
          "job_person", "job_field", "job_detail", "near_clause", "near_word", "withheld", "ask_withheld",
          "correct_split", "anchor", "anchor_name", "relation", "anchor_reply")
# Who says a move's line: the user (U), the assistant (A), or neither (T: a fragment of another line).
MOVE_ROLES = {"raise": "U", "raise_reply": "A", "state": "U", "correct": "U", "ask": "A", "after": "A",
               "distract": "U", "lead": "T", "recap": "U", "recap_reply": "A", "about": "T", "mention": "U",
               "mention_reply": "A", "split": "U", "prompt": "A", "answer": "U", "decline": "U", "job": "T",
               "job_raise": "U", "job_person": "T", "job_field": "T", "job_detail": "T",
               "near_clause": "T", "near_word": "T", "withheld": "T", "ask_withheld": "A", "correct_split": "U",
               "anchor": "U", "anchor_name": "T", "relation": "T", "anchor_reply": "A"}


# What a thread line may name: the work (about; {^about} at a sentence's start), the user, the day and part of day, the
# piece's value, a near miss's sentence and a colleague (``HistoryWriter._ctx``); another name
# would fail only when its line is drawn, so it is refused when the bank is read.
_THREAD_SLOTS = frozenset({"about", "user", "weekday", "when", "value", "text", "who"})
# A derived value's anchor line names the anchor and its value; a relation names the anchor (and an amount, or
# a file's name without its ending).
_ANCHOR_SLOTS = frozenset({"anchor", "value", "about"})
# A decoy's made-up sentence (``job_detail``) names the job, a person and the things a request names.
_MOVE_SLOTS = {"job_detail": frozenset({"about", "who", "first", "day", "time", "file", "number", "field", "sheet",
                                         "out"}),
               "anchor": _ANCHOR_SLOTS, "anchor_reply": frozenset({"anchor", "about", "user", "value"}),
               "anchor_name": frozenset(), "relation": frozenset({"anchor", "amount", "name"}),
               "near_word": frozenset(), "decline": _THREAD_SLOTS | {"final"}}
_NEAR_WORD = re.compile(r"([a-z]+) / ([a-z]+)")


def index_threads(sections: Mapping[str, Section]) -> dict[tuple[str, str], tuple[ThreadLine, ...]]:
    """The thread bank's lines by (move, cue), each checked for its move and slots."""
    out: dict[tuple[str, str], tuple[ThreadLine, ...]] = {}
    for name, sec in sections.items():
        move, _, cue = name.partition(".")
        if move not in _MOVES:
            raise BankError(f"{sec.where}: unknown move {move!r}; a section is '== move' or '== move.cue', "
                            f"the move one of {', '.join(_MOVES)}")
        if sec.columns is not None:
            raise BankError(f"{sec.where}: thread sections declare no fields")
        lines = []
        for entry in sec.entries:
            if len(entry.fields) != 1:
                raise BankError(f"{entry.where}: a thread entry is one line of text, got {len(entry.fields)} fields")
            if not entry.fields[0]:
                raise BankError(f"{entry.where}: empty thread entry")
            line = compile_line(entry.fields[0], entry.where, _MOVE_SLOTS.get(move, _THREAD_SLOTS))
            if move in ("anchor", "relation") and "anchor" not in line.needs:
                raise BankError(f"{entry.where}: an {move} line names its anchor ({{anchor}})")
            if move == "anchor" and "value" not in line.needs:
                raise BankError(f"{entry.where}: an anchor line says the anchor's value ({{value}})")
            if move == "near_word" and not _NEAR_WORD.fullmatch(entry.fields[0]):
                raise BankError(f"{entry.where}: a near_word line is two lower-case words, 'word / other'")
            if move == "decline" and ("final" in line.needs) != (cue == "kept"):
                raise BankError(f"{entry.where}: a decline.kept line says the value that stands ({{final}}), "
                                "another decline line does not")
            lines.append(line)
        out[(move, cue or "any")] = tuple(lines)
    for move in _MOVES:
        if not any(m == move for m, _ in out):
            raise BankError(f"{THREADS_BANK.name}: no '== {move}' section")
    return out


@dataclass(frozen=True)
class ThreadBank:
    """The thread bank compiled: its lines by (move, cue) and the word lists some moves give."""

    lines: Mapping[tuple[str, str], tuple[ThreadLine, ...]]
    cues: frozenset[str]  # the cues that have their own state lines
    generic_abouts: tuple[str, ...]  # names for work that came without one
    jobs: tuple[str, ...]  # other work for later: the decoys
    job_people: tuple[str, ...]  # people outside the office
    job_fields: tuple[str, ...]  # what a decoy's sheet holds
    job_details: Mapping[str, tuple[ThreadLine, ...]]  # a decoy's made-up sentence, by sentence cue
    near_words: Mapping[str, str]  # a word -> the other of its pair (both ways)


def parse_threads(text: str, name: str) -> ThreadBank:
    """A thread bank from its text (``name`` for messages)."""
    lines = index_threads(parse_banks([(name, text)]))

    def words(move: str) -> tuple[str, ...]:
        return tuple(line.render({}) for line in lines[(move, "any")])

    pairs: list[tuple[str, str]] = []
    for line in (line for (move, _), found in lines.items() if move == "near_word" for line in found):
        match = _NEAR_WORD.fullmatch(line.render({}))
        assert match is not None  # (index_threads checked each line)
        for word in match.groups():
            if any(word in pair for pair in pairs):
                raise BankError(f"{line.where}: {word!r} is in another near_word pair already")
        pairs.append((match.group(1), match.group(2)))
    return ThreadBank(lines, frozenset(cue for (move, cue) in lines if move == "state" and cue != "any"),
                      words("about"), words("job"), words("job_person"), words("job_field"),
                      {cue: found for (move, cue), found in lines.items() if move == "job_detail"},
                      {**dict(pairs), **{b: a for a, b in pairs}})


@functools.cache
def threads() -> ThreadBank:
    """The thread bank, read and compiled on first use (then kept)."""
    (name, text), = read_bank_files([THREADS_BANK], "the thread bank")
    return parse_threads(text, name)


# Cues whose line carries the piece's whole sentence, not only its value: a note (said as it is),
# a question (asked as one) and a request (an instruction of the user, said after a lead-in).
SENTENCE_CUES = frozenset({"note", "asked", "requested"})
OPENERS = ("Okay.", "Right.", "Sure.", "Mm.", "Fine.", "Alright.", "Ah.", "I see.", "Oh.", "Thanks.")
REPLIES = ("after", "raise_reply", "recap_reply", "mention_reply", "prompt")
def bank_sizes() -> dict[str, int]:
    """Number of entries per (move) of the thread bank (for reports and tests)."""
    sizes: dict[str, int] = {}
    for (move, _), entries in threads().lines.items():
        sizes[move] = sizes.get(move, 0) + len(entries)
    return sizes
