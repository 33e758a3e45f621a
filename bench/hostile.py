"""Benchmark: hostile datasets and seed folders through the real command line.

Builds, in a scratch folder, a dataset and OfficeBench seed folders that try every trick a
stranger's folder can play -- symlinked task folders, task.json, testbeds, reference folders,
files and subfolders pointing at a secret file outside; a hard link to that file; a FIFO; file
names with a newline or bytes that are not UTF-8; a task.json nested 100,000 levels and one of
20 MB; a file over the size limit; a zip-bomb .docx (100 MB of text in word/document.xml) and
an .xlsx with a cell at XFD1048576 -- and runs ``homer score``, ``verify``, ``stats``,
``export``, ``eval`` (oracle and none), ``regenerate`` and ``officebench check`` on them as
child processes. ``bench/hostile_cases.py`` adds the files a dataset holds that hang or flood a
reader (build.json as a FIFO, a /dev/zero link, a 2 GB sparse file; review.sqlite as a link, text
or another program's database), exports into a linked folder, and inputs sized to exhaust time or
memory (300,000 turns, 40 sparse 31 MiB files, a million-cell sheet, a 6 MB instruction, 150,000
criteria).

For each run it prints the exit code, seconds, the child's peak RSS (``RUSAGE_CHILDREN`` of a
small launcher; with ``--fork``, of the forked process), escapes (hits
of the secret marker in the output, in any file written, plus links found in written folders)
and tracebacks. Targets: 0 escapes, 0 tracebacks, exit codes as documented with one-line errors
naming the file, peak RSS < 500 MB and each run < 10 s. The secret folder must be unchanged.

Run: ``python bench/hostile.py [--work DIR] [--jobs 3] [--fork]`` (exit 1 when a target is missed).
``tests/orchestrator/test_hostile.py`` runs the same cases through :func:`run_suite`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # first: the script's own folder (bench/) holds names that shadow packages


def _beside(name: str):
    """A module beside this file (bench/ is not a package, and holds names that would shadow ours)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


hostile_cases = _beside("hostile_cases")

HOMER = str(Path(sys.executable).parent / "homer")
SEEDS = ROOT / "datasets" / "officebench-sample" / "tasks"
MARKER = "HOSTILE-MARKER-5b1e0c9d"
RSS_TARGET_MB = 500
SECONDS_TARGET = 10.0
TIMEOUT = 60.0
MEMORY_GUARD = 2 * 1024**3  # address-space limit of each child: a runaway reader fails instead of the machine
# Runs one command and reports its peak RSS. A small launcher is needed because a child forked
# from this (large) process would count the parent's pages in its own ru_maxrss.
LAUNCHER = """
import resource, subprocess, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
code = subprocess.call(sys.argv[3:])
with open(sys.argv[1], "w") as handle:
    handle.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"""
ENV = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}

# a criterion that prints the first differing line of data/leak.txt if anything reads it
LEAK = {"function": "evaluate_exact_match",
        "args": {"doc_type": "txt", "result_file": "data/leak.txt", "expected_file": "data/decoy.txt"}}
LEAK_IN_DIR = {"function": "evaluate_exact_match",
               "args": {"doc_type": "txt", "result_file": "data/out/secret.txt", "expected_file": "data/decoy.txt"}}
LEAK_REFERENCE = {"function": "evaluate_exact_match",
                  "args": {"doc_type": "txt", "result_file": "data/decoy.txt",
                           "expected_file": "../../../../reference/data/leak.txt"}}
LEAK_INITIAL = {"function": "evaluate_exact_match",
                "args": {"doc_type": "txt", "result_file": "data/decoy.txt",
                         "expected_file": "../../../../cache/0/testbed/data/leak.txt"}}
BOMB = {"function": "evaluate_contain", "args": {"doc_type": "docx", "file": "data/bomb.docx", "keywords": ["needle"]}}
HUGE = {"function": "evaluate_contain", "args": {"doc_type": "xlsx", "file": "data/huge.xlsx", "keywords": ["needle"]}}

