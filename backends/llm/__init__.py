"""The LLM client layer shared by every llm role: settings, an OpenAI-compatible client with
retries, a per-endpoint concurrency limit, structured output with repair, a response cache and
usage accounting."""

from __future__ import annotations

from backends.llm.cache import CacheError, ResponseCache, request_key
from backends.llm.client import (
    ChatResult, ContextLengthError, LLMClient, LLMError, MalformedReplyError, PreflightError, StructuredOutputError,
    ToolCallRequest,
    extract_json,
)
from backends.llm.settings import LLMConfigError, LLMSettings
from backends.llm.usage import Usage

__all__ = ["LLMSettings", "LLMClient", "ChatResult", "ToolCallRequest", "Usage", "ResponseCache", "LLMError",
           "ContextLengthError", "PreflightError", "LLMConfigError", "MalformedReplyError", "StructuredOutputError", "CacheError", "request_key",
           "extract_json"]
