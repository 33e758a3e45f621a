"""Benchmark: no acknowledged verdict lost, with other readers and a kill -9.

Serves a small built dataset with the real ``homer review`` (a child process) while a second
process reads ``review.sqlite`` in a loop (a plain ``sqlite3`` read, as a backup script would)
and a third runs ``homer review report`` over and over, as a second annotator does. Then:

- **burst**: 200 verdicts posted at once on one key (40 at a time): the answers' p50/p99
  latency, errors, and whether the file keeps the acknowledged post with the highest write number;
- **kill**: ``--rounds`` rounds of verdicts posted one after another on every (task, criterion)
  key, the server killed with SIGKILL right after a random acknowledgement; each key must hold
  the last value acknowledged for it. Prints acknowledged, lost, and the answers' p50/p99.

Targets: 0 errors, 0 lost, the burst's stored value the last acknowledged.
Run: ``python bench/review_durability.py [--rounds 5] [--posts 300]`` (exit 1 when a target is missed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

HOMER = str(Path(sys.executable).parent / "homer")
JSON = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
READER = """
import sqlite3, sys, time
while True:
    try:
        db = sqlite3.connect(sys.argv[1], timeout=10)
        db.execute("SELECT count(*), max(at) FROM verdicts").fetchall()
        db.close()
    except sqlite3.Error:
        pass
    time.sleep(0.01)
"""
REPORTER = """
import subprocess, sys
while True:
    subprocess.run([sys.argv[1], "review", "report", sys.argv[2]], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(dataset: Path) -> tuple[subprocess.Popen, int, str]:
    port = _free_port()
    server = subprocess.Popen([HOMER, "review", str(dataset), "--port", str(port), "--annotator", "ana"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                html = page.read().decode()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the review server did not start")
            time.sleep(0.1)
    task = re.search(r'href="/task/([^"]+)"', html).group(1)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/task/{task}", timeout=30) as page:
        secret = re.search(r'name="secret" value="([^"]+)"', page.read().decode()).group(1)
    return server, port, secret


def _post(port: int, secret: str, task: str, criterion: str, verdict: str, comment: str) -> tuple[dict, float]:
    body = urllib.parse.urlencode({"secret": secret, "criterion": criterion, "verdict": verdict,
                                   "comment": comment}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/task/{task}/verdict", data=body, headers=JSON)
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            answer = json.load(reply)
    except OSError as exc:
        answer = {"ok": False, "error": str(exc)[:200]}
    return answer, time.perf_counter() - start


def _stored(dataset: Path) -> dict[tuple[str, str], str]:
    db = sqlite3.connect(dataset / "review.sqlite")
    try:
        return {(task, criterion): comment for task, criterion, comment in
                db.execute("SELECT task, criterion, comment FROM verdicts WHERE annotator = 'ana'")}
    finally:
        db.close()


def _ms(values: list[float], q: float) -> str:
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.1f} ms"


def burst(dataset: Path, task: str) -> bool:
    server, port, secret = _serve(dataset)
    try:
        with ThreadPoolExecutor(40) as pool:
            results = list(pool.map(lambda i: (i, *_post(port, secret, task, "overall", "keep", f"burst {i}")),
                                    range(200)))
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    acks = [(answer["write"], i) for i, answer, _ in results if answer.get("ok")]
    errors = len(results) - len(acks)
    last = f"burst {max(acks)[1]}" if acks else None
    kept = _stored(dataset).get((task, "overall"))
    times = [seconds for _, _, seconds in results]
    stored = "the last acknowledged" if kept == last else f"{kept!r}, not {last!r}"
    print(f"burst: 200 posts on one key, 40 at a time: p50 {_ms(times, 0.5)}, p99 {_ms(times, 0.99)}, "
          f"{errors} error(s); stored {stored}")
    return errors == 0 and kept == last


def kill_rounds(dataset: Path, tasks: list[str], rounds: int, posts: int, rng: random.Random) -> bool:
    from orchestrator.review.annotations import CRITERIA

    keys = [(task, criterion) for task in tasks for criterion in CRITERIA]
    acknowledged = lost = errors = 0
    times: list[float] = []
    for r in range(rounds):
        server, port, secret = _serve(dataset)
        last: dict[tuple[str, str], str] = {}
        stop_after = rng.randrange(posts // 2, posts)
        for i in range(stop_after + 1):
            task, criterion = keys[i % len(keys)]
            answer, seconds = _post(port, secret, task, criterion, rng.choice(("yes", "no")), f"round {r} post {i}")
            times.append(seconds)
            if answer.get("ok"):
                last[(task, criterion)] = f"round {r} post {i}"
                acknowledged += 1
            else:
                errors += 1
        server.send_signal(signal.SIGKILL)  # right after the last acknowledgement
        server.wait()
        stored = _stored(dataset)
        lost += sum(stored.get(key) != value for key, value in last.items())
    print(f"kill -9: {rounds} round(s), {acknowledged} acknowledged, {lost} key(s) not holding their last "
          f"acknowledged value, {errors} error(s); answers p50 {_ms(times, 0.5)}, p99 {_ms(times, 0.99)}")
    return lost == 0 and errors == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--posts", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    with tempfile.TemporaryDirectory(prefix="bench-durability-") as tmp:
        dataset = Path(tmp) / "data"
        build(dataset, 2, BuildConfig(seed=args.seed))
        tasks = sorted(p.name for p in (dataset / "tasks").iterdir())
        sqlite3.connect(dataset / "review.sqlite").close()  # the readers have a file to open from the start
        reader = subprocess.Popen([sys.executable, "-c", READER, str(dataset / "review.sqlite")])
        reporter = subprocess.Popen([sys.executable, "-c", REPORTER, HOMER, str(dataset)], start_new_session=True)
        try:
            ok = burst(dataset, tasks[0])
            ok = kill_rounds(dataset, tasks, args.rounds, args.posts, random.Random(args.seed)) and ok
        finally:
            reader.kill()
            os.killpg(reporter.pid, signal.SIGKILL)
            reader.wait()
            reporter.wait()
    print(f"targets (0 errors, 0 lost, the last acknowledged stored): {'met' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
