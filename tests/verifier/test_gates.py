"""The five quality gates on real built tasks, and each gate catching its own kind of breakage.

A small dataset is built once per module with the real offline pipeline; every task passes
every gate. Then, for broken copies of a record, the matching gate fails with a detail that
names the problem while the unrelated gates keep passing.
"""

from __future__ import annotations

import copy
import re
import shutil
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from backends.dataset_reader import LoadedTask, iter_tasks
from office_env import Snapshot, Workspace, default_registry, evaluate_criteria
from office_env.replays import COPY_NAME, Replays
from orchestrator.build import build
from orchestrator.roles import BuildConfig
from tests.support.gates import NEO_GATES as GATES
from verifier.dialogue_rules import find_mark_problems, mark_problems, marked_turns
from verifier.gates import kept_findings, run_gates, task_now

pytestmark = pytest.mark.slow

VALUE_KEYS = ("value", "text", "content", "summary")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> list[LoadedTask]:
    out = tmp_path_factory.mktemp("gates") / "ds"
    summary = build(out, 3, BuildConfig(seed=1, days=2, utterances_per_day=12), workers=1)
    assert summary.accepted == 3
    loaded = list(iter_tasks(out))
    assert len(loaded) == 3 and all(t.record is not None for t in loaded), [t.error for t in loaded]
    return loaded


def _value_call(record: dict[str, Any]) -> tuple[int, str] | None:
    """(oracle index, arg name) of the last oracle call that writes a value the criteria check."""
    for i in reversed(range(len(record.get("oracle", [])))):
        args = record["oracle"][i]["args"]
        for key in VALUE_KEYS:
            if isinstance(args.get(key), (str, int, float)) and not isinstance(args.get(key), bool):
                return i, key
    return None


@pytest.fixture(scope="module")
def task(tasks) -> LoadedTask:
    """A task whose oracle writes a checkable value and whose chat carries some memory."""
    for t in tasks:
        if _value_call(t.record) is not None and t.record["memory"]:
            return t
    pytest.fail("no built task has an oracle call that writes a value")


def gates(record: dict[str, Any], task: LoadedTask) -> dict[str, Any]:
    results = run_gates(record, task.testbed, task.reference)
    assert tuple(results) == GATES
    return results


def failing(results: dict[str, Any]) -> set[str]:
    return {name for name, r in results.items() if not r.passed}


def cited(record: dict[str, Any], mid: str) -> tuple[int, int]:
    """(session index, turn index) of the turn whose evidence lists ``mid``."""
    for s, session in enumerate(record["dialogue"]):
        for n, turn in enumerate(session["turns"]):
            if mid in turn.get("evidence", []):
                return s, n
    raise AssertionError(f"{mid} is cited nowhere")


def where(record: dict[str, Any], s: int, n: int) -> str:
    return f"day {record['dialogue'][s]['day']} turn {n + 1}"


def without(text: str, value: str) -> str:
    return re.sub(re.escape(value), "that", text, flags=re.IGNORECASE)


# -- a good record passes ----------------------------------------------------------------------

def test_every_built_task_passes_every_gate_and_matches_its_recorded_results(tasks):
    for t in tasks:
        before = Snapshot.of(t.testbed)
        results = gates(t.record, t)
        assert not failing(results), {k: r.detail for k, r in results.items() if not r.passed}
        assert all(r.detail for r in results.values())
        # `homer verify` reproduces what the build recorded, gate for gate.
        assert t.record["provenance"]["gates"] == {k: r.to_dict() for k, r in results.items()}
        # Replaying the oracle and the baseline never touches the task's own testbed.
        diff = before.diff(Snapshot.of(t.testbed))
        assert diff.empty, diff.summary()


# -- schema --------------------------------------------------------------------------------------

def test_schema_gate_rejects_empty_subtasks_and_skips_the_rest(task):
    record = copy.deepcopy(task.record)
    record["subtasks"] = []
    results = gates(record, task)
    assert failing(results) == set(GATES)
    assert "subtasks" in results["schema"].detail
    assert all("skipped" in results[name].detail for name in GATES[1:])


