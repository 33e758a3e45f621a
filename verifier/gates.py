"""Quality gates every task must pass before it is written, and again under ``homer verify``.

Each gate is separate and reportable:
- ``schema``: the record matches the task schema, its criteria validate against the catalog, and no
  two of them contradict (``office_env.evaluation.contradictions``: a file required and refused);
- ``fails_untouched``: the criteria fail on the initial testbed (nothing is already done);
- ``oracle_passes``: every oracle call succeeds on a copy and the criteria then pass;
- ``memory_evidence``: every memory value is in the dialogue exactly at its evidence turns;
- ``baseline_fails``: the intent-only baseline plan, run on a copy, does not pass;
- ``corrections_bite``: the oracle plan with any corrected (earlier) value in place of the final
  one fails the criteria, so an agent that takes the first mention fails;
- ``distractors_bite``: the same with any near-miss value;
- ``criteria_traced``: every argument of every criterion comes from the chat, the office or a
  stated computation, every requirement the chat states is checked, and some check needs the
  office's data (``verifier.trace``); the sources are kept in the record's provenance;
- ``answer_forms``: the oracle with its prose rewritten the ways people write dates, times and
  amounts ("Monday 7 April", "2 pm", "1,374.45"; ``verifier.answer_forms``) still passes;
- ``findings_not_pastes``: the oracle with everything it read pasted in place of its prose fails
  (``verifier.paste_plan``), a finding's or a look-up's alike (a look-up's value is in the paste,
  so its mails and documents carry ``evaluate_not_pasted``); a forward is skipped.

A Plus record (split ``plus``, regenerated from an OfficeBench seed) has no oracle plan: its
``oracle_passes`` and ``baseline_fails`` are recorded as skipped (``passed`` and ``skipped``
true, detail ``NO_ORACLE``), and it has two more gates:
- ``reference_passes``: the offline solvability proof. The testbed with every expected file of
  ``reference/`` copied onto the file its exact-match criterion checks must pass those criteria
  (else the reference contradicts its own criteria: dropped); when it passes every criterion the
  task is ``proven``; when other criteria remain, or there is no expected file, the gate is
  skipped and the task is ``unproven`` (left to an agent), never counted as verified;
- ``specifics``: every specific of the description (times, numbers, file names, app names,
  people ...; see ``generators.specifics``) is in the dialogue, and none is in the intent.
A Neo task written by a model without an oracle plan gets the same skip; an offline Neo record
always has a plan, so without one it fails those two gates.

Every gate is declared with ``@gate(name, needs=..., order=..., report=..., splits=..., kind=...)``
(``verifier.gate_registry``) at the end of this module (``solvability`` and ``leakage`` in
``verifier.agent_gates``): what it reads, when it runs, where its result is reported and which
records get it. ``run_gates`` reads a record (``schema``), then runs its gates from the registry in
their ``order``: the record stage (``memory_evidence``, ``specifics``, ``criteria_traced``); then
the replay stage (``fails_untouched``, ``reference_passes``, ``oracle_passes``, ``baseline_fails``,
``findings_not_pastes``, ``answer_forms``, ``corrections_bite``, ``distractors_bite``,
``solvability``, ``leakage``, ``judges``). The results are reported in their ``report`` order.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import datetime
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any, Mapping, cast

import jsonschema_rs
from jsonschema import Draft202012Validator

import verifier.agent_gates  # noqa: F401  (declares the solvability and leakage gates)
from backends.dataset_reader import task_day_first, task_now
from backends.task_record import RecordError, TaskRecord, parse_record, plan_calls, schema_text
from generators.hedges import hedged_plan
from generators.model import ToolCall
from generators.specifics import check_specifics, find_specifics
from office_env import OfficeError, Workspace, calendar_store, evaluate_criteria
from office_env.apps import generation
from office_env.evaluation.catalog import criteria_problems
from office_env.evaluation.contradictions import contradictions
from office_env.evaluation.reference_state import EXACT, apply_reference
from office_env.limits import MAX_SCHEMA_ERRORS
from office_env.replays import Replays
from office_env.untrusted import Tree, scan_tree
from verifier.answer_forms import answer_form_plans
from verifier.dialogue_rules import mark_problems, marked_turns
from verifier.gate_registry import (
    RECORD_STAGE,
    REPLAY_STAGE,
    SPLITS,
    Gate,
    GateRun,
    chosen_gates,
    gate,
    gates_for,
    registered,
    replay_inputs,
)
from verifier.gate_result import GateResult
from verifier.judges import judge_panel
from verifier.paste_plan import is_forward, paste_plan
from verifier.trace import OfficeText, office_text, trace_task

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
NO_ORACLE = "no oracle plan: solvability is left to the harness"
UNPROVEN = "unproven"  # how a reference_passes detail starts when the reference state proves nothing whole


def parse_gates(text: str) -> tuple[str, ...]:
    """``--gates``: ``default`` (the built-in gates), ``all``, or a comma list of the gates declared
    ``kind="chosen"`` (a built-in gate's name is taken and changes nothing: it always runs)."""
    text = text.strip().lower()
    optional = chosen_gates()
    if text in ("", "default"):
        return ()
    if text == "all":
        return optional
    chosen = tuple(g.strip() for g in text.split(",") if g.strip())
    declared = {g.name for g in registered()}
    unknown = [g for g in chosen if g not in declared]
    if unknown:
        raise ValueError(f"--gates: unknown gate {unknown[0]!r}; choose from {', '.join(optional)}, "
                         "or 'default' / 'all' (the built-in gates always run)")
    return tuple(g for g in optional if g in chosen)


# The task schema as generated from the type for the registered apps (the checked-in
# task.schema.json is the same text for the built-in ones); each validator is made once per registry.
@lru_cache(maxsize=4)
def _task_schema(_generation: int) -> dict[str, Any]:
    return json.loads(schema_text())


@lru_cache(maxsize=4)
def _reference_validator(_generation: int) -> Draft202012Validator:
    return Draft202012Validator(_task_schema(_generation), format_checker=Draft202012Validator.FORMAT_CHECKER)


@lru_cache(maxsize=4)
def _fast_validator(_generation: int) -> "jsonschema_rs.Draft202012Validator":
    return jsonschema_rs.Draft202012Validator(_task_schema(_generation), validate_formats=True)


def task_validator() -> Draft202012Validator:
    """The reference validator: slow on a 350-turn dialogue, but its errors carry exact paths."""
    return _reference_validator(generation())


def _fast_task_validator() -> "jsonschema_rs.Draft202012Validator":
    """The same schema compiled by jsonschema-rs: a yes/no answer in a fraction of a millisecond."""
    return _fast_validator(generation())


def read_record(data: Any) -> TaskRecord | GateResult:
    """A record as read (parsed JSON) typed, or the schema gate's failure naming its first
    problems: the JSON Schema's (exact paths), then the type's (the last guard; the two agree)."""
    valid = _fast_task_validator().is_valid(data)
    # the first few errors only: a record with 300,000 bad turns must not have every error made and sorted
    errors = [] if valid else sorted(islice(task_validator().iter_errors(data), MAX_SCHEMA_ERRORS),
                                     key=lambda e: list(e.absolute_path))
    problems = [f"{'.'.join(str(p) for p in e.absolute_path) or '(top level)'}: {e.message}" for e in errors[:5]]
    if not valid and not errors:  # the two validators read a pattern or a format apart: refused, not waved through
        problems = ["the schema refuses this record (jsonschema-rs), though the reference validator names no field"]
    if problems:
        return GateResult(False, "; ".join(problems))
    try:
        return parse_record(data)
    except RecordError as exc:
        return GateResult(False, str(exc))


def record_gate(task: TaskRecord) -> GateResult:
    """What the type does not say: the criteria are the catalog's and none contradicts another
    (a file required and refused), and no two memory pieces share an id."""
    criteria = task.criteria()
    problems = [str(p) for p in criteria_problems(criteria)]  # the replays' scoring then validates them no more
    problems += [f"criteria contradict: {c}" for c in contradictions(criteria)]
    ids = [m.id for m in task.memory]
    if len(set(ids)) != len(ids):
        problems.append("memory: ids are not unique")
    return GateResult(not problems, "; ".join(problems) or "valid")


def schema_gate(data: Any) -> GateResult:
    """The schema gate on a record as read (parsed JSON): it fits the schema, and so its type,
    and ``record_gate`` holds."""
    read = read_record(data)
    return read if isinstance(read, GateResult) else record_gate(read)


def evidence_gate(record: TaskRecord) -> GateResult:
    """The memory marks hold (see ``verifier.dialogue_rules.mark_problems``): every final value at
    its evidence turns, earlier values only at superseded turns before their correction, near-miss
    values only at distractor turns, and no unmarked turn holds any of them."""
    memory = record.memory
    problems = mark_problems([m.to_dict() for m in memory], marked_turns(record.dialogue_dicts()))
    olds = sum(len(m.superseded or ()) for m in memory)
    nears = sum(len(m.distractors or ()) for m in memory)
    detail = f"{len(memory)} memory piece(s) at their evidence turns, {olds} correction(s), {nears} near-miss(es)"
    return GateResult(not problems, "; ".join(problems[:5]) or detail)


def misreading_gate(record: TaskRecord, dynamic: str, testbed: Path, reference: Path | None, now: datetime,
                    work: Path, trusted: bool = False, replays: Replays | None = None) -> GateResult:
    """Each ``misreadings`` plan of kind ``dynamic`` (the oracle with an earlier or a near-miss
    value in place of the final one) fails the criteria, so taking the first mention or the
    near-miss costs the task; so does hedging, doing the oracle's work and the misreading's too
    (``generators.hedges.hedged_plan``); and every earlier (near-miss) value of the memory has
    such a plan."""
    word = "correction" if dynamic == "superseded" else "near-miss"
    plans = [m for m in record.misreadings or [] if m.dynamic == dynamic]
    said = [(m.id, v) for m in record.memory
            for v in (m.superseded or () if dynamic == "superseded" else [d.value for d in m.distractors or ()])]
    if not said:
        return GateResult(True, f"no {word} in this history", skipped=True)
    if not record.oracle:
        return GateResult(True, NO_ORACLE, skipped=True)
    covered = {(m.memory, m.value) for m in plans}
    problems = [f"{mid}: no misreading plan for the {word} {value!r}" for mid, value in said
                if (mid, value) not in covered]
    replays = replays or Replays(testbed, now, work, trusted)
    criteria, day_first = record.criteria(), task_day_first(record)
    oracle = [ToolCall(step.tool, dict(step.args)) for step in record.oracle]
    for index, m in enumerate(plans):
        ws = replays.state(plan_calls(m.plan), f"misread-{dynamic}-{index}")
        if evaluate_criteria(ws, criteria, reference, day_first=day_first, until_failure=True).passed:
            problems.append(f"{m.memory}: taking the {word} {m.value!r} still passes the criteria")
            continue
        hedge = hedged_plan(oracle, [ToolCall(step.tool, dict(step.args)) for step in m.plan], m.value)
        if hedge == oracle:
            continue  # nothing the misreading writes can stand beside the right work
        ws = replays.state([{"tool": c.tool, "args": c.args} for c in hedge], f"hedge-{dynamic}-{index}")
        if evaluate_criteria(ws, criteria, reference, day_first=day_first, until_failure=True).passed:
            problems.append(f"{m.memory}: hedging, with the {word} {m.value!r} beside the final value, "
                            "still passes the criteria")
    if problems:
        return GateResult(False, "; ".join(problems[:5]))
    return GateResult(True, f"{len(plans)} {word} plan(s) fail the criteria, alone and as hedges")


def answer_forms_gate(record: TaskRecord, testbed: Path, reference: Path | None, now: datetime, work: Path,
                      trusted: bool = False, replays: Replays | None = None) -> GateResult:
    """The oracle with its prose written the ways people write dates, times and amounts
    (``verifier.answer_forms``: "Monday 7 April", "2 pm", "1,374.45") still passes the criteria:
    a check that only takes the oracle's own spelling would fail right answers."""
    if not record.oracle:
        return GateResult(True, NO_ORACLE, skipped=True)
    day_first = task_day_first(record)
    plans = answer_form_plans(plan_calls(record.oracle), now, day_first)
    if not plans:
        return GateResult(True, "the oracle writes no date, time or amount in prose", skipped=True)
    criteria = record.criteria()
    if not _prose_needs_figures(criteria):  # the rewriting changes nothing a check reads
        return GateResult(True, "no check of the prose reads a date, a time or an amount", skipped=True)
    problems = []
    replays = replays or Replays(testbed, now, work, trusted)
    for form, plan in plans:
        ws = replays.state(plan, f"answer-{form}")
        report = evaluate_criteria(ws, criteria, reference, day_first=day_first)
        if not report.passed:
            problems.append(f"written as {form}: " + "; ".join(r.reason for r in report.failures())[:200])
    if problems:
        return GateResult(False, "; ".join(problems))
    return GateResult(True, f"the answers pass written in {len(plans)} other form(s): "
                            + ", ".join(form for form, _ in plans))


PROSE_CHECKS = ("evaluate_email_sent", "evaluate_contain", "evaluate_answer", "evaluate_not_contain",
                "evaluate_email_not_sent")


def _prose_needs_figures(criteria: list[dict[str, Any]]) -> bool:
    """Whether a check of prose reads a figure: a keyword or number with a digit in it."""
    for criterion in criteria:
        if criterion.get("function") not in PROSE_CHECKS:
            continue
        args = criterion.get("args") or {}
        words = [*args.get("keywords", ()), *args.get("body_keywords", ()), *args.get("subject_keywords", ()),
                 *args.get("body_excludes", ()), *args.get("excludes", ()),
                 *([args["number"]] if "number" in args else [])]
        if any(any(ch.isdigit() for ch in str(w)) for w in words):
            return True
    return False
def paste_gate(record: TaskRecord, trace: Mapping[str, str], testbed: Path, reference: Path | None, now: datetime,
               work: Path, observations: list[str], trusted: bool = False,
               replays: Replays | None = None) -> GateResult:
    """Every task but a forward fails when everything the oracle read is pasted in place of the
    answer (``verifier.paste_plan``); ``trace`` (``criteria_traced``'s sources) is kept for callers."""
    if not record.oracle:
        return GateResult(True, NO_ORACLE, skipped=True)
    oracle = plan_calls(record.oracle)
    if is_forward(oracle, observations):
        return GateResult(True, "the oracle passes on what it read", skipped=True)
    plan = paste_plan(oracle, observations)
    if plan is None:
        return GateResult(True, "the oracle reads nothing or writes no prose", skipped=True)
    ws = (replays or Replays(testbed, now, work, trusted)).state(plan, "paste")
    if evaluate_criteria(ws, record.criteria(), reference, day_first=task_day_first(record), until_failure=True).passed:
        return GateResult(False, "pasting everything the oracle read in place of its answer passes the criteria")
    return GateResult(True, "a paste of the sources fails the criteria")


def trace_gate(record: TaskRecord, testbed: Path | None, *, scanned: Tree | None = None) -> GateResult:
    """``verifier.trace`` over the record and its initial testbed; the result keeps the sources
    (``keep["trace"]``), which the writer stores in the record's provenance, so a reader sees where
    each checked value comes from. ``scanned``: the testbed's ``testbed_scan``, when made already."""
    if testbed is None:
        office = OfficeText.of({})
    else:
        office = _office(testbed, scanned if scanned is not None else testbed_scan(testbed))
    trace = trace_task(record, office)
    keep = {"trace": dict(trace.sources)}
    if trace.problems:
        more = f" (+{len(trace.problems) - 4} more)" if len(trace.problems) > 4 else ""
        return GateResult(False, "; ".join(trace.problems[:4]) + more, keep=keep)
    return GateResult(True, f"{trace.leaves} criterion argument(s) traced to the chat, the office or a computation",
                      keep=keep)


def testbed_scan(testbed: Path) -> Tree:
    """The walk of the testbed the trace's office text is keyed on (any size: nothing is read but
    what ``office_text`` reads); the replays take it for their first look at a kept copy."""
    return scan_tree(testbed, check_links=False, max_file_bytes=None, max_total_bytes=None)


def _office(testbed: Path, scanned: Tree) -> OfficeText:
    """The testbed as text, cached while its files (as ``scanned`` found them) are unchanged (the
    tasks of one world share it)."""
    signature = tuple((f.rel, f.size, f.ino, f.mtime_ns) for f in scanned.files)
    return _office_cached(str(Path(testbed).resolve()), signature)


@lru_cache(maxsize=8)
def _office_cached(root: str, signature: tuple) -> OfficeText:
    return office_text(Path(root))


def specifics_gate(record: TaskRecord) -> GateResult:
    """Every specific of the description is in the dialogue; none is in the intent."""
    text = "\n".join(t.text for s in record.dialogue for t in s.turns)
    dated = [(turn[3], turn[7]) for turn in marked_turns(record.dialogue_dicts())]  # said in words
    problems = check_specifics(record.description, record.intent, text, dated,
                               [m.value for m in record.memory if m.derived is not None])
    if problems:
        return GateResult(False, "; ".join(problems[:8])
                          + (f" (+{len(problems) - 8} more)" if len(problems) > 8 else ""))
    count = len(find_specifics(record.description))
    return GateResult(True, f"{count} specific(s) carried by the dialogue, none in the intent")


def reference_gate(record: TaskRecord, testbed: Path, reference: Path | None, now: datetime,
                   work: Path, trusted: bool = False) -> GateResult:
    """The reference-applied state (``office_env.evaluation.reference_state``) passes the
    exact-match criteria; ``proven`` when it passes them all, else skipped as ``unproven``.
    A seed's testbed is a stranger's tree: copied, never linked, unless ``trusted``."""
    criteria = record.criteria()
    ws = Workspace(testbed, now=now).copy_to(work / "reference-state", link=trusted)
    try:
        applied = apply_reference(ws, criteria, reference, testbed)
    except OfficeError as exc:
        return GateResult(False, f"reference state: {exc}")
    exact = [i for i, c in enumerate(criteria) if c["function"] == EXACT]
    if not exact:
        return GateResult(True, f"{UNPROVEN}: no expected file to apply; solvability is left to an agent", skipped=True)
    report = evaluate_criteria(ws, criteria, reference, initial_dir=testbed,
                               day_first=task_day_first(record))
    broken = [r for r in report.failures() if r.function == EXACT]
    if broken or len(applied) < len(exact):
        missing = [f"[{i}] expected file missing" for i in exact if i not in applied]
        reasons = missing + [f"[{r.index}] {r.reason}" for r in broken if r.index in applied]
        return GateResult(False, "reference state fails its own criteria: " + "; ".join(reasons)[:500])
    if report.passed:
        return GateResult(True, f"proven: the reference state passes all {len(criteria)} criteria")
    return GateResult(True, f"{UNPROVEN}: the reference state passes its {len(applied)} exact-match criteria; "
                      f"{len(report.failures())} other criteria are left to an agent", skipped=True)


def double_bookings(before: Workspace, after: Workspace, plan: list[dict[str, Any]]) -> list[str]:
    """The clashes a plan's bookings add to a calendar: the right work never double-books its user,
    whether or not a criterion looks (a clash the office already had is not the plan's)."""
    users = {c["args"].get("user") for c in plan if c.get("tool") == "calendar_create_event"
             and isinstance(c.get("args"), dict) and isinstance(c["args"].get("user"), str)}
    found = []
    for user in sorted(users):
        try:
            had = calendar_store.overlaps(calendar_store.events(before, user, missing_ok=True))
            now = calendar_store.overlaps(calendar_store.events(after, user, missing_ok=True))
        except OfficeError:
            continue  # a calendar the plan cannot read is the criteria's to judge
        old = {_clash_key(pair) for pair in had}
        found += [f"the plan double-books {user}: {calendar_store.clash_text(*pair)}"
                  for pair in now if _clash_key(pair) not in old]
    return found


def _clash_key(pair: tuple[Any, Any]) -> tuple:
    return tuple(sorted((e.summary, e.start, e.end) for e in pair))


def untouched_gate(testbed: Path, now: Any, criteria: list[dict[str, Any]], reference: Path | None,
                   day_first: bool | None) -> GateResult:
    """The criteria fail on the testbed as it is: a task that passes before any action tests nothing."""
    try:
        untouched = evaluate_criteria(Workspace(testbed, now=now), criteria, reference, day_first=day_first,
                                      until_failure=True)
    except OfficeError as exc:
        return GateResult(False, str(exc))
    return GateResult(not untouched.passed,
                      "criteria fail before any action" if not untouched.passed else "criteria already pass untouched")


# -- the registry: every gate declared, in the order they run (see ``verifier.gate_registry``) ---------

@gate("schema", order=0, report=0)
def _schema(task: TaskRecord, run: GateRun) -> GateResult:
    """The record fits the schema and its type (``run_gates`` read it); ``record_gate`` holds."""
    return record_gate(task)


@gate("memory_evidence", needs=("dialogue",), order=RECORD_STAGE, report=4)
def _memory_evidence(task: TaskRecord, run: GateRun) -> GateResult:
    return evidence_gate(task)


@gate("specifics", needs=("dialogue",), order=RECORD_STAGE + 1, report=11, splits=("plus",))
def _specifics(task: TaskRecord, run: GateRun) -> GateResult:
    return specifics_gate(task)


@gate("criteria_traced", needs=("dialogue", "testbed"), order=RECORD_STAGE + 2, report=8, splits=("neo",))
def _criteria_traced(task: TaskRecord, run: GateRun) -> GateResult:
    """The trace's sources are kept in ``run`` for ``findings_not_pastes`` and in the result for the writer."""
    if run.testbed is not None:
        run.testbed_scan = testbed_scan(run.testbed)
    result = trace_gate(task, run.testbed, scanned=run.testbed_scan)
    run.trace = result.keep["trace"]
    return result


@gate("fails_untouched", needs=("testbed", "reference"), order=REPLAY_STAGE, report=1)
def _fails_untouched(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, now, _, _ = replay_inputs(run)
    return untouched_gate(testbed, now, task.criteria(), run.reference, task_day_first(task))


@gate("reference_passes", needs=("testbed", "reference"), order=REPLAY_STAGE + 1, report=2, splits=("plus",))
def _reference_passes(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, now, work, _ = replay_inputs(run)
    return reference_gate(task, testbed, run.reference, now, work, run.trusted)


@gate("oracle_passes", needs=("testbed", "replays", "oracle", "reference"), order=REPLAY_STAGE + 2, report=3)
def _oracle_passes(task: TaskRecord, run: GateRun) -> GateResult:
    """Every oracle call succeeds, the criteria pass and no booking double-books the user; the
    calls' observations are kept for ``findings_not_pastes``."""
    if not task.oracle:
        return _no_plan(task)
    oracle = plan_calls(task.oracle)
    ws, calls = replay_inputs(run)[3].run(oracle, "oracle")
    run.observations = [c.observation for c in calls]
    failed = [f"{c.tool}: {c.observation}" for c in calls if not c.ok]
    report = evaluate_criteria(ws, task.criteria(), run.reference, day_first=task_day_first(task))
    failed += double_bookings(Workspace(run.testbed, now=run.now), ws, oracle)
    ok = report.passed and not failed
    return GateResult(ok, "oracle plan passes" if ok
                      else "; ".join(failed + [r.reason for r in report.failures()])[:500])


@gate("baseline_fails", needs=("testbed", "replays", "oracle", "reference"), order=REPLAY_STAGE + 3, report=5)
def _baseline_fails(task: TaskRecord, run: GateRun) -> GateResult:
    if not task.oracle:
        return _no_plan(task)
    ws = replay_inputs(run)[3].state(plan_calls(task.baseline), "baseline")
    base = evaluate_criteria(ws, task.criteria(), run.reference, day_first=task_day_first(task), until_failure=True)
    return GateResult(not base.passed,
                      "intent-only baseline fails" if not base.passed else "intent-only baseline passes")


def _no_plan(record: TaskRecord) -> GateResult:
    """A seed task or a model-written task may come without a plan (the harness decides); an
    offline Neo record always has one."""
    if record.split == "plus" or record.provenance.backend == "llm":
        return GateResult(True, NO_ORACLE, skipped=True)
    return GateResult(False, "no oracle plan")


@gate("findings_not_pastes", needs=("testbed", "replays", "oracle", "reference"), order=REPLAY_STAGE + 4, report=10,
      splits=("neo",))
def _findings_not_pastes(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, now, work, replays = replay_inputs(run)
    return paste_gate(task, run.trace, testbed, run.reference, now, work, run.observations, run.trusted, replays)


@gate("answer_forms", needs=("testbed", "replays", "oracle", "reference"), order=REPLAY_STAGE + 5, report=9,
      splits=("neo",))
def _answer_forms(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, now, work, replays = replay_inputs(run)
    return answer_forms_gate(task, testbed, run.reference, now, work, run.trusted, replays)


@gate("corrections_bite", needs=("dialogue", "testbed", "replays", "oracle", "reference"), order=REPLAY_STAGE + 6,
      report=6)
def _corrections_bite(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, now, work, replays = replay_inputs(run)
    return misreading_gate(task, "superseded", testbed, run.reference, now, work, run.trusted, replays)


@gate("distractors_bite", needs=("dialogue", "testbed", "replays", "oracle", "reference"), order=REPLAY_STAGE + 7,
      report=7)
def _distractors_bite(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, now, work, replays = replay_inputs(run)
    return misreading_gate(task, "distractor", testbed, run.reference, now, work, run.trusted, replays)


@gate("judges", needs=("dialogue", "llm"), order=REPLAY_STAGE + 20, report=14, kind="chosen")
def _judges(task: TaskRecord, run: GateRun) -> GateResult:
    passed, detail, votes = judge_panel(task, run.client)
    return GateResult(passed, detail, votes=votes)


def _claimed_split(data: Any) -> str:
    # a raw read, with reason: the record did not parse, so the split it claims (else neo) picks the
    # gates reported as skipped
    split = data.get("split") if isinstance(data, Mapping) else None
    return split if split in SPLITS else "neo"


def _all_skipped(gates: tuple[Gate, ...], results: dict[str, GateResult], why: GateResult) -> dict[str, GateResult]:
    """``results`` and every other gate of ``gates`` as ``why`` says, in report order."""
    return {g.name: results.get(g.name, why) for g in gates}


def kept_findings(results: Mapping[str, GateResult]) -> dict[str, Any]:
    """What a record's provenance keeps of its gates' findings (``GateResult.keep``), in report order:
    the writer stores it, the gates never do."""
    return {key: value for result in results.values() for key, value in result.keep.items()}


def run_gates(record: TaskRecord | Mapping[str, Any], testbed: Path, reference: Path | None = None,
              scratch: Path | None = None, *, extra: tuple[str, ...] = (), client: Any = None,
              agents: Any = None, trusted: bool = False, drop_early: bool = False,
              copies: Path | None = None) -> dict[str, GateResult]:
    """Run every gate a record gets (``verifier.gate_registry.gates_for``: its split and backend,
    and the ``extra`` gates chosen with ``--gates``), in the registry's run order, and report them
    in their ``report`` order. ``record`` is typed, or read (parsed JSON) and typed here: a record
    that does not read fails the schema gate, and every later gate is skipped (failed).
    ``drop_early`` (a build, which drops a task at its first failing gate): the replay stage is not
    run (skipped) when a gate of the record stage (evidence, specifics, trace) fails. ``client``
    makes the judges model calls (else rule judges); ``agents`` (see ``verifier.agent_gates``) runs
    the solvability and leakage gates. ``trusted``: the testbed is one this project wrote (a build's
    world), so replays hard-link its files instead of copying; ``copies``: where their copy is kept
    for the next record of the same testbed (``office_env.replays``). No gate changes the record:
    what the record keeps of a gate's findings is in its result's ``keep``."""
    task = record if isinstance(record, TaskRecord) else read_record(record)
    if isinstance(task, GateResult):
        gates = gates_for(_claimed_split(record), None, extra)
        return _all_skipped(gates, {"schema": task}, GateResult(False, "skipped: schema gate failed"))
    gates = gates_for(task.split, task.provenance.backend, extra)
    chosen = tuple(sorted(gates, key=lambda g: g.order))
    run = GateRun(testbed, reference, trusted=trusted, client=client, agents=agents)
    results = {g.name: g.check(task, run) for g in chosen if g.stage == "schema"}
    failed = next((g.name for g in gates if g.name in results and not results[g.name].passed), None)
    if failed is not None:
        return _all_skipped(gates, results, GateResult(False, f"skipped: {failed} gate failed"))
    # the gates that read the record alone run first: a task one of them drops is spared the replays
    first = {g.name: g.check(task, run) for g in chosen if g.stage == "record"}
    results.update(first)
    dropped = next((g.name for g in gates if g.name in first and not first[g.name].passed), None)
    if dropped is not None and drop_early:
        return _all_skipped(gates, results, GateResult(True, f"not run: gate {dropped} failed", skipped=True))
    run.now = task_now(task)
    own_scratch = scratch is None
    run.work = Path(tempfile.mkdtemp(prefix="gates-")) if own_scratch else cast(Path, scratch)  # given
    try:
        run.replays = Replays(testbed, run.now, run.work, trusted, keep_in=copies, scanned=run.testbed_scan)
        for g in chosen:
            if g.stage == "replay":
                results[g.name] = g.check(task, run)
        run.replays.close()  # its copy is kept for the next record only when every gate ran to its end
    finally:
        if own_scratch:
            shutil.rmtree(run.work, ignore_errors=True)
    return {g.name: results[g.name] for g in gates}
