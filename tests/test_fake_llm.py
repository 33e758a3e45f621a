"""The fake OpenAI-compatible endpoint, over real HTTP on 127.0.0.1: answers in the OpenAI format
(read back by the official ``openai`` client and by raw HTTP), tool calls, embeddings, models,
every fault, request recording, and ``homer fake-llm`` as a subprocess."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from backends.prompts import render
from backends.tokens import count_tokens
from orchestrator.fake_llm import FakeLLMServer, Reply, default_responder, echo_responder, scripted
from orchestrator.fake_llm.server import CREATED, FENCE_PROSE, MALFORMED_TAIL

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
                             "total_tokens": prompt + completion}
    # deterministic: the same request gets the same answer, byte for byte
    assert post(json_server, "/chat/completions", chat_body(temperature=0, max_tokens=50,
                                                            response_format={"type": "json_object"}))[2] == body


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
    day = render("dialogue_day", inputs={"day": 1, "total_days": 5, "date": "2024-05-06", "weekday": "Monday",
                                         "utterances": 24, "user_first": "Ana", "colleagues": ["Bo"],
                                         "company": "Acme", "projects": ["Atlas"], "city": "Porto", "files": [],
                                         "events": events, "task_values": ["INV-4471", "INV-3302"]},
                 schema={}, feedback="")
    turns = json.loads(default_responder()({"messages": day}).content)["turns"]
    assert turns[0]["role"] == "user" and [t["role"] for t in turns] == ["user", "assistant"] * (len(turns) // 2)
    assert [t.get("evidence") for t in turns if "INV-4471" in t["text"]] == [["m1"]]
    assert [t.get("distractor") for t in turns if "INV-3302" in t["text"]] == [["m1"]]
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
    assert time.monotonic() - started < 2
    server.stop()  # idempotent


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
                            env={**os.environ, "NO_COLOR": "1", "TERM": "dumb"})
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
        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=5)
        planner = render("planner", inputs={"app_count": 2, "available_apps": ["word", "excel", "email"],
                                            "task_kinds": ["sheet_total_email"], "suggested_kind": "sheet_total_email",
                                            "days": 5, "utterances_per_day": 70}, schema={})
        answer = client.chat.completions.create(model="fake-model", messages=planner)
        plan = json.loads(answer.choices[0].message.content)
        assert plan["task_kind"] == "sheet_total_email" and plan["apps"] == ["excel", "email"]
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
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
