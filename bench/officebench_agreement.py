"""Benchmark: how often homer's scoring agrees with OfficeBench's own evaluation code.

For every loadable subtask of an OfficeBench checkout (``--officebench DIR``: the repository, with
``tasks/``, ``utils/evaluate.py`` and ``apps/``), up to four workspace states are scored -- the
untouched testbed; the reference-applied one (each exact-match criterion's expected file copied onto
its result file, ``office_env.evaluation.reference_state``); a synthesized one (that, plus each
contain criterion's keywords written into its file, each cell value into its sheet, each required
file made); and a near miss (the same with every keyword inside a longer number or word) -- by

1. homer's checks (the default semantics),
2. homer's ``--semantics officebench``, and
3. OfficeBench's own functions from ``utils/evaluate.py``, called by name in a child process on a
   copy laid out as OfficeBench lays out outputs (``tasks/<id>/outputs/<i>/bench/testbed``, so that
   its ``../../../../reference/`` paths resolve), an exception counted as a failure as its
   ``evaluation.py`` counts it.

It prints the share of criterion verdicts and of task verdicts where (1) and (2) agree with (3),
and the disagreements per function. Target: (2) agrees on every verdict it can be compared on.

OfficeBench's code needs ``fire``, ``pytz`` and ``PyPDF2``; they are installed with pip into the
scratch folder (``--target``) on first use, and only the four reader modules its evaluator imports
are loaded (its ``apps`` package would import every app's dependencies). Its e-mail listing reads
``/testbed/emails`` (its container's layout): the child points that path at the state's testbed, as
the container would, so mailbox criteria are compared too (the synthesized states deliver a mail
holding their keywords). OfficeBench is given the criteria as the seed writes them (a ``file``
beside ``args`` included); homer's emulation gets the loaded ones and the list of such criteria.

With ``--round-trip DATASET EXPORT`` (a homer dataset and its ``homer export --officebench``
folder) it measures the export instead: for every folder ``EXPORT/export.json`` maps to a homer
task, the task's states -- untouched, solved (the oracle plan replayed with homer's tools, or the
expected files applied), the intent-only baseline and each misreading -- are laid out below a copy
of the exported folder and scored by OfficeBench's own evaluator with the exported criteria. It
prints, per criterion function, how often OfficeBench's verdict agrees with homer's emulation of it
(``--semantics officebench``), and per state kind how often the exported task's verdict there
agrees with the original task's verdict under homer's checks. Target: both 100 %.

Run: ``python bench/officebench_agreement.py --officebench DIR [--limit N] [--work DIR]
[--round-trip DATASET EXPORT]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import task_now  # noqa: E402
from office_env import Workspace, evaluate_criteria, load_officebench  # noqa: E402
from office_env.errors import OfficeError  # noqa: E402
from office_env.evaluation.officebench_semantics import evaluate_officebench  # noqa: E402
from office_env.evaluation.reference_state import apply_reference  # noqa: E402
from office_env.untrusted import load_json  # noqa: E402

DEPENDENCIES = ("fire", "pytz", "PyPDF2")

# The child: loads utils/evaluate.py with stub packages for apps/ (only the readers it imports),
# then calls each function by name -- never through eval -- and writes the verdicts as JSON.
CHILD = r'''
import importlib.util, io, json, os, sys, types, contextlib
checkout, jobs_file, out_file = sys.argv[1:4]
def package(name, path):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
    return module
apps = package("apps", os.path.join(checkout, "apps"))
for sub, readers in (("excel_app", ["excel_read_file"]), ("word_app", ["word_read_file"]),
                     ("pdf_app", ["pdf_read_file"]), ("email_app", ["email_list_emails"])):
    pkg = package("apps." + sub, os.path.join(checkout, "apps", sub))
    setattr(apps, sub, pkg)
    for reader in readers:
        spec = importlib.util.spec_from_file_location(f"apps.{sub}.{reader}", os.path.join(checkout, "apps", sub, reader + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        setattr(pkg, reader, module)
# its e-mail listing reads /testbed/emails (its container's layout): seen from inside that image,
# /testbed is the job's testbed, so the listing's glob is pointed there
listing = sys.modules["apps.email_app.email_list_emails"]
real_glob, current = listing.glob, {"testbed": "/testbed"}
listing.glob = lambda pattern: real_glob(pattern.replace("/testbed/", current["testbed"].rstrip("/") + "/", 1))
spec = importlib.util.spec_from_file_location("ob_evaluate", os.path.join(checkout, "utils", "evaluate.py"))
evaluate = importlib.util.module_from_spec(spec)
with contextlib.redirect_stdout(io.StringIO()):
    spec.loader.exec_module(evaluate)
results = []
for job in json.load(open(jobs_file)):
    current["testbed"] = job["testbed"]
    verdicts = []
    for item in job["criteria"]:
        function = getattr(evaluate, item["function"], None)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                verdicts.append(bool(function(job["testbed"], item["args"])) if function else False)
        except KeyboardInterrupt:
            raise
        except Exception:
            verdicts.append(False)
    results.append(verdicts)
json.dump(results, open(out_file, "w"))
'''  # noqa: E501 - the child's source, kept as it is


def _install(deps: Path) -> None:
    if (deps / ".done").exists():
        return
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target",
                    str(deps), *DEPENDENCIES], check=True)
    (deps / ".done").write_text("ok", encoding="utf-8")


def _near(keyword: str) -> str:
    """A wrong answer that still holds ``keyword`` as a substring: a number inside a longer number,
    a word inside a longer word."""
    return f"1{keyword}0" if keyword.replace(".", "", 1).isdigit() else f"{keyword}s"


def _synthesize(ws: Any, criteria: list[dict[str, Any]], near: bool) -> None:
    """Write what the criteria ask for: each contain criterion's keywords into its file (a number
    kept inside a longer one when ``near``), each cell value into its sheet, each required file."""
    from office_env import mail_store
    from office_env.formats import docx_io, pdf_io, xlsx_io

    texts: dict[tuple[str, str], list[str]] = {}
    for item in criteria:
        function, args = item["function"], item["args"]
        if function == "evaluate_contain" and args.get("doc_type") in ("txt", "ics", "doc", "docx", "xlsx", "pdf"):
            words = [_near(str(k)) if near else str(k) for k in args["keywords"]]
            texts.setdefault((args["file"], args["doc_type"]), []).extend(words)
        elif function == "evaluate_contain" and args.get("doc_type") == "email":
            words = [_near(str(k)) if near else str(k) for k in args["keywords"]]
            try:
                mail_store.deliver(ws, "bench@example.com", args["username"], "Bench note", " ".join(words))
            except OfficeError:
                pass
        elif function == "evaluate_file_exist":
            texts.setdefault((args["file"], "txt"), [])
    for (file, doc_type), words in texts.items():
        line = " ".join(words) or "done"
        if doc_type in ("doc", "docx"):
            data = docx_io.build(line)
        elif doc_type == "xlsx":
            data = xlsx_io.build([[w] for w in words] or [["done"]])
        elif doc_type == "pdf":
            data = pdf_io.build(line)
        else:
            data = (line + "\n").encode("utf-8")
        try:
            ws.write_bytes(file, data, field="file")
        except OfficeError:
            continue
    for item in criteria:
        if item["function"] != "evaluate_excel_cell_value":
            continue
        args = item["args"]
        try:
            path = ws.resolve(args["file"], field="file")
            book = xlsx_io.load(path, args["file"]) if path.is_file() else xlsx_io.new_workbook()
            for match in args["matches"]:
                value = str(match["value"])
                xlsx_io.set_value(book.active, int(match["row"]), int(match["col"]), _near(value) if near else value)
            ws.write_bytes(args["file"], xlsx_io.to_bytes(book), field="file")
        except (OfficeError, ValueError):
            continue


def _states(task: Any, work: Path) -> list[tuple[str, Path]]:
    """(name, testbed) for the untouched, reference-applied, synthesized and near-miss states, laid
    out as OfficeBench lays out outputs below a copy of the task folder."""
    from office_env import Workspace

    folder = work / "tasks" / task.id.replace("/", "_")
    if task.reference is not None:
        shutil.copytree(task.reference, folder / "reference")
    out = []
    for name in ("untouched", "reference", "synthesized", "near-miss"):
        testbed = folder / "outputs" / name / "bench" / "testbed"
        ws = task.copy_testbed(testbed)
        ws = Workspace(testbed, now=task.now)
        try:
            applied = apply_reference(ws, task.evaluation, task.reference, task.testbed) if name != "untouched" else [0]
            if name in ("synthesized", "near-miss"):
                _synthesize(ws, task.evaluation, near=name == "near-miss")
        except OfficeError:
            applied = []
        if not applied and name == "reference":
            shutil.rmtree(testbed.parent.parent)
            continue
        out.append((name, testbed))
    return out


def _round_trip_states(task: Any, folder: Path, work: Path) -> list[tuple[str, Path]]:
    """(state kind, testbed) of each state of homer task ``task``, laid out as OfficeBench lays out
    outputs below a copy of its exported ``folder`` (``outputs/<i>/bench/testbed``)."""
    from office_env.replays import replay_plan

    record, now = task.record, task_now(task.record)
    copy = work / folder.name
    if (folder / "reference").is_dir():
        shutil.copytree(folder / "reference", copy / "reference")
    plans = [("solved", record.get("oracle")), ("baseline", record.get("baseline"))]
    plans = [("untouched", []), *((k, p) for k, p in plans if p)]
    plans += [("misreading", m["plan"]) for m in record.get("misreadings") or []]
    out = []
    for index, (kind, plan) in enumerate(plans):
        testbed = copy / "outputs" / str(index) / "bench" / "testbed"
        replay_plan(folder / "testbed", plan, now, testbed.parent, testbed.name)
        out.append((kind, testbed))
    if not record.get("oracle"):
        testbed = copy / "outputs" / "reference" / "bench" / "testbed"
        ws = Workspace(folder / "testbed", now=now).copy_to(testbed)
        if apply_reference(ws, record["evaluation"], task.reference, task.testbed):
            out.append(("solved", testbed))
    return out


def _run_officebench(checkout: Path, jobs: list[dict[str, Any]], work: Path, deps: Path) -> list[list[bool]]:
    """OfficeBench's verdicts on each job (a testbed and the criteria as its seed writes them)."""
    jobs_file, out_file = work / "jobs.json", work / "verdicts.json"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    env_path = f"{deps}{':' + sys.path[0] if sys.path and sys.path[0] else ''}"
    subprocess.run([sys.executable, "-c", CHILD, str(checkout), str(jobs_file), str(out_file)], check=True,
                   env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "HOME": str(work)}, cwd=work)
    return json.loads(out_file.read_text(encoding="utf-8"))


