"""HomerAgents+ ("Plus"): ``homer regenerate`` over the OfficeBench-format sample split.

The sample (``datasets/officebench-sample``) is regenerated through the real console script with
the default dialogue shape; a second run (two workers) checks determinism, a third runs on a copy
with broken seeds. The graph is also driven in-process with roles whose verifier rejects.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from dataclasses import replace
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from generators.model import Verdict
from generators.plus_offline import memory_pieces, plus_problems, regenerate, split_clauses
from office_env import load_officebench
from office_env.seed_recast import file_text, substitute, substitute_values
from orchestrator.dataset_writer import iter_tasks
from orchestrator.plus import (
    OfflinePlusRoles,
    PlusConfig,
    PlusJob,
    build_plus_graph,
    told_candidates,
    plus_gate,
    plus_task_id,
    plus_write,
    regenerate_split,
)
from tests.support.gates import NEO_GATES as GATES
from tests.support.gates import PLUS_GATES
from verifier.gates import NO_ORACLE, GateResult, run_gates
from generators.specifics import contains_specific, find_specifics
from generators.spoken_time import names_value

from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "officebench-sample"
HOMER = Path(sys.executable).parent / "homer"
SCHEMA = json.loads((ROOT / "verifier" / "schemas" / "task.schema.json").read_text(encoding="utf-8"))


def homer(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    assert HOMER.exists(), f"console script missing: {HOMER}"
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
    proc = subprocess.run([str(HOMER), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr + proc.stdout
    return proc


def here(*args: str | Path) -> subprocess.CompletedProcess:
    """The command line in this process (``homer_cli``): for refusals and checks that take a moment."""
    proc = homer_here(*args)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr + proc.stdout
    return proc


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def records(folder: Path) -> dict[str, dict]:
    lines = [json.loads(line) for line in (folder / "index.jsonl").read_text(encoding="utf-8").splitlines()]
    return {line["id"]: json.loads((folder / line["path"]).read_text(encoding="utf-8")) for line in lines}


def dialogue_text(record: dict) -> str:
    return "\n".join(t["text"] for s in record["dialogue"] for t in s["turns"])


MOON = {"function": "evaluate_moon_phase", "args": {"phase": "full"}}


def broken_tree(root: Path) -> Path:
    """The sample with a malformed subtask, one with an unknown criterion, and a seed with no testbed."""
    shutil.copytree(SAMPLE, root)
    (root / "tasks" / "1-1" / "subtasks" / "1.json").write_text('{"username": "alice", "task": ', encoding="utf-8")
    good = json.loads((root / "tasks" / "2-1" / "subtasks" / "0.json").read_text(encoding="utf-8"))
    (root / "tasks" / "2-1" / "subtasks" / "1.json").write_text(json.dumps({**good, "evaluation": [MOON]}),
                                                                 encoding="utf-8")
    bare = root / "tasks" / "1-3" / "subtasks"
    bare.mkdir(parents=True)
    (bare / "0.json").write_text(json.dumps({
        "username": "dan", "date": "2024-06-12", "weekday": "wednesday", "time": "2:15 PM",
        "task": "Create notes.docx with the word 'hello' in it.",
        "evaluation": [{"function": "evaluate_file_exist", "args": {"file": "data/notes.docx"}}]}), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    base = tmp_path_factory.mktemp("plus")
    seeds = broken_tree(base / "broken-seeds")
    jobs = {
        "a": ("regenerate", "--seeds", SAMPLE, "--out", base / "a", "--seed", "3", "--workers", "1"),
        "b": ("regenerate", "--seeds", SAMPLE, "--out", base / "b", "--seed", "3", "--workers", "2"),
        "neo": ("regenerate", "--seeds", SAMPLE, "--out", base / "neo", "--seed", "3", "--shape", "neo"),
        "broken": ("regenerate", "--seeds", seeds, "--out", base / "broken", "--seed", "3", "--days", "5",
                   "--utterances", "20", "--keep-people"),
    }
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(homer, *args) for name, args in jobs.items()}
        return {name: (base / name, f.result()) for name, f in futures.items()}


@pytest.fixture(scope="module")
def sample_seeds():
    report = load_officebench(SAMPLE)
    assert report.ok, report.problems
    return report.tasks


# -- the regenerated split -----------------------------------------------------------------------

def test_one_task_per_subtask(runs, sample_seeds):
    folder, proc = runs["a"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "regenerated 5 task(s)" in proc.stdout and "skipped seeds: 0" in proc.stdout
    files = sorted(SAMPLE.glob("tasks/*/subtasks/*.json"))
    assert len(files) == len(sample_seeds) == 5
    got = records(folder)
    assert sorted(got) == sorted(plus_task_id(s.id) for s in sample_seeds) == [
        "plus-1-1-0", "plus-1-1-1", "plus-1-2-0", "plus-2-1-0", "plus-3-1-0"]
    assert sorted(p.name for p in (folder / "tasks").iterdir()) == sorted(got)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "attempts.jsonl", "build.json", "index.jsonl",
                                                       "schemas", "tasks"]


def test_records_keep_the_seed_and_validate(runs, sample_seeds):
    folder, _ = runs["a"]
    got = records(folder)
    validator = Draft202012Validator(SCHEMA)
    for seed in sample_seeds:
        record = got[plus_task_id(seed.id)]
        assert not [e.message for e in validator.iter_errors(record)]
        raw = json.loads(seed.subtask_file.read_text(encoding="utf-8"))
        assert record["split"] == "plus"
        cast = record["provenance"]["recast"]["names"]  # the seed's people, each under another name
        assert {"Alice", "Bob", "Carol"} <= set(cast) and not set(cast) & set(cast.values())
        assert record["description"] == substitute(raw["task"], cast) != raw["task"] or "Bob" not in raw["task"]
        assert record["evaluation"] == substitute_values(raw["evaluation"], cast)
        assert record["user"]["username"] == cast["Alice"].lower() and record["user"]["name"] == cast["Alice"]
        assert not re.search(r"\b(Alice|Bob|Carol)\b", dialogue_text(record))
        assert record["now"] == {"date": "2024-05-03", "weekday": "Friday", "time": "09:30"}
        assert record["app_count"] == int(seed.id.split("-")[0])
        prov = record["provenance"]
        assert prov["backend"] == "offline" and prov["seed"] == 3 and prov["seed_task"] == seed.id
        assert prov["rounds"] == 1 and prov["tokens"]["dialogue"] > 0
        assert tuple(prov["gates"]) == PLUS_GATES
        for name in ("oracle_passes", "baseline_fails"):
            assert prov["gates"][name] == {"passed": True, "detail": NO_ORACLE, "skipped": True}
        for name in ("corrections_bite", "distractors_bite"):  # Plus histories have no corrections yet
            assert prov["gates"][name]["passed"] and prov["gates"][name].get("skipped")
        assert all(g["passed"] and "skipped" not in g for k, g in prov["gates"].items()
                   if k not in ("oracle_passes", "baseline_fails", "corrections_bite", "distractors_bite",
                                "reference_passes"))  # the proof: its own test below
        assert "oracle" not in record
    assert got["plus-1-1-0"]["apps"] == ["excel"]
    assert got["plus-1-1-1"]["apps"] == ["excel"]  # the workbook named in the instruction; answer.txt adds none
    assert got["plus-2-1-0"]["apps"] == ["email", "calendar"]
    assert got["plus-3-1-0"]["apps"] == ["word", "pdf", "email"]


def _told(record: dict) -> list[str]:
    """The user's lines about other work (threads ``w...``), case folded; not the task's own near
    misses, which may be said of another work."""
    return [t["text"].lower() for s in record["dialogue"] for t in s["turns"]
            if t["role"] == "user" and t.get("thread", "").startswith("w") and not t.get("distractor")]


def test_jobs_for_later_tell_the_other_seeds_and_never_the_tasks_values(runs, sample_seeds):
    """A seed's clauses are said as work for later in the histories of seeds with another testbed
    (so they are not evidence there), and a told line never names a value of the task it is in.
    Two works of a history share no word of their names, so of the sample's three score
    spreadsheets one at most is told in a history: over two builds, most seeds are told somewhere."""
    # a clause as told: whole, or (its detail said in another turn, or against an anchor) the words
    # on the longer side of its value
    clauses = {s.id: [max((part.strip(" .,") for part in p.text.lower().split(p.value.lower())), key=len)
                      for p in memory_pieces(s.instruction, split_clauses(s.instruction))] for s in sample_seeds}
    told_somewhere = set()
    for seed, got in ((seed, records(runs[run][0])) for run in ("a", "neo") for seed in sample_seeds):
        record = got[plus_task_id(seed.id)]
        lines = _told(record)
        for other in sample_seeds:
            hits = [c for c in clauses[other.id] if len(c.split()) >= 3 and any(c in line for line in lines)]
            if other.folder == seed.folder:
                assert not hits, (seed.id, other.id, hits)  # a sibling shares the testbed: never told
            elif hits:
                told_somewhere.add(other.id)
        values = [m["value"].lower() for m in record["memory"]]
        assert not [(v, line) for v in values for line in lines if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", line)]
    assert len(told_somewhere) >= 3, told_somewhere


def test_each_seed_is_offered_to_about_as_many_histories_never_its_own_testbeds_nor_a_refused_one():
    seeds = load_officebench(SAMPLE).tasks
    candidates = told_candidates(seeds, {1}, seed=3)
    assert candidates == told_candidates(seeds, {1}, seed=3) != told_candidates(seeds, {1}, seed=4)
    offered = Counter(text for told in candidates for text in told)
    for i, (seed, told) in enumerate(zip(seeds, candidates)):
        assert seed.instruction not in told and seeds[1].instruction not in told
        assert not [s.id for s in seeds if s.folder == seed.folder and s.instruction in told]
        assert len(told) == len(set(told))
    assert seeds[1].instruction not in offered
    # a seed on a folder of its own is offered to every other seed (a refused one's list is never used)
    assert offered[seeds[4].instruction] == len(seeds) - 1 and seeds[4].folder not in {s.folder for s in seeds[:4]}


def test_a_clause_after_a_lead_in_opens_in_lower_case_for_the_task_and_other_jobs_alike(runs):
    """A request or question said after "Basically," or "Here it is:" opens in lower case whether it
    is the task's or a job's for later: a capital there would mark the task's own evidence."""
    from generators.plus_offline import _ACTION_NOUN, _AUX, _WH

    common = _ACTION_NOUN.keys() | _WH | _AUX
    capital = [(name, t["text"]) for name in ("a", "neo") for r in records(runs[name][0]).values()
               for s in r["dialogue"] for t in s["turns"] if t["role"] == "user"
               for m in re.finditer(r"[,:] ([A-Z][a-z]+)\b", t["text"]) if m.group(1).lower() in common]
    assert not capital


