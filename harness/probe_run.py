"""``homer probe``: ask an agent each task's memory probes, closed-book and with the history.

Agents: ``llm`` (the model, prompted by ``templates/prompts/probe.j2``, answering with a letter
checked against the options), ``oracle`` (the answer key: a ceiling) and ``none`` (always the
first option: chance, a floor). With the history means the task's history context as ``homer eval`` builds
it (long-context, or RAG retrieving for the question itself). The run folder holds
``probes.jsonl`` (each question, the right letter and both answers), ``probe.json`` (accuracy per
memory dynamic, closed-book and with the history) and ``probe-report.md``. Joined with an eval run
on the same tasks, each failed task is split: the agent remembered every probed detail (with the
history) but did not act on it, or it did not remember.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from backends.batch import space_named
from backends.dataset_reader import dataset_identity, iter_tasks
from backends.llm import LLMError
from backends.llm.failures import RefusalWatch, RunRefused
from backends.prompts import render
from backends.task_record import TaskRecord
from harness.agents import llm_error_text
from harness.context import ContextConfig, build_context
from harness.probes import DYNAMICS, LETTERS, Probe, cue_pool, probes_for
from harness.report import markdown_table, pct
from office_env.workspace import atomic_write

AGENTS = ("llm", "oracle", "none")
PROBES, SUMMARY, REPORT, REPORT_HTML = "probes.jsonl", "probe.json", "probe-report.md", "probe-report.html"


@dataclass(frozen=True)
class ProbeConfig:
    agent: str
    context: ContextConfig
    per_task: int | None = None  # at most this many questions a task (the first, in the task's order)


def schema_for(probe: Probe) -> dict[str, Any]:
    return {"type": "object", "properties": {"answer": {"type": "string", "enum": list(LETTERS[:len(probe.options)])}},
            "required": ["answer"], "additionalProperties": False}


def ask(agent: str, probe: Probe, history: str, client: Any = None) -> str:
    """The letter the agent picks."""
    if agent == "oracle":
        return probe.answer
    if agent == "none":
        return LETTERS[0]  # a fixed letter: chance, since the right one is placed at random
    inputs = {"question": probe.question, "options": {LETTERS[i]: text for i, text in enumerate(probe.options)}}
    schema = schema_for(probe)
    data = client.structured("probe", render("probe", inputs=inputs, history=history, schema=schema), schema)
    return data["answer"]


def _history(record: TaskRecord, probe: Probe, context: ContextConfig, client: Any) -> str:
    # with rag, retrieve for the question asked, not for the task's query
    shown = record.model_copy(update={"query": probe.question}) if context.mode == "rag" else record
    return build_context(shown, context, client=client).text


def _probe_task(record: TaskRecord, pool: Any, config: ProbeConfig, client: Any,
                refusals: RefusalWatch | None = None) -> dict[str, Any]:
    """One task's probes asked closed-book and with the history: its result rows, the questions the
    endpoint failed, why it has no probes (``skipped``) and the seconds spent making them."""
    made = time.perf_counter()
    try:
        probes = probes_for(record, pool)[:config.per_task]
        long_history = build_context(record, config.context, client=client).text \
            if config.context.mode != "rag" else None
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return {"id": record.id, "results": [], "errors": [], "generated": 0.0,
                "skipped": {"id": record.id, "reason": f"no probes: {exc.__class__.__name__}: {exc}"}}
    generated = time.perf_counter() - made
    results, errors = [], []
    refusals = refusals if refusals is not None else RefusalWatch()
    for probe in probes:
        if refusals.tripped():  # the server refuses every question alike: stop now, one line
            raise RunRefused(refusals.message())
        try:
            closed = ask(config.agent, probe, "", client)
            history = long_history if long_history is not None else _history(record, probe, config.context, client)
            informed = ask(config.agent, probe, history, client)
        except Exception as exc:  # the endpoint or its answer failed for good: this question only
            first = llm_error_text(exc) if isinstance(exc, LLMError) else (
                str(exc).splitlines()[0][:300] if str(exc) else exc.__class__.__name__)
            errors.append({"task": probe.task, "piece": probe.piece, "dynamic": probe.dynamic, "error": first})
            refusals.see(first)
            continue
        refusals.see(None)
        results.append({**probe.to_dict(), "closed_book": closed, "closed_book_correct": closed == probe.answer,
                        "with_history": informed, "with_history_correct": informed == probe.answer})
    return {"id": record.id, "results": results, "errors": errors, "generated": generated,
            "skipped": None}


def run_probes(dataset: Path, out: Path, config: ProbeConfig, client: Any = None,
               eval_rows: list[dict[str, Any]] | None = None, workers: int = 1,
               on_outcome: Callable[[dict[str, Any]], None] | None = None,
               on_total: Callable[[int], None] | None = None, eval_source: str | None = None) -> dict[str, Any]:
    """Ask every task's probes (``workers`` tasks at a time, in threads: an llm agent's requests
    overlap) and write the run folder; the output is the same whatever the worker count.
    ``eval_source``: the folder of the eval run ``eval_rows`` come from, recorded beside the split
    of its failures so a report credits the split to that run only."""
    started = time.perf_counter()
    loaded = [t for t in iter_tasks(dataset)]
    records = [t.task for t in loaded if t.task is not None]
    skipped = [{"id": t.id, "reason": f"cannot be read: {t.error}"} for t in loaded if t.task is None]
    pool = cue_pool(records)
    if on_total is not None:
        on_total(len(records))

    refusals = RefusalWatch()

    def one(record: TaskRecord) -> dict[str, Any]:
        outcome = _probe_task(record, pool, config, client, refusals)
        if on_outcome is not None:
            failed = outcome["skipped"] is not None or (outcome["errors"] and not outcome["results"])
            on_outcome({"status": "dropped" if outcome["skipped"] else "error" if failed else "accepted"})
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, workers)) as threads:
        outcomes = list(threads.map(one, records))  # in task order, whatever finished first
    if refusals.tripped():  # a refusal in the last question of a task
        raise RunRefused(refusals.message())
    results = [row for o in outcomes for row in o["results"]]
    errors = [e for o in outcomes for e in o["errors"]]
    skipped += [o["skipped"] for o in outcomes if o["skipped"]]
    generated = sum(o["generated"] for o in outcomes)
    lines = [json.dumps(row, ensure_ascii=False) + "\n" for row in results]
    summary = _summarize(results, eval_rows)
    model = client.settings.model_for("probe") if config.agent == "llm" and client is not None else None
    summary.update({"agent": config.agent, "model": model, "context": config.context.mode,
                    "per_task": config.per_task,
                    **({"eval_run": eval_source} if eval_source and eval_rows is not None else {}),
                    **dataset_identity(dataset),
                    "tasks": len(records), "questions": len(results), "skipped": skipped, "errors": errors,
                    "generation_seconds": round(generated, 4),
                    "elapsed_seconds": round(time.perf_counter() - started, 3)})
    files = {PROBES: "".join(lines).encode("utf-8"), SUMMARY: json.dumps(summary, indent=1).encode("utf-8"),
             REPORT: render_probe_report(summary).encode("utf-8"),
             REPORT_HTML: render_probe_html(summary).encode("utf-8")}
    with space_named(out, again="run the probe again", needed=sum(map(len, files.values()))):
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            atomic_write(out / name, data)
    return summary


def probe_table(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Accuracy per memory dynamic (the "all" row last), as text cells."""
    headers = ["dynamic", "questions", "answerable", "closed-book (%)", "with the history (%)"]
    rows = [[name.replace("_", " "), str(row["questions"]), str(row["answerable"]), pct(row["closed_book"]),
             pct(row["with_history"])] for name, row in summary["by_dynamic"].items()]
    return headers, rows


