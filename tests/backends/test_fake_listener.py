"""The fake endpoint's socket layer (backends/fake_llm/listener.py) over real sockets: slow
senders are answered 408 and dropped without holding a worker, requests beyond the bounds get HTTP
503 with Retry-After (never a reset), and bodies share one deadline. The bounds are shrunk so each
case takes a fraction of a second; bench/servers.py runs the full-size cases."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from backends.fake_llm import FakeLLMServer
from backends.fake_llm import listener as listener_module

pytestmark = pytest.mark.slow

CHAT = json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": "hello"}]}).encode()


def request(server: FakeLLMServer, fault: str | None = None, timeout: float = 20) -> tuple[int, dict[str, str], dict]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json", **({"X-Fake-Fault": fault} if fault else {})}
        conn.request("POST", "/v1/chat/completions", body=CHAT, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read())
    finally:
        conn.close()


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset raises)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_idle_and_slow_connections_hold_no_worker(monkeypatch):
    monkeypatch.setattr(listener_module, "MAX_CONNECTIONS", 2)
    with FakeLLMServer() as server:
        idle = [socket.create_connection((server.host, server.port), timeout=10) for _ in range(5)]
        try:
            for sock in idle[:3]:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # a head never finished
            assert request(server)[0] == 200
        finally:
            for sock in idle:
                sock.close()


def test_a_head_that_trickles_past_its_deadline_is_answered_408_and_dropped(monkeypatch):
    monkeypatch.setattr(listener_module, "HEADER_SECONDS", 0.3)
    with FakeLLMServer() as server:
        sock = socket.create_connection((server.host, server.port), timeout=10)
        with sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
            sock.sendall(b"X-Slow: 1\r\n")  # the next byte never comes: one deadline, not one per byte
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 ") and b"did not arrive" in answer
        assert request(server)[0] == 200
        assert server.chat_request_total == 1  # the dropped one never reached the handler


def test_a_body_that_trickles_past_its_deadline_is_answered_408(monkeypatch):
    monkeypatch.setattr(listener_module, "BODY_SECONDS", 0.3)
    with FakeLLMServer() as server:
        sock = socket.create_connection((server.host, server.port), timeout=10)
        with sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 500\r\n\r\n{\"model\":")
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 ") and b"did not arrive in time" in answer


def test_a_head_over_the_limit_is_answered_431(monkeypatch):
    monkeypatch.setattr(listener_module, "MAX_HEAD_BYTES", 1024)
    with FakeLLMServer() as server:
        sock = socket.create_connection((server.host, server.port), timeout=10)
        with sock:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 4000 + b"\r\n")
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 431 ")


def test_a_request_that_waits_too_long_for_a_worker_gets_503_with_retry_after(monkeypatch):
    monkeypatch.setattr(listener_module, "MAX_CONNECTIONS", 1)
    monkeypatch.setattr(listener_module, "QUEUE_SECONDS", 0.2)
    with FakeLLMServer(slow_seconds=60) as server:
        busy = threading.Thread(target=lambda: request(server, fault="slow"), daemon=True)
        busy.start()  # holds the only worker until the server stops
        while not server.chat_requests():
            threading.Event().wait(0.01)
        status, headers, body = request(server)
        assert status == 503 and headers["Retry-After"] == "1"
        assert "busy" in body["error"]["message"]
        assert server.listener.refused == 1
    busy.join(10)


@pytest.mark.parametrize("max_open", [40, listener_module.MAX_OPEN])
def test_many_concurrent_requests_each_get_an_http_answer_never_a_reset(monkeypatch, max_open):
    monkeypatch.setattr(listener_module, "MAX_OPEN", max_open)
    with FakeLLMServer(latency=0.02) as server:
        def one(_: int) -> int | str:
            try:
                return request(server)[0]
            except OSError as exc:
                return exc.__class__.__name__
        with ThreadPoolExecutor(200) as pool:
            answers = list(pool.map(one, range(300)))
    assert set(answers) <= {200, 503}, [a for a in answers if a not in (200, 503)][:5]
    if max_open > 300:
        assert answers.count(200) == 300
    else:
        assert answers.count(503) > 0  # the bound was met: refused with an answer


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read a socket's backlog")
def test_the_listen_backlog_is_at_least_1024():
    with FakeLLMServer() as server:
        shown = subprocess.run(["ss", "-ltnH", f"sport = :{server.port}"], capture_output=True, text=True,
                               check=True).stdout.split()
    # for a listening socket ss shows the backlog as Send-Q; the kernel caps it at net.core.somaxconn
    cap = int(open("/proc/sys/net/core/somaxconn").read())
    assert int(shown[2]) == min(1024, cap) and listener_module.BACKLOG >= 1024
