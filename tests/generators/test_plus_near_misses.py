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
