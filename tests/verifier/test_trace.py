"""The criteria trace: every checked value is said, in the office, or computed; every
requirement is checked; a task must need the office's data."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from backends.task_record import parse_record
from office_env.sample import write_sample_office as write_office
from tests.support.records import record_with
from verifier.trace import OfficeText, leaves_of, office_text, recompute, same_value, trace_task

OFFICE = OfficeText.of({
    "data/sales.xlsx": "Region Amount\nNorth 1,200.50\nSouth 800\nWest 455.25",
    "emails/dana/1.eml": "From: Marcus Reyes <marcus@example.com>\nTo: dana@example.com\nSubject: Q2\n"
                         "Could you send me the regional total?",
    "calendar/dana.ics": "Budget check-in 2025-03-26 10:00:00 2025-03-26 11:00:00",
})


def record(**overrides):
    """A whole task record (``tests.support.records.record_with``) with this module's memory,
    criteria, computation, plan and chat; ``overrides`` in their place."""
    base = {
        "user": {"name": "Dana Reyes", "username": "dana", "email": "dana@example.com"},
        "memory": [
            {"id": "m1", "kind": "fact", "text": "Marcus wants the sales total", "value": "Marcus Reyes", "cue": "recipient"},
            {"id": "m2", "kind": "fact", "text": "the figures are in sales.xlsx", "value": "sales.xlsx", "cue": "source_file"},
            {"id": "m3", "kind": "action", "text": "the subject should be Regional total", "value": "Regional total",
             "cue": "subject"},
        ],
        "evaluation": [{"function": "evaluate_email_sent", "args": {
            "sender": "dana", "recipient": "marcus", "subject_keywords": ["Regional total"],
            "body_keywords": ["2455.75"]}}],
        "computed": [{"value": 2455.75, "op": "sum", "inputs": ["1,200.50", "800", "455.25"]}],
        "oracle": [{"tool": "excel_read_file", "args": {"file_path": "data/sales.xlsx"}}],
        "dialogue": [{"day": 1, "date": "2025-03-20", "turns": [
            {"role": "user", "text": "Marcus wants the sales total, the figures are in sales.xlsx", "ts": "2025-03-20T09:00:00"},
            {"role": "user", "text": "the subject should be Regional total", "ts": "2025-03-20T09:00:00"}]}],
    }
    base.update(overrides)
    return record_with("t-1", baseline=None, misreadings=None, **base)


def traced(task: dict, office: OfficeText):
    """The trace of ``task`` as read (parsed as every reader of a record takes it)."""
    return trace_task(parse_record(task), office)


def test_a_fair_task_traces_every_argument_to_its_source():
    trace = traced(record(), OFFICE)
    assert trace.passed, trace.problems
    assert trace.sources == {
        "evaluation[0].args.sender": "user",
        "evaluation[0].args.recipient": "memory:m1",
        "evaluation[0].args.subject_keywords[0]": "memory:m3",
        "evaluation[0].args.body_keywords[0]": "computed:0",
    }
    assert trace.traced_share == 1.0


def test_an_undeclared_total_is_a_hidden_value():
    trace = traced(record(computed=[]), OFFICE)
    assert not trace.passed
    assert any(p.startswith("evaluation[0].args.body_keywords[0]: '2455.75' is neither said") for p in trace.problems)


def test_a_wrong_computation_is_named():
    bad = record(computed=[{"value": 2455.75, "op": "sum", "inputs": ["1,200.50", "800"]}])
    trace = traced(bad, OFFICE)
    assert "computed[0]: sum of the inputs is 2000.5, not 2455.75" in trace.problems


def test_computation_inputs_must_come_from_somewhere():
    bad = record(computed=[{"value": 2455.75, "op": "sum", "inputs": ["1,200.50", "800", "300", "155.25"]}])
    assert any(p.startswith("computed[0].inputs[2]: '300'") for p in traced(bad, OFFICE).problems)


def test_an_unchecked_subject_is_a_missing_requirement():
    loose = record()
    del loose["evaluation"][0]["args"]["subject_keywords"]
    problems = traced(loose, OFFICE).problems
    assert problems == ["memory m3 (subject: 'Regional total') states a requirement that no criterion checks"]


def test_an_unused_input_memory_piece_is_reported():
    task = record()
    task["memory"].append({"id": "m4", "kind": "fact", "text": "it was about the parking passes",
                           "value": "parking passes", "cue": "topic"})
    assert traced(task, OFFICE).problems == [
        "memory m4 (topic: 'parking passes') is never used: no criterion, computation or oracle step needs it"]


def test_echoing_the_chat_is_not_work_on_the_office():
    echo = record(computed=[], evaluation=[{"function": "evaluate_email_sent", "args": {
        "sender": "dana", "recipient": "marcus", "subject_keywords": ["Regional total"],
        "body_keywords": ["sales.xlsx"]}}])
    problems = traced(echo, OFFICE).problems
    assert any("pasting the chat would pass" in p for p in problems)


def test_a_meeting_end_needs_a_stated_duration():
    meeting = record(
        memory=[{"id": "m1", "kind": "fact", "text": "the review is at 2025-03-27 13:00", "value": "2025-03-27 13:00",
                 "cue": "meeting_time"},
                {"id": "m2", "kind": "fact", "text": "it is called Budget review", "value": "Budget review",
                 "cue": "meeting_title"}],
        evaluation=[{"function": "evaluate_calendar_event", "args": {
            "username": "dana", "summary": "Budget review", "start": "2025-03-27 13:00:00", "end": "2025-03-27 14:00:00"}},
            {"function": "evaluate_contain", "args": {"doc_type": "ics", "file": "calendar/dana.ics",
                                                      "keywords": ["Budget check-in"]}}],
        computed=[])
    hidden = traced(meeting, OFFICE)
    assert [p for p in hidden.problems if "end" in p] == [
        "evaluation[0].args.end: '2025-03-27 14:00:00' is neither said in the chat, in the office, nor computed "
        "(a hidden convention?)"]
    stated = copy.deepcopy(meeting)
    stated["memory"].append({"id": "m3", "kind": "fact", "text": "it runs for 60 minutes", "value": "60",
                             "cue": "duration"})
    stated["computed"] = [{"value": "2025-03-27 14:00:00", "op": "add_minutes", "inputs": ["2025-03-27 13:00", "60"]}]
    trace = traced(stated, OFFICE)
    assert trace.sources["evaluation[0].args.end"] == "computed:0"
    assert trace.sources["evaluation[0].args.start"] == "memory:m1"
    assert not [p for p in trace.problems if "end" in p or "m3" in p]


def test_a_rule_must_be_stated_in_the_chat():
    task = record(computed=[{"value": 2455.75, "op": "rule", "rule": "earliest hour both are free", "inputs": []}])
    assert "computed[0]: the rule 'earliest hour both are free' it follows is not stated in any memory piece" \
        in traced(task, OFFICE).problems
    task["memory"].append({"id": "m4", "kind": "fact", "value": "Thursday", "cue": "meeting_day",
                           "text": "book the earliest hour both are free on Thursday"})
    assert not [p for p in traced(task, OFFICE).problems if p.startswith("computed")]


def _slot_task(window_turn: str, day_turn: str = "Thursday works, one hour, the earliest we're both free",
               corrected: str = "") -> dict:
    """A meeting booked by a rule whose window is its own piece (m5), said in ``window_turn``."""
    task = record(computed=[
        {"value": 2455.75, "op": "sum", "inputs": ["1,200.50", "800", "455.25"]},
        {"value": "2025-03-27 10:00:00", "op": "rule", "inputs": [], "given": ["m4", "m5"],
         "rule": "one hour, on the hour within 10:00-16:00, the earliest when we are both free"}])
    task["memory"] += [
        {"id": "m4", "kind": "fact", "value": "Thursday", "cue": "meeting_day", "text": "the meeting is on Thursday"},
        {"id": "m5", "kind": "fact", "value": "10:00-16:00", "cue": "time_window",
         "text": "for the meeting, one hour, on the hour within 10:00-16:00, the earliest when we are both free",
         **({"superseded": [corrected]} if corrected else {})}]
    task["evaluation"].append({"function": "evaluate_calendar_event", "args": {
        "username": "dana", "summary": "Regional total", "start": "2025-03-27 10:00:00"}})
    turns = task["dialogue"][0]["turns"]
    turns.append({"role": "user", "text": day_turn, "ts": "2025-03-20T09:00:00", "evidence": ["m4"]})
    if corrected:
        turns.append({"role": "user", "text": f"keep it inside {corrected}, one hour", "ts": "2025-03-20T09:00:00",
                      "superseded": ["m5"]})
    turns.append({"role": "user", "text": window_turn, "ts": "2025-03-20T09:00:00", "evidence": ["m5"]})
    return task


def test_a_rules_times_and_length_must_be_said_where_its_pieces_are():
    said = _slot_task("keep it inside 10:00-16:00, starting on the hour")
    assert not [p for p in traced(said, OFFICE).problems if p.startswith("computed")]
    # the window only in the memory's text, the chat giving the day alone: a hidden convention
    unsaid = _slot_task("starting on the hour, please")
    assert ("computed[1]: the rule's '10:00' is not said where its pieces (m4, m5) are said: a hidden convention"
            in traced(unsaid, OFFICE).problems)
    # 110:00-16:00 does not say 10:00
    nine = _slot_task("keep it inside 110:00-16:00")
    assert any("the rule's '10:00'" in p for p in traced(nine, OFFICE).problems)
    # the length: said as "an hour" is enough, missing is not
    no_length = _slot_task("keep it inside 10:00-16:00", day_turn="Thursday works, the earliest we're both free")
    assert any("the rule's 'one hour'" in p for p in traced(no_length, OFFICE).problems)
    an_hour = _slot_task("keep it inside 10:00-16:00", day_turn="Thursday, an hour, as early as we can")
    assert not [p for p in traced(an_hour, OFFICE).problems if p.startswith("computed")]


def test_a_corrected_value_does_not_say_the_rules_times_but_keeps_its_length():
    # the window's times said only with the value it corrects: not said
    old_only = _slot_task("make it the other window", corrected="10:00-16:00")
    assert any("the rule's '10:00'" in p for p in traced(old_only, OFFICE).problems)
    # the length said with the corrected value still holds after the correction
    task = _slot_task("make it 10:00-16:00 instead", day_turn="Thursday, the earliest we're both free",
                      corrected="9:00-17:00")
    assert not [p for p in traced(task, OFFICE).problems if p.startswith("computed")]


def test_the_words_a_rule_makes_the_answer_say_must_be_said():
    rule = "it is within budget when the budget covers the quote, else over budget"
    task = record(computed=[{"value": 2455.75, "op": "sum", "inputs": ["1,200.50", "800", "455.25"]},
                            {"value": "over budget", "op": "rule", "inputs": [], "given": ["m4"], "rule": rule}])
    task["memory"].append({"id": "m4", "kind": "action", "value": "Travel in Q2", "cue": "budget_line",
                           "text": f"check it against Travel in Q2; {rule}"})
    task["evaluation"][0]["args"]["body_keywords"].append("over budget")
    turns = task["dialogue"][0]["turns"]
    turns.append({"role": "user", "text": "hold it against Travel in Q2", "ts": "2025-03-20T09:00:00", "evidence": ["m4"]})
    assert ("computed[1]: the rule's 'over budget' is not said where its pieces (m4) are said: a hidden convention"
            in traced(task, OFFICE).problems)
    turns[-1]["text"] = "hold it against Travel in Q2, and say within budget or over budget"
    assert not [p for p in traced(task, OFFICE).problems if p.startswith("computed")]


def test_a_length_found_by_chance_in_the_office_is_not_a_source():
    task = record(computed=[{"value": 2455.75, "op": "sum", "inputs": ["1,200.50", "800", "455.25"]},
                            {"value": "2025-03-26 23:20:00", "op": "add_minutes", "inputs": ["2025-03-26 10:00", "800"]}])
    assert ("computed[1].inputs[1]: the length '800' is neither said in the chat nor a meeting's length in the office "
            "(a hidden convention?)" in traced(task, OFFICE).problems)
    # nor wrapped in another computation first
    task["computed"][1:] = [{"value": 800, "op": "round", "inputs": ["800"]},
                            {"value": "2025-03-26 23:20:00", "op": "add_minutes",
                             "inputs": ["2025-03-26 10:00", "800"]}]
    assert any(p.startswith("computed[2].inputs[1]: the length '800'") for p in traced(task, OFFICE).problems)
    # the length of a meeting the calendar holds, computed from its start and end, is a source
    task["computed"][1:] = [
        {"value": 60, "op": "minutes_between", "inputs": ["2025-03-26 10:00:00", "2025-03-26 11:00:00"]},
        {"value": "2025-03-26 12:00:00", "op": "add_minutes", "inputs": ["2025-03-26 11:00", "60"]}]
    assert not [p for p in traced(task, OFFICE).problems if p.startswith("computed")]
    # a length runs forwards, between a start and an end one calendar holds
    task["computed"][1] = {"value": -60, "op": "minutes_between",
                           "inputs": ["2025-03-26 11:00:00", "2025-03-26 10:00:00"]}
    assert "computed[1]: minutes_between needs a start and a later end that one calendar holds" \
        in traced(task, OFFICE).problems


def test_a_rule_cut_short_still_needs_the_times_of_the_sentence_that_states_it():
    task = _slot_task("starting on the hour, please")
    task["computed"][1]["rule"] = "the earliest when we are both free"  # the window left out of the rule
    assert any("the rule's '10:00' is not said" in p for p in traced(task, OFFICE).problems)


@pytest.mark.parametrize("text, specific, said", [
    ("claims above 1,500 usd", "1500", True),
    ("version 2.5", "2", False),
    ("in q3 we meet", "3", False),
    ("we meet at 09:00", "9:00", True),
    ("we meet at 9:00", "9:00", True),
    ("we meet at 19:00", "9:00", False),
    ("half an hour, please", "one hour", False),
    ("an hour, please", "one hour", True),
])
def test_says_reads_numbers_clocks_and_lengths_as_the_chat_writes_them(text, specific, said):
    from verifier.trace import says

    assert says(text, specific) is said


def test_rule_specifics_skip_numbers_inside_words_and_codes():
    from verifier.trace import rule_specifics

    assert rule_specifics("claims above 1,500 USD in Q3, at 09:00, for one hour") == ["9:00", "1500", "one hour"]
    assert rule_specifics("INV-2024 due on the 2nd, half an hour") == []


def test_an_output_pdf_named_after_a_said_document_is_derived():
    task = record()
    task["memory"].append({"id": "m4", "kind": "action", "text": "save it as recap.docx", "value": "recap.docx",
                           "cue": "output_file"})
    task["evaluation"].append({"function": "evaluate_file_exist", "args": {"file": "data/recap.pdf"}})
    trace = traced(task, OFFICE)
    assert trace.sources["evaluation[1].args.file"] == "derived:recap.docx"
    assert trace.passed, trace.problems


@pytest.mark.parametrize("entry, value", [
    ({"op": "mean", "inputs": [1, 2, 4]}, 2.33),
    ({"op": "difference", "inputs": ["1,000", 250.5]}, 749.5),
    ({"op": "percent", "inputs": [25, 200]}, 12.5),
    ({"op": "count", "inputs": ["a", "b"]}, 2),
    ({"op": "add_minutes", "inputs": ["2025-01-02 09:30", 45]}, "2025-01-02 10:15:00"),
])
def test_recompute(entry, value):
    assert same_value(recompute(entry), value)


@pytest.mark.parametrize("entry, words", [
    ({"op": "eval", "inputs": []}, "op 'eval' is not one of"),
    ({"op": "sum", "inputs": ["x"]}, "sum needs numbers"),
    ({"op": "ratio", "inputs": [1, 0]}, "divides by zero"),
])
def test_recompute_refuses_bad_entries(entry, words):
    with pytest.raises(ValueError, match=words):
        recompute(entry)


def test_leaves_cover_every_value_bearing_argument():
    criteria = [{"function": "evaluate_excel_cell_value", "args": {"file": "data/a.xlsx", "matches": [
        {"row": 2, "col": 1, "value": "INV-7"}]}},
        {"function": "evaluate_excel_cell_comparator", "args": {"file": "data/a.xlsx", "matches": [
            {"row": 2, "col": 2, "comparator": ">= 90"}]}},
        {"function": "evaluate_answer", "args": {"number": 12.5, "tolerance": 0.01}},
        {"function": "evaluate_calendar_event", "args": {"username": "dana", "summary": ["Sync"], "start": "2025-01-02 09:00"}}]
    assert [(leaf.where, leaf.role, leaf.value) for leaf in leaves_of(criteria)] == [
        ("evaluation[0].args.file", "file", "data/a.xlsx"),
        ("evaluation[0].args.matches[0].value", "value", "INV-7"),
        ("evaluation[1].args.file", "file", "data/a.xlsx"),
        ("evaluation[1].args.matches[0].comparator#0", "value", "90"),
        ("evaluation[2].args.number", "value", 12.5),
        ("evaluation[3].args.username", "person", "dana"),
        ("evaluation[3].args.summary[0]", "keyword", "Sync"),
        ("evaluation[3].args.start", "time", "2025-01-02 09:00"),
    ]


def test_office_text_reads_a_real_testbed(tmp_path: Path):
    root = write_office(tmp_path / "testbed")
    office = office_text(root)
    assert office.find("12500") == "data/invoice.pdf"
    assert all(not path.startswith("/") for path in office.files)


def test_office_text_never_reads_through_a_link(tmp_path: Path):
    root = write_office(tmp_path / "testbed")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("password 424242", encoding="utf-8")
    (root / "data" / "linked").symlink_to(outside, target_is_directory=True)
    (root / "data" / "secret.txt").symlink_to(outside / "secret.txt")
    office = office_text(root)
    assert office.find("424242") is None
    assert not [p for p in office.files if "secret" in p or "linked" in p]


def test_a_superseded_copy_is_never_a_source(tmp_path):
    from office_env.formats import xlsx_io

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "budget.xlsx").write_bytes(xlsx_io.build([["Category", "Q1"], ["Travel", 4100]]))
    (tmp_path / "data" / "budget_old.xlsx").write_bytes(xlsx_io.build([["Category", "Q1"], ["Travel", 3900]]))
    office = office_text(tmp_path)
    assert "data/budget.xlsx" in office.files and "data/budget_old.xlsx" not in office.files
    # but what a mail must leave out may be its figures: the old draft's, never the right file's
    task = record()
    task["evaluation"][0]["args"]["body_excludes"] = ["3900"]
    assert not [p for p in traced(task, office).problems if "body_excludes" in p]
    task["evaluation"][0]["args"]["body_excludes"] = ["3700"]
    assert [p for p in traced(task, office).problems if "is not in the office" in p]


def test_a_value_is_credited_to_the_file_the_plan_reads_before_one_holding_it_by_chance():
    office = OfficeText.of({"calendar/dana.ics": "Room 455.25 booked 2025-03-26 10:00:00",
                            "data/sales.xlsx": "Region Amount\nNorth 1,200.50\nSouth 800\nWest 455.25"})
    task = record(computed=[])
    task["evaluation"][0]["args"]["body_keywords"] = ["455.25"]
    assert traced(task, office).sources["evaluation[0].args.body_keywords[0]"] == "testbed:data/sales.xlsx"
    task["oracle"] = []  # no plan: the first file in path order
    assert traced(task, office).sources["evaluation[0].args.body_keywords[0]"] == "testbed:calendar/dana.ics"


def test_what_a_list_leaves_out_must_be_office_rows_a_right_answer_can_omit():
    task = record()
    args = task["evaluation"][0]["args"]
    args["body_excludes"] = ["North"]
    assert traced(task, OFFICE).passed
    for bad, why in (("Atlantis", "is not in the office"), ("2455.75", "overlaps a keyword"),
                     ("Marcus", "is a name every mail between them holds")):
        args["body_excludes"] = [bad]
        assert any(why in p for p in traced(task, OFFICE).problems), bad


def test_values_compare_with_their_kept_readings_as_read_afresh():
    # a value's number, time and folded text are kept per text (verifier.trace._read): every
    # comparison answers as reading both values again would, whatever type the value comes as
    from datetime import datetime as _dt

    import verifier.trace as tr

    def number(v):
        text = str(v).replace(",", "").strip()
        return float(text) if tr._NUMBER_RE.match(text) else None

    def time(v):
        text = str(v).strip()
        for fmt in tr._TIME_FORMATS:
            try:
                return _dt.strptime(text, fmt) if text[:4].isdigit() else None
            except ValueError:
                continue
        return None

    def fold(v):
        return " ".join(str(v).split()).lower()

    def same(a, b):
        na, nb = number(a), number(b)
        if na is not None and nb is not None:
            return abs(na - nb) <= tr.TOLERANCE
        ta, tb = time(a), time(b)
        if ta is not None and tb is not None:
            return ta.replace(second=0) == tb.replace(second=0)
        return fold(a) == fold(b)

    def said_in(value, memory):
        if same(value, memory):
            return True
        text, said = fold(value), fold(memory)
        if len(said) >= 4 and (text.endswith("/" + said) or said == text.rsplit("/", 1)[-1]):
            return True
        when = time(value)
        return when is not None and f"{when:%Y-%m-%d %H:%M}" in said

    values = [1, 1.0, "1", "1.004", "1,500", "1500", " 1500 ", 1500.001, -3, "-3.0", True, None, "", " ",
              "2025-03-26 13:00", "2025-03-26T13:00:45", "2025-03-26 13:00:59", "2025-03-26", "data/report.docx",
              "report.docx", "Report.DOCX", "Invoice", "Invoice  then Total", "on 2025-03-26 13:00 sharp",
              ["a", 1], {"x": 2}, "x" * 300 + " 12", "X" * 300 + "  12", "2025-13-40 25:00", "²⁰²⁵-03-26 13:00"]
    for a in values:
        for b in values:
            assert tr.same_value(a, b) == same(a, b), (a, b)
            if isinstance(b, str):
                assert tr._says(tr._read(a), tr._read(b)) == said_in(a, b), (a, b)
                assert tr._words_in(tr._read(a), tr._read(b)) == (bool(fold(a)) and f" {fold(a)} " in f" {fold(b)} "), \
                    (a, b)


def test_office_values_read_each_said_value_once_and_answer_as_pair_by_pair():
    """``office_values`` reads the said values once and compares readings: the same values, in the
    same order, as comparing every leaf with every said value afresh (repeated leaves, blank ones,
    numbers, times, paths and words of a longer value among them)."""
    import verifier.trace as tr
    from verifier.trace import office_values

    def said_in(value, memory):
        read, said = tr._reading_of.__wrapped__(str(value)), tr._reading_of.__wrapped__(str(memory))
        if tr._same(read, said):
            return True
        if len(said.text) >= 4 and (read.text.endswith("/" + said.text) or said.text == read.text.rsplit("/", 1)[-1]):
            return True
        if read.time is not None and f"{read.time:%Y-%m-%d %H:%M}" in said.text:
            return True
        return bool(read.text) and f" {read.text} " in f" {said.text} "

    def pair_by_pair(criteria, said):
        said = [v for v in said if v.strip()]
        out = []
        for leaf in leaves_of(criteria):
            if leaf.role not in ("keyword", "value", "time") or not str(leaf.value).strip():
                continue
            if not any(said_in(leaf.value, value) for value in said) and str(leaf.value) not in out:
                out.append(str(leaf.value))
        return out

    words = ["Invoice", "invoice", "Total", " ", "", "1,500", "1500", "12.5", 7, 7.0, "2025-03-26 13:00",
             "2025-03-26T13:00:00", "data/report.docx", "report.docx", "Team lunch", "Q2", "q2 review"]
    criteria = [{"function": "evaluate_contain", "args": {"keywords": words[:9], "file": "data/report.docx"}},
                {"function": "evaluate_email_sent", "args": {"body_keywords": words[6:], "subject_keywords": words,
                                                             "start": "2025-03-26 13:00", "number": 1500}},
                {"function": "evaluate_excel_cell_value",
                 "args": {"matches": [{"value": v} for v in words] + [{"comparator": ">= 1,500 and < 12.5"}]}}]
    saids = [[], ["invoice then total"], ["Invoice then Total", "1500", "report.docx", "on 2025-03-26 13:00"],
             [" ", "Team lunch", "12.50", "Q2 review moved", "7"], [str(w) for w in words]]
    for said in saids:
        assert office_values(criteria, said) == pair_by_pair(criteria, said), said
