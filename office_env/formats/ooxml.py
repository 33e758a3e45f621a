"""Make Office Open XML packages (docx, xlsx) byte-for-byte reproducible.

Both python-docx and openpyxl stamp zip entries with the wall clock and openpyxl also writes
the save time into ``docProps/core.xml``. We rewrite the package with a fixed stamp.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import datetime

DEFAULT_STAMP = datetime(2020, 1, 1, 9, 0, 0)

_CORE_TIME_RE = re.compile(
    rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms:(?:created|modified)>)"
)


def normalize_package(data: bytes, stamp: datetime | None = None) -> bytes:
    """Return ``data`` re-zipped with fixed entry times and fixed core-property dates."""
    when = (stamp or DEFAULT_STAMP).replace(tzinfo=None, microsecond=0)
    iso = when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    date_time = (max(when.year, 1980), when.month, when.day, when.hour, when.minute, when.second)
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            payload = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                payload = _CORE_TIME_RE.sub(lambda m: m.group(1) + iso + m.group(2), payload)
            entry = zipfile.ZipInfo(info.filename, date_time=date_time)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            dst.writestr(entry, payload)
    return out.getvalue()
