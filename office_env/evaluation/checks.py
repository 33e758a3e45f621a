"""The evaluation criteria: OfficeBench's nine functions plus checks of our own.

Each check takes the scoring context and validated arguments and returns ``(passed, reason)``;
the reason says what was looked at and what was found, so a failing task can be fixed.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, cast

from office_env import calendar_store, limits, mail_store
from office_env.apps import generation
from office_env.errors import OfficeError, PathError
from office_env.evaluation import comparator as comparators
from office_env.evaluation import keywords as kw
from office_env.evaluation import pasted, stated
from office_env.evaluation.content import (
    MAILBOX,
    OFFICEBENCH_ORDER,
    doc_types,
    find_mailbox_user,
    mailbox_text,
    read_document,
)
from office_env.evaluation.paths import external_target, inside
from office_env.formats import xlsx_io
from office_env.money import CODE
from office_env.workspace import ANSWER_FILE, Workspace

Outcome = tuple[bool, str]


@dataclass(frozen=True)
class Context:
    """What a check may look at: the testbed, the task's reference/ folder (expected files)
    and the initial testbed (the state before the agent acted)."""

    workspace: Workspace
    reference_dir: Path | None = None
    initial_dir: Path | None = None
    day_first: bool | None = None  # the office's order of a numeric date's day and month (None: unknown)
    # a mailbox read once per scoring: several mail checks look at the same one, and nothing
    # changes the testbed while its criteria are scored
    _mailboxes: dict[tuple[str, str], list[tuple[str, Any]]] = field(default_factory=dict, compare=False, repr=False)
    _owners: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # username -> mailbox owner
    # (sender, recipient) -> the messages between them (``_mails_between``): a task's mail checks ask of the same two
    _between: dict[tuple[str | None, str | None], list[tuple[str, Any]]] = field(default_factory=dict, compare=False,
                                                                                repr=False)

    def mailbox_user(self, username: str) -> str:
        """``find_mailbox_user`` of ``username``, found once for this scoring (a name it cannot find
        raises each time)."""
        if username not in self._owners:
            self._owners[username] = find_mailbox_user(self.workspace, username)
        return self._owners[username]

    def messages(self, user: str, field: str) -> list[tuple[str, Any]]:
        """``mail_store.messages`` of ``user``, read once for this scoring."""
        key = (user, field)
        if key not in self._mailboxes:
            self._mailboxes[key] = mail_store.messages(self.workspace, user, field=field)
        return self._mailboxes[key]

    def path(self, relpath: str, field: str) -> Path:
        target = external_target(relpath, field)
        if target is None:
            return self.workspace.resolve(relpath, field=field)
        root = self.reference_dir if target.place == "reference" else self.initial_dir
        if root is None:
            what = "reference folder" if target.place == "reference" else "initial testbed"
            raise PathError(f"{field}: {relpath!r} needs the task's {what}, which was not given")
        return inside(root, target.parts, relpath, field)


@dataclass(frozen=True)
class DocTypes:
    """A ``doc_type`` argument's schema, whose enum is read from the app registry when the check's
    schema is made (``content.doc_types``): an app registered later adds its doc types to it."""

    first: tuple[str, ...] = OFFICEBENCH_ORDER  # the order they are listed in (the rest follow)
    mailbox: bool = True

    def schema(self) -> dict[str, Any]:
        return {"enum": list(doc_types(self.first, mailbox=self.mailbox))}


@dataclass(frozen=True)
class Check:
    """One check of the catalog; ``args_template`` is its argument schema, in which a
    :class:`DocTypes` stands for the enum the registry gives (``args_schema`` is the schema made)."""

    name: str
    description: str
    args_template: dict[str, Any]
    func: Callable[[Context, dict[str, Any]], Outcome]
    path_args: tuple[str, ...] = ()

    # the schema made, by the registry's generation (a frozen check still fills its own cache)
    _made: dict[int, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def args_schema(self) -> dict[str, Any]:
        """The argument schema with the registry's doc types in it (made once per registry state)."""
        now = generation()
        if now not in self._made:
            self._made.clear()
            self._made[now] = cast("dict[str, Any]", _fill(self.args_template))
        return self._made[now]


def _fill(template: Any) -> Any:
    if isinstance(template, DocTypes):
        return template.schema()
    if isinstance(template, dict):
        return {key: _fill(value) for key, value in template.items()}
    if isinstance(template, list):
        return [_fill(value) for value in template]
    return template


