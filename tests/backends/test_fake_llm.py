"""The fake OpenAI-compatible endpoint, over real HTTP on 127.0.0.1: answers in the OpenAI format
(read back by the official ``openai`` client and by raw HTTP), tool calls, embeddings, models,
every fault, request recording, and ``homer fake-llm`` as a subprocess."""

from __future__ import annotations

import http.client
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import jinja2
import openai
import pytest
from jsonschema import Draft202012Validator

from backends.fake_llm import FakeLLMServer, Reply, echo_responder, scripted
from backends.fake_llm import server as server_module
from backends.fake_llm.server import CREATED, FENCE_PROSE, MAX_RECORDED_REQUESTS
from backends.fake_llm.wire import MALFORMED_TAIL, REPLY_FAULTS
from backends.prompts import render
from backends.tokens import count_tokens
from generators.schemas import dialogue_days_schema, thread_turns
from office_env.limits import MAX_EMBEDDING_DIMENSIONS, MAX_EMBEDDING_INPUTS, MAX_REQUEST_BYTES
from orchestrator.fake_llm import offline_responder as responder_module
from orchestrator.fake_llm.offline_responder import agent_responder, default_responder
from tests.support.records import dialogue_record
from verifier.history_form import small_talk_fit

pytestmark = pytest.mark.slow

HOMER = Path(sys.executable).parent / "homer"
ANSWER = {"title": "Q3 budget review", "attendees": ["Alice", "Bob"], "minutes": 30}


