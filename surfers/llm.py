"""The llm surfer: a function-calling loop over one app's read-only tools, then notes as JSON.

An app's items (its documents, or its mailbox or calendar owners) are explored in parts, each in a
conversation of its own whose notes are planned to fit one reply (``note_parts``: each item sized by
the notes the offline surfer writes of it), and the parts' notes are put together. A long output is
never asked for whole and resent with a higher limit when cut: that costs its text twice, and the
reads before it again.
The model is shown its part's files (and mailbox / calendar owners) up front (the whole list is a
``system_list_files`` call away; every step of the loop resends the prompt, so the rest is left out), may call only
read-only tools, and must end with notes valid against the app's part of ``NOTES_SCHEMA``.
The reads every part begins with (each listed item opened with the app's read tools, as the offline
surfer of the app opens them) are made up front and shown as the conversation's first tool calls
(``part_reads``): a model's first reply would only ask for them, and that reply costs a whole
prompt, so a part takes one call where nothing else needs reading. The model may still read more.
A step cap bounds the loop (then one last reply without tools gives the notes, held to the app's
schema by ``response_format`` where the settings' ``structured_output`` asks for it); a bad final answer,
or one cut at the token limit, is repaired like any structured output.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from backends.llm.client import LLMError, check_reply, repair_prompt
from backends.prompts import compact_json, render
from backends.tokens import count_tokens
from office_env import Workspace
from office_env.apps import get_app
from office_env.limits import MAX_OBSERVATION_CHARS
from office_env.tools import ToolRegistry, ToolResult, file_lister, read_only_registry
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
    return ToolRegistry(t for t in read_only_registry() if t.name in (*get_app(app).read_tools, file_lister().name))


def item_files(app: str, files: list[str], items: list[str]) -> list[str]:
    """The files of ``items``: the documents themselves, the owners' mail folders or calendar files,
    or the messages of a mailbox too large for one part (an item that is a message file)."""
    entry = get_app(app)
    out: list[str] = []
    for item in items:
        if entry.layout == "owner_folders" and "/" not in item:
            out += [f for f in app_files(app, files) if f.split("/")[1] == item]
        elif entry.layout == "owner_files":
            out.append(f"{entry.folder}{item}{entry.suffix}")
        else:
            out.append(item)
    return out


def item_owner(app: str, item: str) -> str:
    """Whose an owner-laid app's item is: the owner itself, or the owner of a message file."""
    folder = get_app(app).folder
    return item[len(folder):].split("/", 1)[0] if "/" in item and item.startswith(folder) else item


def opened_item(app: str, name: str, args: dict[str, Any]) -> str | None:
    """The file a read call of ``app`` opens (``App.read_paths``: ``emails/<user>/<id>`` for a
    message), or None for a call that opens no one item (a mailbox's or a calendar's listing)."""
    template = get_app(app).read_paths().get(name)
    if template is None:
        return None
    try:
        return template.format_map({k: str(v) for k, v in args.items()})
    except (KeyError, IndexError, ValueError):
        return None


def listed_only(app: str, notes: dict[str, Any], files: list[str]) -> dict[str, Any]:
    """``notes`` with only the messages among ``files`` (a part of a mailbox lists some of its
    messages, and its notes are of those alone); any other app's notes as they are."""
    entry = get_app(app)
    if entry.layout != "owner_folders":
        return notes
    listed = set(files)

    def path(user: str, message: dict[str, Any]) -> str:
        return f"{entry.folder}{user}/{message['id']}" if "id" in message else str(message.get("file"))

    return {**notes, entry.notes_key: [
        {**box, "messages": [m for m in box["messages"] if isinstance(m, dict) and path(box["user"], m) in listed]}
        if isinstance(box, dict) and isinstance(box.get("messages"), list) else box
        for box in notes.get(entry.notes_key, [])]}