CHECKS: dict[str, Check] = {}

# -- argument schema pieces ------------------------------------------------------------------
PATH = {"type": "string", "minLength": 1}
KEYWORDS = {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}}
# a 1-based row or column: at most Excel's own bound, and a string of at most 7 digits (an endless digit
# string is refused here rather than turned into a huge int)
INDEX = {"type": ["integer", "string"], "minimum": 1, "maximum": 1_048_576, "pattern": "^[1-9][0-9]{0,6}$"}
SCALAR = {"type": ["string", "number", "boolean"]}
USERNAME = {"type": "string", "minLength": 1}
TIME = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$"}


def check(name: str, description: str, properties: dict[str, Any], required: list[str],
          path_args: tuple[str, ...] = (), extra: dict[str, Any] | None = None):
    def decorate(func: Callable[[Context, dict[str, Any]], Outcome]):
        schema = {"type": "object", "properties": properties, "required": required,
                  "additionalProperties": False, **(extra or {})}
        CHECKS[name] = Check(name, description, schema, func, path_args)
        return func
    return decorate


# -- text containment ------------------------------------------------------------------------

def _content(ctx: Context, args: dict[str, Any]) -> tuple[str, str]:
    """(label, text) of what a contain check searches."""
    doc_type = args["doc_type"]
    if doc_type == MAILBOX:
        user = ctx.mailbox_user(args["username"])
        text, unreadable = mailbox_text(ctx.workspace, user)
        label = f"{user}'s mailbox"
        if unreadable:
            label += f" (skipped {len(unreadable)} unreadable: {'; '.join(unreadable)})"
        return label, text
    return args["file"], read_document(ctx.path(args["file"], "file"), args["file"], doc_type)


_CONTAIN_PROPS = {"doc_type": DocTypes(), "file": PATH, "username": USERNAME, "keywords": KEYWORDS}
_CONTAIN_RULES = {"if": {"properties": {"doc_type": {"const": MAILBOX}}},
                  "then": {"required": ["username"]}, "else": {"required": ["file"]}}


@check("evaluate_contain", "A document, or a user's mailbox, contains every keyword (case-insensitive; a number "
       "keyword by value, a count from 2 to 99 also in words).",
       _CONTAIN_PROPS, ["doc_type", "keywords"], ("file",), _CONTAIN_RULES)
def evaluate_contain(ctx: Context, args: dict[str, Any]) -> Outcome:
    label, text = _content(ctx, args)
    absent = kw.missing(text, args["keywords"], ctx.day_first)
    if absent:
        return False, f"{label} lacks {', '.join(repr(a) for a in absent)}"
    return True, f"{label} contains all {len(args['keywords'])} keyword(s)"


@check("evaluate_not_contain",
       "A document, or a user's mailbox, contains none of the keywords; a missing file contains none.",
       _CONTAIN_PROPS, ["doc_type", "keywords"], ("file",), _CONTAIN_RULES)
def evaluate_not_contain(ctx: Context, args: dict[str, Any]) -> Outcome:
    if args["doc_type"] != MAILBOX and not ctx.path(args["file"], "file").exists():
        return True, f"{args['file']} does not exist, so it contains none of the keywords"
    label, text = _content(ctx, args)
    found = kw.present(text, args["keywords"], ctx.day_first)
    if found:
        return False, f"{label} still contains {', '.join(repr(f) for f in found)}"
    return True, f"{label} contains none of the keywords"


# -- files -----------------------------------------------------------------------------------

@check("evaluate_file_exist", "A file exists in the testbed.", {"file": PATH}, ["file"], ("file",))
def evaluate_file_exist(ctx: Context, args: dict[str, Any]) -> Outcome:
    exists = ctx.path(args["file"], "file").exists()
    return exists, f"{args['file']} {'exists' if exists else 'does not exist'}"


@check("evaluate_file_not_exist", "A file does not exist in the testbed.", {"file": PATH}, ["file"], ("file",))
def evaluate_file_not_exist(ctx: Context, args: dict[str, Any]) -> Outcome:
    exists = ctx.path(args["file"], "file").exists()
    return not exists, f"{args['file']} {'still exists' if exists else 'does not exist'}"


def _first_difference(a: str, b: str) -> str:
    for n, (left, right) in enumerate(zip(a.splitlines(), b.splitlines()), start=1):
        if left != right:
            return f"line {n}: {left[:60]!r} vs expected {right[:60]!r}"
    return f"{len(a.splitlines())} lines vs expected {len(b.splitlines())}"