def test_a_clause_opens_in_lower_case_after_a_lead_in_but_a_name_or_an_acronym_keeps_its_capitals():
    from generators.plus_offline import _said_within

    assert _said_within("Find the highest score") == "find the highest score"
    assert _said_within("For each class separately") == "for each class separately"
    assert _said_within("IT staff salaries are in salary.xlsx") == "IT staff salaries are in salary.xlsx"
    assert _said_within("Bob's score is 95") == "Bob's score is 95"


def test_told_jobs_are_named_by_their_topic_and_told_in_their_clauses():
    from generators.plus_offline import tellable, told_jobs

    task = "Send an email to Bob about the budget meeting on 2024-05-07."
    others = ["Find who has the highest score in data/scores.xlsx and write the name into answer.txt.",
              "Open the file.",  # names nothing of its own: no job
              "Sort the budget excel file by cost.",  # the task's own topic word
              "Forward the venue quote to Bob.",  # the task's person
              "Count the rows of the headcount excel file. For each team separately, email the total to Carol.",
              "Rename the photo pdf to {name}.pdf, then email it to Dana.",  # braces, and 'it' leans on them
              "x" * 3000 + " invoice report"]
    assert tellable(others, task) == [others[0], others[4]]  # the last two: nothing left to tell
    jobs = told_jobs(others, task)
    assert [j.about for j in jobs] == ["the score spreadsheet", "the headcount spreadsheet"]
    assert jobs[0].sentences == (("requested", "find who has the highest score in data/scores.xlsx"),
                                 ("requested", "write the name into answer.txt"))
    assert jobs[1].sentences == (("requested", "count the rows of the headcount excel file"),
                                 ("requested", "email the total to Carol"))
    assert told_jobs([], task) == [] and told_jobs([task], task) == []