PENDING_ZIP = "zip limits in the document readers (office_env/formats)"
PENDING_CELLS = "sheet render limits in the xlsx reader (office_env/formats)"


# -- building the hostile inputs ---------------------------------------------------------------

def first_task(base: Path) -> Path:
    """The base build's first task folder (which attempt numbers were kept depends on the gates)."""
    return sorted(p for p in (base / "tasks").iterdir() if p.is_dir())[0]


def build_base(work: Path) -> Path:
    """A small real dataset (2 tasks) to start from."""
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    out = work / "base"
    build(out, 2, BuildConfig(seed=0, days=2, utterances_per_day=12), workers=1)
    return out


def nested_json(levels: int = 100_000) -> str:
    return "[" * levels + "]" * levels


def big_json(mb: int = 20) -> str:
    return json.dumps({"id": "big", "padding": "x" * (mb * 1024 * 1024)})


def write_zip_bomb(path: Path, megabytes: int = 100) -> None:
    """A .docx whose word/document.xml inflates to ``megabytes`` MB of text (~100 KB packed)."""
    head = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            b"<w:body><w:p><w:r><w:t>")
    tail = b"</w:t></w:r></w:p></w:body></w:document>"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr("[Content_Types].xml",
                         '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                         'content-types"><Override PartName="/word/document.xml" ContentType="application/'
                         'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
        with package.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(head)
            block = b"0" * (1024 * 1024)
            for _ in range(megabytes):
                member.write(block)
            member.write(tail)


def write_huge_cell(path: Path) -> None:
    """An .xlsx with one cell at XFD1048576 (the last row and column a sheet can have)."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet["A1"] = "Name"
    sheet.cell(row=1048576, column=16384, value="corner")
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)


def make_outside(work: Path, base_testbed: Path, base_task: Path) -> Path:
    """The secret folder beside everything: a secret file, a testbed and a task holding the marker."""
    outside = work / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{MARKER}\n", encoding="utf-8")
    testbed = Path(shutil.copytree(base_testbed, outside / "testbed"))
    (testbed / "data" / "leak.txt").write_text(f"{MARKER}\n", encoding="utf-8")
    (testbed / "data" / "decoy.txt").write_text("decoy\n", encoding="utf-8")
    task = Path(shutil.copytree(base_task, outside / "task"))
    record = json.loads((task / "task.json").read_text(encoding="utf-8"))
    record["description"] = f"{record['description']} {MARKER}"
    record["evaluation"] = record["evaluation"] + [LEAK]
    (task / "task.json").write_text(json.dumps(record), encoding="utf-8")
    (task / "testbed" / "data" / "leak.txt").write_text(f"{MARKER}\n", encoding="utf-8")
    (task / "testbed" / "data" / "decoy.txt").write_text("decoy\n", encoding="utf-8")
    (outside / "criteria.json").write_text(json.dumps([LEAK, {"function": MARKER, "args": {}}]), encoding="utf-8")
    seed = outside / "seed"
    shutil.copytree(SEEDS / "1-1", seed)
    data = json.loads((seed / "subtasks" / "0.json").read_text(encoding="utf-8"))
    data["task"] = f"{data['task']} {MARKER}"
    (seed / "subtasks" / "0.json").write_text(json.dumps(data), encoding="utf-8")
    (seed / "testbed" / "data" / "leak.txt").write_text(f"{MARKER}\n", encoding="utf-8")
    return outside


def _variant(tasks: Path, base_task: Path, name: str, extra: list[dict]) -> Path:
    folder = Path(shutil.copytree(base_task, tasks / name))
    record = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    record["id"] = name
    record["evaluation"] = record["evaluation"] + extra
    (folder / "task.json").write_text(json.dumps(record), encoding="utf-8")
    (folder / "testbed" / "data" / "decoy.txt").write_text("decoy\n", encoding="utf-8")
    return folder


def hostile_dataset(work: Path, base: Path, outside: Path) -> tuple[Path, list[tuple[str, ...]]]:
    """The base dataset plus one task per trick; returns the folder and, per bad task, the
    fragments its one-line error must hold."""
    ds = Path(shutil.copytree(base, work / "hostile-ds", symlinks=True))
    tasks = ds / "tasks"
    base_task = first_task(base)
    secret = outside / "secret.txt"
    expected: list[tuple[str, ...]] = []

    folder = _variant(tasks, base_task, "sym-testbed", [LEAK])
    shutil.rmtree(folder / "testbed")
    os.symlink(outside / "testbed", folder / "testbed")
    expected.append(("sym-testbed", "sym-testbed/testbed: is a symlink"))

    folder = _variant(tasks, base_task, "sym-reference", [LEAK_REFERENCE])
    os.symlink(outside / "testbed", folder / "reference")
    expected.append(("sym-reference", "sym-reference/reference: is a symlink"))

    os.symlink(outside / "task", tasks / "sym-folder")
    expected.append(("sym-folder", "tasks/sym-folder: is a symlink"))

    folder = _variant(tasks, base_task, "sym-taskjson", [])
    (folder / "task.json").unlink()
    os.symlink(outside / "task" / "task.json", folder / "task.json")
    expected.append(("sym-taskjson", "sym-taskjson/task.json: is a symlink"))

    folder = _variant(tasks, base_task, "sym-file", [LEAK])
    os.symlink(secret, folder / "testbed" / "data" / "leak.txt")
    expected.append(("sym-file", "data/leak.txt: is a symlink"))

    folder = _variant(tasks, base_task, "sym-dir", [LEAK_IN_DIR])
    os.symlink(outside, folder / "testbed" / "data" / "out")
    expected.append(("sym-dir", "data/out: is a symlink"))

    folder = _variant(tasks, base_task, "hardlink", [LEAK])
    os.link(secret, folder / "testbed" / "data" / "leak.txt")
    expected.append(("hardlink", "data/leak.txt: is a hard link to a file outside"))

    folder = _variant(tasks, base_task, "fifo", [LEAK])
    os.mkfifo(folder / "testbed" / "data" / "leak.txt")
    expected.append(("fifo", "data/leak.txt: is a special file (FIFO)"))

    folder = _variant(tasks, base_task, "odd-newline", [])
    (folder / "testbed" / "data" / "a\nb.txt").write_text("x\n", encoding="utf-8")
    expected.append(("odd-newline", "data/a\\nb.txt: has a bad name"))

    folder = _variant(tasks, base_task, "odd-bytes", [])
    (folder / "testbed" / "data" / os.fsdecode(b"\xff\xfe.txt")).write_text("x\n", encoding="utf-8")
    expected.append(("odd-bytes", "data/\\xff\\xfe.txt: has a bad name (not valid UTF-8)"))

    _variant(tasks, base_task, "odd\nfolder", [])
    expected.append(("odd\\nfolder", "odd folder name"))

    folder = _variant(tasks, base_task, "deep-json", [])
    (folder / "task.json").write_text(nested_json(), encoding="utf-8")
    expected.append(("deep-json", "deep-json/task.json: nested deeper than 64 levels"))

    folder = _variant(tasks, base_task, "big-json", [])
    (folder / "task.json").write_text(big_json(), encoding="utf-8")
    expected.append(("big-json", "big-json/task.json: is too large"))

    folder = _variant(tasks, base_task, "big-file", [])
    with open(folder / "testbed" / "data" / "big.bin", "wb") as handle:
        handle.truncate(33 * 1024 * 1024)  # sparse: over the limit without using the disk
    expected.append(("big-file", "data/big.bin: is too large"))
    return ds, expected


def formats_dataset(work: Path, base: Path) -> Path:
    """The base dataset plus a zip-bomb .docx task and a huge-sheet .xlsx task."""
    ds = Path(shutil.copytree(base, work / "formats-ds", symlinks=True))
    base_task = first_task(base)
    folder = _variant(ds / "tasks", base_task, "zip-bomb", [BOMB])
    write_zip_bomb(folder / "testbed" / "data" / "bomb.docx")
    folder = _variant(ds / "tasks", base_task, "huge-cell", [HUGE])
    write_huge_cell(folder / "testbed" / "data" / "huge.xlsx")
    return ds


def _seed(tasks: Path, name: str, subtask_extra: list[dict] | None = None) -> Path:
    folder = Path(shutil.copytree(SEEDS / "1-1", tasks / name))
    if subtask_extra:
        path = folder / "subtasks" / "0.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["evaluation"] = data["evaluation"] + subtask_extra
        path.write_text(json.dumps(data), encoding="utf-8")
    (folder / "testbed" / "data" / "decoy.txt").write_text("decoy\n", encoding="utf-8")
    return folder


def hostile_seeds(work: Path, outside: Path) -> tuple[Path, list[tuple[str, ...]]]:
    """OfficeBench seed folders: a clean one, and one per trick."""
    tasks = work / "seeds" / "tasks"
    tasks.mkdir(parents=True)
    secret = outside / "secret.txt"
    expected: list[tuple[str, ...]] = []
    _seed(tasks, "1-1")

    folder = _seed(tasks, "1-2", [LEAK])
    shutil.rmtree(folder / "testbed")
    os.symlink(outside / "testbed", folder / "testbed")
    expected.append(("1-2/testbed", "is a symlink"))

    folder = _seed(tasks, "1-3", [LEAK_REFERENCE])
    os.symlink(outside / "testbed", folder / "reference")
    expected.append(("1-3/reference", "is a symlink"))

    folder = _seed(tasks, "1-4", [LEAK_IN_DIR])
    os.symlink(outside, folder / "testbed" / "data" / "out")
    expected.append(("1-4/testbed/data/out", "is a symlink"))

    folder = _seed(tasks, "1-5", [LEAK])
    os.link(secret, folder / "testbed" / "data" / "leak.txt")
    expected.append(("1-5/testbed/data/leak.txt", "hard link to a file outside"))

    folder = _seed(tasks, "1-6", [LEAK])
    os.mkfifo(folder / "testbed" / "data" / "leak.txt")
    expected.append(("1-6/testbed/data/leak.txt", "special file (FIFO)"))

    folder = _seed(tasks, "1-7")
    subtasks = folder / "subtasks"
    clean = (subtasks / "0.json").read_text(encoding="utf-8")
    (subtasks / "1.json").unlink()
    (subtasks / "\u00b2.json").write_text(clean, encoding="utf-8")
    (subtasks / "a\nb.json").write_text(clean, encoding="utf-8")
    (subtasks / os.fsdecode(b"\xff.json")).write_text(clean, encoding="utf-8")
    (subtasks / "2.json").write_text(nested_json(), encoding="utf-8")
    (subtasks / "3.json").write_text(big_json(), encoding="utf-8")
    os.symlink(outside / "seed" / "subtasks" / "0.json", subtasks / "4.json")
    expected += [("1-7/subtasks/\u00b2.json", "odd file name"), ("1-7/subtasks/a\\nb.json", "odd file name"),
                 ("1-7/subtasks/\\xff.json", "odd file name"), ("1-7/subtasks/2.json", "nested deeper than 64"),
                 ("1-7/subtasks/3.json", "too large"), ("1-7/subtasks/4.json", "symlink")]

    os.symlink(outside / "seed", tasks / "1-8")
    expected.append(("1-8", "is a symlink"))

    folder = _seed(tasks, "1-9")
    shutil.rmtree(folder / "subtasks")
    os.symlink(outside / "seed" / "subtasks", folder / "subtasks")
    expected.append(("1-9/subtasks", "is a symlink"))

    folder = _seed(tasks, "1-10")
    (folder / "testbed" / "data" / "odd\nname.txt").write_text("x\n", encoding="utf-8")
    expected.append(("1-10/testbed/data/odd\\nname.txt", "bad name"))
    return tasks.parent, expected


def score_inputs(work: Path, base_testbed: Path, outside: Path) -> dict[str, list[str]]:
    """Arguments of ``homer score`` for each trick (testbed, criteria, options)."""
    root = work / "score"
    root.mkdir()
    secret = outside / "secret.txt"

    def testbed(name: str) -> Path:
        folder = Path(shutil.copytree(base_testbed, root / name / "testbed"))
        (folder / "data" / "decoy.txt").write_text("decoy\n", encoding="utf-8")
        return folder

    def criteria(name: str, items: list[dict]) -> str:
        path = root / f"{name}.json"
        path.write_text(json.dumps(items), encoding="utf-8")
        return str(path)

    clean = testbed("clean")
    os.symlink(outside / "testbed", root / "link-testbed")
    sym_file = testbed("sym-file")
    os.symlink(secret, sym_file / "data" / "leak.txt")
    task = root / "task-ref"
    testbed("task-ref")
    os.symlink(outside / "testbed", task / "reference")
    (task / "subtasks").mkdir()
    (task / "subtasks" / "0.json").write_text(json.dumps([LEAK_REFERENCE]), encoding="utf-8")
    os.symlink(outside / "criteria.json", root / "link-criteria.json")
    (root / "deep.json").write_text(nested_json(), encoding="utf-8")
    (root / "big.json").write_text(big_json(), encoding="utf-8")
    fifo = testbed("fifo")
    os.mkfifo(fifo / "data" / "leak.txt")
    hard = testbed("hardlink")
    os.link(secret, hard / "data" / "leak.txt")
    odd = testbed("odd")
    (odd / "data" / "a\nb.txt").write_text("x\n", encoding="utf-8")
    (odd / "data" / os.fsdecode(b"\xff.txt")).write_text("x\n", encoding="utf-8")
    bomb = testbed("bomb")
    write_zip_bomb(bomb / "data" / "bomb.docx")
    huge = testbed("huge")
    write_huge_cell(huge / "data" / "huge.xlsx")
    leak = criteria("leak", [LEAK])
    return {
        "score-sym-testbed": [str(root / "link-testbed"), "-c", leak],
        "score-sym-file": [str(sym_file), "-c", leak],
        "score-sym-reference": [str(task / "testbed"), "-c", str(task / "subtasks" / "0.json")],
        "score-sym-initial": [str(clean), "-c", criteria("initial", [LEAK_INITIAL]), "--initial",
                              str(root / "link-testbed")],
        "score-sym-criteria": [str(clean), "-c", str(root / "link-criteria.json")],
        "score-deep-criteria": [str(clean), "-c", str(root / "deep.json")],
        "score-big-criteria": [str(clean), "-c", str(root / "big.json")],
        "score-fifo": [str(fifo), "-c", leak],
        "score-hardlink": [str(hard), "-c", leak],
        "score-odd-names": [str(odd), "-c", leak],
        "score-zip-bomb": [str(bomb), "-c", criteria("bomb", [BOMB])],
        "score-huge-cell": [str(huge), "-c", criteria("huge", [HUGE])],
    }


# -- the cases -----------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    args: list[str]
    codes: tuple[int, ...]
    lines: list[tuple[str, ...]] = field(default_factory=list)  # each tuple: fragments on one output line
    outputs: list[Path] = field(default_factory=list)  # folders written by the run, searched for escapes
    one_error: bool = False  # stderr must be exactly one "error: ..." line
    pending: str = ""  # a limit owned elsewhere that this case waits for
    untouched: list[Path] = field(default_factory=list)  # must stay absent or an empty folder (else an escape)


@dataclass
class Result:
    case: Case
    code: int | None
    seconds: float
    rss_mb: float
    escapes: int
    tracebacks: int
    stdout: str
    stderr: str
    timeout: float = TIMEOUT

    def problems(self, seconds_target: float | None = SECONDS_TARGET) -> list[str]:
        """What misses a target (empty when the run is fine); ``seconds_target=None`` leaves the
        time out (a loaded machine makes it noisy; the timeout still applies)."""
        out = []
        if self.code is None:
            out.append(f"timed out after {self.timeout:g} s")
        elif self.code not in self.case.codes:
            out.append(f"exit code {self.code}, expected {'/'.join(map(str, self.case.codes))}")
        if self.escapes:
            out.append(f"{self.escapes} escape(s)")
        if self.tracebacks:
            out.append(f"{self.tracebacks} traceback(s)")
        if self.rss_mb >= RSS_TARGET_MB:
            out.append(f"peak RSS {self.rss_mb:.0f} MB")
        if seconds_target is not None and self.seconds >= seconds_target:
            out.append(f"{self.seconds:.1f} s")
        text = (self.stdout + self.stderr).splitlines()
        for fragments in self.case.lines:
            if not any(all(f in line for f in fragments) for line in text):
                out.append(f"no output line with {' + '.join(repr(f) for f in fragments)}")
        if self.case.one_error:
            errors = self.stderr.strip().splitlines()
            if len(errors) != 1 or not errors[0].startswith("error: "):
                out.append(f"stderr is not one error line: {self.stderr.strip()[:300]!r}")
        return out


def build_cases(work: Path) -> tuple[list[Case], Path]:
    """Every hostile input and the command-line runs over them; returns the cases and the
    secret folder (whose content must not change)."""
    base = build_base(work)
    base_task = first_task(base)
    outside = make_outside(work, base_task / "testbed", base_task)
    ds, ds_lines = hostile_dataset(work, base, outside)
    fmt = formats_dataset(work, base)
    seeds, seed_lines = hostile_seeds(work, outside)
    score = score_inputs(work, base_task / "testbed", outside)
    runs = work / "runs"
    cases = [
        Case("officebench-check", ["officebench", "check", str(seeds)], (1,), seed_lines),
        Case("regenerate", ["regenerate", "--seeds", str(seeds), "--out", str(runs / "regenerated"), "--days", "2",
                            "--utterances", "12", "--task-timeout", "30"], (1,),
             [*seed_lines[:6], ("regenerated 3 task(s)",)], [runs / "regenerated"]),
        Case("verify", ["verify", str(ds)], (1,), [(f"ok   {base_task.name}",), *[("FAIL", *e) for e in ds_lines]]),
        Case("stats", ["stats", str(ds)], (0,), [("conversations",), *[("skipped", *e) for e in ds_lines]]),
        Case("export", ["export", str(ds), "--officebench", str(runs / "export"), "--lossy"], (1,),
             [("exported 2 task(s)",), *[("skipped", *e) for e in ds_lines]], [runs / "export"]),
        Case("eval-oracle", ["eval", str(ds), "--agent", "oracle", "--mode", "long-context", "--out",
                             str(runs / "eval-oracle"), "--task-timeout", "30"], (0,),
             [("evaluated 2 task(s)",), *[("skipped", *e) for e in ds_lines]], [runs / "eval-oracle"]),
        Case("eval-none", ["eval", str(ds), "--agent", "none", "--mode", "rag", "--out", str(runs / "eval-none"),
                           "--task-timeout", "30"], (0,),
             [("evaluated 2 task(s)",), *[("skipped", *e) for e in ds_lines]], [runs / "eval-none"]),
        Case("formats-verify", ["verify", str(fmt)], (1,),
             [(f"ok   {base_task.name}",), ("FAIL zip-bomb",), ("FAIL huge-cell",)],
             pending=f"{PENDING_ZIP}; {PENDING_CELLS}"),
        Case("formats-eval", ["eval", str(fmt), "--agent", "oracle", "--mode", "long-context", "--out",
                              str(runs / "formats-eval"), "--task-timeout", "30"], (0,), [("evaluated 4 task(s)",)],
             [runs / "formats-eval"], pending=f"{PENDING_ZIP}; {PENDING_CELLS}"),
        Case("formats-export", ["export", str(fmt), "--officebench", str(runs / "formats-export"), "--lossy"], (0,),
             [("exported 4 task(s)",)], [runs / "formats-export"]),
    ]
    reasons = {
        "score-sym-testbed": "link-testbed: is a symlink", "score-sym-file": "data/leak.txt: is a symlink",
        "score-sym-reference": "task-ref/reference: is a symlink", "score-sym-initial": "--initial",
        "score-sym-criteria": "link-criteria.json: is a symlink",
        "score-deep-criteria": "deep.json: nested deeper than 64 levels",
        "score-big-criteria": "big.json: is too large",
        "score-fifo": "data/leak.txt: is a special file (FIFO)",
        "score-hardlink": "data/leak.txt: is a hard link to a file outside",
        "score-odd-names": "has a bad name",
    }
    for name, args in score.items():
        if name in reasons:
            cases.append(Case(name, ["score", *args], (2,), [("error:", reasons[name])], one_error=True))
        else:
            pending = PENDING_ZIP if "bomb" in name else PENDING_CELLS
            cases.append(Case(name, ["score", *args], (1, 2), [("bomb.docx" if "bomb" in name else "huge.xlsx",)],
                              pending=pending))
    cases += hostile_cases.extra_cases(work, base, outside, SEEDS, Case)
    return cases, outside


CASE_NAMES = ["officebench-check", "regenerate", "verify", "stats", "export", "eval-oracle", "eval-none",
              "formats-verify", "formats-eval", "formats-export", "score-sym-testbed", "score-sym-file",
              "score-sym-reference", "score-sym-initial", "score-sym-criteria", "score-deep-criteria",
              "score-big-criteria", "score-fifo", "score-hardlink", "score-odd-names", "score-zip-bomb",
              "score-huge-cell", *hostile_cases.EXTRA_NAMES]


# -- running -------------------------------------------------------------------------------------

def escapes_in(folder: Path, outside: Path) -> int:
    """Marker hits in every file under ``folder``, plus every symlink, special file and file
    hard-linked to something outside it."""
    hits = 0
    marker = MARKER.encode()
    if not folder.exists():
        return 0
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.islink(path):
                hits += 1
            elif name in filenames:
                if not os.path.isfile(path) or st.st_nlink > 1:
                    hits += 1
                    continue
                with open(path, "rb") as handle:
                    hits += handle.read().count(marker)
    return hits


class Forks:
    """A forking launcher (``bench/hostile_zygote.py``) per job: cases start with the pipeline
    imported instead of importing it again each (the tests' way; the bench times the console
    script itself)."""

    def __init__(self, jobs: int) -> None:
        self.idle: queue.SimpleQueue[subprocess.Popen] = queue.SimpleQueue()
        self.all = [subprocess.Popen([sys.executable, "-P", str(Path(__file__).with_name("hostile_zygote.py"))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV, text=True)
                    for _ in range(max(1, jobs))]
        for zygote in self.all:
            self.idle.put(zygote)

    def run(self, args: list[str], cwd: Path, out: str, err: str, timeout: float) -> tuple[int | None, float, int]:
        zygote = self.idle.get()
        try:
            request = {"args": args, "cwd": str(cwd), "stdout": out, "stderr": err, "timeout": timeout,
                       "limit": MEMORY_GUARD}
            zygote.stdin.write(json.dumps(request) + "\n")
            zygote.stdin.flush()
            reply = json.loads(zygote.stdout.readline())
        finally:
            self.idle.put(zygote)
        return reply["code"], reply["seconds"], reply["rss_kb"]

    def close(self) -> None:
        for zygote in self.all:
            zygote.stdin.close()
            zygote.wait(timeout=30)


def _launch(case: Case, cwd: Path, out, err, rss, timeout: float) -> tuple[int | None, float, int]:
    """Run the console script for one case as a child of a small launcher (its own session, killed
    whole on timeout); returns the exit code (None on timeout), seconds and peak RSS in KB."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, rss.name, str(MEMORY_GUARD), HOMER, *case.args],
                            stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd, env=ENV,
                            start_new_session=True)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    seconds = time.perf_counter() - started
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # on timeout, and so that no worker outlives its command
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    text = rss.read().strip()
    return code, seconds, int(text) if text.isdigit() else 0


