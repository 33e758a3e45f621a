"""Hostile datasets and seed folders through the real command line (``bench/hostile.py``).

Every case runs ``homer`` as a child process on inputs built to leak a secret file (symlinks,
an outside hard link), hang a reader (a FIFO), break one-line output (odd names) or exhaust the
machine (deep and huge JSON, a zip bomb, a huge sheet). Each run must keep its documented exit
code, print one-line errors naming the file, never show a traceback, never show or write the
secret marker, write no link into any dataset, and stay under 500 MB.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

_PATH = Path(__file__).resolve().parents[2] / "bench" / "hostile.py"
_spec = importlib.util.spec_from_file_location("hostile_bench", _PATH)
hostile = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("hostile_bench", hostile)
_spec.loader.exec_module(hostile)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    results, untouched = hostile.run_suite(work, jobs=3, timeout=120, fork=True)  # a hang guard, not a speed target
    yield {r.case.name: r for r in results}, untouched
    shutil.rmtree(work, ignore_errors=True)  # ~80 MB of deliberately large inputs


@pytest.mark.parametrize("name", hostile.CASE_NAMES)
def test_hostile_case(suite, name):
    result = suite[0][name]
    problems = result.problems(seconds_target=None)
    assert not problems, (f"{name}: {'; '.join(problems)}\n--- stdout\n{result.stdout[-3000:]}\n"
                          f"--- stderr\n{result.stderr[-3000:]}")


def test_the_secret_folder_is_untouched(suite):
    assert suite[1]
