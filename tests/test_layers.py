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


def test_the_slow_layer_names_only_modules_that_exist():
    from tests.support.slow import SLOW_MODULES

    names = [p.stem for p in (ROOT / "tests").rglob("test_*.py")]
    present = set(names)
    assert len(names) == len(present), sorted(n for n in present if names.count(n) > 1)  # the layer goes by name
    assert SLOW_MODULES <= present, sorted(SLOW_MODULES - present)
    assert len(present - SLOW_MODULES) >= 20  # a fast layer worth running
