"""When two tasks are the same task: one world, one computation, one answer, or one description.

A benchmark that holds the same task twice counts one skill twice and tells a reader less than
its size says. ``duplicate_keys`` gives a task's identities (its description; its world, family
and checked values with output names left out, so two tasks that differ only in the name of the
file they write are one task; and the same without the people, so two tasks that differ only in
who gets the result are one task too; and its work, the checked values the chat does not say, so
two tasks that do the same office work under other chat names -- another title, another file name
-- are one task; and the values it computes, in any family: the same sum of the same office is one
task whether it goes into the answer file or a mail); a build keeps the first task of each identity,
by index, and drops a task whose
description is almost that of an earlier one of its family (``near_words``).
``near_duplicates`` finds both kinds in a finished dataset, for the dataset card. Neither compares
every pair: identities are looked up by key, and near descriptions through a prefix index
(:class:`NearIndex`) whose verdicts are exactly those of comparing every pair.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Collection
from itertools import combinations
from typing import Any, Protocol

from backends.task_record import TaskRecord
from office_env.evaluation.comparator import as_number
from office_env.evaluation.keywords import normalize
from verifier.trace import Leaf, leaf_office_values, leaves_of

NEAR_JACCARD = 0.9
_WORD_RE = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")


def _digest(kind: str, text: str) -> str:
    return f"{kind}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def answer_signature(record: TaskRecord, *, people: bool = True) -> list[str]:
    """The values a task checks, output file names and the user left out, sorted; ``people=False``
    leaves out every person too (who receives the result is not part of the computation)."""
    return _signature(leaves_of(record.criteria()), record.user.username, people=people)


def _signature(leaves: list[Leaf], user: str, *, people: bool = True) -> list[str]:
    """:func:`answer_signature` of the criteria's leaves (``verifier.trace.leaves_of``)."""
    user = user.lower()
    values = []
    for leaf in leaves:
        if leaf.role == "file" or (leaf.role == "person" and (not people or str(leaf.value).lower() == user)):
            continue
        values.append(normalize(str(leaf.value)))
    return sorted(values)


def duplicate_keys(record: TaskRecord) -> list[str]:
    """The identities of a task: any shared key makes two tasks duplicates. The same family in the
    same world reaching the same values is one task, whoever the result goes to."""
    return identity_keys(world=record.provenance.extra("world_seed"), family=record.family,
                         description=record.description, criteria=record.criteria(), user=record.user.username,
                         said=[m.value for m in record.memory],
                         computed=[(c.op, c.value) for c in record.computed or []])


def identity_keys(*, world: Any, family: str | None, description: str, criteria: list[dict[str, Any]], user: str,
                  said: list[Any], computed: list[tuple[str, Any]]) -> list[str]:
    """:func:`duplicate_keys` of a task given by its parts: all of them are known once its draft is
    (its chat adds none), so a build can tell a repeat before writing the chat."""
    leaves = leaves_of(criteria)  # found once for the three readings below
    answer = json.dumps([family, world, _signature(leaves, user)], sort_keys=True)
    keys = [_digest("description", normalize(description)), _digest("answer", answer)]
    values = _signature(leaves, user, people=False)
    if values:
        keys.append(_digest("computation", json.dumps([family, world, values], sort_keys=True)))
    work = sorted(normalize(v) for v in leaf_office_values(leaves, said))
    if work:  # the values found in the office or computed, whatever the chat names them (a title, a file)
        keys.append(_digest("work", json.dumps([family, world, work], sort_keys=True)))
    done = sorted(f"{op}={_same_value(value)}" for op, value in computed if value != "")
    if done:  # the same computation in the same office is one task, whichever family asks for it and where it goes
        keys.append(_digest("computed", json.dumps([world, done], sort_keys=True)))
    return keys


def _same_value(value: Any) -> str:
    """A computed value as two families that reach it would both write it: 1,950 and 1950.0 alike."""
    number = as_number(value)
    return format(number, ".12g") if number is not None else normalize(str(value))


def near_words(record: TaskRecord) -> list[str]:
    """What ``first_of_each`` compares for near-duplicates: the family, then the description's words."""
    return description_words(record.family, record.description)


def description_words(family: str | None, description: str) -> list[str]:
    """:func:`near_words` of a task given by its family and description."""
    return [str(family)] + sorted(_words(description))


def alike(words_a: frozenset[str], words_b: Collection[str], threshold: float = NEAR_JACCARD) -> bool:
    """Jaccard of two word sets at least ``threshold`` (``words_b`` may be any collection of
    distinct words: an index holds its sets as tuples, a quarter of a frozenset's memory)."""
    shared = len(words_a.intersection(words_b))
    union = len(words_a) + len(words_b) - shared
    return union > 0 and shared >= threshold * union


