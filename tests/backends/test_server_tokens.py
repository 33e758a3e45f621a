"""Context budgeting with the server's own tokenizer (``backends.llm.server_tokens``), against the
fake endpoint's llama.cpp and vLLM profiles over real HTTP: when homer's estimate says a reply limit
must be lowered, the server's count decides; servers without the route are never asked; a route
that fails once is not asked again."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backends.fake_llm import FakeLLMServer
from backends.fake_llm.profiles import profile_named
from backends.fake_llm.wire import chat_template
from backends.llm import ContextLengthError, LLMClient, LLMSettings
from backends.llm.client import prompt_tokens
from backends.llm.window import with_margin
from backends.tokens import count_tokens
from office_env import default_registry
from orchestrator.fake_llm.offline_responder import default_responder

pytestmark = pytest.mark.slow

TOOLS = default_registry().openai_tools()
SYSTEM = {"role": "system", "content": "You are an office assistant."}
WINDOW = 8192


def long_prompt(estimate: int) -> list[dict]:
    """A request whose prompt homer estimates at about ``estimate`` tokens with the 20 tools."""
    base = prompt_tokens([SYSTEM, {"role": "user", "content": ""}], TOOLS)
    return [SYSTEM, {"role": "user", "content": "word " * (estimate - base)}]


def client(url: str, **settings) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, model="fake-model", timeout=5, max_retries=0, **settings))


def counted(server: FakeLLMServer) -> list[str]:
    return [r.path for r in server.requests if r.path in ("/tokenize", "/apply-template")]


@pytest.mark.parametrize("profile", ["llama-cpp", "vllm"])
def test_the_servers_count_sets_the_reply_limit_when_the_estimate_leaves_too_little(profile):
    messages = long_prompt(7000)
    estimate = prompt_tokens(messages, TOOLS)
    assert WINDOW - with_margin(estimate) < 512  # by the estimate, no room for the least reply
    with FakeLLMServer(default_responder(), profile=profile, context_window=WINDOW) as server, \
            client(server.url) as llm:
        exact = llm.server_count("fake-model", messages, TOOLS)
        result = llm.chat("agent", messages, tools=TOOLS)
        sent = server.chat_requests()[-1]
        routes = counted(server)
    # the count is the prompt the server reads, template and tools included
    assert exact == result.prompt_tokens == count_tokens(chat_template(messages, TOOLS))
    # the limit is what that count leaves of the window, and the server took the request
    assert result.reply_limit == sent.body["max_tokens"] == WINDOW - exact and sent.status == 200
    assert routes == (["/apply-template", "/tokenize"] * 2 if profile == "llama-cpp" else ["/tokenize"] * 2)


@pytest.mark.parametrize("profile", ["llama-cpp", "vllm"])
def test_a_limit_that_fits_by_the_estimate_asks_no_count(profile):
    with FakeLLMServer(default_responder(), profile=profile, context_window=WINDOW) as server, \
            client(server.url) as llm:
        result = llm.chat("agent", long_prompt(2000), tools=TOOLS, max_tokens=1000)
        assert result.reply_limit == 1000 and not counted(server)


def test_a_prompt_over_the_window_by_the_servers_count_is_refused_naming_it():
    with FakeLLMServer(default_responder(), profile="llama-cpp", context_window=WINDOW) as server, \
            client(server.url) as llm, pytest.raises(ContextLengthError) as caught:
        llm.chat("agent", long_prompt(7750), tools=TOOLS)
    assert "by the server's count" in str(caught.value) and not server.chat_requests()


def test_fits_asks_the_server_only_when_the_estimate_says_no():
    with FakeLLMServer(default_responder(), profile="vllm", context_window=WINDOW) as server, \
            client(server.url) as llm:
        assert llm.fits("surfer", long_prompt(2000), TOOLS, reply=2048) and not counted(server)
        # over by the estimate's margin, within by the server's count
        assert llm.fits("surfer", long_prompt(7000), TOOLS, reply=1000) and counted(server) == ["/tokenize"]
        assert not llm.fits("surfer", long_prompt(7000), TOOLS, reply=2000)


def test_servers_without_a_tokenizer_route_are_never_asked():
    with FakeLLMServer(default_responder(), profile="openai") as server, \
            client(server.url, context_window=WINDOW) as llm, pytest.raises(ContextLengthError) as caught:
        llm.chat("agent", long_prompt(7000), tools=TOOLS)
    assert "about" in str(caught.value) and not counted(server)


def test_a_failing_tokenizer_route_is_asked_once_then_the_estimate_serves():
    no_route = replace(profile_named("llama-cpp"), tokenizer=None)  # llama.cpp's rows, an old build's routes
    with FakeLLMServer(default_responder(), profile=no_route, context_window=WINDOW) as server, \
            client(server.url) as llm:
        for _ in range(2):
            with pytest.raises(ContextLengthError, match="about"):
                llm.chat("agent", long_prompt(7000), tools=TOOLS)
        assert [r.status for r in server.requests if r.path == "/apply-template"] == [404]
        assert llm._server_tokens.failed


def test_the_routes_answer_in_the_servers_shapes():
    import json
    import urllib.request

    def post(url: str, body: dict) -> dict:
        request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as reply:
            return json.loads(reply.read())

    messages = long_prompt(1600)
    with FakeLLMServer(default_responder(), profile="llama-cpp") as server:
        root = server.url.removesuffix("/v1")
        prompt = post(f"{root}/apply-template", {"messages": messages})["prompt"]
        tokens = post(f"{root}/tokenize", {"content": prompt})["tokens"]
    assert prompt.endswith("<|im_start|>assistant\n") and all(isinstance(t, int) for t in tokens)
    with FakeLLMServer(default_responder(), profile="vllm") as server:
        root = server.url.removesuffix("/v1")
        chat = post(f"{root}/tokenize", {"model": "fake-model", "messages": messages})
        plain = post(f"{root}/tokenize", {"model": "fake-model", "prompt": prompt})
    assert chat["count"] == len(chat["tokens"]) == len(tokens) and chat["max_model_len"] == 32768
    assert plain["count"] == len(tokens) and set(chat) == {"count", "max_model_len", "tokens", "token_strs"}
