"""Benchmark: does every wrong answer an agent writes fail? Mutants of a build's oracle plans.

Builds an offline dataset (default 60 tasks, seed 11) in a temporary folder, or reads one
(``--dataset DIR``). Each task's oracle plan is mutated, one wrong value at a time, the way an
agent that misread or mistyped would get it wrong:

- ``superseded`` / ``near_miss``: a memory piece's earlier or near-miss value (the task's own
  misreading plans, which recompute what follows from the wrong value);
- ``same_kind``: another value of the same kind the task's memory says (another person, file,
  day, time or number of the chat) in place of a memory value the plan writes;
- ``number``: a number the plan writes, plus one and times ten;
- ``hedge``: a number the plan writes with the wrong one offered beside it ("75 or 76");
- ``day``: a date the plan writes, the day after; ``time``: a clock time it writes an hour later,
  and every clock it writes an hour earlier (a meeting "from 13:00 to 14:00" for one at 14:00);
- ``person``: a mail sent to another colleague of the office (another mailbox);
- ``file``: a file the plan writes, written under another name of the office with its ending.

Each mutant is replayed on a copy of the testbed and scored with the task's criteria. It is
killed when a criterion fails. A mutant that passes is a survivor, unless the state it leaves is
the oracle's own (the wrong value never reaches the output: it only chose what was read, or it
sat in a call that writes nothing new): such equivalent mutants are listed apart with that reason.
Survivors are counted by kind and by the check functions of the output they changed (``unchecked``:
no criterion reads that output at all). The mutation score is killed / (mutants - equivalent);
the target is no surviving mutant whose wrong value reaches the output.

Run: ``python bench/mutants.py [--n 60] [--seed 11] [--dataset DIR] [--show 20] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterator

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks, task_day_first, task_now  # noqa: E402
from backends.task_record import plan_calls  # noqa: E402
from office_env.evaluation.keywords import date_spans  # noqa: E402
from office_env.replays import replay_plan  # noqa: E402
from office_env.snapshot import Snapshot  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

WRITES = {"email_send_email", "word_write_to_file", "excel_set_cell", "calendar_create_event", "system_write_answer",
          "word_convert_to_pdf", "excel_create_new_file", "word_create_new_file", "excel_convert_to_pdf",
          "pdf_convert_to_word"}
TEXT_KEYS = ("content", "subject", "text", "summary", "value", "start", "end")  # what a write says
_DAY_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_CLOCK_RE = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?::00)?(?![\d:])")
_NUMBER_RE = re.compile(r"(?<![\w.,:/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w:/-]|[.,]\d)")
_FILE_RE = re.compile(r"^(?:data/)?[\w.-]+\.(docx|xlsx|pdf|txt)$")


@dataclass
class Mutant:
    kind: str
    what: str  # "m2 'Sofia Okafor'", "number 1374.45 -> 1375.45"
    plan: list[dict[str, Any]]


def _calls(plan: list[Any]) -> list[dict[str, Any]]:
    return [{"tool": c["tool"], "args": dict(c.get("args", {}))} for c in plan]


def _replace_text(plan: list[dict[str, Any]], old: str, new: str, keys: tuple[str, ...] = TEXT_KEYS) -> list[dict]:
    """``plan`` with ``old`` replaced by ``new`` in what its writes say (whole words only)."""
    pattern = re.compile(rf"(?<![\w]){re.escape(old)}(?![\w])")
    out = []
    for call in plan:
        args = dict(call["args"])
        if call["tool"] in WRITES:
            for key in keys:
                if isinstance(args.get(key), str):
                    args[key] = pattern.sub(new, args[key])
                elif key == "value" and isinstance(args.get(key), (int, float)) and str(args[key]) == old:
                    args[key] = _as_number(new)
        out.append({"tool": call["tool"], "args": args})
    return out


def _as_number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text.replace(",", ""))
        except ValueError:
            return text


def _written(plan: list[dict[str, Any]]) -> str:
    return "\n".join(str(c["args"].get(k)) for c in plan if c["tool"] in WRITES for k in TEXT_KEYS
                     if c["args"].get(k) is not None)


def _kind(value: str) -> str:
    if _DAY_RE.fullmatch(value):
        return "day"
    if _CLOCK_RE.fullmatch(value):
        return "time"
    if _NUMBER_RE.fullmatch(value):
        return "number"
    if _FILE_RE.match(value):
        return "file"
    if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z'-]+)+", value):
        return "person"
    return "words"


def _edit_number(text: str, factor: int, plus: int) -> str:
    whole, frac = (text.split(".") + [""])[:2]
    n = float(text.replace(",", ""))
    new = n * factor + plus
    digits = len(frac)
    out = f"{new:,.{digits}f}" if "," in whole else f"{new:.{digits}f}"
    return out


def _number_edits(written: str) -> Iterator[tuple[str, str]]:
    seen = set()
    masked = _CLOCK_RE.sub(" ", _DAY_RE.sub(" ", written))
    for start, end, _ in reversed(date_spans(masked.lower())):  # "3 April 2025": its year is the day's
        masked = masked[:start] + " " * (end - start) + masked[end:]
    for m in _NUMBER_RE.finditer(masked):
        text = m.group(0)
        if text in seen or len(text.replace(",", "").split(".")[0]) < 2:  # a lone digit is in any text
            continue
        seen.add(text)
        yield text, _edit_number(text, 1, 1)
        yield text, _edit_number(text, 10, 0)


def mutants(record: Any, testbed: Path) -> Iterator[Mutant]:
    """Every mutant of ``record``'s oracle plan (see the module docstring)."""
    oracle = _calls(plan_calls(record.oracle))
    for m in record.misreadings:
        kind = "superseded" if m.dynamic == "superseded" else "near_miss"
        yield Mutant(kind, f"{m.memory} {m.value!r}", _calls(plan_calls(m.plan)))
    written = _written(oracle)
    values = [(p.id, str(p.value)) for p in record.memory]
    others = [str(v) for p in record.memory
              for v in (p.value, *(p.superseded or ()), *(d.value for d in p.distractors or ()))]
    for mid, value in values:  # another value of the same kind the chat says, where the plan writes this one
        if value not in written:
            continue
        for other in sorted({o for o in others if o != value and _kind(o) == _kind(value) != "words"}):
            yield Mutant("same_kind", f"{mid} {value!r} -> {other!r}", _replace_text(oracle, value, other))
    hedged = set()
    for old, new in _number_edits(written):
        yield Mutant("number", f"{old} -> {new}", _replace_text(oracle, old, new))
        if old not in hedged:  # the right figure with a wrong one offered beside it
            hedged.add(old)
            yield Mutant("hedge", f"{old} -> {old} or {new}", _replace_text(oracle, old, f"{old} or {new}"))
    for day in sorted(set(_DAY_RE.findall(written))):
        old = "-".join(day)
        new = (date(*map(int, day)) + timedelta(days=1)).isoformat()
        yield Mutant("day", f"{old} -> {new}", _replace_text(oracle, old, new))
    for hour, minute in sorted(set(_CLOCK_RE.findall(written))):
        old = f"{hour}:{minute}"
        later = (datetime(2000, 1, 1, int(hour), int(minute)) + timedelta(hours=1))
        new = later.strftime("%H:%M") if len(hour) == 2 else f"{later.hour}:{later:%M}"
        yield Mutant("time", f"{old} -> {new}", _replace_text(oracle, old, new))
    clocks = sorted(set(_CLOCK_RE.findall(written)))
    if clocks:  # every time an hour earlier: a meeting "from 13:00 to 14:00" for one at 14:00-15:00
        plan = oracle
        for hour, minute in clocks:
            plan = _replace_text(plan, f"{hour}:{minute}", f"\x00{hour}:{minute}")  # marked: shifted once
        for hour, minute in clocks:
            earlier = datetime(2000, 1, 1, int(hour), int(minute)) - timedelta(hours=1)
            new = earlier.strftime("%H:%M") if len(hour) == 2 else f"{earlier.hour}:{earlier:%M}"
            plan = _replace_text(plan, f"\x00{hour}:{minute}", new)
        yield Mutant("time", "every clock an hour earlier", plan)
    boxes = (sorted(p.name for p in (testbed / "emails").iterdir() if p.is_dir())
             if (testbed / "emails").is_dir() else [])
    for i, call in enumerate(oracle):
        if call["tool"] == "email_send_email":
            other = next((b for b in boxes if b not in (call["args"].get("recipient"), call["args"].get("sender"))),
                         None)
            if other:
                plan = [dict(c, args=dict(c["args"])) for c in oracle]
                plan[i]["args"]["recipient"] = other
                yield Mutant("person", f"mail to {call['args'].get('recipient')} -> {other}", plan)
    files = sorted(str(p.relative_to(testbed)) for p in (testbed / "data").rglob("*") if p.is_file()) \
        if (testbed / "data").is_dir() else []
    made = [c["args"]["file_path"] for c in oracle if c["tool"] in ("word_write_to_file", "excel_create_new_file")]
    for path in dict.fromkeys(made):
        ext = path.rsplit(".", 1)[-1]
        other = next((f for f in files if f.endswith("." + ext) and f != path), None)
        if other:  # the output (and its PDF copy) written under the name of another of the office's files
            pdf, other_pdf = path.rsplit(".", 1)[0] + ".pdf", other.rsplit(".", 1)[0] + ".pdf"

            def rename(v: Any) -> Any:
                return v.replace(path, other).replace(pdf, other_pdf) if isinstance(v, str) else v

            yield Mutant("file", f"{path} -> {other}",
                         [{"tool": c["tool"], "args": {k: rename(v) for k, v in c["args"].items()}} for c in oracle])


