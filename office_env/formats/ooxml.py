"""Make Office Open XML packages (docx, xlsx) byte-for-byte reproducible, cheaply.

python-docx and openpyxl write each package part with ``ZipFile.writestr(name, data)`` (openpyxl's
worksheets with ``ZipFile.write(tempfile, name)``), which stamp the entry with the clock; openpyxl also writes the save time into
``docProps/core.xml``. While ``reproducible_zip`` is active, those calls get a fixed entry time,
fixed core-property dates and fast (level 1) deflate, so the package is written once, already
reproducible, instead of being re-zipped afterwards. The patch is process-wide for the duration
of one save, so a lock serialises saves.
"""

from __future__ import annotations

import re
import threading
import zipfile
from contextlib import contextmanager
from datetime import datetime
from typing import Iterator

DEFAULT_STAMP = datetime(2020, 1, 1, 9, 0, 0)

_CORE_TIME_RE = re.compile(
    rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms:(?:created|modified)>)"
)
_LOCK = threading.Lock()
_ORIGINAL_WRITESTR = zipfile.ZipFile.writestr
_ORIGINAL_WRITE = zipfile.ZipFile.write


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
        return _ORIGINAL_WRITESTR(self, entry, data, zipfile.ZIP_DEFLATED, 1)

    def write(self, filename, arcname=None, compress_type=None, compresslevel=None):
        # openpyxl streams worksheets through a temporary file; its mtime must not leak in.
        with open(filename, "rb") as handle:
            data = handle.read()
        return writestr(self, arcname or str(filename).replace("\\", "/").rsplit("/", 1)[-1], data)

    with _LOCK:
        zipfile.ZipFile.writestr = writestr  # type: ignore[method-assign]
        zipfile.ZipFile.write = write  # type: ignore[method-assign]
        try:
            yield
        finally:
            zipfile.ZipFile.writestr = _ORIGINAL_WRITESTR  # type: ignore[method-assign]
            zipfile.ZipFile.write = _ORIGINAL_WRITE  # type: ignore[method-assign]
