"""An answer that names the right value beside a wrong one is a hedge, and it must not pass.

A question's check looks for the right number or words in the answer file; an agent unsure which
invoice, month or person the user meant could write every candidate and pass. The wrong
candidates worth refusing are known: what the intent-only plan answers and what each misreading
(the earlier or the near-miss value taken for the final one) answers. ``exclude_hedges`` puts
those answers into the check's ``excludes``. Only answers that are a bare value are used: a
sentence holds words a right answer may hold too. A question answered in words refuses only the
misreadings' answers: they answer the same question about another thing, while the intent-only
plan may have answered another question whose words a right answer may use as context. So may its
number where the family answers the whole of what the chat narrows (``WHOLE_AS_CONTEXT``: every
row counted where the chat names one group, "3 of the 33 claims are Travel"): refused only when a
misreading answers it too.

The same holds for every other output. An agent unsure whether the corrected or the final value
counts could do both: mail the answer to the old and the new recipient, book the meeting at both
times, write both figures into the memo, add the near-miss's row too. ``hedged_plan`` is that
agent (the oracle's work and each misreading's writes besides, a document or answer written by
both holding both texts), and ``guard_hedges`` adds the checks that refuse what a misreading writes
beside the right work: no mail to the wrong person holding the answer, no mail holding the misread
value, no event at the misread time, no document holding the misread value, no file under the
misread name, no cell changed to the misread value. The gates prove it: the hedged plan must fail.
"""

from __future__ import annotations

import copy
import difflib
import re
from dataclasses import replace
from typing import Any

from generators.model import TaskDraft, ToolCall
from generators.specifics import find_specifics, says_value
from office_env import default_registry
from office_env.evaluation import keywords as kw
from office_env.tools import converted_path

_PLAIN_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
MAX_EXCLUDED_CHARS = 80  # a value, not a sentence


def written_answers(plan: list[ToolCall]) -> list[str]:
    """What a plan writes as its answer (the last write wins; earlier ones are kept too: they were said)."""
    return [str(c.args.get("text", "")).strip() for c in plan
            if c.tool == "system_write_answer" and isinstance(c.args, dict)]


def _number(text: str) -> float | None:
    cleaned = text.replace(",", "")
    return float(cleaned) if _PLAIN_NUMBER_RE.match(cleaned) else None