def _targets(call: dict[str, Any]) -> set[tuple[str, str]]:
    args = call["args"]
    if call["tool"] == "email_send_email":
        return {("email", str(args.get("recipient", "")).split("@")[0].lower())}
    if call["tool"] == "calendar_create_event":
        return {("calendar", str(args.get("user", "")).lower())}
    if call["tool"] == "system_write_answer":
        return {("answer", "")}
    path = str(args.get("output_path") or args.get("file_path") or "")
    out = {("file", path)}
    if call["tool"] in ("word_write_to_file", "word_convert_to_pdf", "excel_convert_to_pdf"):
        out.add(("file", path.rsplit(".", 1)[0] + ".pdf"))
    return out


def _criterion_targets(criterion: dict[str, Any]) -> set[tuple[str, str]]:
    args, function = criterion.get("args", {}), criterion.get("function", "")
    if "email" in function or args.get("doc_type") == "email":
        who = args.get("recipient") or args.get("username") or ""
        return {("email", str(who).split("@")[0].lower())}
    if "calendar" in function:
        return {("calendar", str(args.get("username", "")).lower())}
    if function == "evaluate_answer":
        return {("answer", "")}
    return {("file", str(args.get(k))) for k in ("file", "result_file", "output_file") if args.get(k)}


def _changed_checks(oracle: list[dict], plan: list[dict], criteria: list[dict[str, Any]]) -> list[str]:
    """The check functions that read an output the mutant writes differently ("unchecked": none)."""
    changed = [c for c in plan if c["tool"] in WRITES and c not in oracle]
    targets = set().union(*(_targets(c) for c in changed)) if changed else set()
    found = sorted({c["function"] for c in criteria if _criterion_targets(c) & targets})
    return found or ["unchecked"]


