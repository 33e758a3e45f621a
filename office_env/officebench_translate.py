"""Criteria rewritten into OfficeBench's nine evaluation functions, for ``homer export --officebench``.

OfficeBench's evaluator knows ``evaluate_contain``, ``evaluate_not_contain``,
``evaluate_file_exist``, ``evaluate_file_not_exist``, ``evaluate_diff_contain_text``,
``evaluate_excel_cell_value``, ``evaluate_excel_cell_comparator``, ``evaluate_exact_match`` and
``evaluate_calendar_no_overlap``; any other name is a NameError there. Homer's own checks are
carried over where their meaning survives:

- ``evaluate_answer`` -> ``evaluate_contain`` (txt) on the answer file, a number as its plain
  text (only when the tolerance is at most a cent: OfficeBench matches text, not a range), and
  one ``evaluate_not_contain`` for each answer it refuses beside the right one;
- ``evaluate_calendar_event`` -> ``evaluate_contain`` (ics) on the user's calendar with the
  title's words that no line fold can split and the start and end as iCalendar stamps, plus
  ``evaluate_calendar_no_overlap``;
- ``evaluate_email_sent`` -> ``evaluate_contain`` (email) on the recipient's mailbox (else the
  sender's; a sent message lands in both) with the subject and body keywords and the other
  party's name: the recipient's box is where the message is new.

``evaluate_stated_values`` (a value must be right where the output states it) has no form there:
OfficeBench's checks either require a keyword or refuse it everywhere. It is not carried over, and
the export says so (``widened``): the exported task passes every answer homer passes, and also an
answer that restates a value wrongly. ``evaluate_not_pasted`` (a mail or document that is mostly its
sources copied out fails) has none either and is carried over the same way: a paste passes there.

``evaluate_calendar_no_event`` ("no event with this title at this time") becomes
``evaluate_not_contain`` of the calendar file with one keyword, the event's two first content lines
as every writer of the file puts them (``SUMMARY:<title>`` then ``DTSTART:<stamp>``: icalendar's
order for an event, OfficeBench's tools' and homer's alike); a title that would be folded, escaped
or given as several words is lost. A ``sheet`` argument cannot be kept (OfficeBench reads the
active sheet only): such criteria are reported as lost. ``evaluate_email_not_sent`` to a person the untouched
office has no mailbox for and the solution does not mail becomes ``evaluate_file_not_exist`` of that
mailbox; with one keyword, ``evaluate_not_contain`` on that person's mailbox; a mail check's
``body_excludes`` become one ``evaluate_not_contain`` each on the mailbox it reads. Homer's
``evaluate_not_contain`` refuses each of its keywords; OfficeBench's fails only when all are
there, so it is written as one check per keyword (a multi-keyword "none of these" is never
exported), and a number is written as a sheet writes it (``7250``, not ``7250.0``). Whether such a
translation judges the task's states as the original does is checked on export. OfficeBench's own spellings
are used where they differ: ``doc`` for Word in exact and diff checks, ``lambda x: ...`` comparators, and
``../../../../reference/<name>`` for expected files (its outputs lie four folders below the task).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from office_env import calendar_store
from office_env.evaluation import comparator as comparators
from office_env.evaluation.paths import external_target
from office_env.workspace import ANSWER_FILE

OFFICEBENCH_FUNCTIONS = frozenset({
    "evaluate_contain", "evaluate_not_contain", "evaluate_file_exist", "evaluate_file_not_exist",
    "evaluate_diff_contain_text", "evaluate_excel_cell_value", "evaluate_excel_cell_comparator",
    "evaluate_exact_match", "evaluate_calendar_no_overlap",
})
REFERENCE_PREFIX = "../../../../reference/"
FOLD_WIDTH = 74  # an iCalendar content line is folded after 75 octets
MAX_TOLERANCE = 0.01  # a number compared within a cent is its own text (money has two decimals)
# OfficeBench's own layout, fixed there and not the registry's to change: its tools keep a person's
# mailbox in emails/<user>/ and calendar in calendar/<user>.ics, and its evaluator reads them there (an
# export copies the testbed as it is: scorable there while the mail and calendar apps keep these folders)
OFFICEBENCH_MAILBOXES = "emails/"
OFFICEBENCH_CALENDARS = "calendar/"


@dataclass
class Translation:
    criteria: list[dict[str, Any]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # "[i] function: why", one per criterion not carried over
    # "[i] function: why", one per check that only ever refuses and has no OfficeBench form: the export
    # is kept without it (never failing an answer homer passes), and says so
    widened: list[str] = field(default_factory=list)


def _number_text(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _stamp(text: str) -> str:
    moment: datetime = calendar_store.parse_time(text, "start")
    return f"{moment:%Y%m%dT%H%M%S}"


def _unfoldable_words(summary: str) -> list[str]:
    """The title's words that end within the first content line of ``SUMMARY:<title>``."""
    words, used = [], len("SUMMARY:")
    for word in summary.split():
        end = used + len(word.encode("utf-8"))
        if end > FOLD_WIDTH:
            break
        words.append(word)
        used = end + 1
    return words


