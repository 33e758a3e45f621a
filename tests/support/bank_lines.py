"""What a compiled dialogue-bank line reads as, for tests that find a bank's lines in built histories."""

from __future__ import annotations

import re


def said_as(line) -> re.Pattern[str]:
    """A pattern of what ``line`` (a compiled thread-bank line) reads as, any slot filled, case aside."""
    return re.compile("".join(re.escape(p) if isinstance(p, str) else ".+" for p in line.parts) + "$", re.I)
