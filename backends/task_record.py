"""The task record (``tasks/<id>/task.json``) as one typed definition.

Everything that reads a record -- the harness, the verifier, the exports -- reads these fields,
and ``verifier/schemas/task.schema.json`` (copied into every dataset as ``schemas/task.schema.json``)
is generated from them (``python -m backends.task_record --write``; a test fails when the file
differs from what these classes generate), so the schema and the code cannot drift apart.

A field that may be left out is ``None`` when absent; written as ``null`` it is refused, as the
schema refuses it (only ``provenance.model`` may be null). Objects the schema leaves open (the
record itself, ``user``, ``now``, ``provenance``) keep unknown keys (``model_extra``); the others
refuse them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NewType

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    PrivateAttr,
    ValidationError,
    field_validator,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema

from office_env.apps import tool_apps
from office_env.evaluation.criterion import Criterion

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "verifier" / "schemas" / "task.schema.json"
SCHEMA_ID = "https://homeragents.local/schemas/task.schema.json"

AppName = NewType("AppName", str)


def _registered_app(name: str) -> str:
    if name not in tool_apps():
        raise ValueError(f"{name!r} is not an app; expected one of {', '.join(tool_apps())}")
    return name


class _AppEnum:
    """The schema's app enum, read from the app registry when the schema is generated."""

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return {"enum": list(tool_apps()), "type": "string"}


# One of the registered apps (office_env.apps): the record's enum follows the registry.
App = Annotated[AppName, AfterValidator(_registered_app), _AppEnum()]
Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
Op = Literal["sum", "mean", "min", "max", "count", "difference", "product", "ratio", "percent", "round",
             "add_minutes", "minutes_between", "argmax", "argmin", "rule"]
Text = Annotated[str, Field(min_length=1)]


def _calendar_day(text: str) -> str:
    """A ``YYYY-MM-DD`` that is a day of the calendar (not 2024-13-40)."""
    try:
        date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a day of the calendar") from None
    return text


# the schema says it with "format": "date", which a validator given a format checker reads
Date = Annotated[str, Field(pattern=r"^[1-9]\d{3}-\d{2}-\d{2}$", json_schema_extra={"format": "date"}),
                 AfterValidator(_calendar_day)]
MemoryId = Annotated[str, Field(pattern=r"^m[0-9]+$")]
Scalar = str | int | float  # int before float: a whole number stays whole when dumped


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def whole(**bounds: int) -> Any:
    """An integer with ``bounds`` (``ge``, ``le``); 1.0 counts, as JSON Schema counts it."""
    # this order keeps the bounds in the schema; Field's overloads take no **dict
    return Annotated[int, Field(**bounds), BeforeValidator(_whole)]  # type: ignore[call-overload]  # ge, le only


def _refuse_null(cls: type, value: Any) -> Any:
    if value is None:
        raise ValueError("may be left out, but not null")
    return value


def _optional_fields(cls: type) -> set[str]:
    """The fields of ``cls`` (a model class being made, its fields not yet collected) that have a
    default: its own, found in its body, and those it inherits and does not declare again."""
    own = cls.__dict__
    declared = {name for name in own.get("__annotations__", {}) if not name.startswith("_")}
    names = {name for name in declared if name in own
             and not (isinstance(own[name], FieldInfo) and own[name].is_required())}
    for base in cls.__mro__[1:]:
        if isinstance(base, type) and issubclass(base, BaseModel) and base is not BaseModel:
            names |= {name for name, field in base.model_fields.items()
                      if name not in declared and not field.is_required()}
    return names


