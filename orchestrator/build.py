"""``homer build``: one attempt (its world, graph, gates and staged folder) and the build's batch
(``BuildBatch``: rounds sized by the strata, finalisation), run by ``backends.batch``.

Attempt ``i`` is fully determined by ``(seed, i)``: it uses world ``i // tasks_per_world(config)``
(20 attempts a world, one for a history of weeks; written once per worker process) and its own
random streams. Workers stage finished task folders; only the parent publishes them (one rename
each) and records outcomes in a progress file, so an interrupted build resumes without redoing or
doubling tasks. The dataset keeps the
first ``n`` accepted attempts in index order, so any number of workers gives the same bytes.
"""

from __future__ import annotations

import bisect
import fcntl
import functools
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, cast

from pydantic import ValidationError

from backends.batch import Round, finish_folder, run_batch
from backends.job_contract import CRASHED, NOTE, raised
from backends.llm.usage import COUNTERS
from backends.scratch import node_work_folder
from backends.task_record import TaskRecord, record_error, typed_records
from backends.tokens import counter_name
from backends.workers import Budget, JobFailure
from generators.bank_check import check_banks
from generators.families import check_families
from generators.small_talk import WordingsExhausted
from office_env.seeding import COLON, derive_seed
from office_env.synthesis import World, make_world, write_workspace
from office_env.synthesis.check import WorldCheckError
from office_env.untrusted import UntrustedInputError, load_json, scan_tree
from orchestrator import dataset_writer as dataset
from orchestrator.card import CardSums, render_card, task_figures
from orchestrator.dataset_folder import (
    BuildError,
    check_out_folder,
    drop_category,
    is_consistent,
    previous_build,
    read_outcomes,
    repair,
)
from orchestrator.endpoint_guard import (
    ERROR,
    Breaker,
    EndpointDown,
    endpoint_error,
    endpoint_probe,
    outcome_sink,
    share_budget,
    timeout_reason,
)
from orchestrator.figure_log import FigureLog
from orchestrator.kept_identities import NAME as KEPT_IDENTITIES
from orchestrator.kept_identities import KeptIdentities, ray_name, repeat_of, repeat_on_ray
from orchestrator.neo_graph import NeoState, build_neo_graph
from orchestrator.offline_roles import OfflineRoles
from orchestrator.planner import Strata
from orchestrator.record import build_record, draft_identity, with_gates, with_usage
from orchestrator.roles import (
    BuildConfig,
    Job,
    size_problem,
    tasks_per_world,
)
from verifier.duplicates import FirstOfEach, duplicate_keys, first_of_each, near_pairs, near_words
from verifier.gates import run_gates
from verifier.text_tally import TextTally

if TYPE_CHECKING:
    from generators.model import TaskDraft

GENERATOR_VERSION = "neo-5"  # 4: app counts stratified (equal shares, or --apps-weights); 5: repeats stop at drafts
EXPECTED_DROP_RATE = 0.1  # before any attempt has ended: sizes the first batch




def config_hash(config: BuildConfig) -> str:
    data = {**config.to_dict(), "generator": GENERATOR_VERSION, "tasks_per_world": tasks_per_world(config)}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]




def task_id(index: int) -> str:
    return f"neo-{index:05d}"


def world_seed(seed: int, world_index: int) -> int:
    return derive_seed(seed, "world", world_index, legacy=COLON)


# -- one attempt (runs in a worker) ----------------------------------------------------------

@lru_cache(maxsize=64)
def _make_world(seed: int, world_index: int) -> World:
    return make_world(world_seed(seed, world_index))


_FAILED_WORLDS: dict[tuple[str, int, int], WorldCheckError] = {}  # checked once per process, not per attempt


def _world(work: str, seed: int, world_index: int) -> tuple[World, Path]:
    # Only the world is cached: its testbed is (re)written whenever it is missing, since a
    # finished build removes its work folder and a later build in this process may reuse the path.
    testbed = _write_world(work, seed, world_index, wait=True)
    if testbed is None:
        raise _FAILED_WORLDS[(work, seed, world_index)]
    return _make_world(seed, world_index), testbed


def _write_world(work: str, seed: int, world_index: int, *, wait: bool) -> Path | None:
    """The world's testbed in the build's work folder (``backends.scratch``), written unless it is
    there already; None when the world fails its check.

    One worker writes a world while the others that need it wait: writing it twice costs more
    than waiting. A worker that would wait writes the next world meanwhile (``wait=False``: return
    at once when another worker holds it), so the workers of a build never idle on a world.
    flock is released by the kernel if the writer dies."""
    key = (work, seed, world_index)
    if key in _FAILED_WORLDS:
        return None
    root = Path(work) / "worlds" / f"w{world_index:05d}"
    testbed = root / "testbed"
    if testbed.is_dir():
        return testbed
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / ".writing", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                return testbed
            _write_world(work, seed, world_index + 1, wait=False)
            fcntl.flock(fd, fcntl.LOCK_EX)
        if not testbed.is_dir():
            tmp = Path(tempfile.mkdtemp(prefix=".testbed.", dir=root))
            tmp.chmod(0o755)  # mkdtemp creates 0700; copies of the testbed keep this mode
            try:
                write_workspace(_make_world(seed, world_index), tmp)
            except WorldCheckError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                _FAILED_WORLDS[key] = exc
                return None
            os.replace(tmp, testbed)
    finally:
        os.close(fd)
    return testbed


_JOB_USAGE: dict[str, dict[str, Any]] = {}  # usage snapshot at the start of each running job


def is_role_failure(exc: Exception) -> bool:
    """A model role that failed for good: the endpoint, its output, or what the output said."""
    from backends.llm import LLMError

    return isinstance(exc, (LLMError, ValueError))


