"""Benchmark: the bootstrap behind eval's intervals and ``homer compare``.

Times ``metrics`` (pass rate, pass^k and ONS intervals for each app-count group and overall) and
``compare_runs`` on synthetic result rows: 600 tasks x 3 trials, 1,000 resamples each. Target:
under 2 s for 1,000 resamples over 600 tasks.
Run: ``python bench/scores.py [--tasks 600] [--trials 3]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from harness.report import metrics  # noqa: E402
from harness.scores import RESAMPLES, compare_runs  # noqa: E402
from office_env.seeding import RAW  # noqa: E402
from office_env.seeding import rng as seeded  # noqa: E402


def synthetic(tasks: int, trials: int, skill: float, seed: int) -> list[dict]:
    rng = seeded(seed, legacy=RAW)
    return [{"id": f"t{i:05d}", "trial": k + 1, "app_count": 1 + i % 3, "passed": rng.random() < skill,
             "steps": 3, "context_tokens": 9000, "error": None, "reference": {"none": False, "oracle": True}}
            for i in range(tasks) for k in range(trials)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=600)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    a, b = synthetic(args.tasks, args.trials, 0.4, 1), synthetic(args.tasks, args.trials, 0.5, 2)
    start = time.perf_counter()
    data = metrics(a, args.trials)
    took = time.perf_counter() - start
    overall = data["groups"]["overall"]
    print(f"metrics with intervals ({args.tasks} tasks x {args.trials} trials, {RESAMPLES} resamples, 4 groups x "
          f"3 statistics): {took:.3f} s (target < 2 s: {'met' if took < 2 else 'MISSED'}); pass rate "
          f"{overall['pass_rate']:.3f} {overall['pass_rate_ci']}, ONS {overall['ons']:.3f} {overall['ons_ci']}")
    start = time.perf_counter()
    result = compare_runs(a, b)
    print(f"compare_runs: {time.perf_counter() - start:.3f} s; B - A {result['difference']:+.3f} "
          f"{result['difference_ci']}, sign test p {result['sign_test_p']:.3g}")


if __name__ == "__main__":
    main()
