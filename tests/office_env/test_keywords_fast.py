"""The text patterns of ``office_env.evaluation.keywords`` are written for speed (what they must
match first, the look behind after it): each finds exactly what its plain form finds."""

from __future__ import annotations

import random
import re

import pytest

import office_env.evaluation.keywords as kw
from office_env.evaluation import written_dates

MONTH = (r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(?:(?<=jan)uary|(?<=feb)ruary|(?<=mar)ch|(?<=apr)il"
         r"|(?<=jun)e|(?<=jul)y|(?<=aug)ust|(?<=sep)t(?:ember)?|(?<=oct)ober|(?<=nov)ember|(?<=dec)ember)?\.?(?![a-z])")
PLAIN = {  # the patterns as first written: a look behind, then what they match
    "_THOUSANDS_RE": r"(?<=\d),(?=\d{3}(?!\d))",
    "_TEXT_NUMBER_RE": r"(?<![\d.])\d+(?:\.\d+)?(?![\d])",
    "_TEXT_CLOCK_RE": r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d])(?!\s?[ap]\.?m\b)",
    "_TEXT_12H_RE": r"(?<![\d:])(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\b",
    "_TEXT_DAY_MONTH_RE": rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?{MONTH},?\s(\d{{4}})(?![\d.,]\d)(?!\d)",
    "_TEXT_MONTH_DAY_RE": rf"\b{MONTH}\s(\d{{1,2}})(?:st|nd|rd|th)?,?\s(\d{{4}})(?![\d.,]\d)(?!\d)",
    "_TEXT_ISO_DATE_RE": r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)",
    "_TEXT_NUMERIC_DATE_RE": r"(?<![\d./-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?![\d./-]\d|\d)",
    "_CONTINENTAL_RE": r"(?<![\d.,])(\d{1,3}(?:\.\d{3})+),(\d{1,2})(?![\d.,]\d|\d)",
    "_ANY_CLOCK_RE": r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d])",
}
SPELLED = re.compile(rf"(?<![\w-])(?:({'|'.join(kw._TENS)})(?:[- ]({'|'.join(kw._UNITS[1:10])}))?|({'|'.join(kw._UNITS)}))"
                     r"(?![\w-])", re.IGNORECASE)
PIECES = ["1", "4", "12", "31", "2024", "05", "2025-03-31", "18/12/2024", "12.18.24", "1.200,50", "12,500", "3.5",
          "14:00", "9:30", "10:00:15", "-", "/", ".", ",", ":", "march", "mar", "mar.", "Mar", "sept", "may", "dec",
          "december", "marketing", "wednesday", "wed", "tues", "the", "of", "st", "th", "nd", "pm", "p.m.", "am", "a",
          "noon", "twenty", "twenty-one", "one", "five", "ſeven", "Ten", "NINETY", "x", "ab", "é", "_", "\n", "\t",
          "18 december 2024", "dec. 18th, 2024", "3rd of may 2025", "may 12 2025", "March 4, 2024", "wed 18th of dec",
          "sept 3rd", "4:30 pm", "12 may be", "1.200.300,5"]


