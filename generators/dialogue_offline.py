"""The offline dialogue generator: seeded, deterministic, composed from banks, no network.

``generate_dialogue(draft, seed=..., now=..., user_first=...)`` writes ``days`` sessions of chat,
one per working day before ``now``, following ``generators.history_plan``: each thread of the
task's work is raised, its details arrive over the days in the user's own words (the value
verbatim, the sentence from ``templates/dialogue/threads.j2``), the assistant asks for details
and promises, never doing; an earlier value is corrected on a later day, near-miss details come
up. Around that work: other work that is not the task (``generators.other_work``) and small talk
that belongs to this person and this day (``generators.small_talk``). Sessions start at varied
times of day and some break for a few hours.

Marks: a turn stating a piece's final value lists it in ``evidence``; an earlier, corrected value
in ``superseded``; a near-miss in ``distractor``. Task turns carry ``thread`` "t<n>", other work
"w<n>". No other turn holds any of those values (checked as text is composed).

Banks are files of entries separated by ``---``; ``#`` lines are comments; ``@key: value`` lines
tag the entry; ``U:``/``A:``/``T:`` lines are user / assistant / text lines, each a Jinja2
template. Banks are parsed and compiled once, at import.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

import jinja2
from jinja2 import meta

from generators.history_plan import LONG_HISTORY_DAYS, DayPlan, Event, plan_history
from generators.model import MemoryPiece, Session, TaskDraft, Turn
from generators.other_work import OtherWork
from generators.small_talk import SmallTalk, WordingsExhausted
from office_env import OfficeError, Workspace, mail_store
from office_env.evaluation.keywords import Keywords
from office_env.synthesis.check import away_span

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
DIALOGUE_DIR = TEMPLATES_DIR / "dialogue"

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)

_START_EARLIEST = 8 * 3600 + 30 * 60  # 08:30:00
_START_LATEST = 10 * 3600  # 10:00:00
_GAP_MIN, _GAP_MAX = 20, 150  # seconds between turns
_DATE_FORMAT = "%Y-%m-%d"
_TS_FORMAT = f"{_DATE_FORMAT}T%H:%M:%S"


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



# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

T = TypeVar("T")


def working_days_before(day: date, count: int) -> list[date]:
    """The ``count`` working days (Monday-Friday) strictly before ``day``, ascending."""
    out: list[date] = []
    current = day
    while len(out) < count:
        current -= timedelta(days=1)
        if current.weekday() < 5:
            out.append(current)
    out.reverse()
    return out


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


def timestamps(day: date, n: int, rng: random.Random) -> list[str]:
    """``n`` strictly increasing ISO timestamps on ``day``, starting in the morning."""
    start = rng.randint(_START_EARLIEST, _START_LATEST)
    lo, hi = _GAP_MIN, _GAP_MAX
    room = 86399 - start
    if n > 1 and (n - 1) * hi > room:  # very long days: squeeze the gaps to stay on the date
        hi = room // (n - 1)
        if hi < 1:
            start, hi = 0, 86399 // (n - 1)
        lo = min(lo, hi)
    midnight = datetime.combine(day, time())
    prefix = midnight.strftime(_DATE_FORMAT)
    out: list[str] = []
    seconds = start
    for i in range(n):
        if i:
            seconds += rng.randint(lo, hi)
        out.append(_stamp(midnight, prefix, seconds))
    return out


def _stamp(midnight: datetime, prefix: str, seconds: int) -> str:
    """``midnight`` + ``seconds`` in ``_TS_FORMAT`` (``prefix``: the day in ``_DATE_FORMAT``);
    built from the clock's digits within the day, since strftime on every turn adds up."""
    if 0 <= seconds < 86400:
        hours, rest = divmod(seconds, 3600)
        return f"{prefix}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return (midnight + timedelta(seconds=seconds)).strftime(_TS_FORMAT)




# --------------------------------------------------------------------------------------------
# The thread bank
# --------------------------------------------------------------------------------------------

_MOVES = ("raise", "raise_reply", "state", "correct", "ask", "after", "distract", "lead", "recap", "recap_reply",
          "about", "mention", "mention_reply", "split", "prompt", "answer", "decline")
