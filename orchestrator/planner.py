"""The offline planner: app count, task family, difficulty and dialogue shape for one job."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from backends.prompts import render
from generators.families import FAMILIES
from office_env.apps import office_apps
from office_env.seeding import rng as seeded
from orchestrator.roles import TASKS_PER_WORLD, Job, Plan, tasks_per_world


def families_for(app_count: int) -> list[str]:
    return sorted(name for name, fam in FAMILIES.items() if len(fam.apps) == app_count)


def _app_count(seed: int, index: int, counts: Sequence[int], weights: Sequence[int] | None = None) -> int:
    """The app count of attempt ``index``: the build's stratified schedule (``schedule``)."""
    return _drawn(seed, counts, weights, index + 1)[0][index]


# (seed, counts, weights) -> the app count of each attempt so far; the attempts before each, per app count
_DRAWN: dict[tuple[int, tuple[int, ...], tuple[int, ...]], tuple[list[int], dict[int, list[int]]]] = {}


def _key(seed: int, counts: Sequence[int],
         weights: Sequence[int] | None) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    counts = tuple(counts)
    weights = tuple(weights) if weights else (1,) * len(counts)
    if len(weights) != len(counts) or any(w < 1 for w in weights):
        raise ValueError(f"app weights {weights} do not fit app counts {counts}: one weight of 1 or more each")
    return seed, counts, weights


def schedule(seed: int, counts: Sequence[int], weights: Sequence[int] | None, length: int) -> list[int]:
    """The app counts of the build's first ``length`` attempts: each attempt takes the count furthest
    behind its share (equal shares, or ``weights``), ties broken by a seeded order, so any prefix
    holds each count within one of its share (with equal shares, every run of ``len(counts)``
    attempts holds each once)."""
    return _drawn(seed, counts, weights, length)[0][:length]


def _drawn(seed: int, counts: Sequence[int], weights: Sequence[int] | None,
           length: int) -> tuple[list[int], dict[int, list[int]]]:
    """The schedule so far, at least ``length`` long, and per count the attempts before each
    (memoised: a build asks for every index in turn)."""
    key = _key(seed, counts, weights)
    drawn, before = _DRAWN.setdefault(key, ([], {}))
    _, counts, weights = key
    total = sum(weights)
    while len(drawn) < length:
        i = len(drawn)
        taken = {c: (before[c][-1] + (drawn[-1] == c)) if i else 0 for c in counts}
        order = seeded(seed, i, "plan").sample(range(len(counts)), len(counts))
        best = max(order, key=lambda k: ((i + 1) * weights[k] - taken[counts[k]] * total, -order.index(k)))
        drawn.append(counts[best])
        for c in counts:
            before.setdefault(c, []).append(taken[c])
    return drawn, before


def _position(seed: int, index: int, counts: Sequence[int], weights: Sequence[int] | None = None) -> int:
    """How many attempts of the build before ``index`` share its app count."""
    drawn, before = _drawn(seed, counts, weights, index + 1)
    return before[drawn[index]][index]


def quotas(seed: int, counts: Sequence[int], weights: Sequence[int] | None, n: int) -> dict[int, int]:
    """How many of a dataset's ``n`` tasks each app count gets: its attempts among the first ``n``
    of the schedule (within one task of its share; a larger ``n`` never lowers one)."""
    return dict(Counter(schedule(seed, counts, weights, n)))


def _deck(seed: int, app_count: int) -> list[str]:
    """The build's seeded order of the families of ``app_count``, walked round and round by its
    attempts of that app count: any run of consecutive attempts (one world's) repeats a family
    only after using every other, and a dataset spreads over all of them."""
    names = families_for(app_count)
    return seeded(seed, app_count, "families").sample(names, len(names))


def world_family(seed: int, index: int, counts: Sequence[int], weights: Sequence[int] | None = None) -> str:
    """The family of attempt ``index``: the next one in its app count's order."""
    order = _deck(seed, _app_count(seed, index, counts, weights))
    return order[_position(seed, index, counts, weights) % len(order)]


