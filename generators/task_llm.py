"""The llm task generator: one structured call, checked against the catalog and memory rules."""

from __future__ import annotations

import copy
import csv
import io
import random
import re
from datetime import datetime
from functools import lru_cache
from typing import Any

from backends.llm.client import ReplyCutError
from backends.prompts import render
from generators.model import TaskDraft
from generators.schemas import task_draft_prompt_schema, task_draft_schema
from generators.specifics import says_value
from office_env.apps import office_apps
from office_env.evaluation import catalog_summary, validate_criteria
from office_env.synthesis.common import is_superseded


def draft_problems(data: dict[str, Any]) -> list[str]:
    """What the schema cannot see: criteria against the catalog, and the memory rules."""
    problems = [str(p) for p in validate_criteria(data["evaluation"])]
    ids = [m["id"] for m in data["memory"]]
    if len(set(ids)) != len(ids):
        problems.append("memory: ids must be unique")
    intent = data["intent"]
    for piece in data["memory"]:
        if piece["value"].lower() not in piece["text"].lower():
            problems.append(f"memory {piece['id']}: value {piece['value']!r} must appear verbatim in its text")
        if says_value(intent, piece["value"]):
            problems.append(f"intent: contains the memory value {piece['value']!r}; remove every specific")
        for near in piece.get("distractors", ()):
            if near["value"].lower() not in near["text"].lower():
                problems.append(f"memory {piece['id']}: distractor value {near['value']!r} "
                                "must appear verbatim in its text")
    values = [(p["id"], v) for p in data["memory"]
              for v in (p["value"], *p.get("superseded", ()), *(d["value"] for d in p.get("distractors", ())))]
    for index, (mid, value) in enumerate(values):
        for other_id, other in values[index + 1:]:
            if value.lower() in other.lower() or other.lower() in value.lower():
                problems.append(f"memory {mid} and {other_id}: the values {value!r} and {other!r} overlap; "
                                "every value must be distinct and contain no other")
    known = {(p["id"], v) for p in data["memory"] for v in p.get("superseded", ())} | \
        {(p["id"], d["value"]) for p in data["memory"] for d in p.get("distractors", ())}
    steps = len(data.get("oracle", ()))
    for m in data.get("misreadings", ()):
        if (m["memory"], m["value"]) not in known:
            problems.append(f"misreadings: {m['memory']} has no superseded or near-miss value {m['value']!r}")
        for call in m["plan"]:
            if "step" in call and not call["step"] <= steps:
                problems.append(f"misreadings: {m['memory']}'s plan names step {call['step']}, "
                                f"but the oracle has {steps} call(s)")
    return problems


def with_step_refs(oracle: list[dict[str, Any]], plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``plan`` with each call that is one of the oracle's written as ``{"step": k}`` (its number in
    the oracle, from 1; ``generators.schemas.STEP_REF``): how a misreading's plan is written."""
    return [{"step": oracle.index(call) + 1} if call in oracle else call for call in plan]


