"""Benchmark: the two HTTP servers under load and attack, as child processes on loopback ports.

``homer fake-llm``: 100 and 1,000 concurrent chat requests (answered / 503 / reset counts), and
slowloris -- 64 connections each sending a header byte every ``--trickle`` seconds while a client
makes ordinary requests (each must be answered 200; the slow ones must be dropped).

``homer review``: a 400 MB POST without the form secret (the server's RSS must not grow), the same
chunked, a cross-origin POST, a verdict while another program holds review.sqlite's write lock
(503 with the verdict kept, then saved), a preview meanwhile, a shipped review.sqlite with hostile
rows (task list, ``review report``, ``review apply``), ``Host: evil.example`` with a valid token
on 0.0.0.0, and a busy port.

Per case: seconds and the verdict; at the end escapes (raw escape codes on a terminal), tracebacks
(in any output or answer), resets and each server's peak RSS. Targets: 0 / 0 / 0, RSS < 500 MB,
each case < 10 s (slowloris: the slow senders are dropped within 10 s of their first byte).
Run: ``python bench/servers.py [--trickle 5]`` (exit 1 when a target is missed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

HOMER = [str(Path(sys.executable).parent / "homer")]
ENV = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
ESCAPE = re.compile("[\x1b\x9b]")
CHAT = json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": "hello"}]}).encode()
RESULTS: list[tuple[str, float, str]] = []
TOTALS = {"escapes": 0, "tracebacks": 0, "resets": 0}
PEAKS: dict[str, float] = {}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rss_mb(pid: int, field: str = "VmHWM") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def case(name: str, started: float, problems: list[str]) -> None:
    RESULTS.append((name, time.perf_counter() - started, "ok" if not problems else "MISSED: " + "; ".join(problems)))


def scan(text: str) -> None:
    TOTALS["escapes"] += len(ESCAPE.findall(text))
    TOTALS["tracebacks"] += text.count("Traceback")


class Child:
    """A server started as ``homer ...``; waits until its port answers."""

    def __init__(self, args: list[str], port: int) -> None:
        self.port = port
        self.proc = subprocess.Popen(HOMER + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{' '.join(args)} did not start: {self.proc.stderr.read()[:500]}") from None
                time.sleep(0.1)

    def stop(self, label: str) -> None:
        PEAKS[label] = max(PEAKS.get(label, 0.0), rss_mb(self.proc.pid))
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=20)
        scan(out + err)


# -- the fake endpoint -------------------------------------------------------------------------

async def one_request(port: int) -> str:
    """One chat request on its own connection: its status, or what went wrong."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 60)
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(CHAT) + CHAT)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 60)
        writer.close()
    except (ConnectionResetError, BrokenPipeError):
        return "reset"
    except (asyncio.TimeoutError, OSError) as exc:
        return exc.__class__.__name__
    if not answer:
        return "reset"  # closed without an answer
    scan(answer.decode("utf-8", "replace"))
    return answer.split(b" ", 2)[1].decode()


def concurrent(port: int, n: int) -> None:
    started = time.perf_counter()

    async def run() -> list[str]:
        return await asyncio.gather(*(one_request(port) for _ in range(n)))

    answers = asyncio.run(run())
    counts = {k: answers.count(k) for k in sorted(set(answers))}
    resets = sum(v for k, v in counts.items() if not k.isdigit())
    TOTALS["resets"] += resets
    problems = [f"{resets} without an HTTP answer"] if resets else []
    problems += [f"{v} answered {k}" for k, v in counts.items() if k.isdigit() and k not in ("200", "503")]
    print(f"  {n} concurrent: " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    case(f"fake-llm {n} concurrent", started, problems)


def slowloris(port: int, trickle: float, senders: int = 64, seconds: float = 12.0) -> None:
    started = time.perf_counter()
    dropped: list[float] = []
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(senders)]
    stop = threading.Event()

    def drip(sock: socket.socket) -> None:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            sock.settimeout(trickle)
            try:
                sock.recv(4096)  # an answer (408) or the close, before the next byte is due: dropped
            except TimeoutError:
                continue
            except OSError:
                pass
            dropped.append(time.perf_counter() - started)
            return
            if stop.is_set():
                return

    threads = [threading.Thread(target=drip, args=(s,), daemon=True) for s in socks]
    for thread in threads:
        thread.start()
    legit: list[str] = []
    while time.perf_counter() - started < seconds:
        legit.append(asyncio.run(one_request(port)))
        time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join(trickle + 2)
    for sock in socks:
        sock.close()
    resets = sum(1 for a in legit if not a.isdigit())
    TOTALS["resets"] += resets
    served = legit.count("200")
    problems = [] if served == len(legit) else [f"{len(legit) - served} of {len(legit)} ordinary requests not served"]
    if len(dropped) < senders:
        problems.append(f"{senders - len(dropped)} slow senders still held")
    last = max(dropped) if dropped else float("nan")
    print(f"  slowloris ({senders} senders, a byte every {trickle:g} s): ordinary requests {served}/{len(legit)} "
          f"answered 200; slow senders dropped {len(dropped)}/{senders}, the last after {last:.1f} s")
    case("fake-llm slowloris", started, problems)


