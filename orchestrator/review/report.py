"""The agreement report of a dataset's human review (``homer review report``).

Per guideline criterion, Fleiss' kappa over the tasks rated by two or more annotators (Cohen's
kappa beside it when exactly two annotators rated); overall, Fleiss' kappa over every (task,
criterion) item with the verdicts read as positive (yes, keep) or negative (no, drop); the keep /
drop count by majority of each task's overall verdicts (a tie is a disagreement, not a keep); and
the tasks on which the annotators disagree.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from orchestrator.review.agreement import cohen_kappa, fleiss_kappa, table_of
from orchestrator.review.annotations import CRITERIA, OVERALL, VERDICTS, Verdict

POSITIVE = {"yes", "keep"}


def review_report(verdicts: list[Verdict]) -> dict[str, Any]:
    annotators = sorted({v.annotator for v in verdicts})
    by_item: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for v in verdicts:
        by_item[(v.task, v.criterion)][v.annotator] = v.verdict
    criteria: dict[str, Any] = {}
    for criterion in (*CRITERIA, OVERALL):
        items = {task: list(labels.values()) for (task, c), labels in by_item.items() if c == criterion}
        rated = {task: labels for task, labels in items.items() if len(labels) >= 2}
        row: dict[str, Any] = {"tasks": len(items), "tasks_rated_twice": len(rated),
                               "fleiss_kappa": fleiss_kappa(table_of(rated, VERDICTS[criterion])) if rated else None}
        if len(annotators) == 2:
            a, b = annotators
            both = [(labels[a], labels[b]) for (task, c), labels in sorted(by_item.items())
                    if c == criterion and a in labels and b in labels]
            row["cohen_kappa"] = cohen_kappa([x for x, _ in both], [y for _, y in both]) if both else None
        criteria[criterion] = row
    pooled = {item: ["positive" if label in POSITIVE else "negative" for label in labels.values()]
              for item, labels in by_item.items() if len(labels) >= 2}
    overall = fleiss_kappa(table_of(pooled, ("positive", "negative"))) if pooled else None
    decisions: dict[str, str] = {}
    for (task, criterion), labels in by_item.items():
        if criterion != OVERALL:
            continue
        keeps = sum(1 for label in labels.values() if label == "keep")
        drops = len(labels) - keeps
        decisions[task] = "keep" if keeps > drops else "drop" if drops > keeps else "tie"
    disagreements = sorted({task for (task, _), labels in by_item.items() if len(set(labels.values())) > 1})
    counts = {k: sum(1 for d in decisions.values() if d == k) for k in ("keep", "drop", "tie")}
    return {"annotators": annotators, "verdicts": len(verdicts), "criteria": criteria, "overall_fleiss_kappa": overall,
            "decisions": dict(sorted(decisions.items())), "counts": counts, "disagreements": disagreements}


def _kappa(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def render_report(report: dict[str, Any], dataset: str) -> str:
    names = ", ".join(report["annotators"]) or "none"
    lines = [f"# Review of `{dataset}`", "",
             f"Annotators: {names}; verdicts: {report['verdicts']}; overall Fleiss' kappa "
             f"{_kappa(report['overall_fleiss_kappa'])} (every task and criterion, yes/keep against no/drop).", ""]
    two = len(report["annotators"]) == 2
    lines += ["| criterion | tasks | rated by two or more | Fleiss' kappa |" + (" Cohen's kappa |" if two else ""),
              "|---|---:|---:|---:|" + ("---:|" if two else "")]
    for name, row in report["criteria"].items():
        cells = [name, str(row["tasks"]), str(row["tasks_rated_twice"]), _kappa(row["fleiss_kappa"])]
        if two:
            cells.append(_kappa(row.get("cohen_kappa")))
        lines.append("| " + " | ".join(cells) + " |")
    counts = report["counts"]
    lines += ["", f"Overall verdicts by majority: {counts['keep']} keep, {counts['drop']} drop, {counts['tie']} tie.",
              "", "Kappa is n/a where chance alone gives full agreement (every verdict the same) or no task was "
              "rated twice.", ""]
    if report["disagreements"]:
        lines += [f"## Tasks with disagreement ({len(report['disagreements'])})", ""]
        lines += [f"- `{task}`" for task in report["disagreements"]]
        lines.append("")
    return "\n".join(lines)