def first_of_each(items: list[tuple[int, list[str]]], near: dict[int, list[str]] | None = None,
                  quotas: Quotas | None = None) -> tuple[list[int], dict[int, int]]:
    """Given (index, keys) pairs, the indices to keep (the first of each identity, by index) and,
    for every other index, the kept index it duplicates. ``near`` maps an index to its
    ``near_words``: a task whose description is almost that of a kept task of its family is
    dropped too (found through a :class:`NearIndex`, not by comparing with every kept task).
    ``quotas``: an index past its group's quota is in neither (see :class:`FirstOfEach`)."""
    firsts = FirstOfEach(quotas=quotas)
    for index, keys in sorted(items):
        firsts.add(index, keys, (near or {}).get(index))
    return list(firsts.kept), dict(firsts.dropped)


def _must_share(size: int, threshold: float) -> int:
    """Words a set of ``size`` shares with any set at least ``threshold`` alike (never more: the
    float slack only lengthens a prefix, which keeps the search exact)."""
    return max(1, math.ceil(threshold * size - 1e-9))


class NearIndex:
    """Word sets found again by any set at least ``threshold`` alike (Jaccard, as :func:`alike`)
    without comparing it with every one. Each set is indexed under its prefix: its first words in
    one fixed order, as many as a set that alike must share one of (two sets that alike share a
    word of both prefixes). Only sets sharing a prefix word are compared, so the verdicts are those
    of comparing every pair, whatever the order; the order makes the cost. ``rank`` gives it; by
    default the words go rarest first among the sets held when the index last doubled (it is then
    built again, a cost of one add per set): a prefix holds a set's own words, and a word most
    sets share ("follow", "mail") brings no candidates, whose number would grow with the sets."""

    def __init__(self, threshold: float = NEAR_JACCARD, rank: Callable[[str], Any] | None = None) -> None:
        self.threshold, self._fixed = threshold, rank is not None
        self._said: dict[str, int] = {}  # per word, the sets saying it when the index was last built
        self.rank: Callable[[str], Any] = rank or (lambda word: (self._said.get(word, 0), word))
        self._sets: dict[int, tuple[str, ...]] = {}  # each set's words, once (a tuple: see alike)
        self._by_word: dict[str, list[int]] = {}
        self._built_with = 0

    def _prefix(self, words: Collection[str]) -> list[str]:
        ordered = sorted(words, key=self.rank)
        return ordered[:len(ordered) - _must_share(len(ordered), self.threshold) + 1]

    def add(self, key: int, words: frozenset[str]) -> None:
        if not words:
            return
        self._sets[key] = tuple(words)
        for word in self._prefix(words):
            self._by_word.setdefault(word, []).append(key)
        if not self._fixed and len(self._sets) >= max(64, 2 * self._built_with):
            self._said = dict(Counter(word for held in self._sets.values() for word in held))
            self._built_with = len(self._sets)
            self._by_word = {}
            for held_key, held in self._sets.items():
                for word in self._prefix(held):
                    self._by_word.setdefault(word, []).append(held_key)

    def remove(self, key: int) -> None:
        words = self._sets.pop(key, None)
        for word in self._prefix(words) if words else ():
            self._by_word[word].remove(key)

    def alike(self, words: frozenset[str]) -> list[int]:
        """The keys of the sets at least ``threshold`` alike with ``words``, ascending."""
        if not words:
            return []
        candidates = {key for word in self._prefix(words) for key in self._by_word.get(word, ())}
        return sorted(key for key in candidates if alike(words, self._sets[key], self.threshold))


class Quotas(Protocol):
    """How many attempts of each group (a build's app counts) may be kept, and each attempt's group."""

    quota: dict[int, int]

    def count_of(self, index: int) -> int: ...


