"""OfficeBench's own verdicts, reproduced without running its code (``--semantics officebench``).

Homer's checks deliberately differ from OfficeBench's evaluator in a few places (the README's
scoring-semantics table lists them); to compare with published numbers, this module scores a
testbed the way OfficeBench's ``utils/evaluate.py`` does:

- keywords are plain substrings of the lower-cased text, commas removed only when the keyword is
  a number (``12`` is found inside ``2012``); a keyword that is not a string crashes there;
- a Word file is its paragraphs joined by line breaks (tables unread); an ics or txt file its raw
  bytes (folded lines stay folded); a sheet the active sheet as ``(row, col): value\\t`` cells,
  and only a file named ``.xlsx`` (or another name openpyxl accepts) is opened as one;
- ``evaluate_excel_cell_value`` is a substring of that text (``(2, 3): 10`` is found in
  ``(2, 3): 100``); ``evaluate_excel_cell_comparator`` reads the cell with ``(\\w+)\\t`` (no
  spaces, dots or signs) and applies only OfficeBench's ``lambda x: ...`` form (homer's ``> 100``
  is a syntax error there);
- ``evaluate_exact_match`` on Word or PDF compares document objects, which are never equal;
  ``docx`` is unknown to it; sheets are compared cell by cell on the active sheets;
- ``evaluate_diff_contain_text`` knows ``xlsx`` and ``doc`` only and matches keywords with case;
- ``evaluate_calendar_no_overlap`` crashes on all-day events, on events without DTEND (DURATION)
  and on a missing calendar;
- a mailbox is found by exact or lower-case name only;
- homer's own checks (``evaluate_answer``, ``evaluate_calendar_event``, ...) do not exist there.

Every crash of OfficeBench's code counts as a failure, as its ``evaluation.py`` counts it. Files
are still read through homer's guarded readers (sizes, zip bombs, paths inside the testbed).
"""

from __future__ import annotations

import codecs
import difflib
import math
import os
import re
from datetime import date, datetime, timezone
from email import policy
from email.parser import BytesParser
from typing import Any, Callable

from office_env.errors import OfficeError
from office_env.evaluation import SEMANTICS
from office_env.evaluation import comparator as comparators
from office_env.evaluation.catalog import CriterionResult, EvaluationReport, InvalidCriteria, validate_criteria
from office_env.evaluation.checks import Context
from office_env.evaluation.content import read_plain
from office_env.formats import docx_io, ics_io, pdf_io, xlsx_io
from office_env.formats.bounded import read_bytes
from office_env.limits import MAX_MAIL_BYTES, MAX_RENDER_CELLS, MAX_TEXT_CHARS
from office_env.workspace import CALENDAR_DIR, EMAILS_DIR, Workspace


class _Crash(Exception):
    """Where OfficeBench's evaluator raises: the criterion fails."""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _contain_text(content: str, keywords: list[Any]) -> bool:
    content = content.lower()
    for keyword in keywords:
        if not isinstance(keyword, str):
            raise _Crash(f"keyword {keyword!r} is not a string")
        keyword = keyword.lower()
        if _is_number(keyword):
            content = content.replace(",", "")
        if keyword not in content:
            return False
    return True


_OPENPYXL_SUFFIXES = (".xlsx", ".xlsm", ".xltx", ".xltm")  # openpyxl refuses a file named otherwise


def _sheet_text(ctx: Context, relpath: str, field: str) -> str:
    path = ctx.path(relpath, field)
    if not path.name.lower().endswith(_OPENPYXL_SUFFIXES):
        raise _Crash(f"openpyxl does not open {path.suffix or 'extension-less'} files")
    sheet = xlsx_io.load(path, relpath).active
    # it lists every cell of the used range: a range claiming millions of cells is refused here
    # (it would exhaust the machine there), as is a listing past the text limit
    if sheet.max_row * sheet.max_column > MAX_RENDER_CELLS:
        raise OfficeError(f"{relpath}: a used range of {sheet.max_row:,} x {sheet.max_column:,} cells, over the "
                          f"{MAX_RENDER_CELLS:,} cells a listing may hold")
    lines, chars = [], 0
    for row in sheet.iter_rows():
        cells = "".join(f"({c.row}, {c.column}): {'[Empty Cell]' if c.value is None else c.value}\t" for c in row)
        chars += len(cells) + 1
        if chars > MAX_TEXT_CHARS:
            raise OfficeError(f"{relpath}: its cell listing passes {MAX_TEXT_CHARS:,} characters (the text limit)")
        lines.append(cells + "\n")
    return "".join(lines)


