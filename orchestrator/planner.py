"""The offline planner: app count, task family, difficulty and dialogue shape for one job."""

from __future__ import annotations

import random

from generators.families import FAMILIES
from orchestrator.roles import Job, Plan


def families_for(app_count: int) -> list[str]:
    return sorted(name for name, fam in FAMILIES.items() if len(fam.apps) == app_count)


def plan_offline(job: Job) -> Plan:
    rng = random.Random(f"{job.config.seed}:{job.index}:plan")
    counts = [c for c in job.config.app_counts if families_for(c)]
    app_count = rng.choice(counts)
    family = FAMILIES[rng.choice(families_for(app_count))]
    return Plan(
        apps=family.apps,
        family=family.name,
        difficulty=family.difficulty,
        days=job.config.days,
        utterances_per_day=job.config.utterances_per_day,
        exploration=f"read every {', '.join(family.apps)} item of {job.world.user.user}'s office",
        dialogue_shape=f"{job.config.days} working days before now, about {job.config.utterances_per_day} "
                       "utterances a day, memory spread over the days, the rest small talk",
    )
