"""Agents by name: the built-in ``llm``, ``oracle`` and ``none``, or a user's own as ``module:Class``.

A benchmark is run on agents its authors did not write. ``homer eval --agent mypkg.agents:MyAgent``
imports ``mypkg.agents`` (from the current folder or ``PYTHONPATH``) and builds ``MyAgent()`` once
per run; its ``run(episode)`` gets the same :class:`harness.agents.Episode` the built-in agents get
(request, history context, workspace, tool registry, step cap) and returns a
:class:`harness.agents.Trajectory`. An agent that raises fails that run, not the evaluation.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

BUILT_IN = ("llm", "oracle", "none")
_SPEC_RE = re.compile(r"^(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<attr>[A-Za-z_]\w*)$")


class AgentLoadError(ValueError):
    """An ``--agent`` that names no usable agent (one line, naming the spec)."""


def is_plugin(name: str) -> bool:
    """Whether ``name`` is written as ``module:Class`` (else it must be a built-in name)."""
    return bool(_SPEC_RE.match(name))


def load_plugin(spec: str) -> Any:
    """The class (or factory) ``spec`` names, checked to build agents with a ``run`` method."""
    found = _SPEC_RE.match(spec)
    if found is None:
        raise AgentLoadError(f"--agent {spec!r}: must be one of {', '.join(BUILT_IN)} or module:Class")
    module_name, attr = found["module"], found["attr"]
    if os.getcwd() not in sys.path:  # the command's own folder, after everything installed
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise AgentLoadError(f"--agent {spec!r}: no module named {exc.name!r} (is its folder on PYTHONPATH?)") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: say how, in one line
        raise AgentLoadError(f"--agent {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise AgentLoadError(f"--agent {spec!r}: {module_name} has no {attr!r}")
    if not callable(factory):
        raise AgentLoadError(f"--agent {spec!r}: {attr} is not a class or function")
    if isinstance(factory, type) and not callable(getattr(factory, "run", None)):
        raise AgentLoadError(f"--agent {spec!r}: {attr} has no run(episode) method")
    return factory


def build_plugin(spec: str) -> Any:
    """A fresh agent from ``spec`` for one run; it must have ``run(episode)``."""
    agent = load_plugin(spec)()
    if not callable(getattr(agent, "run", None)):
        raise AgentLoadError(f"--agent {spec!r}: what it builds has no run(episode) method")
    return agent


def check_agent_name(name: str) -> None:
    """Refuse at once an ``--agent`` that is neither a built-in name nor a loadable ``module:Class``."""
    if name in BUILT_IN:
        return
    load_plugin(name)
