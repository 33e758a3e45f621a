"""Answer checks refuse what the intent-only plan and the misreadings answer, and the trace holds
them to that."""

from __future__ import annotations

import shutil
from dataclasses import replace

from generators.hedges import answer_excludes, exclude_hedges, guard_hedges, hedged_plan, written_answers
from generators.model import Misreading, TaskDraft, ToolCall
from office_env import Workspace, default_registry, evaluate_criteria
from office_env.sample import SAMPLE_NOW
from tests.support.records import typed_record
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


def test_the_intent_only_count_of_the_same_data_is_context_unless_a_misreading_answers_it():
    """"3 of the 33 claims are Travel." failed: 33, every row counted by the intent-only plan, was refused."""
    count = {"function": "evaluate_answer", "args": {"number": 10638, "tolerance": 0.01}}
    # the intent alone reads the oracle's file and counts every row: the whole the asked count is part of
    same = replace(draft(count, "33", "5"), family="group_headcount")
    assert exclude_hedges(same).evaluation[0]["args"]["excludes"] == [5]
    assert exclude_hedges(replace(draft(count, "33", "33"), family="group_headcount")).evaluation[0]["args"][
        "excludes"] == [33]
    other = replace(same, baseline=[ToolCall("pdf_read_file", {"file_path": "data/b.pdf"}), answer("33")])
    assert exclude_hedges(other).evaluation[0]["args"]["excludes"] == [33, 5]  # another file: a hedge
    nothing = replace(same, baseline=[answer("33")])  # a default, read from nothing: a hedge
    assert exclude_hedges(nothing).evaluation[0]["args"]["excludes"] == [33, 5]
    # elsewhere the same file's other figure (another column's total) answers the same question wrongly
    assert exclude_hedges(replace(same, family="sheet_total")).evaluation[0]["args"]["excludes"] == [33, 5]


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


def traced(draft_data: dict, office: OfficeText):
    """The trace of a task made of a draft as written (``TaskDraft.to_dict``): the sample record
    with the draft's fields."""
    return trace_task(typed_record("t-1", **draft_data), office)


def test_the_trace_refuses_excludes_that_no_wrong_plan_answers_or_that_hold_the_right_answer():
    record = exclude_hedges(draft({"function": "evaluate_answer", "args": {"keywords": ["EC-811"]}},
                                  "EC-239", "EC-779")).to_dict()
    office = OfficeText.of({})
    assert record["evaluation"][0]["args"]["excludes"] == ["EC-779"]
    assert not [p for p in traced(record, office).problems if "excludes" in p]
    record["evaluation"][0]["args"]["excludes"] += ["EC-239", "EC-999", "EC-811 and more"]
    problems = [p for p in traced(record, office).problems if "excludes" in p]
    assert problems == [
        "evaluation[0].args.excludes[2]: 'EC-999' is not what the intent-only plan or a misreading answers",
        "evaluation[0].args.excludes[3]: 'EC-811 and more' is the right answer, or part of it"]  # [1]: the baseline's


# -- hedges beyond the answer file: every output refuses the misread value written beside the right one

def _task(oracle: list[ToolCall], criteria: list[dict], *misread: list[ToolCall], value: str = "") -> TaskDraft:
    return TaskDraft(family="f", apps=["email"], difficulty="easy", description="d", intent="i", subtasks=["s"],
                     evaluation=criteria, memory=[], query="q", oracle=oracle, baseline=[],
                     misreadings=[Misreading("m1", "distractor", value, plan) for plan in misread])


def _passes(testbed, plan: list[ToolCall], criteria: list[dict]) -> bool:
    copy = testbed.parent / f"run{len(list(testbed.parent.iterdir()))}"
    shutil.copytree(testbed, copy)
    ws = Workspace(copy, now=SAMPLE_NOW)
    calls = default_registry().run(ws, [(c.tool, c.args) for c in plan])
    assert all(c.ok for c in calls), [c.observation for c in calls if not c.ok]
    return evaluate_criteria(ws, criteria).passed


def _proof(testbed, task: TaskDraft) -> tuple[bool, bool, list[bool]]:
    """(oracle passes, every misreading fails, each hedge fails) under the guarded criteria."""
    guarded = guard_hedges(task).evaluation
    hedges = [hedged_plan(task.oracle, m.plan, m.value) for m in task.misreadings]
    assert all(h != task.oracle for h in hedges)
    return (_passes(testbed, task.oracle, guarded),
            not any(_passes(testbed, m.plan, guarded) for m in task.misreadings),
            [not _passes(testbed, h, task.evaluation) for h in hedges] + [not _passes(testbed, h, guarded) for h in hedges])


def mail(to: str, body: str, subject: str = "Invoice 7731") -> ToolCall:
    return ToolCall("email_send_email", {"sender": "alice", "recipient": to, "subject": subject, "content": body})