_MOVE_ROLES = {"raise": "U", "raise_reply": "A", "state": "U", "correct": "U", "ask": "A", "after": "A",
               "distract": "U", "lead": "T", "recap": "U", "recap_reply": "A", "about": "T", "mention": "U",
               "mention_reply": "A", "split": "U", "prompt": "A", "answer": "U", "decline": "U"}


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


_OPENERS = ("Okay.", "Right.", "Sure.", "Mm.", "Fine.", "Alright.", "Ah.", "I see.", "Oh.", "Thanks.")
_REPLIES = ("after", "raise_reply", "recap_reply", "mention_reply", "prompt")
_POSTMODIFIERS = (" for ", " of ", " about ", " from ", " with ", " on ", " to ", " in ")
P_FULL_NAME = 0.3  # after it is raised, the share of a thread's lines that call the work by its full name


def namings(about: str) -> tuple[str, ...]:
    """The ways a person calls one piece of work: its full name first, then shorter ones ("the
    invoice reminder": "the reminder", "that reminder", "this reminder", "that one"; "the
    module 1 figure for Henrik Calloway": also "the module 1 figure")."""
    full = " ".join(about.split())
    core = full
    for sep in _POSTMODIFIERS:
        core = core.split(sep)[0]
    out = [full]
    if core != full and len(core.split()) > 1:
        out.append(core)
    head = core.split()[-1] if core.split() else ""
    if " and " not in core and head.isalpha() and len(head) > 2 and head.lower() not in ("one", "thing", "it"):
        out += [f"the {head}", f"that {head}", f"this {head}"]
    out.append("that one")
    return tuple(dict.fromkeys(out))


def bank_sizes() -> dict[str, int]:
    """Number of entries per (move) of the thread bank (for reports and tests)."""
    sizes: dict[str, int] = {}
    for (move, _), entries in THREADS.items():
        sizes[move] = sizes.get(move, 0) + len(entries)
    return sizes


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------

TurnSpec = tuple[str, str, dict[str, tuple[str, ...]], str]  # (role, text, marks, thread)

_WORK_SHARE = 0.36  # target share of work turns (task and other work) in a day
LONG_HISTORY_WORK_SHARE = 0.5  # the same over weeks of history (more work, less small talk a day)
SHORT_SESSION = 16  # a day of at most this many utterances is a short session
_SHORT_OPENS, _SHORT_CLOSES = 0.5, 0.45  # chances that a short session has an opener, a closer


def history_dates(now: datetime | date, days: int) -> list[date]:
    today = now.date() if isinstance(now, datetime) else now
    return working_days_before(today, days)


def plan_dialogue(draft: TaskDraft, *, seed: int, now: datetime, days: int,
                  feedback: str = "", arrived: date | None = None) -> tuple[list[DayPlan], TaskDraft]:
    """The history plan for ``draft`` (seeded) and the draft with ``said_as`` filled in.
    ``arrived``: when the latest mail the task answers came in; its work comes up the days after."""
    if days < 1:
        raise ValueError(f"days must be at least 1, got {days}")
    _check_memory(draft.memory)
    rng = random.Random(json.dumps(["homeragents.history/1", seed, feedback, str(now), days,
                                    [p.to_dict() for p in draft.memory]], ensure_ascii=False, default=str))
    dates = history_dates(now, days)
    first_day = next((i for i, d in enumerate(dates) if d > arrived), len(dates) - 1) if arrived else 0
    plans, memory = plan_history(list(draft.memory), dates, rng, first_day=first_day)
    return plans, TaskDraft(**{**draft.__dict__, "memory": memory})


def mail_arrival(draft: TaskDraft, ws: Workspace) -> date | None:
    """The day the latest mail the oracle reads came in: the chat cannot speak of it before."""
    days = []
    for call in draft.oracle:
        if call.tool == "email_read_email":
            try:
                sent = mail_store.read(ws, str(call.args.get("user", "")), str(call.args.get("email_id", ""))).when()
            except OfficeError:
                continue
            if sent is not None:
                days.append(sent.date())
    return max(days, default=None)


