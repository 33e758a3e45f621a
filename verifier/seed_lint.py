"""Lint for OfficeBench seed subtasks: the defects that make a seed unsolvable, already solved or
too weak to score, found before a regeneration turns it into a task.

OfficeBench's own subtasks hold such defects (a criterion that names ``revenuse.docx`` while the
instruction says ``revenues.docx``; an expected file missing from ``reference/``; ``doc_type``
``xlsx`` on a ``.docx``; criteria that already pass before anything is done). Each finding names
the subtask file and the field, says how bad it is (``error``: the task cannot be scored as meant;
``warning``: it can, but weakly) and, when the fix is unambiguous, carries the repair: a file name
that is one small typo away from exactly one file of the testbed, the reference folder or the
instruction, or a ``doc_type`` that contradicts the file's extension.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from office_env.apps import file_kind_pattern, read_as, readings, registered_apps, registry_cache
from office_env.errors import OfficeError
from office_env.evaluation import evaluate_criteria
from office_env.evaluation.checks import CHECKS
from office_env.evaluation.content import read_document
from office_env.evaluation.contradictions import contradictions
from office_env.evaluation.paths import external_target
from office_env.officebench import SeedTask, load_officebench
from office_env.untrusted import UntrustedInputError, load_json, scan_tree

ERROR, WARNING = "error", "warning"
CODES: dict[str, tuple[str, str]] = {  # code -> (severity, what it means)
    "load": (ERROR, "the subtask cannot be loaded (broken JSON, a missing field, an unusable folder)"),
    "passes_untouched": (ERROR, "the criteria already pass on the untouched testbed"),
    "missing_reference": (ERROR, "an expected file is missing"),
    "typo_file": (ERROR, "a criterion names a file that is nowhere, a small typo away from one that is"),
    "unknown_file": (WARNING, "a criterion names a data file that is nowhere: not in the testbed, not in "
                              "reference/, not named by the instruction (it may be named after data)"),
    "doc_type_mismatch": (ERROR, "doc_type contradicts the file's extension"),
    "contradiction": (ERROR, "two criteria no state can pass together (a file required and refused)"),
    "misplaced_key": (WARNING, "an argument sits beside 'function' instead of inside 'args'"),
    "exists_only": (WARNING, "the criteria only check that files exist"),
    "weak_keyword": (WARNING, "a numeric keyword is part of another number, so a substring match passes "
                              "on the wrong figure"),
    "instruction_mismatch": (WARNING, "the instruction names a file that no criterion checks"),
    "expected_in_testbed": (WARNING, "the expected file lies in the agent's own testbed, where it can be "
                                     "read or copied"),
}
MAX_TYPO = 2  # edit distance up to which a name is a typo of another
MAX_NAME = 255  # a longer name is compared with nothing (a stranger's name must not make the lint slow)
ANSWER = "data/answer.txt"
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Finding:
    task: str
    file: str
    field: str
    severity: str
    code: str
    message: str
    repair: dict[str, Any] | None = None  # {"field", "from", "to"} when the fix is unambiguous

    def __str__(self) -> str:
        fix = f" (repair: {self.repair['from']!r} -> {self.repair['to']!r})" if self.repair else ""
        return f"{self.severity}: {self.file}: {self.field}: {self.message} [{self.code}]{fix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LintReport:
    findings: list[Finding] = field(default_factory=list)
    subtasks: int = 0
    loaded: int = 0

    def of(self, task: str) -> list[Finding]:
        return [f for f in self.findings if f.task == task]

    @property
    def errors(self) -> int:
        return sum(f.severity == ERROR for f in self.findings)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(f.code for f in self.findings).items()))

    def to_dict(self) -> dict[str, Any]:
        return {"subtasks": self.subtasks, "loaded": self.loaded, "errors": self.errors,
                "warnings": len(self.findings) - self.errors, "counts": self.counts(),
                "findings": [f.to_dict() for f in self.findings]}


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions and substitutions each cost one)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _finding(task: SeedTask | None, file: str, where: str, code: str, message: str,
             repair: dict[str, Any] | None = None) -> Finding:
    return Finding(task.id if task else "", file, where, CODES[code][0], code, message, repair)


def lint_seeds(path: str | Path) -> LintReport:
    """Load every subtask under ``path`` (a checkout, its tasks/ folder or one task folder) and
    lint each one; never raises on what the folder holds."""
    loaded = load_officebench(path)
    report = LintReport(subtasks=loaded.subtask_files, loaded=len(loaded.tasks))
    for problem in loaded.problems:
        report.findings.append(Finding(_task_of(problem.file), problem.file, problem.field, ERROR, "load",
                                       problem.message))
    for task in loaded.tasks:
        report.findings.extend(lint_task(task))
    return report


@registry_cache(maxsize=1)
def _file_re() -> re.Pattern[str]:
    """A file's name in an instruction, of one of ``file_kinds``."""
    return re.compile(rf"[A-Za-z0-9_\-]+\.(?:{file_kind_pattern()})\b")