def test_schema_gate_rejects_an_unknown_criterion(task):
    record = copy.deepcopy(task.record)
    record["evaluation"].append({"function": "evaluate_moon_phase", "args": {"phase": "full"}})
    results = gates(record, task)
    assert "schema" in failing(results)
    assert "evaluate_moon_phase" in results["schema"].detail


def test_schema_gate_rejects_criteria_that_contradict(task):
    record = copy.deepcopy(task.record)
    record["evaluation"] += [{"function": "evaluate_file_exist", "args": {"file": "data/made_up.docx"}},
                             {"function": "evaluate_file_not_exist", "args": {"file": "./data/made_up.docx"}}]
    results = gates(record, task)
    assert not results["schema"].passed and "criteria contradict" in results["schema"].detail
    assert "requires data/made_up.docx" in results["schema"].detail


def test_schema_gate_rejects_duplicate_memory_ids(task):
    record = copy.deepcopy(task.record)
    record["memory"].append(dict(record["memory"][0], value="something else entirely"))
    results = gates(record, task)
    assert "schema" in failing(results)
    assert "not unique" in results["schema"].detail


# -- fails_untouched -----------------------------------------------------------------------------

def test_fails_untouched_gate_rejects_criteria_that_already_hold(task):
    existing = sorted(p for p in (task.testbed / "data").iterdir() if p.is_file())[0]
    record = copy.deepcopy(task.record)
    record["evaluation"] = [{"function": "evaluate_file_exist",
                             "args": {"file": existing.relative_to(task.testbed).as_posix()}}]
    results = gates(record, task)
    assert results["schema"].passed and results["oracle_passes"].passed
    assert not results["fails_untouched"].passed
    assert "already pass" in results["fails_untouched"].detail
    # The baseline passes too: nothing was needed; and so does a paste of what the oracle read.
    assert failing(results) - {"corrections_bite", "distractors_bite"} == {"fails_untouched", "baseline_fails",
                                                                           "criteria_traced", "findings_not_pastes"}
    assert "no criterion checks" in results["criteria_traced"].detail


def test_replays_of_a_trusted_world_link_its_files_and_never_change_them(tasks, tmp_path):
    """A build's gates hard-link the world it wrote into their scratch copies; every tool write
    replaces a file, so the world stays as it was and no link outlives the gates."""
    import shutil

    for t in tasks:
        world = tmp_path / t.id
        shutil.copytree(t.testbed, world)
        before = Snapshot.of(world)
        seen_links: list[int] = []
        scratch = tmp_path / f"scratch-{t.id}"
        scratch.mkdir()
        results = run_gates(t.record, world, t.reference, scratch=scratch, trusted=True)
        assert not failing(results), {k: r.detail for k, r in results.items() if not r.passed}
        linked = [p for p in (scratch / COPY_NAME).rglob("*") if p.is_file() and p.stat().st_nlink > 1]
        seen_links.append(len(linked))
        assert any(seen_links), "the replays' scratch copy shares no file with the world"
        assert before.diff(Snapshot.of(world)).empty
        shutil.rmtree(scratch)
        assert all(p.stat().st_nlink == 1 for p in world.rglob("*") if p.is_file())


def test_a_replay_for_its_files_alone_leaves_the_files_of_the_whole_replay(tasks, tmp_path):
    """The gates that read no observation skip the calls that only read: the oracle, baseline and
    misreading plans, and a plan that reads between cells of one sheet, leave the same files."""
    import shutil

    checked = 0
    for t in tasks:
        world = tmp_path / f"world-{t.id}"  # the replays link its files: never the dataset's own
        shutil.copytree(t.testbed, world)
        now = task_now(t.record)
        plans = [t.record["oracle"], t.record["baseline"], *[m["plan"] for m in t.record.get("misreadings", [])]]
        sheets = sorted(p.relative_to(world).as_posix() for p in world.rglob("*.xlsx"))
        if sheets:
            cell = {"file_path": sheets[0], "col": 9}
            plans.append([{"tool": "excel_set_cell", "args": {**cell, "row": 1, "value": "a"}},
                          {"tool": "excel_read_file", "args": {"file_path": sheets[0]}},
                          {"tool": "excel_set_cell", "args": {**cell, "row": 2, "value": 2}},
                          {"tool": "excel_set_cell", "args": {**cell, "row": 1, "value": "b"}},
                          {"tool": "system_list_files", "args": {}},
                          {"tool": "no_such_tool", "args": {}}])
        for i, plan in enumerate(plans):
            whole, _ = Replays(world, now, tmp_path, trusted=True, reuse=False).run(plan, f"{t.id}-whole-{i}")
            files = Replays(world, now, tmp_path, trusted=True, reuse=False).state(plan, f"{t.id}-files-{i}")
            assert Snapshot.of(whole.root) == Snapshot.of(files.root), (t.id, i)
            checked += 1
    assert checked > 3 * len(tasks)


