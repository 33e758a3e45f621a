"""Benchmark: the llm client against hostile servers; every read bounded in time and size.

Starts small local HTTP servers that trickle a byte every 2 s (headers or body), or send a 600 MB
body as fast as they can, and prints for each case how long the client took to give up, what it
said, and the process's peak memory: the endpoint check with a 3 s budget, a chat call with
``timeout=3`` (one retry), a chat call against the 600 MB reply. Targets: each case ends within
its budget (plus the retry's backoff), peak memory well under the 600 MB.

Run: ``python bench/endpoint_bounds.py``.
"""

from __future__ import annotations

import resource
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.llm import LLMClient, LLMError, LLMSettings  # noqa: E402


def serve(how: str) -> tuple[ThreadingHTTPServer, threading.Event]:
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.answer()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.answer()

        def answer(self) -> None:
            try:
                if how == "slow_headers":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    while not stop.wait(2.0):
                        self.wfile.write(b"X")
                        self.wfile.flush()
                    return
                size = 600 * 2**20 if how == "flood" else 10_000
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                chunk, sent = b" " * (2**20 if how == "flood" else 1), 0
                while sent < size and not stop.is_set():
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    if how == "trickle" and stop.wait(2.0):
                        return
            except OSError:
                return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, stop


def case(name: str, how: str, run: callable) -> None:
    httpd, stop = serve(how)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    started = time.perf_counter()
    try:
        run(url)
        said = "no error (unexpected)"
    except LLMError as exc:
        said = str(exc)[:150]
    elapsed = time.perf_counter() - started
    stop.set()
    httpd.shutdown()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name}: {elapsed:.1f} s, peak RSS so far {peak:.0f} MB: {said}")


def client(url: str, **extra: object) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, model="m", **{"timeout": 3, "max_retries": 1, **extra}))


def chat(url: str, **extra: object) -> None:
    with client(url, **extra) as llm:
        llm.chat("agent", [{"role": "user", "content": "hi"}])


def preflight(url: str) -> None:
    with client(url) as llm:
        llm.preflight(seconds=3, wait=0)


def main() -> None:
    case("endpoint check (3 s budget), /v1/models trickling its body", "trickle", preflight)
    case("endpoint check (3 s budget), /v1/models trickling its headers", "slow_headers", preflight)
    case("chat, timeout=3, max_retries=1, reply trickling its body", "trickle", chat)
    case("chat, timeout=3, max_retries=1, reply trickling its headers", "slow_headers", chat)
    case("chat, timeout=60, max_retries=3, a 600 MB reply", "flood", lambda url: chat(url, timeout=60, max_retries=3))


if __name__ == "__main__":
    main()
