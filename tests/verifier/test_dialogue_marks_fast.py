"""The memory marks' checks read faster (``verifier.dialogue_rules``) answer as their plain readings do:
a file's name found with ``str.find`` as its pattern finds it, and the marks' problems found among
the marked turns as a pass over every turn finds them."""

from __future__ import annotations

import random
import re
import sys
from datetime import date
from typing import Any

from verifier.dialogue_rules import (
    _MARKS_SEEN,
    FileName,
    ValueHolder,
    _any_of,
    _derivation,
    _derived_problems,
    _short,
    _word_char,
    _wrong_name,
    find_mark_problems,
    mark_problems,
)


def _pattern(name: FileName) -> re.Pattern[str]:
    """The pattern a file's name was looked for with before."""
    ending = r"(?![\w-]|\.\w)" if name.stem else r"(?![\w-])"
    return re.compile(rf"(?<![\w./-]){re.escape(name.word)}{ending}")


def test_a_word_character_is_what_the_patterns_w_matches():
    word = re.compile(r"\w")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert _word_char(char) == (word.fullmatch(char) is not None), hex(code)


# letters and digits (ASCII and not: a Unicode letter, decimal digit, superscript, fraction, numeral),
# the marks the patterns look at, a space and the separator of joined texts
PIECES = ["a", "b", "2", "_", "é", "\u0663", "\u00b2", "\u00bd", "\u216b", ".", "/", "-", " ", ",", "\0", "x"]


def test_a_file_name_is_found_where_its_pattern_finds_it():
    rng = random.Random(7)
    words = ["ab", "a2", "a_b", "a.b", "ab.2", "é2", "a-b", "2"]
    for _ in range(40000):
        name = FileName(rng.choice(words), stem=rng.random() < 0.5)
        pieces = [rng.choice(PIECES + [name.word] * 3) for _ in range(rng.randrange(0, 9))]
        text = "".join(pieces)
        assert name.search(text) == (_pattern(name).search(text) is not None), (name.word, name.stem, text)


def test_the_names_of_a_value_are_those_its_pattern_named():
    for value, word, stem in [("data/scores_old.xlsx", "scores_old.xlsx", False), ("Report2.docx", "report2", True),
                              ("notes.txt", None, None), ("14:00", None, None), ("a/B_1.PDF", "b_1.pdf", False)]:
        name = _wrong_name(value)
        assert (name.word, name.stem) == (word, stem) if word else name is None, value


# -- the marks -----------------------------------------------------------------------------------

def _held_wrong(holder: ValueHolder, value: str) -> list[bool]:
    """``ValueHolder.held_wrong`` as it was: its pattern searched in every turn."""
    name = _wrong_name(value)
    held = holder.held(value)
    if name is None:
        return held
    pattern = _pattern(name)
    return [h or pattern.search(turn[3]) is not None for h, turn in zip(held, holder.turns)]


def _reference_problems(memory: list[dict[str, Any]], turns: list[Any]) -> list[str]:
    """``find_mark_problems`` as it was written first: a pass over every turn for each check."""
    problems: list[str] = []
    known = {m.get("id") for m in memory}
    for where, _, _, _, evidence, superseded, distractor, _ in turns:
        for mid in (*evidence, *superseded, *distractor):
            if mid not in known:
                problems.append(f"{where}: marks {mid!r}, which is not a memory id")
    holder = ValueHolder(turns)
    for m in memory:
        mid, value = m["id"], str(m.get("value") or "")
        name = f"memory {mid} (value {_short(m.get('said_as') or value)})"
        if not value.strip():
            problems.append(f"memory {mid}: empty value")
            continue
        derivation = _derivation(m)
        if m.get("derived") is not None and derivation is None:
            problems.append(f"memory {mid}: 'derived' is not a rule, amount, anchor and base")
            continue
        if derivation is not None:
            problems += _derived_problems(m, derivation, name, turns, holder)
            relation = str(m.get("said_as") or "").lower()
            finals = [bool(relation) and relation in t[3] for t in turns]
        else:
            finals = holder.held(value)
        holding = [t for t, final in zip(turns, finals) if final]
        marked = [t for t in holding if mid in t[4]]
        if not holding:
            problems.append(f"{name} is missing from the dialogue")
        for t in holding:
            if mid not in t[4]:
                problems.append(f"{t[0]}: holds {name} but its evidence does not list {mid!r}")
        if derivation is None:
            for t, final in zip(turns, finals):
                if mid in t[4] and not final:
                    problems.append(f"{t[0]}: evidence lists {mid!r} but the text does not hold its value")
        if marked and marked[0][2] != "user":
            problems.append(f"{marked[0][0]}: {name} is first said by the {marked[0][2]}; the user must say it")
        first_day = marked[0][1] if marked else None
        first_at = next((i for i, (t, final) in enumerate(zip(turns, finals)) if mid in t[4] and final), None)
        olds = [str(v) for v in m.get("superseded", ()) if str(v).strip()]
        olds_at = _any_of([_held_wrong(holder, v) for v in olds], len(turns))
        before = 0
        for i, t in enumerate(turns):
            holds_old = olds_at[i]
            if holds_old and mid not in t[5]:
                problems.append(f"{t[0]}: holds an earlier value of {mid} but is not marked superseded")
            if mid in t[5]:
                if not holds_old:
                    problems.append(f"{t[0]}: marked superseded for {mid} but holds none of its earlier values")
                if first_at is not None and i > first_at:
                    continue
                before += 1
                if first_day is not None and t[1] >= first_day:
                    problems.append(f"{t[0]}: an earlier value of {mid} is said on or after the day of its "
                                    f"correction (day {first_day}); say it on an earlier day")
        if olds and not before:
            problems.append(f"{name}: its earlier value is never said before the correction")
        nears = [str(d.get("value", "")) for d in m.get("distractors", ()) if str(d.get("value", "")).strip()]
        nears_at = _any_of([_held_wrong(holder, v) for v in nears], len(turns))
        for t, holds_near in zip(turns, nears_at):
            if holds_near and mid not in t[6]:
                problems.append(f"{t[0]}: holds a near-miss of {mid} but is not marked distractor")
            if mid in t[6] and not holds_near:
                problems.append(f"{t[0]}: marked distractor for {mid} but holds none of its near-miss values")
    return problems