def texts(count: int = 4000, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = [rng.choice(PIECES) for _ in range(rng.randint(1, 24))]
        out.append("".join(w + rng.choice(["", " ", " ", "  ", ", ", "-"]) for w in words))
    return out + [kw.normalize(t) for t in out[:1000]]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return texts()


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_each_fast_pattern_finds_what_its_plain_form_finds(name, corpus):
    fast, plain = getattr(kw, name), re.compile(PLAIN[name])
    hits = 0
    for text in corpus:
        found = [m.span() + m.groups() for m in fast.finditer(text)]
        assert found == [m.span() + m.groups() for m in plain.finditer(text)], (name, text)
        hits += bool(found)
    assert hits > 50, f"{name}: the corpus barely exercises it ({hits})"


def test_spelled_numbers_and_the_month_words_match_their_plain_forms(corpus):
    assert kw._MONTH == MONTH
    for text in corpus:
        assert [m.span() + m.groups() for m in kw._SPELLED_RE.finditer(text)] == \
            [m.span() + m.groups() for m in SPELLED.finditer(text)], text


def _plain_figures(text: str) -> str:
    for pattern, year in ((PLAIN["_TEXT_ISO_DATE_RE"], 1), (PLAIN["_TEXT_DAY_MONTH_RE"], 3),
                          (PLAIN["_TEXT_MONTH_DAY_RE"], 3), (PLAIN["_TEXT_NUMERIC_DATE_RE"], 4)):
        text = re.sub(pattern, lambda m, g=year: f" {m.group(g)} ", text)
    sure = lambda m: " " if kw._SURE_YEARLESS_RE.search(m.group(0)) else m.group(0)
    text = kw._TEXT_MONTH_DAY_NY_RE.sub(sure, kw._TEXT_DAY_MONTH_NY_RE.sub(sure, text))
    return re.sub(PLAIN["_TEXT_12H_RE"], " ", re.sub(PLAIN["_ANY_CLOCK_RE"], " ", text))


def _every_pass_yearless(text: str) -> set[tuple[int, int, int]]:
    """``keywords._yearless_in`` with both year-less passes always run."""
    found = set()
    for pattern in (kw._TEXT_DAY_MONTH_NY_RE, kw._TEXT_MONTH_DAY_NY_RE):
        for match in pattern.finditer(text):
            weekday = match.group(1)
            found |= {(m, d, kw._WEEKDAYS.index(weekday) if weekday else -1)
                      for _, m, d in written_dates.read(text[match.start(2):match.end()], None)}
    return found | {(m, d, -1) for m, d in written_dates.numeric_yearless(text, None)}


def test_figures_and_year_less_dates_are_read_as_before(corpus):
    """The year-less day-month pass is skipped where no day stands before a month's name: the figures
    and dates read are those of every pass."""
    skipped = 0
    for text in corpus:
        lower = text.lower()
        assert kw._figures_only(lower) == _plain_figures(lower), text
        assert kw._yearless_in(lower) == _every_pass_yearless(lower), text
        skipped += kw._DAY_BEFORE_MONTH_RE.search(lower) is None
    assert 100 < skipped < len(corpus) - 100


def _every_pass(plain: str) -> str:
    """``_figures_only`` with every pattern run on every text (as first written)."""
    for pattern, year in ((kw._TEXT_ISO_DATE_RE, 1), (kw._TEXT_DAY_MONTH_RE, 3), (kw._TEXT_MONTH_DAY_RE, 3),
                          (kw._TEXT_NUMERIC_DATE_RE, 4)):
        plain = pattern.sub(lambda m, g=year: f" {m.group(g)} ", plain)
    sure = lambda m: " " if kw._SURE_YEARLESS_RE.search(m.group(0)) else m.group(0)  # noqa: E731
    plain = kw._TEXT_DAY_MONTH_NY_RE.sub(sure, plain)
    plain = kw._TEXT_MONTH_DAY_NY_RE.sub(sure, plain)
    return kw._TEXT_12H_RE.sub(" ", kw._ANY_CLOCK_RE.sub(" ", plain))


def test_a_text_keeps_the_same_figures_when_passes_that_cannot_match_are_skipped(corpus):
    """The date and clock passes run only on texts holding what their matches hold: every text of
    the corpus, as written and lower-cased, gives what running every pass gives."""
    changed = 0
    for text in corpus + [t.lower() for t in corpus]:
        plain = kw.without_thousands(text)
        assert kw._figures_only(plain) == _every_pass(plain), text
        changed += _every_pass(plain) != plain
    assert changed > 1000


def _every_pass_date_spans(text: str, day_first: bool | None) -> list:
    """``keywords.date_spans`` with the whole year-less patterns (a weekday in front tried at every word)."""
    spans = [(m.start(), m.end(), frozenset({(int(m.group(1)), int(m.group(2)), int(m.group(3)))}))
             for m in kw._TEXT_ISO_DATE_RE.finditer(text)]
    for pattern in (kw._TEXT_DAY_MONTH_RE, kw._TEXT_MONTH_DAY_RE, kw._TEXT_NUMERIC_DATE_RE):
        spans += [(m.start(), m.end(), written_dates.read(m.group(0), day_first)) for m in pattern.finditer(text)]
    taken = [(a, b) for a, b, _ in spans]
    for pattern in (kw._TEXT_DAY_MONTH_NY_RE, kw._TEXT_MONTH_DAY_NY_RE, written_dates.YEARLESS_NUMERIC_RE):
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            start = m.start(2) if pattern is not written_dates.YEARLESS_NUMERIC_RE else m.start()
            days = frozenset((0, mo, d) for _, mo, d in written_dates.read(text[start:m.end()], day_first))
            if days:
                spans.append((m.start(), m.end(), days))
    return sorted(s for s in spans if s[2])


def test_year_less_dates_found_from_their_day_or_month_are_those_the_whole_patterns_find(corpus):
    """The year-less passes start at a date's day or month and take the weekday that stands right
    before it: the spans, days and weekdays read are those of the whole patterns, a weekday in front."""
    with_weekday = 0
    for text in corpus + [f"{w} {t}" for w, t in zip(["wed", "monday,", "tues.", "sat the"] * 500, corpus)]:
        lower = text.lower()
        for day_first in (None, True):
            assert kw.date_spans(lower, day_first) == _every_pass_date_spans(lower, day_first), lower
        with_weekday += any(w != -1 for _, _, w in kw._yearless_in(lower))
    assert with_weekday > 100


def test_a_keywords_kind_is_kept_by_its_text_and_read_as_before(corpus):
    """``_kind`` keeps what it reads of a keyword by the keyword's text: the same answer as reading
    it afresh, for keywords that Python holds equal but write apart (1, 1.0, True, "1")."""
    keywords = [1, 1.0, True, False, 0, -0.0, "1", " 1 ", "1,200", "1200.50", "225 EUR", "eur 225", "13:00", "9:00",
                "09:00", "2024-12-18", "Q2", "EC-523", "Noon", None, 12500, 1e20, "x" * 300, *corpus[:400]]
    kw._kind_of.cache_clear()
    first = [kw._kind(k) for k in keywords]
    again = [kw._kind(k) for k in reversed(keywords)][::-1]
    assert first == again == [kw._kind_of.__wrapped__(str(k)) for k in keywords]
    assert [kind for kind, _ in first[:5]] == ["number", "number", "text", "text", "number"]


def test_what_keywords_say_together_is_kept_by_their_texts_and_read_as_before(corpus):
    """``_together`` keeps what a list of keywords says together by the keywords' texts: the same
    answer as reading it afresh, in any order of asking, for lists that differ by one keyword, by
    its type (1 and "1"), or only where their keywords are split ("July 13:00" is one keyword)."""
    pieces = ["July", "jul.", "Sept", "may", "marketing", "13:00", "9:00", "9 am", "noon", "2024-07-15", "15", 15,
              15.0, "1", 1, True, "July 13:00", "Q2", "225 EUR", "x" * 600, *corpus[:60]]
    rng = random.Random(5)
    lists = [[rng.choice(pieces) for _ in range(rng.randint(1, 5))] for _ in range(1500)]
    lists += [["July", "13:00"], ["July 13:00"], ["13:00", "14:00"], ["13:00"], [13], ["x" * 600] * 3]
    kw._kept_together.cache_clear()
    first = [kw._together(k) for k in lists]
    again = [kw._together(k) for k in reversed(lists)][::-1]
    afresh = [(frozenset(m for m in map(kw._month_keyword, k) if m is not None),
               sum(kw._kind(x)[0] == "clock" for x in k) == 1) for k in lists]
    assert first == again == afresh
    assert sum(bool(months) for months, _ in afresh) > 100 and sum(one for _, one in afresh) > 50
    assert kw._together(["July", "13:00"]) == (frozenset({7}), True)
    assert kw._together(["July 13:00"]) == (frozenset(), False)


@pytest.mark.parametrize(("text", "numbers"), [
    ("we paid \u017feven invoices", [7]),            # long s, which a case-blind pattern takes for "s"
    ("\u017fIXTY-FIVE boxes", [65]),
    ("\u0131tems: n\u0131ne and e\u0130ght", [9, 8]),  # dotless i and dotted capital I
    ("\u212aeep twenty-\u017fix", [26]),              # Kelvin sign: "k" to the pattern, no number word
])
def test_a_number_word_in_letters_a_case_blind_match_takes_for_ascii_is_read_not_a_crash(text, numbers):
    """An agent's mail or file is a stranger's text: the pattern for number words matches such
    letters case-blind, so reading the word must take them as their ASCII letter (it raised before)."""
    assert kw.spelled_numbers(text) == numbers
    assert kw.missing(text, [str(numbers[0])]) == []
    assert kw.missing(text, ["99"]) == ["99"]


def test_a_date_is_named_without_its_year_as_reading_every_year_less_date_says():
    # has_date skips dateutil for an ASCII text without the day's figures: every year-less date's day
    # is one of its figures or dateutil's default day ("dec 45" is December 2045, day 1); the patterns
    # and dateutil read other digits too ("dec ١٨th" is 18 December), so such a text is read
    from datetime import date, timedelta

    forms = ["{d} {m}", "{d}th of {m}", "{m} {d}", "{m} the {d}", "{w} {d} {m}", "{w}, {m} {d}th", "{d}/{n}",
             "{n}/{d}", "on {d} {m}.", "{d} {m} 2025", "{m} {d}, 2024", "{m} {d} and {n} {m}"]
    texts = [f.format(d=d, m=m, n=n, w=w) for f in forms for d in (1, 5, 12, 18, 31, 45, 99, "05", "01")
             for m in ("jan", "feb.", "march", "sept", "may") for n in (1, 12, 13) for w in ("tuesday", "fri")]
    texts += [t.translate(str.maketrans("0123456789", digits)) for t in texts[::13]
              for digits in ("\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669",
                             "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19")]
    texts += ["due dec \u0661\u0668th", "due \u0661\u0668/\u0661\u0662"]
    days = [(date(2025, 1, 1) + timedelta(days=i)).timetuple()[:3] for i in range(0, 365, 3)]
    days += [(2024, 2, 29), (2025, 2, 29), (2025, 5, 1), (2025, 1, 12), (2025, 9, 18)]
    for text in texts:
        for day_first in (None, True, False):
            hay = kw.Haystack(text, day_first)
            for day in days:
                slow = day in hay.dates() or kw._names_yearless(day, hay.yearless())
                assert hay.has_date(day) == slow, (text, day_first, day)


def test_the_quick_looks_for_a_number_word_and_noon_answer_as_their_patterns(corpus):
    """``_spells_number`` and ``_says_noon`` look for a piece of the words first: they answer as the
    patterns do, for every number word in any case, and for letters a case-blind pattern takes for
    ASCII ones ("ſeven", "\u212aelvin"), which skip the quick look."""
    words = [*kw._UNITS, *kw._TENS]
    assert all(kw._NUMBER_WORD_PIECE_RE.search(w) for w in words)  # the pieces cover every word
    odd = ["\u017feven", "\u017fIXTY-FIVE", "n\u0131ne", "e\u0130ght", "\u212aeep twenty-\u017fix", "ZERO",
           "Eleven", "twelve-", "-ten", "tens", "often", "noon", "afternoon", "12 noon", "Midday", "midnight.",
           "mid-day", "é ten"]
    rng = random.Random(5)
    mixed = [" ".join(rng.choice([*words, *odd, *PIECES, w.upper(), w.title()]) for _ in range(rng.randint(1, 6)))
             for w in words * 40]
    spelled = 0
    for text in [*corpus, *odd, *words, *mixed, *(t.lower() for t in mixed)]:
        assert kw._spells_number(text) == (kw._SPELLED_RE.search(text) is not None), text
        assert kw._says_noon(text) == (kw._TEXT_NOON_RE.search(text) is not None), text
        spelled += kw._spells_number(text)
    assert 1000 < spelled


def test_a_pattern_compiled_for_ascii_reads_an_ascii_text_as_written(corpus):
    """Each class a pattern may hold answers alike for every ASCII character in both compilations but
    for the four separators Unicode's white space holds (which ``_reads_as_ascii`` refuses), and so do
    case-blind letters; the figures read of a text are the same whichever patterns read them."""
    ascii_chars = [chr(c) for c in range(128)]
    differ = {c for c in ascii_chars for cls in (r"\d", r"\w", r"\s", r"\b")
              if bool(re.search(cls, c)) != bool(re.search(cls, c, re.ASCII))}
    assert differ == {"\x1c", "\x1d", "\x1e", "\x1f"}
    assert not any(kw._reads_as_ascii(f"a{c}b") for c in differ)
    assert all(bool(re.fullmatch(re.escape(a), b, re.I)) == bool(re.fullmatch(re.escape(a), b, re.I | re.ASCII))
               for a in ascii_chars for b in ascii_chars)
    as_written, for_ascii = kw._figure_patterns(False), kw._figure_patterns(True)
    assert as_written == kw._AS_WRITTEN and len(as_written) == len(for_ascii)
    odd = ["12\u2003may 2024", "\u0661\u0662:30 pm", "twelve\x1c5", "3\x1fmar 2025", "1,200\u00a0eur", "caf\u00e9 9:30"]
    ascii_read = 0
    for text in [*corpus, *(t.lower() for t in corpus), *odd, *(o + " " + t for o in odd for t in corpus[:200])]:
        for fast, plain in zip(for_ascii, as_written):
            if kw._reads_as_ascii(text):
                assert [m.span() + m.groups() for m in fast.finditer(text)] == \
                    [m.span() + m.groups() for m in plain.finditer(text)], (plain.pattern, text)
        plain = kw._THOUSANDS_RE.sub("", kw._CONTINENTAL_RE.sub(lambda m: f"{m.group(1).replace('.', '')}.{m.group(2)}",
                                                                 text))
        assert kw.without_thousands(text) == plain, text
        assert kw._figures_only(plain) == _every_pass(plain), text
        ascii_read += kw._reads_as_ascii(text)
    assert 1000 < ascii_read


def _every_clock_pass(text: str) -> list:
    """``keywords._clock_spans`` with every pattern run on every text (as first written)."""
    spans = [(m.start(), m.end(), (int(m.group(1)), int(m.group(2)))) for m in kw._TEXT_CLOCK_RE.finditer(text)]
    for m in kw._TEXT_12H_RE.finditer(text):
        h, minute, half = m.group(1), m.group(2), m.group(3)
        if 1 <= int(h) <= 12:
            spans.append((m.start(), m.end(), (int(h) % 12 + (12 if half == "p" else 0), int(minute or 0))))
    spans += [(m.start(), m.end(), (0 if m.group(1) == "midnight" else 12, 0)) for m in kw._TEXT_NOON_RE.finditer(text)]
    for m in [*kw._DOTTED_CLOCK_RE.finditer(text), *kw._DATED_DOTTED_RE.finditer(text)]:
        spans.append((m.start(1), m.end(), (int(m.group(1)), int(m.group(2)))))
    for m in kw._DOTTED_RANGE_RE.finditer(text):
        spans += [(m.start(1), m.end(2), (int(m.group(1)), int(m.group(2)))),
                  (m.start(3), m.end(4), (int(m.group(3)), int(m.group(4))))]
    for m in kw._SPOKEN_CLOCK_RE.finditer(text):
        spans += [(m.start(), m.end(), clock) for clock in kw._spoken_clock(m)]
    for m in kw._BARE_START_RE.finditer(text):
        first, second = int(m.group(1)), int(m.group(3))
        if 1 <= first <= 12 and 1 <= second <= 12:
            pm = (m.group(5) == "p") != (first > second and first != 12)
            spans.append((m.start(1), m.end(2) if m.group(2) else m.end(1),
                          (first % 12 + (12 if pm else 0), int(m.group(2)[1:]) if m.group(2) else 0)))
    return sorted(set(spans))


CLOCK_PIECES = ["at 12.00", "from 14.30", "to", "until", "10.00 to 15.00", "13.00-13.30", "2025-04-03 13.00", "2024,",
                "9.30 eur", "1-2 pm", "11-1 pm", "10:30 to 11 am", "quarter past two", "half past ten", "ten to six",
                "three o'clock", "eleven in the morning", "seven in the evening", "twelve at night", "two claims",
                "noon", "12 noon", "midday", "midnight", "in the", "past", "a.m.", "p.m", "4 pm", "16:45", "9am", "x"]


def test_clock_times_are_read_as_every_pass_reads_them(corpus):
    """``_clock_spans`` runs a pattern only on a text holding what its matches hold (``_CLOCK_NEEDS``):
    the spans found are those every pattern run on every text finds."""
    rng = random.Random(3)
    texts = [" ".join(rng.choice(CLOCK_PIECES + PIECES) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    found = skipped = 0
    for text in [*corpus, *texts, *CLOCK_PIECES]:
        lower = text.lower()
        assert kw._clock_spans(lower) == _every_clock_pass(lower), lower
        found += bool(kw._clock_spans(lower))
        skipped += not any(w in lower for w in kw._CLOCK_NEEDS["spoken"])
    assert found > 1000 and skipped > 100


def test_dates_are_read_as_every_pass_reads_them(corpus):
    """The date passes run only where a text holds what their matches hold, each compiled for the
    text (``_dated_passes``, ``_yearless_passes``): the dates read are those of every pass as written."""
    rng = random.Random(8)
    texts = [" ".join(rng.choice(PIECES + ["21/10", "10/21", "5/5", "caf\u00e9", "\u0661\u0662/10", "1/2/3"])
                      for _ in range(rng.randint(1, 10))) for _ in range(2000)]
    numeric = 0
    for text in [*corpus, *texts]:
        lower = text.lower()
        for day_first in (None, False):
            every = {(int(y), int(m), int(d)) for y, m, d in kw._TEXT_ISO_DATE_RE.findall(lower)}
            for pattern in (kw._TEXT_DAY_MONTH_RE, kw._TEXT_MONTH_DAY_RE, kw._TEXT_NUMERIC_DATE_RE):
                for match in pattern.finditer(lower):
                    every |= written_dates.read(match.group(0), day_first)
            assert kw._dates_in(lower, day_first) == every, lower
            slashed = {(mo, d) for m in written_dates.YEARLESS_NUMERIC_RE.finditer(lower)
                       for _, mo, d in written_dates.read(m.group(0), day_first)}
            assert written_dates.numeric_yearless(lower, day_first) == slashed, lower
            numeric += bool(slashed)
    assert numeric > 100


def test_the_dates_kept_of_a_text_are_those_read_afresh_for_its_order(corpus):
    """``date_spans`` keeps the latest texts' dates by text and order of a numeric date: each answer
    is the one read afresh, whatever was asked before, and a caller that changes it changes no other's."""
    kw._kept_date_spans.cache_clear()
    texts = [*corpus[:600], "04/05/2025", "5/4", "12.18.24", "18/12"]
    rng = random.Random(2)
    asked = [(t.lower(), rng.choice([None, True, False])) for t in texts * 2]
    rng.shuffle(asked)
    differ = 0
    for text, day_first in asked:
        got = kw.date_spans(text, day_first)
        assert got == kw._date_spans(text, day_first), (text, day_first)
        got.append((0, 0, frozenset()))  # the caller's own list
        differ += kw._date_spans(text, True) != kw._date_spans(text, False)
    assert differ > 0 and kw._kept_date_spans.cache_info().hits > 30
    for text in ("04/05/2025", "5/4"):  # kept for one order, asked for the others
        assert [kw.date_spans(text, d) for d in (True, False, None)] == \
            [kw._date_spans(text, d) for d in (True, False, None)]
    long = "on 04/05/2025 " * (kw.MAX_KEPT_SPANS_CHARS // 14 + 1)
    assert kw.date_spans(long, True) == kw._date_spans(long, True) != kw.date_spans(long, False)


CLOCK_PLAIN = {  # the clock patterns that start at a digit, as first written: a look behind, then what they match
    "_DATED_DOTTED_RE": r"(?<![\d.])(?:\d{4}-\d{2}-\d{2}|(?:19|20)\d{2}),?\s+(?:at\s+)?([01]?\d|2[0-3])\.([0-5]\d)"
                        + kw._NOT_MONEY,
    "_DOTTED_RANGE_RE": r"(?<![\d.,])([01]?\d|2[0-3])\.([0-5]\d)\s?(?:-|–|to|until|till)\s?([01]?\d|2[0-3])\.([0-5]\d)"
                        + kw._NOT_MONEY,
    "_BARE_START_RE": r"(?<![\d:])(\d{1,2})(:\d{2})?(?!\s?[ap]\.?m\b)\s*(?:-|–|to)\s*(\d{1,2})(:\d{2})?\s?([ap])\.?m\b",
}


@pytest.mark.parametrize("name", sorted(CLOCK_PLAIN))
def test_each_fast_clock_pattern_finds_what_its_plain_form_finds(name, corpus):
    fast, plain = getattr(kw, name), re.compile(CLOCK_PLAIN[name])
    rng = random.Random(6)
    hours = ["0", "1", "2", "3", "9", "09", "10", "12", "19", "20", "23", "24", "29", "2025", "1999", "2024-07-04", ".",
             ",", ":", ".30", ".00", ".5", ".75", ":30", "-", "–", " to ", " until ", "eur", "%", "pm", " am", "a.m.",
             ", at ", "1.2", "x", "10.00", "13.30", "9.45", "23.59", "24.00", "07.15", "2025-04-03 ", "1999 ", "2100 ",
             "1899 ", "3020 ",
             "10.00 to 15.00", "13.00-13.30", "9.30–10.45", "12.00 until 1.30"]
    texts = ["".join(rng.choice(hours + [" ", " "]) for _ in range(rng.randint(2, 14))) for _ in range(20000)]
    hits = 0
    for text in [*corpus, *texts, *(t.lower() for t in CLOCK_PIECES)]:
        found = [m.span() + m.groups() for m in fast.finditer(text)]
        assert found == [m.span() + m.groups() for m in plain.finditer(text)], (name, text)
        hits += bool(found)
    assert hits > 200, f"{name}: the corpus barely exercises it ({hits})"


NUMBER_KEYWORDS = [["28"], ["4068", "28", "25"], ["25.0"], ["2992.5"], ["6.43", "342"], ["0"], ["0.5"], ["0.05"],
                   ["41,600"], ["29254.5"], ["100"], ["7", "1200.5"], ["0.30000000000000004"], ["12500"],
                   ["99999999999999999999"], ["1", "5"], ["300"], ["2024"], ["31", "July"], ["EC-327", "760.51"],
                   ["16", "14:00"], ["2025-06-02", "4"], ["225 EUR", "9"], ["1e5"], ["3"]]
FIGURES = ["28", "028", "28.0", "28.000", "2.8", "280", "0.5", "00.50", ".5", "05", "0.05", "6.430", "643", "2,992.50",
           "2.992,50", "29,254.50", "41.600", "41,600", "4,068", "0", "000", "0.0", "12.500,00", "125000", "1e5",
           "0.30000000000000004", "0.3", "0.299999999999999999999", "100000000000000000000", "99999999999999999999",
           "2992.4999999999999999999", "1234567890123456789", "٢٨", "２８", "𝟐𝟖", "2025-06-02", "02/06/2025", "4 june",
           "14:00", "2 pm", "july 31", "31st", "twenty-eight", "twenty eight", "ſeven", "one", "three hundred",
           "forty-one thousand six hundred", "seven", "one hundred",
           "twenty-nine thousand two hundred and fifty-four point five", "twelve hundred point five",
           "ninety-nine", "EC-327", "760.51 EUR", "€225", "nine"]


def test_a_text_whose_figures_write_none_of_the_numbers_is_passed_as_reading_it_would(corpus):
    """``Keywords._may_hold_number`` passes a text without reading its numbers only where reading
    them finds none of the keywords' (odd figures included: leading and trailing zeros, separators,
    digits of other scripts, figures longer than a float holds), and ``any_in`` answers as
    ``Haystack.has`` does for each keyword."""
    rng = random.Random(7)
    made = [" ".join(rng.choice([*FIGURES, *PIECES]) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    letters = [w for w in [*FIGURES, *PIECES, *kw._UNITS, *kw._TENS, "hundred", "thousand", "point", "and", "a",
                           "first", "twenty-", "-one", "Six"] if not re.search(r"\d", w)]
    spelled = [rng.choice(["", " ", "-", ", "]).join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
               for _ in range(3000)]
    passed = 0
    for keywords in NUMBER_KEYWORDS:
        prepared = kw.Keywords(keywords)
        for text in [*FIGURES, *made, *spelled, *corpus[::8]]:
            normal = kw.normalize(text)
            if prepared.numbers and not prepared._may_hold_number(normal):
                passed += 1
                assert prepared.numbers.isdisjoint(kw._numbers_in(normal)), (keywords, text)
            hay = kw.Haystack(text)
            assert prepared.any_in(text) == any(hay.has(k) for k in keywords), (keywords, text)
    assert 20000 < passed


def _numbers_read_at_once(text: str) -> frozenset[float]:
    """The numbers number keywords find in a normalized text, every part read in one go (figures,
    counts in words, amounts in words), as ``keywords._numbers_in`` was first written."""
    plain = kw._figures_only(kw.without_thousands(text))
    found = {float(n) for n in kw._TEXT_NUMBER_RE.findall(plain)}
    if SPELLED.search(plain):
        found |= {float(n) for n in kw.spelled_numbers(plain)} & kw._SPELLED_VALUES
        worded = kw._figures_only(kw.without_thousands(kw.words_as_digits(plain)))
        found |= {v for v in map(float, kw._TEXT_NUMBER_RE.findall(worded)) if v >= 100}
    return frozenset(found)


def test_a_number_is_found_as_reading_all_the_numbers_at_once_finds_it(corpus):
    """``_has_number`` reads the counts in words only where the figures hold none of the numbers asked
    about and one is a count, and the amounts in words only where the figures and counts hold none: it answers as reading every number of the text at once, whichever part
    is asked first, for numbers below a hundred (counts), above (amounts), and in sets of both."""
    rng = random.Random(9)
    letters = [w for w in [*FIGURES, *PIECES, *kw._UNITS, *kw._TENS, "hundred", "thousand", "point", "and", "a",
                           "first", "twenty-", "-one", "Six"] if not re.search(r"\d", w)]
    spelled = [rng.choice(["", " ", "-", ", "]).join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
               for _ in range(1500)]
    made = [" ".join(rng.choice([*FIGURES, *PIECES, *letters]) for _ in range(rng.randint(1, 10))) for _ in range(1500)]
    values = sorted({v for keywords in NUMBER_KEYWORDS for v in kw.Keywords(keywords).numbers}
                    | {2.0, 21.0, 99.0, 100.0, 300.0, 1200.5, 24000.0, 41600.0, 29254.5, 2024.0})
    worded = 0
    for text in [kw.normalize(t) for t in [*FIGURES, *spelled, *made, *corpus[::8]]]:
        kw._figures_and_plain.cache_clear()
        kw._counts.cache_clear()
        kw._worded_amounts.cache_clear()
        order = values if rng.random() < 0.5 else values[::-1]
        answers = {v: kw._has_number(text, (v,), v >= 100) for v in order}
        everything = _numbers_read_at_once(text)
        assert answers == {v: v in everything for v in values}, text
        assert kw._numbers_in(text) == everything, text
        for keywords in NUMBER_KEYWORDS:
            numbers = kw.Keywords(keywords).numbers
            assert kw._has_number(text, numbers, max(numbers, default=0) >= 100) == (not numbers.isdisjoint(everything))
        worded += any(v >= 100 and v in everything and v not in kw._figures_and_counts(text)[0] for v in values)
    assert worded > 50


def test_number_words_without_an_amount_word_write_no_figure_of_a_hundred_or_more():
    """``_AMOUNT_WORD_RE`` lets ``Keywords._may_hold_number`` pass a text of number words without
    text2num: where it finds no scale word, decimal point or zero, text2num writes no figure of a
    hundred or more, however the words are joined ("thirty,zero seventy" is 30070, with a zero)."""
    rng = random.Random(3)
    words = [*kw._UNITS, *kw._TENS, "o", "oh", "nought", "nil", "a", "and", "first", "twentieth", "half", "quarter",
             "dozen", "minus", "twenty-one", "ninety-nine", "score", "couple", "x", "the", "twice", "ninth", "hundred",
             "thousand", "million", "point", "o'clock"]
    joins = [" ", " ", " ", "-", ", ", ",", ".", ". ", "/", ":", " - ", "'"]
    quick = slow = 0
    for _ in range(20000):
        text = kw.normalize("".join(rng.choice(words) + rng.choice(joins) for _ in range(rng.randint(1, 9))))
        amounts = kw._worded_amounts.__wrapped__(text)
        if kw._AMOUNT_WORD_RE.search(text) is None:
            quick += 1
            assert not amounts, text
        else:
            slow += bool(amounts)
        for keywords in (["300"], ["30070", "2"], ["41,600"], ["1100", "7"]):
            prepared = kw.Keywords(keywords)
            if not prepared._may_hold_number(text):
                assert prepared.numbers.isdisjoint(kw._numbers_in(text)), (keywords, text)
    assert quick > 5000 and slow > 1000


def test_the_digits_of_a_number_are_those_every_figure_equal_to_it_writes():
    """A figure equal to a number writes its shortest decimal's digits in a row, zeros around them."""
    digits = kw._digits_of({28.0, 6.43, 0.5, 0.0, 100.0, 2992.5})
    assert sorted(digits or ()) == ["0", "05", "100", "28", "29925", "643"]
    assert kw._digits_of({1e20}) is None and kw._digits_of({1e-7}) is None and kw._digits_of({-1.0}) is None
