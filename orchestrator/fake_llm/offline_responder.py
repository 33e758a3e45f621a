"""Answer each role's prompt the way the offline backend would, so whole llm builds run
through the fake endpoint with no model.

The role is recognised from the opening of the system prompt and the inputs are read from the
JSON block the prompt shows the model, exactly as a model would see them. Answers are seeded by
the request's inputs, so the same request always gets the same answer.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import OrderedDict
from datetime import date, datetime
from typing import Any, Callable, cast

from backends.fake_llm.server import Reply, Responder
from backends.fake_llm.wire import message_text
from backends.llm.strict_json import JSONLimitError, loads_limited
from generators.chances import HISTORY
from generators.dialogue_offline import HistoryWriter
from generators.families import FAMILIES
from generators.history_plan import DayPlan, events_from_prompt, weeks_of_full_days
from generators.model import Session, parse_transcript
from generators.schemas import thread_runs
from generators.task_llm import notes_from_prompt, with_step_refs
from office_env.money import CURRENCY_CODES
from office_env.seeding import rng as seeded
from office_env.tools import ToolResult, file_lister
from orchestrator.fake_llm.agent_answer import MODES, PlanSource, answer_agent, grouped_plans
from orchestrator.fake_llm.plus_answer import answer_plus
from orchestrator.fake_llm.prompt_roles import UnknownPrompt, inputs_of, role_of
from surfers.llm import listed_only, opened_item
from surfers.offline import explorer
from verifier.dialogue_rules import mark_problems, marked_turns

_NOW_RE = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2})")


def compact(answer: Any) -> str:
    """An answer as the role prompts ask for it (``json_answer`` in templates/prompts/_rules.j2):
    JSON without spaces or line breaks outside its strings."""
    return json.dumps(answer, separators=(",", ":"))


def _rng(role: str, inputs: dict[str, Any], extra: str = "") -> random.Random:
    return seeded("fake_llm", role, json.dumps(inputs, sort_keys=True), extra)


def _now(text: str) -> datetime:
    return datetime.strptime(cast("re.Match[str]", _NOW_RE.match(text)).group(1), "%Y-%m-%d %H:%M")  # as sent


def _feedback(messages: list[dict[str, Any]]) -> str:
    user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    marker = "rejected for this reason; fix it:\n"
    return user.split(marker, 1)[1].split("\n\n", 1)[0] if marker in user else ""


# -- roles -------------------------------------------------------------------------------------

def _plan(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    names = sorted(n for n, f in FAMILIES.items() if len(f.apps) == inputs["app_count"])
    suggested = inputs.get("suggested_kind")
    family = FAMILIES[suggested if suggested in names else _rng("planner", inputs).choice(names)]
    return {"apps": list(family.apps), "task_kind": family.name, "difficulty": family.difficulty,
            "exploration": f"read every {', '.join(family.apps)} item",
            "dialogue_shape": f"{inputs['days']} days, about {inputs['utterances_per_day']} utterances a day"}


class _HistoryReader:
    """Serves tool results from the conversation; records the calls it does not have yet.

    A call in the history whose arguments are not a JSON object (a reply broken by a fault) ran
    nothing, so it is not a result: the call is asked for again."""

    def __init__(self, inputs: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        self.now = _now(inputs["now"])
        self.app = inputs["app"]
        self.files = inputs["files"]
        self.pending: list[tuple[str, dict[str, Any]]] = []
        self.results: dict[tuple[str, str], str] = {}
        calls: dict[str, tuple[str, str]] = {}
        for message in messages:
            for call in message.get("tool_calls") or []:
                key = _call_key(call)
                if key is not None and isinstance(call.get("id"), str):
                    calls[call["id"]] = key
            if message.get("role") == "tool" and message.get("tool_call_id") in calls:
                content = message.get("content")
                self.results[calls[message["tool_call_id"]]] = content if isinstance(content, str) else ""

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name == file_lister().name:
            return ToolResult(name, True, "\n".join(self.files))
        item = opened_item(self.app, name, args)
        if item is not None and item not in self.files:  # not one of the listed items: left alone
            return ToolResult(name, False, "Error: not listed")
        key = (name, json.dumps(args, sort_keys=True))
        if key in self.results:
            text = self.results[key]
            return ToolResult(name, not text.startswith("Error:"), text)
        if (name, args) not in self.pending:
            self.pending.append((name, args))
        return ToolResult(name, False, "Error: not read yet")


def _call_key(call: Any) -> tuple[str, str] | None:
    """``(name, canonical arguments)`` of a tool call in a conversation, or None when its arguments
    are not a JSON object."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return None
    try:
        arguments = loads_limited(function.get("arguments") or "{}")
    except (JSONLimitError, TypeError):
        return None
    if not isinstance(arguments, dict):
        return None
    return function["name"], json.dumps(arguments, sort_keys=True)