# the doc types in the order OfficeBench's catalog lists them for this check (the registry's others follow)
_EXACT_ORDER = ("txt", "ics", "doc", "docx", "pdf", "xlsx")


@check("evaluate_exact_match", "A result file has exactly the content of an expected file.",
       {"doc_type": DocTypes(_EXACT_ORDER, mailbox=False), "result_file": PATH,
        "expected_file": PATH},
       ["doc_type", "result_file", "expected_file"], ("result_file", "expected_file"))
def evaluate_exact_match(ctx: Context, args: dict[str, Any]) -> Outcome:
    result, doc_type = args["result_file"], args["doc_type"]
    expected_path = ctx.path(args["expected_file"], "expected_file")
    result_path = ctx.path(result, "result_file")
    if not result_path.exists():
        return False, f"{result} does not exist"
    if not expected_path.exists():
        return False, f"expected file {args['expected_file']} is missing from the task"
    if doc_type == "xlsx":
        got = xlsx_io.read_book(result_path, result).sheet(None, result).cells
        want = xlsx_io.read_book(expected_path, args["expected_file"]).sheet(None, args["expected_file"]).cells
        for key in sorted(set(got) | set(want)):
            if got.get(key) != want.get(key):
                return False, (f"{result} cell {key} is {xlsx_io.render_value(got.get(key))!r}, "
                               f"expected {xlsx_io.render_value(want.get(key))!r}")
        return True, f"{result} matches the expected sheet ({len(want)} cells)"
    got_text = read_document(result_path, result, doc_type)
    want_text = read_document(expected_path, args["expected_file"], doc_type)
    if got_text != want_text:
        return False, f"{result} differs from the expected file at {_first_difference(got_text, want_text)}"
    return True, f"{result} matches the expected file"


# OfficeBench's own doc types for this check (xlsx, doc) and docx: a fixed enum, not the registry's
@check("evaluate_diff_contain_text",
       "The changes from an input file to an output file mention every keyword.",
       {"doc_type": {"enum": ["xlsx", "doc", "docx"]}, "input_file": PATH, "output_file": PATH, "keywords": KEYWORDS},
       ["doc_type", "input_file", "output_file", "keywords"], ("input_file", "output_file"))
def evaluate_diff_contain_text(ctx: Context, args: dict[str, Any]) -> Outcome:
    doc_type = args["doc_type"]
    before = read_document(ctx.path(args["input_file"], "input_file"), args["input_file"], doc_type)
    after = read_document(ctx.path(args["output_file"], "output_file"), args["output_file"], doc_type)
    if before == after:
        return False, f"{args['output_file']} has the same content as {args['input_file']}"
    first, second = before.split("\n"), after.split("\n")
    if len(first) + len(second) <= limits.MAX_DIFF_LINES:
        lines = list(difflib.unified_diff(first, second, n=0, lineterm=""))[2:]
        # only the changed lines: the ---/+++ header and @@ line numbers are not part of the change
        diff = "\n".join(line[1:] for line in lines if not line.startswith("@@"))
    else:  # a line-matching diff is quadratic, and any agent can write a long document: lines
        # removed and added as a multiset difference instead (a moved line is then no change)
        old_lines, new_lines = Counter(first), Counter(second)
        diff = "\n".join([*(old_lines - new_lines).elements(), *(new_lines - old_lines).elements()])
    absent = kw.missing(diff, args["keywords"], ctx.day_first)
    if absent:
        return False, f"the changes to {args['output_file']} do not mention {', '.join(repr(a) for a in absent)}"
    return True, f"the changes to {args['output_file']} mention every keyword"


# -- spreadsheets ----------------------------------------------------------------------------

_MONEY_RE = re.compile(rf"^\s*(?:[$€£]|{CODE}\s)?\s*(-?[\d,]*\d(?:\.\d+)?)\s*(?:[$€£]|\s{CODE})?\s*$", re.IGNORECASE)


# A count with its unit, as a person fills a sheet's cell: "28 days", "4 hours", "15%".
_UNIT_RE = re.compile(r"^\s*(-?[\d,]*\d(?:\.\d+)?)\s*(?:%|(?:days?|hours?|minutes?|weeks?|months?|years?|percent|"
                      r"people|persons?|units?|items?)\b)\s*$", re.IGNORECASE)