def bench_fake(trickle: float) -> None:
    port = free_port()
    child = Child(["fake-llm", "--port", str(port)], port)
    try:
        concurrent(port, 100)
        concurrent(port, 1000)
        slowloris(port, trickle)
    finally:
        child.stop("fake-llm")


# -- the review server -------------------------------------------------------------------------

def http(port: int, head: str, body: bytes = b"", limit: float = 10.0) -> tuple[int, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=limit) as sock:
        sock.sendall(head.encode() + body)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    text = data.decode("utf-8", "replace")
    scan(text)
    return (int(text.split(" ", 2)[1]) if text.startswith("HTTP/") else 0), text


def page(port: int, path: str, host: str = "127.0.0.1", extra: str = "") -> tuple[int, str]:
    return http(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n")


def form_secret(port: int, task: str) -> str:
    found = re.search(r'name="secret" value="([^"]+)"', page(port, f"/task/{task}")[1])
    return found.group(1) if found else ""


def big_post(pid: int, port: int, task: str, chunked: bool) -> None:
    started = time.perf_counter()
    before = rss_mb(pid, "VmRSS")
    framing = "Transfer-Encoding: chunked" if chunked else "Content-Length: 400000000"
    sent, answered = 0, b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST /task/{task}/verdict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     f"application/x-www-form-urlencoded\r\n{framing}\r\n\r\n".encode())
        block = b"criterion=overall&verdict=keep&" + b"a" * (1024 * 1024)
        sock.setblocking(False)
        while sent < 400 * 1024 * 1024 and time.perf_counter() - started < 8:
            try:
                answered += sock.recv(65536)
                break
            except BlockingIOError:
                pass
            except OSError:
                break
            try:
                data = (b"%x\r\n" % len(block) + block + b"\r\n") if chunked else block
                sent += sock.send(data)
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break
    grown = rss_mb(pid, "VmRSS") - before
    status = answered.split(b" ", 2)[1].decode() if answered.startswith(b"HTTP/") else "none"
    problems = [] if status in ("403", "413") else [f"answered {status}"]
    if grown > 50:
        problems.append(f"the server grew {grown:.0f} MB")
    print(f"  400 MB POST without the secret{' (chunked)' if chunked else ''}: answered {status} after "
          f"{sent / 2**20:.1f} MB sent; server RSS {grown:+.1f} MB")
    case("review 400 MB POST" + (" chunked" if chunked else ""), started, problems)


