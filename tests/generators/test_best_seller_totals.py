"""The best-seller family's totals, worked out in one pass over the sheet, against the pass per
group (and per item) they replaced, over random sheets with ties, repeats and many groups."""

from __future__ import annotations

import random

from generators.families.base import Table, fmt
from generators.families.decision_work import _best_items, _item_totals


def _best_per_group(table: Table, g: int, item: int, c: int, key: str) -> tuple[str, float] | None:
    sums: dict[str, float] = {}
    for r, v in zip(table.rows, table.column(c)):
        if r[g] == key:
            sums[r[item]] = round(sums.get(r[item], 0) + v, 2)
    top = max(sums.values())
    winners = [k for k, v in sums.items() if v == top]
    return (winners[0], top) if len(winners) == 1 else None


def _totals_per_item(table: Table, g: int, item: int, c: int, key: str) -> tuple[list[str], list[tuple]]:
    pairs: list[str] = []
    for name in sorted({r[item] for r in table.rows if r[g] == key}):
        total = round(sum(v for r, v in zip(table.rows, table.column(c)) if r[g] == key and r[item] == name), 2)
        pairs += [name, fmt(total)]
    inputs = [(float(pairs[i + 1]), [fmt(v) for r, v in zip(table.rows, table.column(c))
                                     if r[g] == key and r[item] == pairs[i]]) for i in range(0, len(pairs), 2)]
    return pairs, inputs


def _table(rng: random.Random) -> Table:
    groups = [f"G{i}" for i in range(rng.randint(1, 6))]
    items = [f"Item {i}" for i in range(rng.randint(1, 8))]
    amounts = [str(rng.choice([1, 2, 5, 10])) if rng.random() < 0.3 else f"{rng.uniform(0, 500):.2f}"
               for _ in range(60)]
    rows = [[rng.choice(groups), rng.choice(items), rng.choice(amounts)] for _ in range(rng.randint(2, 60))]
    return Table("data/sales.xlsx", "Sheet1", ["Region", "Product", "Units"], rows)


def test_one_pass_totals_match_a_pass_per_group() -> None:
    rng = random.Random(7)
    ties = 0
    for _ in range(300):
        table = _table(rng)
        best = _best_items(table, 0, 1, 2)
        assert list(best) == list(dict.fromkeys(r[0] for r in table.rows))
        for key in sorted(best):
            assert best[key] == _best_per_group(table, 0, 1, 2, key)
            ties += best[key] is None
            pairs, sums = _item_totals(table, 0, 1, 2, key)
            want_pairs, want_inputs = _totals_per_item(table, 0, 1, 2, key)
            assert pairs == want_pairs
            assert [(s["value"], s["inputs"]) for s in sums] == want_inputs
    assert ties  # the draws hold ties, which name no best seller