def _cell_number(value: Any) -> float | None:
    """A cell's number, also when it is written as an amount of money ("1,950 USD", "$1,950.00") or
    with its unit ("28 days", "15%")."""
    number = comparators.as_number(value)
    if number is None and isinstance(value, str):
        found = _MONEY_RE.match(value) or _UNIT_RE.match(value)
        number = comparators.as_number(found.group(1)) if found else None
    return number


def _cell_matches(value: Any, expected: Any, ignore_case: bool = False) -> bool:
    """Equal as text with runs of white space folded (and case, when ``ignore_case``: "Parking
    permits" holds "parking permits"), or equal as numbers (a cell may write a number as money,
    "1,950 USD", or with its unit, "28 days")."""
    got, want = " ".join(xlsx_io.render_value(value).split()), " ".join(str(expected).split())
    if got == want or (ignore_case and got.lower() == want.lower()):
        return True
    got_number, want_number = _cell_number(value), comparators.as_number(expected)
    return got_number is not None and want_number is not None \
        and abs(got_number - want_number) <= 1e-9 * max(1.0, abs(want_number))


def _sheet(ctx: Context, args: dict[str, Any]):
    return xlsx_io.read_book(ctx.path(args["file"], "file"), args["file"]).sheet(args.get("sheet"), args["file"])


def _each_cell(ctx: Context, args: dict[str, Any], problem: Callable[[Any, dict[str, Any]], str | None],
               passed: str) -> Outcome:
    """The cells ``args["matches"]`` names, in order, each tested by ``problem(value, match)``: None
    when it passes, else what follows the cell's place in the failure. ``passed`` ends the verdict
    when every cell passes."""
    if not ctx.path(args["file"], "file").exists():
        return False, f"{args['file']} does not exist"
    sheet = _sheet(ctx, args)
    for match in args["matches"]:
        row, col = int(match["row"]), int(match["col"])
        why = problem(sheet.value(row, col), match)
        if why is not None:
            return False, f"{args['file']} ({row}, {col}){why}"
    return True, f"{args['file']}: all {len(args['matches'])} cell(s) {passed}"


@check("evaluate_excel_cell_value", "Cells of a sheet hold the given values (row and col 1-based; text with "
       "spacing folded, and case too when ignore_case is true; numbers by value, also when written as money such "
       "as '1,950 USD' or with a unit such as '28 days').",
       {"file": PATH, "sheet": {"type": "string"}, "ignore_case": {"type": "boolean"},
        "matches": {"type": "array", "minItems": 1, "items": {
            "type": "object", "properties": {"row": INDEX, "col": INDEX, "value": SCALAR},
            "required": ["row", "col", "value"], "additionalProperties": False}}},
       ["file", "matches"], ("file",))
def evaluate_excel_cell_value(ctx: Context, args: dict[str, Any]) -> Outcome:
    def problem(value: Any, match: dict[str, Any]) -> str | None:
        if _cell_matches(value, match["value"], bool(args.get("ignore_case"))):
            return None
        return f" is {xlsx_io.render_value(value)!r}, expected {match['value']!r}"

    return _each_cell(ctx, args, problem, "hold the expected values")


@check("evaluate_excel_cell_comparator",
       "Cells of a sheet satisfy comparators such as '> 100' or '== \"Done\"' (no code is run).",
       {"file": PATH, "sheet": {"type": "string"},
        "matches": {"type": "array", "minItems": 1, "items": {
            "type": "object", "properties": {"row": INDEX, "col": INDEX, "comparator": {"type": "string"}},
            "required": ["row", "col", "comparator"], "additionalProperties": False}}},
       ["file", "matches"], ("file",))
def evaluate_excel_cell_comparator(ctx: Context, args: dict[str, Any]) -> Outcome:
    def problem(value: Any, match: dict[str, Any]) -> str | None:
        ok, why = comparators.parse(match["comparator"]).test(value)
        return None if ok else f": {why}"

    return _each_cell(ctx, args, problem, "satisfy their comparators")


# -- calendars -------------------------------------------------------------------------------

@check("evaluate_calendar_no_overlap", "No two events in a user's calendar overlap.",
       {"username": USERNAME}, ["username"])
def evaluate_calendar_no_overlap(ctx: Context, args: dict[str, Any]) -> Outcome:
    events = calendar_store.events(ctx.workspace, args["username"], field="username")
    clashes = calendar_store.overlaps(events)
    if clashes:
        return False, f"{args['username']}'s calendar: {calendar_store.clash_text(*clashes[0])}"
    return True, f"{args['username']}'s calendar has {len(events)} event(s), none overlapping"


