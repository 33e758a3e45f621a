"""The offline planner: app count, task family, difficulty and dialogue shape for one job."""

from __future__ import annotations

import random
from typing import Any

from backends.prompts import render
from generators.families import FAMILIES
from orchestrator.roles import TASKS_PER_WORLD, Job, Plan


def families_for(app_count: int) -> list[str]:
    return sorted(name for name, fam in FAMILIES.items() if len(fam.apps) == app_count)


def _app_count(seed: int, index: int, counts: list[int]) -> int:
    return random.Random(f"{seed}:{index}:plan").choice(counts)


# (seed, counts) -> the app count of each attempt so far; the attempts before each, per app count
_DRAWN: dict[tuple[int, tuple[int, ...]], tuple[list[int], dict[int, list[int]]]] = {}


def _position(seed: int, index: int, counts: list[int]) -> int:
    """How many attempts of the build before ``index`` share its app count (memoised: a build asks
    for every index in turn)."""
    drawn, before = _DRAWN.setdefault((seed, tuple(counts)), ([], {}))
    while len(drawn) <= index:
        i = len(drawn)
        drawn.append(_app_count(seed, i, counts))
        for count in set(counts):
            seen = before.setdefault(count, [])
            seen.append((seen[-1] + (drawn[i - 1] == count)) if i else 0)
    return before[drawn[index]][index]


def _deck(seed: int, app_count: int) -> list[str]:
    """The build's seeded order of the families of ``app_count``, walked round and round by its
    attempts of that app count: any run of consecutive attempts (one world's) repeats a family
    only after using every other, and a dataset spreads over all of them."""
    names = families_for(app_count)
    return random.Random(f"{seed}:{app_count}:families").sample(names, len(names))


def world_family(seed: int, index: int, counts: list[int]) -> str:
    """The family of attempt ``index``: the next one in its app count's order."""
    order = _deck(seed, _app_count(seed, index, counts))
    return order[_position(seed, index, counts) % len(order)]


def fallback_families(seed: int, index: int, counts: list[int]) -> list[str]:
    """Where attempt ``index`` turns when its family can make no task in its world: first the
    families of its app count that none of the world's attempts plans, the world's n-th attempt of
    that count starting at the n-th of them (so the fallbacks of one world differ from each other
    and from the world's other tasks), then the planned ones, nearest the world's start first."""
    family = world_family(seed, index, counts)
    deck = _deck(seed, len(FAMILIES[family].apps))
    count, size = _app_count(seed, index, counts), len(deck)
    first = index - index % TASKS_PER_WORLD
    mine = [_position(seed, i, counts) for i in range(first, first + TASKS_PER_WORLD)
            if _app_count(seed, i, counts) == count]
    start, end = mine[0], mine[-1] + 1
    back = _position(seed, index, counts) - start
    unused = [deck[p % size] for p in range(end, start + size)]
    if unused:
        unused = unused[back % len(unused):] + unused[:back % len(unused)]
    rest = [deck[(start - 1 - back - step) % size] for step in range(size)]
    order = unused + [name for name in rest if name not in unused]
    return [name for name in order if name != family]


def app_counts(job: Job) -> list[int]:
    """The build's app counts that have families."""
    return [c for c in job.config.app_counts if families_for(c)]


def plan_offline(job: Job) -> Plan:
    family = FAMILIES[world_family(job.config.seed, job.index, app_counts(job))]
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


PLAN_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "task plan",
    "type": "object",
    "properties": {
        "apps": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True,
                 "items": {"enum": ["word", "excel", "pdf", "email", "calendar"]}},
        "task_kind": {"type": "string", "minLength": 1},
        "difficulty": {"enum": ["easy", "medium", "hard"]},
        "exploration": {"type": "string", "minLength": 1},
        "dialogue_shape": {"type": "string", "minLength": 1},
    },
    "required": ["apps", "task_kind", "difficulty", "exploration", "dialogue_shape"],
    "additionalProperties": False,
}


def planned_here(seed: int, index: int, counts: list[int]) -> list[str]:
    """The families the other attempts in attempt ``index``'s world are planned to make."""
    first = index - index % TASKS_PER_WORLD
    return list(dict.fromkeys(world_family(seed, i, counts) for i in range(first, first + TASKS_PER_WORLD)
                              if i != index))


def plan_llm(client: Any, job: Job, files: list[str]) -> Plan:
    """The app count and the suggested kind follow the offline planner's seeded walk (so ``--apps``
    holds and one office's tasks differ); the model picks apps and task kind."""
    counts = app_counts(job)
    suggested = world_family(job.config.seed, job.index, counts)
    app_count = len(FAMILIES[suggested].apps)
    inputs = {
        "app_count": app_count, "available_apps": ["word", "excel", "pdf", "email", "calendar"],
        "task_kinds": sorted(FAMILIES), "suggested_kind": suggested,
        "kinds_planned_here": planned_here(job.config.seed, job.index, counts),
        "files": files, "user": job.world.user.user,
        "now": job.world.now.strftime("%Y-%m-%d %H:%M (%A)"),
        "days": job.config.days, "utterances_per_day": job.config.utterances_per_day,
    }
    data = client.structured("planner", render("planner", inputs=inputs, schema=PLAN_SCHEMA), PLAN_SCHEMA)
    apps = tuple(data["apps"])
    if len(apps) != app_count:
        raise ValueError(f"planner: asked for {app_count} app(s), got {len(apps)} ({', '.join(apps)})")
    return Plan(apps=apps, family=data["task_kind"], difficulty=data["difficulty"], days=job.config.days,
                utterances_per_day=job.config.utterances_per_day, exploration=data["exploration"],
                dialogue_shape=data["dialogue_shape"])
