"""One way to turn a seed into a random stream: ``rng(seed, *path)``.

Every draw of a build comes from a stream named by the build's seed and the path of what it draws
for ("task", 12, "family", "sheet_total"), never from the global generator or the order jobs ran
in, so the same seed writes the same dataset byte for byte with any number of workers, and adding
a draw in one place moves no other. The path is written as JSON (str() for anything else), so
streams differ whenever any part of their path does.
"""

from __future__ import annotations

import json
import random
from typing import Any


def stream_key(*path: Any) -> str:
    """The text a stream is seeded from (also a stable digest input)."""
    return json.dumps(list(path), ensure_ascii=False, default=str)


def rng(*path: Any) -> random.Random:
    """The random stream of ``path`` (its first part is usually the seed)."""
    return random.Random(stream_key(*path))
