"""Benchmark: do the checks judge answers as a careful person would, and do exports keep them?

Builds an offline dataset (default 60 tasks, seed 11) in a temporary folder, or reads one
(``--dataset DIR``), and prints per family:

- answer forms: the tasks whose oracle, with its prose rewritten as people write dates, times and
  amounts ("Monday 7 April", "2 pm", "1,374.45", a numeric date in the office city's order;
  ``verifier.answer_forms``), still passes (the ``answer_forms`` gate, re-run here on every task;
  target: every task with such prose), and the same per office order (day first, month first, either);
- natural forms: each right value of the oracle's output rewritten into one natural form at a time
  (a number in words, "at 14.00", "two in the afternoon", "quarter past two", "the 8th of April
  2024"; ``verifier.natural_forms``) in one kind of output at a time (mail, document, PDF, final
  answer, a calendar event's text), replayed and scored: passes and fails per form and kind, and
  the check that refused each failure (target: no failure);
- not pastes: the tasks whose oracle, with everything it read pasted in place of its prose, fails
  (the ``findings_not_pastes`` gate, a finding's and a look-up's alike; target: every task but a
  forward);
- the build's drops by gate (a task a gate refuses is not written: these say how many were lost);
- the OfficeBench export: the share of tasks exported whole (``homer export --officebench``, every
  state of each judged alike by OfficeBench's rules; target at least 80 %), and why the others
  were left out.

Run: ``python bench/checks.py [--n 60] [--seed 11] [--dataset DIR] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks, task_day_first, task_now  # noqa: E402
from backends.task_record import plan_calls  # noqa: E402
from office_env.replays import replay_plan  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.officebench_export import export_officebench  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402
from verifier.gates import answer_forms_gate, paste_gate  # noqa: E402
from verifier.natural_forms import labels, natural_form_plans  # noqa: E402

EXPORT_TARGET = 0.80


def _verdict(result: Any) -> str:
    return "skipped" if result.skipped else ("passed" if result.passed else "FAILED")


def measure(dataset: Path, work: Path) -> dict[str, Any]:
    families: dict[str, Counter] = defaultdict(Counter)
    orders: Counter = Counter()  # answer-form verdicts per office order of a numeric date
    naturals: Counter = Counter()  # (form, kind) replays, and (form, kind, "passed") those that pass
    natural_fails: list[str] = []
    for task in iter_tasks(dataset):
        record = task.task
        if record is None or task.record is None or not record.oracle:
            continue
        now = task_now(record)
        scratch = work / task.id
        scratch.mkdir(parents=True)
        forms = answer_forms_gate(record, task.testbed, task.reference, now, scratch)
        calls = replay_plan(task.testbed, plan_calls(record.oracle), now, scratch, "oracle").results
        trace = (record.provenance.model_extra or {}).get("trace") or {}  # the build's criteria_traced kept it
        paste = paste_gate(record, trace, task.testbed, task.reference, now, scratch, [c.observation for c in calls])
        family = families[record.family]
        family["tasks"] += 1
        family[f"forms {_verdict(forms)}"] += 1
        family[f"paste {_verdict(paste)}"] += 1
        natural_plans = natural_form_plans(plan_calls(record.oracle), labels(record.criteria()))
        for index, (form, kind, plan) in enumerate(natural_plans):
            report = replay_plan(task.testbed, plan, now, scratch, f"natural-{index}").score(
                record.criteria(), task.reference, initial_dir=task.testbed, day_first=task_day_first(record))
            naturals[form, kind] += 1
            if not report.passed:
                refused = next(r for r in report.results if not r.passed)
                natural_fails.append(f"{task.id} {form} in {kind}: {refused.function}: {refused.reason[:160]}")
            else:
                naturals[form, kind, "passed"] += 1
        order = {True: "day first", False: "month first", None: "either order"}[task_day_first(record)]
        orders[f"{order} {_verdict(forms)}"] += 1
        shutil.rmtree(scratch, ignore_errors=True)
    summary = export_officebench(dataset, work / "export")
    total = summary.written + len(summary.left_out)
    reasons = Counter(re.sub(r"neo-\d+: ", "", line).split(":")[0][:80] for line in summary.left_out)
    natural = {f"{form} in {kind}": {"replays": n, "passed": naturals[form, kind, "passed"]}
               for (form, kind, *rest), n in naturals.items() if not rest}
    return {"families": {k: dict(v) for k, v in sorted(families.items())}, "orders": dict(sorted(orders.items())),
            "natural_forms": dict(sorted(natural.items())), "natural_fails": natural_fails,
            "export": {"whole": summary.written, "tasks": total, "share": summary.written / total if total else 0.0,
                       "left_out": dict(reasons.most_common())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--dataset", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-checks-"))
    try:
        drops: Counter = Counter()
        dataset = args.dataset
        if dataset is None:
            dataset = work / "ds"
            summary = build(dataset, args.n, BuildConfig(seed=args.seed))
            drops = summary.drops
        figures = measure(dataset, work / "scratch")
        figures["drops"] = dict(drops)
        if args.json:
            print(json.dumps(figures, indent=2))
            return
        rows = figures["families"]
        forms_failed = sum(v.get("forms FAILED", 0) for v in rows.values())
        paste_failed = sum(v.get("paste FAILED", 0) for v in rows.values())
        print(f"{'family':28} tasks  forms pass/skip/FAIL  paste-fails/skip/PASTE-PASSES")
        for name, v in rows.items():
            print(f"{name:28} {v['tasks']:5}  {v.get('forms passed', 0):4}/{v.get('forms skipped', 0):3}/"
                  f"{v.get('forms FAILED', 0):3}        {v.get('paste passed', 0):4}/{v.get('paste skipped', 0):3}/"
                  f"{v.get('paste FAILED', 0):3}")
        print(f"answer forms: {forms_failed} task(s) fail a rewritten form  target 0  "
              f"{'PASS' if not forms_failed else 'MISS'}")
        print("  per office order: " + ", ".join(f"{k} {v}" for k, v in figures["orders"].items()))
        natural = figures["natural_forms"]
        print("natural forms (form in kind: passed/replays):")
        for name, v in natural.items():
            print(f"  {name:32} {v['passed']:4}/{v['replays']:4}")
        fails = figures["natural_fails"]
        print(f"natural forms: {len(fails)} replay(s) of a right value fail  target 0  "
              f"{'PASS' if not fails else 'MISS'}")
        for line in fails:
            print(f"  {line}")
        print(f"pastes: {paste_failed} task(s) pass with a paste of their sources  target 0  "
              f"{'PASS' if not paste_failed else 'MISS'}")
        print("drops by gate in the build: " + (", ".join(f"{k} {v}" for k, v in drops.items()) or "none"))
        export = figures["export"]
        print(f"OfficeBench export: {export['whole']}/{export['tasks']} exported whole ({100 * export['share']:.1f} %)"
              f"  target >= {100 * EXPORT_TARGET:.0f} %  {'PASS' if export['share'] >= EXPORT_TARGET else 'MISS'}")
        for reason, count in export["left_out"].items():
            print(f"  left out {count}: {reason}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
