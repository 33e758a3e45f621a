"""A Ray build on the local instance that ``--executor ray`` starts and stops with each round."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is the optional extra homeragents[ray]; the test extra installs it")

import orchestrator.build as build_module  # noqa: E402
from orchestrator.build import BuildBatch, build  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

pytestmark = pytest.mark.slow


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


def test_each_round_s_ray_instance_gets_the_kept_identities_anew(tmp_path, monkeypatch):
    """Without a running Ray each round starts a local instance and stops it: the actor holding
    the kept identities dies with it, and the next round makes a new one from the file (a stale
    handle ended the build). One job at a time, every repeat stops at its draft in both rounds."""
    if ray.is_initialized():
        ray.shutdown()
    config = BuildConfig(seed=3, app_counts=(3,), days=2, utterances_per_day=12)  # repeats some (tests/orchestrator)
    local = build(tmp_path / "local", 24, config)
    rounds: list[list[int]] = []
    next_round = BuildBatch.next_round

    def counted(self, work):
        found = next_round(self, work)
        if found is not None:
            rounds.append(list(found.items))
        return found

    monkeypatch.setattr(BuildBatch, "next_round", counted)
    monkeypatch.setattr(build_module, "EXPECTED_DROP_RATE", -3.0)  # a first round too small for the build
    on_ray = build(tmp_path / "ray", 24, config, workers=1, executor="ray")
    assert len(rounds) >= 2 and not ray.is_initialized()
    assert on_ray.repeats_stopped == local.repeats_stopped == on_ray.drops["duplicate"]
    attempts = [json.loads(line) for line in (tmp_path / "ray" / "attempts.jsonl").read_text().splitlines()]
    later = [a for a in attempts if a["reason"].startswith("duplicate") and a["index"] > max(rounds[0])]
    assert later, "no repeat in a later round: the test proves nothing of a new round's actor"
    assert tree(tmp_path / "ray") == tree(tmp_path / "local")