def expand_steps(oracle: list[dict[str, Any]], plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inverse of ``with_step_refs``: every ``{"step": k}`` replaced by the oracle's k-th call
    (``draft_problems`` has refused a step the oracle does not have)."""
    return [dict(oracle[call["step"] - 1]) if "step" in call else call for call in plan]


_QUOTE_HEAD_RE = re.compile(r"^On .{1,120} wrote:$")


# What a surfer's notes list beside a text's lines, read from those lines (a PDF's numbers, the
# people a document names): the lines the prompt carries say them already.
DERIVED = ("numbers", "people")


def notes_for_prompt(notes: dict[str, Any]) -> dict[str, Any]:
    """The surfer notes a model needs to write a task, without what costs tokens and adds nothing:
    superseded copies (no task is set on them), what a text's notes derive from its lines
    (``DERIVED``), and the quoted lines of replies and forwards' earlier messages (each is in the
    inbox as its own message). The apps come in one order whatever the plan's, so that the prompts
    of an office's tasks share the longest beginning (a prompt cache's saving): first the notes
    every kind of task is shown whole (mailboxes, calendars), then the apps' files, which are cut to
    the files the task's kind builds on (``generators.notes_for_kind``); each in the registry's order."""
    order = {app: index for index, app in enumerate(office_apps())}
    out: dict[str, Any] = {}
    for app, note in sorted(notes.items(), key=lambda item: (isinstance(item[1], dict) and "files" in item[1],
                                                             order.get(item[0], len(order)))):
        note = dict(note)
        if isinstance(note.get("files"), list):
            note["files"] = [{k: v for k, v in f.items() if not (k in DERIVED and isinstance(f.get("lines"), list))}
                             if isinstance(f, dict) else f for f in note["files"]
                             if not (isinstance(f, dict) and is_superseded(str(f.get("file", ""))))]
        if isinstance(note.get("mailboxes"), list):  # quoted replies and what every message says left out
            note["mailboxes"] = [dict(box, messages=[_short_message(_unquoted(m)) for m in box.get("messages", [])])
                                 if isinstance(box, dict) and isinstance(box.get("messages", []), list) else box
                                 for box in note["mailboxes"]]
        if isinstance(note.get("files"), list):
            note["files"] = [_as_table(f) for f in note["files"]]
        if isinstance(note.get("calendars"), list):
            note["calendars"] = [_as_schedule(c) for c in note["calendars"]]
        out[app] = note
    return out


def notes_from_prompt(notes: dict[str, Any]) -> dict[str, Any]:
    """The surfer notes as a reader of the prompt takes them back: sheets' ``table`` as rows,
    calendars' ``events`` and ``free`` as event and free-slot lists, messages' left-out ``id`` and
    ``cc`` filled in (the inverse of the forms ``notes_for_prompt`` writes)."""
    out: dict[str, Any] = {}
    for app, note in notes.items():
        if isinstance(note, dict):
            note = dict(note)
            if isinstance(note.get("files"), list):
                note["files"] = [table_rows(f) for f in note["files"]]
            if isinstance(note.get("calendars"), list):
                note["calendars"] = [schedule_lists(c) for c in note["calendars"]]
            if isinstance(note.get("mailboxes"), list):
                note["mailboxes"] = [dict(box, messages=[_full_message(m) for m in box["messages"]])
                                     if isinstance(box, dict) and isinstance(box.get("messages"), list) else box
                                     for box in note["mailboxes"]]
        out[app] = note
    return out


_STAMP_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:00$")
_SLOT_RE = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}):00:00$")


def _as_schedule(entry: Any) -> Any:
    """A calendar's events as one CSV ``events`` table (start, end, summary; to the minute, an end on
    the start's day without its date) and its free whole hours as ``free`` ranges by day ("09:00-12:00"):
    less than half the tokens of the lists. A calendar in any other shape is left as it is."""
    if not isinstance(entry, dict) or not isinstance(entry.get("events"), list) \
            or not isinstance(entry.get("free_slots"), list):
        return entry
    events, slots = entry["events"], entry["free_slots"]
    if not all(isinstance(e, dict) and set(e) == {"summary", "start", "end"} and isinstance(e["summary"], str)
               and _STAMP_RE.match(str(e["start"])) and _STAMP_RE.match(str(e["end"])) for e in events):
        return entry
    free: dict[str, list[list[int]]] = {}
    for slot in slots:
        start = _SLOT_RE.match(str(slot.get("start"))) if isinstance(slot, dict) and set(slot) == {"start", "end"} \
            else None
        end = _SLOT_RE.match(str(slot["end"])) if start else None
        if not (start and end and start.group(1) == end.group(1) and int(end.group(2)) == int(start.group(2)) + 1):
            return entry
        day, hour = start.group(1), int(start.group(2))
        ranges = free.setdefault(day, [])
        if ranges and ranges[-1][1] == hour:
            ranges[-1][1] = hour + 1
        elif ranges and ranges[-1][1] > hour:
            return entry  # not in order: left as it is
        else:
            ranges.append([hour, hour + 1])
    buffer = io.StringIO()
    rows = [[e["start"][:16], e["end"][11:16] if e["end"][:10] == e["start"][:10] else e["end"][:16], e["summary"]]
            for e in events]
    csv.writer(buffer, lineterminator="\n").writerows([["start", "end", "summary"], *rows])
    rest = {k: v for k, v in entry.items() if k not in ("events", "free_slots")}
    return {**rest, "events": buffer.getvalue(),
            "free": {day: ", ".join(f"{a:02d}:00-{b:02d}:00" for a, b in ranges) for day, ranges in free.items()}}


def schedule_lists(entry: Any) -> Any:
    """The inverse of ``_as_schedule``: ``events`` and ``free_slots`` lists back from the table and ranges."""
    if not (isinstance(entry, dict) and isinstance(entry.get("events"), str) and isinstance(entry.get("free"), dict)):
        return entry
    lines = list(csv.reader(io.StringIO(entry["events"])))[1:]
    events = [{"summary": summary, "start": start + ":00", "end": (start[:11] + end if len(end) == 5 else end) + ":00"}
              for start, end, summary in (line for line in lines if len(line) == 3)]
    slots = []
    for day, ranges in entry["free"].items():
        for text in str(ranges).split(", ") if ranges else []:
            first, _, last = text.partition("-")
            for hour in range(int(first[:2]), int(last[:2])):
                slots.append({"start": f"{day} {hour:02d}:00:00", "end": f"{day} {hour + 1:02d}:00:00"})
    rest = {k: v for k, v in entry.items() if k not in ("events", "free")}
    return {**rest, "events": events, "free_slots": slots}


def _short_message(message: Any) -> Any:
    """A message without what the prompt says of every message: an ``id`` that is its subject and
    ".eml", an empty ``cc``."""
    if not isinstance(message, dict):
        return message
    return {k: v for k, v in message.items()
            if not (k == "id" and v == f"{message.get('subject')}.eml") and not (k == "cc" and v == "")}


def _full_message(message: Any) -> Any:
    """The inverse of ``_short_message``."""
    if not isinstance(message, dict) or "error" in message:
        return message
    return {"id": f"{message.get('subject')}.eml", **message, "cc": message.get("cc", "")}


def _as_table(entry: Any) -> Any:
    """A sheet's ``headers`` and ``rows`` as one CSV ``table`` (header line first): a third fewer
    tokens than a JSON list per row. Anything else is left as it is."""
    if not isinstance(entry, dict) or "table" in entry or not _strings(entry.get("headers")) or \
            not isinstance(entry.get("rows"), list) or not all(_strings(r) for r in entry["rows"]):
        return entry
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([entry["headers"], *entry["rows"]])
    return {**{k: v for k, v in entry.items() if k not in ("headers", "rows")}, "table": buffer.getvalue()}


def table_rows(entry: Any) -> Any:
    """The inverse of ``_as_table``: ``headers`` and ``rows`` back from a ``table`` (as a reader of
    the prompt takes them)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("table"), str) or "rows" in entry:
        return entry
    lines = list(csv.reader(io.StringIO(entry["table"])))
    rest = {k: v for k, v in entry.items() if k != "table"}
    return {**rest, "headers": lines[0] if lines else [], "rows": lines[1:]}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _unquoted(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("body"), str):
        return message
    lines = [line for line in message["body"].split("\n")
             if not line.startswith(">") and not _QUOTE_HEAD_RE.match(line)]
    return {**message, "body": "\n".join(lines).strip()}


