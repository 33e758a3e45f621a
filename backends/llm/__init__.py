"""The LLM client layer shared by every llm role: settings, an OpenAI-compatible client with
retries, a per-endpoint concurrency limit, structured output with repair, a response cache and
usage accounting.

Names are loaded on first use (PEP 562), so a module that needs only ``backends.llm.strict_json``
or the settings does not import the openai package (the fake endpoint starts faster)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "CacheError": "cache", "ResponseCache": "cache", "request_key": "cache",
    "ChatResult": "client", "ContextLengthError": "client", "LLMClient": "client", "LLMError": "client",
    "MalformedReplyError": "client", "PreflightError": "client", "ReplyCutError": "client",
    "StructuredOutputError": "client",
    "ToolCallRequest": "client", "extract_json": "client", "without_reasoning": "client",
    "LLMConfigError": "settings", "LLMSettings": "settings",
    "Usage": "usage",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
