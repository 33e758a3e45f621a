"""The llm backend against the fake endpoint behaving like each kind of server users run
(``backends.fake_llm.profiles``): a build and an evaluation per profile, over real HTTP."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks
from backends.fake_llm import FakeLLMServer
from backends.llm.client import prompt_tokens
from harness.context import ContextConfig
from harness.runner import EvalConfig, evaluate
from orchestrator.build import build
from orchestrator.fake_llm.agent_answer import dataset_agent_plans
from orchestrator.fake_llm.offline_responder import agent_responder, default_responder
from orchestrator.fake_llm.prompt_roles import role_of
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import ForkedHomer, homer_forked, homer_here

pytestmark = pytest.mark.slow

LONG = ContextConfig(mode="long-context")


@pytest.fixture(scope="module")
def short(tmp_path_factory) -> Path:
    """Two tasks whose histories fit an 8K context."""
    out = tmp_path_factory.mktemp("profiles") / "short"
    assert build(out, 2, BuildConfig(seed=21, days=2, utterances_per_day=12), workers=1).accepted == 2
    return out


@pytest.fixture(scope="module")
def long(tmp_path_factory) -> Path:
    """One task of 12 days: its history alone is longer than an 8K context (the default 5 days,
    about 4,500 cl100k tokens, would fit)."""
    out = tmp_path_factory.mktemp("profiles") / "long"
    assert build(out, 1, BuildConfig(seed=21, days=12), workers=1).accepted == 1
    return out


@pytest.fixture(scope="module")
def standard(tmp_path_factory) -> Path:
    """Two tasks of the standard preset (5 days of history)."""
    out = tmp_path_factory.mktemp("profiles") / "standard"
    assert build(out, 2, BuildConfig(seed=11), workers=1).accepted == 2
    return out


def settings(tmp_path: Path, **extra) -> str:
    path = tmp_path / f"llm-{len(list(tmp_path.glob('llm-*')))}.json"
    path.write_text(json.dumps({"timeout": 10, "max_retries": 1, **extra}))
    return str(path)


def small_build(server: FakeLLMServer, tmp_path: Path, model: str = "fake-model", **extra) -> int:
    config = BuildConfig(seed=4, backend="llm", model=model, base_url=server.url, days=2, utterances_per_day=10,
                         llm_config=settings(tmp_path, **extra))
    return build(tmp_path / f"build-{model}", 1, config, workers=1).accepted


def agent_eval(server: FakeLLMServer, dataset: Path, out: Path, tmp_path: Path, model: str = "fake-model", **extra):
    return evaluate(dataset, out, EvalConfig(agent="llm", context=LONG, model=model, base_url=server.url,
                                             llm_config=settings(tmp_path, **extra)))


def agent_requests(server: FakeLLMServer) -> list[dict]:
    return [r.body for r in server.chat_requests()  # not the endpoint check's one-token requests
            if r.body and r.body["messages"][0].get("role") == "system" and role_of(r.body["messages"]) == "agent"]


def test_openai_build_and_eval_pass(short, tmp_path):
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="openai") as server:
        assert small_build(server, tmp_path) == 1
        run = agent_eval(server, short, tmp_path / "run", tmp_path)
    assert run.pass_rate == 1.0 and not run.errors


def test_reasoning_models_get_no_temperature_and_a_completion_limit(short, tmp_path):
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="openai-reasoning") as server:
        assert small_build(server, tmp_path, model="o3-mini") == 1
        run = agent_eval(server, short, tmp_path / "run", tmp_path, model="o3-mini")
        bodies = [r.body for r in server.chat_requests()]
    assert run.pass_rate == 1.0 and not run.errors
    assert bodies and all("temperature" not in b and "max_tokens" not in b and b["max_completion_tokens"] > 0
                          and "parallel_tool_calls" not in b for b in bodies)
    # a model not known as a reasoning one still gets temperature: the server refuses it, and the
    # run says so instead of scoring a fail
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="openai-reasoning") as server:
        refused = agent_eval(server, short, tmp_path / "refused", tmp_path, model="my-deployment")
        told = agent_eval(server, short, tmp_path / "told", tmp_path, model="my-deployment",
                          models={"my-deployment": {"reasoning": True}})
    assert refused.pass_rate is None and len(refused.errors) == 2
    assert all("temperature" in e["error"] and e["error"].startswith("error: refused:") for e in refused.errors)
    assert all("--llm-set temperature=null" in e["error"] for e in refused.errors)  # with the setting that fixes it
    assert told.pass_rate == 1.0


def test_vllm_states_its_window_and_takes_the_schema(short, long, tmp_path):
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="vllm") as server:
        assert small_build(server, tmp_path, structured_output="json_schema") == 1
        structured = [r.body for r in server.chat_requests() if "response_format" in r.body]
        passed = agent_eval(server, short, tmp_path / "short", tmp_path)
    with FakeLLMServer(agent_responder(dataset_agent_plans(long)), profile="vllm", context_window=8192) as server:
        overflow = agent_eval(server, long, tmp_path / "long", tmp_path)
        sent = agent_requests(server)
    assert structured and all(b["response_format"]["type"] == "json_schema"
                              and b["response_format"]["json_schema"]["schema"]["type"] == "object" for b in structured)
    assert passed.pass_rate == 1.0
    # the window came from /v1/models: the too-long history is refused before any agent request
    assert overflow.pass_rate is None and len(overflow.errors) == 1 and not sent
    assert overflow.errors[0]["error"].startswith("error: context: ") and "8,192-token context window" in overflow.errors[0]["error"]


def test_llama_cpp_sees_its_tools_and_refuses_an_overflow(short, long, tmp_path):
    plans = dataset_agent_plans(short)
    records = {t.id: t.record for t in iter_tasks(short)}
    with FakeLLMServer(agent_responder(plans), profile="llama-cpp") as server:
        assert small_build(server, tmp_path) == 1
        run = agent_eval(server, short, tmp_path / "short", tmp_path)
        tool_requests = [b for b in agent_requests(server) if b.get("tools")]
    with FakeLLMServer(agent_responder(dataset_agent_plans(long)), profile="llama-cpp", context_window=8192) as server:
        overflow = agent_eval(server, long, tmp_path / "long", tmp_path)
        sent = agent_requests(server)
        # told a window larger than the server's, the client sends; the server's 400 is a context error
        told = agent_eval(server, long, tmp_path / "told", tmp_path, context_window=32768)
    # tools go with tool_choice, so the server puts them in the prompt and the agent acts
    assert tool_requests and all(b["tool_choice"] == "auto" and b["parallel_tool_calls"] is True for b in tool_requests)
    assert run.pass_rate == 1.0 and all(r["steps"] == len(records[r["id"]]["oracle"]) for r in run.rows)
    # the window came from /props: the too-long history is refused before any agent request
    assert len(overflow.errors) == 1 and overflow.errors[0]["error"].startswith("error: context: ") and not sent
    assert "does not fit the 8,192-token context window" in overflow.errors[0]["error"]
    assert "the window is the server's: give it a larger context (llama.cpp: -c)" in overflow.errors[0]["error"]
    assert len(told.errors) == 1 and told.errors[0]["error"].startswith("error: context: ")
    assert "exceed context window" in told.errors[0]["error"]


def test_an_8k_llama_cpp_model_runs_a_standard_rag_task(standard, tmp_path):
    from backends.fake_llm.wire import chat_template
    from backends.llm.window import with_margin
    from backends.tokens import count_tokens
    from harness.context import rag_defaults

    granularity, top_k = rag_defaults("raw", None, None)  # what --mode rag retrieves by default: 20 utterances
    rag = ContextConfig(mode="rag", storage="raw", granularity=granularity, top_k=top_k)
    with FakeLLMServer(agent_responder(dataset_agent_plans(standard)), profile="llama-cpp",
                       context_window=8192) as server:
        run = evaluate(standard, tmp_path / "run", EvalConfig(agent="llm", context=rag, model="fake-model",
                                                              base_url=server.url, llm_config=settings(tmp_path)))
        sent = agent_requests(server)
        props = [r for r in server.requests if r.path == "/props"]
    assert granularity == "utterance" and top_k == 20
    # the window came from /props (the rows of /v1/models give only the training size)
    assert props
    # every reply limit was chosen to fit beside its prompt and the 20 tools: no request overflowed
    assert run.pass_rate == 1.0 and not run.errors
    assert all(r["trajectory"]["stop_reason"] == "final" for r in run.rows)
    assert sent and all(len(b["tools"]) == 20 for b in sent)
    assert any(b["max_tokens"] < 4096 for b in sent)  # lowered from the default as the conversation grew
    # by the server's own count (its /tokenize): every limit fits beside the prompt it reads, and
    # some are larger than homer's estimate with its margin would have left
    read = [count_tokens(chat_template(b["messages"], b["tools"])) for b in sent]
    assert all(n + b["max_tokens"] <= 8192 for n, b in zip(read, sent))
    assert any(with_margin(prompt_tokens(b["messages"], b["tools"])) + b["max_tokens"] > 8192 for b in sent)


def test_ollama_silent_cut_is_caught(short, long, tmp_path):
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="ollama") as server:
        # Ollama states no window: told it, the build's surfers stop reading before they overflow
        assert small_build(server, tmp_path, context_window=8192) == 1
        surfers = [r.body for r in server.chat_requests() if role_of(r.body["messages"]) == "surfer"]
        cut = agent_eval(server, long, tmp_path / "long", tmp_path)
        configured = agent_eval(server, long, tmp_path / "configured", tmp_path, context_window=8192)
    # an office task's listings and sheets need more than 8K: users raise Ollama's window for it
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="ollama", context_window=16384) as server:
        passed = agent_eval(server, short, tmp_path / "short", tmp_path, context_window=16384)
    # told the window, the client lowers the reply limit to what is left of it; a run whose own tool
    # results then outgrow the window is the agent's run, scored as it stands (a fail, not an error)
    assert not passed.errors and passed.pass_rate >= 0.5
    assert all(r["passed"] or r["trajectory"]["stop_reason"] == "context" for r in passed.rows)
    assert any("filled your context window" in (b["messages"][-1].get("content") or "") for b in surfers)
    # the server read far fewer prompt tokens than were sent: a cut history, not a fail
    assert cut.pass_rate is None and cut.errors[0]["error"].startswith("error: context: ")
    assert "the server cut the prompt" in cut.errors[0]["error"]
    # with the window configured, the check happens before sending
    assert "8,192-token context window" in configured.errors[0]["error"]


def test_no_embeddings_is_one_clear_skip(short, tmp_path):
    rag = ContextConfig(mode="rag", storage="raw", granularity="session", top_k=2, embeddings="text-embedding-3-small")
    with FakeLLMServer(agent_responder(dataset_agent_plans(short)), profile="vllm") as server:
        run = evaluate(short, tmp_path / "run", EvalConfig(agent="llm", context=rag, model="fake-model",
                                                           base_url=server.url, llm_config=settings(tmp_path)))
    assert len(run.skipped) == 2 and all("Embeddings API" in s["error"] for s in run.skipped)


def test_default_profile_accepts_what_the_others_refuse():
    with FakeLLMServer(default_responder()) as server:
        assert server.profile.name == "default" and server.profile.context_window is None


# -- preflight: a run that cannot work fails in seconds, with one line ------------------------------

def homer_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return homer_here(*args, env={"OPENAI_API_KEY": "sk-wrong"})


def homer_child(*args: object) -> ForkedHomer:
    """The command in a child process forked from this one (two can wait on a dead endpoint side by side)."""
    return homer_forked(*args, env={"OPENAI_API_KEY": "sk-wrong"})


def ended(proc: ForkedHomer) -> subprocess.CompletedProcess[str]:
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_preflight_refuses_a_dead_endpoint_a_wrong_key_and_an_unknown_model(short, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    wait = ("--llm-set", "start_wait=1.5")  # a local server may still be starting: asked again (10 s by default)
    started = [homer_child("build", "--backend", "llm", "--base-url", dead, "--out", tmp_path / "b", "--n", 1, *wait),
               homer_child("eval", short, "--agent", "llm", "--mode", "long-context", "--base-url", dead, "--out",
                           tmp_path / "e", *wait)]  # side by side
    build_dead, eval_dead = map(ended, started)
    for proc in (build_dead, eval_dead):
        assert proc.returncode == 2 and "cannot connect" in proc.stderr and "Traceback" not in proc.stderr
        assert "after 1.5 s of retries" in proc.stderr
    assert not (tmp_path / "b").exists() and not (tmp_path / "e").exists()
    with FakeLLMServer(default_responder(), api_key="sk-right", served_models=["served-model"]) as server:
        wrong_key = homer_cli("build", "--backend", "llm", "--base-url", server.url, "--model", "served-model",
                              "--out", tmp_path / "k", "--n", 1)
        unknown = homer_cli("eval", short, "--agent", "llm", "--mode", "long-context", "--base-url", server.url,
                            "--model", "nope", "--out", tmp_path / "m")
        chats = server.chat_request_total
    assert wrong_key.returncode == 2 and "key was refused (HTTP 401" in wrong_key.stderr
    assert unknown.returncode == 2  # the wrong key is refused first
    with FakeLLMServer(default_responder(), served_models=["served-model"]) as server:
        unknown = homer_cli("eval", short, "--agent", "llm", "--mode", "long-context", "--base-url", server.url,
                            "--model", "nope", "--out", tmp_path / "m2")
    assert unknown.returncode == 2 and "model 'nope' is not served" in unknown.stderr
    assert "the server lists: served-model" in unknown.stderr and chats <= 2


def test_llm_set_shapes_requests_from_the_command_line(short, tmp_path):
    with FakeLLMServer(agent_responder(dataset_agent_plans(short))) as server:
        proc = homer_cli("eval", short, "--agent", "llm", "--mode", "long-context", "--base-url", server.url,
                         "--model", "fake-model", "--out", tmp_path / "run", "--llm-set", "max_tokens=123",
                         "--llm-set", "temperature=null", "--llm-set", "structured_output=json_schema")
        bodies = agent_requests(server)
    assert proc.returncode == 0, proc.stderr
    assert bodies and all(b["max_tokens"] == 123 and "temperature" not in b for b in bodies)
    bad = homer_cli("eval", short, "--agent", "llm", "--mode", "long-context", "--base-url", server.url,
                    "--out", tmp_path / "bad", "--llm-set", "no-equals-sign")
    unknown = homer_cli("build", "--backend", "llm", "--base-url", server.url, "--out", tmp_path / "b",
                        "--llm-set", "max_tokenz=5")
    offline = homer_cli("build", "--out", tmp_path / "o", "--llm-set", "max_tokens=5")
    assert bad.returncode == 2 and "expected KEY=VALUE" in bad.stderr
    assert unknown.returncode == 2 and "unknown setting(s) max_tokenz" in unknown.stderr
    assert offline.returncode == 2 and "--llm-set needs --backend llm" in offline.stderr


def test_llm_set_refuses_the_key_and_context_errors_of_real_servers_are_recognised(tmp_path):
    from backends.llm.client import _CONTEXT_WORDS
    from backends.llm.window import served_windows

    proc = homer_cli("build", "--backend", "llm", "--base-url", "http://127.0.0.1:9/v1", "--out", tmp_path / "k",
                     "--llm-set", "api_key=sk-secret")
    assert proc.returncode == 2 and "never on the command line" in proc.stderr and "sk-secret" not in proc.stderr
    for message in ("request (4476 tokens) exceeds the available context size (4096 tokens)", "prompt is too long",
                    "This model's maximum context length is 8192 tokens", "Requested tokens (9000) exceed context window"):
        assert _CONTEXT_WORDS.search(message), message
    assert not _CONTEXT_WORDS.search("Unsupported parameter: 'temperature'")
    # llama.cpp's training size is not the size it runs with
    assert served_windows({"data": [{"id": "m", "meta": {"n_ctx_train": 131072}}]}) == {}
    assert served_windows({"data": [{"id": "m", "meta": {"n_ctx": 4096, "n_ctx_train": 131072}}]}) == {"m": 4096}


def test_a_reply_cut_at_a_lowered_limit_asks_for_a_larger_window_not_max_tokens(tmp_path):
    from datetime import datetime

    from backends.fake_llm import scripted
    from backends.llm import LLMClient
    from backends.llm.settings import LLMSettings
    from harness.agents import Episode, LLMAgent
    from office_env import Workspace, default_registry

    (tmp_path / "office").mkdir()
    episode = Episode(task_id="t", user_name="Ann Lee", username="ann", request="Say done.",
                      now={"date": "2024-05-06", "weekday": "Monday", "time": "09:00"}, context="word " * 500,
                      workspace=Workspace(tmp_path / "office", now=datetime(2024, 5, 6, 9)), registry=default_registry())
    with FakeLLMServer(scripted("done"), profile="llama-cpp", context_window=4096) as server:
        server.queue_faults("truncated")
        with LLMClient(LLMSettings(base_url=server.url, model="fake-model", max_retries=0, timeout=10)) as client:
            trajectory = LLMAgent(client).run(episode)
        sent = server.chat_requests()[-1].body["max_tokens"]
    assert 512 <= sent < 4096  # the 4,096 configured by default, lowered to fit the 4K window
    assert trajectory.error.startswith("error: truncated:") and f"({sent:,} tokens for fake-model" in trajectory.error
    assert "give the model a larger context window" in trajectory.error and "max_tokens=N" not in trajectory.error
