"""Slow servers (``backends.llm.patience``), against the fake endpoint with slots over real HTTP: an
attempt's time grows with its prompt and reply limit, and an attempt that timed out is asked again
only once the server has room (llama.cpp's /slots, vLLM's /metrics), never while it may still be
working on the abandoned request. The assertions are on the order of what the server saw, not on
how long anything took."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from itertools import pairwise

import pytest

from backends.fake_llm import FakeLLMServer
from backends.llm import LLMClient, LLMError, LLMSettings
from backends.llm.patience import attempt_seconds, busy_now
from backends.llm.server_tokens import LLAMA, VLLM
from orchestrator.fake_llm.offline_responder import default_responder

pytestmark = pytest.mark.slow

ASK = [{"role": "user", "content": "Say OK."}]


def client(url: str, **settings) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, model="fake-model", **{"timeout": 1.0, "max_retries": 1, **settings}))


def test_an_attempts_time_grows_with_its_prompt_and_reply_limit():
    assert attempt_seconds(60, 100, 512) == 60  # never under the setting
    assert attempt_seconds(60, 7000, 1192) == 120  # 8,192 tokens: twice the setting's 4,096
    with FakeLLMServer(default_responder(), latency=1.2) as server, \
            client(server.url, timeout=0.5, max_retries=0) as llm:
        long = llm.chat("agent", [{"role": "user", "content": "word " * 20_000}], max_tokens=4096)
        with pytest.raises(LLMError) as short:
            llm.chat("agent", ASK, max_tokens=16)
    assert long.content and len(server.chat_requests()) == 2
    assert short.value.timed_out and "timeout setting (0.5 s an attempt, 1 attempt(s))" in str(short.value)


def test_an_abandoned_request_is_asked_again_only_once_a_slot_is_idle():
    with FakeLLMServer(default_responder(), profile="llama-cpp", slots=1, slow_seconds=1.6) as server:
        server.queue_faults("slow")
        with client(server.url) as llm:
            assert llm.chat("agent", ASK, max_tokens=16).content
        first, second = server.chat_requests()
        looks = [r for r in server.requests if r.path == "/slots"]
    assert first.fault == "slow" and second.fault is None
    # the server finished the abandoned request before the same request came again
    assert first.ended is not None and second.started >= first.ended
    assert looks and looks[0].started < first.ended  # it was seen busy, and waited for


def test_a_server_still_busy_at_the_bound_gets_no_second_copy():
    # the slow request outlasts the attempt (1 s) and the wait for room (1 s) by far: a busy machine
    # that delays the client by seconds must not let the server finish before the bound
    with FakeLLMServer(default_responder(), profile="llama-cpp", slots=1, slow_seconds=8.0) as server:
        server.queue_faults("slow")
        with client(server.url) as llm, pytest.raises(LLMError) as caught:
            llm.chat("agent", ASK, max_tokens=16)
        sent = len(server.chat_requests())
    assert sent == 1 and caught.value.timed_out and caught.value.transient
    assert "still busy (1 of 1 slots processing)" in str(caught.value)
    assert "--llm-set timeout=SECONDS" in str(caught.value)


def test_vllm_is_asked_again_once_nothing_waits():
    with FakeLLMServer(default_responder(), profile="vllm", slots=1, slow_seconds=1.6) as server, \
            client(server.url) as llm:
        assert llm.context_window("fake-model") == 32768  # what the server states is read before the race
        other = threading.Thread(target=post_slow, args=(server,))
        other.start()
        while server.slots.running == 0:  # another client's long request holds the one slot
            time.sleep(0.01)
        assert llm.chat("agent", ASK, max_tokens=16).content
        other.join()
        slow, _abandoned, again = sorted(server.chat_requests(), key=lambda r: r.started)
        looks = [r for r in server.requests if r.path == "/metrics"]
    assert slow.fault == "slow" and looks
    assert again.started >= slow.ended  # not sent while the first copy still waited behind it


def post_slow(server: FakeLLMServer) -> None:
    body = json.dumps({"model": "fake-model", "messages": ASK}).encode()
    request = urllib.request.Request(f"{server.url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json", "X-Fake-Fault": "slow"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        reply.read()


def test_what_the_servers_say_of_their_slots():
    with FakeLLMServer(default_responder(), profile="llama-cpp", slots=2) as server, client(server.url) as llm:
        assert busy_now(llm._openai, server.url, LLAMA) == ""
        with server.slots.occupy(), server.slots.occupy():
            assert busy_now(llm._openai, server.url, LLAMA) == "2 of 2 slots processing"
        assert busy_now(llm._openai, server.url, VLLM) is None  # llama.cpp has no vLLM metrics
    with FakeLLMServer(default_responder(), profile="vllm", slots=1) as server, client(server.url) as llm:
        assert busy_now(llm._openai, server.url, VLLM) == ""
    with FakeLLMServer(default_responder()) as server, client(server.url) as llm:
        assert busy_now(llm._openai, server.url, LLAMA) is None  # no /slots: says nothing


def test_no_more_requests_in_flight_than_llama_cpp_has_slots():
    from concurrent.futures import ThreadPoolExecutor

    with FakeLLMServer(default_responder(), profile="llama-cpp", slots=1, latency=0.3) as server, \
            client(server.url, timeout=10, max_concurrency=4, max_retries=0) as llm:
        with ThreadPoolExecutor(3) as pool:
            assert all(r.content for r in pool.map(lambda i: llm.chat("agent", [{"role": "user", "content": f"{i}"}],
                                                                      max_tokens=16), range(3)))
        chats = sorted(server.chat_requests(), key=lambda r: r.started)
    # /props says one slot: each request was sent once the one before it was answered, none queued there
    assert len(chats) == 3 and all(later.started >= earlier.ended for earlier, later in pairwise(chats))


def test_the_check_warns_of_a_llama_cpp_server_that_hides_its_slots():
    from dataclasses import replace

    from backends.fake_llm.profiles import profile_named

    hidden = replace(profile_named("llama-cpp"), shows_slots=False)  # llama-server --no-slots
    with FakeLLMServer(default_responder(), profile=hidden) as server, client(server.url) as llm:
        notes = llm.preflight(wait=0)
    with FakeLLMServer(default_responder(), profile="llama-cpp") as server, client(server.url) as llm:
        assert llm.preflight(wait=0) == []
    assert len(notes) == 1 and "does not show its slots (GET /slots" in notes[0] and "timeout" in notes[0]
