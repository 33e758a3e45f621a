"""Content hashes of every file in a testbed, and the difference between two of them.

Used to prove what an action changed (and what it must not have changed): a diff lists
added, removed and changed files with a summary a person can read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Snapshot:
    """Mapping of testbed-relative POSIX path to SHA-256 of the file's bytes."""

    files: dict[str, str]

    @classmethod
    def of(cls, root: Path) -> "Snapshot":
        files: dict[str, str] = {}
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        return cls(files)

    def diff(self, after: "Snapshot") -> "SnapshotDiff":
        before_keys, after_keys = set(self.files), set(after.files)
        changed = sorted(k for k in before_keys & after_keys if self.files[k] != after.files[k])
        return SnapshotDiff(
            added=sorted(after_keys - before_keys),
            removed=sorted(before_keys - after_keys),
            changed=changed,
        )


@dataclass(frozen=True)
class SnapshotDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        if self.empty:
            return "no files changed"
        lines = []
        for label, items in (("added", self.added), ("removed", self.removed), ("changed", self.changed)):
            for item in items:
                lines.append(f"{label}: {item}")
        counts = ", ".join(
            f"{len(items)} {label}"
            for label, items in (("added", self.added), ("removed", self.removed), ("changed", self.changed))
            if items
        )
        return counts + "\n" + "\n".join(lines)

    def to_dict(self) -> dict[str, list[str]]:
        return {"added": list(self.added), "removed": list(self.removed), "changed": list(self.changed)}
