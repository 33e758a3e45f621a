"""Plain-word typos of a seed instruction, corrected for the chat.

A user who wrote "seperate" in a ticket would say "separate" in conversation; only the file
names and other specifics must stay exactly as the criteria need them. A word is corrected only
when the correction is beyond doubt: a lower-case word of five letters or more, unknown to the
English word list (pyspellchecker's), with exactly one known word one edit away, and that word in
common use. Anything inside a specific (``generators.specifics``) is left alone.
"""

from __future__ import annotations

import re
from functools import lru_cache

from generators.specifics import locate_specifics

MIN_LETTERS = 5
MIN_FREQUENCY = 1e-6  # share of running text: rarer words are not trusted as the intended one
_WORD = re.compile(r"(?<![\w.@/-])[a-z]{%d,}(?![\w.@/-])" % MIN_LETTERS)


@lru_cache(maxsize=1)
def _checker():
    from spellchecker import SpellChecker

    return SpellChecker(distance=1)


@lru_cache(maxsize=4096)
def correction(word: str) -> str | None:
    """The one common word ``word`` is a typo of, else ``None``."""
    checker = _checker()
    if word in checker:
        return None
    candidates = checker.candidates(word) or set()
    candidates.discard(word)
    if len(candidates) != 1:
        return None
    (best,) = candidates
    return best if checker.word_usage_frequency(best) >= MIN_FREQUENCY else None


def fix_typos(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with its plain-word typos corrected, and the ``(typo, correction)`` pairs."""
    protected = [(s, e) for s, e, _ in locate_specifics(text)]
    out, fixed, pos = [], [], 0
    for match in _WORD.finditer(text):
        if any(s < match.end() and match.start() < e for s, e in protected):
            continue
        better = correction(match.group(0))
        if better is None:
            continue
        out.append(text[pos:match.start()])
        out.append(better)
        fixed.append((match.group(0), better))
        pos = match.end()
    out.append(text[pos:])
    return "".join(out), fixed


def word_frequency(word: str) -> float:
    """How common a lower-case English word is (its share of running text; 0 if unknown)."""
    return _checker().word_usage_frequency(word)
