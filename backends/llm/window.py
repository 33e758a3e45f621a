"""A model's context window: where it is read from, and the reply limit a request may ask in it.

A reply limit is a ceiling, not a wish. When the window is known, a request asks for the configured
limit or, when that does not fit, for what the prompt and its tools leave of the window (homer's
estimate with a margin, or the server's exact count: :mod:`backends.llm.server_tokens`), so a model
with an 8K window still runs a task whose prompt takes 5K. A prompt that leaves less than
``MIN_REPLY_TOKENS`` is refused before it is sent (:class:`NoRoom`).

The window is the settings' ``context_window``, else what the server states: ``/v1/models`` (vLLM's
``max_model_len``, the ``context_length`` of others, llama.cpp's ``meta.n_ctx``), else, for a
llama.cpp server whose ``/v1/models`` does not say it (builds before ``meta.n_ctx``), its ``/props``
(``default_generation_settings.n_ctx``, the tokens of one slot). A llama.cpp server runs one model
and answers to any model name, so its window also stands for the names it does not list.
"""

from __future__ import annotations

from typing import Any, TypeGuard, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai

from backends.llm.strict_json import JSONLimitError, loads_limited

WINDOW_MARGIN = 0.1    # of the estimate, kept free when a reply limit is lowered: the count is approximate
MIN_REPLY_TOKENS = 512  # the least reply room a request keeps when its limit is lowered to fit the window
ANY_MODEL = "*"        # the window of a one-model server (llama.cpp), whatever name a request gives
LLAMA_OWNER = "llamacpp"  # ``owned_by`` of llama.cpp's /v1/models rows
_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


class NoRoom(ValueError):
    """The prompt leaves ``room`` tokens of the window, under ``floor``, the least reply a request asks."""

    def __init__(self, room: int, floor: int) -> None:
        super().__init__(f"{room} tokens left, under {floor}")
        self.room, self.floor = room, floor


def with_margin(estimate: int) -> int:
    """An estimated prompt with the room kept for the counter's error and the chat template."""
    return int(estimate * (1 + WINDOW_MARGIN)) + 16


def reply_limit(configured: int, window: int | None, estimate: int, exact: bool = False) -> int:
    """The reply limit to send: ``configured`` when it fits beside a prompt of about ``estimate``
    tokens (or the window is unknown), else what is left of ``window``; :class:`NoRoom` when that is
    under ``MIN_REPLY_TOKENS`` (or under a smaller configured limit). An ``exact`` count (the
    server's own tokenizer) needs no margin."""
    if window is None:
        return configured
    room = window - (estimate if exact else with_margin(estimate))
    if configured <= room:
        return configured
    floor = min(configured, MIN_REPLY_TOKENS)
    if room < floor:
        raise NoRoom(room, floor)
    return room


def served_windows(data: Any) -> dict[str, int]:
    """Context windows a ``/v1/models`` body states, by model id: vLLM's ``max_model_len``, the
    ``context_length`` of others, llama.cpp's ``meta.n_ctx`` (never ``n_ctx_train``, the size the
    model was trained with, not the one the server runs)."""
    found: dict[str, int] = {}
    for row in model_rows(data):
        meta = cast("dict[str, Any]", row.get("meta")) if isinstance(row.get("meta"), dict) else {}
        for value in [*(row.get(k) for k in _WINDOW_KEYS), meta.get("n_ctx")]:  # not n_ctx_train: not what runs
            if _is_window(value):
                found[row["id"]] = value
                break
    return found


def stated_windows(api: openai.OpenAI, endpoint: str, data: Any) -> dict[str, int]:
    """:func:`served_windows`, completed for a llama.cpp server by its ``/props`` (asked only when
    ``/v1/models`` leaves one of its models without a window), and under ``ANY_MODEL`` when the
    server runs one model."""
    found = served_windows(data)
    llama = [row["id"] for row in model_rows(data) if row.get("owned_by") == LLAMA_OWNER]
    if any(model not in found for model in llama):
        n_ctx = props_window(api, endpoint)
        if n_ctx is not None:
            found.update({model: n_ctx for model in llama if model not in found})
    if len(llama) == 1 and llama[0] in found:
        found[ANY_MODEL] = found[llama[0]]
    return found


def server_url(endpoint: str, route: str) -> str:
    """A route at the server's root, where llama.cpp and vLLM serve their own ones
    (``http://host:8080/v1`` and ``/props`` -> ``http://host:8080/props``)."""
    parts = urlsplit(endpoint.rstrip("/"))
    return urlunsplit((parts.scheme, parts.netloc, f"{parts.path.removesuffix('/v1')}{route}", "", ""))


def props_url(endpoint: str) -> str:
    """llama.cpp's ``/props``, at the server's root."""
    return server_url(endpoint, "/props")


def read_props(api: openai.OpenAI, endpoint: str) -> dict[str, Any] | None:
    """llama.cpp's ``/props`` body (None when it cannot be read)."""
    try:
        response = api.get(props_url(endpoint), cast_to=httpx.Response)
        body = loads_limited(response.content)
    except (openai.OpenAIError, JSONLimitError, httpx.HTTPError):
        return None
    return body if isinstance(body, dict) else None


def props_slots(api: openai.OpenAI, endpoint: str) -> int | None:
    """How many requests a llama.cpp server works on at once (``/props`` ``total_slots``)."""
    value = (read_props(api, endpoint) or {}).get("total_slots")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def props_window(api: openai.OpenAI, endpoint: str) -> int | None:
    """The ``n_ctx`` llama.cpp's ``/props`` gives (None when it cannot be read)."""
    body = read_props(api, endpoint)
    if body is None:
        return None
    settings = body.get("default_generation_settings")
    value = settings.get("n_ctx") if isinstance(settings, dict) else body.get("n_ctx")
    return value if _is_window(value) else None


def model_rows(data: Any) -> list[dict[str, Any]]:
    rows = data.get("data") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str)] if isinstance(rows, list) else []


def _is_window(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 16


__all__ = ["ANY_MODEL", "MIN_REPLY_TOKENS", "WINDOW_MARGIN", "NoRoom", "model_rows", "props_slots", "props_url",
           "props_window", "reply_limit", "served_windows", "server_url", "stated_windows", "with_margin"]
