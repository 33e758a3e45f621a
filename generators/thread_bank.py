"""The thread bank: how the user and the assistant talk about a task's work, and the parser
for the dialogue banks' format.

Banks are files of entries separated by ``---``; ``#`` lines are comments; ``@key: value`` lines
tag the entry; ``U:``/``A:``/``T:`` lines are user / assistant / text lines, each a Jinja2
template. ``templates/dialogue/threads.j2`` holds one line per entry, tagged with its ``@move``
(and ``@cue``); it is parsed, checked and compiled once, at import, and a malformed entry stops
the command naming its file and line. ``namings`` gives the ways a piece of work is called.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

import jinja2
from jinja2 import meta

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
DIALOGUE_DIR = TEMPLATES_DIR / "dialogue"

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


class BankError(ValueError):
    """A dialogue bank file is malformed (the message names the file and line)."""


# --------------------------------------------------------------------------------------------
# Banks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BankLine:
    role: str  # "U", "A" or "T"
    template: jinja2.Template | None  # None for plain text
    static: str | None  # the rendered text when the line has no slots

    def render(self, ctx: Mapping[str, Any]) -> str:
        if self.static is not None:
            return self.static
        assert self.template is not None
        return self.template.render(ctx)


@dataclass(frozen=True)
class BankEntry:
    lines: tuple[BankLine, ...]
    tags: Mapping[str, str]
    needs: frozenset[str]  # the slots this entry uses
    where: str  # "file:line" of the entry, for messages

    @property
    def roles(self) -> str:
        return "".join(line.role for line in self.lines)

    @property
    def pairs(self) -> int:
        return len(self.lines) // 2


def parse_bank(text: str, name: str = "<bank>") -> tuple[BankEntry, ...]:
    """Parse one bank file's text into compiled entries (see the module docstring)."""
    entries: list[BankEntry] = []
    lines: list[BankLine] = []
    tags: dict[str, str] = {}
    needs: set[str] = set()
    start = 0

    def flush() -> None:
        nonlocal lines, tags, needs
        if lines:
            entries.append(BankEntry(tuple(lines), dict(tags), frozenset(needs), f"{name}:{start}"))
        elif tags:
            raise BankError(f"{name}:{start}: entry has tags but no lines")
        lines, tags, needs = [], {}, set()

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line == "---":
            flush()
            continue
        if not line or line.startswith("#"):
            continue
        if not lines and not tags:
            start = lineno
        if line.startswith("@"):
            key, sep, value = line[1:].partition(":")
            if not sep or not key.strip():
                raise BankError(f"{name}:{lineno}: a tag line reads '@key: value'")
            tags[key.strip()] = value.strip()
            continue
        role, sep, body = line.partition(":")
        if role not in ("U", "A", "T") or not sep:
            raise BankError(f"{name}:{lineno}: expected 'U: ...', 'A: ...', 'T: ...', '@key: value', '#' or '---'")
        body = body.strip()
        if not body:
            raise BankError(f"{name}:{lineno}: empty {role} line")
        if "{" not in body:  # plain text: nothing to compile
            lines.append(BankLine(role, None, body))
            continue
        try:
            ast = _ENV.parse(body)
            slots = meta.find_undeclared_variables(ast)
            template = _ENV.from_string(ast)
        except jinja2.TemplateSyntaxError as exc:
            raise BankError(f"{name}:{lineno}: template error: {exc.message}") from exc
        static = template.render() if not slots else None
        needs |= slots
        lines.append(BankLine(role, template, static))
    flush()
    return tuple(entries)


def _check_shape(entries: Sequence[BankEntry], name: str, shape: Callable[[str], bool], what: str) -> None:
    for entry in entries:
        if not shape(entry.roles):
            raise BankError(f"{entry.where}: {name} entries must be {what}, got {entry.roles!r}")


def _alternating(roles: str) -> bool:
    return len(roles) >= 2 and len(roles) % 2 == 0 and all(
        r == ("U" if i % 2 == 0 else "A") for i, r in enumerate(roles))


def load_bank(name: str, directory: Path = DIALOGUE_DIR) -> tuple[BankEntry, ...]:
    path = directory / name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BankError(f"{path}: cannot read dialogue bank ({exc.strerror or exc})") from exc
    entries = parse_bank(text, str(path))
    if not entries:
        raise BankError(f"{path}: the bank has no entries")
    return entries




T = TypeVar("T")


class _Deck(Generic[T]):
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


# --------------------------------------------------------------------------------------------
# The thread bank
# --------------------------------------------------------------------------------------------

_MOVES = ("raise", "raise_reply", "state", "correct", "ask", "after", "distract", "lead", "recap", "recap_reply",
          "about", "mention", "mention_reply", "split", "prompt", "answer", "decline", "job", "job_raise",
          "job_person", "job_field")
_MOVE_ROLES = {"raise": "U", "raise_reply": "A", "state": "U", "correct": "U", "ask": "A", "after": "A",
               "distract": "U", "lead": "T", "recap": "U", "recap_reply": "A", "about": "T", "mention": "U",
               "mention_reply": "A", "split": "U", "prompt": "A", "answer": "U", "decline": "U", "job": "T",
               "job_raise": "U", "job_person": "T", "job_field": "T"}


