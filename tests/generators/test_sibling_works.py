"""Sibling works (``generators.sibling_works``): other tasks of the office, told as the task is and
unmarked; what may not be told; how the plan lays them out and how a near miss is said."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from generators.dialogue_offline import generate_dialogue, plan_dialogue
from generators.model import Distractor, MemoryPiece
from generators.sibling_works import MAX_SIBLING_PIECES, sibling_pieces
from generators.thread_bank import threads
from verifier import check_dialogue

from tests.generators.test_dialogue import DRAFT, NOW, PEOPLE, make_draft

SIBLING = make_draft([
    MemoryPiece("m1", "fact", "the agenda lives in agenda_june.docx", "agenda_june.docx", thread="t1",
                cue="document", about="the board agenda", superseded=("agenda_may.docx",)),
    MemoryPiece("m2", "action", "Lena Brandt should get the agenda", "Lena Brandt", thread="t1",
                cue="recipient", about="the board agenda"),
    MemoryPiece("m3", "fact", "the board meets at 2024-05-29 11:00", "2024-05-29 11:00", thread="t2",
                cue="meeting_time", about="the board agenda"),
    MemoryPiece("m4", "fact", "the board session is called Strategy sync", "Strategy sync", thread="t2",
                cue="meeting_title", about="the board agenda",
                distractors=(Distractor("Hiring sync", "the Hiring sync is another meeting"),)),
])
OTHER = make_draft([
    MemoryPiece("m1", "fact", "the list is in stock_list.xlsx", "stock_list.xlsx", thread="t1",
                cue="source_file", about="the stock count"),
])


def family(draft, name):
    return replace(draft, family=name)


def test_siblings_are_renamed_unmarked_threads_and_skip_what_would_clash():
    task = family(DRAFT, "hand")
    siblings = sibling_pieces(task, [family(DRAFT, "hand"),  # the task's own family: passed over
                                     family(make_draft([replace(SIBLING.memory[0], about="the review notes")]), "a"),
                                     family(SIBLING, "b"), family(OTHER, "c")])
    # the review notes share "review" with the task's work; the board agenda and the stock count pass
    assert [s.family for s in siblings] == ["b", "c"]
    board, stock = siblings
    assert [p.id for p in board.pieces] == ["s1m1", "s1m2", "s1m3", "s1m4"]
    assert [p.thread for p in board.pieces] == ["w1", "w1", "w2", "w2"]
    assert [p.thread for p in stock.pieces] == ["w3"] and stock.pieces[0].id == "s2m1"
    assert board.abouts == ["the board agenda"]
    # the task says Vendor review and Priya Okafor: a sibling value holding one is left out
    clash = family(make_draft([MemoryPiece("m1", "fact", "x", "Vendor review notes", thread="t1", cue="document",
                                           about="the audit pack"),
                               MemoryPiece("m2", "fact", "y", "Omar Said", thread="t1", cue="recipient",
                                           about="the audit pack", superseded=("Priya Okafor",))]), "d")
    (audit,) = sibling_pieces(task, [clash])
    assert [p.value for p in audit.pieces] == ["Omar Said"] and audit.pieces[0].superseded == ()
    # a sibling's moment on a day a task value names (the review's 23 May) is left out too
    same_day = family(make_draft([MemoryPiece("m1", "fact", "z", "2024-05-23 09:00", thread="t1", cue="meeting_time",
                                              about="the audit pack")]), "e")
    assert sibling_pieces(task, [same_day]) == []
    assert sibling_pieces(task, [family(SIBLING, "b")], avoid=["Lena Brandt"])[0].pieces[1].value == "2024-05-29 11:00"
    many = family(make_draft([MemoryPiece(f"m{i}", "fact", "t", f"file_{i}.docx", thread="t1", cue="document",
                                          about="the archive") for i in range(9)]), "f")
    assert len(sibling_pieces(task, [many])[0].pieces) == MAX_SIBLING_PIECES


def test_a_history_tells_its_siblings_as_it_tells_the_task_and_marks_only_the_task():
    task = family(DRAFT, "hand")
    siblings = sibling_pieces(task, [family(SIBLING, "b"), family(OTHER, "c")])
    plan, draft = plan_dialogue(task, seed=5, now=NOW, days=5, siblings=siblings)
    events = [e for day in plan for e in day.events]
    sibling_events = [e for e in events if e.thread.startswith("w")]
    assert sibling_events and not any(e.mark for e in sibling_events if e.move != "distract")
    # the same moves as the task's: raised, stated, corrected (earlier value first), mentioned
    moves = Counter(e.move for e in sibling_events)
    assert moves["raise"] == 2 and moves["state"] >= 4 and moves["correct"] >= 1 and moves["mention"] >= 2
    # the task's near miss (Budget check-in, a meeting title) is said of a work with a title of its own
    near = [e for e in events if e.move == "distract" and e.mark == "distractor"]
    assert near and all(e.about == "the board agenda" and e.thread == "w2" for e in near)
    raised = {e.about or e.piece.about: d.day for d in plan for e in d.events if e.move == "raise"}
    assert all(d.day >= raised["the board agenda"] for d in plan for e in d.events if e in near)
    sessions = generate_dialogue(draft, seed=5, plan=plan, now=NOW, siblings=siblings, **PEOPLE)
    assert check_dialogue(draft, sessions, min_days=5, now=NOW).passed
    turns = [t for s in sessions for t in s.turns]
    # the sibling's final file, said outright or (named by reference) as people call it
    said = [t for t in turns if t.role == "user" and ("agenda_june.docx" in t.text or "agenda june document" in t.text)]
    assert said and all(not t.evidence and not t.superseded and t.thread == "w1" for t in said)
    assert any("agenda_may.docx" in t.text for t in turns)  # its earlier value, said and corrected
    # the near miss in a detail's words: no line of the near-miss bank's own ("is a different meeting")
    for turn in turns:
        if turn.distractor:
            assert "Budget check-in" in turn.text and "different" not in turn.text and turn.thread == "w2"
    # other work and jobs for later are numbered after the siblings' threads, never among them
    assert {t.thread for t in turns if "stock_list.xlsx" in t.text or "stock list sheet" in t.text} == {"w3"}
    jobs = [j.lower() for j in threads().jobs]
    assert not any(t.thread in ("w1", "w2", "w3") for t in turns if any(j in t.text.lower() for j in jobs))
    assert any(any(j in t.text.lower() for j in jobs) for t in turns)  # a job for later is still told


def test_without_siblings_a_near_miss_keeps_its_own_sentence():
    plan, _ = plan_dialogue(DRAFT, seed=5, now=NOW, days=5)
    near = [e for day in plan for e in day.events if e.move == "distract"]
    assert near and all(not e.about and e.thread == "t1" for e in near)


def test_a_sibling_said_in_its_own_sentence_or_near_miss_never_says_a_task_value():
    """A sibling detail said through its sentence (no cue) or a near miss told in its own words
    says the whole text: one that names a task value is left out, and the history still passes."""
    task = family(DRAFT, "hand")
    sib = family(make_draft([
        MemoryPiece("m1", "fact", "Priya Okafor keeps the stock count in stock_list.xlsx", "stock_list.xlsx",
                    thread="t1", about="the stock count"),
        MemoryPiece("m2", "fact", "the count sits in inventory_q2.xlsx", "inventory_q2.xlsx", thread="t1",
                    cue="source_file", about="the stock count",
                    distractors=(Distractor("inventory_q1.xlsx", "Priya Okafor still uses inventory_q1.xlsx"),)),
    ]), "c")
    (stock,) = sibling_pieces(task, [sib])
    assert [p.value for p in stock.pieces] == ["inventory_q2.xlsx"] and stock.pieces[0].distractors == ()
    for seed in range(4):
        plan, draft = plan_dialogue(task, seed=seed, now=NOW, days=5, siblings=[stock])
        sessions = generate_dialogue(draft, seed=seed, plan=plan, now=NOW, siblings=[stock], **PEOPLE)
        assert check_dialogue(draft, sessions, min_days=5, now=NOW).passed


def test_a_siblings_correction_does_not_bring_the_tasks_work_before_its_mail():
    """The task's work comes up after the mail it answers; a sibling's correction does not move it
    earlier (each group's first day is bounded by its own corrections)."""
    from datetime import date, timedelta

    from generators.history_plan import plan_history

    plain = [replace(p, superseded=()) for p in DRAFT.memory]
    (board,) = sibling_pieces(family(make_draft(plain), "hand"), [family(SIBLING, "b")])
    dates = [date(2024, 5, 13) + timedelta(days=i) for i in range(5)]
    for seed in range(20):
        days, _ = plan_history(plain, dates, __import__("random").Random(seed), first_day=4, others=list(board.pieces))
        first = min(d.day for d in days for e in d.events if e.thread.startswith("t"))
        assert first == 5, seed


def test_a_plus_sibling_leaves_out_its_seeds_template_slots_as_a_job_for_later_does():
    """No sibling work says "rename this pdf to {name}.pdf": the clause is left out, the rest told."""
    from generators.model import TaskDraft
    from generators.plus_offline import _plus_memory, plus_siblings

    task_text = "Set Bob's score in data/scores.xlsx to 95."
    other = ("Extract the student name from docx then rename this pdf to {name}.pdf in shell, "
             "email teacher Alice with pdf file")
    for seed in range(3):
        memory, _ = _plus_memory(task_text, seed, "", 5)
        task = TaskDraft(family="plus", apps=["excel"], difficulty="medium", description=task_text, intent="",
                         subtasks=[], evaluation=[], memory=list(memory), query="", oracle=[])
        siblings, _ = plus_siblings(task, [other], task_text, seed=seed, feedback="", days=5)
        assert siblings, seed  # the other clauses are still told
        said = [v for s in siblings for p in s.pieces
                for v in (p.text, p.value, *p.superseded, *(t for d in p.distractors for t in (d.value, d.text)))]
        assert said and not any("{" in v or "}" in v for v in said), said
