"""Benchmark: how realistic and how hard to game a dataset's chat histories are.

Measures three builds side by side (``--builds``, default all three): the 60-task standard build
(``--n``), the 10-task Challenge preset (``--challenge-n``; 30 days of about 250 utterances) and
the Plus split regenerated from the sample OfficeBench seeds (``--plus SEEDS``; ``--plus-runs``
times, default 4, seed after seed, read as one: five seed tasks alone measure a share of tasks in
steps of 20 %), each made with ``--seed`` (default 11); the learned adversaries train on a build of
the same kind made with ``--train-seed`` (default seed + 1000). Builds go in a temporary folder, or
in ``--cache DIR`` where a finished build of the same kind, size and seed is reused. ``--dataset DIR`` measures one
existing dataset instead (its kind read from its build.json). Prints one table, a column per
build, each figure with its target and PASS or MISS (blank where there is no target):

- text: distinct-utterance share, cross-task verbatim share (target <= 20 %; a build of 120 tasks or
  more in chunks of 60 or a few more, the size the target is set for, its whole share as info), repeats inside a
  history (target: none), work-turn share (target >= 30 %), near repeats of user utterances
  (a line said again with other fillers, stock closers or punctuation; target <= 2 %) and the
  share said again with only names changed (info) --
  ``verifier.gameability.text_stats``;
- gameability: each shallow detector's precision (target <= 0.35) and recall on the evidence
  turns -- ``verifier.gameability.gameability``;
- memory dynamics: the share of tasks with a knowledge update (target >= 30 %), a distractor
  (>= 60 %), a multi-session thread (>= 30 %), a day or time said relatively (>= 30 %; of a Plus
  split, of the tasks whose seed names a day, as the rest have none to say) --
  ``verifier.gameability.dynamics``;
- learned adversaries (``verifier.adversary``), trained on another build of the same kind (another
  seed; ``--train DIR`` names one) and scored on this one: an n-gram classifier of evidence turns,
  a topic-phrase learner and the query's topic phrase; precision (target <= 0.35) and the share of
  tasks whose top 5 turns hold every final value and no wrong one (target <= 15 %); and the share
  of user turns about the task's work that state a value (target <= 35 %); and a discriminative
  reader (``verifier.learned_reader``: TF-IDF word 1-3 grams, context and turn shape, logistic
  regression): its precision at best F1 (target <= 0.35), its top-5 isolation (target <= 10 %),
  a typed guesser that takes, for each memory piece, the candidate of the piece's type in the
  reader's best-ranked turn (every value right in at most 10 % of tasks), and the reader's
  strongest n-grams (what a history still gives away); the same reader also given each turn's
  overlap with its task's query, as info. A Plus split retells the same seed tasks in both builds,
  and a reader trained on the very seeds it is scored on learns their own words: there every
  adversary is held to seed tasks it did not train on (two folds), and the readers trained on
  every seed are info;
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
  ones seen are shown too), median oracle steps per app count (3-app >= 6) and of hard
  tasks (>= 6), the difficulty mix, near-duplicate pairs (0), office size per world (files 30-60,
  median sheet rows 30-300, median PDF pages 2-6), and the share of criteria arguments traced to
  the chat, the office or a stated computation, and of tasks passing that trace (100 %), and the
  share of the clock times, numbers, lengths and words of every stated rule ("one hour, on the hour
  within 10:00-16:00") that the chat says (100 %);
- how the histories read (``verifier.history_form``): ISO date stamps in speech (0), memory
  pieces whose value is never said beside a word of its work's name, so two turns are needed
  (>= 30 %), pieces with a corrected or near-miss value where such a value is said in the thread
  after the final one (>= 20 %), small-talk questions asked again the same day and answered
  another way (0; over the whole history: info), small-talk reactions that echo the line they
  react to, repeating a name or content word of it (<= 1 % of reactions), follow-up answers of a
  kind their question does not expect, by the small-talk banks' tags (0), attempts ending
  ``error: crashed`` (0), and
  tokens per history by the real counter (Challenge: every history >= 100,000);
- the oracle agent's pass rate with the long-context history (100 %; ``--no-oracle`` skips it;
  Plus tasks have no oracle plan).

The Challenge build is held to its own shape (30 sessions of about 250 utterances). A Plus split
is measured against the paper's HomerAgents+ shape (about 28 sessions of about 11
utterances, about 125 tokens a session) with the Plus figures instead of the task-design ones:
clause fragments (0), queries naming the work (100 %), plain-word typos said in the chat (0), the
seed lint's findings per class and the share of tasks proven solvable offline.

Run: ``python bench/quality.py [--builds standard,challenge,plus] [--n 60] [--challenge-n 10] [--seed 11]
[--plus-runs 4] [--train-seed S] [--cache DIR] [--plus SEEDS] [--dataset DIR] [--train DIR] [--no-oracle]
[--detail] [--json]``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks  # noqa: E402
from backends.task_record import TaskRecord  # noqa: E402
from backends.tokens import counter_name  # noqa: E402
from generators.spoken_time import is_relative, say_value  # noqa: E402
from harness.context import ContextConfig, build_context  # noqa: E402
from harness.runner import EvalConfig, EvalError  # noqa: E402
from harness.runner import evaluate as run_eval  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.card import statistics  # noqa: E402
from orchestrator.plus import regenerate_split  # noqa: E402
from orchestrator.roles import PRESETS, BuildConfig  # noqa: E402
from verifier.adversary import (  # noqa: E402
    ADVERSARIES,
    ISOLATION_TARGET,
    PRECISION_TARGET,
    evaluate,
    last_value_misleads,
    thread_evidence_share,
)
from verifier.design_stats import design_figures  # noqa: E402
from verifier.gameability import (  # noqa: E402
    DETECTORS,
    DYNAMICS,
    THRESHOLD,
    dynamics,
    gameability,
    questions_answered,
    text_stats,
)
from verifier.history_form import (  # noqa: E402
    derived_share,
    history_tokens,
    iso_stamps,
    namings_per_work,
    same_question_answers,
    small_talk_fit,
    turned_down_after_final,
    two_turn_share,
    written_headers,
)
from verifier.learned_reader import (  # noqa: E402
    F1_PRECISION_TARGET,
    GUESSER_TARGET,
    LEARNED_ISOLATION_TARGET,
    evaluate_learned,
    evaluate_query_aware,
    held_out_folds,
    on_folds,
    share_key,
)

TOP_K = 5
# Targets; None: no target (the figure is reported as info).
DYNAMIC_TARGETS = {"knowledge_update": 0.30, "distractor": 0.60, "multi_session": 0.30, "relative_time": 0.30}
SHAPE_TARGETS = {"sessions_per_conversation": 5.0, "utterances_per_session": 73.0, "tokens_per_session": 1026.0,
                 "tokens_per_utterance": 1026.0 / 73.0}
# The paper's HomerAgents+ (Table 4): about 28 sessions of about 11 utterances, 125 tokens a session.
PLUS_SHAPE_TARGETS = {"sessions_per_conversation": 28.0, "utterances_per_session": 11.0, "tokens_per_session": 125.0,
                      "tokens_per_utterance": 125.0 / 11.0}
# The Challenge preset: 30 days of about 250 utterances, over 100K tokens in every history.
CHALLENGE_SHAPE_TARGETS = {"sessions_per_conversation": float(PRESETS["challenge"][0]),
                           "utterances_per_session": float(PRESETS["challenge"][1])}
CHALLENGE_TOKENS = 100_000
SHAPE_TOLERANCE = 0.20
KINDS = ("standard", "challenge", "plus")
TWO_TURN_TARGET = 0.30
DERIVED_TARGET = 0.30  # memory pieces whose value a reader must put together from two turns
NAMINGS_TARGET = 4  # the ways a thread of work is called after it is raised (full name, shorter ones, "that one")
RECALL_TARGET = 0.40  # BM25 top-10
THREAD_EVIDENCE_TARGET = 0.35
LAST_VALUE_TARGET = 0.20
ANSWERED_TARGET = 0.80
CROSS_TASK_TARGET = 0.20
CROSS_TASK_TASKS = 60  # the build size that target is set for (the standard build's)
WORK_TURN_TARGET = 0.30
NEAR_REPEAT_TARGET = 0.02
ECHO_TARGET = 0.01  # small-talk reactions repeating a name or content word of the line they react to
FAMILY_TARGET = 40
PHRASING_TARGET = 5
HARD_STEPS_TARGET = 6
THREE_APP_STEPS_TARGET = 6  # every app of a 3-app task does work another step needs
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
              ", ".join(f"{k}: {v:g}" for k, v in design["median_steps_by_app_count"].items()),
              f"3-app >= {THREE_APP_STEPS_TARGET}", None if "3" not in design["median_steps_by_app_count"] else
              design["median_steps_by_app_count"]["3"] >= THREE_APP_STEPS_TARGET),
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
        _line("rule specifics said in the chat", design["rule_specifics_said_share"],
              f"{share(design['rule_specifics_said_share'])} of {design['rule_specifics']}", "100 %",
              design["rule_specifics_said_share"] in (1.0, None)),
        _line("tasks passing the trace", design["tasks_passing_trace"], share(design["tasks_passing_trace"]),
              "100 %", design["tasks_passing_trace"] == 1.0),
    ]
    return lines


def plus_lines(records: list[TaskRecord], build_info: dict[str, Any]) -> list[dict[str, Any]]:
    """The Plus figures: fragments, queries that name the work, plain-word typos left in the chat,
    the seed lint's findings per class and the share of tasks proven solvable offline."""
    from generators.plus_offline import MIN_CLAUSE_WORDS, query_names_work
    from generators.typos import fix_typos

    long_enough = [r for r in records if len(r.description.split()) >= MIN_CLAUSE_WORDS]
    fragments = sum(len(m.text.split()) < MIN_CLAUSE_WORDS for r in long_enough for m in r.memory)
    naming = sum(query_names_work(r.query, r.description) for r in records)
    typos = 0
    for r in records:
        said = " ".join(t.text.lower() for s in r.dialogue for t in s.turns)
        typos += sum(f" {typo} " in f" {said} " for typo, _ in fix_typos(r.description)[1])
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


