"""The looking an agent must do before it can act, added to every plan of a task.

A family (or a model) writes a plan as if the agent already knew where everything is: it reads
``data/budget_q3.xlsx`` by name, opens a mail by its id, sets a cell it has never seen. An agent
knows none of that: it lists the folder to find the file, lists the mailbox to learn the ids,
reads a sheet before it changes a cell, looks at a calendar before it deletes from it. ``discover``
puts those calls where the agent needs them, once each, so a plan's length counts the steps
solving the task takes (difficulty is measured from it). Files whose names differ only in their
numbers (``invoice_5546.pdf``, ``invoice_9914.pdf``) can only be told apart by opening them, so
the agent reads the ones listed before the right one, unless the chat gave that number. The calls
only read, so the state a plan leaves behind is unchanged. Which call needs which comes from the
tools' declarations (``creates``, ``edits``, ``listed_by``, and the tool that ``lists_files``:
``office_env.tools.registry.Tool``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterable

from generators.model import Misreading, TaskDraft, ToolCall
from office_env.apps import file_readers, get_app, registry_cache
from office_env.tools import Tool, default_registry, file_lister, list_files_call


@dataclass(frozen=True)
class _Steps:
    """What the tools' declarations say comes before a call (made once per app registry generation)."""

    reads: frozenset[str]  # the calls that read a file (by ``file_path``)
    # the call that reads a file of each kind an office app writes (its first kind, with its first
    # such tool); other kinds are read as text
    reader_of: dict[str, str]
    creates: frozenset[str]  # the calls that make the file they name: nothing about it needs finding
    # the calls that change a file in place, each with the tool that reads it first (its app's first
    # file reader) and the argument values that make it an edit
    edits: dict[str, tuple[Tool, dict[str, str]]]
    # the calls that name an item a listing shows (a mail's id, an event's title), each with the tool that lists it
    listed_by: dict[str, Tool]


@registry_cache(maxsize=1)
def _steps() -> _Steps:
    """The tables of :class:`_Steps`, from one walk of the file readers (``office_env.apps.file_readers``)."""
    tools = default_registry()
    reads: set[str] = set()
    reader_of: dict[str, str] = {}
    reader_of_app: dict[str, Tool] = {}
    for tool, app in file_readers():
        reads.add(tool)
        if app.office:
            reader_of.setdefault(app.extensions[0], tool)
        reader_of_app.setdefault(app.name, tools.get(tool))
    edits = {t.name: (reader_of_app[t.app], dict(t.edits_when)) for t in tools if t.edits and t.app in reader_of_app}
    return _Steps(reads=frozenset(reads), reader_of=reader_of,
                  creates=frozenset(t.name for t in tools if t.creates), edits=edits,
                  listed_by={t.name: tools.get(t.listed_by) for t in tools if t.listed_by})


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


def _listing(lister: Tool, args: dict[str, Any]) -> tuple[tuple[str, str], ...] | None:
    """The arguments of a call that ``lister`` requires (the person whose items it lists), when the
    call gives each as a string; None when it does not."""
    taken = tuple((k, v) for k in lister.parameters["required"] if isinstance(v := args.get(k), str))
    return taken if len(taken) == len(lister.parameters["required"]) else None


def discover_plan(plan: list[ToolCall], files: Iterable[str], said: Iterable[str] = ()) -> list[ToolCall]:
    """``plan`` with the listing and reading calls an agent needs first. ``files`` are the testbed's
    files before the plan runs (testbed-relative): only they need finding; ``said`` are the values
    the chat gives (a number among them names its file)."""
    existing = set(files)
    said_words = {w for value in said for w in _words(value)}
    steps = _steps()
    reads, reader_of, creates, edits, listed_by = (steps.reads, steps.reader_of, steps.creates, steps.edits,
                                                   steps.listed_by)
    files_lister = file_lister()
    listers = {t.name: t for t in listed_by.values()}
    plan_reads = {c.args.get("file_path") for c in plan if c.tool in reads and isinstance(c.args, dict)}
    made: set[str] = set()
    listed_folders: set[str] = set()
    read: set[str] = set()
    listed: set[tuple[str, tuple[tuple[str, str], ...]]] = set()  # (listing tool, its arguments) called
    out: list[ToolCall] = []
    for call in plan:
        args = call.args if isinstance(call.args, dict) else {}
        path = args.get("file_path")
        if isinstance(path, str) and path in existing and path not in made and call.tool not in creates:
            folder = _folder(path)
            if folder not in listed_folders:
                out.append(ToolCall(*list_files_call(folder or None)))
                listed_folders.add(folder)
            if path not in read:
                for other in _look_alikes(path, existing, said_words):
                    reader = reader_of.get(_shape(other)[1]) or _text_reader()
                    if other not in read and other not in plan_reads:
                        out.append(ToolCall(reader, {"file_path": other}))
                        read.add(other)
            edit = edits.get(call.tool)
            if edit and path not in read and all(args.get(k) == v for k, v in edit[1].items()):
                first = edit[0]  # given the call's other arguments it takes ("sheet")
                taken = {k: args[k] for k in first.parameters["properties"] if k != "file_path" and args.get(k)}
                out.append(ToolCall(first.name, {"file_path": path, **taken}))
                read.add(path)
        lister = listed_by.get(call.tool)
        listing = _listing(lister, args) if lister else None
        if lister and listing is not None and (lister.name, listing) not in listed:
            out.append(ToolCall(lister.name, dict(listing)))
            listed.add((lister.name, listing))
        out.append(call)
        own = _listing(listers[call.tool], args) if call.tool in listers else None
        if call.tool == files_lister.name:
            listed_folders.add(str(args.get(files_lister.lists_files, "")).strip().strip("/").removeprefix("./"))
        elif own is not None:
            listed.add((call.tool, own))
        elif call.tool in reads and isinstance(path, str):
            read.add(path)
        if isinstance(path, str) and (call.tool in creates or path not in existing):
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