def post(server: FakeLLMServer, path: str, body: dict | bytes, fault: str | None = None,
         timeout: float = 10) -> tuple[int, dict, dict]:
    """POST to the server with urllib; returns (status, headers, JSON body) also for 4xx/5xx."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"X-Fake-Fault": fault} if fault else {})}
    request = urllib.request.Request(server.url + path, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def get(url: str, timeout: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def chat_body(text: str = "Plan the Q3 budget review.", **extra) -> dict:
    return {"model": "fake-model", "messages": [{"role": "system", "content": "You plan meetings."},
                                                {"role": "user", "content": text}], **extra}


@pytest.fixture
def json_server():
    with FakeLLMServer(lambda body: Reply(content=json.dumps(ANSWER)), retry_after=0.25, slow_seconds=0.6) as server:
        yield server


def sdk(server: FakeLLMServer, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="test", **{"max_retries": 0, "timeout": 5, **kwargs})


# -- chat ------------------------------------------------------------------------------------

def test_chat_completion_is_valid_openai_json(json_server):
    status, headers, body = post(json_server, "/chat/completions", chat_body(temperature=0, max_tokens=50,
                                                                             response_format={"type": "json_object"}))
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["created"] == CREATED and body["model"] == "fake-model"
    choice = body["choices"][0]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert json.loads(choice["message"]["content"]) == ANSWER
    assert "tool_calls" not in choice["message"]
    prompt = count_tokens("You plan meetings.") + count_tokens("Plan the Q3 budget review.")
    completion = count_tokens(json.dumps(ANSWER))
    assert body["usage"] == {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion, "prompt_tokens_details": {"cached_tokens": 0}}
    # deterministic: the same request gets the same answer, byte for byte, except that its whole
    # prompt is now in the prefix cache
    again = post(json_server, "/chat/completions", chat_body(temperature=0, max_tokens=50,
                                                             response_format={"type": "json_object"}))[2]
    assert again["usage"].pop("prompt_tokens_details") == {"cached_tokens": prompt}
    assert again == {**body, "usage": {k: v for k, v in body["usage"].items() if k != "prompt_tokens_details"}}


def test_cached_tokens_are_the_shared_prefix_with_recent_prompts_of_the_model(json_server):
    from backends.fake_llm.prefix_cache import BLOCK_TOKENS, prompt_sequence

    office = "The office: " + " ".join(f"file{i}.xlsx holds row {i}" for i in range(200))

    def ask(task: str, model: str = "fake-model") -> dict:
        body = {"model": model, "messages": [{"role": "system", "content": office},
                                             {"role": "user", "content": task}]}
        return post(json_server, "/chat/completions", body)[2]["usage"]

    first = ask("Write the budget task.")
    assert first["prompt_tokens_details"] == {"cached_tokens": 0}  # nothing seen yet
    second = ask("Write the meeting task.")
    shared = next(i for i, (a, b) in enumerate(zip(
        prompt_sequence({"messages": [{"role": "system", "content": office}, {"role": "user", "content": "Write the budget task."}]}),
        prompt_sequence({"messages": [{"role": "system", "content": office}, {"role": "user", "content": "Write the meeting task."}]})))
        if a != b)
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert cached == shared // BLOCK_TOKENS * BLOCK_TOKENS and cached > second["prompt_tokens"] // 2
    # another model has its own cache; a prompt that starts differently shares nothing
    assert ask("Write the meeting task.", model="other-model")["prompt_tokens_details"]["cached_tokens"] == 0
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "Hello. " + office}]}
    assert post(json_server, "/chat/completions", body)[2]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0


def test_official_client_reads_the_answer(json_server):
    completion = sdk(json_server).chat.completions.create(model="gpt-test", messages=chat_body()["messages"])
    assert json.loads(completion.choices[0].message.content) == ANSWER
    assert completion.model == "gpt-test" and completion.usage.total_tokens > 0
    recorded = json_server.requests[-1]
    assert recorded.body["model"] == "gpt-test" and recorded.body["messages"][1]["content"].startswith("Plan")


def test_default_responder_answers_role_prompts_and_refuses_others():
    assert json.loads(default_responder()({"messages": [{"role": "user", "content": "hi"}]}).content) == {
        "error": "not a homeragents role prompt"}
    events = [{"move": "raise", "thread": "t1", "memory": "m1", "cue": "invoice_number", "about": "the supplier bill"},
              {"move": "state", "thread": "t1", "memory": "m1", "cue": "invoice_number", "about": "the supplier bill",
               "say": "INV-4471", "mark": "evidence"},
              {"move": "distract", "thread": "t1", "memory": "m1", "cue": "invoice_number", "about": "the supplier bill",
               "say": "INV-3302", "text": "INV-3302 was paid in March", "mark": "distractor"}]
    day = render("dialogue_day", inputs={"total_days": 5, "utterances": 24, "user_first": "Ana", "colleagues": ["Bo"],
                                         "company": "Acme", "projects": ["Atlas"], "city": "Porto", "files": [],
                                         "task_values": ["INV-4471", "INV-3302"],
                                         "days": [{"day": 1, "date": "2024-05-06", "weekday": "Monday",
                                                   "events": events},
                                                  {"day": 2, "date": "2024-05-07", "weekday": "Tuesday", "events": []}]},
                 schema={}, feedback="")
    answer = json.loads(default_responder()({"messages": day}).content)
    assert len(answer["days"]) == 2 and all(d["turns"] for d in answer["days"])  # both days, in one answer
    # each turn names its speaker by its key, as the day schema asks, and a run of a thread's turns
    # gives the thread once; read back as role and text, each turn with its thread
    assert Draft202012Validator(dialogue_days_schema(2)).is_valid(answer)
    items = answer["days"][0]["turns"]
    turns = thread_turns(items)
    runs = [item for item in items if "turns" in item]
    assert runs and all("thread" not in t for run in runs for t in run["turns"])
    assert [next(iter(t)) for item in items for t in item.get("turns", [item])] == [t["role"] for t in turns]
    assert turns[0]["role"] == "user" and [t["role"] for t in turns] == ["user", "assistant"] * (len(turns) // 2)
    assert [t.get("evidence") for t in turns if "INV-4471" in t["text"]] == [["m1"]]
    assert [t.get("distractor") for t in turns if "INV-3302" in t["text"]] == [["m1"]]
    # the small talk keeps the prompt's rule: answers fit their question, reactions do not echo
    assert "reacts without echoing the user's names or things" in json.dumps(day)
    fit = small_talk_fit([dialogue_record(*(thread_turns(d["turns"]) for d in answer["days"]))])
    assert fit["reactions"] >= 5 and fit["echoes"] <= 1 and fit["mismatched"] == 0, fit
    assert {t.get("thread") for t in turns if "INV-" in t["text"]} == {"t1"}
    assert any(t.get("thread", "").startswith("w") for t in turns)


def test_echo_responder_echoes_the_last_user_message():
    assert echo_responder({"messages": []}).content == '{"echo": ""}'
    with FakeLLMServer() as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "first"},
                                          {"role": "assistant", "content": "ok"},
                                          {"role": "user", "content": [{"type": "text", "text": "second"}]}]}
        status, _, answer = post(server, "/chat/completions", body)
    assert status == 200
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"echo": "second"}


def test_tool_calls_round_trip():
    tools = [{"type": "function", "function": {"name": "excel_read_file", "description": "Read a workbook",
                                               "parameters": {"type": "object", "properties": {"file": {"type": "string"}},
                                                              "required": ["file"]}}}]
    seen: list[dict] = []

    def responder(body: dict) -> Reply:
        seen.append(body)
        if body["messages"][-1]["role"] == "tool":
            return Reply(content="The total is 12,500.")
        return Reply(tool_calls=[{"name": "excel_read_file", "arguments": {"file": "data/budget.xlsx"}},
                                 {"name": "excel_read_file", "arguments": {"file": "data/q3.xlsx"}}])

    with FakeLLMServer(responder) as server:
        client = sdk(server)
        messages = [{"role": "user", "content": "What is the Q3 total?"}]
        first = client.chat.completions.create(model="fake-model", messages=messages, tools=tools, tool_choice="auto")
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content is None
        calls = choice.message.tool_calls
        assert [c.id for c in calls] == ["call_1", "call_2"]
        assert [c.type for c in calls] == ["function", "function"]
        assert json.loads(calls[0].function.arguments) == {"file": "data/budget.xlsx"}
        assert isinstance(calls[1].function.arguments, str)
        assert seen[0]["tools"] == tools and seen[0]["tool_choice"] == "auto"
        messages.append(choice.message.to_dict())
        messages += [{"role": "tool", "tool_call_id": c.id, "content": "(1, 1): 12500"} for c in calls]
        second = client.chat.completions.create(model="fake-model", messages=messages, tools=tools)
        assert second.choices[0].finish_reason == "stop"
        assert second.choices[0].message.content == "The total is 12,500."
        # the prompt counted the earlier tool call's name and arguments too
        assert second.usage.prompt_tokens > first.usage.prompt_tokens
        # numbering continues along the conversation
        status, _, third = post(server, "/chat/completions", {"model": "fake-model", "messages": messages[:2]})
        assert [c["id"] for c in third["choices"][0]["message"]["tool_calls"]] == ["call_3", "call_4"]


def test_scripted_responder_answers_in_order_then_fails():
    with FakeLLMServer(scripted("one", Reply(content="two", finish_reason="length"))) as server:
        answers = [post(server, "/chat/completions", chat_body()) for _ in range(3)]
    assert [a[2]["choices"][0]["message"]["content"] for a in answers[:2]] == ["one", "two"]
    assert answers[1][2]["choices"][0]["finish_reason"] == "length"
    assert answers[2][0] == 500 and "scripted responder exhausted" in answers[2][2]["error"]["message"]


# -- embeddings and models -------------------------------------------------------------------

def test_embeddings_are_deterministic_unit_vectors(json_server):
    status, _, first = post(json_server, "/embeddings", {"model": "emb", "input": ["alpha", "beta"], "encoding_format": "float"})
    assert status == 200 and first["object"] == "list" and first["model"] == "emb"
    vectors = [row["embedding"] for row in sorted(first["data"], key=lambda r: r["index"])]
    assert [len(v) for v in vectors] == [64, 64]
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-9) for v in vectors)
    assert vectors[0] != vectors[1]
    tokens = count_tokens("alpha") + count_tokens("beta")
    assert first["usage"] == {"prompt_tokens": tokens, "total_tokens": tokens}
    again = post(json_server, "/embeddings", {"model": "emb", "input": "alpha"})[2]
    assert again["data"][0]["embedding"] == vectors[0]
    # the official client asks for base64 by default and decodes float32: the same vector
    decoded = sdk(json_server).embeddings.create(model="emb", input=["alpha"]).data[0].embedding
    assert len(decoded) == 64 and all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(decoded, vectors[0]))
    assert len(post(json_server, "/embeddings", {"model": "emb", "input": "alpha", "dimensions": 8})[2]["data"][0]["embedding"]) == 8


def test_models_lists_the_default_and_every_model_seen(json_server):
    assert [m["id"] for m in get(json_server.url + "/models")["data"]] == ["fake-model"]
    post(json_server, "/chat/completions", {**chat_body(), "model": "judge-large"})
    listed = sdk(json_server).models.list()
    assert [m.id for m in listed.data] == ["fake-model", "judge-large"]
    assert get(json_server.url + "/models/judge-large")["id"] == "judge-large"


# -- faults ----------------------------------------------------------------------------------

def test_malformed_fault_breaks_the_json(json_server):
    status, _, body = post(json_server, "/chat/completions", chat_body(), fault="malformed")
    content = body["choices"][0]["message"]["content"]
    assert status == 200 and body["choices"][0]["finish_reason"] == "stop"
    assert content == json.dumps(ANSWER)[:-1] + MALFORMED_TAIL
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)


def test_fenced_fault_wraps_the_json_in_a_fence(json_server):
    content = post(json_server, "/chat/completions", chat_body(), fault="fenced")[2]["choices"][0]["message"]["content"]
    assert content == f"{FENCE_PROSE}\n```json\n{json.dumps(ANSWER)}\n```"


def test_truncated_fault_cuts_the_reply_in_half(json_server):
    body = post(json_server, "/chat/completions", chat_body(), fault="truncated")[2]
    full = json.dumps(ANSWER)
    assert body["choices"][0]["message"]["content"] == full[: len(full) // 2]
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == count_tokens(full[: len(full) // 2])


def test_malformed_and_truncated_tool_call_arguments():
    reply = Reply(tool_calls=[{"name": "word_read_file", "arguments": {"file": "data/a.docx"}}])
    with FakeLLMServer(lambda body: reply) as server:
        broken = post(server, "/chat/completions", chat_body(), fault="malformed")[2]["choices"][0]
        cut = post(server, "/chat/completions", chat_body(), fault="truncated")[2]["choices"][0]
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken["message"]["tool_calls"][0]["function"]["arguments"])
    assert broken["finish_reason"] == "tool_calls"
    assert cut["finish_reason"] == "length"
    assert cut["message"]["tool_calls"][0]["function"]["arguments"] == '{"file": "d'


def test_429_fault_has_retry_after_and_an_openai_error(json_server):
    status, headers, body = post(json_server, "/chat/completions", chat_body(), fault="429")
    assert status == 429 and headers["Retry-After"] == "0.25"
    assert body["error"]["code"] == "rate_limit_exceeded" and body["error"]["message"]
    with pytest.raises(openai.RateLimitError):
        sdk(json_server).chat.completions.create(model="m", messages=chat_body()["messages"],
                                                 extra_headers={"X-Fake-Fault": "429"})
    with FakeLLMServer(retry_after=2) as whole:
        assert post(whole, "/chat/completions", chat_body(), fault="429")[1]["Retry-After"] == "2"


def test_500_fault_and_failing_model(json_server):
    status, _, body = post(json_server, "/chat/completions", chat_body(), fault="500")
    assert status == 500 and body["error"]["type"] == "server_error"
    with FakeLLMServer(fail_model="broken") as server:
        assert post(server, "/chat/completions", {**chat_body(), "model": "broken"})[0] == 500
        assert post(server, "/chat/completions", {**chat_body(), "model": "broken"})[0] == 500
        assert post(server, "/chat/completions", {**chat_body(), "model": "fine"})[0] == 200
        assert post(server, "/embeddings", {"model": "broken", "input": "x"})[0] == 500
        assert [r.fault for r in server.requests] == ["500", "500", None, "500"]


def test_slow_fault_answers_late_and_times_out_a_short_client(json_server):
    started = time.monotonic()
    status, _, body = post(json_server, "/chat/completions", chat_body(), fault="slow")
    assert status == 200 and time.monotonic() - started >= 0.6
    assert json.loads(body["choices"][0]["message"]["content"]) == ANSWER
    with pytest.raises(openai.APITimeoutError):
        sdk(json_server, timeout=0.2).chat.completions.create(model="m", messages=chat_body()["messages"],
                                                              extra_headers={"X-Fake-Fault": "slow"})


def test_queued_faults_apply_to_the_next_chat_requests_in_order(json_server):
    json_server.queue_faults("500", "fenced")
    get(json_server.url + "/models")  # not a chat request: consumes nothing
    post(json_server, "/embeddings", {"model": "e", "input": "x"})
    results = [post(json_server, "/chat/completions", chat_body()) for _ in range(3)]
    assert [r[0] for r in results] == [500, 200, 200]
    assert results[1][2]["choices"][0]["message"]["content"].startswith(FENCE_PROSE)
    assert json.loads(results[2][2]["choices"][0]["message"]["content"]) == ANSWER
    assert [r.fault for r in json_server.chat_requests()] == ["500", "fenced", None]
    with pytest.raises(ValueError, match="unknown fault"):
        json_server.queue_faults("explode")


def test_bad_requests_get_openai_style_errors(json_server):
    assert post(json_server, "/chat/completions", b"{not json")[0] == 400
    assert post(json_server, "/chat/completions", {"model": "m", "messages": []})[0] == 400
    status, _, body = post(json_server, "/chat/completions", chat_body(), fault="explode")
    assert status == 400 and "unknown X-Fake-Fault" in body["error"]["message"]
    assert post(json_server, "/completions", chat_body())[0] == 404
    with FakeLLMServer(lambda body: 1 / 0) as server:
        status, _, body = post(server, "/chat/completions", chat_body())
    assert status == 500 and "ZeroDivisionError" in body["error"]["message"]


def test_requests_are_recorded(json_server):
    post(json_server, "/chat/completions", chat_body(temperature=0.5), fault="fenced")
    get(json_server.url + "/models")
    first, second = json_server.requests
    assert (first.method, first.path, first.fault, first.status) == ("POST", "/v1/chat/completions", "fenced", 200)
    assert first.headers["X-Fake-Fault"] == "fenced" and first.headers["Content-Type"] == "application/json"
    assert first.body == chat_body(temperature=0.5)
    assert first.started <= first.ended <= second.started
    assert (second.method, second.path, second.body, second.fault) == ("GET", "/v1/models", None, None)
    json_server.reset()
    assert json_server.requests == []


def test_stop_is_prompt_with_a_slow_request_in_flight():
    server = FakeLLMServer(slow_seconds=30).start()
    client = sdk(server, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                       extra_headers={"X-Fake-Fault": "slow"})
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 25  # it does not wait out the 30 s request in flight
    server.stop()  # idempotent


# -- faults stay with their request ---------------------------------------------------------

SURFER_INPUTS = {"app": "excel", "files": ["data/budget.xlsx"], "now": "2024-05-06 09:00 (Monday)", "users": []}


def test_a_malformed_tool_call_poisons_no_later_request():
    """The broken reply is in the next request's history (the client sends it back); the endpoint
    still answers, and asks again for the call that never ran."""
    messages = render("surfer", app="excel", inputs=SURFER_INPUTS, schema={})
    body = {"model": "fake-model", "messages": messages}
    with FakeLLMServer(default_responder()) as server:
        server.queue_faults("malformed")
        status, _, broken = post(server, "/chat/completions", body)
        assert status == 200
        (bad_call,) = broken["choices"][0]["message"]["tool_calls"]
        with pytest.raises(json.JSONDecodeError):
            json.loads(bad_call["function"]["arguments"])
        # request k + 1 with the same messages: the normal answer
        status, _, same = post(server, "/chat/completions", body)
        assert status == 200
        (call,) = same["choices"][0]["message"]["tool_calls"]
        assert json.loads(call["function"]["arguments"]) == {"file_path": "data/budget.xlsx"}
        # the conversation that carries the broken call on: the call is asked for again
        history = [*messages, broken["choices"][0]["message"],
                   {"role": "tool", "tool_call_id": bad_call["id"], "content": "Error: not a JSON object"}]
        status, _, again = post(server, "/chat/completions", {"model": "fake-model", "messages": history})
        assert status == 200
        (retry,) = again["choices"][0]["message"]["tool_calls"]
        assert retry["function"]["name"] == "excel_read_file" and retry["id"] == "call_2"
        assert json.loads(retry["function"]["arguments"]) == {"file_path": "data/budget.xlsx"}
        assert [r.status for r in server.requests] == [200, 200, 200] and server.errors == []


def test_a_broken_agent_call_is_sent_again_not_skipped():
    from harness.agents import REQUEST_MARKER

    plan = [{"tool": "word_read_file", "args": {"file_path": "a.docx"}},
            {"tool": "email_send_email", "args": {"to": "bob"}}]
    messages = [{"role": "system", "content": "You are the personal assistant of Ana."},
                {"role": "user", "content": f"Context.\n{REQUEST_MARKER}\nSend it to Bob."}]
    with FakeLLMServer(agent_responder({"Send it to Bob.": plan})) as server:
        server.queue_faults("truncated")
        tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
                 for name in ("word_read_file", "email_send_email")]
        broken = post(server, "/chat/completions", {"model": "m", "messages": messages,
                                                    "tools": tools})[2]["choices"][0]["message"]
        history = [*messages, broken, {"role": "tool", "tool_call_id": "call_1", "content": "Error: bad arguments"}]
        again = post(server, "/chat/completions", {"model": "m", "messages": history,
                                                   "tools": tools})[2]["choices"][0]["message"]
    assert again["tool_calls"][0]["function"]["name"] == "word_read_file"
    assert json.loads(again["tool_calls"][0]["function"]["arguments"]) == {"file_path": "a.docx"}


@pytest.mark.parametrize("fault", REPLY_FAULTS)
def test_reply_faults_break_one_answer_and_the_next_is_whole(fault):
    reply = Reply(tool_calls=[{"name": "word_read_file", "arguments": {"file_path": "a.docx"}}])
    with FakeLLMServer(lambda body: reply) as server:
        server.queue_faults(fault)
        request = urllib.request.Request(server.url + "/chat/completions", data=json.dumps(chat_body()).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw = response.status, response.read()
        status_after, _, after = post(server, "/chat/completions", chat_body())
    assert status == 200
    if fault == "body_deep":
        assert raw == b"[" * 100_000 + b"]" * 100_000
        return
    if fault == "body_not_json":
        with pytest.raises(json.JSONDecodeError):
            json.loads(raw)
        return
    broken = json.loads(raw)
    if fault == "body_array":
        assert isinstance(broken, list) and broken[0]["object"] == "chat.completion"
    elif fault == "usage_strings":
        assert all(isinstance(v, str) for v in broken["usage"].values())
    elif fault == "message_string":
        assert isinstance(broken["choices"][0]["message"], str)
    elif fault == "choices_empty":
        assert broken["choices"] == []
    elif fault == "choices_object":
        assert isinstance(broken["choices"], dict)
    elif fault == "content_object":
        assert isinstance(broken["choices"][0]["message"]["content"], dict)
    elif fault == "tool_calls_object":
        assert isinstance(broken["choices"][0]["message"]["tool_calls"], dict)
    elif fault == "function_missing":
        assert "function" not in broken["choices"][0]["message"]["tool_calls"][0]
    elif fault == "arguments_object":
        assert broken["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == {"file_path": "a.docx"}
    elif fault == "arguments_deep":
        assert broken["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].startswith("[" * 1000)
    assert status_after == 200
    assert after["choices"][0]["message"]["tool_calls"][0]["function"] == {
        "name": "word_read_file", "arguments": '{"file_path": "a.docx"}'}


# -- bad HTTP input ----------------------------------------------------------------------------

def raw_request(server: FakeLLMServer, headers: list[tuple[str, str]], body: bytes = b"",
                path: str = "/v1/chat/completions", method: str = "POST") -> tuple[int, dict]:
    """Send exactly these headers and bytes with http.client; (status, JSON error body)."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        conn.endheaders()
        if body:
            conn.send(body)
        response = conn.getresponse()
        assert response.getheader("Content-Type") == "application/json"
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def sized(body: bytes) -> list[tuple[str, str]]:
    return [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]


