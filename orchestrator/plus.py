"""HomerAgents+ ("Plus"): regenerate a split from OfficeBench seed tasks (``homer regenerate``).

Each seed subtask becomes one task. The graph (LangGraph):

    generate -> verify -> (back to generate with the verifier's feedback, at most
    ``max_rounds`` rounds, counted in state) -> gates -> write

- generate: the roles' generator (offline: ``generators.plus_offline.regenerate``) writes the
  intent, memory, subtasks and a multi-day dialogue;
- verify: the dialogue rules (``check_dialogue``) and the specifics check (every specific of the
  instruction in the joined dialogue text, none in the intent) -> ``{"passed", "feedback"}``;
- gates: ``schema``, ``fails_untouched`` (on the seed's untouched testbed, with its reference
  folder), ``memory_evidence``, ``specifics``; with no oracle plan, ``oracle_passes`` and
  ``baseline_fails`` are recorded as skipped;
- write: the task folder is staged (``task.json``, the seed's ``testbed/`` and ``reference/``)
  and published by the parent process in one rename.

``regenerate_split`` runs it over every seed of an OfficeBench tree. Seeds that fail to load
are reported (file, field, message) and skipped; the batch goes on. The dataset folder has the
layout of a Neo build (``orchestrator.dataset_writer``), with a Plus dataset card. The same seeds and
options give the same bytes, whatever ``workers``; ``resume`` continues an interrupted run.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import re
import shutil
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Protocol, Sequence, TypedDict, cast

from langgraph.graph import END, START, StateGraph
from pydantic import ValidationError

from backends.batch import Round, run_batch
from backends.carried_folder import CarriedFolder, pack_folder, unpack_folder
from backends.dataset_reader import iter_tasks
from backends.scratch import node_work_folder
from backends.task_record import App, Memory, Now, Provenance, Session, TaskRecord, User, Weekday, record_error
from backends.workers import Budget
from generators.bank_check import check_banks
from generators.model import Verdict
from generators.near_values import OTHER_PEOPLE
from generators.plus_llm import regenerate_llm
from generators.plus_offline import PlusDraft, infer_apps, plus_problems, regenerate
from generators.specifics import check_specifics
from office_env import SeedTask, load_officebench
from office_env.evaluation.criterion import Criterion
from office_env.seed_recast import Cast, recast_seed, split_people, substitute
from office_env.seeding import rng as seeded
from office_env.untrusted import UntrustedInputError, read_file
from orchestrator import dataset_writer as dataset
from orchestrator.build import finish_dataset, gate_record, is_role_failure, not_kept_info, usage_cost, usage_delta
from orchestrator.card import render_plus_card, statistics
from orchestrator.dataset_folder import BuildError, check_out_folder, drop_category, read_outcomes, repair
from orchestrator.endpoint_guard import ERROR as ENDPOINT_ERROR
from orchestrator.endpoint_guard import (
    Breaker,
    EndpointDown,
    endpoint_error,
    endpoint_probe,
    outcome_sink,
    share_budget,
    timeout_reason,
)
from orchestrator.neo_graph import review_and_write
from orchestrator.record import dialogue_tokens, with_usage
from orchestrator.roles import GenerationOptions
from verifier.dialogue_rules import check_dialogue
from verifier.llm_verifier import verify_llm
from verifier.seed_lint import ERROR, apply_repairs, lint_task

GENERATOR_REVISION = 28
GENERATOR_VERSION = f"plus-offline-{GENERATOR_REVISION}"


def generator_version(config: "PlusConfig") -> str:
    """What wrote the split: ``plus-offline-28`` or, on the llm backend, ``plus-llm-28``."""
    return GENERATOR_VERSION if config.backend == "offline" else f"plus-{config.backend}-{GENERATOR_REVISION}"
# Dialogue shapes: (days, utterances a day). "paper": many short sessions, as HomerAgents+ has them
# (about 28 sessions of about 11 utterances); "neo": the Neo split's few long ones.
SHAPES = {"paper": (28, 11), "neo": (5, 70)}
DEFAULT_SHAPE = "paper"


@dataclass(frozen=True)
class PlusConfig(GenerationOptions):
    repair: bool = False  # apply the seed lint's unambiguous repairs instead of dropping those seeds
    keep_people: bool = False  # keep the seed's own people instead of re-casting them (office_env.seed_recast)

    def to_dict(self) -> dict[str, Any]:
        return {"split": "plus", "seed": self.seed, **self._shape(), **({"repair": True} if self.repair else {}),
                **({"keep_people": True} if self.keep_people else {})}


@dataclass(frozen=True)
class PlusJob:
    """One seed subtask to regenerate: its position in the batch, its task id, where to stage."""

    index: int
    task_id: str
    seed_task: SeedTask
    config: PlusConfig
    staging: Path
    repairs: tuple[dict[str, Any], ...] = ()  # the seed lint's repairs applied to the criteria
    others: tuple[str, ...] = ()  # other seeds' instructions its history may tell, in order (told_candidates)
    cast: Cast = field(default_factory=Cast)  # who the seed's people became (office_env.seed_recast)


class PlusRoles(Protocol):
    name: str

    def __hash__(self) -> int: ...  # plus_graph keeps a compiled graph per roles

    def generate(self, job: PlusJob, feedback: str, round_: int) -> PlusDraft: ...

    def verify(self, job: PlusJob, draft: PlusDraft) -> Verdict: ...


def verify_plus(draft: PlusDraft, instruction: str, *, now: datetime, min_days: int) -> Verdict:
    """The Plus verifier: dialogue rules, the specifics check and the Plus rules (whole clauses, a
    query that names the work), one feedback line per problem."""
    verdict = check_dialogue(draft.task_draft(), draft.sessions, min_days=min_days, now=now)
    problems = [] if verdict.passed else verdict.feedback.splitlines()
    problems += check_specifics(instruction, draft.intent, draft.dialogue_text(), draft.dated_turns(),
                                [m.value for m in draft.task_draft().memory if m.derived is not None])
    problems += plus_problems(draft, instruction)
    return Verdict(not problems, "\n".join(problems) if problems else "ok")


class OfflinePlusRoles:
    """The offline backend: rule-based rewriting and the code verifier."""

    name = "offline"

    def generate(self, job: PlusJob, feedback: str, round_: int) -> PlusDraft:
        c = job.config
        return regenerate(job.seed_task, seed=c.seed, days=c.days, utterances_per_day=c.utterances_per_day,
                          feedback=feedback, others=job.others)

    def verify(self, job: PlusJob, draft: PlusDraft) -> Verdict:
        return verify_plus(draft, job.seed_task.instruction, now=job.seed_task.now, min_days=job.config.days)


class LLMPlusRoles:
    """The llm backend: one model call rewrites the seed; the rules in code check it first, then
    the model verifier."""

    name = "llm"

    def __init__(self, client: Any) -> None:
        self.client = client
        # --llm-set offline_roles: the roles the offline backend answers instead (see orchestrator.mixed_roles)
        self.offline_roles = frozenset(client.settings.offline_roles)

    def generate(self, job: PlusJob, feedback: str, round_: int) -> PlusDraft:
        c = job.config
        if "plus_generator" in self.offline_roles:
            return OfflinePlusRoles().generate(job, feedback, round_)
        return regenerate_llm(self.client, job.seed_task, days=c.days, utterances_per_day=c.utterances_per_day,
                              feedback=feedback, others=job.others)

    def verify(self, job: PlusJob, draft: PlusDraft) -> Verdict:
        ruled = verify_plus(draft, job.seed_task.instruction, now=job.seed_task.now, min_days=job.config.days)
        if not ruled.passed or "verifier" in self.offline_roles:
            return ruled
        return verify_llm(self.client, draft.task_draft(), draft.sessions, min_days=job.config.days,
                          now=job.seed_task.now)


@lru_cache(maxsize=4)
def _roles_for(config: PlusConfig) -> PlusRoles:
    if config.backend == "llm":
        from backends.llm import LLMClient

        return LLMPlusRoles(LLMClient.from_options(config))
    return OfflinePlusRoles()


# -- the graph -----------------------------------------------------------------------------------

class PlusState(TypedDict, total=False):
    job: PlusJob
    draft: PlusDraft | None
    verdict: Verdict
    rounds: int
    feedback_log: Annotated[list[str], operator.add]
    outcome: dict[str, Any]


def build_plus_graph(roles: PlusRoles, gate: Callable[[PlusState], dict[str, Any]],
                     write: Callable[[PlusState], dict[str, Any]]):
    """Compile the Plus graph. ``gate`` returns ``{"outcome": ...}`` with status ``gated`` (and
    the record) or ``dropped``; ``write`` stores an accepted task and returns its final outcome."""

    def generate(state: PlusState) -> dict[str, Any]:
        feedback = state["verdict"].feedback if state.get("verdict") else ""
        rounds = state.get("rounds", 0) + 1
        try:
            draft = roles.generate(state["job"], feedback, rounds)
        except ValueError as exc:
            return {"draft": None, "rounds": rounds,
                    "outcome": {"status": "dropped", "reason": f"generator: {exc}"}}
        return {"draft": draft, "rounds": rounds}

    def after_generate(state: PlusState) -> str:
        return "verify" if state.get("draft") is not None else END

    def verify(state: PlusState) -> dict[str, Any]:
        verdict = roles.verify(state["job"], cast(PlusDraft, state["draft"]))  # after_generate: only with a draft
        return {"verdict": verdict, "feedback_log": [] if verdict.passed else [verdict.feedback]}

    def give_up(state: PlusState) -> dict[str, Any]:
        first = state["verdict"].feedback.splitlines()[0] if state["verdict"].feedback else ""
        return {"outcome": {"status": "dropped", "reason": f"verifier: rejected {state['rounds']} rounds: {first}"}}

    graph = StateGraph(PlusState)
    graph.add_node("generate", generate)
    graph.add_edge(START, "generate")
    graph.add_conditional_edges("generate", after_generate, ["verify", END])
    return review_and_write(graph, verify, give_up, gate, write, retry="generate")


# -- record, gates, writer -----------------------------------------------------------------------

def plus_task_id(seed_id: str) -> str:
    """``1-14/0`` -> ``plus-1-14-0`` (characters a task id may not hold become ``_``)."""
    return "plus-" + re.sub(r"[^A-Za-z0-9._-]+", "_", seed_id.replace("/", "-"))[:120]


def _display_name(username: str) -> str:
    words = [w for w in re.split(r"[._\s-]+", username.strip()) if w]
    return " ".join(w[:1].upper() + w[1:] for w in words) or username


def build_plus_record(job: PlusJob, draft: PlusDraft, rounds: int, feedback_log: list[str]) -> TaskRecord:
    """The task record of a Plus task (split ``plus``); a seed's words the type refuses (an unknown
    weekday, an app it does not know) are a ``pydantic.ValidationError`` naming the field."""
    seed = job.seed_task
    dialogue = [s.to_dict() for s in draft.sessions]
    return TaskRecord(
        id=job.task_id, split="plus", apps=cast("list[App]", infer_apps(seed.instruction, seed.evaluation)),
        app_count=seed.app_count, user=User(name=_display_name(seed.username), username=seed.username),
        now=Now(date=seed.date, weekday=cast(Weekday, seed.weekday.strip().capitalize()), time=f"{seed.now:%H:%M}"),
        description=seed.instruction, intent=draft.intent, subtasks=list(draft.subtasks), query=draft.query,
        memory=[Memory.model_validate(m.to_dict()) for m in draft.memory],
        evaluation=[Criterion.model_validate(c) for c in seed.evaluation],
        dialogue=[Session.model_validate(s) for s in dialogue],
        provenance=Provenance.model_validate({  # an open object: its keys beyond the schema's are kept as given
            "backend": job.config.backend, "model": job.config.model, "seed": job.config.seed, "seed_task": seed.id,
            "rounds": rounds, "verifier_feedback": feedback_log, "gates": {}, "tokens": dialogue_tokens(dialogue),
            **({"repairs": list(job.repairs)} if job.repairs else {}),
            **({"recast": job.cast.to_dict()} if job.cast.names or job.cast.kept else {})}),
    )


_JOB_USAGE: dict[str, tuple[Any, dict[str, Any]]] = {}  # (client, usage at the job's start)


def plus_gate(state: PlusState) -> dict[str, Any]:
    job = state["job"]
    # the gates follow a verdict, given on a draft
    try:
        record = build_plus_record(job, cast(PlusDraft, state["draft"]), state["rounds"], state.get("feedback_log", []))
    except ValidationError as exc:  # a seed's words the type refuses: the schema gate's drop
        return {"outcome": {"status": "dropped", "reason": f"gate schema: {record_error(exc)}"}}
    client, before = _JOB_USAGE.get(job.task_id, (None, {}))
    if client is not None:
        spent = usage_delta(before, client.usage.to_dict())
        record = with_usage(record, spent, usage_cost(spent, client.settings) if client.settings.prices else None)
    seed = job.seed_task
    job.staging.mkdir(parents=True, exist_ok=True)
    return {"outcome": gate_record(record, seed.testbed, seed.reference, job.staging, job.config, client)}


def plus_write(state: PlusState) -> dict[str, Any]:
    job, record = state["job"], state["outcome"]["record"]
    seed = job.seed_task
    staged = dataset.stage_task(job.staging, record, seed.testbed, seed.reference)
    return {"outcome": {"status": "accepted", "staged": str(staged), "record": record}}


@lru_cache(maxsize=8)
def plus_graph(roles: PlusRoles | None = None):
    """The compiled graph for ``roles`` (default: the offline roles) with the real gates and writer."""
    return build_plus_graph(roles or OfflinePlusRoles(), plus_gate, plus_write)


def run_seed(out: str, config: PlusConfig, index: int, task_id: str, seed_task: SeedTask,
             roles: PlusRoles | None = None, repairs: tuple[dict[str, Any], ...] = (),
             others: tuple[str, ...] = (), people: tuple[str, ...] = ()) -> dict[str, Any]:
    """Regenerate one seed (runs in a worker); returns a JSON-able outcome. ``others``: the
    instructions of the split's other seeds its history may tell, in order (``told_candidates``);
    ``people``: the split's people (``office_env.seed_recast.split_people``)."""
    staging = Path(out) / dataset.WORK / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    with _seed_scratch(staging / f".{task_id}.seed") as scratch:  # the re-cast seed's files, until staged
        cast_ = Cast()
        if not config.keep_people:
            seed_task, cast_ = recast_seed(seed_task, seeded("plus-recast", config.seed, seed_task.id), scratch,
                                           avoid=OTHER_PEOPLE, known=people)
            others = tuple(substitute(o, cast_.names) for o in others)
        job = PlusJob(index=index, task_id=task_id, seed_task=seed_task, config=config, staging=staging,
                      repairs=repairs, others=others, cast=cast_)
        return _run_job(job, roles or _roles_for(config))


