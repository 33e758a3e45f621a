"""Values said in no single turn: the rules give the value, the gates hold a history to them."""

from __future__ import annotations

import random
import re
from datetime import date, datetime

import pytest

from generators.derivation import draw_derivation, follows, kind_of, relation_phrase
from generators.dialogue_offline import generate_dialogue, plan_dialogue
from generators.model import Derivation, MemoryPiece, TaskDraft, ToolCall
from verifier.dialogue_rules import ValueHolder, check_dialogue, find_mark_problems, marked_turns

SAID_ON = date(2024, 5, 20)  # a Monday
VALUES = [("follow_up_day", "2024-05-29"), ("session_day", "Wednesday May 29"), ("start_time", "10:00"),
          ("time_window", "10:00-16:00"), ("threshold", "60"), ("new_figure", "133.26"), ("duration", "45 minutes"),
          ("recipient", "Elliot Gutierrez"), ("source_file", "inventory.xlsx"), ("requested", "data/scores.xlsx")]
PEOPLE = ("Elliot Gutierrez", "Rosa Iqbal", "Rosa Jablonski")


@pytest.mark.parametrize(("cue", "value"), VALUES)
def test_every_drawn_rule_gives_the_value_and_no_other(cue: str, value: str) -> None:
    seen = set()
    for seed in range(40):
        d = draw_derivation(cue, value, SAID_ON, ["the audit", "payroll"], random.Random(seed), people=PEOPLE)
        assert d is not None, (cue, value)
        assert d.base != value and follows(d, value, SAID_ON), d
        seen.add(d.rule)
        # a wrong value does not follow: another day, clock, number, length or person
        wrong = {"follow_up_day": "2024-05-30", "session_day": "Thursday May 30", "start_time": "10:30",
                 "time_window": "10:00-17:00", "threshold": "61", "new_figure": "133.27", "duration": "50 minutes",
                 "recipient": "Rosa Iqbal", "source_file": "inventory_old.xlsx",
                 "requested": "data/scores_backup.xlsx"}[cue]
        assert not follows(d, wrong, SAID_ON), (d, wrong)
    assert kind_of(cue, value) and seen


def test_a_person_is_named_by_role_only_when_their_first_name_is_theirs_alone() -> None:
    rng = random.Random(1)
    assert draw_derivation("recipient", "Rosa Iqbal", SAID_ON, ["payroll"], rng, people=PEOPLE) is None
    assert draw_derivation("recipient", "Elliot Gutierrez", SAID_ON, ["payroll"], rng, people=()) is None


def test_a_file_is_named_by_reference_and_said_as_people_call_it_or_without_its_folder() -> None:
    rng = random.Random(1)
    said = draw_derivation("document", "onboarding_guide.pdf", SAID_ON, ["the file from the handover"], rng)
    assert said is not None and said.base == "the onboarding guide PDF" and said.rule == "refers"
    bare = draw_derivation("requested", "data/scores.xlsx", SAID_ON, ["the file from the handover"], rng)
    assert bare is not None and bare.base == "scores.xlsx"
    assert follows(bare, "archive/scores.xlsx") and not follows(bare, "data/scores.xls")
    # a request names a file without a folder by its name and its kind apart; no file, no derivation
    assert kind_of("requested", "answer.txt") == "file_type" and kind_of("requested", "the report") == ""
    # a figure, a dotted clock or a web address is no file: its "ending" is no file kind, its name no word
    assert [kind_of("requested", v) for v in ("12.50", "10.30", "example.com", "notes.md")] == ["", "", "", "file_type"]
    assert draw_derivation("source_file", "notes.txt", SAID_ON, ["the file from the handover"], rng) is None


def test_a_new_file_is_named_in_the_request_and_its_kind_in_another_turn() -> None:
    d = draw_derivation("requested", "admission.pdf", SAID_ON, ["the format from the brief"], random.Random(1))
    assert d is not None and (d.rule, d.base) == ("file_type", ".pdf")
    relation = relation_phrase(d, random.Random(2), "admission.pdf")
    assert "admission" in relation and "the format from the brief" in relation and ".pdf" not in relation
    assert "(" not in relation and relation.startswith("admission")  # speech: no parenthesis
    assert follows(d, "admission.pdf", relation=relation)
    # another ending, another name, or a relation that names no file does not give it
    assert not follows(d, "admission.docx", relation=relation) and not follows(d, "admissions.pdf", relation=relation)
    assert not follows(d, "admission.pdf", relation="the format from the brief")
    assert not follows(d, "admission.pdf", relation="readmission in the format from the brief")