def _item_sizes(app: str, ws: Workspace, files: list[str]) -> dict[str, int]:
    """The app's items, in the order its offline surfer notes them, each with the tokens of those
    notes: documents, calendar owners, and each message of a mailbox (a mailbox's notes can outgrow
    a reply of their own; one with no message, or none readable, is its owner)."""
    entry = get_app(app)
    items = app_files(app, files) if entry.layout == "documents" else owners(entry, files)
    try:
        entries = explorer(app)(WorkspaceReader(ws), None)[entry.notes_key]
    except Exception:  # a tool bug: the items are then one part, and the model reads the error
        return dict.fromkeys(items, 0)
    sizes = dict.fromkeys(items, 0)
    for noted in entries:
        item = noted.get("user") or noted.get("file")
        messages = noted.get("messages") if entry.layout == "owner_folders" else None
        if item in sizes and messages:
            del sizes[item]
            wrapper = count_tokens(compact_json({**noted, "messages": []}))  # counted with the first message
            for message in messages:
                path = f"{entry.folder}{item}/{message['id']}" if "id" in message else str(message.get("file"))
                sizes[path] = sizes.get(path, 0) + count_tokens(compact_json(message)) + wrapper
                wrapper = 0
        elif item in sizes:
            sizes[item] += count_tokens(compact_json(noted))
    return sizes


def note_parts(app: str, ws: Workspace, files: list[str], reply_tokens: int = DEFAULT_REPLY_TOKENS
               ) -> list[list[str]]:
    """The app's items (documents, calendar owners, mailbox messages: ``_item_sizes``) in
    consecutive parts whose notes are planned to fit ``PART_SHARE`` of a ``reply_tokens`` reply (an
    item larger than that is a part of its own). A mailbox that fits whole in a part is one item."""
    sizes = _item_sizes(app, ws, files)
    budget = int(reply_tokens * PART_SHARE)
    if get_app(app).layout == "owner_folders":  # a mailbox that fits a part is read as a whole
        whole: dict[str, int] = {}
        for item, size in sizes.items():
            whole[item_owner(app, item)] = whole.get(item_owner(app, item), 0) + size
        split = {owner for owner, size in whole.items() if size > budget}
        sizes = {item: size for item, size in sizes.items() if item_owner(app, item) in split} | \
            {owner: size for owner, size in whole.items() if owner not in split}
        order = list(dict.fromkeys(item_owner(app, item) for item in sizes))
        sizes = {item: sizes[item] for owner in sorted(order) for item in sizes if item_owner(app, item) == owner}
    parts: list[list[str]] = []
    size = 0
    for item, item_size in sizes.items():
        if parts and size + item_size <= budget:
            parts[-1].append(item)
            size += item_size
        else:
            parts.append([item])
            size = item_size
    return parts or [[]]


def explore_llm(client: Any, app: str, ws: Workspace, *, max_steps: int = 6, max_repairs: int = 2) -> dict[str, Any]:
    """Notes on ``app``, its items explored in parts (``note_parts``), each part's from a
    tool-calling conversation of at most ``max_steps`` replies and one last reply without tools.
    A bad tool call (an unknown tool, arguments that are not a JSON object, a tool that fails) is the
    model's mistake: it gets an error observation and goes on. Only the endpoint failing or no valid
    notes at the end of a part raise :class:`LLMError`. The parts of one mailbox make one entry."""
    files = list_files(WorkspaceReader(ws))
    limit = client.reply_tokens("surfer") if hasattr(client, "reply_tokens") else DEFAULT_REPLY_TOKENS
    key = get_app(app).notes_key
    notes: dict[str, Any] = {"app": app, key: []}
    for items in note_parts(app, ws, files, limit):
        owned = get_app(app).layout != "documents"
        inputs = {"app": app, "files": item_files(app, files, items),
                  "now": ws.now.strftime("%Y-%m-%d %H:%M (%A)") if ws.now else "",
                  "users": list(dict.fromkeys(item_owner(app, i) for i in items)) if owned else []}
        for noted in _explore_part(client, app, ws, inputs, max_steps=max_steps, max_repairs=max_repairs)[key]:
            last = notes[key][-1] if notes[key] else {}
            if isinstance(noted, dict) and isinstance(noted.get("messages"), list) and "user" in noted \
                    and last.get("user") == noted["user"] and isinstance(last.get("messages"), list):
                last["messages"] = last["messages"] + noted["messages"]  # the next part of the same mailbox
            else:
                notes[key].append(noted)
    return notes


