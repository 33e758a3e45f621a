"""The office tools and their registry.

``default_registry()`` holds every tool; ``default_registry().read_only()`` is what surfers
may use. Tool names are ``<app>_<operation>`` (OpenAI function names allow no dots).
"""

from __future__ import annotations

from functools import lru_cache

from office_env.apps import TOOL_APPS
from office_env.tools import calendar, email, excel, pdf, system, word  # noqa: F401  (registers tools)
from office_env.tools.registry import Tool, ToolRegistry, ToolResult, declared_tools

APPS = TOOL_APPS


@lru_cache(maxsize=1)
def default_registry() -> ToolRegistry:
    return ToolRegistry(declared_tools())


__all__ = ["APPS", "Tool", "ToolRegistry", "ToolResult", "default_registry"]