@check("evaluate_calendar_event",
       "A user's calendar has an event whose title contains the keywords, at the given start and end.",
       {"username": USERNAME, "summary": {"anyOf": [{"type": "string", "minLength": 1}, KEYWORDS]},
        "start": TIME, "end": TIME},
       ["username", "summary"])
def evaluate_calendar_event(ctx: Context, args: dict[str, Any]) -> Outcome:
    words = args["summary"] if isinstance(args["summary"], list) else [args["summary"]]
    start = calendar_store.parse_time(args["start"], "start") if args.get("start") else None
    end = calendar_store.parse_time(args["end"], "end") if args.get("end") else None
    events = calendar_store.events(ctx.workspace, args["username"], field="username", missing_ok=True)
    titled = [e for e in events if not kw.missing(e.summary, words, ctx.day_first)]
    for event in titled:
        if (start is None or event.start == start) and (end is None or event.end == end):
            return True, f"{args['username']}'s calendar has {event.summary!r} at {event.start:%Y-%m-%d %H:%M}"
    if titled:
        # to the second when a second is what differs: "15:00-15:15" for an event at 15:00:01 reads as a pass
        times = [t for t in (start, end) if t is not None] + [t for e in titled for t in (e.start, e.end)]
        clock = "%H:%M:%S" if any(t.second or t.microsecond for t in times) else "%H:%M"
        found = ", ".join(f"{e.start:%Y-%m-%d} {e.start.strftime(clock)}-{e.end.strftime(clock)}" for e in titled)
        return False, f"{args['username']}'s events titled like {words!r} are at {found}, not at the required time"
    return False, f"{args['username']}'s calendar has no event titled like {words!r}"


@check("evaluate_calendar_no_event",
       "A user's calendar has no event whose title contains the keywords starting at the given time "
       "(a meeting moved or cancelled is gone from its old place).",
       {"username": USERNAME, "summary": {"anyOf": [{"type": "string", "minLength": 1}, KEYWORDS]}, "start": TIME},
       ["username", "summary", "start"])
def evaluate_calendar_no_event(ctx: Context, args: dict[str, Any]) -> Outcome:
    words = args["summary"] if isinstance(args["summary"], list) else [args["summary"]]
    start = calendar_store.parse_time(args["start"], "start")
    events = calendar_store.events(ctx.workspace, args["username"], field="username", missing_ok=True)
    left = [e for e in events if e.start == start and not kw.missing(e.summary, words, ctx.day_first)]
    if left:
        return False, f"{args['username']}'s calendar still has {left[0].summary!r} at {start:%Y-%m-%d %H:%M}"
    return True, f"{args['username']}'s calendar has no event titled like {words!r} at {start:%Y-%m-%d %H:%M}"


# -- e-mail and answers ----------------------------------------------------------------------

def _person(who: str) -> str:
    """The name a From/To header gives for ``who`` (a user name or an address; the domain is ignored)."""
    return who.strip().lower().split("@")[0]


@lru_cache(maxsize=1024)  # a mailbox's headers are read again by each check and each replay
def _header_names(header: str) -> frozenset[str]:
    """The names a From/To header gives: each word's local part, lower-cased."""
    return frozenset(part.strip(" <>\"'").split("@")[0] for part in header.lower().replace(",", " ").split())


def _mails_between(ctx: Context, sender: str | None, recipient: str | None) -> tuple[str, list[tuple[str, Any]]]:
    """The mailbox read (the sender's, else the recipient's) and its messages from ``sender`` to
    ``recipient`` (either may be None: anyone), found once for this scoring (the list is shared:
    not to be changed)."""
    user = ctx.mailbox_user(cast(str, sender or recipient))  # the schema asks for one of them
    key = (sender, recipient)
    if key not in ctx._between:
        by, to = _person(sender) if sender else None, _person(recipient) if recipient else None
        mails = ctx.messages(user, "sender" if sender else "recipient")
        ctx._between[key] = [(email_id, mail) for email_id, mail in mails
                             if (by is None or by in _header_names(mail.sender))
                             and (to is None or to in _header_names(mail.recipient))]
    return user, ctx._between[key]