def _operand(value: float) -> str:
    """A comparator operand exactly as parsed (no rounding: ``> 99.999`` stays so)."""
    return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)


def _comparator(text: str) -> str:
    parsed = comparators.parse(text)
    if isinstance(parsed.operand, tuple):
        items = ", ".join(repr(i if isinstance(i, str) else _operand(i)) for i in parsed.operand)
        return f"lambda x: x {parsed.op} [{items}]"
    if isinstance(parsed.operand, str):
        return f"lambda x: x {parsed.op} {parsed.operand!r}"
    if not math.isfinite(parsed.operand):
        raise ValueError("a comparator number too large to write")
    return f"lambda x: float(x) {parsed.op} {_operand(parsed.operand)}"


def _word_type(doc_type: str) -> str:
    return "doc" if doc_type == "docx" else doc_type


def _as_written(value: Any) -> Any:
    """A number as a sheet or a text writes it: 7250.0 is "7250" there (OfficeBench matches the
    text, so "7250.0" would never be found and a check refusing it could never fail)."""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        if "." in value and math.isfinite(number) and number == int(number) and value.strip()[-1] == "0":
            return str(int(number))
    return value


def _carry(function: str, args: dict[str, Any], mailboxes: frozenset[str] | None = None,
           sent_to: frozenset[str] = frozenset()) -> list[dict[str, Any]] | str:
    """OfficeBench criteria for one homer criterion, or why it cannot be carried over.
    ``mailboxes``: the mailboxes the untouched testbed has (None: unknown); ``sent_to``: the
    people the task's solution mails."""
    written = _as_officebench_writes(function, dict(args))
    if isinstance(written, str):
        return written
    args = written
    if function == "evaluate_not_contain" and len(args["keywords"]) > 1:
        # homer refuses each keyword; OfficeBench's not_contain fails only when all are there: one check each
        return [{"function": function, "args": {**args, "keywords": [k]}} for k in args["keywords"]]
    if function in OFFICEBENCH_FUNCTIONS:
        return [{"function": function, "args": args}]
    if function == "evaluate_email_not_sent" and args.get("recipient"):
        return _carry_email_not_sent(args, mailboxes, sent_to)
    carry = _HOMER_ONLY.get(function)
    return carry(args) if carry is not None else "has no counterpart among OfficeBench's evaluation functions"


def _as_officebench_writes(function: str, args: dict[str, Any]) -> dict[str, Any] | str:
    """``args`` as OfficeBench reads them (comparators, document types, reference paths, keywords
    and cell values as text written the way the files hold them), or why they cannot be."""
    if function in ("evaluate_excel_cell_value", "evaluate_excel_cell_comparator") and args.get("sheet"):
        return f"names sheet {args['sheet']!r}; OfficeBench reads the active sheet only"
    if function == "evaluate_excel_cell_comparator":
        try:
            args["matches"] = [{**m, "comparator": _comparator(m["comparator"])} for m in args["matches"]]
        except ValueError as exc:
            return str(exc)
    if function == "evaluate_exact_match":
        target = external_target(args["expected_file"], "expected_file")
        if target is not None and target.place == "reference":
            args["expected_file"] = REFERENCE_PREFIX + "/".join(target.parts)
        elif target is not None:
            return "compares with the initial testbed, which OfficeBench's layout does not keep"
        args["doc_type"] = _word_type(args["doc_type"])
    if function == "evaluate_diff_contain_text":
        args["doc_type"] = _word_type(args["doc_type"])
    if "keywords" in args:  # a keyword there is text: a number would crash its matching
        args["keywords"] = [k if isinstance(k, str) else str(_as_written(k))
                            for k in map(_as_written, args["keywords"])]
    if function == "evaluate_excel_cell_value":
        args["matches"] = [{**m, "value": _as_written(m["value"])} for m in args["matches"]]
    return args


def _carry_email_not_sent(args: dict[str, Any], mailboxes: frozenset[str] | None,
                          sent_to: frozenset[str]) -> list[dict[str, Any]] | str:
    wrong = args["recipient"].split("@")[0]
    keywords = [str(k) for k in (*args.get("subject_keywords", ()), *args.get("body_keywords", ()))]
    if mailboxes is not None and wrong not in mailboxes and wrong.lower() not in mailboxes \
            and wrong.lower() not in sent_to:
        # a person with no mailbox yet, whom the solution does not mail, must still have none
        return [{"function": "evaluate_file_not_exist", "args": {"file": f"{OFFICEBENCH_MAILBOXES}{wrong}"}}]
    if len(keywords) != 1:  # "not all of these" there, "none of these" here: said only of one keyword
        return "refuses a message holding several keywords together, which a mailbox-wide check cannot say"
    # their mailbox must not hold the keyword (checked on the task's states on export)
    return [{"function": "evaluate_not_contain", "args": {"doc_type": "email", "username": wrong,
                                                          "keywords": keywords}}]