def _gate(state: NeoState) -> dict[str, Any]:
    job, draft = state["job"], cast("TaskDraft", state["draft"])  # the gates follow a dialogue, made for a draft
    try:
        record = build_record(job, draft, state["dialogue"], state["rounds"], state.get("feedback_log", []))
    except ValidationError as exc:  # a model's draft the type refuses: the schema gate's drop
        return {"outcome": {"status": "dropped", "reason": f"gate schema: {record_error(exc)}"}}
    if job.config.backend == "llm":  # every model call of this task happened before its gates
        spent = usage_delta(_JOB_USAGE.get(job.task_id, {}), _usage_now(job.config))
        settings = _roles(job.config).client.settings
        record = with_usage(record, spent, usage_cost(spent, settings) if settings.prices else None)
    client = getattr(_roles(job.config), "client", None)
    # the world's testbed is one this build wrote: replays may hard-link it instead of copying, and
    # keep their copy in the work folder (never in staging) for the next tasks of the world
    return {"outcome": gate_record(record, job.testbed, None, job.scratch or job.staging, job.config, client,
                                   trusted=True, copies=job.scratch)}


def gate_record(record: TaskRecord, testbed: Path | None, reference: Path | None, scratch: Path,
                config: Any, client: Any, *, trusted: bool = False, copies: Path | None = None) -> dict[str, Any]:
    """Run the gates on a record (in a folder of its own under ``scratch``), and say ``gated`` with
    the record and their results in its provenance, or ``dropped`` with the first failing gate.
    ``testbed=None`` is an empty office. ``copies``: where the replays' copy of a trusted testbed
    is kept for the next record of the same testbed (``verifier.gates.run_gates``)."""
    scratch.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{record.id}.", dir=scratch))
    try:
        if testbed is None or not testbed.is_dir():
            testbed = work / "empty-testbed"
            testbed.mkdir()
        results = run_gates(record, testbed, reference, scratch=work, extra=config.gates, client=client,
                            agents=gate_agents_for(config.gates, config.backend, client), trusted=trusted,
                            drop_early=True, copies=copies)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = [name for name, r in results.items() if not r.passed]
    if failed:
        return {"status": "dropped", "reason": f"gate {failed[0]}: {results[failed[0]].detail}"}
    return {"status": "gated", "record": with_gates(record, results)}


def _write(state: NeoState) -> dict[str, Any]:
    job, record = state["job"], state["outcome"]["record"]
    plain = record.to_dict()  # made once: the task's file and its card figures read it
    if tasks_per_world(job.config) > 1:  # the tasks of a world hard-link one copy of its testbed in the dataset
        world = dataset.shared_world(job.staging.parent, job.testbed, f"w{job.world.seed}")
        staged = dataset.stage_task(job.staging, record, world, trusted=True, link=True, plain=plain)
    else:  # a world of one task (histories of weeks): its own copy
        staged = dataset.stage_task(job.staging, record, job.testbed, trusted=True, plain=plain)
    return {"outcome": {"status": "accepted", "staged": str(staged), "record": record, "plain": plain}}


@lru_cache(maxsize=4)
def _roles(config: BuildConfig) -> Any:
    """The roles for a build, once per worker process (an llm client keeps its connections)."""
    if config.backend == "llm":
        from backends.llm import LLMClient
        from orchestrator.llm_roles import LLMRoles
        from orchestrator.mixed_roles import MixedRoles

        client = LLMClient.from_options(config)
        offline_roles = client.settings.offline_roles
        return MixedRoles(LLMRoles(client), OfflineRoles(), offline_roles) if offline_roles else LLMRoles(client)
    return OfflineRoles()


@lru_cache(maxsize=4)
def _graph(config: BuildConfig):
    return build_neo_graph(_roles(config), _gate, _write, _repeat)


REPEAT = "repeat"  # an attempt that ended at its draft: it repeats a task the build keeps
# per running attempt, its draft's identity (keys, near words, family, app count): its outcome
# carries it whatever ends it, so the parent can tell a repeat it was not told of
_DRAFTED: dict[str, tuple[list[str], list[str], str, int]] = {}
_ON_RAY: str | None = None  # while a carried attempt runs (a Ray node): the actor holding the kept identities
# per running attempt, what its draft's identity was made of (``_identity_parts``): a kept record whose
# final draft has the same parts has the same identity, so it is not made again
_DRAFT_PARTS: dict[str, str] = {}


def _identity_parts(job: Job, draft: TaskDraft) -> str:
    """Everything ``draft_identity`` reads of a job and its draft (the world and user, the family,
    description, evaluation, memory values and computations), as one exact text: ``repr``, not
    ``==``, since 1, 1.0 and True are equal yet make different keys. The dialogue round gives back
    a draft whose memory pieces say their values anew (``said_as``, ``derived``), which no key
    reads (a recorded memory's value is a strict text, validated alone); a draft whose parts read
    otherwise has its identity made again."""
    return repr((job.world.seed, job.world.user.user, draft.family, draft.description, draft.evaluation,
                 [m.value for m in draft.memory], draft.computed))


def _repeat(job: Job, draft: TaskDraft) -> dict[str, Any] | None:
    """The graph's ``repeat``: the outcome of an attempt whose draft repeats a task the build
    keeps for good, as the parent's file of their identities (``orchestrator.kept_identities``,
    beside the staging folder) tells; None to go on (also for a draft the record's types refuse:
    the schema gate drops it, as it did before any identity was asked of it)."""
    try:
        keys, words = draft_identity(job, draft)
    except ValidationError:
        return None
    _DRAFTED[job.task_id] = (keys, words, draft.family, len(draft.apps))
    _DRAFT_PARTS[job.task_id] = _identity_parts(job, draft)
    if _ON_RAY is not None:  # a Ray node: the file may not be seen here, its copy is asked
        earlier = repeat_on_ray(_ON_RAY, job.index, keys, words)
    else:
        earlier = repeat_of(job.staging.parent / KEPT_IDENTITIES, job.index, keys, words)
    return None if earlier is None else {"status": REPEAT, "reason": f"repeats {task_id(earlier)}"}


def gate_agents_for(gates: tuple[str, ...], backend: str, client: Any) -> Any:
    """The agents the solvability and leakage gates run (built only when those gates are chosen)."""
    if not {"solvability", "leakage"} & set(gates):
        return None
    from verifier.agent_gates import gate_agents

    return gate_agents(backend, client)