def _word_text(ctx: Context, relpath: str, field: str) -> str:
    return "\n".join(p.text for p in docx_io.load(ctx.path(relpath, field), relpath).paragraphs)


_LIST_FAILED = "Error: Failed to list emails."


# charsets whose decoder takes time quadratic in the text: a stranger's mail is refused, not decoded
_SLOW_CHARSETS = frozenset({"punycode", "idna"})


def _decoded(part: Any) -> str:
    charset = part.get_content_charset()
    if charset is not None and codecs.lookup(charset).name in _SLOW_CHARSETS:
        raise _Crash(f"charset {charset!r} is refused here (its decoder is quadratic)")
    return part.get_payload(decode=True).decode(charset, errors="replace")


def _mail_content(message: Any) -> str:
    """OfficeBench's ``get_email_content``: the direct text/plain and text/html parts (an
    attachment too; a body nested deeper is not read), each decoded with its declared charset."""
    if message.is_multipart():
        return "\n".join(_decoded(part) for part in message.iter_parts()
                         if part.get_content_type() in ("text/plain", "text/html"))
    return _decoded(message)


def _listing(ws: Workspace, name: str) -> str:
    """OfficeBench's ``list_emails`` of a mailbox folder: every ``*.eml`` entry not starting with a
    dot (case-sensitive); one entry it cannot open or decode (a folder named ``x.eml``, a text part
    without a charset) fails the whole listing, as its catch-all does (any exception there). A
    listing past the text limit fails too (bounded work on a stranger's mailbox)."""
    folder = ws.resolve(f"{EMAILS_DIR}/{name}", field="username")
    entries = sorted(e for e in os.listdir(folder) if e.endswith(".eml") and not e.startswith("."))
    out, chars = [], 0
    try:
        for entry in entries:
            data = read_bytes(folder / entry, f"{EMAILS_DIR}/{name}/{entry}", MAX_MAIL_BYTES)
            message = BytesParser(policy=policy.default).parsebytes(data)
            text = (f"Email ID: {entry}\nFrom: {message['From']}\nTo: {message['To']}\n"
                    f"Subject: {message['Subject']}\nContent: {_mail_content(message)}\n" + "-" * 50 + "\n")
            chars += len(text)
            if chars > MAX_TEXT_CHARS:
                return _LIST_FAILED
            out.append(text)
    except Exception:  # noqa: BLE001 - its listing catches every exception and says it failed
        return _LIST_FAILED
    return "".join(out) or "No emails found."


def _mailbox_text(ws: Workspace, username: str) -> str:
    ws.check_user(username, field="username")  # a name, never a path
    folder = ws.root / EMAILS_DIR
    for name in (username, username.lower()):
        if (folder / name).is_dir():
            return _listing(ws, name)
    raise _Crash(f"no mailbox named {username!r} or {username.lower()!r}")  # its fallback loop is broken


# the doc types OfficeBench's own evaluate.py reads as raw text: its code's, not the registry's plain_text apps
_RAW_TEXT = ("txt", "ics")


def _text_mode(path: Any, label: str) -> str:
    """``open(path).read()``: the text with universal newlines (CRLF and CR read as LF)."""
    return read_plain(path, label).replace("\r\n", "\n").replace("\r", "\n")


def _reader(ctx: Context, doc_type: str, relpath: str, field: str) -> str:
    path = ctx.path(relpath, field)
    if doc_type == "xlsx":
        return _sheet_text(ctx, relpath, field)
    if doc_type in _RAW_TEXT:
        return _text_mode(path, relpath)
    if doc_type in ("doc", "docx"):
        return _word_text(ctx, relpath, field)
    if doc_type == "pdf":  # its pages' text joined with nothing between: a keyword may run across a break
        return "".join(pdf_io.read_pages(path, relpath))
    raise _Crash(f"doc type {doc_type!r} is not implemented there")


def _contain(ctx: Context, args: dict[str, Any]) -> bool:
    if args["doc_type"] == "email":
        return _contain_text(_mailbox_text(ctx.workspace, args["username"]), args["keywords"])
    path = ctx.path(args["file"], "file")
    if not path.is_file():
        return False
    return _contain_text(_reader(ctx, args["doc_type"], args["file"], "file"), args["keywords"])