class _Shape(BaseModel):
    """Strict JSON types (no ``"5"`` for 5), Python's regular expressions (as the schema's
    validator), unknown keys refused, and an optional field absent rather than null."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid", regex_engine="python-re")
    _nullable: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse null in the fields that may be left out (but ``_nullable``), checked on those
        alone: a check on every field was a Python call per field of every turn of a record."""
        super().__init_subclass__(**kwargs)
        names = _optional_fields(cls) - cls._nullable
        if names:  # the same name in each class: a subclass's list replaces its parent's
            setattr(cls, "_absent_not_null", field_validator(*sorted(names), mode="before")(_refuse_null))

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """The fields were found in the class body, before pydantic collected them: a shape that
        reading misses (a default given inside ``Annotated``, a field made required again) stops
        the import here, rather than letting a null through or refusing one that may be given."""
        super().__pydantic_init_subclass__(**kwargs)
        wanted = {name for name, field in cls.model_fields.items() if not field.is_required()} - cls._nullable
        check = cls.__pydantic_decorators__.field_validators.get("_absent_not_null")
        checked = set(check.info.fields) if check is not None else set()
        if checked != wanted:
            raise TypeError(f"{cls.__name__}: null refused in {sorted(checked)}, but the fields that may be left "
                            f"out are {sorted(wanted)}: write an optional field's default as `name: type = default` "
                            "in the class body, and keep an inherited optional field optional")

    def to_dict(self) -> dict[str, Any]:
        """The object as it was read: the fields it had, unknown keys too (JSON types)."""
        return self.model_dump(mode="json", exclude_unset=True)


class _Open(_Shape):
    model_config = ConfigDict(extra="allow")


class User(_Open):
    name: Text
    username: Text
    email: str | SkipJsonSchema[None] = None


class Now(_Open):
    date: Date
    weekday: Weekday
    # a time a clock shows; "(?!\n)": Python's "$" matches before a final newline, ECMA's does not
    time: Annotated[str, Field(pattern=r"^(?:[01][0-9]|2[0-3]):[0-5][0-9]$(?!\n)")]


class Distractor(_Shape):
    value: Text
    text: Text


class Derived(_Shape):
    """How a value said in no single turn follows from two (``generators.model.Derivation``)."""

    rule: Annotated[str, Field(min_length=1, max_length=40, description="days_after, minutes_before, more, "
                               "half, covers, ...")]
    amount: Annotated[int, Field(ge=0, le=100_000, description="days, minutes or units the rule moves by")]
    anchor: Annotated[str, Field(min_length=1, max_length=200, description="the named thing the value is said "
                                 "against")]
    base: Annotated[str, Field(min_length=1, max_length=200, description="the anchor's own value")]


class Memory(_Shape):
    """A memory piece as recorded (``generators.model.MemoryPiece`` is the draft's)."""

    id: MemoryId
    kind: Literal["fact", "action"]
    text: Text
    value: Text
    thread: Annotated[str, Field(pattern=r"^t[0-9]+$", description="the line of work (subtask thread) the piece "
                                 "belongs to")] | SkipJsonSchema[None] = None
    superseded: Annotated[list[Text], Field(description="earlier values said and corrected later, in the order "
                                            "said")] | SkipJsonSchema[None] = None
    distractors: Annotated[list[Distractor], Field(description="near-miss details said in the chat")] \
        | SkipJsonSchema[None] = None
    said_as: Annotated[str, Field(min_length=1, description="the relative phrase (resolved against its session's "
                                  "date) that says the value")] | SkipJsonSchema[None] = None
    cue: Annotated[str, Field(description="the role the value plays in the work")] | SkipJsonSchema[None] = None
    about: Annotated[str, Field(description="a short noun phrase for the work it belongs to")] \
        | SkipJsonSchema[None] = None
    derived: Annotated[Derived, Field(description="the value is said in no single turn: its relation (said_as) "
                                      "in one, its anchor's own value in another")] | SkipJsonSchema[None] = None


Ids = list[str]


class Turn(_Shape):
    role: Literal["user", "assistant"]
    text: Text
    ts: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")]
    evidence: Annotated[Ids, Field(description="memory ids whose final value the turn states")] \
        | SkipJsonSchema[None] = None
    superseded: Annotated[Ids, Field(description="memory ids whose earlier, later-corrected value the turn "
                                     "states")] | SkipJsonSchema[None] = None
    distractor: Annotated[Ids, Field(description="memory ids that the turn's near-miss detail resembles")] \
        | SkipJsonSchema[None] = None
    thread: Annotated[str, Field(pattern=r"^[tw][0-9]+$", description="t<n>: a thread of the task's work; w<n>: "
                                 "other work; absent: small talk")] | SkipJsonSchema[None] = None


class Session(_Shape):
    day: whole(ge=1)  # type: ignore[valid-type]  # a pydantic type made by a call
    date: Date
    turns: Annotated[list[Turn], Field(min_length=2)]


