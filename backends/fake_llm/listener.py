"""The fake endpoint's socket layer: accept at once, read each request's head under one deadline
before a worker thread is given to it, and answer every connection it cannot serve with HTTP 503.

Why not a thread per connection behind a small listen backlog: 1,000 concurrent clients then meet
connection resets, and 64 clients that send a header byte every few seconds hold every thread.
Here one selector thread accepts (listen backlog :data:`BACKLOG`) and collects request heads; only
a complete head goes to one of :data:`MAX_CONNECTIONS` worker threads, whose reads of the body
share one deadline (:data:`BODY_SECONDS`). A head that has not arrived within
:data:`HEADER_SECONDS` is answered 408 and dropped; a request that waited :data:`QUEUE_SECONDS` for
a worker, or came while :data:`MAX_OPEN` connections were open, is answered 503 with
``Retry-After``. A refused connection's request is read and thrown away for a moment before it is
closed, so the client reads the answer instead of a reset.
"""

from __future__ import annotations

import errno
import io
import json
import re
import selectors
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, cast

BACKLOG = 1024            # the listen backlog (the kernel may cap it at net.core.somaxconn)
MAX_CONNECTIONS = 64      # requests served at once (worker threads)
QUEUE_SECONDS = 10.0      # a complete request waits this long for a worker, then gets 503
HEADER_SECONDS = 10.0     # the request line and headers must all arrive within this, else 408
BODY_SECONDS = 30.0       # the body must all arrive within this of the head
WRITE_SECONDS = 30.0      # a client that stops reading the answer is dropped after this
MAX_HEAD_BYTES = 64 * 1024
MAX_OPEN = 4096           # connections open at once (reading a head, waiting or served); more get 503
LINGER_SECONDS = 2.0      # how long a refused connection's request is read before it is closed
RETRY_AFTER = 1
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_POLL = 0.05


def refusal(status: int, reason: str, message: str, retry_after: int | None = None) -> bytes:
    """A whole HTTP answer in the API's error shape, closing the connection."""
    data = json.dumps({"error": {"message": message, "type": "server_error" if status >= 500 else
                                 "invalid_request_error", "param": None, "code": None}}).encode("utf-8")
    retry = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            f"{retry}Connection: close\r\n\r\n").encode("ascii") + data


BUSY = refusal(503, "Service Unavailable", "the server is busy: too many connections", RETRY_AFTER)
SLOW_HEAD = refusal(408, "Request Timeout", f"the request's headers did not arrive within {HEADER_SECONDS:g} s")
BIG_HEAD = refusal(431, "Request Header Fields Too Large", f"the request's headers exceed {MAX_HEAD_BYTES} bytes")


@dataclass
class _Conn:
    """A connection the selector thread holds: reading its head, or refusing it."""
    sock: socket.socket
    addr: Any
    deadline: float
    head: bytearray = field(default_factory=bytearray)
    out: bytes = b""          # the refusal still to send; set when refusing
    refusing: bool = False


class _HeadFirstReader(io.RawIOBase):
    """The request as the handler reads it: the bytes the selector already took, then the socket,
    every read bounded by one deadline (a sender of a byte every few seconds does not renew it)."""

    def __init__(self, sock: socket.socket, head: bytes, deadline: float, idle: float) -> None:
        super().__init__()
        self._sock, self._head, self._deadline, self._idle = sock, memoryview(head), deadline, idle

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if len(self._head):
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._sock.settimeout(remaining)
        try:
            return self._sock.recv_into(buffer)
        finally:
            self._sock.settimeout(self._idle)


class HeadFirstHandler(BaseHTTPRequestHandler):
    """A request handler that reads what :class:`Listener` already received first."""

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the plain file over the socket: replaced by one that reads the head first
        head = cast("Listener", self.server).take_head(self.connection)  # only a Listener serves this handler
        self.rfile = io.BufferedReader(_HeadFirstReader(self.connection, head, time.monotonic() + BODY_SECONDS,
                                                        WRITE_SECONDS))


