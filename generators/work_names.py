"""The names a person gives one piece of work, and which of them a line says.

After it is raised, a work is called many ways (``namings``: its full name, shorter ones, "the
invoice thing", "that one"), so that no fixed phrase marks its turns; :class:`WorkNames` picks one
for each line (the one used least so far), and :func:`noun_twice` keeps a line from putting a noun
of the name right before it ("the mail on the mail to pass on").
"""

from __future__ import annotations

import random
import re
from collections import Counter
from functools import lru_cache
from typing import Callable, Iterable

from generators.chances import HISTORY

_POSTMODIFIERS = (" for ", " of ", " about ", " from ", " with ", " on ", " to ", " in ")


_SUBJECTS = {"i", "we", "you", "they", "he", "she"}  # "the meeting I have to move": a relative clause follows
_CLAUSE_VERBS = {"needs", "wants", "asked", "mentioned", "sent", "gave", "said"}  # "the amount accounting needs"
_NOT_PLURAL = {"news", "series"}
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")  # a plain word, or a hyphened one ("hand-off")
# words that say which one, not what: "the final figure" is not "the final thing"
_NO_MODIFIER = {"final", "little", "small", "big", "new", "old", "first", "last", "next", "average", "total",
                "main", "other", "same", "short", "long", "quick", "current", "latest", "full", "whole",
                "right", "wrong", "real", "usual", "early", "late", "earlier", "later", "good", "bad", "a", "an",
                "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "second", "third",
                "fourth", "fifth", "previous", "revised", "updated", "upcoming", "draft", "one-off", "several"}
_POINTING = ("that ", "this ", "those ", "these ")  # names that point back: never a line's first word on the work
_NOUN_BEFORE = re.compile(r"\b(\w+)\s+(?:for|about|of|on|from|in|to|with)\s+$")


def namings(about: str) -> tuple[str, ...]:
    """The ways a person calls one piece of work: its full name first, then shorter ones ("the
    invoice reminder": "the reminder", "that reminder", "this reminder", "the invoice thing",
    "the invoice one", "that one"; "the module 1 figure for Henrik Calloway": also "the module 1
    figure"; "the claims": "those claims"; "the meeting I have to move": "the meeting"; "the
    names and the time": "those two")."""
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
    if " and " in core:  # two things: "those two", never "that one"
        if core.count(" and ") == 1:
            out.append("those two")
        return tuple(dict.fromkeys(out))
    if _WORD.fullmatch(head) and len(head) > 2 and head.lower() not in ("one", "thing", "it"):
        plural = (head.endswith("s") and not head.lower().endswith(("ss", "us", "is", "as"))
                  and head.lower() not in _NOT_PLURAL)
        out += [f"the {head}", f"{'those' if plural else 'that'} {head}", f"{'these' if plural else 'this'} {head}"]
        mods = words[1:-1]
        if words[0].lower() == "the" and mods and all(_WORD.fullmatch(m) for m in mods) \
                and not any(m.lower() in _NO_MODIFIER for m in mods):
            out.append(f"the {' '.join(mods)} thing")
            if not plural:  # "the meeting notes" are no "one"
                out.append(f"the {' '.join(mods)} one")
    out.append("that one")
    return tuple(dict.fromkeys(out))


def noun_twice(low: str, about: str) -> bool:
    """Whether a (lowercased) line puts a word of the work's name right before it ("the mail on
    the mail to pass on")."""
    if not about or about not in low:  # the usual case, without a pattern
        return False
    words = _words_of(about)
    start = low.find(about)
    while start >= 0:  # each place the name is said, left to right, as a pattern of it finds them
        noun = _NOUN_BEFORE.search(low[:start])
        if noun and noun.group(1) in words:
            return True
        start = low.find(about, start + len(about))
    return False


@lru_cache(maxsize=256)  # a history's lines are checked against its few works' names
def _words_of(about: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", about))


class WorkNames:
    """The names a history gives its works: the task's (a short name no other task work shares),
    made at the start; another (a decoy's, or a work a writer of one day's events meets) as it
    comes. ``clean``: whether a name may be said (it holds no task value)."""

    def __init__(self, rng: random.Random, clean: Callable[[str], bool], abouts: Iterable[str],
                 stated_full_names: float = HISTORY.full_name, full_name: float = HISTORY.full_name) -> None:
        self.rng, self.clean, self.stated_full_names, self.full_name = rng, clean, stated_full_names, full_name
        names = {about: namings(about) for about in abouts if about and clean(about)}
        shared = {n for ns in names.values() for n in ns[1:] if sum(n in other for other in names.values()) > 1}
        self.names = {about: (ns[0], *[n for n in ns[1:] if n not in shared and clean(n)])
                      for about, ns in names.items()}
        self.uses: dict[str, Counter[str]] = {}  # how often each work was called each name
        self._pools: dict[tuple[str, bool], tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}

    def of(self, about: str) -> tuple[str, ...]:
        """The names of ``about``, its full name first."""
        names = self.names.get(about)
        if names is None:
            names = self.names[about] = (about, *[n for n in namings(about)[1:] if self.clean(n)])
        return names

    def pick(self, about: str, *, full: bool = False, opening: bool = False, answer: bool = False,
             stated: bool = False) -> str:
        """One of the names of ``about`` (:meth:`of`): the full one when ``full``, a short one for
        the second turn of a split detail or a reply to a line about the work (``answer``), else now
        and then a name that says which work (the full one or "the invoice thing", as often as
        ``full_name``; the full one in a line that states a value, ``stated``, as often as
        ``stated_full_names``); of several, the one used least so far. A
        line that opens an exchange (``opening``) never says "that one", "this report" or "the
        invoice one": nothing before it says which work it points at."""
        names, short, which = self._pools_of(about, opening)
        if full or not short:
            return names[0]
        if answer or self.rng.random() >= (self.stated_full_names if stated else self.full_name):
            pool = short
        elif stated:  # a value is said with the name the question asks by
            return names[0]
        else:
            pool = which
        uses = self.uses.get(names[0])
        if uses is None:
            uses = self.uses[names[0]] = Counter()
        counts = [uses.get(n, 0) for n in pool]  # (get: a name not used yet is no call to __missing__)
        fewest = min(counts)
        name = self.rng.choice([n for n, count in zip(pool, counts) if count == fewest])
        uses[name] += 1
        return name

    def _pools_of(self, about: str, opening: bool) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """The names of ``about``, its short ones (an opening line's: none that points back) and the
        ones that say which work (the full one, or its words but the head: "the invoice thing"),
        kept per work: a history picks a name for every line about a work."""
        pools = self._pools.get((about, opening))
        if pools is None:
            names = self.of(about)
            short = tuple(n for n in names[1:] if not (opening and (n.startswith(_POINTING) or n.endswith(" one"))))
            which = (names[0], *[n for n in short if n.endswith((" thing", " one")) and n != "that one"])
            pools = self._pools[(about, opening)] = (names, short, which)
        return pools
