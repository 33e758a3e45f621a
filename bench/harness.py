"""Benchmark: evaluation throughput of the oracle agent, and BM25 retrieval time.

Builds an offline dataset of N tasks (default 300, default build options: 5 days of about 70
utterances) in a temporary folder, then:

1. evaluates it with the oracle agent in long-context mode with W workers (default 2) and prints
   tasks per second (target >= 50), the machine's load, and one process's rate on a sample (the
   per-core ceiling); then profiles one process over another sample and prints where a task's
   time goes (testbed copy, context, agent tool calls, criteria, copy removal, results);
2. builds the history context in rag raw/utterance mode (BM25 index over every utterance + one
   query) for 600 tasks (the dataset twice) and prints the total (target < 5 s).

Run: ``python bench/harness.py [--n 300] [--workers 2] [--rag-tasks 600]``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from harness.context import ContextConfig, build_context  # noqa: E402
from harness.runner import EvalConfig, evaluate  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.dataset_writer import iter_tasks  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

SECTIONS = {
    "testbed copy": [("office_env/workspace.py", "copy_to")],
    "history context": [("harness/context.py", "build_context")],
    "agent tool calls": [("harness/agents.py", "run")],
    "criteria": [("office_env/evaluation/catalog.py", "evaluate_criteria")],
    "copy removal": [("shutil.py", "rmtree")],
    "results and report": [("harness/runner.py", "_write")],
}


def _cumulative(stats: pstats.Stats, file_suffix: str, function: str) -> float:
    total = 0.0
    for (filename, _, name), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        if name == function and filename.replace("\\", "/").endswith(file_suffix):
            total = max(total, cumtime) if file_suffix == "shutil.py" else total + cumtime
    return total


def _sample(folder: Path, tasks: list) -> Path:
    """A dataset folder holding copies of ``tasks`` (a dataset's task folders are never followed
    through links, so a sample of links would be an empty dataset)."""
    (folder / "tasks").mkdir(parents=True)
    for task in tasks:
        shutil.copytree(task.folder, folder / "tasks" / task.id)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rag-tasks", type=int, default=600)
    parser.add_argument("--profile-n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    try:
        dataset = tmp / "ds"
        start = time.perf_counter()
        built = build(dataset, args.n, BuildConfig(seed=args.seed), workers=max(2, args.workers))
        print(f"built {built.accepted} tasks in {time.perf_counter() - start:.1f} s (setup, not measured)")

        config = EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), workers=args.workers)
        start = time.perf_counter()
        summary = evaluate(dataset, tmp / "run", config)
        elapsed = time.perf_counter() - start
        rate = len(summary.rows) / elapsed
        print(f"oracle agent, long-context, {args.workers} workers: {len(summary.rows)} tasks in {elapsed:.2f} s, "
              f"pass rate {100 * summary.pass_rate:.1f} %")
        print(f"throughput: {rate:.1f} tasks/s (target >= 50: {'met' if rate >= 50 else 'MISSED'}; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end)")

        tasks = list(iter_tasks(dataset))
        single_sample = _sample(tmp / "single-ds", tasks[: args.profile_n])
        profile_sample = _sample(tmp / "profile-ds", tasks[args.profile_n: 2 * args.profile_n])  # a cold read cache
        start = time.perf_counter()
        ran = evaluate(single_sample, tmp / "single",
                       EvalConfig(agent="oracle", context=ContextConfig(mode="long-context")))
        if not ran.rows:
            raise SystemExit("the one-process sample ran no task: nothing to measure")
        single = len(ran.rows) / (time.perf_counter() - start)
        print(f"one process ({len(ran.rows)} tasks): {single:.1f} tasks/s = {1000 / single:.1f} ms per task; "
              f"the ceiling with {args.workers} workers on idle cores is about {args.workers * single:.0f} tasks/s")

        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        profiled = evaluate(profile_sample, tmp / "profiled",
                            EvalConfig(agent="oracle", context=ContextConfig(mode="long-context")))
        profiler.disable()
        wall = time.perf_counter() - start
        stats = pstats.Stats(profiler)
        print(f"\nwhere one process spends its time ({len(profiled.rows)} tasks, {wall:.2f} s under the profiler, "
              f"{len(profiled.rows) / wall:.1f} tasks/s):")
        for section, targets in SECTIONS.items():
            seconds = sum(_cumulative(stats, f, fn) for f, fn in targets)
            print(f"  {section:20} {seconds:6.2f} s  {100 * seconds / wall:5.1f} %")

        records = [t.record for t in iter_tasks(dataset) if t.record is not None]
        rag = ContextConfig(mode="rag", storage="raw", granularity="utterance", top_k=5)
        batch = (records * (args.rag_tasks // max(1, len(records)) + 1))[: args.rag_tasks]
        utterances = sum(len(s["turns"]) for r in batch for s in r["dialogue"])
        start = time.perf_counter()
        recalls = [build_context(record, rag).evidence_recall for record in batch]
        elapsed = time.perf_counter() - start
        mean_recall = sum(r for r in recalls if r is not None) / max(1, sum(r is not None for r in recalls))
        print(f"\nrag raw/utterance (BM25, k=5): {len(batch)} tasks, {utterances:,} utterances indexed, "
              f"{elapsed:.2f} s total ({1000 * elapsed / len(batch):.2f} ms per task; target < 5 s: "
              f"{'met' if elapsed < 5 else 'MISSED'}); mean evidence recall {100 * mean_recall:.1f} %")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