@registry_cache(maxsize=1)
def _made_by_tools() -> tuple[str, ...]:
    """The suffixes of a mail's or an event's file (the apps that keep items per owner): one the
    instruction names is checked by user, not by file."""
    return tuple(f".{kind}" for a in registered_apps() if a.layout != "documents" for kind in a.extensions)


def _task_of(file: str) -> str:
    parts = PurePosixPath(file).parts
    if len(parts) >= 3 and parts[-2] == "subtasks" and parts[-1].endswith(".json"):
        return f"{parts[-3]}/{parts[-1][:-5]}"
    return ""


def lint_task(task: SeedTask) -> list[Finding]:
    """Every finding for one loaded subtask."""
    label = str(task.subtask_file)
    findings = _misplaced_keys(task, label)
    testbed = _files_below(task.testbed)
    reference = _files_below(task.reference) if task.reference is not None else set()
    named = {m.group(0) for m in _file_re().finditer(task.instruction)}
    checked: set[str] = set()
    # the task's own files: what a check requires to exist is a name the task means, not a typo
    named |= {PurePosixPath(str(i["args"]["file"])).name for i in task.evaluation
              if i["function"] == "evaluate_file_exist" and isinstance(i["args"].get("file"), str)}
    for index, item in enumerate(task.evaluation):
        function, args = item["function"], item["args"]
        if function == "evaluate_file_not_exist":  # a file that is nowhere is the point of the check
            continue
        for key in CHECKS[function].path_args:
            if isinstance(args.get(key), str):
                findings += _path_findings(task, label, index, key, args[key], testbed, reference, named, checked)
        findings += _doc_type_findings(task, label, index, args)
        findings += _weak_keywords(task, label, index, function, args, testbed)
    for problem in contradictions(task.evaluation):
        findings.append(_finding(task, label, "evaluation", "contradiction", problem))
    if task.evaluation and all(i["function"] in ("evaluate_file_exist", "evaluate_file_not_exist")
                               for i in task.evaluation):
        findings.append(_finding(task, label, "evaluation", "exists_only",
                                 "every criterion only checks that a file exists (or does not)"))
    unchecked = sorted(n for n in named if n not in checked and not n.lower().endswith(_made_by_tools())
                       and not any(p.endswith("/" + n) for p in testbed))
    for name in unchecked:
        findings.append(_finding(task, label, "task", "instruction_mismatch",
                                 f"the instruction names {name!r}, which no criterion checks"))
    if not any(f.severity == ERROR for f in findings):
        findings += _untouched(task, label)
    return findings


def _files_below(root: Path | None) -> set[str]:
    if root is None or not root.is_dir():
        return set()
    return {"/".join(entry.parts) for entry in scan_tree(root).files}


