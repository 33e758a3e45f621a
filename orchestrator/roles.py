"""The agent roles a Neo build needs, as one protocol both backends implement.

The graph calls these methods and never asks which backend it runs: the offline backend
answers procedurally; the llm backend (later) answers through an OpenAI-compatible endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from generators.history_plan import weeks_of_full_days

if TYPE_CHECKING:  # names for the annotations only: the command line reads PRESETS without loading them
    from generators.model import Session, TaskDraft, Verdict
    from office_env.synthesis import World


@dataclass(frozen=True)
class GenerationOptions:
    """What Neo builds and Plus regenerations share: seed, dialogue shape, backend, extra gates."""

    seed: int = 0
    days: int = 5
    utterances_per_day: int = 70
    max_rounds: int = 5
    backend: str = "offline"
    model: str | None = None
    base_url: str | None = None
    llm_config: str | None = None  # a JSON/TOML settings file for the llm backend
    cache_path: str | None = None  # the llm response cache (None: no cache)
    gates: tuple[str, ...] = ()  # extra gates that need an agent or judges (verifier.gates.AGENT_GATES)
    llm_overrides: tuple[tuple[str, str], ...] = ()  # --llm-set KEY=VALUE (value as JSON): over the file's

    def _shape(self) -> dict[str, Any]:
        """The options that define the output (the cache location and the key do not)."""
        data: dict[str, Any] = {"days": self.days, "utterances_per_day": self.utterances_per_day,
                                "max_rounds": self.max_rounds, "backend": self.backend, "model": self.model}
        if self.backend == "llm":
            data["base_url"] = self.base_url
        if self.gates:
            data["gates"] = list(self.gates)
        if self.llm_overrides:
            data["llm_overrides"] = [list(pair) for pair in self.llm_overrides]
        return data


@dataclass(frozen=True)
class BuildConfig(GenerationOptions):
    app_counts: tuple[int, ...] = (1, 2, 3)
    app_weights: tuple[int, ...] = ()  # one per app count (--apps-weights); empty: equal shares

    def to_dict(self) -> dict[str, Any]:
        weights = {"app_weights": list(self.app_weights)} if self.app_weights else {}
        return {"seed": self.seed, "app_counts": list(self.app_counts), **weights, **self._shape()}


# History presets: (days, utterances per day). "challenge" stresses extreme horizons: 30 days of
# about 250 utterances, over 100K tokens (cl100k_base) of history per task, the memory spread over the span.
PRESETS = {"standard": (5, 72), "challenge": (30, 250)}
TASKS_PER_WORLD = 20  # attempts that share one world (and its testbed); the planner spreads families over them


def tasks_per_world(config: GenerationOptions) -> int:
    """Attempts that share one world: :data:`TASKS_PER_WORLD`, but one for histories of weeks
    (Challenge): twenty months of one person's chat over the same days would say the same other
    work and small talk again and again, and contradict each other."""
    return 1 if weeks_of_full_days(config.days, config.utterances_per_day) else TASKS_PER_WORLD


@dataclass(frozen=True)
class Job:
    """One attempt to make one task: its index, its world and the world's (read-only) testbed."""

    index: int
    task_id: str
    config: BuildConfig
    world: World
    testbed: Path
    staging: Path  # where the writer puts the finished task folder
    scratch: Path | None = None  # where the gates replay (default: under staging)


@dataclass(frozen=True)
class Plan:
    apps: tuple[str, ...]
    family: str
    difficulty: str
    days: int
    utterances_per_day: int
    exploration: str
    dialogue_shape: str

    def to_dict(self) -> dict[str, Any]:
        return {"apps": list(self.apps), "family": self.family, "difficulty": self.difficulty, "days": self.days,
                "utterances_per_day": self.utterances_per_day, "exploration": self.exploration,
                "dialogue_shape": self.dialogue_shape}


class Roles(Protocol):
    name: str
    # whether the planned apps' surfers run at once (a model's surfers wait on its endpoint, so
    # their waits overlap) or one after another (procedural surfers only compute: threads add cost)
    surfers_at_once: bool

    def plan(self, job: Job) -> Plan: ...

    def explore(self, app: str, job: Job) -> dict[str, Any]: ...

    def generate_task(self, job: Job, plan: Plan, notes: dict[str, dict[str, Any]]) -> TaskDraft | None: ...

    def generate_dialogue(self, job: Job, plan: Plan, draft: TaskDraft, feedback: str,
                          round_: int) -> tuple[list[Session], TaskDraft]:
        """The sessions, and the draft as the history says it (relative phrases filled in)."""
        ...

    def verify(self, job: Job, plan: Plan, draft: TaskDraft, sessions: list[Session]) -> Verdict: ...


MIN_DAYS = 2  # a correction is said on a later day than the value it corrects
MAX_TASKS = 99_999  # ids are neo-00001 .. neo-99999: five digits keep them in build order when sorted


def size_problem(n: int, workers: int, days: int) -> str | None:
    """What is wrong with a build's size, as one line, or None; kept here, away from the builder's
    heavy imports, so the command line refuses a bad ``--n`` before loading them."""
    if not 1 <= n <= MAX_TASKS:
        return f"--n must be from 1 to {MAX_TASKS:,} (got {n:,})"
    if workers < 1:
        return f"--workers must be at least 1 (got {workers})"
    if days < MIN_DAYS:
        return (f"--days must be at least {MIN_DAYS} (got {days}): a history needs one day to say a value and a "
                "later one to correct it")
    return None
