"""More hostile inputs for ``bench/hostile.py``: files read from a dataset that hang or flood a
reader, outputs that point elsewhere, and inputs sized to exhaust time or memory.

- ``build.json`` as a FIFO (verify, stats, show, export --hf, eval, review report), as a link to
  ``/dev/zero``, and as a 2 GB sparse file;
- ``review.sqlite`` as a link (its target must not be created), as a text file, and as another
  program's SQLite database (it must not change);
- ``export --officebench / --hf / --sft`` into a link to an empty folder (it must stay empty);
- a 15.9 MB ``task.json`` holding 300,000 empty turns (verify, eval);
- a testbed of 40 sparse files of 31 MiB each (eval, export --hf, regenerate from a seed with
  them): the per-testbed total refuses it;
- an .xlsx of 1,000,000 real cells in 2.5 MB (``homer score``): refused at once, the limit named;
- seeds with a 6 MB instruction and with 150,000 bad criteria (regenerate).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import zipfile
from pathlib import Path
from typing import Any, Callable

SPARSE_FILES, SPARSE_MIB = 40, 31
TURNS = 300_000


def _copy(base: Path, work: Path, name: str) -> Path:
    return Path(shutil.copytree(base, work / name, symlinks=True))


def _first_task(ds: Path) -> Path:
    return sorted(p for p in (ds / "tasks").iterdir() if p.is_dir())[0]


def build_json_datasets(work: Path, base: Path) -> dict[str, Path]:
    """Copies of the base dataset whose build.json is a FIFO, a link to /dev/zero, a 2 GB sparse file."""
    out = {}
    for kind in ("fifo", "zero", "sparse"):
        ds = _copy(base, work, f"build-json-{kind}")
        (ds / "build.json").unlink()
        if kind == "fifo":
            os.mkfifo(ds / "build.json")
        elif kind == "zero":
            os.symlink("/dev/zero", ds / "build.json")
        else:
            with open(ds / "build.json", "wb") as handle:
                handle.truncate(2 * 1024**3)
        out[kind] = ds
    return out


def review_datasets(work: Path, base: Path, outside: Path) -> dict[str, Path]:
    """Copies whose review.sqlite is a link (to a file that does not exist yet), text, another database."""
    out = {}
    for kind in ("link", "text", "foreign"):
        ds = _copy(base, work, f"review-{kind}")
        db = ds / "review.sqlite"
        if kind == "link":
            os.symlink(outside / "created-by-review.sqlite", db)
        elif kind == "text":
            db.write_text("not a database\n", encoding="utf-8")
        else:
            with sqlite3.connect(db) as connection:
                connection.execute("CREATE TABLE accounts (owner TEXT, balance REAL)")
                connection.execute("INSERT INTO accounts VALUES ('someone', 12.5)")
            connection.close()
        out[kind] = ds
    return out


def many_turns_dataset(work: Path, base: Path) -> Path:
    """A task.json of about 15.3 MB (under the JSON limit): its first day holds 300,000 empty turns."""
    ds = _copy(base, work, "many-turns")
    path = _first_task(ds) / "task.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    turn = {"role": "user", "text": "", "ts": "2024-05-01"}
    record["dialogue"][0]["turns"] = [turn] * TURNS
    path.write_text(json.dumps(record), encoding="utf-8")
    return ds


def _pad(testbed: Path) -> None:
    data = testbed / "data"
    data.mkdir(parents=True, exist_ok=True)
    for i in range(SPARSE_FILES):
        with open(data / f"pad{i:02d}.bin", "wb") as handle:
            handle.truncate(SPARSE_MIB * 1024 * 1024)  # sparse: under the per-file limit, no disk used


def sparse_dataset(work: Path, base: Path) -> Path:
    ds = _copy(base, work, "sparse-testbed")
    _pad(_first_task(ds) / "testbed")
    return ds


def hostile_seed_folders(work: Path, seeds: Path) -> dict[str, Path]:
    """Seed folders: one with a padded testbed, one with a 6 MB instruction, one with 150,000 bad criteria."""
    out = {}
    for kind in ("sparse", "instruction", "criteria"):
        tasks = work / f"seeds-{kind}" / "tasks"
        folder = Path(shutil.copytree(seeds / "1-1", tasks / "1-1"))
        subtask = folder / "subtasks" / "0.json"
        data = json.loads(subtask.read_text(encoding="utf-8"))
        if kind == "sparse":
            _pad(folder / "testbed")
        elif kind == "instruction":
            data["task"] = "Please file the report. " * 250_000  # 6 MB
        else:
            data["evaluation"] = [{"function": "no_such_check", "args": {}}] * 150_000
        subtask.write_text(json.dumps(data), encoding="utf-8")
        for extra in (folder / "subtasks").glob("*.json"):
            if extra != subtask:
                extra.unlink()
        out[kind] = tasks.parent
    return out


def million_cells(work: Path, testbed: Path) -> tuple[Path, Path]:
    """A testbed holding data/cells.xlsx (1,000,000 numbers, about 2.5 MB) and criteria reading it:
    a workbook openpyxl writes, its sheet's rows then written out directly (openpyxl takes seconds
    for a million cells; a stranger's file need not come from it)."""
    import io

    import openpyxl
    from openpyxl.utils import get_column_letter

    folder = Path(shutil.copytree(testbed, work / "cells" / "testbed"))
    book = openpyxl.Workbook()
    book.active.title = "Sheet"
    book.active["A1"] = 1
    small = io.BytesIO()
    book.save(small)
    row = b"".join(b'<c r="%s#" t="n"><v>1</v></c>' % get_column_letter(c).encode() for c in range(1, 1001))
    rows = b"".join(b'<row r="%d">' % r + row.replace(b"#", b"%d" % r) + b"</row>" for r in range(1, 1001))
    with zipfile.ZipFile(small) as source, \
            zipfile.ZipFile(folder / "data" / "cells.xlsx", "w", zipfile.ZIP_DEFLATED) as package:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<dimension ref="A1:A1"/>', b'<dimension ref="A1:ALL1000"/>')
                head, rest = data.split(b"<sheetData>", 1)
                data = head + b"<sheetData>" + rows + b"</sheetData>" + rest.split(b"</sheetData>", 1)[1]
            package.writestr(item, data)
    with zipfile.ZipFile(folder / "data" / "cells.xlsx") as package:
        assert package.getinfo("xl/worksheets/sheet1.xml").file_size > 25_000_000
    criteria = work / "cells" / "criteria.json"
    criteria.write_text(json.dumps([{"function": "evaluate_contain", "args": {
        "doc_type": "xlsx", "file": "data/cells.xlsx", "keywords": ["needle"]}}]), encoding="utf-8")
    return folder, criteria


