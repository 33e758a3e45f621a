"""Agents that act in one task's office, and what they did.

An :class:`Agent` turns an :class:`Episode` (what the evaluated agent may know: who the user is,
"now", the request, the history context, a fresh workspace, the tools, a step cap) into a
:class:`Trajectory` (the tool calls it made, its final message, any error). The runner scores the
workspace afterwards; agents never see the criteria, the memory, the evidence marks or the oracle
plan, and the full description only when the episode's request *is* the description (the
solvability gate).

- :class:`OracleAgent` replays a reference plan given to it by the runner (not through the episode);
- :class:`NoneAgent` does nothing;
- :class:`LLMAgent` runs a function-calling loop over every office tool through an
  OpenAI-compatible endpoint (``backends.llm.LLMClient``), prompted by ``templates/prompts/agent.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from backends.prompts import render

if TYPE_CHECKING:  # the episode holds them; the tools load with the run's first workspace, not here
    from office_env import Workspace
    from office_env.tools import ToolRegistry

DEFAULT_STEP_CAP = 30
OBSERVATION_CHARS = 500        # kept per step in a trajectory
MODEL_OBSERVATION_CHARS = 12_000  # shown to the model per tool result
STORED_ARGUMENT_CHARS = 16_000  # of one tool call's arguments, kept in a trajectory (as JSON text)
STORED_MESSAGE_CHARS = 20_000   # of the final message, kept in a trajectory
MODEL_ARGUMENT_CHARS = 64_000   # of one tool call's arguments, sent back to the model in the conversation
REQUEST_MARKER = "The request:"  # the line before the request in the agent prompt (read by the fake endpoint)

STOP_FINAL = "final"        # the agent answered without tool calls (or, for scripted agents, finished)
STOP_STEP_CAP = "step_cap"  # the step cap was reached
STOP_ERROR = "error"        # the agent could not go on (e.g. the endpoint failed for good)
STOP_CONTEXT = "context"    # the conversation outgrew the model's context after the agent's own steps


@dataclass
class Episode:
    """One attempt at one task, as the agent sees it."""

    task_id: str
    user_name: str
    username: str
    now: dict[str, str]  # {"date": "YYYY-MM-DD", "weekday": ..., "time": "HH:MM"}
    request: str
    context: str
    workspace: Workspace
    registry: ToolRegistry
    step_cap: int = DEFAULT_STEP_CAP

    @property
    def now_text(self) -> str:
        """``2024-11-11 (Monday) 09:15``."""
        return f"{self.now['date']} ({self.now['weekday']}) {self.now['time']}"


@dataclass
class Trajectory:
    steps: list[dict[str, Any]] = field(default_factory=list)  # {tool, args, ok, observation}
    final_message: str | None = None
    error: str | None = None
    stop_reason: str = STOP_FINAL
    usage: dict[str, int] | None = None  # model calls and tokens (LLM agents only)

    @property
    def step_count(self) -> int:
        return len(self.steps)

    def add_step(self, tool: str, args: Any, ok: bool, observation: str) -> None:
        text = observation if len(observation) <= OBSERVATION_CHARS else observation[:OBSERVATION_CHARS] + " [...]"
        self.steps.append({"tool": tool, "args": stored_arguments(args), "ok": ok, "observation": text})

    def finish(self, message: str) -> None:
        """The final message, capped (a reply of megabytes is kept as its start, marked as cut)."""
        self.final_message = cut(message, STORED_MESSAGE_CHARS)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"steps": self.steps, "step_count": self.step_count,
                                "final_message": self.final_message, "stop_reason": self.stop_reason,
                                "error": self.error}
        if self.usage is not None:
            data["usage"] = self.usage
        return data


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, marked when cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... cut: {len(text) - limit:,} more characters not kept]"


def stored_arguments(args: Any) -> Any:
    """A tool call's arguments as a trajectory keeps them: whole when small, else
    ``{"cut": true, "chars": N, "start": "<the first characters of their JSON>"}``."""
    import json

    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    if len(text) <= STORED_ARGUMENT_CHARS:
        return args
    return {"cut": True, "chars": len(text), "start": text[:STORED_ARGUMENT_CHARS]}


class Agent(Protocol):
    name: str

    def run(self, episode: Episode) -> Trajectory: ...


class NoneAgent:
    """Does nothing: a floor that must pass no task."""

    name = "none"

    def run(self, episode: Episode) -> Trajectory:
        return Trajectory(final_message="(no action taken)")


class OracleAgent:
    """Replays a reference plan (``[{tool, args}]``), given by the runner from the task record; stops
    at the episode's step cap like any agent."""

    name = "oracle"

    def __init__(self, plan: Sequence[dict[str, Any]]) -> None:
        self.plan = list(plan)

    def run(self, episode: Episode) -> Trajectory:
        trajectory = Trajectory()
        for call in self.plan:
            if trajectory.step_count >= episode.step_cap:
                trajectory.stop_reason = STOP_STEP_CAP
                return trajectory
            result = episode.registry.call(episode.workspace, call["tool"], call["args"])
            trajectory.add_step(call["tool"], call["args"], result.ok, result.observation)
        trajectory.final_message = "done"
        return trajectory


def agent_messages(episode: Episode) -> list[dict[str, str]]:
    """The opening system and user messages of the LLM agent's conversation."""
    return render("agent", user_name=episode.user_name, username=episode.username, now=episode.now_text,
                  context=episode.context, request=episode.request, request_marker=REQUEST_MARKER)


