"""Benchmark: offline Neo build throughput and where the time goes.

Builds N tasks (default 200) with W workers (default 2) and prints verified tasks per second;
then builds a smaller sample in one process under cProfile and prints the share of time spent
in file writing (workspace synthesis and task staging), oracle/baseline replay, and checks
(criteria evaluation and dialogue rules). Target: at least 15 verified tasks per second on a
2-core machine.

Every task folder holds a copy of its office (about 45 files), so the cost of creating a file on
the output's file system weighs in: the script measures it before the build and prints it. On an
ext4 file system without a journal, creating a file costs about 1 ms instead of 0.1 ms for a
minute or more after many files were deleted there (the inode allocator steps over recently freed
inodes one by one): a run right after another (which deletes its folder at the end) or after an
old build was removed measures the disk, not the build; wait a few minutes. On cores other work
shares, the wall time measures the machine: the script also prints the load average and the CPU
time of the build's processes per verified task (the workers are waited for, so theirs counts). Worlds and the gates'
replays live in a work folder on a memory file system when there is one (``backends.scratch``;
``HOMER_SCRATCH`` moves it). ``--dir`` puts the build there (``--dir /dev/shm`` shows the figure
without the disk). ``--ray`` also builds the same N tasks with ``--executor ray`` (a local Ray
instance with the same workers) and prints both wall times and whether the two datasets are the
same bytes.

The build runs with a clock on its job function: each worker notes when each attempt started and
ended, and the script prints the workers' busy share (the time they spent in attempts, over the
workers times the steady state: from the first attempt's start to the last one's), the mean
attempt's CPU and the parent's CPU per attempt. From them it prints the speed-up to expect at 16
workers against one: ``min(16 x busy share, attempt CPU / parent CPU per attempt)``, the parent's
CPU counted while the workers run (it handles every outcome in turn, so it caps the rate at one
attempt per its CPU per attempt; its CPU before the first attempt and after the last holds no
worker back, and is printed apart: a fixed cost that a larger run spreads thinner), and the
parent's CPU split into starting (the checks, and what the workers share loaded before they fork),
finishing (the card and the index summed from what the workers sent, the last files) and the rest,
around the attempts: the part that caps the rate while the workers run (the others come before or
after them; finishing grows with the tasks kept), and the peak memory of the parent and of the
largest worker (``--n 1000`` against ``--n 3000``: per-task wall time and peak memory should not
grow with the build). Then it
runs oracle eval (long-context) over the dataset with the same workers and prints the same figures
for its tasks, and the parent's CPU split into reading the dataset (the tasks are read on the
workers), writing the results and reports (mostly fixed: loading matplotlib) and the rest, around
the tasks (``--no-eval`` skips it).

``--against TREE`` compares two versions in the same minutes: it runs the build of ``--n`` tasks
``--rounds`` times for each, alternating this tree and ``TREE`` (another checkout, or a commit of this
repository written out to a temporary folder: its packages come first on ``PYTHONPATH``), each in a
fresh process without the eval, and prints every run's CPU time per verified task
and the medians; ``--together`` starts each pair at the same moment, so both share whatever else
loads the machine. ``--profile-n 0`` skips the profile.

Run: ``python bench/build.py [--n 200] [--workers 2] [--profile-n 40] [--dir DIR] [--ray] [--no-eval]
[--against TREE [--rounds 3] [--together]]``.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import hashlib
import io
import json
import os
import pstats
import re
import resource
import shutil
import stat
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import orchestrator.build as build_module  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

SECTIONS = {
    "file writing": [("office_env/synthesis/documents.py", "write_workspace"),
                     ("orchestrator/dataset_writer.py", "stage_task")],
    "oracle/baseline replay": [("office_env/tools/registry.py", "run")],
    "checks": [("office_env/evaluation/catalog.py", "evaluate_criteria"),
               ("verifier/dialogue_rules.py", "check_dialogue"), ("verifier/gates.py", "evidence_gate")],
    "dialogue generation": [("generators/dialogue_offline.py", "generate_dialogue")],
    "exploration": [("surfers/__init__.py", "explore")],
}


def _cumulative(stats: pstats.Stats, file_suffix: str, function: str) -> float:
    total = 0.0
    for (filename, _, name), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]  # typeshed leaves out Stats.stats
        if name == function and filename.replace("\\", "/").endswith(file_suffix):
            total += cumtime
    return total


def file_creation_seconds(folder: Path, count: int = 300) -> float:
    """Seconds to create, write and close one 8 KB file in ``folder`` (the mean of ``count``).
    The files stay until the benchmark's folder is removed: deleting them here would slow the
    build's own file creation (see the module's docstring)."""
    probe = folder / "probe"
    probe.mkdir()
    times = []
    for i in range(count):
        start = time.perf_counter()
        (probe / f"f{i}").write_bytes(b"x" * 8192)
        times.append(time.perf_counter() - start)
    return sum(times) / count


def loop_seconds(count: int = 10_000_000) -> float:
    """Seconds for ``count`` additions in a plain Python loop: how fast this core runs now. The same
    code's throughput moves with it (a shared machine's cores slow down for minutes at a time), so
    compare builds only at a like figure, or alternate two versions in the same minutes."""
    start = time.perf_counter()
    total = 0
    for i in range(count):
        total += i
    return time.perf_counter() - start


def _cpu_seconds() -> tuple[float, float]:
    """User and system CPU seconds of this process and of its ended children (the build's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class JobClock:
    """When each job of a batch ran, as its worker saw it: the job function, replaced in its module
    in this process before the workers fork, appends each job's start and end (CLOCK_MONOTONIC, one
    clock for every process of the machine) and the CPU it took to a file of its worker process."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()

    @contextmanager
    def timing(self, module: ModuleType, name: str) -> Iterator[None]:
        original, folder = getattr(module, name), self.folder

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.monotonic(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                with open(folder / f"{os.getpid()}.txt", "a", encoding="utf-8") as times:
                    times.write(f"{start} {time.monotonic()} {time.process_time() - cpu}\n")

        setattr(module, name, timed)
        try:
            yield
        finally:
            setattr(module, name, original)

    def intervals(self) -> list[tuple[float, float, float]]:
        """Each job's start, end and CPU seconds."""
        return [(float(a), float(b), float(c)) for path in self.folder.glob("*.txt")
                for a, b, c in (line.split() for line in path.read_text(encoding="utf-8").splitlines())]


@contextmanager
def parent_phases(*where: tuple[Any, str]) -> Iterator[dict[str, float]]:
    """The parent's CPU seconds in each of these functions (owner, name), filled in as they run:
    e.g. a batch class's ``start`` and ``finalise`` (``backends.batch``: before the first job and
    after the last). One an older tree lacks (``--against``) stays at 0."""
    phases: dict[str, float] = {name: 0.0 for _, name in where}
    owners = dict((name, owner) for owner, name in where if owner is not None and hasattr(owner, name))
    original = {name: getattr(owner, name) for name, owner in owners.items()}

    def timed(name: str) -> Any:
        def run(*args: Any) -> Any:
            before = _cpu_seconds()[0]
            try:
                return original[name](*args)
            finally:
                phases[name] += _cpu_seconds()[0] - before
        return run

    for name in original:
        setattr(owners[name], name, timed(name))
    try:
        yield phases
    finally:
        for name, method in original.items():
            setattr(owners[name], name, method)


def busy_figures(intervals: list[tuple[float, float, float]], workers: int, parent_cpu: float,
                 outside: float = 0.0) -> dict[str, float] | None:
    """The workers' busy share in the steady state (first start to last start), the mean CPU of a
    job, the parent's CPU per job while the workers run (``parent_cpu`` less ``outside``, its CPU
    before the first job and after the last, which holds no worker back) and the speed-up to expect
    at 16 workers (see the module's docstring; CPU against CPU, as the wall time of a job measures
    the machine's other work too)."""
    if len(intervals) < 2:
        return None
    first, last = min(s for s, _, _ in intervals), max(s for s, _, _ in intervals)
    if last <= first:
        return None
    busy = sum(max(0.0, min(end, last) - max(start, first)) for start, end, _ in intervals) / (workers * (last - first))
    job = sum(cpu for _, _, cpu in intervals) / len(intervals)
    parent = max(0.0, parent_cpu - outside) / len(intervals)
    return {"busy": busy, "job": job, "parent": parent, "outside": outside,
            "speedup16": min(16 * busy, job / parent if parent else 16.0)}


def read_attempts(folder: Path, limit: int = 1 << 30) -> list[dict[str, Any]]:
    """A build's ``attempts.jsonl``: a regular file opened without following a link, of at most
    ``limit`` bytes (plain ``os`` calls: the script also runs on older trees, ``--against``)."""
    fd = os.open(folder / "attempts.jsonl", os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{folder / 'attempts.jsonl'}: not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{folder / 'attempts.jsonl'}: over {limit:,} bytes")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def repeat_figures(attempts: list[dict[str, Any]], quarters: int = 4, shown: int = 4) -> str:
    """How many attempts were made in full only to be dropped as repeats of a kept task
    (``verifier.duplicates``), over the whole build and in each quarter of its attempts, and the
    families that repeated most in the last quarter: a family whose kinds of task the build has
    used up costs whole attempts that add nothing, a share that grows with the build's size."""
    def repeat(item: dict[str, Any]) -> bool:
        return str(item.get("reason", "")).startswith("duplicate")

    ordered = sorted(attempts, key=lambda item: int(item["index"]))
    if not ordered:
        return "repeats: no attempts"
    size = -(-len(ordered) // quarters)
    parts = [ordered[i:i + size] for i in range(0, len(ordered), size)]
    shares = ", ".join(f"{100 * sum(map(repeat, part)) / len(part):.1f} %" for part in parts)
    made: dict[str, list[int]] = {}
    for item in parts[-1]:
        made.setdefault(str(item.get("family")), [0, 0])[repeat(item)] += 1
    worst = sorted(((r, n + r, family) for family, (n, r) in made.items() if r), reverse=True)[:shown]
    return (f"repeats: {sum(map(repeat, ordered))} of {len(ordered)} attempts were dropped as repeats of a kept "
            f"task ({shares} by quarter of the attempts); most repeated in the last quarter: "
            + (", ".join(f"{family} {r}/{total}" for r, total, family in worst) or "none"))


def print_busy(what: str, figures: dict[str, float] | None, workers: int) -> None:
    if figures is None:
        print(f"{what}: too few jobs to measure the workers' busy share")
        return
    print(f"{what}: workers busy {100 * figures['busy']:.1f} % of the steady state on {workers} workers "
          f"(target >= 90 %: {'met' if figures['busy'] >= 0.9 else 'MISSED'}); "
          f"{1000 * figures['job']:.0f} ms of CPU a job, "
          f"parent {1000 * figures['parent']:.1f} ms of CPU a job while they run ({figures['outside']:.2f} s "
          f"before and after them); expected speed-up at 16 workers: "
          f"{figures['speedup16']:.1f}x (min of 16 x busy share {16 * figures['busy']:.1f} and job CPU / parent CPU "
          f"{figures['job'] / figures['parent'] if figures['parent'] else float('inf'):.1f})")


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != ".lock"):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


_FIGURES = re.compile(r"throughput: ([\d.]+) verified.*?CPU time of the build's processes: ([\d.]+) s, (\d+) ms per "
                      r"verified task.*?parent ([\d.]+) s", re.DOTALL)


def _run_tree(tree: Path, args: argparse.Namespace) -> subprocess.Popen:
    """This script's build alone (no profile) in a fresh process, with ``tree``'s packages first."""
    command = [sys.executable, str(Path(__file__).resolve()), "--n", str(args.n), "--workers", str(args.workers),
               "--seed", str(args.seed), "--profile-n", "0", "--no-eval",
               *(["--dir", str(args.dir)] if args.dir else [])]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _figures(tree: Path, process: subprocess.Popen) -> tuple[float, float, float]:
    """(tasks/s, CPU ms per verified task, parent CPU s) of a finished run; exits naming the tree if it failed."""
    out, _ = process.communicate()
    found = _FIGURES.search(out)
    if process.returncode or not found:
        sys.exit(f"{tree}: the build failed:\n{out[-2000:]}")
    return float(found.group(1)), float(found.group(3)), float(found.group(4))


def checkout(against: str, into: Path) -> Path:
    """The tree ``--against`` names: a folder as it is, or else a commit of this repository written
    out under ``into`` (``git archive``: the commit's files, not the working tree's)."""
    if Path(against).is_dir():
        return Path(against).resolve()
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", against], capture_output=True)
    if archive.returncode:
        sys.exit(f"--against {against}: neither a folder nor a commit of {repo}: "
                 f"{archive.stderr.decode(errors='replace').strip()}")
    tree = into / f"tree-{against}"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def compare(args: argparse.Namespace) -> None:
    """``--against``: both versions' builds, alternated (or side by side with ``--together``)."""
    with tempfile.TemporaryDirectory(prefix="bench-against-") as scratch:
        _compare(args, checkout(args.against, Path(scratch)))


def _compare(args: argparse.Namespace, against: Path) -> None:
    trees = {"this tree": Path(__file__).resolve().parent.parent, "against": against}
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
        load = os.getloadavg()[0]
        if args.together:
            started = {name: _run_tree(trees[name], args) for name in order}
            done = {name: _figures(trees[name], process) for name, process in started.items()}
        else:
            done = {name: _figures(trees[name], _run_tree(trees[name], args)) for name in order}
        for name in order:
            runs[name].append(done[name])
            rate, ms, parent = done[name]
            print(f"round {round_ + 1} {name:9} {trees[name]}: {ms:.0f} ms CPU per verified task "
                  f"(parent {parent:.2f} s), {rate:.1f} tasks/s, load average {load:.1f}")
    for name, figures in runs.items():
        ms = statistics.median(f[1] for f in figures)
        print(f"median {name:9}: {ms:.0f} ms CPU per verified task, at most {args.workers * 1000 / ms:.1f} tasks/s "
              f"on {args.workers} idle cores; {statistics.median(f[0] for f in figures):.1f} tasks/s measured")
    print(cpu_ratio_line([mine[1] for mine in runs["this tree"]], [theirs[1] for theirs in runs["against"]]))


def cpu_ratio_line(mine: list[float], theirs: list[float]) -> str:
    """This tree's CPU per task over the other's: per round (the two runs of a round are minutes
    apart at most, so they share the machine's state: its load, its disk's), their median and
    range, and the ratio of the two medians. A round's ratio moves less than either figure."""
    pairs = [m / t for m, t in zip(mine, theirs)]
    return (f"CPU per task, this tree / against: {statistics.median(mine) / statistics.median(theirs):.2f}x "
            f"(ratio of medians); per round {', '.join(f'{r:.2f}' for r in pairs)}: median "
            f"{statistics.median(pairs):.2f}x, from {min(pairs):.2f} to {max(pairs):.2f}")


def eval_busy(tmp: Path, args: argparse.Namespace) -> None:
    """Oracle eval (long-context) of the built dataset with the same workers, its jobs timed."""
    import harness.runner as runner
    from harness.context import ContextConfig

    clock = JobClock(tmp / "eval-times")
    config = runner.EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), workers=args.workers)
    own, _ = _cpu_seconds()
    start = time.perf_counter()
    batch = runner.EvalBatch
    with clock.timing(runner, "_run_job"), parent_phases((batch, "start"), (batch, "finalise")) as phases:
        run = runner.evaluate(tmp / "full", tmp / "eval", config)
    elapsed = time.perf_counter() - start
    parent = _cpu_seconds()[0] - own
    print(f"oracle eval of {len(run.rows)} task(s) with {args.workers} workers in {elapsed:.2f} s "
          f"({len(run.rows) / elapsed:.1f} tasks/s; parent {parent:.2f} s of CPU: {phases['start']:.2f} s reading "
          f"the dataset, {phases['finalise']:.2f} s writing results and reports, "
          f"{parent - phases['start'] - phases['finalise']:.2f} s around the tasks)")
    print_busy("eval", busy_figures(clock.intervals(), args.workers, parent, phases["start"] + phases["finalise"]),
               args.workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile-n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=None, help="Build under this folder (default: the temp folder)")
    parser.add_argument("--ray", action="store_true", help="Also build with --executor ray and compare")
    parser.add_argument("--no-eval", action="store_true", help="Skip the timed oracle eval after the build")
    parser.add_argument("--against", default=None,
                        help="Compare with the checkout TREE, a folder or a commit of this repository (see above)")
    parser.add_argument("--rounds", type=int, default=3, help="With --against: builds per version")
    parser.add_argument("--together", action="store_true", help="With --against: run each pair at once")
    args = parser.parse_args()
    if args.against is not None:
        compare(args)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench-build-", dir=args.dir))
    try:
        config = BuildConfig(seed=args.seed)
        print(f"creating a small file under {tmp.parent}: {1000 * file_creation_seconds(tmp):.3f} ms "
              f"(above ~0.2 ms the file system is slow now: see the docstring)")
        print(f"10M additions in a Python loop: {loop_seconds():.2f} s (how fast a core runs now)")
        print(f"load average before the build: {os.getloadavg()[0]:.1f} (above {args.workers} other work shares "
              "the cores: the wall time then measures the machine, the CPU time per task less so)")
        clock = JobClock(tmp / "build-times")
        cpu = _cpu_seconds()
        start = time.perf_counter()
        batch = getattr(build_module, "BuildBatch", None)  # None in a tree older than the batch runner
        with clock.timing(build_module, "run_attempt"), parent_phases(
                (build_module, "check_families"), (build_module, "check_banks"), (batch, "start"),
                (batch, "finalise")) as phases:
            summary = build(tmp / "full", args.n, config, workers=args.workers)
        elapsed = time.perf_counter() - start
        parent, workers = (after - before for after, before in zip(_cpu_seconds(), cpu))
        cpu = parent + workers
        rate = summary.accepted / elapsed
        print(f"built {summary.accepted} verified tasks from {summary.attempts} attempts "
              f"with {args.workers} workers in {elapsed:.2f} s")
        print(f"throughput: {rate:.1f} verified tasks/s (target >= 15: {'met' if rate >= 15 else 'MISSED'})")
        print(f"CPU time of the build's processes: {cpu:.2f} s, {1000 * cpu / max(1, summary.accepted):.0f} ms per "
              f"verified task (at most {args.workers * summary.accepted / cpu:.1f} tasks/s on {args.workers} idle "
              f"cores at that cost; parent {parent:.2f} s, workers {workers:.2f} s); load average after: "
              f"{os.getloadavg()[0]:.1f}")
        starting = phases["check_families"] + phases["check_banks"] + phases["start"]
        print(f"build's parent: {starting:.2f} s of CPU starting (checks, loading what the workers share), "
              f"{phases['finalise']:.2f} s finishing ({1000 * phases['finalise'] / max(1, summary.accepted):.2f} ms "
              f"a task: the card and the index from the workers' figures, the last files), "
              f"{parent - starting - phases['finalise']:.2f} s around the attempts")
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"peak memory: parent {own.ru_maxrss / 1024:.1f} MiB, largest worker "
              f"{children.ru_maxrss / 1024:.1f} MiB; "
              f"{1000 * elapsed / max(1, summary.accepted):.1f} ms of wall time a task")
        print_busy("build", busy_figures(clock.intervals(), args.workers, parent, starting + phases["finalise"]),
                   args.workers)
        try:
            print(repeat_figures(read_attempts(tmp / "full")) + f"; {getattr(summary, 'repeats_stopped', 0)} of them "
                  "stopped at their drafts (their chats and gates never run)")
        except (OSError, ValueError) as exc:  # a tree that keeps no such file, or another form of it
            print(f"repeats: the build's attempts.jsonl could not be read ({exc})")
        if not args.no_eval:
            eval_busy(tmp, args)
        if args.ray:
            import ray

            start = time.perf_counter()
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
            started = time.perf_counter() - start
            start = time.perf_counter()
            build(tmp / "ray", args.n, config, workers=args.workers, executor="ray")
            on_ray = time.perf_counter() - start
            ray.shutdown()
            same = _digest(tmp / "full") == _digest(tmp / "ray")
            print(f"ray executor: {on_ray:.2f} s (+{started:.1f} s to start Ray) vs local {elapsed:.2f} s; "
                  f"same bytes: {'yes' if same else 'NO'}")

        if args.profile_n < 1:
            return
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        build(tmp / "profiled", args.profile_n, BuildConfig(seed=args.seed + 1), workers=1)
        profiler.disable()
        wall = time.perf_counter() - start
        stats = pstats.Stats(profiler)
        print(f"\nwhere one process spends its time ({args.profile_n} tasks, {wall:.2f} s under the profiler):")
        for section, targets in SECTIONS.items():
            seconds = sum(_cumulative(stats, f, fn) for f, fn in targets)
            print(f"  {section:24} {seconds:6.2f} s  {100 * seconds / wall:5.1f} %")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