# What a thread line may name: the work (about, About), the user, the day and part of day, the
# piece's value, a near miss's sentence and a colleague (``HistoryWriter._ctx``); another name
# would fail only when its line is drawn, so it is refused when the bank is read.
_THREAD_SLOTS = frozenset({"about", "About", "user", "weekday", "when", "value", "text", "who"})


def index_threads(entries: Sequence[BankEntry]) -> dict[tuple[str, str], tuple[BankEntry, ...]]:
    """The thread bank's entries by (move, cue), each checked for its move, roles and slots."""
    out: dict[tuple[str, str], list[BankEntry]] = {}
    for entry in entries:
        move = entry.tags.get("move", "")
        if move not in _MOVES:
            raise BankError(f"{entry.where}: @move must be one of {', '.join(_MOVES)}")
        unknown = sorted(entry.needs - _THREAD_SLOTS)
        if unknown:
            raise BankError(f"{entry.where}: unknown slot {{{{ {unknown[0]} }}}}; a thread line may use "
                            f"{', '.join(sorted(_THREAD_SLOTS))}")
        if entry.roles != _MOVE_ROLES[move]:
            raise BankError(f"{entry.where}: a {move} entry is one {_MOVE_ROLES[move]} line, got {entry.roles!r}")
        out.setdefault((move, entry.tags.get("cue", "any")), []).append(entry)
    for move in _MOVES:
        if not any(m == move for m, _ in out):
            raise BankError(f"threads.j2: no '@move: {move}' entry")
    return {key: tuple(value) for key, value in out.items()}


THREADS = index_threads(load_bank("threads.j2"))
CUES = frozenset(cue for (move, cue) in THREADS if move == "state" and cue != "any")
# Cues whose line carries the piece's whole sentence, not only its value: a note (said as it is),
# a question (asked as one) and a request (an instruction of the user, said after a lead-in).
SENTENCE_CUES = frozenset({"note", "asked", "requested"})
GENERIC_ABOUTS = tuple(e.lines[0].render({}) for e in THREADS[("about", "any")])
JOBS = tuple(e.lines[0].render({}) for e in THREADS[("job", "any")])  # other work for later: the decoys
JOB_PEOPLE = tuple(e.lines[0].render({}) for e in THREADS[("job_person", "any")])  # people outside the office
JOB_FIELDS = tuple(e.lines[0].render({}) for e in THREADS[("job_field", "any")])  # what a decoy's sheet holds


_OPENERS = ("Okay.", "Right.", "Sure.", "Mm.", "Fine.", "Alright.", "Ah.", "I see.", "Oh.", "Thanks.")
_REPLIES = ("after", "raise_reply", "recap_reply", "mention_reply", "prompt")
_POSTMODIFIERS = (" for ", " of ", " about ", " from ", " with ", " on ", " to ", " in ")
P_FULL_NAME = 0.3  # after it is raised, the share of a thread's lines that call the work by its full name


_SUBJECTS = {"i", "we", "you", "they", "he", "she"}  # "the meeting I have to move": a relative clause follows
_CLAUSE_VERBS = {"needs", "wants", "asked", "mentioned", "sent", "gave", "said"}  # "the amount accounting needs"
_NOT_PLURAL = {"news", "status", "series", "analysis"}


def namings(about: str) -> tuple[str, ...]:
    """The ways a person calls one piece of work: its full name first, then shorter ones ("the
    invoice reminder": "the reminder", "that reminder", "this reminder", "that one"; "the
    module 1 figure for Henrik Calloway": also "the module 1 figure"; "the claims": "those
    claims"; "the meeting I have to move": "the meeting")."""
    full = " ".join(about.split())
    core = full
    for sep in _POSTMODIFIERS:
        core = core.split(sep)[0]
    words = core.split()
    cut = next((i for i, w in enumerate(words) if i > 1 and w.lower() in _SUBJECTS), None)
    if cut is not None:
        words = words[:cut]
    elif len(words) > 2 and words[-1].lower() in _CLAUSE_VERBS:
        words = words[:2]
    core = " ".join(words)
    out = [full]
    if core != full and len(words) > 1:
        out.append(core)
    head = words[-1] if words else ""
    if " and " not in core and head.isalpha() and len(head) > 2 and head.lower() not in ("one", "thing", "it"):
        plural = head.endswith("s") and not head.endswith("ss") and head.lower() not in _NOT_PLURAL
        out += [f"the {head}", f"{'those' if plural else 'that'} {head}", f"{'these' if plural else 'this'} {head}"]
    out.append("that one")
    return tuple(dict.fromkeys(out))


def bank_sizes() -> dict[str, int]:
    """Number of entries per (move) of the thread bank (for reports and tests)."""
    sizes: dict[str, int] = {}
    for (move, _), entries in THREADS.items():
        sizes[move] = sizes.get(move, 0) + len(entries)
    return sizes
