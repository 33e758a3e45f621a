"""The fake endpoint's answers to the evaluated agent's prompt (``templates/prompts/agent.j2``).

Three modes, so the harness's LLM agent can be tested end to end over real HTTP:

- ``"oracle"``: the agent is given the task's oracle plan, one tool call per reply, then a final
  message without tool calls;
- ``"none"``: a final message straight away, no tool calls;
- ``"noisy"``: the oracle plan with typical mistakes at a set rate, seeded
  (:mod:`orchestrator.fake_llm.noisy_agent`).

The plans reach the server through a responder factory rather than a module-level registry (no
global state, one server per set of plans, safe with several servers in one process)::

    plans = dataset_agent_plans(dataset_dir)             # [(request text, plan), ...]
    server = FakeLLMServer(agent_responder(plans, mode="oracle"))

``offline_responder.agent_responder`` answers agent prompts with these and hands every other
request to the offline responder (or the ``fallback`` given). The default responder (``homer fake-llm``) knows no plans
and answers agent prompts in ``"none"`` mode.

The task is identified by the request text, read from the prompt after the line
``harness.agents.REQUEST_MARKER``. Several tasks may share a request (an intent is written per task
family); the candidate plan whose specifics -- the string arguments of its calls, file names
without their folder -- occur most often in the prompt (the history context carries them) is
chosen, the first one on a tie.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, cast

from backends.fake_llm.server import Reply
from backends.fake_llm.wire import message_text
from backends.task_record import plan_calls

MODES = ("oracle", "none", "noisy")
FINAL_MESSAGE = "Done: I handled your request."
NOTHING_MESSAGE = "I will not take any action."

Plan = list[dict[str, Any]]
PlanSource = Mapping[str, Plan] | Iterable[tuple[str, Plan]]


def request_of(messages: list[dict[str, Any]]) -> str:
    """The request text of an agent prompt (after the marker line of its first user message)."""
    from harness.agents import REQUEST_MARKER

    user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    head, marker, tail = user.rpartition(f"\n{REQUEST_MARKER}\n")
    return tail.strip() if marker else ""


def _specifics(plan: Plan) -> set[str]:
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            text = value.strip().rsplit("/", 1)[-1].lower()
            if len(text) >= 4:
                found.add(text)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for call in plan:
        walk(call.get("args"))
    return found


def choose_plan(candidates: list[Plan], prompt: str) -> Plan:
    """The candidate whose specifics occur most in ``prompt`` (the first on a tie)."""
    if len(candidates) == 1:
        return candidates[0]
    text = prompt.lower()
    scores = [sum(s in text for s in _specifics(plan)) for plan in candidates]
    return candidates[scores.index(max(scores))]


def answer_agent(messages: list[dict[str, Any]], plans: Mapping[str, list[Plan]], mode: str,
                 noise: float = 0.0, seed: int = 0) -> Reply:
    """One reply to an agent conversation: the next call of the chosen plan, or the final message."""
    if mode == "none":
        return Reply(content=NOTHING_MESSAGE)
    candidates = plans.get(request_of(messages))
    if not candidates:
        return Reply(content="I do not know this request; I will not take any action.")
    opening = "\n".join(cast(str, m.get("content")) if isinstance(m.get("content"), str) else "" for m in messages[:2])
    plan = choose_plan(candidates, opening)
    calls = [call for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []]
    done = sum(_ran(call) for call in calls)
    if mode == "noisy":
        from orchestrator.fake_llm.noisy_agent import call_of, next_step, script

        step = next_step(script(plan, seed, noise, opening), done, len(calls) - done)
        if step is None:
            return Reply(content=FINAL_MESSAGE)
        return Reply(tool_calls=[call_of(step)], finish_reason="tool_calls")
    if done < len(plan):
        call = plan[done]
        return Reply(tool_calls=[{"name": call["tool"], "arguments": call["args"]}], finish_reason="tool_calls")
    return Reply(content=FINAL_MESSAGE)


def _ran(call: Any) -> bool:
    """Whether the agent could run this call of its history: one whose arguments are not a JSON
    object (a reply broken by a fault) ran nothing, so that step of the plan is sent again."""
    from backends.llm.strict_json import JSONLimitError, loads_limited

    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
        return False
    try:
        return isinstance(loads_limited(function["arguments"] or "{}"), dict)
    except JSONLimitError:
        return False


def grouped_plans(plans: PlanSource) -> dict[str, list[Plan]]:
    pairs = plans.items() if isinstance(plans, Mapping) else plans
    grouped: dict[str, list[Plan]] = {}
    for request, plan in pairs:
        grouped.setdefault(str(request).strip(), []).append(list(plan))
    return grouped


def dataset_agent_plans(dataset_dir: Path | str, request: str = "intent") -> list[tuple[str, Plan]]:
    """``(request text, oracle plan)`` for every readable task of a dataset with a plan; ``request`` is
    the record field the harness shows the agent (``intent`` or ``description``)."""
    from backends.dataset_reader import iter_tasks

    pairs = []
    for task in iter_tasks(Path(dataset_dir)):
        record = task.task
        text = getattr(record, request, None)
        if record is not None and record.oracle and isinstance(text, str):
            pairs.append((text, plan_calls(record.oracle)))
    return pairs


__all__ = ["answer_agent", "dataset_agent_plans", "grouped_plans", "request_of", "choose_plan", "MODES"]
