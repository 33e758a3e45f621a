"""A small cache of parsed file contents, keyed by the file's identity and version.

The key is (device, inode, size, mtime): every write in this project replaces a file by rename
(new inode), so a changed file is never served from the cache, while the unchanged files of a
testbed -- and of its hard-linked scratch copies -- are parsed once. Only immutable results
(text, frozen records, read-only views, snapshots) are cached; errors are not. Besides the entry
count, the cache holds at most ``MAX_BYTES`` together (each entry weighs its file's size on disk,
or what ``weigh`` says of its value), so a testbed of large files from a stranger cannot pin
gigabytes of parsed text.

A writer that knows exactly what a file it has just written parses to (the old contents plus
what it added) may ``remember`` it, so the next read of that version costs nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")
MAX_ENTRIES = 512
MAX_BYTES = 256 * 1024 * 1024
_CACHE: "OrderedDict[tuple, tuple[object, int]]" = OrderedDict()  # key -> (value, weight)
_BYTES = 0


def _key(kind: str, path: Path) -> tuple:
    st = path.stat()
    return (kind, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def cached_read(kind: str, path: Path, read: Callable[[], T], weigh: Callable[[T], int] | None = None) -> T:
    key = _key(kind, path)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key][0]  # type: ignore[return-value]
    value = read()
    _store(key, value, weigh(value) if weigh is not None else key[3])
    return value


def remember(kind: str, path: Path, value: object) -> None:
    """``value`` is what reading ``path`` as ``kind`` returns now (its writer knows it)."""
    key = _key(kind, path)
    _store(key, value, key[3])


def _store(key: tuple, value: object, weight: int) -> None:
    global _BYTES
    if key in _CACHE:
        _BYTES -= _CACHE.pop(key)[1]
    _CACHE[key] = (value, weight)
    _BYTES += weight
    while len(_CACHE) > 1 and (len(_CACHE) > MAX_ENTRIES or _BYTES > MAX_BYTES):
        _, (_, old_weight) = _CACHE.popitem(last=False)
        _BYTES -= old_weight


def clear() -> None:
    global _BYTES
    _CACHE.clear()
    _BYTES = 0