# -- oracle_passes -------------------------------------------------------------------------------

def test_oracle_gate_rejects_a_missing_oracle(task):
    record = copy.deepcopy(task.record)
    record["oracle"] = []
    results = gates(record, task)
    assert failing(results) == {"oracle_passes", "baseline_fails"}
    assert "no oracle" in results["oracle_passes"].detail


def test_oracle_gate_rejects_an_oracle_call_with_a_wrong_value(task, tmp_path):
    record = copy.deepcopy(task.record)
    index, key = _value_call(record)
    old = record["oracle"][index]["args"][key]
    record["oracle"][index]["args"][key] = old + 1000 if isinstance(old, (int, float)) else "WRONG VALUE"
    results = gates(record, task)
    # answer_forms replays the same (broken) plan with its prose reworded: it may fail with it
    assert "oracle_passes" in failing(results) <= {"oracle_passes", "answer_forms"}, \
        {k: r.detail for k, r in results.items()}
    detail = results["oracle_passes"].detail
    assert detail and detail != "oracle plan passes"
    # The detail gives the reason of each criterion that failed after the broken oracle.
    ws = Workspace(task.testbed, now=task_now(record)).copy_to(tmp_path / "replay")
    calls = default_registry().run(ws, [(c["tool"], c["args"]) for c in record["oracle"]])
    assert all(c.ok for c in calls)
    reasons = [r.reason for r in evaluate_criteria(ws, record["evaluation"], task.reference).failures()]
    assert reasons and all(reason in detail for reason in reasons), (reasons, detail)


def test_oracle_gate_names_a_failing_tool_call(task):
    record = copy.deepcopy(task.record)
    record["oracle"].insert(0, {"tool": "word_read_file", "args": {"file_path": "data/no_such_file_here.docx"}})
    results = gates(record, task)
    assert failing(results) == {"oracle_passes"}
    assert "word_read_file" in results["oracle_passes"].detail
    assert "no_such_file_here.docx" in results["oracle_passes"].detail


def test_oracle_gate_rejects_an_oracle_that_double_books_its_user(task):
    record = copy.deepcopy(task.record)
    user = record["user"]["username"]
    record["oracle"] += [
        {"tool": "calendar_create_event", "args": {"user": user, "summary": "Clash one",
                                                   "start": "2031-03-04 10:00:00", "end": "2031-03-04 11:00:00"}},
        {"tool": "calendar_create_event", "args": {"user": user, "summary": "Clash two",
                                                   "start": "2031-03-04 10:30:00", "end": "2031-03-04 11:30:00"}}]
    results = gates(record, task)
    assert "oracle_passes" in failing(results)
    assert f"the plan double-books {user}: 'Clash one' (2031-03-04 10:00-11:00) overlaps 'Clash two'" in \
        results["oracle_passes"].detail


def test_a_clash_the_office_already_had_is_not_the_oracle_s(task, tmp_path):
    from office_env import calendar_store
    from office_env.formats.ics_io import CalendarEvent

    testbed = shutil.copytree(task.testbed, tmp_path / "testbed")
    user = task.record["user"]["username"]
    ws = Workspace(testbed, now=task_now(task.record))
    for summary, start in (("Old clash one", datetime(2031, 3, 4, 10)), ("Old clash two", datetime(2031, 3, 4, 10, 30))):
        calendar_store.create(ws, user, CalendarEvent(summary, start, start + timedelta(hours=1)))
    record = copy.deepcopy(task.record)  # the oracle books in that calendar too, clashing with nothing
    record["oracle"].append({"tool": "calendar_create_event", "args": {
        "user": user, "summary": "Quiet slot", "start": "2031-03-05 09:00:00", "end": "2031-03-05 09:30:00"}})
    results = run_gates(record, testbed, task.reference)
    assert results["oracle_passes"].passed, results["oracle_passes"].detail


