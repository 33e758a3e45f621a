"""A repeat of a kept task stops at its draft, and the build writes what it would have written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import orchestrator.build as build_module
from backends.job_contract import Budget, BudgetExceeded
from orchestrator.build import DRAFTED, REPEAT, BuildBatch, build, repeat_line, repeats, with_draft
from orchestrator.roles import BuildConfig
from verifier.duplicates import FirstOfEach

pytestmark = pytest.mark.slow

# 24 tasks of three apps repeat some (seed 3, as in tests/verifier/test_duplicates.py); short histories
CONFIG = BuildConfig(seed=3, app_counts=(3,), days=2, utterances_per_day=12)


def folder_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def test_repeats_stopped_at_their_drafts_leave_the_bytes_of_a_build_that_made_them_in_full(tmp_path, monkeypatch):
    seen: Counter = Counter()
    summary = build(tmp_path / "stopped", 24, CONFIG, on_outcome=lambda item: seen.update([item["status"]]))
    assert seen[REPEAT] >= 1  # one process: every earlier outcome is in before an attempt starts
    assert summary.repeats_stopped == seen[REPEAT] == summary.drops["duplicate"]

    drafted: dict[str, tuple[list[str], list[str]]] = {}
    identity = build_module.draft_identity

    def noted(job, draft):
        drafted[job.task_id] = identity(job, draft)
        return drafted[job.task_id]

    made: list[dict] = []
    attempt = build_module.run_attempt

    def kept_outcome(*args, **kwargs):
        made.append(attempt(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(build_module, "repeat_of", lambda *args: None)  # a worker that never finds one
    monkeypatch.setattr(build_module, "draft_identity", noted)
    monkeypatch.setattr(build_module, "run_attempt", kept_outcome)  # one process: the jobs run here
    build(tmp_path / "full", 24, CONFIG)
    assert REPEAT not in {item["status"] for item in made}
    assert folder_bytes(tmp_path / "stopped") == folder_bytes(tmp_path / "full")
    accepted = [item for item in made if item["status"] == "accepted"]
    assert len(accepted) > 24  # the repeats were made in full and dropped by the parent
    # a draft has the identity its task's record gets: the worker's verdict is the parent's
    assert all(drafted[item["id"]] == (item["keys"], item["words"]) for item in accepted)


def _attempt(index: int, status: str, reason: str = "", rounds: int = 1) -> dict:
    return {"index": index, "id": f"neo-{index:05d}", "status": status, "reason": reason, "family": "plan_family",
            "rounds": rounds}


def test_a_repeat_gets_one_line_however_its_attempt_ended():
    keys, words = ["description:same"], ["sheet_total", "add", "salary"]
    identity = (keys, words, "sheet_total", 1)
    kept = with_draft(_attempt(0, "accepted") | {"staged": "x", "family": "sheet_total", "app_count": 1,
                                                 "keys": keys, "words": words}, identity)
    made_in_full = _attempt(3, "accepted", rounds=2) | {"staged": "y", "family": "sheet_total", "app_count": 1,
                                                         "keys": keys, "words": words}
    stopped = with_draft(_attempt(1, REPEAT, "repeats neo-00000", rounds=0), identity)
    dropped_later = with_draft(_attempt(2, "dropped", "gate oracle_passes: no"), identity)
    other = with_draft(_attempt(4, "dropped", "gate oracle_passes: no"), (["description:other"], ["doc_to_pdf"],
                                                                         "doc_to_pdf", 1))
    done = {0: kept, 1: stopped, 2: dropped_later, 3: made_in_full, 4: other}
    assert DRAFTED in dropped_later and DRAFTED not in stopped and stopped["keys"] == keys
    firsts = FirstOfEach()
    for index in (0, 1, 3):
        firsts.add(index, done[index]["keys"], done[index]["words"])
    found = repeats(done, firsts)
    assert found == {1: 0, 2: 0, 3: 0}  # the attempt dropped by a gate repeats the kept task, too
    lines = {index: json.dumps({k: v for k, v in repeat_line(done[index], 0, kept).items() if k not in ("index", "id")})
             for index in found}
    assert lines[1] == lines[2] == lines[3] == json.dumps(
        {"status": "dropped", "reason": "duplicate: the same task as neo-00000", "family": "sheet_total",
         "app_count": 1})


def test_a_worker_s_repeat_the_parent_cannot_confirm_is_made_again():
    batch = BuildBatch.__new__(BuildBatch)  # the parent's outcomes so far, nothing else
    batch.done = {0: _attempt(0, "accepted") | {"keys": ["description:a"], "words": ["sheet_total", "a"]}}
    batch._unique, batch.strata = None, None
    confirmed = _attempt(7, REPEAT, rounds=0) | {"keys": ["description:a"], "words": ["sheet_total", "a"]}
    assert batch._repeat_checked(dict(confirmed)) == confirmed
    unknown = _attempt(7, REPEAT, rounds=0) | {"keys": ["description:b"], "words": ["sheet_total", "b"]}
    again = batch._repeat_checked(unknown)
    assert again["status"] == "dropped" and again["reason"].startswith("error:")  # --resume makes it again


def test_a_draft_the_record_s_types_refuse_goes_on_to_the_schema_gate(tmp_path):
    """Its identity cannot be told: the attempt goes on (the schema gate drops it, naming the field)."""
    from types import SimpleNamespace

    from generators.model import TaskDraft

    world = SimpleNamespace(seed=5, user=SimpleNamespace(user="dana"))
    job = SimpleNamespace(world=world, task_id="neo-00009", index=9, staging=tmp_path / ".work" / "staging")
    draft = TaskDraft(family="sheet_total", apps=["excel"], description="Add it up.", intent="i", subtasks=["s"],
                      evaluation=[{"function": "evaluate_answer", "args": "no object"}], memory=[], query="q",
                      oracle=[])
    assert build_module._repeat(job, draft) is None
    assert "neo-00009" not in build_module._DRAFTED
    good = TaskDraft(family="sheet_total", apps=["excel"], description="Add it up.", intent="i", subtasks=["s"],
                     evaluation=[{"function": "evaluate_answer", "args": {"number": 12.0, "tolerance": 0.01}}],
                     memory=[], query="q", oracle=[])
    assert build_module._repeat(job, good) is None  # no file of kept tasks here: nothing to repeat
    assert build_module._DRAFTED.pop("neo-00009")[2:] == ("sheet_total", 1)


@pytest.mark.parametrize("ending", ["crash", "timeout", "memory"])
def test_a_repeat_that_fails_after_its_draft_is_written_as_a_duplicate(tmp_path, monkeypatch, ending):
    """Stopped at its draft, or failed after it (a crash; its time or memory budget, which the
    worker reports with the draft's identity), a repeat gets the same line: the bytes do not depend
    on whether a worker knew of the task it repeats."""
    made: list[dict] = []
    attempt = build_module.run_attempt

    def noted(*args, **kwargs):
        made.append(attempt(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(build_module, "run_attempt", noted)  # one process: the jobs run here
    build(tmp_path / "stopped", 24, CONFIG)
    stopped = {item["id"] for item in made if item["status"] == REPEAT}
    assert stopped
    monkeypatch.setattr(build_module, "run_attempt", attempt)
    gates, failed = build_module.run_gates, tmp_path / "failed.txt"
    raising = {"crash": RuntimeError("a gate's bug"), "timeout": BudgetExceeded(), "memory": MemoryError()}[ending]

    def failing(record, *args, **kwargs):
        if record.id in stopped:  # after the draft: the chat is written, the gates fail
            with failed.open("a") as notes:  # (in a worker process: noted in a file)
                notes.write(record.id + "\n")
            raise raising
        return gates(record, *args, **kwargs)

    monkeypatch.setattr(build_module, "repeat_of", lambda *args: None)  # a worker that never finds one
    monkeypatch.setattr(build_module, "run_gates", failing)
    # a budget runs the attempts in a worker process, which reports a timeout or running out of memory
    build(tmp_path / "failed", 24, CONFIG, budget=None if ending == "crash" else Budget(seconds=3600))
    assert set(failed.read_text().split()) == stopped
    assert folder_bytes(tmp_path / "stopped") == folder_bytes(tmp_path / "failed")


def _kept_indices(out: Path) -> list[int]:
    return sorted(int(json.loads(line)["id"].split("-")[1]) for line in (out / "index.jsonl").open())


def test_attempts_run_past_their_quota_change_no_byte(tmp_path, monkeypatch):
    """Parallel workers may run an attempt whose app count's quota the outcomes not yet in fill.
    Accepted as the first of its identity, it once made a later kept task of another app count a
    repeat, which a build running one attempt at a time (never running it) keeps. Here every
    attempt a round holds runs, and those a one-process build never ran share an identity with a
    task it kept: the bytes are still that build's (nor do the workers hear of one past its quota:
    one would stop that task at its draft as a repeat the parent cannot confirm)."""
    config = BuildConfig(seed=11, days=2, utterances_per_day=12)
    strata = build_module.Strata(config, 12)
    # two attempts of one app count end early: its quota fills later than the others'
    failing = [i for i in range(12) if strata.count_of(i) == strata.count_of(1)][:2]
    shared: set[str] = set()

    def keys(task: str) -> list[str]:
        return ["shared"] if task in shared else [f"own:{task}"]

    identity = build_module.draft_identity  # a worker's keys (its draft's) and the parent's (its record's) alike
    monkeypatch.setattr(build_module, "draft_identity", lambda job, draft: (keys(job.task_id), identity(job, draft)[1]))
    monkeypatch.setattr(build_module, "duplicate_keys", lambda record: keys(record.id))
    made: list[dict] = []
    attempt = build_module.run_attempt

    def noted(out, config, job_index, *args, **kwargs):
        if job_index in failing:
            made.append({"index": job_index, "id": build_module.task_id(job_index), "status": "dropped",
                         "family": None, "rounds": 0, "reason": "gate oracle_passes: no"})
        else:
            made.append(attempt(out, config, job_index, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(build_module, "run_attempt", noted)  # one process: the jobs run here
    build(tmp_path / "probe", 12, config)
    ran = {item["index"] for item in made}
    kept = _kept_indices(tmp_path / "probe")
    skipped = [i for i in range(max(kept)) if i not in ran]  # past their quotas: a one-process build ran none
    later = next(i for i in reversed(kept) if any(j < i and strata.count_of(j) != strata.count_of(i) for j in skipped))
    shared.update(build_module.task_id(i) for i in [*skipped, later] if i <= later)
    build(tmp_path / "one", 12, config)  # the identities are in the attempts' lines
    assert _kept_indices(tmp_path / "one") == kept

    def eager(self):
        def handed(index):  # every attempt of a round runs, as workers that do not know yet would run it,
            self.running.update(range(index, index + 4))  # and the next ones are held by other workers
            return True
        return handed

    made.clear()
    monkeypatch.setattr(BuildBatch, "_wanted", eager)
    build(tmp_path / "eager", 12, config)
    ran_past = {item["index"] for item in made if item["status"] == "accepted"} & set(skipped)
    assert any(i < later for i in ran_past), (skipped, later, made)
    assert folder_bytes(tmp_path / "eager") == folder_bytes(tmp_path / "one")
