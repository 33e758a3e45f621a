"""The llm backend: every Neo role answered by a model behind an OpenAI-compatible endpoint."""

from __future__ import annotations

from typing import Any

from generators.chances import DRAFT
from generators.dialogue_llm import generate_dialogue_llm
from generators.dialogue_offline import mail_arrival, plan_dialogue, task_values
from generators.families import FAMILIES
from generators.history_plan import LONG_HISTORY_DAYS
from generators.model import Session, TaskDraft, Verdict
from generators.notes_for_kind import notes_for_kind
from generators.task_llm import generate_task_llm
from office_env import Workspace
from office_env.seeding import STRIDE, derive_seed
from office_env.seeding import rng as seeded
from orchestrator.offline_roles import colleagues_away, office_files, world_notes
from orchestrator.planner import fallback_families, mix, plan_llm
from orchestrator.roles import Job, Plan
from orchestrator.siblings import draw_siblings
from surfers.llm import explore_llm
from surfers.offline import WorkspaceReader, list_files
from verifier.llm_verifier import verify_llm
from verifier.trace import office_values


class LLMRoles:
    name = "llm"
    surfers_at_once = True

    def __init__(self, client: Any) -> None:
        self.client = client
        self._notes: dict[tuple[str, int, str], dict[str, Any]] = {}

    def plan(self, job: Job) -> Plan:
        files = list_files(WorkspaceReader(Workspace(job.testbed, now=job.world.now)))
        return plan_llm(self.client, job, files)

    def explore(self, app: str, job: Job) -> dict[str, Any]:
        # One exploration per world and app: the jobs of a world share its read-only testbed.
        key = (str(job.testbed), job.world.seed, app)
        if key not in self._notes:
            self._notes[key] = explore_llm(self.client, app, Workspace(job.testbed, now=job.world.now))
        return self._notes[key]

    def generate_task(self, job: Job, plan: Plan, notes: dict[str, dict[str, Any]]) -> TaskDraft | None:
        world = job.world
        # the walk's fallbacks that the explored apps' notes can serve (the model saw no other app),
        # in the walk's order, each with the apps it needs (what a draft of that kind names as its apps)
        walk = fallback_families(job.config.seed, job.index, *mix(job.config))
        fallbacks = {name: list(FAMILIES[name].apps) for name in walk
                     if name != plan.family and set(FAMILIES[name].apps) <= set(plan.apps)}
        return generate_task_llm(
            self.client, plan={"apps": list(plan.apps), "task_kind": plan.family, "difficulty": plan.difficulty,
                               "other_kinds": fallbacks,
                               **({"long_history": True} if plan.days > LONG_HISTORY_DAYS
                                  else {"query_names_work": seeded(job.config.seed, job.index, "query").random()
                                        < DRAFT.named_query})},
            notes=notes_for_kind(plan.family, notes, user=world.user.user, user_name=world.user.name,
                                 colleagues=[(p.user, p.name) for p in world.colleagues], now=world.now),
            user={"username": world.user.user, "name": world.user.name},
            colleagues=[{"username": p.user, "name": p.name} for p in world.colleagues], now=world.now,
        )

    def generate_dialogue(self, job: Job, plan: Plan, draft: TaskDraft, feedback: str,
                          round_: int) -> tuple[list[Session], TaskDraft]:
        world = job.world
        ws = Workspace(job.testbed, now=world.now)
        answers = office_values(draft.evaluation, [*task_values(draft.memory), draft.query])
        # the sibling works are drawn as offline: from the office as the offline surfers read it (no model call)
        siblings = draw_siblings(job, draft, lambda app: world_notes(app, job), avoid=answers)
        days, draft = plan_dialogue(draft, seed=derive_seed(job.config.seed, job.index, legacy=STRIDE), now=world.now,
                                    days=plan.days, feedback=feedback, arrived=mail_arrival(draft, ws),
                                    siblings=siblings, utterances_per_day=plan.utterances_per_day,
                                    people=[p.name for p in world.colleagues])
        sessions = generate_dialogue_llm(
            self.client, draft, days, now=world.now, user_first=world.user.first,
            colleagues=[p.first for p in world.colleagues], company=world.company, projects=list(world.projects),
            city=world.city, currency=world.currency, files=office_files(job.testbed),
            utterances_per_day=plan.utterances_per_day,
            feedback=feedback, answers=answers, absences=colleagues_away(job, ws),
        )
        return sessions, draft

    def verify(self, job: Job, plan: Plan, draft: TaskDraft, sessions: list[Session]) -> Verdict:
        return verify_llm(self.client, draft, sessions, min_days=plan.days, now=job.world.now)