@contextmanager
def _seed_scratch(folder: Path) -> Iterator[Path]:
    """``folder``, empty, removed again afterwards (a killed run's leftover is removed first)."""
    shutil.rmtree(folder, ignore_errors=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_job(job: PlusJob, roles: PlusRoles) -> dict[str, Any]:
    """The graph on one seed's job: its JSON-able outcome, with the model usage of a job not kept."""
    config, index, task_id, seed_task = job.config, job.index, job.task_id, job.seed_task
    client = getattr(roles, "client", None)
    before = client.usage.to_dict() if client is not None else {}
    _JOB_USAGE[task_id] = (client, before)

    def spent() -> dict[str, Any]:
        delta = usage_delta(before, client.usage.to_dict()) if client is not None else {}
        return {"tokens": delta} if delta else {}

    try:
        state = plus_graph(roles).invoke({"job": job})
    except Exception as exc:  # a model role failed for good (this seed is dropped), or the endpoint did
        if config.backend != "llm" or not is_role_failure(exc):
            raise
        failed = endpoint_error(exc)
        return {"index": index, "id": task_id, "seed": seed_task.id, "status": ENDPOINT_ERROR if failed else "dropped",
                "rounds": 0, "reason": failed or f"llm role failed: {str(exc).splitlines()[0][:300]}", **spent()}
    finally:
        _JOB_USAGE.pop(task_id, None)
    outcome = dict(state.get("outcome") or {"status": "dropped", "reason": "graph ended without an outcome"})
    summary = {"index": index, "id": task_id, "seed": seed_task.id, "status": outcome["status"],
               "reason": outcome.get("reason", ""), "rounds": state.get("rounds", 0)}
    if outcome["status"] == "accepted":
        summary["staged"] = outcome["staged"]
    else:
        summary.update(spent())
    return summary


# -- the batch -----------------------------------------------------------------------------------

@dataclass
class PlusSummary:
    out: Path
    loaded: int = 0
    subtask_files: int = 0
    written: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)   # {"seed", "id", "reason"}
    errors: list[dict[str, Any]] = field(default_factory=list)    # the same, for seeds the endpoint failed
    skipped: list[dict[str, str]] = field(default_factory=list)   # {"file", "field", "message"}
    warnings: list[dict[str, str]] = field(default_factory=list)  # {"file", "field", "message"}
    lint: dict[str, Any] = field(default_factory=dict)  # {"counts", "repaired"}: the seed lint's findings

    @property
    def skipped_files(self) -> list[str]:
        return sorted({s["file"] for s in self.skipped})

    @property
    def drops(self) -> Counter:
        return Counter(drop_category(d["reason"]) for d in self.dropped)


