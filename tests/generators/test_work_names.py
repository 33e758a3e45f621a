"""Which name of a work a line says (``generators.work_names``): a person varies them, and a
line that opens an exchange never points back at a work nothing before it named."""

from __future__ import annotations

import random
from collections import Counter

from generators.work_names import WorkNames, noun_twice


def test_short_names_are_each_said_before_any_is_said_again():
    names = WorkNames(random.Random(3), lambda text: True, ["the renewal reminder"])
    full = names.of("the renewal reminder")
    short = full[1:]
    said = [names.pick("the renewal reminder", answer=True) for _ in range(2 * len(short))]
    assert set(said[:len(short)]) == set(short) and Counter(said) == Counter({n: 2 for n in short})


def test_an_opening_line_never_points_back():
    names = WorkNames(random.Random(5), lambda text: True, ["the renewal reminder"])
    said = {names.pick("the renewal reminder", opening=True) for _ in range(200)}
    assert said >= {"the renewal reminder", "the reminder", "the renewal thing"}
    assert not {n for n in said if n.startswith(("that ", "this ")) or n.endswith(" one")}


def test_a_name_two_task_works_share_is_said_of_neither():
    names = WorkNames(random.Random(1), lambda text: True, ["the invoice log", "the quote log"])
    assert "the log" not in names.of("the invoice log") and "the invoice thing" in names.of("the invoice log")
    # a name holding a task value is never said: the full one stands in
    hidden = WorkNames(random.Random(1), lambda text: "renewal" not in text, ["the reminder"])
    assert hidden.of("the renewal reminder") == ("the renewal reminder", "the reminder", "that reminder",
                                                 "this reminder", "that one")


def test_a_line_may_not_put_a_noun_of_the_name_right_before_it():
    assert noun_twice("the mail on the mail to pass on should say", "the mail to pass on")
    assert not noun_twice("the reply on the mail to pass on should say", "the mail to pass on")



def _says_which(name: str, about: str) -> bool:  # the full name, or its words but the head ("the invoice thing")
    return name == about or (name.endswith((" thing", " one")) and name != "that one")


def _which_share(names: WorkNames, about: str, *, stated: bool, n: int = 3000) -> float:
    return sum(_says_which(names.pick(about, stated=stated), about) for _ in range(n)) / n



def test_lines_with_and_without_a_value_say_which_work_at_their_own_rates():
    about = "the invoice reminder"
    usual = WorkNames(random.Random(3), lambda _: True, [about], stated_full_names=0.7, full_name=0.3)
    weeks = WorkNames(random.Random(3), lambda _: True, [about], stated_full_names=0.7, full_name=0.6)
    stated = _which_share(usual, about, stated=True)
    assert stated > _which_share(usual, about, stated=False) + 0.25  # a value is said with the name asked by
    assert stated > _which_share(weeks, about, stated=False) > _which_share(usual, about, stated=False) + 0.1


def _pick_afresh(names: WorkNames, about: str, *, full: bool, opening: bool, answer: bool, stated: bool) -> str:
    """``WorkNames.pick`` with its pools made on every call, as the rule says them."""
    every = names.of(about)
    short = [n for n in every[1:] if not (opening and (n.startswith(("that ", "this ")) or n.endswith(" one")))]
    if full or not short:
        return every[0]
    if answer or names.rng.random() >= (names.stated_full_names if stated else names.full_name):
        pool = short
    elif stated:
        return every[0]
    else:
        pool = [every[0], *[n for n in short if _says_which(n, every[0]) and n != every[0]]]
    uses = names.uses.setdefault(every[0], Counter())
    fewest = min(uses[n] for n in pool)
    name = names.rng.choice([n for n in pool if uses[n] == fewest])
    uses[name] += 1
    return name


def test_the_pools_kept_per_work_pick_as_pools_made_afresh():
    works = ["the renewal reminder", "the invoice log", "the quote log", "the budget sheet", "the client deck"]
    for seed in range(12):
        draw = random.Random(seed)
        clean = (lambda text: "quote" not in text) if seed % 3 == 0 else (lambda text: True)
        kept = WorkNames(random.Random(seed), clean, works[:3], stated_full_names=0.7, full_name=0.3)
        fresh = WorkNames(random.Random(seed), clean, works[:3], stated_full_names=0.7, full_name=0.3)
        for _ in range(300):
            about = draw.choice(works)  # the last two are met as they come, after the start
            flags = {name: draw.random() < 0.3 for name in ("full", "opening", "answer", "stated")}
            assert kept.pick(about, **flags) == _pick_afresh(fresh, about, **flags)
        assert kept.uses == fresh.uses