class Step(_Shape):
    """One tool call of a plan (oracle, baseline, misreading)."""

    tool: str
    args: dict[str, Any]


Plan = list[Step]


def plan_calls(plan: Plan | None) -> list[dict[str, Any]]:
    """A plan's tool calls as the tools and agents take them (``{"tool", "args"}``); none for no plan."""
    return [step.to_dict() for step in plan or []]


class Misreading(_Shape):
    memory: MemoryId
    dynamic: Literal["superseded", "distractor"]
    value: Text
    plan: Plan


class Computed(_Shape):
    value: Scalar
    op: Op
    inputs: list[Scalar]
    rule: str | SkipJsonSchema[None] = None
    note: str | SkipJsonSchema[None] = None
    given: Annotated[list[MemoryId], Field(description="memory pieces that decide which computation this is")] \
        | SkipJsonSchema[None] = None

    def to_dict(self) -> dict[str, Any]:
        """The keys it has in the order the builders have always written them (``given`` first of
        the optional ones)."""
        data = super().to_dict()
        return {key: data[key] for key in ("value", "op", "inputs", "given", "rule", "note") if key in data}


# where provenance's keys stand in task.json: the schema's fields and the keys the builders, the
# gates' writer and the review add, in the order they have always been written; others follow
PROVENANCE_ORDER = ("backend", "model", "seed", "index", "world_seed", "seed_task", "rounds", "verifier_feedback",
                    "gates", "tokens", "difficulty", "repairs", "cost_usd", "trace", "review")


class Provenance(_Open):
    _nullable: ClassVar[frozenset[str]] = frozenset({"model"})

    backend: Literal["offline", "llm"]
    model: str | None = None
    seed: whole()  # type: ignore[valid-type]  # a pydantic type made by a call
    rounds: whole(ge=1)  # type: ignore[valid-type]  # a pydantic type made by a call
    gates: dict[str, Any]
    tokens: dict[str, Any] | SkipJsonSchema[None] = None

    def to_dict(self) -> dict[str, Any]:
        """The keys it has, in ``PROVENANCE_ORDER`` (then any other, as read)."""
        data = super().to_dict()
        known = {key: data.pop(key) for key in PROVENANCE_ORDER if key in data}
        return {**known, **data}

    def extra(self, key: str) -> Any:
        """A key the schema leaves open (``world_seed``, ``trace``, ``cost_usd`` ...), or None."""
        return (self.model_extra or {}).get(key)