def _relative(file: str, root: Path) -> str:
    """A loader path relative to the seeds folder (so that the dataset does not depend on where
    the seeds lie); unchanged when it is not inside it."""
    try:
        rel = Path(file).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return file
    return rel if rel != "." else root.name


def _problem_dicts(problems: list[Any], root: Path) -> list[dict[str, str]]:
    return [{"file": _relative(p.file, root), "field": p.field, "message": p.message} for p in problems]


def _fingerprint(tasks: list[SeedTask], skipped: list[dict[str, str]], root: Path) -> str:
    digest = hashlib.sha256()
    for task in tasks:
        digest.update(json.dumps([task.id, _relative(str(task.subtask_file), root)]).encode())
        digest.update(hashlib.sha256(read_file(task.subtask_file)).digest())
    digest.update(json.dumps(skipped, sort_keys=True).encode())
    return digest.hexdigest()


def _config_hash(config: PlusConfig, fingerprint: str) -> str:
    data = {**config.to_dict(), "generator": generator_version(config), "seeds": fingerprint}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _task_ids(tasks: list[SeedTask]) -> list[str]:
    ids: list[str] = []
    for index, task in enumerate(tasks):
        tid = plus_task_id(task.id)
        ids.append(tid if tid not in ids else f"{tid}-{index}")
    return ids