def test_an_anchor_value_avoids_the_other_details() -> None:
    for seed in range(30):
        d = draw_derivation("threshold", "60", SAID_ON, ["the old limit"], random.Random(seed), avoid={"50", "70", "30"})
        assert d is not None and d.base not in {"50", "70", "30"}
        day = draw_derivation("follow_up_day", "2024-05-29", SAID_ON, ["the audit"], random.Random(seed),
                              avoid_days={date(2024, 5, 28), date(2024, 5, 30)})
        assert day is None or day.base == "2024-05-27"


def _turns(*texts: tuple[str, tuple[str, ...]]) -> list:
    session = {"day": 1, "date": "2024-05-20", "turns": []}
    for index, (text, evidence) in enumerate(texts):
        session["turns"].append({"role": "user" if index % 2 == 0 else "assistant", "text": text,
                                 "ts": f"2024-05-20T09:{index:02d}:00", "evidence": list(evidence)})
    return marked_turns([session])


PIECE = {"id": "m1", "kind": "fact", "text": "the cut-off is 60", "value": "60", "cue": "threshold",
         "said_as": "10 less than the old limit",
         "derived": {"rule": "less", "amount": 10, "anchor": "the old limit", "base": "70"}}


def test_a_derived_piece_needs_its_relation_and_its_anchor_and_never_the_value() -> None:
    good = _turns(("The old limit was 70.", ("m1",)), ("Noted.", ()), ("Make the cut-off 10 less than the old limit.", ("m1",)))
    assert find_mark_problems([PIECE], good) == []
    no_anchor = _turns(("Hello.", ()), ("Hi.", ()), ("Make the cut-off 10 less than the old limit.", ("m1",)))
    assert any("never said" in p for p in find_mark_problems([PIECE], no_anchor))
    outright = _turns(("The old limit was 70.", ("m1",)), ("So 60 then?", ()),
                      ("Make the cut-off 10 less than the old limit.", ("m1",)))
    assert any("outright" in p for p in find_mark_problems([PIECE], outright))
    unmarked = _turns(("The old limit was 70.", ("m1",)), ("Noted.", ()), ("Make it 10 less than the old limit.", ()))
    assert any("evidence does not list" in p for p in find_mark_problems([PIECE], unmarked))
    # a rule that does not give the value (the base mutated) is caught
    wrong = {**PIECE, "derived": {**PIECE["derived"], "base": "75"}}
    assert any("does not give it" in p for p in find_mark_problems([wrong], _turns(
        ("The old limit was 75.", ("m1",)), ("Noted.", ()), ("Make the cut-off 10 less than the old limit.", ("m1",)))))
    assert any("not a rule" in p for p in find_mark_problems([{**PIECE, "derived": {"rule": "less"}}], good))


FILE_PIECE = {"id": "m1", "kind": "fact", "text": "use data/scores.xlsx", "value": "data/scores.xlsx",
              "cue": "requested", "said_as": "the file from the handover i mentioned",
              "derived": {"rule": "refers", "amount": 0, "anchor": "the file from the handover", "base": "scores.xlsx"}}


def test_a_reference_that_says_its_file_was_mentioned_comes_after_it_is() -> None:
    told = ("The file from the handover is scores.xlsx.", ("m1",))
    use = ("Use the file from the handover I mentioned for the scores.", ("m1",))
    assert find_mark_problems([FILE_PIECE], _turns(told, ("Noted.", ()), use)) == []
    early = find_mark_problems([FILE_PIECE], _turns(use, ("Which one?", ()), told))
    assert any("before 'the file from the handover' is told" in p for p in early), early
    # the writer plans it so: over many histories, no such reference comes before its anchor
    for seed in range(40):
        plan, draft = plan_dialogue(FILE_DRAFT, seed=seed, now=NOW, days=5, people=PEOPLE)
        sessions = generate_dialogue(draft, seed=seed, now=NOW, user_first="Alex", days=5, plan=plan)
        assert check_dialogue(draft, sessions, min_days=5).passed, seed


