"""``_word_in`` (a substring test before the whole-word pattern) answers as the pattern alone."""

from __future__ import annotations

import random
import re

from verifier.trace import _word_in

PIECES = ["sofia", "okafor", "sofia okafor", "j.", "o'neil", "ana-maria", "é", "ß", "_", "٣", "5", "q2", " ", "  ",
          ".", ",", "-", "@", "sofia@", "x", "soﬁa", "İ", "ı", "\n", "a"]


def _plain(words: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None


def test_a_word_is_found_as_the_whole_word_pattern_finds_it():
    rng = random.Random(4)
    found = 0
    for _ in range(20000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8)))
        words = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 2)))
        if rng.random() < 0.3 and text:  # a piece of the text itself, often found
            start = rng.randrange(len(text))
            words = text[start:start + rng.randint(0, 12)]
        assert _word_in(words, text) == _plain(words, text), (words, text)
        found += _plain(words, text)
    assert 2000 < found < 18000