def regenerate_split(seeds_path: str | Path, out: str | Path, *, seed: int = 0, days: int | None = None,
                     utterances_per_day: int | None = None, shape: str = DEFAULT_SHAPE, workers: int = 1,
                     resume: bool = False, max_rounds: int = 5,
                     roles: PlusRoles | None = None, backend: str = "offline", model: str | None = None,
                     base_url: str | None = None, llm_config: str | None = None, cache_path: str | None = None,
                     llm_overrides: tuple[tuple[str, str], ...] = (), gates: tuple[str, ...] = (),
                     budget: Budget | None = None, repair_seeds: bool = False, keep_people: bool = False,
                     on_progress: Callable[[int, int], None] | None = None,
                     on_pause: Callable[[float], None] | None = None,
                     on_outcome: Callable[[dict[str, Any]], None] | None = None, executor: str = "local",
                     ray_address: str | None = None) -> PlusSummary:
    """Regenerate every seed subtask under ``seeds_path`` into a Plus dataset in ``out``, its
    dialogues in ``shape`` (``SHAPES``) unless ``days`` or ``utterances_per_day`` say otherwise.

    Every loaded seed is linted first (``verifier.seed_lint``): a seed with an error finding is
    dropped with it as the reason, unless ``repair_seeds`` and every error has an unambiguous
    repair, which is then applied and recorded in the task's provenance. Raises ``BuildError``
    for bad options or an unusable output folder; seeds that fail to load are skipped and
    reported in the summary (and the card), never raised."""
    if shape not in SHAPES:
        raise BuildError(f"--shape {shape!r}: must be one of {', '.join(SHAPES)}")
    days = SHAPES[shape][0] if days is None else days
    utterances_per_day = SHAPES[shape][1] if utterances_per_day is None else utterances_per_day
    if days < 1:
        raise BuildError(f"--days must be at least 1 (got {days})")
    if utterances_per_day < 2:
        raise BuildError(f"--utterances must be at least 2 (got {utterances_per_day})")
    if workers < 1:
        raise BuildError(f"--workers must be at least 1 (got {workers})")
    if max_rounds < 1:
        raise BuildError(f"max_rounds must be at least 1 (got {max_rounds})")
    root, out = Path(seeds_path), Path(out)
    config = PlusConfig(seed=seed, days=days, utterances_per_day=utterances_per_day, max_rounds=max_rounds,
                        backend=getattr(roles, "name", backend) if roles is not None else backend, model=model,
                        base_url=base_url, llm_config=llm_config, cache_path=cache_path, gates=tuple(gates),
                        llm_overrides=tuple(llm_overrides),
                        repair=repair_seeds, keep_people=keep_people)
    check_banks()  # a broken dialogue bank stops here, before the output folder is touched
    report = load_officebench(root)
    if not report.tasks:  # nothing to regenerate: refuse before the output folder is touched
        why = f" ({len(report.problems)} problem(s), first: {report.problems[0]})" if report.problems else ""
        raise BuildError(f"--seeds {root}: no OfficeBench subtask could be loaded (expected "
                         f"tasks/<apps>-<k>/subtasks/<i>.json with a testbed/){why}")
    batch = PlusBatch(root, out, config, workers, roles, on_progress, on_outcome, report, executor=executor)
    return run_batch(out, batch, resume=resume, budget=budget, executor=executor, ray_address=ray_address,
                     on_pause=on_pause)


