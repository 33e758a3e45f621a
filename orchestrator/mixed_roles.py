"""Roles split between the two backends: the model answers some, the procedural writer the rest.

``--llm-set offline_roles=[...]`` names the roles the offline backend keeps (by the names usage
tables give them): a model too weak to draft a verifiable task can still write the dialogue of an
offline draft and review it, and a costly one can be kept to the roles that need it. The graph sees
one :class:`~orchestrator.roles.Roles` either way.
"""

from __future__ import annotations

from typing import Any

from generators.model import Session, TaskDraft, Verdict
from orchestrator.roles import Job, Plan


class MixedRoles:
    """``llm``'s answers but for the roles in ``offline_roles`` (names of
    :data:`backends.llm.settings.BUILD_ROLES`, checked with the settings), which ``offline`` gives."""

    name = "llm"

    def __init__(self, llm: Any, offline: Any, offline_roles: tuple[str, ...]) -> None:
        self.llm, self.offline, self.offline_roles = llm, offline, frozenset(offline_roles)
        self.client = llm.client  # the model's: the gates, usage and prices read it as for the llm backend

    def _by(self, role: str) -> Any:
        return self.offline if role in self.offline_roles else self.llm

    @property
    def surfers_at_once(self) -> bool:
        return bool(self._by("surfer").surfers_at_once)

    def plan(self, job: Job) -> Plan:
        return self._by("planner").plan(job)

    def explore(self, app: str, job: Job) -> dict[str, Any]:
        return self._by("surfer").explore(app, job)

    def generate_task(self, job: Job, plan: Plan, notes: dict[str, dict[str, Any]]) -> TaskDraft | None:
        if "task_generator" in self.offline_roles and "surfer" not in self.offline_roles:
            notes = {}  # the procedural writer builds on the office as it reads it, not on a model's notes
        return self._by("task_generator").generate_task(job, plan, notes)

    def generate_dialogue(self, job: Job, plan: Plan, draft: TaskDraft, feedback: str,
                          round_: int) -> tuple[list[Session], TaskDraft]:
        return self._by("dialogue_day").generate_dialogue(job, plan, draft, feedback, round_)

    def verify(self, job: Job, plan: Plan, draft: TaskDraft, sessions: list[Session]) -> Verdict:
        return self._by("verifier").verify(job, plan, draft, sessions)
