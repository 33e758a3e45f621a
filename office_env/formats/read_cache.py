"""A small cache of parsed file contents, keyed by the file's identity and version.

The key is (device, inode, size, mtime): every write in this project replaces a file by rename
(new inode), so a changed file is never served from the cache, while the unchanged files of a
testbed -- and of its hard-linked scratch copies -- are parsed once. Only immutable results
(text, frozen records, read-only views) are cached; errors are not. Besides the entry count, the
cache holds files of at most ``MAX_BYTES`` on disk together, so a testbed of large files from a
stranger cannot pin gigabytes of parsed text.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")
MAX_ENTRIES = 512
MAX_BYTES = 256 * 1024 * 1024
_CACHE: "OrderedDict[tuple, object]" = OrderedDict()
_BYTES = 0


def cached_read(kind: str, path: Path, read: Callable[[], T]) -> T:
    global _BYTES
    st = path.stat()
    key = (kind, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]  # type: ignore[return-value]
    value = read()
    _CACHE[key] = value
    _BYTES += st.st_size
    while len(_CACHE) > 1 and (len(_CACHE) > MAX_ENTRIES or _BYTES > MAX_BYTES):
        old, _ = _CACHE.popitem(last=False)
        _BYTES -= old[3]
    return value


def clear() -> None:
    global _BYTES
    _CACHE.clear()
    _BYTES = 0