def _usage_now(config: BuildConfig) -> dict[str, Any]:
    roles = _roles(config)
    client = getattr(roles, "client", None)
    return client.usage.to_dict() if client is not None else {}


def usage_cost(delta: dict[str, dict[str, int]], settings: Any) -> float | None:
    """USD for a usage delta from the settings' price table (per 1K tokens, by each role's model);
    None when a model used has no price."""
    total = 0.0
    for role, spent in delta.items():
        price = settings.prices.get(settings.model_for(role))
        if price is None:
            return None
        total += spent["prompt_tokens"] / 1000 * price[0] + spent["completion_tokens"] / 1000 * price[1]
    return round(total, 6)


def usage_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per-role calls and tokens spent between two usage snapshots."""
    keys = COUNTERS
    delta = {}
    for role, now in after.items():
        then = before.get(role, {})
        spent = {k: now.get(k, 0) - then.get(k, 0) for k in keys}
        if any(spent.values()):
            delta[role] = spent
    return dict(sorted(delta.items()))


def _spent(config: BuildConfig, before: dict[str, Any]) -> dict[str, Any]:
    """``{"tokens": per-role usage since before}`` on the llm backend, else nothing."""
    if config.backend != "llm":
        return {}
    spent = usage_delta(before, _usage_now(config))
    return {"tokens": spent} if spent else {}


def spent_not_kept(items: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per-role calls and tokens of attempts that gave no task (dropped, or ended by the endpoint)."""
    total: dict[str, dict[str, int]] = {}
    for item in items:
        if item.get("status") == "accepted":
            continue
        for role, spent in (item.get("tokens") or {}).items():
            bucket = total.setdefault(role, dict.fromkeys(COUNTERS, 0))
            for key in bucket:
                bucket[key] += int(spent.get(key, 0))
    return dict(sorted(total.items()))


def not_kept_info(config: Any, items: list[dict[str, Any]]) -> dict[str, Any]:
    """``usage_not_kept`` (and ``cost_not_kept_usd`` with prices) for ``build.json``: what the
    attempts that gave no task spent; empty when they spent nothing."""
    not_kept = spent_not_kept(items)
    if not not_kept:
        return {}
    cost = cost_not_kept(config, not_kept)
    return {"usage_not_kept": not_kept, **({"cost_not_kept_usd": cost} if cost is not None else {})}


def cost_not_kept(config: Any, not_kept: dict[str, dict[str, int]]) -> float | None:
    """USD of the attempts not kept, from the settings' price table (None without prices)."""
    from backends.llm import LLMConfigError
    from backends.llm.settings import settings_for

    try:
        settings = settings_for(config)
    except LLMConfigError:
        return None
    return usage_cost(not_kept, settings) if settings.prices else None


FIGURES = "figures"  # an outcome's card figures and index line: kept by the parent beside the log, never written to it


