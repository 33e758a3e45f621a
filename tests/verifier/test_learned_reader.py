"""The discriminative reader (``verifier.learned_reader``): it finds evidence turns whose form gives
them away, its typed guesser fills each piece from the best-ranked turn, and neither can guess a
value said in no single turn."""

from __future__ import annotations

import pytest

from verifier.learned_reader import (LearnedReader, best_f1, candidates, evaluate_learned, guess, turn_document,
                                     value_kind)

from tests.verifier.test_adversary import leaky


def test_a_leaky_form_is_learnt_from_one_build_and_found_in_another():
    found = evaluate_learned(leaky(1), leaky(2))
    logreg, guesser = found["tfidf_logreg"], found["typed_guesser"]
    assert not found["passed"]
    assert logreg["precision"] == 1.0 and logreg["recall"] == 1.0
    # the top 5 turns hold the final value and no earlier one where none was said (half the tasks)
    assert logreg["isolation"] == 0.5
    # the guesser takes the number in the best-ranked turn: right in every task
    assert guesser["all_right"] == 1.0 and guesser["pieces_right"] == 1.0
    assert any("it's <v> now" in name for name, _ in found["strongest"])  # the evidence turns' own frame


def test_the_guesser_cannot_take_a_value_said_in_no_single_turn():
    train, test = leaky(1), leaky(2)
    for record in test:  # the final value now comes as a sum of two turns: nowhere verbatim
        turn = record["dialogue"][0]["turns"][12]
        value = int(record["memory"][0]["value"])
        turn["text"] = f"Scratch that on the plan, it's {value - 40} plus the 40 from Priya now."
    found = evaluate_learned(train, test)
    assert found["typed_guesser"]["all_right"] == 0.0
    assert found["tfidf_logreg"]["isolation"] == 0.0


def test_a_derived_value_is_isolated_only_with_its_anchor_and_never_guessed_from_its_relation():
    from verifier.adversary import isolates

    record = {"memory": [{"id": "m1", "value": "data/scores.xlsx", "said_as": "the file from the handover I mentioned",
                          "derived": {"rule": "refers", "amount": 0, "anchor": "the file from the handover",
                                      "base": "scores.xlsx"}}],
              "dialogue": [{"day": 1, "turns": [
                  {"role": "user", "text": "Set Bob's score in the file from the handover I mentioned to 95."},
                  {"role": "assistant", "text": "Okay."},
                  {"role": "user", "text": "The file from the handover is scores.xlsx."}]}]}
    relation, anchor = record["dialogue"][0]["turns"][0]["text"], record["dialogue"][0]["turns"][2]["text"]
    assert isolates(record, [relation, anchor]) and not isolates(record, [relation])
    ranked = [(1.0, {"text": relation}), (0.5, {"text": anchor})]
    assert guess(record, ranked) == (0, 1)  # the relation is no answer; the anchor's value is not the value
    said = {**record, "memory": [{"id": "m1", "value": "data/scores.xlsx"}]}
    assert guess(said, [(1.0, {"text": "Set Bob's score in data/scores.xlsx to 95."})]) == (1, 1)


def test_the_guesser_follows_the_ranking():
    record = leaky(3)[1]  # final 113, an earlier 317 said in its own turn
    reader = LearnedReader(leaky(1))
    ranked = reader.rank(record)
    assert guess(record, ranked) == (1, 1)
    # ranked the other way round, the earlier value's turn comes first and the guess is wrong
    assert guess(record, list(reversed(ranked))) == (0, 1)


def test_kinds_candidates_and_documents():
    assert value_kind("report_q3.docx") == "file"
    assert value_kind("14:00") == "time"
    assert value_kind("Friday next week") == "day"
    assert value_kind("Priya Okafor") == "name"
    assert value_kind("250") == "number"
    assert value_kind("the cost column") == "phrase"
    text = "Send it to Priya Okafor, not Sam Ode, by 14:00 with report_q3.docx and 250 copies."
    assert candidates(text, "name", []) == ["Priya Okafor", "Sam Ode"]
    assert candidates(text, "time", []) == ["14:00"]
    assert candidates(text, "file", ["report_q3.docx"]) == ["report_q3.docx", "report_q3.docx"]
    assert candidates(text, "phrase", ["the cost column"]) == []
    doc = turn_document({"text": "Use 250 for it.", "before": "Which figure?"}, place=0, count=10)
    assert "<v>" in doc and "ctx:figure" in doc and "after:question" in doc and "pos:0" in doc


def test_best_f1_and_a_build_without_both_labels():
    scored = [(0.9, True), (0.8, False), (0.7, True), (0.1, False)]
    precision, recall, f1 = best_f1(scored, 2)
    assert (precision, recall) == (pytest.approx(2 / 3), 1.0) and f1 == pytest.approx(0.8)
    with pytest.raises(ValueError, match="evidence turns and other turns"):
        LearnedReader([{"dialogue": [{"turns": [{"role": "user", "text": "hi"}]}], "memory": []}])


def test_a_turn_marked_as_saying_a_wrong_value_breaks_isolation_in_whatever_words_it_says_it():
    from verifier.adversary import isolates, user_turns

    record = {"memory": [{"id": "m1", "value": "2024-05-07", "said_as": "Tuesday the 7th of next month",
                          "superseded": ["2024-05-06"]}],
              "dialogue": [{"day": 1, "turns": [
                  {"role": "user", "text": "It's Monday the 6th of next month for that message.", "superseded": ["m1"]},
                  {"role": "assistant", "text": "Okay."},
                  {"role": "user", "text": "On that one, it's Tuesday the 7th of next month.", "evidence": ["m1"]}]}]}
    turns = user_turns(record)
    assert [t["wrong"] for t in turns] == [True, False]
    assert isolates(record, turns[1:]) and not isolates(record, turns)
    # read as bare text, the earlier day said in words slips past a value match
    assert isolates(record, [t["text"] for t in turns])