def test_specifics_in_every_dialogue_and_none_in_the_intent(runs):
    folder, _ = runs["a"]
    got = records(folder)
    for record in got.values():
        text = dialogue_text(record)
        specifics = find_specifics(record["description"])
        assert specifics
        dated = [(t["text"], date.fromisoformat(s["date"])) for s in record["dialogue"] for t in s["turns"]]
        for spec in specifics:  # a date may be said in words ("Tuesday next week")
            # a derived value is said in no turn: its relation and its anchor are (the marks check them)
            derived = [m["value"] for m in record["memory"] if m.get("derived")]
            assert contains_specific(text, spec) or any(names_value(t, spec.text, d) for t, d in dated) \
                or any(contains_specific(v, spec) for v in derived), (record["id"], spec)
            assert not contains_specific(record["intent"], spec), (record["id"], spec)
            assert not contains_specific(record["query"], spec), (record["id"], spec)
            assert any(contains_specific(m["text"], spec) for m in record["memory"]), (record["id"], spec)
        for piece in record["memory"]:
            assert piece["value"].lower() not in record["intent"].lower()
    calendar = got["plus-2-1-0"]
    bob = calendar["provenance"]["recast"]["names"]["Bob"]
    for needle in ("Budget review", "15:00", "16:00", bob, "calendar", "email"):
        assert needle in dialogue_text(calendar)
        assert needle.lower() not in calendar["intent"].lower()
    said = [(t["text"], date.fromisoformat(s["date"])) for s in calendar["dialogue"] for t in s["turns"]]
    assert "2024-05-07" not in dialogue_text(calendar)  # a day is said as people say it
    (day,) = [m for m in calendar["memory"] if m["value"] == "2024-05-07"]
    if day.get("derived"):  # said against an anchor: the relation in one turn, the anchor's day (in words) in another
        base = day["derived"]["base"]
        assert day["said_as"].lower() in dialogue_text(calendar).lower() and base not in dialogue_text(calendar)
        assert any(names_value(t, base, d) and day["derived"]["anchor"].lower() in t.lower() for t, d in said)
    else:
        assert any(names_value(t, "2024-05-07", d) for t, d in said)
    assert "2024-05-07" not in calendar["intent"]
    assert calendar["subtasks"] == ["Add 'Budget review' to my calendar on 2024-05-07 from 15:00 to 16:00",
                                    f"email {bob} to confirm it"]
    invoice = got["plus-3-1-0"]
    carol = invoice["provenance"]["recast"]["names"]["Carol"]
    assert invoice["subtasks"] == ["Read the invoice PDF", "write its number and total into data/invoice_summary.docx",
                                   f"email the summary to {carol}"]
    assert [m["value"] for m in invoice["memory"]] == ["PDF", "data/invoice_summary.docx", carol]