def _explore_part(client: Any, app: str, ws: Workspace, inputs: dict[str, Any], *, max_steps: int,
                  max_repairs: int) -> dict[str, Any]:
    """The notes of one part's items, from a conversation of its own."""
    schema = app_schema(app)
    validator = Draft202012Validator(schema)
    tools = _tools(app)
    messages = render("surfer", app=app, inputs=inputs, schema=schema) + part_reads(app, ws, tools, inputs)
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
        # the notes are due at the last step, and once a reply meant as the notes is being repaired:
        # no more tools then, and the reply is held to the schema where the server keeps to one
        due = last or repairs > 0
        if due:
            result = client.chat("surfer", messages, tools=tools.openai_tools(), tool_choice="none", **notes_format)
        else:
            result = client.chat("surfer", messages, tools=tools.openai_tools())
        messages = [*messages, result.message()]
        if result.tool_calls and not due:
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


class _PartReader:
    """The reads of one part's items as the app's offline surfer makes them (``system_list_files``
    answered with the part's files, as the prompt lists them; a message of another part is not
    read), each run on the workspace through the surfer's tools and kept with the observation the
    model is shown."""

    def __init__(self, app: str, tools: ToolRegistry, ws: Workspace, files: list[str]) -> None:
        self.app, self.tools, self.ws, self.files, self.now = app, tools, ws, files, ws.now
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name == file_lister().name:
            return ToolResult(name, True, "\n".join(self.files))
        item = opened_item(self.app, name, args)
        if item is not None and item not in self.files:  # another part's message: not read here
            return ToolResult(name, False, "Error: not in this part")
        observation = _observe_call(self.tools, self.ws, name, args)
        self.calls.append((name, args, observation))
        return ToolResult(name, not observation.startswith("Error:"), observation)


def part_reads(app: str, ws: Workspace, tools: ToolRegistry, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The part's reads as assistant tool calls (at most ``MAX_CALLS_PER_REPLY`` a message, a new
    message where the tool changes: a list before the reads it names) and their results: what the
    model's first replies would ask for, made without a model call. Nothing when the offline surfer
    of the app fails on this office (the model then reads for itself)."""
    reader = _PartReader(app, tools, ws, inputs["files"])
    try:
        explorer(app)(reader, inputs["users"] or None)
    except Exception:  # a tool bug: the model reads the items itself and meets the error there
        return []
    rounds: list[list[tuple[str, dict[str, Any], str]]] = []
    for call in reader.calls:
        if rounds and rounds[-1][-1][0] == call[0] and len(rounds[-1]) < MAX_CALLS_PER_REPLY:
            rounds[-1].append(call)
        else:
            rounds.append([call])
    messages: list[dict[str, Any]] = []
    number = 0
    for calls in rounds:
        ids = [f"call_{number + i}" for i in range(1, len(calls) + 1)]
        number += len(calls)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for id_, (name, args, _) in zip(ids, calls)]})
        messages += [{"role": "tool", "tool_call_id": id_, "content": observation}
                     for id_, (_, _, observation) in zip(ids, calls)]
    return messages


def _observe(tools: ToolRegistry, ws: Workspace, request: Any) -> str:
    """What one requested tool call gives the model: the tool's observation, or an error saying
    what was wrong with the call. Never raises."""
    name = request.name if isinstance(request.name, str) else repr(request.name)
    if request.arguments is None:
        return f"Error: the arguments of {name[:100]} are not a JSON object: {request.raw_arguments[:200]}"
    return _observe_call(tools, ws, name, request.arguments)


def _observe_call(tools: ToolRegistry, ws: Workspace, name: str, arguments: dict[str, Any]) -> str:
    """A tool's observation for ``arguments`` (cut at ``MAX_OBSERVATION_CHARS``), or the error it
    raised, as the model is shown it. Never raises."""
    try:
        observation = tools.call(ws, name, arguments).observation
    except Exception as exc:  # a tool bug must not end the exploration: the model reads the error
        return f"Error: {name[:100]} failed: {exc.__class__.__name__}: {str(exc)[:500]}"
    if not isinstance(observation, str):
        return f"Error: {name[:100]} gave no text"
    if len(observation) > MAX_OBSERVATION_CHARS:
        observation = observation[:MAX_OBSERVATION_CHARS] + f"\n[cut at {MAX_OBSERVATION_CHARS} characters]"
    return observation
