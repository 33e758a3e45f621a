"""The llm surfer: a function-calling loop over one app's read-only tools, then notes as JSON.

An app's items (its documents, or its mailbox or calendar owners) are explored in parts, each in a
conversation of its own whose notes are planned to fit one reply (``note_parts``: each item sized by
the notes the offline surfer writes of it), and the parts' notes are put together. A long output is
never asked for whole and resent with a higher limit when cut: that costs its text twice, and the
reads before it again.
The model is shown its part's files (and mailbox / calendar owners) up front (the whole list is a
``system_list_files`` call away; every step of the loop resends the prompt, so the rest is left out), may call only
read-only tools, and must end with notes valid against the app's part of ``NOTES_SCHEMA``.
A step cap bounds the loop (then one last reply without tools gives the notes, held to the app's
schema by ``response_format`` where the settings' ``structured_output`` asks for it); a bad final answer,
or one cut at the token limit, is repaired like any structured output.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from backends.llm.client import LLMError, check_reply, repair_prompt
from backends.prompts import compact_json, render
from backends.tokens import count_tokens
from office_env import Workspace, default_registry
from office_env.apps import get_app
from office_env.limits import MAX_OBSERVATION_CHARS
from office_env.tools import ToolRegistry
from surfers.notes import app_notes_schema
from surfers.offline import WorkspaceReader, documents, explorer, list_files, owners

MAX_CALLS_PER_REPLY = 16
DEFAULT_REPLY_TOKENS = 4096  # a client that does not say its limit
PART_SHARE = 0.6  # of the reply limit, planned for one part's notes: a model's notes run longer than the offline ones
NOTES_REPLY_TOKENS = 1024  # room kept for the notes when deciding the conversation still fits
OUT_OF_STEPS = ("You have used all {steps} steps for tool calls. Reply now with only the notes JSON object, "
                "valid against the schema, from what you have read so far.")
WINDOW_FULL = ("The conversation has filled your context window. Reply now with only the notes JSON object, valid "
               "against the schema, from what you have read so far.")


def app_schema(app: str) -> dict[str, Any]:
    """The schema of ``app``'s notes (``surfers.notes.app_notes_schema``)."""
    return app_notes_schema(app)


def app_files(app: str, files: list[str]) -> list[str]:
    """The files ``app`` reads: its documents, or its folder (mail, calendars)."""
    entry = get_app(app)
    if entry.layout != "documents":
        return [f for f in files if f.startswith(entry.folder)]
    return documents(files, entry.suffix)


def _tools(app: str) -> ToolRegistry:
    read_only = default_registry().read_only()
    return ToolRegistry(t for t in read_only if t.name in get_app(app).read_tools + ("system_list_files",))


def item_files(app: str, files: list[str], items: list[str]) -> list[str]:
    """The files of ``items``: the documents themselves, or the owners' mail folders or calendar files."""
    entry = get_app(app)
    if entry.layout == "owner_folders":
        return [f for f in app_files(app, files) if f.split("/")[1] in items]
    if entry.layout == "owner_files":
        return [f"{entry.folder}{user}{entry.suffix}" for user in items]
    return list(items)


def note_parts(app: str, ws: Workspace, files: list[str], reply_tokens: int = DEFAULT_REPLY_TOKENS
               ) -> list[list[str]]:
    """The app's items (documents, or mailbox or calendar owners) in consecutive parts whose notes
    are planned to fit ``PART_SHARE`` of a ``reply_tokens`` reply; an item is as large as the notes
    the offline surfer writes of it (an item larger than that is a part of its own)."""
    entry = get_app(app)
    items = app_files(app, files) if entry.layout == "documents" else owners(entry, files)
    sizes = dict.fromkeys(items, 0)
    try:
        entries = explorer(app)(WorkspaceReader(ws), None)[entry.notes_key]
    except Exception:  # a tool bug: the items are then one part, and the model reads the error
        entries = []
    for entry in entries:
        item = entry.get("user") or entry.get("file")
        if item in sizes:
            sizes[item] += count_tokens(compact_json(entry))
    budget = int(reply_tokens * PART_SHARE)
    parts: list[list[str]] = []
    size = 0
    for item in items:
        if parts and size + sizes[item] <= budget:
            parts[-1].append(item)
            size += sizes[item]
        else:
            parts.append([item])
            size = sizes[item]
    return parts or [[]]


