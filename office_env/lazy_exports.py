"""Names a package exports but loads on first use (a module ``__getattr__``, PEP 562): importing the
package, or one light module of it, loads none of the heavy modules behind those names."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The package's ``__getattr__``: ``exports`` maps each name to the module that defines it; a
    name loaded once is kept in ``namespace`` (the package's globals)."""
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value
    return __getattr__
