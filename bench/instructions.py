"""Benchmark: instructions per task of a one-process offline build, against another version.

On a machine other work shares, CPU time per task moves by more than two versions differ
(``bench/build.py --against`` prints rounds from 0.72x to 1.16x of one another). A count of the
instructions a build executes does not move with the load: this script runs a one-process build
under ``valgrind --tool=cachegrind --cache-sim=no`` twice per version (five tasks to warm up, then
``--base`` tasks, and again with ``--n`` tasks; ``PYTHONHASHSEED=0``, one BLAS thread), and prints the difference
over ``--n - --base`` tasks (imports, warm-up and the first worlds cancel out) and the ratio of this
tree's figure to the other's. It needs valgrind on the machine (not a Python package: the script
says so and stops when it is missing); each run is about fifty times slower than the build.

Run: ``python bench/instructions.py --against 752a3dd [--n 70] [--base 10]``.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the build a run counts: a warm-up of five tasks, then ``n`` (none for n = 0), in one process
BUILD = ("import sys, tempfile\nfrom pathlib import Path\nfrom orchestrator.build import build\n"
         "from orchestrator.roles import BuildConfig\ntmp = Path(tempfile.mkdtemp())\n"
         "build(tmp / 'warm', 5, BuildConfig(seed=99), workers=1)\nn = int(sys.argv[1])\n"
         "if n: build(tmp / 'counted', n, BuildConfig(seed=12), workers=1)\n")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def tree_of(against: str, into: Path) -> Path:
    """A folder as it is, or a commit of this repository written out under ``into``."""
    if Path(against).is_dir():
        return Path(against).resolve()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", against], capture_output=True)
    if archive.returncode:
        sys.exit(f"--against {against}: neither a folder nor a commit of {ROOT}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def count(tree: Path, n: int, scratch: Path) -> int:
    """Instructions of one run of ``BUILD`` with ``tree``'s packages first."""
    # one BLAS thread: numpy's spinning BLAS threads add instructions that vary by a few per cent from run to run
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    out = scratch / f"cachegrind-{os.getpid()}-{id(tree)}-{n}.out"
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                           sys.executable, "-c", BUILD, str(n)], cwd=tree, env=env, capture_output=True, text=True)
    found = _REFS.search(done.stderr)
    if done.returncode or not found:
        sys.exit(f"{tree}: the counted build failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="another checkout's folder, or a commit of this repository")
    parser.add_argument("--n", type=int, default=70)
    parser.add_argument("--base", type=int, default=10)
    args = parser.parse_args()
    if args.n <= args.base or args.base < 0:
        sys.exit("--n must be larger than --base (and --base at least 0)")
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: this benchmark counts instructions with it")
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as scratch:
        trees = {"this tree": ROOT, "against": tree_of(args.against, Path(scratch) / "against")}
        runs = [(name, n) for name in trees for n in (args.base, args.n)]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counts = dict(zip(runs, pool.map(lambda run: count(trees[run[0]], run[1], Path(scratch)), runs)))
    per_task = {name: (counts[(name, args.n)] - counts[(name, args.base)]) / (args.n - args.base) for name in trees}
    for name, tree in trees.items():
        print(f"{name:9} {tree}: {per_task[name] / 1e9:.3f} G instructions a task "
              f"(runs of {args.base} and {args.n} tasks: {counts[(name, args.base)] / 1e9:.2f} G, "
              f"{counts[(name, args.n)] / 1e9:.2f} G)")
    print(f"instructions per task, this tree / against: {per_task['this tree'] / per_task['against']:.2f}x")


if __name__ == "__main__":
    main()