class PlusBatch:
    """``homer regenerate`` as a ``backends.batch.Batch``: one item per loaded seed subtask, by position."""

    what, error, work_folder = "homer regenerate", BuildError, False

    def __init__(self, root: Path, out: Path, config: PlusConfig, workers: int, roles: PlusRoles | None,
                 on_progress: Callable[[int, int], None] | None,
                 on_outcome: Callable[[dict[str, Any]], None] | None, report: Any, executor: str = "local") -> None:
        self.root, self.out, self.config, self.workers, self.roles = root, out, config, workers, roles
        self.executor = executor
        self.work_folder = executor == "ray"  # a Ray node stages its tasks in a work folder of its own
        self.on_progress, self.on_outcome, self.report = on_progress, on_outcome, report
        self.guard: Breaker | None = None
        self.pending = True  # a round to run: the first, and one after each recovery of the endpoint

    def start(self, resume: bool) -> None:
        out, config, report = self.out, self.config, self.report
        self.summary = summary = PlusSummary(out, loaded=len(report.tasks), subtask_files=report.subtask_files,
                                             skipped=_problem_dicts(report.problems, self.root),
                                             warnings=_problem_dicts(report.warnings, self.root))
        self.fingerprint = _fingerprint(report.tasks, summary.skipped, self.root)
        self.digest = _config_hash(config, self.fingerprint)
        running = {"config": config.to_dict(), "config_hash": self.digest, "generator": generator_version(config),
                   "seeds_fingerprint": self.fingerprint[:16], "status": "running"}
        check_out_folder(out, self.digest, resume, same_options="--seeds/--seed/--days/--utterances", current=running)
        dataset.write_json(out / dataset.BUILD, running)
        done = read_outcomes(out, resume)
        self.ids = ids = _task_ids(report.tasks)
        self.done = done = {i: item for i, item in done.items() if i < len(ids) and item.get("id") == ids[i]}
        if resume:
            repair(out, done)
        self.tasks, self.repairs, refused = _lint(report.tasks, config.repair, summary)
        self.told = told_candidates(self.tasks, set(refused), config.seed)
        self.people = split_people(self.tasks)
        for i, reason in refused.items():
            done.setdefault(i, {"index": i, "id": ids[i], "seed": self.tasks[i].id, "status": "dropped", "rounds": 0,
                                "reason": reason})
        self.guard = Breaker(endpoint_probe(config) if config.backend == "llm" else None)
        share_budget(config, min(self.workers, len(self._todo())))

    def _todo(self) -> list[int]:
        return [i for i in range(len(self.report.tasks)) if i not in self.done]

    def log(self) -> dataset.OutcomeLog:
        self._log = dataset.OutcomeLog(self.out, self.done, self._report if self.on_progress else None)
        self._seen = outcome_sink(cast(Breaker, self.guard), self._log.record, self.on_outcome)  # start() set it
        return self._log

    def _report(self, done: dict[int, dict[str, Any]]) -> None:
        assert self.on_progress is not None  # the log reports only then
        self.on_progress(len(done), len(self.report.tasks))

    def next_round(self, work: str | None) -> Round | None:
        todo = self._todo() if self.pending else []
        self.pending = False
        if not todo:
            return None
        run = _SeedRun(str(self.out), self.config, self.ids, self.tasks, self.roles, self.repairs, self.told,
                       self.people)
        workers = min(self.workers, max(1, len(todo)))
        if self.executor == "ray" and work is not None:  # a node may see neither the seeds nor --out
            return Round([_SeedOnTheWay(i, self.tasks[i].testbed, self.tasks[i].reference) for i in todo],
                         _CarriedSeedRun(replace(run, out=""), work), workers)
        return Round(todo, run, workers)

    def record(self, item: dict[str, Any]) -> None:
        self._seen(0, item)

    def failed(self, i: int | _SeedOnTheWay, failure: Any) -> dict[str, Any]:
        if isinstance(i, _SeedOnTheWay):
            i = i.index
        head = {"index": i, "id": self.ids[i], "seed": self.tasks[i].id}
        if self.config.backend == "llm" and failure.kind == "timeout":  # waited on the endpoint: an error
            return {**head, "status": ENDPOINT_ERROR, "rounds": 0, "reason": timeout_reason(failure)}
        return {**head, "status": "dropped", "rounds": 0, "reason": failure.reason}

    def retry(self) -> None:
        for i in [i for i, item in self.done.items() if item["status"] == ENDPOINT_ERROR]:
            del self.done[i]  # the endpoint is back: those seeds are run again
        self.pending = True

    def stopped(self) -> Exception:
        written = sum(1 for item in self.done.values() if item["status"] == "accepted")
        errors = cast(Breaker, self.guard).errors  # start() set it
        return EndpointDown(f"endpoint down: {written} of {len(self.ids)} seed(s) done, {errors} attempt(s) "
                            "ended by the endpoint; rerun with --resume")

    def finalise(self) -> PlusSummary:
        return _finalize(self.out, self.config, self.digest, self.done, self.summary, len(self.report.tasks),
                         self.fingerprint)


