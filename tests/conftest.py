"""Shared fixtures: a small but real office testbed written with the project's own writers."""

from __future__ import annotations

import compileall
import os
import shutil
from pathlib import Path

import pytest

from office_env import Workspace, default_registry
from office_env.sample import SAMPLE_NOW as NOW
from office_env.sample import write_sample_office as write_office
from tests.support.slow import LONGEST_FIRST, SLOW_MODULES


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
    """A real llama.cpp server (see ``tests/support/llama_server.py``), started once per module that asks
    for it and stopped when the module ends (it must not spend the cores on requests nobody waits
    for while other modules run); a missing package or a binary that cannot run here fails the
    tests that need it (never skipped)."""
    from tests.support.llama_server import LlamaServer

    with LlamaServer(tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture
def ws(testbed: Path) -> Workspace:
    return Workspace(testbed, now=NOW)


@pytest.fixture
def registry():
    return default_registry()


PACKAGES = ("office_env", "surfers", "generators", "verifier", "orchestrator", "harness", "backends", "bench")


def pytest_sessionstart(session):
    """The project's modules compiled once, before any worker or child process imports them: where
    PYTHONDONTWRITEBYTECODE is set (as on CI) every ``homer`` the tests start would otherwise compile
    the project again (a second of CPU each, hundreds of them). Python checks each cached file
    against its source, so an edit is never run stale."""
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller has done it
        return
    root = Path(__file__).resolve().parents[1]
    for package in PACKAGES:
        compileall.compile_dir(root / package, quiet=2, workers=1)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than the cores, at most 4. Many tests wait on a child process, a
    server or the disk, and when other work shares the cores an extra worker keeps the suite's share
    of them (on 2 busy cores: 6.2 minutes instead of 7.1)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):  # the user's own number, as xdist reads it
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return min(4, len(os.sched_getaffinity(0)) + 1)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__.rsplit(".", 1)[-1] if item.module else "",
                                         len(rank)))  # a stable sort: the rest keep their order
