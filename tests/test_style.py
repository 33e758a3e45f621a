"""The project's own lint rules (ruff, as pyproject.toml selects them) hold on the product code and the benchmarks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["office_env", "surfers", "generators", "verifier", "orchestrator", "harness", "backends", "bench"]


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run([str(ruff), "check", "--no-cache", *CHECKED], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