# -- memory_evidence -----------------------------------------------------------------------------

def test_evidence_gate_rejects_a_value_removed_from_its_turn(task):
    record = copy.deepcopy(task.record)
    piece = next(m for m in record["memory"] if not m.get("said_as"))  # said as its value
    s, n = cited(record, piece["id"])
    turn = record["dialogue"][s]["turns"][n]
    turn["text"] = without(turn["text"], piece["value"])
    results = gates(record, task)
    assert failing(results) == {"memory_evidence"}
    assert f"{where(record, s, n)}: evidence lists {piece['id']!r} but the text does not hold its value" \
        in results["memory_evidence"].detail


def test_evidence_gate_rejects_a_value_said_in_a_second_turn(task):
    record = copy.deepcopy(task.record)
    piece = next(m for m in record["memory"] if not m.get("said_as"))  # said as its value
    s, n = cited(record, piece["id"])
    other_s = len(record["dialogue"]) - 1 if s == 0 else 0
    turn = record["dialogue"][other_s]["turns"][-1]
    turn["text"] += f" Also, {piece['value'].upper()}."  # matching is case-insensitive
    results = gates(record, task)
    assert failing(results) == {"memory_evidence"}
    detail = results["memory_evidence"].detail
    assert piece["id"] in detail and where(record, other_s, len(record["dialogue"][other_s]["turns"]) - 1) in detail


def test_evidence_gate_rejects_evidence_on_an_assistant_turn(task):
    record = copy.deepcopy(task.record)
    piece = next(m for m in record["memory"] if not m.get("said_as"))  # said as its value
    s, n = cited(record, piece["id"])
    turns = record["dialogue"][s]["turns"]
    user_turn = turns[n]
    a = next(i for i in range(n + 1, len(turns)) if turns[i]["role"] == "assistant")
    # Move the piece (its value and its evidence) from the user turn to the assistant's reply.
    user_turn["text"] = without(user_turn["text"], piece["value"])
    user_turn["evidence"] = [e for e in user_turn["evidence"] if e != piece["id"]]
    if not user_turn["evidence"]:
        del user_turn["evidence"]
    turns[a]["text"] += f" Noted: {piece['value']}."
    turns[a]["evidence"] = [piece["id"]]
    results = gates(record, task)
    assert failing(results) == {"memory_evidence"}
    assert f"{where(record, s, a)}: memory {piece['id']}" in results["memory_evidence"].detail
    assert "is first said by the assistant; the user must say it" in results["memory_evidence"].detail


def test_evidence_gate_rejects_an_unknown_evidence_id(task):
    record = copy.deepcopy(task.record)
    s, n = cited(record, record["memory"][0]["id"])
    record["dialogue"][s]["turns"][n]["evidence"].append("m99")
    results = gates(record, task)
    assert failing(results) == {"memory_evidence"}
    assert f"{where(record, s, n)}: marks 'm99', which is not a memory id" in results["memory_evidence"].detail


def test_marks_looked_at_again_give_the_same_problems_and_never_those_of_other_marks(task):
    """The problems of the last few dialogues' marks are kept (a build checks them in its verifier,
    then in its evidence gate): a second look answers the same, a changed turn is looked at anew,
    and an id of another type (``7`` beside ``"7"``) is never served another record's answer."""
    record = copy.deepcopy(task.record)
    memory, turns = record["memory"], marked_turns(record["dialogue"])
    assert mark_problems(memory, turns) == mark_problems(memory, turns) == find_mark_problems(memory, turns) == []
    plain = next(m for m in memory if not m.get("derived"))  # a value said outright, then taken out of its turn
    s, n = cited(record, plain["id"])
    turn = record["dialogue"][s]["turns"][n]
    turn["text"] = without(turn["text"], plain["value"])
    changed = marked_turns(record["dialogue"])
    assert mark_problems(memory, changed) == find_mark_problems(memory, changed) != []
    for mark in ("7", 7):
        marked = copy.deepcopy(record)
        marked["dialogue"][s]["turns"][n]["evidence"].append(mark)
        turns = marked_turns(marked["dialogue"])
        assert f"{where(marked, s, n)}: marks {mark!r}, which is not a memory id" in mark_problems(memory, turns)
    problems = mark_problems(memory, changed)
    problems.append("a caller's own line")  # the kept answer is a copy
    assert mark_problems(memory, changed) == find_mark_problems(memory, changed)


