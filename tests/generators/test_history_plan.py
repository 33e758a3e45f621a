"""The history plan: threads over days, corrections on later days, near-misses, relative times."""

from __future__ import annotations

import random
from datetime import date, datetime

import pytest

from generators.chances import HISTORY
from generators.history_plan import Event, events_for_prompt, events_from_prompt, plan_history, threads_of
from generators.model import Distractor, MemoryPiece
from generators.spoken_time import read_times

DATES = [date(2024, 5, 13), date(2024, 5, 14), date(2024, 5, 15), date(2024, 5, 16), date(2024, 5, 17)]
PIECES = [
    MemoryPiece("m1", "fact", "the meeting is at 2024-05-23 14:00", "2024-05-23 14:00", thread="t1",
                superseded=("2024-05-22 10:00",), cue="meeting_time", about="the vendor meeting"),
    MemoryPiece("m2", "fact", "it is called Vendor review", "Vendor review", thread="t1", cue="meeting_title",
                about="the vendor meeting", distractors=(Distractor("Budget check-in", "the Budget check-in is another one"),)),
    MemoryPiece("m3", "action", "save it as notes_may.docx", "notes_may.docx", thread="t2", cue="output_file",
                about="the notes"),
]


def events(plans):
    return [(plan.day, e) for plan in plans for e in plan.events]


@pytest.mark.parametrize("seed", range(40))
def test_every_piece_is_stated_once_and_corrections_come_later(seed):
    plans, memory = plan_history(PIECES, DATES, random.Random(seed))
    assert [p.day for p in plans] == [1, 2, 3, 4, 5]
    finals = [(d, e) for d, e in events(plans) if e.mark == "evidence"]
    assert sorted(e.piece.id for _, e in finals) == ["m1", "m2", "m3"]
    olds = [(d, e) for d, e in events(plans) if e.mark == "superseded" and e.move == "state"]
    # the earlier meeting time is said in words too, and names the old moment on its day
    assert [e.piece.id for _, e in olds] == ["m1"] and "2024" not in olds[0][1].said
    assert [t.when for t in read_times(olds[0][1].said, DATES[olds[0][0] - 1])] == [datetime(2024, 5, 22, 10)]
    fix_day = next(d for d, e in finals if e.piece.id == "m1")
    assert olds[0][0] < fix_day
    # an old value brought up again (and turned down) comes on or after the correction's day
    declines = [(d, e) for d, e in events(plans) if e.move == "decline"]
    assert all(e.mark == "superseded" and d >= fix_day for d, e in declines)
    assert all([t.when for t in read_times(e.said, DATES[d - 1])] == [datetime(2024, 5, 22, 10)] for d, e in declines)
    assert next(e for _, e in finals if e.piece.id == "m1").move == "correct"
    nears = [e for _, e in events(plans) if e.mark == "distractor"]
    assert [(e.piece.id, e.said, e.text) for e in nears] == [("m2", "Budget check-in", "the Budget check-in is another one")]
    # each thread is raised no later than its first detail
    for thread in ("t1", "t2"):
        raised = min(d for d, e in events(plans) if e.thread == thread and e.move == "raise")
        assert raised == min(d for d, e in events(plans) if e.thread == thread)
    # a meeting time is said as people say it, and reads back as the value on the day it is said
    m1 = next(p for p in memory if p.id == "m1")
    said = next(e.said for _, e in finals if e.piece.id == "m1")
    assert said == m1.said_as and "2024-05-23" not in said
    assert [t.when for t in read_times(m1.said_as, DATES[fix_day - 1])] == [datetime(2024, 5, 23, 14)]


@pytest.mark.parametrize("seed", range(20))
def test_the_work_comes_up_only_after_its_mail_arrived_and_a_correction_keeps_two_days(seed):
    for first_day, earliest in ((2, 2), (4, 3), (0, 0)):  # a correction needs a day to say the old value on
        plans, _ = plan_history(PIECES, DATES, random.Random(seed), first_day=first_day)
        assert min(d for d, _ in events(plans)) - 1 >= earliest
    lone = [p for p in PIECES if not p.superseded]
    plans, _ = plan_history(lone, DATES, random.Random(seed), first_day=4)
    assert {d for d, _ in events(plans)} == {5}


def test_plan_dialogue_starts_the_work_the_day_after_the_mail_it_answers(ws):
    from generators.dialogue_offline import mail_arrival, plan_dialogue
    from generators.model import TaskDraft, ToolCall

    piece = MemoryPiece("m1", "fact", "reply with 12,500", "12,500", thread="t1", cue="reply_point", about="the reply")
    draft = TaskDraft(family="f", apps=["email"], difficulty="easy", description="d", intent="i", subtasks=["s"],
                      evaluation=[], memory=[piece], query="q",
                      oracle=[ToolCall("email_read_email", {"user": "alice", "email_id": "Quarterly budget.eml"}),
                              ToolCall("email_read_email", {"user": "alice", "email_id": "No such mail.eml"})])
    arrived = mail_arrival(draft, ws)
    assert arrived is not None
    now = datetime.combine(arrived, datetime.min.time()).replace(hour=17) + (date(2024, 5, 10) - date(2024, 5, 3))
    for seed in range(10):
        plans, _ = plan_dialogue(draft, seed=seed, now=now, days=5, arrived=arrived)
        assert all(plan.date > arrived for plan in plans if plan.events)
    assert mail_arrival(TaskDraft(**{**draft.__dict__, "oracle": []}), ws) is None


