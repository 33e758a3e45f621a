"""A value must be right where an output states it (office_env/evaluation/stated.py, the
evaluate_stated_values check, and generators/stated_values.py, which writes it for every mail and
document of a task's oracle)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks, task_now
from backends.task_record import plan_calls
from generators.model import TaskDraft, ToolCall
from generators.stated_values import state_checks
from office_env.evaluation import evaluate_criteria, validate_criteria
from office_env.evaluation.stated import wrong_statements
from office_env.officebench_translate import to_officebench
from office_env.replays import replay_plan
from office_env.synthesis.world import Person
from orchestrator.build import build
from orchestrator.roles import BuildConfig

THRESHOLD = {"value": "75", "kind": "number", "before": ["below", "under", "threshold", "limit"]}
TOTAL = {"value": "202.15", "kind": "number", "before": ["come to"]}
AGENDA = {"value": "data/agenda_plan_mar11.docx", "kind": "file", "before": ["agenda"]}
SUPPLIER = {"value": "Larchmont Stationers", "kind": "name", "after": ["agreement"],
            "others": ["Greenline Office Supply", "Clara Laurent"]}
OLD_DAY = {"value": "2025-04-01", "kind": "day", "before": ["sync from"]}
OLD_TIME = {"value": "14:30", "kind": "time", "before": ["sync from"]}
ALL = [THRESHOLD, TOTAL, AGENDA, SUPPLIER, OLD_DAY, OLD_TIME]


@pytest.mark.parametrize("text", [
    "Below 75 quantity: Tea selection box and Label printer.",
    "These are under the reorder threshold of seventy-five: Tea box (12), charger (40).",
    "Items below threshold: Tea box (12), charger (40).",  # a stock level beside a row is no threshold
    "3 items are below 75, and the claims come to 202.15 EUR.",
    "Together they come to two hundred and two point one five EUR.",
    "Agenda: agenda_plan_mar11.docx. Notes from last time are in meeting_notes.docx.",
    "Hi Clara Laurent, the Larchmont Stationers agreement ends on 27 August.",
    "I had to move the sync from 2025-04-01 14:30 to 2025-04-03 13:00-13:30.",
    "I moved the sync from Tuesday 1 April at 2:30 pm to Thursday 3 April at 13:00.",
    "I've moved the sync to 2025-04-03 13:00.",
    "I've moved the sync to Thursday, 3 April from 13:00 to 13:30.",
    "Nothing about any of it here.",
    "Below 75 quantity, or 3 items in all; 3/4 of them are tea.",
])
def test_a_right_or_unstated_value_passes_in_any_natural_form(text):
    assert wrong_statements(text, ALL, day_first=True) == []


@pytest.mark.parametrize("text, wrong", [
    ("Below 76 quantity: Tea selection box.", "76"),
    ("Everything under 750 is listed.", "750"),
    ("Below the limit of 74: Tea selection box.", "74"),
    ("Together they come to 203.15 EUR.", "203.15"),
    ("Together they come to 2,021.50 EUR.", "2021.50"),
    ("Below 75 or 76 quantity: Tea selection box.", "76"),  # a hedge offers the second in the first's place
    ("Together they come to 202.15/203.15 EUR.", "203.15"),
    ("Software licenses lead with 202.15 or maybe 203.15 EUR.", "203.15"),  # no cue: still a hedge
    ("Agenda: data/meeting_notes.docx", "meeting_notes.docx"),
    ("The Greenline Office Supply agreement ends on 27 August.", "greenline office supply"),
    ("I had to move the sync from 2025-04-01 15:30 to 2025-04-03 13:00-13:30.", "15:30"),
    ("I had to move the sync from 2 April 2025 14:30 to 2025-04-03 13:00.", "2 april 2025"),
])
def test_a_wrong_value_where_the_output_states_it_fails_naming_it(text, wrong):
    problems = wrong_statements(text, ALL, day_first=True)
    assert len(problems) == 1 and wrong in problems[0], problems


# a mail from Zara to Elliot, its total drawn from po_log_2024.xlsx: the greeting's name, the name
# signed under the closing and the file named as the source are checked
COLLEAGUES = ["Hugo", "Hugo Wakefield", "Naomi", "Naomi Blackwood"]
GREETED = {"value": "Elliot", "kind": "name", "before": ["hi", "hello", "dear", "hey"], "others": COLLEAGUES}
SIGNED = {"value": "Zara", "kind": "name", "before": ["sign-off"], "others": COLLEAGUES}
SOURCE = {"value": "po_log_2024.xlsx", "kind": "file", "alone": ["totals_mar4.docx"]}
ADDRESSED = [GREETED, SIGNED, SOURCE]


@pytest.mark.parametrize("text", [
    "Hi Elliot,\n\nThe total quantity in po_log_2024.xlsx is 1.\n\nBest,\nZara",
    "Hello Elliot Gutierrez,\n\nthe total is 1 (data/po_log_2024.xlsx).\n\nKind regards,\nZara Osei\nOperations",
    "Hi Elliot and Hugo,\n\nHugo asked for the total: 1. It is in totals_mar4.docx.\n\nThanks,\nZara",
    "Hi,\n\nThe total is 1: po_log_2024.xlsx has it, budget.xlsx does not.\n\nZara",
    "Dear all,\nthe total is 1.\nCheers",
    "Hi Elliot, Naomi says the total is 1. Thanks, Zara",
])
def test_a_right_greeting_sign_off_and_source_pass_in_any_natural_form(text):
    assert wrong_statements(text, ADDRESSED, day_first=True) == []


@pytest.mark.parametrize("text, wrong", [
    ("Hi Hugo,\n\nThe total quantity in po_log_2024.xlsx is 1.\n\nBest,\nZara", "hugo"),
    ("Dear Naomi Blackwood, the total is 1.", "naomi blackwood"),
    ("Hi Elliot,\n\nThe total is 1.\n\nBest regards,\nHugo Wakefield", "hugo wakefield"),
    ("Hi Elliot,\n\nThe total is 1.\n\nThanks!\n\nNaomi", "naomi"),
    ("Hi Elliot,\n\nThe total quantity in budget.xlsx is 1.", "budget.xlsx"),
    ("Hi Elliot,\n\nThe total in data/po_log_2023.xlsx is 1, see totals_mar4.docx.", "po_log_2023.xlsx"),
])
def test_another_colleague_greeted_or_signing_or_another_source_file_fails(text, wrong):
    problems = wrong_statements(text, ADDRESSED, day_first=True)
    assert len(problems) == 1 and wrong in problems[0], problems



@pytest.mark.parametrize("text, passes", [
    ("Hi Elliot,\n\nElliot or Hugo can approve it; Hugo/Naomi sign.\n\nBest,\nZara", True),  # who may act
    ("Hi Elliot,\n\nHugo or Elliot can approve it.\n\nBest,\nZara", True),
    ("Hi Elliot or Hugo,\n\nThe total is 1.\n\nBest,\nZara", False),  # the greeting itself hedges
    ("Hi Elliot,\n\nThe total is 1.\n\nBest,\nZara or Naomi", False),
])
def test_names_offered_as_alternatives_hedge_only_in_the_greeting_or_the_sign_off(text, passes):
    """A mail to Elliot that says "Elliot or Hugo can approve it" names who may act, and a careful
    reader takes it; "Hi Elliot or Hugo," does not say whom the mail is to."""
    problems = wrong_statements(text, ADDRESSED, day_first=True)
    assert (problems == []) is passes, problems
    if not passes:
        assert "offers" in problems[0]


# a memo of the largest increase from Q1 to Q3, and a quote checked against Hardware's Q2 line
FIRST = {"value": "Q1", "kind": "period", "before": ["increase from"]}
SECOND = {"value": "Q3", "kind": "period", "before": ["increase to"]}
LINE = {"value": "Q2", "kind": "period", "before": ["hardware"], "after": ["margin"]}
PERIODS = [FIRST, SECOND, LINE]


@pytest.mark.parametrize("text", [
    "Largest increase from Q1 to Q3: Office supplies, up 3200.",
    "The largest increase from the first quarter to the third quarter is Office supplies.",
    "The quote is over budget for Hardware in Q2: margin 24000 (Q1 had 22000).",
    "Hardware, Q2 2025: over budget.",
    "Sales for February grew; the margin in March was thin.",
])
def test_a_right_or_unstated_period_passes(text):
    assert wrong_statements(text, PERIODS, day_first=True) == []


@pytest.mark.parametrize("text, wrong", [
    ("Largest increase from Q3 to Q1: Office supplies, up 3200.", ["'q3' by 'increase from'", "'q1' by 'increase to'"]),
    ("Largest increase from Q1 to Q2: Office supplies, up 3200.", ["'q2' by 'increase to'"]),
    ("Largest increase from Q4 to Q3: Office supplies.", ["'q4' by 'increase from'"]),
    ("The quote is over budget for Hardware in Q3: margin 24000.", ["'q3' by 'hardware'"]),
    ("The quote is over budget for Hardware in the fourth quarter.", ["'fourth quarter' by 'hardware'"]),
    ("The quote is over budget for Hardware in Q2 or Q3: margin 24000.",
     ["offers 'q2' beside 'Q3'", "offers 'q3' beside 'Q2'"]),  # a hedge, whichever of the two is right
])
def test_a_wrong_period_or_a_pair_said_the_other_way_round_fails(text, wrong):
    problems = wrong_statements(text, PERIODS, day_first=True)
    assert len(problems) == len(wrong) and all(w in p for w, p in zip(wrong, problems)), problems


def test_the_generator_checks_the_periods_a_memo_names():
    memo = "Change memo\nLargest increase from Q1 to Q3: Office supplies, up 3200."
    draft = TaskDraft(description="d", intent="i", subtasks=["s"], memory=[], query="q", oracle=[
        ToolCall("excel_read_file", {"file_path": "data/budget.xlsx"}),
        ToolCall("word_write_to_file", {"file_path": "data/memo.docx", "content": memo})], evaluation=[
        {"function": "evaluate_contain",
         "args": {"doc_type": "docx", "file": "data/memo.docx", "keywords": ["Office supplies", "3200"]}}])
    checks = [c for c in state_checks(draft).evaluation if c["function"] == "evaluate_stated_values"]
    assert len(checks) == 1 and validate_criteria(checks) == []
    periods = [v for v in checks[0]["args"]["values"] if v["kind"] == "period"]
    assert periods == [{"value": "Q1", "kind": "period", "before": ["increase from"]},
                       {"value": "Q3", "kind": "period", "before": ["increase to"], "after": ["up"]}]
    entries = checks[0]["args"]["values"]
    assert wrong_statements(memo, entries) == []
    for wrong in (memo.replace("Q1 to Q3", "Q3 to Q1"), memo.replace("Q3", "Q2"), memo.replace("Q1", "Q4")):
        assert wrong_statements(wrong, entries), wrong

def test_the_generator_checks_the_greeting_the_sign_off_and_the_source_file_a_mail_names():
    mail = ("Hi Elliot,\n\nThe total quantity for Notebooks (box of 50) in po_log_2024.xlsx is 1.\n\n"
            "Best,\nZara")
    draft = TaskDraft(description="d", intent="i", subtasks=["s"], evaluation=[], memory=[], query="q", oracle=[
        ToolCall("excel_read_file", {"file_path": "data/po_log_2024.xlsx"}),
        ToolCall("word_write_to_file", {"file_path": "data/totals_mar4.docx", "content": "Total: 1"}),
        ToolCall("email_send_email", {"sender": "zara", "recipient": "elliot", "subject": "Total", "content": mail})])
    people = [Person(first, last, first.lower(), "Office Manager")
              for first, last in (("Zara", "Osei"), ("Elliot", "Gutierrez"), ("Hugo", "Wakefield"))]
    checks = [c for c in state_checks(draft, None, people).evaluation if c["args"]["doc_type"] == "email"]
    assert len(checks) == 1 and validate_criteria(checks) == []
    values = {(v["kind"], v["value"]): v for v in checks[0]["args"]["values"]}
    greeted, signed, source = values["name", "Elliot"], values["name", "Zara"], values["file", "po_log_2024.xlsx"]
    assert greeted["before"] == ["hi", "hello", "dear", "hey"] and greeted["others"] == ["Hugo", "Hugo Wakefield"]
    assert signed["before"] == ["sign-off"] and signed["others"] == ["Hugo", "Hugo Wakefield"]
    assert source["alone"] == ["totals_mar4.docx"]
    entries = checks[0]["args"]["values"]
    assert wrong_statements(mail, entries) == []
    assert wrong_statements(mail.replace("Hi Elliot", "Hello Elliot Gutierrez").replace("Best", "Regards"),
                            entries) == []
    for wrong in (mail.replace("Hi Elliot", "Hi Hugo"), mail.replace("\nZara", "\nHugo Wakefield"),
                  mail.replace("po_log_2024.xlsx", "budget_old.xlsx")):
        assert len(wrong_statements(wrong, entries)) == 1, wrong


def test_the_check_reads_every_mail_between_the_two_and_the_document(ws, registry):
    check = {"function": "evaluate_stated_values",
             "args": {"doc_type": "email", "sender": "alice", "recipient": "bob", "values": [THRESHOLD]}}
    doc = {"function": "evaluate_stated_values",
           "args": {"doc_type": "docx", "file": "data/list.docx", "values": [THRESHOLD]}}
    assert validate_criteria([check, doc]) == []
    assert evaluate_criteria(ws, [check, doc]).passed  # no such mail and no document: nothing is stated
    send = {"sender": "alice", "recipient": "bob", "subject": "Reorder list", "content": "Below 75 quantity: Tea box."}
    assert registry.call(ws, "email_send_email", send).ok
    assert evaluate_criteria(ws, [check]).passed
    assert registry.call(ws, "email_send_email", {**send, "content": "Sorry, I meant below 76 quantity."}).ok
    result = evaluate_criteria(ws, [check]).results[0]
    assert not result.passed and "'76'" in result.reason and "'75'" in result.reason
    assert registry.call(ws, "word_write_to_file", {"file_path": "data/list.docx",
                                                    "content": "Below 750 quantity: Tea box."}).ok
    result = evaluate_criteria(ws, [doc]).results[0]
    assert not result.passed and "'750'" in result.reason


@pytest.mark.parametrize("bad, field", [
    ({"value": "75", "kind": "number", "before": []}, "before"),
    ({"value": "a.xlsx", "kind": "file", "alone": "b.xlsx"}, "alone"),
    ({"value": "75", "kind": "colour", "before": ["below"]}, "kind"),
    ({"value": "75", "kind": "number", "before": ["Below 75"]}, "before"),
])
def test_a_bad_stated_value_is_one_error_naming_the_criterion(bad, field):
    problems = validate_criteria([{"function": "evaluate_stated_values",
                                   "args": {"doc_type": "docx", "file": "data/a.docx", "values": [bad]}}],
                                 file="t/task.json")
    assert len(problems) == 1, problems
    assert str(problems[0]).startswith("t/task.json: evaluation[0].args.values[0]"), str(problems[0])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stated") / "ds"
    assert build(out, 8, BuildConfig(seed=11, days=2, utterances_per_day=10), workers=1).accepted == 8
    return out


def test_the_oracle_passes_its_stated_checks_and_each_value_changed_fails(built, tmp_path):
    """Every stated value of every task, changed in the oracle's own words, fails the task: the figure
    plus one, the day after, the clock an hour later, another file or name of the task."""
    changed = 0
    for task in iter_tasks(built):
        record = task.task
        checks = [c for c in record.criteria() if c["function"] == "evaluate_stated_values"]
        oracle = [dict(tool=c["tool"], args=dict(c.get("args", {}))) for c in plan_calls(record.oracle)]
        for check in checks:
            for entry in check["args"]["values"]:
                wrong = _changed(entry)
                if wrong is None:
                    continue
                plan = [_replace(call, entry["value"], wrong) for call in oracle]
                if plan == oracle:
                    continue
                replay = replay_plan(task.testbed, plan, task_now(record), tmp_path / task.id, f"m{changed}")
                report = replay.score([check], task.reference)
                assert not report.passed, (task.id, entry, wrong)
                changed += 1
        if checks:
            replay = replay_plan(task.testbed, oracle, task_now(record), tmp_path / task.id, "oracle")
            assert replay.score(checks, task.reference).passed, task.id
    assert changed >= 5


def _changed(entry: dict) -> str | None:
    value = str(entry["value"])
    if entry["kind"] == "number":
        return str(float(value.replace(",", "")) + 1).removesuffix(".0")
    if entry["kind"] == "file":
        return re.sub(r"(\.\w+)$", r"_old\1", value)
    if entry["kind"] == "name" and entry.get("others"):
        return entry["others"][0]
    return None


def _replace(call: dict, old: str, new: str) -> dict:
    args = {k: re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w]|\.\d)", new, v) if isinstance(v, str) and k != "file_path"
            else v for k, v in call["args"].items()}
    return {"tool": call["tool"], "args": args}


def test_the_export_keeps_a_task_without_its_stated_checks_and_says_so():
    criteria = [{"function": "evaluate_email_sent", "args": {"sender": "zara", "recipient": "elliot",
                                                             "body_keywords": ["Tea selection box"]}},
                {"function": "evaluate_stated_values", "args": {"doc_type": "email", "sender": "zara",
                                                                "recipient": "elliot", "values": [THRESHOLD]}}]
    translation = to_officebench(criteria)
    assert not translation.lost and len(translation.criteria) == 1
    assert translation.widened == ["[1] evaluate_stated_values: OfficeBench cannot check a value only where the "
                                   "output states it"]
    assert json.dumps(translation.criteria).count("evaluate_stated_values") == 0


def test_the_required_words_are_blanked_as_a_pattern_of_each_word_alone_blanks_them():
    """``_masked`` keeps each word's pattern; the text it leaves is the one a fresh pattern leaves,
    over words with pattern characters, words inside others and words asked again in other texts."""
    from generators.stated_values import _masked
    from office_env.evaluation.keywords import normalize

    def afresh(text, words):
        for word in sorted({normalize(w) for w in words if w.strip()}, key=len, reverse=True):
            text = re.sub(rf"(?<![\w]){re.escape(word)}(?![\w])", lambda m: " " * len(m.group(0)), text)
        return text

    texts = ["below 75 quantity: tea selection box (x2), 1.5 kg", "the q2 total is 3,249.61 usd.",
             "hi elliot, see report.pdf and report.pdf.bak; c++ (beta) costs $5*2", "teatime, tea. tea-box"]
    words = [["tea", "Tea selection box"], ["Q2", "3,249.61"], ["report.pdf", "c++", "(beta)", "$5*2"],
             ["  ", "tea", "box"], ["Elliot", "e"]]
    for _ in range(2):
        for text in texts:
            for chosen in words:
                assert _masked(text, chosen) == afresh(text, chosen), (text, chosen)


def test_a_values_key_kept_by_its_text_is_the_one_read_afresh():
    """``value_key`` keeps the latest values' keys by kind, text and order of a numeric date: each is
    the key read afresh, for values Python holds equal but writes apart (1, 1.0, True) and odd letters,
    whatever was asked before; a value over ``MAX_KEPT_VALUE_CHARS`` is read at each call."""
    import random

    from office_env.evaluation import stated as st

    values = [1, 1.0, True, "1", " 1 ", "1,200", "1.200,50", 75, "75.0", "seventy-five", "04/05/2025", "5/4",
              "2025-04-03", "3 April", "Thursday, 3 April", "14:30", "2:30 pm", "ten o'clock", "noon", "Q3",
              "the third quarter", "February", "data/budget_old.xlsx", "Budget.XLSX", "agenda.docx", "Elliot",
              "  Hugo   Ng ", "\u017feven", "caf\u00e9 9:30", "\u0661\u0662", "", "x" * 300, "12 " * 120]
    asked = [(kind, value, day_first) for kind in st.KINDS for value in values for day_first in (None, True, False)]
    random.Random(4).shuffle(asked)
    for kind, value, day_first in asked * 2:
        text = " ".join(str(value).split()).lower()
        assert st.value_key(kind, value, day_first) == st._key_of(kind, text, day_first), \
            (kind, value, day_first)
    assert st.value_key("day", "04/05/2025", True) != st.value_key("day", "04/05/2025", False)


def test_names_are_found_whole_as_a_pattern_made_for_each_look_up_finds_them():
    """``stated.candidates`` finds a name with the pattern kept for it: the names a pattern made
    afresh finds, for names with a pattern's signs in them and names inside longer words."""
    from office_env.evaluation import stated

    names = ("Ann", "ann lee", "Lee", "a.b", "c++ team", "(x)", "o'neil", "ann-lee", "ann  lee", "Zoë", "$5")
    texts = ["hi ann, ann lee and lee agreed", "joanna and lee-ann", "a.b and axb met the c++ team (x)",
             "o'neil, ann-lee, zoë and $5", "annlee ann\nlee", ""]
    for text in texts:
        found = []
        for name in sorted({" ".join(n.split()).lower() for n in names if n.strip()}, key=len, reverse=True):
            for m in re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", text):
                if not any(a < m.end() and m.start() < b for a, b, _ in found):
                    found.append((m.start(), m.end(), name))
        assert stated.candidates(text, "name", None, names) == sorted(found), text
