"""A dataset as a Hugging Face dataset folder (``homer export --hf DIR``).

``data/test-NNNNN-of-MMMMM.jsonl`` shards hold one row per task: flat text columns (intent,
query, description, ...), the nested parts as JSON strings (criteria, memory, dialogue, oracle
plan: their shapes vary from task to task, which a columnar schema would not keep), and the
task's office packed as a zip (base64) with its file list. ``README.md`` is the dataset card: YAML
metadata (the ``configs`` entry that tells ``datasets.load_dataset`` where the shards are) and a
loading example. The folder appears whole (temporary name, then rename).
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.dataset_reader import folder_written_whole, iter_tasks, ticking
from backends.hf_folder import REST, record_rest
from backends.task_record import TaskRecord, plan_calls
from office_env.limits import MAX_FILE_BYTES
from office_env.untrusted import iter_files, read_fd, scan_tree

ROWS_PER_SHARD = 200
_STAMP = (1980, 1, 1, 0, 0, 0)


@dataclass
class HfSummary:
    written: int = 0
    shards: int = 0
    skipped: list[str] = field(default_factory=list)


def pack_testbed(testbed: Path) -> tuple[str, list[str]]:
    """The testbed as a reproducible zip (fixed times and modes, sorted), base64, and its file list."""
    buffer = io.BytesIO()
    names = []
    tree = scan_tree(testbed).check(testbed)
    files = {}
    for entry, fd in iter_files(tree):
        files["/".join(entry.parts)] = read_fd(fd, MAX_FILE_BYTES, f"{testbed}/{'/'.join(entry.parts)}")
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            data = files[name]
            info = zipfile.ZipInfo(name, date_time=_STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
            names.append(name)
    return base64.b64encode(buffer.getvalue()).decode("ascii"), names


def row_of(record: TaskRecord, testbed: Path, reference: Path | None = None,
           raw: dict[str, Any] | None = None) -> dict[str, Any]:
    """One task as a row; with ``raw`` (the record as read), ``record_rest`` holds what the other
    columns do not, so that ``homer eval`` rebuilds the very record (``backends.hf_folder``)."""
    if not testbed.is_dir():
        raise ValueError("no testbed/ folder: the task cannot be solved or scored")
    packed, files = pack_testbed(testbed)
    expected, expected_files = pack_testbed(reference) if reference is not None else ("", [])
    sessions = [s.to_dict() for s in record.dialogue]
    row = {
        "id": record.id, "split": record.split, "family": record.family,
        "difficulty": record.difficulty, "apps": list(record.apps), "app_count": record.app_count,
        "user": record.user.name, "username": record.user.username, "now": json.dumps(record.now.to_dict()),
        "intent": record.intent, "query": record.query, "description": record.description,
        "subtasks": list(record.subtasks),
        "days": len(sessions), "utterances": sum(len(s.turns) for s in record.dialogue),
        "evaluation": json.dumps(record.criteria(), ensure_ascii=False),
        "memory": json.dumps([m.to_dict() for m in record.memory], ensure_ascii=False),
        "dialogue": json.dumps(sessions, ensure_ascii=False),
        "oracle": json.dumps(plan_calls(record.oracle), ensure_ascii=False),
        "testbed_files": files, "testbed_zip": packed,
        "reference_files": expected_files, "reference_zip": expected,
    }
    row[REST] = json.dumps(record_rest(raw if raw is not None else record.to_dict(), row), ensure_ascii=False)
    return row


def export_hf(dataset: Path, out: Path, on_outcome: Callable[[dict[str, Any]], None] | None = None) -> HfSummary:
    summary = HfSummary()
    rows: list[dict[str, Any]] = []
    for task in ticking(iter_tasks(dataset), on_outcome, lambda: len(rows)):
        if task.task is None:
            summary.skipped.append(f"{task.id}: cannot be read: {task.error}")
            continue
        try:
            rows.append(row_of(task.task, task.testbed, task.reference, task.record))
        except ValueError as exc:
            summary.skipped.append(f"{task.id}: {str(exc)[:200]}")
        except Exception as exc:  # a stranger's testbed or a malformed record: this task only
            summary.skipped.append(f"{task.id}: {exc.__class__.__name__}: {str(exc)[:200]}")
    shards = max(1, -(-len(rows) // ROWS_PER_SHARD))
    with folder_written_whole(out) as tmp:
        (tmp / "data").mkdir()
        for index in range(shards):
            chunk = rows[index * ROWS_PER_SHARD:(index + 1) * ROWS_PER_SHARD]
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chunk)
            (tmp / "data" / f"test-{index:05d}-of-{shards:05d}.jsonl").write_text(lines, encoding="utf-8")
        (tmp / "README.md").write_text(card(dataset, rows), encoding="utf-8")
    summary.written, summary.shards = len(rows), shards
    return summary


def _size_category(n: int) -> str:
    return "n<1K" if n < 1000 else "1K<n<10K" if n < 10_000 else "10K<n<100K"


def card(dataset: Path, rows: list[dict[str, Any]]) -> str:
    name = dataset.resolve().name
    families = sorted({str(r["family"]) for r in rows})
    per_apps = {n: sum(1 for r in rows if r["app_count"] == n) for n in sorted({r["app_count"] for r in rows})}
    return f"""---
pretty_name: {json.dumps(name)}
license: mit
language:
- en
task_categories:
- question-answering
- text-generation
tags:
- agents
- long-context
- memory
- office
- tool-use
size_categories:
- {_size_category(len(rows))}
configs:
- config_name: default
  data_files:
  - split: test
    path: data/test-*.jsonl
---

# {name}

Long-horizon office-agent tasks made by homeragents: each row is one task, with a multi-day chat
history that carries its details, the office it happens in, and machine-checkable criteria.
{len(rows)} task(s) in {len(families)} famil{'y' if len(families) == 1 else 'ies'}; by app count:
{', '.join(f'{n} app(s): {c}' for n, c in per_apps.items()) or 'none'}.

## Columns

- `intent` (what the user asks, vague on purpose), `query` (the question retrieval starts from),
  `description` (the full task, every detail spelled out), `subtasks`;
- `dialogue` (JSON: the days, each with its turns; marked turns carry `evidence`, `superseded`
  or `distractor` with memory ids), `memory` (JSON: what the history establishes), `evaluation`
  (JSON: the criteria, in homeragents' catalog), `oracle` (JSON: a reference plan of tool calls);
- `testbed_zip` (the office, a base64 zip: `data/`, `emails/<user>/*.eml`, `calendar/<user>.ics`)
  and `testbed_files`; `reference_zip` / `reference_files` (a seed task's expected files, which its
  criteria compare against as `../reference/<name>`; empty for tasks without them);
- `record_rest` (JSON: the task record's fields no other column holds as they are, such as its
  provenance), so that `homer eval` on this folder runs the very tasks it was exported from.

## Loading

```python
import base64, io, json, zipfile
from datasets import load_dataset

tasks = load_dataset("path/to/this/folder", split="test")
task = tasks[0]
history = json.loads(task["dialogue"])
office = zipfile.ZipFile(io.BytesIO(base64.b64decode(task["testbed_zip"])))
office.extractall("task/testbed")
if task["reference_zip"]:
    zipfile.ZipFile(io.BytesIO(base64.b64decode(task["reference_zip"]))).extractall("task/reference")
```

Evaluate an agent on this folder as on the dataset it came from (`homer eval THIS_FOLDER --agent
... --out RUN`: the same tasks, the same scores and fingerprint), or score an agent's final office with
`homer score testbed --criteria criteria.json` (the `evaluation` column written to a file).
"""