class TaskRecord(_Open):
    """A task: who and when, what is asked, what the chat says, how it is checked, where it came from."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
    split: Literal["neo", "plus"]
    family: str | SkipJsonSchema[None] = None
    difficulty: Literal["easy", "medium", "hard"] | SkipJsonSchema[None] = None
    apps: Annotated[list[App], Field(min_length=1, json_schema_extra={"uniqueItems": True})]
    app_count: whole(ge=1, le=5)  # type: ignore[valid-type]  # a pydantic type made by a call
    user: User
    now: Now
    description: Text
    intent: Text
    subtasks: Annotated[list[Text], Field(min_length=1, max_length=5)]
    query: Text
    memory: list[Memory]
    evaluation: Annotated[list[Criterion], Field(min_length=1)]
    dialogue: Annotated[list[Session], Field(min_length=1)]
    oracle: Plan | SkipJsonSchema[None] = None
    baseline: Plan | SkipJsonSchema[None] = None
    misreadings: Annotated[list[Misreading], Field(description="the oracle plan with a superseded or distractor "
                                                   "value in place of the final one")] | SkipJsonSchema[None] = None
    computed: Annotated[list[Computed], Field(description="how each checked value that is neither said nor in the "
                                              "office is made")] | SkipJsonSchema[None] = None
    provenance: Provenance

    @field_validator("apps")
    @classmethod
    def _apps_unique(cls, apps: list[str]) -> list[str]:
        if len(set(apps)) != len(apps):
            raise ValueError("has non-unique elements")
        return apps

    _plain_dialogue: tuple[list[Session], list[dict[str, Any]]] | None = PrivateAttr(default=None)

    def to_dict(self) -> dict[str, Any]:
        """The record as ``task.json`` holds it: the one way a record becomes JSON (its fields in
        the schema's order, provenance's in ``PROVENANCE_ORDER``, a computation's as ``Computed``
        writes them, the chat as :meth:`dialogue_dicts` gives it)."""
        own = {"dialogue": self.dialogue_dicts(), "provenance": self.provenance.to_dict()}
        if self.computed is not None:
            own["computed"] = [c.to_dict() for c in self.computed]
        rest = self.model_dump(mode="json", exclude_unset=True, exclude=set(own))
        data: dict[str, Any] = {}
        for name in type(self).model_fields:  # the fields in the schema's order, as a dump writes them
            if name in own:
                data[name] = own[name]
            elif name in rest:
                data[name] = rest[name]
        data.update((key, value) for key, value in rest.items() if key not in data)  # keys beyond the schema
        return data

    def dialogue_dicts(self) -> list[dict[str, Any]]:
        """The sessions as ``to_dict`` writes them, made once per record (the writer and the gates
        that read the chat's marks each wanted them): shared, not to be changed."""
        kept = self._plain_dialogue
        if kept is None or kept[0] is not self.dialogue:
            kept = self._plain_dialogue = (self.dialogue, [s.to_dict() for s in self.dialogue])
        return kept[1]

    def keep_dialogue_dicts(self, plain: list[dict[str, Any]]) -> None:
        """Take ``plain``, the dicts the sessions were validated from, as :meth:`dialogue_dicts`,
        so they are not dumped again. Only for dicts that are what the sessions dump to: each
        object's keys in its fields' order and each value of the type the field holds, so that
        the validation took them as given (shared, not to be changed). A day given as a float
        (2.0, which the record takes as a whole number and dumps as 2) is not: then nothing is
        kept, and the sessions are dumped afresh."""
        if all(type(session["day"]) is int for session in plain):
            self._plain_dialogue = (self.dialogue, plain)

    def criteria(self) -> list[dict[str, Any]]:
        """The ``evaluation`` list as the evaluator takes it."""
        return [c.to_dict() for c in self.evaluation]


class RecordError(ValueError):
    """A record that is not a task: ``field`` is the dotted path of the first problem."""

    def __init__(self, field: str, message: str) -> None:
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def parse_record(data: Any) -> TaskRecord:
    """``data`` (parsed JSON) as a :class:`TaskRecord`; :class:`RecordError` names the first bad field."""
    try:
        return TaskRecord.model_validate(data)
    except ValidationError as exc:
        raise record_error(exc) from None


def typed_records(records: Iterable[TaskRecord | dict[str, Any]]) -> list[TaskRecord]:
    """The records typed, each parsed once where it is given as read (a caller may hold either);
    :class:`RecordError` for one that is not a task."""
    return [r if isinstance(r, TaskRecord) else parse_record(r) for r in records]


def record_error(exc: ValidationError) -> RecordError:
    """The first problem the type found (in a record read, or one being built) as a :class:`RecordError`."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    message = _WORDS.get(first["type"], first["msg"])
    return RecordError(where, message.removeprefix("Value error, "))


_WORDS = {"missing": "missing", "extra_forbidden": "not a field of a task record here (unknown key)"}


def _strip(node: Any, names: bool = False) -> Any:
    """The generated schema without the titles and defaults the generator adds: the schema says
    what is valid, not what a Python field is called or holds when absent."""
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    if names:  # "properties" or "$defs": keys are names, values schemas
        return {key: _strip(value) for key, value in node.items()}
    return {key: _strip(value, names=key in ("properties", "$defs")) for key, value in node.items()
            if key not in ("title", "default")}


def task_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a task record, generated from :class:`TaskRecord`."""
    body = _strip(TaskRecord.model_json_schema(mode="validation"))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "homeragents task", **body}


def schema_text() -> str:
    """The text of ``task.schema.json`` as it is checked in and copied into every dataset."""
    return json.dumps(task_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """``python -m backends.task_record [--write|--check]``: print, rewrite or check the schema file."""
    text = schema_text()
    if "--write" in argv:
        SCHEMA_PATH.write_text(text, encoding="utf-8")
        return 0
    if "--check" in argv:
        if SCHEMA_PATH.read_text(encoding="utf-8") != text:
            print(f"{SCHEMA_PATH}: differs from the TaskRecord type; run python -m backends.task_record --write",
                  file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
