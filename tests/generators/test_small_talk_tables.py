"""The small-talk tables made once (pool names, answer references, filtered entries) against a
plain reading of the banks."""

from __future__ import annotations

import random

from generators.small_talk.tables import (
    ANSWER_REFS,
    BEAT_POOLS,
    POOLS,
    TOPIC_BEATS,
    TOPIC_POOLS,
    WORDS,
    drawable,
    eligible,
)


def test_pool_names_are_the_topics_and_beats_pools():
    for topic, beats in TOPIC_BEATS.items():
        assert TOPIC_POOLS[topic] == (topic + ".open", topic + ".reply")
        for beat in beats:
            pre = f"{topic}.{beat}."
            assert BEAT_POOLS[topic, beat] == (pre, pre + "ask", pre + "ans", pre + "end")
            assert all(name in POOLS for name in BEAT_POOLS[topic, beat][1:])
    assert len(BEAT_POOLS) == sum(map(len, TOPIC_BEATS.values()))


def test_answer_refs_are_each_answer_entrys_pool_references():
    for (_, _, ans, _) in BEAT_POOLS.values():
        entries = POOLS[ans].entries
        assert len(ANSWER_REFS[ans]) == len(entries)
        for refs, entry in zip(ANSWER_REFS[ans], entries):
            assert list(refs) == [p for p in entry.parts if p[0] == 2]


def _plain_drawable(name, flags, words, kinds):
    """The filter read plainly, in the order ``eligible`` gives (entries grouped by condition)."""
    out = []
    for e in eligible(name, flags):
        fewest, most = WORDS[id(e)]
        if words is not None and not (fewest <= words[1] and most >= words[0]):
            continue
        if kinds is not None and e.expects and not e.expects & kinds:
            continue
        out.append(id(e))
    return out


def test_drawable_matches_a_plain_filter_of_the_entries():
    """Asked in a random order for random flags, word bounds and kinds (so that a cached answer
    for other arguments would show), the cached filter gives what a plain filter gives."""
    rng = random.Random(5)
    asks = [pools[1] for pools in BEAT_POOLS.values()]
    names = asks + rng.sample(sorted(POOLS), 40)
    bits = sorted({e.need | e.forbid for p in POOLS.values() for e in p.entries})
    every_bit = [1 << i for i in range(max(b.bit_length() for b in bits))]
    kinds_seen = sorted({k for p in POOLS.values() for e in p.entries for k in e.expects})
    nonempty = 0
    for _ in range(3000):
        name = rng.choice(names)
        flags = sum(b for b in every_bit if rng.random() < 0.5)
        words = rng.choice([None, (1, 3), (4, 99), (1, 99), (2, 5)])
        kinds = rng.choice([None, frozenset(), frozenset(rng.sample(kinds_seen, rng.randint(1, 3)))])
        got = drawable(name, flags, words, kinds)
        assert [id(e) for e in got] == _plain_drawable(name, flags, words, kinds), (name, words, kinds)
        assert set(map(id, got)) <= {id(e) for e in POOLS[name].entries
                                     if e.need & flags == e.need and not e.forbid & flags}
        nonempty += bool(got)
    assert nonempty > 500
