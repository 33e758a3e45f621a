"""``LineChecks``: what a history's lines may not say, its checks against their plain reading."""

from __future__ import annotations

import random
import re
from datetime import date

from generators.dialogue_offline import HistoryWriter, LineChecks
from generators.model import MemoryPiece
from generators.spoken_time import named_moments, names_any
from office_env.evaluation.keywords import Keywords

WORDS = ["the", "audit", "Audit", "report", "14", "4 pm", "on", "Friday", "budget_q3.xlsx", "Vendor", "review",
         "vendor review", "Priya", "is", "due", "  ", "next", "week", "auditor", "2024-05-24", "fourteen", "."]


def _plain_clean(text: str, values: list[str], answers: list[str], banned: list[str]) -> bool:
    low = text.lower()
    return (not any(v in low for v in values) and " ".join(low.split()) not in {" ".join(b.lower().split())
                                                                               for b in banned}
            and not Keywords(a for a in answers if a.strip()).any_in(text))


def _plain_talk_clean(text: str, values: list[str], answers: list[str], banned: list[str],
                      anchors: list[str]) -> bool:
    return _plain_clean(text, values, answers, banned) and not any(
        re.search(rf"(?<!\w){re.escape(a.lower())}(?!\w)", text.lower()) for a in anchors)


def test_the_checks_answer_as_their_plain_reading():
    rng = random.Random(5)
    for _ in range(60):
        values = [w.lower() for w in rng.sample(WORDS[4:12], rng.randint(0, 3)) if w.strip()]
        answers = rng.sample(["14", "2024-05-24", "Vendor", "3.5", ""], rng.randint(0, 2))
        anchors = rng.sample(["the audit", "Audit", "review"], rng.randint(0, 2))
        texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7))) for _ in range(40)]
        banned = rng.sample(texts, 3) + ["The  AUDIT is due"]
        texts += ["the audit is due", "auditor on Friday", "The audit", *banned]
        checks = LineChecks(values=values, answers=answers, banned=banned, anchors=anchors)
        for text in texts:
            assert checks.clean(text) is _plain_clean(text, values, answers, banned), (text, values, answers)
            assert checks.talk_clean(text) is _plain_talk_clean(text, values, answers, banned, anchors), \
                (text, values, answers, anchors)
            for day in (date(2024, 5, 20), date(2024, 5, 23)):
                assert checks.names_task_moment(text, day) == names_any(text, values, day,
                                                                         named_moments(values, day))


def test_the_writer_asks_its_checks():
    piece = MemoryPiece("m1", "fact", "the review is at 14:00", "14:00", cue="meeting_time", about="the review")
    writer = HistoryWriter([piece], rng=random.Random(3), user_first="Alex", answers=("4",), anchors=["the audit"],
                           banned=["See you then."])
    for text in ("at 14:00 then", "see you  then.", "4 of them", "after the audit", "the auditor", "fine"):
        assert writer.clean(text) is writer.checks.clean(text)
        assert writer.talk_clean(text) is writer.checks.talk_clean(text)
    assert [writer.clean(t) for t in ("at 14:00 then", "see you  then.", "4 of them", "the audit")] == \
        [False, False, False, True]
    assert writer.talk_clean("the audit") is False and writer.talk_clean("the auditor") is True
