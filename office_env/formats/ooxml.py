"""Make Office Open XML packages (docx, xlsx) byte-for-byte reproducible, cheaply.

python-docx and openpyxl write each package part with ``ZipFile.writestr(name, data)`` (openpyxl's
worksheets with ``ZipFile.write(tempfile, name)``, or of the buffer ``xlsx_io`` gives it instead),
which stamp the entry with the clock; openpyxl also writes the save time into
``docProps/core.xml``. While ``reproducible_zip`` is active, those calls get a fixed entry time,
fixed core-property dates and fast (level 1) deflate, so the package is written once, already
reproducible, instead of being re-zipped afterwards. The patch is process-wide for the duration of
one save, so a lock serialises saves. Most parts of a package are the same bytes save after save
(a theme, the styles, a workbook's part, all of a new document but its body), so their deflated
bytes are kept (``MAX_KEPT_PARTS`` parts of at most ``MAX_KEPT_PART_BYTES`` each, by their bytes)
and deflate runs only for parts not seen lately.

Reading goes through :func:`open_package` (and :func:`stored_copy` for parsers that read whole
members): a package from a stranger may be a zip bomb, so its directory is checked against the
package limits of :mod:`office_env.limits` before any member is inflated -- the entry count from
the end record (before ``ZipFile`` builds one object per entry), then each member's compression
method, declared size and ratio. ``ZipExtFile.read()`` with no size inflates up to 1 GiB in one
step before cutting the result at the declared size, so a member that declares 1 KiB but holds
1 GiB would still cost 1 GiB; members are therefore read in bounded chunks (:func:`read_member`),
where each inflate step is bounded by the chunk size and the total by the declared size, and the
parsers that read members whole get a copy re-packed without compression.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
import zlib
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from office_env.errors import CorruptFileError
from office_env.formats.bounded import over_limit, read_bytes, size_text
from office_env.formats.built import Kept
from office_env.limits import MAX_PACKAGE_MEMBERS, MAX_PACKAGE_RATIO, MAX_PACKAGE_UNCOMPRESSED, MiB

DEFAULT_STAMP = datetime(2020, 1, 1, 9, 0, 0)
LEVEL = 1  # the deflate level of every part written while reproducible_zip is active

_CORE_TIME_RE = re.compile(
    rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms:(?:created|modified)>)"
)
_LOCK = threading.Lock()
_ORIGINAL_WRITESTR = zipfile.ZipFile.writestr
_ORIGINAL_WRITE = zipfile.ZipFile.write
# how zipfile gives a member being written its compressor (looked up on each member)
_ORIGINAL_GET_COMPRESSOR = zipfile._get_compressor  # type: ignore[attr-defined]

MAX_KEPT_PARTS = 128
MAX_KEPT_PART_BYTES = 64 * 1024  # a larger part (a big sheet: written once) is deflated every time
_DEFLATED: Kept[bytes] = Kept(MAX_KEPT_PARTS)


def _deflate(data: bytes) -> bytes:
    """``data`` as a level-``LEVEL`` raw deflate stream, as zipfile makes a member's."""
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


