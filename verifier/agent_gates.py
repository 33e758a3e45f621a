"""The gates that need an agent: solvability and leakage.

- solvability: an agent given the full description T (and no chat) must pass the criteria;
- leakage: the same agent given only the intent (and no chat) must fail them -- otherwise the
  multi-day dialogue is not needed.
On the llm backend the agent is the model agent of the harness. Offline there is no model: the
agent that knows T is the oracle plan, and the agent that knows only the intent is the baseline
plan (so these gates repeat the oracle and baseline gates with an agent's bookkeeping); a task
without a plan has its solvability left to ``homer eval``, recorded as skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from backends.dataset_reader import task_day_first, task_now
from backends.task_record import TaskRecord, plan_calls
from harness.agents import Agent, Episode, LLMAgent, OracleAgent
from office_env import Workspace, default_registry, evaluate_criteria
from verifier.gate_registry import REPLAY_STAGE, GateRun, gate, replay_inputs
from verifier.gate_result import GateResult

AgentFor = Callable[[TaskRecord, str], Agent | None]  # (record, "description" | "intent") -> agent


@dataclass(frozen=True)
class GateAgents:
    name: str
    agent_for: AgentFor


def gate_agents(backend: str, client: Any) -> GateAgents:
    if backend == "llm" and client is not None:
        agent = LLMAgent(client)
        return GateAgents("llm", lambda record, request: agent)

    def offline(record: TaskRecord, request: str) -> Agent | None:
        if not record.oracle:
            return None
        return OracleAgent(plan_calls(record.oracle if request == "description" else record.baseline))

    return GateAgents("offline", offline)


def _attempt(record: TaskRecord, testbed: Path, reference: Path | None, work: Path, agent: Agent,
             request: str, name: str, trusted: bool = False) -> tuple[bool, int]:
    now = task_now(record)
    ws = Workspace(testbed, now=now, trusted=trusted).copy_to(work / f"agent-{name}", link=True)
    episode = Episode(task_id=record.id, user_name=record.user.name, username=record.user.username,
                      now=record.now.to_dict(), request=getattr(record, request), context="", workspace=ws,
                      registry=default_registry())
    trajectory = agent.run(episode)
    return evaluate_criteria(ws, record.criteria(), reference,
                             day_first=task_day_first(record)).passed, trajectory.step_count


def agent_gates(record: TaskRecord, testbed: Path, reference: Path | None, work: Path, agents: GateAgents | None,
                names: tuple[str, ...], trusted: bool = False) -> dict[str, GateResult]:
    results: dict[str, GateResult] = {}
    for name, request, must_pass in (("solvability", "description", True), ("leakage", "intent", False)):
        if name not in names:
            continue
        agent = agents.agent_for(record, request) if agents is not None else None
        if agent is None:
            results[name] = GateResult(True, f"no {request} agent here: left to the harness", skipped=True)
            continue
        passed, steps = _attempt(record, testbed, reference, work, agent, request, name, trusted)
        ok = passed if must_pass else not passed
        assert agents is not None  # else there is no agent
        who = f"the {agents.name} agent given only the {request}"
        verdict = ("passes" if passed else "fails") + f" ({steps} steps)"
        results[name] = GateResult(ok, f"{who} {verdict}")
    return results


@gate("solvability", needs=("testbed", "reference", "agent"), order=REPLAY_STAGE + 10, report=12, kind="chosen")
def _solvability(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, _, work, _ = replay_inputs(run)
    return agent_gates(task, testbed, run.reference, work, run.agents, ("solvability",), run.trusted)["solvability"]


@gate("leakage", needs=("testbed", "reference", "agent"), order=REPLAY_STAGE + 11, report=13, kind="chosen")
def _leakage(task: TaskRecord, run: GateRun) -> GateResult:
    testbed, _, work, _ = replay_inputs(run)
    return agent_gates(task, testbed, run.reference, work, run.agents, ("leakage",), run.trusted)["leakage"]
