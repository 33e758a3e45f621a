"""Benchmark: the memory a build's duplicate check holds per kept task, in its parent and in a worker.

A build keeps the identity of every task it keeps (``verifier.duplicates``): its parent in the
duplicate check over its outcomes (``orchestrator.build.UniqueSoFar``), and each worker in what it
read of ``.work/kept-identities.jsonl`` to stop repeats at their drafts
(``orchestrator.kept_identities``). Both grow with the build, so at 100,000 tasks their bytes per
task matter. The script builds ``--n`` tasks (default 200, seed 11) to learn what real identities
look like, makes ``--kept`` distinct ones like them (each task's keys made its own; four words of
its description swapped for others of the build's words, so no two are near-duplicates by chance),
writes them with the parent's own writer, and prints, measured with ``tracemalloc``:

- a worker's bytes per kept task after reading the whole file (the peak, too: it reads in pieces);
- the parent's bytes per kept task for its duplicate check, beyond the outcomes it holds anyway
  (its outcomes held as a build holds them, ``orchestrator.build.compact``);
- what a worker's look-up costs (a repeat and a task no kept one is like).

Run: ``python bench/duplicate_index.py [--n 200] [--kept 20000] [--seed 11]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from orchestrator.build import UniqueSoFar, build, compact  # noqa: E402
from orchestrator.kept_identities import NAME, KeptIdentities, repeat_of  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402


def identities(folder: Path, kept: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """``kept`` distinct identities like those of the tasks the build in ``folder`` kept."""
    rows = [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines()]
    real = [(row["keys"], row["words"]) for row in rows if row["status"] == "accepted"]
    vocabulary = sorted({word for _, words in real for word in words[1:]})
    rng = random.Random(seed)
    made = []
    for number in range(kept):
        keys, words = real[number % len(real)]
        said = set(words[1:])
        for _ in range(4):
            said.discard(rng.choice(sorted(said)))
        said |= set(rng.sample(vocabulary, 4))
        made.append(([f"{key}-{number}" for key in keys], [words[0], *sorted(said)]))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--kept", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-duplicates-"))
    try:
        build(tmp / "built", args.n, BuildConfig(seed=args.seed), workers=2)
        made = identities(tmp / "built", args.kept, args.seed)
        done = {index: compact({"index": index, "status": "accepted", "keys": keys, "words": words})
                for index, (keys, words) in enumerate(made)}
        writer = KeptIdentities(tmp)
        writer.settle(done, lambda index: True, "error")
        writer.close()
        size = (tmp / NAME).stat().st_size

        tracemalloc.start()
        repeat_of(tmp / NAME, len(made), ["none:0"], ["none"])
        worker, worker_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        last = len(made) - 1  # kept, as every one before it: none is alike another by chance
        assert repeat_of(tmp / NAME, len(made), made[last][0], []) == last, "a made identity was not kept"
        print(f"{len(made)} kept tasks ({size / 2**20:.1f} MiB of kept-identities.jsonl, "
              f"{size / len(made):.0f} bytes a task)")
        print(f"a worker's index: {worker / 2**20:.1f} MiB, {worker / len(made):.0f} bytes a kept task "
              f"(peak while reading {worker_peak / 2**20:.1f} MiB); at 100,000 kept tasks about "
              f"{worker / len(made) * 100_000 / 2**20:.0f} MiB")

        tracemalloc.start()
        UniqueSoFar(done).firsts()
        parent, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"the parent's duplicate check: {parent / 2**20:.1f} MiB, {parent / len(made):.0f} bytes a kept task "
              f"beyond its outcomes; at 100,000 about {parent / len(made) * 100_000 / 2**20:.0f} MiB")

        keys, words = made[len(made) // 2]
        asks = 2000
        start = time.perf_counter()
        for _ in range(asks):
            repeat_of(tmp / NAME, len(made), keys, words)
            repeat_of(tmp / NAME, len(made), ["none:0"], [words[0], "nothing", "like", "it"])
        took = (time.perf_counter() - start) / (2 * asks)
        print(f"a worker's look-up (the file opened, nothing new in it): {1e6 * took:.0f} us")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
