"""One seeding helper (office_env/seeding.py): streams named by their path, and the legacy keys
that keep the streams written before it byte for byte."""

import hashlib
import json
import random

import numpy as np
import pytest

from office_env.seeding import COLON, LINES, RAW, SORTED_JSON, STRIDE, derive_seed, digest, np_rng, rng, stream_key


def draws(stream: random.Random, n: int = 5) -> list[float]:
    return [stream.random() for _ in range(n)]


def test_a_path_names_one_stream_and_any_part_changes_it():
    first = [rng(11, "task", 3).random() for _ in range(3)]
    assert first == [rng(11, "task", 3).random() for _ in range(3)]
    others = {rng(12, "task", 3).random(), rng(11, "task", 4).random(), rng(11, "plan", 3).random(),
              rng(11, "task", "3").random()}
    assert rng(11, "task", 3).random() not in others


def test_the_key_is_json_so_a_part_cannot_run_into_the_next():
    assert stream_key("a:b", "c") != stream_key("a", "b:c")
    assert stream_key(1, [2, 3]) == '[1, [2, 3]]'
    assert draws(rng("a:b", "c")) != draws(rng("a", "b:c"))


def test_each_legacy_key_gives_the_stream_it_replaced():
    # make_world(seed), a child stream drawn from another: the seed as it is
    assert draws(rng(11, legacy=RAW)) == draws(random.Random(11))
    assert draws(rng(0.25, legacy=RAW)) == draws(random.Random(0.25))
    # a world's per-kind office stream: "<seed>:<kind>"
    assert draws(rng(4242, "staff", legacy=COLON)) == draws(random.Random("4242:staff"))
    # the noisy agent: the hex SHA-256 of "<seed>\n<prompt>"
    old = hashlib.sha256(b"1\nFix the total in data/q3.xlsx").hexdigest()
    assert draws(rng(digest(1, "Fix the total in data/q3.xlsx", legacy=LINES), legacy=RAW)) == draws(random.Random(old))


def test_each_legacy_seed_is_the_number_it_replaced():
    assert derive_seed(11, "world", 3, legacy=COLON) == int(hashlib.sha256(b"11:world:3").hexdigest()[:8], 16)
    assert derive_seed("homeragents.horizon.persona", None, legacy=LINES) == int(
        hashlib.sha256(b"homeragents.horizon.persona\nNone").hexdigest()[:8], 16)
    inputs = {"now": "2024-06-12 14:15", "instruction": "Mail Zo\u00eb the total", "days": 5}
    assert derive_seed(inputs, "too short", legacy=SORTED_JSON) == int(
        hashlib.sha256(json.dumps([inputs, "too short"], sort_keys=True).encode()).hexdigest()[:8], 16)
    assert derive_seed(11, 7, legacy=STRIDE) == 11 * 1_000_003 + 7


def test_numpy_streams_follow_the_same_rules():
    assert (np_rng(5, legacy=RAW).integers(0, 100, 8) == np.random.default_rng(5).integers(0, 100, 8)).all()
    same = np_rng(5, "bootstrap").integers(0, 1_000_000, 8)
    assert (same == np_rng(5, "bootstrap").integers(0, 1_000_000, 8)).all()
    assert not (same == np_rng(5, "resample").integers(0, 1_000_000, 8)).all()


def test_a_legacy_key_that_does_not_exist_or_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="unknown legacy"):
        rng(1, legacy="md5")
    with pytest.raises(ValueError, match="one part"):
        rng(1, "world", legacy=RAW)


def test_the_kept_encoders_write_what_json_dumps_writes():
    """The key is the text json.dumps would give, so every stream keeps its seed."""
    from datetime import date, datetime
    from pathlib import PurePosixPath

    chooser = random.Random(3)
    atoms = [0, -7, 2**70, 0.1, -0.0, 1e300, float("nan"), float("inf"), float("-inf"), True, False, None,
             "", "plain", "Zo\u00eb", "\u65e5\u672c \U0001f600", 'quote " and \\ back', "tab\tnew\nline\x00\x1f",
             "\ud800 lone surrogate", date(2024, 6, 12), datetime(2024, 6, 12, 14, 15), PurePosixPath("data/q3.xlsx")]

    def part(depth: int) -> object:
        roll = chooser.random()
        if depth < 3 and roll < 0.2:
            return [part(depth + 1) for _ in range(chooser.randrange(4))]
        if depth < 3 and roll < 0.35:
            return {chooser.choice(["b", "a", "\u00e9", "z"]): part(depth + 1) for _ in range(chooser.randrange(4))}
        if depth < 3 and roll < 0.4:
            return tuple(part(depth + 1) for _ in range(chooser.randrange(3)))
        return chooser.choice(atoms)

    for _ in range(3000):
        path = [part(0) for _ in range(chooser.randrange(6))]
        assert stream_key(*path) == json.dumps(path, ensure_ascii=False, default=str)
        if not any(isinstance(p, (date, PurePosixPath)) for p in path) and "date" not in repr(path) \
                and "Path" not in repr(path):
            assert stream_key(*path, legacy=SORTED_JSON) == json.dumps(path, sort_keys=True)
