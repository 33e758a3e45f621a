"""Benchmark: how long the offline generator's building blocks take.

Figures: milliseconds to write one world's testbed (and its size), to compose one five-day
history of other work, and to survey a 60-task dataset for gameability. Run:
``python bench/synthesis.py [--worlds N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.other_work import OtherWork  # noqa: E402
from office_env.seeding import RAW  # noqa: E402
from office_env.seeding import rng as seeded  # noqa: E402
from office_env.synthesis import make_world, write_workspace  # noqa: E402

WORLD_TARGET_MS = 1000  # one testbed, 30-60 files (a build reuses it for many tasks)
HISTORY_TARGET_MS = 3


def world_ms(count: int) -> tuple[float, int]:
    durations, files = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(count):
            start = time.perf_counter()
            manifest = write_workspace(make_world(seed), Path(tmp) / f"w{seed}")
            durations.append(time.perf_counter() - start)
            files.append(len(manifest))
    return statistics.median(durations) * 1000, int(statistics.median(files))


def history_ms(count: int = 30) -> float:
    def run() -> float:
        start = time.perf_counter()
        for seed in range(count):
            rng = seeded(f"setup-{seed}", legacy=RAW)
            work = OtherWork(rng=seeded(seed, legacy=RAW), user_first="Dana", colleagues=["Rosa", "Ben", "Ida", "Omar"],
                             company="Copperleaf Foods", projects=["Atlas Migration", "Beacon Portal"],
                             files=[f"data/file{rng.randint(1, 9)}.xlsx"])
            monday = datetime(2024, 3, 11, 9)
            for day in range(5):
                for hour in range(4):
                    work.exchange(monday + timedelta(days=day, hours=hour), 2)
        return (time.perf_counter() - start) / count * 1000

    return min(run() for _ in range(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=8)
    args = parser.parse_args()
    world, files = world_ms(args.worlds)
    history = history_ms()
    print(f"write one world's testbed  {world:8.1f} ms  ({files} files; target < {WORLD_TARGET_MS} ms: "
          f"{'met' if world < WORLD_TARGET_MS else 'MISSED'})")
    print(f"compose one history        {history:8.2f} ms  (target < {HISTORY_TARGET_MS} ms: "
          f"{'met' if history < HISTORY_TARGET_MS else 'MISSED'})")


if __name__ == "__main__":
    main()
