"""Validate a criteria list against the catalog, then score a testbed with it.

Validation happens before anything runs: the list must match the catalog's JSON Schema,
each comparator must parse, each path must be testbed-relative (an expected file may point
into the task's ``reference/``). Problems are reported per criterion, with the field.
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from office_env.apps import generation
from office_env.errors import OfficeError
from office_env.evaluation import comparator
from office_env.evaluation.checks import CHECKS, Context, check_time_args
from office_env.evaluation.paths import external_target
from office_env.schema_errors import SchemaErrors
from office_env.workspace import Workspace


def criteria_schema() -> dict[str, Any]:
    """JSON Schema of a criteria list: ``[{"function": name, "args": {...}}, ...]``."""
    branches = [
        {"if": {"properties": {"function": {"const": name}}},
         "then": {"properties": {"args": spec.args_schema}}}
        for name, spec in sorted(CHECKS.items())
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "homeragents evaluation criteria",
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "properties": {"function": {"enum": sorted(CHECKS)}, "args": {"type": "object"}},
            "required": ["function", "args"],
            "additionalProperties": False,
            "allOf": branches,
        },
    }


def catalog_summary() -> list[dict[str, Any]]:
    """What a task writer needs to know of each criterion: name, meaning, arguments."""
    return [
        {"function": name, "description": spec.description,
         "args": {k: v.get("type", v.get("enum", "see description"))
                  for k, v in spec.args_schema["properties"].items()},
         "required": spec.args_schema.get("required", [])}
        for name, spec in sorted(CHECKS.items())
    ]


_ITEM_VALIDATOR = Draft202012Validator(
    {"type": "object", "properties": {"function": {"type": "string"}, "args": {"type": "object"}},
     "required": ["function", "args"], "additionalProperties": False}
)


def _well_formed(item: Any) -> bool:
    """Whether ``_ITEM_VALIDATOR`` surely finds nothing wrong with ``item``, told without it: a plain
    dict of a string ``function`` and a dict ``args`` and nothing else (the schema's ``object`` and
    ``string`` are ``dict`` and ``str``); any other item is left to the validator, which says what is
    wrong. Every item of a list is asked, and the validator is slow to say yes."""
    return (type(item) is dict and len(item) == 2 and isinstance(item.get("function"), str)
            and isinstance(item.get("args"), dict))


@lru_cache(maxsize=4)
def _args_errors(_generation: int) -> dict[str, SchemaErrors]:
    """One validator per check, made from its schema as the app registry now gives it."""
    return {name: SchemaErrors(spec.args_schema) for name, spec in CHECKS.items()}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, located by file and field."""

    field: str
    message: str
    file: str = ""

    def __str__(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.field}: {self.message}"


class InvalidCriteria(OfficeError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def _where(base: str, error: Any) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return base + path


def validate_criteria(criteria: Any, *, file: str = "", base: str = "evaluation") -> list[Problem]:
    """Every problem with a criteria list; an empty list means it may be run."""
    if not isinstance(criteria, list):
        return [Problem(base, f"must be a list of criteria, got {type(criteria).__name__}", file)]
    if not criteria:
        return [Problem(base, "is empty; a task needs at least one criterion", file)]
    problems: list[Problem] = []
    for index, item in enumerate(criteria):
        where = f"{base}[{index}]"
        shape = [] if _well_formed(item) else list(_ITEM_VALIDATOR.iter_errors(item))
        if shape:
            problems.extend(Problem(_where(where, e), e.message, file) for e in shape)
            continue
        name, args = item["function"], item["args"]
        if name not in CHECKS:
            problems.append(Problem(f"{where}.function", f"unknown function {name!r}", file))
            continue
        errors = _args_errors(generation())[name](args)
        if errors:
            problems.extend(Problem(_where(f"{where}.args", e), e.message, file) for e in errors)
            continue
        problems.extend(_semantic_problems(name, args, f"{where}.args", file))
    return problems


def _semantic_problems(name: str, args: dict[str, Any], where: str, file: str) -> list[Problem]:
    problems = []
    for key in CHECKS[name].path_args:
        if key in args:
            try:
                external_target(args[key], key)
            except OfficeError as exc:
                problems.append(Problem(f"{where}.{key}", str(exc).removeprefix(f"{key}: "), file))
    if name == "evaluate_excel_cell_comparator":
        for i, match in enumerate(args["matches"]):
            try:
                comparator.parse(match["comparator"])
            except OfficeError as exc:
                problems.append(Problem(f"{where}.matches[{i}].comparator", str(exc), file))
    if name in ("evaluate_calendar_event", "evaluate_calendar_no_event"):
        try:
            check_time_args(args)
        except OfficeError as exc:
            problems.append(Problem(where, str(exc), file))
    return problems


@dataclass(frozen=True)
class CriterionResult:
    index: int
    function: str
    passed: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "function": self.function, "passed": self.passed, "reason": self.reason}