def office_absences(ws: Workspace, user: str, colleagues: Mapping[str, str]) -> list[tuple[str, date, date]]:
    """The spans the office shows colleagues away, as the world check reads them: each mail in
    ``user``'s mailbox (not a reply or forward) that says its sender is away ("out from ... for N
    days", "out of the office until ..."). ``colleagues``: address -> the name the chat uses.
    Returns ``(name, first day, last day)``, sorted."""
    try:
        mails = mail_store.messages(ws, user)
    except OfficeError:
        return []
    out = set()
    for _, mail in mails:
        name = colleagues.get(mail.sender.strip().lower())
        sent = mail.when()
        if not name or sent is None or mail.subject.startswith(("Re:", "Fwd:")):
            continue
        span = away_span(mail.body, sent.replace(tzinfo=None).date())
        if span is not None:
            out.add((name, span[0], span[1]))
    return sorted(out)


def _check_memory(pieces: Sequence[MemoryPiece]) -> None:
    seen: set[str] = set()
    for piece in pieces:
        if not piece.value or not piece.value.strip():
            raise ValueError(f"memory piece {piece.id!r} has an empty value")
        if piece.id in seen:
            raise ValueError(f"memory id {piece.id!r} is used twice")
        seen.add(piece.id)


def task_values(pieces: Sequence[MemoryPiece]) -> list[str]:
    """Every specific a history says about the task, lower-cased: final values (and their
    relative phrases), superseded values and near-miss values."""
    out: list[str] = []
    for p in pieces:
        out += [p.value, *p.superseded, *(d.value for d in p.distractors)]
        if p.said_as:
            out.append(p.said_as)
    return [v.lower() for v in out if v.strip()]


def _part_of_day(when: datetime) -> str:
    if when.hour < 12:
        return "this morning"
    return "this afternoon" if when.hour < 17 else "this evening"


