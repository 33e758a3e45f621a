"""One list of apps (office_env/apps.py) that every layer takes its app names from."""

import json
from pathlib import Path

from generators.families.base import APPS as FAMILY_APPS
from generators.schemas import TASK_DRAFT_SCHEMA
from office_env.apps import OFFICE_APPS, TOOL_APPS
from office_env.tools import APPS as TOOLS_APPS
from office_env.tools import default_registry
from orchestrator.planner import PLAN_SCHEMA
from surfers import APPS as SURFER_APPS
from surfers.notes import NOTES_SCHEMA


def test_the_app_list_is_one_list_every_layer_takes():
    """Tools, surfers, families, schemas, the planner and the task record's schema name the same
    apps in the same order (office_env/apps.py)."""
    assert FAMILY_APPS == SURFER_APPS == OFFICE_APPS and TOOLS_APPS == TOOL_APPS == (*OFFICE_APPS, "system")
    assert {name.split("_", 1)[0] for name in default_registry().names} == set(TOOL_APPS)
    assert PLAN_SCHEMA["properties"]["apps"]["items"]["enum"] == list(OFFICE_APPS)
    assert TASK_DRAFT_SCHEMA["properties"]["apps"]["items"]["enum"] == list(OFFICE_APPS)
    assert [ref["$ref"].rsplit("/", 1)[1] for ref in NOTES_SCHEMA["oneOf"]] == [f"{a}_notes" for a in OFFICE_APPS]
    record = json.loads((Path(__file__).resolve().parents[2] / "verifier/schemas/task.schema.json").read_text())
    assert record["properties"]["apps"]["items"]["enum"] == list(TOOL_APPS)
