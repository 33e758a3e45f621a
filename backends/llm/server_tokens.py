"""The server's own token count of a prompt, where the server has a tokenizer route.

homer's count (cl100k, :mod:`backends.tokens`) is an estimate of what another model's tokenizer
makes of a prompt, and it cannot see the chat template: on SmolLM2 it read 17 % high. When a
reply limit has to be lowered to fit the context window (or a prompt looks too long for it), the
exact count decides instead, from the server that will run the request:

- llama.cpp: ``POST /apply-template`` (the prompt its chat template makes of the messages and
  tools, ``{"prompt": ...}``), then ``POST /tokenize`` (``{"content", "add_special",
  "parse_special"}`` -> ``{"tokens": [...]}``); both at the server's root, beside ``/v1``;
- vLLM: ``POST /tokenize`` with the chat request (``{"model", "messages", "tools",
  "add_generation_prompt"}`` -> ``{"count", "max_model_len", "tokens"}``).

Which one a server speaks is read from its ``/v1/models`` rows (``owned_by``: ``llamacpp``,
``vllm``); other servers are never asked. A server whose count fails once (an old build without
the route, an error, a shape that is not the documented one) is not asked again: the estimate
serves.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import httpx
import openai

from backends.llm.strict_json import JSONLimitError, loads_limited
from backends.llm.window import LLAMA_OWNER, model_rows, server_url

LLAMA = "llama.cpp"
VLLM = "vllm"
VLLM_OWNER = "vllm"      # ``owned_by`` of vLLM's /v1/models rows
COUNT_SECONDS = 10.0     # a count is a tokenizer's work, not a model's: it comes at once or not at all


class BadCount(ValueError):
    """A tokenizer route answered, but not in its documented shape."""


def dialect_of(data: Any) -> str | None:
    """The tokenizer route a server has, from its ``/v1/models`` body (None: none known)."""
    owners = {row.get("owned_by") for row in model_rows(data)}
    if LLAMA_OWNER in owners:
        return LLAMA
    if VLLM_OWNER in owners:
        return VLLM
    return None


class ServerTokens:
    """Counts a chat request's prompt with the server's tokenizer; ``count`` is None once it failed."""

    def __init__(self, endpoint: str, dialect: str | None) -> None:
        self.endpoint, self.dialect = endpoint, dialect
        self.failed: str | None = None  # why the server's count is not used (after a failure)
        self._lock = threading.Lock()

    @property
    def usable(self) -> bool:
        return self.dialect is not None and self.failed is None

    def count(self, api: openai.OpenAI, model: str, messages: Sequence[dict],
              tools: list[dict] | None = None) -> int | None:
        """The prompt tokens the server will read for this request (None: the estimate must serve)."""
        if not self.usable:
            return None
        api = api.with_options(max_retries=0, timeout=COUNT_SECONDS)
        try:
            if self.dialect == LLAMA:
                return self._llama(api, messages, tools)
            return self._vllm(api, model, messages, tools)
        except (openai.OpenAIError, JSONLimitError, httpx.HTTPError, ValueError) as exc:
            with self._lock:
                self.failed = self.failed or f"{exc.__class__.__name__}: {str(exc)[:200]}"
            return None

    def _post(self, api: openai.OpenAI, route: str, body: dict[str, Any]) -> dict[str, Any]:
        response = api.post(server_url(self.endpoint, route), body=body, cast_to=httpx.Response)
        data = loads_limited(response.content)
        if not isinstance(data, dict):
            raise BadCount(f"{route} answered {type(data).__name__}, not an object")
        return data

    def _llama(self, api: openai.OpenAI, messages: Sequence[dict], tools: list[dict] | None) -> int:
        request: dict[str, Any] = {"messages": list(messages)}
        if tools:
            request.update(tools=tools, tool_choice="auto")
        prompt = self._post(api, "/apply-template", request).get("prompt")
        if not isinstance(prompt, str):
            raise BadCount("/apply-template gave no 'prompt' string")
        tokens = self._post(api, "/tokenize", {"content": prompt, "add_special": True,
                                               "parse_special": True}).get("tokens")
        if not isinstance(tokens, list):
            raise BadCount("/tokenize gave no 'tokens' list")
        return len(tokens)

    def _vllm(self, api: openai.OpenAI, model: str, messages: Sequence[dict], tools: list[dict] | None) -> int:
        request: dict[str, Any] = {"model": model, "messages": list(messages), "add_generation_prompt": True}
        if tools:
            request["tools"] = tools
        count = self._post(api, "/tokenize", request).get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise BadCount("/tokenize gave no 'count'")
        return count


__all__ = ["LLAMA", "VLLM", "ServerTokens", "dialect_of"]
