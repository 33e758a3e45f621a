"""Benchmark: ten thousand and more generated tool calls, none of which may raise or hit a bug.

Every tool is called with arguments generated from its own JSON schema by the generators of
``tests/office_env/test_tool_fuzz.py`` (realistic values mixed with control characters, unpaired surrogates,
path pieces, very long strings, integers beyond their bounds, missing and unknown properties), on
one testbed per tool that also holds damaged files, beside a folder no call may touch.

Prints the number of calls, per-tool counts (calls, ok, errors), exceptions that escaped the
registry, "internal error" observations (the registry's last line of defence: each is an input
no deliberate check met), other problems (a failing observation without "Error:", an observation
over the cap, a change outside the testbed) and calls per second.

Run: ``python bench/tool_fuzz.py [--calls 10000] [--seed 0]``. Targets: >= 10,000 calls,
0 exceptions, 0 internal errors, 0 other problems.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# bench/office_env.py shares its name with the package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))  # the tests package: its fuzzing strategies

from hypothesis import given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402

from office_env import default_registry  # noqa: E402
from office_env.tools.registry import INTERNAL_ERROR  # noqa: E402
from tests.office_env.test_tool_fuzz import FUZZ, arguments, outside_state, problems_with, write_fuzz_testbed  # noqa: E402


def fuzz_tool(name: str, calls: int, seed: int, work: Path, tally: dict) -> None:
    registry = default_registry()
    parent = work / name
    parent.mkdir()
    ws = write_fuzz_testbed(parent)
    before = outside_state(parent)
    counts = tally["tools"][name]

    @hypothesis_seed(seed)
    @settings(FUZZ, max_examples=calls, derandomize=False)
    @given(args=arguments(registry.get(name).parameters, name))
    def call(args):
        counts["calls"] += 1
        try:
            result = registry.call(ws, name, args)
        except BaseException as exc:  # counted, not raised: the figure is the point
            if isinstance(exc, KeyboardInterrupt):
                raise
            counts["exceptions"] += 1
            tally["examples"].append(f"{name} raised {type(exc).__name__}: {exc!s:.200} for {args!r:.200}\n"
                                     + "".join(traceback.format_exception(exc)[-3:]))
            return
        counts["ok" if result.ok else "errors"] += 1
        for problem in problems_with(name, result):
            key = "internal" if INTERNAL_ERROR in problem else "problems"
            counts[key] += 1
            tally["examples"].append(f"{problem} for {args!r:.200}")
        if outside_state(parent) != before:
            counts["problems"] += 1
            tally["examples"].append(f"{name} changed something outside the testbed for {args!r:.200}")
            before.update(outside_state(parent))

    call()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000, help="generated calls in all (spread over the tools)")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()

    names = sorted(default_registry().names)
    per_tool = -(-options.calls // len(names))
    tally = {"tools": collections.defaultdict(collections.Counter), "examples": []}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tool-fuzz-") as work:
        for name in names:
            fuzz_tool(name, per_tool, options.seed, Path(work), tally)
    seconds = time.perf_counter() - started

    tools = tally["tools"]
    total = sum(c["calls"] for c in tools.values())
    exceptions = sum(c["exceptions"] for c in tools.values())
    internal = sum(c["internal"] for c in tools.values())
    problems = sum(c["problems"] for c in tools.values())
    print(f"{'tool':<24} {'calls':>7} {'ok':>6} {'errors':>7} {'exceptions':>11} {'internal':>9}")
    for name in names:
        c = tools[name]
        print(f"{name:<24} {c['calls']:>7} {c['ok']:>6} {c['errors']:>7} {c['exceptions']:>11} {c['internal']:>9}")
    print()
    print(f"calls            {total:>8,}  (target >= 10,000: {'met' if total >= 10_000 else 'NOT met'})")
    print(f"exceptions       {exceptions:>8}  (target 0: {'met' if exceptions == 0 else 'NOT met'})")
    print(f"internal errors  {internal:>8}  (target 0: {'met' if internal == 0 else 'NOT met'})")
    print(f"other problems   {problems:>8}  (target 0: {'met' if problems == 0 else 'NOT met'})")
    print(f"calls/s          {total / seconds:>8.0f}  ({seconds:.1f} s)")
    for example in tally["examples"][:20]:
        print("\n" + example)
    return 0 if exceptions == internal == problems == 0 and total >= 10_000 else 1


if __name__ == "__main__":
    sys.exit(main())