def _misplaced_keys(task: SeedTask, label: str) -> list[Finding]:
    try:
        raw = load_json(task.subtask_file, label)
    except UntrustedInputError:
        return []
    out = []
    for index, item in enumerate(raw.get("evaluation") or []):
        if isinstance(item, dict):
            for key in sorted(set(item) - {"function", "args"}):
                out.append(_finding(task, label, f"evaluation[{index}].{key}", "misplaced_key",
                                    f"{key!r} belongs inside 'args' (read there on import)"))
    return out


def _closest(name: str, candidates: set[str]) -> tuple[list[str], int]:
    """The candidates nearest to ``name`` by edit distance, and that distance."""
    if len(name) > MAX_NAME:
        return [], 0
    # edit distance is at least the length difference: only names that could be close are compared
    near = [c for c in candidates if c != name and abs(len(c) - len(name)) <= MAX_TYPO]
    scored = sorted((edit_distance(name, c), c) for c in near)
    if not scored:
        return [], 0
    best = scored[0][0]
    return [c for d, c in scored if d == best], best


def _path_findings(task: SeedTask, label: str, index: int, key: str, value: str, testbed: set[str],
                   reference: set[str], named: set[str], checked: set[str]) -> list[Finding]:
    where = f"evaluation[{index}].args.{key}"
    try:
        target = external_target(value, key)
    except OfficeError as exc:
        return [_finding(task, label, where, "unknown_file", str(exc))]
    if target is not None and target.place == "reference":
        rel = "/".join(target.parts)
        checked.add(target.parts[-1])
        if rel in reference:
            return []
        near, distance = _closest(rel, reference)
        return [_typo(task, label, where, "missing_reference", value, rel, near, distance,
                      f"{rel} is missing from reference/")]
    if target is not None:  # the initial testbed (../cache/<i>/testbed/...)
        rel = "/".join(target.parts)
        return [] if rel in testbed else [_finding(task, label, where, "unknown_file",
                                                   f"{rel} is not in the initial testbed")]
    rel = str(PurePosixPath(value.replace("\\", "/")))
    name = PurePosixPath(rel).name
    checked.add(name)
    out = []
    if key == "expected_file" and rel in testbed:
        out.append(_finding(task, label, where, "expected_in_testbed",
                            f"{rel} is the expected file, and the agent can read or copy it"))
    known = named | {PurePosixPath(p).name for p in testbed | reference}
    stems = {PurePosixPath(n).stem.lower() for n in known}
    if rel in testbed or name in known or rel == ANSWER or PurePosixPath(name).stem.lower() in stems:
        return out  # a known file, or a known one in another format (file1.docx -> file1.pdf)
    if key == "expected_file":
        return out + [_finding(task, label, where, "missing_reference", f"{rel} is not in the testbed")]
    if not rel.startswith("data/"):  # calendars and mailboxes are made by the tools, for any user
        return out
    near, distance = _closest(name, known)
    what = f"{rel} is not in the testbed, not in reference/ and not named by the instruction"
    if near and distance <= MAX_TYPO:
        return out + [_typo(task, label, where, "typo_file", value, name, near, distance, what)]
    return out + [_typo(task, label, where, "unknown_file", value, name, near, distance, what)]


def _typo(task: SeedTask, label: str, where: str, code: str, value: str, rel: str, near: list[str],
          distance: int, message: str) -> Finding:
    """A finding for a name that is nowhere, with the closest name; a repair when exactly one name
    is within ``MAX_TYPO`` edits (``rel`` and the names compared alike: paths, or bare names)."""
    if not near:
        return _finding(task, label, where, code, message)
    message += f"; closest: {', '.join(near)} ({distance} edit{'s' if distance != 1 else ''})"
    repair = None
    if len(near) == 1 and distance <= MAX_TYPO:
        old_tail, new_tail = PurePosixPath(rel).name, PurePosixPath(near[0]).name
        fixed = value[: len(value) - len(old_tail)] + new_tail
        if value.endswith(old_tail) and fixed != value and PurePosixPath(near[0]).parent == PurePosixPath(rel).parent:
            repair = {"field": where, "from": value, "to": fixed}
    return _finding(task, label, where, code, message, repair)


