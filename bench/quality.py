"""Benchmark: how realistic and how hard to game a dataset's chat histories are.

Builds an offline dataset (default 60 tasks, seed 11, default build options) in a temporary
folder, or reads an existing one (``--dataset DIR``), and prints each figure with its target and
PASS or MISS (``info`` where there is no target):

- text: distinct-utterance share, cross-task verbatim share (target <= 20 %), repeats inside a
  history (target: none), work-turn share (target >= 30 %), near repeats of user utterances
  (a line said again with other fillers, stock closers or punctuation; target <= 2 %) and the
  share said again with only names changed (info) --
  ``verifier.gameability.text_stats``;
- gameability: each shallow detector's precision (target <= 0.35) and recall on the evidence
  turns -- ``verifier.gameability.gameability``;
- memory dynamics: the share of tasks with a knowledge update (target >= 30 %), a distractor
  (>= 60 %), a multi-session thread (>= 30 %), a day or time said relatively (>= 30 %) --
  ``verifier.gameability.dynamics``;
- learned adversaries (``verifier.adversary``), trained on another build of the same kind (another
  seed; ``--train DIR`` names one) and scored on this one: an n-gram classifier of evidence turns,
  a topic-phrase learner and the query's topic phrase; precision (target <= 0.35) and the share of
  tasks whose top 5 turns hold every final value and no wrong one (target <= 15 %); and the share
  of user turns about the task's work that state a value (target <= 35 %);
- conversation: the share of the assistant's questions that one of the next two user turns takes
  up (target >= 80 %), and how often the last value said of a corrected piece is not its final
  one (an earlier value turned down again; target >= 20 %);
- retrieval: BM25 top-5 and top-10 recall of the evidence utterances from the task's query (the
  harness's rag raw/utterance context, mean over tasks with evidence; target for top-10 >= 40 %:
  retrieval stays a fair strategy, not a free one);
- the paper's Table 4 shape (``orchestrator.card.statistics``, tokens by ``backends.tokens``):
  sessions per conversation (5), utterances per session (~73), tokens per session (~1,026) and
  tokens per utterance (~14, i.e. 1,026 / 73), each within +-20 %;
- task design (``verifier.design_stats``): families registered (target >= 40), families and tasks
  per app count in the dataset, intents and queries in each family's pools (>= 5; the distinct
  ones seen are shown too), median oracle steps per app count and of hard
  tasks (>= 6), the difficulty mix, near-duplicate pairs (0), office size per world (files 30-60,
  median sheet rows 30-300, median PDF pages 2-6), and the share of criteria arguments traced to
  the chat, the office or a stated computation, and of tasks passing that trace (100 %), and the
  share of the clock times, numbers, lengths and words of every stated rule ("one hour, on the hour
  within 10:00-16:00") that the chat says (100 %).

A Plus split (``--dataset`` of a ``homer regenerate`` folder, or ``--plus SEEDS`` to regenerate one
here) is measured against the paper's HomerAgents+ shape (about 28 sessions of about 11
utterances, about 125 tokens a session) with the Plus figures instead of the task-design ones:
clause fragments (0), queries naming the work (100 %), plain-word typos said in the chat (0), the
seed lint's findings per class and the share of tasks proven solvable offline.

Run: ``python bench/quality.py [--n 60] [--seed 11] [--workers W] [--dataset DIR | --plus SEEDS] [--train DIR]
[--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks  # noqa: E402
from harness.context import ContextConfig, build_context  # noqa: E402
from orchestrator.card import statistics  # noqa: E402
from verifier.design_stats import design_figures  # noqa: E402
from verifier.adversary import (ADVERSARIES, ISOLATION_TARGET, PRECISION_TARGET, evaluate,  # noqa: E402
                               last_value_misleads, thread_evidence_share)
from verifier.gameability import (DETECTORS, DYNAMICS, THRESHOLD, dynamics, gameability,  # noqa: E402
                                  questions_answered, text_stats)

TOP_K = 5
# Targets; None: no target (the figure is reported as info).
DYNAMIC_TARGETS = {"knowledge_update": 0.30, "distractor": 0.60, "multi_session": 0.30, "relative_time": 0.30}
SHAPE_TARGETS = {"sessions_per_conversation": 5.0, "utterances_per_session": 73.0, "tokens_per_session": 1026.0,
                 "tokens_per_utterance": 1026.0 / 73.0}
# The paper's HomerAgents+ (Table 4): about 28 sessions of about 11 utterances, 125 tokens a session.
PLUS_SHAPE_TARGETS = {"sessions_per_conversation": 28.0, "utterances_per_session": 11.0, "tokens_per_session": 125.0,
                      "tokens_per_utterance": 125.0 / 11.0}
SHAPE_TOLERANCE = 0.20
RECALL_TARGET = 0.40  # BM25 top-10
THREAD_EVIDENCE_TARGET = 0.35
LAST_VALUE_TARGET = 0.20
ANSWERED_TARGET = 0.80
CROSS_TASK_TARGET = 0.20
WORK_TURN_TARGET = 0.30
NEAR_REPEAT_TARGET = 0.02
FAMILY_TARGET = 40
PHRASING_TARGET = 5
HARD_STEPS_TARGET = 6
FILES_TARGET = (30, 60)
ROWS_TARGET = (30, 300)
PAGES_TARGET = (2, 6)


def bm25_recall(records: list[dict[str, Any]], k: int = TOP_K) -> tuple[float | None, int]:
    """Mean recall@k of the evidence utterances (rag, raw utterances, BM25 on the query), over
    the tasks that have evidence; and how many tasks that is."""
    config = ContextConfig(mode="rag", storage="raw", granularity="utterance", top_k=k)
    recalls = [r for r in (build_context(record, config).evidence_recall for record in records) if r is not None]
    return (sum(recalls) / len(recalls) if recalls else None), len(recalls)


def _line(name: str, value: Any, shown: str, target: str, ok: bool | None) -> dict[str, Any]:
    return {"figure": name, "value": value, "shown": shown, "target": target,
            "status": "info" if ok is None else "PASS" if ok else "MISS"}


def design_lines(design: dict[str, Any]) -> list[dict[str, Any]]:
    """The task-design figures (``verifier.design_stats``) with their targets."""
    def share(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f} %"

    def within(v: float | None, low: float, high: float) -> bool:
        return v is not None and low <= v <= high

    by_apps = design["families_by_app_count"]
    registered = design["registered_by_app_count"]
    lines = [
        _line("families registered", design["families_registered"],
              f"{design['families_registered']} ({', '.join(f'{k} app: {v}' for k, v in registered.items())})",
              f">= {FAMILY_TARGET}", design["families_registered"] >= FAMILY_TARGET),
        _line("families in this dataset", design["families"],
              f"{design['families']} ({', '.join(f'{k} app: {v}' for k, v in by_apps.items())})", "-", None),
        _line("tasks per app count", design["tasks_by_app_count"],
              ", ".join(f"{k}: {v}" for k, v in design["tasks_by_app_count"].items()), "-", None),
        _line("intents per family (smallest pool)", design["intent_pool_min"], f"{design['intent_pool_min']}",
              f">= {PHRASING_TARGET}", (design["intent_pool_min"] or 0) >= PHRASING_TARGET),
        _line("queries per family (smallest pool)", design["query_pool_min"], f"{design['query_pool_min']}",
              f">= {PHRASING_TARGET}", (design["query_pool_min"] or 0) >= PHRASING_TARGET),
        _line("distinct intents seen per family (3+ tasks)", design["intents_per_family"],
              "n/a" if design["intents_per_family"] is None else f"{design['intents_per_family']:.1f}", "-", None),
        _line("distinct queries seen per family (3+ tasks)", design["queries_per_family"],
              "n/a" if design["queries_per_family"] is None else f"{design['queries_per_family']:.1f}", "-", None),
        _line("median oracle steps by app count", design["median_steps_by_app_count"],
              ", ".join(f"{k}: {v:g}" for k, v in design["median_steps_by_app_count"].items()), "-", None),
        _line("median oracle steps of hard tasks", design["median_hard_steps"],
              "n/a" if design["median_hard_steps"] is None else f"{design['median_hard_steps']:g}",
              f">= {HARD_STEPS_TARGET}", (design["median_hard_steps"] or 0) >= HARD_STEPS_TARGET),
        _line("difficulty", design["difficulty"], ", ".join(f"{k}: {v}" for k, v in design["difficulty"].items()),
              "-", None),
        _line("near-duplicate pairs", design["near_duplicates"], str(design["near_duplicates"]), "0",
              design["near_duplicates"] == 0),
        _line("files per world (median)", design["files_per_world"], f"{design['files_per_world']}",
              f"{FILES_TARGET[0]}-{FILES_TARGET[1]}", within(design["files_per_world"], *FILES_TARGET)),
        _line("sheet rows (median)", design["median_sheet_rows"], f"{design['median_sheet_rows']}",
              f"{ROWS_TARGET[0]}-{ROWS_TARGET[1]}", within(design["median_sheet_rows"], *ROWS_TARGET)),
        _line("PDF pages (median)", design["median_pdf_pages"], f"{design['median_pdf_pages']}",
              f"{PAGES_TARGET[0]}-{PAGES_TARGET[1]}", within(design["median_pdf_pages"], *PAGES_TARGET)),
        _line("criteria arguments traced", design["criteria_traced_share"], share(design["criteria_traced_share"]),
              "100 %", design["criteria_traced_share"] == 1.0),
        _line(f"rule specifics said in the chat ({design['rule_specifics']})", design["rule_specifics_said_share"],
              share(design["rule_specifics_said_share"]), "100 %", design["rule_specifics_said_share"] in (1.0, None)),
        _line("tasks passing the trace", design["tasks_passing_trace"], share(design["tasks_passing_trace"]),
              "100 %", design["tasks_passing_trace"] == 1.0),
    ]
    return lines


def plus_lines(records: list[dict[str, Any]], build_info: dict[str, Any]) -> list[dict[str, Any]]:
    """The Plus figures: fragments, queries that name the work, plain-word typos left in the chat,
    the seed lint's findings per class and the share of tasks proven solvable offline."""
    from generators.plus_offline import MIN_CLAUSE_WORDS, query_names_work
    from generators.typos import fix_typos

    long_enough = [r for r in records if len(r["description"].split()) >= MIN_CLAUSE_WORDS]
    fragments = sum(len(m["text"].split()) < MIN_CLAUSE_WORDS for r in long_enough for m in r["memory"])
    naming = sum(query_names_work(r["query"], r["description"]) for r in records)
    typos = 0
    for r in records:
        said = " ".join(t["text"].lower() for s in r["dialogue"] for t in s["turns"])
        typos += sum(f" {typo} " in f" {said} " for typo, _ in fix_typos(r["description"])[1])
    lint = build_info.get("lint", {})
    proof = build_info.get("proof", {})
    proven, total = proof.get("proven", 0), proof.get("proven", 0) + proof.get("unproven", 0)
    return [
        _line("clause fragments (< 4 words)", fragments, f"{fragments} in {len(long_enough)} tasks", "0",
              fragments == 0),
        _line("queries naming the work", naming / len(records) if records else None,
              f"{100 * naming / len(records):.1f} %" if records else "n/a", "100 %", naming == len(records)),
        _line("plain-word typos said in the chat", typos, str(typos), "0", typos == 0),
        _line("seed lint findings", lint.get("counts", {}),
              ", ".join(f"{k}: {v}" for k, v in lint.get("counts", {}).items()) or "n/a", "-", None),
        _line("seeds repaired / dropped by the lint", (lint.get("repaired"), lint.get("refused")),
              f"{lint.get('repaired', 'n/a')} / {lint.get('refused', 'n/a')}", "-", None),
        _line("tasks proven solvable offline", proven / total if total else None,
              f"{100 * proven / total:.1f} % ({proven}/{total})" if total else "n/a", "-", None),
    ]


