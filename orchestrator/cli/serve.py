"""``homer fake-llm``: the local OpenAI-compatible endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
import typer.core

from orchestrator.cli.common import MAX_SEED, fail, number_option


def fake_llm_command(
    port: int = number_option(8000, "--port", "-p", help="Port to listen on (0 picks a free one)", low=0,
                              high=65535),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on"),
    fault: list[str] = typer.Option([], "--fault", help="Fault for the next chat request, in order (repeatable): "
                                    "malformed, fenced, truncated, 429, 500, slow, or a broken reply shape "
                                    "(message_string, choices_empty, choices_object, content_object, "
                                    "tool_calls_object, function_missing, arguments_object, arguments_deep, "
                                    "usage_strings, body_array, body_deep, body_not_json); "
                                    "a request header X-Fake-Fault also works"),
    fail_model: Optional[str] = typer.Option(None, "--fail-model",
                                             help="Answer every request for this model with HTTP 500"),
    retry_after: float = number_option(1.0, "--retry-after", help="Seconds in the Retry-After header of a 429",
                                       low=0, high=3600, unit=" seconds", whole=False),
    profile: str = typer.Option("default", "--profile", help="Behave like a kind of server: default, openai, "
                                "openai-reasoning, vllm, llama-cpp or ollama (refused parameters, tools ignored "
                                "without tool_choice, context overflow as HTTP 400 or a silent cut, no embeddings)"),
    agent: Optional[str] = typer.Option(None, "--agent", help="Play the evaluated agent on the tasks of --dataset: "
                                        "oracle (their reference plans, through the tool-calling loop), noisy (the "
                                        "plans with typical mistakes at the --noise rate) or none (no action); the "
                                        "task is found from the request in the prompt. Default: only tasks this "
                                        "endpoint wrote, asked with their full description"),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="--agent oracle|noisy: the dataset whose "
                                           "tasks the agent is asked to do"),
    noise: float = number_option(0.3, "--noise", help="--agent noisy: the share of tasks it makes a mistake in that "
                                 "fails them (as many again get a slip it recovers from)", low=0, high=1, whole=False),
    seed: int = number_option(0, "--seed", help="--agent noisy: which tasks get which mistakes", low=0, high=MAX_SEED),
    slots: Optional[int] = number_option(None, "--slots", help="Work on at most N chat requests at once, the others "
                                         "waiting (a llama.cpp server's slots; --profile llama-cpp shows them in "
                                         "/slots, vllm in /metrics)", low=1, high=1024),
) -> None:
    """Serve a local OpenAI-compatible endpoint (chat, embeddings, models) until Ctrl-C; every role
    prompt of this project is answered the way the offline backend would, and with --agent it plays
    the evaluated agent."""
    import signal
    import threading

    from backends.fake_llm import FAULTS, FakeLLMServer
    from backends.fake_llm.profiles import PROFILES
    from backends.fake_llm.server import serve_forever

    unknown = [f for f in fault if f not in FAULTS]
    if unknown:
        fail(f"--fault {unknown[0]!r}: must be one of {', '.join(FAULTS)}")
    if profile not in PROFILES:
        fail(f"--profile {profile!r}: must be one of {', '.join(PROFILES)}")
    _check_serve_options(port, retry_after, slots)
    if agent is not None:
        _check_agent(agent, dataset, noise)
    responder = _Deferred()  # listen first; requests that come while the answers load wait for them

    stop = threading.Event()

    def _interrupt(signum: int, frame: object) -> None:
        if not stop.is_set():
            stop.set()
        else:
            raise KeyboardInterrupt  # a second signal while the answers load

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as cleanly as Ctrl-C
    try:
        server = FakeLLMServer(responder, host=host, port=port, retry_after=retry_after,
                               fail_model=fail_model, profile=profile, slots=slots).start()
        server.queue_faults(*fault)
    except (OSError, OverflowError) as exc:
        fail(f"--host {host} --port {port}: cannot listen ({getattr(exc, 'strerror', None) or exc})")
    try:
        responder.load(agent, dataset, noise, seed)
    except typer.Exit:
        server.stop()
        raise
    described = "" if profile == "default" else f" behaving like {profile}"
    if agent is not None:
        described += f", playing the {agent} agent" + (f" (noise {noise:g}, seed {seed})" if agent == "noisy" else "")
    def ready(s: Any) -> None:
        typer.echo(f"fake OpenAI-compatible endpoint at {s.url}{described} (Ctrl-C to stop)")  # echo flushes
        responder.release()

    if not stop.is_set():
        serve_forever(server, ready=ready, stop=stop)
    else:
        server.stop()


def _check_serve_options(port: int, retry_after: float, slots: Optional[int]) -> None:
    """Refuse a port, a Retry-After or a slot count the endpoint cannot serve with."""
    if not 0 <= port <= 65535:
        fail(f"--port {port}: must be from 0 to 65535 (0 picks a free port)")
    if retry_after < 0:
        fail(f"--retry-after {retry_after:g}: must be 0 or more seconds")
    if slots is not None and slots < 1:
        fail(f"--slots {slots}: must be 1 or more")


def _check_agent(agent: str, dataset: Optional[Path], noise: float) -> None:
    """The ``--agent`` options, checked before anything listens (a bad one is exit 2)."""
    from orchestrator.fake_llm.agent_answer import MODES

    if agent not in MODES:
        fail(f"--agent {agent!r}: must be one of {', '.join(MODES)}")
    if not 0.0 <= noise <= 1.0:
        fail(f"--noise {noise:g}: must be from 0 to 1")
    if agent != "none" and dataset is None:
        fail(f"--agent {agent} needs --dataset DIR: the tasks whose plans it follows")
    if dataset is not None:
        from orchestrator.cli.common import check_dataset

        check_dataset(dataset)


class _Deferred:
    """The server's responder, loaded after the socket listens (the offline answers take a second or
    more to import): a request that comes first waits for it instead of being refused."""

    def __init__(self) -> None:
        import threading

        self._loaded = threading.Event()
        self._inner: Any = None

    def load(self, agent: Optional[str], dataset: Optional[Path], noise: float, seed: int) -> None:
        from orchestrator.fake_llm.agent_answer import dataset_agent_plans
        from orchestrator.fake_llm.offline_responder import agent_responder, default_responder

        if agent is None:
            self._inner = default_responder()
        else:
            plans = dataset_agent_plans(dataset) if dataset is not None else []
            if not plans and agent != "none":
                fail(f"--dataset {dataset}: no task with a reference plan to follow")
            self._inner = agent_responder(plans, mode=agent, noise=noise, seed=seed)

    def release(self) -> None:
        """Let waiting requests through: called once the ready line is out, so no answer comes before it."""
        self._loaded.set()

    def __call__(self, body: dict) -> Any:
        self._loaded.wait()
        return self._inner(body)