def test_the_answer_mailed_to_the_wrong_person_too_is_refused(testbed):
    right = [mail("bob", "Invoice 7731 totals 12,500.00 and is due on 2024-05-31.")]
    wrong = [mail("carol", "Invoice 7731 totals 12,500.00 and is due on 2024-05-31.")]
    check = {"function": "evaluate_email_sent", "args": {"sender": "alice", "recipient": "bob",
                                                         "body_keywords": ["12,500.00", "2024-05-31"]}}
    task = _task(right, [check], wrong, value="Carol")
    assert _proof(testbed, task) == (True, True, [False, True])  # the plain check let the hedge pass
    guard = guard_hedges(task).evaluation[1]
    assert guard == {"function": "evaluate_email_not_sent", "args": {
        "sender": "alice", "recipient": "carol", "body_keywords": ["12,500.00", "2024-05-31"]}}


def test_a_misread_figure_in_the_same_mail_or_a_second_one_is_refused(testbed):
    right = [mail("bob", "The Q4 budget is 30,100.")]
    wrong = [mail("bob", "The Q3 budget is 28,400.")]
    check = {"function": "evaluate_email_sent", "args": {"sender": "alice", "recipient": "bob", "body_keywords": ["30,100"]}}
    task = _task(right, [check], wrong, value="Q3")
    assert _proof(testbed, task) == (True, True, [False, True])
    assert len(hedged_plan(right, wrong, "Q3")) == 1  # one mail holding both
    assert not _passes(testbed, right + wrong, guard_hedges(task).evaluation)  # two mails: refused too
    # a shorter list adds nothing to the right one: no hedge, no guard
    subset = _task([mail("bob", "Alice, Bob and Carol")], [check], [mail("bob", "Alice and Bob")])
    assert hedged_plan(subset.oracle, subset.misreadings[0].plan) == subset.oracle
    assert guard_hedges(subset).evaluation == [check]


def test_a_meeting_booked_at_the_misread_time_too_is_refused(testbed):
    def book(start: str, end: str) -> ToolCall:
        return ToolCall("calendar_create_event", {"user": "alice", "summary": "Vendor review", "start": start, "end": end})

    right, wrong = [book("2024-05-08 14:00:00", "2024-05-08 15:00:00")], [book("2024-05-08 13:00:00", "2024-05-08 14:00:00")]
    check = {"function": "evaluate_calendar_event", "args": {"username": "alice", "summary": "Vendor review",
                                                             "start": "2024-05-08 14:00:00", "end": "2024-05-08 15:00:00"}}
    assert _proof(testbed, _task(right, [check], wrong, value="13:00")) == (True, True, [False, True])


def test_a_memo_naming_the_misread_value_too_is_refused_and_short_numbers_are_never_refused(testbed):
    def memo(text: str) -> ToolCall:
        return ToolCall("word_write_to_file", {"file_path": "data/memo.docx", "content": text})

    check = {"function": "evaluate_contain", "args": {"doc_type": "docx", "file": "data/memo.docx", "keywords": ["Dana"]}}
    task = _task([memo("Dana is away from 2024-05-29 until 2024-06-14.")], [check],
                 [memo("Received: Hana Novak is away from 2024-06-17 for 6 days.")], value="Hana Novak")
    assert _proof(testbed, task) == (True, True, [False, True])
    refused = guard_hedges(task).evaluation[1]["args"]["keywords"]
    assert refused == ["2024-06-17"]  # the misread date; the name may stand as context
    assert "6" not in refused  # "6" is in any date of June, and a lone capitalised word ("Received") is any text's