def _near_day(record: dict[str, Any]) -> bool:
    """Could a memory value of ``record`` be said as a day relative to one of its sessions? The
    writer's own test (``spoken_time.say_value`` on a session's date, then ``is_relative``): a day
    it reads, near enough to a session to be said from it (OfficeBench seeds' clocks are often years
    from their days, and a day written "5/7/2024" is said as written)."""
    days = []
    for session in record.get("dialogue") or []:
        try:
            days.append(date.fromisoformat(str(session.get("date"))))
        except (AttributeError, ValueError):
            continue
    values = [str(piece.get("value") or "").strip() for piece in record.get("memory") or []]
    return any(phrase is not None and is_relative(phrase) for value in values for day in days
               for phrase in [say_value(value, day)])


def cross_task_lines(records: list[dict[str, Any]], whole: float) -> list[dict[str, Any]]:
    """The cross-task verbatim share, held to its target over builds of the size it is set for
    (``CROSS_TASK_TASKS``): a line said in one task is the likelier said in another the more tasks
    there are, so a larger build is measured in chunks of about that many tasks (``len //
    CROSS_TASK_TASKS`` chunks of consecutive tasks, every task in one, none smaller; the mean over
    them) and its share over all its tasks is info. Consecutive tasks share more (a seed's
    subtasks, a world's tasks) than tasks drawn at random: the chunks err on the high side."""
    count = len(records) // CROSS_TASK_TASKS
    if count < 2:
        return [_line("cross-task verbatim share", whole, f"{100 * whole:.1f} %",
                      f"<= {100 * CROSS_TASK_TARGET:.0f} %", whole <= CROSS_TASK_TARGET)]
    bounds = [(i * len(records)) // count for i in range(count + 1)]
    chunks = [records[a:b] for a, b in zip(bounds, bounds[1:])]
    share = sum(text_stats(chunk)["cross_task_share"] for chunk in chunks) / count
    return [_line(f"cross-task verbatim share (in chunks of {CROSS_TASK_TASKS}+ tasks)", share,
                  f"{100 * share:.1f} % (mean of {count})", f"<= {100 * CROSS_TASK_TARGET:.0f} %",
                  share <= CROSS_TASK_TARGET),
            _line(f"cross-task verbatim share (all {len(records)} tasks)", whole, f"{100 * whole:.1f} %", "-", None)]


def figures(records: list[dict[str, Any]], shape_targets: dict[str, float] | None = None, *,
            plus: bool = False) -> list[dict[str, Any]]:
    """Every figure of the benchmark, with its target and status (``plus``: of a regenerated split,
    whose days are its seeds': the relative-time target counts the tasks that have a day)."""
    text = text_stats(records)
    game = gameability(records)
    shares = dynamics(records)
    recall, with_evidence = bm25_recall(records)
    shape = statistics(records)["overall"]
    lines = [
        _line("distinct-utterance share", text["distinct_share"], f"{100 * text['distinct_share']:.1f} %",
              "-", None),
        *cross_task_lines(records, text["cross_task_share"]),
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
        if name == "relative_time" and plus:  # a regenerated task has a day only if its seed names one
            with_day = [r for r in records if _near_day(r)]
            share = dynamics(with_day)[name] if with_day else None
            lines.append(_line(f"tasks with {name} (of those with a day near the chat)", share,
                               f"{100 * share:.1f} % of {len(with_day)}" if share is not None else "n/a (none)",
                               f">= {100 * target:.0f} %", share is None or share >= target))
            lines.append(_line(f"tasks with {name}", shares[name], f"{100 * shares[name]:.1f} %", "-", None))
            continue
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
                       f"{100 * share:.1f} % of {asked}", f">= {100 * ANSWERED_TARGET:.0f} %",
                       share >= ANSWERED_TARGET))
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