def measure(dataset: Path, work: Path, on_task: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    kinds: Counter = Counter()
    killed: Counter = Counter()
    equivalent: Counter = Counter()
    survivors_by_kind: Counter = Counter()
    survivors_by_check: Counter = Counter()
    shown: list[str] = []
    reasons: Counter = Counter()
    tasks = 0
    for task in iter_tasks(dataset):
        record = task.task
        if record is None or not record.oracle:
            continue
        tasks += 1
        on_task(task.id)
        now, day_first, criteria = task_now(record), task_day_first(record), record.criteria()
        scratch = work / task.id
        scratch.mkdir(parents=True)
        oracle = _calls(plan_calls(record.oracle))
        base = Snapshot.of(replay_plan(task.testbed, oracle, now, scratch, "oracle").workspace.root)
        for k, mutant in enumerate(mutants(record, task.testbed)):
            if mutant.plan == oracle:
                continue
            kinds[mutant.kind] += 1
            replay = replay_plan(task.testbed, mutant.plan, now, scratch, f"m{k}")
            report = replay.score(criteria, task.reference, day_first=day_first)
            if not report.passed:
                killed[mutant.kind] += 1
            elif Snapshot.of(replay.workspace.root) == base:
                equivalent[mutant.kind] += 1
                reasons["the same state as the oracle's: the value only picks what is read"] += 1
            else:
                survivors_by_kind[mutant.kind] += 1
                for check in _changed_checks(oracle, mutant.plan, criteria):
                    survivors_by_check[check] += 1
                shown.append(f"{task.id} {record.family}: {mutant.kind} {mutant.what}")
            shutil.rmtree(replay.workspace.root, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    total, dead, same = sum(kinds.values()), sum(killed.values()), sum(equivalent.values())
    return {"tasks": tasks, "mutants": total, "killed": dead, "equivalent": same,
            "survivors": total - dead - same, "score": dead / (total - same) if total - same else None,
            "by_kind": {k: {"mutants": kinds[k], "killed": killed[k], "equivalent": equivalent[k],
                            "survivors": survivors_by_kind[k]} for k in sorted(kinds)},
            "survivors_by_check": dict(survivors_by_check.most_common()), "equivalent_reasons": dict(reasons),
            "survivor_list": shown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--dataset", type=Path, default=None)
    parser.add_argument("--show", type=int, default=20, help="Survivors to list")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-mutants-"))
    try:
        dataset = args.dataset
        if dataset is None:
            dataset = work / "ds"
            build(dataset, args.n, BuildConfig(seed=args.seed))
        figures = measure(dataset, work / "scratch")
        if args.json:
            print(json.dumps(figures, indent=2))
            return
        print(f"{'kind':12} mutants  killed  equivalent  SURVIVORS")
        for kind, row in figures["by_kind"].items():
            print(f"{kind:12} {row['mutants']:7} {row['killed']:7} {row['equivalent']:11} {row['survivors']:10}")
        score = figures["score"]
        print(f"mutants {figures['mutants']} over {figures['tasks']} tasks: killed {figures['killed']}, equivalent "
              f"{figures['equivalent']}, survivors {figures['survivors']}; mutation score "
              f"{'n/a' if score is None else f'{100 * score:.1f} %'}  target: 0 survivors  "
              f"{'PASS' if not figures['survivors'] else 'MISS'}")
        print("survivors by check of the output they changed: "
              + (", ".join(f"{k} {v}" for k, v in figures["survivors_by_check"].items()) or "none"))
        for reason, count in figures["equivalent_reasons"].items():
            print(f"  equivalent {count}: {reason}")
        for line in figures["survivor_list"][:args.show]:
            print(f"  survivor: {line}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
