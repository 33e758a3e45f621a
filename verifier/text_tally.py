"""How many tasks of a dataset say each text, counted in bounded memory.

The ``unique_user_turn`` detector and the text statistics (``verifier.gameability``) need, for every
distinct text of a dataset, how many tasks say it. A table of the texts grows with the dataset
(about 300 distinct texts a Neo task): a build of 100,000 tasks would hold gigabytes. Instead each
task gives its rows (:func:`task_rows`, made where the task is made: per distinct text a digest
and three counts, sorted by digest), appended to a file as tasks come (:class:`TextTally`); the
totals are counted at the end over parts of the digests' range, one part at a time, each small
enough to count in memory. A 16-byte digest stands for a text: two texts share one with a
chance no dataset comes near.
"""

from __future__ import annotations

import hashlib
import struct
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

# a distinct text of a task: its digest; its turns; its user turns; its user turns marked as evidence
ROW = struct.Struct("<16sIII")
_HEAD = struct.Struct("<QI")  # before a task's rows: its key and how many rows
PART_BYTES = 4 << 20  # rows counted at once (about 150,000, some 20 MiB to sort): the same for any dataset's size
MAX_PARTS = 256  # files open at once while the rows are split (past 1 GiB of rows the parts grow instead)


_EMPTY_DIGEST = hashlib.blake2b(digest_size=16)  # copied for each text: a third cheaper than a new hash object


def text_digest(text: str) -> bytes:
    """The 16-byte BLAKE2b digest of ``text`` (UTF-8) that stands for it in the rows."""
    digest = _EMPTY_DIGEST.copy()
    digest.update(text.encode("utf-8"))
    return digest.digest()


def task_rows(texts: list[str], user: Collection[int], user_evidence: Collection[int]) -> bytes:
    """One task's rows: ``texts`` its turns' texts in order, ``user`` and ``user_evidence`` the
    positions of its user turns and of those that are evidence turns."""
    counts: dict[str, list[int]] = {}
    for text in texts:
        counts.setdefault(text, [0, 0, 0])[0] += 1
    evidence = set(user_evidence)
    for position in user:
        found = counts[texts[position]]
        found[1] += 1
        found[2] += position in evidence
    rows = sorted((text_digest(text), *found) for text, found in counts.items())
    return b"".join(ROW.pack(*row) for row in rows)


@dataclass
class TextTotals:
    """What a dataset's texts add up to (over the tasks counted)."""

    distinct: int = 0  # distinct texts
    shared_turns: int = 0  # turns whose text another task says too
    unique_user_turns: int = 0  # user turns whose text no other task says
    unique_user_evidence: int = 0  # of those, the turns marked as evidence

    def add(self, other: TextTotals) -> None:
        self.distinct += other.distinct
        self.shared_turns += other.shared_turns
        self.unique_user_turns += other.unique_user_turns
        self.unique_user_evidence += other.unique_user_evidence


def _table(rows: bytes | bytearray) -> Any:
    """Rows as a numpy table (loaded here: a worker that only makes rows needs none); the digest
    read as two big-endian numbers, whose order is the bytes' order."""
    import numpy as np

    return np.frombuffer(rows, dtype=np.dtype([("high", ">u8"), ("low", ">u8"), ("turns", "<u4"), ("users", "<u4"),
                                                ("evidence", "<u4")]))


def count_rows(rows: bytes | bytearray) -> TextTotals:
    """The totals of rows of different tasks (every row of a text that any of them holds)."""
    import numpy as np

    table = _table(rows)
    if not len(table):
        return TextTotals()
    table = table[np.lexsort((table["low"], table["high"]))]
    starts = np.flatnonzero(np.concatenate(([True], (table["high"][1:] != table["high"][:-1])
                                            | (table["low"][1:] != table["low"][:-1]))))
    tasks: Any = np.diff(np.append(starts, len(table)))  # a task has a text once: its rows are its tasks
    shared = tasks > 1

    def summed(column: str, where: Any) -> int:
        return int(np.add.reduceat(table[column].astype(np.int64), starts)[where].sum())

    return TextTotals(distinct=len(starts), shared_turns=summed("turns", shared),
                      unique_user_turns=summed("users", ~shared), unique_user_evidence=summed("evidence", ~shared))


class TextTally:
    """Tasks' rows as they come, in a file (in memory until it passes :data:`PART_BYTES`; under
    ``folder``, or the temporary folder), and their totals over the tasks that count."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._file: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=PART_BYTES,
                                                              dir=None if folder is None else str(folder))
        self.size = 0  # bytes of rows, heads left out

    def add(self, key: int, rows: bytes) -> None:
        if len(rows) % ROW.size:
            raise ValueError(f"task {key}: text rows of {len(rows)} bytes, not a whole number of rows")
        self._file.write(_HEAD.pack(key, len(rows) // ROW.size))
        self._file.write(rows)
        self.size += len(rows)

    def close(self) -> None:
        self._file.close()

    def _tasks(self, keys: Collection[int] | None) -> Iterator[bytes]:
        """The rows of each task added, in the order they were, of those in ``keys`` (all: None)."""
        self._file.seek(0)
        while head := self._file.read(_HEAD.size):
            key, count = _HEAD.unpack(head)
            rows = self._file.read(count * ROW.size)
            if keys is None or key in keys:
                yield rows

    def totals(self, keys: Collection[int] | None = None) -> TextTotals:
        """The totals of the tasks whose key is in ``keys`` (every task added: None). The rows
        are split by digest into parts of about :data:`PART_BYTES` (a task's rows are sorted, so
        its share of a part is one slice of them) and each part is counted alone."""
        parts = min(MAX_PARTS, -(-self.size // PART_BYTES)) or 1
        if parts == 1:
            return count_rows(b"".join(self._tasks(keys)))
        import numpy as np

        bounds = np.array([part * 2**64 // parts for part in range(1, parts)], dtype=np.uint64)
        files = [tempfile.TemporaryFile(dir=self.folder) for _ in range(parts)]
        try:
            for rows in self._tasks(keys):
                found: Any = np.searchsorted(_table(rows)["high"], bounds)  # where each part starts
                cuts = [0, *found.tolist(), len(rows) // ROW.size]
                for file, start, end in zip(files, cuts, cuts[1:]):
                    if end > start:
                        file.write(rows[start * ROW.size:end * ROW.size])
            totals = TextTotals()
            for file in files:
                file.seek(0)
                totals.add(count_rows(file.read()))
            return totals
        finally:
            for file in files:
                file.close()

