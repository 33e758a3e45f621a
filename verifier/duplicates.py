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
``near_duplicates`` finds both kinds in a finished dataset, for the dataset card.
"""

from __future__ import annotations

import hashlib
import json
import re
from itertools import combinations
from typing import Any

from office_env.evaluation.comparator import as_number
from office_env.evaluation.keywords import normalize
from verifier.trace import leaves_of, office_values

NEAR_JACCARD = 0.9
_WORD_RE = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")


def _digest(kind: str, text: str) -> str:
    return f"{kind}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def answer_signature(record: dict[str, Any], *, people: bool = True) -> list[str]:
    """The values a task checks, output file names and the user left out, sorted; ``people=False``
    leaves out every person too (who receives the result is not part of the computation)."""
    user = str((record.get("user") or {}).get("username", "")).lower()
    values = []
    for leaf in leaves_of(record.get("evaluation") or []):
        if leaf.role == "file" or (leaf.role == "person" and (not people or str(leaf.value).lower() == user)):
            continue
        values.append(normalize(str(leaf.value)))
    return sorted(values)


def duplicate_keys(record: dict[str, Any]) -> list[str]:
    """The identities of a task: any shared key makes two tasks duplicates. The same family in the
    same world reaching the same values is one task, whoever the result goes to."""
    world = (record.get("provenance") or {}).get("world_seed")
    answer = json.dumps([record.get("family"), world, answer_signature(record)], sort_keys=True)
    keys = [_digest("description", normalize(str(record.get("description", "")))), _digest("answer", answer)]
    computed = answer_signature(record, people=False)
    if computed:
        keys.append(_digest("computation", json.dumps([record.get("family"), world, computed], sort_keys=True)))
    said = [str(m.get("value", "")) for m in record.get("memory") or [] if isinstance(m, dict)]
    work = sorted(normalize(v) for v in office_values(record.get("evaluation") or [], said))
    if work:  # the values found in the office or computed, whatever the chat names them (a title, a file)
        keys.append(_digest("work", json.dumps([record.get("family"), world, work], sort_keys=True)))
    done = sorted(f"{c.get('op')}={_same_value(c.get('value'))}" for c in record.get("computed") or []
                  if isinstance(c, dict) and c.get("op") and c.get("value") not in (None, ""))
    if done:  # the same computation in the same office is one task, whichever family asks for it and where it goes
        keys.append(_digest("computed", json.dumps([world, done], sort_keys=True)))
    return keys


def _same_value(value: Any) -> str:
    """A computed value as two families that reach it would both write it: 1,950 and 1950.0 alike."""
    number = as_number(value)
    return format(number, ".12g") if number is not None else normalize(str(value))


def near_words(record: dict[str, Any]) -> list[str]:
    """What ``first_of_each`` compares for near-duplicates: the family, then the description's words."""
    return [str(record.get("family"))] + sorted(_words(str(record.get("description", ""))))


def alike(words_a: frozenset[str], words_b: frozenset[str], threshold: float = NEAR_JACCARD) -> bool:
    union = words_a | words_b
    return bool(union) and len(words_a & words_b) >= threshold * len(union)


def first_of_each(items: list[tuple[int, list[str]]], near: dict[int, list[str]] | None = None
                  ) -> tuple[list[int], dict[int, int]]:
    """Given (index, keys) pairs, the indices to keep (the first of each identity, by index) and,
    for every other index, the kept index it duplicates. ``near`` maps an index to its
    ``near_words``: a task whose description is almost that of a kept task of its family is
    dropped too."""
    seen: dict[str, int] = {}
    kept: list[int] = []
    dropped: dict[int, int] = {}
    families: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for index, keys in sorted(items):
        earlier = next((seen[k] for k in keys if k in seen), None)
        words = (near or {}).get(index)
        if earlier is None and words:
            mine = frozenset(words[1:])
            earlier = next((i for i, other in families.get(words[0], ()) if alike(mine, other)), None)
        if earlier is not None:
            dropped[index] = earlier
            continue
        kept.append(index)
        for key in keys:
            seen[key] = index
        if words:
            families.setdefault(words[0], []).append((index, frozenset(words[1:])))
    return kept, dropped


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD_RE.findall(text.lower()))


def near_duplicates(records: list[dict[str, Any]], threshold: float = NEAR_JACCARD) -> list[tuple[str, str, str]]:
    """Pairs of task ids that share an identity, or whose descriptions share at least
    ``threshold`` of their words (Jaccard), with the reason."""
    pairs = []
    keyed = [(r.get("id", "?"), set(duplicate_keys(r)), _words(str(r.get("description", "")))) for r in records]
    for (a, keys_a, words_a), (b, keys_b, words_b) in combinations(keyed, 2):
        if keys_a & keys_b:
            pairs.append((a, b, "same description" if any(k.startswith("description") for k in keys_a & keys_b)
                          else "same world and checked or computed values"))
            continue
        union = words_a | words_b
        if alike(words_a, words_b, threshold):
            pairs.append((a, b, f"descriptions {100 * len(words_a & words_b) / len(union):.0f} % alike"))
    return pairs
