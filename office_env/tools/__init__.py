"""The office tools and their registry.

``default_registry()`` holds every tool of every registered app (``office_env.apps``);
``read_only_registry()`` (the tools that change no file) is what surfers may use. Tool names are ``<app>_<operation>``
(OpenAI function names allow no dots).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from office_env.apps import generation, get_app, registered_apps, registry_cache, tool_apps
from office_env.tools.registry import Tool, ToolRegistry, ToolResult, declared_tools


def _declare() -> None:
    """Import each registered app's tools module (its ``@tool`` functions declare themselves), in
    module-name order: the order tools are listed in."""
    for module in sorted({app.tools for app in registered_apps()}):
        importlib.import_module(module)


@lru_cache(maxsize=4)
def _registry(_generation: int) -> ToolRegistry:
    _declare()
    apps = set(tool_apps())
    return ToolRegistry(t for t in declared_tools() if t.app in apps)


def default_registry() -> ToolRegistry:
    """Every registered app's tools (built again when an app is registered or taken out)."""
    return _registry(generation())


@registry_cache(maxsize=1)
def read_only_registry() -> ToolRegistry:
    """Every registered app's tools that change no file: made once (and again when an app is
    registered), not for every caller, since a registry builds each tool's argument validator."""
    return default_registry().read_only()


@registry_cache(maxsize=1)
def file_lister() -> Tool:
    """The tool that lists a folder's files (declared ``lists_files``, naming its folder argument;
    the first so declared, tools in order): what an agent, a surfer or a plan calls to look around."""
    return next(t for t in default_registry() if t.lists_files)


def list_files_call(folder: str | None = None) -> tuple[str, dict[str, str]]:
    """The listing call (tool name, arguments) of ``folder``, or of the whole office when None."""
    lister = file_lister()
    return lister.name, ({lister.lists_files: folder} if folder is not None else {})


def converted_path(tool: str, args: Mapping[str, Any]) -> str | None:
    """The file a call of a converting tool (declared ``converts_to``) writes: its ``output_path``, or
    the file its ``file_path`` names with the converted-to app's first kind ("data/a.docx" ->
    "data/a.pdf"); None for a tool that converts nothing or a call without a file."""
    registry = default_registry()
    spec = registry.get(tool) if tool in registry else None
    if spec is None or not spec.converts_to:
        return None
    if args.get("output_path"):
        return str(args["output_path"])
    source = args.get("file_path")
    kinds = get_app(spec.converts_to).extensions
    return str(PurePosixPath(str(source)).with_suffix(f".{kinds[0]}")) if source and kinds else None


_declare()

__all__ = ["Tool", "ToolRegistry", "ToolResult", "converted_path", "default_registry", "file_lister",
           "list_files_call"]