def test_threads_span_days_are_talked_about_without_values_and_details_come_in_two_turns():
    spans = splits = declines = 0
    for seed in range(60):
        plans, memory = plan_history(PIECES, DATES, random.Random(seed))
        days = {d for d, e in events(plans) if e.thread == "t1" and e.mark in ("evidence", "superseded")}
        spans += len(days) >= 2
        for thread in ("t1", "t2"):
            mine = [e for _, e in events(plans) if e.thread == thread]
            stated = sum(e.mark == "evidence" for e in mine)
            user_turns = len(mine) + sum(e.split for e in mine)
            assert stated <= HISTORY.evidence_share * user_turns + 1e-9, (seed, thread)
            assert any(e.move == "mention" and not e.said for e in mine)
        splits += any(e.split for _, e in events(plans))
        declines += any(e.move == "decline" for _, e in events(plans))
    assert spans == 60  # the correction alone puts t1 on two days
    assert 30 < splits < 60 and 15 < declines < 45


def test_deterministic_and_bad_input():
    a = plan_history(PIECES, DATES, random.Random(3))
    b = plan_history(PIECES, DATES, random.Random(3))
    assert [[e.to_dict() for e in p.events] for p in a[0]] == [[e.to_dict() for e in p.events] for p in b[0]]
    with pytest.raises(ValueError, match="at least 2 days"):
        plan_history(PIECES, DATES[:1], random.Random(0))
    with pytest.raises(ValueError, match="at least one day"):
        plan_history(PIECES, [], random.Random(0))
    plans, _ = plan_history(PIECES[1:], DATES[:1], random.Random(0))  # no correction: one day is enough
    assert len(plans) == 1


def test_events_round_trip_through_prompts():
    plans, _ = plan_history(PIECES, DATES, random.Random(5))
    for plan in plans:
        for event in plan.events:
            again = Event.from_dict(event.to_dict())
            assert again.to_dict() == event.to_dict()


def test_threads_group_pieces_and_lone_pieces_get_their_own():
    lone = [MemoryPiece("m1", "fact", "a", "x1"), MemoryPiece("m2", "fact", "b", "x2")]
    assert list(threads_of(lone)) == ["t100", "t101"]
    assert [p.id for p in threads_of(PIECES)["t1"]] == ["m1", "m2"]


DERIVABLE = [
    MemoryPiece("m1", "fact", "the figures are in inventory.xlsx", "inventory.xlsx", thread="t1", cue="source_file",
                about="the stock count"),
    MemoryPiece("m2", "fact", "the line is 60", "60", thread="t1", cue="threshold", about="the stock count"),
    MemoryPiece("m3", "fact", "follow up on 2024-05-23", "2024-05-23", thread="t2", cue="follow_up_day",
                about="the supplier chase"),
]


def test_anchors_named_for_nothing_mirror_the_ones_a_value_is_derived_from():
    """Beside an anchor a value is said against, the same thread names another of its kind for
    nothing, so a turn that names an anchor about the task's work is not always evidence."""
    derived, free = {}, {}
    for seed in range(40):
        plans, _ = plan_history(DERIVABLE, DATES, random.Random(seed))
        anchors = [(d, e) for d, e in events(plans) if e.move == "anchor"]
        for _, e in anchors:
            (derived if e.mark else free).setdefault((e.thread, e.kind), []).append(e)
        for day, e in anchors:
            if not e.mark:  # the value it names is no detail of the task's
                assert e.said.lower() not in {"inventory.xlsx", "60", "2024-05-23"} and e.anchor
                assert e.piece.thread == e.thread
        names = [e.anchor for _, e in anchors]
        assert len(names) == len(set(names))  # each anchor named once a history
    assert {k for k in derived} >= {("t1", "file"), ("t1", "number"), ("t2", "day")}
    for key, marked in derived.items():  # about three in four derived anchors have a twin
        assert len(free.get(key, ())) >= len(marked) // 2, (key, len(marked), len(free.get(key, ())))
    assert all(e.said.startswith("the ") and e.said.endswith((" sheet", " document", " PDF"))
               for (_, kind), es in free.items() if kind == "file" for e in es)  # said as people call a file


REQUESTED = [  # a request whose file (in a folder) may be said by reference, with a near-miss file
    MemoryPiece("m1", "action", "set Bob's score in data/scores.xlsx to 95", "data/scores.xlsx", thread="t1",
                cue="requested", about="the score spreadsheet",
                distractors=(Distractor("data/scores_old.xlsx", "the old copy data/scores_old.xlsx is not it"),)),
    MemoryPiece("m2", "action", "write its total into data/invoice_summary.docx", "data/invoice_summary.docx",
                thread="w1", cue="requested", about="the invoice document"),
]