GOOD_CHAT = json.dumps(chat_body()).encode()
BAD_INPUT = [
    ("length not a number", [("Content-Length", "abc")], b"{}", 400,
     "Content-Length 'abc' is not a non-negative integer"),
    ("negative length", [("Content-Length", "-5")], b"", 400, "Content-Length '-5' is not a non-negative integer"),
    ("huge length", [("Content-Length", str(10 ** 15))], b"", 413, "larger than the limit"),
    ("length with 5,000 digits", [("Content-Length", "9" * 5000)], b"", 413, "larger than the limit"),
    ("conflicting lengths", [("Content-Length", "2"), ("Content-Length", "3")], b"{}", 400,
     "conflicting Content-Length"),
    ("chunked", [("Transfer-Encoding", "chunked")], b"0\r\n\r\n", 411, "Content-Length"),
    ("not JSON", sized(b"{not json"), b"{not json", 400, "request body is not valid JSON"),
    ("not UTF-8", sized(b'{"model": "\xff"}'), b'{"model": "\xff"}', 400, "request body is not UTF-8"),
    ("JSON not an object", sized(b"[1, 2]"), b"[1, 2]", 400, "request body must be a JSON object, got array"),
    ("nested 100,000 deep", sized(b"[" * 100_000 + b"]" * 100_000), b"[" * 100_000 + b"]" * 100_000, 400,
     "nested deeper than 64 levels"),
    ("object nested 100,000 deep", sized(b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
     b'{"a":' * 100_000 + b"1" + b"}" * 100_000, 400, "nested deeper than 64 levels"),
]
BAD_BODIES = [
    ({"messages": [{"role": "user", "content": "x"}]}, "'model' is required"),
    ({"model": 5, "messages": [{"role": "user", "content": "x"}]}, "'model' must be a non-empty string"),
    ({"model": "m", "messages": "hello"}, "'messages' must be a non-empty array"),
    ({"model": "m", "messages": ["hello"]}, "'messages[0]' must be an object, got string"),
    ({"model": "m", "messages": [{"content": "x"}]}, "'messages[0].role' must be a string"),
    ({"model": "m", "messages": [{"role": "user", "content": 5}]}, "'messages[0].content' must be a string"),
    ({"model": "m", "messages": [{"role": "assistant", "tool_calls": 5}]}, "'messages[0].tool_calls' must be an array"),
    ({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]},
     "'messages[0].tool_calls[0].function' must be an object"),
    ({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}]},
     "'messages[0].tool_calls[0].function.arguments' must be a string"),
]


