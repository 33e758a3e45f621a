"""The import contracts of pyproject.toml hold: imports flow one way between the packages
(office_env -> backends -> surfers, generators, harness -> verifier -> orchestrator) and no
package's modules import each other in a circle, function-level imports included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(linter), "--no-cache", "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 kept, 0 broken" in proc.stdout


def test_the_slow_layer_is_marked_in_its_modules_and_the_fast_layer_is_worth_running():
    """Slow modules say so themselves (``pytestmark = pytest.mark.slow``); the fast layer's run
    names any unmarked module that took long (``tests/conftest.py``)."""
    import re

    from tests.support.slow import LONGEST_FIRST

    modules = {p: p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py")}
    names = [p.stem for p in modules]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)  # ordered by name
    assert set(LONGEST_FIRST) <= set(names), sorted(set(LONGEST_FIRST) - set(names))
    marked = {p.stem for p, text in modules.items() if re.search(r"^pytestmark = .*pytest\.mark\.slow", text, re.M)}
    assert set(LONGEST_FIRST) <= marked
    assert len(set(names) - marked) >= 20  # a fast layer worth running
