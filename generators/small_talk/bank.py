"""The small-talk fragment banks: what their entries may say, and their checks.

The words live in fragment banks under ``templates/dialogue/small_talk/`` (``*.bank``), in the
dialogue banks' one format (``generators.dialogue_bank``): ``== pool.name`` starts a pool (a
named list of interchangeable fragments), ``when flag !flag ...`` sets the calendar and persona
flags the following entries need (``when *`` lifts the condition), ``- text`` is an entry
(``- ~`` the empty one) and ``- first | second`` an entry with fields. They are read, compiled
and checked on first use (:func:`load`), once.

Inside an entry ``{slot}`` inserts a value (a persona or calendar value, or a capture),
``[a|b|c]`` one of the alternatives (``[a|]``: a or nothing), ``<pool>`` a fragment drawn from
another pool, ``<pool=name>`` also captures the drawn fragment as slot ``name`` (its further
fields as ``name.1``, ``name.2`` ... , expanded where they are used) for the later lines of the
same exchange, and ``^`` (``{^slot}``, ``<^pool>``) upper-cases the first letter. In the fields
of a captured entry, an ``[a|b|c]`` group with the same alternatives as one in an earlier field
makes the same choice (``- a [rose|fig] cutting | a [rose|fig] from {neighbour}``). A pool
reference whose first segment is an alias (``hob``, ``pet``, ``com``, ``wx``, ``hol``, ``city``)
goes to this persona's (or this day's) member of a family of pools: ``<hob.news>`` is
``hobbies.<id>.news`` for the person's hobby. An entry that names a persona slot the person
lacks (``{pet}`` for a person without a pet) is left out automatically. The composer capitalises
the first letter of every utterance, writes "an" before a capitalised vowel ("a {park} mural"
with Elm Park: "an Elm Park mural") and addresses the user by name at most once per turn.

A topic ``T`` is a set of pools: ``T.open`` (the user's first line), ``T.reply`` (the assistant's
answer when the exchange is one pair) and beats ``T.<beat>.ask`` (the assistant's follow-up
question), ``T.<beat>.ans`` (the user answers) and ``T.<beat>.end`` (the assistant's last word).
An exchange of ``n`` pairs is the opening line, ``n - 1`` beats (in the order the banks define
them) and the last beat's end. The follow-up to the user's opening line starts with the reaction
to it (``T.reply``), a later one now and then (``generators.chances.SMALL_TALK.react``) with the
reaction to the user's answer: a short question (under ``MIN_WORDS`` words) after a reaction, a
longer one on its own.
Each follow-up question says the kinds of answer it expects (``| expects: yes-no``), each answer
line the kinds it gives (``| gives: frequency yes-no``; :data:`KINDS`): the composer pairs only
fitting ones. Malformed banks raise :class:`BankError` naming the file and line: unknown flags, slots, pools or
aliases, stray brackets, captures that an earlier line of the exchange does not always set,
cycles, non-ASCII text, missing topics or families, questions or answers without kinds, unknown
kinds, a question no answer of its beat fits.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from generators.dialogue_bank import DIALOGUE_DIR, BankError, Section, read_bank_dir
from generators.dialogue_bank import Entry as BankEntry
from generators.dialogue_bank import parse_banks as parse_sections
from generators.small_talk.calendar_facts import DAY_FLAGS, WEATHER_FLAGS

BANK_DIR = DIALOGUE_DIR / "small_talk"

# Every utterance has at least MIN_WORDS words and at most MAX_TOKENS tokens (as counted by
# backends.tokens.count_tokens); the banks aim at about a dozen tokens, like real chat.
MIN_WORDS, MAX_TOKENS = 4, 28
# Texts of at most this many characters cannot exceed MAX_TOKENS (bank text has well under 0.4
# tokens per character), so only longer ones are counted: counting is the slow part.
SURELY_SHORT = int(MAX_TOKENS / 0.4)


class WordingsExhausted(ValueError):
    """A history so long that every fitting small-talk wording was said already (none is said twice)."""


# --------------------------------------------------------------------------------------------
# Flags and slots the banks may use
# --------------------------------------------------------------------------------------------

_TIME_FLAGS = ("early", "morning", "prelunch", "lunchtime", "postlunch", "afternoon", "late", "evening")
_CAL_FLAGS = (*DAY_FLAGS, "weekend", "workday", "late_week", "winter", "spring", "summer", "autumn",
              "tropical", "south", "north", "dark_am", "snowy", "holiday", "first_snow", "heat_wave",
              "hobby_day", "hobby_eve",
              "us", "uk", "ie", "ca", "au", "nz", "za", "nl", "fr", "pt", "sg", "english",
              "cold", "wet", "grey", "bright", "warmish", "hotday", *(f"wx_{k}" for k in WEATHER_FLAGS))
_PERSONA_FLAGS = ("pet", "dog", "cat", "partner", "kids", "kid_small", "kid_school", "kid_teen", "two_kids",
                  "sib", "house", "flat", "garden", "balcony", "bike", "bus", "train", "drive", "walk",
                  "transit", "outdoor_hobby", "indoor_hobby")
KNOWN_FLAGS: frozenset[str] = frozenset(_TIME_FLAGS + _CAL_FLAGS + _PERSONA_FLAGS)

# Slots Python supplies (persona, calendar, exchange). Captures are declared in the banks.
KNOWN_SLOTS: frozenset[str] = frozenset("""
user assistant company city colleague colleague2 project project2
partner partner_rel kid kid_rel kid_age kid2 sib sib_rel mum dad friend neighbour pet pet_kind
hobby hob_spot street cafe park bakery lunch_spot fav_food show book podcast trip_place home
line bus_no commute_min football vacation apartment
weekday month season tomorrow yesterday next_month wk_plan wk_past
""".split())

# Aliases in pool references: the person's (or the day's) member of a family of pools.
ALIASES: dict[str, str] = {"hob": "hobbies", "pet": "pets", "com": "commute", "wx": "weather", "hol": "hols",
                           "city": "city"}

# Topics: name -> (group, weight, rare, at most so many exchanges a day). Their pools are
# "<name>.open", "<name>.reply" and beats "<name>.<beat>.ask|ans|end" (used in bank order).
TOPICS: dict[str, tuple[str, float, bool, int]] = {
    "hello": ("opener", 1.0, False, 99),
    "bye": ("closer", 1.0, False, 99),
    "sky": ("talk", 2.0, False, 2),
    "trip_in": ("talk", 1.3, False, 1),
    "weekend_past": ("talk", 3.0, False, 1),
    "weekend_next": ("talk", 2.5, False, 1),
    "last_night": ("talk", 1.5, False, 1),
    "hobby": ("talk", 2.0, False, 2),
    "pet": ("talk", 1.6, False, 2),
    "family": ("talk", 1.6, False, 2),
    "breakfast": ("talk", 1.0, False, 1),
    "lunch": ("talk", 1.3, False, 1),
    "tonight": ("talk", 1.6, False, 1),
    "office": ("talk", 1.6, False, 2),
    "local": ("talk", 1.3, False, 2),
    "media": ("talk", 1.3, False, 2),
    "sleep": ("talk", 0.8, False, 1),
    "home": ("talk", 1.2, False, 2),
    "travel": ("talk", 1.0, False, 1),
    "first_snow": ("talk", 6.0, True, 1),
    "heat_wave": ("talk", 4.0, True, 1),
    "holiday": ("talk", 4.0, True, 1),
    "birthday": ("talk", 0.6, True, 1),
}

# The kinds of answer a follow-up question expects ("expects: ...") and an answer line gives
# ("gives: ..."): the composer pairs a question only with an answer of a kind it expects.
KINDS: frozenset[str] = frozenset(("yes-no", "duration", "frequency", "occasion", "feeling", "plan", "thing", "place",
                                   "people", "reason", "amount", "weather", "way", "food", "age"))

# --------------------------------------------------------------------------------------------
# Bank parsing
# --------------------------------------------------------------------------------------------

_NAME = r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*"
_TOKEN = re.compile(r"\{(\^?)(" + _NAME + r")\}|<(\^?)(" + _NAME + r")(?:=([a-z_][a-z0-9_]*))?>")
_ALTERNATIVES = re.compile(r"\[([^\[\]]*)\]")


@dataclass(frozen=True, slots=True)
class Entry:
    parts: tuple[tuple, ...]  # (0, text) | (1, slot, upper) | (2, alias head or "", tail, full name, upper, capture)
    fields: tuple[tuple[tuple, ...], ...]  # further fields (parts), for captures
    need: int
    forbid: int
    where: str
    expects: frozenset[str] = frozenset()  # a follow-up question: the kinds of answer that fit it
    gives: frozenset[str] = frozenset()  # an answer: the kinds of question it answers


@dataclass
class Pool:
    name: str
    where: str
    entries: list[Entry]


class _FlagBits:
    def __init__(self) -> None:
        self.bits: dict[str, int] = {}

    def bit(self, name: str) -> int:
        b = self.bits.get(name)
        if b is None:
            b = self.bits[name] = 1 << len(self.bits)
        return b

    def mask(self, names: Iterable[str]) -> int:
        m = 0
        for n in names:
            m |= self.bit(n)
        return m


FLAGS = _FlagBits()
for _f in sorted(KNOWN_FLAGS):
    FLAGS.bit(_f)


def _slot_flag(slot: str) -> int:
    return FLAGS.bit("$" + slot)


SLOT_BITS: dict[str, int] = {slot: _slot_flag(slot) for slot in sorted(KNOWN_SLOTS)}


def _inline_alternatives(text: str, where: str, anon: list[tuple[str, list[str]]], counter: list[str]) -> str:
    """Replace each ``[a|b|c]`` by a reference to a new anonymous pool (collected in ``anon``;
    ``counter`` numbers them across the bank)."""
    if "[" not in text:
        return text
    out = []
    pos = 0
    for match in _ALTERNATIVES.finditer(text):
        out.append(text[pos:match.start()])
        name = f"_alt.{len(counter)}"
        counter.append(where)
        options = match.group(1).split("|")
        if len(options) < 2:
            raise BankError(f"{where}: [{match.group(1)}] needs at least two alternatives separated by '|'")
        anon.append((name, options))
        out.append(f"<{name}>")
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _parse_text(text: str, where: str) -> tuple[tuple, set[str], set[str], list[tuple[str, str]]]:
    """Parts of one field, the slots it uses, the captures it sets, and its pool references."""
    parts: list[tuple] = []
    slots: set[str] = set()
    caps: set[str] = set()
    refs: list[tuple[str, str]] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        lit = text[pos:match.start()]
        if lit:
            parts.append((0, lit))
        pos = match.end()
        if match.group(2) is not None:
            slots.add(match.group(2))
            parts.append((1, match.group(2), bool(match.group(1))))
        else:
            name = match.group(4)
            head, _, tail = name.partition(".")
            alias = head if head in ALIASES and tail else ""
            capture = match.group(5) or ""
            if capture:
                caps.add(capture)
            field_names = tuple(f"{capture}.{i}" for i in range(1, 10)) if capture else ()
            parts.append((2, alias, "." + tail if alias else "", name, bool(match.group(3)), capture, field_names))
            refs.append((name, where))
    lit = text[pos:]
    if lit:
        parts.append((0, lit))
    for part in parts:
        if part[0] == 0 and any(ch in part[1] for ch in "{}<>[]|"):
            raise BankError(f"{where}: stray bracket or '|' in {text!r}: slots are {{name}}, pools <name> or "
                            "<name=capture>, alternatives [a|b], fields 'first | second'")
    return tuple(parts), slots, caps, refs


@dataclass
class Bank:
    pools: dict[str, Pool]
    captures: set[str]
    entry_caps: dict[int, frozenset[str]]  # id(entry) -> captures it sets directly (all fields)
    entry_slots: dict[int, frozenset[str]]


class _Compiler:
    """Turns the sections of the small-talk banks into pools of compiled entries, collecting
    what the checks need (the slots used, the captures set, the pool references)."""

    def __init__(self) -> None:
        self.pools: dict[str, Pool] = {}
        self.all_caps: set[str] = set()
        self.used_slots: list[tuple[str, str]] = []
        self.all_refs: list[tuple[str, str]] = []
        self.entry_caps: dict[int, frozenset[str]] = {}
        self.entry_slots: dict[int, frozenset[str]] = {}
        self.counter: list[str] = []  # anonymous pools made of [a|b] groups so far

    def slot_need(self, slots: Iterable[str], where: str) -> int:
        need = 0
        for slot in slots:
            self.used_slots.append((slot, where))
            if slot in KNOWN_SLOTS:
                need |= _slot_flag(slot)
        return need

    def add(self, pool: Pool, entry: Entry, caps: frozenset[str], slots: frozenset[str]) -> None:
        pool.entries.append(entry)
        self.entry_caps[id(entry)] = caps
        self.entry_slots[id(entry)] = slots

    def section(self, sec: Section) -> None:
        if sec.columns is not None:
            raise BankError(f"{sec.where}: small-talk pools declare no fields (entries are 'first | second')")
        pool = self.pools[sec.name] = Pool(sec.name, sec.where, [])
        for item in sec.entries:
            need = FLAGS.mask(w for w in item.when if not w.startswith("!"))
            forbid = FLAGS.mask(w[1:] for w in item.when if w.startswith("!"))
            self.entry(pool, item, need, forbid)

    def entry(self, pool: Pool, item: BankEntry, need: int, forbid: int) -> None:
        where = item.where
        fields_parts = []
        slots: set[str] = set()
        caps: set[str] = set()
        anon: list[tuple[str, list[str]]] = []
        for text in item.fields:
            parts, s, c, refs = _parse_text(_inline_alternatives(text, where, anon, self.counter), where)
            fields_parts.append(parts)
            slots |= s
            caps |= c
            self.all_refs.extend(refs)
        for anon_name, options in anon:
            anon_pool = self.pools[anon_name] = Pool(anon_name, where, [])
            for option in options:
                parts, s, c, refs = _parse_text(option, where)
                if c:
                    raise BankError(f"{where}: no captures inside [ ] alternatives")
                self.all_refs.extend(refs)
                self.add(anon_pool, Entry(parts, (), self.slot_need(s, where), 0, where), frozenset(), frozenset(s))
        tags = dict(item.tags)
        for key, words in tags.items():
            unknown = sorted(set(words) - KINDS)
            if unknown:
                raise BankError(f"{where}: unknown kind {unknown[0]!r} in '{key}:'; "
                                f"the kinds are {', '.join(sorted(KINDS))}")
        entry = Entry(fields_parts[0], tuple(fields_parts[1:]), need | self.slot_need(slots, where), forbid, where,
                       frozenset(tags.get("expects", ())), frozenset(tags.get("gives", ())))
        self.add(pool, entry, frozenset(caps), frozenset(slots))
        self.all_caps |= caps

    def check_names(self) -> None:
        """Captures, slots and pool references name something that exists."""
        bad_caps = self.all_caps & KNOWN_SLOTS
        if bad_caps:
            raise BankError(f"captures may not reuse slot names: {sorted(bad_caps)}")
        for slot, where in self.used_slots:
            if slot not in KNOWN_SLOTS and slot not in self.all_caps and slot.split(".")[0] not in self.all_caps:
                raise BankError(f"{where}: unknown slot {{{slot}}} (not supplied and never captured)")
        families = families_of(self.pools)
        for name, where in self.all_refs:
            head, _, tail = name.partition(".")
            if head in ALIASES and tail:
                members = families.get(ALIASES[head], ())
                if not members:
                    raise BankError(f"{where}: <{name}>: no pools '{ALIASES[head]}.<id>.*' to alias")
                for member in members:
                    target = f"{ALIASES[head]}.{member}.{tail}"
                    if target not in self.pools and not (head == "city" and f"city.default.{tail}" in self.pools):
                        raise BankError(f"{where}: <{name}>: pool {target!r} is missing")
            elif name not in self.pools:
                raise BankError(f"{where}: <{name}>: no such pool")


def parse_banks(files: Sequence[tuple[str, str]]) -> Bank:
    """Parse bank texts (``(name, text)`` pairs) into pools; check them (see the module docstring)."""
    compiler = _Compiler()
    for sec in parse_sections(files, flags=KNOWN_FLAGS, tags=frozenset({"expects", "gives"})).values():
        compiler.section(sec)
    compiler.check_names()
    bank = Bank(compiler.pools, compiler.all_caps, compiler.entry_caps, compiler.entry_slots)
    _check_cycles(bank)
    return bank


def families_of(pools: dict[str, Pool]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for family in set(ALIASES.values()):
        members = sorted({n.split(".")[1] for n in pools if n.startswith(family + ".") and n.count(".") >= 2})
        out[family] = [m for m in members if m != "default"] if family == "city" else members
    return out


def _check_cycles(bank: Bank) -> None:
    state: dict[str, int] = {}

    def targets(entry: Entry) -> Iterable[str]:
        for fparts in (entry.parts, *entry.fields):
            for part in fparts:
                if part[0] == 2:
                    if part[1]:
                        fam = ALIASES[part[1]]
                        yield from (n for n in bank.pools if n.startswith(fam + ".") and n.endswith(part[2]))
                    else:
                        yield part[3]

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise BankError(f"{bank.pools[name].where}: pool {name!r} refers to itself: {' -> '.join(path + [name])}")
        state[name] = 1
        for entry in bank.pools[name].entries:
            for t in targets(entry):
                if t in bank.pools:
                    visit(t, path + [name])
        state[name] = 2

    for name in bank.pools:
        visit(name, [])


def load_bank_dir(directory: Path) -> Bank:
    """The small-talk bank of ``directory``'s ``*.bank`` files, parsed and checked."""
    bank = parse_banks(read_bank_dir(directory, "small-talk bank"))
    _check_topics(bank)
    _check_kinds(bank)
    return bank


