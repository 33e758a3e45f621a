"""The tokenizer routes of the ``llama-cpp`` and ``vllm`` profiles, in those servers' shapes.

- llama.cpp: ``POST /apply-template`` (a chat request's messages and tools -> ``{"prompt"}``, the
  prompt its chat template makes) and ``POST /tokenize`` (``{"content", "add_special"}`` ->
  ``{"tokens": [ids]}``);
- vLLM: ``POST /tokenize`` with a prompt (``{"model", "prompt"}``) or a chat request
  (``{"model", "messages", "tools", "add_generation_prompt"}``) -> ``{"count", "max_model_len",
  "tokens", "token_strs"}``.

The prompt is :func:`~backends.fake_llm.wire.chat_template`'s, its tokens cl100k's: the count
these routes give is the ``usage.prompt_tokens`` the profile answers the same request with.
"""

from __future__ import annotations

from typing import Any

from backends.fake_llm.profiles import Profile
from backends.fake_llm.wire import FaultError, bad_request, chat_template
from backends.tokens import encode

ROUTES = ("/tokenize", "/apply-template")


def handle(profile: Profile, route: str, body: Any) -> dict[str, Any]:
    """The answer of ``route`` for this profile (HTTP 404 where its server has no such route)."""
    if profile.tokenizer is None or (route == "/apply-template" and profile.tokenizer != "llama.cpp"):
        raise FaultError(404, f"no such route: POST {route}", "invalid_request_error")
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    if route == "/apply-template":
        return {"prompt": _templated(body)}
    if profile.tokenizer == "llama.cpp":
        return _llama_tokenize(body)
    text = _templated(body) if "messages" in body else body.get("prompt")
    if not isinstance(text, str):
        raise bad_request("give 'prompt' (a string) or 'messages' (a list)", "prompt")
    tokens = encode(text)
    return {"count": len(tokens), "max_model_len": profile.context_window, "tokens": tokens, "token_strs": None}


def _templated(body: dict) -> str:
    messages, tools = body.get("messages"), body.get("tools")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise bad_request("'messages' must be a list of message objects", "messages")
    if tools is not None and not isinstance(tools, list):
        raise bad_request("'tools' must be a list", "tools")
    return chat_template(messages, tools)


def _llama_tokenize(body: dict) -> dict[str, Any]:
    content = body.get("content")
    if not isinstance(content, str):
        raise bad_request("'content' must be a string", "content")
    return {"tokens": encode(content)}


__all__ = ["ROUTES", "handle"]