def _doc_type_findings(task: SeedTask, label: str, index: int, args: dict[str, Any]) -> list[Finding]:
    doc_type = args.get("doc_type")
    files = [args[k] for k in ("file", "result_file") if isinstance(args.get(k), str)]
    if not doc_type or doc_type == "email" or not files:
        return []
    suffix = PurePosixPath(files[0]).suffix.lower().lstrip(".")
    # the doc type the app registry reads the file as; the doc types it reads alike (Word files as "doc"
    # or "docx", plain text as "txt" or "ics") contradict nothing
    wanted = read_as().get(suffix)
    if wanted is None or readings().get(doc_type) == readings()[wanted]:
        return []
    where = f"evaluation[{index}].args.doc_type"
    return [_finding(task, label, where, "doc_type_mismatch", f"doc_type {doc_type!r} on {files[0]} (a .{suffix})",
                     {"field": where, "from": doc_type, "to": wanted})]


def _weak_keywords(task: SeedTask, label: str, index: int, function: str, args: dict[str, Any],
                   testbed: set[str]) -> list[Finding]:
    if function != "evaluate_contain" or not args.get("keywords") or args.get("doc_type") == "email":
        return []
    numeric = [str(k).strip() for k in args["keywords"] if _NUMBER_RE.fullmatch(str(k).strip())]
    if not numeric:
        return []
    rel = args.get("file", "")
    sources = [rel] if rel in testbed else sorted(p for p in testbed if p.startswith("data/"))
    numbers: set[str] = set()
    for source in sources:
        try:
            text = read_document(task.testbed / source, source, read_as().get(source.rsplit(".", 1)[-1], "txt"))
        except (OfficeError, OSError):
            continue
        numbers.update(_NUMBER_RE.findall(text))
    out = []
    for k, keyword in enumerate(args["keywords"]):
        word = str(keyword).strip()
        longer = sorted(n for n in numbers if word in n and n != word)
        if word in numeric and longer:
            out.append(_finding(task, label, f"evaluation[{index}].args.keywords[{k}]", "weak_keyword",
                                f"{word!r} is also inside {', '.join(longer[:3])} in the office's files"))
    return out


def _untouched(task: SeedTask, label: str) -> list[Finding]:
    scratch = Path(tempfile.mkdtemp(prefix="seed-lint-"))
    try:
        ws = task.copy_testbed(scratch / "testbed")
        report = evaluate_criteria(ws, task.evaluation, task.reference, initial_dir=task.testbed)
    except (OfficeError, OSError):
        return []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if report.passed:
        return [_finding(task, label, "evaluation", "passes_untouched",
                         "every criterion passes before anything is done")]
    return []


def apply_repairs(task: SeedTask, findings: list[Finding]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The task's criteria with every unambiguous repair applied, and the repairs done. A repair
    that would make two criteria contradict (``office_env.evaluation.contradictions``) is not done."""
    evaluation = [{"function": i["function"], "args": dict(i["args"])} for i in task.evaluation]
    done = []
    for finding in findings:
        if finding.repair is None:
            continue
        match = re.fullmatch(r"evaluation\[(\d+)\]\.args\.(\w+)", finding.repair["field"])
        if not match:
            continue
        args = evaluation[int(match.group(1))]["args"]
        if args.get(match.group(2)) == finding.repair["from"]:
            before = set(contradictions(evaluation))
            args[match.group(2)] = finding.repair["to"]
            if not set(contradictions(evaluation)) <= before:  # it would make a contradiction of its own
                args[match.group(2)] = finding.repair["from"]
                continue
            done.append({**finding.repair, "code": finding.code})
    return evaluation, done
