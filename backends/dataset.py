"""Reading a dataset folder (``tasks/<id>/task.json`` + ``testbed/`` + ``reference/``).

Shared by everything that consumes datasets -- the harness, ``homer verify``/``stats``/``export``
-- so it sits below them; writing datasets is the orchestrator's (``orchestrator.dataset``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

TASKS = "tasks"


def ensure_writable_folder(out: Path) -> None:
    """Create ``out`` if needed and prove it takes files (raises ``OSError`` otherwise)."""
    out.mkdir(parents=True, exist_ok=True)
    probe = out / ".write-test"
    probe.write_bytes(b"")
    probe.unlink()


def task_now(record: dict[str, Any]) -> datetime:
    """The simulated "now" of a task record."""
    return datetime.strptime(f"{record['now']['date']} {record['now']['time']}", "%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class LoadedTask:
    id: str
    folder: Path
    record: dict[str, Any] | None
    error: str | None = None

    @property
    def testbed(self) -> Path:
        return self.folder / "testbed"

    @property
    def reference(self) -> Path | None:
        ref = self.folder / "reference"
        return ref if ref.is_dir() else None


def iter_tasks(out: Path) -> Iterator[LoadedTask]:
    """Every task folder, sorted by id; an unreadable task.json is reported, not raised."""
    root = out / TASKS
    if not root.is_dir():
        return
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        path = folder / "task.json"
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(record, dict):
                raise ValueError("top level is not an object")
            yield LoadedTask(folder.name, folder, record)
        except FileNotFoundError:
            yield LoadedTask(folder.name, folder, None, f"{path}: missing")
        except (UnicodeDecodeError, ValueError) as exc:
            where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            yield LoadedTask(folder.name, folder, None, f"{path}: not valid JSON{where} ({exc.__class__.__name__})")