@lru_cache(maxsize=1)
def tool_signatures() -> tuple[str, ...]:
    """Each office tool a plan may call, as ``name(argument, optional?)``: from the tool registry,
    so the prompt names the tools and arguments the replay runs, never a list kept by hand."""
    from office_env import default_registry

    signatures = []
    for tool in default_registry().openai_tools():
        function = tool["function"]
        parameters = function["parameters"]
        required = set(parameters.get("required", ()))
        names = [name if name in required else f"{name}?" for name in parameters.get("properties", {})]
        signatures.append(f"{function['name']}({', '.join(names)})")
    return tuple(signatures)


# The worked example the prompt shows: the offline builder's task of a one-app kind in a small
# fixed office (``task_example``). The office is given in the form the prompt gives an office's notes.
EXAMPLE_KIND = "sheet_question"
EXAMPLE_SEED = 0
EXAMPLE_NOW = datetime(2025, 3, 3, 9, 0)
EXAMPLE_OFFICE: dict[str, Any] = {"excel": {"app": "excel", "files": [
    {"file": "data/stock.xlsx", "sheet": "Stock", "headers": ["Item", "Units", "Price"],
     "rows": [["Paper", "40", "4.50"], ["Toner", "6", "62.00"], ["Pens", "120", "0.80"]]}]}}