def _carry_answer(args: dict[str, Any]) -> list[dict[str, Any]] | str:
    if "keywords" in args:
        keywords = [str(k) for k in args["keywords"]]
    elif float(args.get("tolerance", 0)) <= MAX_TOLERANCE:
        keywords = [_number_text(float(args["number"]))]
    else:
        return f"accepts any number within {args['tolerance']} of {args['number']}; OfficeBench matches text"
    file = args.get("file", ANSWER_FILE)
    refused = [str(x) if "keywords" in args else _number_text(float(x)) for x in args.get("excludes", [])]
    inside = [x for x in refused if any(x.lower() in k.lower() for k in keywords)]
    if inside:  # OfficeBench matches text: a right answer holding it would fail there
        return f"must leave out {inside[0]!r}, which OfficeBench's text match finds inside the right answer"
    return [{"function": "evaluate_contain", "args": {"doc_type": "txt", "file": file, "keywords": keywords}},
            *({"function": "evaluate_not_contain", "args": {"doc_type": "txt", "file": file, "keywords": [x]}}
              for x in refused)]


def _calendar_of(user: str) -> str:
    """A person's calendar in OfficeBench's layout."""
    return f"{OFFICEBENCH_CALENDARS}{user}.ics"


def _carry_calendar_event(args: dict[str, Any]) -> list[dict[str, Any]] | str:
    summary = args["summary"] if isinstance(args["summary"], str) else " ".join(map(str, args["summary"]))
    keywords = _unfoldable_words(summary) + [_stamp(args[k]) for k in ("start", "end") if args.get(k)]
    if not keywords:
        return "has no title word or time that survives the calendar's line folding"
    return [{"function": "evaluate_contain", "args": {"doc_type": "ics", "file": _calendar_of(args["username"]),
                                                      "keywords": keywords}},
            {"function": "evaluate_calendar_no_overlap", "args": {"username": args["username"]}}]


def _carry_calendar_no_event(args: dict[str, Any]) -> list[dict[str, Any]] | str:
    summary = args["summary"]
    if not isinstance(summary, str):
        return "names the title by several words, which the calendar's text cannot tie to one event"
    if any(c in summary for c in ",;\\\n") or len(f"SUMMARY:{summary}".encode()) > FOLD_WIDTH + 1:
        return "has a title the calendar file escapes or folds, so its text is not the title"
    # the event's first two lines: that title starting at that time (OfficeBench reads them in lower case)
    line = f"SUMMARY:{summary}\nDTSTART:{_stamp(args['start'])}"
    return [{"function": "evaluate_not_contain", "args": {"doc_type": "ics", "file": _calendar_of(args["username"]),
                                                          "keywords": [line]}}]


def _carry_email_sent(args: dict[str, Any]) -> list[dict[str, Any]] | str:
    owner = args.get("recipient") or args["sender"]
    other = args.get("sender") if args.get("recipient") else args.get("recipient")
    keywords = [str(k) for k in (*args.get("subject_keywords", ()), *args.get("body_keywords", ()))]
    if other:
        keywords.append(other.split("@")[0])
    if not keywords:
        return "names no keyword and no other party"
    # what the message must leave out: the mailbox must not hold it at all (one check each; checked on
    # the task's states on export, where an older message holding it makes the translation lost)
    return [{"function": "evaluate_contain", "args": {"doc_type": "email", "username": owner.split("@")[0],
                                                      "keywords": keywords}},
            *({"function": "evaluate_not_contain", "args": {"doc_type": "email", "username": owner.split("@")[0],
                                                            "keywords": [str(x)]}}
              for x in args.get("body_excludes", ()))]


# homer's own criteria that OfficeBench can say with its functions, each carried over its own way
_HOMER_ONLY = {"evaluate_answer": _carry_answer, "evaluate_calendar_event": _carry_calendar_event,
               "evaluate_calendar_no_event": _carry_calendar_no_event, "evaluate_email_sent": _carry_email_sent}


def to_officebench(criteria: list[dict[str, Any]], mailboxes: frozenset[str] | None = None,
                   sent_to: frozenset[str] = frozenset()) -> Translation:
    """Validated homer criteria -> OfficeBench's criteria and what was lost on the way.
    ``mailboxes``: the mailboxes of the untouched testbed, when known; ``sent_to``: the people
    (user names, lower case) the task's solution mails."""
    out = Translation()
    for index, item in enumerate(criteria):
        if item["function"] == "evaluate_stated_values":
            out.widened.append(f"[{index}] evaluate_stated_values: OfficeBench cannot check a value only where the "
                               "output states it")
            continue
        if item["function"] == "evaluate_not_pasted":
            out.widened.append(f"[{index}] evaluate_not_pasted: OfficeBench cannot tell an output from its sources "
                               "copied out")
            continue
        carried = _carry(item["function"], item["args"], mailboxes, sent_to)
        if isinstance(carried, str):
            out.lost.append(f"[{index}] {item['function']}: {carried}")
        else:
            out.criteria.extend(c for c in carried if c not in out.criteria)
    return out
