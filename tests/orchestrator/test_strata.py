"""The stratified app counts of a build: the schedule of attempts, each app count's quota of the
dataset, and which accepted attempts a build keeps (orchestrator.planner)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from orchestrator.planner import Strata, quotas, schedule


def config(seed: int = 0, counts: tuple[int, ...] = (1, 2, 3), weights: tuple[int, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(seed=seed, app_counts=counts, app_weights=weights)


@pytest.mark.parametrize("seed", range(6))
def test_every_prefix_of_the_schedule_holds_each_app_count_within_one(seed):
    drawn = schedule(seed, [1, 2, 3], None, 90)
    for n in range(1, 91):
        shares = Counter(drawn[:n])
        assert max(shares[c] for c in (1, 2, 3)) - min(shares[c] for c in (1, 2, 3)) <= 1, (seed, n)
    assert all(sorted(drawn[i:i + 3]) == [1, 2, 3] for i in range(0, 90, 3))  # each round of 3 holds each once


def test_the_schedule_is_seeded_and_not_one_fixed_order():
    assert schedule(4, [1, 2, 3], None, 30) == schedule(4, [1, 2, 3], None, 30)
    assert len({tuple(schedule(seed, [1, 2, 3], None, 12)) for seed in range(8)}) > 1


@pytest.mark.parametrize("n", [1, 2, 7, 20, 30, 61])
def test_quotas_are_equal_shares_within_one_and_sum_to_n(n):
    got = quotas(11, [1, 2, 3], None, n)
    assert sum(got.values()) == n
    assert max(got.get(c, 0) for c in (1, 2, 3)) - min(got.get(c, 0) for c in (1, 2, 3)) <= 1


def test_weights_set_the_shares_and_a_larger_n_never_lowers_a_quota():
    assert quotas(3, [1, 2, 3], [1, 2, 1], 40) == {1: 10, 2: 20, 3: 10}
    for n in range(1, 60):
        now, more = quotas(3, [1, 2, 3], [1, 3, 2], n), quotas(3, [1, 2, 3], [1, 3, 2], n + 1)
        assert all(more.get(c, 0) >= now.get(c, 0) for c in (1, 2, 3))
        for c, w in ((1, 1), (2, 3), (3, 2)):
            assert abs(now.get(c, 0) - n * w / 6) < 1, (n, c, now)
    with pytest.raises(ValueError, match="weights"):
        schedule(0, [1, 2, 3], [1, 2], 3)


def test_a_build_keeps_the_first_quota_of_each_app_count_whatever_was_dropped():
    strata = Strata(config(seed=2), 6)
    assert strata.quota == {1: 2, 2: 2, 3: 2}
    counts = [strata.count_of(i) for i in range(12)]
    # drop every 1-app attempt among the first six: the build keeps later ones instead of more 2- and 3-app ones
    accepted = [i for i in range(12) if not (i < 6 and counts[i] == 1)]
    kept = strata.keep(accepted)
    assert Counter(counts[i] for i in kept) == {1: 2, 2: 2, 3: 2}
    assert kept == sorted(kept) and all(i >= 6 for i in kept if counts[i] == 1)
    filled = strata.filled(kept)
    later_2 = next(i for i in range(12) if counts[i] == 2 and i > filled[2])
    assert not strata.is_open(later_2, filled) and strata.wanted(later_2, kept) is False
    first_1 = next(i for i in range(6, 12) if counts[i] == 1)
    assert strata.first_open({i: {} for i in range(first_1)}, [], 12) == first_1


def test_an_app_count_with_no_quota_is_never_tried():
    strata = Strata(config(seed=0), 1)
    (only,) = strata.quota
    other = next(i for i in range(6) if strata.count_of(i) != only)
    assert not strata.is_open(other, strata.filled([]))


def test_each_app_count_gets_four_attempts_per_task_plus_twenty():
    assert Strata(config(), 60).max_attempts() == (20 * 4 + 20) * 3
    one = Strata(config(), 1)  # one app count has the one task: its 24 attempts are a third of the indices
    (count,) = one.quota
    assert sum(1 for i in range(one.max_attempts()) if one.count_of(i) == count) == 24


@pytest.mark.parametrize("seed", [0, 1, 2, 4, 22, 36])  # 4, 22 and 36: an attempt past its quota matters
def test_whether_an_attempt_is_wanted_kept_up_to_date_is_the_count_over_every_outcome(seed, tmp_path):
    """A build asks, before each attempt starts, whether its app count's quota may still take it;
    the answer, kept up to date as outcomes arrive (out of index order, repeats of earlier tasks,
    outcomes taken back), is the one counting every outcome again gives."""
    import random

    from orchestrator.build import BuildBatch, unique_accepted

    rng = random.Random(seed)
    batch = BuildBatch(tmp_path, 12, config(seed), 2, "local", None, None)
    batch.strata, batch.done = Strata(config(seed), 12), {}
    wanted, strata, done = batch._wanted(), batch.strata, batch.done
    order = list(range(48))
    for i in range(0, 44, 4):  # workers finish nearly in order
        order[i:i + 4] = rng.sample(order[i:i + 4], 4)
    answers = []
    for step, index in enumerate(order):
        status = rng.choice(["accepted"] * 5 + ["dropped", "error"])
        keys = [f"task{rng.randrange(index + 1)}"] if rng.random() < 0.3 else [f"task{index}"]
        done[index] = {"status": status, "keys": keys, "words": []}
        if step % 9 == 8:  # the endpoint came back: the attempts it ended are taken back
            batch.retry()
        kept = unique_accepted(done, strata)[0]  # the first of each, each within its quota
        for asked in range(52):
            expected = strata.wanted(asked, kept)
            assert wanted(asked) == expected, (step, asked)
            answers.append(expected)
    assert True in answers and False in answers