def run_attempt(out: str, config: BuildConfig, index: int, work: str) -> dict[str, Any]:
    """Make (or fail to make) task ``index``; returns a JSON-able outcome. ``work``: the build's
    work folder (``backends.scratch``), where worlds are written and gates replay."""
    try:
        world, testbed = _world(work, config.seed, index // tasks_per_world(config))
    except WorldCheckError as exc:  # a world that does not hang together: none of its tasks is made
        return {"index": index, "id": task_id(index), "status": "dropped", "family": None, "rounds": 0,
                "reason": f"world check: {exc}"}
    staging = Path(out) / dataset.WORK / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    job = Job(index=index, task_id=task_id(index), config=config, world=world, testbed=testbed, staging=staging,
              scratch=Path(work) / "gates")
    _JOB_USAGE[job.task_id] = before = _usage_now(config)
    try:
        summary = _attempt(job, config, before)
    except BaseException as exc:
        # after its draft, an attempt's failure carries the draft's identity: a repeat of a kept task
        # is a duplicate however it ended (stopped at its draft, or not)
        failure = raised(exc) if isinstance(exc, Exception) and not isinstance(exc, MemoryError) else None
        if job.task_id not in _DRAFTED or failure is None or failure.kind != CRASHED:
            if job.task_id in _DRAFTED and not isinstance(exc, (KeyboardInterrupt, SystemExit)):
                setattr(exc, NOTE, _DRAFTED[job.task_id])  # out of time or memory: the batch reports it
            raise
        summary = failed_attempt(index, failure, llm=config.backend == "llm")  # as the parent writes it
    finally:
        _JOB_USAGE.pop(job.task_id, None)
        drafted = _DRAFTED.pop(job.task_id, None)
        _DRAFT_PARTS.pop(job.task_id, None)
    return with_draft(summary, drafted)


def _attempt(job: Job, config: BuildConfig, before: dict[str, Any]) -> dict[str, Any]:
    index = job.index
    try:
        state = _graph(config).invoke({"job": job})
    except WordingsExhausted as exc:  # a history longer than the small talk has fresh lines for
        return {"index": index, "id": job.task_id, "status": "dropped", "family": None, "rounds": 0,
                "reason": f"dialogue: {str(exc).splitlines()[0][:300]}", **_spent(config, before)}
    except Exception as exc:  # a model role failed for good, or the endpoint did
        if config.backend != "llm" or not is_role_failure(exc):
            raise
        failed = endpoint_error(exc)
        return {"index": index, "id": job.task_id, "status": "error" if failed else "dropped", "family": None,
                "rounds": 0, "reason": failed or f"{config.backend} role failed: {str(exc).splitlines()[0][:300]}",
                **_spent(config, before)}
    outcome = dict(state.get("outcome") or {"status": "dropped", "reason": "graph ended without an outcome"})
    plan = state.get("plan")
    summary = {"index": index, "id": job.task_id, "status": outcome["status"], "reason": outcome.get("reason", ""),
               "family": plan.family if plan else None, "rounds": state.get("rounds", 0)}
    summary.update(_spent(config, before))  # what each attempt cost, kept or not (the card sums those not kept)
    if outcome["status"] == "accepted":
        record: TaskRecord = outcome["record"]
        keys, words = _record_identity(job, state.get("draft"), record)
        summary.update(staged=outcome["staged"], family=record.family, app_count=record.app_count,
                       keys=keys, words=words)
        summary[FIGURES] = kept_figures(record, outcome.get("plain"))
    return summary


def _record_identity(job: Job, draft: TaskDraft | None, record: TaskRecord) -> tuple[list[str], list[str]]:
    """``record``'s duplicate keys and near words: its draft's (``_repeat`` made them) when the draft
    it was built from has the parts that identity was made of, else made from the record."""
    drafted = _DRAFTED.get(job.task_id)
    parts = _DRAFT_PARTS.get(job.task_id)
    if drafted is not None and parts is not None and draft is not None and _identity_parts(job, draft) == parts:
        return list(drafted[0]), list(drafted[1])
    return duplicate_keys(record), near_words(record)


CANDIDATES = ("accepted", REPEAT)  # the outcomes whose identities the duplicate check takes
DRAFTED = "drafted"  # a dropped attempt's draft identity: the parent's check for a repeat, never written out


def with_draft(summary: dict[str, Any], drafted: tuple[list[str], list[str], str, int] | None) -> dict[str, Any]:
    """``summary`` with what it needs of its draft's identity: a repeat its family, app count, keys
    and words (as an accepted outcome has them); another dropped attempt with a draft the same
    under ``DRAFTED`` (a repeat of a kept task is dropped as one whatever else ended it)."""
    if drafted is None or summary["status"] in ("accepted", ERROR):
        return summary
    keys, words, family, app_count = drafted
    if summary["status"] == REPEAT:
        summary.update(family=family, app_count=app_count, keys=keys, words=words)
    else:
        summary[DRAFTED] = {"keys": keys, "words": words, "family": family, "app_count": app_count}
    return summary


def _draft_note(note: Any) -> tuple[list[str], list[str], str, int] | None:
    """The draft identity a failed job noted (``run_attempt``), if it has that shape."""
    if (isinstance(note, (tuple, list)) and len(note) == 4 and all(isinstance(part, list) for part in note[:2])
            and isinstance(note[2], str) and isinstance(note[3], int)):
        return list(note[0]), list(note[1]), note[2], note[3]
    return None


def kept_figures(record: TaskRecord, plain: dict[str, Any] | None = None) -> tuple[str, str, bytes]:
    """What the parent takes of a task it keeps, besides its outcome: the card's figures (JSON,
    ``orchestrator.card.task_figures``), its ``index.jsonl`` line and its texts' rows. Computed
    where the task is made, so a build's finish sums them instead of reading every task back.
    ``plain``: ``record.to_dict()``, when the caller has it."""
    figures, rows = task_figures(record, plain)
    return json.dumps(figures), json.dumps(dataset.index_line(record), ensure_ascii=False), rows


def run_attempt_carried(config: BuildConfig, index: int, work: str) -> dict[str, Any]:
    """:func:`run_attempt` where the output folder may not be seen (``--executor ray``: a node of a
    cluster without a shared disk): the task is staged in this machine's own work folder
    (``backends.scratch.node_work_folder``, named after the driver's ``work``) and comes back as
    bytes with its outcome (``carried``), for the driver to write into its folder."""
    global _ON_RAY
    node = node_work_folder(work)
    _ON_RAY = ray_name(work)
    try:  # a copy: run_attempt's is cached
        return dataset.carry_staged(dict(run_attempt(str(node / "out"), config, index, str(node))))
    finally:
        _ON_RAY = None


# -- the batch (runs in the parent) ----------------------------------------------------------


def space_needed(out: Path, n: int, config: BuildConfig, made: int | None = None) -> int | None:
    """About how many bytes the tasks still to make need (``made`` of ``n`` made; by default the
    folder's task folders): those to go times the mean size of up to 20 of the folder's task
    folders, or, before any, of a task of this history's length (``dataset.OFFICE_BYTES``)."""
    sizes: list[int] = []
    count = 0
    try:
        with os.scandir(out / dataset.TASKS) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    count += 1
                    if len(sizes) < 20:
                        sizes.append(scan_tree(entry.path, check_links=False, max_file_bytes=None,
                                               max_total_bytes=None).total_bytes)
    except OSError:
        pass
    to_go = n - (count if made is None else made)
    if to_go <= 0:
        return None
    each = sum(sizes) / len(sizes) if sizes else \
        dataset.OFFICE_BYTES + dataset.TURN_BYTES * config.days * config.utterances_per_day
    return int(each * to_go)

@dataclass
class BuildSummary:
    out: Path
    accepted: int = 0
    attempts: int = 0
    drops: Counter = field(default_factory=Counter)
    reasons: list[str] = field(default_factory=list)  # why each attempt not kept ended (drops and errors)
    gameability: dict[str, Any] | None = None  # the card's figures, when this run wrote the card
    repeats_stopped: int = 0  # duplicates this run found at their drafts (their chats were never written)


def unique_accepted(done: dict[int, dict[str, Any]], strata: Strata) -> tuple[list[int], dict[int, int]]:
    """Accepted attempts in index order without duplicates (the first of each task identity is
    kept, whatever order workers finished in), and the duplicates with the index they repeat; an
    attempt past its app count's quota, given the ones kept below it, is in neither: a build that
    runs one attempt at a time never runs it, so it may not make a later attempt a repeat."""
    accepted = {i: item for i, item in done.items() if item["status"] in CANDIDATES}
    words = {i: list(item.get("words") or []) for i, item in accepted.items()}
    return first_of_each([(i, list(item.get("keys") or [])) for i, item in accepted.items()], words, strata)


def _added(done: dict[int, dict[str, Any]], read: int) -> list[tuple[int, dict[str, Any]]]:
    """The outcomes put into ``done`` after its first ``read``, in the order they came: taken from
    its end (a dict keeps the order of insertion, and skipping its first ``read`` would step over
    each of them: a cost per look that grew with the build)."""
    return list(itertools.islice(reversed(done.items()), len(done) - read))[::-1]


class UniqueSoFar:
    """:func:`unique_accepted` of a build's outcomes as they come in, kept up to date instead of
    worked out again after every outcome (a cost that grew with the square of the build): each
    new outcome is put into a :class:`~verifier.duplicates.FirstOfEach` (a build records each
    attempt once; outcomes taken back start it over)."""

    def __init__(self, done: dict[int, dict[str, Any]], strata: Strata | None = None) -> None:
        self.done, self.strata = done, strata
        self._read = 0  # outcomes put in so far: the first ones of ``done``, which only grows at its end
        self._firsts = FirstOfEach(quotas=strata)

    def kept(self) -> list[int]:
        return list(self.firsts().kept)

    def firsts(self) -> FirstOfEach:
        """The :class:`~verifier.duplicates.FirstOfEach` of every accepted outcome so far (its
        ``kept`` and ``dropped``, not to be changed)."""
        done = self.done
        if len(done) < self._read:
            self._read, self._firsts = 0, FirstOfEach(quotas=self.strata)  # an outcome taken back: start over
        for index, item in _added(done, self._read):
            if item["status"] in CANDIDATES:
                self._firsts.add(index, item.get("keys") or [], item.get("words") or [])  # held, never changed
        self._read = len(done)
        return self._firsts


class AcceptedBelow:
    """How many accepted attempts of an app count lie below an attempt, of a build's outcomes as
    they come in (as :class:`UniqueSoFar`: each outcome put in once, an outcome taken back starts
    it over): per app count the accepted indices sorted, so that asking costs a bisection instead
    of a pass over every outcome (asked before each attempt starts, that pass grew with the build)."""

    def __init__(self, done: dict[int, dict[str, Any]], strata: Strata) -> None:
        self.done, self.strata = done, strata
        self._read = 0
        self._by_count: dict[int, list[int]] = {}

    def count(self, index: int) -> int:
        done = self.done
        if len(done) < self._read:
            self._read, self._by_count = 0, {}
        for i, item in _added(done, self._read):
            if item["status"] in CANDIDATES:  # a repeat counts as the accepted attempt it would be: its drop, too
                bisect.insort(self._by_count.setdefault(self.strata.count_of(i), []), i)
        self._read = len(done)
        return bisect.bisect_left(self._by_count.get(self.strata.count_of(index), []), index)


def _prepare(out: Path, config: BuildConfig, resume: bool) -> dict[int, dict[str, Any]]:
    """Check the output folder; return outcomes already recorded (resume), after repairing it."""
    check_out_folder(out, config_hash(config), resume,
                     current={"config": config.to_dict(), "generator": GENERATOR_VERSION})
    dataset.write_json(out / dataset.BUILD, {"config": config.to_dict(), "config_hash": config_hash(config),
                                             "generator": GENERATOR_VERSION, "status": "running"})
    done = read_outcomes(out, resume)
    if resume:
        repair(out, done)
    return done


def failed_attempt(index: int, failure: JobFailure, llm: bool = False) -> dict[str, Any]:
    """The outcome of an attempt that gave no result (time or memory budget, a dead worker). On the
    llm backend an attempt out of time waited on the endpoint: an error (``--resume`` runs it
    again), not a drop."""
    if llm and failure.kind == "timeout":
        return {"index": index, "id": task_id(index), "status": ERROR, "family": None, "rounds": 0,
                "reason": timeout_reason(failure)}
    return {"index": index, "id": task_id(index), "status": "dropped", "family": None, "rounds": 0,
            "reason": failure.reason}


def build(out: Path, n: int, config: BuildConfig, workers: int = 1, resume: bool = False,
          on_progress: Callable[[int, int], None] | None = None, budget: Budget | None = None,
          on_pause: Callable[[float], None] | None = None,
          on_outcome: Callable[[dict[str, Any]], None] | None = None, executor: str = "local",
          ray_address: str | None = None) -> BuildSummary:
    """Build ``n`` accepted tasks into ``out``, holding the folder's lock (``backends.batch``). Raises
    ``backends.workers.Interrupted`` after Ctrl-C (what finished is kept for ``--resume``)."""
    problem = size_problem(n, workers, config.days)
    if problem is not None:
        raise BuildError(problem)
    check_families()  # a broken family definition or dialogue bank stops the build here, before any folder is touched
    check_banks()
    batch = BuildBatch(out, n, config, workers, executor, on_progress, on_outcome)
    return run_batch(out, batch, resume=resume, budget=budget, executor=executor, ray_address=ray_address,
                     on_pause=on_pause)


def _already_built(out: Path, n: int, config: BuildConfig, resume: bool) -> BuildSummary | None:
    """The summary of a resumed build that is already complete with these options and ``n`` tasks;
    refuses to shrink one that holds more."""
    previous = previous_build(out) if resume else None
    if previous and previous.get("status") == "complete" and previous.get("config_hash") == config_hash(config):
        if previous.get("accepted", 0) > n:
            raise BuildError(f"--n {n}: {out} already holds {previous['accepted']} tasks; "
                             "resume can extend a build, not shrink it")
        if previous.get("accepted", 0) == n and is_consistent(out):
            return BuildSummary(out, n, previous.get("attempts", 0), Counter(previous.get("drops", {})))
    return None


class BuildBatch:
    """``homer build`` as a ``backends.batch.Batch``: rounds of attempts sized by the strata's quotas
    (the first ``n`` kept attempts in index order make the dataset, whatever the workers)."""

    what, error, work_folder = "homer build", BuildError, True

    def __init__(self, out: Path, n: int, config: BuildConfig, workers: int, executor: str,
                 on_progress: Callable[[int, int], None] | None,
                 on_outcome: Callable[[dict[str, Any]], None] | None) -> None:
        self.out, self.n, self.config, self.workers, self.executor = out, n, config, workers, executor
        self.on_progress, self.on_outcome = on_progress, on_outcome
        self.figures: FigureLog | None = None  # per accepted attempt, its card figures and index line
        self.identities: KeptIdentities | None = None
        self.texts: TextTally | None = None  # per accepted attempt, its texts' rows (verifier.text_tally)
        self.next_index = 0
        self.running: set[int] = set()  # attempts handed to a worker whose outcomes have not come
        self._unique: UniqueSoFar | None = None
        self._accepted: AcceptedBelow | None = None
        self.guard: Breaker | None = None

    def start(self, resume: bool) -> BuildSummary | None:
        if (finished := _already_built(self.out, self.n, self.config, resume)) is not None:
            return finished
        # a repeat is made again (at its draft): the task it repeats may be one this run makes again
        self.done = {index: compact(item) for index, item in _prepare(self.out, self.config, resume).items()
                     if item["status"] != REPEAT}
        _before_fork(self.config, self.workers, self.executor)
        self.strata = Strata(self.config, self.n)
        self.max_attempts = self.strata.max_attempts()
        self.llm = self.config.backend == "llm"
        self.guard = Breaker(endpoint_probe(self.config) if self.llm else None)
        share_budget(self.config, self.workers)
        return None

    def accepted_indices(self) -> list[int]:
        return self.strata.keep(self._kept_unique())

    @contextmanager
    def log(self) -> Iterator[dataset.OutcomeLog]:
        """The outcome log, open while the rounds run, with the files kept beside it: the kept
        identities are closed when the rounds end (no worker reads them after), the texts and the
        figures by ``finalise``, or here when the rounds end by an interrupt or an error."""
        self._log = dataset.OutcomeLog(self.out, self.done)
        (self.out / dataset.WORK).mkdir(exist_ok=True)
        try:
            self.texts = TextTally(self.out / dataset.WORK)  # on the output's disk: it grows with the build
            self.figures = FigureLog(self.out / dataset.WORK)  # as the texts
            self.identities = KeptIdentities(self.out / dataset.WORK)  # read by the workers (see its module)
            self._seen = outcome_sink(cast(Breaker, self.guard), self._record, self.on_outcome)  # start() set it
            self._tally = KeptTally(self.strata) if self.on_progress else None
            for index in sorted(self.done) if self._tally else ():  # what a resumed build holds already
                assert self._tally is not None
                self._tally.add(index, self.done[index])
            with self._log:
                yield self._log
        except BaseException:  # finalise does not run: nothing else closes them
            for spool in (self.texts, self.figures):
                if spool is not None:
                    spool.close()
            raise
        finally:
            if self.identities is not None:
                self.identities.close()

    def _record(self, item: dict[str, Any]) -> None:
        if item["status"] == REPEAT:
            item = self._repeat_checked(item)
        found = item.pop(FIGURES, None)
        figures = cast(FigureLog, self.figures)  # log() made it
        if found is not None and item["index"] not in figures:
            card, line, rows = found
            figures.add(item["index"], card, line)
            cast(TextTally, self.texts).add(item["index"], rows)  # log() made it
        self._log.record(compact(item))
        self.running.discard(item["index"])
        firsts = self._unique_so_far().firsts()
        cast(KeptIdentities, self.identities).settle(self.done, firsts.is_kept, ERROR,
                                                     self.strata, lambda index: index not in self.running,
                                                     self.max_attempts)
        if self._tally is not None:
            assert self.on_progress is not None  # the tally is kept for it
            self._tally.add(item["index"], item)
            self.on_progress(self._tally.kept, self.n)

    def _repeat_checked(self, item: dict[str, Any]) -> dict[str, Any]:
        """A worker's repeat, if the outcomes so far make it one (they hold every kept task the
        worker was told of); else an attempt to make again (a ``--resume`` does)."""
        firsts = self._unique_so_far().firsts()
        if firsts.repeat_of(item["index"], list(item.get("keys") or []), list(item.get("words") or [])) is not None:
            return item
        return {"index": item["index"], "id": item["id"], "status": "dropped", "family": item.get("family"),
                "rounds": 0, "reason": "error: ended as a repeat of no task this build keeps"}

    def record(self, item: dict[str, Any]) -> None:
        self._seen(0, item)

    def failed(self, index: int, failure: JobFailure) -> dict[str, Any]:
        """A job that gave no result; with the identity of its draft when it had one (``run_attempt``)."""
        return with_draft(failed_attempt(index, failure, llm=self.llm), _draft_note(failure.note))

    def next_round(self, work: str | None) -> Round | None:
        strata, done = self.strata, self.done
        kept = self.accepted_indices()
        gap = strata.first_open(done, kept, self.max_attempts)
        # only kept attempts below the first open one are surely kept (see first_open); an attempt
        # the last round refused (its quota looked filled) may have reopened below where it stopped
        if not (sum(1 for i in kept if i < gap) < self.n and gap < self.max_attempts):
            return None
        self.next_index = gap  # a skipped attempt is tried when needed
        # the attempts this round is expected to need; more than that: those past a filled quota are skipped
        expected = strata.attempts_needed([i for i in kept if i < self.next_index]) / (1 - _drop_rate(done))
        batch_size = math.ceil(expected * 1.25) + self.workers
        batch: list[int] = []
        filled = strata.filled(kept)
        while len(batch) < batch_size and self.next_index < self.max_attempts:
            if self.next_index not in done and strata.is_open(self.next_index, filled):
                batch.append(self.next_index)
            self.next_index += 1
        per_world = tasks_per_world(self.config)
        # on Ray a job may run on a machine that does not see the output folder: its task comes back as bytes
        run = (functools.partial(run_attempt_carried, self.config, work=str(work)) if self.executor == "ray"
               else functools.partial(run_attempt, str(self.out), self.config, work=str(work)))
        if self.executor == "ray" and self.identities is not None:
            self.identities.copy_to_ray(ray_name(str(work)))
        return Round(batch, run,
                     self.workers, group=lambda index: index // per_world, wanted=self._wanted(),
                     spread=math.ceil(expected))

    def _wanted(self) -> Callable[[int], bool]:
        strata = self.strata

        def wanted(index: int) -> bool:
            """Fewer than its app count's quota kept below this attempt: it may still be kept (the
            kept ones are looked for only when the plain count says no: they are the accepted ones
            but those dropped as duplicates or past their quota, a few)."""
            if self._accepted is None or self._accepted.done is not self.done:
                self._accepted = AcceptedBelow(self.done, strata)
            count = strata.count_of(index)
            quota = strata.quota.get(count, 0)
            accepted = self._accepted.count(index)
            if accepted < quota:
                return True
            firsts = self._unique_so_far().firsts()
            not_kept = itertools.chain(firsts.dropped, firsts.past_quota)
            return accepted - sum(1 for i in not_kept if i < index and strata.count_of(i) == count) < quota

        def handed(index: int) -> bool:
            """``wanted``, noting each attempt it lets a worker have (see ``KeptIdentities.settle``).
            An attempt the kept identities passed over is refused whatever ``wanted`` says: it was
            written as one that never runs (its quota filled for good below it, so ``wanted`` says
            no to it already)."""
            passed_over = self.identities is not None and index < self.identities.settled
            if passed_over or not wanted(index):
                return False
            self.running.add(index)
            if self.identities is not None:  # on Ray: the holder has all written (a new round's made now)
                self.identities.sync()
            return True

        return handed

    def _unique_so_far(self) -> UniqueSoFar:
        if self._unique is None or self._unique.done is not self.done:
            self._unique = UniqueSoFar(self.done, self.strata)
        return self._unique

    def _kept_unique(self) -> list[int]:
        return self._unique_so_far().kept()

    def space_needed(self) -> int | None:
        return space_needed(self.out, self.n, self.config, len(self.accepted_indices()))

    def retry(self) -> None:
        for index in [i for i, item in self.done.items() if item.get("status") == ERROR]:
            del self.done[index]  # the endpoint is back: those attempts are run again
        self._unique = self._accepted = None  # outcomes taken back: what was counted of them starts over

    def stopped(self) -> Exception:
        return EndpointDown(f"endpoint down: {len(self.accepted_indices())} of {self.n} task(s) done, "
                            f"{cast(Breaker, self.guard).errors} attempt(s) ended by the endpoint; rerun with --resume")

    def finalise(self) -> BuildSummary:
        texts = self.texts if self.texts is not None else TextTally(self.out / dataset.WORK)
        figures = self.figures if self.figures is not None else FigureLog(self.out / dataset.WORK)
        try:
            firsts = self._unique_so_far().firsts()  # kept up to date as outcomes came: not worked out again
            summary = BuildSummary(self.out)
            return _finalize(self.out, self.n, self.config, self.done, summary,
                             (list(firsts.kept), repeats(self.done, firsts)), figures, texts)
        finally:
            texts.close()
            figures.close()
            if self.identities is not None:
                self.identities.close()


class KeptTally:
    """The tasks a build holds so far, counted as its outcomes arrive (for its progress): an
    accepted attempt counts unless it shares an identity key with one counted before, up to its app
    count's quota. Each outcome costs a few set look-ups (recounting the whole log after each one
    grew with the build's size); near-duplicates and which of two duplicates stays are settled
    when the build is finalised."""

    keys: set[str]
    unique: Counter[int]

    def __init__(self, strata: Strata) -> None:
        self.strata, self.keys, self.unique = strata, set(), Counter()

    def add(self, index: int, item: dict[str, Any]) -> None:
        keys, count = list(item.get("keys") or []), self.strata.count_of(index)
        if (item.get("status") == "accepted" and self.unique[count] < self.strata.quota.get(count, 0)
                and not any(key in self.keys for key in keys)):  # one past its quota: as if never run
            self.keys.update(keys)
            self.unique[count] += 1

    @property
    def kept(self) -> int:
        return sum(self.unique.values())


def _before_fork(config: BuildConfig, workers: int, executor: str) -> None:
    """Load in the parent what every forked worker would load for itself: the tokenizer's vocabulary
    (half a second of CPU per process; the parent reads it for the card anyway) and, offline, the
    task graph, the chat composers (their modules compile the banks' patterns on import), the Word
    template and the PDF writer (fpdf2 and its font tables: a quarter of a second of imports, which
    every worker's first world needed for its papers). A model client is left to each worker: its
    connections are not shared."""
    if workers < 2 or executor != "local":
        return
    counter_name()
    if config.backend != "llm":
        _graph(config)
        import fpdf  # noqa: F401 - office_env.formats.pdf_io's writer, imported there on first use

        from generators.other_work import OtherWork  # noqa: F401 - imported for the workers
        from generators.small_talk import SmallTalk  # noqa: F401
        from office_env.formats.docx_io import new_document

        new_document()


_SHARED_TEXTS = ("status", "family")  # an id or a drop's reason is an attempt's own: interning it keeps nothing


def compact(item: dict[str, Any]) -> dict[str, Any]:
    """An outcome as the parent holds it (the same keys and values): its texts that recur across
    outcomes (status, family, and the words of its description, which the duplicate check keeps)
    interned, so that a build holds each once instead of once per attempt (the words were about
    1 KB of every attempt's outcome)."""
    for key in _SHARED_TEXTS:
        if isinstance(item.get(key), str):
            item[key] = sys.intern(item[key])
    words = item.get("words")
    if isinstance(words, list):
        item["words"] = [sys.intern(w) if isinstance(w, str) else w for w in words]
    return item


def _drop_rate(done: dict[int, dict[str, Any]]) -> float:
    """The share of attempts dropped so far (at most 0.75), or the expected one before any ended."""
    accepted = sum(1 for item in done.values() if item["status"] in CANDIDATES)
    return min(0.75, (len(done) - accepted) / len(done)) if done else EXPECTED_DROP_RATE


def finish_dataset(out: Path, attempts: list[dict[str, Any]], index: str, card: str,
                   build_info: dict[str, Any]) -> None:
    """A build's or regeneration's last writes (``backends.batch.finish_folder``): the attempts, the
    index (``dataset.index_text``), the schemas and the card, then ``build.json``; then the work
    files go."""
    dataset.drop_shared_worlds(out)  # before the index says the dataset is whole
    files = [(dataset.ATTEMPTS, "".join(json.dumps(item) + "\n" for item in attempts).encode("utf-8")),
             ("index.jsonl", index.encode("utf-8")), *dataset.schema_files(),
             ("README.md", card.encode("utf-8"))]
    finish_folder(out, files, (dataset.BUILD, dataset.dumps(build_info).encode("utf-8")),
                  (dataset.WORK, dataset.PROGRESS))


def _own_record(folder: Path) -> dict[str, Any] | None:
    """The record of a task folder this build wrote, read back without the checks a stranger's
    dataset gets (None when it cannot be read, as a damaged task is left out of the index)."""
    try:
        record = load_json(folder / "task.json")
    except UntrustedInputError:
        return None
    return record if isinstance(record, dict) else None


def _kept_sums(out: Path, keep: list[int], done: dict[int, dict[str, Any]], figures: FigureLog,
               texts: TextTally) -> tuple[str, dict[str, Any]]:
    """The index and the card's figures of the kept tasks, in the index's order, from what the
    workers sent (``figures``, ``texts``); a task an earlier run of a resumed build made is read
    back for them (a damaged one is left out, as a stranger's dataset's would be)."""
    sums, lines, near, counted = CardSums(), [], [], set()
    for index in sorted(keep, key=task_id):
        found = figures.get(index)
        if found is not None:
            card, line = found
            keys, words = done[index].get("keys") or [], frozenset((done[index].get("words") or [None])[1:])
        else:
            plain = _own_record(out / dataset.TASKS / task_id(index))
            if plain is None:
                continue
            record = typed_records([plain])[0]
            task, rows = task_figures(record)  # of the record as the worker had it, as a worker does
            card, line = json.dumps(task), json.dumps(dataset.index_line(record), ensure_ascii=False)
            keys, words = duplicate_keys(record), frozenset(near_words(record)[1:])
            texts.add(index, rows)
        sums.add(json.loads(card))
        lines.append(line + "\n")
        near.append((task_id(index), keys, words))
        counted.add(index)
    return "".join(lines), sums.statistics(near_pairs(near), texts.totals(counted))


def repeats(done: dict[int, dict[str, Any]], firsts: FirstOfEach) -> dict[int, int]:
    """Every attempt that repeats a kept task, with the task it repeats: the candidates the duplicate
    check dropped, and the attempts that ended otherwise whose drafts repeat one (what ended them
    comes after: a worker that knew of the kept task would have stopped at the draft)."""
    found = dict(firsts.dropped)
    for index, item in done.items():
        drafted = item.get(DRAFTED)
        if drafted is not None and item["status"] not in (*CANDIDATES, ERROR):
            earlier = firsts.repeat_of(index, list(drafted["keys"]), list(drafted["words"]))
            if earlier is not None:
                found[index] = earlier
    return found


def repeat_line(item: dict[str, Any], original: int, kept: dict[str, Any]) -> dict[str, Any]:
    """The ``attempts.jsonl`` line of attempt ``item``, which repeats the kept attempt ``original``
    (``kept`` its outcome): the same however the attempt ended (accepted, stopped at its draft, or
    dropped later), so its rounds (whether its chat was written) are not in it."""
    drafted = item.get(DRAFTED) or {}
    same = set(item.get("keys") or drafted.get("keys") or ()) & set(kept.get("keys") or ())
    why = "the same task as" if same else "almost the same description as"
    line = {"index": item["index"], "id": item["id"], "status": "dropped",  # in this order, however it ended
            "reason": f"duplicate: {why} {task_id(original)}", "family": item.get("family"),
            **{k: v for k, v in item.items() if k not in ("status", "reason", "staged", "keys", "words", "rounds",
                                                       DRAFTED)}}
    if drafted:
        line.update(family=drafted["family"], app_count=drafted["app_count"])
    return line


def _finalize(out: Path, n: int, config: BuildConfig, done: dict[int, dict[str, Any]], summary: BuildSummary,
              firsts: tuple[list[int], dict[int, int]], figures: FigureLog,
              texts: TextTally) -> BuildSummary:
    """The dataset's last files from the outcomes; ``firsts``: :func:`unique_accepted` of them."""
    accepted, duplicates = firsts
    stopped = {index for index, item in done.items() if item["status"] == REPEAT}  # a resume makes its own again
    for index, original in duplicates.items():
        done[index] = repeat_line(done[index], original, done[original])
    for index, item in done.items():
        if DRAFTED in item:
            done[index] = {k: v for k, v in item.items() if k != DRAFTED}
    strata = Strata(config, n)
    keep = strata.keep(accepted)
    kept = {task_id(index) for index in keep}
    tasks = out / dataset.TASKS
    for folder in (sorted(tasks.iterdir()) if tasks.is_dir() else []):
        if folder.name not in kept:  # more succeeded than a quota asked for, or a stray folder
            shutil.rmtree(folder, ignore_errors=True) if folder.is_dir() else folder.unlink(missing_ok=True)
    last = keep[-1] if keep else max(done, default=-1)
    filled = strata.filled(keep)  # an attempt after its app count's quota filled is not one the build needed
    needed = [i for i in sorted(done) if (i <= last and strata.is_open(i, filled)) or not keep]
    considered = [done[i] for i in needed]
    drops = Counter(drop_category(item["reason"]) for item in considered if item["status"] not in ("accepted", ERROR))
    build_info = {"config": config.to_dict(), "config_hash": config_hash(config), "generator": GENERATOR_VERSION,
                  "tasks_per_world": tasks_per_world(config), "status": "complete" if len(keep) >= n and not any(
                      item["status"] == ERROR for item in considered) else "incomplete",
                  "attempts": len(considered), "accepted": len(keep), "drops": dict(sorted(drops.items()))}
    errors = sum(1 for item in considered if item["status"] == ERROR)
    if errors:  # ended by the endpoint: not drops; --resume runs them again
        build_info["errors"] = errors
    build_info.update(not_kept_info(config, considered))
    index_text, stats = _kept_sums(out, keep, done, figures, texts)
    finish_dataset(out, considered, index_text, render_card(stats, build_info), build_info)
    summary.accepted, summary.attempts, summary.drops = len(keep), len(considered), drops
    summary.repeats_stopped = sum(1 for i in needed if i in stopped)  # one past its quota or the end: not a drop
    summary.reasons = [str(item.get("reason") or "") for item in considered if item["status"] != "accepted"]
    summary.gameability = stats["gameability"]
    return summary
