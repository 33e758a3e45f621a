"""The one door to an OpenAI-compatible endpoint that every llm role goes through.

``LLMClient`` wraps ``openai.OpenAI`` and adds what the roles need on top of it:

- retries are the openai client's own (``max_retries``; they honour ``Retry-After`` and
  ``retry-after-ms`` and back off exponentially on 408/409/429/5xx, timeouts and connection
  errors); what is left after them becomes one :class:`LLMError` naming role, model, endpoint and
  the HTTP status or the timeout;
- a limiter per endpoint (:mod:`backends.llm.rate_limit`), shared by all clients in the process:
  requests- and tokens-per-minute budgets (``rpm``, ``tpm``), a concurrency limit that adapts
  (up to ``max_concurrency``, halved on a 429 or a timeout) and a pause for a 429's Retry-After;
  a slot is held for a whole call, including the client's waits between retries, so a
  rate-limited endpoint is not hit harder by the other threads;
- the response cache (:class:`~backends.llm.cache.ResponseCache`): a hit makes no HTTP request;
- usage accounting per role (:class:`~backends.llm.usage.Usage`), from each response's ``usage``;
- :meth:`LLMClient.structured`: JSON out of a reply (bare, fenced, or with prose around it),
  validated against a JSON Schema (Draft 2020-12), repaired by asking again with the exact error;
- replies are read from the raw body, not through the openai package's models (which accept any
  shape: a ``message`` that is a string comes through as a string). A body that is not JSON within
  ``MAX_JSON_BYTES``/``MAX_JSON_DEPTH`` or does not have the OpenAI shape is asked again like a 5xx,
  then raised as :class:`MalformedReplyError` naming the bad field. One budget of ``max_retries``
  covers the openai client's retries and these, so a call makes at most ``max_retries + 1`` requests.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, cast

import openai
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from backends.llm.cache import ResponseCache, request_key
from backends.llm.failures import is_refusal
from backends.llm.patience import TIMEOUT_TOKENS, StillBusy, attempt_seconds, busy_now, wait_for_room
from backends.llm.preflight import PREFLIGHT_SECONDS, fix_for
from backends.llm.preflight import error_text as _error_text
from backends.llm.rate_limit import limiter_for, retry_after_seconds
from backends.llm.server_tokens import LLAMA, ServerTokens, dialect_of
from backends.llm.settings import PLACEHOLDER_KEY, LLMSettings, settings_for
from backends.llm.strict_json import JSONLimitError, json_kind, loads_limited
from backends.llm.strict_schema import root_object, strict_form, unstrict
from backends.llm.transport import ReplyTooLarge, attempts_sent, bounded_http_client
from backends.llm.usage import Usage
from backends.llm.window import (
    ANY_MODEL,
    MIN_REPLY_TOKENS,
    NoRoom,
    props_slots,
    reply_limit,
    stated_windows,
    with_margin,
)
from backends.tokens import count_tokens

EMBEDDING_BATCH = 256
EMBEDDINGS_ROLE = "embeddings"
SETTINGS = object()  # chat(temperature=SETTINGS): the temperature the settings give the model
TRUNCATION_MIN_TOKENS = 1000  # below this, a server's count may differ from ours by too much to tell
TRUNCATION_SHARE = 0.5        # a server that read under half of the prompt cut it
_CONTEXT_WORDS = re.compile(r"context length|context window|context size|context_length_exceeded|"
                            r"exceed_context_size|maximum context|exceeds? the (?:model'?s? )?(?:max|context)|"
                            r"too many tokens|prompt is too long|n_ctx", re.I)
GRAMMAR_MAX_REPEAT = 1000  # repetition bounds above this are not sent to a grammar engine (see for_grammar)
_REPEAT_BOUNDS = ("maxItems", "maxLength", "maxProperties")



class LLMError(RuntimeError):
    """A call failed for good (after the client's retries). ``status`` is the HTTP status, or None
    for a timeout or connection failure (``timed_out`` tells which). ``transient``: the endpoint
    itself failed (unreachable, timed out, 429 or 5xx after every retry), not the request or the
    model's answer -- the same request may well work once the endpoint is back. ``refused``: a 4xx
    no retry changes (an unsupported parameter, a refused key, a model not served; see
    :mod:`backends.llm.failures`): a run stops when it repeats."""

    def __init__(self, message: str, *, role: str | None = None, model: str | None = None,
                 status: int | None = None, timed_out: bool = False, transient: bool = False,
                 refused: bool = False):
        super().__init__(message)
        self.role, self.model, self.status, self.timed_out = role, model, status, timed_out
        self.transient, self.refused = transient, refused


class ContextLengthError(LLMError):
    """The prompt does not fit the model's context window: found before sending (the window is
    known), refused by the server (HTTP 400 saying so), or cut by it (far fewer prompt tokens read
    than sent). ``needed`` and ``window`` are token counts (``needed`` is an estimate)."""

    kind = "context"

    def __init__(self, message: str, *, role: str, model: str, needed: int | None = None,
                 window: int | None = None, status: int | None = None):
        super().__init__(message, role=role, model=model, status=status)
        self.needed, self.window = needed, window


class ServerContextError(openai.OpenAIError):
    """A 5xx whose message is about the context size (llama.cpp: "Context size has been exceeded"):
    raised from the response hook so the openai client does not retry it."""

    def __init__(self, body: str) -> None:
        try:
            data = json.loads(body)
            inner = data.get("error") if isinstance(data.get("error"), dict) else data
            message = str(inner.get("message") or body)
        except (ValueError, AttributeError):
            message = body
        super().__init__(message[:500])


class PreflightError(LLMError):
    """The endpoint cannot serve a run: unreachable, the key refused, a model not served."""


class MalformedReplyError(LLMError):
    """Every attempt got HTTP 200 with a body that is not a usable reply; ``problem`` names the
    field that is wrong in the last one (``'choices[0].message' is a string, not an object``)."""

    def __init__(self, message: str, *, role: str, model: str, problem: str, attempts: int):
        super().__init__(message, role=role, model=model, status=200)
        self.problem, self.attempts = problem, attempts


class ReplyShapeError(ValueError):
    """One reply body that does not have the OpenAI shape; the message names the field."""


class StructuredOutputError(LLMError):
    """No reply validated after all repairs; ``error`` is the last problem, ``attempts`` the number of
    requests made, ``content`` the last reply's text."""

    def __init__(self, message: str, *, role: str, model: str, error: str, attempts: int, content: str | None):
        super().__init__(message, role=role, model=model)
        self.error, self.attempts, self.content = error, attempts, content


