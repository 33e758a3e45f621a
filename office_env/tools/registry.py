"""Typed office tools: one function each, a JSON Schema for its arguments, read or write.

A registry validates arguments before a call, turns every user error into an observation
(never an exception), and emits OpenAI function-calling definitions. Surfers get the
read-only view; agents get everything. The definitions go with every agent request, so their
wording is kept short (1,368 cl100k tokens for all 20 tools, ``bench/tool_tokens.py``
prints the figure): what the name, the type and the bounds say is not said again, and what
holds for every tool (paths are relative to the testbed) is said once, in the agent prompt.

Arguments come from strangers (an agent, a dataset's plan). Beyond the JSON schema, every string
argument must be valid Unicode (a lone surrogate such as ``"\\ud800"`` is refused, naming the
argument), and every tool checks what its files can hold. Anything a tool still raises is a bug:
it comes back as an ``Error: <tool>: internal error (...)`` observation instead of ending the
run, and the fuzz tests assert that this never happens. ``MemoryError`` and exceptions that are
not ``Exception`` subclasses (interrupts, the per-task budget's ``BudgetExceeded``) pass through.
Every observation is cut at ``MAX_OBSERVATION_CHARS`` with a marker saying how much was cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from jsonschema import Draft202012Validator

from office_env.errors import OfficeError
from office_env.limits import MAX_OBSERVATION_CHARS
from office_env.schema_errors import SchemaErrors
from office_env.workspace import Workspace

INTERNAL_ERROR = "internal error"
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")

ToolFunc = Callable[..., str]


@dataclass(frozen=True)
class Tool:
    name: str
    app: str
    description: str
    parameters: dict[str, Any]
    func: ToolFunc
    writes: bool
    # consecutive calls agreeing on ``batch_key`` may run as one: ``batch(workspace, [args, ...])``
    # returns each call's observation (or its OfficeError), exactly as the calls one by one would,
    # or None (or raises OfficeError) when it cannot, and they run one by one
    batch: Callable[[Workspace, list[dict[str, Any]]], "list[str | OfficeError] | None"] | None = None
    batch_key: tuple[str, ...] = ()
    # what a write's arguments hold, for what judges its output (bench/mutants.py): ``person`` the
    # office person whose mailbox or calendar it changes ("recipient"); ``prose`` what it says in words
    # (a mail's content and subject, an event's title), ``values`` the field values it writes (a
    # cell's value, an event's start and end)
    person: str = ""
    prose: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    # of its prose, the free text a person writes in sentences (a mail's content, a document's, the
    # answer): what the answer-form and paste gates rewrite; a subject or an event's title is a name
    body: str = ""
    # its prose only names the item it acts on (an event deleted by its title): it writes no words,
    # and the natural-form replays leave it as it is
    no_words: bool = False
    # the app whose kind it converts the file its ``file_path`` names to (a Word document to "pdf")
    converts_to: str = ""
    # what an agent must do before the call (generators/discovery.py): nothing to find the file its
    # ``file_path`` names when it ``creates`` it; read that file first when it ``edits`` it in place
    # (only when its arguments hold ``edits_when``'s values: an overwrite reads nothing); call
    # ``listed_by``, the read tool whose listing shows the item it names (a mail's id, an event's
    # title), first, with the arguments of this call that the listing takes (the same person)
    creates: bool = False
    edits: bool = False
    edits_when: Mapping[str, str] = field(default_factory=dict)
    listed_by: str = ""
    # the argument naming the folder whose files it lists, for the tool that lists the testbed's
    # files: how an agent finds a file it has not seen, its folder listed before the file is used
    lists_files: str = ""

    @property
    def says(self) -> tuple[str, ...]:
        """The arguments holding what it writes: its prose, then its values."""
        return self.prose + self.values

    def openai_definition(self) -> dict[str, Any]:
        """The definition sent with every agent request: ``parameters`` without what tells a model
        nothing (:func:`sent_schema`); types, enums, the bounds a call may meet and the required
        arguments stay, so a grammar engine binds a call as :meth:`ToolRegistry.validate` checks it."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description,
                         "parameters": sent_schema(self.parameters)},
        }


UNSENT_BOUND = 998  # a length or value bound this large no call comes near: checked, not sent