class Listener:
    """A listening socket with a selector thread (``serve_forever``) and a bounded worker pool;
    the interface of :class:`socketserver.TCPServer` that the fake endpoint uses."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        host, port = address
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind((host, port))
            self.socket.listen(BACKLOG)
            self.socket.setblocking(False)
        except BaseException:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()[:2]
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]
        self.handler = handler
        self.on_error = on_error
        self.refused = 0                 # connections answered 503 (busy)
        self.dropped = 0                 # connections answered 408 / 431 (slow or oversized head)
        self._conns: dict[int, _Conn] = {}
        self._heads: dict[int, bytes] = {}
        self._ready: deque[tuple[socket.socket, Any, float]] = deque()
        self._lock = threading.Condition()
        self._workers = 0
        self._idle = 0
        self._serving = 0
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        self._closed = False

    # -- the selector thread ---------------------------------------------------------------------

    def serve_forever(self, poll_interval: float = _POLL) -> None:
        self._stopped.clear()
        selector = selectors.DefaultSelector()
        selector.register(self.socket, selectors.EVENT_READ, None)
        paused_until = 0.0
        try:
            while not self._stop.is_set():
                if paused_until and time.monotonic() >= paused_until:
                    selector.register(self.socket, selectors.EVENT_READ, None)
                    paused_until = 0.0
                try:
                    for key, events in selector.select(poll_interval):
                        if key.data is None:
                            if not self._accept(selector):
                                selector.unregister(self.socket)  # out of descriptors: leave them in the backlog
                                paused_until = time.monotonic() + 0.1
                        else:
                            self._service(selector, key.data, events)
                    self._expire(selector)
                except Exception as exc:  # a bug here must not stop the server from accepting: kept, not printed
                    if self.on_error is not None:
                        self.on_error(exc)
        finally:
            for conn in list(self._conns.values()):
                self._close(selector, conn)
            selector.close()
            self._stopped.set()

    def _open(self) -> int:
        with self._lock:
            return len(self._conns) + len(self._ready) + self._serving

    def _accept(self, selector: selectors.BaseSelector) -> bool:
        """Accept every waiting connection; False when the process is out of file descriptors."""
        while True:
            try:
                sock, addr = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return True
            except OSError as exc:
                # out of descriptors: False; ECONNABORTED and the like: that client is gone
                return exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
            sock.setblocking(False)
            conn = _Conn(sock, addr, time.monotonic() + HEADER_SECONDS)
            if self._open() >= MAX_OPEN:
                self.refused += 1
                self._refuse(selector, conn, BUSY, registered=False)
                continue
            self._conns[sock.fileno()] = conn
            selector.register(sock, selectors.EVENT_READ, conn)

    def _service(self, selector: selectors.BaseSelector, conn: _Conn, events: int) -> None:
        try:
            if events & selectors.EVENT_WRITE and conn.out:
                conn.out = conn.out[conn.sock.send(conn.out):]
                if not conn.out:
                    conn.sock.shutdown(socket.SHUT_WR)
                    selector.modify(conn.sock, selectors.EVENT_READ, conn)
            if events & selectors.EVENT_READ:
                chunk = conn.sock.recv(65536)
                if not chunk:
                    if conn.refusing and conn.out:
                        return  # the client half-closed: still send it the answer
                    self._close(selector, conn)
                elif not conn.refusing:
                    self._read_head(selector, conn, chunk)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._close(selector, conn)

    def _read_head(self, selector: selectors.BaseSelector, conn: _Conn, chunk: bytes) -> None:
        start = max(0, len(conn.head) - 3)
        conn.head += chunk
        if _HEAD_END.search(conn.head, start) is not None:
            selector.unregister(conn.sock)
            del self._conns[conn.sock.fileno()]
            with self._lock:
                self._ready.append((conn.sock, conn.addr, time.monotonic()))
                self._heads[conn.sock.fileno()] = bytes(conn.head)
                self._lock.notify()
                if len(self._ready) > self._idle and self._workers < MAX_CONNECTIONS:
                    self._workers += 1
                    threading.Thread(target=self._work, name="fake-llm-worker", daemon=True).start()
        elif len(conn.head) > MAX_HEAD_BYTES:
            self.dropped += 1
            self._refuse(selector, conn, BIG_HEAD)

    def _expire(self, selector: selectors.BaseSelector) -> None:
        """Drop heads past their deadline, refuse requests that waited too long for a worker."""
        now = time.monotonic()
        for conn in list(self._conns.values()):
            if now < conn.deadline:
                continue
            if conn.refusing:
                self._close(selector, conn)
            else:
                self.dropped += 1
                self._refuse(selector, conn, SLOW_HEAD)
        waited = []
        with self._lock:
            while self._ready and now - self._ready[0][2] > QUEUE_SECONDS:
                sock, addr, _ = self._ready.popleft()
                self._heads.pop(sock.fileno(), None)
                waited.append(_Conn(sock, addr, now))
        for conn in waited:
            self.refused += 1
            self._refuse(selector, conn, BUSY, registered=False)

    def _refuse(self, selector: selectors.BaseSelector, conn: _Conn, answer: bytes, registered: bool = True) -> None:
        """Send ``answer``, then read what the client still sends until it closes or LINGER_SECONDS pass."""
        conn.refusing, conn.out, conn.deadline = True, answer, time.monotonic() + LINGER_SECONDS
        conn.sock.setblocking(False)
        self._conns[conn.sock.fileno()] = conn
        if registered:
            selector.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        else:
            selector.register(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)

    def _close(self, selector: selectors.BaseSelector, conn: _Conn) -> None:
        self._conns.pop(conn.sock.fileno(), None)
        try:
            selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()

    # -- the workers -----------------------------------------------------------------------------

    def take_head(self, sock: socket.socket) -> bytes:
        with self._lock:
            return self._heads.pop(sock.fileno(), b"")

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
                while not self._ready and not self._closed:
                    self._lock.wait()
                self._idle -= 1
                if self._closed:
                    self._workers -= 1
                    return
                sock, addr, _ = self._ready.popleft()
                self._serving += 1
            try:
                sock.setblocking(True)
                self.handler(sock, addr, self)  # type: ignore[arg-type]  # a Listener stands in for the socketserver
            except OSError:
                pass  # the client went away
            except Exception as exc:  # a bug in the handler: kept, not printed
                if self.on_error is not None:
                    self.on_error(exc)
            finally:
                with self._lock:
                    self._serving -= 1
                    self._heads.pop(sock.fileno(), None)
                _finish(sock)

    # -- life cycle ------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop serve_forever and wait for it to return."""
        self._stop.set()
        self._stopped.wait()

    def server_close(self) -> None:
        with self._lock:
            self._closed = True
            while self._ready:
                self._ready.popleft()[0].close()
            self._lock.notify_all()
        self.socket.close()


def _finish(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    sock.close()
