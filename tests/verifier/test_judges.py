"""The judge panel: five votes with reasons; three rejections drop a task."""

from __future__ import annotations

import json

import pytest

from backends.dataset_reader import iter_tasks
from backends.fake_llm import FakeLLMServer
from orchestrator.build import build
from orchestrator.fake_llm.offline_responder import default_responder
from orchestrator.fake_llm.prompt_roles import inputs_of, role_of
from orchestrator.roles import BuildConfig
from verifier.judges import PANEL, judge_panel


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    out = tmp_path_factory.mktemp("judges") / "ds"
    build(out, 1, BuildConfig(seed=8, days=3, utterances_per_day=12), workers=1)
    return next(iter_tasks(out)).task


def test_rule_judges_accept_a_good_task(record):
    passed, detail, votes = judge_panel(record)
    assert passed and detail == "5 of 5 judges accept"
    assert [v["judge"] for v in votes] == list(PANEL) and all(v["reason"] for v in votes)


def test_two_rejections_keep_a_task_three_drop_it(record):
    leaky = record.model_copy(update={
        "intent": record.intent + " " + record.memory[0].value,  # no leakage rejects
        "subtasks": record.subtasks[:1] * 2})                     # clarity rejects (a repeated subtask)
    passed, detail, _ = judge_panel(leaky)
    assert passed and detail.startswith("3 of 5 judges accept")
    leaky = leaky.model_copy(update={"dialogue": leaky.dialogue[:1]})  # realism rejects too (a single session)
    passed, detail, votes = judge_panel(leaky)
    assert not passed and "rejected for: " in detail
    assert {v["judge"] for v in votes if v["vote"] == "reject"} >= {"no leakage", "clarity and solvability", "realism"}


def test_an_llm_panel_with_three_negative_votes_drops_the_task(tmp_path):
    judged: list[int] = []

    def responder(body):
        if role_of(body["messages"]) == "judge":
            judged.append(inputs_of(body["messages"])["judge"])
            if len(judged) <= 5 and judged[-1] <= 3:  # the first task's panel: judges 1-3 say no
                return json.dumps({"vote": "reject", "reason": f"judge {judged[-1]}: the chat leaves a detail out"})
        return default_responder()(body)

    with FakeLLMServer(responder) as server:
        config = BuildConfig(seed=6, backend="llm", model="fake-model", base_url=server.url, days=2,
                             utterances_per_day=10, gates=("judges",))
        summary = build(tmp_path / "ds", 1, config, workers=1)
    assert summary.accepted == 1 and summary.drops == {"gate judges": 1}
    assert judged == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]  # five independent calls per task
    attempts = [json.loads(line) for line in (tmp_path / "ds" / "attempts.jsonl").read_text().splitlines()]
    assert attempts[0]["reason"].startswith("gate judges: 2 of 5 judges accept")
    votes = next(iter_tasks(tmp_path / "ds")).record["provenance"]["gates"]["judges"]["votes"]
    assert [v["vote"] for v in votes] == ["accept"] * 5