def test_bad_http_input_is_a_json_error_and_the_server_keeps_serving(json_server, capfd):
    for label, headers, body, status, message in BAD_INPUT:
        got_status, got = raw_request(json_server, headers, body)
        assert (got_status, got["error"]["type"]) == (status, "invalid_request_error"), label
        assert message in got["error"]["message"], label
        assert raw_request(json_server, sized(GOOD_CHAT), GOOD_CHAT)[0] == 200, label
    for body, message in BAD_BODIES:
        status, got = raw_request(json_server, sized(json.dumps(body).encode()), json.dumps(body).encode())
        assert status == 400 and message in got["error"]["message"], body
        assert raw_request(json_server, sized(GOOD_CHAT), GOOD_CHAT)[0] == 200
    status, got = raw_request(json_server, sized(GOOD_CHAT), GOOD_CHAT, method="PUT")
    assert status == 501 and "Unsupported method" in got["error"]["message"]
    assert json_server.errors == []
    assert "Traceback" not in capfd.readouterr().err


def test_a_body_over_the_limit_is_413_even_when_the_client_sends_it_all(json_server, capfd):
    body = b" " * (MAX_REQUEST_BYTES + 1)
    status, got = raw_request(json_server, sized(body), body)
    assert status == 413 and f"limit of {MAX_REQUEST_BYTES} bytes" in got["error"]["message"]
    assert json_server.requests[-1].body is None and json_server.requests[-1].status == 413
    assert raw_request(json_server, sized(GOOD_CHAT), GOOD_CHAT)[0] == 200
    assert "Traceback" not in capfd.readouterr().err