def test_a_near_miss_file_of_a_value_said_by_reference_is_named_for_its_own_work_too():
    """Where the final file is said by reference ("the file from the handover I mentioned"), its
    near miss is named against an anchor for the task's own work about as often as for another's:
    the anchor's frame and the work hold the right file and the wrong one alike."""
    own = other = 0
    for seed in range(60):
        plans, memory = plan_history(REQUESTED[:1], DATES, random.Random(seed), others=REQUESTED[1:])
        if next(p for p in memory if p.id == "m1").derived is None:
            continue
        for _, e in events(plans):
            if e.mark == "distractor" and e.move == "anchor":
                assert e.said == "scores_old.xlsx" and e.anchor  # the file without its folder, against a name
                own += e.thread == "t1" and not e.about
                other += e.thread == "w1" and e.about == "the invoice document"
    assert own >= 8 and other >= 4, (own, other)


def test_an_earlier_or_near_miss_file_named_without_its_folder_is_held_and_must_be_marked():
    from verifier.dialogue_rules import bare_file, find_mark_problems

    assert bare_file("data/scores_old.xlsx") == "scores_old.xlsx" and bare_file("scores_old.xlsx") == ""
    memory = [{"id": "m1", "value": "data/new.xlsx", "superseded": ["data/old.xlsx"],
               "distractors": [{"value": "data/near.xlsx", "text": ""}]}]

    def turn(day: int, text: str, evidence=(), superseded=(), distractor=()):
        return (f"day {day} turn 1", day, "user", text.lower(), tuple(evidence), tuple(superseded), tuple(distractor),
                None)

    ok = [turn(1, "The file from the handover is old.xlsx.", superseded=["m1"]),
          turn(1, "For the invoice thing: the file from the offsite is near.xlsx.", distractor=["m1"]),
          turn(2, "Use data/new.xlsx.", evidence=["m1"]),
          turn(2, "The bold.xlsx one is someone else's.")]  # a longer name is no mention of old.xlsx
    assert find_mark_problems(memory, ok) == []
    unmarked = [turn(1, "The file from the handover is old.xlsx."), *ok[1:]]
    assert "day 1 turn 1: holds an earlier value of m1 but is not marked superseded" in \
        find_mark_problems(memory, unmarked)
    unmarked = [ok[0], turn(1, "For the invoice thing: the file from the offsite is near.xlsx."), *ok[2:]]
    assert "day 1 turn 1: holds a near-miss of m1 but is not marked distractor" in find_mark_problems(memory, unmarked)


def test_a_prompt_leaves_out_what_an_event_shares_with_the_one_before_and_reads_back_the_same():
    """A day's events in a prompt give thread, memory, cue and about only where they change
    (null where an event has none that the one before had); read back, they are the same events."""
    bill = MemoryPiece(id="m1", kind="fact", text="The bill is INV-4471.", value="INV-4471", thread="t1",
                       cue="invoice_number", about="the supplier bill")
    events = [Event("raise", "t1", bill), Event("state", "t1", bill, "INV-4471", mark="evidence"),
              Event("mention", "t1", bill), Event("recap", "w2"), Event("raise", "t1", bill)]
    shown = events_for_prompt(events)
    assert shown[1] == {"move": "state", "say": "INV-4471", "mark": "evidence"} and shown[2] == {"move": "mention"}
    assert shown[3] == {"move": "recap", "thread": "w2", "memory": None, "cue": None, "about": None}
    assert shown[4] == events[4].to_dict()
    assert [e.to_dict() for e in events_from_prompt(shown)] == [e.to_dict() for e in events]


def test_a_short_day_keeps_a_near_miss_said_of_another_work_with_the_anchor_that_explains_it():
    """A near-miss file said by its name against a kind of file for another work ("notes_2, in the
    format from last time") keeps its anchor turn ("the format from last time is .docx") on a day
    too short for that work's own talk: the pair stays together while the rest of the work goes."""
    from dataclasses import replace

    from generators.history_plan import DayPlan, fit_siblings
    from generators.model import Derivation

    piece = MemoryPiece("m1", "action", "save it as notes.docx", "notes.docx", thread="t1", cue="requested",
                        about="the notes document")
    near = replace(piece, said_as="notes_2, in the format from last time",
                   derived=Derivation("file_type", 0, "the format from last time", ".docx"))
    anchor = Event("anchor", "w1", piece, ".docx", about="the budget memo", anchor="the format from last time",
                   kind="file_type")
    said = Event("distract", "w1", near, near.said_as, mark="distractor", about="the budget memo")
    other = MemoryPiece("s1m1", "fact", "the budget is 400", "400", thread="w1", cue="note", about="the budget memo")
    talk = [Event("state", "w1", other, "400"), Event("mention", "w1", other), Event("mention", "w2", other)]
    for pair in ([anchor, said], [said, anchor]):
        plan = DayPlan(1, date(2024, 5, 17), [Event("raise", "t1", piece), *pair, *talk])
        fit_siblings([plan], utterances_per_day=10, rng=random.Random(0))
        assert anchor in plan.events and said in plan.events
        assert not any(e in plan.events for e in talk)  # the works' own talk does not fit the day
