"""A mail's own words, kept per body, against working them out afresh: the same text for every
body, asked once or again, whatever else was asked between; a body too long to hold is read afresh."""

from __future__ import annotations

import random
import re

from generators.families.base import own_words


def _fresh(message: dict) -> str:
    body = str(message.get("body", ""))
    for cut in (re.search(r"^On .{0,200} wrote:\s*$", body, re.MULTILINE),
                re.search(r"^-+ ?Forwarded message ?-+\s*$", body, re.MULTILINE)):
        body = body[:cut.start()] if cut else body
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(">"))


def test_own_words_kept_per_body_equal_a_fresh_reading():
    lines = ["Hi Dana,", "The total is 1,200.50 EUR.", "> quoted figure 99", "  > indented quote",
             "On Mon, 3 Mar 2025, Ann wrote:", "---------- Forwarded message ----------", "", "Thanks", "-- ",
             "Meet at 10:30?"]
    rng = random.Random(11)
    bodies = ["\n".join(rng.choice(lines) for _ in range(rng.randint(0, 8))) for _ in range(300)]
    messages = [{"body": rng.choice(bodies)} for _ in range(3000)] + [{}, {"body": None}, {"body": 42}]
    for message in messages:
        assert own_words(message) == _fresh(message)


def test_a_long_body_is_read_every_time_not_held():
    from generators.families import base

    long_body = "Figures below.\n" + "> quoted 1,200 EUR\n" * (base.MAX_KEPT_BODY // 10)
    held = base._own_words.cache_info().currsize
    assert own_words({"body": long_body}) == _fresh({"body": long_body}) == "Figures below."
    assert base._own_words.cache_info().currsize == held
