"""What a build's parent keeps of each task it may keep (its card figures and index line), in a file.

The workers send each accepted task's figures with its outcome, so the build's finish sums them
instead of reading every task back. Held in a dictionary, they cost the parent about 1.3 KB a task
(some 130 MB for a 100,000-task build); here they are appended to a file (in memory until it
passes :data:`IN_MEMORY_BYTES`, then under the build's work folder) and only where each one lies
is kept: a few numbers a task.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import IO

IN_MEMORY_BYTES = 4 << 20


class FigureLog:
    """Per attempt index, its card figures and index line (both JSON text), as they come."""

    def __init__(self, folder: Path | None = None) -> None:
        self._file: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES,
                                                              dir=None if folder is None else str(folder))
        self._where: dict[int, tuple[int, int, int]] = {}  # index -> (offset, card bytes, line bytes)
        self._end = 0

    def __contains__(self, index: int) -> bool:
        return index in self._where

    def __len__(self) -> int:
        return len(self._where)

    def add(self, index: int, card: str, line: str) -> None:
        """Keep ``index``'s figures (the first ones given: a later add of the same index is ignored)."""
        if index in self._where:
            return
        card_bytes, line_bytes = card.encode("utf-8"), line.encode("utf-8")
        self._file.seek(self._end)
        self._file.write(card_bytes)
        self._file.write(line_bytes)
        self._where[index] = (self._end, len(card_bytes), len(line_bytes))
        self._end += len(card_bytes) + len(line_bytes)

    def get(self, index: int) -> tuple[str, str] | None:
        """``(card, line)`` of ``index``, or None when none was added."""
        found = self._where.get(index)
        if found is None:
            return None
        offset, card_size, line_size = found
        self._file.seek(offset)
        data = self._file.read(card_size + line_size)
        return data[:card_size].decode("utf-8"), data[card_size:].decode("utf-8")

    def close(self) -> None:
        self._file.close()