NOW = datetime(2024, 6, 3, 9)
DRAFT = TaskDraft(
    family="", apps=["email"], difficulty="medium", description="Mail the pass list to the coordinator.",
    intent="Send the pass list.", subtasks=["Send the list."], evaluation=[],
    memory=[MemoryPiece("m1", "fact", "the pass mark is 60", "60", thread="t1", cue="threshold", about="the pass list"),
            MemoryPiece("m2", "fact", "Elliot Gutierrez gets the list", "Elliot Gutierrez", thread="t1", cue="recipient",
                        about="the pass list"),
            MemoryPiece("m3", "fact", "follow up on 2024-06-12", "2024-06-12", thread="t1", cue="follow_up_day",
                        about="the pass list")],
    query="Send the pass list now.", oracle=[ToolCall("email_send_email", {"to": "elliot@example.com"})])


def test_a_history_derives_its_values_and_passes_the_dialogue_rules() -> None:
    derived = 0
    for seed in range(6):
        plan, draft = plan_dialogue(DRAFT, seed=seed, now=NOW, days=5, people=PEOPLE)
        sessions = generate_dialogue(draft, seed=seed, now=NOW, user_first="Alex", days=5, plan=plan,
                                     colleagues=["Rosa", "Elliot"])
        verdict = check_dialogue(draft, sessions, min_days=5)
        assert verdict.passed, verdict.feedback
        for piece in draft.memory:
            if piece.derived is None:
                continue
            derived += 1
            assert follows(piece.derived, piece.value, NOW.date())
            text = " ".join(t.text.lower() for s in sessions for t in s.turns)
            assert piece.value.lower() not in text and piece.said_as.lower() in text
            anchors = [t for s in sessions for t in s.turns if piece.id in t.evidence
                       and piece.derived.anchor.lower() in t.text.lower() and piece.said_as.lower() not in t.text.lower()]
            assert anchors and all(t.role == "user" for t in anchors)
        again = plan_dialogue(DRAFT, seed=seed, now=NOW, days=5, people=PEOPLE)[1]
        assert again == draft  # seeded: the same plan twice
    assert derived >= 6  # most of these values are derived


def test_a_draft_planned_again_is_derived_afresh() -> None:
    _, draft = plan_dialogue(DRAFT, seed=2, now=NOW, days=5, people=PEOPLE)
    assert any(p.derived for p in draft.memory)
    for seed in range(8):  # a second round starts from the planned draft: no stale derivation survives
        plan, again = plan_dialogue(draft, seed=seed, now=NOW, days=5, people=PEOPLE, feedback="again")
        sessions = generate_dialogue(again, seed=seed, now=NOW, user_first="Alex", days=5, plan=plan)
        verdict = check_dialogue(again, sessions, min_days=5)
        assert verdict.passed, verdict.feedback


def test_a_derivation_round_trips_through_the_record() -> None:
    piece = MemoryPiece.from_dict(PIECE)
    assert piece.derived == Derivation("less", 10, "the old limit", "70")
    assert MemoryPiece.from_dict(piece.to_dict()) == piece


FILE_DRAFT = TaskDraft(
    family="", apps=["excel"], difficulty="medium", description="Update the score sheet.",
    intent="Update the scores.", subtasks=["Update the sheet."], evaluation=[],
    memory=[MemoryPiece("m1", "fact", "the sheet is data/scores.xlsx", "data/scores.xlsx", thread="t1",
                        cue="requested", about="the score sheet"),
            MemoryPiece("m2", "fact", "the pass mark is 60", "60", thread="t1", cue="threshold",
                        about="the score sheet")],
    query="Update the score sheet now.", oracle=[ToolCall("excel_read_file", {"file_path": "data/scores.xlsx"})])