def test_plain_turns_are_told_as_the_shapes_of_their_values_tell_them(task):
    """``_plain`` (one pass) answers as the set of the turns' value types does: a day of 1.0 or True,
    an id of 7, a list for a tuple, a datetime for a date or a short turn makes turns not plain."""
    from verifier.dialogue_rules import _plain

    shapes = {(str, int, str, str, tuple, tuple, tuple, date), (str, int, str, str, tuple, tuple, tuple, type(None))}

    def by_shapes(turns):
        return ({tuple(map(type, t)) for t in turns} <= shapes
                and {type(i) for t in turns for i in (*t[4], *t[5], *t[6])} <= {str})

    turns = marked_turns(task.record["dialogue"])
    marked = next(i for i, t in enumerate(turns) if t[4])
    odd = {1: [1.0, True, "1"], 2: [None], 3: [b"x"], 4: [[*turns[marked][4]], ("7", 7)], 5: [(7,)],
           6: [("m1", None)], 7: [None, datetime(2025, 1, 1), "2025-01-01"]}
    cases = [turns, [], turns[:1], [turns[marked][:7]], [(*turns[marked], None)]]
    for field, values in odd.items():
        for value in values:
            for at in (0, marked, len(turns) - 1):
                changed = list(turns)
                changed[at] = (*turns[at][:field], value, *turns[at][field + 1:])
                cases.append(changed)
    assert any(_plain(c) for c in cases) and not all(_plain(c) for c in cases)
    for case in cases:
        assert _plain(case) == by_shapes(case)


def test_evidence_gate_rejects_a_piece_cited_nowhere(task):
    record = copy.deepcopy(task.record)
    piece = record["memory"][-1]
    s, n = cited(record, piece["id"])
    turn = record["dialogue"][s]["turns"][n]
    turn["evidence"] = [e for e in turn["evidence"] if e != piece["id"]]
    if not turn["evidence"]:
        del turn["evidence"]
    results = gates(record, task)
    assert failing(results) == {"memory_evidence"}
    assert f"{where(record, s, n)}: holds memory {piece['id']}" in results["memory_evidence"].detail
    assert f"but its evidence does not list {piece['id']!r}" in results["memory_evidence"].detail


# -- baseline_fails ------------------------------------------------------------------------------

def test_baseline_gate_rejects_a_baseline_that_solves_the_task(task):
    record = copy.deepcopy(task.record)
    record["baseline"] = copy.deepcopy(record["oracle"])
    results = gates(record, task)
    assert failing(results) == {"baseline_fails"}
    assert "baseline passes" in results["baseline_fails"].detail


def test_gates_do_not_change_the_record(task):
    record = copy.deepcopy(task.record)
    gates(record, task)
    assert record == task.record


# -- corrections and distractors bite -------------------------------------------------------------

@pytest.fixture(scope="module")
def dynamic_tasks(tmp_path_factory) -> list[LoadedTask]:
    """Built tasks with both a corrected value and a near-miss (and their misreading plans)."""
    out = tmp_path_factory.mktemp("gates-dyn") / "ds"
    build(out, 12, BuildConfig(seed=5, days=3, utterances_per_day=12), workers=1)
    found = [t for t in iter_tasks(out) if t.record is not None
             and {m["dynamic"] for m in t.record.get("misreadings", [])} == {"superseded", "distractor"}]
    assert found, "no built task has both a correction and a near-miss"
    return found


def test_misreading_plans_are_replayed_and_fail_the_criteria(dynamic_tasks):
    for t in dynamic_tasks:
        results = gates(t.record, t)
        for name in ("corrections_bite", "distractors_bite"):
            assert results[name].passed and not results[name].skipped, results[name].detail
            assert "plan(s) fail the criteria, alone and as hedges" in results[name].detail


