"""The Neo graph's control flow: fan-out to surfers, the verifier loop, and early drops.

The roles are the real offline ones; a test subclass changes only the verdicts (or the task
generator's answer) to drive each path, and records what the graph passed to each role.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from generators.model import Verdict
from office_env.synthesis import make_world, write_workspace
from orchestrator.neo_graph import build_neo_graph
from orchestrator.offline_roles import OfflineRoles
from orchestrator.roles import BuildConfig, Job

pytestmark = pytest.mark.slow


class ScriptedVerdicts(OfflineRoles):
    """Offline roles whose verifier rejects the first ``reject`` rounds."""

    def __init__(self, reject: int, no_task: bool = False) -> None:
        self.reject, self.no_task = reject, no_task
        self.feedback_seen: list[str] = []
        self.explored: list[str] = []
        self.threads: set[int] = set()
        self.verified = 0

    def explore(self, app, job):
        self.explored.append(app)
        self.threads.add(threading.get_ident())
        return super().explore(app, job)

    def generate_task(self, job, plan, notes):
        if self.no_task:
            return None
        assert set(plan.apps) <= set(notes), "every planned app's notes reach the task generator"
        return super().generate_task(job, plan, notes)

    def generate_dialogue(self, job, plan, draft, feedback, round_):
        self.feedback_seen.append(feedback)
        return super().generate_dialogue(job, plan, draft, feedback, round_)

    def verify(self, job, plan, draft, sessions):
        self.verified += 1
        real = super().verify(job, plan, draft, sessions)
        if self.verified <= self.reject:
            return Verdict(False, f"round {self.verified}: day 1 needs more small talk")
        return real


@pytest.fixture(scope="module")
def world_testbed(tmp_path_factory):
    world = make_world(4242)
    root = tmp_path_factory.mktemp("graph") / "testbed"
    write_workspace(world, root)
    return world, root


def _run(roles, world_testbed, tmp_path: Path, index: int = 3):
    world, testbed = world_testbed
    staging = tmp_path / "staging"
    staging.mkdir()
    job = Job(index=index, task_id=f"t-{index}", config=BuildConfig(seed=9, days=2, utterances_per_day=10),
              world=world, testbed=testbed, staging=staging)
    gated: list[int] = []

    def gate(state):
        gated.append(state["rounds"])
        return {"outcome": {"status": "gated", "record": {"id": job.task_id}}}

    def write(state):
        return {"outcome": {"status": "accepted", "rounds": state["rounds"]}}

    state = build_neo_graph(roles, gate, write).invoke({"job": job})
    return state, gated


def test_surfers_fan_out_once_per_planned_app(world_testbed, tmp_path):
    roles = ScriptedVerdicts(reject=0)
    state, _ = _run(roles, world_testbed, tmp_path)
    assert sorted(roles.explored) == sorted(state["plan"].apps)
    assert set(state["notes"]) >= set(state["plan"].apps)
    assert state["outcome"]["status"] == "accepted"


class ScriptedAtOnce(ScriptedVerdicts):
    surfers_at_once = True  # as a model's surfers: fanned out with Send


def test_surfers_in_turn_and_at_once_give_the_same_notes(world_testbed, tmp_path):
    """Procedural surfers run one after another on the graph's own thread, in the plan's order; a
    model's are fanned out (other threads); the notes the task generator gets are the same."""
    in_turn, at_once = ScriptedVerdicts(reject=0), ScriptedAtOnce(reject=0)
    (tmp_path / "in_turn").mkdir(), (tmp_path / "at_once").mkdir()
    state, _ = _run(in_turn, world_testbed, tmp_path / "in_turn", index=1)
    fanned, _ = _run(at_once, world_testbed, tmp_path / "at_once", index=1)
    assert len(state["plan"].apps) > 1, "a plan of several apps shows the difference"
    assert in_turn.explored == list(state["plan"].apps) and in_turn.threads == {threading.get_ident()}
    assert sorted(at_once.explored) == sorted(state["plan"].apps)
    assert threading.get_ident() not in at_once.threads
    assert list(fanned["notes"]) == list(state["notes"]) and fanned["notes"] == state["notes"]
    assert fanned["outcome"] == state["outcome"]