@functools.cache
def load() -> Bank:
    """The small-talk bank, read and checked on first use (then kept)."""
    return load_bank_dir(BANK_DIR)


_REQUIRED_POOLS = ("names.f", "names.m", "names.pet.dog", "names.pet.cat", "street.a", "street.b",
                   "cafe.name", "park.name", "bakery.name", "lunch_spot.name", "food.fav", "media.show",
                   "media.book", "media.podcast", "trip.place", "weekend.plan", "word.mum", "word.dad",
                   "word.vacation", "word.football", "word.apartment", "word.home", "word.partner_rel",
                   "word.sib_rel.f", "word.sib_rel.m", "word.kid_rel.f", "word.kid_rel.m")


def _check_topics(bank: Bank) -> None:
    pools = bank.pools
    for pool in _REQUIRED_POOLS:
        if pool not in pools:
            raise BankError(f"small-talk banks: required pool {pool!r} is missing")
    fams = families_of(pools)
    for kind in WEATHER_FLAGS:
        if kind not in fams["weather"]:
            raise BankError(f"small-talk banks: no pools for weather kind {kind!r} ('weather.{kind}.*')")
    for mode in ("bike", "bus", "train", "drive", "walk"):
        if mode not in fams["commute"]:
            raise BankError(f"small-talk banks: no pools for commute mode {mode!r}")
    for kind in ("dog", "cat"):
        if kind not in fams["pets"]:
            raise BankError(f"small-talk banks: no pools for pet kind {kind!r}")
    for topic in TOPICS:
        for part in ("open", "reply"):
            if f"{topic}.{part}" not in pools:
                raise BankError(f"small-talk banks: topic {topic!r} has no pool '{topic}.{part}'")
        opened = _guaranteed(bank, pools[f"{topic}.open"])
        for beat in beats_of(pools, topic):
            missing = [p for p in ("ask", "ans", "end") if f"{topic}.{beat}.{p}" not in pools]
            if missing:
                some = next(f"{topic}.{beat}.{p}" for p in ("ask", "ans", "end") if f"{topic}.{beat}.{p}" in pools)
                raise BankError(f"{pools[some].where}: beat {topic}.{beat} lacks {', '.join(missing)}")
            answered = opened | _guaranteed(bank, pools[f"{topic}.{beat}.ans"])
            for part, known in (("ask", opened), ("ans", opened), ("end", answered)):
                _check_captures(bank, pools[f"{topic}.{beat}.{part}"], known)
        _check_captures(bank, pools[f"{topic}.reply"], opened)


