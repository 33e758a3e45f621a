"""Whether an output is mostly its sources copied out: a paste is not the answer a task asks for.

A look-up's answer is read, not worked out, so the right value is in the sources and a mail or a
document that pastes them carries it. A careful reader would still refuse that mail: it is the
sources, not the answer. :func:`line_keys` names each line of the sources by a short digest (the
criterion holds the digests, not the text); :func:`pasted_share` says how much of an output is made
of those lines, verbatim up to case, spacing and a leading label ("Content:", "Subject:").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable

MIN_WORDS = 4  # a shorter line (a greeting, a sign-off, a title) may be a source's and the answer's alike
PASTED_SHARE = 0.5  # an output whose words are at least this share of source lines is a paste
MIN_PASTED_LINES = 2  # one quoted line is a quotation, not a paste
KEY_CHARS = 12
_LABEL_RE = re.compile(r"^[a-z][\w ]{0,24}:\s+")


def _norm(line: str) -> str:
    return _LABEL_RE.sub("", " ".join(line.lower().split()))


def _key(norm: str) -> str:
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:KEY_CHARS]


def _lines(text: str) -> list[str]:
    return [n for line in text.splitlines() if len((n := _norm(line)).split()) >= MIN_WORDS]


def line_keys(texts: Iterable[str]) -> list[str]:
    """The sorted digests of every line of ``texts`` long enough to count (see ``MIN_WORDS``)."""
    return sorted({_key(line) for text in texts for line in _lines(text)})


def pasted_share(text: str, keys: Collection[str]) -> tuple[float, int]:
    """(share of ``text``'s words in lines whose digest is in ``keys``, how many such lines)."""
    total = len(text.split())
    pasted = [line for line in _lines(text) if _key(line) in keys]
    return (sum(len(line.split()) for line in pasted) / total if total else 0.0), len(pasted)


def is_paste(text: str, keys: Collection[str]) -> bool:
    """Whether ``text`` is mostly lines of the sources ``keys`` names (see the module docstring)."""
    share, lines = pasted_share(text, keys)
    return lines >= MIN_PASTED_LINES and share >= PASTED_SHARE