def _has_keywords(ctx: Context, mail: Any, args: dict[str, Any]) -> bool:
    """Whether ``mail`` has every subject and body keyword of ``args``: its body is read only for a
    message that has its subject's keywords (most lack one)."""
    return not kw.missing(mail.subject, args.get("subject_keywords", []), ctx.day_first) and \
        not kw.missing(mail.body, args.get("body_keywords", []), ctx.day_first)


@check("evaluate_email_sent",
       "A message from the sender and/or to the recipient exists whose subject and body contain the keywords "
       "and whose body holds none of body_excludes (what a list must leave out).",
       {"sender": USERNAME, "recipient": USERNAME, "subject_keywords": KEYWORDS, "body_keywords": KEYWORDS,
        "body_excludes": KEYWORDS},
       [], extra={"anyOf": [{"required": ["sender"]}, {"required": ["recipient"]}]})
def evaluate_email_sent(ctx: Context, args: dict[str, Any]) -> Outcome:
    user, candidates = _mails_between(ctx, args.get("sender"), args.get("recipient"))
    wrong = ""
    for email_id, mail in candidates:
        if not _has_keywords(ctx, mail, args):
            continue
        extra = kw.present(mail.body, args.get("body_excludes", []), ctx.day_first)
        if not extra:
            return True, f"{email_id} in {user}'s mailbox matches"
        wrong = f"{email_id} has all the keywords but also {', '.join(repr(e) for e in extra)}"
    who = " ".join(f"{k} {args[k]}" for k in ("sender", "recipient") if args.get(k))
    if not candidates:
        return False, f"no message with {who} in {user}'s mailbox"
    if wrong:
        return False, f"{len(candidates)} message(s) with {who}; {wrong}, which it should leave out"
    return False, f"{len(candidates)} message(s) with {who}, but none has all the subject and body keywords"


@check("evaluate_email_not_sent",
       "No message from the sender (to the recipient, when given) has all the subject and body keywords: the "
       "answer sent to the wrong person, or a misread value sent beside the right one, is a hedge.",
       {"sender": USERNAME, "recipient": USERNAME, "subject_keywords": KEYWORDS, "body_keywords": KEYWORDS},
       ["sender"], extra={"anyOf": [{"required": ["subject_keywords"]}, {"required": ["body_keywords"]}]})
def evaluate_email_not_sent(ctx: Context, args: dict[str, Any]) -> Outcome:
    to = f" to {args['recipient']}" if args.get("recipient") else ""
    for email_id, mail in _mails_between(ctx, args["sender"], args.get("recipient"))[1]:
        if _has_keywords(ctx, mail, args):
            return False, f"{email_id} from {args['sender']}{to} has the keywords it must not send"
    return True, f"no message from {args['sender']}{to} has all those keywords"


_STATED_VALUE = {
    "type": "object", "additionalProperties": False, "required": ["value", "kind"],
    "properties": {
        "value": {"type": ["string", "number"], "minLength": 1, "maxLength": 200},
        "kind": {"enum": list(stated.KINDS)},
        "before": {"type": "array", "minItems": 1, "maxItems": 24,
                   "items": {"type": "string", "pattern": "^[a-z][a-z'’ -]{0,59}$"}},
        "after": {"type": "array", "minItems": 1, "maxItems": 24,
                  "items": {"type": "string", "pattern": "^[a-z][a-z'’ -]{0,59}$"}},
        "others": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
        "alone": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
    },
}


def _outputs(ctx: Context, args: dict[str, Any]) -> tuple[list[tuple[str, str]], str] | None:
    """What a check of the output's prose reads: each message from ``sender`` to ``recipient`` (its
    subject and body), or the document; and where that is. None when the document does not exist."""
    if args["doc_type"] == MAILBOX:
        texts = [(email_id, f"{mail.subject}\n{mail.body}")
                 for email_id, mail in _mails_between(ctx, args["sender"], args["recipient"])[1]]
        return texts, f"message(s) from {args['sender']} to {args['recipient']}"
    if not ctx.path(args["file"], "file").exists():
        return None
    return [_content(ctx, args)], args["file"]