def _diff_contain(ctx: Context, args: dict[str, Any]) -> bool:
    if args["doc_type"] not in ("xlsx", "doc"):
        raise _Crash(f"doc type {args['doc_type']!r} is not implemented there")
    if args["doc_type"] == "doc":  # it diffs lists of paragraph objects: never equal, never a text diff
        raise _Crash("a Word diff joins paragraph objects as text")
    before = _sheet_text(ctx, args["input_file"], "input_file")
    after = _sheet_text(ctx, args["output_file"], "output_file")
    if before == after:
        return False
    diff = "\n".join(difflib.unified_diff(before.split("\n"), after.split("\n"), n=0))
    for keyword in args["keywords"]:
        if not isinstance(keyword, str):
            raise _Crash(f"keyword {keyword!r} is not a string ('in <string>' requires a string)")
        if keyword not in diff:
            return False
    return True


def _cell_value(ctx: Context, args: dict[str, Any]) -> bool:
    if not ctx.path(args["file"], "file").exists():
        return False
    content = _sheet_text(ctx, args["file"], "file")
    return all(f"({m['row']}, {m['col']}): {m['value']}" in content for m in args["matches"])


_OB_LAMBDA = re.compile(r"^\s*lambda\s+(?P<var>\w+)\s*:\s*(?:(?P<cast>int|float|str)\s*\(\s*(?P=var)\s*\)|(?P=var))"
                        r"\s*(?P<rest>.*)$", re.S)
_PY_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
}


def _apply_lambda(text: str, value: str) -> bool:
    """OfficeBench's ``eval(comparator)(value)`` for the lambda forms it uses, in Python's own
    semantics (a failed cast or an ordering of a string and a number is a crash)."""
    match = _OB_LAMBDA.match(text)
    if not match:
        raise _Crash(f"comparator {text!r} is not a Python lambda")
    try:
        parsed = comparators.parse(match.group("rest"))
    except OfficeError:
        raise _Crash(f"comparator {text!r} is outside the forms reproduced") from None
    casts: dict[str | None, Callable[[str], Any]] = {"int": int, "float": float, "str": str, None: lambda v: v}
    cast = casts[match.group("cast")]
    try:
        got = cast(value)
        operand = parsed.operand
        if isinstance(operand, float) and math.isfinite(operand) and operand == int(operand):
            operand = int(operand)
        if isinstance(operand, tuple):
            items = [int(i) if isinstance(i, float) and math.isfinite(i) and i == int(i) else i for i in operand]
            return (got in items) == (parsed.op == "in")
        return bool(_PY_OPS[parsed.op](got, operand))
    except (TypeError, ValueError, OverflowError) as exc:
        raise _Crash(str(exc)) from None


def _cell_comparator(ctx: Context, args: dict[str, Any]) -> bool:
    content = _sheet_text(ctx, args["file"], "file")  # a missing file crashes there
    for m in args["matches"]:
        found = re.search(r"\({}, {}\): (\w+)\t".format(m["row"], m["col"]), content)
        if not found or not _apply_lambda(m["comparator"], found.group(1)):
            return False
    return True


def _exact(ctx: Context, args: dict[str, Any]) -> bool:
    result = ctx.path(args["result_file"], "result_file")
    if not result.exists():
        return False
    doc_type = args["doc_type"]
    if doc_type in _RAW_TEXT:
        return _text_mode(result, args["result_file"]) == _text_mode(ctx.path(args["expected_file"], "expected_file"),
                                                                     args["expected_file"])
    if doc_type in ("doc", "pdf"):
        return False  # lists of paragraph or page objects: never equal
    if doc_type != "xlsx":
        raise _Crash(f"doc type {doc_type!r} is not implemented there")
    expected = ctx.path(args["expected_file"], "expected_file")
    if not all(p.name.lower().endswith(_OPENPYXL_SUFFIXES) for p in (result, expected)):
        raise _Crash("openpyxl does not open files named otherwise than .xlsx")
    got = xlsx_io.load(result, args["result_file"]).active
    want = xlsx_io.load(expected, args["expected_file"]).active
    for first, second in ((got, want), (want, got)):
        for row in first.iter_rows():
            for cell in row:
                if cell.value != second.cell(row=cell.row, column=cell.column).value:
                    return False
    return True