# The fields of the example's draft: what a draft must have, and the plans a strong draft gives (the
# optional baseline and computed entries left out to keep the prompt small).
EXAMPLE_FIELDS = ("family", "apps", "difficulty", "description", "intent", "subtasks", "evaluation", "memory",
                  "query", "oracle", "misreadings")


@lru_cache(maxsize=1)
def _task_example() -> tuple[dict[str, Any], dict[str, Any]]:
    from generators.families import FAMILIES

    family = FAMILIES[EXAMPLE_KIND]
    built = family.build(family.input(random.Random(EXAMPLE_SEED), EXAMPLE_OFFICE, "dana", "Dana Lee",
                                      (("sam", "Sam Ortiz"),), EXAMPLE_NOW))
    if built is None:
        raise RuntimeError(f"the task example: {EXAMPLE_KIND} builds no task in the example office")
    written = built.to_dict()
    written["misreadings"] = [{**m, "plan": with_step_refs(written["oracle"], m["plan"])}
                              for m in written["misreadings"]]  # as a reply writes them
    return notes_for_prompt(EXAMPLE_OFFICE), {k: written[k] for k in EXAMPLE_FIELDS if k in written}


def task_example() -> tuple[dict[str, Any], dict[str, Any]]:
    """The office notes and the task draft the prompt shows as its worked example: built by the
    offline family builder (``EXAMPLE_KIND``, seeded) on ``EXAMPLE_OFFICE``, so the example is a task
    the project's own checks accept, not prose that can drift from the schema. Copies: the caller
    may change them."""
    return copy.deepcopy(_task_example())


def task_prompt(inputs: dict[str, Any], feedback: str = "", cut_at: int = 0) -> list[dict[str, str]]:
    """The task generator's messages: the rules, the criteria catalog, the tools a plan may call,
    a worked example (``task_example``) and the schema's short form first (the same for every
    call), then the office, the plan and any feedback (``cut_at``: the earlier reply was cut at that
    many tokens, so a shorter one is asked for). The reply is held to the whole schema (``task_draft_schema``)."""
    office, example = _task_example()
    return render("task_generator", inputs=inputs, catalog=catalog_summary(), schema=task_draft_prompt_schema(),
                  tools=tool_signatures(), example_office=office, example=example, feedback=feedback, cut_at=cut_at)


def generate_task_llm(client: Any, *, plan: dict[str, Any], notes: dict[str, Any], user: dict[str, str],
                      colleagues: list[dict[str, str]], now: datetime, attempts: int = 2) -> TaskDraft:
    """Ask for a task; re-ask with the problems quoted, at most ``attempts`` times in all. A draft cut
    at the reply limit is asked again to fit it (the optional plans left out), not resent with a
    higher limit, and not dropped while an attempt is left: dropping it would pay the planner and
    the prompt again for another task."""
    # the world's part first (the same for every task of an office with these apps), the task's last
    inputs = {"user": user, "colleagues": colleagues, "now": now.strftime("%Y-%m-%d %H:%M (%A)"),
              "notes": notes_for_prompt(notes), "plan": plan}
    feedback, cut_at = "", 0
    for attempt in range(attempts):
        messages = task_prompt(inputs, feedback, cut_at)
        try:
            data = client.structured("task_generator", messages, task_draft_schema(), split_on_cut=True)
        except ReplyCutError:
            if attempt + 1 == attempts or cut_at:
                raise  # asked to fit once already, or no attempt left: the plan tries another task
            cut_at = client.reply_tokens("task_generator") if hasattr(client, "reply_tokens") else 4096
            feedback = ""
            continue
        problems = draft_problems(data)
        if not problems:
            oracle = data.get("oracle", [])
            misreadings = [{**m, "plan": expand_steps(oracle, m["plan"])} for m in data.get("misreadings", [])]
            return TaskDraft.from_dict({**data, "oracle": oracle, "baseline": data.get("baseline", []),
                                        "misreadings": misreadings if oracle else []})
        feedback = "\n".join(problems)
    raise ValueError(f"task generator: {feedback.splitlines()[0]}")
