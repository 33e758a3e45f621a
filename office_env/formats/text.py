"""Text that office files can hold, checked before a writer sees it.

Word and Excel files are XML 1.0, which cannot hold most C0 control characters (``\\x0b``,
``\\x01``, ...), U+FFFE or U+FFFF: python-docx and openpyxl raise deep inside a save. A mail
subject or an event title is one header line: a line break in it would start a new header (header
injection), and Python's ``email`` folds long headers in quadratic time. Each check raises an
``OfficeError`` naming the argument and the character's position; nothing is silently changed,
because which replacement a user meant is a guess.
"""

from __future__ import annotations

import re

from office_env.errors import OfficeError
from office_env.limits import MAX_HEADER_CHARS

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# Everything str.splitlines() or a header parser treats as a line break, and other C0/C1 controls.
_NOT_ONE_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
_SHEET_TITLE_ILLEGAL = re.compile(r"[\\*?:/\[\]]")
MAX_SHEET_TITLE_CHARS = 31


def character(ch: str) -> str:
    """``U+000B`` and, for printable characters, the character itself."""
    code = f"U+{ord(ch):04X}"
    return code if not ch.isprintable() else f"{ch!r} ({code})"


def check_xml_text(text: str, field: str, holder: str) -> None:
    """Refuse characters an XML 1.0 file cannot hold; ``holder`` says which (``a Word document``)."""
    found = _XML_ILLEGAL.search(text)
    if found:
        raise OfficeError(f"{field}: contains the control character {character(found.group())} at position "
                          f"{found.start()}, which {holder} cannot hold")


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold: for text taken from another file
    (a PDF's extracted text), where they are noise, not something a user typed."""
    return _XML_ILLEGAL.sub("", text)


def check_line(text: str, field: str, limit: int = MAX_HEADER_CHARS) -> None:
    """Refuse a header value that is not one line of at most ``limit`` characters."""
    if len(text) > limit:
        raise OfficeError(f"{field}: {len(text):,} characters, over the {limit:,}-character limit")
    found = _NOT_ONE_LINE.search(text)
    if found:
        what = "a line break" if found.group() in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029" else "a control character"
        raise OfficeError(f"{field}: contains {what} ({character(found.group())}) at position {found.start()}; "
                          "it must be one line")


def check_sheet_title(title: str, field: str) -> None:
    """Excel's rules for a sheet name: 1-31 characters, none of \\ * ? : / [ ]."""
    if not title.strip():
        raise OfficeError(f"{field}: a sheet name cannot be empty")
    if len(title) > MAX_SHEET_TITLE_CHARS:
        raise OfficeError(f"{field}: {len(title)} characters, over Excel's {MAX_SHEET_TITLE_CHARS}-character "
                          "limit for a sheet name")
    found = _SHEET_TITLE_ILLEGAL.search(title)
    if found:
        raise OfficeError(f"{field}: a sheet name cannot contain {found.group()!r} (none of \\ * ? : / [ ])")
    check_line(title, field)
