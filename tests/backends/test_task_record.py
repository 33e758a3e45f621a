"""The typed task record (``backends.task_record``): the checked-in schema is the one it generates,
and the type and the schema accept and refuse the same records."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from backends.dataset_reader import load_task
from backends.task_record import SCHEMA_PATH, RecordError, TaskRecord, parse_record, schema_text, task_schema

from tests.support.records import task_record_sample as record

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), \
        "run: python -m backends.task_record --write"


def test_the_check_command_fails_on_a_stale_schema(tmp_path, monkeypatch):
    import backends.task_record as module

    stale = tmp_path / "task.schema.json"
    stale.write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(module, "SCHEMA_PATH", stale)
    assert module.main(["--check"]) == 1
    assert module.main(["--write"]) == 0 and module.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == schema_text()


def test_the_module_prints_the_schema():
    proc = subprocess.run([sys.executable, "-m", "backends.task_record"], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    assert json.loads(proc.stdout) == task_schema()


def test_a_full_record_parses_and_reads_as_fields():
    task = parse_record(record())
    assert task.memory[0].distractors[0].value == "Room 5"
    assert task.dialogue[0].turns[1].evidence == ["m1"] and task.dialogue[0].turns[1].thread is None
    assert task.provenance.model is None and task.provenance.world_seed == 7  # an unknown key is kept
    assert task.criteria() == record()["evaluation"]
    assert task.computed[0].value == 3 and isinstance(task.computed[0].value, int)
    assert task.to_dict() == record()  # nothing added, nothing lost


MUTATIONS = [  # (path, value or DELETE): each makes the record invalid
    (("id",), "-bad"), (("split",), "other"), (("apps",), []), (("apps",), ["word", "word"]), (("apps",), ["fax"]),
    (("app_count",), 6), (("app_count",), True), (("app_count",), "2"), (("user", "name"), ""),
    (("user", "email"), None), (("now", "date"), "7 April"), (("now", "date"), "2024-13-40"), (("now", "date"), "2023-02-29"), (("now", "date"), "0000-01-01"),
    (("now", "time"), "25:61"), (("now", "time"), "09:30\n"), (("dialogue", 0, "date"), "2024-04-31"), (("now", "weekday"), "monday"), (("subtasks",), ["a"] * 6), (("subtasks",), [""]), (("query",), ""),
    (("memory", 0, "id"), "x1"), (("memory", 0, "thread"), None), (("memory", 0, "extra"), 1),
    (("memory", 0, "distractors", 0, "text"), ""), (("evaluation",), []), (("dialogue",), []),
    (("dialogue", 0, "day"), 0), (("dialogue", 0, "turns"), []), (("dialogue", 0, "turns", 0, "role"), "system"),
    (("dialogue", 0, "turns", 0, "thread"), "x1"), (("dialogue", 0, "turns", 0, "ts"), "2025-04-06 09:00"),
    (("oracle", 0, "args"), []), (("oracle",), None), (("misreadings", 0, "dynamic"), "other"),
    (("computed", 0, "value"), True), (("computed", 0, "op"), "median"), (("provenance", "backend"), "cloud"),
    (("provenance", "rounds"), 0), (("provenance", "gates"), "DELETE"), (("description",), "DELETE"),
]
VALID = [(("app_count",), 2.0), (("provenance", "model"), "m"), (("family",), "DELETE"), (("extra",), [1]),
         (("now", "tz"), "UTC"), (("computed", 0, "value"), -1.5)]


def mutated(path: tuple, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(record())
    node = data
    for key in path[:-1]:
        node = node[key]
    if value == "DELETE":
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize("path,value", MUTATIONS + VALID)
def test_the_type_and_the_schema_agree(path, value):
    data = mutated(path, value)
    by_schema = Draft202012Validator(task_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(data)
    try:
        parse_record(data)
        by_type = True
    except RecordError:
        by_type = False
    assert by_schema == by_type == ((path, value) in VALID)


def test_a_bad_field_is_named():
    with pytest.raises(RecordError) as caught:
        parse_record(mutated(("dialogue", 0, "turns", 0, "ts"), "noon"))
    assert caught.value.field == "dialogue.0.turns.0.ts"
    with pytest.raises(RecordError) as caught:
        parse_record(mutated(("now", "date"), "2024-13-40"))
    assert (caught.value.field, caught.value.message) == ("now.date", "'2024-13-40' is not a day of the calendar")
    with pytest.raises(RecordError) as caught:
        parse_record([1])
    assert caught.value.field == "(top level)"


def test_the_reader_gives_a_typed_record_or_one_line(tmp_path):
    folder = tmp_path / "tasks" / "neo-00001"
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps(record()), encoding="utf-8")
    task = load_task(tmp_path, "neo-00001")
    assert isinstance(task.task, TaskRecord) and task.task.user.username == "ann"
    (folder / "task.json").write_text(json.dumps(mutated(("memory", 0, "kind"), "note")), encoding="utf-8")
    task = load_task(tmp_path, "neo-00001")
    assert task.task is None and task.record is None
    assert task.error == f"{folder / 'task.json'}: memory.0.kind: Input should be 'fact' or 'action'"


def test_a_record_is_written_as_the_builders_have_always_written_it():
    """``to_dict`` is the one way a record becomes JSON: the schema's fields in order, provenance's
    keys (the schema's and the open ones) and a computation's keys in the builders' order."""
    sample = record()
    sample["provenance"] = {"backend": "offline", "model": None, "seed": 1, "index": 0, "world_seed": 7, "rounds": 1,
                            "verifier_feedback": [], "gates": {"schema": {"passed": True, "detail": "valid"}},
                            "tokens": {"counter": "c", "dialogue": 2}, "difficulty": {"label": "easy"},
                            "trace": {"evaluation[0].args.file": "testbed:data/a.docx"}, "later": 1}
    sample["computed"] = [{"value": 3, "op": "sum", "inputs": [1, 2], "given": ["m1"], "rule": "r", "note": "n"}]
    assert json.dumps(parse_record(sample).to_dict()) == json.dumps(sample)
    reordered = {**sample, "provenance": dict(reversed(sample["provenance"].items()))}
    assert json.dumps(parse_record(reordered).to_dict()) == json.dumps(sample)  # one order, whatever was read


def test_the_chat_is_written_once_per_record_and_anew_for_a_record_with_another_chat():
    """A record's sessions as JSON (``dialogue_dicts``) are made once and serve ``to_dict`` and the
    gates alike; a key beyond the schema keeps its place after the fields; a copy with another
    provenance shares them, one with another chat gets its own."""
    sample = {**record(), "beyond": {"kept": True}}
    typed = parse_record(sample)
    assert json.dumps(typed.to_dict()) == json.dumps({**parse_record(record()).to_dict(), "beyond": {"kept": True}})
    assert typed.dialogue_dicts() is typed.dialogue_dicts() and typed.to_dict()["dialogue"] == sample["dialogue"]
    renamed = typed.model_copy(update={"provenance": typed.provenance.model_copy(update={"rounds": 9})})
    assert renamed.dialogue_dicts() is typed.dialogue_dicts() and renamed.to_dict()["provenance"]["rounds"] == 9
    shorter = typed.model_copy(update={"dialogue": typed.dialogue[:1]})
    assert shorter.dialogue_dicts() == sample["dialogue"][:1] and shorter.to_dict()["dialogue"] == sample["dialogue"][:1]


def test_an_optional_field_may_be_left_out_but_not_null_unless_null_says_something():
    """``user.email`` may be absent, not null; ``provenance.model`` is null for an offline build;
    a required field is refused null as any other wrong type."""
    plain = record()
    assert parse_record({**plain, "user": {k: v for k, v in plain["user"].items() if k != "email"}})
    with pytest.raises(RecordError, match=r"^user\.email: .*may be left out, but not null"):
        parse_record({**plain, "user": {**plain["user"], "email": None}})
    assert parse_record({**plain, "provenance": {**plain["provenance"], "model": None}}).provenance.model is None
    with pytest.raises(RecordError, match=r"^user\.name: "):
        parse_record({**plain, "user": {**plain["user"], "name": None}})


def _objects(data: dict[str, Any]) -> list[tuple[tuple, type]]:
    """Where each kind of object stands in the sample record, with its type."""
    from backends import task_record as t
    found: list[tuple[tuple, type]] = [((), t.TaskRecord), (("user",), t.User), (("now",), t.Now),
                                       (("provenance",), t.Provenance), (("dialogue", 0), t.Session),
                                       (("dialogue", 0, "turns", 0), t.Turn)]
    for key, kind in (("memory", t.Memory), ("oracle", t.Step), ("misreadings", t.Misreading),
                      ("computed", t.Computed)):
        if data.get(key):
            found.append(((key, 0), kind))
    memory = data["memory"][0] if data.get("memory") else {}
    if memory.get("distractors"):
        found.append((("memory", 0, "distractors", 0), t.Distractor))
    if memory.get("derived"):
        found.append((("memory", 0, "derived"), t.Derived))
    return found


def test_null_is_refused_in_every_optional_field_as_a_check_on_every_field_refused_it():
    """The null check stands on the fields that may be left out (but those that may be null): null
    in each such field of each object of a record gives the one error it gave when every field was
    checked; null in a required field fails as any wrong type, and null where null says something passes."""
    from pydantic import ValidationError

    from backends import task_record as t
    sample = record()
    sample["memory"][0].setdefault("derived", {"rule": "days_after", "amount": 2, "anchor": "a", "base": "b"})
    checked = set()
    for where, kind in _objects(sample):
        for name, field in kind.model_fields.items():
            data = copy.deepcopy(sample)
            node = data
            for key in where:
                node = node[key]
            node[name] = None
            try:
                t.TaskRecord.model_validate(data)
                errors = []
            except ValidationError as exc:
                errors = exc.errors(include_url=False)
            if name in kind._nullable:
                assert errors == [], (where, name)
            elif not field.is_required():
                refused = [e for e in errors if e["type"] == "value_error"]
                assert errors[0] == refused[0] and len(refused) == 1, (where, name)  # the one a RecordError names
                assert refused[0]["msg"] == "Value error, may be left out, but not null" and refused[0]["input"] is None
                branchless = tuple(part for part in refused[0]["loc"] if not (isinstance(part, str) and "[" in part))
                assert branchless == (*where, name), (where, name)  # a union's branch (list[Turn]) aside
                assert all(e["type"] in ("value_error", "none_required") for e in errors), (where, name)
                checked.add((kind.__name__, name))
            else:
                assert errors and all(e["type"] != "value_error" for e in errors), (where, name)
    assert {("Turn", "evidence"), ("Memory", "derived"), ("TaskRecord", "oracle"), ("User", "email"),
            ("Provenance", "tokens"), ("Computed", "given")} <= checked


def test_a_field_shape_the_null_check_would_miss_stops_the_import():
    """The fields that may be left out are found in the class body, before pydantic collects them:
    a default given inside ``Annotated`` would let a null through, and an inherited optional field
    made required again would refuse one; either is refused when its class is made."""
    from typing import Annotated

    from pydantic import Field

    from backends import task_record as t

    with pytest.raises(TypeError, match=r"null refused in \[\], but the fields that may be left out are \['x'\]"):
        class Hidden(t._Shape):
            x: Annotated[str | None, Field(default=None)]

    class Base(t._Shape):
        z: str | None = None

    with pytest.raises(TypeError, match=r"null refused in \['z'\], but the fields that may be left out are \[\]"):
        class Required(Base):
            z: str | None

    class Kept(Base):
        w: int | None = None

    assert Kept.__pydantic_decorators__.field_validators["_absent_not_null"].info.fields == ("w", "z")