def test_rejected_round_sends_feedback_to_the_next_generator_round(world_testbed, tmp_path):
    roles = ScriptedVerdicts(reject=1)
    state, gated = _run(roles, world_testbed, tmp_path)
    assert roles.feedback_seen == ["", "round 1: day 1 needs more small talk"]
    assert state["rounds"] == 2 and gated == [2]
    assert state["feedback_log"] == ["round 1: day 1 needs more small talk"]
    assert state["outcome"]["status"] == "accepted"


def test_five_rejections_drop_the_task_without_gating(world_testbed, tmp_path):
    roles = ScriptedVerdicts(reject=99)
    state, gated = _run(roles, world_testbed, tmp_path)
    assert state["rounds"] == 5 and roles.verified == 5 and gated == []
    assert state["outcome"]["status"] == "dropped"
    assert state["outcome"]["reason"].startswith("verifier: rejected 5 rounds")


def test_no_task_ends_the_graph_before_any_dialogue(world_testbed, tmp_path):
    roles = ScriptedVerdicts(reject=0, no_task=True)
    state, gated = _run(roles, world_testbed, tmp_path)
    assert roles.feedback_seen == [] and gated == []
    assert state["outcome"] == {"status": "dropped", "reason": "generator: no task fits this workspace"}


def test_a_dropped_attempt_is_counted_with_its_reason(tmp_path, monkeypatch):
    from orchestrator import build as build_module

    class AlwaysReject(OfflineRoles):
        def verify(self, job, plan, draft, sessions):
            return Verdict(False, "never good enough")

    monkeypatch.setattr(build_module, "OfflineRoles", AlwaysReject)
    build_module._graph.cache_clear()
    try:
        summary = build_module.build(tmp_path / "ds", 1, BuildConfig(seed=2, days=2, utterances_per_day=6), workers=1)
    finally:
        build_module._graph.cache_clear()
    assert summary.accepted == 0 and summary.drops == {"verifier": summary.attempts}
    assert summary.attempts == 24  # n * 4 + 20 attempts, then the build stops
    assert "| verifier | 24 |" in (tmp_path / "ds" / "README.md").read_text()


def test_a_world_s_office_facts_are_read_once_and_equal_a_fresh_read(world_testbed, tmp_path):
    """The documents and absences the offline chat mentions are kept per world (testbed path and
    world seed): what the cache gives equals a fresh read, and another world at the same path is
    read afresh."""
    from office_env import Workspace
    from orchestrator import offline_roles, world_reads

    world, testbed = world_testbed
    job = Job(index=1, task_id="t-1", config=BuildConfig(seed=9), world=world, testbed=testbed, staging=tmp_path)
    ws = Workspace(testbed, now=world.now)
    fresh = (offline_roles.office_files(testbed), offline_roles.colleagues_away(job, ws))
    assert fresh[0]
    assert offline_roles._office_facts(job, ws) == fresh
    assert offline_roles._office_facts(job, ws) == fresh  # from the cache
    other = make_world(4243)
    other_job = Job(index=1, task_id="t-1", config=BuildConfig(seed=9), world=other, testbed=testbed, staging=tmp_path)
    assert (str(testbed), other.seed) not in world_reads._WORLD_READS
    offline_roles._office_facts(other_job, Workspace(testbed, now=other.now))
    assert (str(testbed), other.seed) in world_reads._WORLD_READS