MEMORY = [
    {"id": "m1", "value": "data/scores_new.xlsx", "superseded": ["data/scores_old.xlsx"],
     "distractors": [{"value": "data/scores_2.xlsx"}]},
    {"id": "m2", "value": "report3.docx", "superseded": ["report2.docx"], "distractors": [{"value": "memo_1.pdf"}]},
    {"id": "m3", "value": "14:00", "superseded": ["11:30"], "distractors": [{"value": "15:00"}]},
    {"id": "m4", "value": "2025-03-14", "superseded": ["2025-03-12"]},
    {"id": "m5", "value": "42", "distractors": [{"value": "24"}, {"value": "40"}]},
    {"id": "m6", "value": "2025-03-13", "said_as": "two days after the supplier visit",
     "derived": {"rule": "days_after", "amount": 2, "anchor": "the supplier visit", "base": "2025-03-11"}},
    {"id": "m7", "value": ""},
    {"id": "m8", "value": "Ana", "derived": {"rule": "covers"}},
]
# what a turn may say: each value, earlier and near-miss value, their bare names and stems, the
# derived piece's relation and anchor, a day said in words, and the marks around a name
SAID = ["data/scores_new.xlsx", "scores_new.xlsx", "data/scores_old.xlsx", "scores_old.xlsx", "scores_old",
        "scores_2.xlsx", "report3.docx", "report2.docx", "report2", "report2.pdf", "memo_1.pdf", "memo_1", "14:00",
        "11:30", "15:00", "2025-03-14", "2025-03-12", "friday", "42", "24", "40", "two days after the supplier visit",
        "the supplier visit", "2025-03-11", "ana", "/", ".", "-", "_", "x", " ", ", ", ".d", "2"]
IDS = ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]


def _turns(rng: random.Random) -> list[Any]:
    turns = []
    for day in range(1, rng.randrange(2, 5)):
        on = date(2025, 3, 8 + day) if rng.random() < 0.9 else None
        for n in range(rng.randrange(1, 7)):
            text = "".join(rng.choice(SAID) for _ in range(rng.randrange(0, 5)))
            marks = tuple(tuple(rng.sample(IDS, rng.choice((0, 0, 0, 1, 2)))) for _ in range(3))
            turns.append((f"day {day} turn {n + 1}", day, rng.choice(("user", "assistant")), text, *marks, on))
    return turns


def test_the_marks_problems_are_those_a_pass_over_every_turn_finds():
    rng = random.Random(11)
    found = 0
    for _ in range(1500):
        memory = rng.sample(MEMORY, rng.randrange(1, len(MEMORY) + 1))
        turns = _turns(rng)
        expected = _reference_problems(memory, turns)
        found += bool(expected)
        assert find_mark_problems(memory, turns) == expected, (memory, turns)
        _MARKS_SEEN.clear()
        assert mark_problems(memory, turns) == mark_problems(memory, turns) == expected
    assert found > 1000  # the cases break the rules in many ways


def test_kept_marks_answer_only_for_the_same_marks():
    rng = random.Random(3)
    memory, turns = MEMORY[:5], _turns(rng)
    first = mark_problems(memory, turns)
    for field, value in ((1, 1.0), (4, ("m1",)), (3, "other text"), (7, None)):
        changed = list(turns)
        changed[0] = (*turns[0][:field], value, *turns[0][field + 1:])
        assert mark_problems(memory, changed) == _reference_problems(memory, changed)
    assert mark_problems(memory, turns) == first == _reference_problems(memory, turns)


def test_marks_whose_hashes_meet_are_told_apart():
    """Days -1 and -2 hash alike (CPython's hash of -1 is -2's): the kept answer of one is not the other's."""
    assert hash(-1) == hash(-2)
    memory = [MEMORY[3]]
    answers = []
    for day in (-1, -2):
        turns = [("day 0 turn 1", 0, "user", "2025-03-12", (), ("m4",), (), None),
                 ("day x turn 1", day, "user", "2025-03-14", ("m4",), (), (), None)]
        answers.append(mark_problems(memory, turns))
        assert answers[-1] == _reference_problems(memory, turns)
    assert answers[0] != answers[1]
