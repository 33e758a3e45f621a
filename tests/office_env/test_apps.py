"""One app registry (office_env/apps.py) that every layer takes its app names and tables from."""

import json
from pathlib import Path

import pytest

from generators.families import FAMILIES
from generators.schemas import task_draft_schema
from office_env.apps import App, app_of_doc_type, app_of_extension, get_app, office_apps, register_app, tool_apps
from office_env.tools import default_registry
from orchestrator.planner import general_plan_schema
from surfers.notes import notes_schema


def test_the_app_list_is_one_list_every_layer_takes():
    """Tools, families, schemas, the planner and the task record's schema name the registered apps
    in the registry's order, the file system last."""
    assert office_apps() == ("word", "excel", "pdf", "email", "calendar")
    assert tool_apps() == (*office_apps(), "system")
    assert {name.split("_", 1)[0] for name in default_registry().names} == set(tool_apps())
    assert {app for fam in FAMILIES.values() for app in fam.apps} == set(office_apps())
    assert general_plan_schema()["properties"]["apps"]["items"]["enum"] == list(office_apps())
    assert task_draft_schema()["properties"]["apps"]["items"]["enum"] == list(office_apps())
    assert [ref["$ref"].rsplit("/", 1)[1] for ref in notes_schema()["oneOf"]] == [f"{a}_notes" for a in office_apps()]
    record = json.loads((Path(__file__).resolve().parents[2] / "verifier/schemas/task.schema.json").read_text())
    assert record["properties"]["apps"]["items"]["enum"] == list(tool_apps())


def test_each_entry_names_tools_that_exist_and_only_read():
    """An app's surfer tools are tools of that app that change no file."""
    tools = default_registry()
    for name in office_apps():
        for tool in get_app(name).read_tools:
            assert tool in tools and tools.only_reads(tool) and tools.get(tool).app == name, (name, tool)


def test_file_kinds_and_doc_types_map_back_to_their_app():
    assert (app_of_extension("XLSX"), app_of_extension("docx"), app_of_extension("ics")) == ("excel", "word", "calendar")
    assert app_of_extension("exe") is None
    assert (app_of_doc_type("email"), app_of_doc_type("xls"), app_of_doc_type("odt")) == ("email", "excel", None)


def test_a_bad_entry_is_refused():
    with pytest.raises(ValueError, match="lower-case"):
        App(name="My App", work="thing", tools="x")
    with pytest.raises(ValueError, match="needs a surfer"):
        App(name="toy", work="thing", tools="x")
    with pytest.raises(ValueError, match="already registered"):
        register_app(get_app("word"))
