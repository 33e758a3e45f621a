"""Reading a stranger's file within a byte limit, checked before anything is parsed.

Every reader of testbed files (documents, mail, calendars, plain text) gets its bytes here: the
size on disk is checked against a limit of :mod:`office_env.limits` first, so a 5 GB "notes.txt"
costs one error line naming the file and the limit, not the machine's memory. The file is opened
without following a final symlink and without blocking (a FIFO swapped in cannot hang a reader)
and read no further than the limit, even if it grows while being read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from office_env.errors import CorruptFileError, MissingFileError, OfficeError
from office_env.limits import MAX_FILE_BYTES, MiB

# how a stranger's file and folder are opened: never through a final symlink, never blocking on a FIFO
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


def size_text(size: int) -> str:
    """``1.0 GiB``, ``64 MiB``, ``12 KiB``, ``300 bytes``: a size as people read it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def over_limit(label: str, what: str, size: int, limit: int) -> CorruptFileError:
    return CorruptFileError(f"{label}: {what} {size_text(size)}, over the {size_text(limit)} limit")


def check_size(path: Path, label: str, limit: int = MAX_FILE_BYTES) -> int:
    """The file's size on disk, or ``CorruptFileError`` when it is over ``limit``."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise MissingFileError(f"{label}: file does not exist") from None
    except OSError as exc:
        raise OfficeError(f"{label}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if size > limit:
        raise over_limit(label, "is", size, limit)
    return size


def read_bytes(path: str | os.PathLike[str], label: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """All bytes of a regular file of at most ``limit`` bytes; errors name the file."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise MissingFileError(f"{label}: file does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OfficeError(f"{label}: is a symlink; refused") from None
        raise OfficeError(f"{label}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = "a folder" if stat.S_ISDIR(st.st_mode) else "a special file"
            raise OfficeError(f"{label}: is {what}, not a regular file")
        if st.st_size > limit:
            raise over_limit(label, "is", st.st_size, limit)
        data = read_upto(fd, limit)
        if data is None:
            raise CorruptFileError(f"{label}: grew past the {size_text(limit)} limit while being read")
        return data
    except OSError as exc:
        raise OfficeError(f"{label}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    finally:
        os.close(fd)


def read_upto(fd: int, limit: int | None) -> bytes | None:
    """All bytes of an open file, or None as soon as more than ``limit`` arrive (a file can grow
    after its size was checked)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if limit is not None and total > limit:
            return None
        chunks.append(chunk)