def _overlaps(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a in b or b in a


def answer_excludes(args: dict[str, Any], wrong: list[str]) -> list[Any]:
    """The wrong answers an ``evaluate_answer`` check with ``args`` should refuse beside the right one."""
    out: list[Any] = []
    if "number" in args:
        target, tolerance = float(args["number"]), float(args.get("tolerance", 1e-6))
        for text in wrong:
            value = _number(text)
            if value is not None and abs(value - target) > tolerance and all(abs(value - v) > tolerance for v in out):
                out.append(int(value) if value == int(value) else value)
        return out
    expected = [str(k) for k in args.get("keywords", [])]
    for text in wrong:
        if (text and len(text) <= MAX_EXCLUDED_CHARS and "\n" not in text
                and not any(_overlaps(text, k) for k in expected)
                and not any(_overlaps(text, str(o)) for o in out)):
            out.append(text)
    return out


# Families whose intent-only plan answers the whole that the asked figure is a part of, read from
# the same data: every row counted where the chat names one group, the whole column averaged. A
# right answer may give that whole as context ("3 of the 33 claims are Travel"). Anywhere else the
# intent-only answer is a guess at the same question (another column's total, another file's
# figure, a default): a hedge beside the right one.
WHOLE_AS_CONTEXT = frozenset({"group_headcount", "group_average"})


def _sources(plan: list[ToolCall]) -> set[tuple[str, str]]:
    """What a plan reads: (tool, file or message) of each call that reads one."""
    registry = default_registry()
    return {(c.tool, str(c.args.get("file_path") or f"{c.args.get('user')}/{c.args.get('email_id')}"))
            for c in plan if c.tool in registry.names and not registry.get(c.tool).writes
            and ("file_path" in c.args or "email_id" in c.args)}


def context_answers(draft: TaskDraft) -> list[str]:
    """The intent-only plan's answers when they are the whole the asked figure is part of: a family
    of ``WHOLE_AS_CONTEXT`` whose intent-only plan reads the very files the oracle reads."""
    if draft.family not in WHOLE_AS_CONTEXT or not draft.baseline:
        return []
    sources = _sources(draft.baseline)
    if not sources or sources != _sources(draft.oracle):
        return []
    return written_answers(draft.baseline)


def exclude_hedges(draft: TaskDraft) -> TaskDraft:
    """The draft with each answer check refusing the intent-only and the misreadings' answers; the
    intent-only plan's answer about the same data (``context_answers``) only when a misreading
    gives it too."""
    misread = [a for m in draft.misreadings for a in written_answers(m.plan)]
    context = {a.lower() for a in context_answers(draft)} - {a.lower() for a in misread}
    wrong = [a for a in written_answers(draft.baseline) if a.lower() not in context] + misread
    if not wrong:
        return draft
    evaluation = copy.deepcopy(draft.evaluation)
    for item in evaluation:
        args = item.get("args") if isinstance(item, dict) else None
        if not isinstance(args, dict) or item.get("function") != "evaluate_answer" or "excludes" in args:
            continue
        excludes = answer_excludes(args, wrong if "number" in args else misread)
        if excludes:
            args["excludes"] = excludes
    return replace(draft, evaluation=evaluation)


# -- hedges beyond the answer file -------------------------------------------------------------

MAX_GUARDED_WORDS = 3  # misread values refused per misreading and output


def _writes(call: ToolCall) -> bool:
    registry = default_registry()
    return call.tool in registry.names and registry.get(call.tool).writes


def _pairs(oracle: list[ToolCall], misread: list[ToolCall]) -> list[tuple[ToolCall | None, ToolCall | None]]:
    """The oracle's and the misreading's calls side by side (the misreading is the oracle with
    another value, so they align by tool; a call only one of them makes stands alone)."""
    matcher = difflib.SequenceMatcher(None, [c.tool for c in oracle], [c.tool for c in misread], autojunk=False)
    out: list[tuple[ToolCall | None, ToolCall | None]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("equal", "replace") and i2 - i1 == j2 - j1:
            out += list(zip(oracle[i1:i2], misread[j1:j2]))
        else:
            out += [(o, None) for o in oracle[i1:i2]] + [(None, m) for m in misread[j1:j2]]
    return out


def _same(a: ToolCall, b: ToolCall, *keys: str) -> bool:
    return a.tool == b.tool and all(a.args.get(k) == b.args.get(k) for k in keys)


def hedged_plan(oracle: list[ToolCall], misread: list[ToolCall], value: str = "") -> list[ToolCall]:
    """The oracle's work and the misreading's writes too: a second mail, event, file or cell; one
    document, answer or mail to the same person holding both texts; in a sheet the oracle creates,
    the misreading's rows below the oracle's (a cell holds one value: the oracle's). What adds
    nothing to the oracle's work (a shorter list, a value it writes anyway) is left out, so a
    misreading that cannot be hedged gives the oracle plan back."""
    created = {c.args.get("file_path") for c in oracle if c.tool == "excel_create_new_file"}
    rows: dict[Any, int] = {}
    written: dict[Any, set[str]] = {}
    for c in oracle:
        if c.tool == "excel_set_cell" and c.args.get("file_path") in created:
            rows[c.args["file_path"]] = max(rows.get(c.args["file_path"], 0), int(c.args.get("row", 0)))
            written.setdefault(c.args["file_path"], set()).add(str(c.args.get("value")))

    def both(o: ToolCall, m: ToolCall, key: str, joint: str) -> ToolCall:
        wrong, right = str(m.args.get(key, "")), str(o.args.get(key, ""))
        if not _new_words(wrong, right, value, []):
            return o
        return replace(o, args={**o.args, key: f"{right}{joint}{wrong}"})

    cells = {(_cell(c), str(c.args.get("value"))) for c in oracle if c.tool == "excel_set_cell"}
    out: list[ToolCall] = []
    for o, m in _pairs(oracle, misread):
        if m is None or (o is not None and (o == m or not _writes(m))):
            out += [o] if o is not None else []
        elif m.tool == "excel_set_cell" and (_cell(m), str(m.args.get("value"))) in cells:  # the oracle writes it too
            out += [o] if o is not None else []
        elif m.tool == "excel_set_cell" and m.args.get("file_path") in created:
            out += [o] if o is not None else []
            file = m.args["file_path"]
            if str(m.args.get("value")) not in written.get(file, set()):
                out.append(replace(m, args={**m.args, "row": int(m.args["row"]) + rows.get(file, 0)}))
        elif o is None:
            out.append(m)
        elif _same(o, m, "file_path") and o.tool == "word_write_to_file":
            out.append(both(o, m, "content", "\n"))
        elif o.tool == m.tool == "system_write_answer":
            out.append(both(o, m, "text", "\n"))
        elif _same(o, m, "sender", "recipient") and o.tool == "email_send_email":
            out.append(both(o, m, "content", "\n\n"))
        elif _same(o, m, "file_path", "row", "col", "sheet") and o.tool == "excel_set_cell":
            out.append(o)
        else:
            out += [o, m]
    return out


def _new_words(wrong: str, right: str, value: str, required: list[str], specifics: bool = True) -> list[str]:
    """What a misreading's text says that the oracle's does not, as the checks read text: its
    specifics (else its lines: the cells of a row) and the misread value; never a short number (a
    "6" is in any date of June), nor one inside (or holding) a word the right output must hold."""
    if specifics:  # a lone capitalised word ("Date", "Received") is any text's word, not a misreading's
        found = [s.text for s in find_specifics(wrong) if s.kind not in ("person", "app") or len(s.text.split()) > 1]
    else:
        found = [line for line in wrong.splitlines() if line.strip()]
    if value and says_value(wrong, value) and _distinctive(value):
        found.insert(0, value)
    found = [w for w in found if not (_NUMBERISH_RE.match(w) and len(w) < 3)]
    found.sort(key=lambda w: not _has_digit(w))  # figures first: they tell a misreading apart best
    out: list[str] = []
    # a clock the right text writes anywhere, a range's end too, is never refused: OfficeBench finds
    # "15:00" in "from 14:00 to 15:00", and an exported guard must pass on the right answer there
    hay = kw.Haystack(right)
    for word in found:
        if not hay.has(word) and not any(_overlap(word, other) for other in [*required, *out]):
            out.append(word)
    return out[:MAX_GUARDED_WORDS]


_NUMBERISH_RE = re.compile(r"^[\d.,:/-]+$")


def _has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


def _refused(words: list[str]) -> list[list[str]]:
    """The keyword sets a mail check refuses, each alone: every misread figure, date, time or code
    (no right mail holds one); names and titles only together, since a right mail may name the
    near miss as context ("not the Summit invoice, that one is paid")."""
    figures = [[w] for w in words if _has_digit(w)]
    return figures or ([[w for w in words]] if words else [])


def _distinctive(value: str) -> bool:
    """A value a right output would not hold by chance: with a digit, of several words, a file or an
    address."""
    return any(ch.isdigit() for ch in value) or len(value.split()) > 1 or "." in value or "@" in value


def _overlap(a: str, b: str) -> bool:
    """One holds the other as the checks read text ("8" is not in "8032", "Rail" is in "Rail ticket")."""
    return bool(kw.present(a, [b]) or kw.present(b, [a]))


def _mail_check(evaluation: list[dict[str, Any]], recipient: str) -> dict[str, Any] | None:
    local = str(recipient).split("@")[0].lower()
    for item in evaluation:
        args = item.get("args", {})
        if (item.get("function") == "evaluate_email_sent"
                and str(args.get("recipient", "")).split("@")[0].lower() == local):
            return args
    return None


def _required(evaluation: list[dict[str, Any]]) -> list[str]:
    """Every word and value a criterion requires, which no guard may refuse."""
    out: list[str] = []
    for item in evaluation:
        args = item.get("args", {})
        for key in ("keywords", "subject_keywords", "body_keywords"):
            if item.get("function") != "evaluate_not_contain":
                out += [str(k) for k in args.get(key) or []]
        summary = args.get("summary")
        out += [str(s) for s in (summary if isinstance(summary, list) else [summary] if summary else [])]
        out += [str(m["value"]) for m in args.get("matches") or [] if isinstance(m, dict) and "value" in m]
    return [r for r in out if r.strip()]


def _outputs(oracle: list[ToolCall], path: str) -> set[str]:
    """``path`` and the files the oracle converts it into."""
    out = {path}
    for call in oracle:
        converted = converted_path(call.tool, call.args)
        if converted is not None and call.args.get("file_path") in out:
            out.add(converted)
    return out


def _cell(call: ToolCall) -> tuple:
    return tuple(call.args.get(k) for k in ("file_path", "row", "col", "sheet"))


def _guards_for(draft: TaskDraft, misread: list[ToolCall], value: str) -> list[dict[str, Any]]:
    oracle, evaluation = draft.oracle, draft.evaluation
    required = _required(evaluation)
    made = {c.args.get("file_path") for c in oracle if c.tool in ("excel_create_new_file", "word_create_new_file",
                                                                  "word_write_to_file")}
    made |= {c.args.get("output_path") for c in oracle if c.args.get("output_path")}
    out: list[dict[str, Any]] = []
    sheet_words: dict[str, list[str]] = {}  # a sheet the oracle creates -> the values the misreading writes in it
    oracle_cells = {_cell(c) for c in oracle if c.tool == "excel_set_cell"}
    named = {c.args.get(k) for c in oracle for k in ("file_path", "output_path") if c.args.get(k)}  # the office's too
    for o, m in _pairs(oracle, misread):
        if m is None or o == m or not _writes(m) or m.tool == "system_write_answer":
            continue
        args, before = m.args, o.args if o is not None else {}
        path = args.get("output_path") or args.get("file_path")
        if path and path not in made and path not in named:  # a file only the misreading makes
            out.append({"function": "evaluate_file_not_exist", "args": {"file": path}})
            continue
        if m.tool == "email_send_email":
            check = _mail_check(evaluation, before.get("recipient", "")) if o is not None else None
            if o is not None and args.get("recipient") != before.get("recipient"):
                keys = (check or {}).get("body_keywords") or []
                field = "body_keywords" if keys else "subject_keywords"
                keys = keys or (check or {}).get("subject_keywords") or []
                if keys:
                    out.append({"function": "evaluate_email_not_sent",
                                "args": {"sender": args["sender"], "recipient": args["recipient"], field: list(keys)}})
            elif o is not None:
                words = _new_words(str(args.get("content", "")), str(before.get("content", "")), value, required)
                for keys in _refused(words):
                    out.append({"function": "evaluate_email_not_sent",
                                "args": {"sender": args["sender"], "recipient": args["recipient"],
                                         "body_keywords": keys}})
        elif m.tool == "calendar_create_event" and o is not None and o.tool == m.tool:
            if args.get("start") != before.get("start"):
                summary = next((item["args"]["summary"] for item in evaluation
                                if item.get("function") == "evaluate_calendar_event"
                                and item["args"].get("username") == before.get("user")), before.get("summary"))
                out.append({"function": "evaluate_calendar_no_event",
                            "args": {"username": args["user"], "summary": summary, "start": args["start"]}})
            elif args.get("summary") != before.get("summary") and \
                    str(args.get("summary", "")).lower() not in str(before.get("summary", "")).lower():
                out.append({"function": "evaluate_calendar_no_event",
                            "args": {"username": args["user"], "summary": args["summary"], "start": args["start"]}})
        elif m.tool == "word_write_to_file" and o is not None and o.tool == m.tool:
            words = _new_words(str(args.get("content", "")), str(before.get("content", "")), value, required)
            words = [w for w in words if _has_digit(w)] or words  # a document refuses any one of them
            for file in sorted(_outputs(oracle, str(args.get("file_path")))) if words else ():
                kind = "pdf" if file.lower().endswith(".pdf") else "docx"
                out.append({"function": "evaluate_not_contain",
                            "args": {"doc_type": kind, "file": file, "keywords": words}})
        elif m.tool == "excel_set_cell" and args.get("value") not in (None, ""):
            if args["file_path"] in made:  # a sheet of the task's own: the misread row must not be in it
                sheet_words.setdefault(args["file_path"], []).append(str(args["value"]))
                continue
            same_cell = o is not None and _cell(o) == _cell(m)
            # a cell of the office's sheet the right work leaves alone keeps its value (one the oracle
            # writes elsewhere in its plan is checked as the oracle writes it)
            if not same_cell and _cell(m) not in oracle_cells:
                literal = (args["value"]
                           if isinstance(args["value"], (int, float)) and not isinstance(args["value"], bool)
                           else '"' + str(args["value"]).replace('"', "") + '"')
                sheet = {"sheet": args["sheet"]} if args.get("sheet") else {}
                out.append({"function": "evaluate_excel_cell_comparator",
                            "args": {"file": args["file_path"], **sheet,
                                     "matches": [{"row": args["row"], "col": args["col"],
                                                  "comparator": f"!= {literal}"}]}})
    for file, values in sheet_words.items():
        right = " ".join(str(c.args.get("value")) for c in oracle
                         if c.tool == "excel_set_cell" and c.args.get("file_path") == file)
        words = _new_words("\n".join(values), right, "", required, specifics=False)
        if words:
            out.append({"function": "evaluate_not_contain",
                        "args": {"doc_type": "xlsx", "file": file, "keywords": words}})
    return out


def guard_hedges(draft: TaskDraft) -> TaskDraft:
    """The draft with checks refusing what each misreading writes beside the right work (see the
    module docstring); a check already there is not added twice."""
    evaluation = copy.deepcopy(draft.evaluation)
    for misreading in draft.misreadings:
        for guard in _guards_for(draft, misreading.plan, misreading.value):
            if guard not in evaluation:
                evaluation.append(guard)
    return replace(draft, evaluation=evaluation) if evaluation != draft.evaluation else draft
