"""The offline backend: every role answered procedurally, seeded, with no network."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Iterator

from generators.dialogue_offline import generate_dialogue, mail_arrival, office_absences, plan_dialogue, task_values
from generators.families import FAMILIES
from generators.history_plan import LONG_HISTORY_DAYS
from generators.model import Session, TaskDraft, Verdict
from office_env import Workspace
from office_env.seeding import STRIDE, derive_seed
from office_env.seeding import rng as seeded
from orchestrator.planner import fallback_families, mix, plan_offline
from orchestrator.roles import Job, Plan
from orchestrator.siblings import draw_siblings
from orchestrator.world_reads import world_reads
from surfers import explore as surf
from verifier.dialogue_rules import check_dialogue
from verifier.trace import office_values


def world_notes(app: str, job: Job) -> dict[str, Any]:
    """The surfer's notes of ``app`` in the job's world. Jobs of one world share a read-only testbed;
    its notes are the same for each of them (and no reader changes them)."""
    notes = world_reads(job).notes
    if app not in notes:
        notes[app] = surf(app, Workspace(job.testbed, now=job.world.now))
    return notes[app]


def office_files(testbed: Path) -> list[str]:
    """The documents of a testbed (``data/...``), sorted: other work in the chat mentions them."""
    data = Path(testbed) / "data"
    try:
        return sorted(f"data/{p.name}" for p in data.iterdir() if p.is_file() and not p.is_symlink())
    except OSError:
        return []


def colleagues_away(job: Job, ws: Workspace) -> list[tuple[str, date, date]]:
    """The spans the user's mailbox shows the world's colleagues away, by the first name the chat
    uses for them: ``(first name, first day, last day)``, sorted."""
    world = job.world
    return office_absences(ws, world.user.user, {p.email.lower(): p.first for p in world.colleagues})


def _office_facts(job: Job, ws: Workspace) -> tuple[list[str], list[tuple[str, date, date]]]:
    """``office_files`` and ``colleagues_away`` of the job's testbed, read once per world: the
    tasks of a world share its testbed, which no task changes (replays work on copies)."""
    reads = world_reads(job)
    if reads.facts is None:
        reads.facts = (tuple(office_files(job.testbed)), tuple(colleagues_away(job, ws)))
    files, away = reads.facts
    return list(files), list(away)


def _families_to_try(job: Job, plan: Plan) -> Iterator[str]:
    """The plan's family, then its fallbacks (``orchestrator.planner.fallback_families``), worked
    out only when the plan's family makes no task in the office (a few attempts in a hundred)."""
    yield plan.family
    yield from fallback_families(job.config.seed, job.index, *mix(job.config))


class OfflineRoles:
    name = "offline"
    surfers_at_once = False

    def plan(self, job: Job) -> Plan:
        return plan_offline(job)

    def explore(self, app: str, job: Job) -> dict[str, Any]:
        return world_notes(app, job)

    def generate_task(self, job: Job, plan: Plan, notes: dict[str, dict[str, Any]]) -> TaskDraft | None:
        world = job.world
        colleagues = tuple((p.user, p.name) for p in world.colleagues)
        for name in _families_to_try(job, plan):
            fam = FAMILIES[name]
            missing = [a for a in fam.apps if a not in notes]
            for app in missing:
                notes = {**notes, app: self.explore(app, job)}
            rng = seeded(job.config.seed, job.index, "task", name)
            draft = fam.build(fam.input(rng, notes, world.user.user, world.user.name, colleagues, world.now,
                                        named_query=True if plan.days > LONG_HISTORY_DAYS else None))
            if draft is not None:
                return draft
        return None

    def generate_dialogue(self, job: Job, plan: Plan, draft: TaskDraft, feedback: str,
                          round_: int) -> tuple[list[Session], TaskDraft]:
        world = job.world
        seed = derive_seed(job.config.seed, job.index, legacy=STRIDE)
        ws = Workspace(job.testbed, now=world.now)
        arrived = mail_arrival(draft, ws)
        answers = office_values(draft.evaluation, [*task_values(draft.memory), draft.query])
        # the siblings read the office as the task did, whatever apps the plan fanned out to
        siblings = draw_siblings(job, draft, lambda app: world_notes(app, job), avoid=answers)
        days, draft = plan_dialogue(draft, seed=seed, now=world.now, days=plan.days, feedback=feedback, arrived=arrived,
                                    siblings=siblings, utterances_per_day=plan.utterances_per_day,
                                    people=[p.name for p in world.colleagues])
        files, away = _office_facts(job, ws)
        sessions = generate_dialogue(
            draft, seed=seed, now=world.now, user_first=world.user.first,
            colleagues=[p.first for p in world.colleagues], company=world.company, projects=list(world.projects),
            city=world.city, currency=world.currency, files=files, days=plan.days,
            utterances_per_day=plan.utterances_per_day, feedback=feedback, plan=days,
            answers=answers, absences=away, siblings=siblings,
        )
        return sessions, draft

    def verify(self, job: Job, plan: Plan, draft: TaskDraft, sessions: list[Session]) -> Verdict:
        return check_dialogue(draft, sessions, min_days=plan.days, now=job.world.now)
