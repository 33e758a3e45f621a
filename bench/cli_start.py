"""Benchmark: how long a ``homer`` command takes to start (its help), the mean of several runs.

Target: under 0.5 s for every command's ``--help`` (the commands import what they use when they
run). Run: ``python bench/cli_start.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = ["", "build", "regenerate", "eval", "score", "verify", "stats", "show", "export", "fake-llm"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    homer = Path(sys.executable).parent / "homer"
    worst = 0.0
    for command in COMMANDS:
        argv = [str(homer), *([command] if command else []), "--help"]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
        mean = statistics.fmean(times)
        worst = max(worst, mean)
        print(f"homer {command or ''} --help".replace("  ", " ") + f": {mean:.3f} s (min {min(times):.3f})")
    print(f"slowest: {worst:.3f} s (target < 0.5: {'met' if worst < 0.5 else 'MISSED'})")


if __name__ == "__main__":
    main()