class HistoryWriter:
    """Writes the sessions of one history, day by day, from its plan. Holds what must not repeat
    (every composer remembers what it produced) and the values no unmarked turn may hold."""

    def __init__(self, pieces: Sequence[MemoryPiece], *, rng: random.Random, user_first: str,
                 assistant_name: str = "Assistant", colleagues: Sequence[str] = (), company: str = "",
                 projects: Sequence[str] = (), city: str = "", files: Sequence[str] = (),
                 values: Sequence[str] | None = None, banned: Sequence[str] = (),
                 work_share: float | None = None, answers: Sequence[str] = (), currency: str = "",
                 absences: Sequence[tuple[str, date, date]] = ()) -> None:
        """``absences``: ``(first name, first day, last day)`` of each span the office shows a
        colleague away; the other work names none of them doing anything on those days, and the
        small talk of those days does not name them."""
        self.rng = rng
        # what the agent must find in the office: no line says it, even by chance ("4" in "4 pm")
        self.answers = Keywords(str(a) for a in answers if str(a).strip())
        self.work_share = _WORK_SHARE if work_share is None else work_share
        self.banned = {" ".join(t.lower().split()) for t in banned}  # lines said already elsewhere
        self.pieces = list(pieces)
        self.values = [v.lower() for v in values] if values is not None else task_values(pieces)
        clean = self.clean
        self.user = user_first if user_first and clean(user_first) else ""
        self.small = SmallTalk(rng=rng, user_first=self.user, assistant=assistant_name,
                               colleagues=[c for c in colleagues if clean(c)], company=company if clean(company) else "",
                               city=city, projects=[p for p in projects if clean(p)], avoid=clean,
                               absences=absences)
        self.work = OtherWork(rng=rng, user_first=self.user, colleagues=[c for c in colleagues if clean(c)],
                              company=company if clean(company) else "", projects=[p for p in projects if clean(p)],
                              files=[f for f in files if clean(f)], avoid=clean, currency=currency,
                              absences=absences)
        self.decks = {key: _Deck(entries, rng) for key, entries in THREADS.items()}
        self.said: set[str] = set()
        self.work_threads = 0
        self.abouts: dict[str, str] = {}  # a name for the work of pieces that came without one
        self.colleagues = [c for c in colleagues if c and clean(c)]
        self.absences = list(absences)
        # the short names of one piece of work that no other work of the task shares
        names = {p.about: namings(p.about) for p in self.pieces if p.about and clean(p.about)}
        shared = {n for ns in names.values() for n in ns[1:] if sum(n in other for other in names.values()) > 1}
        self.names = {about: (ns[0], *[n for n in ns[1:] if n not in shared and clean(n)]) for about, ns in names.items()}

    def clean(self, text: str) -> bool:
        low = text.lower()
        if any(v in low for v in self.values) or (self.banned and " ".join(low.split()) in self.banned):
            return False
        return not self.answers.any_in(text)

    # -- task threads -------------------------------------------------------------------------

    def _line(self, move: str, cue: str, ctx: dict[str, Any], must: str = "", question: bool = True) -> str:
        """A fresh line of ``move`` (for ``cue``, else any cue) that holds ``must`` and no other
        task value; lines already said in this history are skipped while others remain.
        ``question``: whether the line may be a question (only where the next turn answers it)."""
        allowed = [v for v in self.values if must and v in must.lower()]

        def ok(text: str) -> bool:
            low = text.lower()
            if must and must not in text:
                return False
            if not question and text.rstrip().endswith("?"):
                return False
            return (not any(v in low for v in self.values if v not in allowed) and text not in self.said
                    and " ".join(low.split()) not in self.banned)

        keys = [(move, cue), (move, "any")]
        if move in _REPLIES or move == "ask":  # replies can borrow from each other before giving up
            keys += [(reply, "any") for reply in _REPLIES]
        elif move == "mention":
            keys.append(("recap", "any"))
        for key in keys:
            deck = self.decks.get(key)
            if deck is None:
                continue
            blank = {k for k, v in ctx.items() if not v}  # e.g. no usable user name: skip lines that use it
            text = deck.draw(lambda e: None if e.needs & blank else (lambda t: t if ok(t) else None)(e.lines[0].render(ctx)))
            if text is not None:
                self.said.add(text)
                return text
        if move in _REPLIES or move == "ask":  # every reply said already: a short opener widens the choice
            for opener in self.rng.sample(_OPENERS, len(_OPENERS)):
                for key in keys:
                    deck = self.decks.get(key)
                    text = deck.draw(lambda e: None if e.needs & blank else (
                        lambda t: t if ok(t) else None)(f"{opener} {e.lines[0].render(ctx)}")) if deck else None
                    if text is not None:
                        self.said.add(text)
                        return text
        raise ValueError(f"no {move} wording for {cue or 'any'} avoids the other task values "
                         f"({', '.join(repr(v) for v in self.values)}); are they too generic?")

    def _lead(self, text: str) -> str:
        if self.rng.random() < 0.3:
            lead = self.decks[("lead", "any")].draw(lambda e: e.lines[0].render({}))
            if lead:
                return f"{lead} {text}"
        return text

    def _who(self, when: datetime) -> str:
        """A colleague the office does not show away on ``when``'s day."""
        day = when.date()
        free = [c for c in self.colleagues if not any(n == c and a <= day <= b for n, a, b in self.absences)]
        return self.rng.choice(free) if free else ""

    def _ctx(self, event: Event, when: datetime) -> dict[str, Any]:
        piece = event.piece
        if piece is not None and piece.about and self.clean(piece.about):
            names = self.names.get(piece.about)
            if names is None:  # a writer given one day's events (the fake endpoint) names the work as it comes
                names = self.names[piece.about] = (piece.about, *[n for n in namings(piece.about)[1:] if self.clean(n)])
            about = names[0] if event.move == "raise" or len(names) == 1 or self.rng.random() < P_FULL_NAME \
                else self.rng.choice(names[1:])
        else:
            # one filler per work: pieces about the same thing keep the same words for it
            key = ("about", piece.about) if piece is not None and piece.about else (piece.id if piece else event.thread)
            if key not in self.abouts:
                self.abouts[key] = GENERIC_ABOUTS[len(self.abouts) % len(GENERIC_ABOUTS)]
            about = self.abouts[key]
        return {"about": about, "About": about[:1].upper() + about[1:], "user": self.user,
                "weekday": when.strftime("%A"), "when": _part_of_day(when), "who": self._who(when)}

    def _user_line(self, event: Event, when: datetime, answer: bool = False) -> tuple[str, dict[str, tuple[str, ...]]]:
        """The user's line for ``event``; ``answer``: the second turn of a split detail (the
        value alone, the work not named)."""
        ctx = self._ctx(event, when)
        piece = event.piece
        marks: dict[str, tuple[str, ...]] = {}
        if event.mark and piece is not None:
            marks[event.mark] = (piece.id,)
        if event.move in ("raise", "recap", "mention"):
            return self._line(event.move, "any", ctx), marks
        if event.move == "decline":
            ctx["value"] = event.said
            return self._line("decline", "any", ctx, event.said), marks
        if event.move == "distract":
            ctx["text"] = event.text
            return self._line("distract", "any", ctx, event.said), marks
        assert piece is not None
        cue = piece.cue if piece.cue in CUES else "note"
        move = "correct" if event.move == "correct" else "state"
        if answer:
            move = "answer"
        if cue not in SENTENCE_CUES:
            ctx["value"] = event.said
            return self._line(move, cue if move == "state" else "any", ctx, event.said), marks
        if move == "correct":  # a correction names the new value only ("make it 98 instead")
            ctx["value"] = event.said
            return self._line(move, "any", ctx, event.said), marks
        # No cue: the piece's own sentence carries the value. When that sentence names another
        # piece's value too, the turn states both and is marked for both.
        sentence = piece.text.rstrip(" .")
        ctx["value"] = (sentence.replace(piece.value, event.said) if piece.value in sentence
                        else f"{sentence}: {event.said}")
        text = self._line(move, {"state": cue, "answer": "sentence"}.get(move, "any"), ctx, ctx["value"])
        low = text.lower()
        also = tuple(p.id for p in self.pieces if p.id != piece.id and p.said.lower() in low)
        if also and event.mark == "evidence":
            marks["evidence"] = (piece.id, *also)
        return text, marks

    def _asks_for(self, event: Event, when: datetime) -> str:
        """The assistant asking for ``event``'s detail: its cue's question, else a plain prompt."""
        assert event.piece is not None
        ctx = self._ctx(event, when)
        try:
            line = self._line("ask", event.piece.cue or "any", ctx)
        except ValueError:
            line = ""
        return line if line.rstrip().endswith("?") else self._line("prompt", "any", ctx)

    def thread_block(self, events: list[Event], clock: "_Clock") -> list[TurnSpec]:
        """The turns of one thread's events on one day, as one exchange. The assistant asks a
        question only where the user's next line answers it."""
        turns: list[TurnSpec] = []
        for index, event in enumerate(events):
            when = clock.peek()
            if event.split:  # the work named, the assistant asks, the value alone
                text = self._line("split", "any", self._ctx(event, when))
                turns.append(("user", text, {}, event.thread))
                clock.tick()
                turns.append(("assistant", self._asks_for(event, clock.peek()), {}, event.thread))
                clock.tick()
                text, marks = self._user_line(event, clock.peek(), answer=True)
            else:
                try:
                    text, marks = self._user_line(event, when)
                except ValueError:
                    if event.move == "mention":  # value-free talk that ran out of fresh wording: left out
                        continue
                    raise
                if index == 0 and event.move in ("state", "correct"):
                    text = self._lead(text)
            turns.append(("user", text, marks, event.thread))
            clock.tick()
            nxt = events[index + 1] if index + 1 < len(events) else None
            ctx = self._ctx(event, clock.peek())
            if event.move == "recap":
                reply = self._line("recap_reply", "any", ctx, question=False)
            elif event.move == "mention":
                reply = self._line("mention_reply", "any", ctx, question=False)
            elif (nxt is not None and nxt.move == "state" and not nxt.split and nxt.piece is not None
                  and self.rng.random() < 0.6):
                reply = self._asks_for(nxt, clock.peek())
            elif event.move == "raise":
                reply = self._line("raise_reply", "any", ctx, question=nxt is not None and nxt.move == "state")
            else:
                reply = self._line("after", "any", ctx, question=False)
            turns.append(("assistant", reply, {}, event.thread))
            clock.tick()
        for _, text, _, _ in turns:
            self.said.add(text)
        return turns

    # -- the day ------------------------------------------------------------------------------

    def _talk(self, kind: str, when: datetime, pairs: int) -> tuple[list[tuple[str, str]], str]:
        """``pairs`` pairs of other work (``kind`` "work") or small talk, and their thread mark.
        Weeks of history can use up one kind's fresh wordings: the other kind takes over, and when
        both are spent the pairs are left out (a shorter day), never an error."""
        for which in ((kind, "small" if kind == "work" else "work")):
            try:
                if which == "work":
                    talk = self.work.exchange(when, pairs)
                    self.work_threads += 1
                    return ([turn for user, reply in talk for turn in (("user", user), ("assistant", reply))],
                            f"w{min(self.work_threads, 99)}")
                return self.small.exchange(when, pairs), ""
            except (WordingsExhausted, RuntimeError):
                continue
        return [], ""

    def day(self, plan: DayPlan, utterances: int) -> Session:
        rng = self.rng
        lo, hi = -(-utterances * 9 // 10), utterances * 11 // 10
        evens = [n for n in range(lo, hi + 1) if n % 2 == 0]
        pairs = max(2, (rng.choice(evens) if evens else utterances + utterances % 2) // 2)
        by_thread: dict[str, list[Event]] = {}
        for event in plan.events:
            by_thread.setdefault(event.thread, []).append(event)
        task_pairs = sum(len(v) + sum(e.split for e in v) for v in by_thread.values())
        # A short session (the Plus shape) is a quick chat: it often starts on the point or ends
        # without a goodbye.
        short = utterances <= SHORT_SESSION
        opens = not short or rng.random() < _SHORT_OPENS
        closes = not short or rng.random() < _SHORT_CLOSES
        room = max(0, pairs - opens - closes - task_pairs)
        work_pairs = min(room, max(1 if short else 2, round(self.work_share * pairs) - task_pairs))
        small_pairs = room - work_pairs
        blocks: list[tuple[str, Any]] = [("task", events) for events in by_thread.values()]
        blocks += [("work", n) for n in _split(work_pairs, 1, 3, rng)]
        smalls = [("small", n) for n in _split(small_pairs, 1, 4, rng)]
        # Task blocks keep their order; the rest is shuffled around them.
        rest = blocks[len(by_thread):] + smalls
        rng.shuffle(rest)
        order: list[tuple[str, Any]] = []
        tasks = blocks[:len(by_thread)]
        slots = sorted(rng.sample(range(len(rest) + 1), len(tasks))) if len(tasks) <= len(rest) + 1 else \
            [min(i, len(rest)) for i in range(len(tasks))]
        t = 0
        for g in range(len(rest) + 1):
            while t < len(tasks) and slots[t] == g:
                order.append(tasks[t])
                t += 1
            if g < len(rest):
                order.append(rest[g])
        clock = _Clock(plan.date, 2 * (opens + closes + task_pairs + room), rng)
        specs: list[TurnSpec] = []
        if opens:
            specs += [(r, t, {}, "") for r, t in self.small.opener(clock.peek())]
            clock.tick(2)
        breaks_at = rng.randrange(1, len(order)) if len(order) > 3 and rng.random() < 0.35 else -1
        for index, (kind, item) in enumerate(order):
            if index == breaks_at:
                clock.pause()
            if kind == "task":
                specs += self.thread_block(item, clock)
                continue
            turns, thread = self._talk(kind, clock.peek(), item)
            specs += [(r, t, {}, thread) for r, t in turns]
            clock.tick(len(turns))
        if closes:
            specs += [(r, t, {}, "") for r, t in self.small.closer(clock.peek())]
            clock.tick(2)
        stamps = clock.stamps[:len(specs)]
        turns = tuple(Turn(role=role, text=text, ts=ts, evidence=marks.get("evidence", ()),  # type: ignore[arg-type]
                           superseded=marks.get("superseded", ()), distractor=marks.get("distractor", ()),
                           thread=thread)
                      for (role, text, marks, thread), ts in zip(specs, stamps))
        return Session(day=plan.day, date=plan.date.isoformat(), turns=turns)


def _split(total: int, low: int, high: int, rng: random.Random) -> list[int]:
    """``total`` as a list of sizes between ``low`` and ``high`` (the last may be smaller)."""
    out = []
    while total > 0:
        size = min(total, rng.randint(low, high))
        out.append(size)
        total -= size
    return out


class _Clock:
    """Timestamps of one session, handed out as turns are written: a start at a varied time of
    day, 20-150 s between turns, and at most one break of a few hours; never past the date."""

    def __init__(self, day: date, turns: int, rng: random.Random) -> None:
        self.rng = rng
        self.day = day
        window = rng.choices(((8 * 3600, 10 * 3600 + 1800), (10 * 3600 + 1800, 13 * 3600), (13 * 3600, 16 * 3600)),
                             weights=(5, 2, 3))[0]
        self.seconds = rng.randint(*window)
        self.budget = max(1, turns + 4)
        self.stamps: list[str] = []
        self.midnight = datetime.combine(day, time())
        self._prefix = self.midnight.strftime(_DATE_FORMAT)
        self._room = 86399

    def _gap(self) -> int:
        left = self._room - self.seconds
        per_turn = left // max(1, self.budget - len(self.stamps))
        return max(1, min(self.rng.randint(_GAP_MIN, _GAP_MAX), per_turn))

    def peek(self) -> datetime:
        return self.midnight + timedelta(seconds=self.seconds)

    def tick(self, count: int = 1) -> None:
        for _ in range(count):
            self.stamps.append(_stamp(self.midnight, self._prefix, self.seconds))
            self.seconds += self._gap()

    def pause(self) -> None:
        """A break of 1.5-3 hours, if the rest of the session still fits before late evening."""
        left = max(0, self.budget - len(self.stamps))
        pause = self.rng.randint(5400, 10800)
        if self.seconds + pause + left * _GAP_MAX < 21 * 3600:
            self.seconds += pause


def generate_dialogue(
    draft: TaskDraft,
    *,
    seed: int,
    now: datetime,
    user_first: str,
    assistant_name: str = "Assistant",
    colleagues: Sequence[str] = (),
    company: str = "",
    projects: Sequence[str] = (),
    city: str = "",
    currency: str = "",
    files: Sequence[str] = (),
    days: int = 5,
    utterances_per_day: int = 72,
    feedback: str = "",
    plan: list[DayPlan] | None = None,
    answers: Sequence[str] = (),
    absences: Sequence[tuple[str, date, date]] = (),
) -> list[Session]:
    """Write ``days`` sessions of chat for ``draft`` (see the module docstring).

    ``plan`` is the history plan (``plan_dialogue``); without one it is made here, and the
    draft's pieces must then already carry any ``said_as`` (use ``plan_dialogue`` to get both).
    ``answers``: values the criteria check that only the office gives; no line states one.
    ``currency``: the office's currency code, which the chat's other work quotes its amounts in.
    ``absences``: ``(first name, first day, last day)`` for each span the office shows a colleague
    away (``office_absences``); the other work never has them do anything on those days.
    The same arguments give the same sessions; another ``seed`` or ``feedback`` another history.
    Raises ``ValueError`` for impossible input (``days`` < 1, ``utterances_per_day`` < 2, an
    empty memory value, duplicate memory ids, a correction with one day, or a value so generic
    that no wording avoids it).
    """
    if utterances_per_day < 2:
        raise ValueError(f"utterances_per_day must be at least 2, got {utterances_per_day}")
    if plan is None:
        plan, draft = plan_dialogue(draft, seed=seed, now=now, days=days, feedback=feedback)
    _check_memory(draft.memory)
    rng = random.Random(json.dumps(
        ["homeragents.dialogue_offline/2", seed, feedback, str(now), user_first, assistant_name, list(colleagues),
         company, list(projects), city, list(files), days, utterances_per_day, draft.intent,
         [p.to_dict() for p in draft.memory]], ensure_ascii=False, default=str))
    # weeks of full working days hold more work talk: the small talk would otherwise run out of
    # fresh lines (weeks of quick chats, the Plus shape, keep the usual share)
    share = LONG_HISTORY_WORK_SHARE if days > LONG_HISTORY_DAYS and utterances_per_day > SHORT_SESSION else None
    writer = HistoryWriter(draft.memory, rng=rng, user_first=user_first, assistant_name=assistant_name,
                           colleagues=colleagues, company=company, projects=projects, city=city, files=files,
                           work_share=share, answers=answers, currency=currency, absences=absences)
    return [writer.day(day_plan, utterances_per_day) for day_plan in plan]