def test_a_bug_inside_the_server_is_a_quiet_500(json_server, monkeypatch, capfd):
    def broken(self, body, fault):
        raise KeyError("oops")

    monkeypatch.setattr(FakeLLMServer, "handle_chat", broken)
    status, _, body = post(json_server, "/chat/completions", chat_body())
    assert status == 500 and "internal error in the fake endpoint: KeyError" in body["error"]["message"]
    assert json_server.errors == ["KeyError: 'oops'"]
    monkeypatch.undo()
    assert post(json_server, "/chat/completions", chat_body())[0] == 200
    assert "Traceback" not in capfd.readouterr().err


# -- bounded resources -------------------------------------------------------------------------

def test_embeddings_are_bounded_in_dimensions_and_inputs(json_server):
    status, _, body = post(json_server, "/embeddings", {"model": "e", "input": "x", "dimensions": 100_000_000})
    assert status == 400 and body["error"]["param"] == "dimensions"
    assert f"at most {MAX_EMBEDDING_DIMENSIONS}" in body["error"]["message"]
    many = ["x"] * (MAX_EMBEDDING_INPUTS + 1)
    status, _, body = post(json_server, "/embeddings", {"model": "e", "input": many})
    assert status == 400 and f"at most {MAX_EMBEDDING_INPUTS} per request" in body["error"]["message"]
    status, _, body = post(json_server, "/embeddings", {"model": "e", "input": ["x"] * 200,
                                                        "dimensions": MAX_EMBEDDING_DIMENSIONS})
    assert status == 400 and "values; at most" in body["error"]["message"]
    for bad in (0, -1, True, "64", 1.5):
        assert post(json_server, "/embeddings", {"model": "e", "input": "x", "dimensions": bad})[0] == 400
    assert post(json_server, "/embeddings", {"model": "e", "input": [{"a": 1}]})[0] == 400
    status, _, body = post(json_server, "/embeddings",
                           {"model": "e", "input": "x", "dimensions": MAX_EMBEDDING_DIMENSIONS})
    assert status == 200 and len(body["data"][0]["embedding"]) == MAX_EMBEDDING_DIMENSIONS
    assert post(json_server, "/embeddings", {"model": "e", "input": [1, 2, 3]})[0] == 200  # one token array