@check("evaluate_stated_values",
       "Where the output states one of the values (a value of its kind right beside one of its cue words: "
       "'below 75', 'the 200 EUR limit', 'Agenda: agenda.docx', 'Hi Elliot', a name signed after 'Best,'), it "
       "states the right one, it never offers another beside the right one ('37500 or 37501'), and a file that "
       "stands alone (alone: the files it may be left out for) is never left out for another (the total 'in "
       "budget_old.xlsx'); every message from "
       "the sender to the recipient, or the document, is read. An output that does not state a value passes.",
       {"doc_type": DocTypes(), "file": PATH, "sender": USERNAME, "recipient": USERNAME,
        "values": {"type": "array", "minItems": 1, "maxItems": 50, "items": _STATED_VALUE}},
       ["doc_type", "values"], ("file",),
       {"if": {"properties": {"doc_type": {"const": MAILBOX}}},
        "then": {"required": ["sender", "recipient"]}, "else": {"required": ["file"]}})
def evaluate_stated_values(ctx: Context, args: dict[str, Any]) -> Outcome:
    found = _outputs(ctx, args)
    if found is None:
        return True, f"{args['file']} does not exist, so it states none of the values"
    texts, where = found
    for label, text in texts:
        wrong = stated.wrong_statements(text, args["values"], ctx.day_first)
        if wrong:
            return False, f"{label} {'; '.join(wrong)}"
    return True, f"{len(texts)} {where} state(s) every value it names rightly"


@check("evaluate_not_pasted",
       "The output is not its sources copied out: no message from the sender to the recipient, and not the "
       "document, is mostly lines of what the task's sources hold (source_lines: the first 12 hex digits of the "
       "sha256 of each source line of 4 words or more, lower-cased, spacing collapsed, a leading 'Label: ' "
       "dropped; an output fails when at least 2 of its lines are such lines and they hold half its words or "
       "more). A missing output passes: other checks ask for it.",
       {"doc_type": DocTypes(), "file": PATH, "sender": USERNAME, "recipient": USERNAME,
        "source_lines": {"type": "array", "minItems": 1, "maxItems": 20_000, "uniqueItems": True,
                         "items": {"type": "string", "pattern": f"^[0-9a-f]{{{pasted.KEY_CHARS}}}$"}}},
       ["doc_type", "source_lines"], ("file",),
       {"if": {"properties": {"doc_type": {"const": MAILBOX}}},
        "then": {"required": ["sender", "recipient"]}, "else": {"required": ["file"]}})
def evaluate_not_pasted(ctx: Context, args: dict[str, Any]) -> Outcome:
    keys = frozenset(args["source_lines"])
    found = _outputs(ctx, args)
    if found is None:
        return True, f"{args['file']} does not exist, so it pastes nothing"
    texts, where = found
    for label, text in texts:
        share, lines = pasted.pasted_share(text, keys)
        if pasted.is_paste(text, keys):
            return False, (f"{label} is its sources copied out: {lines} line(s) verbatim from them, "
                           f"{100 * share:.0f} % of its words")
    return True, f"{len(texts)} {where}: none is mostly its sources copied out"


def _plain_number(value: Any) -> float | None:
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


ANSWER_MAX_CHARS = 500  # an answer, or a sentence or two around it; pasting a document is not answering


@check("evaluate_answer",
       f"The answer file ({ANSWER_FILE} unless given) is a short answer (at most max_chars characters, "
       f"{ANSWER_MAX_CHARS} unless given) holding the keywords, or a number within a tolerance (a whole number "
       "below 100 also in words), and none of "
       "excludes (the answers a misreading gives: naming one beside the right answer is hedging); a number "
       "answer offering two values ('18 or 28') is a hedge too.",
       {"file": PATH, "keywords": KEYWORDS, "number": {"type": "number"},
        "tolerance": {"type": "number", "minimum": 0}, "max_chars": {"type": "integer", "minimum": 1},
        "excludes": KEYWORDS},
       [], ("file",), extra={"oneOf": [{"required": ["keywords"]}, {"required": ["number"]}]})