def adversary_figures(train: list[dict[str, Any]], records: list[dict[str, Any]]
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The n-gram adversaries' and the discriminative reader's figures, trained on ``train``."""
    return evaluate(train, records), evaluate_learned(train, records)


def query_aware_lines(learned: dict[str, Any], label: str) -> list[dict[str, Any]]:
    """The reader that also reads each turn's overlap with its task's query, as info: a history
    names the work each detail is for, and a near miss is said for another work, so matching the
    query's words finds the task's own turns; that is reading which work a turn is about, the
    retrieval a BM25 line measures, and its figures say how far it goes alone."""
    logreg, guesser = learned["tfidf_logreg"], learned["typed_guesser"]
    return [
        _line(f"tfidf_logreg + query overlap: precision at best F1{label}", logreg["precision"],
              f"{logreg['precision']:.3f} (recall {logreg['recall']:.3f})", f"<= {F1_PRECISION_TARGET:.2f}", None),
        _line(f"tfidf_logreg + query overlap: isolates{label}", logreg["isolation"],
              f"{100 * logreg['isolation']:.1f} % of tasks", f"<= {100 * LEARNED_ISOLATION_TARGET:.0f} %", None),
        _line(f"tfidf_logreg + query overlap: typed guesser{label}", guesser["all_right"],
              f"{100 * guesser['all_right']:.1f} % of tasks", f"<= {100 * GUESSER_TARGET:.0f} %", None)]


def adversary_lines(train: list[dict[str, Any]], records: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """The learned adversaries, trained on ``train`` (``source`` says which build) and scored here.

    A regenerated split retells the same seed tasks in both builds: a reader trained on a build of
    the very seeds it is then scored on learns each seed's own words (its subject, its clauses) as
    the words of that seed's evidence turns, and meets them again, where a reader of a new benchmark
    meets seeds it never trained on. There the adversaries are held to seed tasks they did not train
    on (two folds of the seed tasks, ``verifier.learned_reader.held_out_folds``); the figures of a
    reader trained on every seed, the measured ones included, are reported beside them as info. A
    reader that also reads each turn's overlap with its task's query is reported as info too
    (:func:`query_aware_lines`)."""
    regenerated = any(share_key(r).startswith("seed:") for r in records)
    folds = held_out_folds(train, records) if regenerated else []
    if not folds:  # a built split; or one seed task, which no reader can be kept from (its lines are info)
        found, learned = adversary_figures(train, records)
        label = " (one seed task, seen in training)" if regenerated else ""
        return (_adversary_lines(found, learned, len(train), source, label, not regenerated)
                + query_aware_lines(evaluate_query_aware(train, records), label))
    found = on_folds(folds, evaluate)
    learned = on_folds(folds, evaluate_learned)
    held = _adversary_lines(found, learned, sum(len(t) for t, _ in folds) // 2,
                            f"{source}, two folds: no test task's seed task among its training tasks' "
                            "(strongest n-grams: the first fold's reader)", " (held-out seeds)", True)
    held += query_aware_lines(on_folds(folds, evaluate_query_aware), " (held-out seeds)")
    same_found, same_learned = adversary_figures(train, records)
    return held + _adversary_lines(same_found, same_learned, len(train), source, " (seeds seen in training)", False)


def _adversary_lines(found: dict[str, Any], learned: dict[str, Any], trained: int, source: str, label: str,
                     gate: bool) -> list[dict[str, Any]]:
    """The adversaries' lines; ``gate`` False: every line info (its target shown, not held)."""
    def held(ok: bool) -> bool | None:
        return ok if gate else None

    lines = []
    for name in ADVERSARIES:
        d = found[name]
        lines.append(_line(f"adversary {name} precision{label}", d["precision"],
                           f"{d['precision']:.3f} (recall {d['recall']:.3f})", f"<= {PRECISION_TARGET:.2f}",
                           held(d["precision"] <= PRECISION_TARGET)))
        lines.append(_line(f"adversary {name} isolates{label}", d["isolation"],
                           f"{100 * d['isolation']:.1f} % of tasks", f"<= {100 * ISOLATION_TARGET:.0f} %",
                           held(d["isolation"] <= ISOLATION_TARGET)))
    logreg, guesser = learned["tfidf_logreg"], learned["typed_guesser"]
    lines.append(_line(f"adversary tfidf_logreg precision at best F1{label}", logreg["precision"],
                       f"{logreg['precision']:.3f} (recall {logreg['recall']:.3f}; at recall >= 0.10: "
                       f"{logreg['peak_precision']:.3f})", f"<= {F1_PRECISION_TARGET:.2f}",
                       held(logreg["precision"] <= F1_PRECISION_TARGET)))
    lines.append(_line(f"adversary tfidf_logreg isolates{label}", logreg["isolation"],
                       f"{100 * logreg['isolation']:.1f} % of tasks", f"<= {100 * LEARNED_ISOLATION_TARGET:.0f} %",
                       held(logreg["isolation"] <= LEARNED_ISOLATION_TARGET)))
    lines.append(_line(f"adversary typed_guesser gets every value{label}", guesser["all_right"],
                       f"{100 * guesser['all_right']:.1f} % of tasks ({100 * guesser['pieces_right']:.1f} % of pieces)",
                       f"<= {100 * GUESSER_TARGET:.0f} %", held(guesser["all_right"] <= GUESSER_TARGET)))
    lines.append(_line(f"tfidf_logreg strongest n-grams{label}", None,
                       ", ".join(f"{name!r} {weight}" for name, weight in learned["strongest"][:6]), "-", None))
    lines.append(_line(f"adversaries trained on{label}", trained, source, "-", None))
    return lines


def form_lines(records: list[dict[str, Any]], kind: str, folders: list[Path]) -> list[dict[str, Any]]:
    """How the histories read (``verifier.history_form``): stamps in speech, values that need two
    turns, values turned down after the final one, small-talk answers, crashes and tokens."""
    stamps, utterances = iso_stamps(records)
    lines = [_line("ISO date stamps in speech", stamps, f"{stamps} of {utterances:,} utterances", "0", stamps == 0)]
    headers, said = written_headers(records)
    lines.append(_line("sheet headers said as the sheet writes them", headers, f"{headers} of {said:,} user turns",
                       "0", headers == 0))
    share, pieces = two_turn_share(records)
    lines.append(_line("memory pieces needing two turns", share, f"{100 * share:.1f} % of {pieces}",
                       f">= {100 * TWO_TURN_TARGET:.0f} %", share >= TWO_TURN_TARGET))
    share, pieces = derived_share(records)
    lines.append(_line("memory pieces derived (said in no turn)", share, f"{100 * share:.1f} % of {pieces}",
                       f">= {100 * DERIVED_TARGET:.0f} %", share >= DERIVED_TARGET))
    named = sorted(namings_per_work(records))
    median = named[len(named) // 2] if named else None
    four = sum(n >= NAMINGS_TARGET for n in named)
    lines.append(_line("namings per work (median; works named 4+ ways)", median,
                       f"{median} ({four} of {len(named)})" if named else "n/a", f">= {NAMINGS_TARGET}",
                       median is None or median >= NAMINGS_TARGET))
    share, pieces = turned_down_after_final(records)
    lines.append(_line("wrong value said after the final (corrected/near-miss)", share,
                       f"{100 * share:.1f} % of {pieces} pieces", f">= {100 * LAST_VALUE_TARGET:.0f} %",
                       share >= LAST_VALUE_TARGET))
    answers = same_question_answers(records)
    lines.append(_line("small-talk question answered two ways in a day", answers["same_day"],
                       f"{answers['same_day']} of {answers['asked']}", "0", answers["same_day"] == 0))
    lines.append(_line("small-talk question answered two ways in a history", answers["history"],
                       f"{answers['history']} of {answers['asked']}", "-", None))
    fit = small_talk_fit(records)
    echo = fit["echoes"] / fit["reactions"] if fit["reactions"] else 0.0
    lines.append(_line("small-talk reactions echoing their line", echo,
                       f"{100 * echo:.1f} % of {fit['reactions']}", f"<= {100 * ECHO_TARGET:.0f} %",
                       echo <= ECHO_TARGET))
    lines.append(_line("small-talk answers not of the kind asked", fit["mismatched"],
                       f"{fit['mismatched']} of {fit['judged']}", "0", fit["mismatched"] == 0))
    counts = [c for c in (_crashes(f) for f in folders) if c is not None]
    crashed = sum(counts) if counts else None
    lines.append(_line("attempts ending 'error: crashed'", crashed,
                       "n/a (no attempts.jsonl)" if crashed is None else str(crashed), "0", crashed in (0, None)))
    tokens = history_tokens(records)
    low, mean = (min(tokens), sum(tokens) / len(tokens)) if tokens else (0, 0.0)
    needed = CHALLENGE_TOKENS if kind == "challenge" else None
    lines.append(_line(f"{counter_name()} tokens per history (min / mean)", low, f"{low:,} / {mean:,.0f}",
                       f">= {needed:,} (min)" if needed else "-", low >= needed if needed else None))
    return lines


def oracle_line(folder: Path, workers: int) -> dict[str, Any]:
    """The oracle agent's pass rate with the long-context history (``homer eval --agent oracle``)."""
    with tempfile.TemporaryDirectory(prefix="bench-quality-eval-") as run:
        try:
            summary = run_eval(folder, Path(run) / "run",
                               EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), workers=workers))
        except EvalError as exc:
            return _line("long-context oracle pass rate", None, f"n/a ({exc})"[:60], "100 %", None)
        rate = summary.pass_rate
    return _line("long-context oracle pass rate", rate, "n/a" if rate is None else f"{100 * rate:.1f} %", "100 %",
                 rate == 1.0)