def test_recorded_requests_keep_the_last_ones(monkeypatch):
    assert FakeLLMServer().keep_requests == MAX_RECORDED_REQUESTS == 1000
    with FakeLLMServer(keep_requests=3) as server:
        for i in range(5):
            post(server, "/chat/completions", chat_body(f"request {i}"))
        post(server, "/embeddings", {"model": "e", "input": "x"})
        assert [r.body["messages"][1]["content"] for r in server.chat_requests()] == ["request 3", "request 4"]
        assert len(server.requests) == 3 and server.chat_request_total == 5
    with FakeLLMServer() as server:
        post(server, "/chat/completions", chat_body("0" * 1000))
        one = server.requests[0].size
        assert one > 1000
        monkeypatch.setattr(server_module, "MAX_RECORDED_BYTES", int(2.5 * one))
        for i in range(1, 3):
            post(server, "/chat/completions", chat_body(f"{i}" * 1000))
        kept = server.requests
        assert len(kept) == 2 and kept[-1].body["messages"][1]["content"] == "2" * 1000
        post(server, "/chat/completions", chat_body("x" * 10 * one))  # alone over the limit: still the newest kept
        assert [r.body["messages"][1]["content"] for r in server.requests] == ["x" * 10 * one]
        server.reset()
        assert server.requests == [] and server.chat_request_total == 0
    with pytest.raises(ValueError, match="keep_requests"):
        FakeLLMServer(keep_requests=0)


def test_models_seen_are_bounded(json_server, monkeypatch):
    monkeypatch.setattr(server_module, "MAX_SEEN_MODELS", 3)
    for name in ("a", "b", "c", "d"):
        post(json_server, "/chat/completions", {**chat_body(), "model": name})
    assert json_server.models == ["fake-model", "a", "b"]
    assert post(json_server, "/chat/completions", {**chat_body(), "model": "x" * 300})[0] == 400


def _day_prompt(day: int, date: str, away) -> list[dict]:
    inputs = {"total_days": 9, "utterances": 60, "user_first": "Ana",
              "colleagues": ["Bo", "Cy", "Di", "Ed"], "company": "Acme", "projects": ["Atlas", "Borealis"],
              "city": "Porto", "files": [], "task_values": [], "away": away,
              "days": [{"day": day, "date": date, "weekday": "Monday", "events": []}]}
    try:
        return render("dialogue_day", inputs=inputs, schema={}, feedback="")
    except (TypeError, jinja2.exceptions.UndefinedError):  # input the project never sends: the request carries it all the same
        messages = render("dialogue_day", inputs={**inputs, "away": []}, schema={}, feedback="")
        block = "```json\n" + json.dumps(inputs) + "\n```"
        return [{**m, "content": re.sub(r"```json\n.*?\n```", lambda _: block, m["content"], flags=re.S)}
                if m["role"] == "user" else m for m in messages]


