"""The fake endpoint's prefix cache: how many of a prompt's tokens a server with prompt caching
would have found already computed, reported as ``usage.prompt_tokens_details.cached_tokens``.

Like vLLM's or OpenAI's automatic caching, only a shared *beginning* counts: the longest common
token prefix with the recent prompts seen for the same model, rounded down to whole blocks (vLLM's
16 tokens; OpenAI's 128, and nothing under 1,024, set by the server profile). It is
bounded (prompts kept per model, models, tokens per prompt) and deterministic for a given order of
requests, so prompts ordered stable-part-first show their saving.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict, deque
from typing import Any

from backends.fake_llm.wire import message_text
from backends.tokens import encode

BLOCK_TOKENS = 16          # cache granularity, as vLLM's default block size
KEPT_PROMPTS = 64          # recent prompts remembered per model
KEPT_MODELS = 16
MAX_PROMPT_TOKENS = 65_536  # tokens of one prompt compared and kept (a longer one: its beginning)


def prompt_sequence(body: dict[str, Any]) -> list[int]:
    """The prompt's tokens in the order a server lays them out: tool definitions, then each message
    as its role and text."""
    parts = [json.dumps(body["tools"])] if body.get("tools") else []
    parts += [f"<{m.get('role')}>\n{message_text(m)}" for m in body.get("messages", []) if isinstance(m, dict)]
    return encode("\n".join(parts))[:MAX_PROMPT_TOKENS]


def _common(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    def __init__(self, kept_prompts: int = KEPT_PROMPTS, block: int = BLOCK_TOKENS, least: int = 0) -> None:
        self._lock = threading.Lock()
        self._models: OrderedDict[str, deque[list[int]]] = OrderedDict()
        self.kept_prompts, self.block, self.least = kept_prompts, block, least

    def cached_tokens(self, model: str, body: dict[str, Any]) -> int:
        """Tokens of this prompt a prefix cache would hold (whole blocks); then remember it."""
        tokens = prompt_sequence(body)
        with self._lock:
            recent = self._models.get(model)
            if recent is None:
                recent = self._models[model] = deque(maxlen=self.kept_prompts)
                while len(self._models) > KEPT_MODELS:
                    self._models.popitem(last=False)
            self._models.move_to_end(model)
            best = max((_common(tokens, seen) for seen in recent), default=0)
            recent.append(tokens)
        cached = best // self.block * self.block
        return cached if cached >= self.least else 0
