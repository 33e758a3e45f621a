"""A number is looked for in a text's figures, then in its counts in words only where it is a count,
then in its amounts in words: ``_has_number`` answers as reading every number of the text at once,
on texts of figures, number words, dates, clock times and letters and digits outside ASCII."""

from __future__ import annotations

import random

from office_env.evaluation import keywords as kw

PIECES = ["five", "twenty-one", "ninety-nine", "two", "one", "seven", "Six", "ſeven", "thirty", "-four",
          "twenty-four thousand", "two hundred and two point one five", "twelve hundred", "a million",
          "5", "21", "99", "1,250", "12.500,50", "202.15", "2024", "0.5", "007", "٣", "５", "21st", "2nd",
          "2024-05-31", "31/05/2024", "may 21", "21 march", "5 may 2024", "14:30", "2 pm", "9:05", "21:00",
          "€225", "q2", "ec-21", "İstanbul", "naïve", "total", "due", "on friday", "and", ",", ".", "\n", "—"]
VALUES = [2.0, 5.0, 6.0, 7.0, 21.0, 30.0, 99.0, 0.5, 100.0, 202.15, 1200.0, 1250.0, 2024.0, 24000.0, 1e6, 12500.5]


def _read_at_once(text: str) -> frozenset[float]:
    """Every number a number keyword finds in a normalized text, read in one go as first written."""
    plain = kw._figures_only(kw.without_thousands(text))
    found = {float(n) for n in kw._TEXT_NUMBER_RE.findall(plain)}
    if kw._SPELLED_RE.search(plain):
        found |= {float(n) for n in kw.spelled_numbers(plain)} & kw._SPELLED_VALUES
        worded = kw._figures_only(kw.without_thousands(kw.words_as_digits(plain)))
        found |= {v for v in map(float, kw._TEXT_NUMBER_RE.findall(worded)) if v >= 100}
    return frozenset(found)


def test_a_count_in_words_is_read_only_for_a_count_and_found_as_reading_everything_finds_it():
    rng = random.Random(5)
    counted = 0  # a count found in words only, not in the figures
    for _ in range(1200):
        text = kw.normalize(" ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14))))
        for clear in (kw._figures_and_plain, kw._counts, kw._worded_amounts):
            clear.cache_clear()  # type: ignore[attr-defined]  # remembered_text's
        everything = _read_at_once(text)
        for value in rng.sample(VALUES, len(VALUES)):  # in any order: what was read before is kept
            assert kw._has_number(text, (value,), value >= 100) == (value in everything), (text, value)
            counted += value in everything and value not in kw._figures_and_plain(text)[0] and value < 100
        numbers = set(rng.sample(VALUES, 3))
        assert kw._has_number(text, numbers, max(numbers) >= 100) == (not numbers.isdisjoint(everything)), text
        assert kw._figures_and_counts(text)[0] | kw._worded_amounts(text) == everything, text
        assert kw.Haystack(text).numbers() == everything, text
    assert counted > 300
