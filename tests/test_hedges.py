"""Answer checks refuse what the intent-only plan and the misreadings answer, and the trace holds
them to that."""

from __future__ import annotations

from generators.hedges import answer_excludes, exclude_hedges, written_answers
from generators.model import Misreading, TaskDraft, ToolCall
from verifier.trace import OfficeText, trace_task


def answer(text: str) -> ToolCall:
    return ToolCall("system_write_answer", {"text": text})


def draft(criterion: dict, baseline: str, *misread: str) -> TaskDraft:
    read = ToolCall("pdf_read_file", {"file_path": "data/a.pdf"})
    return TaskDraft(family="f", apps=["pdf"], difficulty="easy", description="d", intent="i", subtasks=["s"],
                     evaluation=[criterion], memory=[], query="q", oracle=[read, answer("10638")],
                     baseline=[read, answer(baseline)],
                     misreadings=[Misreading(f"m{k}", "distractor", "v", [read, answer(text)]) for k, text in enumerate(misread)])


def test_the_wrong_plans_answers_become_the_check_s_excludes():
    done = exclude_hedges(draft({"function": "evaluate_answer", "args": {"number": 10638, "tolerance": 0.01}},
                                "175", "3,191.40", "175", "10638.001"))
    assert done.evaluation[0]["args"]["excludes"] == [175, 3191.4]  # once each; the right answer never


def test_words_are_refused_unless_they_overlap_the_right_answer_and_sentences_are_never_refused():
    args = {"keywords": ["Lever arch files pack"]}
    assert answer_excludes(args, ["EC-239", "Lever arch files", "Whiteboard eraser", "EC-239"]) == [
        "EC-239", "Whiteboard eraser"]
    assert answer_excludes({"number": 12}, ["The total for 2024 is 15", "  "]) == []
    assert answer_excludes(args, ["x" * 81]) == []


def test_a_draft_without_wrong_answers_or_answer_checks_is_left_as_it_is():
    mail = {"function": "evaluate_email_sent", "args": {"sender": "a", "recipient": "b", "body_keywords": ["1"]}}
    assert exclude_hedges(draft(mail, "175", "3191.4")).evaluation == [mail]
    given = {"function": "evaluate_answer", "args": {"number": 1, "excludes": [2]}}
    assert exclude_hedges(draft(given, "175")).evaluation == [given]  # a model's own excludes are kept
    assert written_answers([ToolCall("system_list_files", {}), answer(" 4 "), answer("5")]) == ["4", "5"]


def test_a_question_answered_in_words_refuses_only_the_misreadings_answers():
    done = exclude_hedges(draft({"function": "evaluate_answer", "args": {"keywords": ["EC-811"]}},
                                "Marketing events", "EC-779"))
    assert done.evaluation[0]["args"]["excludes"] == ["EC-779"]


def test_the_trace_refuses_excludes_that_no_wrong_plan_answers_or_that_hold_the_right_answer():
    record = exclude_hedges(draft({"function": "evaluate_answer", "args": {"keywords": ["EC-811"]}},
                                  "EC-239", "EC-779")).to_dict()
    office = OfficeText.of({})
    assert record["evaluation"][0]["args"]["excludes"] == ["EC-779"]
    assert not [p for p in trace_task(record, office).problems if "excludes" in p]
    record["evaluation"][0]["args"]["excludes"] += ["EC-239", "EC-999", "EC-811 and more"]
    problems = [p for p in trace_task(record, office).problems if "excludes" in p]
    assert problems == [
        "evaluation[0].args.excludes[2]: 'EC-999' is not what the intent-only plan or a misreading answers",
        "evaluation[0].args.excludes[3]: 'EC-811 and more' is the right answer, or part of it"]  # [1]: the baseline's
