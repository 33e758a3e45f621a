"""The fragment banks compiled for fast drawing: literal choices inlined, entries grouped by
condition, the flag bits each pool looks at, the persona facts and stories kept per history.
The banks are read when this module is first imported (by the composer, on first use)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime

from backends.tokens import count_tokens
from generators.small_talk.bank import (
    FLAGS,
    MAX_TOKENS,
    SLOT_BITS,
    SURELY_SHORT,
    TOPICS,
    Bank,
    Entry,
    Pool,
    answer_pools,
    beats_of,
    bounded,
    families_of,
    load,
)

BANK: Bank = load()
POOLS: dict[str, Pool] = BANK.pools
FAMILIES: dict[str, list[str]] = families_of(POOLS)
TOPIC_BEATS: dict[str, tuple[str, ...]] = {t: tuple(beats_of(POOLS, t)) for t in TOPICS}
# The pools answers to follow-up questions are drawn from: drawn with a question's kinds in force
ANSWERS: frozenset[str] = frozenset(n for t, beats in TOPIC_BEATS.items() for b in beats
                                     for n in answer_pools(POOLS, f"{t}.{b}", FAMILIES))

# --------------------------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------------------------

SPACE_PUNCT = re.compile(r" +([,.!?;:])")
# "a" before a slot value with a capital vowel becomes "an" (the article is the end of a literal)
VOWELS = frozenset("AEIOU")
A_SPACE = frozenset({"a ", "A "})
BEFORE_A = frozenset({"", " ", "(", '"'})


def _group(pool: Pool) -> tuple[tuple[int, int, tuple[Entry, ...]], ...]:
    groups: dict[tuple[int, int], list[Entry]] = {}
    for entry in pool.entries:
        groups.setdefault((entry.need, entry.forbid), []).append(entry)
    return tuple((need, forbid, tuple(entries)) for (need, forbid), entries in groups.items())


def _literal_options(name: str) -> tuple[str, ...] | None:
    """The texts of a pool that is a plain choice among literal strings (no conditions, slots, pools)."""
    pool = POOLS.get(name)
    if pool is None:
        return None
    options = []
    for entry in pool.entries:
        if entry.need or entry.forbid or entry.fields:
            return None
        if not entry.parts:
            options.append("")
        elif len(entry.parts) == 1 and entry.parts[0][0] == 0:
            options.append(entry.parts[0][1])
        else:
            return None
    return tuple(options)


ADDRESS_POOL = "m.you"  # how the assistant addresses the user: ", {user}" or nothing


def _compile_choices(parts: tuple) -> tuple:
    """Turn references to plain literal pools (most [a|b] groups, the markers) into direct choices:
    part ``(3, options)``; no recursion, no condition check when composing."""
    out: list[tuple] = []
    for part in parts:
        if part[0] == 2 and part[3] == ADDRESS_POOL and not part[4] and not part[5]:
            out.append((4,))  # the address: its texts are fixed per history (SmallTalk._you)
            continue
        if part[0] == 2 and not part[1] and not part[5]:
            options = _literal_options(part[3])
            if options is not None:
                if part[4]:
                    options = tuple(o[:1].upper() + o[1:] for o in options)
                out.append((3, options))
                continue
        out.append(part)
    return tuple(out)


for _pool in POOLS.values():
    _pool.entries = [Entry(_compile_choices(e.parts), tuple(_compile_choices(f) for f in e.fields),
                            e.need, e.forbid, e.where, e.expects, e.gives) for e in _pool.entries]


def _word_bounds(parts: tuple) -> tuple[int, float]:
    """At most the fewest and at least the most words the text of ``parts`` can have (most: inf
    when a slot or a pool of unknown length is in it): an empty choice can swallow a space."""
    lo, hi = 0, 0.0
    for part in parts:
        kind = part[0]
        if kind == 0:
            lo += part[1].count(" ")
            hi += part[1].count(" ")
        elif kind == 3:
            lo += min(o.count(" ") for o in part[1]) - ("" in part[1])
            hi += max(o.count(" ") for o in part[1])
        elif kind == 4:
            lo -= 1
            hi += 1  # ", Dana"
        else:
            hi = float("inf")
    return max(lo, 0) + 1, hi + 1


# Each pool's entries grouped by condition: filtering looks at a few groups, not every entry.
_GROUPS: dict[str, tuple[tuple[int, int, tuple[Entry, ...]], ...]] = {n: _group(p) for n, p in POOLS.items()}
# id(entry) -> the word bounds of its text (first field), for drawing only entries that can fit
WORDS: dict[int, tuple[int, float]] = {id(e): _word_bounds(e.parts) for p in POOLS.values() for e in p.entries}
# the entries of a pool that can have so many words, or expect a kind of answer (see drawable)
FITS: dict[tuple[str, int, tuple[int, int] | None, frozenset[str] | None], tuple[Entry, ...]] = {}


# Each topic's opening and reply pools, each beat's prefix ("topic.beat.") and ask, ans and end
# pools, and the pool references of each beat's answer entries (for the follow-up checks): named
# once, not for every exchange.
TOPIC_POOLS: dict[str, tuple[str, str]] = {t: (f"{t}.open", f"{t}.reply") for t in TOPIC_BEATS}
BEAT_POOLS: dict[tuple[str, str], tuple[str, str, str, str]] = {
    (t, b): (f"{t}.{b}.", f"{t}.{b}.ask", f"{t}.{b}.ans", f"{t}.{b}.end") for t, beats in TOPIC_BEATS.items()
    for b in beats}
ANSWER_REFS: dict[str, tuple[tuple[tuple, ...], ...]] = {
    ans: tuple(tuple(p for p in e.parts if p[0] == 2) for e in POOLS[ans].entries)
    for _, _, ans, _ in BEAT_POOLS.values()}


# The flag bits each pool's conditions look at: caches are keyed on these bits only.
_: object  # the loops' unused items (module-level names: the type checker keeps one type for each)
RELEVANT: dict[str, int] = {}
for _name, _groups in _GROUPS.items():
    _mask = 0
    for _need, _forbid, _ in _groups:
        _mask |= _need | _forbid
    RELEVANT[_name] = _mask
TOPIC_RELEVANT: dict[str, int] = {}
for _topic, _beat_names in TOPIC_BEATS.items():
    _mask = 0
    for _beat in _beat_names:
        for _part in ("ask", "ans", "end"):
            _mask |= RELEVANT[f"{_topic}.{_beat}.{_part}"]
    TOPIC_RELEVANT[_topic] = _mask
GROUP_RELEVANT: dict[str, int] = {}
for _topic, (_group_name, _, _, _) in TOPICS.items():
    GROUP_RELEVANT[_group_name] = (GROUP_RELEVANT.get(_group_name, 0) | TOPIC_RELEVANT[_topic]
                                    | RELEVANT[f"{_topic}.open"])


# pool -> the flag bits its conditions look at, and its eligible entries by the value of those bits
# (a pool looks at a few bits: a few hundred values at most, but for a handful of pools)
_ELIGIBLE: dict[str, tuple[int, dict[int, tuple[Entry, ...]]]] = {n: (RELEVANT[n], {}) for n in POOLS}


def eligible(name: str, flags: int) -> tuple[Entry, ...]:
    """The entries of pool ``name`` whose conditions hold under ``flags`` (cached per pool, by
    the bits the pool looks at: no key to build for every ask)."""
    mask, cache = _ELIGIBLE[name]
    found = cache.get(flags & mask)
    if found is None:
        if len(cache) > 4096:
            cache.clear()
        passing = [entries for need, forbid, entries in _GROUPS[name] if need & flags == need and not forbid & flags]
        found = passing[0] if len(passing) == 1 else tuple(e for entries in passing for e in entries)
        cache[flags & mask] = found
    return found


def drawable(name: str, flags: int, words: tuple[int, int] | None, kinds: frozenset[str] | None) -> tuple[Entry, ...]:
    """The entries of pool ``name`` eligible under ``flags`` that can have ``words`` (fewest, most)
    words (None: any number) and, for ``kinds`` (None: any), expect one of them or nothing (a
    question paired with its answer); filtered once for the bits the pool looks at."""
    every = eligible(name, flags)
    return bounded(FITS, (name, flags & RELEVANT[name], words, kinds), lambda: tuple(
        e for e in every if (words is None or WORDS[id(e)][0] <= words[1] and WORDS[id(e)][1] >= words[0])
        and (kinds is None or not e.expects or e.expects & kinds)))


_TIME_FLAG_CACHE: dict[int, int] = {}  # minute of the day -> time-of-day flags


def time_flags(when: datetime) -> int:
    """The time-of-day flags of ``when`` (cached per minute of the day)."""
    minutes = when.hour * 60 + when.minute
    found = _TIME_FLAG_CACHE.get(minutes)
    if found is not None:
        return found
    names = []
    if minutes < 11 * 60:
        names.append("early")
    if minutes < 12 * 60:
        names.append("morning")
    if 10 * 60 <= minutes < 12 * 60 + 30:
        names.append("prelunch")
    if 12 * 60 <= minutes < 14 * 60:
        names.append("lunchtime")
    if minutes >= 13 * 60:
        names.append("postlunch")
    if minutes >= 12 * 60:
        names.append("afternoon")
    if minutes >= 16 * 60:
        names.append("late")
    if minutes >= 18 * 60:
        names.append("evening")
    found = _TIME_FLAG_CACHE[minutes] = FLAGS.mask(names)
    return found


def slot_bits(slots: dict[str, str]) -> int:
    """The flag bits of the slots that have values (an entry naming a missing slot is left out)."""
    m = 0
    get = SLOT_BITS.get
    for s in slots:
        m |= get(s, 0)
    return m


def kid_flags(ctx: dict[str, str]) -> int:
    """The age flag of the child the exchange talks about."""
    if "kid_age" not in ctx:
        return 0
    age = int(ctx["kid_age"])
    return FLAGS.bit("kid_small" if age < 5 else "kid_school" if age < 13 else "kid_teen")


def fitting_answers(entries: tuple[Entry, ...], want: frozenset[str], kept: Entry | None) -> tuple[Entry, ...]:
    """The answer entries that give a kind the question asked expects; ``kept``: the persona fact
    this pool told already, the only answer it may give (if it fits)."""
    if kept is not None and any(e is kept for e in entries):
        return entries if kept.gives & want else ()
    return tuple(e for e in entries if e.gives & want)


class Lazy:
    """A capture's further field, expanded only where a later line uses it (afresh each time, so
    that a retry can give other words). ``links`` holds the [a|b] choices made in the entry's
    fields so far: a group with the same alternatives picks the same one (``- a [rose|fig]
    cutting | a [rose|fig] from {neighbour}`` never turns a rose into a fig). ``overlay``: the
    slot values a persona fact was first told with (the same colleague in goal every time)."""

    __slots__ = ("parts", "flags", "aliases", "links", "overlay")

    def __init__(self, parts: tuple, flags: int, aliases: dict[str, str], links: dict,
                 overlay: dict[str, str] | None = None) -> None:
        self.parts, self.flags, self.aliases, self.links, self.overlay = parts, flags, aliases, links, overlay


# Persona facts: the pools whose entry is drawn once a history and kept (the same entry, the same
# [a|b] choices, the same names), so that a fact told twice is told the same way: how long the
# person has lived where they live, had their pet, where it sleeps and what it likes, how they
# got into their hobby, with whom and with what kit, where their family lives; and their habits
# (a typical evening, the usual breakfast and lunch, weekend breakfasts, the usual commute, the
# pet's habits): asked "Typical evening?" twice, a person answers the same.
_FACT_POOL = re.compile(r"(?:hobbies\.[a-z0-9_]+\.(?:why|people|gear)|pets\.[a-z0-9_]+\.(?:age|spot|treat|habit)"
                        r"|home\.years|family\.near|travel\.with|(?:breakfast|lunch|tonight|last_night)\.norm"
                        r"|breakfast\.wkend|commute\.[a-z]+\.usual)\Z")
# Stories: a news entry is told once a history (no partner learning the drums on Monday and the
# trumpet on Thursday, no second first mug out of the kiln); when all are told, the topic rests.
_STORY_POOL = re.compile(r"(?:[a-z0-9_.]+\.)?news\Z")


def entry_slots(entry: "Entry") -> frozenset[str]:
    """The slots an entry's text and fields name directly."""
    return frozenset(part[1] for fparts in (entry.parts, *entry.fields) for part in fparts if part[0] == 1)


KEPT: dict[str, str] = {n: "fact" if _FACT_POOL.match(n) else "story" for n in sorted(POOLS)
                         if _FACT_POOL.match(n) or _STORY_POOL.match(n)}




def too_long(text: str) -> bool:
    """More than MAX_TOKENS tokens (counted only for texts that could be that long)."""
    return len(text) > SURELY_SHORT and count_tokens(text) > MAX_TOKENS


class NoFit(Exception):
    """A pool has no entry for the current flags."""


def weighted(rng: random.Random, weights: dict[str, float]) -> str:
    total = sum(weights.values())
    x = rng.random() * total
    for key, w in weights.items():
        x -= w
        if x < 0:
            return key
    return next(reversed(weights))


@dataclass
class Day:
    flags: int
    slots: dict[str, str]
    aliases: dict[str, str]
    weather: str
    base: dict[str, str]  # persona and day slots together: the context of the day's exchanges

