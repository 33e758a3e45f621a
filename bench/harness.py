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

``--stream-check``: eval's memory is flat in the number of tasks. Builds (or reuses, with
``--datasets DIR``) two offline datasets of N and M tasks (``--n``, default 300; ``--large``,
default 3N; 2 days of about 10 utterances a task, as ``homer build --n N --days 2 --utterances
10``), runs ``homer eval DATASET --agent oracle`` on each in a fresh process and prints that
process's peak resident memory (the parent, which holds the run; its workers' peak beside it),
its tasks per second and CPU per task (the parent's, the workers'), and the ratio of the peaks
(target <= 1.20; a shared machine's load moves the rates, not the peaks). Run: ``python bench/harness.py
--stream-check [--n 300] [--large 1000] [--datasets /tmp/stream-ds]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks  # noqa: E402
from harness.context import ContextConfig, build_context  # noqa: E402
from harness.runner import EvalConfig, evaluate  # noqa: E402
from orchestrator.build import build  # noqa: E402
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
    for (filename, _, name), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]  # typeshed leaves out Stats.stats
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


# Run in a fresh process: ``homer eval`` as the command line runs it, then the process's own peak
# resident memory (ru_maxrss: KiB on Linux) and its workers' (the largest), the CPU time of each,
# its wall time and the tasks it scored, as one JSON line on standard error when it exits.
_MEASURED_EVAL = """
import atexit, json, resource, sys, time
start = time.perf_counter()
def _figures():
    run = json.load(open(sys.argv[-1] + "/run.json"))
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print("STREAM-CHECK " + json.dumps({"peak_kib": own.ru_maxrss, "workers_peak_kib": workers.ru_maxrss,
          "cpu": own.ru_utime + own.ru_stime, "workers_cpu": workers.ru_utime + workers.ru_stime,
          "seconds": time.perf_counter() - start, "run_seconds": run["elapsed_seconds"], "tasks": run["tasks"],
          "runs": run["runs"]}), file=sys.stderr)
atexit.register(_figures)
from orchestrator.cli import main
sys.argv = ["homer", *sys.argv[1:]]
main()
"""


_HOMER = "import sys\nfrom orchestrator.cli import main\nsys.argv = ['homer', *sys.argv[1:]]\nmain()\n"


def _dataset(folder: Path, n: int, seed: int) -> Path:
    """An offline dataset of ``n`` tasks in ``folder`` (built once: a folder holding ``n`` tasks is reused)."""
    dataset = folder / f"ds{n}"
    if (dataset / "tasks").is_dir() and len(os.listdir(dataset / "tasks")) == n:
        print(f"reusing {dataset} ({n} tasks)")
        return dataset
    shutil.rmtree(dataset, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _HOMER, "build", "--out", str(dataset), "--n", str(n),
                           "--seed", str(seed), "--days", "2", "--utterances", "10", "-q"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"homer build --n {n} failed:\n{proc.stderr}")
    print(f"built {n} tasks in {time.perf_counter() - start:.0f} s (setup, not measured)")
    return dataset


def _measured_eval(dataset: Path, out: Path, workers: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run([sys.executable, "-c", _MEASURED_EVAL, "eval", str(dataset), "--agent", "oracle",
                           "--workers", str(workers), "-q", "--out", str(out)], capture_output=True, text=True)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("STREAM-CHECK ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"homer eval {dataset} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("STREAM-CHECK "))


def stream_check(n: int, large: int, workers: int, seed: int, datasets: Path | None) -> None:
    """Peak memory of ``homer eval`` (oracle) on n and on ``large`` tasks, and their ratio."""
    folder = datasets or Path(tempfile.mkdtemp(prefix="bench-stream-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        figures = {}
        for size in (n, large):
            dataset = _dataset(folder, size, seed)
            figures[size] = run = _measured_eval(dataset, folder / f"run{size}", workers)
            print(f"homer eval --agent oracle, {run['tasks']} tasks ({run['runs']} runs), {workers} workers: peak RSS "
                  f"{run['peak_kib'] / 1024:.1f} MiB (workers' {run['workers_peak_kib'] / 1024:.1f} MiB), "
                  f"{run['tasks'] / run['run_seconds']:.1f} tasks/s over the run ({run['run_seconds']:.1f} s; "
                  f"{run['seconds']:.1f} s from the process's start to its exit); CPU per task: "
                  f"{1000 * run['cpu'] / run['tasks']:.1f} ms in the parent, "
                  f"{1000 * run['workers_cpu'] / run['tasks']:.1f} ms in the workers")
        ratio = figures[large]["peak_kib"] / figures[n]["peak_kib"]
        print(f"peak RSS {large} vs {n} tasks: {ratio:.3f}x (target <= 1.20: {'met' if ratio <= 1.20 else 'MISSED'}); "
              f"workers' {figures[large]['workers_peak_kib'] / figures[n]['workers_peak_kib']:.3f}x; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if datasets is None:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            for size in (n, large):
                shutil.rmtree(folder / f"run{size}", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rag-tasks", type=int, default=600)
    parser.add_argument("--profile-n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--stream-check", action="store_true",
                        help="peak memory of homer eval on --n and --large tasks, and their ratio")
    parser.add_argument("--large", type=int, help="--stream-check: the larger dataset's tasks (default 3 x --n)")
    parser.add_argument("--datasets", type=Path, help="--stream-check: build the datasets here and reuse them")
    args = parser.parse_args()
    if args.stream_check:
        stream_check(args.n, args.large or 3 * args.n, args.workers, args.seed, args.datasets)
        return
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
        rate = summary.runs / elapsed
        print(f"oracle agent, long-context, {args.workers} workers: {summary.runs} tasks in {elapsed:.2f} s, "
              f"pass rate {100 * summary.pass_rate:.1f} %")
        print(f"throughput: {rate:.1f} tasks/s (target >= 50: {'met' if rate >= 50 else 'MISSED'}; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end)")

        tasks = list(iter_tasks(dataset))
        single_sample = _sample(tmp / "single-ds", tasks[: args.profile_n])
        profile_sample = _sample(tmp / "profile-ds", tasks[args.profile_n: 2 * args.profile_n])  # a cold read cache
        start = time.perf_counter()
        ran = evaluate(single_sample, tmp / "single",
                       EvalConfig(agent="oracle", context=ContextConfig(mode="long-context")))
        if not ran.runs:
            raise SystemExit("the one-process sample ran no task: nothing to measure")
        single = ran.runs / (time.perf_counter() - start)
        print(f"one process ({ran.runs} tasks): {single:.1f} tasks/s = {1000 / single:.1f} ms per task; "
              f"the ceiling with {args.workers} workers on idle cores is about {args.workers * single:.0f} tasks/s")

        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        profiled = evaluate(profile_sample, tmp / "profiled",
                            EvalConfig(agent="oracle", context=ContextConfig(mode="long-context")))
        profiler.disable()
        wall = time.perf_counter() - start
        stats = pstats.Stats(profiler)
        print(f"\nwhere one process spends its time ({profiled.runs} tasks, {wall:.2f} s under the profiler, "
              f"{profiled.runs / wall:.1f} tasks/s):")
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
