"""How the servers users run differ, as profiles of the fake endpoint.

A profile makes :class:`~backends.fake_llm.server.FakeLLMServer` behave like one kind of
server where servers are known to differ, so the llm backend is tested against each quirk:

- ``openai``: accepts every parameter; a prompt over the 128K context is HTTP 400
  (``context_length_exceeded``); a strict ``json_schema`` that breaks strict mode's rules is HTTP
  400 (as for ``openai-reasoning``); its prompt cache holds a shared beginning of 1,024 tokens or
  more, in steps of 128 (the other profiles': any beginning, in vLLM's 16-token blocks);
- ``openai-reasoning``: OpenAI's reasoning models: ``temperature``, ``max_tokens`` and
  ``parallel_tool_calls`` are refused with HTTP 400 (the limit must come as
  ``max_completion_tokens``);
- ``vllm``: ``/v1/models`` states the context window (``max_model_len``, 32768); an overflow is
  HTTP 400; a chat model serves no embeddings (HTTP 404); ``POST /tokenize`` counts a chat request
  or a prompt (``{"count", "max_model_len", "tokens"}``);
- ``llama-cpp``: tools sent without ``tool_choice`` are left out of the prompt (the model never
  sees them); its ``/v1/models`` rows are llama.cpp's (``owned_by: llamacpp``, a ``meta`` with the
  training size only, as builds before ``meta.n_ctx`` give) and ``GET /props`` states the window
  (``default_generation_settings.n_ctx``); an overflow of its 16384-token context is HTTP 400; no
  embeddings; its one model answers under any model name; ``POST /apply-template`` gives the
  templated prompt and ``POST /tokenize`` its tokens;
- ``ollama``: a prompt over its 8192-token context is cut silently from the oldest messages (the
  usage then shows fewer prompt tokens than were sent); no window in ``/v1/models``.

The ``llama-cpp`` and ``vllm`` profiles count a prompt as those servers do, templated (see
:func:`~backends.fake_llm.wire.chat_template`): their usage, window and ``/tokenize`` agree.
``default`` is none of these: everything is accepted and nothing overflows (the unit tests' server).
A server's ``context_window`` argument replaces the profile's window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Profile:
    name: str
    context_window: int | None = None   # tokens a prompt and its reply limit may take together
    overflow: str = "error"             # "error": HTTP 400; "truncate": the oldest messages are dropped
    states_window: bool = False         # /v1/models gives max_model_len
    llama_props: bool = False           # llama.cpp's /v1/models rows, and /props giving n_ctx
    tools_need_choice: bool = False     # without tool_choice the tools are not in the prompt
    rejects_temperature: bool = False
    rejects_max_tokens: bool = False    # only max_completion_tokens is accepted
    rejects_parallel_tool_calls: bool = False
    checks_strict_schema: bool = False  # a strict json_schema that breaks strict mode's rules is HTTP 400
    embeddings: bool = True
    any_model_name: bool = False        # its one model answers whatever model name a request gives
    tokenizer: str | None = None        # "llama.cpp" or "vllm": its /tokenize route; prompts counted templated
    shows_slots: bool = True            # llama-cpp: GET /slots answers (llama-server --no-slots: it does not)
    cache_block: int = 16               # the prompt cache's step, in tokens
    cache_least: int = 0                # the shortest shared beginning it holds
    overflow_message: str = ("This model's maximum context length is {window} tokens. However, you requested "
                             "{needed} tokens ({prompt} in the messages, {limit} in the completion). Please "
                             "reduce the length of the messages or completion.")


PROFILES: dict[str, Profile] = {
    "default": Profile("default"),
    "openai": Profile("openai", context_window=128_000, checks_strict_schema=True, cache_block=128,
                      cache_least=1024),
    "openai-reasoning": Profile("openai-reasoning", context_window=200_000, rejects_temperature=True,
                                rejects_max_tokens=True, rejects_parallel_tool_calls=True,
                                checks_strict_schema=True, cache_block=128, cache_least=1024),
    "vllm": Profile("vllm", context_window=32768, states_window=True, embeddings=False, tokenizer="vllm"),
    "llama-cpp": Profile("llama-cpp", context_window=16384, tools_need_choice=True, embeddings=False, llama_props=True,
                         any_model_name=True, tokenizer="llama.cpp",
                         overflow_message="Requested tokens ({needed}) exceed context window of {window}"),
    "ollama": Profile("ollama", context_window=8192, overflow="truncate"),
}


def profile_named(name: str) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}: expected one of {', '.join(PROFILES)}")
    return PROFILES[name]


def reply_limit(body: dict[str, Any]) -> int:
    """The reply's token limit a request asks for (0 when it asks none)."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0