@dataclass(frozen=True)
class _SeedRun:
    """``run_seed`` for position ``i`` of the batch (picklable, for Ray)."""

    out: str
    config: PlusConfig
    ids: list[str]
    tasks: list[SeedTask]
    roles: PlusRoles | None
    repairs: dict[int, tuple[dict[str, Any], ...]]
    told: list[tuple[str, ...]]  # per seed, the instructions its history may tell (told_candidates)
    people: tuple[str, ...] = ()  # the split's people (office_env.seed_recast.split_people)

    def __call__(self, i: int) -> dict[str, Any]:
        return run_seed(self.out, self.config, i, self.ids[i], self.tasks[i], self.roles, self.repairs.get(i, ()),
                        self.told[i], self.people)


def _packed(folder: Path | None) -> CarriedFolder | str | None:
    """A seed's folder as bytes (None: it has none; a string: why it cannot be packed)."""
    if folder is None or not folder.is_dir():
        return None
    try:
        return pack_folder(folder, untrusted=True)
    except (UntrustedInputError, OSError) as exc:
        return f"{exc.__class__.__name__}: {str(exc)[:300]}"


@dataclass(frozen=True)
class _SeedOnTheWay:
    """Seed ``index`` for a Ray node that may not see the seeds: its testbed and reference are
    packed (``backends.carried_folder``) only as the job is handed to Ray."""

    index: int
    testbed: Path
    reference: Path | None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_CarriedSeed, (self.index, _packed(self.testbed), _packed(self.reference)))


