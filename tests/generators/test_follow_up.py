"""A follow-up day said in the chat and checked in the mail (generators/families/follow_up.py)."""

import random
from datetime import date, datetime

from generators.families.follow_up import CUE, with_follow_up_day, written_day
from generators.model import Distractor, MemoryPiece, Misreading, TaskDraft, ToolCall
from generators.spoken_time import read_times, say_value
from office_env.evaluation.keywords import missing

NOW = datetime(2025, 3, 25, 9, 0)  # a Tuesday


def _mail(recipient: str, body: str) -> ToolCall:
    return ToolCall("email_send_email", {"sender": "zara", "recipient": recipient, "subject": "Stock",
                                         "content": f"Hi,\n\n{body}\n\nBest,\nZara"})


def _draft(*, mail: bool = True, busy_day: str = "2025-03-28") -> TaskDraft:
    recipient = MemoryPiece("m1", "fact", "the answer goes to sofia", "sofia", thread="t1", cue="recipient",
                            about="the stock question", distractors=(Distractor("hugo", "hugo asked last time"),))
    oracle = [ToolCall("email_list_emails", {"user": "zara"})]
    checks = []
    if mail:
        oracle.append(_mail("sofia", f"Under 25: label printer. Delivery on {busy_day}."))
        checks.append({"function": "evaluate_email_sent",
                       "args": {"sender": "zara", "recipient": "sofia", "subject_keywords": ["Stock"],
                                "body_keywords": ["label printer"]}})
    misread = [Misreading("m1", "distractor", "hugo", [oracle[0], _mail("hugo", "Under 25: label printer.")])] if mail else []
    return TaskDraft(family="stock_question_reply", apps=["email"], difficulty="medium", description="Answer Sofia.",
                     intent="Answer the stock question.", subtasks=["Answer."], evaluation=checks, memory=[recipient],
                     query="the stock question", oracle=oracle, misreadings=misread)


def _added(draft: TaskDraft, seeds=range(200)) -> list[TaskDraft]:
    return [d for d in (with_follow_up_day(random.Random(s), NOW, draft) for s in seeds) if d is not draft]


def _sent(plan: list[ToolCall]) -> str:
    return [c for c in plan if c.tool == "email_send_email"][-1].args["content"]


def test_a_share_of_mail_drafts_get_a_follow_up_day_checked_in_the_mail():
    draft = _draft()
    added = _added(draft)
    assert 0.4 < len(added) / 200 < 0.8  # a share, not all
    for d in added:
        piece = d.memory[-1]
        assert piece.cue == CUE and piece.thread == "t1" and piece.id == "m2"
        day = date.fromisoformat(piece.value)
        assert day > NOW.date() and day.weekday() < 5
        assert day.isoformat() in d.evaluation[0]["args"]["body_keywords"]
        body = _sent(d.oracle)
        assert written_day(day) in body and body.endswith("Best,\nZara")  # before the sign-off
        assert missing(body, d.evaluation[0]["args"]["body_keywords"]) == []
        assert day.isoformat() in d.description


def test_the_day_is_none_the_draft_already_names_and_a_moved_day_is_a_misreading_that_fails():
    draft = _draft(busy_day="2025-03-27")
    added = _added(draft)
    assert all(d.memory[-1].value != "2025-03-27" and "2025-03-27" not in d.memory[-1].superseded for d in added)
    moved = [d for d in added if d.memory[-1].superseded]
    assert moved and len(moved) < len(added)
    for d in moved:
        (old,) = d.memory[-1].superseded
        assert old != d.memory[-1].value
        plan = next(m.plan for m in d.misreadings if m.memory == "m2")
        assert missing(_sent(plan), d.evaluation[0]["args"]["body_keywords"]) == [d.memory[-1].value]
    # a misreading of another piece still names the day (it misread the recipient, not the day)
    for d in added:
        other = next(m for m in d.misreadings if m.memory == "m1")
        assert written_day(date.fromisoformat(d.memory[-1].value)) in _sent(other.plan)


def test_a_draft_without_a_checked_mail_is_left_as_it_is():
    draft = _draft(mail=False)
    assert _added(draft) == []


def test_the_day_said_relative_to_a_session_reads_back_as_the_checked_day():
    for d in _added(_draft())[:20]:
        day = date.fromisoformat(d.memory[-1].value)
        said_on = date(2025, 3, 20)
        phrase = say_value(day.isoformat(), said_on)
        assert [t.when for t in read_times(f"We follow up {phrase}.", said_on)] == [day]