def round_trip(checkout: Path, dataset: Path, export: Path, work: Path, deps: Path) -> None:
    """Print how OfficeBench's own evaluator judges an export's states (see the module docstring)."""
    from backends.dataset_reader import load_task, task_day_first

    folders = load_json(export / "export.json")["folders"]
    shutil.rmtree(work / "round-trip", ignore_errors=True)  # a kept --work folder's last run
    jobs, ours = [], []
    for name, task_id in sorted(folders.items()):
        task = load_task(dataset, task_id)
        folder = export / "tasks" / name
        exported = load_json(folder / "subtasks" / "0.json")["evaluation"]
        for kind, testbed in _round_trip_states(task, folder, work / "round-trip"):
            ws = Workspace(testbed, now=task_now(task.record))
            original = evaluate_criteria(ws, task.record["evaluation"], task.reference, initial_dir=task.testbed,
                                         day_first=task_day_first(task.record)).passed
            emulated = [r.passed for r in evaluate_officebench(ws, exported, folder / "reference",
                                                               initial_dir=task.testbed).results]
            ours.append((task_id, kind, exported, original, emulated))
            jobs.append({"testbed": str(testbed), "criteria": exported})
    theirs = _run_officebench(checkout, jobs, work, deps)
    per_function: dict[str, list[int]] = {}
    per_state: dict[str, list[int]] = {}
    misses: list[str] = []
    for (task_id, kind, exported, original, emulated), real in zip(ours, theirs):
        for item, mine, truth in zip(exported, emulated, real):
            doc_type = item["args"].get("doc_type")  # a calendar's not_contain is a "no such event"
            tally = per_function.setdefault(item["function"] + (f" ({doc_type})" if doc_type else ""), [0, 0, 0])
            tally[0] += mine == truth
            tally[1] += 1
            tally[2] += not truth  # a check that never fails says nothing: how often it does
            if mine != truth and len(misses) < 10:
                misses.append(f"{task_id} {kind}: {item['function']} emulated {mine}, OfficeBench {truth}")
        tally = per_state.setdefault(kind, [0, 0])
        tally[0] += all(real) == original
        tally[1] += 1
        if all(real) != original and len(misses) < 10:
            misses.append(f"{task_id} {kind}: homer's task {'passes' if original else 'fails'}, the export "
                          f"{'passes' if all(real) else 'fails'} under OfficeBench's evaluator")
    verdicts = sum(t[1] for t in per_function.values())
    print(f"round trip: {len(folders)} exported task(s), {len(ours)} states, {verdicts} criterion verdicts "
          "by OfficeBench's own evaluator")
    print("  per criterion function, OfficeBench's verdict = homer's emulation of it:")
    for function, (ok, total, failing) in sorted(per_function.items()):
        print(f"    {function:36} {100 * ok / total:5.1f} % ({ok}/{total}; {failing} failing there)")
    print("  per state kind, the exported task's verdict there = the original task's (homer's checks):")
    for kind, (ok, total) in sorted(per_state.items()):
        print(f"    {kind:36} {100 * ok / total:5.1f} % ({ok}/{total})")
    for line in misses:
        print(f"  disagreement: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--officebench", type=Path, required=True,
                        help="An OfficeBench checkout (tasks/, utils/, apps/)")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N subtasks (0: all)")
    parser.add_argument("--work", type=Path, default=None, help="Scratch folder (default: a temporary one)")
    parser.add_argument("--round-trip", nargs=2, type=Path, metavar=("DATASET", "EXPORT"), default=None,
                        help="Score a homer dataset's OfficeBench export (homer export --officebench) instead")
    args = parser.parse_args()
    checkout = args.officebench.resolve()
    if not (checkout / "utils" / "evaluate.py").is_file() or not (checkout / "apps").is_dir():
        sys.exit(f"error: --officebench {checkout}: no utils/evaluate.py and apps/ (a checkout of OfficeBench)")
    if args.round_trip and not (args.round_trip[1] / "export.json").is_file():
        sys.exit(f"error: --round-trip {args.round_trip[1]}: no export.json (an export of homer export --officebench)")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-ob-agreement-"))
    deps = work / "deps"
    _install(deps)
    if args.round_trip:
        round_trip(checkout, args.round_trip[0].resolve(), args.round_trip[1].resolve(), work, deps)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
        return
    report = load_officebench(checkout / "tasks")
    tasks = report.tasks[: args.limit] if args.limit else report.tasks
    jobs, ours, emails = [], [], 0
    for task in tasks:
        raw = load_json(task.subtask_file)["evaluation"]  # as the seed writes it (a misplaced key beside args)
        for name, testbed in _states(task, work / "states"):
            criteria = task.evaluation
            emails += sum(c["args"].get("doc_type") == "email" for c in criteria)
            ws = Workspace(testbed, now=task.now)
            verdicts = []
            for scorer, extra in ((evaluate_criteria, {}), (evaluate_officebench, {"misplaced": task.misplaced})):
                try:
                    verdicts.append([r.passed for r in scorer(ws, criteria, task.reference, initial_dir=task.testbed,
                                                              **extra).results])
                except OfficeError:
                    verdicts.append([False] * len(criteria))
            ours.append((task.id, name, criteria, verdicts))
            jobs.append({"testbed": str(testbed), "criteria": raw})
    theirs = _run_officebench(checkout, jobs, work, deps)
    agree = {"homer": [0, 0, 0, 0], "officebench": [0, 0, 0, 0]}  # criteria agree/total, tasks agree/total
    misses: dict[str, Counter] = {"homer": Counter(), "officebench": Counter()}
    kinds: Counter = Counter()  # verdicts per (state, function): what was measured
    states = Counter(state for _, state, _, _ in ours)
    examples: list[str] = []  # where the emulation disagrees: what to fix next
    for (task_id, state, criteria, (homer, emulated)), reference in zip(ours, theirs):
        for label, verdicts in (("homer", homer), ("officebench", emulated)):
            tally = agree[label]
            for item, mine, truth in zip(criteria, verdicts, reference):
                if label == "homer":
                    kinds[(state, item["function"])] += 1
                tally[0] += mine == truth
                tally[1] += 1
                if mine != truth:
                    misses[label][f"{item['function']} ({'homer passes' if mine else 'OfficeBench passes'})"] += 1
                    if label == "officebench" and len(examples) < 10:
                        examples.append(f"{task_id} {state}: {item['function']} {json.dumps(item['args'])[:160]}")
            tally[2] += all(verdicts) == all(reference)
            tally[3] += 1
    print(f"{len(tasks)} subtasks, {len(ours)} states, {agree['homer'][1]} criterion verdicts compared "
          f"({emails} on mailboxes, read as its container sees /testbed)")
    for label, title in (("homer", "homer's checks"), ("officebench", "--semantics officebench")):
        c_ok, c_all, t_ok, t_all = agree[label]
        print(f"  {title:26} criteria {100 * c_ok / max(1, c_all):5.1f} % ({c_ok}/{c_all}), "
              f"tasks {100 * t_ok / max(1, t_all):5.1f} % ({t_ok}/{t_all})")
        for what, count in misses[label].most_common(8):
            print(f"      {count:4}  {what}")
    print("  states: " + ", ".join(f"{name} {count}" for name, count in sorted(states.items())))
    functions = sorted({f for _, f in kinds})
    print("  verdicts per function: " + ", ".join(f"{f} {sum(kinds[(s, f)] for s in states)}" for f in functions))
    for line in examples:
        print(f"  disagreement: {line}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