def _guaranteed(bank: Bank, pool: Pool) -> frozenset[str]:
    sets = [bank.entry_caps[id(e)] for e in pool.entries]
    return frozenset.intersection(*sets) if sets else frozenset()


def _check_captures(bank: Bank, pool: Pool, known: frozenset[str]) -> None:
    """Captures a pool (or the pools it draws from) reads must be set by the exchange's earlier lines."""
    seen: set[str] = set()

    def walk(p: Pool) -> None:
        if p.name in seen:
            return
        seen.add(p.name)
        for entry in p.entries:
            for slot in bank.entry_slots[id(entry)]:
                base = slot.split(".")[0]
                if slot not in KNOWN_SLOTS and base not in known and base not in bank.entry_caps[id(entry)]:
                    raise BankError(f"{entry.where}: {{{slot}}} is not captured by every earlier line of the "
                                    f"exchange (pool {pool.name!r})")
            for fparts in (entry.parts, *entry.fields):
                for part in fparts:
                    if part[0] == 2 and not part[1] and part[3] in bank.pools:
                        walk(bank.pools[part[3]])

    walk(pool)


def beats_of(pools: dict[str, Pool], topic: str) -> list[str]:
    """The beats of a topic, in the order the banks define them (the order they are talked about)."""
    prefix = topic + "."
    return list(dict.fromkeys(n.split(".")[1] for n in pools if n.startswith(prefix) and n.count(".") == 2))