def _surf(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> Reply:
    reader = _HistoryReader(inputs, messages)
    notes = explorer(inputs["app"])(reader, inputs.get("users"))
    if reader.pending:
        return Reply(tool_calls=[{"name": n, "arguments": a} for n, a in reader.pending], finish_reason="tool_calls")
    return Reply(content=compact(listed_only(inputs["app"], notes, reader.files)))  # the listed items' notes


# How the task generator's prompt asks again for a draft that was cut (templates/prompts/task_generator.j2).
_SHORTER = "leave out the baseline plan"


def _task(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    plan, now = inputs["plan"], _now(inputs["now"])
    colleagues = tuple((c["username"], c["name"]) for c in inputs["colleagues"])
    feedback = _feedback(messages)
    # asked to fit after a cut reply: the same task, without the baseline plan the prompt names
    shorter = _SHORTER in next((message_text(m) for m in messages if m.get("role") == "user"), "")
    same_count = sorted(n for n, f in FAMILIES.items() if len(f.apps) == len(plan["apps"]))
    listed = plan.get("other_kinds")  # kind -> the apps it needs, in the order to try them
    others = [n for n in listed if n in same_count] if isinstance(listed, dict) else []
    order = list(dict.fromkeys(([plan["task_kind"]] if plan["task_kind"] in FAMILIES else []) + others + same_count))
    notes = notes_from_prompt(inputs["notes"])  # sheets, calendars and messages read back from the prompt's forms
    told = plan.get("query_names_work")  # whether the query names the work, if the prompt says
    told = told if isinstance(told, bool) else None
    for name in order:
        draft = FAMILIES[name].build(FAMILIES[name].input(_rng("task", inputs, name + feedback), notes,
                                                          inputs["user"]["username"], inputs["user"]["name"],
                                                          colleagues, now,
                                                          named_query=True if plan.get("long_history") else told))
        if draft is not None:
            _remember_plan(draft.description, draft.to_dict()["oracle"])
            written = draft.to_dict()
            written["misreadings"] = [{**m, "plan": with_step_refs(written["oracle"], m["plan"])}
                                      for m in written["misreadings"]]  # the oracle's calls by their number
            return {k: v for k, v in written.items() if k != "baseline"} if shorter else written
    return {"error": "no task fits this office"}


# The plans of the tasks this endpoint wrote, by full description: asked to do a task described in
# full, the fake agent can replay its plan; asked with only an intent, it cannot, and does nothing.
_WRITTEN_PLANS: "OrderedDict[str, list[dict[str, Any]]]" = OrderedDict()
_PLANS_LOCK = threading.Lock()
MAX_WRITTEN_PLANS = 4096
MAX_PLAN_CHARS = 64 * 1024  # a task's description and plan; real ones are a few hundred characters


def _remember_plan(description: str, plan: list[dict[str, Any]]) -> None:
    if len(description) + len(json.dumps(plan, default=str)) > MAX_PLAN_CHARS:
        return  # an office this large came from a hostile request: not worth keeping
    with _PLANS_LOCK:
        _WRITTEN_PLANS[description.strip()] = plan
        _WRITTEN_PLANS.move_to_end(description.strip())
        while len(_WRITTEN_PLANS) > MAX_WRITTEN_PLANS:
            _WRITTEN_PLANS.popitem(last=False)


def _written_plans() -> dict[str, list[list[dict[str, Any]]]]:
    with _PLANS_LOCK:
        return {description: [plan] for description, plan in _WRITTEN_PLANS.items()}


def _days(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The days a dialogue prompt asks for (its "days"), each written as a prompt for that day
    alone would be, in order."""
    days = inputs.get("days")
    if not isinstance(days, list) or not 1 <= len(days) <= MAX_DAYS_PER_REQUEST or \
            not all(isinstance(d, dict) for d in days):
        return {"error": f"'days' must be a list of 1 to {MAX_DAYS_PER_REQUEST} objects"}
    shared = {k: v for k, v in inputs.items() if k != "days"}
    written = []
    for day in days:
        answer = _day({**shared, **day}, messages)
        if "error" in answer:
            return answer
        written.append(answer)
    return {"days": written}


def _day(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One day written by the offline history writer from the day's planned events."""
    utterances = inputs.get("utterances")
    if not isinstance(utterances, int) or not 1 <= utterances <= MAX_UTTERANCES_PER_DAY:
        return {"error": f"'utterances' must be an integer from 1 to {MAX_UTTERANCES_PER_DAY}"}
    day = datetime.strptime(inputs["date"], "%Y-%m-%d").date()
    shown = inputs.get("events")
    if not isinstance(shown, list) or not all(isinstance(e, dict) for e in shown):
        return {"error": "'events' must be a list of objects"}
    events = events_from_prompt(shown)  # a key left out is the event before's
    # Each day is written on its own (as if its prompt held that day alone), so the persona's details
    # may differ between days; lines repeated from earlier days are caught and the days asked again.
    rng = _rng("dialogue_day", inputs, _feedback(messages))
    days = inputs.get("total_days")
    long = isinstance(days, int) and weeks_of_full_days(days, utterances)  # as the offline writer names the work
    full_name = HISTORY.long_history_full_name if long else HISTORY.full_name
    writer = HistoryWriter([], rng=rng, user_first=inputs["user_first"], colleagues=inputs["colleagues"],
                           company=inputs["company"], projects=inputs["projects"], city=inputs.get("city", ""),
                           files=inputs.get("files", []), values=[str(v) for v in inputs.get("task_values", [])],
                           banned=_already_said(messages) + _earlier_days(inputs),
                           answers=_strings(inputs.get("checked_values")),
                           currency=inputs["currency"] if inputs.get("currency") in CURRENCY_CODES else "",
                           absences=_absences(inputs.get("away")),
                           anchors=sorted({e.anchor for e in events if e.anchor}),
                           stated_full_names=HISTORY.stated_full_names, full_name=full_name)
    session = writer.day(DayPlan(inputs["day"], day, events), inputs["utterances"])
    _remember_day(inputs, [t.text for t in session.turns])
    return {"turns": thread_runs([{t.role: t.text, **{k: v for k, v in t.to_dict().items()
                                                      if k not in ("role", "text", "ts")}} for t in session.turns])}


MAX_DAYS_PER_REQUEST = 31
MAX_ABSENCES = 100  # spans of colleagues away in one request; a real office has a handful
MAX_ABSENCE_DAYS = 366
_ISO_DAY_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


def _absences(value: Any) -> list[tuple[str, date, date]]:
    """The colleagues away from a request's "away" list of ``{"name", "first", "last"}`` (ISO days):
    at most ``MAX_ABSENCES`` entries read, each a name of at most 100 characters and a span of at
    most ``MAX_ABSENCE_DAYS`` days; anything else in the list is left out."""
    if not isinstance(value, list):
        return []
    out = []
    for entry in value[:MAX_ABSENCES]:
        if not isinstance(entry, dict):
            continue
        name, first, last = entry.get("name"), entry.get("first"), entry.get("last")
        if not (isinstance(name, str) and name.strip() and len(name) <= 100
                and isinstance(first, str) and isinstance(last, str)
                and _ISO_DAY_RE.match(first) and _ISO_DAY_RE.match(last)):
            continue
        try:
            start, end = date.fromisoformat(first), date.fromisoformat(last)
        except ValueError:
            continue
        if start <= end and (end - start).days < MAX_ABSENCE_DAYS:
            out.append((name.strip(), start, end))
    return out


def _strings(value: Any, most: int = 200, chars: int = 200) -> list[str]:
    """At most ``most`` strings of at most ``chars`` characters from a list in a request (else none)."""
    return [str(v)[:chars] for v in value[:most]] if isinstance(value, list) else []


# What this endpoint wrote for each history, day by day: a model that writes a history day by day
# remembers its earlier days, so a later day does not repeat their lines.
# Bounded as an LRU cache in histories and in characters, so a long-running endpoint (or one fed
# hostile requests) keeps a fixed amount of memory; a history forgotten only repeats more lines.
_HISTORIES: "OrderedDict[str, dict[int, list[str]]]" = OrderedDict()
_HISTORIES_LOCK = threading.Lock()
_HISTORY_CHARS = [0]  # characters of every line kept in _HISTORIES
MAX_HISTORIES = 256
MAX_HISTORY_DAYS = 366
MAX_HISTORY_CHARS = 16 * 1024 * 1024
MAX_UTTERANCES_PER_DAY = 1_000


def _history_key(inputs: dict[str, Any]) -> str:
    keep = {k: inputs.get(k) for k in ("user_first", "colleagues", "company", "projects", "city", "files",
                                        "task_values", "checked_values", "total_days", "utterances")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _chars(lines: list[str]) -> int:
    return sum(len(line) for line in lines)


def _earlier_days(inputs: dict[str, Any]) -> list[str]:
    key = _history_key(inputs)
    with _HISTORIES_LOCK:
        days = _HISTORIES.get(key)
        if days is None:
            return []
        _HISTORIES.move_to_end(key)
        return [line for day, lines in days.items() if day < inputs["day"] for line in lines]


def _remember_day(inputs: dict[str, Any], lines: list[str]) -> None:
    day = inputs.get("day")
    if not isinstance(day, int) or not 1 <= day <= MAX_HISTORY_DAYS:
        return
    key = _history_key(inputs)
    with _HISTORIES_LOCK:
        days = _HISTORIES.setdefault(key, {})
        _HISTORY_CHARS[0] += _chars(lines) - _chars(days.get(day, []))
        days[day] = lines
        _HISTORIES.move_to_end(key)
        while len(_HISTORIES) > 1 and (len(_HISTORIES) > MAX_HISTORIES or _HISTORY_CHARS[0] > MAX_HISTORY_CHARS):
            _, dropped = _HISTORIES.popitem(last=False)
            _HISTORY_CHARS[0] -= sum(_chars(old) for old in dropped.values())


_SAID_RE = re.compile(r'^- ("(?:[^"\\]|\\.)*") \(said at day \d+ turn \d+\)$')


def _already_said(messages: list[dict[str, Any]]) -> list[str]:
    """Lines the prompt says were said already (a day asked again), as a model would read them."""
    user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    out = []
    for line in user.splitlines():
        match = _SAID_RE.match(line.strip())
        if match:
            try:
                out.append(json.loads(match.group(1)))
            except json.JSONDecodeError:
                continue
    return out


def _verify(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The rules a reader can check on the turns shown (the work's, small talk left out): every
    memory value said and marked as it should be, and an intent that leaks none."""
    memory = [m for m in inputs["memory"] if isinstance(m, dict)]
    user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    sessions = parse_transcript(user)
    problems = mark_problems(memory, marked_turns([s.to_dict() for s in sessions]))
    intent = str(inputs.get("intent", "")).lower()
    problems += [f"intent leaks memory {m.get('id')}" for m in memory
                 if isinstance(m.get("value"), str) and m["value"].strip() and m["value"].lower() in intent]
    return {"passed": not problems, "feedback": "\n".join(problems) if problems else "ok"}


def _judge(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"vote": "accept", "reason": "complete and clear: every detail the task needs is in the chat"}


def _summarize(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    from harness.summaries import extractive_summary  # imported here: no import cycle through harness/__init__

    return {"summary": extractive_summary([Session.from_dict(s) for s in inputs["sessions"]])}


def _probe(inputs: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A reader with simple rules: the option said last in the history (the latest word stands),
    or said first when the question asks what something was before it changed; when none is said,
    "none of these" (or the first option when it is not offered)."""
    user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    history = user.split("\nHistory:\n", 1)[-1].lower() if "\nHistory:\n" in user else ""
    options = cast("dict[str, Any]", inputs.get("options")) if isinstance(inputs.get("options"), dict) else {}
    letters = sorted(options)
    earlier = str(inputs.get("question", "")).lower().startswith("before it was changed")
    said = [((history.find if earlier else history.rfind)(str(text).lower()), letter)
            for letter, text in options.items() if str(text).strip() and str(text).lower() in history]
    if not said:  # nothing said: "none of these" when offered, else the first option
        fallback = [letter for letter, text in options.items() if str(text).startswith("None of these")]
        return {"answer": fallback[0] if fallback else (letters[0] if letters else "A")}
    return {"answer": (min(said) if earlier else max(said))[1]}


_ANSWERS = {"planner": _plan, "task_generator": _task, "dialogue_day": _days, "verifier": _verify, "judge": _judge,
            "summarizer": _summarize, "probe": _probe}


def offline_responder(body: dict[str, Any]) -> Reply:
    """The fake endpoint's default answer to one chat-completions request."""
    messages = body.get("messages", [])
    try:
        role = role_of(messages)
        if role == "agent":  # a task it wrote, described in full: replay; anything else: no action
            return answer_agent(messages, _written_plans(), "oracle")
        inputs = inputs_of(messages)
    except (UnknownPrompt, json.JSONDecodeError) as exc:
        return Reply(content=compact({"error": str(exc)}))
    if role == "surfer":
        return _surf(inputs, messages)
    if role == "plus_generator":
        return Reply(content=compact(answer_plus(inputs, _feedback(messages))))
    return Reply(content=compact(_ANSWERS[role](inputs, messages)))


def default_responder() -> Responder:
    """The responder ``homer fake-llm`` serves with: every role prompt of this project answered
    the way the offline backend would (anything else gets an error object)."""
    return offline_responder


def agent_responder(plans: PlanSource, mode: str = "oracle",
                    fallback: Callable[[dict], Reply | str] | None = None, noise: float = 0.0,
                    seed: int = 0) -> Callable[[dict], Reply | str]:
    """A responder for :class:`FakeLLMServer`: agent prompts answered from ``plans`` (``{request: plan}``
    or ``(request, plan)`` pairs; pairs allow several tasks with the same request) in ``mode`` (the
    ``noisy`` one makes a mistake in about ``noise`` of the tasks, drawn from ``seed``); every other
    request goes to ``fallback`` (default: the offline responder)."""
    if mode not in MODES:
        raise ValueError(f"unknown agent mode {mode!r}: expected one of {', '.join(MODES)}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise {noise!r}: must be from 0 to 1")
    grouped = grouped_plans(plans)
    answer_other = fallback or offline_responder

    def responder(body: dict) -> Reply | str:
        messages = body.get("messages") or []
        try:
            role = role_of(messages)
        except UnknownPrompt:
            role = None
        if role == "agent":  # a model that was shown no tools cannot call one
            return answer_agent(messages, grouped, mode if body.get("tools") else "none", noise=noise, seed=seed)
        return answer_other(body)

    return responder
