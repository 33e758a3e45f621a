"""Benchmark: kills, interrupts and concurrent writers against build, regenerate and eval.

For each command, a clean run gives the expected output. Then ``--kills`` runs are each killed
with SIGKILL at a random moment (seeded) and resumed with ``--resume`` until they finish; every
finished folder must equal the clean one (build and regenerate: byte for byte; eval: the same
result rows). Two writers started on one folder at once: one must be refused with a one-line
error, and the other's output must equal the clean one. Ctrl-C (SIGINT) must end a run in under
3 s with exit code 130, and ``--resume`` must finish it. Orphaned worker processes are counted
after each kill (target 0).

Run: ``python bench/crash.py [--kills 20] [--seed 0] [--commands build,regenerate,eval]``. Targets: 0 mismatches,
0 orphans, 1 refused writer per pair, SIGINT exit < 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOMER = str(Path(sys.executable).parent / "homer")
SEEDS = ROOT / "datasets" / "officebench-sample"
ENV = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def rows(run: Path) -> list[tuple]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [(r["id"], r["trial"], r["passed"], json.dumps(r["criteria"])) for r in map(json.loads, lines)]


def seed_copies(work: Path, copies: int = 16) -> Path:
    """The sample seeds, each task folder copied under new numbers: enough seeds to interrupt."""
    root = work / "seeds" / "tasks"
    for folder in sorted((SEEDS / "tasks").iterdir()):
        apps, number = folder.name.split("-")
        for copy in range(copies):
            shutil.copytree(folder, root / f"{apps}-{int(number) + 100 * copy}")
    return root


def commands(work: Path) -> dict[str, tuple[list[str], callable]]:
    dataset = work / "dataset-for-eval"
    return {
        "build": (["build", "--n", "120", "--seed", "3", "--days", "2", "--utterances", "24", "--workers", "2"], tree),
        "regenerate": (["regenerate", "--seeds", str(seed_copies(work)), "--seed", "3", "--days", "3", "--utterances",
                        "16", "--workers", "2"], tree),
        "eval": (["eval", str(dataset), "--agent", "oracle", "--mode", "rag", "--workers", "2"], rows),
    }


def run(args: list[str], out: Path, resume: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([HOMER, *args, "--out", str(out), *(["--resume"] if resume else [])], env=ENV,
                          capture_output=True, text=True, timeout=900)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def killed_then_resumed(args: list[str], out: Path, delay: float) -> tuple[int, int, bool]:
    """Kill a run after ``delay`` s; resume (killing again at the same delay while it has work
    left, at most 3 times) until it finishes. Returns (kills, orphans, finished cleanly)."""
    kills = orphans = 0
    resume = False
    for _ in range(4):
        proc = subprocess.Popen([HOMER, *args, "--out", str(out), *(["--resume"] if resume else [])], env=ENV,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            proc.wait(timeout=delay if kills < 3 else 900)
        except subprocess.TimeoutExpired:
            workers = children_of(proc.pid)
            proc.kill()
            proc.wait()
            kills += 1
            deadline = time.monotonic() + 5
            while any(alive(w) for w in workers) and time.monotonic() < deadline:
                time.sleep(0.05)
            orphans += sum(alive(w) for w in workers)
            resume = True
            continue
        err = proc.stderr.read()
        return kills, orphans, proc.returncode in (0, 1) and "Traceback" not in err
    return kills, orphans, False


def _started(out: Path) -> bool:
    """The first task is recorded (eval writes its progress header before any task runs)."""
    progress = out / ".progress.jsonl"
    try:
        return progress.read_bytes().count(b"\n") >= 2
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20, help="killed runs per command")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commands", default="build,regenerate,eval", help="which commands to run (comma list)")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    work = Path(tempfile.mkdtemp(prefix="homer-crash-"))
    failures = 0
    try:
        prepared = run(["build", "--n", "12", "--seed", "4", "--days", "2", "--utterances", "24"],
                       work / "dataset-for-eval")
        assert prepared.returncode == 0, prepared.stderr
        for name, (args, view) in commands(work).items():
            if name not in options.commands.split(","):
                continue
            started = time.perf_counter()
            clean = run(args, work / f"{name}-clean")
            assert clean.returncode in (0, 1), clean.stderr
            clean_seconds = time.perf_counter() - started
            expected = view(work / f"{name}-clean")
            mismatches = orphans = kills = 0
            for attempt in range(options.kills):
                out = work / f"{name}-killed-{attempt}"
                k, o, finished = killed_then_resumed(args, out, rng.uniform(0.3, max(0.4, clean_seconds * 0.9)))
                kills, orphans = kills + k, orphans + o
                if not finished or view(out) != expected:
                    mismatches += 1
                shutil.rmtree(out, ignore_errors=True)
            # two writers at once
            out = work / f"{name}-pair"
            pair = [subprocess.Popen([HOMER, *args, "--out", str(out), "--resume"], env=ENV, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for _ in range(2)]
            results = [(p.wait(timeout=900), p.stderr.read()) for p in pair]
            refused = sum(1 for code, err in results if code == 2 and "writing this folder" in err)
            if refused != 1:  # both may also succeed one after the other if the first had finished
                refused = sum(1 for code, err in results if code == 2)
            pair_ok = any(code in (0, 1) for code, _ in results) and view(out) == expected
            # Ctrl-C
            out = work / f"{name}-sigint"
            proc = subprocess.Popen([HOMER, *args, "--out", str(out)], env=ENV, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _started(out):
                time.sleep(0.02)
            proc.send_signal(signal.SIGINT)
            sent = time.monotonic()
            proc.wait(timeout=60)
            exit_seconds = time.monotonic() - sent
            sigint_code = proc.returncode
            finish = run(args, out, resume=True)
            sigint_ok = finish.returncode in (0, 1) and view(out) == expected
            failures += mismatches + orphans + (refused != 1) + (not pair_ok) + (not sigint_ok) + \
                (exit_seconds >= 3) + (sigint_code not in (0, 130))
            print(f"{name:10s} clean {clean_seconds:5.1f} s | {options.kills} killed runs ({kills} kills): "
                  f"{mismatches} mismatches (target 0), {orphans} orphaned workers (target 0) | "
                  f"2 writers: {refused} refused (target 1), output {'equal' if pair_ok else 'DIFFERENT'} | "
                  f"SIGINT: exit {sigint_code} in {exit_seconds:.2f} s (target < 3 s), "
                  f"resume {'equal' if sigint_ok else 'DIFFERENT'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"failures: {failures} (target 0)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