def evaluate_answer(ctx: Context, args: dict[str, Any]) -> Outcome:
    file = args.get("file", ANSWER_FILE)
    path = ctx.path(file, "file")
    if not path.exists():
        return False, f"{file} does not exist (no answer was written)"
    text = read_document(path, file, "txt")
    limit = int(args.get("max_chars", ANSWER_MAX_CHARS))
    if len(text.strip()) > limit:
        return False, f"{file} holds {len(text.strip())} characters, more than an answer's {limit}"
    if "keywords" in args:
        absent = kw.missing(text, args["keywords"], ctx.day_first)
        if absent:
            return False, f"{file} lacks {', '.join(repr(a) for a in absent)}"
        hedged = kw.present(text, args.get("excludes", []), ctx.day_first)
        if hedged:
            return False, f"{file} holds the expected answer but also {', '.join(repr(h) for h in hedged)}"
        offered = _offered_beside(text, args["keywords"])
        if offered:
            return False, f"{file} offers {offered!r} beside the expected answer: an answer names one"
        return True, f"{file} holds the expected answer"
    target, tolerance = float(args["number"]), float(args.get("tolerance", 1e-6))
    numbers = kw.figures_in(text)  # a date's day or a clock's minutes are no answer, nor a hedge
    found = next((n for n in numbers if abs(n - target) <= tolerance), None)
    converted = kw.words_as_digits(text)  # a count or an amount may be written in words
    worded = kw.figures_in(converted) if converted != text else []
    if found is None:
        found = next((n for n in worded if abs(n - target) <= tolerance), None)
    if found is None and target == int(target) and 0 <= target < 100:  # what text2num leaves in words
        found = next((float(n) for n in kw.spelled_numbers(converted) if abs(n - target) <= tolerance), None)
    if found is None:
        shown = ", ".join(f"{n:g}" for n in numbers[:5]) or "no number"
        return False, f"{file} holds {shown}, expected {target:g} +/- {tolerance:g}"
    wrong = [n for n in (_plain_number(x) for x in args.get("excludes", [])) if n is not None]
    others = [n for n in dict.fromkeys(numbers + worded) if abs(n - target) > tolerance]  # every other value said
    misread = [n for n in others if any(abs(n - w) <= tolerance for w in wrong)]
    if misread:
        return False, f"{file} holds {found:g} but also {', '.join(f'{n:g}' for n in misread)}, a misreading's answer"
    said = f"{text}.\n{converted}".lower()  # "Eighteen, or 28" as its digits too
    if others and _HEDGE_RE.search(said) and not _DENIAL_RE.search(said):
        return False, (f"{file} hedges between {found:g} and {', '.join(f'{n:g}' for n in others[:3])}: "
                       "an answer names one value")
    return True, f"{file} holds {found:g} (expected {target:g} +/- {tolerance:g})"


# "either 18 or 28", "18, maybe 28", "18/28": two candidates offered, where a careful reader wants one;
# "18, not 28" names one and rules the other out
_HEDGE_RE = re.compile(r"\d[^\d.!?;]{0,25}?(?:\b(?:or|maybe|perhaps|possibly|might be)\b|/)[^\d.!?;]{0,25}?\d"
                       r"|\bbetween\s+\S*\d[^\d]{0,12}\band\s+\S*\d")
_DENIAL_RE = re.compile(r"\b(?:not|rather than|instead of)\b")
# a word answer with another offered beside it: "Fiona Quintero or Ada Ellsworth", "either Ada or Fiona",
# "Fiona Quintero (maybe Ada)", "Fiona/Ada"
_OFFER_AFTER_RE = re.compile(r"\s*,?\s*\(?\s*(?:or maybe|or perhaps|or possibly|or|maybe|perhaps|possibly|/)"
                             r"\s*([^\s.,;:!?)]+)")
_OFFER_BEFORE_RE = re.compile(r"(?:^|\s)([^\s.,;:!?(]+)\s*,?\s*(?:or|/)\s*$|\beither\s*$")


def _offered_beside(text: str, keywords: list[Any]) -> str | None:
    """Another answer a text offers beside one of the keywords (words offered as alternatives right
    before or after it), unless it rules the other out ("Fiona, not Ada"); None when it names one."""
    plain = kw.normalize(text)
    if _DENIAL_RE.search(plain):
        return None
    for keyword in keywords:
        word = kw.normalize(str(keyword))
        if not word or re.fullmatch(r"[\d.,]+", word):
            continue  # a number's hedges are read by value (evaluate_answer's number)
        for m in stated.whole_word_re(word).finditer(plain):
            after = _OFFER_AFTER_RE.match(plain, m.end())
            before = _OFFER_BEFORE_RE.search(plain[:m.start()])
            if after:
                return after.group(1)
            if before:
                return before.group(1) or "either"
    return None


def check_time_args(args: dict[str, Any]) -> None:
    """Times in arguments must parse (the schema only checks their shape)."""
    for key in ("start", "end"):
        if args.get(key):
            calendar_store.parse_time(args[key], key)
    if args.get("start") and args.get("end"):
        if calendar_store.parse_time(args["end"], "end") <= calendar_store.parse_time(args["start"], "start"):
            raise OfficeError("end: must be after start")

