"""The discriminative reader (``verifier.learned_reader``): it finds evidence turns whose form gives
them away, its typed guesser fills each piece from the best-ranked turn, and neither can guess a
value said in no single turn."""

from __future__ import annotations

import collections

import pytest

from verifier.learned_reader import (REPORT_MIN_TASKS, LearnedReader, best_f1, candidates, cross_validated,
                                     evaluate_learned, evaluate_query_aware, guess, halves, held_out_folds, on_folds,
                                     pooled, query_overlap, share_key, spread, turn_document, value_kind)

from tests.verifier.test_adversary import FILLER, leaky


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


# -- held-out folds: a reader is never scored on what it memorised -------------------------------

def _seeded(seed_words: list[str], run: int) -> list[dict]:
    """Regenerated tasks, one per seed task: each history says its seed's own request (evidence)
    and the request with one word changed (a near miss) in the same frames, among filler; which
    frame and which place says which changes from task to task, so only the seed's words tell
    the right one."""
    out = []
    for t, (right, wrong) in enumerate(seed_words):
        turns = []
        for i, line in enumerate(FILLER):
            turns.append({"role": "user", "text": f"{line} ({i + t + run})"})
            turns.append({"role": "assistant", "text": "Sure."})
        frames = ["For the report, we have to {} next week.", "Part of the plan: we have to {} next week."]
        first, second = (frames if (t + run) % 2 else frames[::-1])
        here, there = (6, 14) if (t // 2 + run) % 2 else (14, 6)  # nor does the place in the day
        turns[here] = {"role": "user", "text": first.format(right), "evidence": ["m1"]}
        turns[there] = {"role": "user", "text": second.format(wrong), "distractor": ["m1"]}
        out.append({"id": f"plus-{t}-r{run}", "provenance": {"seed_task": f"{t}/0"},
                    "dialogue": [{"day": 1, "turns": turns}],
                    "memory": [{"id": "m1", "value": right, "text": right,
                                "distractors": [{"value": wrong, "text": wrong}]}]})
    return out


WORDS = ["audit", "budget", "rota", "offsite", "invoice", "payroll", "survey", "roster", "ledger", "catalog",
         "forecast", "inventory", "quota", "tender", "pension", "mileage", "canteen", "parking", "badge", "locker",
         "archive", "backlog", "pipeline", "timesheet"]
# the right request names a sheet as often as a memo: only each seed's own pair tells which
SEED_WORDS = [(f"file the {w} {a}", f"file the {w} {b}") for i, w in enumerate(WORDS)
              for a, b in [("sheet", "memo") if i % 2 else ("memo", "sheet")]]


def test_a_reader_that_trained_on_the_seeds_it_is_scored_on_tells_them_by_their_words_and_a_held_out_one_cannot():
    train, test = _seeded(SEED_WORDS, 1), _seeded(SEED_WORDS, 2)
    same = evaluate_learned(train, test)["tfidf_logreg"]
    folds = held_out_folds(train, test)
    held = on_folds(folds, evaluate_learned)["tfidf_logreg"]
    # "the audit sheet" was the evidence in training and "the audit memo" the near miss: so again
    assert same["peak_precision"] == 1.0 and same["precision"] == 1.0
    assert held["peak_precision"] < 0.75 and held["precision"] <= 0.5  # new seeds: right and wrong look alike
    for fold_train, fold_test in folds:  # no seed task on both sides, every test task in one fold
        assert not {share_key(r) for r in fold_train} & {share_key(r) for r in fold_test}
    assert sorted(r["id"] for _, fold_test in folds for r in fold_test) == sorted(r["id"] for r in test)


def test_halves_are_balanced_fixed_and_blind_to_order_and_keys_say_what_tasks_share():
    keys = [f"seed:{i}" for i in range(7)]
    half = halves(keys)
    assert half == halves(list(reversed(keys)) + keys[:3])  # order and repeats do not move a key
    assert sorted(collections.Counter(half.values()).values()) == [3, 4]
    assert share_key({"provenance": {"seed_task": "1-10/0"}}) == share_key({"provenance": {"seed_task": "1-10/2"}})
    assert share_key({"provenance": {"world_seed": 5}, "id": "a"}) == share_key({"provenance": {"world_seed": 5}})
    assert share_key({"id": "a"}) != share_key({"id": "b"})
    assert held_out_folds([{"id": "a"}], [{"id": "a"}]) == []  # one key: no two halves
    assert spread(list(range(10)), 4) == [0, 2, 5, 7] and spread([1, 2], 4) == [1, 2]
    assert pooled([{"x": 1.0, "ok": True, "d": {"y": 0.0}}, {"x": 0.0, "ok": False, "d": {"y": 3.0}}],
                  [3, 1]) == {"x": 0.75, "ok": False, "d": {"y": 0.75}}


def test_a_builds_own_report_finds_a_leaky_form_on_held_out_halves_and_needs_enough_tasks():
    records = [{**r, "id": f"{r['id']}-{run}"} for run in (1, 2) for r in leaky(run)]  # 24 tasks, no office
    found = cross_validated(records)
    assert found is not None and not found["passed"] and found["apart"] == "task" and found["tasks"] == 24
    assert found["tfidf_logreg"]["precision"] == 1.0
    assert cross_validated(records[:REPORT_MIN_TASKS - 1]) is None
    clean = _seeded(SEED_WORDS, 1)  # the form tells nothing; the seeds are held out
    report = cross_validated(clean)
    assert report is not None and report["apart"] == "seed task" and report["tasks"] == len(WORDS)
    assert report["tfidf_logreg"]["precision"] < 0.6  # half its best-ranked turns are the near misses


def test_offices_too_unequal_for_two_halves_are_dealt_by_task_and_counts_of_tasks_add_up():
    # two offices of 19 and 3 tasks: by office, the reader of 3 tasks would speak for 19 of 22
    records = [{**r, "id": f"{r['id']}-{run}", "provenance": {"world_seed": 1 if run == 1 or i < 8 else 2}}
               for run in (1, 2) for i, r in enumerate(leaky(run, 11))]
    assert collections.Counter(share_key(r) for r in records) == {"world:1": 19, "world:2": 3}
    found = cross_validated(records)
    assert found is not None and found["apart"] == "task" and found["tasks"] == 22
    even = [{**r, "provenance": {"world_seed": i % 2}} for i, r in enumerate(records)]
    assert cross_validated(even)["apart"] == "office"  # type: ignore[index]
    assert pooled([{"tfidf_logreg": {"tasks": 3, "isolation": 0.0}}, {"tfidf_logreg": {"tasks": 1, "isolation": 1.0}}],
                  [3, 1]) == {"tfidf_logreg": {"tasks": 4, "isolation": 0.25}}


def test_a_query_aware_reader_finds_the_turns_about_the_tasks_own_work_where_the_form_tells_nothing():
    def worked(run: int) -> list[dict]:  # the right figure is said for the task's work, the wrong one for another's
        out = []
        for t, w in enumerate(WORDS):
            other = WORDS[(t + 7) % len(WORDS)]
            turns = []
            for i, line in enumerate(FILLER):
                turns.append({"role": "user", "text": f"{line} ({i + t + run})"})
                turns.append({"role": "assistant", "text": "Sure."})
            here, there = (6, 14) if (t + run) % 2 else (14, 6)
            turns[here] = {"role": "user", "text": f"For the {w} budget, make it {100 + t} now.", "evidence": ["m1"]}
            turns[there] = {"role": "user", "text": f"For the {other} budget, make it {200 + t} now.",
                            "distractor": ["m1"]}
            out.append({"id": f"w{t}-{run}", "query": f"Where are we with the {w} budget?",
                        "dialogue": [{"day": 1, "turns": turns}],
                        "memory": [{"id": "m1", "value": f"{100 + t}", "distractors": [{"value": f"{200 + t}"}]}]})
        return out

    train, test = worked(1), worked(2)
    plain = evaluate_learned(train, test)["tfidf_logreg"]
    aware = evaluate_query_aware(train, test)
    assert plain["precision"] <= 0.5  # the two turns are one form
    assert aware["tfidf_logreg"]["precision"] == 1.0  # every task's own turn ranked above the other work's
    assert any(name.startswith("qw:") for name, _ in aware["strongest"])
    assert query_overlap("For the audit budget, make it <v> now.", "Where are we with the audit budget?") == \
        ["qw:2", "qb:1"]
