"""The looking an agent must do before it can act, added to every plan of a task.

A family (or a model) writes a plan as if the agent already knew where everything is: it reads
``data/budget_q3.xlsx`` by name, opens a mail by its id, sets a cell it has never seen. An agent
knows none of that: it lists the folder to find the file, lists the mailbox to learn the ids,
reads a sheet before it changes a cell, looks at a calendar before it deletes from it. ``discover``
puts those calls where the agent needs them, once each, so a plan's length counts the steps
solving the task takes (difficulty is measured from it). Files whose names differ only in their
numbers (``invoice_5546.pdf``, ``invoice_9914.pdf``) can only be told apart by opening them, so
the agent reads the ones listed before the right one, unless the chat gave that number. The calls
only read, so the state a plan leaves behind is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable

from generators.model import Misreading, TaskDraft, ToolCall
from office_env.apps import file_readers, get_app, registry_cache

# Calls that make the file they name, so nothing about it needs finding.
_CREATES = {"word_create_new_file", "excel_create_new_file"}
# Calls that change a file the agent must have read first (an edit in place).
_EDITS = {"excel_set_cell": "excel_read_file", "excel_delete_cell": "excel_read_file",
          "word_write_to_file": "word_read_file"}


@registry_cache(maxsize=1)
def _readers() -> tuple[frozenset[str], dict[str, str]]:
    """The calls that read a file (by ``file_path``), and the one that reads a file of each kind an
    office app writes (its first kind, with its first such tool); other kinds are read as text."""
    readers = file_readers()
    reader_of: dict[str, str] = {}
    for tool, app in readers:
        if app.office:
            reader_of.setdefault(app.extensions[0], tool)
    return frozenset(tool for tool, _ in readers), reader_of


def _text_reader() -> str:
    """The file system's reader, which reads any file as text."""
    return get_app("system").read_tools[0]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _shape(path: str) -> tuple[str, str, frozenset[str]]:
    """A file's folder, extension and the words of its name other than numbers: two files of one
    shape look alike in a listing."""
    stem, _, ext = path.rsplit("/", 1)[-1].rpartition(".")
    return _folder(path), ext.lower(), frozenset(w for w in _words(stem) if not w.isdigit())


def _look_alikes(path: str, existing: set[str], said: set[str]) -> list[str]:
    """The files listed before ``path`` that an agent cannot tell from it without opening them:
    same folder, extension and words, differing in numbers, when the chat said none of ``path``'s
    numbers."""
    numbers = {w for w in _words(path.rsplit("/", 1)[-1]) if w.isdigit()}
    if numbers & said:
        return []
    shape = _shape(path)
    return [f for f in sorted(existing) if f < path and _shape(f) == shape]


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def discover_plan(plan: list[ToolCall], files: Iterable[str], said: Iterable[str] = ()) -> list[ToolCall]:
    """``plan`` with the listing and reading calls an agent needs first. ``files`` are the testbed's
    files before the plan runs (testbed-relative): only they need finding; ``said`` are the values
    the chat gives (a number among them names its file)."""
    existing = set(files)
    said_words = {w for value in said for w in _words(value)}
    reads, reader_of = _readers()
    plan_reads = {c.args.get("file_path") for c in plan if c.tool in reads and isinstance(c.args, dict)}
    made: set[str] = set()
    listed_folders: set[str] = set()
    read: set[str] = set()
    listed_mail: set[str] = set()
    listed_calendars: set[str] = set()
    out: list[ToolCall] = []
    for call in plan:
        args = call.args if isinstance(call.args, dict) else {}
        path = args.get("file_path")
        user = args.get("user")
        if isinstance(path, str) and path in existing and path not in made and call.tool not in _CREATES:
            folder = _folder(path)
            if folder not in listed_folders:
                out.append(ToolCall("system_list_files", {"folder": folder} if folder else {}))
                listed_folders.add(folder)
            if path not in read:
                for other in _look_alikes(path, existing, said_words):
                    reader = reader_of.get(_shape(other)[1]) or _text_reader()
                    if other not in read and other not in plan_reads:
                        out.append(ToolCall(reader, {"file_path": other}))
                        read.add(other)
            before = _EDITS.get(call.tool)
            if before and path not in read and not (call.tool == "word_write_to_file" and args.get("mode") != "append"):
                sheet = {"sheet": args["sheet"]} if before == "excel_read_file" and args.get("sheet") else {}
                out.append(ToolCall(before, {"file_path": path, **sheet}))
                read.add(path)
        if call.tool == "email_read_email" and isinstance(user, str) and user not in listed_mail:
            out.append(ToolCall("email_list_emails", {"user": user}))
            listed_mail.add(user)
        if call.tool == "calendar_delete_event" and isinstance(user, str) and user not in listed_calendars:
            out.append(ToolCall("calendar_list_events", {"user": user}))
            listed_calendars.add(user)
        out.append(call)
        if call.tool == "system_list_files":
            listed_folders.add(str(args.get("folder", "")).strip().strip("/").removeprefix("./"))
        elif call.tool == "email_list_emails" and isinstance(user, str):
            listed_mail.add(user)
        elif call.tool == "calendar_list_events" and isinstance(user, str):
            listed_calendars.add(user)
        elif call.tool in reads and isinstance(path, str):
            read.add(path)
        if isinstance(path, str) and (call.tool in _CREATES or path not in existing):
            made.add(path)
        output = args.get("output_path")
        if isinstance(output, str):
            made.add(output)
    return out


def discover(draft: TaskDraft, files: Iterable[str]) -> TaskDraft:
    """The draft with its oracle, baseline and misreading plans completed by ``discover_plan``; the
    values the chat says are the memory's (a misreading plan's agent heard its own value too)."""
    files = frozenset(files)
    said = [m.value for m in draft.memory]
    return replace(
        draft,
        oracle=discover_plan(draft.oracle, files, said),
        baseline=discover_plan(draft.baseline, files, said),
        misreadings=[Misreading(m.memory, m.dynamic, m.value, discover_plan(m.plan, files, [*said, m.value]))
                     for m in draft.misreadings],
    )