def fallback_families(seed: int, index: int, counts: Sequence[int], weights: Sequence[int] | None = None) -> list[str]:
    """Where attempt ``index`` turns when its family can make no task in its world: first the
    families of its app count that none of the world's attempts plans, the world's n-th attempt of
    that count starting at the n-th of them (so the fallbacks of one world differ from each other
    and from the world's other tasks), then the planned ones, nearest the world's start first."""
    family = world_family(seed, index, counts, weights)
    deck = _deck(seed, len(FAMILIES[family].apps))
    count, size = _app_count(seed, index, counts, weights), len(deck)
    first = index - index % TASKS_PER_WORLD
    mine = [_position(seed, i, counts, weights) for i in range(first, first + TASKS_PER_WORLD)
            if _app_count(seed, i, counts, weights) == count]
    start, end = mine[0], mine[-1] + 1
    back = _position(seed, index, counts, weights) - start
    unused = [deck[p % size] for p in range(end, start + size)]
    if unused:
        unused = unused[back % len(unused):] + unused[:back % len(unused)]
    rest = [deck[(start - 1 - back - step) % size] for step in range(size)]
    order = unused + [name for name in rest if name not in unused]
    return [name for name in order if name != family]


def app_counts(job: Job) -> list[int]:
    """The build's app counts that have families."""
    return mix(job.config)[0]


def mix(config: Any) -> tuple[list[int], list[int] | None]:
    """A build's app counts that have families, and their weights (None: equal shares)."""
    weights = dict(zip(config.app_counts, config.app_weights)) if config.app_weights else None
    counts = [c for c in config.app_counts if families_for(c)]
    return counts, [weights[c] for c in counts] if weights else None


def plan_offline(job: Job) -> Plan:
    family = FAMILIES[world_family(job.config.seed, job.index, *mix(job.config))]
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


