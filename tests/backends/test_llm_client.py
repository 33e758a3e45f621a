"""The LLM client layer against the fake endpoint over real HTTP on 127.0.0.1: chat and tool calls,
structured output and its repairs, retries (Retry-After, 500s, timeouts), usage, the response cache,
the per-endpoint concurrency limit, and settings."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from backends.fake_llm import FakeLLMServer, Reply, scripted
from backends.fake_llm.wire import REPLY_FAULTS
from backends.llm import (
    CacheError,
    ChatResult,
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMSettings,
    MalformedReplyError,
    ResponseCache,
    StructuredOutputError,
    ToolCallRequest,
    Usage,
    extract_json,
    request_key,
)
from backends.tokens import count_tokens

pytestmark = pytest.mark.slow

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"title": {"type": "string"}, "minutes": {"type": "integer", "minimum": 1}},
    "required": ["title", "minutes"],
    "additionalProperties": False,
}
GOOD = {"title": "Q3 budget review", "minutes": 30}
ASK = [{"role": "system", "content": "Answer with JSON only."}, {"role": "user", "content": "Plan the meeting."}]


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def fixed(value):
    text = value if isinstance(value, str) else json.dumps(value)
    return lambda body: Reply(content=text)


def make_client(server: FakeLLMServer, usage: Usage | None = None, cache: ResponseCache | None = None,
                **overrides) -> LLMClient:
    settings = LLMSettings(base_url=server.url, api_key=None, **{"timeout": 5, "max_retries": 2, **overrides})
    return LLMClient(settings, usage=usage, cache=cache)


def posts(server: FakeLLMServer) -> list:
    """Chat and embeddings requests (a client also asks GET /v1/models once for context windows)."""
    return [r for r in server.requests if r.method == "POST"]


def last_user_text(body: dict) -> str:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


# -- chat ------------------------------------------------------------------------------------

def test_chat_uses_the_role_model_and_counts_usage_per_role():
    with FakeLLMServer(fixed(GOOD)) as server:
        client = make_client(server, model="base-model", role_models={"judge": "judge-model"})
        planner = client.chat("planner", ASK, temperature=0.3, max_tokens=200)
        judge = client.chat("judge", ASK)
        client.chat("judge", ASK[1:])
        bodies = [r.body for r in server.chat_requests()]
    assert isinstance(planner, ChatResult)
    assert json.loads(planner.content) == GOOD and planner.finish_reason == "stop" and not planner.cached
    assert planner.tool_calls == [] and planner.model == "base-model" and judge.model == "judge-model"
    assert [b["model"] for b in bodies] == ["base-model", "judge-model", "judge-model"]
    assert bodies[0]["temperature"] == 0.3 and bodies[0]["max_tokens"] == 200
    # the settings' temperature and reply limit are always sent; no tools, no tool_choice
    assert bodies[1]["temperature"] == 0.0 and bodies[1]["max_tokens"] == 4096
    assert "tools" not in bodies[1] and "tool_choice" not in bodies[1]
    prompt = count_tokens("Answer with JSON only.") + count_tokens("Plan the meeting.")
    assert (planner.prompt_tokens, planner.completion_tokens) == (prompt, count_tokens(json.dumps(GOOD)))
    usage = client.usage.to_dict()
    assert usage["planner"]["calls"] == 1 and usage["judge"]["calls"] == 2
    assert usage["planner"]["prompt_tokens"] == prompt
    assert usage["judge"]["prompt_tokens"] == prompt + count_tokens("Plan the meeting.")
    assert usage["judge"]["completion_tokens"] == 2 * count_tokens(json.dumps(GOOD))
    assert usage["judge"]["models"] == {"judge-model": {"prompt_tokens": usage["judge"]["prompt_tokens"],
                                                        "completion_tokens": usage["judge"]["completion_tokens"]}}
    assert client.usage.totals()["calls"] == 3 and client.usage.totals()["cached_calls"] == 0


def test_tool_calls_are_parsed_and_bad_arguments_kept_raw():
    tools = [{"type": "function", "function": {"name": "email_send_email", "parameters": {"type": "object"}}}]
    reply = Reply(tool_calls=[{"name": "email_send_email", "arguments": {"to": "bob", "subject": "Q3"}},
                              {"name": "email_send_email", "arguments": '{"to": "carol"'}])
    with FakeLLMServer(lambda body: reply) as server:
        client = make_client(server)
        result = client.chat("solver", ASK, tools=tools, tool_choice="required")
        assert server.chat_requests()[0].body["tools"] == tools and server.chat_requests()[0].body["tool_choice"] == "required"
        follow_up = [*ASK, result.message(),
                     {"role": "tool", "tool_call_id": "call_1", "content": "sent"},
                     {"role": "tool", "tool_call_id": "call_2", "content": "error: bad arguments"}]
        client.chat("solver", follow_up, tools=tools)
        assert server.chat_requests()[1].body["messages"][2]["tool_calls"][1]["function"]["arguments"] == '{"to": "carol"'
    assert result.finish_reason == "tool_calls" and result.content is None
    assert result.tool_calls == [
        ToolCallRequest(id="call_1", name="email_send_email", arguments={"to": "bob", "subject": "Q3"},
                        raw_arguments='{"to": "bob", "subject": "Q3"}'),
        ToolCallRequest(id="call_2", name="email_send_email", arguments=None, raw_arguments='{"to": "carol"'),
    ]


# -- malformed replies -----------------------------------------------------------------------

ENVELOPE_PROBLEMS = {
    "message_string": "'choices[0].message' is a string, not an object",
    "choices_empty": "'choices' is empty",
    "choices_object": "'choices' is an object, not an array",
    "content_object": "'choices[0].message.content' is an object, not a string",
    "tool_calls_object": "'choices[0].message.tool_calls' is an object, not an array",
    "function_missing": "'choices[0].message.tool_calls[0].function' is missing, not an object",
    "arguments_object": "'choices[0].message.tool_calls[0].function.arguments' is an object, not a string",
    "usage_strings": "'usage.prompt_tokens' is a string, not an integer",
    "body_array": "the response body is an array, not an object",
    "body_deep": "the response body is nested deeper than 64 levels",
    "body_not_json": "the response body is not valid JSON",
}


def test_every_envelope_fault_is_named():
    assert set(ENVELOPE_PROBLEMS) == set(REPLY_FAULTS) - {"arguments_deep"}


@pytest.mark.parametrize("fault", sorted(ENVELOPE_PROBLEMS))
def test_a_malformed_reply_is_an_llm_error_naming_the_field(fault):
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults(fault)
        client = make_client(server, max_retries=0)
        with pytest.raises(MalformedReplyError) as caught:
            client.chat("planner", ASK)
        assert json.loads(client.chat("planner", ASK).content) == GOOD  # the next request is whole
    error = caught.value
    assert isinstance(error, LLMError) and error.problem.startswith(ENVELOPE_PROBLEMS[fault])
    assert (error.role, error.status, error.attempts) == ("planner", 200, 1)
    assert "planner" in str(error) and "malformed reply after 1 attempt(s)" in str(error)
    assert client.usage.to_dict()["planner"]["calls"] == 1  # the malformed reply counted nothing


@pytest.mark.parametrize("fault", ["message_string", "body_deep", "usage_strings"])
def test_a_malformed_reply_is_asked_again_within_max_retries(fault):
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults(fault)
        client = make_client(server, max_retries=1)
        assert client.structured("taskgen", ASK, SCHEMA) == GOOD
        first, second = server.chat_requests()
    assert first.fault == fault and second.fault is None
    assert second.body["messages"] == ASK  # asked again as it was, not repaired
    assert client.usage.to_dict()["taskgen"]["calls"] == 1


def test_persistently_malformed_replies_end_the_call_after_max_retries():
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("choices_empty", "choices_empty", "choices_empty")
        with pytest.raises(MalformedReplyError, match=r"after 3 attempt\(s\): 'choices' is empty") as caught:
            make_client(server, max_retries=2).structured("verifier", ASK, SCHEMA)
        assert len(server.chat_requests()) == 3
    assert caught.value.attempts == 3 and caught.value.role == "verifier"


def test_http_retries_and_malformed_replies_share_one_budget_of_max_retries():
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("500", "choices_empty", "500", "choices_empty")
        with pytest.raises(LLMError):
            make_client(server, max_retries=2).structured("verifier", ASK, SCHEMA)
        assert server.chat_request_total == 3  # max_retries + 1, not (max_retries + 1) squared


def test_a_malformed_reply_after_an_http_retry_is_counted_in_its_attempts():
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("500", "choices_empty")
        with pytest.raises(MalformedReplyError, match=r"after 2 attempt\(s\)"):
            make_client(server, max_retries=1).chat("verifier", ASK)
        assert server.chat_request_total == 2


def test_tool_call_arguments_nested_100000_deep_are_kept_raw_not_parsed():
    reply = Reply(tool_calls=[{"name": "word_read_file", "arguments": {"file_path": "a.docx"}}])
    with FakeLLMServer(lambda body: reply) as server:
        server.queue_faults("arguments_deep")
        result = make_client(server, max_retries=0).chat("solver", ASK)
    (call,) = result.tool_calls
    assert call.arguments is None and call.raw_arguments == "[" * 100_000 + "]" * 100_000
    assert result.message()["tool_calls"][0]["function"]["arguments"] == call.raw_arguments


@pytest.mark.parametrize("data, problem", [
    ({"data": [{"index": 0, "embedding": ["x"]}]}, "'data[0].embedding' holds something that is not a number"),
    ({"data": [{"index": 0}]}, "'data[0].embedding' is missing, not an array"),
    ({"data": ["v"]}, "'data[0]' is a string, not an object"),
    ({"data": []}, "'data' has 0 embeddings for 1 inputs"),
    ({"data": {"0": [1.0]}}, "'data' is an object, not an array"),
    ({"data": [{"index": 3, "embedding": [1.0]}]}, "'data[0].index' is 3"),
    ({"data": [{"index": 0, "embedding": [1.0]}], "usage": {"prompt_tokens": "2"}},
     "'usage.prompt_tokens' is a string, not an integer"),
])
def test_a_malformed_embeddings_reply_is_an_llm_error(data, problem):
    class Broken(FakeLLMServer):
        def handle_embeddings(self, body, fault):
            return data

    with Broken() as server:
        with pytest.raises(MalformedReplyError) as caught:
            make_client(server, max_retries=0).embed(["alpha"])
    assert caught.value.problem.startswith(problem) and caught.value.role == "embeddings"


def test_an_unusable_cache_entry_is_asked_again(tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    with FakeLLMServer(fixed(GOOD)) as server:
        client = make_client(server, cache_path=cache_path)
        client.chat("planner", ASK)
        client.embed(["alpha"])
        client.close()
        with sqlite3.connect(cache_path) as db:
            db.execute("UPDATE responses SET value = ?", (json.dumps({"choices": "nope", "data": 5}),))
        client = make_client(server, cache_path=cache_path)
        result = client.chat("planner", ASK)
        assert not result.cached and json.loads(result.content) == GOOD
        assert len(client.embed(["alpha"])[0]) == 64
        assert len(posts(server)) == 4
        assert client.chat("planner", ASK).cached  # the good reply replaced the entry


# -- structured output -----------------------------------------------------------------------

def test_malformed_json_is_repaired_on_the_second_request():
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("malformed")
        value = make_client(server).structured("taskgen", ASK, SCHEMA)
        first, second = server.chat_requests()
    assert value == GOOD
    bad = json.dumps(GOOD)[:-1] + " Let me know if you need anything else!"
    with pytest.raises(json.JSONDecodeError) as parse_error:
        json.loads(bad)
    assert second.body["messages"][:2] == ASK
    assert second.body["messages"][2] == {"role": "assistant", "content": bad}
    repair = last_user_text(second.body)
    assert f"invalid JSON: {parse_error.value}" in repair


def test_fenced_json_and_prose_around_an_object_are_accepted_without_repair():
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("fenced")
        assert make_client(server).structured("taskgen", ASK, SCHEMA) == GOOD
        assert len(server.chat_requests()) == 1
    prose = f"Sure, here it is:\n{json.dumps(GOOD, indent=2)}\nTell me if you want changes."
    with FakeLLMServer(fixed(prose)) as server:
        assert make_client(server).structured("taskgen", ASK, SCHEMA) == GOOD
        assert len(server.chat_requests()) == 1
    assert extract_json("```\n[1, 2]\n```") == [1, 2]
    assert extract_json('Note {braces} in prose.\n{"a": {"b": 1}}\ndone') == {"a": {"b": 1}}
    # a reasoning model's thinking comes first and may hold braces of its own: the answer is after it
    thinking = '<think>\nShould it be {"a": 0}? No.\n</think>\n\n{"a": 1}'
    assert extract_json(thinking) == {"a": 1}
    assert extract_json('<THINK>x</THINK><reasoning>{"a": 0}</reasoning>```json\n{"a": 2}\n```') == {"a": 2}
    with FakeLLMServer(fixed(f"<think>Maybe {json.dumps({**GOOD, 'minutes': 0})}?</think>\n{json.dumps(GOOD)}")) as server:
        assert make_client(server).structured("taskgen", ASK, SCHEMA) == GOOD
        assert len(server.chat_requests()) == 1


def test_truncated_reply_is_asked_again():
    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("truncated")
        assert make_client(server).structured("taskgen", ASK, SCHEMA) == GOOD
        first, second = server.chat_requests()
    assert second.body["messages"][2]["content"] == json.dumps(GOOD)[: len(json.dumps(GOOD)) // 2]
    assert "finish_reason 'length'" in last_user_text(second.body)
    assert second.body["max_tokens"] == first.body["max_tokens"]  # under the same limit: never resent with more


def test_a_cut_reply_asked_for_in_parts_raises_at_once():
    """``split_on_cut``: the caller asks for a smaller part, so the cut reply is not repaired."""
    from backends.llm.client import ReplyCutError

    with FakeLLMServer(fixed(GOOD)) as server:
        server.queue_faults("truncated")
        with pytest.raises(ReplyCutError, match="reply limit of 4096 tokens"):
            make_client(server).structured("taskgen", ASK, SCHEMA, split_on_cut=True)
        assert len(server.chat_requests()) == 1


def test_schema_violation_is_asked_again_quoting_the_schema_error():
    with FakeLLMServer(scripted(json.dumps({"title": 5, "minutes": 30}), json.dumps(GOOD))) as server:
        assert make_client(server).structured("taskgen", ASK, SCHEMA) == GOOD
        repair = last_user_text(server.chat_requests()[1].body)
    assert "schema violation at $.title: 5 is not of type 'string'" in repair
    assert "(schema path: properties/title/type)" in repair


def test_repairs_exhausted_raise_structured_output_error():
    with FakeLLMServer(fixed({"title": "x"})) as server:
        with pytest.raises(StructuredOutputError) as caught:
            make_client(server).structured("verifier", ASK, SCHEMA, max_repairs=1)
        assert len(server.chat_requests()) == 2
    error = caught.value
    assert error.role == "verifier" and error.attempts == 2
    assert "verifier" in str(error) and "'minutes' is a required property" in str(error)
    assert error.error in str(error) and error.content == '{"title": "x"}'
    with pytest.raises(ValueError, match="schema itself is invalid"):
        make_client(server).structured("verifier", ASK, {"type": "no-such-type"})


def test_structured_passes_chat_options_through():
    with FakeLLMServer(fixed(GOOD)) as server:
        make_client(server).structured("taskgen", ASK, SCHEMA, temperature=0.7,
                                       response_format={"type": "json_object"})
        body = server.chat_requests()[0].body
    assert body["temperature"] == 0.7 and body["response_format"] == {"type": "json_object"}


# -- retries and errors ----------------------------------------------------------------------

def test_429_is_retried_after_the_retry_after_delay():
    with FakeLLMServer(fixed(GOOD), retry_after=0.8) as server:
        server.queue_faults("429")
        result = make_client(server).chat("planner", ASK)
        first, second = server.chat_requests()
    assert json.loads(result.content) == GOOD
    assert (first.status, first.fault, second.status, second.fault) == (429, "429", 200, None)
    # the openai client's own first backoff is at most 0.5 s: 0.8 s means it honoured Retry-After
    assert second.started - first.started >= 0.8


def test_persistent_500_raises_llm_error_after_max_retries_plus_one_requests():
    with FakeLLMServer(fixed(GOOD), fail_model="doomed-model") as server:
        client = make_client(server, max_retries=2, role_models={"judge": "doomed-model"})
        with pytest.raises(LLMError) as caught:
            client.chat("judge", ASK)
        assert len(server.chat_requests()) == 3 and {r.status for r in server.chat_requests()} == {500}
        assert client.chat("planner", ASK).content  # other models still answer
    error = caught.value
    assert (error.role, error.model, error.status, error.timed_out) == ("judge", "doomed-model", 500, False)
    assert "judge" in str(error) and "doomed-model" in str(error) and "HTTP 500" in str(error)
    assert "judge" not in client.usage.to_dict()  # a failed call spends nothing


def test_a_slow_reply_is_retried_after_the_client_times_out():
    with FakeLLMServer(fixed(GOOD), slow_seconds=1.5) as server:
        server.queue_faults("slow")
        result = make_client(server, timeout=0.3, max_retries=1).chat("planner", ASK)
        assert json.loads(result.content) == GOOD
        assert [r.fault for r in server.chat_requests()] == ["slow", None]


def test_timeouts_after_all_retries_raise_llm_error():
    with FakeLLMServer(fixed(GOOD), slow_seconds=1.5) as server:
        server.queue_faults("slow", "slow")
        with pytest.raises(LLMError) as caught:
            make_client(server, timeout=0.3, max_retries=1).chat("surfer", ASK)
        assert len(server.chat_requests()) == 2
    assert caught.value.timed_out and caught.value.status is None
    assert "surfer" in str(caught.value) and "within the timeout setting (0.3 s" in str(caught.value)


def test_nothing_listening_is_a_connection_error():
    with FakeLLMServer() as server:
        url = server.url
    client = LLMClient(LLMSettings(base_url=url, timeout=2, max_retries=0))
    with pytest.raises(LLMError, match="cannot connect"):
        client.chat("planner", ASK)


# -- cache -----------------------------------------------------------------------------------

def test_cache_hit_makes_no_request_and_counts_as_cached(tmp_path):
    cache_path = tmp_path / "cache" / "responses.sqlite"
    with FakeLLMServer(fixed(GOOD)) as server:
        client = make_client(server, cache_path=cache_path)
        first = client.chat("planner", ASK)
        second = client.chat("planner", ASK)
        assert len(server.chat_requests()) == 1
        assert not first.cached and second.cached
        assert (second.content, second.prompt_tokens, second.completion_tokens) == (
            first.content, first.prompt_tokens, first.completion_tokens)
        assert client.usage.to_dict()["planner"] | {"models": None} == {
            "calls": 2, "cached_calls": 1, "prompt_tokens": first.prompt_tokens,
            "completion_tokens": first.completion_tokens, "cached_prompt_tokens": 0, "models": None}
        # any difference in the request misses
        client.chat("planner", ASK, temperature=0.5)
        client.chat("planner", ASK[1:])
        client.chat("planner", ASK, max_tokens=10)
        assert len(server.chat_requests()) == 4
        # a new client (a new process, say) on the same file hits too, also for structured()
        other = make_client(server, cache_path=cache_path)
        assert other.chat("planner", ASK).cached
        assert other.structured("planner", ASK, SCHEMA) == GOOD
        assert len(posts(server)) == 4
        # embeddings are cached as well
        vectors = other.embed(["alpha", "beta"])
        assert other.embed(["alpha", "beta"]) == vectors and len(posts(server)) == 5
    assert request_key({"endpoint": "http://a/v1", "model": "m"}) != request_key({"endpoint": "http://b/v1", "model": "m"})
    assert request_key({"b": 1, "a": [1, 2]}) == request_key({"a": [1, 2], "b": 1})


def test_cache_is_shared_across_threads_and_processes(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    threads = [threading.Thread(target=lambda i=i: [cache.put(f"k{i}-{j}", {"i": i, "j": j}) for j in range(20)])
               for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 80 and cache.get("k3-19") == {"i": 3, "j": 19} and cache.get("nope") is None
    code = ("from backends.llm import ResponseCache; import sys; c = ResponseCache(sys.argv[1]); "
            "print(c.get('k1-1')['j']); c.put('from-child', [1, 2])")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "c.sqlite")], capture_output=True, text=True,
                          timeout=30)
    assert proc.stdout.strip() == "1", proc.stderr
    assert cache.get("from-child") == [1, 2]
    assert sqlite3.connect(tmp_path / "c.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cache.close()


def test_cache_refuses_a_link_at_its_path_or_journal(tmp_path):
    outside = tmp_path / "outside.sqlite"
    link = tmp_path / "cache.sqlite"
    link.symlink_to(outside)
    with pytest.raises(CacheError, match=r"cache\.sqlite: is a symlink; refused"):
        ResponseCache(link)
    assert not outside.exists()
    link.unlink()
    (tmp_path / "cache.sqlite-wal").symlink_to(tmp_path / "elsewhere-wal")
    with pytest.raises(CacheError, match=r"cache\.sqlite: its wal file"):
        ResponseCache(link)
    assert not (tmp_path / "elsewhere-wal").exists() and not link.exists()


def test_corrupt_or_locked_cache_is_a_clear_error(tmp_path):
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(CacheError, match=r"corrupt\.sqlite: is not an SQLite database"):
        ResponseCache(corrupt)
    path = tmp_path / "busy.sqlite"
    cache = ResponseCache(path, busy_timeout=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO responses VALUES ('x', '1', 0)")
    try:
        with pytest.raises(CacheError, match=r"busy\.sqlite: database is locked"):
            cache.put("k", {"v": 1})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    cache.put("k", {"v": 1})
    assert cache.get("k") == {"v": 1}


# -- concurrency -----------------------------------------------------------------------------

def _run_two_calls(limit: int) -> list[tuple[float, float]]:
    intervals: list[tuple[float, float]] = []
    lock = threading.Lock()

    def responder(body: dict) -> Reply:
        start = time.monotonic()
        time.sleep(0.25)
        with lock:
            intervals.append((start, time.monotonic()))
        return Reply(content=json.dumps(GOOD))

    with FakeLLMServer(responder) as server:
        clients = [make_client(server, max_concurrency=limit) for _ in range(2)]
        assert clients[0]._slots is clients[1]._slots  # one limiter per endpoint
        errors: list[BaseException] = []

        def call(client: LLMClient, role: str) -> None:
            try:
                client.chat(role, ASK)
            except BaseException as exc:  # pragma: no cover - surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=call, args=(c, f"role{i}")) for i, c in enumerate(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    return sorted(intervals)


def test_max_concurrency_one_never_overlaps_requests():
    (a_start, a_end), (b_start, b_end) = _run_two_calls(limit=1)
    assert a_end <= b_start


def test_max_concurrency_two_does_overlap():
    """With two slots, both requests are inside the endpoint at once: each waits (a bounded time)
    for the other to arrive, so a loaded machine cannot make them look sequential."""
    inside = [0, 0]  # now, most at once
    arrived = threading.Condition()

    def responder(body: dict) -> Reply:
        with arrived:
            inside[0] += 1
            inside[1] = max(inside[1], inside[0])
            arrived.notify_all()
            arrived.wait_for(lambda: inside[1] >= 2, timeout=5)
            inside[0] -= 1
        return Reply(content=json.dumps(GOOD))

    with FakeLLMServer(responder) as server:
        clients = [make_client(server, max_concurrency=2) for _ in range(2)]
        threads = [threading.Thread(target=c.chat, args=(f"role{i}", ASK)) for i, c in enumerate(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert inside[1] == 2


# -- embeddings ------------------------------------------------------------------------------

def test_embed_returns_one_vector_per_text_in_order():
    with FakeLLMServer() as server:
        client = make_client(server, embedding_model="emb-small")
        vectors = client.embed(["alpha", "beta", "alpha"])
        assert server.requests[0].body == {"model": "emb-small", "input": ["alpha", "beta", "alpha"],
                                           "encoding_format": "float"}
        assert client.embed(["beta"], model="emb-large") == [vectors[1]]
    assert len(vectors) == 3 and vectors[0] == vectors[2] != vectors[1] and len(vectors[0]) == 64
    usage = client.usage.to_dict()["embeddings"]
    assert usage["calls"] == 2 and usage["prompt_tokens"] == 2 * count_tokens("alpha") + 2 * count_tokens("beta")
    with pytest.raises(TypeError):
        client.embed("alpha")


# -- usage -----------------------------------------------------------------------------------

def test_usage_records_the_prompt_tokens_the_endpoint_served_from_its_prompt_cache():
    long_system = "Office notes. " + " ".join(f"row {i} of the sheet" for i in range(300))
    ask = [{"role": "system", "content": long_system}, {"role": "user", "content": "Task one."}]
    with FakeLLMServer(fixed(GOOD)) as server:
        client = make_client(server)
        first = client.chat("task_generator", ask)
        second = client.chat("task_generator", [ask[0], {"role": "user", "content": "Task two."}])
    assert first.cached_prompt_tokens == 0 and second.cached_prompt_tokens > second.prompt_tokens // 2
    usage = client.usage.to_dict()["task_generator"]
    assert usage["cached_prompt_tokens"] == second.cached_prompt_tokens
    assert usage["prompt_tokens"] == first.prompt_tokens + second.prompt_tokens  # cached ones still counted
    merged = Usage().merge(usage and {"task_generator": usage}).merge({"task_generator": usage})
    assert merged.to_dict()["task_generator"]["cached_prompt_tokens"] == 2 * usage["cached_prompt_tokens"]


def test_usage_is_thread_safe_merges_and_prices_by_model():
    usage = Usage()
    threads = [threading.Thread(target=lambda: [usage.add("planner", 10, 5, model="m1") for _ in range(500)])
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    usage.add("judge", 1000, 2000, model="m2")
    usage.add("judge", 1000, 2000, cached=True, model="m2")
    assert usage.to_dict()["planner"]["calls"] == 2000 and usage.to_dict()["planner"]["prompt_tokens"] == 20000
    assert usage.to_dict()["judge"]["cached_calls"] == 1 and usage.to_dict()["judge"]["prompt_tokens"] == 1000
    prices = {"m1": (0.1, 0.2), "m2": (1.0, 2.0)}
    assert usage.cost(prices) == pytest.approx(20 * 0.1 + 10 * 0.2 + 1 * 1.0 + 2 * 2.0)
    assert usage.unpriced({"m1": (0, 0)}) == ["m2"]
    merged = Usage.from_dict(usage.to_dict()).merge(usage)
    assert merged.to_dict()["planner"]["calls"] == 4000 and merged.cost(prices) == pytest.approx(2 * usage.cost(prices))
    assert merged.per_item(4000)["planner"]["calls"] == 1.0


# -- settings --------------------------------------------------------------------------------

def test_settings_precedence_file_then_env_then_overrides(tmp_path, monkeypatch):
    config = tmp_path / "llm.toml"
    config.write_text('base_url = "http://file.example/v1"\napi_key = "file-key"\nmodel = "file-model"\n'
                      'timeout = 12.5\ncache_path = "cache/llm.sqlite"\n'
                      '[role_models]\njudge = "judge-model"\n[prices]\n"file-model" = [0.15, 0.6]\n')
    loaded = LLMSettings.load(config)
    assert (loaded.base_url, loaded.api_key, loaded.model, loaded.timeout) == (
        "http://file.example/v1", "file-key", "file-model", 12.5)
    assert loaded.cache_path == tmp_path / "cache" / "llm.sqlite" and loaded.prices == {"file-model": (0.15, 0.6)}
    assert loaded.model_for("judge") == "judge-model" and loaded.model_for("planner") == "file-model"
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.example/v1")
    loaded = LLMSettings.load(config)
    assert (loaded.base_url, loaded.api_key, loaded.model) == ("http://env.example/v1", "env-key", "file-model")
    monkeypatch.setenv("HOMER_MODEL", "env-model")
    assert LLMSettings.load(config).model == "env-model"  # the variable beats the file, as --model's help says
    monkeypatch.delenv("HOMER_MODEL")
    loaded = LLMSettings.load(config, model="flag-model", api_key="flag-key", base_url=None, max_concurrency=2)
    assert (loaded.base_url, loaded.api_key, loaded.model, loaded.max_concurrency) == (
        "http://env.example/v1", "flag-key", "flag-model", 2)
    json_config = tmp_path / "llm.json"
    json_config.write_text(json.dumps({"llm": {"model": "json-model", "max_retries": 0}}))
    loaded = LLMSettings.load(json_config)
    assert (loaded.model, loaded.max_retries, loaded.api_key) == ("json-model", 0, "env-key")


def test_settings_errors_name_what_to_fix(tmp_path):
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        LLMSettings.load()  # OpenAI's own endpoint needs a key
    with pytest.raises(LLMConfigError, match=r"no API key for https://llm\.example\.com/v1: set OPENAI_API_KEY"):
        LLMSettings.load(base_url="https://llm.example.com/v1")
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        LLMClient(LLMSettings(base_url="https://llm.example.com/v1"))
    assert LLMSettings.load(base_url="http://127.0.0.1:9/v1").api_key is None  # local: no key needed
    config = tmp_path / "llm.toml"
    config.write_text('model = "m"\ntemprature = 0.2\n')
    with pytest.raises(LLMConfigError, match=r"llm\.toml: unknown key 'temprature'"):
        LLMSettings.load(config)
    config.write_text('model = "m"\nmax_retries = -1\n')
    with pytest.raises(LLMConfigError, match=r"llm\.toml: max_retries must be an integer from 0 to 50"):
        LLMSettings.load(config, api_key="k")
    for line, message in (("timeout = nan", "timeout must be a number of seconds > 0 and at most 86,400"),
                          ("timeout = inf", "timeout must be"), ("timeout = 0", "timeout must be"),
                          ("start_wait = -1", "start_wait must be a number of seconds from 0 to 86,400"),
                          ("start_wait = 1e9", "start_wait must be"),
                          ("max_concurrency = 100000", "max_concurrency must be an integer from 1 to 1024"),
                          ("max_tokens = 100000000000", "max_tokens must be a whole number of tokens from 1 to "
                                                        "10,000,000"),
                          ("context_window = 100000000000", "context_window must be a whole number of tokens from 16"),
                          ("prices = { m = [inf, 1] }", "prices.m must be")):
        config.write_text(f'model = "m"\n{line}\n')
        with pytest.raises(LLMConfigError, match=rf"llm\.toml: {message}"):
            LLMSettings.load(config, api_key="k")
    config.write_text('model = "m"\nstart_wait = 0\ntimeout = 86400\n')
    assert LLMSettings.load(config, api_key="k").start_wait == 0
    config.write_text('model = "m\n')
    with pytest.raises(LLMConfigError, match=r"llm\.toml: invalid TOML"):
        LLMSettings.load(config)
    with pytest.raises(LLMConfigError, match="unknown setting"):
        LLMSettings.load(api_key="k", modle="m")
    with pytest.raises(LLMConfigError, match="cannot read"):
        LLMSettings.load(tmp_path / "missing.toml")
    with pytest.raises(LLMConfigError, match="must be an http"):
        LLMSettings.load(base_url="ftp://x", api_key="k")


# -- a server's own request fields -------------------------------------------------------------

def test_extra_body_fields_reach_the_server_per_model_and_key_the_cache(tmp_path):
    from backends.llm import preflight

    extra = {"top_k": 5, "logit_bias": [['"', 4.0]]}
    cache_path = tmp_path / "cache.sqlite"
    with FakeLLMServer(fixed(GOOD)) as server:
        client = make_client(server, cache_path=cache_path, extra_body=extra, model="m",
                             models={"other": {"extra_body": {"min_p": 0.1}}}, role_models={"judge": "other"})
        preflight.check(client)
        client.chat("planner", ASK)
        client.chat("judge", ASK)
        assert client.chat("planner", ASK).cached
        client.close()
        plain = make_client(server, cache_path=cache_path, model="m")
        assert not plain.chat("planner", ASK).cached  # the same prompt without the fields is another request
        plain.close()
        bodies = [r.body for r in server.chat_requests()]
    checks, (planner, judge, without) = bodies[:-3], bodies[-3:]
    assert {b["model"] for b in checks} == {"m", "other"}  # the check asks each model with its own fields
    assert all(b["top_k"] == 5 and b["logit_bias"] == [['"', 4.0]] if b["model"] == "m" else b["min_p"] == 0.1
               for b in checks)
    assert planner["top_k"] == 5 and planner["logit_bias"] == [['"', 4.0]] and planner["model"] == "m"
    assert judge["min_p"] == 0.1 and "top_k" not in judge  # the model's own table replaces the global one
    assert "top_k" not in without


LOCAL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("value, words", [
    ({"model": "x"}, "model is set by homer itself"),
    ({"max_tokens": 5, "temperature": 1}, "max_tokens, temperature are set by homer itself"),
    ([1, 2], "must be a table of request fields"),
    ({"big": "x" * 20_000}, "at most 16,384"),
    ({"nan": float("nan")}, "JSON values only"),
])
def test_extra_body_refuses_what_the_client_sets_and_what_is_no_json(value, words):
    with pytest.raises(LLMConfigError, match=words):
        LLMSettings.load(set_values={"extra_body": value, "base_url": LOCAL})
    with pytest.raises(LLMConfigError, match=f"models.m.extra_body.*{words.split()[0]}"):
        LLMSettings.load(set_values={"models": {"m": {"extra_body": value}}, "base_url": LOCAL})