def test_a_day_has_no_colleague_the_office_shows_away_doing_other_work():
    """The prompt lists who the office shows away when; the fake model, like the offline writer,
    names none of them in that day's other work, and tells the model so in words."""
    away = [{"name": "Bo", "first": "2024-05-01", "last": "2024-05-10"}, {"name": "Cy", "first": "2024-05-06", "last": "2024-05-06"}]
    prompt = _day_prompt(1, "2024-05-06", away)
    assert "Bo 2024-05-01 to 2024-05-10; Cy 2024-05-06 to 2024-05-06." in prompt[1]["content"]
    named = 0
    for day in range(1, 7):
        turns = thread_turns(json.loads(default_responder()(
            {"messages": _day_prompt(day, "2024-05-06", away)}).content)["days"][0]["turns"])
        work = [t["text"] for t in turns if t.get("thread", "").startswith("w")]
        assert work and not [t for t in work if re.search(r"\b(Bo|Cy)\b", t)], work
        named += sum(bool(re.search(r"\b(Di|Ed)\b", t)) for t in work)
    assert named > 3  # the colleagues in the office still are


@pytest.mark.parametrize("away", [
    "Bo", 7, None, {"name": "Bo"}, [1, "x", None, {"name": "Bo"}, {"name": "Bo", "first": "2024-W19-1", "last": "2024-05-10"},
                                 {"name": "Bo", "first": "2024-05-10", "last": "2024-05-01"},
                                 {"name": ["Bo"], "first": "2024-05-01", "last": "2024-05-10"},
                                 {"name": "B" * 101, "first": "2024-05-01", "last": "2024-05-10"},
                                 {"name": "Bo", "first": "1900-01-01", "last": "2024-05-10"}],
    [{"name": f"N{i}", "first": "2024-05-01", "last": "2024-05-10"} for i in range(5_000)],
])
def test_a_malformed_away_list_is_read_as_far_as_it_is_sound(away):
    """The "away" input is untrusted: anything but a list of {name, first, last} with ISO days, a
    name of at most 100 characters and a span under a year is left out, and at most
    MAX_ABSENCES entries are read; the day is still written."""
    read = responder_module._absences(away)
    assert len(read) <= responder_module.MAX_ABSENCES
    assert all(isinstance(n, str) and 0 < len(n) <= 100 and a <= b for n, a, b in read)
    if not isinstance(away, list) or len(away) < 100:
        assert read == []
    turns = thread_turns(json.loads(default_responder()(
        {"messages": _day_prompt(1, "2024-05-06", away)}).content)["days"][0]["turns"])
    assert turns and all(t["text"] for t in turns)


def test_the_responder_memory_of_histories_is_a_bounded_lru(monkeypatch):
    monkeypatch.setattr(responder_module, "_HISTORIES", type(responder_module._HISTORIES)())
    monkeypatch.setattr(responder_module, "_HISTORY_CHARS", [0])
    monkeypatch.setattr(responder_module, "MAX_HISTORIES", 2)
    remember, earlier = responder_module._remember_day, responder_module._earlier_days
    inputs = [{"user_first": name, "files": ["x" * 10_000], "day": 1} for name in ("Ana", "Bo", "Cy")]
    remember(inputs[0], ["hello"])
    remember(inputs[1], ["hi"])
    assert earlier({**inputs[0], "day": 2}) == ["hello"]  # a read makes Ana the most recent
    remember(inputs[2], ["hey"])
    assert earlier({**inputs[1], "day": 2}) == [] and earlier({**inputs[0], "day": 2}) == ["hello"]
    assert all(len(key) == 64 for key in responder_module._HISTORIES)  # a digest, not the inputs
    remember({**inputs[0], "day": 10 ** 9}, ["far"])  # a day no history has: not kept
    assert earlier({**inputs[0], "day": 10 ** 10}) == ["hello"]
    monkeypatch.setattr(responder_module, "MAX_HISTORY_CHARS", 12)
    remember(inputs[1], ["x" * 10])
    assert len(responder_module._HISTORIES) == 1 and responder_module._HISTORY_CHARS == [10]


# -- homer fake-llm --------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_homer_fake_llm_serves_until_terminated(tmp_path):
    port = free_port()
    command = [str(HOMER)] if HOMER.exists() else [sys.executable, "-m", "orchestrator.cli"]
    proc = subprocess.Popen([*command, "fake-llm", "--port", str(port)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1", "TERM": "dumb", "PYTHONFAULTHANDLER": "1"})
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 20
        while True:
            try:
                models = get(url + "/models", timeout=1)
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "homer fake-llm did not start serving"
                time.sleep(0.1)
        assert models["data"][0]["id"] == "fake-model"
        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=120)  # loading the answers is slow under load
        planner = render("planner", inputs={"app_count": 2, "suggested_kind": "sheet_total_email", "days": 5,
                                            "utterances_per_day": 70}, schema={}, apps=["word", "excel", "email"],
                         kinds=[("sheet_total_email", ("excel", "email"))])
        answer = client.chat.completions.create(model="fake-model", messages=planner)
        plan = json.loads(answer.choices[0].message.content)
        assert plan["task_kind"] == "sheet_total_email" and plan["apps"] == ["excel", "email"]
    finally:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=60)  # a hang guard
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # the fault handler prints where every thread is
            pytest.fail("homer fake-llm did not stop on SIGTERM:\n" + proc.communicate(timeout=30)[1][-8000:])
    assert proc.returncode == 0, err
    assert f"http://127.0.0.1:{port}/v1" in out
    assert "Traceback" not in err