def _aware(moment: Any) -> datetime:
    if not isinstance(moment, datetime) and isinstance(moment, date):
        raise _Crash("an all-day event has no time zone")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _no_overlap(ctx: Context, args: dict[str, Any]) -> bool:
    path = ctx.workspace.resolve(f"{CALENDAR_DIR}/{args['username']}.ics", field="username")
    if not path.is_file():
        raise _Crash(f"no calendar file for {args['username']!r}")
    components = ics_io.load(path, args["username"]).subcomponents
    if any(c.get("dtstart") is None for c in components):  # it prints every DTSTART first (a VTIMEZONE has none)
        raise _Crash("a calendar component without DTSTART")
    try:
        ordered = [c for c in sorted(components, key=lambda c: _aware(c.get("dtstart").dt)) if c.name == "VEVENT"]
        # DTEND of every event but the last: a DURATION one may end it
        for event, following in zip(ordered, ordered[1:]):
            if event.get("dtend") is None:
                raise _Crash("an event without DTEND before the last")
            if _aware(event.get("dtend").dt) > _aware(following.get("dtstart").dt):
                return False
    except (AttributeError, TypeError, ValueError) as exc:  # two DTSTARTs, a PERIOD or DURATION value: it crashes
        raise _Crash(f"a calendar property it cannot read ({type(exc).__name__})") from None
    return True


_FUNCTIONS: dict[str, Callable[[Context, dict[str, Any]], bool]] = {
    "evaluate_contain": _contain,
    "evaluate_not_contain": lambda ctx, args: not _contain(ctx, args),
    "evaluate_file_exist": lambda ctx, args: ctx.path(args["file"], "file").exists(),
    "evaluate_file_not_exist": lambda ctx, args: not ctx.path(args["file"], "file").exists(),
    "evaluate_diff_contain_text": _diff_contain,
    "evaluate_excel_cell_value": _cell_value,
    "evaluate_excel_cell_comparator": _cell_comparator,
    "evaluate_exact_match": _exact,
    "evaluate_calendar_no_overlap": _no_overlap,
}


def evaluate_officebench(workspace: Workspace, criteria: list[dict[str, Any]], reference_dir: Any = None, *,
                         initial_dir: Any = None, file: str = "", misplaced: tuple[int, ...] = (),
                         day_first: bool | None = None) -> EvaluationReport:
    """Score ``workspace`` as OfficeBench's evaluator would: one result per criterion (its own
    evaluator stops at the first failure; the task verdict is the same). ``misplaced``: criteria
    whose argument the seed put beside ``args`` (``office_env.officebench.misplaced_criteria``):
    it reads them from ``args`` and fails them. ``day_first`` is taken as homer's scorer takes it
    and unused: OfficeBench matches a date as text."""
    del day_first
    problems = validate_criteria(criteria, file=file)
    if problems:
        raise InvalidCriteria(problems)
    ctx = Context(workspace, reference_dir, initial_dir)
    results = []
    for index, item in enumerate(criteria):
        function, args = item["function"], item["args"]
        check = _FUNCTIONS.get(function)
        if index in misplaced:
            results.append(CriterionResult(index, function, False, "an argument sits beside 'args': OfficeBench's "
                                           "evaluator raises KeyError here, counted as a failure"))
            continue
        if check is None:
            results.append(CriterionResult(index, function, False,
                                           f"{function} does not exist in OfficeBench (NameError)"))
            continue
        try:
            passed = check(ctx, args)
            reason = "passes under OfficeBench's rules" if passed else "fails under OfficeBench's rules"
        except _Crash as exc:
            passed, reason = False, f"OfficeBench's evaluator crashes here ({exc}): counted as a failure"
        except OfficeError as exc:
            passed, reason = False, f"unreadable under OfficeBench's rules: {exc}"
        results.append(CriterionResult(index, function, passed, reason))
    return EvaluationReport(results)


def scorer(semantics: str) -> Callable[..., EvaluationReport]:
    """The scoring function for ``--semantics``: ``homer`` (the catalog's checks) or
    ``officebench`` (this module); ``ValueError`` for any other name."""
    if semantics == "homer":
        from office_env.evaluation.catalog import evaluate_criteria

        return evaluate_criteria
    if semantics == "officebench":
        return evaluate_officebench
    raise ValueError(f"--semantics {semantics!r}: must be one of {', '.join(SEMANTICS)}")
