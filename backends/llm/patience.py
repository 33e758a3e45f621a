"""How long an attempt may wait for its reply, and when an abandoned one may be sent again.

A local server on a CPU reads a prompt at about a hundred tokens a second: one timeout for every
request either abandons long prompts or waits minutes on a dead server for short ones. So the
``timeout`` setting is the time an attempt gets for each ``TIMEOUT_TOKENS`` tokens of its prompt
and reply limit, and never less than the setting itself (:func:`attempt_seconds`).

An attempt that timed out is not over on the server: llama.cpp keeps decoding it in its slot, and
a retry sent at once waits behind it (and its own timeout runs meanwhile) or, with slots sharing a
cache, overflows the context. So before asking again the client waits, bounded by the attempt's
own time, until the server has room (:func:`wait_for_room`):

- llama.cpp: ``GET /slots`` (on by default; ``--no-slots`` turns it off) lists its slots with
  ``is_processing``: room is an idle slot;
- vLLM: ``GET /metrics`` gives ``vllm:num_requests_waiting``: room is an empty queue (vLLM runs
  many requests at once and drops one whose client went away).

A server that shows neither is asked again as before (after the client's back-off); a server still
busy at the bound ends the call with a message naming the ``timeout`` setting.
"""

from __future__ import annotations

import re
import time

import httpx
import openai

from backends.llm.server_tokens import LLAMA, VLLM
from backends.llm.strict_json import JSONLimitError, loads_limited
from backends.llm.window import server_url

TIMEOUT_TOKENS = 4096   # the tokens of prompt and reply limit the timeout setting is for
POLL_SECONDS = 0.25     # between two looks at a busy server
LOOK_SECONDS = 5.0      # one look (/slots, /metrics): the server answers these at once or not at all
_WAITING_RE = re.compile(r"^vllm:num_requests_waiting(?:\{[^}]*\})?\s+([0-9.eE+-]+)\s*$", re.MULTILINE)


class StillBusy(Exception):
    """The server had no room within the bound; ``busy`` says what it showed last."""

    def __init__(self, busy: str) -> None:
        super().__init__(busy)
        self.busy = busy


def attempt_seconds(timeout: float, prompt_tokens: int, reply_tokens: int) -> float:
    """What an attempt gets: ``timeout`` for each ``TIMEOUT_TOKENS`` of prompt and reply limit, at least ``timeout``."""
    return round(timeout * max(1.0, (prompt_tokens + reply_tokens) / TIMEOUT_TOKENS), 1)


def busy_now(api: openai.OpenAI, endpoint: str, dialect: str | None) -> str | None:
    """What keeps the server from starting a request now ("2 of 2 slots processing"), '' when it
    has room, None when it does not say."""
    api = api.with_options(max_retries=0, timeout=LOOK_SECONDS)
    try:
        if dialect == LLAMA:
            slots = loads_limited(api.get(server_url(endpoint, "/slots"), cast_to=httpx.Response).content)
            if not isinstance(slots, list) or not slots or not all(isinstance(s, dict) for s in slots):
                return None
            busy = sum(1 for s in slots if s.get("is_processing") is True)
            return "" if busy < len(slots) else f"{busy} of {len(slots)} slots processing"
        if dialect == VLLM:
            text = api.get(server_url(endpoint, "/metrics"), cast_to=httpx.Response).text
            counts = [float(m.group(1)) for m in _WAITING_RE.finditer(text[:1_000_000])]
            if not counts:
                return None
            waiting = int(sum(counts))
            return "" if waiting == 0 else f"{waiting} request(s) waiting"
    except openai.APITimeoutError:
        return f"no answer from it within {LOOK_SECONDS:g} s"  # llama.cpp answers /slots between two batches
    except (openai.OpenAIError, JSONLimitError, httpx.HTTPError, ValueError):
        return None
    return None


def wait_for_room(api: openai.OpenAI, endpoint: str, dialect: str | None, seconds: float) -> bool:
    """Wait up to ``seconds`` for the server to have room; True once it has, False when it does not
    say (ask again as usual). Raises :class:`StillBusy` at the bound."""
    deadline = time.monotonic() + seconds
    while True:
        busy = busy_now(api, endpoint, dialect)
        if busy is None:
            return False
        if not busy:
            return True
        if time.monotonic() + POLL_SECONDS > deadline:
            raise StillBusy(busy)
        time.sleep(POLL_SECONDS)


__all__ = ["TIMEOUT_TOKENS", "StillBusy", "attempt_seconds", "busy_now", "wait_for_room"]