def explore_llm(client: Any, app: str, ws: Workspace, *, max_steps: int = 6, max_repairs: int = 2) -> dict[str, Any]:
    """Notes on ``app``, its items explored in parts (``note_parts``), each part's from a
    tool-calling conversation of at most ``max_steps`` replies and one last reply without tools.
    A bad tool call (an unknown tool, arguments that are not a JSON object, a tool that fails) is the
    model's mistake: it gets an error observation and goes on. Only the endpoint failing or no valid
    notes at the end of a part raise :class:`LLMError`."""
    files = list_files(WorkspaceReader(ws))
    limit = client.reply_tokens("surfer") if hasattr(client, "reply_tokens") else DEFAULT_REPLY_TOKENS
    key = get_app(app).notes_key
    notes: dict[str, Any] = {"app": app, key: []}
    for items in note_parts(app, ws, files, limit):
        inputs = {"app": app, "files": item_files(app, files, items),
                  "now": ws.now.strftime("%Y-%m-%d %H:%M (%A)") if ws.now else "",
                  "users": items if get_app(app).layout != "documents" else []}
        notes[key] += _explore_part(client, app, ws, inputs, max_steps=max_steps, max_repairs=max_repairs)[key]
    return notes


def _explore_part(client: Any, app: str, ws: Workspace, inputs: dict[str, Any], *, max_steps: int,
                  max_repairs: int) -> dict[str, Any]:
    """The notes of one part's items, from a conversation of its own."""
    schema = app_schema(app)
    validator = Draft202012Validator(schema)
    tools = _tools(app)
    messages = render("surfer", app=app, inputs=inputs, schema=schema)
    repairs = 0
    error = ""
    # the notes reply is held to the app's schema where the server keeps to one (structured_output)
    shape = client.response_format("surfer", schema)
    notes_format = {"response_format": shape} if shape else {}
    for step in range(max_steps + 1):
        full = not client.fits("surfer", messages, tools.openai_tools(), reply=NOTES_REPLY_TOKENS)
        last = step == max_steps or full
        if last:  # out of steps or of context window: the notes now, from what was read so far
            messages = _within_window(client, messages, tools)
            messages.append({"role": "user",
                             "content": (WINDOW_FULL if full else OUT_OF_STEPS).format(steps=max_steps)})
            result = client.chat("surfer", messages, tools=tools.openai_tools(), tool_choice="none", **notes_format)
        else:
            result = client.chat("surfer", messages, tools=tools.openai_tools())
        messages = [*messages, result.message()]
        if result.tool_calls and not last:
            for i, request in enumerate(result.tool_calls):
                observation = _observe(tools, ws, request) if i < MAX_CALLS_PER_REPLY else (
                    f"Error: not run: at most {MAX_CALLS_PER_REPLY} tool calls per reply")
                messages.append({"role": "tool", "tool_call_id": request.id, "content": observation})
            continue
        notes, error = check_reply(result, validator)
        if not error:
            return notes
        if last:
            break
        repairs += 1
        if repairs > max_repairs:
            break
        messages.append({"role": "user", "content": repair_prompt(error)})
    raise LLMError(f"surfer ({app}): no valid notes after {step + 1} replies (max_steps={max_steps}); "
                   f"last problem: {error}", role="surfer")


DROPPED = "[this result was dropped: the conversation no longer fits the model's context window]"


def _within_window(client: Any, messages: list[dict[str, Any]], tools: ToolRegistry) -> list[dict[str, Any]]:
    """``messages`` with the longest tool results replaced by a short note, longest first, until the
    conversation and a last request fit the context window (or no result is left to drop)."""
    ask = [{"role": "user", "content": WINDOW_FULL}]
    messages = list(messages)
    while not client.fits("surfer", messages + ask, tools.openai_tools(), reply=NOTES_REPLY_TOKENS):
        results = [i for i, m in enumerate(messages) if m.get("role") == "tool" and m.get("content") != DROPPED]
        if not results:
            break
        longest = max(results, key=lambda i: len(messages[i].get("content") or ""))
        messages[longest] = {**messages[longest], "content": DROPPED}
    return messages


def _observe(tools: ToolRegistry, ws: Workspace, request: Any) -> str:
    """What one requested tool call gives the model: the tool's observation, or an error saying
    what was wrong with the call. Never raises."""
    name = request.name if isinstance(request.name, str) else repr(request.name)
    if request.arguments is None:
        return f"Error: the arguments of {name[:100]} are not a JSON object: {request.raw_arguments[:200]}"
    try:
        observation = tools.call(ws, name, request.arguments).observation
    except Exception as exc:  # a tool bug must not end the exploration: the model reads the error
        return f"Error: {name[:100]} failed: {exc.__class__.__name__}: {str(exc)[:500]}"
    if not isinstance(observation, str):
        return f"Error: {name[:100]} gave no text"
    if len(observation) > MAX_OBSERVATION_CHARS:
        observation = observation[:MAX_OBSERVATION_CHARS] + f"\n[cut at {MAX_OBSERVATION_CHARS} characters]"
    return observation
