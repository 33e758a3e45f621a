"""Every network read of the llm client bounded by a total deadline and a size cap.

httpx's timeouts are per socket operation: a server that sends one byte every two seconds never
trips a three-second read timeout, and a 600 MB body is read whole before anyone looks at it. Here
each HTTP attempt (the openai client's retries included) gets a budget when it is sent (an httpx
``request`` hook): a deadline of the attempt's own timeout from that moment, and a cap on the bytes
read. The network stream under httpcore checks both on every connect, read and write, so an
attempt ends within its timeout however the bytes trickle and a reply over the cap stops being
read at the cap (:class:`ReplyTooLarge`). Both are ``openai.OpenAIError``, which the openai client
raises at once instead of retrying: a reply that did not come in time is :class:`ReplyTimeout`
(an ``openai.APITimeoutError``), and the llm client decides when to ask again, since the server
may still be working on the request it abandoned (see :mod:`backends.llm.patience`). A timeout
while connecting or sending is the openai client's own to retry: the server has not got the
request.

The budget lives in a thread-local: the sync client sends and reads in the caller's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import openai

# the HTTP stack the installed openai client is built on (httpx2 in newer releases, httpx before)
if openai.DefaultHttpxClient.__mro__[1].__module__.startswith("httpx2"):
    import httpcore2 as httpcore
    import httpx2 as httpx
else:  # pragma: no cover - older openai releases
    import httpcore  # type: ignore[no-redef]  # the same API under its older name, chosen at import
    import httpx  # type: ignore[no-redef]  # likewise

from office_env.limits import MAX_JSON_BYTES, MiB

MAX_REPLY_BYTES = MAX_JSON_BYTES + MiB  # a body, with its headers, the client could still parse
DEFAULT_SECONDS = 600.0  # an attempt that states no timeout (never one of ours)

_local = threading.local()


class ReplyTimeout(openai.APITimeoutError):
    """The request was sent, and no complete reply came within the attempt's time."""

    def __init__(self, request: httpx.Request, seconds: float) -> None:
        super().__init__(request)
        self.message = f"no complete reply within {seconds:g} s"
        self.seconds = seconds


class ReplyTooLarge(openai.OpenAIError):
    """The server sent more than ``cap`` bytes for one reply; what came was not kept."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"the reply is larger than {cap / MiB:g} MiB; refused without reading the rest")
        self.cap = cap


@dataclass
class Budget:
    deadline: float
    seconds: float
    cap: int
    request: httpx.Request | None = None
    read: int = 0


def current() -> Budget | None:
    return getattr(_local, "budget", None)


def start_budget(request: httpx.Request, cap: int = MAX_REPLY_BYTES) -> None:
    """The httpx ``request`` hook: a fresh budget for this attempt, its deadline the attempt's
    timeout (the read timeout httpx was given, which is the openai client's ``timeout``)."""
    timeout = request.extensions.get("timeout") or {}
    seconds = timeout.get("read") or timeout.get("connect") or DEFAULT_SECONDS
    _local.budget = Budget(time.monotonic() + float(seconds), float(seconds), cap, request)
    _local.sent = attempts_sent() + 1


def attempts_sent() -> int:
    """HTTP attempts this thread has started (the openai client's retries included)."""
    return getattr(_local, "sent", 0)


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` shortened to what is left of the attempt's deadline (``error`` once none is)."""
    budget = current()
    if budget is None:
        return timeout
    left = budget.deadline - time.monotonic()
    if left <= 0:
        raise error(f"no complete reply within {budget.seconds:g} s")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            data = self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))
        except httpcore.ReadTimeout:
            budget = current()
            if budget is None or budget.request is None:
                raise
            raise ReplyTimeout(budget.request, budget.seconds) from None
        budget = current()
        if budget is not None:
            budget.read += len(data)
            if budget.read > budget.cap:
                raise ReplyTooLarge(budget.cap)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                               socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bounded_http_client(on_response: Callable[[httpx.Response], None] | None = None,
                        cap: int = MAX_REPLY_BYTES) -> httpx.Client:
    """The httpx client the openai client is given: every attempt bounded by its timeout in total
    and by ``cap`` bytes."""
    transport = httpx.HTTPTransport()
    transport._pool = httpcore.ConnectionPool(  # the same pool httpx makes, on the bounded network backend
        ssl_context=httpx.create_ssl_context(), max_connections=1000, max_keepalive_connections=100,
        keepalive_expiry=5.0, network_backend=_Backend())
    hooks: dict[str, list[Callable[..., Any]]] = {"request": [lambda request: start_budget(request, cap)]}
    if on_response is not None:
        hooks["response"] = [on_response]
    return openai.DefaultHttpxClient(transport=transport, event_hooks=hooks)


__all__ = ["MAX_REPLY_BYTES", "ReplyTimeout", "ReplyTooLarge", "attempts_sent", "bounded_http_client", "start_budget"]
