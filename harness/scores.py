"""Scores a researcher can lean on: bootstrap confidence intervals, the oracle-normalized score and
paired comparisons of two runs.

- Every interval is a seeded percentile bootstrap over tasks (a task's trials stay together), so
  the same rows give the same interval; ``RESAMPLES`` resamples by default. The resamples are
  drawn and averaged a few at a time (at most ``CHUNK_VALUES`` picks at once): the draws are
  those of one ``integers(0, n, size=(resamples, n))`` call, so the intervals are the same, and
  the memory is not the resamples times the tasks.
- ONS (oracle-normalized score) of a task group is ``(agent - none) / (oracle - none)`` on its
  tasks, where ``none`` is how often doing nothing passes and ``oracle`` how often the reference
  plan passes (both measured by the run on each task: ``row["reference"]``). It is undefined
  (None) when the oracle does no better than doing nothing.
- ``compare_runs``: the per-task pass-rate difference of two runs on their common tasks, with its
  bootstrap interval and an exact two-sided sign test over the tasks where they differ.
"""

from __future__ import annotations

import os
from collections import defaultdict
from math import comb
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from backends.batch import iter_lines
from office_env.seeding import RAW, np_rng
from office_env.untrusted import UntrustedInputError, load_json, open_regular, parse_json, printable

RESAMPLES = 1000
LEVEL = 0.95
CHUNK_VALUES = 1 << 18  # picks drawn at once (2 MiB of indices): memory flat in the number of tasks


