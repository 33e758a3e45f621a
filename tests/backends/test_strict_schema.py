"""Strict structured output: every role's schema has a strict form OpenAI's rules take, a reply to it
reads back as the role's own schema has it, and a build against the strict-checking profile sends
every structured request strict."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import openai
import pytest
from jsonschema import Draft202012Validator

from backends.fake_llm import FakeLLMServer
from backends.fake_llm.structured import strict_problem, with_nulls
from backends.llm import LLMSettings
from backends.llm.client import response_format_for
from backends.llm.strict_schema import strict_form, unstrict
from generators.schemas import PLUS_SCHEMA, dialogue_days_schema, task_draft_schema
from harness.summaries import SUMMARY_SCHEMA
from orchestrator.build import build
from orchestrator.fake_llm.offline_responder import default_responder
from orchestrator.planner import plan_schema
from orchestrator.roles import BuildConfig
from surfers.llm import app_schema
from verifier.schemas import JUDGE_VOTE_SCHEMA, VERDICT_SCHEMA

ROLE_SCHEMAS = {
    "task_generator": task_draft_schema(), "plus_generator": PLUS_SCHEMA, "planner": plan_schema(2, ["a", "b"]),
    "dialogue_day": dialogue_days_schema(2), "verifier": VERDICT_SCHEMA, "judge": JUDGE_VOTE_SCHEMA,
    "summarizer": SUMMARY_SCHEMA, **{f"surfer-{app}": app_schema(app) for app in ("word", "excel", "pdf", "email",
                                                                                   "calendar")},
}


@pytest.mark.parametrize("role", sorted(ROLE_SCHEMAS))
def test_every_role_schema_has_a_strict_form_strict_mode_takes(role):
    strict = strict_form(ROLE_SCHEMAS[role])
    assert strict is not None and strict_problem(strict) is None
    Draft202012Validator.check_schema(strict)


def test_a_free_form_object_has_no_strict_form_and_is_sent_as_it_is():
    loose = {"type": "object", "properties": {"args": {"type": "object"}}, "required": ["args"]}
    assert strict_form(loose) is None
    shape = response_format_for("json_schema", "x", loose, strict=True)
    assert shape["json_schema"]["strict"] is False and shape["json_schema"]["schema"] == loose
    # the old, loose criteria: OpenAI's rules refuse them, so they would never have been enforced
    assert strict_problem({**loose, "additionalProperties": False}) is not None


def test_a_reply_to_the_strict_form_reads_back_as_the_role_schema_has_it():
    schema = dialogue_days_schema(1)
    reply = {"days": [{"turns": [{"user": "The venue is Leeds.", "evidence": ["m1"]}, {"assistant": "Noted."}]}]}
    assert Draft202012Validator(schema).is_valid(reply)
    strict = strict_form(schema)
    decoded = with_nulls(copy.deepcopy(reply), strict)  # what a server held to the strict form writes
    assert decoded != reply and decoded["days"][0]["turns"][1]["evidence"] is None
    assert not Draft202012Validator(schema).is_valid(decoded)
    assert unstrict(decoded, schema) == reply


def test_strict_is_the_default_only_where_a_schema_is_enforced_only_so():
    assert LLMSettings().strict_schema_for("gpt-4o-mini")  # OpenAI's own endpoint
    assert LLMSettings(base_url="https://x.openai.azure.com/openai/v1").strict_schema_for("m")
    local = LLMSettings(base_url="http://127.0.0.1:8080/v1")
    assert not local.strict_schema_for("m")  # a grammar takes any schema: no null for every optional field
    assert LLMSettings(base_url="http://127.0.0.1:8080/v1", strict_schema=True).strict_schema_for("m")
    assert not LLMSettings(models={"gpt-4o": {"strict_schema": False}}).strict_schema_for("gpt-4o")


def test_a_build_against_a_strict_checking_server_sends_every_schema_strict(tmp_path: Path):
    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"timeout": 10, "max_retries": 1, "structured_output": "json_schema",
                                    "strict_schema": True}))
    with FakeLLMServer(default_responder(), profile="openai") as server:
        config = BuildConfig(seed=4, backend="llm", model="gpt-4o-mini", days=2, utterances_per_day=10,
                             base_url=server.url, llm_config=str(settings))
        kept = build(tmp_path / "data", 1, config, workers=1).accepted
        shapes = [(r.body["response_format"]["json_schema"], r.status) for r in server.chat_requests()
                  if (r.body or {}).get("response_format")]
        loose = {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}
        api = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)
        with pytest.raises(openai.BadRequestError) as caught:
            api.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                        response_format={"type": "json_schema", "json_schema": {
                                            "name": "loose", "schema": loose, "strict": True}})
    assert kept == 1
    names = {shape["name"] for shape, _ in shapes}
    assert {"planner", "task_generator", "dialogue_day", "verifier"} <= names
    assert all(shape["strict"] is True and status == 200 for shape, status in shapes)
    assert "Invalid schema for response_format 'loose'" in str(caught.value)
    assert "'additionalProperties' is required to be supplied and to be false" in str(caught.value)
