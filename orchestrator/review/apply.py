"""``homer review apply``: a new dataset from a reviewed one, with post-edits applied and dropped tasks removed.

Which tasks go is decided by the rule on each task's overall verdicts: ``any-drop`` drops a task
one annotator dropped; ``majority`` drops it when more annotators dropped than kept (a tie keeps
it). A task nobody gave an overall verdict is kept or dropped as ``unreviewed`` says. Each kept
task gets its revisions applied, its gates run again (a task that fails them now is dropped with
the reason, so ``homer verify`` passes on the result), and a ``review`` entry in its provenance.
The new dataset is written under a temporary name and renamed into place; its card records the
annotators, the agreement and the rule.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from backends.dataset_reader import folder_written_whole, iter_tasks
from backends.task_record import parse_record
from office_env.untrusted import UntrustedInputError, load_json, printable
from orchestrator.dataset_writer import stage_task, write_index, write_json, write_schemas, write_text
from orchestrator.record import dialogue_tokens
from orchestrator.review.annotations import OVERALL, AnnotationStore
from orchestrator.review.edits import EditError, edited_record, recheck
from orchestrator.review.report import render_report, review_report
from verifier.gates import kept_findings

RULES = ("any-drop", "majority")


class ApplyError(ValueError):
    """The review cannot be applied as asked; the message says why."""


class NothingKept(ApplyError):
    """Every task would be dropped: no dataset is written."""


def decide(overall: list[str], rule: str, unreviewed: str) -> str:
    """``keep`` or ``drop`` for one task from its annotators' overall verdicts."""
    if not overall:
        return unreviewed
    drops = sum(1 for v in overall if v == "drop")
    if rule == "any-drop":
        return "drop" if drops else "keep"
    return "drop" if drops > len(overall) - drops else "keep"


def apply_review(dataset: Path, out: Path, rule: str, unreviewed: str = "keep") -> dict[str, Any]:
    if rule not in RULES:
        raise ApplyError(f"--rule: {rule!r} is not one of {', '.join(RULES)}")
    if unreviewed not in ("keep", "drop"):
        raise ApplyError(f"--unreviewed: {unreviewed!r} is not keep or drop")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ApplyError(f"--out {out}: exists and is not an empty folder")
    if out.resolve() == dataset.resolve() or dataset.resolve() in out.resolve().parents:
        raise ApplyError(f"--out {out}: must be outside the reviewed dataset")
    with AnnotationStore(dataset) as store:
        verdicts = store.verdicts()
        revisions = store.revisions()
        warnings = list(store.skipped)
    report = review_report(verdicts)
    overall: dict[str, list[str]] = {}
    for v in verdicts:
        if v.criterion == OVERALL:
            overall.setdefault(v.task, []).append(v.verdict)
    kept, dropped = [], []
    with folder_written_whole(out) as tmp:
        staging = tmp / ".staging"
        staging.mkdir()
        (tmp / "tasks").mkdir()
        for task in iter_tasks(dataset):
            if task.task is None:
                dropped.append({"id": task.id, "reason": f"cannot be read: {task.error}"})
                continue
            decision = decide(overall.get(task.id, []), rule, unreviewed)
            if decision == "drop":
                reason = "unreviewed" if task.id not in overall else f"{rule}: " + ", ".join(sorted(overall[task.id]))
                dropped.append({"id": task.id, "reason": reason})
                continue
            own = [r for r in revisions if r["task"] == task.id]
            try:
                record = edited_record(task.task, own)
            except (EditError, KeyError, TypeError, AttributeError) as exc:
                dropped.append({"id": task.id, "reason": f"edits no longer apply: {printable(exc)[:200]}"})
                continue
            results = recheck(record, task.testbed, task.reference)
            failing = [f"{k}: {r.detail}" for k, r in results.items() if not r.passed]
            if failing:
                dropped.append({"id": task.id, "reason": "gates fail: " + "; ".join(failing)[:300]})
                continue
            provenance = record.provenance.to_dict()
            provenance.update(kept_findings(results))  # the trace of the edited record
            if own:  # the chat may have changed: its token counts follow it
                tokens = provenance.setdefault("tokens", {})
                if isinstance(tokens, dict):
                    tokens.update(dialogue_tokens([session.to_dict() for session in record.dialogue]))
            provenance["review"] = {
                "rule": rule, "overall": sorted(overall.get(task.id, [])),
                "edits": [{"field": r["field"], "annotator": r["annotator"], "at": r["at"]} for r in own]}
            record = parse_record({**record.to_dict(), "provenance": provenance})  # it passed its gates
            staged = stage_task(staging, record, task.testbed, task.reference)
            os.replace(staged, tmp / "tasks" / task.id)
            kept.append(record)
        shutil.rmtree(staging)
        if not kept:
            raise NothingKept(f"every task of {dataset} would be dropped ({len(dropped)}); nothing written")
        write_index(tmp, kept)
        write_schemas(tmp)
        summary = {"source": str(dataset), "rule": rule, "unreviewed": unreviewed, "annotators": report["annotators"],
                   "overall_fleiss_kappa": report["overall_fleiss_kappa"],
                   "criteria": report["criteria"], "kept": len(kept), "dropped": dropped,
                   "edited_tasks": len({r["task"] for r in revisions if any(k.id == r["task"] for k in kept)}),
                   "edits": sum(1 for r in revisions if any(k.id == r["task"] for k in kept))}
        source_build = dataset / "build.json"
        build: dict[str, Any] = {}
        if os.path.lexists(source_build):
            try:
                loaded = load_json(source_build)
            except UntrustedInputError as exc:
                raise ApplyError(str(exc)) from None
            build = loaded if isinstance(loaded, dict) else {}
        build["review"] = summary
        build["accepted"] = len(kept)
        write_json(tmp / "build.json", build)
        write_text(tmp / "README.md", card(summary, render_report(report, str(dataset))))
    return {**summary, "warnings": warnings}


def card(summary: dict[str, Any], report_text: str) -> str:
    kappa = summary["overall_fleiss_kappa"]
    lines = ["# Reviewed dataset", "",
             f"Made by `homer review apply` from `{summary['source']}` with the rule **{summary['rule']}** "
             f"(tasks without an overall verdict: {summary['unreviewed']}).", "",
             f"- annotators: {', '.join(summary['annotators']) or 'none'}",
             f"- overall Fleiss' kappa: {'n/a' if kappa is None else f'{kappa:.3f}'}",
             f"- tasks kept: {summary['kept']}; dropped: {len(summary['dropped'])}",
             f"- post-edits applied: {summary['edits']} in {summary['edited_tasks']} task(s)", ""]
    if summary["dropped"]:
        lines += ["## Dropped", ""] + [f"- {d['id']}: {d['reason']}" for d in summary["dropped"]] + [""]
    return "\n".join(lines) + "\n## Agreement\n\n" + report_text.split("\n", 1)[-1]