def split_line(summary: dict[str, Any]) -> str | None:
    """The eval failures the probes split, in one sentence (None without an eval run)."""
    split = summary.get("eval_split")
    if not isinstance(split, dict):
        return None
    return (f"Eval failures: {split.get('remembered_but_did_not_act')} remembered every probed detail but did not "
            f"act, {split.get('did_not_remember')} did not remember, {split.get('not_probed')} without probes.")


def render_probe_html(summary: dict[str, Any]) -> str:
    """The probe report as one self-contained page, with the accuracy chart inline."""
    from harness.plots import probe_accuracy
    from harness.report_html import inline_figures, render_page

    headers, table = probe_table(summary)
    notes = ["Closed-book accuracy near chance means the question needs the history."]
    if split_line(summary):
        notes.append(cast(str, split_line(summary)))
    figures = inline_figures([("probe-accuracy", probe_accuracy(summary),
                               "Accuracy per memory dynamic, closed-book and with the history")])
    config = [("agent", summary["agent"]), ("context", summary["context"]), ("dataset", summary["dataset"])]
    return render_page(title=f"Memory probes: {summary['agent']} agent, {summary['context']}",
                       summary=f"{summary['questions']} question(s) over {summary['tasks']} task(s).",
                       headers=headers, table=table, notes=notes, figures=figures, config=config)


