"""A local OpenAI-compatible endpoint for tests and demos: real HTTP on 127.0.0.1, scripted answers,
injectable faults.

``FakeLLMServer`` serves ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and
``GET /v1/models`` from the worker threads of :class:`backends.fake_llm.listener.Listener` (a
listen backlog of 1,024, one deadline for each request's head and body, HTTP 503 with Retry-After
when busy, never a reset). Chat answers come from a *responder*: a callable that takes the parsed
request body and returns a :class:`Reply`.

Faults, chosen per request by the ``X-Fake-Fault`` header or queued with
:meth:`FakeLLMServer.queue_faults` (one per chat request, in order). A fault changes the one answer
it is chosen for and nothing else: the next request, with the same messages or with the broken
reply in its history, is answered as if the fault had never happened.

- ``malformed``: the reply's content with its last ``}`` removed and a sentence appended
  (tool-call arguments are broken the same way);
- ``fenced``: the content wrapped in a ```json fence after a line of prose;
- ``truncated``: the content (or tool-call arguments) cut in half, finish_reason ``length``;
- ``429``: HTTP 429, ``Retry-After: <retry_after>`` and an OpenAI-style error body;
- ``500``: HTTP 500 with an OpenAI-style error body;
- ``slow``: wait ``slow_seconds``, then answer normally.

Reply faults answer HTTP 200 with a body that breaks the OpenAI format, for testing clients:
``message_string`` (``choices[0].message`` is the content string), ``choices_empty``,
``choices_object`` (``choices`` is an object), ``content_object`` (``message.content`` is an
object), ``tool_calls_object`` (``message.tool_calls`` is an object), ``function_missing`` (tool
calls without ``function``), ``arguments_object`` (tool-call arguments as an object, not a string),
``arguments_deep`` (arguments nested 100,000 levels), ``usage_strings`` (usage counts as strings),
``body_array`` (the answer inside a JSON array), ``body_deep`` (a body nested 100,000 levels) and
``body_not_json``. The tool-call faults give a reply without tool calls one; on embeddings only
``usage_strings`` and the ``body_*`` faults apply.

``profile`` (see :mod:`backends.fake_llm.profiles`) makes the server behave like one kind of
real server where they differ: refused parameters, tools ignored without ``tool_choice``, a
context window that overflows with HTTP 400 or is cut silently, no embeddings.

The ``llama-cpp`` and ``vllm`` profiles also serve those servers' tokenizer routes (``POST /tokenize``,
and llama.cpp's ``POST /apply-template``: :mod:`backends.fake_llm.tokenize`).

``usage.prompt_tokens_details.cached_tokens`` says how much of each prompt a prefix cache would
have held (see :mod:`backends.fake_llm.prefix_cache`).

``slots=N`` makes it work on N chat requests at once (the others wait, and a request whose client
gave up is worked on to the end, as llama.cpp does; a ``slow`` fault holds its slot); the
``llama-cpp`` profile shows them in ``GET /slots``, the ``vllm`` one in ``GET /metrics``.

``fail_model="name"`` makes every request for that model answer 500 (a persistently failing task).
Everything except the timing of ``slow`` and ``429`` is deterministic: ``created`` is a fixed
number, completion ids are a hash of the request, tool-call ids are ``call_<n>`` numbered along the
conversation.

Requests come from strangers (``homer fake-llm --host 0.0.0.0``), so bad input is a JSON error,
never a traceback: a bad ``Content-Length`` or body is 400, a body over ``MAX_REQUEST_BYTES`` is 413,
JSON nested deeper than ``MAX_JSON_DEPTH`` is refused before it is parsed, and embeddings are bounded
in inputs and dimensions. The server keeps the last ``keep_requests`` requests (and at most
``MAX_RECORDED_BYTES`` of them), so a long run does not grow without bound.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Callable, cast

from backends.fake_llm.listener import HeadFirstHandler, Listener
from backends.fake_llm.prefix_cache import PrefixCache
from backends.fake_llm.profiles import Profile, profile_named, reply_limit
from backends.fake_llm.slots import Slots
from backends.fake_llm.structured import strict_problem, with_nulls
from backends.fake_llm.tokenize import ROUTES as TOKENIZER_ROUTES
from backends.fake_llm.tokenize import handle as handle_tokenizer
from backends.fake_llm.wire import (
    EMBEDDING_DIMENSIONS,
    REPLY_FAULTS,
    FaultError,
    apply_reply_fault,
    bad_request,
    break_json,
    chat_template,
    check_chat_request,
    check_embeddings_request,
    check_model,
    message_text,
    prompt_tokens_of,
)
from backends.llm.strict_json import JSONLimitError, json_kind, loads_limited
from backends.tokens import count_tokens, first_tokens
from office_env.limits import (
    MAX_REQUEST_BYTES,
    MiB,
)

FAULTS = ("malformed", "fenced", "truncated", "429", "500", "slow", *REPLY_FAULTS)
DEFAULT_MODEL = "fake-model"
LLAMA_OWNER = "llamacpp"           # owned_by of llama.cpp's /v1/models rows
LLAMA_TRAINING_WINDOW = 131_072    # meta.n_ctx_train of the llama-cpp profile's rows
CREATED = 1_700_000_000  # a fixed timestamp: answers do not depend on the clock
FENCE_PROSE = "Sure! Here is the JSON you asked for:"
MAX_RECORDED_REQUESTS = 1_000        # requests kept for inspection, newest last
MAX_RECORDED_BYTES = 64 * MiB        # bodies and headers of the kept requests, as parsed (estimated)
MAX_SEEN_MODELS = 1_000              # model names /v1/models lists
MAX_KEPT_ERRORS = 100                # internal errors kept for inspection
READ_SECONDS = 30.0                  # a client that stops sending its request is dropped after this
MAX_DISCARD_BYTES = 64 * MiB         # of a refused body, read and thrown away before closing
DISCARD_SECONDS = 5.0
_DIGITS_RE = re.compile(r"[0-9]+")


@dataclass
class Reply:
    """What a responder returns. ``tool_calls`` items are ``{"name": str, "arguments": dict}``
    (``arguments`` may also be a ready JSON string, sent as is)."""

    content: str | None = None
    tool_calls: list[dict] | None = None
    finish_reason: str = "stop"


Responder = Callable[[dict], "Reply | str"]


@dataclass
class RecordedRequest:
    """One request as the server saw it. ``started``/``ended`` are ``time.monotonic()`` readings
    (arrival, and the moment the answer was ready to send); ``status`` is the HTTP status answered;
    ``size`` estimates the memory its body and headers take (what counts against ``MAX_RECORDED_BYTES``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    fault: str | None = None
    started: float = 0.0
    ended: float | None = None
    status: int | None = None
    size: int = 0


def echo_responder(body: dict) -> Reply:
    """The default responder: ``{"echo": <last user message>}`` as JSON content."""
    last = ""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            last = message_text(message)
    return Reply(content=json.dumps({"echo": last}))


def scripted(*replies: "Reply | str") -> Responder:
    """A responder that answers with ``replies`` in order (thread-safe); once they run out every
    further request answers HTTP 500 ("scripted responder exhausted")."""
    pending = deque(replies)
    lock = threading.Lock()

    def responder(body: dict) -> Reply | str:
        with lock:
            if not pending:
                raise RuntimeError("scripted responder exhausted")
            return pending.popleft()

    return responder


def embedding_for(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic unit vector from the SHA-256 of the text."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{counter}:{text}".encode("utf-8")).digest()
        for i in range(0, len(digest), 4):
            (number,) = struct.unpack(">I", digest[i:i + 4])
            values.append(number / 0xFFFFFFFF * 2.0 - 1.0)
        counter += 1
    values = values[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _parsed_size(raw: bytes) -> int:
    """About the memory the parsed JSON of ``raw`` takes: its text, plus the objects that a body of
    many small values (``[[],[],...]``) makes out of a few bytes each."""
    return len(raw) + 96 * (raw.count(b"[") + raw.count(b"{")) + 48 * raw.count(b",")


def _within_limit(content: str | None, calls: list[dict[str, str]], limit: int
                  ) -> tuple[str | None, list[dict[str, str]], bool]:
    """The reply a server sends under a limit of ``limit`` tokens: the text, then the tool calls'
    names and arguments, up to the limit, and whether anything was cut."""
    left = limit
    if content is not None:
        kept = first_tokens(content, left)
        left -= count_tokens(kept)
        if kept != content:
            return kept, [], True
    out = []
    for call in calls:
        left -= count_tokens(call["name"]) + 1  # and what joins it to its arguments
        arguments = first_tokens(call["arguments"], max(0, left))
        out.append({**call, "arguments": arguments})
        left -= count_tokens(arguments)
        if arguments != call["arguments"] or left < 0:
            return content, out, True
    return content, out, False


class FakeLLMServer:
    """A real HTTP server speaking the OpenAI chat-completions, embeddings and models API.

    Use as a context manager (``with FakeLLMServer(responder) as server: ... server.url``) or call
    :meth:`start` and :meth:`stop`. ``port=0`` picks a free port.
    """

    def __init__(self, responder: Responder | None = None, host: str = "127.0.0.1", port: int = 0,
                 retry_after: float = 1.0, slow_seconds: float = 2.0, fail_model: str | None = None,
                 keep_requests: int = MAX_RECORDED_REQUESTS, profile: str | Profile = "default",
                 context_window: int | None = None, api_key: str | None = None,
                 served_models: list[str] | None = None, rate_limit: tuple[int, int] | None = None,
                 latency: float = 0.0, rate_window: float = 60.0, slots: int | None = None,
                 ignores_max_tokens: bool = False):
        if keep_requests < 1:
            raise ValueError(f"keep_requests must be at least 1, got {keep_requests}")
        self.responder: Responder = responder or echo_responder
        self.ignores_max_tokens = ignores_max_tokens  # a broken or hostile server: replies past the limit
        self.host = host
        self.port = port
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.fail_model = fail_model
        self.keep_requests = keep_requests
        self.profile = profile if isinstance(profile, Profile) else profile_named(profile)
        if context_window is not None:
            self.profile = replace(self.profile, context_window=context_window)
        self.api_key = api_key              # when set, every request must carry it (else HTTP 401)
        self.served_models = served_models  # when set, only these models answer (else HTTP 404)
        self.rate_limit = rate_limit        # (requests, tokens) per minute; over it: HTTP 429 + Retry-After
        self.latency = latency              # seconds every chat answer takes, like a model's time
        self.rate_window = rate_window      # the rate limit's window (a minute; shorter in tests)
        self._window: deque[tuple[float, bool, int]] = deque()  # (when, a request?, tokens) of the last 60 s
        self.throttled = 0                  # requests answered 429 by the rate limit
        self.admitted: deque[float] = deque(maxlen=10_000)  # when the rate limit let each request in
        self._lock = threading.Lock()
        self._requests: deque[RecordedRequest] = deque()
        self._recorded_bytes = 0
        self._chat_total = 0
        # what a prompt cache would hold: usage's cached_tokens
        self._prefix = PrefixCache(block=self.profile.cache_block, least=self.profile.cache_least)
        self._errors: deque[str] = deque(maxlen=MAX_KEPT_ERRORS)
        self._faults: deque[str] = deque()
        self._models: list[str] = list(served_models) if served_models else [DEFAULT_MODEL]
        self._stopping = threading.Event()
        self.slots = Slots(slots, self._stopping)  # chat requests worked on at once (None: no limit)
        self._httpd: Listener | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> "FakeLLMServer":
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = Listener((self.host, self.port), handler, on_error=self._internal_error)
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._stopping.clear()
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-llm-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping on a "slow" fault
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def listener(self) -> Listener | None:
        """The socket layer while serving (its ``refused`` and ``dropped`` counts), else None."""
        return self._httpd

    @property
    def url(self) -> str:
        """The base URL to give an OpenAI client, e.g. ``http://127.0.0.1:54321/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    # -- scripting and inspection -------------------------------------------------------------

    def queue_faults(self, *faults: str) -> None:
        """Apply these faults to the next chat requests, one per request, in order."""
        for fault in faults:
            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}: expected one of {', '.join(FAULTS)}")
        with self._lock:
            self._faults.extend(faults)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the last requests received (``keep_requests`` of them at most), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[str]:
        """Unexpected errors inside the server (a bug, not a bad request), newest last; each was
        answered 500 or dropped the connection, and none was printed."""
        with self._lock:
            return list(self._errors)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def chat_request_total(self) -> int:
        """Chat requests received since the start (or :meth:`reset`), also those no longer kept."""
        with self._lock:
            return self._chat_total

    def reset(self) -> None:
        """Forget recorded requests, queued faults and internal errors."""
        with self._lock:
            self._requests.clear()
            self._recorded_bytes = 0
            self._chat_total = 0
            self._faults.clear()
            self._errors.clear()

    @property
    def models(self) -> list[str]:
        with self._lock:
            return list(self._models)

    # -- request handling (called from handler threads) ----------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            self._recorded_bytes += request.size
            self._chat_total += request.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")
            while len(self._requests) > 1 and (len(self._requests) > self.keep_requests
                                               or self._recorded_bytes > MAX_RECORDED_BYTES):
                self._recorded_bytes -= self._requests.popleft().size

    def _internal_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(f"{exc.__class__.__name__}: {exc}"[:1000])

    def _check_access(self, headers: Any, model: Any = None) -> None:
        """HTTP 401 for a missing or wrong key (when the server has one), 404 for a model it does
        not serve (when it has a list)."""
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            raise FaultError(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        if model is not None and self.served_models is not None and model not in self.served_models \
                and not self.profile.any_model_name:
            raise FaultError(404, f"The model `{str(model)[:100]}` does not exist or you do not have access to it.",
                              "invalid_request_error", "model_not_found")

    def _see_model(self, model: Any) -> None:
        if self.served_models is not None:
            return
        if isinstance(model, str) and model:
            with self._lock:
                if model not in self._models and len(self._models) < MAX_SEEN_MODELS:
                    self._models.append(model)

    def _choose_fault(self, header: str | None, model: Any, chat: bool) -> str | None:
        if self.fail_model is not None and model == self.fail_model:
            return "500"
        if header:
            return header.strip().lower()
        if chat:
            with self._lock:
                if self._faults:
                    return self._faults.popleft()
        return None

    def _apply_transport_fault(self, fault: str | None) -> None:
        if fault == "429":
            seconds = self.retry_after
            text = str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))
            raise FaultError(429, f"Rate limit reached for fake requests; retry after {text} s.",
                              "requests", "rate_limit_exceeded", {"Retry-After": text})
        if fault == "500":
            raise FaultError(500, "The fake server had an error while processing your request.",
                              "server_error")
        if fault == "slow":
            self._stopping.wait(self.slow_seconds)

    def _admit(self, tokens: int) -> None:
        """The rate limit: at most ``rate_limit`` requests and tokens (prompt and completion) in any
        60 seconds; a request over it is HTTP 429 with the seconds until it would fit in
        ``Retry-After`` (and ``retry-after-ms``)."""
        if self.rate_limit is None:
            return
        rpm, tpm = self.rate_limit
        with self._lock:
            now = time.monotonic()
            while self._window and self._window[0][0] <= now - self.rate_window:
                self._window.popleft()
            requests = sum(1 for _, counted, _ in self._window if counted)
            used = sum(t for _, _, t in self._window)
            if requests + 1 <= rpm and used + tokens <= tpm:
                self._window.append((now, True, tokens))
                self.admitted.append(now)
                return
            self.throttled += 1
            wait = self.rate_window
            for stamp, counted, spent in self._window:  # oldest first: when enough of it has aged out
                requests -= counted
                used -= spent
                if requests + 1 <= rpm and used + tokens <= tpm:
                    wait = stamp + self.rate_window - now
                    break
        seconds = f"{max(0.001, wait):.3f}"
        raise FaultError(429, f"Rate limit reached: {rpm} requests and {tpm} tokens per minute; retry after "
                               f"{seconds} s.", "requests", "rate_limit_exceeded",
                          {"Retry-After": seconds, "retry-after-ms": str(int(max(1.0, wait * 1000)))})

    def _spend(self, tokens: int) -> None:
        """Completion tokens count against the minute's token budget too."""
        if self.rate_limit is not None and tokens > 0:
            with self._lock:
                self._window.append((time.monotonic(), False, tokens))

    def _prompt_tokens(self, body: dict) -> int:
        """The prompt tokens of a chat request: templated, as llama.cpp and vLLM count them, for the
        profiles with their tokenizer route; else its messages' and tools' text."""
        if self.profile.tokenizer is not None:
            return count_tokens(chat_template(body["messages"], body.get("tools")))
        return prompt_tokens_of(body)

    def _shape(self, body: dict) -> dict:
        """The request as this server's profile reads it: refused parameters are HTTP 400, tools
        without ``tool_choice`` are dropped (llama-cpp), an overflow is HTTP 400 or cut (ollama)."""
        profile = self.profile
        if profile.rejects_temperature and "temperature" in body:
            raise bad_request("Unsupported parameter: 'temperature' is not supported with this model.",
                               "temperature")
        if profile.rejects_max_tokens and "max_tokens" in body:
            raise bad_request("Unsupported parameter: 'max_tokens' is not supported with this model. "
                               "Use 'max_completion_tokens' instead.", "max_tokens")
        if profile.rejects_parallel_tool_calls and "parallel_tool_calls" in body:
            raise bad_request("Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
                               "parallel_tool_calls")
        shape = body.get("response_format")
        if profile.checks_strict_schema and isinstance(shape, dict) and shape.get("type") == "json_schema" \
                and isinstance(shape.get("json_schema"), dict) and shape["json_schema"].get("strict") is True:
            problem = strict_problem(shape["json_schema"].get("schema"))
            if problem is not None:
                name = shape["json_schema"].get("name", "")
                raise bad_request(f"Invalid schema for response_format '{name}': {problem}", "response_format")
        if profile.tools_need_choice and body.get("tools") and body.get("tool_choice") is None:
            body = {k: v for k, v in body.items() if k != "tools"}
        window = profile.context_window
        if window is None:
            return body
        limit = reply_limit(body)
        prompt = self._prompt_tokens(body)
        if prompt + limit <= window:
            return body
        if profile.overflow == "truncate":
            messages = list(body["messages"])
            room = max(1, window - limit)
            while len(messages) > 1 and prompt_tokens_of({**body, "messages": messages}) > room:
                drop = next((i for i, m in enumerate(messages) if m.get("role") != "system"), 0)
                messages.pop(drop if drop < len(messages) - 1 else 0)
            # what is still too long loses the start of its text, as a server cuts tokens, not messages
            while prompt_tokens_of({**body, "messages": messages}) > room:
                text = messages[0].get("content")
                if not isinstance(text, str) or not text:
                    break  # the tool definitions alone overflow: the server reads what it can
                messages[0] = {**messages[0], "content": text[max(1, len(text) // 4):]}
            return {**body, "messages": messages}
        raise FaultError(400, profile.overflow_message.format(window=window, needed=prompt + limit, prompt=prompt,
                                                               limit=limit),
                          "invalid_request_error", "context_length_exceeded", param="messages")

    def handle_chat(self, body: dict, fault: str | None) -> dict:
        check_chat_request(body)
        model = body.get("model") or DEFAULT_MODEL
        body = self._shape(body)
        self._admit(self._prompt_tokens(body))
        with self.slots.occupy():  # the work goes on if the client gives up waiting
            self._apply_transport_fault(fault)
            if self.latency:
                self._stopping.wait(self.latency)
            try:
                reply = self.responder(body)
            except Exception as exc:  # a broken script is the test's problem: say so over HTTP
                raise FaultError(500, f"responder failed: {exc.__class__.__name__}: {exc}", "server_error")
        if isinstance(reply, str):
            reply = Reply(content=reply)
        reply = self._decoded(reply, body)
        content = reply.content
        finish_reason = reply.finish_reason
        calls = [self._tool_call(call) for call in reply.tool_calls or []]
        if fault == "malformed":
            content = break_json(content) if content is not None else None
            for call in calls:
                call["arguments"] = break_json(call["arguments"])
        elif fault == "fenced" and content is not None:
            content = f"{FENCE_PROSE}\n```json\n{content}\n```"
        elif fault == "truncated":
            if content is not None:
                content = content[: len(content) // 2]
            for call in calls:
                call["arguments"] = call["arguments"][: len(call["arguments"]) // 2]
            finish_reason = "length"
        limit = reply_limit(body)
        if limit and finish_reason != "length" and not self.ignores_max_tokens:  # cut at the limit, as servers do
            content, calls, cut = _within_limit(content, calls, limit)
            finish_reason = "length" if cut else finish_reason
        if calls and finish_reason == "stop":
            finish_reason = "tool_calls"
        first = 1 + sum(len(m.get("tool_calls") or []) for m in body["messages"]
                        if isinstance(m, dict) and m.get("role") == "assistant")
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{first + i}", "type": "function",
                 "function": {"name": call["name"], "arguments": call["arguments"]}}
                for i, call in enumerate(calls)]
        prompt_tokens = self._prompt_tokens(body)
        cached_tokens = min(prompt_tokens, self._prefix.cached_tokens(model, body))
        completion_tokens = count_tokens(message_text(message))
        self._spend(completion_tokens)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()[:24]
        return {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached_tokens}},
            "system_fingerprint": "fake-llm",
        }

    @staticmethod
    def _decoded(reply: Reply, body: dict) -> Reply:
        """The reply as a server held to the request's ``json_schema`` writes it (every required
        property, a nullable one left out as null)."""
        shape = body.get("response_format")
        schema = shape.get("json_schema", {}).get("schema") if isinstance(shape, dict) else None
        if not isinstance(schema, dict) or reply.content is None:
            return reply
        try:
            value = json.loads(reply.content)
        except ValueError:
            return reply
        return replace(reply, content=json.dumps(with_nulls(value, schema)))

    @staticmethod
    def _tool_call(call: Any) -> dict[str, str]:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise FaultError(500, f"responder returned a bad tool call {call!r}: need name and arguments",
                              "server_error")
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return {"name": call["name"], "arguments": text}

    def handle_embeddings(self, body: dict, fault: str | None) -> dict:
        items, dimensions = check_embeddings_request(body)
        if not self.profile.embeddings:
            raise FaultError(404, f"The model {body.get('model')!r} does not support the Embeddings API.",
                              "invalid_request_error", "model_not_supported")
        self._apply_transport_fault(fault)
        as_base64 = body.get("encoding_format") == "base64"
        data, tokens = [], 0
        for index, item in enumerate(items):
            text = item if isinstance(item, str) else json.dumps(item)
            tokens += count_tokens(text)
            vector = embedding_for(text, dimensions)
            encoded: Any = vector
            if as_base64:
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        return {"object": "list", "data": data, "model": body.get("model") or DEFAULT_MODEL,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def handle_models(self) -> dict:
        stated: dict[str, Any] = {"max_model_len": self.profile.context_window} if self.profile.states_window else {}
        owner = "vllm" if self.profile.tokenizer == "vllm" else "homeragents-fake"
        if self.profile.llama_props:  # llama.cpp's rows; its training size is not the window it runs
            owner, stated = LLAMA_OWNER, {"meta": {"n_ctx_train": LLAMA_TRAINING_WINDOW, "n_vocab": 49152}}
        return {"object": "list",
                "data": [{"id": m, "object": "model", "created": CREATED, "owned_by": owner, **stated}
                         for m in self.models]}

    def handle_props(self) -> dict | None:
        """llama.cpp's ``/props`` (None: this profile has no such route)."""
        if not self.profile.llama_props:
            return None
        return {"default_generation_settings": {"n_ctx": self.profile.context_window, "params": {"n_predict": -1}},
                "total_slots": self.slots.total, "model_alias": self.models[0]}


# -- what a request must look like -------------------------------------------------------------


# -- reply faults ------------------------------------------------------------------------------


class _Handler(HeadFirstHandler):
    fake: FakeLLMServer  # set on the per-server subclass
    protocol_version = "HTTP/1.1"
    server_version = "homeragents-fake-llm/1"
    timeout = READ_SECONDS

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors found by the HTTP parser (a bad request line, an unknown method) in the same JSON
        shape as the API's own errors."""
        text = message or self.responses.get(code, ("error",))[0]
        self.close_connection = True
        try:
            data = json.dumps({"error": {"message": text, "type": "invalid_request_error", "param": None,
                                         "code": None}}).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            pass

    def do_GET(self) -> None:
        record = self._begin(None, time.monotonic())
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            self.fake._check_access(self.headers)
        except FaultError as error:
            self._send_error(record, error)
            return
        if path == "/v1/models":
            self._send(record, 200, self.fake.handle_models())
        elif path == "/props" and self.fake.handle_props() is not None:
            self._send(record, 200, cast(dict, self.fake.handle_props()))  # the profile has the route
        elif path == "/slots" and self.fake.profile.llama_props and self.fake.profile.shows_slots:
            self._send(record, 200, self.fake.slots.llama_slots(self.fake.profile.context_window))
        elif path == "/metrics" and self.fake.profile.tokenizer == "vllm":
            self._send(record, 200, self.fake.slots.vllm_metrics(self.fake.models[0]), kind="text/plain; version=0.0.4")
        elif path.startswith("/v1/models/") and path[len("/v1/models/"):] in self.fake.models:
            name = path[len("/v1/models/"):]
            self._send(record, 200, {"id": name, "object": "model", "created": CREATED,
                                     "owned_by": "homeragents-fake"})
        else:
            self._send_error(record, FaultError(404, f"no such route: GET {path[:200]}", "invalid_request_error"))

    def do_POST(self) -> None:
        started = time.monotonic()
        self._answered = False
        try:
            self._post(started)
        except Exception as exc:  # a bug in the server: answer 500 and keep serving
            self.fake._internal_error(exc)
            if not self._answered:
                record = RecordedRequest(self.command, self.path, {}, None, started=started)
                self._send_error(record, FaultError(500, f"internal error in the fake endpoint: "
                                                          f"{exc.__class__.__name__}: {exc}", "server_error"))
            self.close_connection = True

    def _post(self, started: float) -> None:
        self._unread = MiB  # what to discard of a refused body whose length is unknown
        try:
            raw = self._read_body()
        except FaultError as error:
            self._send_error(self._begin(None, started), error)
            self._discard_unread(self._unread)
            return
        try:
            body = loads_limited(raw, max_bytes=MAX_REQUEST_BYTES) if raw else None
        except JSONLimitError as exc:
            record = self._begin(raw.decode("utf-8", "replace"), started, len(raw))
            self._send_error(record, bad_request(f"request body is {exc}"))
            return
        record = self._begin(body, started, _parsed_size(raw))
        path = self.path.split("?", 1)[0].rstrip("/")
        chat = path == "/v1/chat/completions"
        try:
            if path in TOKENIZER_ROUTES:  # llama.cpp's and vLLM's own, at the root
                self.fake._check_access(self.headers)
                self._send(record, 200, handle_tokenizer(self.fake.profile, path, body))
                return
            if not chat and path != "/v1/embeddings":
                raise FaultError(404, f"no such route: POST {path[:200]}", "invalid_request_error")
            if not isinstance(body, dict):
                raise bad_request(f"request body must be a JSON object, got {json_kind(body)}")
            check_model(body)
            if chat:
                check_chat_request(body)
            else:
                check_embeddings_request(body)
            self.fake._check_access(self.headers, body["model"])
            self.fake._see_model(body["model"])
            fault = self.fake._choose_fault(self.headers.get("X-Fake-Fault"), body["model"], chat)
            record.fault = fault
            if fault is not None and fault not in FAULTS:
                raise bad_request(f"unknown X-Fake-Fault {fault[:100]!r}: expected one of {', '.join(FAULTS)}")
            answer = self.fake.handle_chat(body, fault) if chat else self.fake.handle_embeddings(body, fault)
        except FaultError as error:
            self._send_error(record, error)
            return
        self._send(record, 200, apply_reply_fault(answer, fault))

    def _read_body(self) -> bytes:
        """The request body, read only when its declared length is a number within the limit."""
        if self.headers.get("Transfer-Encoding"):
            raise bad_request("send the body with a Content-Length header, not Transfer-Encoding", status=411)
        values = [v.strip() for v in self.headers.get_all("Content-Length") or []]
        if not values:
            return b""
        if len(set(values)) > 1:
            raise bad_request("the request has conflicting Content-Length headers")
        text = values[0]
        if not _DIGITS_RE.fullmatch(text):
            raise bad_request(f"Content-Length {text[:40]!r} is not a non-negative integer")
        if len(text) > 15 or int(text) > MAX_REQUEST_BYTES:
            self._unread = min(int(text[:15]), MAX_DISCARD_BYTES)
            raise bad_request(f"request body of {text[:40]} bytes is larger than the limit of {MAX_REQUEST_BYTES} "
                               f"bytes ({MAX_REQUEST_BYTES / MiB:g} MiB)", status=413)
        length = int(text)
        try:
            raw = self.rfile.read(length)
        except OSError:  # the client stalled past READ_SECONDS, or went away
            self.close_connection = True
            raise bad_request("the request body did not arrive in time", status=408) from None
        if len(raw) < length:
            raise bad_request(f"the request body ended after {len(raw)} of {length} bytes")
        return raw

    def _discard_unread(self, limit: int, seconds: float = DISCARD_SECONDS) -> None:
        """Read what the client is still sending of a refused body (up to ``limit`` bytes, for a
        few seconds), so that a client that sends its whole body before reading gets the answer
        instead of a reset connection."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(seconds)
            deadline, seen = time.monotonic() + seconds, 0
            while seen < limit and time.monotonic() < deadline:
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                seen += len(chunk)
        except OSError:
            pass

    def _begin(self, body: Any, started: float, size: int = 0) -> RecordedRequest:
        headers = dict(self.headers.items())
        record = RecordedRequest(method=self.command, path=self.path, headers=headers, body=body, started=started,
                                 size=size + sum(len(k) + len(v) for k, v in headers.items()))
        self.fake._record(record)
        return record

    def _send_error(self, record: RecordedRequest, error: FaultError) -> None:
        body = {"error": {"message": error.message, "type": error.kind, "param": error.param, "code": error.code}}
        self._send(record, error.status, body, error.headers)

    def _send(self, record: RecordedRequest, status: int, payload: dict | list | bytes,
              headers: dict[str, str] | None = None, kind: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self._answered = True
        record.status = status
        record.ended = time.monotonic()  # before writing: the client cannot have the answer earlier
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (a timeout) or the server is stopping: nothing to answer
        finally:
            self.close_connection = True


def serve_forever(server: FakeLLMServer, ready: Callable[[FakeLLMServer], None] | None = None,
                  stop: threading.Event | None = None) -> None:
    """Run ``server`` until ``stop`` is set or Ctrl-C (used by ``homer fake-llm``).

    The wait wakes four times a second: a signal that the kernel hands to another thread only
    runs its Python handler once the main thread runs again, and a wait without a timeout may
    never do so."""
    stop = stop or threading.Event()
    server.start()
    try:
        if ready is not None:
            ready(server)
        while not stop.wait(0.25):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


__all__ = ["FakeLLMServer", "Reply", "RecordedRequest", "echo_responder", "scripted",
           "embedding_for", "FAULTS", "REPLY_FAULTS", "DEFAULT_MODEL"]
