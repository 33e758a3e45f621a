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

``evaluate_calendar_no_event`` has no counterpart (OfficeBench cannot say "no event with this
title at this time"), nor has ``evaluate_email_not_sent`` (nor "no message holding all of these":
OfficeBench's ``evaluate_not_contain`` refuses any one keyword anywhere in a mailbox, and fails on a
mailbox that was never written) nor a mail check's ``body_excludes`` (what one message must leave
out: OfficeBench searches the whole mailbox), and a ``sheet`` argument cannot be kept (OfficeBench
reads the active sheet only): such criteria are reported as lost. OfficeBench's own spellings are used where they
differ: ``doc`` for Word in exact and diff checks, ``lambda x: ...`` comparators, and
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


@dataclass
class Translation:
    criteria: list[dict[str, Any]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # "[i] function: why", one per criterion not carried over


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


def _carry(function: str, args: dict[str, Any]) -> list[dict[str, Any]] | str:
    """OfficeBench criteria for one homer criterion, or why it cannot be carried over."""
    args = dict(args)
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
    if function in OFFICEBENCH_FUNCTIONS:
        return [{"function": function, "args": args}]
    if function == "evaluate_answer":
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
    if function == "evaluate_calendar_event":
        summary = args["summary"] if isinstance(args["summary"], str) else " ".join(map(str, args["summary"]))
        keywords = _unfoldable_words(summary) + [_stamp(args[k]) for k in ("start", "end") if args.get(k)]
        if not keywords:
            return "has no title word or time that survives the calendar's line folding"
        return [{"function": "evaluate_contain", "args": {"doc_type": "ics", "file": f"calendar/{args['username']}.ics",
                                                          "keywords": keywords}},
                {"function": "evaluate_calendar_no_overlap", "args": {"username": args["username"]}}]
    if function == "evaluate_email_sent":
        if args.get("body_excludes"):
            return "what the message must leave out cannot be said of a whole mailbox, which OfficeBench searches"
        owner = args.get("recipient") or args["sender"]
        other = args.get("sender") if args.get("recipient") else args.get("recipient")
        keywords = [str(k) for k in (*args.get("subject_keywords", ()), *args.get("body_keywords", ()))]
        if other:
            keywords.append(other.split("@")[0])
        if not keywords:
            return "names no keyword and no other party"
        return [{"function": "evaluate_contain", "args": {"doc_type": "email", "username": owner.split("@")[0],
                                                          "keywords": keywords}}]
    return "has no counterpart among OfficeBench's evaluation functions"


def to_officebench(criteria: list[dict[str, Any]]) -> Translation:
    """Validated homer criteria -> OfficeBench's criteria and what was lost on the way."""
    out = Translation()
    for index, item in enumerate(criteria):
        carried = _carry(item["function"], item["args"])
        if isinstance(carried, str):
            out.lost.append(f"[{index}] {item['function']}: {carried}")
        else:
            out.criteria.extend(c for c in carried if c not in out.criteria)
    return out
