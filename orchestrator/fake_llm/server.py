"""A local OpenAI-compatible endpoint for tests and demos: real HTTP on 127.0.0.1, scripted answers,
injectable faults.

``FakeLLMServer`` serves ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and
``GET /v1/models`` from a stdlib ``ThreadingHTTPServer`` in a background thread. Chat answers come
from a *responder*: a callable that takes the parsed request body and returns a :class:`Reply`.

Faults, chosen per request by the ``X-Fake-Fault`` header or queued with
:meth:`FakeLLMServer.queue_faults` (one per chat request, in order):

- ``malformed``: the reply's content with its last ``}`` removed and a sentence appended
  (tool-call arguments are broken the same way);
- ``fenced``: the content wrapped in a ```json fence after a line of prose;
- ``truncated``: the content (or tool-call arguments) cut in half, finish_reason ``length``;
- ``429``: HTTP 429, ``Retry-After: <retry_after>`` and an OpenAI-style error body;
- ``500``: HTTP 500 with an OpenAI-style error body;
- ``slow``: wait ``slow_seconds``, then answer normally.

``fail_model="name"`` makes every request for that model answer 500 (a persistently failing task).
Everything except the timing of ``slow`` and ``429`` is deterministic: ``created`` is a fixed
number, completion ids are a hash of the request, tool-call ids are ``call_<n>`` numbered along the
conversation.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from backends.tokens import count_tokens

FAULTS = ("malformed", "fenced", "truncated", "429", "500", "slow")
DEFAULT_MODEL = "fake-model"
CREATED = 1_700_000_000  # a fixed timestamp: answers do not depend on the clock
EMBEDDING_DIMENSIONS = 64
MALFORMED_TAIL = " Let me know if you need anything else!"
FENCE_PROSE = "Sure! Here is the JSON you asked for:"


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
    (arrival, and the moment the answer was ready to send); ``status`` is the HTTP status answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    fault: str | None = None
    started: float = 0.0
    ended: float | None = None
    status: int | None = None


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


def message_text(message: dict) -> str:
    """The text of one chat message: its content (a string or text parts) and the names and
    arguments of any tool calls it carries."""
    pieces: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        pieces.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces.append(str(function.get("name", "")))
            pieces.append(str(function.get("arguments", "")))
    return "\n".join(pieces)


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


class _FaultError(Exception):
    def __init__(self, status: int, message: str, kind: str, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code = status, message, kind, code
        self.headers = headers or {}


class FakeLLMServer:
    """A real HTTP server speaking the OpenAI chat-completions, embeddings and models API.

    Use as a context manager (``with FakeLLMServer(responder) as server: ... server.url``) or call
    :meth:`start` and :meth:`stop`. ``port=0`` picks a free port.
    """

    def __init__(self, responder: Responder | None = None, host: str = "127.0.0.1", port: int = 0,
                 retry_after: float = 1.0, slow_seconds: float = 2.0, fail_model: str | None = None):
        self.responder: Responder = responder or echo_responder
        self.host = host
        self.port = port
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.fail_model = fail_model
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._faults: deque[str] = deque()
        self._models: list[str] = [DEFAULT_MODEL]
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> "FakeLLMServer":
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer((self.host, self.port), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False  # a slow handler must not hold up stop()
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
        """A snapshot of the requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def reset(self) -> None:
        """Forget recorded requests and queued faults."""
        with self._lock:
            self._requests.clear()
            self._faults.clear()

    @property
    def models(self) -> list[str]:
        with self._lock:
            return list(self._models)

    # -- request handling (called from handler threads) ----------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _see_model(self, model: Any) -> None:
        if isinstance(model, str) and model:
            with self._lock:
                if model not in self._models:
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
            raise _FaultError(429, f"Rate limit reached for fake requests; retry after {text} s.",
                              "requests", "rate_limit_exceeded", {"Retry-After": text})
        if fault == "500":
            raise _FaultError(500, "The fake server had an error while processing your request.",
                              "server_error")
        if fault == "slow":
            self._stopping.wait(self.slow_seconds)

    def handle_chat(self, body: dict, fault: str | None) -> dict:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise _FaultError(400, "'messages' must be a non-empty array", "invalid_request_error")
        model = body.get("model") or DEFAULT_MODEL
        self._apply_transport_fault(fault)
        try:
            reply = self.responder(body)
        except Exception as exc:  # a broken script is the test's problem: say so over HTTP
            raise _FaultError(500, f"responder failed: {exc.__class__.__name__}: {exc}", "server_error")
        if isinstance(reply, str):
            reply = Reply(content=reply)
        content = reply.content
        finish_reason = reply.finish_reason
        calls = [self._tool_call(call) for call in reply.tool_calls or []]
        if fault == "malformed":
            content = _break_json(content) if content is not None else None
            for call in calls:
                call["arguments"] = _break_json(call["arguments"])
        elif fault == "fenced" and content is not None:
            content = f"{FENCE_PROSE}\n```json\n{content}\n```"
        elif fault == "truncated":
            if content is not None:
                content = content[: len(content) // 2]
            for call in calls:
                call["arguments"] = call["arguments"][: len(call["arguments"]) // 2]
            finish_reason = "length"
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
        prompt_tokens = sum(count_tokens(message_text(m)) for m in body["messages"] if isinstance(m, dict))
        completion_tokens = count_tokens(message_text(message))
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()[:24]
        return {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
            "system_fingerprint": "fake-llm",
        }

    @staticmethod
    def _tool_call(call: Any) -> dict[str, str]:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _FaultError(500, f"responder returned a bad tool call {call!r}: need name and arguments",
                              "server_error")
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return {"name": call["name"], "arguments": text}

    def handle_embeddings(self, body: dict, fault: str | None) -> dict:
        raw = body.get("input")
        items = raw if isinstance(raw, list) and raw and not isinstance(raw[0], int) else [raw]
        if raw is None or raw == [] or raw == "":
            raise _FaultError(400, "'input' must be a non-empty string or array", "invalid_request_error")
        self._apply_transport_fault(fault)
        dimensions = body.get("dimensions") or EMBEDDING_DIMENSIONS
        if not isinstance(dimensions, int) or dimensions < 1:
            raise _FaultError(400, "'dimensions' must be a positive integer", "invalid_request_error")
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
        return {"object": "list",
                "data": [{"id": m, "object": "model", "created": CREATED, "owned_by": "homeragents-fake"}
                         for m in self.models]}


def _break_json(text: str) -> str:
    """Invalid JSON from a reply: its last closing brace removed and a sentence appended."""
    cut = text.rfind("}")
    if cut >= 0:
        text = text[:cut] + text[cut + 1:]
    return text + MALFORMED_TAIL


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer  # set on the per-server subclass
    protocol_version = "HTTP/1.1"
    server_version = "homeragents-fake-llm/1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
        pass

    def do_GET(self) -> None:
        record = self._begin(None)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/models":
            self._send(record, 200, self.fake.handle_models())
        elif path.startswith("/v1/models/") and path[len("/v1/models/"):] in self.fake.models:
            name = path[len("/v1/models/"):]
            self._send(record, 200, {"id": name, "object": "model", "created": CREATED,
                                     "owned_by": "homeragents-fake"})
        else:
            self._send_error(record, _FaultError(404, f"no such route: GET {path}", "invalid_request_error"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            record = self._begin(raw.decode("utf-8", "replace"))
            self._send_error(record, _FaultError(400, f"request body is not valid JSON: {exc}",
                                                 "invalid_request_error"))
            return
        record = self._begin(body)
        path = self.path.split("?", 1)[0].rstrip("/")
        chat = path == "/v1/chat/completions"
        if not chat and path != "/v1/embeddings":
            self._send_error(record, _FaultError(404, f"no such route: POST {path}", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send_error(record, _FaultError(400, "request body must be a JSON object",
                                                 "invalid_request_error"))
            return
        self.fake._see_model(body.get("model"))
        fault = self.fake._choose_fault(self.headers.get("X-Fake-Fault"), body.get("model"), chat)
        record.fault = fault
        try:
            if fault is not None and fault not in FAULTS:
                raise _FaultError(400, f"unknown X-Fake-Fault {fault!r}: expected one of {', '.join(FAULTS)}",
                                  "invalid_request_error")
            answer = self.fake.handle_chat(body, fault) if chat else self.fake.handle_embeddings(body, fault)
        except _FaultError as error:
            self._send_error(record, error)
            return
        self._send(record, 200, answer)

    def _begin(self, body: Any) -> RecordedRequest:
        record = RecordedRequest(method=self.command, path=self.path, headers=dict(self.headers.items()),
                                 body=body, started=time.monotonic())
        self.fake._record(record)
        return record

    def _send_error(self, record: RecordedRequest, error: _FaultError) -> None:
        body = {"error": {"message": error.message, "type": error.kind, "param": None, "code": error.code}}
        self._send(record, error.status, body, error.headers)

    def _send(self, record: RecordedRequest, status: int, payload: dict,
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        record.status = status
        record.ended = time.monotonic()  # before writing: the client cannot have the answer earlier
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
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
    """Run ``server`` until ``stop`` is set or Ctrl-C (used by ``homer fake-llm``)."""
    server.start()
    try:
        if ready is not None:
            ready(server)
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


__all__ = ["FakeLLMServer", "Reply", "RecordedRequest", "echo_responder", "scripted",
                          "embedding_for", "FAULTS", "DEFAULT_MODEL"]
