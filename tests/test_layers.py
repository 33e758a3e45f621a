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


def _private_imports_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("private_imports_bench", ROOT / "bench" / "private_imports.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_module_imports_another_modules_private_names(tmp_path):
    """``bench/private_imports.py`` finds a ``_private`` name imported from another module, relative
    or absolute, at the top or in a function, and not a module's own or a dunder; product code imports
    none from the project's own modules."""
    bench = _private_imports_bench()
    package = tmp_path / "office_env" / "inner"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from ._own import _x\nfrom . import __version__\n")
    (package / "a.py").write_text("from .b import _y, z\n\ndef f():\n    from office_env.inner.b import _w\n")
    (package / "b.py").write_text("from office_env.inner.b import _self\nfrom ..c import _v\n")
    assert sorted(bench.private_imports(tmp_path)) == [
        ("office_env.inner", "office_env.inner._own", "_x"), ("office_env.inner.a", "office_env.inner.b", "_w"),
        ("office_env.inner.a", "office_env.inner.b", "_y"), ("office_env.inner.b", "office_env.c", "_v")]
    own = [found for found in bench.private_imports() if found[1].split(".", 1)[0] in bench.PACKAGES]
    assert own == []