def _accuracy(rows: list[dict[str, Any]], key: str) -> float | None:
    return sum(1 for r in rows if r[key]) / len(rows) if rows else None


def _summarize(results: list[dict[str, Any]], eval_rows: list[dict[str, Any]] | None) -> dict[str, Any]:
    by_dynamic: dict[str, Any] = {}
    for dynamic in (*DYNAMICS, "all"):
        rows = results if dynamic == "all" else [r for r in results if r["dynamic"] == dynamic]
        by_dynamic[dynamic] = {"questions": len(rows), "closed_book": _accuracy(rows, "closed_book_correct"),
                               "with_history": _accuracy(rows, "with_history_correct"),
                               "answerable": sum(1 for r in rows if r["answerable"])}
    summary: dict[str, Any] = {"by_dynamic": by_dynamic}
    if eval_rows is not None:
        per_task: dict[str, list[bool]] = defaultdict(list)
        for row in eval_rows:
            if not row.get("error"):
                per_task[row["id"]].append(bool(row["passed"]))
        remembered: dict[str, bool] = {}
        for row in results:
            remembered[row["task"]] = remembered.get(row["task"], True) and row["with_history_correct"]
        split = {"passed": 0, "remembered_but_did_not_act": 0, "did_not_remember": 0, "not_probed": 0}
        tasks: dict[str, str] = {}
        for task, runs in sorted(per_task.items()):
            if all(runs):
                verdict = "passed"
            elif task not in remembered:
                verdict = "not_probed"
            else:
                verdict = "remembered_but_did_not_act" if remembered[task] else "did_not_remember"
            split[verdict] += 1
            tasks[task] = verdict
        summary["eval_split"] = split
        summary["eval_tasks"] = tasks
    return summary


def render_probe_report(summary: dict[str, Any]) -> str:
    headers, rows = probe_table(summary)
    out = [f"# Memory probes: {summary['agent']} agent, {summary['context']}", "",
           f"{summary['questions']} question(s) over {summary['tasks']} task(s) of `{summary['dataset']}`.", "",
           markdown_table(headers, rows, bold_last=True)]
    out += ["", "Closed-book accuracy near chance means the question cannot be answered without the history; "
            "unanswerable questions (the right value left out) are right only as \"none of these\"."]
    if "eval_split" in summary:
        split = summary["eval_split"]
        out += ["", "## Failures of the eval run", "",
                f"- passed: {split['passed']}", f"- remembered every probed detail but did not act: "
                f"{split['remembered_but_did_not_act']}", f"- did not remember: {split['did_not_remember']}",
                f"- failed without probes: {split['not_probed']}"]
    return "\n".join(out) + "\n"


__all__ = ["AGENTS", "ProbeConfig", "run_probes", "ask", "render_probe_report"]