def extra_cases(work: Path, base: Path, outside: Path, seeds: Path, make_case: Callable[..., Any]) -> list[Any]:
    """The cases above, made with ``make_case(name, args, codes, lines, outputs=..., one_error=...,
    untouched=...)``."""
    runs = work / "runs"
    build_json = build_json_datasets(work, base)
    review = review_datasets(work, base, outside)
    turns = many_turns_dataset(work, base)
    sparse = sparse_dataset(work, base)
    seed_folders = hostile_seed_folders(work, seeds)
    cells_testbed, cells_criteria = million_cells(work, _first_task(base) / "testbed")
    empty = work / "empty-target"
    empty.mkdir()
    link = work / "linked-out"
    os.symlink(empty, link)
    fifo, task_id = build_json["fifo"], _first_task(base).name
    refused = ("build.json: is not a regular file",)
    cases = [
        make_case("build-json-fifo-verify", ["verify", str(fifo)], (2,), [refused], one_error=True),
        make_case("build-json-fifo-stats", ["stats", str(fifo)], (2,), [refused], one_error=True),
        make_case("build-json-fifo-show", ["show", str(fifo), task_id], (2,), [refused], one_error=True),
        make_case("build-json-fifo-export-hf", ["export", str(fifo), "--hf", str(runs / "fifo-hf")], (2,), [refused],
                  one_error=True, untouched=[runs / "fifo-hf"]),
        make_case("build-json-fifo-eval", ["eval", str(fifo), "--agent", "none", "--mode", "rag", "--out",
                                           str(runs / "fifo-eval")], (2,), [refused], one_error=True,
                  untouched=[runs / "fifo-eval"]),
        make_case("build-json-fifo-review", ["review", "report", str(fifo)], (2,), [refused], one_error=True),
        make_case("build-json-dev-zero", ["stats", str(build_json["zero"])], (2,), [("build.json: is a symlink",)],
                  one_error=True),
        make_case("build-json-sparse-2gb", ["stats", str(build_json["sparse"])], (0,), [("conversations",)]),
        make_case("review-sqlite-link", ["review", "report", str(review["link"])], (2,),
                  [("review.sqlite: is a symlink",)], one_error=True, untouched=[outside / "created-by-review.sqlite"]),
        make_case("review-sqlite-text", ["review", "report", str(review["text"])], (2,),
                  [("review.sqlite: is not an SQLite database",)], one_error=True),
        make_case("review-sqlite-foreign", ["review", "report", str(review["foreign"])], (2,),
                  [("review.sqlite: holds other tables (accounts)",)], one_error=True),
    ]
    for flag in ("--officebench", "--hf", "--sft"):
        cases.append(make_case(f"export-into-link{flag[1:]}", ["export", str(base), flag, str(link)], (2,),
                               [(f"{flag} {link}: is a symlink",)], one_error=True, untouched=[empty]))
    too_big = ("the limit for one tree",)
    cases += [
        make_case("many-turns-verify", ["verify", str(turns)], (1,), [("FAIL", task_id)]),
        make_case("many-turns-eval", ["eval", str(turns), "--agent", "none", "--mode", "rag", "--out",
                                      str(runs / "turns-eval")], (0,),
                  [("skipped", task_id, "lists, objects and items; the limit is 400,000")], [runs / "turns-eval"]),
        make_case("sparse-testbed-eval", ["eval", str(sparse), "--agent", "oracle", "--mode", "rag", "--out",
                                          str(runs / "sparse-eval")], (0,), [("skipped", task_id, *too_big)],
                  [runs / "sparse-eval"]),
        make_case("sparse-testbed-export-hf", ["export", str(sparse), "--hf", str(runs / "sparse-hf")], (1,),
                  [("skipped", task_id, *too_big)], [runs / "sparse-hf"]),
        make_case("sparse-seed-regenerate", ["regenerate", "--seeds", str(seed_folders["sparse"]), "--out",
                                             str(runs / "sparse-regen"), "--days", "2", "--utterances", "12"], (1, 2),
                  [("1-1/testbed/data/pad", *too_big)], [runs / "sparse-regen"]),
        make_case("million-cells-score", ["score", str(cells_testbed), "-c", str(cells_criteria)], (1, 2),
                  [("data/cells.xlsx: holds 1,000,000 cells, over the limit of",)]),
        make_case("seed-6mb-instruction", ["regenerate", "--seeds", str(seed_folders["instruction"]), "--out",
                                           str(runs / "instruction-regen"), "--days", "2", "--utterances", "12"],
                  (1, 2), [("task: is 6,000,000 characters long, over the limit of",)], [runs / "instruction-regen"]),
        make_case("seed-150k-criteria", ["regenerate", "--seeds", str(seed_folders["criteria"]), "--out",
                                         str(runs / "criteria-regen"), "--days", "2", "--utterances", "12"],
                  (1, 2), [("evaluation: holds 150,000 items, over the limit of",)], [runs / "criteria-regen"]),
    ]
    return cases


EXTRA_NAMES = [
    "build-json-fifo-verify", "build-json-fifo-stats", "build-json-fifo-show", "build-json-fifo-export-hf",
    "build-json-fifo-eval", "build-json-fifo-review", "build-json-dev-zero", "build-json-sparse-2gb",
    "review-sqlite-link", "review-sqlite-text", "review-sqlite-foreign", "export-into-link-officebench",
    "export-into-link-hf", "export-into-link-sft", "many-turns-verify", "many-turns-eval", "sparse-testbed-eval",
    "sparse-testbed-export-hf", "sparse-seed-regenerate", "million-cells-score", "seed-6mb-instruction",
    "seed-150k-criteria",
]