@dataclass(frozen=True)
class EvaluationReport:
    results: list[CriterionResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def failures(self) -> list[CriterionResult]:
        return [r for r in self.results if not r.passed]

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "results": [r.to_dict() for r in self.results]}


_VALID: set[bytes] = set()  # the _valid_key of criteria lists found valid (a build's gates score one task 4-5 times)
_VALID_KEPT = 1024
_VALID_MAX_BYTES = 100_000


def _valid_key(criteria: Any) -> bytes | None:
    """What a criteria list found valid is known by: ``marshal``'s writing of it, which holds each
    value a JSON document can hold with its exact type, in order (``True`` apart from ``1``, a tuple
    apart from a list), several times quicker than ``repr``; None for what is no list or holds what
    marshal cannot write (an instance of a subclass): such a list is validated each time. Format 2:
    later formats mark an object that has other references, or a string that is interned, so the
    same values would be written apart once a cache holds one of their strings."""
    if not isinstance(criteria, list):
        return None
    try:
        return marshal.dumps(criteria, 2)
    except ValueError:
        return None


def criteria_problems(criteria: Any, file: str = "") -> list[Problem]:
    """:func:`validate_criteria`, but a list found valid before (the same ``_valid_key``: types and
    order included) is not validated again: a build's schema gate validates a task's criteria, then
    its replays score them."""
    key = _valid_key(criteria)
    if key is not None and key in _VALID:
        return []
    problems = validate_criteria(criteria, file=file)
    if not problems and key is not None and len(key) <= _VALID_MAX_BYTES:
        if len(_VALID) >= _VALID_KEPT:
            _VALID.clear()
        _VALID.add(key)
    return problems


def _check_valid(criteria: Any, file: str) -> None:
    """Raise ``InvalidCriteria`` unless ``criteria`` validates (:func:`criteria_problems`)."""
    problems = criteria_problems(criteria, file)
    if problems:
        raise InvalidCriteria(problems)


def evaluate_criteria(workspace: Workspace, criteria: list[dict[str, Any]],
                      reference_dir: str | Path | None = None, *, initial_dir: str | Path | None = None,
                      file: str = "", day_first: bool | None = None, until_failure: bool = False) -> EvaluationReport:
    """Score ``workspace``: one result per criterion. Raises ``InvalidCriteria`` before running
    anything if the list does not validate.

    ``reference_dir`` holds expected files (``../reference/x``); ``initial_dir`` is the testbed
    before the agent acted (``../cache/<i>/testbed/x``); ``day_first``: whether the office writes
    a numeric date day first (``backends.dataset_reader.task_day_first``; None: either order);
    ``until_failure``: stop at the first criterion that fails, for a caller that asks only whether
    they all pass (the report then ends with that criterion)."""
    _check_valid(criteria, file)
    ctx = Context(workspace,
                  Path(reference_dir) if reference_dir is not None else None,
                  Path(initial_dir) if initial_dir is not None else None, day_first)
    results = []
    for index, item in enumerate(criteria):
        name = item["function"]
        try:
            passed, reason = CHECKS[name].func(ctx, item["args"])
        except OfficeError as exc:
            passed, reason = False, str(exc)
        results.append(CriterionResult(index, name, bool(passed), reason))
        if until_failure and not passed:
            break
    return EvaluationReport(results)
