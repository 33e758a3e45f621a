"""The offline dialogue generator: seeded, deterministic, template-bank driven, no network.

``generate_dialogue(draft, seed=..., now=..., user_first=...)`` writes ``days`` sessions of
user/assistant chat, one per working day before ``now``. Every memory piece of the draft is said
exactly once, by the user, in a turn that contains its value verbatim and lists the piece's id in
``evidence``; the assistant acknowledges it with a promise (never a claim that it is carried out,
never the value). Everything else is small talk that asks for nothing.

Wording lives in Jinja2 banks under ``templates/dialogue/`` (see ``small_talk.j2`` for the
format): ``small_talk.j2``, ``carry.j2``, ``acknowledge.j2``, ``openers.j2``, ``closers.j2`` and
``statement.j2``. A bank file is a list of entries separated by a line ``---``; ``#`` lines are
comments; ``@key: value`` lines tag the entry; ``U:``/``A:`` lines are user/assistant turns and
``T:`` lines plain text, each one a Jinja2 template. Banks are parsed and compiled once, at
import; an entry whose slots cannot be filled (no colleague given, say) is skipped.

Pieces whose wording names another piece's value (or whose values overlap, such as ``14`` and
``14.50``) cannot be said in separate turns without one value appearing twice; such pieces are
carried together in one user turn whose ``evidence`` lists all of them.
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

from generators.model import MemoryPiece, Session, TaskDraft, Turn

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
DIALOGUE_DIR = TEMPLATES_DIR / "dialogue"

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)

# Calendar constants (not dialogue wording): names for the {{ weekday }} slot, locale-independent.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# First words that may be lower-cased when a piece's text continues a carry sentence
# ("By the way, the taxi cost ..."); anything else (names, file names, "I") keeps its case.
_LOWERABLE = frozenset(
    "a an the my our your their his her its this that these those there it we they you "
    "please remember send make book put add schedule move set update use call email mail tell "
    "check ask write create delete rename fill save forward reply invite plan arrange note keep "
    "also for in on at by from with when if next after before every each all both some any "
    "don't do let".split()
)

_START_EARLIEST = 8 * 3600 + 30 * 60  # 08:30:00
_START_LATEST = 10 * 3600  # 10:00:00
_GAP_MIN, _GAP_MAX = 20, 150  # seconds between turns
_TS_FORMAT = "%Y-%m-%dT%H:%M:%S"


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


def _load_all() -> dict[str, tuple[BankEntry, ...]]:
    banks = {
        "small_talk": load_bank("small_talk.j2"),
        "carry": load_bank("carry.j2"),
        "acknowledge": load_bank("acknowledge.j2"),
        "openers": load_bank("openers.j2"),
        "closers": load_bank("closers.j2"),
        "statement": load_bank("statement.j2"),
    }
    _check_shape(banks["small_talk"], "small-talk", _alternating, "alternating U/A lines from U to A")
    for name in ("openers", "closers"):
        _check_shape(banks[name], name, lambda r: r == "UA", "one U line then one A line")
    _check_shape(banks["carry"], "carry", lambda r: r == "U", "one U line")
    _check_shape(banks["acknowledge"], "acknowledge", lambda r: r == "A", "one A line")
    _check_shape(banks["statement"], "statement", lambda r: r == "T", "one T line")
    for name in ("carry", "acknowledge"):
        for entry in banks[name]:
            if entry.tags.get("kind", "any") not in ("any", "fact", "action"):
                raise BankError(f"{entry.where}: @kind must be any, fact or action")
    for entry in banks["statement"]:
        if entry.tags.get("use") not in ("wrap", "join"):
            raise BankError(f"{entry.where}: @use must be wrap or join")
    for use in ("wrap", "join"):
        if not any(e.tags.get("use") == use for e in banks["statement"]):
            raise BankError(f"statement.j2: no '@use: {use}' entry")
    return banks


BANKS: dict[str, tuple[BankEntry, ...]] = _load_all()
_WRAPS = tuple(e for e in BANKS["statement"] if e.tags["use"] == "wrap")
_JOINS = tuple(e for e in BANKS["statement"] if e.tags["use"] == "join")


def bank_sizes() -> dict[str, int]:
    """Number of entries per bank (for reports and tests)."""
    return {name: len(entries) for name, entries in BANKS.items()}


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


def _keep_values(candidate: str, fallback: str, values: Sequence[str]) -> str:
    """``candidate`` unless it lost one of the ``values`` that ``fallback`` contains verbatim."""
    return candidate if all(v in candidate for v in values if v in fallback) else fallback


def _lower_start(text: str, values: Sequence[str]) -> str:
    first = text.split(" ", 1)[0]
    if first and first[0].isupper() and first[1:] == first[1:].lower() and first.lower() in _LOWERABLE:
        return _keep_values(text[0].lower() + text[1:], text, values)
    return text


def _upper_start(text: str, values: Sequence[str]) -> str:
    if text and text[0].islower():
        return _keep_values(text[0].upper() + text[1:], text, values)
    return text


def _trim(text: str, values: Sequence[str]) -> str:
    """Collapse white space and drop end punctuation, as long as the values survive verbatim."""
    text = _keep_values(" ".join(text.split()), text.strip(), values)
    return _keep_values(text.rstrip(" .!?;:,"), text, values)


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


@dataclass
class _Unit:
    """What one carrying user turn says: one piece, or pieces that must travel together."""

    pieces: list[MemoryPiece]
    statement: str

    @property
    def kind(self) -> str:
        return "action" if any(p.kind == "action" for p in self.pieces) else "fact"


def _units(pieces: Sequence[MemoryPiece], rng: random.Random) -> list[_Unit]:
    statements: list[str] = []
    for piece in pieces:
        text = _trim(piece.text or "", [piece.value])
        if piece.value not in text:
            base = _trim(piece.text or "", [])
            if base:
                wrap = _WRAPS[rng.randrange(len(_WRAPS))]
                text = wrap.lines[0].render({"text": base, "value": piece.value})
            else:
                text = piece.value
        statements.append(text)
    # Pieces whose statements name each other's values are carried in one turn.
    parent = list(range(len(pieces)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    lowered = [p.value.lower() for p in pieces]
    for i, stmt in enumerate(statements):
        low = stmt.lower()
        for j, value in enumerate(lowered):
            if i != j and value in low:
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(pieces)):
        groups.setdefault(root(i), []).append(i)
    units: list[_Unit] = []
    for members in sorted(groups.values(), key=lambda m: m[0]):
        text = statements[members[0]]
        for j in members[1:]:
            join = _JOINS[rng.randrange(len(_JOINS))]
            values = [pieces[m].value for m in members]
            text = join.lines[0].render({"first": text, "second": _lower_start(statements[j], values)})
        units.append(_Unit([pieces[m] for m in members], text))
    return units


def _spread(n_units: int, n_days: int, rng: random.Random) -> list[int]:
    """Day index (0-based, non-decreasing) for each unit: order kept, shares as even as possible."""
    if n_units == 0:
        return []
    if n_units <= n_days:
        return sorted(rng.sample(range(n_days), n_units))
    base, extra = divmod(n_units, n_days)
    bigger = set(rng.sample(range(n_days), extra))
    out: list[int] = []
    for day in range(n_days):
        out.extend([day] * (base + (1 if day in bigger else 0)))
    return out


def _day_length(target: int, carries: int, rng: random.Random) -> int:
    lo = -(-target * 9 // 10)
    hi = target * 11 // 10
    evens = [n for n in range(lo, hi + 1) if n % 2 == 0]
    n = rng.choice(evens) if evens else target + (target % 2)
    return max(n, 2 * carries + 2)


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
    out: list[str] = []
    seconds = start
    for i in range(n):
        if i:
            seconds += rng.randint(lo, hi)
        out.append((midnight + timedelta(seconds=seconds)).strftime(_TS_FORMAT))
    return out


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


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
    days: int = 5,
    utterances_per_day: int = 70,
    feedback: str = "",
) -> list[Session]:
    """Write ``days`` sessions of chat carrying ``draft.memory`` (see the module docstring).

    The same arguments give the same sessions; another ``seed`` or ``feedback`` gives another
    dialogue. Raises ``ValueError`` for impossible input (``days`` < 1, ``utterances_per_day``
    < 2, an empty memory value, duplicate memory ids, or a value so generic that no wording
    avoids it).
    """
    if days < 1:
        raise ValueError(f"days must be at least 1, got {days}")
    if utterances_per_day < 2:
        raise ValueError(f"utterances_per_day must be at least 2, got {utterances_per_day}")
    pieces = list(draft.memory)
    seen: set[str] = set()
    for piece in pieces:
        if not piece.value or not piece.value.strip():
            raise ValueError(f"memory piece {piece.id!r} has an empty value")
        if piece.id in seen:
            raise ValueError(f"memory id {piece.id!r} is used twice")
        seen.add(piece.id)

    rng = random.Random(json.dumps(
        ["homeragents.dialogue_offline/1", seed, feedback,
         now.isoformat(), user_first, assistant_name, list(colleagues), company, list(projects),
         days, utterances_per_day, draft.intent,
         [[p.id, p.kind, p.text, p.value] for p in pieces]],
        ensure_ascii=False, default=str))
    today = now.date() if isinstance(now, datetime) else now
    dates = working_days_before(today, days)

    values_low = tuple(p.value.lower() for p in pieces)

    def clean(text: str) -> bool:
        low = text.lower()
        return not any(v in low for v in values_low)

    # Names that would spell out a memory value are kept out of the small talk altogether.
    mates = [c for c in dict.fromkeys(colleagues) if c and clean(c)]
    works = [p for p in dict.fromkeys(projects) if p and clean(p)]
    base_ctx: dict[str, Any] = {}
    if user_first and clean(user_first):
        base_ctx["user"] = user_first
    if assistant_name and clean(assistant_name):
        base_ctx["assistant"] = assistant_name
    if company and clean(company):
        base_ctx["company"] = company
    available = set(base_ctx) | {"weekday"}
    if mates:
        available.add("colleague")
    if len(mates) >= 2:
        available.add("colleague2")
    if works:
        available.add("project")

    def usable(bank: str) -> list[BankEntry]:
        slots = available | {"statement", "sentence"} if bank == "carry" else available
        return [e for e in BANKS[bank] if e.needs <= slots]

    small_deck = _Deck(usable("small_talk"), rng)
    opener_deck = _Deck(usable("openers"), rng)
    closer_deck = _Deck(usable("closers"), rng)
    carry_decks = {k: _Deck([e for e in usable("carry") if e.tags.get("kind", "any") in ("any", k)], rng)
                   for k in ("fact", "action")}
    ack_decks = {k: _Deck([e for e in usable("acknowledge") if e.tags.get("kind", "any") in ("any", k)], rng)
                 for k in ("fact", "action")}

    units = _units(pieces, rng)
    unit_days = _spread(len(units), days, rng)

    def render_clean(entry: BankEntry, ctx: Mapping[str, Any]) -> list[str] | None:
        texts = [line.render(ctx) for line in entry.lines]
        return texts if all(clean(t) for t in texts) else None

    def context(weekday: str) -> dict[str, Any]:
        ctx = dict(base_ctx, weekday=weekday)
        if mates:
            pair = rng.sample(mates, 2) if len(mates) >= 2 else [mates[0]]
            ctx["colleague"] = pair[0]
            if len(pair) > 1:
                ctx["colleague2"] = pair[1]
        if works:
            ctx["project"] = works[rng.randrange(len(works))]
        return ctx

    def fail(what: str) -> ValueError:
        shown = ", ".join(repr(p.value) for p in pieces)
        return ValueError(f"no {what} wording avoids the memory values ({shown}); are they too generic?")

    sessions: list[Session] = []
    for index, day in enumerate(dates):
        weekday = _WEEKDAYS[day.weekday()]
        todays = [u for u, d in zip(units, unit_days) if d == index]
        n = _day_length(utterances_per_day, len(todays), rng)
        pairs = n // 2
        closer = pairs >= len(todays) + 2
        small = pairs - 1 - len(todays) - (1 if closer else 0)

        # Each block is a list of (role, text, evidence) turns.
        def pick_exchange(deck: _Deck, what: str) -> list[tuple[str, str, tuple[str, ...]]]:
            ctx = context(weekday)
            texts = deck.draw(lambda e: render_clean(e, ctx))
            if texts is None:
                raise fail(what)
            return [("user" if i % 2 == 0 else "assistant", t, ()) for i, t in enumerate(texts)]

        opening = pick_exchange(opener_deck, "session opener")

        blocks: list[list[tuple[str, str, tuple[str, ...]]]] = []
        used_today: set[int] = set()
        remaining = small
        while remaining > 0:
            ctx = context(weekday)
            left = remaining

            def accept(entry: BankEntry, fresh: bool = True) -> list[str] | None:
                if entry.pairs > left or (fresh and id(entry) in used_today):
                    return None
                texts = render_clean(entry, ctx)
                if texts is not None:
                    used_today.add(id(entry))
                return texts

            texts = small_deck.draw(accept)
            if texts is None:  # every fitting entry was used today already: allow a repeat
                texts = small_deck.draw(lambda e: accept(e, fresh=False))
            if texts is None:
                raise fail("small-talk")
            blocks.append([("user" if i % 2 == 0 else "assistant", t, ()) for i, t in enumerate(texts)])
            remaining -= len(texts) // 2

        carried: list[list[tuple[str, str, tuple[str, ...]]]] = []
        for unit in todays:
            carried.append(_carry(unit, weekday, base_ctx, carry_decks[unit.kind], ack_decks[unit.kind],
                                  values_low, clean, fail))

        # Carries go between small-talk blocks, in order, at distinct gaps where possible.
        gaps = len(blocks) + 1
        if carried:
            if len(carried) <= gaps:
                slots = sorted(rng.sample(range(gaps), len(carried)))
            else:
                slots = sorted(rng.randrange(gaps) for _ in carried)
            merged: list[list[tuple[str, str, tuple[str, ...]]]] = []
            c = 0
            for g in range(gaps):
                while c < len(carried) and slots[c] == g:
                    merged.append(carried[c])
                    c += 1
                if g < len(blocks):
                    merged.append(blocks[g])
            blocks = merged

        turns_spec = opening + [t for block in blocks for t in block]
        if closer:
            turns_spec += pick_exchange(closer_deck, "session closer")
        stamps = timestamps(day, len(turns_spec), rng)
        turns = tuple(Turn(role=role, text=text, ts=ts, evidence=ev)
                      for (role, text, ev), ts in zip(turns_spec, stamps))
        sessions.append(Session(day=index + 1, date=day.isoformat(), turns=turns))
    return sessions


def _carry(unit: _Unit, weekday: str, base_ctx: Mapping[str, Any], carry_deck: _Deck, ack_deck: _Deck,
           values_low: Sequence[str], clean: Callable[[str], bool],
           fail: Callable[[str], ValueError]) -> list[tuple[str, str, tuple[str, ...]]]:
    own = [p.value for p in unit.pieces]
    own_low = {v.lower() for v in own}
    foreign = [v for v in values_low if v not in own_low]
    ctx = dict(base_ctx, weekday=weekday,
               statement=_lower_start(unit.statement, own), sentence=_upper_start(unit.statement, own))

    def accept_carry(entry: BankEntry) -> str | None:
        text = entry.lines[0].render(ctx)
        low = text.lower()
        if all(v in text for v in own) and not any(v in low for v in foreign):
            return text
        return None

    said = carry_deck.draw(accept_carry)
    if said is None:
        raise fail("carry")
    ack_ctx = dict(base_ctx, weekday=weekday)

    def accept_ack(entry: BankEntry) -> str | None:
        text = entry.lines[0].render(ack_ctx)
        return text if clean(text) else None

    reply = ack_deck.draw(accept_ack)
    if reply is None:
        raise fail("acknowledgement")
    return [("user", said, tuple(p.id for p in unit.pieces)), ("assistant", reply, ())]
