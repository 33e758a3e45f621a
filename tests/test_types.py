"""mypy, with the settings of pyproject.toml's ``[tool.mypy]``, finds no error in the product packages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_mypy_finds_nothing(tmp_path_factory):
    mypy = Path(sys.executable).with_name("mypy")
    cache = tmp_path_factory.getbasetemp() / "mypy-cache"  # a run from scratch writes nothing into the checkout
    proc = subprocess.run([str(mypy), "--config-file", "pyproject.toml", "--cache-dir", str(cache)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
