"""The learned adversaries (``verifier.adversary``): they catch a history whose form gives its
evidence away, trained on one build and tested on another; real builds of two seeds hide it."""

from __future__ import annotations

import pytest

from orchestrator.build import build
from orchestrator.roles import BuildConfig
from verifier.adversary import (ISOLATION_TARGET, NgramClassifier, evaluate, isolates, learn_frames, query_topic,
                                thread_evidence_share)

from tests.support.records import task_records

pytestmark = pytest.mark.slow

FILLER = ["Lovely weather for a walk.", "The canteen had soup again.", "My cat knocked over a plant.",
          "Traffic was awful this morning.", "I'm reading a good novel.", "Coffee machine is broken.",
          "We might go hiking on Saturday.", "Long queue at the post office."]


def leaky(seed: int, tasks: int = 12) -> list[dict]:
    """Histories whose evidence turns wear one template each and name the work with a fixed
    phrase that only they use: what a learned adversary must catch."""
    out = []
    for t in range(tasks):
        work = f"the {['budget', 'rota', 'offsite', 'audit'][t % 4]} plan {seed}-{t}"
        value = f"{100 + 7 * t + seed}"
        other = f"{300 + 11 * t + seed}"
        turns = []
        for i, line in enumerate(FILLER):
            turns.append({"role": "user", "text": f"{line} ({i + t})"})
            turns.append({"role": "assistant", "text": "Nice."})
        turns[4] = {"role": "user", "text": f"Keep {work} in mind, more soon.", "thread": "t1"}
        if t % 2:  # half the tasks say an earlier value, in a turn of its own
            turns[8] = {"role": "user", "text": f"Let's call the figure for {work} {other}.", "thread": "t1",
                        "superseded": ["m1"]}
        turns[12] = {"role": "user", "text": f"Scratch that on {work}, it's {value} now.", "thread": "t1",
                     "evidence": ["m1"]}
        out.append({"id": f"x{t}", "query": f"Can you finish {work}?", "dialogue": [{"day": 1, "turns": turns}],
                    "memory": [{"id": "m1", "value": value, "about": work, "superseded": [other] if t % 2 else []}]})
    return out


def test_a_leaky_history_is_caught_by_every_adversary_trained_on_another_build():
    found = evaluate(leaky(1), leaky(2))
    assert not found["passed"]
    assert found["ngram_classifier"]["precision"] == 1.0
    for name in ("template_topic", "query_topic"):
        # the topic phrase finds every thread turn (a third or half of them evidence); their top 5
        # hold the final value alone where no earlier value was said
        assert found[name]["precision"] == pytest.approx(12 / 30)
        assert found[name]["isolation"] == 0.5
    assert found["ngram_classifier"]["isolation"] == 0.5
    assert thread_evidence_share(leaky(2)) == pytest.approx(12 / 30)


def test_frames_topics_and_isolation():
    train = leaky(1)
    assert ("keep", "in mind") in learn_frames(train)
    assert query_topic(leaky(5)[0]) == "the budget plan 5-0"
    record = leaky(5)[1]  # final value 112, earlier 316
    assert isolates(record, ["it's 112 now"]) and not isolates(record, ["it's 112 now", "maybe 316"])
    assert not isolates(record, ["nothing here"])
    classifier = NgramClassifier(train)
    texts = [{"text": "Scratch that on the thing, it's 4 now.", "before": ""},
             {"text": "The canteen had soup again.", "before": ""}]
    assert classifier.score(texts[0]) > classifier.score(texts[1])


def test_real_builds_of_two_seeds_hide_their_evidence(tmp_path):
    # 24 tasks a build: a topic reader's precision over a dozen tasks (about 60 turns picked) varies
    # by some 0.06 from build to build, as much as the target's margin
    tasks = 24
    for seed in (3, 4):
        build(tmp_path / f"s{seed}", tasks, BuildConfig(seed=seed), workers=1)
    train, test = task_records(tmp_path / "s3"), task_records(tmp_path / "s4")
    assert thread_evidence_share(test) <= 0.35
    found = evaluate(train, test)
    for name in ("template_topic", "query_topic"):
        assert found[name]["precision"] <= 0.35, found
        assert found[name]["isolation"] <= ISOLATION_TARGET + 1 / tasks, found
