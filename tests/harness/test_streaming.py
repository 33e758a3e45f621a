"""An eval run streams: nothing holds all its rows, or anything as large as the run times a
constant; each part is held to what holding every row gives."""

from __future__ import annotations

import random

import numpy as np

from harness import scores
from harness.scores import interval


def test_the_bootstrap_drawn_in_chunks_is_the_one_draw(monkeypatch):
    rng = random.Random(9)
    values = np.array([rng.random() for _ in range(123)])
    none, oracle = np.array([rng.random() < 0.2 for _ in range(123)], float), np.ones(123)
    whole = (interval(values, 500, 3), scores.ons_interval(values, none, oracle, 500, 3))
    monkeypatch.setattr(scores, "CHUNK_VALUES", 1000)  # 8 resamples of 123 at a time
    assert (interval(values, 500, 3), scores.ons_interval(values, none, oracle, 500, 3)) == whole
    monkeypatch.setattr(scores, "CHUNK_VALUES", 1)  # one resample at a time
    assert (interval(values, 500, 3), scores.ons_interval(values, none, oracle, 500, 3)) == whole
    assert interval(values, 0) is None