def test_a_correction_that_changes_nothing_is_caught(dynamic_tasks):
    t = dynamic_tasks[0]
    record = copy.deepcopy(t.record)
    plan = next(m for m in record["misreadings"] if m["dynamic"] == "superseded")
    plan["plan"] = copy.deepcopy(record["oracle"])  # taking the earlier value would still pass
    results = gates(record, t)
    assert failing(results) == {"corrections_bite"}
    assert f"{plan['memory']}: taking the correction {plan['value']!r} still passes the criteria" \
        in results["corrections_bite"].detail


def test_a_hedge_the_criteria_do_not_refuse_is_caught(dynamic_tasks):
    """Without the checks that refuse what a misreading writes (the mail to the old recipient, the event
    at the old time), doing both the right work and the misread one passes: the bite gates say so."""
    refusing = ("evaluate_email_not_sent", "evaluate_calendar_no_event")
    t = next(t for t in dynamic_tasks if {e["function"] for e in t.record["evaluation"]} & set(refusing))
    assert gates(t.record, t)["corrections_bite"].passed
    record = copy.deepcopy(t.record)
    record["evaluation"] = [e for e in record["evaluation"] if e["function"] not in refusing]
    results = gates(record, t)
    assert failing(results) & {"corrections_bite", "distractors_bite"}
    details = " ".join(results[n].detail for n in ("corrections_bite", "distractors_bite"))
    assert "hedging, with the" in details and "beside the final value, still passes the criteria" in details


def test_a_near_miss_without_a_plan_is_caught(dynamic_tasks):
    t = dynamic_tasks[0]
    record = copy.deepcopy(t.record)
    dropped = next(m for m in record["misreadings"] if m["dynamic"] == "distractor")
    record["misreadings"].remove(dropped)
    results = gates(record, t)
    # a check refusing what the dropped plan wrote now refuses what no wrong plan does: the trace says so
    assert "distractors_bite" in failing(results) and failing(results) <= {"distractors_bite", "criteria_traced"}
    assert f"{dropped['memory']}: no misreading plan for the near-miss {dropped['value']!r}" \
        in results["distractors_bite"].detail


def test_one_reused_replay_copy_gives_the_verdicts_of_a_copy_per_replay(dynamic_tasks, tmp_path, monkeypatch):
    """The gates' replays share one copy, put back between replays (``office_env.replays``): every gate
    says what it says with a fresh copy per replay, on passing tasks and on broken ones."""
    import functools
    import shutil

    import verifier.gates as gates_module
    refusing = ("evaluate_email_not_sent", "evaluate_calendar_no_event")
    cases = []
    for t in dynamic_tasks:
        lazy = copy.deepcopy(t.record)  # the misreading writes what the oracle writes: it passes
        next(m for m in lazy["misreadings"] if m["dynamic"] == "superseded")["plan"] = copy.deepcopy(lazy["oracle"])
        unguarded = copy.deepcopy(t.record)  # a hedge nothing refuses
        unguarded["evaluation"] = [e for e in unguarded["evaluation"] if e["function"] not in refusing]
        cases += [(t, t.record), (t, lazy), (t, unguarded)]
    verdicts = {}
    for reuse in (True, False):
        monkeypatch.setattr(gates_module, "Replays", functools.partial(Replays, reuse=reuse))
        found = []
        for i, (t, record) in enumerate(cases):
            world = tmp_path / f"world-{reuse}-{i}"
            shutil.copytree(t.testbed, world)
            results = run_gates(copy.deepcopy(record), world, t.reference, scratch=tmp_path / f"s-{reuse}-{i}",
                                trusted=True)
            found.append({name: (r.passed, r.skipped, r.detail) for name, r in results.items()})
        verdicts[reuse] = found
    assert verdicts[True] == verdicts[False]
    assert any(not passed for case in verdicts[True] for passed, _, _ in case.values())  # some gate fails


def test_a_history_without_dynamics_skips_the_bite_gates(tasks):
    for t in tasks:
        record = copy.deepcopy(t.record)
        for m in record["memory"]:
            m.pop("superseded", None)
            m.pop("distractors", None)
        for s in record["dialogue"]:  # the earlier and near-miss turns go too
            s["turns"] = [turn for turn in s["turns"] if not turn.get("superseded") and not turn.get("distractor")]
        record["misreadings"] = []
        results = run_gates(record, t.testbed, t.reference)
        for name in ("corrections_bite", "distractors_bite"):
            assert results[name].passed and results[name].skipped