@dataclass(frozen=True)
class _CarriedSeed:
    index: int
    testbed: CarriedFolder | str | None
    reference: CarriedFolder | str | None


@dataclass(frozen=True)
class _CarriedSeedRun:
    """``run_seed`` on a Ray node: the seed's folders written in this machine's own work folder
    (``backends.scratch.node_work_folder``), the task staged there and handed back as bytes with
    its outcome (``carried``), for the driver to write into its folder."""

    run: _SeedRun
    work: str

    def __call__(self, seed: _CarriedSeed) -> dict[str, Any]:
        for packed in (seed.testbed, seed.reference):
            if isinstance(packed, str):
                raise UntrustedInputError(self.run.tasks[seed.index].id, packed)
        node = node_work_folder(self.work)
        here = node / f"seed-{os.getpid()}-{seed.index}"
        shutil.rmtree(here, ignore_errors=True)
        try:
            testbed = unpack_folder(cast(CarriedFolder, seed.testbed), here / "t") if seed.testbed else here / "none"
            reference = unpack_folder(cast(CarriedFolder, seed.reference), here / "r") if seed.reference else None
            task = replace(self.run.tasks[seed.index], testbed=testbed, reference=reference)
            tasks = list(self.run.tasks)
            tasks[seed.index] = task
            run = replace(self.run, out=str(node / "out"), tasks=tasks)
            return dataset.carry_staged(run(seed.index))
        finally:
            shutil.rmtree(here, ignore_errors=True)


TOLD_CANDIDATES = 24  # other seeds a history may tell, in the order tried (most are not tellable)


def recast_counts(records: Sequence[TaskRecord], config: PlusConfig) -> dict[str, Any]:
    """How many tasks had their seed's people re-cast, and the names kept as they were by reason."""
    if config.keep_people:
        return {"kept_people": True}
    casts = [cast(dict, getattr(r.provenance, "recast", None) or {}) for r in records]
    reasons = Counter(why.split(" in ")[0] if why.startswith("said in") else why
                      for c in casts for why in c.get("kept", {}).values())
    return {"tasks": sum(1 for c in casts if c.get("names")), "of": len(records), "kept": dict(sorted(reasons.items()))}