def test_homer_fake_llm_reports_a_busy_port(tmp_path):
    with FakeLLMServer() as busy:
        command = [str(HOMER)] if HOMER.exists() else [sys.executable, "-m", "orchestrator.cli"]
        proc = subprocess.run([*command, "fake-llm", "--port", str(busy.port)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "cannot listen" in proc.stderr and "Traceback" not in proc.stderr


def test_the_verifier_is_sent_the_work_and_the_fake_one_judges_its_marks():
    from generators.model import Session, Turn, transcript
    from verifier.schemas import VERDICT_SCHEMA

    def prompt(evidence: tuple[str, ...]) -> list[dict]:
        turns = (Turn("user", "Lovely weather for the lake today.", "2025-03-03T09:00:00"),
                 Turn("assistant", "It is; enjoy it.", "2025-03-03T09:01:00"),
                 Turn("user", "The budget file is budget_q3.xlsx.", "2025-03-03T09:05:00", evidence, thread="t1"),
                 Turn("assistant", "Noted.", "2025-03-03T09:06:00", thread="t1"))
        text = transcript([Session(1, "2025-03-03", turns)], evidence=True, work_only=True, seconds=False)
        memory = [{"id": "m1", "kind": "fact", "text": "The budget file is budget_q3.xlsx.", "value": "budget_q3.xlsx"}]
        return render("verifier", inputs={"min_days": 1, "intent": "Total the budget.", "memory": memory},
                      transcript=text, schema=VERDICT_SCHEMA)

    good = prompt(("m1",))
    assert "budget_q3.xlsx" in good[1]["content"] and "weather" not in good[1]["content"]  # small talk left out
    assert "\n[09:05] user: The budget file is budget_q3.xlsx. {m1}\n" in good[1]["content"]  # times to the minute
    assert json.loads(default_responder()({"messages": good}).content) == {"passed": True, "feedback": "ok"}
    verdict = json.loads(default_responder()({"messages": prompt(())}).content)
    assert not verdict["passed"] and "m1" in verdict["feedback"]


def test_a_reply_longer_than_its_limit_is_cut_there_as_servers_do():
    """The reply (its text, or its tool calls' arguments) stops at the request's max_tokens with
    finish_reason length, and the usage counts what was sent; a server that ignores the limit
    (broken or hostile) sends it whole."""
    import openai

    from backends.fake_llm import Reply, scripted
    from backends.tokens import count_tokens

    text = " ".join(f"word{i}" for i in range(400))
    call = {"name": "word_write_to_file", "arguments": json.dumps({"file_path": "a.docx", "content": text})}
    replies = [text, Reply(tool_calls=[call]), text, text]
    with FakeLLMServer(scripted(*replies)) as server, FakeLLMServer(scripted(text), ignores_max_tokens=True) as deaf:
        api = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)
        ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        cut = api.chat.completions.create(**ask, max_tokens=20)
        tools = api.chat.completions.create(**ask, max_tokens=20)
        whole = api.chat.completions.create(**ask, max_tokens=5000)
        reasoning = api.chat.completions.create(**ask, max_completion_tokens=30)
        ignored = openai.OpenAI(base_url=deaf.url, api_key="x", max_retries=0).chat.completions.create(
            **ask, max_tokens=20)
    assert cut.choices[0].finish_reason == "length" and text.startswith(cut.choices[0].message.content)
    assert count_tokens(cut.choices[0].message.content) <= 20 == cut.usage.completion_tokens
    arguments = tools.choices[0].message.tool_calls[0].function.arguments
    assert tools.choices[0].finish_reason == "length" and call["arguments"].startswith(arguments)
    assert len(arguments) < len(call["arguments"]) and tools.usage.completion_tokens <= 20
    assert whole.choices[0].finish_reason == "stop" and whole.choices[0].message.content == text
    assert reasoning.choices[0].finish_reason == "length" and reasoning.usage.completion_tokens <= 30
    assert ignored.choices[0].message.content == text and ignored.choices[0].finish_reason == "stop"


def test_openai_profile_caches_a_shared_beginning_of_1024_tokens_or_more_in_steps_of_128():
    from backends.fake_llm.prefix_cache import PrefixCache, prompt_sequence
    from backends.fake_llm.profiles import PROFILES

    profile = PROFILES["openai"]
    cache = PrefixCache(block=profile.cache_block, least=profile.cache_least)

    def body(words: int, task: str) -> dict:
        return {"messages": [{"role": "system", "content": " ".join(f"rule{i}" for i in range(words))},
                             {"role": "user", "content": task}]}

    def shared(a: dict, b: dict) -> int:
        return next(i for i, (x, y) in enumerate(zip(prompt_sequence(a), prompt_sequence(b))) if x != y)

    short = body(150, "Task one.")  # a static part of a few hundred tokens: a provider caches none of it
    assert cache.cached_tokens("m", short) == 0 and 16 < shared(short, body(150, "Task two.")) < 1024
    assert cache.cached_tokens("m", body(150, "Task two.")) == 0
    long_ = body(700, "Task one.")
    cache.cached_tokens("m", long_)
    again = body(700, "Task two.")
    assert shared(long_, again) >= 1024
    assert cache.cached_tokens("m", again) == shared(long_, again) // 128 * 128