def test_a_build_drops_a_task_its_trace_refuses_without_replaying_its_plans(task, monkeypatch):
    import verifier.gates as gates_module

    existing = sorted(p for p in (task.testbed / "data").iterdir() if p.is_file())[0]
    record = copy.deepcopy(task.record)
    record["evaluation"] = [{"function": "evaluate_file_exist",
                             "args": {"file": existing.relative_to(task.testbed).as_posix()}}]
    replays = []
    real = gates_module.Replays.workspace
    monkeypatch.setattr(gates_module.Replays, "workspace", lambda self, name: replays.append(name) or real(self, name))
    early = run_gates(record, task.testbed, task.reference, drop_early=True)
    assert tuple(early) == GATES and not early["criteria_traced"].passed and replays == []
    assert [name for name, r in early.items() if not r.passed] == ["criteria_traced"]
    assert early["oracle_passes"].skipped and "not run: gate criteria_traced failed" in early["oracle_passes"].detail
    full = run_gates(record, task.testbed, task.reference)  # a verifier still sees every gate
    assert "oracle" in replays and not full["fails_untouched"].passed and not full["criteria_traced"].passed


def test_run_gates_runs_the_registry_in_its_order_and_reports_in_the_record_s(task, monkeypatch):
    """Every gate a record gets runs once, in the registry's order; the results keep ``gates_for``'s."""
    import dataclasses

    from verifier import gate_registry

    ran = []

    def watched(g):
        return dataclasses.replace(g, check=lambda task, run: ran.append(g.name) or g.check(task, run))

    monkeypatch.setattr(gate_registry, "_REGISTRY", {n: watched(g) for n, g in gate_registry._REGISTRY.items()})
    extra = ("solvability", "leakage", "judges")
    from verifier.agent_gates import gate_agents

    record = copy.deepcopy(task.record)
    results = run_gates(record, task.testbed, task.reference, extra=extra, agents=gate_agents("offline", None))
    assert tuple(results) == GATES + extra and all(r.passed for r in results.values())
    # no gate writes into what it checks: the trace is a finding the writer stores (the build stored this one)
    assert record == task.record and kept_findings(results) == {"trace": task.record["provenance"]["trace"]}
    assert ran == [g.name for g in gate_registry.registered() if g.name in results]
    assert ran[:4] == ["schema", "memory_evidence", "criteria_traced", "fails_untouched"]
    assert ran.index("oracle_passes") < ran.index("findings_not_pastes") and ran[-1] == "judges"


def test_the_trace_gates_walk_serves_the_replays_look_at_a_kept_copy(tasks, tmp_path, monkeypatch):
    """A record's replays check a copy kept from the world's previous record against the trace
    gate's walk of the world, walking it no second time; a world changed since (a file replaced by
    the same bytes) gets a fresh copy all the same, and the verdicts never change."""
    import os
    import shutil

    from office_env import replays as replays_module

    t = tasks[0]
    world, kept = tmp_path / "world", tmp_path / "kept"
    shutil.copytree(t.testbed, world)
    replays_module._KEPT.clear()
    walks: list[object] = []
    scan = replays_module.scan_tree
    monkeypatch.setattr(replays_module, "scan_tree", lambda root, **kw: walks.append(root) or scan(root, **kw))

    def verdicts(name):
        results = run_gates(copy.deepcopy(t.record), world, t.reference, scratch=tmp_path / name, trusted=True,
                            copies=kept)
        assert "criteria_traced" in results
        return {gate: (r.passed, r.skipped, r.detail) for gate, r in results.items()}, sorted(kept.iterdir())

    first, (root,) = verdicts("s1")
    second, roots = verdicts("s2")
    assert second == first and roots == [root] and walks == []  # the kept copy, taken on the trace gate's walk
    target = next(p for p in sorted(world.rglob("*")) if p.is_file())
    shutil.copyfile(target, target.with_name(target.name + ".new"))
    os.replace(target.with_name(target.name + ".new"), target)
    third, roots = verdicts("s3")
    assert third == first and root not in roots  # the changed world's copy is made again
