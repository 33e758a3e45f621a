"""Benchmark: memory-probe generation rate and what the probes look like on an offline dataset.

Builds N tasks (default 60), then times building every task's probes (rules only) and prints
probes per second, questions per task, the share answerable, and the questions per memory
dynamic. Run: ``python bench/probes.py [--n 60] [--seed 11]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.task_record import parse_record  # noqa: E402
from harness.probes import cue_pool, probes_for  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-probes-") as tmp:
        build(Path(tmp) / "data", args.n, BuildConfig(seed=args.seed), workers=2)
        records = [parse_record(json.loads(p.read_text()))
                   for p in sorted((Path(tmp) / "data" / "tasks").glob("*/task.json"))]
    start = time.perf_counter()
    pool = cue_pool(records)
    probes = [p for r in records for p in probes_for(r, pool)]
    took = time.perf_counter() - start
    dynamics = Counter(p.dynamic for p in probes)
    answerable = sum(p.answerable for p in probes) / max(1, len(probes))
    print(f"{len(probes)} probes for {len(records)} tasks in {took * 1000:.1f} ms: {len(probes) / took:,.0f} probes/s, "
          f"{len(probes) / max(1, len(records)):.1f} per task, {100 * answerable:.0f} % answerable")
    print("per dynamic: " + ", ".join(f"{k} {v}" for k, v in dynamics.most_common()))


if __name__ == "__main__":
    main()
