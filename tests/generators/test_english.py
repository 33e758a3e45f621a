"""Written-English helpers for generated text."""

from __future__ import annotations

import random

import pytest

from generators import english
from generators.english import article, column_words, join_and, mid_sentence, possessive


@pytest.mark.parametrize("name, expected", [
    ("Marcus", "Marcus's"), ("Dana Reyes", "Dana Reyes's"), ("the team", "the team's"),
    ("Office supplies", "Office supplies'"), ("the boss", "the boss's"), ("", ""),
])
def test_possessive(name, expected):
    assert possessive(name) == expected


@pytest.mark.parametrize("phrase, expected", [
    ("invoice", "an"), ("unit price", "a"), ("hour", "an"), ("HR review", "an"), ("KPI", "a"),
    ("European office", "a"), ("order", "an"), ("budget", "a"), ("one-off fee", "a"), ("SLA", "an"),
])
def test_article(phrase, expected):
    assert article(phrase) == expected


def test_join_and():
    assert join_and([]) == ""
    assert join_and(["a"]) == "a"
    assert join_and(["a", "b"]) == "a and b"
    assert join_and(["a", "b", "c"], "or") == "a, b or c"


@pytest.mark.parametrize("header, expected", [
    ("unit_price", "unit price"), ("TotalAmount", "total amount"), ("Q2 Sales", "Q2 sales"),
    ("VAT", "VAT"), ("Order-ID", "order ID"), ("Region", "region"),
])
def test_column_words(header, expected):
    assert column_words(header) == expected


def test_repeats_itself():
    from generators.english import repeats_itself

    assert repeats_itself("The Prism Dashboard dashboard is late.")
    assert repeats_itself("Enjoy the park, see you soon. See you soon.")
    assert not repeats_itself("Scores went 2 2 at half time, see you soon.")  # a number may repeat
    assert not repeats_itself("notes_may.docx and notes_june.docx are both in the folder")
    # a reaction's word said twice: its short word and its comment drawn apart
    assert repeats_itself("How nice, that's nice to hear.")
    assert repeats_itself("Oh, lovely, that sounds grand, by the sound of it.")
    assert repeats_itself("Good plan, that sounds like a good idea.")
    assert not repeats_itself("Oh, lovely, that sounds grand, I must say.")
    assert not repeats_itself("Love that, a lovely thing to hear.")  # two words, each said once


def test_repeats_itself_is_its_rule_written_out():
    """The checks that pass a line without reading it all (too short for a phrase said twice, no
    word of a reaction) give the rule's answer, over lines of repeated words, phrases, numbers and
    reaction words in any case."""
    def rule(text: str) -> bool:
        words = english._WORD.findall(text.lower())
        grams = list(zip(words, words[1:], words[2:]))
        reacted = [english._SAID_ONCE[w] for w in words if w in english._SAID_ONCE]
        return (any(a == b and not a.isdigit() for a, b in zip(words, words[1:])) or len(grams) != len(set(grams))
                or len(reacted) != len(set(reacted)))

    pieces = ["see", "you", "soon", "See", "the", "report", "2", "2", "Nice", "nice", "sounds", "sound", "Sounds",
              "lovely", "love", "loved", "great", "a", "notes_may.docx", "o'clock", ",", ".", "!", "-"]
    rng = random.Random(11)
    lines = [" ".join(rng.choice(pieces) for _ in range(rng.randrange(0, 9))) for _ in range(6000)]
    assert sum(map(rule, lines)) > 1000 and sum(not rule(t) for t in lines) > 1000
    for line in lines:
        assert english.repeats_itself.__wrapped__(line) == rule(line), line



@pytest.mark.parametrize("clause, inside", [
    ("The overtime total was sent round", "the overtime total was sent round"), ("A bill came in", "a bill came in"),
    ("Last month it was 40", "last month it was 40"), ("Priya asked about it", "Priya asked about it"),
    ("IT asked", "IT asked"), ("AN HR review", "AN HR review"), ("the rota", "the rota"),
])
def test_mid_sentence_drops_only_a_capital_that_marked_a_start(clause, inside):
    assert mid_sentence(clause) == inside


