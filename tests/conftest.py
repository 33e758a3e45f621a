"""Shared fixtures: a small but real office testbed written with the project's own writers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from office_env import Workspace, default_registry
from office_env.sample import SAMPLE_NOW as NOW
from office_env.sample import write_sample_office as write_office


@pytest.fixture(scope="session")
def _sample_office(tmp_path_factory) -> Path:
    """The sample testbed, written once per run (the writers are the slow part)."""
    return write_office(tmp_path_factory.mktemp("sample") / "testbed")


@pytest.fixture
def testbed(tmp_path: Path, _sample_office: Path) -> Path:
    """A fresh copy of the sample testbed for each test."""
    return Path(shutil.copytree(_sample_office, tmp_path / "testbed", symlinks=True))


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """A real llama.cpp server (see ``tests/llama_server.py``), started once per module that asks
    for it and stopped when the module ends (it must not spend the cores on requests nobody waits
    for while other modules run); a missing package or a binary that cannot run here fails the
    tests that need it (never skipped)."""
    from llama_server import LlamaServer

    with LlamaServer(tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture
def ws(testbed: Path) -> Workspace:
    return Workspace(testbed, now=NOW)


@pytest.fixture
def registry():
    return default_registry()


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


MARKS = ("evidence", "superseded", "distractor")


def plain_turn(record: dict) -> tuple[int, int]:
    """(day index, turn index) of a turn two turns away from every marked one: a safe place for a
    harmless edit."""
    for d, session in enumerate(record["dialogue"]):
        turns = session["turns"]
        for t in range(2, len(turns) - 2):
            if not any(turns[i].get(m) for i in range(t - 2, t + 3) for m in MARKS):
                return d, t
    raise AssertionError("no unmarked turn")


def evidence_turn(record: dict) -> tuple[int, int]:
    """(day index, turn index) of the first evidence turn."""
    return next((d, t) for d, s in enumerate(record["dialogue"]) for t, turn in enumerate(s["turns"])
                if turn.get("evidence"))


def task_records(dataset: Path) -> list[dict]:
    """The task records of a written dataset, by id."""
    return [json.loads(p.read_text()) for p in sorted((dataset / "tasks").glob("*/task.json"))]


# The slow layer: modules that build datasets through the whole pipeline, run the command line in
# child processes or serve HTTP (measured with --durations: each takes seconds). Everything else is
# the fast unit layer: ``pytest -m "not slow"`` runs it in well under a minute.
SLOW_MODULES = frozenset({
    "test_build", "test_llm_builds", "test_synthesis", "test_cli", "test_server_profiles", "test_show",
    "test_harness", "test_challenge", "test_plus", "test_resume", "test_ray_executor", "test_hostile",
    "test_families", "test_gates", "test_progress", "test_export", "test_tool_fuzz", "test_world_check",
    "test_gameability", "test_llm_client", "test_small_talk", "test_rate_limit", "test_fake_llm", "test_phrasing",
    "test_horizon", "test_dialogue", "test_review_app", "test_duplicates", "test_workers", "test_limits",
    "test_other_work", "test_review_browser", "test_exports", "test_tools", "test_adversary",
    "test_review_agreement", "test_read_cache", "test_surfers", "test_context_checks", "test_probes",
    "test_fake_listener", "test_review_hardening", "test_llama_server", "test_server_tokens", "test_slots",
})


# The modules that take longest, longest first: the parallel workers take modules in collection
# order, so starting these early keeps one long module from running alone at the end.
LONGEST_FIRST = ("test_llama_server", "test_resume", "test_harness", "test_build", "test_llm_builds",
                 "test_hostile", "test_plus", "test_challenge", "test_show", "test_families")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__.rsplit(".", 1)[-1] if item.module else "",
                                         len(rank)))  # a stable sort: the rest keep their order


def task_record_sample(task_id: str = "neo-00001") -> dict[str, Any]:
    """A small record with every optional part the builders write."""
    return {
        "id": task_id, "split": "neo", "family": "lookup", "difficulty": "easy", "apps": ["word", "email"],
        "app_count": 2, "user": {"name": "Ann Lee", "username": "ann", "email": "ann@example.com"},
        "now": {"date": "2025-04-07", "weekday": "Monday", "time": "09:30"},
        "description": "d", "intent": "i", "subtasks": ["s"], "query": "q",
        "memory": [{"id": "m1", "kind": "fact", "text": "t", "value": "Room 4", "thread": "t1",
                    "superseded": ["Room 3"], "distractors": [{"value": "Room 5", "text": "x"}], "said_as": "r",
                    "cue": "c", "about": "a"}],
        "evaluation": [{"function": "evaluate_file_exists", "args": {"file": "data/a.docx"}}],
        "dialogue": [{"day": 1, "date": "2025-04-06", "turns": [
            {"role": "user", "text": "Room 3", "ts": "2025-04-06T09:00:00", "superseded": ["m1"], "thread": "t1"},
            {"role": "assistant", "text": "ok", "ts": "2025-04-06T09:00:05", "evidence": ["m1"]}]}],
        "oracle": [{"tool": "word_create", "args": {"file": "a.docx"}}], "baseline": [],
        "misreadings": [{"memory": "m1", "dynamic": "superseded", "value": "Room 3", "plan": []}],
        "computed": [{"value": 3, "op": "sum", "inputs": [1, 2.5, "x"], "given": ["m1"]}],
        "provenance": {"backend": "offline", "model": None, "seed": 1, "rounds": 1, "gates": {}, "world_seed": 7},
    }
