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
from tests.support.slow import LONGEST_FIRST


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


@pytest.fixture(scope="module")
def first_block_server(tmp_path_factory):
    """The real llama.cpp server serving the test model's first block alone
    (``tests/support/llama_server.first_blocks``): for tests that send whole builds, whose prompts
    the whole model would read for minutes."""
    from tests.support.llama_server import LlamaServer, first_blocks

    folder = tmp_path_factory.mktemp("llama-first-block")
    with LlamaServer(folder / "server.log", model=first_blocks(folder), slot_context=16384) as server:
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
    if session.config.getoption("dist", "no") != "no":
        _cache_rewritten_tests(session.config, root / "tests")


def _cache_rewritten_tests(config, tests: Path) -> None:
    """The test modules with their asserts rewritten, cached once for every xdist worker. Each worker
    imports every module to collect it, and where PYTHONDONTWRITEBYTECODE is set pytest keeps no
    rewritten copy, so each worker would rewrite all of them again (6 s of CPU a worker). pytest reads
    the cache whatever that setting says and checks it against the source. These are pytest's own
    functions (private, so any change in them only costs the time again, never a failure)."""
    try:
        from _pytest.assertion.rewrite import (PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc,
                                               assertstate_key, get_cache_dir)

        state = config.stash[assertstate_key]
        for path in sorted(tests.rglob("*.py")):
            if not (path.name.startswith("test_") or path.name == "conftest.py"):
                continue
            cache = get_cache_dir(path)
            cache.mkdir(exist_ok=True)
            pyc = cache / (path.name[:-3] + PYC_TAIL)
            if _read_pyc(path, pyc, state.trace) is None:
                source_hash, code = _rewrite_test(path, config)
                _write_pyc(state, code, source_hash, pyc)
    except Exception:  # noqa: BLE001 - a speed-up only: the workers rewrite the modules themselves
        return


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than the cores, at most 4. Many tests wait on a child process, a
    server or the disk, and when other work shares the cores an extra worker keeps the suite's share
    of them (on 2 busy cores: 6.2 minutes instead of 7.1)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):  # the user's own number, as xdist reads it
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return min(4, len(os.sched_getaffinity(0)) + 1)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__.rsplit(".", 1)[-1] if item.module else "",
                                         len(rank)))  # a stable sort: the rest keep their order


# -- the fast layer's guard: an unmarked module that took long is named at the end ----------------

FAST_MODULE_SECONDS = 5.0  # a module over this in the fast layer should carry pytestmark = pytest.mark.slow
_module_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report):
    module = report.nodeid.split("::", 1)[0]
    _module_seconds[module] = _module_seconds.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if "not slow" not in (config.getoption("markexpr") or ""):
        return
    long = sorted((s, m) for m, s in _module_seconds.items() if s > FAST_MODULE_SECONDS)
    if long:
        terminalreporter.write_line("fast-layer modules over %.0f s (mark them slow: pytestmark = pytest.mark.slow): %s"
                                    % (FAST_MODULE_SECONDS, ", ".join(f"{m} {s:.1f} s" for s, m in reversed(long))),
                                    yellow=True)
