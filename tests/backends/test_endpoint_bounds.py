"""Every network read of the llm client has a total deadline and a size cap, and the endpoint check
proves each route a run uses: against small real HTTP servers that trickle, flood or refuse, and
the fake endpoint."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backends.fake_llm import FakeLLMServer
from backends.llm import LLMClient, LLMError, LLMSettings, PreflightError
from backends.llm.preflight import PING_TOOL
from backends.llm.transport import MAX_REPLY_BYTES
from orchestrator.fake_llm.offline_responder import default_responder

pytestmark = pytest.mark.slow

CHAT = (b'{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":'
        b'{"role":"assistant","content":"OK"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}')


class Hostile:
    """A real HTTP server that answers every request (or, with ``listing``, every request but
    ``/models``) one way: ``trickle`` (the headers, then one
    body byte every ``pause`` s), ``slow_headers`` (the status line, then a header byte every
    ``pause`` s) or ``flood`` (a 600 MB body sent as fast as the client reads)."""

    def __init__(self, how: str, pause: float = 2.0, *, listing: bool = False) -> None:
        self.how, self.pause, self.sent, self.listing = how, pause, 0, listing
        self.stopping = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer.answer(self)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.answer(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        self.chats = getattr(self, "chats", 0) + handler.path.endswith("/chat/completions")
        try:
            if self.listing and handler.path.endswith("/models"):  # ``listing``: only the chats misbehave
                _send_json(handler, 200, b'{"object":"list","data":[{"id":"m","object":"model"}]}')
                return
            if self.how == "no_tools":  # a chat template without tools: the same prompt with or without
                _send_json(handler, 200, CHAT)
                return
            if self.how == "context500":  # llama.cpp when its slots' cache is full
                _send_json(handler, 500, b'{"error":{"code":500,"message":"Context size has been exceeded.",'
                                         b'"type":"server_error"}}')
                return
            if self.how == "slow_headers":
                handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for byte in b"Content-Type: application/json\r\n" * 100:
                    if self.stopping.wait(self.pause):
                        return
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                return
            size = 600 * 2**20 if self.how == "flood" else 10_000
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(size))
            handler.end_headers()
            chunk = b" " * (2**20 if self.how == "flood" else 1)
            while self.sent < size and not self.stopping.is_set():
                handler.wfile.write(chunk)
                handler.wfile.flush()
                self.sent += len(chunk)
                if self.how == "trickle" and self.stopping.wait(self.pause):
                    return
        except OSError:
            return  # the client hung up: what it refused was not read

    def __enter__(self) -> "Hostile":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def client(url: str, **settings: object) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, **{"model": "m", "timeout": 3, "max_retries": 0, **settings}))


@pytest.mark.parametrize("how", ["trickle", "slow_headers"])
def test_preflight_against_a_trickling_models_route_ends_within_its_budget(how):
    with Hostile(how) as server, client(server.url) as llm:
        with pytest.raises(PreflightError) as caught:
            llm.preflight(seconds=3)
    assert "within 3 s" in str(caught.value)


@pytest.mark.parametrize("how", ["trickle", "slow_headers"])
def test_the_timeout_setting_bounds_a_trickling_chat_reply(how):
    # a byte every 0.5 s never lets a read time out: only the attempt's deadline ends it
    with Hostile(how, pause=0.5, listing=True) as server, client(server.url, timeout=1, max_retries=1) as llm:
        with pytest.raises(LLMError) as caught:
            llm.chat("agent", [{"role": "user", "content": "hi"}], max_tokens=64)
    assert caught.value.timed_out and caught.value.transient
    assert "timeout setting (1 s an attempt, 2 attempt(s))" in str(caught.value)
    assert "--llm-set timeout=SECONDS" in str(caught.value)


def test_a_huge_reply_is_refused_at_the_cap_without_being_read_or_retried():
    with Hostile("flood") as server, client(server.url, timeout=60, max_retries=3) as llm:
        with pytest.raises(LLMError) as caught:
            llm.chat("agent", [{"role": "user", "content": "hi"}])
        time.sleep(0.2)
        sent = server.sent
    assert "larger than 17 MiB" in str(caught.value) and not caught.value.transient
    # one attempt, stopped at the cap: the server got rid of little more than the socket buffers hold
    assert sent < MAX_REPLY_BYTES + 32 * 2**20


def test_a_local_server_still_starting_is_waited_for():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = FakeLLMServer(default_responder(), port=port)
    later = threading.Timer(1.5, server.start)
    later.start()
    try:
        with client(f"http://127.0.0.1:{port}/v1", model="fake-model") as llm:
            llm.preflight(seconds=5, wait=20)
            assert llm.chat("agent", [{"role": "user", "content": "hi"}]).content
    finally:
        later.join()
        server.stop()
    with client(f"http://127.0.0.1:{port}/v1") as llm, pytest.raises(PreflightError) as caught:
        llm.preflight(seconds=2, wait=0.5)
    assert "cannot connect" in str(caught.value) and "after 0.5 s of retries" in str(caught.value)


def test_preflight_names_what_to_fix_for_each_route():
    with FakeLLMServer(default_responder()) as server:
        bare = server.url.removesuffix("/v1")
        with client(bare, model="fake-model") as llm, pytest.raises(PreflightError) as caught:
            llm.preflight()
        assert f"lacks /v1; try --base-url {bare}/v1" in str(caught.value)
    with FakeLLMServer(default_responder(), profile="openai-reasoning") as server:
        with client(server.url, model="my-deployment") as llm, pytest.raises(PreflightError) as caught:
            llm.preflight()
        assert "HTTP 400" in str(caught.value) and "temperature" in str(caught.value)
        assert "--llm-set temperature=null" in str(caught.value)
        with client(server.url, model="o3-mini") as llm:
            llm.preflight(routes=("chat", "tools"))  # a known reasoning model is shaped to pass
    with FakeLLMServer(default_responder(), profile="vllm") as server, client(server.url, model="fake-model") as llm:
        llm.preflight(routes=("chat", "tools"))
        with pytest.raises(PreflightError) as caught:
            llm.preflight(routes=("chat", "embeddings"), embedding_model="text-embedding-3-small")
        assert "the embeddings route refused model 'text-embedding-3-small' (HTTP 404" in str(caught.value)
        tools = [r.body for r in server.chat_requests() if r.body.get("tools")]
        assert tools and tools[0]["tool_choice"] == "auto"
    with FakeLLMServer(default_responder(), api_key="sk-right") as server:
        with client(server.url, model="fake-model", api_key="sk-wrong") as llm, pytest.raises(PreflightError) as caught:
            llm.preflight()
        assert "the key was refused (HTTP 401" in str(caught.value)


def test_huge_tool_call_arguments_and_replies_are_stored_cut_and_never_sent_back_whole(ws, registry):
    import json

    from backends.fake_llm import Reply, scripted
    from harness.agents import (
        MODEL_ARGUMENT_CHARS,
        STORED_ARGUMENT_CHARS,
        STORED_MESSAGE_CHARS,
        Episode,
        LLMAgent,
    )

    huge = json.dumps({"file_path": "data/notes.docx", "content": "a" * (2 * 2**20)})  # 33x what goes back
    with FakeLLMServer(scripted(Reply(tool_calls=[{"name": "word_write_to_file", "arguments": huge}]),
                                Reply(content="b" * 1_000_000)), ignores_max_tokens=True) as server:
        with client(server.url, timeout=60) as llm:
            episode = Episode(task_id="t", user_name="Ann", username="ann",
                              now={"date": "2024-11-11", "weekday": "Monday", "time": "09:15"}, request="Write it.",
                              context="", workspace=ws, registry=registry)
            trajectory = LLMAgent(llm).run(episode)
        second = server.chat_requests()[-1]
    step = trajectory.steps[0]
    assert step["args"]["cut"] is True and step["args"]["chars"] == len(huge)
    assert len(step["args"]["start"]) == STORED_ARGUMENT_CHARS
    assert trajectory.final_message.startswith("b" * STORED_MESSAGE_CHARS) and "cut: 980,000 more" in \
        trajectory.final_message
    assert len(json.dumps(trajectory.to_dict())) < 100_000
    sent = second.body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent.startswith(huge[:MODEL_ARGUMENT_CHARS]) and len(sent) < MODEL_ARGUMENT_CHARS + 100


def test_a_reply_cut_at_the_token_limit_is_an_error_run_not_an_answer(ws, registry):
    from backends.fake_llm import Reply, scripted
    from harness.agents import Episode, LLMAgent

    with FakeLLMServer(scripted(Reply(content="Done: I sent the email to Bob about the"),
                                Reply(tool_calls=[{"name": "system_list_files", "arguments": {"folder": "data"}}]))
                       ) as server, client(server.url, model="fake-model", max_tokens={"default": 64}) as llm:
        episode = Episode(task_id="t", user_name="Ann", username="ann",
                          now={"date": "2024-11-11", "weekday": "Monday", "time": "09:15"}, request="Send it.",
                          context="", workspace=ws, registry=registry)
        server.queue_faults("truncated")
        cut = LLMAgent(llm).run(episode)
        server.queue_faults("truncated")
        cut_call = LLMAgent(llm).run(episode)
    for trajectory in (cut, cut_call):
        assert trajectory.stop_reason == "error" and trajectory.final_message is None and not trajectory.steps
        assert trajectory.error.startswith("error: truncated: the reply stopped at the token limit (64 tokens "
                                           "for fake-model)") and "--llm-set max_tokens=N" in trajectory.error


def test_a_500_about_context_size_is_a_context_error_not_retried():
    from backends.llm import ContextLengthError

    with Hostile("context500") as server, client(server.url, max_retries=3) as llm:
        with pytest.raises(ContextLengthError) as caught:
            llm.chat("agent", [{"role": "user", "content": "hi"}])
        asked = server.chats
    assert asked == 1 and "Context size has been exceeded" in str(caught.value)
    assert caught.value.kind == "context" and not caught.value.transient


def test_an_llm_attempt_out_of_time_is_an_error_that_names_the_setting_not_a_drop():
    from backends.job_contract import JobFailure
    from backends.llm.failures import kind_of, summary_lines
    from orchestrator.build import failed_attempt

    failure = JobFailure("timeout", "ran past the 600 s task budget")
    waited = failed_attempt(3, failure, llm=True)
    assert waited["status"] == "error" and kind_of(waited["reason"]) == "timeout"
    assert "--task-timeout" in waited["reason"] and "--llm-set timeout=SECONDS" in waited["reason"]
    assert "raise --task-timeout" in "\n".join(summary_lines([waited["reason"]]))
    assert failed_attempt(3, failure)["status"] == "dropped"  # offline: the attempt's own failure


def test_a_build_stops_at_once_when_the_server_refuses_a_parameter(tmp_path):
    import json

    from backends.llm.failures import RunRefused
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"timeout": 10, "max_retries": 0}))
    with FakeLLMServer(default_responder(), profile="openai-reasoning") as server:
        config = BuildConfig(seed=4, backend="llm", model="my-deployment", base_url=server.url, days=2,
                             utterances_per_day=10, llm_config=str(settings))
        with pytest.raises(RunRefused) as caught:
            build(tmp_path / "ds", 5, config, workers=1)
        asked = server.chat_request_total
    assert "Unsupported parameter" in str(caught.value) and "--llm-set temperature=null" in str(caught.value)
    assert asked <= 4  # three attempts refused at their first request (a batch may have started one more)


def test_preflight_catches_a_server_that_drops_tools_from_the_prompt():
    with Hostile("no_tools") as server, client(server.url) as llm:
        llm.preflight(routes=("chat",))  # chat alone is fine
        with pytest.raises(PreflightError) as caught:
            llm.preflight(routes=("chat", "tools"))
    assert "left the tools out of the prompt (1 prompt tokens with a tool, 1 without)" in str(caught.value)
    assert "--jinja" in str(caught.value)


def test_preflight_waits_for_a_slow_local_server_as_long_as_the_timeout_setting():
    """A local server on a CPU may take longer than the check's own budget to start on a prompt; the
    timeout setting, when longer, is what the one-token request gets (the run's requests get as much)."""
    with FakeLLMServer(default_responder(), slow_seconds=1.5) as server:
        server.queue_faults("slow")
        with client(server.url, model="fake-model", timeout=30) as llm:
            llm.preflight(seconds=0.5, wait=0)  # answered after 1.5 s: within the timeout setting
        server.queue_faults("slow")
        with client(server.url, model="fake-model", timeout=0.6) as llm, pytest.raises(PreflightError) as caught:
            llm.preflight(seconds=0.5, wait=0)
    assert "got no answer within 0.6 s (the timeout setting; a slow local server: raise it, e.g. " \
           "--llm-set timeout=600)" in str(caught.value)


def test_preflight_refuses_a_model_name_the_server_answers_without_listing_it():
    """llama.cpp answers any model name with its one model: a typo'd --model is refused naming the
    models listed, unless allow_unlisted_model is set (then a warning says it); a listed name passes.
    A server that lists what it has served (the fake without a fixed list) passes any name."""
    with FakeLLMServer(default_responder(), profile="llama-cpp", served_models=["smollm2"]) as server:
        with client(server.url, model="nope") as llm, pytest.raises(PreflightError) as caught:
            llm.preflight(wait=0)
        with client(server.url, model="nope", allow_unlisted_model=True) as llm:
            notes = llm.preflight(wait=0)
        with client(server.url, model="smollm2") as llm:
            assert llm.preflight(wait=0) == []
    assert "model 'nope' is not among the models the server lists (smollm2); choose one of those with --model, " \
           "or --llm-set allow_unlisted_model=true" in str(caught.value)
    assert len(notes) == 1 and "model 'nope' is not among the models the server lists (smollm2) but was " \
                               "answered (allow_unlisted_model)" in notes[0]
    with FakeLLMServer(default_responder()) as server, client(server.url, model="any-name") as llm:
        assert llm.preflight(wait=0) == []


def test_a_server_that_refuses_parallel_tool_calls_is_told_apart_by_the_check():
    """A reasoning-model deployment not named as one gets ``parallel_tool_calls`` with its tools:
    the check's tool probe is refused and says which setting sends none; with it set the run's
    tool requests carry none."""
    with FakeLLMServer(default_responder(), profile="openai-reasoning") as server:
        told = {"my-deployment": {"temperature": None, "token_parameter": "max_completion_tokens"}}
        with client(server.url, model="my-deployment", models=told) as llm, pytest.raises(PreflightError) as caught:
            llm.preflight(wait=0, routes=("chat", "tools"))
        fixed = {"my-deployment": {**told["my-deployment"], "parallel_tool_calls": None}}
        with client(server.url, model="my-deployment", models=fixed) as llm:
            assert llm.preflight(wait=0, routes=("chat", "tools")) == []
            llm.chat("agent", [{"role": "user", "content": "hi"}], tools=[PING_TOOL])
        sent = server.chat_requests()[-1].body
    assert "'parallel_tool_calls' is not supported" in str(caught.value)
    assert 'models."my-deployment".parallel_tool_calls = null' in str(caught.value)
    assert sent["tools"] and "parallel_tool_calls" not in sent