def test_a_world_s_files_are_listed_once_and_equal_a_fresh_listing(world_testbed, tmp_path):
    """The testbed's files the drafted plans are completed against are listed once per world
    (testbed path and world seed): what the cache gives equals a fresh listing, a caller's change
    to its list is not kept, and another world at the same path is listed afresh."""
    import dataclasses

    from office_env import Workspace
    from orchestrator import world_reads

    world, testbed = world_testbed
    job = Job(index=1, task_id="t-1", config=BuildConfig(seed=9), world=world, testbed=testbed, staging=tmp_path)
    fresh = Workspace(testbed, now=world.now).list_files()
    assert fresh
    assert world_reads.testbed_files(job) == fresh
    world_reads.testbed_files(job).append("data/not-there.txt")
    assert world_reads.testbed_files(job) == fresh  # from the cache, as it was listed
    other = tmp_path / "other-testbed"
    other.mkdir()
    (other / "notes.txt").write_text("another world", encoding="utf-8")
    moved = Job(index=1, task_id="t-1", config=BuildConfig(seed=9),
                world=dataclasses.replace(world, seed=world.seed + 1000), testbed=testbed, staging=tmp_path)
    assert (str(testbed), moved.world.seed) not in world_reads._WORLD_READS
    assert world_reads.testbed_files(moved) == fresh
    elsewhere = Job(index=1, task_id="t-1", config=BuildConfig(seed=9), world=world, testbed=other, staging=tmp_path)
    assert world_reads.testbed_files(elsewhere) == ["notes.txt"]


def test_a_process_keeps_the_reads_of_its_latest_worlds_only(world_testbed, tmp_path):
    """A worker of a long build sees thousands of worlds: it keeps the notes and office facts of
    the latest few (``KEPT_WORLDS``), not of every world it has seen, and reads an older one afresh."""
    import dataclasses

    from office_env import Workspace
    from orchestrator import offline_roles, world_reads

    world, testbed = world_testbed
    world_reads._WORLD_READS.clear()
    seeds = [world.seed + k for k in range(world_reads.KEPT_WORLDS + 3)]
    for seed in seeds:
        job = Job(index=1, task_id="t-1", config=BuildConfig(seed=9), world=dataclasses.replace(world, seed=seed),
                  testbed=testbed, staging=tmp_path)
        offline_roles.world_notes("email", job)
        offline_roles._office_facts(job, Workspace(testbed, now=world.now))
    assert len(world_reads._WORLD_READS) == world_reads.KEPT_WORLDS
    assert (str(testbed), seeds[0]) not in world_reads._WORLD_READS
    assert (str(testbed), seeds[-1]) in world_reads._WORLD_READS
    first = Job(index=1, task_id="t-1", config=BuildConfig(seed=9), world=dataclasses.replace(world, seed=seeds[0]),
                testbed=testbed, staging=tmp_path)
    from surfers import explore

    assert offline_roles.world_notes("email", first) == explore("email", Workspace(testbed, now=world.now))


def test_a_family_that_makes_no_task_passes_to_the_fallbacks_in_their_order(world_testbed, tmp_path):
    """The offline generator tries the plan's family, then ``fallback_families`` in order (worked out
    only when needed): with the first families made to find nothing, the draft is the next one's."""
    from generators.families.base import Family
    from orchestrator import offline_roles
    from orchestrator.planner import fallback_families, mix

    world, testbed = world_testbed
    job = Job(index=5, task_id="t-5", config=BuildConfig(seed=9), world=world, testbed=testbed, staging=tmp_path)
    roles = OfflineRoles()
    plan = roles.plan(job)
    order = [plan.family] + fallback_families(job.config.seed, job.index, *mix(job.config))
    assert list(offline_roles._families_to_try(job, plan)) == order
    notes = {app: roles.explore(app, job) for app in plan.apps}
    tried: list[str] = []
    for failing in range(3):
        def build(fam, inp, real=Family.build, failing=failing):
            tried.append(fam.name)
            return None if len(tried) <= failing else real(fam, inp)

        tried.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Family, "build", build)
            draft = roles.generate_task(job, plan, notes)
        assert tried == order[:failing + 1]
        assert draft is not None and draft.family == order[failing]


def test_mixed_roles_run_their_surfers_as_the_backend_that_answers_for_them():
    from types import SimpleNamespace

    from orchestrator.mixed_roles import MixedRoles

    model = SimpleNamespace(client=object(), surfers_at_once=True)
    assert MixedRoles(model, OfflineRoles(), ("verifier",)).surfers_at_once is True
    assert MixedRoles(model, OfflineRoles(), ("surfer", "verifier")).surfers_at_once is False
