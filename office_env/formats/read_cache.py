"""A small cache of parsed file contents, keyed by the file's identity and version.

The key is (device, inode, size, mtime): every write in this project replaces a file by rename
(new inode), so a changed file is never served from the cache, while the unchanged files of a
testbed -- and of its hard-linked scratch copies -- are parsed once. Only immutable results
(text, frozen records, read-only views, snapshots) are cached; errors are not. Besides the entry
count, the cache holds at most ``MAX_BYTES`` together (each entry weighs its file's size on disk,
or what ``weigh`` says of its value), so a testbed of large files from a stranger cannot pin
gigabytes of parsed text.

A writer that knows exactly what a file it has just written parses to (the old contents plus
what it added) may ``remember`` it, so the next read of that version costs nothing; one that knows
what its output's bytes parse to wherever they land may ``remember_content`` them.

Readers whose result depends on the file's bytes alone may also ask for it ``by_content``: a miss
then looks the bytes' SHA-256 up before parsing, so a file written again with the same bytes
under another inode (a replay repeating the steps of an earlier one, a new empty workbook) is
parsed once, not once per copy.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Callable, TypeVar

from office_env.errors import OfficeError
from office_env.formats.bounded import read_bytes

T = TypeVar("T")
MAX_ENTRIES = 512
MAX_BYTES = 256 * 1024 * 1024
MAX_HASHED_BYTES = 4 * 1024 * 1024  # larger files are parsed on each new inode rather than hashed
_CACHE: "OrderedDict[tuple, tuple[object, int]]" = OrderedDict()  # key -> (value, weight)
_BYTES = 0


def _key(kind: str, path: str | os.PathLike[str], st: os.stat_result | None = None) -> tuple:
    st = st if st is not None else os.stat(path)
    return (kind, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def cached_read(kind: str, path: str | os.PathLike[str], read: Callable[[], T],
                weigh: Callable[[T], int] | None = None, *, by_content: bool = False,
                st: os.stat_result | None = None) -> T:
    """What ``read()`` returns for this version of ``path``, read once; ``by_content``: the value
    depends on the bytes alone (not on the path), so an equal file elsewhere may supply it. ``st``:
    the file's status as a caller that just listed its folder saw it (a mailbox's thirty messages are
    then looked at once each, not twice)."""
    key = _key(kind, path, st)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key][0]  # type: ignore[return-value]  # what read() gave for this kind and file
    content = _content_key(kind, path, key[3]) if by_content else None
    if content is not None and content in _CACHE:
        _CACHE.move_to_end(content)
        value, weight = _CACHE[content]
        _store(key, value, weight)
        return value  # type: ignore[return-value]  # what read() gave for this kind and equal bytes
    value = read()
    weight = weigh(value) if weigh is not None else key[3]
    _store(key, value, weight)
    if content is not None:
        _store(content, value, weight)
    return value


def _content_key(kind: str, path: str | os.PathLike[str], size: int) -> tuple | None:
    if size > MAX_HASHED_BYTES:
        return None
    try:
        data = read_bytes(path, str(path), MAX_HASHED_BYTES)
    except OfficeError:
        return None
    if len(data) != size:  # changed since it was looked at: no key rather than a wrong one
        return None
    return _digest_key(kind, data)


def _digest_key(kind: str, data: bytes) -> tuple:
    return (kind, "sha256", hashlib.sha256(data).digest())


def remember(kind: str, path: Path, value: T, weight: Callable[[T], int] | None = None) -> None:
    """``value`` is what reading ``path`` as ``kind`` returns now (its writer knows it)."""
    key = _key(kind, path)
    _store(key, value, weight(value) if weight is not None else key[3])


def remember_content(kind: str, data: bytes, value: object, weight: int = 0) -> None:
    """``value`` is what reading any file holding exactly ``data`` as ``kind`` returns (a writer
    that knows its output's parse; only for readers asked ``by_content``). ``weight``: the value's
    size, when it may pass the file's (a compressed file's text)."""
    if len(data) <= MAX_HASHED_BYTES:
        _store(_digest_key(kind, data), value, max(len(data), weight))


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
