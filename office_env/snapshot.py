"""Content hashes of every file in a testbed, and the difference between two of them.

Used to prove what an action changed (and what it must not have changed): a diff lists
added, removed and changed files with a summary a person can read.

Only regular files are hashed, found by the same walk that opens strangers' trees
(:func:`office_env.untrusted.scan_tree`): symlinks (to files or folders) are never read through,
and FIFOs, sockets and devices are skipped, because reading a FIFO blocks forever. Files are
opened without following links and hashed in chunks, so a large file costs time, not memory.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from office_env.untrusted import iter_files, scan_tree


@dataclass(frozen=True)
class Snapshot:
    """Mapping of testbed-relative POSIX path to SHA-256 of the file's bytes."""

    files: dict[str, str]

    @classmethod
    def of(cls, root: Path) -> "Snapshot":
        files: dict[str, str] = {}
        tree = scan_tree(root, check_links=False, max_file_bytes=None, max_total_bytes=None)
        if tree.refused:
            return cls(files)
        for entry, fd in iter_files(tree, check_links=False, skip_errors=True):
            digest = hashlib.sha256()
            while chunk := os.read(fd, 1 << 20):
                digest.update(chunk)
            files[entry.rel] = digest.hexdigest()
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