# about the shape's utterances a day, within the +-20 % bench/quality.py holds a shape to
@pytest.mark.parametrize(("run", "days", "low", "high"), [("a", 28, 8, 14), ("neo", 5, 56, 84)])
def test_the_shape_of_the_history_before_now(runs, run, days, low, high):
    folder, proc = runs[run]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for record in records(folder).values():
        sessions = record["dialogue"]
        assert len(sessions) == days
        days_said = [date.fromisoformat(s["date"]) for s in sessions]
        assert days_said == sorted(set(days_said)) and days_said[-1] < date(2024, 5, 3)
        assert all(low <= len(s["turns"]) <= high for s in sessions), [len(s["turns"]) for s in sessions]
        carried = [t for s in sessions for t in s["turns"] if t.get("evidence")]
        assert all(t["role"] == "user" for t in carried)
        # each piece is evidence once; a derived one twice (its relation's turn and its anchor's)
        assert sorted(e for t in carried for e in t["evidence"]) == sorted(
            m["id"] for m in record["memory"] for _ in range(2 if m.get("derived") else 1))


def test_testbed_and_reference_are_the_seeds_with_its_people_recast(runs, sample_seeds):
    folder, _ = runs["a"]
    kept = records(runs["broken"][0])  # --keep-people: byte for byte the seed's
    for seed in sample_seeds:
        task = folder / "tasks" / plus_task_id(seed.id)
        cast = records(folder)[task.name]["provenance"]["recast"]["names"]
        for part, source in (("testbed", seed.testbed), ("reference", seed.reference)):
            if source is None:
                assert not (task / part).exists()
                continue
            old, new = tree(source), tree(task / part)
            assert old and sorted(new) == sorted(substitute(path, cast) for path in old)
            for path, data in old.items():  # each file says what the seed's says, its people re-cast
                said = file_text(source / path, path)
                assert file_text(task / part / substitute(path, cast), path) == substitute(said, cast)
                if said == substitute(said, cast):
                    assert new[path] == data  # nobody in it: the same bytes
        if task.name in kept:
            assert tree(runs["broken"][0] / "tasks" / task.name / "testbed") == tree(seed.testbed)
    assert (folder / "tasks" / "plus-1-2-0" / "reference" / "scores_swapped.xlsx").is_file()


def test_homer_verify_accepts_the_plus_split(runs):
    folder, _ = runs["a"]
    proc = here("verify", folder)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.count("\nok   plus-") + proc.stdout.startswith("ok   plus-") == 5
    assert "5/5 tasks pass every gate" in proc.stdout
    # ... and what it re-runs matches what the regeneration recorded
    for task in iter_tasks(folder):
        results = run_gates(task.record, task.testbed, task.reference)
        assert {k: r.to_dict() for k, r in results.items()} == task.record["provenance"]["gates"]