KIND_DRAFT = TaskDraft(
    family="plus", apps=["word"], difficulty="medium", description="Save the summary as notes.docx.",
    intent="Save the summary.", subtasks=["Save it."], evaluation=[],
    memory=[MemoryPiece("m1", "action", "save the summary as notes.docx", "notes.docx", thread="t1",
                        cue="requested", about="the summary document", superseded=("notes_2.docx",))],
    query="Save the summary document now.", oracle=[])


def test_an_earlier_file_is_said_by_its_name_and_kind_as_the_final_one_is() -> None:
    """A new file's earlier name comes in the final one's form as often (its name against a kind of
    file), marked as the earlier value its name says it is; the gates read it so."""
    forms = {"final": 0, "earlier": 0}
    for seed in range(12):
        plan, draft = plan_dialogue(KIND_DRAFT, seed=seed, now=NOW, days=5)
        sessions = generate_dialogue(draft, seed=seed, now=NOW, user_first="Alex", days=5, plan=plan)
        assert check_dialogue(draft, sessions, min_days=5).passed, seed
        turns = [t for s in sessions for t in s.turns]
        forms["final"] += any("m1" in t.evidence and re.search(r"\bnotes,? in the ", t.text) for t in turns)
        earlier = [t for t in turns if "notes_2" in t.text]
        assert not any("(" in t.text for t in earlier)  # said as a person says it, never in parentheses
        assert all("m1" in t.superseded for t in earlier)
        forms["earlier"] += bool(earlier)
    assert forms["final"] >= 6 and forms["earlier"] >= 4, forms


def test_a_turn_naming_an_earlier_file_by_its_name_alone_is_marked() -> None:
    piece = {"id": "m1", "kind": "action", "text": "save it as notes.docx", "value": "notes.docx", "cue": "requested",
             "superseded": ["notes_2.docx"]}
    unmarked = _turns(("Save it as notes_2, in the format from the brief.", ()), ("Okay.", ()),
                      ("Save it as notes.docx.", ("m1",)))
    problems = find_mark_problems([piece], unmarked)
    assert "day 1 turn 1: holds an earlier value of m1 but is not marked superseded" in problems
    # the final file's own name ("notes") is a plain word: it points at no earlier copy
    plain = _turns(("Save it as notes, in the format from the brief.", ()), ("Okay.", ()),
                   ("Save it as notes.docx.", ("m1",)))
    assert not any("turn 1" in p for p in find_mark_problems([piece], plain))
    # an earlier figure with a decimal point is no file: a turn with its whole part is about something else
    price = {"id": "m1", "kind": "fact", "text": "the new price is 13.50", "value": "13.50", "cue": "amount",
             "superseded": ["12.50"]}
    lunch = _turns(("The price is 12.50.", ()), ("Okay.", ()), ("Lunch at 12 with Dana.", ()), ("Fun.", ()),
                   ("The new price is 13.50.", ("m1",)))
    assert not any("turn 3" in p for p in find_mark_problems([price], lunch)), find_mark_problems([price], lunch)
    # an earlier copy named at the end of a sentence is named all the same
    last = _turns(("Save it as notes_2.", ()), ("Okay.", ()), ("Save it as notes.docx.", ("m1",)))
    assert "day 1 turn 1: holds an earlier value of m1 but is not marked superseded" in find_mark_problems([piece], last)


def test_a_day_written_in_digits_is_derived_and_its_anchor_says_it_as_written() -> None:
    for seed in range(10):
        d = draw_derivation("requested", "5/17/2024", SAID_ON, ["the audit"], random.Random(seed))
        assert d is not None and d.base in {"5/16/2024", "5/15/2024", "5/20/2024"}, d
        assert follows(d, "5/17/2024") and not follows(d, "5/18/2024")
    assert draw_derivation("requested", "05/07/2024", SAID_ON, ["the audit"], random.Random(0)).base[:3] == "05/"
    assert kind_of("requested", "13/45/2024") == "day" and draw_derivation(
        "requested", "13/45/2024", SAID_ON, ["the audit"], random.Random(0)) is None  # no such day


