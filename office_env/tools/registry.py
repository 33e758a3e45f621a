"""Typed office tools: one function each, a JSON Schema for its arguments, read or write.

A registry validates arguments before a call, turns every user error into an observation
(never an exception), and emits OpenAI function-calling definitions. Surfers get the
read-only view; agents get everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from jsonschema import Draft202012Validator

from office_env.errors import OfficeError
from office_env.workspace import Workspace

ToolFunc = Callable[..., str]


@dataclass(frozen=True)
class Tool:
    name: str
    app: str
    description: str
    parameters: dict[str, Any]
    func: ToolFunc
    writes: bool

    def openai_definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


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
) -> Callable[[ToolFunc], ToolFunc]:
    """Declare ``func(workspace, **args) -> observation`` as the tool ``<app>_<name>``."""

    def decorate(func: ToolFunc) -> ToolFunc:
        schema = {
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        }
        Draft202012Validator.check_schema(schema)
        _DECLARED.append(Tool(f"{app}_{name}", app, description, schema, func, writes))
        return func

    return decorate


def declared_tools() -> list[Tool]:
    return list(_DECLARED)


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return error.message
    if error.validator == "required":
        return error.message
    return f"argument '{where}': {error.message}" if where else error.message


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
        self._validators: dict[str, Draft202012Validator] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"duplicate tool name {item.name}")
            self._tools[item.name] = item
            self._validators[item.name] = Draft202012Validator(item.parameters)

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
        errors = sorted(self._validators[name].iter_errors(args), key=lambda e: list(e.absolute_path))
        return [_describe(e) for e in errors]

    def run(self, workspace: Workspace, calls: Iterable[tuple[str, Any]]) -> list[ToolResult]:
        """Run a plan (``(tool, args)`` pairs) in order; every call runs, failures included."""
        return [self.call(workspace, name, args) for name, args in calls]

    def call(self, workspace: Workspace, name: str, args: Any) -> ToolResult:
        """Run one tool. User errors come back as ``ok=False`` observations, never exceptions."""
        problems = self.validate(name, args)
        if problems:
            known = "" if name in self._tools else f" (available: {', '.join(self._tools)})"
            return ToolResult(name, False, f"Error: {name}: " + "; ".join(problems) + known)
        try:
            observation = self._tools[name].func(workspace, **_integers(self._tools[name].parameters, args))
        except OfficeError as exc:
            return ToolResult(name, False, f"Error: {exc}")
        except IsADirectoryError as exc:
            return ToolResult(name, False, f"Error: {exc.filename}: is a folder, not a file")
        except PermissionError as exc:
            return ToolResult(name, False, f"Error: {exc.filename}: permission denied")
        return ToolResult(name, True, observation)