def test_bare_takes_off_what_the_closers_pattern_does():
    """The look at a line's last letters first, and the pattern tried only after the last character
    no closer can hold, give the same lines as the closers pattern alone, over lines built of
    fillers, words, closers, marks, spaces outside ASCII and case changes ("HONEſTLY" and "you
    Know" fold too)."""
    pieces = ["Well,", "ha", "honestly", "anyway", "Anyway!", "i guess", "I GUESS.", "fingers crossed", "touch wood!!",
              "aha", "though", "the report", "Priya", ",", ".", ";", "!", "...", "\n", " ", "HONE\u017fTLY", "ok", "haha",
              "you \u212anow", "\u0130 guess", "\u00a0", "\u2003", "\x1c", "caf\u00e9", "m", "-", "really?"]
    rng = random.Random(5)
    for _ in range(20000):
        line = "".join(rng.choice(pieces) + rng.choice(["", " ", "  "]) for _ in range(rng.randrange(1, 7)))
        expected = english._CLOSERS_RE.sub("", english._FILLERS_RE.sub("", line.strip()))
        assert english._bare(line) == expected, line


def test_capitalised_words_are_those_of_the_plain_pattern():
    """The capitalised-word pattern that opens with its capital finds what r"\b[A-Z][\w'-]*" does,
    in lines of names, acronyms, capitals inside words ("McAdams", "iPhone"), after digits,
    underscores, apostrophes, hyphens and letters outside ASCII ("ÉA", "ßB")."""
    import re

    plain = re.compile(r"\b[A-Z][\w'-]*")
    pieces = ["Priya", "McAdams", "iPhone", "the", "Q3", "3Q", "_X", "x_Y", "O'Neil", "'Tis", "-Ab", "a-B", "\u00c9A",
              "\u00dfB", "\u00b7C", "A", " ", ", ", ".", "\n", "I", "i", "9", "Z'"]
    rng = random.Random(13)
    for _ in range(5000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 8)))
        assert english._CAPITAL_RE.sub("\u00b7", line) == plain.sub("\u00b7", line), line


def test_near_and_repeat_keys_set_fillers_and_closers_aside():
    assert english.repeat_key("Well, the report is late, anyway.") == english.repeat_key("the report is late") == "the report is late"
    assert english.near_key("Ha, we heard Priya say the Atlas launch slipped, i guess!") == english.near_key("we heard Marco say the Delta launch slipped")


def test_fold_of_an_ascii_line_is_the_patterns():
    """The byte table that folds an ASCII line gives what the marks pattern and ``casefold`` do,
    over lines of every ASCII character (control characters that split as spaces too) and of
    letters outside ASCII (which take the pattern's way)."""
    import re

    marks = re.compile(r"[^\w\s\u00b7]")
    pieces = [chr(i) for i in range(128)] + ["the", "Report", "O'Neil", "\u00b7", "\u00c9A", "\u00df", "\u2019",
                                            "\u00a0"]
    rng = random.Random(17)
    for _ in range(6000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))
        assert english._fold(line) == " ".join(marks.sub(" ", line.casefold()).split()), repr(line)


def test_unnamed_folds_as_the_patterns_do():
    """A line's near key set aside of its names, folded by the byte table when the line is ASCII,
    is what the capitals pattern, the marks pattern and ``casefold`` give, over lines of names,
    marks, "\u00b7" and letters outside ASCII (a Kelvin sign lowers to an ASCII "k")."""
    import re

    marks = re.compile(r"[^\w\s\u00b7]")
    pieces = ["Priya", "the", "O'Neil's", "Q3", "x-Ray", "iPhone", " ", ", ", ".", "!", "'", "-", "_", "\u00b7",
              "\u00c9A", "\u00df", "\u212a", "\u0130", "\t", "\x1c", "Ab-C", "report"]
    rng = random.Random(19)
    for _ in range(6000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 9)))
        head = line[:1].lower() + line[1:]
        expected = " ".join(marks.sub(" ", english._CAPITAL_RE.sub("\u00b7", head).casefold()).split())
        assert english._unnamed.__wrapped__(line) == expected, repr(line)


def test_words_are_those_of_the_plain_pattern():
    """The possessive word pattern finds the words the plain one does, over lines of letters,
    digits, apostrophes, joiners (alone, doubled, at either end) and other marks."""
    import re

    plain = re.compile(r"[a-z0-9']+(?:[_.@/-][a-z0-9']+)*")
    pieces = ["a", "b", "report", "7", "'", "_", ".", "@", "/", "-", " ", ",", "!", "x.y", "..", "\u00e9", "A"]
    rng = random.Random(23)
    for _ in range(6000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))
        assert english._WORD.findall(line) == plain.findall(line), repr(line)