def per_task(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each task's pass fraction over its runs that did not end with an error, whether all of them
    passed, its app count and its reference scores (None where the run did not measure them)."""
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if not row.get("error"):
            runs[row["id"]].append(row)
    out = {}
    for task, task_rows in runs.items():
        reference = task_rows[0].get("reference") or {}
        out[task] = {"pass": float(np.mean([1.0 if r["passed"] else 0.0 for r in task_rows])),
                     "all": all(r["passed"] for r in task_rows), "app_count": task_rows[0].get("app_count"),
                     "none": _score(reference.get("none")), "oracle": _score(reference.get("oracle"))}
    return out


def _score(value: Any) -> float | None:
    return None if value is None else (1.0 if value is True else 0.0 if value is False else float(value))


def _index_chunks(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resamples' picks of ``n`` tasks, some rows at a time: together the rows of one
    ``integers(0, n, size=(resamples, n))`` draw (the generator's stream does not depend on how
    the draw is cut), each chunk at most ``CHUNK_VALUES`` picks (one row when a row is more)."""
    generator = np_rng(seed, legacy=RAW)
    step = max(1, CHUNK_VALUES // max(1, n))
    for start in range(0, resamples, step):
        yield generator.integers(0, n, size=(min(step, resamples - start), n))


def _resampled_means(resamples: int, seed: int, *values: np.ndarray) -> list[np.ndarray]:
    """For each array of ``values`` (one value per task, all as long), the mean of every resample."""
    means: list[list[np.ndarray]] = [[] for _ in values]
    for picks in _index_chunks(len(values[0]), resamples, seed):
        for out, array in zip(means, values):
            out.append(array[picks].mean(axis=1))
    return [np.concatenate(parts) if parts else np.empty(0) for parts in means]


def interval(values: np.ndarray, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of ``values`` (one per task)."""
    if len(values) == 0:
        return None
    return _bounds(_resampled_means(resamples, seed, values)[0])


def _bounds(samples: np.ndarray) -> tuple[float, float] | None:
    samples = samples[np.isfinite(samples)]
    if len(samples) == 0:
        return None
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def ons(agent: np.ndarray, none: np.ndarray, oracle: np.ndarray) -> float | None:
    gap = oracle.mean() - none.mean()
    return None if len(agent) == 0 or gap <= 0 else float((agent.mean() - none.mean()) / gap)


def ons_interval(agent: np.ndarray, none: np.ndarray, oracle: np.ndarray, resamples: int = RESAMPLES,
                 seed: int = 0) -> tuple[float, float] | None:
    if len(agent) == 0:
        return None
    a, n, o = _resampled_means(resamples, seed, agent, none, oracle)
    gap = o - n
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(gap > 0, (a - n) / np.where(gap > 0, gap, 1.0), np.nan)
    return _bounds(ratio)


def group_scores(tasks: dict[str, dict[str, Any]], resamples: int = RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """Intervals for pass rate and pass^k, and ONS with its interval, over the given tasks (ONS
    over those whose run measured both references)."""
    passes = np.array([t["pass"] for t in tasks.values()])
    alls = np.array([1.0 if t["all"] else 0.0 for t in tasks.values()])
    measured = [t for t in tasks.values() if t["none"] is not None and t["oracle"] is not None]
    agent = np.array([t["pass"] for t in measured])
    none = np.array([t["none"] for t in measured])
    oracle = np.array([t["oracle"] for t in measured])
    return scores_of(passes, alls, agent, none, oracle, resamples, seed)


def scores_of(passes: np.ndarray, alls: np.ndarray, agent: np.ndarray, none: np.ndarray, oracle: np.ndarray,
              resamples: int = RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """:func:`group_scores` of the tasks as arrays (one value per task, in the tasks' order):
    pass fractions, all-passed (1.0 or 0.0), and for the tasks with both references measured their
    pass fractions, none and oracle scores."""
    measured = len(agent) > 0
    return {"pass_rate_ci": interval(passes, resamples, seed), "pass_k_ci": interval(alls, resamples, seed),
            "ons": ons(agent, none, oracle) if measured else None,
            "ons_ci": ons_interval(agent, none, oracle, resamples, seed) if measured else None,
            "ons_tasks": len(agent)}


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided binomial sign test (ties left out): the chance of a split at least this uneven."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def compare_runs(rows_a: Iterable[dict[str, Any]], rows_b: Iterable[dict[str, Any]], resamples: int = RESAMPLES,
                 seed: int = 0) -> dict[str, Any]:
    """B minus A on the tasks both runs scored."""
    return compare_tasks(per_task(rows_a), per_task(rows_b), resamples, seed)


def compare_tasks(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], resamples: int = RESAMPLES,
                  seed: int = 0) -> dict[str, Any]:
    """:func:`compare_runs` of the two runs' :func:`per_task` figures (what is held of a run's rows)."""
    common = sorted(set(a) & set(b))
    diff = np.array([b[t]["pass"] - a[t]["pass"] for t in common])
    wins = int((diff > 0).sum())
    losses = int((diff < 0).sum())
    return {"tasks": len(common), "only_a": len(set(a) - set(b)), "only_b": len(set(b) - set(a)),
            "pass_rate_a": float(np.mean([a[t]["pass"] for t in common])) if common else None,
            "pass_rate_b": float(np.mean([b[t]["pass"] for t in common])) if common else None,
            "difference": float(diff.mean()) if common else None,
            "difference_ci": interval(diff, resamples, seed) if common else None,
            "b_better": wins, "a_better": losses, "same": len(common) - wins - losses,
            "b_better_tasks": [t for t, d in zip(common, diff) if d > 0],
            "a_better_tasks": [t for t, d in zip(common, diff) if d < 0],
            "sign_test_p": sign_test(wins, losses)}


class RunError(ValueError):
    """A run folder that cannot be compared; the message names the folder and what is wrong."""


MAX_RESULTS_LINE_BYTES = 64 * 1024 * 1024  # one row of results.jsonl


def same_dataset(a: Path | str, b: Path | str) -> bool:
    """Whether two runs' ``dataset`` paths name the same folder."""
    return Path(a).resolve() == Path(b).resolve()


def pairing_problem(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Why two runs (or a run and a dataset's :func:`~backends.dataset_reader.dataset_identity`) were not
    made on the same dataset contents, naming the first task that differs; ``None`` when they
    were. Runs are paired by content: a byte-identical copy at another path pairs, a dataset
    rebuilt at the same path does not. Runs written before fingerprints existed pair by path."""
    digests_a, digests_b = a.get("task_digests"), b.get("task_digests")
    if not isinstance(digests_a, dict) or not isinstance(digests_b, dict):
        if same_dataset(str(a.get("dataset")), str(b.get("dataset"))):
            return None
        return f"another dataset folder ({printable(str(b.get('dataset')))})"
    if digests_a == digests_b:
        return None
    for task in sorted(set(digests_a) | set(digests_b), key=str):
        if task not in digests_b:
            return f"other dataset contents: task {printable(str(task))} is only in the first"
        if task not in digests_a:
            return f"other dataset contents: task {printable(str(task))} is only in the second"
        if digests_a[task] != digests_b[task]:
            return f"other dataset contents: task {printable(str(task))} differs"
    return None


def read_run(folder: Path | str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A finished eval run's ``run.json`` and result rows (each row checked for the fields scores use)."""
    meta, rows = open_run(folder)
    return meta, list(rows)


def open_run(folder: Path | str) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """A finished eval run's ``run.json`` (checked at once) and its result rows, read and checked
    one at a time as the iterator is used (a bad line raises :class:`RunError` there): a large
    run's rows are never all held."""
    folder = Path(folder)
    name = printable(str(folder))
    if not (folder / "run.json").is_file() or not (folder / "results.jsonl").is_file():
        raise RunError(f"{name}: not a finished eval run (no run.json and results.jsonl); `homer eval ... --out` "
                       "writes one")
    try:
        run = load_json(folder / "run.json")
        os.close(open_regular(folder / "results.jsonl", f"{name}/results.jsonl")[0])  # refused now, not later
    except (UntrustedInputError, OSError) as exc:
        raise RunError(str(exc)) from None
    if not isinstance(run, dict) or not isinstance(run.get("dataset"), str):
        raise RunError(f"{name}/run.json: field dataset: missing")
    if "task_digests" in run and not isinstance(run["task_digests"], dict):
        raise RunError(f"{name}/run.json: field task_digests: not an object")
    if run.get("state", "finished") != "finished":
        raise RunError(f"{name}: an unfinished eval run (state: {printable(str(run.get('state')))}); finish it with "
                       f"`homer eval ... --out {name} --resume`")
    return run, _checked_rows(folder, name)


def _checked_rows(folder: Path, name: str) -> Iterator[dict[str, Any]]:
    label = f"{name}/results.jsonl"
    try:
        n = 0
        for line in iter_lines(folder / "results.jsonl", label, max_line=MAX_RESULTS_LINE_BYTES):
            n += 1
            if line is None:
                raise RunError(f"{label} line {n}: longer than {MAX_RESULTS_LINE_BYTES // 2**20} MiB")
            if not line.strip():
                continue
            row = parse_json(line.decode("utf-8", "replace"), f"{label} line {n}")
            _check_row(row, label, n)
            yield row
    except (UntrustedInputError, OSError) as exc:
        raise RunError(str(exc)) from None


def _check_row(row: Any, label: str, n: int) -> None:
    if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("passed"), bool):
        raise RunError(f"{label} line {n}: fields id and passed are needed")
    reference = row.get("reference")
    if reference is not None and (not isinstance(reference, dict) or any(
            v is not None and not isinstance(v, (bool, int, float)) for v in reference.values())):
        raise RunError(f"{label} line {n}: field reference: must map none / oracle to true, false or null")