def figures(records: list[dict[str, Any]], shape_targets: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Every figure of the benchmark, with its target and status."""
    text = text_stats(records)
    game = gameability(records)
    shares = dynamics(records)
    recall, with_evidence = bm25_recall(records)
    shape = statistics(records)["overall"]
    lines = [
        _line("distinct-utterance share", text["distinct_share"], f"{100 * text['distinct_share']:.1f} %",
              "-", None),
        _line("cross-task verbatim share", text["cross_task_share"], f"{100 * text['cross_task_share']:.1f} %",
              f"<= {100 * CROSS_TASK_TARGET:.0f} %", text["cross_task_share"] <= CROSS_TASK_TARGET),
        _line("within-history repeats", text["repeats"],
              f"{text['repeats']} in {text['histories_with_repeats']} histories", "0", text["repeats"] == 0),
        _line("work-turn share", text["work_turn_share"], f"{100 * text['work_turn_share']:.1f} %",
              f">= {100 * WORK_TURN_TARGET:.0f} %", text["work_turn_share"] >= WORK_TURN_TARGET),
        _line("near-repeat share of user utterances", text["near_repeat_share"],
              f"{100 * text['near_repeat_share']:.2f} %", f"<= {100 * NEAR_REPEAT_TARGET:.0f} %",
              text["near_repeat_share"] <= NEAR_REPEAT_TARGET),
        _line("same sentence of another name (user)", text["shape_repeat_share"],
              f"{100 * text['shape_repeat_share']:.2f} %", "-", None),
    ]
    for name in DETECTORS:
        d = game[name]
        lines.append(_line(f"detector {name} precision", d["precision"],
                           f"{d['precision']:.3f} ({d['evidence_hits']}/{d['hits']})", f"<= {THRESHOLD:.2f}",
                           d["precision"] <= THRESHOLD))
        lines.append(_line(f"detector {name} recall", d["recall"],
                           f"{d['recall']:.3f} ({d['evidence_hits']}/{d['evidence_turns']})", "-", None))
    for name in DYNAMICS:
        target = DYNAMIC_TARGETS.get(name)
        lines.append(_line(f"tasks with {name}", shares[name], f"{100 * shares[name]:.1f} %",
                           f">= {100 * target:.0f} %" if target is not None else "-",
                           shares[name] >= target if target is not None else None))
    lines.append(_line(f"BM25 top-{TOP_K} evidence recall", recall,
                       f"{100 * recall:.1f} % ({with_evidence} tasks)" if recall is not None else "n/a", "-", None))
    recall10, with_evidence = bm25_recall(records, 10)
    lines.append(_line("BM25 top-10 evidence recall", recall10,
                       f"{100 * recall10:.1f} % ({with_evidence} tasks)" if recall10 is not None else "n/a",
                       f">= {100 * RECALL_TARGET:.0f} %", recall10 is not None and recall10 >= RECALL_TARGET))
    share = thread_evidence_share(records)
    lines.append(_line("evidence share of turns about the work", share, f"{100 * share:.1f} %",
                       f"<= {100 * THREAD_EVIDENCE_TARGET:.0f} %", share <= THREAD_EVIDENCE_TARGET))
    share, asked = questions_answered(records)
    lines.append(_line("assistant questions taken up in the next 2 user turns", share,
                       f"{100 * share:.1f} % of {asked}", f">= {100 * ANSWERED_TARGET:.0f} %", share >= ANSWERED_TARGET))
    misleads, pieces = last_value_misleads(records)
    lines.append(_line("last value said is not the final one", misleads,
                       f"{100 * misleads:.1f} % of {pieces} corrected pieces",
                       f">= {100 * LAST_VALUE_TARGET:.0f} %", misleads >= LAST_VALUE_TARGET))
    for name, target in (shape_targets or SHAPE_TARGETS).items():
        value = shape[name]
        lines.append(_line(name.replace("_", " "), value, f"{value:,.1f}",
                           f"{target:,.0f} +-{100 * SHAPE_TOLERANCE:.0f} %",
                           abs(value - target) <= SHAPE_TOLERANCE * target))
    return lines


def adversary_lines(train: list[dict[str, Any]], records: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """The learned adversaries, trained on ``train`` (``source`` says which build) and scored here."""
    found = evaluate(train, records)
    lines = []
    for name in ADVERSARIES:
        d = found[name]
        lines.append(_line(f"adversary {name} precision", d["precision"],
                           f"{d['precision']:.3f} (recall {d['recall']:.3f})", f"<= {PRECISION_TARGET:.2f}",
                           d["precision"] <= PRECISION_TARGET))
        lines.append(_line(f"adversary {name} isolates", d["isolation"], f"{100 * d['isolation']:.1f} % of tasks",
                           f"<= {100 * ISOLATION_TARGET:.0f} %", d["isolation"] <= ISOLATION_TARGET))
    lines.append(_line("adversaries trained on", len(train), source, "-", None))
    return lines


def _build_info(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--dataset", type=Path, default=None, help="Read this dataset instead of building one")
    parser.add_argument("--plus", type=Path, default=None, metavar="SEEDS",
                        help="Regenerate a Plus split from these OfficeBench seeds (default shape, --repair) and "
                             "measure it")
    parser.add_argument("--train", type=Path, default=None,
                        help="A labelled build (another seed) to train the adversaries on; default: one is built "
                             "here like the measured one, with seed + 1000")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON")
    args = parser.parse_args()
    tmp = None
    try:
        if args.dataset is not None:
            if not (args.dataset / "tasks").is_dir():
                sys.exit(f"error: --dataset {args.dataset}: not a dataset folder (no tasks/)")
            folder, source = args.dataset, f"dataset {args.dataset}"
        elif args.plus is not None:
            from orchestrator.plus import regenerate_split

            tmp = Path(tempfile.mkdtemp(prefix="bench-quality-"))
            folder = tmp / "plus"
            start = time.perf_counter()
            done = regenerate_split(args.plus, folder, seed=args.seed, workers=args.workers, repair_seeds=True)
            source = (f"Plus regeneration of {done.written} tasks from {args.plus} (seed {args.seed}) in "
                      f"{time.perf_counter() - start:.1f} s")
        else:
            from orchestrator.build import build
            from orchestrator.roles import PRESETS, BuildConfig

            tmp = Path(tempfile.mkdtemp(prefix="bench-quality-"))
            folder = tmp / "ds"
            start = time.perf_counter()
            days, utterances = PRESETS["standard"]  # what `homer build` makes by default
            built = build(folder, args.n, BuildConfig(seed=args.seed, days=days, utterances_per_day=utterances),
                          workers=args.workers)
            source = (f"offline build of {built.accepted} tasks (seed {args.seed}) in "
                      f"{time.perf_counter() - start:.1f} s")
        tasks = [t for t in iter_tasks(folder) if t.record is not None]
        records = [t.record for t in tasks]
        build_info = _build_info(folder)
        train_folder, train_source = args.train, f"{args.train}"
        if train_folder is None:
            tmp = tmp or Path(tempfile.mkdtemp(prefix="bench-quality-"))
            train_folder = tmp / "train"
            train_seed = args.seed + 1000
            if build_info.get("split") == "plus":
                from orchestrator.plus import regenerate_split

                seeds = args.plus or Path(__file__).resolve().parents[1] / "datasets" / "officebench-sample"
                regenerate_split(seeds, train_folder, seed=train_seed, workers=args.workers, repair_seeds=True)
            else:
                from orchestrator.build import build
                from orchestrator.roles import BuildConfig

                config = build_info.get("config") or {}
                keep = {k: config[k] for k in ("days", "utterances_per_day") if isinstance(config.get(k), int)}
                build(train_folder, len(records), BuildConfig(seed=train_seed, **keep), workers=args.workers)
            train_source = f"a build with seed {train_seed}"
        train = [t.record for t in iter_tasks(train_folder) if t.record is not None]
        start = time.perf_counter()
        if build_info.get("split") == "plus":
            paper = build_info.get("config", {}).get("days") == PLUS_SHAPE_TARGETS["sessions_per_conversation"]
            lines = figures(records, PLUS_SHAPE_TARGETS if paper else SHAPE_TARGETS) + plus_lines(records, build_info)
        else:
            lines = figures(records) + design_lines(design_figures(tasks))
        lines += adversary_lines(train, records, train_source)
        elapsed = time.perf_counter() - start
        if args.json:
            print(json.dumps({"source": source, "tasks": len(records), "figures": lines}, indent=2))
            return
        print(f"{source}; {len(records)} tasks measured in {elapsed:.2f} s")
        width = max(len(line["figure"]) for line in lines)
        shown = min(40, max(len(line["shown"]) for line in lines))  # a long info line overflows
        target = max(len(line["target"]) for line in lines)
        for line in lines:
            print(f"  {line['figure']:{width}}  {line['shown']:>{shown}}  target {line['target']:{target}}  {line['status']}")
        misses = sum(line["status"] == "MISS" for line in lines)
        checked = sum(line["status"] != "info" for line in lines)
        print(f"{checked - misses}/{checked} targets met")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
