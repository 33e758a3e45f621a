"""A Plus history's wrong values: a task of one value gets as many near misses as one of two."""

from __future__ import annotations

from generators import plus_offline
from generators.near_values import OTHER_PEOPLE

ONE_VALUE = "Set Bob's score in data/scores.xlsx to 95."
TWO_VALUES = "Set Bob's score in data/scores.xlsx to 95, then write the total into answer.txt."


def _memory(instruction: str, seed: int):
    memory, _ = plus_offline._plus_memory(instruction, seed, "", 28)
    return memory


def test_a_task_of_one_value_gets_a_second_near_miss_of_that_value_as_often_as_not():
    seconds = 0
    for seed in range(40):
        (piece,) = _memory(ONE_VALUE, seed)
        nears = [d.value for d in piece.distractors]
        assert 1 <= len(nears) <= 2
        assert len(set(nears)) == len(nears) and piece.value not in nears
        assert not set(nears) & set(piece.superseded)  # a wrong value is said as one thing only
        assert all(n.endswith(".xlsx") and n != "data/scores.xlsx" for n in nears)  # of the value's own kind
        seconds += len(nears) == 2
    assert 10 <= seconds <= 30  # about half of 40


def test_the_second_near_miss_goes_to_another_value_where_another_has_one():
    both = 0
    for seed in range(20):
        memory = _memory(TWO_VALUES, seed)
        assert all(len(p.distractors) <= 1 for p in memory)  # two values with near ones: one each at most
        both += all(p.distractors for p in memory)
    assert 4 <= both <= 16


def test_a_near_miss_changes_no_capitalised_word_that_is_no_ones_name():
    """"Larger or smaller?" is never said as "Mei or smaller?": only a person's name is swapped."""
    instruction = ("Compare income and expenditure based on company trading record. Larger or smaller? "
                   "Answer the question with `larger` or `smaller`")
    for seed in range(8):
        for piece in _memory(instruction, seed):
            for near in piece.distractors:
                assert not any(p in near.value for p in OTHER_PEOPLE), (seed, near.value)
    # a name is still swapped for another person's
    named = [d.value for seed in range(8) for p in _memory("Send the budget report to Dmitri by email", seed)
             for d in p.distractors]
    assert any(p in v for v in named for p in OTHER_PEOPLE), named


def test_a_whole_question_gets_a_near_miss_with_the_other_word_of_a_pair():
    """A question with no value of its own ("what is the highest score?") is met by another item of
    its kind ("the lowest score"): said first and corrected (still a question), or as a near miss;
    a clause that says both words of a pair keeps them, and a set phrase keeps its word."""
    seen = set()
    for seed in range(6):
        for piece in _memory("what is the highest score in the midterm list?", seed):
            seen |= {*piece.superseded, *(d.value.rstrip("?") + "?" for d in piece.distractors)}
    assert seen == {"what is the lowest score in the midterm list?"}, seen
    kept = set()
    for seed in range(6):  # no "smaller or smaller", no "higher case"
        for piece in _memory("compare the highest income in lower case: larger or smaller?", seed):
            kept |= {v.rstrip("?") for v in (*piece.superseded, *(d.value for d in piece.distractors))}
    assert kept == {"compare the lowest income in lower case: larger or smaller"}, kept


def test_a_near_miss_never_says_another_pieces_right_value():
    """Two questions that differ in a pair's word: the near miss of one is never the other."""
    text = "What is the average of the daily totals? What is the median of the daily totals?"
    for seed in range(8):
        memory = _memory(text, seed)
        finals = {p.value.rstrip(" ?").lower() for p in memory}
        for piece in memory:
            for wrong in (*piece.superseded, *(d.value for d in piece.distractors)):
                assert wrong.rstrip(" ?").lower() not in finals, (seed, wrong)


def test_a_near_day_or_hour_never_makes_a_span_end_before_it_starts():
    from generators.near_values import runs_backwards
    from generators.withheld import changed_detail

    assert runs_backwards("Bob travels from 6/26/2024 to 6/23/2024") and runs_backwards("book it 12:00 to 11:00")
    assert runs_backwards("from 15:00 to 15:00") and runs_backwards("between 6 pm and 5 pm")
    assert not runs_backwards("Bob travels from 6/23/2024 to 6/26/2024") and not runs_backwards("9:00 to 17:00")
    assert not runs_backwards("between 2 and 5 people") and not runs_backwards("10:00 a.m to 9:00 p.m")
    for seed in range(8):  # a near hour never closes the span it is in ("from 15:00 to 15:00")
        for piece in _memory("Block my calendar on 6/3/2024 from 14:00 to 15:00 for the review", seed):
            for wrong in (*piece.superseded, *(d.value for d in piece.distractors)):
                assert not runs_backwards(piece.text.replace(piece.value, wrong)) and not runs_backwards(wrong)
    instruction = "Bob has a trip from 6/23/2024 to 6/24/2024 at Florida, set it as a calendar event"
    seen = 0
    for seed in range(16):
        for piece in _memory(instruction, seed):
            for wrong in (*piece.superseded, *(d.value for d in piece.distractors)):
                seen += 1
                assert not runs_backwards(piece.text.replace(piece.value, wrong)), wrong
                assert not runs_backwards(wrong), wrong
        changed = changed_detail(instruction, __import__("random").Random(seed))
        assert changed is None or not runs_backwards(changed[0]), changed
    assert seen


def test_a_title_with_no_near_value_of_its_kind_gets_its_pair_word_swapped():
    """A quoted title ("'average salary'") has no near value of its own kind: its near miss or earlier
    value puts the other word of a near_word pair in ("median salary")."""
    wrong = set()
    for seed in range(6):
        for piece in _memory("add 'average salary' for each day to the last row in salary excel file", seed):
            if piece.value == "average salary":
                wrong |= {*piece.superseded, *(d.value for d in piece.distractors)}
    assert wrong == {"median salary"}, wrong


def test_a_whole_question_said_first_is_corrected_whole_and_never_turned_down():
    """The earlier question is asked as a question, the correction says the new one whole in its own
    lines (never "It's what is ...?"), no line turns the old one down, and the verifier agrees."""
    from datetime import datetime

    from generators.plus_offline import regenerate
    from verifier import check_dialogue

    class Seed:
        instruction, username, app_count, now = ("what is the highest score in the midterm list?", "alice", 1,
                                                 datetime(2024, 5, 17, 9, 0))

    corrected = 0
    for seed in range(4):
        draft = regenerate(Seed(), seed=seed)
        (piece,) = draft.memory
        if not piece.superseded:
            continue
        corrected += 1
        turns = [t for s in draft.sessions for t in s.turns if t.role == "user"]
        old = [t.text for t in turns if piece.id in t.superseded]
        new = [t.text for t in turns if piece.id in t.evidence]
        assert old and all(t.endswith("lowest score in the midterm list?") for t in old), old
        assert new and all(t.endswith("highest score in the midterm list?") and "It's what" not in t for t in new), new
        assert len(old) == len(piece.superseded)  # said once, never floated again and turned down
        assert check_dialogue(draft, draft.sessions, now=Seed.now).passed
    assert corrected