def general_plan_schema() -> dict[str, Any]:
    """A plan's schema: up to three of the registered office apps, a kind, a difficulty."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "task plan",
        "type": "object",
        "properties": {
            "apps": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True,
                     "items": {"enum": list(office_apps())}},
            "task_kind": {"type": "string", "minLength": 1},
            "difficulty": {"enum": ["easy", "medium", "hard"]},
            "exploration": {"type": "string", "minLength": 1},
            "dialogue_shape": {"type": "string", "minLength": 1},
        },
        "required": ["apps", "task_kind", "difficulty", "exploration", "dialogue_shape"],
        "additionalProperties": False,
    }


def plan_schema(app_count: int, kinds: Sequence[str]) -> dict[str, Any]:
    """``general_plan_schema()`` as tight as one request: exactly ``app_count`` apps and one of
    ``kinds``, so a server that constrains its output to the schema cannot answer with another count
    or kind."""
    schema = general_plan_schema()
    schema["properties"]["apps"].update(minItems=app_count, maxItems=app_count)
    schema["properties"]["task_kind"] = {"enum": list(kinds)}
    return schema


def planner_prompt(inputs: dict[str, Any]) -> list[dict[str, str]]:
    """The planner's messages: the plain schema, the registered apps and each kind once, with its
    apps, before anything that changes from call to call (a provider caches that prefix across the
    build's planner calls), then ``inputs``."""
    kinds = sorted(FAMILIES)
    return render("planner", inputs=inputs, schema=general_plan_schema(), apps=list(office_apps()),
                  kinds=[(kind, FAMILIES[kind].apps) for kind in kinds])


def planned_here(seed: int, index: int, counts: Sequence[int], weights: Sequence[int] | None = None,
                 per_world: int = TASKS_PER_WORLD) -> list[str]:
    """The families the other attempts in attempt ``index``'s world are planned to make (none when
    each attempt has a world of its own, ``per_world`` 1)."""
    first = index - index % per_world
    return list(dict.fromkeys(world_family(seed, i, counts, weights) for i in range(first, first + per_world)
                              if i != index))


def plan_llm(client: Any, job: Job, files: list[str]) -> Plan:
    """The app count and the suggested kind follow the offline planner's seeded walk (so ``--apps``
    holds and one office's tasks differ); the model picks apps and task kind."""
    counts, weights = mix(job.config)
    suggested = world_family(job.config.seed, job.index, counts, weights)
    app_count = len(FAMILIES[suggested].apps)
    inputs = {  # the office's part first (the same for its every task: a provider caches it), the task's last
        "files": files, "user": job.world.user.user,
        "now": job.world.now.strftime("%Y-%m-%d %H:%M (%A)"),
        "days": job.config.days, "utterances_per_day": job.config.utterances_per_day,
        "app_count": app_count, "suggested_kind": suggested,
        "kinds_planned_here": planned_here(job.config.seed, job.index, counts, weights, tasks_per_world(job.config)),
    }
    schema = plan_schema(app_count, sorted(FAMILIES))  # what the server holds the reply to
    data = client.structured("planner", planner_prompt(inputs), schema)
    apps = tuple(data["apps"])
    if len(apps) != app_count:
        raise ValueError(f"planner: asked for {app_count} app(s), got {len(apps)} ({', '.join(apps)})")
    return Plan(apps=apps, family=data["task_kind"], difficulty=data["difficulty"], days=job.config.days,
                utterances_per_day=job.config.utterances_per_day, exploration=data["exploration"],
                dialogue_shape=data["dialogue_shape"])


class Strata:
    """Which accepted attempts a build keeps: per app count, the first ``quotas`` of that count in
    index order, so a dataset's app counts hold their shares whatever attempts were dropped."""

    def __init__(self, config: Any, n: int) -> None:
        self.counts, self.weights = mix(config)
        self.seed = config.seed
        self.quota = quotas(self.seed, self.counts, self.weights, n)
        self._schedule: list[int] = []  # the memoised schedule (``_drawn``), read without its checks

    def count_of(self, index: int) -> int:
        """The app count of attempt ``index`` (a build asks for each many times: a list look-up)."""
        if index < len(self._schedule):
            return self._schedule[index]
        count = _app_count(self.seed, index, self.counts, self.weights)
        self._schedule = _drawn(self.seed, self.counts, self.weights, index + 1)[0]
        return count

    def keep(self, accepted: list[int]) -> list[int]:
        """The kept ones of ``accepted`` (in index order, duplicates already left out)."""
        taken: Counter = Counter()
        kept = []
        for index in accepted:
            count = self.count_of(index)
            if taken[count] < self.quota.get(count, 0):
                taken[count] += 1
                kept.append(index)
        return kept

    def wanted(self, index: int, accepted: list[int]) -> bool:
        """Attempt ``index`` may still be kept: its app count has fewer than its quota accepted before it."""
        count = self.count_of(index)
        return sum(1 for i in accepted if i < index and self.count_of(i) == count) < self.quota.get(count, 0)

    def filled(self, kept: list[int]) -> dict[int, int]:
        """Per app count whose quota ``kept`` fills, the index that fills it (-1: a quota of 0)."""
        filled = {c: -1 for c in self.counts if not self.quota.get(c)}
        taken: Counter = Counter()
        for index in kept:
            count = self.count_of(index)
            taken[count] += 1
            if taken[count] == self.quota.get(count, 0):
                filled[count] = index
        return filled

    def is_open(self, index: int, filled: dict[int, int]) -> bool:
        """Attempt ``index`` may still be kept: its app count's quota is not filled before it."""
        return filled.get(self.count_of(index), index) >= index

    def first_open(self, done: Any, kept: list[int], limit: int) -> int:
        """The lowest attempt index without an outcome that may still be kept (``limit`` when none
        below it): an attempt whose app count filled its quota before it is never needed."""
        filled = self.filled(kept)
        return next((i for i in range(limit) if i not in done and self.is_open(i, filled)), limit)

    def max_attempts(self) -> int:
        """The attempt indices a build may use: each app count with a quota gets 4 attempts per task
        it needs plus 20 (n * 4 + 20 in all when the shares are equal), its share of the indices."""
        weights = self.weights or [1] * len(self.counts)
        total = sum(weights)
        return max([math.ceil((self.quota[c] * 4 + 20) * total / w)
                    for c, w in zip(self.counts, weights) if self.quota.get(c)] + [1])

    def attempts_needed(self, accepted: list[int]) -> float:
        """About how many more attempts (none dropped) fill every quota: the attempts of the app
        counts are interleaved, so the count furthest from its quota sets it."""
        have = Counter(self.count_of(i) for i in self.keep(accepted))
        weights = self.weights or [1] * len(self.counts)
        total = sum(weights)
        return max([(self.quota.get(c, 0) - have[c]) * total / w for c, w in zip(self.counts, weights)] + [0])