def test_a_near_value_takes_the_place_of_the_value_where_it_stands_as_a_word_of_its_own() -> None:
    from generators.dialogue_offline import in_place
    assert in_place("set the hw5 score of Bob to 5", "5", "6") == "set the hw5 score of Bob to 6"
    assert in_place("find the lowest score of midterm 1.", "1", "2") == "find the lowest score of midterm 2."
    assert in_place("the total is 12.5 now", "12", "13") == ""  # a figure's whole part is no value of its own


DAY_DRAFT = TaskDraft(
    family="plus", apps=["calendar"], difficulty="medium", description="Add the review on 5/17/2024.",
    intent="Add the review.", subtasks=["Add it."], evaluation=[],
    memory=[MemoryPiece("m1", "action", "add the review on 5/17/2024", "5/17/2024", thread="t1",
                        cue="requested", about="the review event", said_as="the day after the audit",
                        derived=Derivation("days_after", 1, "the audit", "5/16/2024"))],
    query="Add the review event now.", oracle=[])


def test_where_days_are_written_in_digits_a_day_named_for_nothing_is_written_so_too() -> None:
    """An anchor no value is said against says its day as the history's own days are written: a
    day in words beside digit days would tell the anchors that matter from those that do not."""
    free = 0
    for seed in range(80):
        plan, _ = plan_dialogue(DAY_DRAFT, seed=seed, now=NOW, days=5)
        for day in plan:
            for event in day.events:
                if event.move == "anchor" and event.kind == "day":
                    assert re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", event.said), (seed, event.said)
                    free += not event.mark
    assert free >= 4, free


def test_a_values_turns_found_at_once_are_those_asked_one_turn_at_a_time() -> None:
    """The marks find each value's turns in one pass (``ValueHolder.held``); a turn asked alone
    gets the same answer: a value written out, a day said in words on the day it is said, a clock
    range in words, and an earlier file named without its folder."""
    turns = marked_turns([
        {"day": 1, "date": "2024-05-20", "turns": [
            {"role": "user", "text": "The review is on Wednesday next week at 10:00."},
            {"role": "assistant", "text": "Noted: 2024-05-29 10:00, open 10:00 to 16:00."}]},
        {"day": 2, "date": "2024-05-27", "turns": [
            {"role": "user", "text": "Wednesday next week at 10:00 is not it; see scores_old.xlsx."},
            {"role": "assistant", "text": "This Wednesday at 10:00, then."}]},
        {"day": 3, "date": "not a day", "turns": [{"role": "user", "text": "wednesday next week at 10:00"}]}])
    values = ("2024-05-29 10:00", "10:00-16:00", "data/scores_old.xlsx", "Wednesday May 29", "nothing said")
    for value in values:
        alone = [ValueHolder(turns).holds(i, value) for i in range(len(turns))]
        assert ValueHolder(turns).held(value) == alone, value
        wrong = ValueHolder(turns).held_wrong(value)  # a turn that holds a value holds it as a wrong one too
        assert all(w for h, w in zip(alone, wrong) if h) and len(wrong) == len(turns), value
    holder = ValueHolder(turns)
    assert holder.held("2024-05-29 10:00") == [True, True, False, True, False]
    assert holder.held("10:00-16:00") == [False, True, False, False, False]
    assert holder.held_wrong("data/scores_old.xlsx") == [False, False, True, False, False]


def test_a_value_written_out_is_found_in_the_same_turns_whatever_the_texts_hold() -> None:
    """``held`` looks for a written value in the turns' texts joined once; random texts of a few
    letters (a value at a text's start, its end, twice in one turn, across two turns' border) and a
    text holding the joining character give the turns a turn-by-turn look gives."""
    rng = random.Random(5)
    for case in range(300):
        texts = ["".join(rng.choice("ab \0" if case % 7 == 0 else "ab ") for _ in range(rng.randrange(0, 9)))
                 for _ in range(rng.randrange(1, 6))]
        turns = marked_turns([{"day": 1, "date": "not a day",
                               "turns": [{"role": "user", "text": t} for t in texts]}])
        for value in ("a", "ab", "b a", "aba", "", "ba b"):
            alone = [ValueHolder(turns).holds(i, value) for i in range(len(turns))]
            assert ValueHolder(turns).held(value) == alone == [value in t for t in texts], (texts, value)
