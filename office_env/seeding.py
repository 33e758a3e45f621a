"""One way to turn a seed into a random stream: ``rng(seed, *path)``.

Every draw of a build comes from a stream named by the build's seed and the path of what it draws
for ("task", 12, "family", "sheet_total"), never from the global generator or the order jobs ran
in, so the same seed writes the same dataset byte for byte with any number of workers, and adding
a draw in one place moves no other. The path is written as JSON (str() for anything else), so
streams differ whenever any part of their path does.

Streams that existed before this helper keep their bytes through an explicit ``legacy`` key:
new code never passes one.

- ``RAW``: the one part as it is (an int, str or float), as ``random.Random(part)``: the world
  (``make_world``) and streams seeded by another's draw or by a digest.
- ``COLON``: the parts joined by ``:`` (a world's per-kind office streams, the world seeds).
- ``LINES``: the parts joined by newlines (the noisy agent, the horizon sweep).
- ``SORTED_JSON``: ``json.dumps(parts, sort_keys=True)`` (the fake endpoint's Plus answers).
- ``STRIDE``: for :func:`derive_seed` only, ``seed * 1_000_003 + index`` (a task's dialogue seed).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import numpy as np

RAW = "raw"
COLON = "colon"
LINES = "lines"
SORTED_JSON = "sorted_json"
STRIDE = "stride"
_STRIDE = 1_000_003

# The encoders json.dumps would build afresh for these options on every call (as json keeps one
# for its defaults): a history seeds some fifteen streams. An encoder holds only its options.
_PATH_JSON = json.JSONEncoder(ensure_ascii=False, default=str)
_SORTED_JSON = json.JSONEncoder(sort_keys=True)


def stream_key(*path: Any, legacy: str | None = None) -> Any:
    """What a stream is seeded from: the path as JSON text, or its legacy form."""
    if legacy is None:
        return _PATH_JSON.encode(list(path))
    if legacy == RAW:
        if len(path) != 1:
            raise ValueError(f"legacy={RAW!r} takes one part, got {len(path)}")
        return path[0]
    if legacy == COLON:
        return ":".join(map(str, path))
    if legacy == LINES:
        return "\n".join(map(str, path))
    if legacy == SORTED_JSON:
        return _SORTED_JSON.encode(list(path))
    raise ValueError(f"unknown legacy seeding {legacy!r}")


def rng(*path: Any, legacy: str | None = None) -> random.Random:
    """The random stream of ``path`` (its first part is usually the seed)."""
    return random.Random(stream_key(*path, legacy=legacy))


def np_rng(*path: Any, legacy: str | None = None) -> np.random.Generator:
    """The numpy stream of ``path``; ``legacy=RAW`` seeds it with the one int part as it is."""
    if legacy == RAW:
        return np.random.default_rng(stream_key(*path, legacy=RAW))
    return np.random.default_rng(int(digest(*path, legacy=legacy), 16))


def digest(*path: Any, legacy: str | None = None) -> str:
    """The SHA-256 (hex) of the path's key: a stable name to seed a stream or a file from."""
    key = stream_key(*path, legacy=legacy)
    return hashlib.sha256(str(key).encode("utf-8")).hexdigest()


def derive_seed(*path: Any, legacy: str | None = None) -> int:
    """A 32-bit seed for ``path`` (from its digest), for code that takes an int seed."""
    if legacy == STRIDE:
        seed, index = path
        return seed * _STRIDE + index
    return int(digest(*path, legacy=legacy)[:8], 16)
