"""The amounts in words are read in the text ``_figures_and_counts`` kept (its dates, clock times and
thousands separators out), as reading the text afresh reads them, long texts and kept ones alike."""

from __future__ import annotations

import random

from office_env.evaluation import keywords as kw

PIECES = ["twenty-four thousand", "two hundred and two point one five", "twelve hundred", "ninety-nine",
          "one", "seven", "thirty, zero seventy", "nine o five", "a million", "forty-one thousand six hundred",
          "1,250", "12.500,50", "2024-05-31", "31/05/2024", "may 31", "31st may 2024", "14:30", "2 pm",
          "4,200 eur", "€225", "q2", "ec-327", "total", "due", "on friday", "the", "and", ",", ".", "\n"]


def _read_afresh(text: str) -> frozenset[float]:
    """``_worded_amounts`` as first written: every pass made again on the text."""
    if not kw._spells_number(kw._figures_only(kw.without_thousands(text))):
        return frozenset()
    worded = kw._figures_only(kw.without_thousands(kw.words_as_digits(kw._figures_only(kw.without_thousands(text)))))
    return frozenset(v for v in map(float, kw._TEXT_NUMBER_RE.findall(worded)) if v >= 100)


def test_amounts_in_words_are_those_a_fresh_reading_finds():
    rng = random.Random(11)
    texts = [kw.normalize(" ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))) for _ in range(1500)]
    long_text = kw.normalize(" ".join(rng.choice(PIECES) for _ in range(20000)))
    assert len(long_text) > kw.MAX_KEPT_HAYSTACK_CHARS  # read afresh at each call, never kept
    texts.append(long_text)
    spelled = 0
    for text in texts + texts[::7]:  # some asked again: the kept answers
        expected = _read_afresh(text)
        plain = kw._figures_and_counts(text)[1]
        assert plain is None or plain == kw._figures_only(kw.without_thousands(text))
        spelled += plain is not None
        assert kw._worded_amounts(text) == expected, text
        assert kw._worded_amounts.__wrapped__(text) == expected, text
        for value in (100.0, 202.15, 1200.0, 24000.0, 41600.0, 30070.0, 905.0, 1e6, 2024.0, 4200.0, 99.0, 7.0):
            found = value in kw._figures_and_counts(text)[0] or value in expected
            assert kw._has_number(text, (value,), value >= 100) == found, (text, value)
    assert 300 < spelled < len(texts)