def sent_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` as sent to a model; the registry validates against ``parameters`` itself.
    Left out, as they tell a model nothing: an empty ``required``; ``additionalProperties: false``
    (the grammar engines of llama.cpp and vLLM allow no unlisted keys unless a schema says so);
    bounds of ``UNSENT_BOUND`` or more (a 998-character title, row 10,000), which a grammar
    engine would unroll."""
    sent = {k: v for k, v in parameters.items() if not (k == "required" and not v) and k != "additionalProperties"}
    if isinstance(sent.get("properties"), dict):
        sent["properties"] = {name: {k: v for k, v in prop.items()
                                     if not (k in ("maxLength", "maximum") and isinstance(v, int)
                                             and v >= UNSENT_BOUND)}
                              for name, prop in sent["properties"].items()}
    return sent


@dataclass(frozen=True)
class ToolResult:
    tool: str
    ok: bool
    observation: str

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "ok": self.ok, "observation": self.observation}


_DECLARED: list[Tool] = []


def tool(
    app: str,
    name: str,
    description: str,
    *,
    writes: bool,
    properties: dict[str, Any],
    required: Iterable[str] = (),
    batch: Callable[[Workspace, list[dict[str, Any]]], "list[str | OfficeError] | None"] | None = None,
    batch_key: tuple[str, ...] = (),
    person: str = "",
    prose: tuple[str, ...] = (),
    values: tuple[str, ...] = (),
    body: str = "",
    no_words: bool = False,
    converts_to: str = "",
    creates: bool = False,
    edits: bool = False,
    edits_when: Mapping[str, str] | None = None,
    listed_by: str = "",
    lists_files: str = "",
) -> Callable[[ToolFunc], ToolFunc]:
    """Declare ``func(workspace, **args) -> observation`` as the tool ``<app>_<name>`` (the other
    arguments: see :class:`Tool`; ``person``, ``prose``, ``values``, ``body``, ``lists_files`` and
    ``edits_when``'s keys name its arguments). Declared again (its module imported again), the newer
    one stands."""
    when = dict(edits_when or {})
    named = ((person,) if person else ()) + prose + values + ((body,) if body else ()) + tuple(when) + (
        (lists_files,) if lists_files else ())
    on_file = ("file_path",) if creates or edits or converts_to else ()
    unknown = [key for key in named + on_file if key not in properties]
    if unknown:
        raise ValueError(f"tool {app}_{name}: {unknown[0]!r} is none of its arguments")
    if body and body not in prose:
        raise ValueError(f"tool {app}_{name}: its body {body!r} is none of its prose")
    if when and not edits:
        raise ValueError(f"tool {app}_{name}: edits_when without edits")
    if no_words and not prose:
        raise ValueError(f"tool {app}_{name}: no_words without prose")

    def decorate(func: ToolFunc) -> ToolFunc:
        schema = {
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        }
        Draft202012Validator.check_schema(schema)
        declared = Tool(f"{app}_{name}", app, description, schema, func, writes, batch, batch_key, person=person,
                        prose=prose, values=values, body=body, no_words=no_words, converts_to=converts_to,
                        creates=creates, edits=edits, edits_when=when,
                        listed_by=listed_by, lists_files=lists_files)
        _DECLARED[:] = [t for t in _DECLARED if not _again(t, declared)] + [declared]
        return func

    return decorate


def _again(earlier: Tool, later: Tool) -> bool:
    """Whether ``later`` is ``earlier`` declared again by the same module (imported anew); two
    modules declaring one name are both kept, for the registry to refuse."""
    return earlier.name == later.name and earlier.func.__module__ == later.func.__module__


def declared_tools() -> list[Tool]:
    return list(_DECLARED)


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return error.message
    if error.validator == "required":
        return error.message
    if error.validator == "maxLength" and isinstance(error.instance, str):
        return (f"argument '{where}': {len(error.instance):,} characters, "
                f"over the {error.validator_value:,}-character limit")
    return f"argument '{where}': {error.message}" if where else error.message


def _text_problems(args: dict[str, Any]) -> list[str]:
    """Strings that are not valid Unicode (a lone surrogate cannot be encoded, written or sent)."""
    problems = []
    for key, value in args.items():
        strings = [value] if isinstance(value, str) else []
        if isinstance(value, (list, dict)):
            strings = [v for v in (value.values() if isinstance(value, dict) else value) if isinstance(v, str)]
        for text in strings:
            found = _SURROGATE_RE.search(text)
            if found:
                problems.append(f"argument '{key}': contains the unpaired surrogate U+{ord(found.group()):04X} at "
                                f"position {found.start()}, which is not valid Unicode text")
                break
    return problems


def cut(observation: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
    """``observation`` at most ``limit`` characters long plus a marker saying how much was cut,
    with any unpaired surrogate (from a file name that is not UTF-8) replaced by U+FFFD."""
    if len(observation) > limit:
        observation = observation[:limit] + f"\n... [cut: {len(observation) - limit:,} more characters]"
    return _SURROGATE_RE.sub("\ufffd", observation)


def _is_budget(exc: BaseException) -> bool:
    return any("Budget" in cls.__name__ for cls in type(exc).__mro__)


def _integers(parameters: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema accepts 2.0 as an integer; give the tool a real ``int`` for such arguments."""
    properties = parameters.get("properties", {})
    return {
        key: int(value) if isinstance(value, float) and properties.get(key, {}).get("type") == "integer" else value
        for key, value in args.items()
    }


class ToolRegistry:
    """A named set of tools with argument validation and safe dispatch."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._errors: dict[str, SchemaErrors] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"duplicate tool name {item.name}")
            self._tools[item.name] = item
            self._errors[item.name] = SchemaErrors(item.parameters)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool:
        return self._tools[name]

    def only_reads(self, name: object) -> bool:
        """Whether ``name`` is a tool of this registry that changes no file (an unknown name: no)."""
        tool = self._tools.get(name) if isinstance(name, str) else None
        return tool is not None and not tool.writes

    def read_only(self) -> "ToolRegistry":
        return ToolRegistry(t for t in self._tools.values() if not t.writes)

    def for_apps(self, apps: Iterable[str]) -> "ToolRegistry":
        wanted = set(apps)
        return ToolRegistry(t for t in self._tools.values() if t.app in wanted)

    def openai_tools(self) -> list[dict[str, Any]]:
        return [t.openai_definition() for t in self._tools.values()]

    def validate(self, name: str, args: Any) -> list[str]:
        """Problems with a call, as sentences; empty when the call is well formed."""
        if name not in self._tools:
            return [f"unknown tool {name!r}"]
        if not isinstance(args, dict):
            return [f"arguments must be an object, got {type(args).__name__}"]
        return [_describe(e) for e in self._errors[name](args)]

    def run(self, workspace: Workspace, calls: Iterable[tuple[str, Any]]) -> list[ToolResult]:
        """Run a plan (``(tool, args)`` pairs) in order; every call runs, failures included.
        Consecutive valid calls of a tool that batches (cells of one sheet) run as one, with the
        same results and the same files as one by one (a workbook is saved once, not per cell)."""
        calls = list(calls)
        out: list[ToolResult] = []
        i = 0
        while i < len(calls):
            j = self._batch_end(calls, i)
            batched = self._run_batch(workspace, calls[i:j]) if j - i > 1 else None
            if batched is None:
                out.append(self.call(workspace, *calls[i]))
                i += 1
            else:
                out += batched
                i = j
        return out

    def _batchable(self, name: str, args: Any) -> bool:
        tool = self._tools.get(name)
        return (tool is not None and tool.batch is not None and isinstance(args, dict)
                and not self.validate(name, args) and not _text_problems(args))

    def _batch_end(self, calls: list[tuple[str, Any]], i: int) -> int:
        """The end of the run of calls from ``i`` that can run as one batch (``i + 1`` if none)."""
        name, args = calls[i]
        if not self._batchable(name, args):
            return i + 1
        keys = self._tools[name].batch_key
        key = tuple(args.get(k) for k in keys)
        j = i + 1
        while j < len(calls) and calls[j][0] == name and self._batchable(*calls[j]) \
                and tuple(calls[j][1].get(k) for k in keys) == key:
            j += 1
        return j

    def _run_batch(self, workspace: Workspace, calls: list[tuple[str, Any]]) -> list[ToolResult] | None:
        """The batch's results, or None to run the calls one by one (a failure the batch cannot
        attribute to one call)."""
        tool = self._tools[calls[0][0]]
        assert tool.batch is not None
        try:
            outcomes = tool.batch(workspace, [_integers(tool.parameters, args) for _, args in calls])
        except MemoryError:
            raise
        except Exception as exc:  # one by one, each call reports its own failure
            if _is_budget(exc):
                raise
            return None
        if outcomes is None:
            return None
        return [ToolResult(tool.name, not isinstance(o, OfficeError),
                           cut(f"Error: {o}" if isinstance(o, OfficeError) else o)) for o in outcomes]

    def call(self, workspace: Workspace, name: str, args: Any) -> ToolResult:
        """Run one tool. User errors come back as ``ok=False`` observations, never exceptions."""
        ok, observation = self._call(workspace, name, args)
        return ToolResult(name, ok, cut(observation))

    def _call(self, workspace: Workspace, name: str, args: Any) -> tuple[bool, str]:
        problems = self.validate(name, args) or _text_problems(args)
        if problems:
            known = "" if name in self._tools else f" (available: {', '.join(self._tools)})"
            return False, f"Error: {name}: " + "; ".join(problems) + known
        try:
            return True, self._tools[name].func(workspace, **_integers(self._tools[name].parameters, args))
        except OfficeError as exc:
            return False, f"Error: {exc}"
        except IsADirectoryError as exc:
            return False, f"Error: {exc.filename}: is a folder, not a file"
        except PermissionError as exc:
            return False, f"Error: {exc.filename}: permission denied"
        except MemoryError:
            raise
        except Exception as exc:  # a bug: every input should meet a deliberate check first
            if _is_budget(exc):
                raise
            try:
                detail = str(exc).replace(str(workspace.root), "<testbed>")
            except Exception:  # an exception whose message cannot be built
                detail = "no message"
            detail = detail if len(detail) <= 200 else detail[:200] + "..."
            return False, f"Error: {name}: {INTERNAL_ERROR} ({type(exc).__name__}: {detail})"
