"""What a request spends of a model's context window: the tool definitions every agent request
carries, and the reply limit chosen to fit beside the prompt."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from backends.llm import LLMClient
from backends.llm.client import ContextLengthError
from backends.llm.settings import LLMSettings
from backends.llm.window import MIN_REPLY_TOKENS, NoRoom, props_url, reply_limit, with_margin
from backends.tokens import APPROX_RATIO, BPE_NAME, count_tokens, counter_name
from office_env import default_registry
from office_env.tools.registry import UNSENT_BOUND, sent_schema

TOOL_BUDGET = 1500  # cl100k tokens for the 20 tools' definitions, as the client sends them


def sent_json(value) -> str:
    """JSON as the openai client puts it on the wire (no spaces)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_the_tools_fit_their_budget():
    tools = default_registry().openai_tools()
    budget = TOOL_BUDGET if counter_name() == BPE_NAME else TOOL_BUDGET * APPROX_RATIO
    assert len(tools) == 20 and count_tokens(sent_json(tools)) <= budget


def _bare(schema):
    """``schema`` without its descriptions: what binds the arguments."""
    if isinstance(schema, dict):
        return {k: _bare(v) for k, v in schema.items() if k != "description"}
    return [_bare(v) for v in schema] if isinstance(schema, list) else schema


def _bounded(schema):
    """``schema`` without the bounds no call comes near (checked, not sent)."""
    return {**schema, "properties": {name: {k: v for k, v in prop.items()
                                            if not (k in ("maxLength", "maximum") and v >= UNSENT_BOUND)}
                                     for name, prop in schema["properties"].items()}}


@pytest.mark.parametrize("tool", default_registry(), ids=lambda t: t.name)
def test_the_sent_schema_binds_what_validation_checks(tool):
    sent = tool.openai_definition()["function"]["parameters"]
    # every parameter with its type, enum and the bounds a call may meet, the required ones: left
    # out are an empty ``required``, ``additionalProperties: false`` (grammar engines allow no
    # unlisted keys unless told) and bounds no call comes near
    kept = {k: v for k, v in _bare(tool.parameters).items() if (k != "required" or v) and k != "additionalProperties"}
    assert _bare(sent) == _bounded(kept) and tool.parameters["additionalProperties"] is False
    assert "additionalProperties" not in sent
    Draft202012Validator.check_schema(sent)


def test_only_bounds_no_call_comes_near_are_left_out():
    sent = {t.name: t.openai_definition()["function"]["parameters"]["properties"] for t in default_registry()}
    assert sent["excel_create_new_file"]["sheet_name"]["maxLength"] == 31 and sent["excel_set_cell"]["row"] == \
        {"type": "integer", "minimum": 1}
    assert "maxLength" not in sent["calendar_create_event"]["summary"]


def test_validation_stays_strict():
    registry = default_registry()
    assert registry.validate("excel_set_cell", {"file_path": "a.xlsx", "row": 0, "col": 1, "value": 1})
    assert registry.validate("excel_set_cell", {"file_path": "a.xlsx", "row": 1, "col": 1, "value": 1, "x": 1})
    assert registry.validate("word_write_to_file", {"file_path": "a.docx", "content": "x", "mode": "prepend"})
    assert registry.validate("calendar_create_event", {"user": "a", "summary": "", "start": "s", "end": "e"})
    assert registry.validate("system_list_files", {"folder": 3})
    assert sent_schema({"type": "object", "properties": {}, "required": []}) == {"type": "object", "properties": {}}


# -- the reply limit ---------------------------------------------------------------------------

def test_the_configured_limit_is_kept_when_it_fits_or_the_window_is_unknown():
    assert reply_limit(4096, None, 100_000) == 4096
    assert reply_limit(1024, 8192, 5000) == 1024
    assert reply_limit(4096, 8192, 100) == 4096


def test_a_limit_that_does_not_fit_is_lowered_to_what_is_left():
    limit = reply_limit(4096, 8192, 5000)
    assert limit == 8192 - with_margin(5000) < 4096
    assert with_margin(5000) + limit == 8192


def test_under_the_floor_is_no_room():
    prompt = 6800  # with the margin: 7496, leaving 696 of 8192
    assert reply_limit(4096, 8192, prompt) == 8192 - with_margin(prompt) >= MIN_REPLY_TOKENS
    with pytest.raises(NoRoom) as caught:
        reply_limit(4096, 8192, 7100)  # 7826 with the margin: 366 left
    assert caught.value.room == 8192 - with_margin(7100) and caught.value.floor == MIN_REPLY_TOKENS
    # a configured limit under the floor is floor enough
    assert reply_limit(300, 8192, 7100) == 300
    with pytest.raises(NoRoom):
        reply_limit(400, 8192, 7100)


def test_llama_cpp_props_sit_at_the_server_root():
    assert props_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/props"
    assert props_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/props"
    assert props_url("http://host/llama/v1") == "http://host/llama/props"


def test_a_prompt_that_leaves_no_reply_room_is_refused_before_sending_naming_the_setting():
    # nothing listens on port 9: the error must come before any request
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", context_window=2048, max_retries=0)
    with LLMClient(settings) as client:
        with pytest.raises(ContextLengthError) as caught:
            client.chat("agent", [{"role": "user", "content": "word " * 1700}])
        with pytest.raises(ContextLengthError) as over:
            client.chat("agent", [{"role": "user", "content": "word " * 2500}])
    assert caught.value.window == 2048 and "under the least of 512" in str(caught.value)
    assert "context_window setting" in str(caught.value) and "2,048-token context window of m" in str(caught.value)
    assert "does not fit the 2,048-token context window" in str(over.value)
