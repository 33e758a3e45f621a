"""The Neo build graph (LangGraph).

plan -> explore (one surfer per planned app: fanned out with ``Send`` when the roles' surfers
wait on an endpoint, one after another when they only compute; notes merged by a reducer) ->
generate_task -> generate_dialogue -> verify (back to generate_dialogue with the feedback, at most
``max_rounds`` rounds, counted in state) -> gates -> write.
A drafted task's plans gain the finding an agent must do (``generators.discovery``) and its checks
refuse hedges, the misread value written beside the right one (``generators.hedges``), whichever
backend wrote it.
A task that fails anywhere ends with ``outcome = {"status": "dropped", "reason": ...}``; a draft
that repeats a task the build keeps ends after generate_task (``repeat``).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Callable, TypedDict, cast

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from generators.discovery import discover
from generators.hedges import exclude_hedges, guard_hedges
from generators.model import Session, TaskDraft, Verdict
from generators.paste_checks import paste_checks
from generators.stated_values import state_checks
from office_env.workspace import Workspace
from orchestrator.roles import Job, Plan, Roles
from orchestrator.world_reads import testbed_files


def merge_notes(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: surfers run in parallel, each adds its app's notes."""
    return {**(left or {}), **(right or {})}


class NeoState(TypedDict, total=False):
    job: Job
    plan: Plan
    notes: Annotated[dict[str, Any], merge_notes]
    draft: TaskDraft | None
    dialogue: list[Session]
    verdict: Verdict
    rounds: int
    feedback_log: Annotated[list[str], operator.add]
    outcome: dict[str, Any]


ExploreInput = TypedDict("ExploreInput", {"job": Job, "app": str})


def build_neo_graph(roles: Roles, gate: Callable[[NeoState], dict[str, Any]],
                    write: Callable[[NeoState], dict[str, Any]],
                    repeat: Callable[[Job, TaskDraft], dict[str, Any] | None] | None = None):
    """Compile the graph. ``gate`` runs the quality gates and returns ``{"outcome": ...}`` (status
    ``gated`` or ``dropped``); ``write`` stores an accepted task and returns its final outcome;
    ``repeat`` looks at a finished draft and returns the outcome of an attempt that ends there (a
    repeat of a task the build keeps: its chat is not written), or None to go on."""

    def plan(state: NeoState) -> dict[str, Any]:
        return {"plan": roles.plan(state["job"]), "rounds": 0}

    def fan_out(state: NeoState) -> list[Send]:
        return [Send("explore", {"job": state["job"], "app": app}) for app in state["plan"].apps]

    def explore(payload: ExploreInput) -> dict[str, Any]:
        return {"notes": {payload["app"]: roles.explore(payload["app"], payload["job"])}}

    def explore_in_turn(state: NeoState) -> dict[str, Any]:
        job = state["job"]
        return {"notes": {app: roles.explore(app, job) for app in state["plan"].apps}}

    def generate_task(state: NeoState) -> dict[str, Any]:
        draft = roles.generate_task(state["job"], state["plan"], state.get("notes", {}))
        if draft is None:
            return {"draft": None, "outcome": {"status": "dropped", "reason": "generator: no task fits this workspace"}}
        job = state["job"]
        workspace = Workspace(job.testbed, now=job.world.now)
        draft = discover(draft, testbed_files(job))
        draft = paste_checks(state_checks(guard_hedges(exclude_hedges(draft)), workspace, job.world.people), workspace)
        ended = repeat(job, draft) if repeat is not None else None
        if ended is not None:
            return {"draft": None, "outcome": ended}
        return {"draft": draft}

    def after_task(state: NeoState) -> str:
        return "generate_dialogue" if state.get("draft") is not None else END

    def generate_dialogue(state: NeoState) -> dict[str, Any]:
        feedback = state["verdict"].feedback if state.get("verdict") else ""
        rounds = state.get("rounds", 0) + 1
        # after_task sends a task here only with a draft; a dialogue round gives it back
        sessions, draft = roles.generate_dialogue(state["job"], state["plan"], cast(TaskDraft, state["draft"]),
                                                  feedback, rounds)
        return {"dialogue": sessions, "draft": draft, "rounds": rounds}

    def verify(state: NeoState) -> dict[str, Any]:
        verdict = roles.verify(state["job"], state["plan"], cast(TaskDraft, state["draft"]), state["dialogue"])
        return {"verdict": verdict, "feedback_log": [] if verdict.passed else [verdict.feedback]}

    def give_up(state: NeoState) -> dict[str, Any]:
        return {"outcome": {"status": "dropped",
                            "reason": f"verifier: rejected {state['rounds']} rounds: {state['verdict'].feedback}"}}

    graph = StateGraph(NeoState)
    graph.add_node("plan", plan)
    if roles.surfers_at_once:
        graph.add_node("explore", explore)  # a Send target: its input is the payload, not the state
        graph.add_conditional_edges("plan", fan_out, ["explore"])
    else:  # threads would only add their cost to surfers that compute
        graph.add_node("explore", explore_in_turn)
        graph.add_edge("plan", "explore")
    graph.add_node("generate_task", generate_task)
    graph.add_node("generate_dialogue", generate_dialogue)
    graph.add_edge(START, "plan")
    graph.add_edge("explore", "generate_task")
    graph.add_conditional_edges("generate_task", after_task, ["generate_dialogue", END])
    graph.add_edge("generate_dialogue", "verify")
    return review_and_write(graph, verify, give_up, gate, write, retry="generate_dialogue")


def review_and_write(graph: StateGraph, verify: Callable, give_up: Callable, gate: Callable, write: Callable, *,
                     retry: str):
    """The end every build graph shares, compiled: ``verify`` passes to the gates, sends the work
    back to ``retry`` while rounds are left, or gives up; the gates pass to ``write`` or end."""

    def after_verify(state: dict[str, Any]) -> str:
        if state["verdict"].passed:
            return "gates"
        if state["rounds"] < state["job"].config.max_rounds:
            return retry
        return "give_up"

    def after_gates(state: dict[str, Any]) -> str:
        return "write" if state["outcome"]["status"] == "gated" else END

    for name, node in (("verify", verify), ("give_up", give_up), ("gates", gate), ("write", write)):
        graph.add_node(name, node)
    graph.add_conditional_edges("verify", after_verify, ["gates", retry, "give_up"])
    graph.add_edge("give_up", END)
    graph.add_conditional_edges("gates", after_gates, ["write", END])
    graph.add_edge("write", END)
    return graph.compile()