def run_case(case: Case, outside: Path, cwd: Path, timeout: float = TIMEOUT, forks: Forks | None = None) -> Result:
    """Run one case in a process of its own: the console script, or a fork of ``forks``."""
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        if forks is None:
            code, seconds, rss_kb = _launch(case, cwd, out, err, rss, timeout)
        else:
            code, seconds, rss_kb = forks.run(case.args, cwd, out.name, err.name, timeout)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    escapes = (stdout + stderr).count(MARKER) + sum(escapes_in(folder, outside) for folder in case.outputs)
    escapes += sum(1 for path in case.untouched if os.path.lexists(path) and not (
        os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)))
    tracebacks = (stdout + stderr).count("Traceback")
    return Result(case, code, seconds, rss_kb / 1024, escapes, tracebacks, stdout, stderr, timeout)


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(folder)):
        for name in sorted(filenames):
            path = Path(dirpath) / name
            digest.update(str(path.relative_to(folder)).encode("utf-8", "surrogateescape"))
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def run_suite(work: Path, jobs: int = 3, timeout: float = TIMEOUT, *, fork: bool = False
              ) -> tuple[list[Result], bool]:
    """Build every hostile input under ``work`` and run every case (each killed after
    ``timeout`` seconds); returns the results and whether the secret folder is unchanged.
    ``fork``: start each case from a process that has imported the pipeline (:class:`Forks`)."""
    cases, outside = build_cases(work)
    assert [c.name for c in cases] == CASE_NAMES, [c.name for c in cases]
    before = tree_digest(outside)
    (work / "runs").mkdir(exist_ok=True)
    order = sorted(cases, key=lambda c: bool(c.pending))  # the slow pending ones last
    forks = Forks(jobs) if fork else None
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(lambda c: run_case(c, outside, work, timeout, forks), order))
    finally:
        if forks is not None:
            forks.close()
    by_name = {r.case.name: r for r in results}
    return [by_name[name] for name in CASE_NAMES], tree_digest(outside) == before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="Scratch folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--jobs", type=int, default=3, help="Commands run at once")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="Seconds before a run is killed")
    parser.add_argument("--fork", action="store_true",
                        help="Start each run from a process that has imported the pipeline (as the tests do) "
                             "instead of the console script: less CPU, seconds without the imports")
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        results, untouched = run_suite(work, options.jobs, options.timeout, fork=options.fork)
    finally:
        if options.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'case':22} {'exit':>4} {'seconds':>8} {'RSS MB':>7} {'escapes':>7} {'tracebacks':>10}  verdict")
    missed = 0
    for result in results:
        problems = result.problems()
        missed += bool(problems)
        verdict = "ok" if not problems else "MISSED: " + "; ".join(problems)
        if problems and result.case.pending:
            verdict += f" (waits for {result.case.pending})"
        code = "-" if result.code is None else str(result.code)
        rss = "?" if result.code is None else f"{result.rss_mb:.0f}"
        print(f"{result.case.name:22} {code:>4} {result.seconds:8.2f} {rss:>7} {result.escapes:7d} "
              f"{result.tracebacks:10d}  {verdict}")
    escapes = sum(r.escapes for r in results)
    tracebacks = sum(r.tracebacks for r in results)
    peak = max(r.rss_mb for r in results)
    slowest = max(r.seconds for r in results)
    print(f"\ntotal: {len(results)} runs in {time.perf_counter() - started:.1f} s; escapes {escapes} (target 0), "
          f"tracebacks {tracebacks} (target 0), peak RSS {peak:.0f} MB (target < {RSS_TARGET_MB}), "
          f"slowest {slowest:.1f} s (target < {SECONDS_TARGET:g}); secret folder "
          f"{'unchanged' if untouched else 'CHANGED'}; {missed} run(s) missed a target")
    return 0 if not missed and untouched else 1


if __name__ == "__main__":
    sys.exit(main())