class ReplyCutError(StructuredOutputError):
    """A reply was cut at its token limit and the caller asked to be told at once
    (``structured(..., split_on_cut=True)``): it asks for a smaller part instead."""


@dataclass
class ToolCallRequest:
    """A tool call the model asked for. ``arguments`` is None when ``raw_arguments`` is not a JSON object."""

    id: str
    name: str
    arguments: dict | None
    raw_arguments: str


@dataclass
class ChatResult:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    model: str = ""
    cached_prompt_tokens: int = 0  # usage.prompt_tokens_details.cached_tokens, when the server says it
    reply_limit: int | None = None  # the limit the request asked: under the configured one when lowered to fit

    def message(self) -> dict[str, Any]:
        """This reply as an assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.raw_arguments}}
                                     for c in self.tool_calls]
        return message


class LLMClient:
    def __init__(self, settings: LLMSettings, usage: Usage | None = None, cache: ResponseCache | None = None):
        self.settings = settings.validate()
        self.usage = usage if usage is not None else Usage()
        self._owns_cache = cache is None and settings.cache_path is not None
        self.cache = cache if cache is not None else (
            ResponseCache(settings.cache_path) if settings.cache_path is not None else None)
        self._slots = limiter_for(settings.endpoint, settings.model, settings.rpm, settings.tpm,
                                  settings.max_concurrency)
        # every response, also those the openai client retries by itself, tells the limiter how the
        # endpoint is doing (a 429 and its Retry-After, or a success)
        http = bounded_http_client(on_response=self._observe)  # each attempt: a total deadline, a size cap
        self._openai = openai.OpenAI(base_url=settings.endpoint, api_key=settings.api_key or PLACEHOLDER_KEY,
                                     timeout=settings.timeout, max_retries=settings.max_retries, http_client=http)
        self._lock = threading.Lock()
        self._served_windows: dict[str, int] | None = None
        self._server_tokens: ServerTokens | None = None  # the server's tokenizer route, once /v1/models told

    # -- chat ---------------------------------------------------------------------------------

    def chat(self, role: str, messages: Sequence[dict], *, tools: list[dict] | None = None,
             tool_choice: str | dict | None = None, temperature: float | None | object = SETTINGS,
             max_tokens: int | None = None, response_format: dict | None = None) -> ChatResult:
        """One chat completion for ``role`` (its model from the settings), shaped for the endpoint
        (see ``backends.llm.settings``): ``tool_choice`` is ``auto`` whenever tools are sent, the
        reply's token limit is always sent (under the parameter the model takes), the temperature
        only when the model takes one. A prompt that cannot fit the model's context window raises
        :class:`ContextLengthError` before anything is sent."""
        model = self.settings.model_for(role)
        request: dict[str, Any] = {"model": model, "messages": list(messages)}
        temperature = self.settings.temperature_for(model) if temperature is SETTINGS else temperature
        if temperature is not None:
            request["temperature"] = temperature
        said = prompt_tokens(messages)  # what any server counts, however it templates tools
        estimate = said + (count_tokens(json.dumps(tools)) if tools else 0)
        limit = self._reply_limit(role, model, max_tokens, estimate, messages, tools)
        request[self.settings.token_parameter_for(model)] = limit
        if tools:
            request["tools"] = tools
            request["tool_choice"] = tool_choice if tool_choice is not None else "auto"
            parallel = self.settings.parallel_tool_calls_for(model)
            if parallel is not None:
                request["parallel_tool_calls"] = parallel
        elif tool_choice is not None:
            request["tool_choice"] = tool_choice
        if response_format is not None:
            request["response_format"] = response_format
        extra = self.settings.extra_body_for(model)
        if extra:  # the client sends it as the openai client's extra_body; the cache keys on it too
            request["extra_body"] = extra
        key = None
        if self.cache is not None:
            key = request_key({"endpoint": self.settings.endpoint, "api": "chat.completions", **request})
            hit = self.cache.get(key)
            try:
                result = _chat_result(hit, model, cached=True) if hit is not None else None
            except ReplyShapeError:
                result = None  # an entry no reply should have made: ask the endpoint again
            if result is not None:
                self.usage.add(role, result.prompt_tokens, result.completion_tokens, cached=True, model=model)
                result.reply_limit = limit
                return result
        data, result = self._reply(role, model, lambda api: api.chat.completions.with_raw_response.create(**request),
                                   lambda data: _chat_result(data, model, cached=False), tokens=estimate,
                                   seconds=attempt_seconds(self.settings.timeout, estimate, limit))
        self.usage.add(role, result.prompt_tokens, result.completion_tokens, model=model,
                       cached_prompt=result.cached_prompt_tokens)
        self._slots.spent(result.prompt_tokens + result.completion_tokens - estimate)
        read = result.prompt_tokens + result.cached_prompt_tokens  # some servers count only uncached ones
        if said >= TRUNCATION_MIN_TOKENS and 0 < read < said * TRUNCATION_SHARE:
            raise ContextLengthError(
                f"{role}: model {model} at {self.settings.endpoint} read {read:,} prompt tokens of "
                f"about {said:,} sent: the server cut the prompt to fit its context; set context_window for "
                f"this model (or give the server a larger context)", role=role, model=model,
                needed=said, window=read)
        if key is not None:
            assert self.cache is not None  # a key is made only for a cache
            self.cache.put(key, data)
        result.reply_limit = limit
        return result

    def structured(self, role: str, messages: Sequence[dict], schema: dict, *, max_repairs: int = 2,
                   split_on_cut: bool = False, **chat_kwargs: Any) -> dict:
        """A JSON value valid against ``schema``, repaired up to ``max_repairs`` times: after a bad
        reply (invalid JSON, a schema violation, or a reply cut off at the token limit) the reply and a
        user message quoting the exact error are appended and the model is asked again, under the
        same limit (a cut reply resent with a higher one costs its text twice; a long output is
        asked for in parts that fit). With ``split_on_cut`` a cut reply raises
        :class:`ReplyCutError` at once: the caller asks for a smaller part."""
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"{role}: the output schema itself is invalid: {exc.message}") from None
        validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        conversation = list(messages)
        model = self.settings.model_for(role)
        if "response_format" not in chat_kwargs:
            chat_kwargs["response_format"] = self.response_format(role, schema)
        error, content, attempts = "", None, 0
        for _ in range(max_repairs + 1):
            attempts += 1
            result = self.chat(role, conversation, **chat_kwargs)
            content = result.content
            value, error = check_reply(result, validator)
            if not error:
                return value
            if result.finish_reason == "length" and split_on_cut:
                raise ReplyCutError(f"{role}: model {model} reached the reply limit of {result.reply_limit} tokens "
                                    f"before the JSON was complete", role=role, model=model, error=error,
                                    attempts=attempts, content=content)
            conversation = [*conversation, {"role": "assistant", "content": content or ""},
                            {"role": "user", "content": repair_prompt(error)}]
        raise StructuredOutputError(
            f"{role}: model {model} gave no valid JSON after {attempts} attempt(s) ({max_repairs} repair(s)); "
            f"last error: {error}", role=role, model=model, error=error, attempts=attempts, content=content)

    def response_format(self, role: str, schema: dict) -> dict | None:
        """The ``response_format`` that holds a reply of ``role`` to ``schema``, as the role's model's
        ``structured_output`` setting asks (None: none is sent)."""
        model = self.settings.model_for(role)
        return response_format_for(self.settings.structured_output_for(model), role, schema,
                                   strict=self.settings.strict_schema_for(model))

    def reply_tokens(self, role: str) -> int:
        """The reply limit ``role``'s requests are sent with (its model's ``max_tokens`` setting): what
        a long output's parts are sized to fit."""
        return self.settings.max_tokens_for(role, self.settings.model_for(role))

    def _observe(self, response: Any) -> None:
        if response.status_code >= 500 and response.headers.get("content-type", "").startswith("application/json"):
            response.read()  # small (the transport caps it): a server's own words about its context
            if _CONTEXT_WORDS.search(response.text[:4000]):
                raise ServerContextError(response.text[:4000])  # not retried: the same prompt cannot fit
        if response.status_code == 429:
            self._slots.backed_off(retry_after_seconds(response.headers))
        elif response.status_code < 400:
            self._slots.succeeded()

    # -- preflight -----------------------------------------------------------------------------

    def preflight(self, models: Iterable[str] | None = None, seconds: float = PREFLIGHT_SECONDS,
                  routes: Iterable[str] = ("chat",), embedding_model: str | None = None,
                  wait: float | None = None) -> list[str]:
        """Check, before any work, that the endpoint answers, takes the key, serves ``models``
        (default: every model the settings name) and takes each of ``routes`` (chat, tools,
        embeddings) as the run will send them (:mod:`backends.llm.preflight`). Raises
        :class:`PreflightError` with one line saying what is wrong, within about ``seconds`` (plus
        ``wait`` for a local server that is still starting); returns warnings, one line each, about
        what passed but looks wrong."""
        from backends.llm.preflight import Refused, check

        notes: list[str] = []
        try:
            windows, dialect = check(self, models, seconds, routes, embedding_model, wait, notes)
        except Refused as exc:
            raise PreflightError(str(exc)) from None
        with self._lock:
            self._served_windows = windows
            self._server_tokens = ServerTokens(self.settings.endpoint, dialect)
        self._fit_slots(dialect)
        if dialect == LLAMA and busy_now(self._openai, self.settings.endpoint, LLAMA) is None:
            notes.append(f"{self.settings.endpoint}: the server does not show its slots (GET /slots; started with "
                         "--no-slots?), so an attempt that timed out is sent again without waiting for the server "
                         "to finish it: start it without --no-slots, or give a slow server a longer timeout setting "
                         "(--llm-set timeout=600)")
        return notes

    # -- context window ------------------------------------------------------------------------

    def context_window(self, model: str) -> int | None:
        """``model``'s context window: the settings', else what ``/v1/models`` says (asked once per
        client; a server that says nothing, or cannot be asked, gives None: unknown)."""
        configured = self.settings.context_window_for(model)
        if configured is not None:
            return configured
        with self._lock:
            if self._served_windows is None:
                self._ask_server()
            assert self._served_windows is not None  # _ask_server sets it
            return self._served_windows.get(model, self._served_windows.get(ANY_MODEL))

    def _ask_server(self) -> None:
        """What ``/v1/models`` states: the windows, and the server's tokenizer route (under the lock)."""
        # a listing, not a model's work: no timeout setting
        api = self._openai.with_options(max_retries=0, timeout=10.0)
        try:
            data = loads_limited(api.models.with_raw_response.list().content)
        except (openai.OpenAIError, JSONLimitError):
            data = None
        self._served_windows = stated_windows(api, self.settings.endpoint, data) if data is not None else {}
        self._server_tokens = ServerTokens(self.settings.endpoint, dialect_of(data))
        self._fit_slots(self._server_tokens.dialect)

    def _fit_slots(self, dialect: str | None) -> None:
        """No more requests in flight than a llama.cpp server has slots (``/props`` ``total_slots``)."""
        if dialect == LLAMA:
            api = self._openai.with_options(max_retries=0, timeout=10.0)
            slots = props_slots(api, self.settings.endpoint)
            if slots is not None:
                self._slots.cap(slots)

    def server_count(self, model: str, messages: Sequence[dict], tools: list[dict] | None = None) -> int | None:
        """The prompt tokens the server's own tokenizer makes of this request (llama.cpp, vLLM; see
        :mod:`backends.llm.server_tokens`), None where it has none."""
        with self._lock:
            if self._server_tokens is None:
                self._ask_server()
            counter = self._server_tokens
            assert counter is not None  # _ask_server sets it
        return counter.count(self._openai, model, messages, tools)

    def fits(self, role: str, messages: Sequence[dict], tools: list[dict] | None = None,
             reply: int = MIN_REPLY_TOKENS) -> bool:
        """Whether ``messages`` (and ``tools``) leave room for a reply of ``reply`` tokens in the
        role model's context window (True when the window is unknown): by the estimate with its
        margin, or, when that says no, by the server's own count where it has one."""
        model = self.settings.model_for(role)
        window = self.context_window(model)
        if window is None or with_margin(prompt_tokens(messages, tools)) + reply <= window:
            return True
        counted = self.server_count(model, messages, tools)
        return counted is not None and counted + reply <= window

    def _reply_limit(self, role: str, model: str, max_tokens: int | None, estimate: int,
                     messages: Sequence[dict] = (), tools: list[dict] | None = None) -> int:
        """The configured reply limit, lowered to what the prompt leaves of the model's window
        (:func:`backends.llm.window.reply_limit`): by the estimate when the limit fits beside it,
        else by the server's own count where it has one; :class:`ContextLengthError`, naming the
        setting, when that is under the least reply a request keeps."""
        configured = max_tokens if max_tokens is not None else self.settings.max_tokens_for(role, model)
        window = self.context_window(model)
        exact = None
        if window is not None and with_margin(estimate) + configured > window:
            exact = self.server_count(model, messages, tools)
        try:
            return reply_limit(configured, window, estimate if exact is None else exact, exact=exact is not None)
        except NoRoom as exc:
            assert window is not None
            source = ("the window is the context_window setting: raise it if the server's context is larger"
                      if self.settings.context_window_for(model) is not None else
                      "the window is the server's: give it a larger context (llama.cpp: -c) or shorten the prompt")
            left = (f"leaves {exc.room:,} tokens of the {window:,}-token context window of {model} for the reply, "
                    f"under the least of {exc.floor:,}" if exc.room > 0 else
                    f"does not fit the {window:,}-token context window of {model}")
            size = f"about {estimate:,} tokens" if exact is None else f"{exact:,} tokens by the server's count"
            raise ContextLengthError(f"{role}: the prompt ({size} with the tools) {left}; {source}", role=role,
                                     model=model, needed=window - exc.room + exc.floor, window=window) from None

    # -- embeddings ---------------------------------------------------------------------------

    def embed(self, texts: Sequence[str], model: str | None = None) -> list[list[float]]:
        """One vector per text, in order (batched; cached when the cache is configured)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not one string")
        model = model or self.settings.embedding_model
        vectors: list[list[float]] = []
        items = list(texts)
        for start in range(0, len(items), EMBEDDING_BATCH):
            batch = items[start:start + EMBEDDING_BATCH]
            request: dict[str, Any] = {"model": model, "input": batch, "encoding_format": "float"}
            key = None
            if self.cache is not None:
                key = request_key({"endpoint": self.settings.endpoint, "api": "embeddings", **request})
                hit = self.cache.get(key)
                try:
                    found = _embedding_vectors(hit, len(batch)) if hit is not None else None
                except ReplyShapeError:
                    found = None
                if found is not None:
                    vectors.extend(found[0])
                    self.usage.add(EMBEDDINGS_ROLE, 0, 0, cached=True, model=model)
                    continue
            data, (batch_vectors, tokens) = self._reply(
                EMBEDDINGS_ROLE, model, lambda api: api.embeddings.with_raw_response.create(**request),
                lambda data: _embedding_vectors(data, len(batch)), tokens=(counted := sum(map(count_tokens, batch))),
                seconds=attempt_seconds(self.settings.timeout, counted, 0))
            vectors.extend(batch_vectors)
            self.usage.add(EMBEDDINGS_ROLE, tokens, 0, model=model)
            if key is not None:
                assert self.cache is not None  # a key is made only for a cache
                self.cache.put(key, data)
        return vectors

    # -- plumbing -----------------------------------------------------------------------------

    def _reply(self, role: str, model: str, send: Callable[[openai.OpenAI], Any],
               read: Callable[[dict], Any], tokens: int = 0, seconds: float | None = None) -> tuple[dict, Any]:
        """``(body, read(body))`` of the first reply that parses and has the expected shape.

        One budget of ``max_retries`` covers both layers: the openai client's own retries (on
        429/5xx, lost connections), asking again after a timeout and after a malformed 200, so a call
        makes at most ``max_retries + 1`` requests whatever goes wrong."""
        left = self.settings.max_retries
        attempts = 0
        problem = ""
        while True:
            raw, retries_taken = self._call(role, model, send, left, tokens, seconds)
            attempts += retries_taken + 1
            left -= retries_taken
            try:
                data = loads_limited(raw)
                return data, read(data)
            except JSONLimitError as exc:
                problem = f"the response body is {exc}"
            except ReplyShapeError as exc:
                problem = str(exc)
            if left <= 0:
                break
            left -= 1
        raise MalformedReplyError(f"{role}: model {model} at {self.settings.endpoint}: malformed reply after "
                                  f"{attempts} attempt(s): {problem}", role=role, model=model, problem=problem,
                                  attempts=attempts)

    def _call(self, role: str, model: str, send: Callable[[openai.OpenAI], Any], retries: int,
              tokens: int = 0, seconds: float | None = None) -> tuple[bytes, int]:
        """The body of one call (with up to ``retries`` retries) and the number of retries it took;
        ``tokens``: the prompt's estimate, taken from the token budget; ``seconds``: what an attempt
        gets (:func:`backends.llm.patience.attempt_seconds`). The openai client retries what never
        reached the server or was answered with an error; an attempt whose reply did not come in
        time is asked again here, once the server has room (it may still be working on it)."""
        where = f"{role}: model {model} at {self.settings.endpoint}"
        seconds = seconds or self.settings.timeout
        used = 0  # attempts made
        with self._slots.slot(tokens):
            while True:
                mark = attempts_sent()
                try:
                    response = send(self._openai.with_options(max_retries=max(0, retries - used), timeout=seconds))
                    return response.content, used + attempts_sent() - mark - 1
                except openai.APITimeoutError:
                    used += max(1, attempts_sent() - mark)
                    self._slots.backed_off()
                    if used > retries:
                        scaled = "" if seconds <= self.settings.timeout else (
                            f"; the setting's {self.settings.timeout:g} s for each {TIMEOUT_TOKENS:,} tokens of "
                            "prompt and reply limit")
                        raise LLMError(f"{where}: no complete reply within the timeout setting ({seconds:g} s an "
                                       f"attempt, {used} attempt(s){scaled}); a slow server needs more: --llm-set "
                                       f"timeout=SECONDS", role=role, model=model, timed_out=True,
                                       transient=True) from None
                    self._await_room(where, role, model, seconds, used)
                except openai.OpenAIError as exc:
                    raise self._failure(exc, where, role, model, retries) from None

    def _await_room(self, where: str, role: str, model: str, seconds: float, attempts: int) -> None:
        """Before asking again after a timeout: wait (up to ``seconds``) for the server to have
        room, where it says (llama.cpp's /slots, vLLM's /metrics), else back off as the openai client does."""
        with self._lock:
            if self._server_tokens is None:
                self._ask_server()
            assert self._server_tokens is not None  # _ask_server sets it
            dialect = self._server_tokens.dialect
        try:
            if wait_for_room(self._openai, self.settings.endpoint, dialect, seconds):
                return
        except StillBusy as exc:
            raise LLMError(f"{where}: no reply within {seconds:g} s, and {seconds:g} s later the server was still "
                           f"busy ({exc.busy}), perhaps with the abandoned request, so it was not sent again; a slow "
                           f"server needs a longer timeout setting: --llm-set timeout=SECONDS", role=role,
                           model=model, timed_out=True, transient=True) from None
        time.sleep(min(8.0, 0.5 * 2 ** (attempts - 1)))

    @staticmethod
    def _failure(exc: openai.OpenAIError, where: str, role: str, model: str, retries: int) -> LLMError:
        """The :class:`LLMError` a failed call raises (after the openai client's retries)."""
        if isinstance(exc, ReplyTooLarge):
            return LLMError(f"{where}: {exc}", role=role, model=model, status=200)
        if isinstance(exc, ServerContextError):
            return ContextLengthError(f"{where}: the server ran out of context: {exc}; set context_window for this "
                                      f"model (or give the server a larger context)", role=role, model=model,
                                      status=500)
        if isinstance(exc, openai.APIStatusError):
            text = _error_text(exc)
            if exc.status_code in (400, 413, 422) and _CONTEXT_WORDS.search(text):
                return ContextLengthError(f"{where}: the prompt does not fit the model's context: HTTP "
                                          f"{exc.status_code}: {text}", role=role, model=model, status=exc.status_code)
            return LLMError(f"{where}: HTTP {exc.status_code}: {text}{fix_for(text, model)} (max_retries={retries})",
                            role=role, model=model, status=exc.status_code,
                            transient=exc.status_code in (408, 409, 429) or exc.status_code >= 500,
                            refused=is_refusal(exc.status_code))
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return LLMError(f"{where}: cannot connect ({cause.__class__.__name__}: {cause}) after {retries + 1} "
                            f"attempt(s)", role=role, model=model, transient=True)
        return LLMError(f"{where}: {exc.__class__.__name__}: {exc}", role=role, model=model)

    @classmethod
    def from_options(cls, options: Any) -> "LLMClient":
        """A client from a run's options (settings file < environment < flags, ``--llm-set``
        included; see ``settings_for``), counting usage, with the response cache at
        ``options.cache_path`` (None: no cache)."""
        cache_path = getattr(options, "cache_path", None)
        cache = ResponseCache(Path(cache_path)) if cache_path else None
        return cls(settings_for(options), usage=Usage(), cache=cache)

    def close(self) -> None:
        self._openai.close()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def prompt_tokens(messages: Sequence[dict], tools: list[dict] | None = None) -> int:
    """About how many tokens a request's messages and tool definitions take (``backends.tokens``),
    with a few per message for the chat format."""
    total = 0
    for message in messages:
        total += 4
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            total += count_tokens(content)
        elif isinstance(content, list):
            total += sum(count_tokens(str(part.get("text", ""))) for part in content if isinstance(part, dict))
        for call in message.get("tool_calls") or []:
            total += count_tokens(json.dumps(call))
    if tools:
        total += count_tokens(json.dumps(tools))
    return total


def response_format_for(mode: str, role: str, schema: dict, strict: bool = False) -> dict | None:
    """The ``response_format`` asking a server to keep to ``schema`` (``json_schema``): with
    ``strict``, its strict form sent with ``strict: true`` (:mod:`backends.llm.strict_schema`; the
    schema itself, not strict, when it has no strict form), else the schema itself; any JSON object
    (``json_object``); or nothing (``none``)."""
    if mode == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", role)[:64] or "reply"
        strict_schema = strict_form(schema) if strict else None
        schema = root_object(schema)  # a root that only names a definition: that definition, as servers expect
        return {"type": "json_schema", "json_schema": {"name": name, "schema": for_grammar(strict_schema or schema),
                                                       "strict": strict_schema is not None}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def for_grammar(schema: Any) -> Any:
    """``schema`` as sent for constrained decoding: a bound of more than ``GRAMMAR_MAX_REPEAT``
    repetitions (``maxItems: 10000``) is left out, since grammar engines unroll bounds and refuse
    large ones (llama.cpp: "number of repetitions exceeds sane defaults"); the reply is still
    validated against the whole schema."""
    if isinstance(schema, list):
        return [for_grammar(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: for_grammar(value) for key, value in schema.items()
            if not (key in _REPEAT_BOUNDS and isinstance(value, int) and value > GRAMMAR_MAX_REPEAT)}


def _kind(value: Any) -> str:
    """``json_kind`` with its article: "a string", "an array", "null"."""
    kind = json_kind(value)
    return kind if kind == "null" else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


_EXPECTED = {str: "a string", int: "an integer", list: "an array", dict: "an object"}


def _field(container: dict, name: str, where: str, kinds: tuple[type, ...], required: bool = False) -> Any:
    """``container[name]`` when it is one of ``kinds`` (or absent/null and not ``required``)."""
    value = container.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kinds) or isinstance(value, bool):
        got = "missing" if name not in container else _kind(value)
        raise ReplyShapeError(f"'{where}{name}' is {got}, not {' or '.join(_EXPECTED[k] for k in kinds)}")
    return value


def _check_object(data: Any) -> None:
    if not isinstance(data, dict):
        raise ReplyShapeError(f"the response body is {_kind(data)}, not an object")


def _count(usage: dict, name: str) -> int:
    value = _field(usage, name, "usage.", (int,))
    if value is not None and value < 0:
        raise ReplyShapeError(f"'usage.{name}' is negative ({value})")
    return value or 0


def _chat_result(data: dict, model: str, cached: bool) -> ChatResult:
    """The reply in ``data`` (a chat.completion body); :class:`ReplyShapeError` names the first
    field that does not have the OpenAI shape."""
    _check_object(data)
    choices = _field(data, "choices", "", (list,), required=True)
    if not choices:
        raise ReplyShapeError("'choices' is empty")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ReplyShapeError(f"'choices[0]' is {_kind(choice)}, not an object")
    message = _field(choice, "message", "choices[0].", (dict,), required=True)
    where = "choices[0].message."
    content = _field(message, "content", where, (str,))
    calls = []
    for i, call in enumerate(_field(message, "tool_calls", where, (list,)) or []):
        at = f"{where}tool_calls[{i}]"
        if not isinstance(call, dict):
            raise ReplyShapeError(f"'{at}' is {_kind(call)}, not an object")
        function = _field(call, "function", f"{at}.", (dict,), required=True)
        name = _field(function, "name", f"{at}.function.", (str,), required=True)
        raw = _field(function, "arguments", f"{at}.function.", (str,)) or ""
        call_id = _field(call, "id", f"{at}.", (str,)) or ""
        calls.append(ToolCallRequest(id=call_id, name=name, arguments=_arguments(raw), raw_arguments=raw))
    usage = _field(data, "usage", "", (dict,)) or {}
    details = cast("dict[str, Any]", usage.get("prompt_tokens_details")) \
        if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    cached_tokens = details.get("cached_tokens")
    cached_tokens = cached_tokens if isinstance(cached_tokens, int) and not isinstance(cached_tokens, bool) \
        and cached_tokens > 0 else 0
    reply_model = _field(data, "model", "", (str,))
    return ChatResult(content=content, tool_calls=calls,
                      finish_reason=_field(choice, "finish_reason", "choices[0].", (str,)) or "stop",
                      prompt_tokens=_count(usage, "prompt_tokens"),
                      completion_tokens=_count(usage, "completion_tokens"),
                      cached=cached, model=reply_model or model, cached_prompt_tokens=cached_tokens)


def _arguments(raw: str) -> dict | None:
    """Tool-call arguments as an object, or None when they are not a JSON object within the limits
    (the caller tells the model; a bad call is the model's mistake, not a broken reply)."""
    if not raw.strip():
        return {}
    try:
        value = loads_limited(raw)
    except JSONLimitError:
        return None
    return value if isinstance(value, dict) else None


def _embedding_vectors(data: dict, expected: int) -> tuple[list[list[float]], int]:
    """The vectors of an embeddings body in input order, and its prompt tokens."""
    _check_object(data)
    rows = _field(data, "data", "", (list,), required=True)
    if len(rows) != expected:
        raise ReplyShapeError(f"'data' has {len(rows)} embeddings for {expected} inputs")
    by_index: dict[int, list[float]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ReplyShapeError(f"'data[{i}]' is {_kind(row)}, not an object")
        index = _field(row, "index", f"data[{i}].", (int,))
        index = i if index is None else index
        vector = _field(row, "embedding", f"data[{i}].", (list,), required=True)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector):
            raise ReplyShapeError(f"'data[{i}].embedding' holds something that is not a number")
        if index in by_index or not 0 <= index < expected:
            raise ReplyShapeError(f"'data[{i}].index' is {index}: repeated or out of range")
        by_index[index] = [float(x) for x in vector]
    usage = _field(data, "usage", "", (dict,)) or {}
    return [by_index[i] for i in range(expected)], _count(usage, "prompt_tokens")


# -- structured output ----------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)```", re.S)
_LINE_START_BRACE = re.compile(r"^[ \t]*\{", re.M)


class JSONExtractionError(ValueError):
    pass


# A reasoning model served without a reasoning parser (llama.cpp, Ollama, vLLM without
# --reasoning-parser) puts its thinking in the message text, before the answer.
_REASONING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>\s*", re.S | re.I)


def without_reasoning(text: str) -> str:
    """``text`` without the reasoning block(s) a model wrote before its answer ("<think>...</think>"):
    what it reasoned is not what it answered, and its braces are not the answer's JSON."""
    while (match := _REASONING.match(text)) is not None:
        text = text[match.end():]
    return text


def extract_json(text: str) -> Any:
    """The JSON value in a reply (after any reasoning block, ``without_reasoning``): the whole text,
    else the first ``` / ```json fenced block that parses, else a top-level object with prose around
    it (starting at the first ``{`` or at a line that starts with ``{``). Raises
    :class:`JSONExtractionError` with the most relevant parse error."""
    text = without_reasoning(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        whole_error: json.JSONDecodeError = exc
    fence_error = None
    for match in _FENCE.finditer(text):
        try:
            return json.loads(match.group(1))
        except json.JSONDecodeError as exc:
            fence_error = fence_error or exc
    decoder = json.JSONDecoder()
    starts = sorted({m.end() - 1 for m in _LINE_START_BRACE.finditer(text)} | {text.find("{")} - {-1})
    object_error = None
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            object_error = object_error or exc
            continue
        if isinstance(value, dict):
            return value
    error = fence_error or object_error
    if error is None:
        if not text.strip():
            raise JSONExtractionError("the reply is empty; expected a JSON object")
        if "{" not in text and "[" not in text:
            raise JSONExtractionError("no JSON object found in the reply")
        error = whole_error
    raise JSONExtractionError(f"invalid JSON: {error}")


def check_reply(result: ChatResult, validator: Draft202012Validator) -> tuple[Any, str]:
    """``(value, "")`` for a usable reply, else ``(None, error text)``."""
    if result.finish_reason == "length":
        return None, ("the reply was cut off at the token limit (finish_reason 'length') before the JSON was "
                      "complete; give a shorter, complete JSON object")
    if result.content is None:
        if result.tool_calls:
            return None, "expected a JSON object in the message text, got tool calls instead"
        return None, "the reply is empty; expected a JSON object"
    try:
        value = unstrict(extract_json(result.content), validator.schema)  # nulls a strict schema put in go
    except JSONExtractionError as exc:
        return None, str(exc)
    errors = list(validator.iter_errors(value))
    if not errors:
        return value, ""
    return None, schema_error_text(errors)


def schema_error_text(errors: Iterable[Any], limit: int = 5) -> str:
    """The best-matching schema violation first, then up to ``limit - 1`` others, each with the
    instance path and the schema path."""
    errors = list(errors)
    best = best_match(errors)
    ordered = [best] + sorted((e for e in errors if e is not best), key=lambda e: (e.json_path, e.message))
    lines = [f"schema violation at {e.json_path}: {e.message} (schema path: "
             f"{'/'.join(str(p) for p in e.schema_path) or '(root)'})" for e in ordered[:limit]]
    if len(ordered) > limit:
        lines.append(f"... and {len(ordered) - limit} more")
    return "; ".join(lines)


def repair_prompt(error: str) -> str:
    return (f"Your previous reply could not be used: {error}\n"
            "Reply again with only the corrected JSON object (no prose, no code fences), valid against the "
            "JSON Schema you were given.")