class FirstOfEach:
    """:func:`first_of_each` kept up to date as attempts come in, in any order: an attempt after
    every one seen so far costs a look-up of its keys and prefix words; one that comes in before
    some of them takes those back out and puts them in again after it (workers finish nearly in
    order, so that is a few). ``in_order``: attempts come in index order only (a build's workers
    read the kept ones so), so what was put in is not held to be taken back out: about a fifth of
    the memory. ``quotas``: an attempt whose group's quota the kept attempts below it fill takes no
    part (``past_quota``): a build never runs it when it runs one attempt at a time, so whether
    parallel workers ran it anyway cannot change which later attempt is a repeat."""

    def __init__(self, in_order: bool = False, quotas: Quotas | None = None) -> None:
        self.in_order = in_order
        self.quotas = quotas
        self._last = -1  # the highest index put in
        self._order: list[tuple[int, list[str], list[str] | None]] = []  # what was put in, by index
        self._seen: dict[str, int] = {}
        self._near: dict[str, NearIndex] = {}
        self._taken: Counter[int] = Counter()  # per group of ``quotas``, the kept attempts
        self.kept: list[int] = []
        self.dropped: dict[int, int] = {}
        self.past_quota: set[int] = set()

    def add(self, index: int, keys: list[str], words: list[str] | None = None) -> None:
        if self.in_order:
            if index <= self._last:
                raise ValueError(f"attempt {index} put in after attempt {self._last}: not in index order")
            self._last = index
            self._do(index, keys, words)
            return
        later = []
        while self._order and self._order[-1][0] > index:
            later.append(self._order.pop())
            self._undo(*later[-1])
        for item in [(index, keys, words), *reversed(later)]:
            self._order.append(item)
            self._do(*item)

    def repeat_of(self, index: int, keys: list[str], words: list[str] | None = None) -> int | None:
        """The kept attempt below ``index`` that an attempt with ``keys`` and ``words`` repeats, as
        :meth:`add` finds it once every attempt below ``index`` is in (None: it repeats none);
        nothing is put in."""
        seen = self._seen
        earlier = next((seen[k] for k in keys if k in seen and seen[k] < index), None)
        if earlier is None and words:
            near = self._near.get(words[0])
            found = [i for i in near.alike(frozenset(words[1:])) if i < index] if near is not None else []
            earlier = found[0] if found else None
        return earlier

    def is_kept(self, index: int) -> bool:
        """Whether attempt ``index``, put in, is kept so far (neither a repeat nor past its quota)."""
        return index not in self.dropped and index not in self.past_quota

    def _group(self, index: int) -> int:
        """The group whose quota attempt ``index`` counts against (one group without quotas)."""
        return self.quotas.count_of(index) if self.quotas is not None else 0

    def _do(self, index: int, keys: list[str], words: list[str] | None) -> None:
        group = self._group(index)
        if self.quotas is not None and self._taken[group] >= self.quotas.quota.get(group, 0):
            self.past_quota.add(index)
            return
        earlier = next((self._seen[k] for k in keys if k in self._seen), None)
        if earlier is None and words:
            near = self._near.get(words[0])
            found = near.alike(frozenset(words[1:])) if near is not None else []
            earlier = found[0] if found else None
        if earlier is not None:
            self.dropped[index] = earlier
            return
        self.kept.append(index)
        self._taken[group] += 1
        for key in keys:
            self._seen[key] = index
        if words:
            self._near.setdefault(words[0], NearIndex()).add(index, frozenset(words[1:]))

    def _undo(self, index: int, keys: list[str], words: list[str] | None) -> None:
        if self.dropped.pop(index, None) is not None:
            return
        if index in self.past_quota:
            self.past_quota.discard(index)
            return
        self.kept.pop()  # the last kept: items are undone from the last put in
        self._taken[self._group(index)] -= 1
        for key in keys:
            if self._seen.get(key) == index:
                del self._seen[key]
        if words:
            self._near[words[0]].remove(index)


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD_RE.findall(text.lower()))


def near_duplicates(records: list[TaskRecord], threshold: float = NEAR_JACCARD) -> list[tuple[str, str, str]]:
    """Pairs of task ids that share an identity, or whose descriptions share at least
    ``threshold`` of their words (Jaccard), with the reason; in the order of the records, as a
    comparison of every pair would give them, but found by key and by :class:`NearIndex`."""
    return near_pairs([(r.id, duplicate_keys(r), _words(r.description)) for r in records], threshold)


def near_pairs(tasks: list[tuple[str, list[str], frozenset[str]]], threshold: float = NEAR_JACCARD
               ) -> list[tuple[str, str, str]]:
    """:func:`near_duplicates` of tasks given as (id, ``duplicate_keys``, description words): a
    build has both from its workers (``near_words`` less the family), so it reads no record."""
    keyed = [(task_id, set(keys), words) for task_id, keys, words in tasks]
    holders: dict[str, list[int]] = {}
    for position, (_, keys, _) in enumerate(keyed):
        for key in keys:
            holders.setdefault(key, []).append(position)
    found: dict[tuple[int, int], str] = {}
    for positions in holders.values():
        for a, b in combinations(positions, 2):
            if (a, b) not in found:
                shared = keyed[a][1] & keyed[b][1]
                found[(a, b)] = ("same description" if any(k.startswith("description") for k in shared)
                                 else "same world and checked or computed values")
    # the words in order of how many tasks say them, the rarest first: a prefix then holds a task's
    # rare words, so a word every other description has ("mail", "follow") brings no candidates
    # (any one order gives the same pairs; by digest, candidates grew with the dataset's size)
    said = Counter(word for _, _, words in keyed for word in words)
    index = NearIndex(threshold, rank=lambda word: (said[word], word))
    for position, (_, _, words) in enumerate(keyed):
        for earlier in index.alike(words):
            if (earlier, position) not in found:
                other = keyed[earlier][2]
                found[(earlier, position)] = f"descriptions {100 * len(words & other) / len(words | other):.0f} % alike"
        index.add(position, words)
    return [(keyed[a][0], keyed[b][0], reason) for (a, b), reason in sorted(found.items())]