def _crashes(folder: Path) -> int | None:
    """Attempts of the build recorded as ``error: crashed``; None without an attempts log."""
    try:
        text = (folder / "attempts.jsonl").read_text(encoding="utf-8")
    except OSError:
        return None
    count = 0
    for row in text.splitlines():
        try:
            status = json.loads(row).get("status", "")
        except (ValueError, AttributeError):
            continue
        count += isinstance(status, str) and "crashed" in status
    return count


def _build_info(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def kind_of(folder: Path) -> str:
    """standard, challenge or plus, from the dataset's build.json."""
    info = _build_info(folder)
    if info.get("split") == "plus":
        return "plus"
    days = (info.get("config") or {}).get("days")
    return "challenge" if isinstance(days, int) and days >= PRESETS["challenge"][0] else "standard"


CODE_MARK = ".code"  # beside a cached build (``<folder>.code``): the fingerprint of what wrote it


@functools.cache
def code_fingerprint() -> str:
    """A digest of everything a build's bytes depend on (the packages' sources and the templates):
    a cached build written by other code is built again, never measured as this code's."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for package in ("generators", "office_env", "orchestrator", "backends", "verifier", "templates", "datasets"):
        for path in sorted((root / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def seeds_fingerprint(seeds: Path) -> str:
    """A digest of a Plus build's seed folder (its regular files, links not followed): a build
    regenerated from other seeds is built again."""
    digest = hashlib.sha256()
    for path in sorted(seeds.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(str(path.relative_to(seeds)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_fingerprint(kind: str, seeds: Path) -> str:
    """What a cached build must have been written by and from: this code, and for Plus these seeds."""
    return code_fingerprint() + (f" {seeds_fingerprint(seeds)}" if kind == "plus" else "")


def make(kind: str, folder: Path, *, n: int, seed: int, seeds: Path, workers: int) -> str:
    """Build (or, with a finished one of this code there, reuse) the ``kind`` dataset in ``folder``;
    says which."""
    mark = folder.with_name(folder.name + CODE_MARK)
    if (folder / "build.json").is_file() and (folder / "tasks").is_dir() and mark.is_file() \
            and mark.read_text() == build_fingerprint(kind, seeds):
        return f"cached {kind} build {folder} (seed {seed})"
    shutil.rmtree(folder, ignore_errors=True)  # an interrupted earlier build, or another code's
    start = time.perf_counter()
    if kind == "plus":
        done = regenerate_split(seeds, folder, seed=seed, workers=workers, repair_seeds=True)
        said = (f"Plus regeneration of {done.written} tasks from {seeds} (seed {seed}) "
                f"in {time.perf_counter() - start:.1f} s")
    else:
        days, utterances = PRESETS[kind]
        built = build(folder, n, BuildConfig(seed=seed, days=days, utterances_per_day=utterances), workers=workers)
        said = f"{kind} build of {built.accepted} tasks (seed {seed}) in {time.perf_counter() - start:.1f} s"
    mark.write_text(build_fingerprint(kind, seeds))
    return said


def measure(folders: list[Path], train_folders: list[Path], train_source: str, *, workers: int,
            oracle: bool) -> list[dict[str, Any]]:
    """Every figure of one dataset (or of several runs of one kind, read as one), the adversaries
    trained on ``train_folders``."""
    folder = folders[0]
    kind = kind_of(folder)
    tasks = [t for f in folders for t in iter_tasks(f) if t.record is not None]
    records = [t.record for t in tasks]
    train = [t.record for f in train_folders for t in iter_tasks(f) if t.record is not None]
    if kind == "plus":
        paper = _build_info(folder).get("config", {}).get("days") == PLUS_SHAPE_TARGETS["sessions_per_conversation"]
        lines = figures(records, PLUS_SHAPE_TARGETS if paper else SHAPE_TARGETS, plus=True)
    else:
        lines = figures(records, CHALLENGE_SHAPE_TARGETS if kind == "challenge" else SHAPE_TARGETS)
    lines += form_lines(records, kind, folders)
    if oracle:
        lines.append(oracle_line(folder, workers))
    typed = [t.task for t in tasks if t.task is not None]
    lines += plus_lines(typed, _build_info(folder)) if kind == "plus" else design_lines(design_figures(tasks))
    return lines + adversary_lines(train, records, train_source)


def print_lines(source: str, lines: list[dict[str, Any]]) -> None:
    """One build's figures, one a line."""
    print(source)
    width = max(len(line["figure"]) for line in lines)
    shown = min(40, max(len(line["shown"]) for line in lines))  # a long info line overflows
    target = max(len(_target(line)) for line in lines)
    for line in lines:
        print(f"  {line['figure']:{width}}  {line['shown']:>{shown}}  "
              f"target {_target(line):{target}}  {line['status']}")
    print(f"{_met(lines)} targets met")
    _print_info_legend([lines])


def _target(line: dict[str, Any]) -> str:
    """The target column: an info figure's target in brackets, as a reference it is not held to."""
    return f"({line['target']})" if line["status"] == "info" and line["target"] != "-" else line["target"]


def _print_info_legend(results: list[list[dict[str, Any]]]) -> None:
    if any(line["status"] == "info" and line["target"] != "-" for lines in results for line in lines):
        print("a target in brackets is shown for comparison, not held: the figure is info (a reader given "
              "the query's words, or a reader trained on the seeds it is scored on; see the module's docstring)")


def _met(lines: list[dict[str, Any]]) -> str:
    checked = [line for line in lines if line["status"] != "info"]
    return f"{sum(line['status'] == 'PASS' for line in checked)}/{len(checked)}"


def print_table(results: dict[str, list[dict[str, Any]]], cell: int = 30) -> None:
    """The builds side by side: one row per figure, a column per build (value and status)."""
    order: list[str] = []
    for lines in results.values():
        order += [line["figure"] for line in lines if line["figure"] not in order]
    by_build = {kind: {line["figure"]: line for line in lines} for kind, lines in results.items()}
    width = max(len(f) for f in order)
    targets = {f: " / ".join(dict.fromkeys(_target(b[f]) for b in by_build.values() if f in b)) for f in order}
    twidth = min(24, max(len(t) for t in targets.values()))
    print(f"{'figure':{width}}  {'target':{twidth}}  " + "  ".join(f"{kind:{cell + 5}}" for kind in results))
    for figure in order:
        cells = []
        for lines in by_build.values():
            line = lines.get(figure)
            text = "" if line is None else (f"{line['shown'][:cell]:{cell}} "
                                            f"{line['status']}")
            cells.append(f"{text:{cell + 5}}")
        print(f"{figure:{width}}  {targets[figure][:twidth]:{twidth}}  " + "  ".join(cells))
    print(f"{'targets met':{width}}  {'':{twidth}}  "
          + "  ".join(f"{_met(lines):{cell + 5}}" for lines in results.values()))
    _print_info_legend(list(results.values()))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", default=None,
                        help=f"Comma list of the builds to measure, of {', '.join(KINDS)} (default: all three; "
                             "plus alone with --plus)")
    parser.add_argument("--n", type=int, default=60, help="Tasks of the standard build")
    parser.add_argument("--challenge-n", type=int, default=10, help="Tasks of the Challenge build")
    parser.add_argument("--seed", type=int, default=11, help="Seed of the measured builds")
    parser.add_argument("--train-seed", type=int, default=None,
                        help="Seed of the builds the adversaries learn from (default: --seed + 1000)")
    parser.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--cache", type=Path, default=None,
                        help="Keep the builds in this folder (one per kind, size and seed) and reuse them")
    parser.add_argument("--dataset", type=Path, default=None, help="Measure this dataset instead of building")
    parser.add_argument("--plus", type=Path, default=None, metavar="SEEDS",
                        help="OfficeBench seeds of the Plus build (default: datasets/officebench-sample)")
    parser.add_argument("--plus-runs", type=int, default=4,
                        help="Regenerations of the Plus seeds (seed, seed+1, ...) measured as one split")
    parser.add_argument("--train", type=Path, default=None,
                        help="A labelled build (another seed) to train the adversaries on (one build only)")
    parser.add_argument("--no-oracle", action="store_true", help="Skip the long-context oracle evaluation")
    parser.add_argument("--detail", action="store_true", help="Also print each build's figures one a line")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON")
    args = parser.parse_args()
    builds = args.builds or ("plus" if args.plus is not None else ",".join(KINDS))
    args.kinds = [k.strip() for k in builds.split(",") if k.strip()]
    unknown = [k for k in args.kinds if k not in KINDS]
    if unknown or not args.kinds:
        parser.error(f"--builds: {', '.join(unknown) or 'empty'}: use {', '.join(KINDS)}")
    if args.train is not None and (args.dataset is None and len(args.kinds) > 1):
        parser.error("--train goes with --dataset or a single build")
    if args.dataset is not None and not (args.dataset / "tasks").is_dir():
        parser.error(f"--dataset {args.dataset}: not a dataset folder (no tasks/)")
    args.plus = args.plus or Path(__file__).resolve().parents[1] / "datasets" / "officebench-sample"
    return args