def test_a_sheet_of_the_task_s_own_refuses_the_misread_rows_and_the_office_s_sheet_its_other_cells(testbed):
    def cell(file: str, row: int, col: int, value) -> ToolCall:
        return ToolCall("excel_set_cell", {"file_path": file, "row": row, "col": col, "value": value})

    new = ToolCall("excel_create_new_file", {"file_path": "data/log.xlsx"})
    right = [new, cell("data/log.xlsx", 1, 1, "Invoice"), cell("data/log.xlsx", 2, 1, "INV-7731")]
    wrong = [new, cell("data/log.xlsx", 1, 1, "Invoice"), cell("data/log.xlsx", 2, 1, "INV-8032")]
    check = {"function": "evaluate_excel_cell_value",
             "args": {"file": "data/log.xlsx", "matches": [{"row": 2, "col": 1, "value": "INV-7731"}]}}
    task = _task(right, [check], wrong)
    assert hedged_plan(right, wrong)[-1].args["row"] == 4  # the misread row below the right ones
    assert _proof(testbed, task) == (True, True, [False, True])
    # the office's own sheet: a row the right work leaves alone keeps its value
    office = [cell("data/scores.xlsx", 2, 2, 88)]
    other = [cell("data/scores.xlsx", 3, 2, 88)]
    check = {"function": "evaluate_excel_cell_value", "args": {"file": "data/scores.xlsx",
                                                               "matches": [{"row": 2, "col": 2, "value": 88}]}}
    task = _task(office, [check], other)
    assert guard_hedges(task).evaluation[1]["args"]["matches"] == [{"row": 3, "col": 2, "comparator": "!= 88"}]
    assert _proof(testbed, task) == (True, True, [False, True])
    # one cell holds one value: the same cell with another value cannot be hedged
    same = [cell("data/scores.xlsx", 2, 2, 77)]
    assert hedged_plan(office, same) == office and guard_hedges(_task(office, [check], same)).evaluation == [check]
    # rows marked one by one: a misreading that marks fewer of them (a stricter cut) marks nothing
    # the right work leaves alone, so there is no hedge and no guard, wherever its calls fall
    marks = [cell("data/scores.xlsx", r, 5, "Queried") for r in (2, 4, 7)]
    fewer = [marks[1], marks[2]]
    rows = {"function": "evaluate_excel_cell_value", "args": {"file": "data/scores.xlsx", "matches": [
        {"row": r, "col": 5, "value": "Queried"} for r in (2, 4, 7)]}}
    assert hedged_plan(marks, fewer) == marks
    assert guard_hedges(_task(marks, [rows], fewer)).evaluation == [rows]
    # one more row than the right work marks is refused, and the right marks still pass
    more = [*marks, cell("data/scores.xlsx", 9, 5, "Queried")]
    task = _task(marks, [rows], more)
    assert guard_hedges(task).evaluation[1]["args"]["matches"] == [{"row": 9, "col": 5, "comparator": '!= "Queried"'}]
    assert _proof(testbed, task) == (True, True, [False, True])


def test_a_file_under_the_misread_name_too_is_refused(testbed):
    def pdf(out: str) -> ToolCall:
        return ToolCall("word_convert_to_pdf", {"file_path": "data/notes.docx", "output_path": out})

    check = {"function": "evaluate_file_exist", "args": {"file": "data/brief_may.pdf"}}
    task = _task([pdf("data/brief_may.pdf")], [check], [pdf("data/brief_april.pdf")])
    assert guard_hedges(task).evaluation[1] == {"function": "evaluate_file_not_exist", "args": {"file": "data/brief_april.pdf"}}
    assert _proof(testbed, task) == (True, True, [False, True])


def test_the_trace_takes_a_refusing_check_s_arguments_from_the_wrong_plans_only():
    task = _task([mail("bob", "Total 12,500.00")],
                 [{"function": "evaluate_email_sent", "args": {"sender": "alice", "recipient": "bob", "body_keywords": ["12,500.00"]}}],
                 [mail("carol", "Total 12,500.00")], value="Carol")
    record = guard_hedges(task).to_dict()
    office = OfficeText.of({"data/invoice.pdf": "Total due: 12,500.00 USD"})
    assert not [p for p in traced(record, office).problems if "evaluation[1]" in p]
    record["evaluation"][1]["args"]["recipient"] = "dave"  # refuses what no wrong plan does
    assert [p for p in traced(record, office).problems if "evaluation[1].args.recipient" in p]


def test_a_mail_may_name_the_near_miss_as_context_but_not_its_figures(testbed):
    right = [mail("bob", "Redleaf Software invoice INV-2024-8616 for 1270 is due on 2024-06-06.")]
    wrong = [mail("bob", "Summit Facility Care invoice INV-2024-4410 for 4425 is due on 2024-06-03.")]
    check = {"function": "evaluate_email_sent", "args": {"sender": "alice", "recipient": "bob",
                                                         "body_keywords": ["INV-2024-8616", "1270"]}}
    task = _task(right, [check], wrong, value="Summit Facility Care")
    guards = guard_hedges(task).evaluation[1:]
    assert [g["args"]["body_keywords"] for g in guards] == [["4410"], ["4425"], ["2024-06-03"]]
    assert _proof(testbed, task) == (True, True, [False, True])
    context = [mail("bob", "Redleaf Software invoice INV-2024-8616 for 1270 is due on 2024-06-06 "
                           "(not the Summit Facility Care one, that is paid).")]
    assert _passes(testbed, context, guard_hedges(task).evaluation)
    # with no figure to tell them apart, the near miss's words are refused only all together
    names = _task([mail("bob", "Ask Dana Reyes.")], [check], [mail("bob", "Ask Omar Haddad in Payroll Services.")])
    assert [g["args"]["body_keywords"] for g in guard_hedges(names).evaluation[1:]] == [["Omar Haddad", "Payroll Services"]]