class _KeptDeflate:
    """The compressor zipfile gets for a level-``LEVEL`` deflated member while ``reproducible_zip``
    is active: it takes the member's bytes and gives their whole deflate stream at ``flush``, the
    one kept for the same bytes if any (a deflate stream is the same whichever pieces its input
    came in; tests compare with zlib's own over packages and pieces)."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []

    def compress(self, data: bytes) -> bytes:
        self._pieces.append(bytes(data))
        return b""

    def flush(self) -> bytes:
        data = b"".join(self._pieces)
        self._pieces = []
        if len(data) > MAX_KEPT_PART_BYTES:
            return _deflate(data)
        return _DEFLATED.get(data, lambda: _deflate(data))


def _kept_compressor(compress_type: int, compresslevel: int | None = None) -> Any:
    if compress_type == zipfile.ZIP_DEFLATED and compresslevel == LEVEL:
        return _KeptDeflate()
    return _ORIGINAL_GET_COMPRESSOR(compress_type, compresslevel)


@contextmanager
def reproducible_zip(stamp: datetime | None = None) -> Iterator[None]:
    when = (stamp or DEFAULT_STAMP).replace(tzinfo=None, microsecond=0)
    iso = when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    date_time = (max(when.year, 1980), when.month, when.day, when.hour, when.minute, when.second)

    def writestr(self, zinfo_or_arcname, data, compress_type=None, compresslevel=None):
        name = zinfo_or_arcname if isinstance(zinfo_or_arcname, str) else zinfo_or_arcname.filename
        if name == "docProps/core.xml":
            raw = data.encode("utf-8") if isinstance(data, str) else data
            data = _CORE_TIME_RE.sub(lambda m: m.group(1) + iso + m.group(2), raw)
        entry = zipfile.ZipInfo(name, date_time=date_time)
        entry.compress_type = zipfile.ZIP_DEFLATED
        entry.external_attr = 0o644 << 16
        return _ORIGINAL_WRITESTR(self, entry, data, zipfile.ZIP_DEFLATED, LEVEL)

    def write(self, filename, arcname=None, compress_type=None, compresslevel=None):
        # openpyxl streams worksheets through a temporary file (or the buffer xlsx_io gives it
        # instead); a file's mtime must not leak in.
        if isinstance(filename, io.BytesIO):
            data = filename.getvalue()
        else:
            with open(filename, "rb") as handle:
                data = handle.read()
        return writestr(self, arcname or str(filename).replace("\\", "/").rsplit("/", 1)[-1], data)

    with _LOCK:
        zipfile.ZipFile.writestr = writestr  # type: ignore[method-assign]  # patched inside the lock
        zipfile.ZipFile.write = write  # type: ignore[method-assign]  # patched inside the lock
        zipfile._get_compressor = _kept_compressor  # type: ignore[attr-defined]  # patched inside the lock
        try:
            yield
        finally:
            zipfile.ZipFile.writestr = _ORIGINAL_WRITESTR  # type: ignore[method-assign]  # patched inside the lock
            zipfile.ZipFile.write = _ORIGINAL_WRITE  # type: ignore[method-assign]  # patched inside the lock
            zipfile._get_compressor = _ORIGINAL_GET_COMPRESSOR  # type: ignore[attr-defined]  # patched inside the lock


# -- reading packages from strangers ---------------------------------------------------------

_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_MAX_DIRECTORY_BYTES = MAX_PACKAGE_MEMBERS * 1024  # a central directory entry is 46 bytes plus its name
_RATIO_FLOOR = MiB                                 # small members may compress as well as they like
_CHUNK = 1 << 20
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def _end_record(data: bytes) -> tuple[int, int] | None:
    """(entries, directory bytes) from the end-of-central-directory record (zip64 aware), or
    ``None`` when there is none; ``ZipFile`` then says why the bytes are not a zip."""
    at = data.rfind(_EOCD, max(0, len(data) - (0xFFFF + 22)))
    if at < 0 or at + 22 > len(data):
        return None
    entries = int.from_bytes(data[at + 10:at + 12], "little")
    directory = int.from_bytes(data[at + 12:at + 16], "little")
    locator = at - 20
    if locator >= 0 and data[locator:locator + 4] == _EOCD64_LOCATOR:
        offset = int.from_bytes(data[locator + 8:locator + 16], "little")
        if data[offset:offset + 4] == _EOCD64 and offset + 48 <= len(data):
            entries = max(entries, int.from_bytes(data[offset + 32:offset + 40], "little"))
            directory = max(directory, int.from_bytes(data[offset + 40:offset + 48], "little"))
    return entries, directory


def check_directory(package: zipfile.ZipFile, label: str) -> None:
    """Refuse a package whose directory promises more than the package limits allow."""
    members = package.infolist()
    if len(members) > MAX_PACKAGE_MEMBERS:
        raise CorruptFileError(f"{label}: holds {len(members):,} parts, over the {MAX_PACKAGE_MEMBERS:,}-part limit")
    for info in members:
        if info.compress_type not in _METHODS:
            raise CorruptFileError(f"{label}: part {info.filename!r} uses zip compression method "
                                   f"{info.compress_type}; only stored and deflated parts are read")
        if info.flag_bits & 0x1:
            raise CorruptFileError(f"{label}: part {info.filename!r} is encrypted")
    total = sum(info.file_size for info in members)
    if total > MAX_PACKAGE_UNCOMPRESSED:
        raise over_limit(label, "unpacks to", total, MAX_PACKAGE_UNCOMPRESSED)
    for info in members:
        if info.file_size > _RATIO_FLOOR and info.file_size > MAX_PACKAGE_RATIO * max(info.compress_size, 1):
            ratio = info.file_size / max(info.compress_size, 1)
            raise CorruptFileError(f"{label}: part {info.filename!r} unpacks {ratio:,.0f} times its packed size "
                                   f"({size_text(info.file_size)}), over the {MAX_PACKAGE_RATIO}x limit")


def open_package(path: Path, label: str, kind: str) -> zipfile.ZipFile:
    """The checked package at ``path``; ``kind`` (``Word (.docx)``) names the format in errors."""
    return package_of(read_bytes(path, label), label, kind)


def package_of(data: bytes, label: str, kind: str) -> zipfile.ZipFile:
    """The checked package of a file's bytes (see :func:`open_package`)."""
    end = _end_record(data)
    if end is not None:
        entries, directory = end
        if entries > MAX_PACKAGE_MEMBERS:
            raise CorruptFileError(f"{label}: holds {entries:,} parts, over the {MAX_PACKAGE_MEMBERS:,}-part limit")
        if directory > _MAX_DIRECTORY_BYTES:
            raise over_limit(label, "has a zip directory of", directory, _MAX_DIRECTORY_BYTES)
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:  # BadZipFile, and struct or value errors from damaged records
        raise CorruptFileError(f"{label}: not a readable {kind} file ({type(exc).__name__})") from None
    try:
        check_directory(package, label)
    except BaseException:
        package.close()
        raise
    return package


def read_member(package: zipfile.ZipFile, name: str | zipfile.ZipInfo) -> bytes:
    """One member, inflated in bounded steps and never past its declared (checked) size."""
    chunks: list[bytes] = []
    with package.open(name) as stream:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def stored_copy(path: Path, label: str, kind: str) -> io.BytesIO:
    """The checked package re-packed without compression, for parsers that read members whole
    (python-docx, openpyxl): reading a stored member inflates nothing."""
    return stored_copy_of(read_bytes(path, label), label, kind)


def stored_copy_of(data: bytes, label: str, kind: str) -> io.BytesIO:
    """:func:`stored_copy` of a file's bytes."""
    with package_of(data, label, kind) as package:
        out = io.BytesIO()
        try:
            with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
                for info in package.infolist():
                    if package.NameToInfo.get(info.filename) is not info:
                        continue  # a repeated name: zipfile reads the last one, so does the copy
                    entry = zipfile.ZipInfo(info.filename, date_time=DEFAULT_STAMP.timetuple()[:6])
                    entry.external_attr = 0o644 << 16
                    _ORIGINAL_WRITESTR(copy, entry, read_member(package, info), zipfile.ZIP_STORED)
        except CorruptFileError:
            raise
        except Exception as exc:  # bad CRC, truncated data, inflate errors
            raise CorruptFileError(f"{label}: not a readable {kind} file ({type(exc).__name__})") from None
    out.seek(0)
    return out