GROUP_TOPICS: dict[str, tuple[str, ...]] = {g: tuple(t for t, spec in TOPICS.items() if spec[0] == g)
                                             for g in ("opener", "closer", "talk")}
BEATS_NOW: dict[tuple[str, int], tuple[str, ...]] = {}
TOPIC_INFO: dict[str, tuple[float, bool, str, int]] = {t: (w, rare, f"{t}.open", cap)
                                                        for t, (_, w, rare, cap) in TOPICS.items()}
FITTING: dict[tuple[str, int, int], tuple[str, ...]] = {}


def bounded(cache: dict, key: Any, make: Callable[[], tuple]) -> tuple:
    """``cache[key]``, made by ``make()`` when missing; a cache past 200,000 entries starts again empty."""
    found = cache.get(key)
    if found is None:
        if len(cache) > 200_000:
            cache.clear()
        found = cache[key] = make()
    return found


def _paired(entry: Entry) -> bool:
    """A line said from a field of the exchange's captured entry ({fn.2}): the question and its
    answer come from one entry, so they fit by construction and need no kind."""
    return any(p[0] == 1 and "." in p[1] for fparts in (entry.parts, *entry.fields) for p in fparts)


def answer_pools(pools: dict[str, Pool], beat: str, families: dict[str, list[str]] | None = None) -> list[str]:
    """The pools the answers of ``beat`` ("topic.beat") are captured from (aliases resolved);
    ``families``: ``families_of(pools)``, when the caller asks of every beat and has it already."""
    families = families if families is not None else families_of(pools)
    out: list[str] = []
    for entry in pools[f"{beat}.ans"].entries:
        for part in entry.parts:
            if part[0] != 2 or not part[5]:
                continue
            if part[1]:
                out += [f"{ALIASES[part[1]]}.{m}{part[2]}" for m in families[ALIASES[part[1]]]]
            else:
                out.append(part[3])
    return [n for n in dict.fromkeys(out) if n in pools]