def told_candidates(tasks: Sequence[SeedTask], refused: set[int], seed: int) -> list[tuple[str, ...]]:
    """For each seed, the instructions of other seeds its history may tell as jobs for later, in
    the order to try them: the next :data:`TOLD_CANDIDATES` seeds after it in one seeded order of
    the split, leaving out the seeds the lint refused and those on its own testbed folder. So every
    seed is offered to about as many histories as any other (a random draw each would tell some
    seeds in many histories and some in none), and the same split and seed give the same lists."""
    usable = [i for i in range(len(tasks)) if i not in refused]
    order = seeded("homeragents.plus/told", seed, [t.instruction for t in tasks]).sample(usable, len(usable))
    at = {i: k for k, i in enumerate(order)}
    out = []
    for i, task in enumerate(tasks):
        start, told = at.get(i, -1) + 1, []
        for k in range(len(order)):
            j = order[(start + k) % len(order)]
            if j != i and tasks[j].folder != task.folder:
                told.append(tasks[j].instruction)
                if len(told) == TOLD_CANDIDATES:
                    break
        out.append(tuple(told))
    return out


def _lint(tasks: list[SeedTask], repair_seeds: bool, summary: PlusSummary
          ) -> tuple[list[SeedTask], dict[int, tuple[dict[str, Any], ...]], dict[int, str]]:
    """Lint every seed: the seeds to run (repaired where allowed), the repairs per position and
    the drop reason per refused position; finding counts go to ``summary.lint``."""
    counts: Counter = Counter()
    out, repairs, refused = list(tasks), {}, {}
    for i, task in enumerate(tasks):
        findings = lint_task(task)
        counts.update(f.code for f in findings)
        errors = [f for f in findings if f.severity == ERROR]
        if not errors:
            continue
        if repair_seeds and all(f.repair is not None for f in errors):
            evaluation, done = apply_repairs(task, findings)
            out[i] = replace(task, evaluation=evaluation)
            repairs[i] = tuple(done)
            continue
        first = errors[0]
        refused[i] = f"seed lint: {first.code}: {first.field}: {first.message}"
    summary.lint = {"counts": dict(sorted(counts.items())), "repaired": len(repairs), "refused": len(refused)}
    return out, repairs, refused


def proof_of(record: TaskRecord) -> str:
    """``proven`` (the reference-applied state passes every criterion) or ``unproven``."""
    gate = record.provenance.gates.get("reference_passes", {})
    return "proven" if gate.get("passed") and not gate.get("skipped") else "unproven"


def proof_counts(records: list[TaskRecord]) -> dict[str, Any]:
    """How many written tasks the offline proof covers, and which are left to an agent."""
    unproven = sorted(r.id for r in records if proof_of(r) == "unproven")
    return {"proven": len(records) - len(unproven), "unproven": len(unproven), "unproven_ids": unproven}


def _finalize(out: Path, config: PlusConfig, digest: str, done: dict[int, dict[str, Any]], summary: PlusSummary,
              n_seeds: int, fingerprint: str = "") -> PlusSummary:
    considered = [done[i] for i in sorted(done) if i < n_seeds]
    keep = {item["id"] for item in considered if item["status"] == "accepted"}
    tasks_dir = out / dataset.TASKS
    if tasks_dir.is_dir():  # a resumed run over changed ids: nothing but this run's tasks stays
        for folder in tasks_dir.iterdir():
            if folder.is_dir() and not folder.name.startswith(".") and folder.name not in keep:
                shutil.rmtree(folder, ignore_errors=True)
    summary.dropped = [{"seed": item["seed"], "id": item["id"], "reason": item["reason"]}
                       for item in considered if item["status"] not in ("accepted", ENDPOINT_ERROR)]
    summary.errors = [{"seed": item["seed"], "id": item["id"], "reason": item["reason"]}
                      for item in considered if item["status"] == ENDPOINT_ERROR]
    summary.written = len(keep)
    records = [t.task for t in iter_tasks(out) if t.task is not None]
    build_info = {
        "split": "plus", "config": config.to_dict(), "config_hash": digest, "generator": generator_version(config),
        "seeds_fingerprint": fingerprint[:16], "status": "complete",
        "seeds": {"subtask_files": summary.subtask_files, "loaded": summary.loaded,
                  "skipped": len(summary.skipped_files)},
        "attempts": len(considered), "accepted": summary.written,
        "drops": dict(sorted(summary.drops.items())), "dropped": summary.dropped,
        "skipped": summary.skipped, "warnings": summary.warnings, "lint": summary.lint,
        "proof": proof_counts(records),
        "recast": recast_counts(records, config),
    }
    if summary.errors:  # ended by the endpoint: not drops; --resume runs them again
        build_info["status"] = "incomplete"
        build_info["errors"] = summary.errors
    build_info.update(not_kept_info(config, considered))
    finish_dataset(out, considered, dataset.index_text(records), render_plus_card(statistics(records), build_info),
                   build_info)
    return summary
