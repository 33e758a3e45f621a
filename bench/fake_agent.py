"""Benchmark: the fake endpoint as the evaluated agent, and how soon it is ready.

Builds an offline dataset of N tasks (default 12, seed 3), starts ``homer fake-llm --port 0
--agent noisy --dataset DS --noise X --seed S`` as a process and prints the time from its start to
its ready line and to the first answered ``GET /v1/models``; then runs ``homer eval DS --agent llm``
against it (long-context) and prints the pass rates per app count and overall, with the run's
tool calls and model calls. Repeats the eval against ``--agent oracle`` (100 % expected).
The server listens before it loads its answers (a request that comes meanwhile waits), then prints
its ready line: the bench prints when connections are first accepted, the ready line, and the first
answer.

Run: ``python bench/fake_agent.py [--n 12] [--noise 0.3] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HOMER = Path(sys.executable).parent / "homer"
COMMAND = [str(HOMER)] if HOMER.exists() else [sys.executable, "-c", "from orchestrator.cli import main; main()"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(*args: str) -> tuple[subprocess.Popen, str, float, float, float]:
    """The fake endpoint's process, its URL, and the seconds to its first accepted connection, its
    ready line and its first answer to ``GET /v1/models``."""
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([*COMMAND, "fake-llm", "--port", str(port), *args], stdout=subprocess.PIPE, text=True)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.01)
    accepted = time.perf_counter() - started
    line = proc.stdout.readline()
    ready = time.perf_counter() - started
    url = re.search(r"http://\S+/v1", line).group(0)
    with urllib.request.urlopen(f"{url}/models", timeout=10) as answer:
        answer.read()
    return proc, url, accepted, ready, time.perf_counter() - started


def evaluate(dataset: Path, url: str, out: Path) -> dict:
    subprocess.run([*COMMAND, "eval", str(dataset), "--agent", "llm", "--base-url", url, "--model", "fake-model",
                    "--mode", "long-context", "--out", str(out), "-q"], check=True, capture_output=True, text=True)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_apps: dict[int, list[bool]] = {}
    for row in rows:
        by_apps.setdefault(row["app_count"], []).append(bool(row["passed"]))
    calls = sum(row["trajectory"]["usage"]["calls"] for row in rows)
    failed_steps = sum(not step["ok"] for row in rows for step in row["trajectory"]["steps"])
    return {"by_apps": by_apps, "passed": sum(r["passed"] for r in rows), "tasks": len(rows),
            "steps": sum(r["steps"] for r in rows), "calls": calls, "failed_steps": failed_steps}


def show(name: str, result: dict) -> None:
    parts = [f"{k} app(s) {sum(v)}/{len(v)}" for k, v in sorted(result["by_apps"].items())]
    print(f"{name}: {result['passed']}/{result['tasks']} passed ({100 * result['passed'] / result['tasks']:.1f} %); "
          f"{'; '.join(parts)}; {result['steps']} tool calls ({result['failed_steps']} answered with an error), "
          f"{result['calls']} model calls")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fake-agent-") as tmp:
        dataset = Path(tmp) / "ds"
        subprocess.run([*COMMAND, "build", "--out", str(dataset), "--n", str(options.n), "--seed", "3", "-q"],
                       check=True, capture_output=True, env={**os.environ})
        proc, _, accepted, ready, answered = start_server()
        proc.terminate()
        proc.wait(10)
        print(f"fake-llm (no --agent): connections accepted after {accepted:.2f} s, ready line after {ready:.2f} s, "
              f"first answer after {answered:.2f} s")
        for agent, extra in (("noisy", ["--noise", str(options.noise), "--seed", str(options.seed)]), ("oracle", [])):
            proc, url, accepted, ready, answered = start_server("--agent", agent, "--dataset", str(dataset), *extra)
            try:
                print(f"fake-llm --agent {agent}: connections accepted after {accepted:.2f} s, ready line after "
                      f"{ready:.2f} s, first answer after {answered:.2f} s")
                show(f"eval against --agent {agent}" + (f" (noise {options.noise:g}, seed {options.seed})"
                                                        if agent == "noisy" else ""),
                     evaluate(dataset, url, Path(tmp) / agent))
            finally:
                proc.terminate()
                proc.wait(10)


if __name__ == "__main__":
    main()