def llm_error_text(exc: Exception) -> str:
    """How a run that the endpoint ended is recorded: ``error: context: ...`` when the history does
    not fit the model, ``error: endpoint: ...`` when the endpoint failed, ``error: refused: ...``
    when it refused the request with a 4xx no retry changes, ``error: request: ...`` when it
    answered in a broken shape; ``--resume`` runs them again (after the settings or the endpoint
    were fixed). See ``backends.llm.failures``."""
    first = str(exc).splitlines()[0][:480] if str(exc) else exc.__class__.__name__
    kind = "context" if getattr(exc, "kind", None) == "context" else (
        "endpoint" if getattr(exc, "transient", False) else "refused" if getattr(exc, "refused", False)
        else "request")
    return f"error: {kind}: {first}"


class LLMAgent:
    """A function-calling loop over every tool of the episode's registry.

    Each reply's tool calls are run in order with ``registry.call`` (which never raises) and their
    observations sent back; the loop ends at a reply without tool calls (its text is the final
    message), at the step cap (one step per tool call), or when the endpoint fails for good
    (``LLMError``: the trajectory records the error; the workspace is scored as it is).
    """

    name = "llm"

    def __init__(self, client: Any, *, role: str = "agent", temperature: Any = None,
                 max_tokens: int | None = None) -> None:
        self.client, self.role, self.temperature, self.max_tokens = client, role, temperature, max_tokens

    def run(self, episode: Episode) -> Trajectory:
        from backends.llm import LLMError, without_reasoning

        trajectory = Trajectory(usage={"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        assert trajectory.usage is not None  # just given
        messages: list[dict[str, Any]] = list(agent_messages(episode))
        tools = episode.registry.openai_tools()
        while True:
            try:
                shaping = {} if self.temperature is None else {"temperature": self.temperature}
                result = self.client.chat(self.role, messages, tools=tools, max_tokens=self.max_tokens, **shaping)
            except LLMError as exc:
                if getattr(exc, "kind", None) == "context" and trajectory.usage["calls"]:
                    # the agent filled its own context (large tool results): its run, scored as it is
                    trajectory.stop_reason = STOP_CONTEXT
                    return trajectory
                trajectory.error, trajectory.stop_reason = llm_error_text(exc), STOP_ERROR
                return trajectory
            trajectory.usage["calls"] += 1
            trajectory.usage["prompt_tokens"] += result.prompt_tokens
            trajectory.usage["completion_tokens"] += result.completion_tokens
            if result.finish_reason == "length":  # cut at the token limit: neither an answer nor whole calls
                trajectory.error = truncated_text(self.client, self.role, getattr(result, "reply_limit", None))
                trajectory.stop_reason = STOP_ERROR
                return trajectory
            if not result.tool_calls:  # the answer, not the reasoning a model may write before it
                trajectory.finish(without_reasoning(result.content or ""))
                return trajectory
            messages.append(_bounded(result.message()))
            for request in result.tool_calls:
                if trajectory.step_count >= episode.step_cap:
                    trajectory.stop_reason = STOP_STEP_CAP
                    return trajectory
                if request.arguments is None:
                    ok, observation = False, (f"Error: the arguments of {request.name} are not a JSON object: "
                                              f"{request.raw_arguments[:200]}")
                    args: Any = request.raw_arguments
                else:
                    outcome = episode.registry.call(episode.workspace, request.name, request.arguments)
                    ok, observation, args = outcome.ok, outcome.observation, request.arguments
                trajectory.add_step(request.name, args, ok, observation)
                shown = observation if len(observation) <= MODEL_OBSERVATION_CHARS else (
                    observation[:MODEL_OBSERVATION_CHARS] + "\n[... cut: the rest of this result is not shown]")
                messages.append({"role": "tool", "tool_call_id": request.id, "content": shown})
            if trajectory.step_count >= episode.step_cap:
                trajectory.stop_reason = STOP_STEP_CAP
                return trajectory


def truncated_text(client: Any, role: str, sent: int | None = None) -> str:
    """How a run whose reply stopped at the token limit is recorded (``error: truncated: ...``);
    ``sent`` is the limit the request asked, under the configured one when the client lowered it to
    what the prompt left of the context window (then a larger window is the fix, not max_tokens)."""
    settings = getattr(client, "settings", None)
    limit = ""
    if settings is not None:
        model = settings.model_for(role)
        configured = settings.max_tokens_for(role, model)
        if sent is not None and sent < configured:
            return (f"error: truncated: the reply stopped at the token limit ({sent:,} tokens for {model}: the "
                    f"{configured:,} configured, lowered to what the prompt left of the context window) before "
                    f"it ended; give the model a larger context window")
        limit = f" ({configured:,} tokens for {model})"
    return (f"error: truncated: the reply stopped at the token limit{limit} before it ended; raise it with "
            f"--llm-set max_tokens=N")


def _bounded(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message as sent back to the model: huge tool-call arguments cut (every later
    request would carry them again)."""
    for call in message.get("tool_calls") or []:
        function = call["function"]
        if len(function["arguments"]) > MODEL_ARGUMENT_CHARS:
            function["arguments"] = cut(function["arguments"], MODEL_ARGUMENT_CHARS)
    return message


__all__ = ["Agent", "Episode", "Trajectory", "OracleAgent", "NoneAgent", "LLMAgent", "agent_messages",
           "DEFAULT_STEP_CAP", "REQUEST_MARKER"]
