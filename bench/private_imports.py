"""Measure: how many ``_private`` names product code imports from another module.

A name with a leading underscore is its module's own; each ``from x import _y`` where ``x`` is
another module is a seam two modules share without saying so. This counts them (function-level
imports too; relative imports resolved) in the product packages and prints the total, the count
per importing package, how many come from the project's own modules and, with ``--list``, each one.

Run: ``python bench/private_imports.py [--list]``.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("office_env", "surfers", "generators", "verifier", "orchestrator", "harness", "backends")


def module_name(path: Path, root: Path = ROOT) -> str:
    """``office_env/evaluation/stated.py`` under ``root`` -> ``office_env.evaluation.stated`` (a
    package's ``__init__.py`` -> the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_from(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` names, its relative dots resolved against ``importer``."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


# a ``from`` import whose names (one line, or a parenthesised list) hold one with a leading
# underscore: only a file with one is parsed
_MAYBE_RE = re.compile(r"\bfrom\s+[\w.]+\s+import\s+(\([^)]*\)|[^\n]*)")
_UNDERSCORE_RE = re.compile(r"(?<![\w.])_\w")


def private_imports(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(importing module, imported module, name) of each ``_private`` name product code imports from
    another module (a dunder such as ``__version__`` is no private name)."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if not any(_UNDERSCORE_RE.search(m.group(1)) for m in _MAYBE_RE.finditer(text)):
                continue
            importer = module_name(path, root)
            tree = ast.parse(text, str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom):
                    continue
                source = imported_from(node, importer, path.name == "__init__.py")
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    if private and source != importer:
                        found.append((importer, source, alias.name))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print each import")
    args = parser.parse_args()
    found = private_imports()
    if args.list:
        for importer, source, name in found:
            print(f"{importer}: from {source} import {name}")
    by_package = Counter(importer.split(".", 1)[0] for importer, _, _ in found)
    own = sum(source.split(".", 1)[0] in PACKAGES for _, source, _ in found)
    print(f"private names imported from another module: {len(found)} "
          f"({', '.join(f'{p} {by_package[p]}' for p in PACKAGES if by_package[p]) or 'none'}); "
          f"from the project's own modules: {own}")


if __name__ == "__main__":
    main()
