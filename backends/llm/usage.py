"""Token and call accounting per role, safe to share between threads.

Per role: ``calls`` (every call answered, from the endpoint or the cache), ``cached_calls`` (those
answered from the response cache), ``prompt_tokens`` and ``completion_tokens`` (as reported by the
endpoint, for calls that reached it: a cache hit costs nothing and adds no tokens),
``cached_prompt_tokens`` (the part of those prompt tokens the endpoint served from its prompt
cache, ``usage.prompt_tokens_details.cached_tokens``: still counted in ``prompt_tokens``, usually
billed cheaper and computed faster), and the same
tokens split by model, which is what :meth:`Usage.cost` prices. A call that failed (an
``LLMError``) is not counted.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

COUNTERS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "cached_prompt_tokens")


class Usage:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, dict[str, Any]] = {}

    def _role(self, role: str) -> dict[str, Any]:
        entry = self._roles.get(role)
        if entry is None:
            entry = self._roles[role] = {**{k: 0 for k in COUNTERS}, "models": {}}
        return entry

    def add(self, role: str, prompt: int, completion: int, cached: bool = False, model: str | None = None,
            cached_prompt: int = 0) -> None:
        """Count one call for ``role``. A cached call adds no tokens. ``cached_prompt``: the prompt
        tokens the endpoint's prompt cache held (at most ``prompt``)."""
        with self._lock:
            entry = self._role(role)
            entry["calls"] += 1
            if cached:
                entry["cached_calls"] += 1
                return
            entry["prompt_tokens"] += int(prompt)
            entry["completion_tokens"] += int(completion)
            entry["cached_prompt_tokens"] += max(0, min(int(cached_prompt), int(prompt)))
            if model is not None:
                per_model = entry["models"].setdefault(model, {"prompt_tokens": 0, "completion_tokens": 0})
                per_model["prompt_tokens"] += int(prompt)
                per_model["completion_tokens"] += int(completion)

    def merge(self, other: "Usage | Mapping[str, Any]") -> "Usage":
        """Add another ``Usage`` (or its ``to_dict()``, e.g. from a worker process) into this one."""
        data = other.to_dict() if isinstance(other, Usage) else other
        with self._lock:
            for role, counts in data.items():
                entry = self._role(role)
                for key in COUNTERS:
                    entry[key] += int(counts.get(key, 0))
                for model, tokens in (counts.get("models") or {}).items():
                    per_model = entry["models"].setdefault(model, {"prompt_tokens": 0, "completion_tokens": 0})
                    per_model["prompt_tokens"] += int(tokens.get("prompt_tokens", 0))
                    per_model["completion_tokens"] += int(tokens.get("completion_tokens", 0))
        return self

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Usage":
        return cls().merge(data)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{role: {calls, cached_calls, prompt_tokens, completion_tokens, cached_prompt_tokens,
        models: {model: {...}}}}``,
        roles sorted by name."""
        with self._lock:
            return {role: {**{k: entry[k] for k in COUNTERS},
                           "models": {m: dict(t) for m, t in sorted(entry["models"].items())}}
                    for role, entry in sorted(self._roles.items())}

    def totals(self) -> dict[str, int]:
        """The counters summed over roles."""
        totals = {k: 0 for k in COUNTERS}
        for counts in self.to_dict().values():
            for key in COUNTERS:
                totals[key] += counts[key]
        return totals

    def cost(self, prices: Mapping[str, tuple[float, float]]) -> float:
        """USD spent: per role and model, tokens / 1000 times ``prices[model]`` = (prompt, completion)
        USD per 1K tokens. Models without a price count as free (see :meth:`unpriced`)."""
        total = 0.0
        for counts in self.to_dict().values():
            for model, tokens in counts["models"].items():
                if model in prices:
                    prompt_price, completion_price = prices[model]
                    total += tokens["prompt_tokens"] / 1000 * prompt_price
                    total += tokens["completion_tokens"] / 1000 * completion_price
        return total

    def unpriced(self, prices: Mapping[str, Any]) -> list[str]:
        """Models that spent tokens but have no entry in ``prices``."""
        used = {m for counts in self.to_dict().values() for m in counts["models"]}
        return sorted(used - set(prices))

    def per_item(self, n: int) -> dict[str, dict[str, float]]:
        """Average calls and tokens per item (e.g. per task) for each role."""
        if n <= 0:
            raise ValueError("per_item needs n >= 1")
        return {role: {k: counts[k] / n for k in COUNTERS} for role, counts in self.to_dict().items()}

    def __repr__(self) -> str:
        return f"Usage({self.totals()})"