def _check_kinds(bank: Bank) -> None:
    """Every follow-up question says the kinds of answer it expects, every answer line the kinds it
    gives, each question has an answer of its kinds, and no other line has a kind."""
    pools = bank.pools
    asks: set[str] = set()
    answers: set[str] = set()
    families = families_of(pools)
    for topic in TOPICS:
        for beat in beats_of(pools, topic):
            name = f"{topic}.{beat}"
            asks.add(f"{name}.ask")
            found = answer_pools(pools, name, families)
            answers.update(found)
            given = frozenset().union(*(e.gives for n in found for e in pools[n].entries))
            for entry in pools[f"{name}.ask"].entries:
                if not entry.expects and not _paired(entry):
                    raise BankError(f"{entry.where}: a follow-up question needs '| expects: <kinds>' "
                                    f"(kinds: {', '.join(sorted(KINDS))})")
                if entry.expects and not entry.expects & given:
                    raise BankError(f"{entry.where}: no answer of {name} gives {' or '.join(sorted(entry.expects))}")
    for name, pool in pools.items():
        for entry in pool.entries:
            if name in answers and not entry.gives:
                raise BankError(f"{entry.where}: an answer line needs '| gives: <kinds>' (pool {name!r} answers a "
                                f"follow-up question; kinds: {', '.join(sorted(KINDS))})")
            if entry.expects and name not in asks:
                raise BankError(f"{entry.where}: 'expects:' belongs to follow-up questions "
                                "(pools '<topic>.<beat>.ask')")
            if entry.gives and name not in answers:
                raise BankError(f"{entry.where}: 'gives:' belongs to answer lines (pools a '<topic>.<beat>.ans' "
                                "line captures)")
