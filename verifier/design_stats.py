"""What a dataset's tasks are made of: families, phrasings, plan length, duplicates, office size,
and how many checked values trace to their source.

A reviewer asks these before trusting a benchmark: how many kinds of task it holds and in how
many words each is asked, whether hard tasks take real work, whether two tasks are one, whether
the offices look like offices, and whether every check can be derived (``verifier.trace``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean, median
from typing import Any, Iterable

from generators.families import FAMILIES
from verifier.duplicates import near_duplicates
from verifier.trace import office_text, rule_specifics_said, trace_task


def _office_size(testbed: Path) -> dict[str, Any]:
    """Files; data rows of each worksheet; pages of each PDF (read with the libraries directly:
    this is a survey, not an agent's view)."""
    import openpyxl
    from pypdf import PdfReader

    files = [p for p in testbed.rglob("*") if p.is_file() and not p.is_symlink()]
    rows, pages = [], []
    for path in files:
        suffix = path.suffix.lower()
        try:
            if suffix == ".xlsx":
                book = openpyxl.load_workbook(path, read_only=True)
                try:
                    rows += [max(0, (sheet.max_row or 1) - 1) for sheet in book.worksheets]
                finally:
                    book.close()
            elif suffix == ".pdf":
                pages.append(len(PdfReader(str(path)).pages))
        except Exception:  # a survey skips what it cannot open
            continue
    return {"files": len(files), "sheet_rows": rows, "pdf_pages": pages,
            "mails": sum(p.suffix.lower() == ".eml" for p in files)}


def _or_unknown(value: str | None) -> str:
    """A field a record may leave out (a Plus task has no family nor difficulty), as the survey counts it."""
    return value if value is not None else "?"


def design_figures(tasks: Iterable[Any]) -> dict[str, Any]:
    """Figures over loaded tasks (``backends.dataset_reader.LoadedTask``: ``task``, ``record`` and ``testbed``).
    The figures, the duplicate keys and the trace read the typed record."""
    loaded = [t for t in tasks if t.record is not None and t.task is not None]
    typed = [t.task for t in loaded]
    families: dict[str, set[str]] = defaultdict(set)
    intents: dict[str, set[str]] = defaultdict(set)
    queries: dict[str, set[str]] = defaultdict(set)
    steps: dict[int, list[int]] = defaultdict(list)
    hard_steps: list[int] = []
    for r in typed:
        family = _or_unknown(r.family)
        families[str(r.app_count)].add(family)
        intents[family].add(r.intent)
        queries[family].add(r.query)
        if r.oracle:
            steps[r.app_count].append(len(r.oracle))
            if r.difficulty == "hard":
                hard_steps.append(len(r.oracle))
    offices: dict[Any, dict[str, Any]] = {}
    traced = leaves = passing = rules_said = rule_specifics = 0
    problems: Counter = Counter()
    texts: dict[Any, Any] = {}
    for task in loaded:
        world = task.task.provenance.to_dict().get("world_seed", task.id)
        if world not in offices:
            offices[world] = _office_size(task.testbed)
            texts[world] = office_text(task.testbed)
        trace = trace_task(task.task, texts[world])
        said, stated = rule_specifics_said(task.task)
        rules_said += said
        rule_specifics += stated
        leaves += trace.leaves
        traced += len(trace.sources)
        passing += trace.passed
        for problem in trace.problems:
            problems[problem.split(":", 1)[0] if problem.startswith(("evaluation", "computed")) else problem[:60]] += 1
    sizes = list(offices.values())
    all_rows = [n for s in sizes for n in s["sheet_rows"]]
    all_pages = [n for s in sizes for n in s["pdf_pages"]]
    counts = Counter(_or_unknown(r.family) for r in typed)
    repeated = [f for f, n in counts.items() if n >= 3]
    return {
        "tasks": len(typed),
        "families": len({f for names in families.values() for f in names}),
        "families_registered": len(FAMILIES),
        "registered_by_app_count": dict(sorted(Counter(str(len(f.apps)) for f in FAMILIES.values()).items())),
        "families_by_app_count": {k: len(v) for k, v in sorted(families.items())},
        "tasks_by_app_count": dict(sorted(Counter(str(r.app_count) for r in typed).items())),
        "intents_per_family": mean(len(intents[f]) for f in repeated) if repeated else None,
        "queries_per_family": mean(len(queries[f]) for f in repeated) if repeated else None,
        "intent_pool_min": min((len(FAMILIES[f].phrasing.intents) for f in counts if f in FAMILIES), default=None),
        "query_pool_min": min((len(FAMILIES[f].phrasing.queries) for f in counts if f in FAMILIES), default=None),
        "median_steps_by_app_count": {str(k): median(v) for k, v in sorted(steps.items())},
        "median_hard_steps": median(hard_steps) if hard_steps else None,
        "difficulty": dict(sorted(Counter(_or_unknown(r.difficulty) for r in typed).items())),
        "near_duplicates": len(near_duplicates(typed)),
        "worlds": len(sizes),
        "files_per_world": median(s["files"] for s in sizes) if sizes else None,
        "mails_per_world": median(s["mails"] for s in sizes) if sizes else None,
        "median_sheet_rows": median(all_rows) if all_rows else None,
        "median_pdf_pages": median(all_pages) if all_pages else None,
        "criteria_traced_share": traced / leaves if leaves else None,
        "tasks_passing_trace": passing / len(loaded) if loaded else None,
        "rule_specifics": rule_specifics,
        "rule_specifics_said_share": rules_said / rule_specifics if rule_specifics else None,
        "trace_problems": dict(problems.most_common(10)),
    }
