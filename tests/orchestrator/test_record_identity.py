"""A kept record's identity is its draft's when the dialogue round left the parts it is made of."""

from __future__ import annotations

import copy
import dataclasses

import pytest

import orchestrator.build as build_module
from orchestrator.roles import BuildConfig
from verifier.duplicates import duplicate_keys, near_words

pytestmark = pytest.mark.slow

CONFIG = BuildConfig(seed=3, app_counts=(3,), days=2, utterances_per_day=12)


@pytest.fixture(scope="module")
def attempts(tmp_path_factory):
    """Each accepted attempt of a small build: its job, its draft as ``_repeat`` saw it, the draft and
    record it ended with, and the identity the summary got."""
    drafted, seen = {}, []
    repeat, identity = build_module._repeat, build_module._record_identity

    def noted_repeat(job, draft):
        drafted[job.task_id] = copy.deepcopy(draft)
        return repeat(job, draft)

    def noted_identity(job, draft, record):
        seen.append((job, drafted[job.task_id], draft, record, identity(job, draft, record)))
        return seen[-1][-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_module, "_repeat", noted_repeat)
        patch.setattr(build_module, "_record_identity", noted_identity)
        build_module._graph.cache_clear()  # the graph holds the ``_repeat`` it was built with
        try:
            build_module.build(tmp_path_factory.mktemp("identity") / "out", 8, CONFIG)
        finally:
            build_module._graph.cache_clear()
    return seen


def test_a_records_identity_is_the_one_made_from_the_record_reused_or_not(attempts):
    reused = 0
    for job, first, final, record, found in attempts:
        assert found == (duplicate_keys(record), near_words(record))
        reused += build_module._identity_parts(job, first) == build_module._identity_parts(job, final)
    assert reused  # the dialogue round of most drafts leaves every part: their identity is not made again
    # the round says memory values anew (said_as, derived) in some drafts, and those are reused too
    assert any(first.memory != final.memory and build_module._identity_parts(job, first)
               == build_module._identity_parts(job, final) for job, first, final, _, _ in attempts)


def _variants(draft):
    """The draft with one part its identity is made of changed (True to 1: equal, yet another key)."""
    evaluation = copy.deepcopy(draft.evaluation)
    leaf = next(args for args in (c["args"] for c in evaluation) if any(v is True for v in args.values()))
    leaf[next(k for k, v in leaf.items() if v is True)] = 1
    memory = [dataclasses.replace(draft.memory[0], value=draft.memory[0].value + " more"), *draft.memory[1:]]
    return {
        "family": dataclasses.replace(draft, family=draft.family + "_other"),
        "description": dataclasses.replace(draft, description=draft.description + " Also today."),
        "evaluation": dataclasses.replace(draft, evaluation=evaluation),
        "memory": dataclasses.replace(draft, memory=memory),
        "computed": dataclasses.replace(draft, computed=[*draft.computed, {"op": "sum", "value": "1"}]),
    }


def test_a_draft_changed_in_any_part_of_its_identity_gets_the_records_own(attempts, monkeypatch):
    """With a stand-in for the draft's identity, only a draft of the same parts gets it back: a
    change to any part (however equal under ``==``) makes the identity from the record."""
    job, first, final, record, _ = next(a for a in attempts
                                        if any(v is True for c in a[1].evaluation for v in c["args"].values()))
    stand_in = (["drafted-key"], ["drafted-word"], first.family, len(first.apps))
    monkeypatch.setitem(build_module._DRAFTED, job.task_id, stand_in)
    monkeypatch.setitem(build_module._DRAFT_PARTS, job.task_id, build_module._identity_parts(job, first))
    said_anew = dataclasses.replace(first, memory=[dataclasses.replace(m, said_as="as said before")
                                                   for m in first.memory])
    assert build_module._record_identity(job, said_anew, record) == (["drafted-key"], ["drafted-word"])
    for part, changed in _variants(first).items():
        assert build_module._record_identity(job, changed, record) == (duplicate_keys(record), near_words(record)), part
    assert build_module._record_identity(job, None, record) == (duplicate_keys(record), near_words(record))
