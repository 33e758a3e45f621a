"""Benchmark: the horizon sweep's wall time.

Builds N offline tasks (default 20), then runs ``homer eval --horizons 5,10,20,40`` with the oracle
and the none agents and prints each sweep's wall time and its points.
Run: ``python bench/horizon.py [--n 20] [--horizons 5,10,20,40]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from harness.context import ContextConfig  # noqa: E402
from harness.runner import EvalConfig  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.horizon_sweep import parse_horizons, run_sweep  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--horizons", default="5,10,20,40")
    args = parser.parse_args()
    horizons = parse_horizons(args.horizons)
    with tempfile.TemporaryDirectory(prefix="bench-horizon-") as tmp:
        data = Path(tmp) / "data"
        build(data, args.n, BuildConfig(seed=3), workers=2)
        for agent in ("oracle", "none"):
            start = time.perf_counter()
            result = run_sweep(data, Path(tmp) / agent, EvalConfig(agent=agent, context=ContextConfig()), horizons)
            took = time.perf_counter() - start
            points = ", ".join(f"{p['days']}d {100 * p['pass_rate']:.0f} %" for p in result["points"])
            print(f"{agent}: {args.n} tasks x {len(horizons)} horizons in {took:.1f} s ({points})")


if __name__ == "__main__":
    main()