def test_card_says_plus(runs):
    folder, _ = runs["a"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "Plus split" in card and "Neo split" not in card
    assert "| all | 5 | 28.00 |" in card
    assert "skipped (failed to load): 0" in card and "tasks written: 5" in card
    info = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    assert info["split"] == "plus" and info["accepted"] == 5 and info["skipped"] == [] and info["dropped"] == []


def test_same_seed_same_bytes_whatever_the_workers(runs):
    (a, _), (b, proc) = runs["a"], runs["b"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert tree(a) == tree(b)


# -- broken seeds --------------------------------------------------------------------------------

def test_broken_seeds_are_reported_and_skipped(runs):
    folder, proc = runs["broken"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 2, proc.stdout
    assert any(line.startswith("skipped: tasks/1-1/subtasks/1.json: json: invalid JSON") for line in skipped)
    assert "skipped: tasks/2-1/subtasks/1.json: evaluation[0].function: unknown function 'evaluate_moon_phase'" \
        in skipped
    assert "skipped seeds: 2" in proc.stdout
    got = records(folder)
    assert sorted(got) == ["plus-1-1-0", "plus-1-2-0", "plus-1-3-0", "plus-2-1-0", "plus-3-1-0"]
    # the seed without testbed/ got an empty one; its lower-case weekday and 12 h time are normalised
    bare = folder / "tasks" / "plus-1-3-0"
    assert (bare / "testbed").is_dir() and not any((bare / "testbed").iterdir())
    assert got["plus-1-3-0"]["now"] == {"date": "2024-06-12", "weekday": "Wednesday", "time": "14:15"}
    assert got["plus-1-3-0"]["user"]["name"] == "Dan"  # --keep-people: the seed's own people
    assert "Bob's score" in got["plus-1-1-0"]["description"] and "recast" not in got["plus-1-1-0"]["provenance"]
    assert (folder / "tasks" / "plus-2-1-0" / "testbed" / "emails" / "bob").is_dir()
    assert json.loads((folder / "build.json").read_text(encoding="utf-8"))["config"]["keep_people"] is True
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "skipped (failed to load): 2" in card
    assert "| tasks/1-1/subtasks/1.json | json | invalid JSON" in card
    assert "| tasks/2-1/subtasks/1.json | evaluation[0].function | unknown function 'evaluate_moon_phase' |" in card
    info = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    assert info["seeds"] == {"subtask_files": 7, "loaded": 5, "skipped": 2}
    assert here("verify", folder).returncode == 0


def test_cli_refusals(runs, tmp_path):
    folder, _ = runs["a"]
    copy_dir = tmp_path / "resumed"
    shutil.copytree(folder, copy_dir)
    jobs = [("--seeds", SAMPLE, "--out", tmp_path / "x", "--backend", "cloud"),
            ("--seeds", tmp_path / "absent", "--out", tmp_path / "y"),
            ("--seeds", SAMPLE, "--out", folder, "--seed", "3"),
            ("--seeds", SAMPLE, "--out", copy_dir, "--seed", "4", "--resume")]
    procs = [here("regenerate", *args) for args in jobs]
    messages = ["must be offline or llm", "does not exist", "not empty", "built with other settings: --seed: 3 then, 4 now"]
    for proc, message in zip(procs, messages):
        assert proc.returncode == 2 and message in proc.stderr, (message, proc.stdout, proc.stderr)
    assert tree(copy_dir) == tree(folder)
    shutil.rmtree(copy_dir / "tasks" / "plus-2-1-0")  # lose a task: resume redoes exactly that one
    proc = here("regenerate", "--seeds", SAMPLE, "--out", copy_dir, "--seed", "3", "--resume")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert tree(copy_dir) == tree(folder)


# -- the generator -------------------------------------------------------------------------------

class Seed:
    def __init__(self, instruction: str, username: str = "alice") -> None:
        self.instruction, self.username, self.app_count = instruction, username, 1
        self.now = datetime(2024, 5, 17, 9, 0)


PARTY = "Bob was invited to a party held by Jane Doe, send an email party.eml to Bob to notify him"


def test_regenerate_splits_clauses_and_builds_a_clean_intent():
    draft = regenerate(Seed(PARTY), seed=0)
    assert draft.subtasks == ["Bob was invited to a party held by Jane Doe", "send an email party.eml to Bob to notify him"]
    assert [(m.id, m.kind, m.value) for m in draft.memory] == [("m1", "fact", "Jane Doe"), ("m2", "action", "party.eml")]
    assert "message" in draft.intent
    for spec in find_specifics(PARTY):
        assert not contains_specific(draft.intent, spec)
        assert contains_specific(draft.dialogue_text(), spec)
    assert len(draft.sessions) == 5
    # nothing inside a specific is split: dates with commas, thousands, times with dots
    text = "On May 17, 2024 at 10:30 a.m. pay $12,500 to Ann and Bob and send the receipt to Carol"
    assert [text[s:e] for s, e in split_clauses(text)] == [
        "On May 17, 2024 at 10:30 a.m. pay $12,500 to Ann and Bob", "send the receipt to Carol"]
    # a clause of three words or fewer is a fragment: it stays with its neighbour
    text = "On May 17, 2024 at 10:30 a.m. pay $12,500 to Ann and Bob and send it"
    assert [text[s:e] for s, e in split_clauses(text)] == [text]


def test_clauses_stay_whole_questions_stay_questions_and_plain_typos_are_corrected():
    text = "what is total hw score of Cixarim? Add his hw1, hw2, and hw3 together, save it in seperate_totals.xlsx"
    assert [text[s:e] for s, e in split_clauses(text)] == [
        "what is total hw score of Cixarim", "Add his hw1, hw2, and hw3 together", "save it in seperate_totals.xlsx"]
    draft = regenerate(Seed(text + " on seperate lines"), seed=2, days=28, utterances_per_day=11)
    assert [(m.cue, m.text) for m in draft.memory] == [
        ("asked", "what is total hw score of Cixarim?"), ("requested", "add his hw1, hw2, and hw3 together"),
        ("requested", "save it in seperate_totals.xlsx on separate lines")]  # the file name keeps its typo
    turns = [t for s in draft.sessions for t in s.turns]
    said = [t.text for t in turns if t.evidence]
    # the question is asked as one: whole, or with the person left for the user's next turn
    asked = [t.text if t.text.endswith("Cixarim?") else turns[i - 2].text for i, t in enumerate(turns) if "m1" in t.evidence]
    assert asked and all(line.endswith("?") and "what is total hw score of" in line for line in asked)
    assert any("add his hw1, hw2, and hw3 together" in line for line in said)  # the clause said whole
    assert "seperate lines" not in draft.dialogue_text() and "seperate_totals.xlsx" in draft.dialogue_text()
    assert not plus_problems(draft, text)


def test_the_query_names_the_work_and_holds_no_specific():
    text = "swap the lowest and highest incoming item in salary.xlsx, then email the result to Bob"
    draft = regenerate(Seed(text), seed=4)
    assert "salary" not in draft.query.lower() or "salary.xlsx" not in draft.query
    assert any(word in draft.query.lower() for word in ("incoming", "item", "spreadsheet", "message", "result"))
    for spec in find_specifics(text):
        assert not contains_specific(draft.query, spec)
    bare = replace(draft, query="Can you take care of it now?")
    assert plus_problems(bare, text) == [
        "query: 'Can you take care of it now?' names nothing of the work; re-ask the intent with its topic"]
    shredded = replace(draft, memory=[replace(draft.memory[0], text="Bob or Tom")])
    assert plus_problems(shredded, text)[0] == "memory m1: 'Bob or Tom' is a fragment; keep the clause whole"


@pytest.mark.parametrize("instruction, apps, topic", [
    ("Given an Excel containing student's previous courses, check the graduate requirement", ["excel"],
     "the graduate spreadsheet"),  # not "the containing spreadsheet"
    ("sort the first sheet of budget.xlsx in ascending order", ["excel"], "the order spreadsheet"),
    ("create calendar events for them using their names", ["calendar"], "the names schedule"),
    ("read the invoice PDF and write its total into a word file", ["pdf", "word"], "the invoice file"),
])
def test_the_work_is_named_by_what_it_is_about_not_which_or_how(instruction, apps, topic):
    from generators.plus_offline import topic_of
    from generators.specifics import find_specifics as specifics_of

    assert topic_of(instruction, specifics_of(instruction), apps) == topic


def test_feedback_changes_the_dialogue_and_the_same_arguments_do_not():
    one = regenerate(Seed(PARTY), seed=0)
    assert regenerate(Seed(PARTY), seed=0).sessions == one.sessions
    other = regenerate(Seed(PARTY), seed=0, feedback="day 2 turn 3: reword")
    assert other.sessions != one.sessions and len(other.sessions) == 5
    assert regenerate(Seed(PARTY), seed=0, days=7).sessions[6].day == 7


def test_long_instructions_keep_at_most_five_subtasks():
    text = ("Open the report.docx file, read the regional totals, paste them in sheet.xlsx, sort them by region, "
            "add a bar chart, save it as final.xlsx, then email Carol the file and tell Dan on Monday.")
    draft = regenerate(Seed(text), seed=1, days=5, utterances_per_day=12)
    assert len(draft.subtasks) == 5 and len(draft.memory) == 8
    assert all(len(m.text.split()) >= 4 for m in draft.memory)
    assert " ".join(draft.subtasks).count("final.xlsx") == 1
    for spec in find_specifics(text):
        assert contains_specific(draft.dialogue_text(), spec)


# -- the graph with a verifier that rejects ------------------------------------------------------

class Rejecting(OfflinePlusRoles):
    """Offline roles whose verifier rejects the first ``times`` rounds of the seeds in ``only``."""

    def __init__(self, times: int, only: tuple[str, ...] = ()) -> None:
        self.times, self.only = times, only
        self.calls: list[tuple[str, int, str]] = []  # (seed, round, feedback) per generate
        self.dialogues: list[list] = []

    def generate(self, job, feedback, round_):
        self.calls.append((job.seed_task.id, round_, feedback))
        draft = super().generate(job, feedback, round_)
        self.dialogues.append(draft.sessions)
        return draft

    def verify(self, job, draft):
        rounds = sum(1 for seed, _, _ in self.calls if seed == job.seed_task.id)
        if (not self.only or job.seed_task.id in self.only) and rounds <= self.times:
            return Verdict(False, f"day 2 turn 3: round {rounds} reads badly\nday 4 turn 1: too short")
        return super().verify(job, draft)


def test_a_rejected_round_sends_its_feedback_to_the_next(sample_seeds, tmp_path):
    roles = Rejecting(times=1)
    seed = next(s for s in sample_seeds if s.id == "2-1/0")
    job = PlusJob(index=0, task_id=plus_task_id(seed.id), seed_task=seed, config=PlusConfig(seed=3),
                  staging=tmp_path / "staging")
    state = build_plus_graph(roles, plus_gate, plus_write).invoke({"job": job})
    assert [(r, f) for _, r, f in roles.calls] == [
        (1, ""), (2, "day 2 turn 3: round 1 reads badly\nday 4 turn 1: too short")]
    assert roles.dialogues[0] != roles.dialogues[1]
    assert state["rounds"] == 2 and state["outcome"]["status"] == "accepted"
    record = state["outcome"]["record"]
    assert record.provenance.rounds == 2
    assert record.provenance.extra("verifier_feedback") == ["day 2 turn 3: round 1 reads badly\nday 4 turn 1: too short"]
    staged = Path(state["outcome"]["staged"])
    assert json.loads((staged / "task.json").read_text(encoding="utf-8")) == record.to_dict()


def test_five_rejections_drop_the_seed_and_the_card_counts_it(tmp_path):
    roles = Rejecting(times=99, only=("2-1/0",))
    summary = regenerate_split(SAMPLE, tmp_path / "out", seed=3, days=5, utterances_per_day=12, roles=roles)
    assert [r for s, r, _ in roles.calls if s == "2-1/0"] == [1, 2, 3, 4, 5]
    assert summary.written == 4 and not summary.skipped
    assert summary.dropped == [{"seed": "2-1/0", "id": "plus-2-1-0",
                                "reason": "verifier: rejected 5 rounds: day 2 turn 3: round 5 reads badly"}]
    out = tmp_path / "out"
    assert not (out / "tasks" / "plus-2-1-0").exists()
    assert sorted(records(out)) == ["plus-1-1-0", "plus-1-1-1", "plus-1-2-0", "plus-3-1-0"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| verifier | 1 |" in card and "dropped: 1." in card
    assert "| 2-1/0 | verifier: rejected 5 rounds: day 2 turn 3: round 5 reads badly |" in card
    info = json.loads((out / "build.json").read_text(encoding="utf-8"))
    assert info["drops"] == {"verifier": 1} and info["accepted"] == 4


# -- the gates on plus records -------------------------------------------------------------------

@pytest.fixture(scope="module")
def plus_task(runs):
    folder, _ = runs["a"]
    return next(t for t in iter_tasks(folder) if t.id == "plus-2-1-0")


def failing(results) -> set[str]:
    return {k for k, r in results.items() if not r.passed}


def test_specifics_gate_catches_a_leak_and_a_missing_specific(plus_task):
    record = copy.deepcopy(plus_task.record)
    bob = record["provenance"]["recast"]["names"]["Bob"]
    record["intent"] = f"Book the Budget review and tell {bob}."
    results = run_gates(record, plus_task.testbed, plus_task.reference)
    assert failing(results) == {"specifics"}
    assert "intent leaks quoted 'Budget review'" in results["specifics"].detail
    assert f"intent leaks person '{bob}'" in results["specifics"].detail

    record = copy.deepcopy(plus_task.record)
    for session in record["dialogue"]:
        for turn in session["turns"]:
            turn["text"] = turn["text"].replace("16:00", "4 pm")
    results = run_gates(record, plus_task.testbed, plus_task.reference)
    assert failing(results) == {"specifics"} and results["specifics"].detail == "dialogue misses time '16:00'"


def test_plus_record_without_reference_or_with_passing_criteria_fails_untouched(runs):
    folder, _ = runs["a"]
    task = next(t for t in iter_tasks(folder) if t.id == "plus-1-2-0")
    assert not failing(run_gates(task.record, task.testbed, task.reference))
    record = copy.deepcopy(task.record)
    record["evaluation"] = [{"function": "evaluate_file_exist", "args": {"file": "data/scores.xlsx"}}]
    results = run_gates(record, task.testbed, task.reference)
    assert failing(results) == {"fails_untouched"}
    assert results["oracle_passes"].skipped and results["baseline_fails"].skipped


def test_neo_records_keep_their_gates_and_gate_results_serialise(plus_task):
    record = copy.deepcopy(plus_task.record)
    record["split"] = "neo"
    results = run_gates(record, plus_task.testbed, plus_task.reference)
    assert tuple(results) == GATES
    # a seed task's criteria were not written with a traced memory: as a Neo record it fails that too
    assert failing(results) == {"oracle_passes", "baseline_fails", "criteria_traced"}
    assert results["oracle_passes"].detail == "no oracle plan" and not results["oracle_passes"].skipped
    assert GateResult(True, "x").to_dict() == {"passed": True, "detail": "x"}
    assert GateResult(True, "x", skipped=True).to_dict() == {"passed": True, "detail": "x", "skipped": True}


# -- the offline solvability proof and the seed lint ------------------------------------------------

def test_the_reference_state_proves_only_the_task_it_solves_whole(runs):
    folder, _ = runs["a"]
    gates = {t.id: t.record["provenance"]["gates"]["reference_passes"] for t in iter_tasks(folder)}
    assert gates["plus-1-2-0"] == {"passed": True, "detail": "proven: the reference state passes all 1 criteria"}
    assert all(g["skipped"] and g["detail"].startswith("unproven: no expected file")
               for tid, g in gates.items() if tid != "plus-1-2-0")
    info = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    assert info["proof"] == {"proven": 1, "unproven": 4, "unproven_ids": sorted(set(gates) - {"plus-1-2-0"})}
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| proven | 1 |" in card and "| unproven | 4 |" in card


def test_the_reference_gate_drops_a_missing_expected_file_and_leaves_extra_criteria_unproven(runs):
    folder, _ = runs["a"]
    task = next(t for t in iter_tasks(folder) if t.id == "plus-1-2-0")
    record = copy.deepcopy(task.record)
    record["evaluation"][0]["args"]["expected_file"] = "../../../../reference/scores_final.xlsx"
    results = run_gates(record, task.testbed, task.reference)
    assert not results["reference_passes"].passed
    assert "[0] expected file missing" in results["reference_passes"].detail
    record = copy.deepcopy(task.record)
    record["evaluation"].append({"function": "evaluate_contain",
                                 "args": {"doc_type": "txt", "file": "data/readme.txt", "keywords": ["swapped"]}})
    result = run_gates(record, task.testbed, task.reference)["reference_passes"]
    assert result.passed and result.skipped
    assert result.detail == ("unproven: the reference state passes its 1 exact-match criteria; "
                             "1 other criteria are left to an agent")


def typo_seeds(root: Path) -> Path:
    """The sample with a typo'd expected file (one edit away from the reference) and a seed whose
    criteria already pass."""
    shutil.copytree(SAMPLE, root)
    file = root / "tasks" / "1-2" / "subtasks" / "0.json"
    item = json.loads(file.read_text(encoding="utf-8"))
    item["evaluation"][0]["args"]["expected_file"] = "../../../../reference/scores_swaped.xlsx"
    file.write_text(json.dumps(item), encoding="utf-8")
    done = root / "tasks" / "1-1" / "subtasks" / "0.json"
    item = json.loads(done.read_text(encoding="utf-8"))
    item["evaluation"] = [{"function": "evaluate_file_exist", "args": {"file": "data/readme.txt"}}]
    done.write_text(json.dumps(item), encoding="utf-8")
    return root


def test_regenerate_drops_linted_seeds_or_repairs_them_with_provenance(tmp_path):
    seeds = typo_seeds(tmp_path / "seeds")
    plain = regenerate_split(seeds, tmp_path / "plain", seed=3, days=5, utterances_per_day=20)
    reasons = {d["seed"]: d["reason"] for d in plain.dropped}
    assert reasons["1-2/0"].startswith("seed lint: missing_reference: evaluation[0].args.expected_file: "
                                       "scores_swaped.xlsx is missing from reference/; closest: scores_swapped.xlsx")
    assert reasons["1-1/0"].startswith("seed lint: passes_untouched")
    assert plain.written == 3 and plain.lint["refused"] == 2 and plain.lint["repaired"] == 0
    card = (tmp_path / "plain" / "README.md").read_text(encoding="utf-8")
    assert "| seed lint | 2 |" in card and "| `missing_reference` | error | 1 |" in card

    fixed = regenerate_split(seeds, tmp_path / "fixed", seed=3, days=5, utterances_per_day=20, repair_seeds=True)
    assert [d["seed"] for d in fixed.dropped] == ["1-1/0"]  # passing untouched has no repair
    record = records(tmp_path / "fixed")["plus-1-2-0"]
    assert record["provenance"]["repairs"] == [{
        "field": "evaluation[0].args.expected_file", "from": "../../../../reference/scores_swaped.xlsx",
        "to": "../../../../reference/scores_swapped.xlsx", "code": "missing_reference"}]
    assert record["evaluation"][0]["args"]["expected_file"].endswith("/scores_swapped.xlsx")
    assert record["provenance"]["gates"]["reference_passes"]["detail"].startswith("proven")
    info = json.loads((tmp_path / "fixed" / "build.json").read_text(encoding="utf-8"))
    assert info["config"]["repair"] is True and info["lint"]["repaired"] == 1


def test_near_misses_of_one_value_and_often_of_a_second(runs):
    """A Plus history mentions a near miss of a value (and, as often as not, of a second value too),
    each said in a turn marked for its piece: more than one wrong value a reader must tell apart."""
    twice = 0
    for run in ("a", "neo"):
        for record in records(runs[run][0]).values():
            near = [m["id"] for m in record["memory"] if m.get("distractors")]
            marked = {e for s in record["dialogue"] for t in s["turns"] for e in t.get("distractor", ())}
            assert near and set(near) <= marked, (record["id"], near, marked)
            twice += len(near) >= 2
    assert twice >= 2