def locked_verdict(dataset: Path, port: int, task: str, secret: str) -> None:
    started = time.perf_counter()
    body = f"secret={secret}&criterion=overall&verdict=drop&comment=kept+for+later".encode()
    head = (f"POST /task/{task}/verdict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-"
            f"urlencoded\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    other = sqlite3.connect(dataset / "review.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        preview_started = time.perf_counter()
        listing, _ = page(port, "/")
        preview = time.perf_counter() - preview_started
        status, text = http(port, head, body)
    finally:
        other.execute("ROLLBACK")
        other.close()
    again, _ = http(port, head, body)
    problems = [] if status == 503 and "kept for later" in text and again == 303 and listing == 200 else \
        [f"locked: {status}, list {listing}, retry {again}"]
    print(f"  verdict while review.sqlite is locked: {status} (typed text kept: {'kept for later' in text}); "
          f"task list meanwhile {listing} in {preview:.2f} s; retry after the lock: {again}")
    case("review locked database", started, problems)


def hostile_sqlite(dataset: Path, work: Path) -> None:
    started = time.perf_counter()
    task = sorted(p.name for p in (dataset / "tasks").iterdir())[0]
    db = sqlite3.connect(dataset / "review.sqlite", isolation_level=None)
    for row in [("\x1b[31mred\x1b[0m", task, "overall", "keep", "", 1.0), ("dee", task, "overall", "maybe", "", 1.0),
                ("eve", task, "overall", "keep", "", "yesterday"), ("ana", task, "overall", "keep", "", 1.0)]:
        db.execute("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?)", row)
    db.execute("INSERT INTO revisions (task, field, value, annotator, at) VALUES (?, ?, ?, ?, ?)",
               (task, "intent", "[" * 100_000 + "]" * 100_000, "ana", 1.0))
    db.close()
    for args in (["review", "report", str(dataset), "--out", str(work / "report")],
                 ["review", "apply", str(dataset), "--out", str(work / "applied")]):
        run = subprocess.run(HOMER + args, capture_output=True, text=True, env=ENV, timeout=60)
        scan(run.stdout + run.stderr)
        warned = sum(1 for line in run.stderr.splitlines() if line.startswith("warning:"))
        problems = [] if run.returncode == 0 and warned else [f"exit {run.returncode}, {warned} warning(s)"]
        print(f"  hostile review.sqlite, review {args[1]}: exit {run.returncode}, {warned} warning line(s)")
        case(f"review hostile rows ({args[1]})", started, problems)
        started = time.perf_counter()


def bench_review(work: Path) -> None:
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    dataset = work / "data"
    build(dataset, 3, BuildConfig(seed=5), workers=1)
    task = sorted(p.name for p in (dataset / "tasks").iterdir())[0]
    port = free_port()
    child = Child(["review", str(dataset), "--port", str(port), "--annotator", "bench"], port)
    try:
        secret = form_secret(port, task)
        big_post(child.proc.pid, port, task, chunked=False)
        big_post(child.proc.pid, port, task, chunked=True)
        started = time.perf_counter()
        body = f"secret={secret}&criterion=overall&verdict=keep".encode()
        status, _ = http(port, f"POST /task/{task}/verdict HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example"
                               f"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}"
                               "\r\nConnection: close\r\n\r\n", body)
        print(f"  cross-origin POST: {status}")
        case("review cross-origin POST", started, [] if status == 403 else [f"answered {status}"])
        locked_verdict(dataset, port, task, secret)
        hostile = work / "hostile"
        shutil.copytree(dataset, hostile)
        hostile_sqlite(hostile, work)
    finally:
        child.stop("review")
    started = time.perf_counter()
    hostile_port = free_port()
    child = Child(["review", str(hostile), "--port", str(hostile_port)], hostile_port)
    try:
        listing, text = page(hostile_port, "/")
        case("review hostile rows (task list)", started, [] if listing == 200 and 'id="warnings"' in text
             else [f"task list {listing}"])
    finally:
        child.stop("review")
    started = time.perf_counter()
    open_port = free_port()
    child = Child(["review", str(dataset), "--host", "0.0.0.0", "--port", str(open_port), "--token", "t0k"], open_port)
    try:
        evil, _ = page(open_port, "/", host="evil.example", extra="Authorization: Bearer t0k\r\n")
        good, _ = page(open_port, "/", host="localhost", extra="Authorization: Bearer t0k\r\n")
        print(f"  0.0.0.0 with a valid token: Host evil.example {evil}, Host localhost {good}")
        case("review Host check", started, [] if evil == 400 and good == 200 else [f"evil {evil}, localhost {good}"])
        started = time.perf_counter()
        busy = subprocess.run(HOMER + ["review", str(dataset), "--host", "0.0.0.0", "--port", str(open_port)],
                              capture_output=True, text=True, env=ENV, timeout=60)
        scan(busy.stdout + busy.stderr)
        lines = [line for line in (busy.stdout + busy.stderr).splitlines() if line.strip()]
        print(f"  busy port: exit {busy.returncode}: {lines[-1] if lines else ''}")
        case("review busy port", started, [] if busy.returncode == 2 and len(lines) == 1 else
             [f"exit {busy.returncode}, {len(lines)} line(s)"])
    finally:
        child.stop("review")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trickle", type=float, default=5.0, help="Seconds between a slow sender's bytes")
    options = parser.parse_args()
    print("homer fake-llm")
    bench_fake(options.trickle)
    print("homer review")
    with tempfile.TemporaryDirectory(prefix="bench-servers-") as tmp:
        bench_review(Path(tmp))
    print(f"\n{'case':34} {'seconds':>8}  verdict")
    for name, seconds, verdict in RESULTS:
        print(f"{name:34} {seconds:8.2f}  {verdict}")
    peaks = ", ".join(f"{k} {v:.0f} MB" for k, v in PEAKS.items())
    print(f"\nescapes {TOTALS['escapes']}, tracebacks {TOTALS['tracebacks']}, resets {TOTALS['resets']} (targets 0); "
          f"peak RSS: {peaks} (target < 500 MB)")
    missed = [r for r in RESULTS if r[2] != "ok" or (r[1] > 10 and "slowloris" not in r[0])]
    bad = missed or any(TOTALS.values()) or any(v >= 500 for v in PEAKS.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
