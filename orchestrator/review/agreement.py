"""Agreement between human annotators: Fleiss' kappa (any number of raters) and Cohen's kappa (two).

A rating table has one row per item (a task, or a task and a guideline criterion) and one count
per category: how many annotators put the item there. Fleiss' kappa compares the mean agreement
of pairs of annotators on an item with the agreement chance alone gives from the categories'
overall shares; items may have different numbers of annotators (each item's agreement is then
over its own pairs), and an item with fewer than two is left out. Cohen's kappa takes the two
annotators' labels item by item.

When chance alone already gives full agreement (every rating in one category) kappa is
undefined: the functions return None, and callers say so instead of printing a number.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Iterable, Mapping, Sequence

Table = Sequence[Sequence[int]]


def fleiss_kappa(table: Table) -> float | None:
    """Fleiss' kappa of a rating table (items x categories of counts)."""
    rows = [list(row) for row in table if sum(row) >= 2]
    if not rows:
        return None
    width = max(len(row) for row in rows)
    rows = [row + [0] * (width - len(row)) for row in rows]
    total = sum(sum(row) for row in rows)
    shares = [sum(row[j] for row in rows) / total for j in range(width)]
    agreement = []
    for row in rows:
        n = sum(row)
        agreement.append((sum(c * c for c in row) - n) / (n * (n - 1)))
    observed = sum(agreement) / len(agreement)
    chance = sum(p * p for p in shares)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two annotators' labels for the same items, in the same order."""
    if len(first) != len(second):
        raise ValueError(f"two annotators must label the same items ({len(first)} and {len(second)} labels)")
    if not first:
        return None
    n = len(first)
    observed = sum(1 for a, b in zip(first, second) if a == b) / n
    left, right = Counter(first), Counter(second)
    chance = sum(left[c] * right[c] for c in set(left) | set(right)) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


def table_of(labels: Mapping[Any, Iterable[Hashable]], categories: Sequence[Hashable]) -> list[list[int]]:
    """A rating table from each item's labels (one per annotator), in ``categories`` order."""
    index = {c: i for i, c in enumerate(categories)}
    table = []
    for item in sorted(labels, key=str):
        row = [0] * len(categories)
        for label in labels[item]:
            if label not in index:
                raise ValueError(f"{item}: label {label!r} is not one of {', '.join(map(str, categories))}")
            row[index[label]] += 1
        table.append(row)
    return table