def _run_one(args: argparse.Namespace, kind: str, cache: Path) -> tuple[str, list[dict[str, Any]]]:
    """Build (or reuse) one kind's measured and training datasets and measure them."""
    train_seed = args.seed + 1000 if args.train_seed is None else args.train_seed
    n = args.challenge_n if kind == "challenge" else args.n
    # a Plus split of a few seed tasks is regenerated with --plus-runs seeds and read as one, so that a
    # share of tasks is measured in steps finer than one task in five
    runs = args.plus_runs if kind == "plus" and args.dataset is None else 1

    def folder_of(seed: int) -> Path:
        return cache / (f"plus-s{seed}" if kind == "plus" else f"{kind}-n{n}-s{seed}")

    if args.train is None and args.dataset is None and abs(train_seed - args.seed) < runs:
        raise SystemExit(f"--train-seed {train_seed}: the adversaries would learn from a measured run "
                         f"(seeds {args.seed}-{args.seed + runs - 1}); pick one at least --plus-runs away")
    if args.dataset is not None:
        folders, source = [args.dataset], f"dataset {args.dataset}"
    else:
        folders = [folder_of(args.seed + k) for k in range(runs)]
        sources = [make(kind, f, n=n, seed=args.seed + k, seeds=args.plus, workers=args.workers)
                   for k, f in enumerate(folders)]
        seeds = f"seeds {args.seed}-{args.seed + runs - 1}"
        source = sources[0] if runs == 1 else f"{runs} runs ({seeds}): {sources[0]}, ..."
    if args.train is not None:
        trains, train_source = [args.train], str(args.train)
    else:
        if args.dataset is not None:
            n = sum(1 for t in iter_tasks(args.dataset) if t.record is not None)
        trains = [folder_of(train_seed + k) for k in range(runs)]
        for k, f in enumerate(trains):
            make(kind, f, n=n, seed=train_seed + k, seeds=args.plus, workers=args.workers)
        train_source = f"a {kind} build with seed {train_seed}" if runs == 1 else \
            f"{runs} {kind} builds with seeds {train_seed}-{train_seed + runs - 1}"
    start = time.perf_counter()
    lines = measure(folders, trains, train_source, workers=args.workers, oracle=not args.no_oracle)
    return f"{source}; measured in {time.perf_counter() - start:.1f} s", lines


def main() -> None:
    args = _arguments()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="bench-quality-"))
    cache.mkdir(parents=True, exist_ok=True)
    try:
        kinds = [kind_of(args.dataset)] if args.dataset is not None else args.kinds
        results: dict[str, list[dict[str, Any]]] = {}
        sources: dict[str, str] = {}
        for kind in kinds:
            sources[kind], results[kind] = _run_one(args, kind, cache)
        if args.json:
            print(json.dumps({kind: {"source": sources[kind], "figures": results[kind]} for kind in kinds}, indent=2))
            return
        for kind in kinds:
            if args.detail:
                print_lines(f"{kind}: {sources[kind]}", results[kind])
            else:
                print(f"{kind}: {sources[kind]}")
        print_table(results)
    finally:
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
