"""Evaluate an agent on a dataset: ``evaluate(dataset_dir, out_dir, config)``.

For every task (and every trial): a fresh copy of the task's initial testbed in the run's work
folder (``backends.scratch``: a memory file system when the machine has one; removed afterwards),
the history context (``harness.context.build_context``,
built once per task; summaries cached under ``out_dir/.cache``), the agent's run, then the task's
criteria on the copy (``office_env.evaluate_criteria``). Tasks run in worker processes when
``workers > 1``: ``EvalBatch``, run by ``backends.batch`` (lock, resume, finalisation). Every task
is read, checked and digested first, on the workers too (``harness.task_survey``); a task whose
``task.json`` is unreadable or unusable is reported and skipped; the rest is evaluated.

The output folder::

    run.json        the state (running, then finished), the configuration, the dataset's path, content
                    fingerprint and task digests, the figures, skipped tasks (harness.run_folder)
    results.jsonl   one line per task and trial, sorted by id then trial
    report.md       the Markdown report (harness.report)
    .cache/         summaries of the history (kept: a rerun into the same folder reuses them)

The LLM agent's calls are not answered from the response cache (trials must be independent), and
its conversation never holds the criteria, the memory, the evidence marks or the oracle plan.
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from backends.batch import Round, finish_folder, run_batch
from backends.carried_folder import CarriedFolder, pack_folder, unpack_folder
from backends.dataset_reader import dataset_fingerprint, ensure_writable_folder, task_day_first
from backends.hf_folder import HfFolderError, is_hf_export, rebuild_dataset
from backends.llm.failures import RefusalWatch, RunRefused
from backends.scratch import node_work_folder
from backends.task_record import plan_calls
from backends.workers import Budget, JobFailure
from harness.agent_plugins import AgentLoadError, build_plugin, check_agent_name, is_plugin
from harness.agents import DEFAULT_STEP_CAP, STOP_ERROR, Agent, Episode, Trajectory
from harness.context import ContextConfig
from harness.report import render_report
from harness.result_row import ResultRow
from harness.run_folder import (
    CACHE,
    DATASET,
    FINISHED,
    PROGRESS,
    REPORT,
    REPORT_HTML,
    RUN,
    RUNNING,
    WORK,
    ProgressLog,
    RunFolderError,
    check_out,
    clear,
    earlier_run,
    now_text,
    read_results,
    remove_leftovers,
    state_bytes,
    write_results,
    write_state,
)
from harness.task_survey import survey
from harness.totals import RunTotals
from office_env.evaluation import SEMANTICS
from office_env.untrusted import UntrustedInputError, name_problem, printable

if TYPE_CHECKING:
    from backends.task_record import TaskRecord

# The office's tools, file formats and scorers load where a task runs (a worker), not with the
# run: a run that reads its dataset and finds nothing to do starts in a fraction of a second.

AGENTS = ("llm", "oracle", "none")
REQUESTS = ("intent", "description")


class EvalError(ValueError):
    """Bad evaluation input; the message names the option or folder."""


@dataclass(frozen=True)
class EvalConfig:
    agent: str
    context: ContextConfig
    trials: int = 1
    step_cap: int = DEFAULT_STEP_CAP
    workers: int = 1
    model: str | None = None
    base_url: str | None = None
    llm_config: str | None = None
    request: str = "intent"  # what the agent is asked: the task's intent, or its full description (gates)
    semantics: str = "homer"  # how criteria are scored: homer's checks, or OfficeBench's own verdicts
    llm_overrides: tuple[tuple[str, str], ...] = ()  # --llm-set KEY=VALUE (value as JSON): over the file's
    max_context_tokens: int | None = None  # a history context over this is an error run, never sent
    limit: int | None = None  # only the first N tasks of the dataset, in its order (--limit)
    task_ids: tuple[str, ...] = ()  # only these tasks (--task-ids)
    sampling: tuple[tuple[str, Any], ...] = ()  # what the agent's requests carry (temperature, reply limit, ...)

    def validate(self) -> "EvalConfig":
        if self.agent not in AGENTS:
            try:
                check_agent_name(self.agent)  # a user's own agent, as module:Class
            except AgentLoadError as exc:
                raise EvalError(str(exc)) from None
        if self.request not in REQUESTS:
            raise EvalError(f"request {self.request!r}: must be one of {', '.join(REQUESTS)}")
        if self.semantics not in SEMANTICS:
            raise EvalError(f"--semantics {self.semantics!r}: must be one of {', '.join(SEMANTICS)}")
        if self.max_context_tokens is not None and (isinstance(self.max_context_tokens, bool) or
                                                     not isinstance(self.max_context_tokens, int) or
                                                     self.max_context_tokens < 1):
            raise EvalError(f"--max-context-tokens must be an integer >= 1 (got {self.max_context_tokens!r})")
        for name, value in (("--trials", self.trials), ("--step-cap", self.step_cap), ("--workers", self.workers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EvalError(f"{name} must be an integer >= 1 (got {value!r})")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 1):
            raise EvalError(f"--limit must be an integer >= 1 (got {self.limit!r})")
        odd = [t for t in self.task_ids if not isinstance(t, str) or name_problem(t) is not None or "/" in t
               or t in (".", "..")]
        if odd:
            raise EvalError(f"--task-ids: {printable(str(odd[0]))[:80]!r} is not a task id")
        if len(set(self.task_ids)) != len(self.task_ids):
            raise EvalError("--task-ids: an id is given twice")
        try:
            self.context.validate()
        except ValueError as exc:
            raise EvalError(str(exc)) from None
        if self.needs_client():
            from backends.llm import LLMConfigError

            try:
                llm_settings(self)
            except LLMConfigError as exc:
                raise EvalError(str(exc)) from None
        return self

    def needs_client(self) -> bool:
        """An endpoint is used: by the LLM agent, or by the context (embeddings)."""
        return self.agent == "llm" or bool(getattr(self.context, "embeddings", None))

    def to_dict(self) -> dict[str, Any]:
        context = asdict(self.context) if is_dataclass(self.context) else dict(vars(self.context))
        context = {k: (str(v) if isinstance(v, Path) else v) for k, v in context.items()}
        return {"agent": self.agent, "context": context, "context_label": self.context.label(),
                "trials": self.trials, "step_cap": self.step_cap, "workers": self.workers, "model": self.model,
                "base_url": self.base_url, "llm_config": self.llm_config, "request": self.request,
                **({"semantics": self.semantics} if self.semantics != "homer" else {}),
                **({"llm_overrides": [list(p) for p in self.llm_overrides]} if self.llm_overrides else {}),
                **({"max_context_tokens": self.max_context_tokens} if self.max_context_tokens else {}),
                **({"limit": self.limit} if self.limit is not None else {}),
                **({"task_ids": list(self.task_ids)} if self.task_ids else {}),
                **({"sampling": dict(self.sampling)} if self.sampling else {})}

    def takes(self, task_id: str, taken: int) -> bool:
        """Whether this run evaluates ``task_id``, ``taken`` tasks of the dataset's order being
        chosen before it (``--task-ids``, then the first ``--limit`` of those)."""
        if self.task_ids and task_id not in self.task_ids:
            return False
        return self.limit is None or taken < self.limit

    def unknown_ids(self, ids: Iterable[str]) -> list[str]:
        """The ids of ``task_ids`` that are not among a dataset's ``ids``."""
        present = set(ids)
        return [t for t in self.task_ids if t not in present]


@dataclass
class RunSummary:
    """A finished run: its figures and skipped tasks; its rows are in ``out/results.jsonl``
    (:meth:`iter_rows` reads them one at a time; ``rows`` reads them all)."""

    out: Path
    config: EvalConfig
    skipped: list[dict[str, str]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    runs: int = 0  # rows in results.jsonl (tasks times trials)
    errors: list[dict[str, Any]] = field(default_factory=list)  # runs that ended with an error: id, trial, error

    @property
    def overall(self) -> dict[str, Any]:
        return self.metrics["groups"]["overall"]

    @property
    def pass_rate(self) -> float | None:
        return self.overall["pass_rate"]

    @property
    def pass_k(self) -> float | None:
        return self.overall["pass_k"]

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """The result rows, sorted by task and trial, read from ``results.jsonl`` as they are needed."""
        return read_results(self.out)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every result row (read from ``results.jsonl``; a large run's callers use :meth:`iter_rows`)."""
        return list(self.iter_rows())


# -- per worker process ------------------------------------------------------------------------

def llm_settings(config: "EvalConfig") -> Any:
    """The endpoint settings, without a response cache: a cached answer would make every trial the
    same run. Raises ``LLMConfigError``."""
    from backends.llm.settings import settings_for

    return replace(settings_for(config), cache_path=None)


def sampling_of(settings: Any, model: str) -> tuple[tuple[str, Any], ...]:
    """What the agent's requests to ``model`` carry besides the conversation, as run.json records
    it: the temperature (None: none sent), the reply limit under the parameter the model takes, and
    ``parallel_tool_calls`` when it is sent."""
    sampling: list[tuple[str, Any]] = [("temperature", settings.temperature_for(model)),
                                       (settings.token_parameter_for(model), settings.max_tokens_for("agent", model))]
    parallel = settings.parallel_tool_calls_for(model)
    if parallel is not None:
        sampling.append(("parallel_tool_calls", parallel))
    return tuple(sampling)


@lru_cache(maxsize=4)
def _client(config: "EvalConfig") -> Any:
    """One client per worker process and endpoint configuration (it keeps its connections)."""
    from backends.llm import LLMClient, Usage

    return LLMClient(llm_settings(config), usage=Usage())


def _config_client(config: EvalConfig) -> Any:
    return _client(config) if config.needs_client() else None


def make_agent(config: EvalConfig, record: TaskRecord) -> Agent:
    """The agent for one run: the oracle gets the record's plan from here, never through the episode."""
    from harness.agents import LLMAgent, NoneAgent, OracleAgent  # an LLM agent's client loads with it

    if config.agent == "oracle":
        return OracleAgent(plan_calls(record.oracle))
    if config.agent == "none":
        return NoneAgent()
    if is_plugin(config.agent):
        return build_plugin(config.agent)
    return LLMAgent(_config_client(config))


def record_problem(record: TaskRecord, request: str) -> str | None:
    """Why a task cannot be evaluated (None when it can). Its shape is the reader's to check (a
    record the schema refuses never gets here); what is left is what the schema cannot say."""
    if not getattr(record, request).strip():
        return f"{request}: missing or empty"
    from backends.dataset_reader import task_now
    from office_env.evaluation.catalog import validate_criteria

    try:
        task_now(record)
    except ValueError as exc:
        return f"unusable record ({exc.__class__.__name__}: {exc})"
    problems = validate_criteria(record.criteria())
    if problems:
        return "; ".join(str(p) for p in problems[:3])
    return None


def _task_fields(record: TaskRecord) -> dict[str, Any]:
    """What every row says of its task (``ResultRow``'s ``app_count``, ``apps`` and ``family``)."""
    return {"app_count": record.app_count, "apps": list(record.apps), "family": record.family}


def run_task(dataset_dir: str, task_id: str, record: TaskRecord, out_dir: str, config: EvalConfig,
             work_dir: str | None = None) -> dict[str, Any]:
    """Every trial of one task; ``{"id", "rows"}``, or ``{"id", "skipped"}`` when the task cannot run
    (an unexpected failure skips that task with its reason; the run goes on). ``work_dir``: where
    the trials' copies go (default ``out_dir/.work``)."""
    try:
        return _run_task(dataset_dir, task_id, record, out_dir, config, work_dir)
    except Exception as exc:
        return {"id": task_id, "skipped": f"evaluation failed: {exc.__class__.__name__}: {str(exc)[:300]}"}


def _run_task(dataset_dir: str, task_id: str, record: TaskRecord, out_dir: str, config: EvalConfig,
              work_dir: str | None = None) -> dict[str, Any]:
    from backends.dataset_reader import task_now
    from harness.context import build_context
    from office_env import Workspace, default_registry
    from office_env.evaluation.officebench_semantics import scorer

    folder = Path(dataset_dir) / "tasks" / task_id
    testbed, reference = folder / "testbed", folder / "reference"
    reference_dir = reference if reference.is_dir() else None
    out = Path(out_dir)
    scratch = Path(work_dir) if work_dir is not None else out / WORK
    if not testbed.is_dir():
        return {"id": task_id, "skipped": f"{testbed}: missing"}
    now = task_now(record)
    try:
        context = build_context(record, config.context, client=_config_client(config),
                                summary_cache=out / CACHE)
    except Exception as exc:  # the context could not be built (e.g. an embeddings endpoint failed for good)
        first = str(exc).splitlines()[0][:300] if str(exc) else ""
        if getattr(exc, "transient", False):  # the endpoint's failure: --resume tries the task again
            return {"id": task_id, "skipped": f"error: endpoint: history context: {first}"}
        if getattr(exc, "refused", False):  # e.g. an embedding model not served: the run stops
            return {"id": task_id, "skipped": f"error: refused: history context: {first}"}
        return {"id": task_id, "skipped": f"history context: {exc.__class__.__name__}: {first}"}
    registry = default_registry()
    rows: list[ResultRow] = []
    if config.max_context_tokens is not None and context.tokens > config.max_context_tokens:
        # the history does not fit the model the run is for: an error, neither a pass nor a fail
        error = (f"error: context: the history context has {context.tokens:,} tokens, over --max-context-tokens "
                 f"{config.max_context_tokens:,}")
        return {"id": task_id, "rows": [ResultRow(
            id=task_id, trial=trial, **_task_fields(record), passed=False, context_tokens=context.tokens,
            context_units=list(context.units), evidence_recall=context.evidence_recall,
            trajectory=Trajectory(error=error, stop_reason=STOP_ERROR).to_dict(), error=error).to_dict()
            for trial in range(1, config.trials + 1)]}
    for trial in range(1, config.trials + 1):
        work = scratch / f"{task_id}.t{trial}"
        shutil.rmtree(work, ignore_errors=True)
        workspace = Workspace(testbed, now=now).copy_to(work)  # a copy: never a link into the dataset
        try:
            episode = Episode(task_id=task_id, user_name=record.user.name, username=record.user.username,
                              now=record.now.to_dict(), request=getattr(record, config.request), context=context.text,
                              workspace=workspace, registry=registry, step_cap=config.step_cap)
            try:
                trajectory = make_agent(config, record).run(episode)
                if config.agent == "oracle" and not record.oracle:
                    trajectory.error = "the task has no oracle plan"
            except Exception as exc:  # an agent bug must not stop the run: it fails this trial
                trajectory = Trajectory(error=f"agent crashed: {exc.__class__.__name__}: {exc}"[:500],
                                        stop_reason=STOP_ERROR)
            report = scorer(config.semantics)(workspace, record.criteria(), reference_dir, initial_dir=testbed,
                                              day_first=task_day_first(record))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        rows.append(ResultRow(
            id=task_id, trial=trial, **_task_fields(record), passed=report.passed,
            criteria=[r.to_dict() for r in report.results], steps=trajectory.step_count,
            context_tokens=context.tokens, context_units=list(context.units),
            evidence_recall=context.evidence_recall, trajectory=trajectory.to_dict(), error=trajectory.error,
            context_whole=context.whole))
    # the oracle and none agents' own first trial is their reference: not measured twice
    own = rows[0].passed if rows and not rows[0].error and config.agent in ("oracle", "none") else None
    references = _references(record, testbed, reference_dir, now, scratch / f"{task_id}.reference", config,
                             {config.agent: own} if own is not None else {})
    for row in rows:
        row.reference = references
    return {"id": task_id, "rows": [row.to_dict() for row in rows]}


def _references(record: TaskRecord, testbed: Path, reference_dir: Path | None, now: Any, work: Path,
                config: EvalConfig, known: dict[str, bool]) -> dict[str, bool | None]:
    """Whether doing nothing passes the task, and whether its oracle plan does (None: no plan, or
    the check could not run): the two ends ONS is normalized between (``harness.scores``).
    ``known``: what the run itself already measured."""
    from office_env import Workspace
    from office_env.evaluation.officebench_semantics import scorer
    from office_env.replays import replay_plan

    score, day_first = scorer(config.semantics), task_day_first(record)
    none = known.get("none")
    if none is None:
        try:
            none = score(Workspace(testbed, now=now), record.criteria(), reference_dir, initial_dir=testbed,
                         day_first=day_first).passed
        except Exception:
            none = None
    oracle = known.get("oracle")
    if oracle is None and record.oracle:
        shutil.rmtree(work, ignore_errors=True)
        try:  # a copy of its own: never a link into the dataset
            calls = plan_calls(record.oracle)
            oracle = replay_plan(testbed, calls, now, work).score(
                record.criteria(), reference_dir, initial_dir=testbed, day_first=day_first, scorer=score).passed
        except Exception:
            oracle = None
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return {"none": none, "oracle": oracle}


# -- the run (in the parent) ------------------------------------------------------------------

def failed_rows(task_id: str, record: TaskRecord | None, trials: int, failure: JobFailure) -> dict[str, Any]:
    """Rows for a task whose runs gave no result (time or memory budget, a dead worker): failed,
    with the reason as their error (``record`` None: a task that could not be read again)."""
    fields = _task_fields(record) if record is not None else {"app_count": None, "apps": [], "family": None}
    rows = [ResultRow(id=task_id, trial=trial, **fields, passed=False, error=failure.reason).to_dict()
            for trial in range(1, trials + 1)]
    return {"id": task_id, "rows": rows}


def _settings(config: dict[str, Any]) -> dict[str, Any]:
    """What makes two runs the same run (the worker count does not)."""
    return {k: v for k, v in config.items() if k != "workers"}


def _progress_header(config: EvalConfig, fingerprint: str) -> dict[str, Any]:
    return {"header": {"config": _settings(config.to_dict()), "dataset_fingerprint": fingerprint}}


def _same_run(config: EvalConfig, dataset: Path, fingerprint: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a ``run.json`` found in --out is this run (an older one without a fingerprint: by path)."""
    def same(run: dict[str, Any]) -> bool:
        if not isinstance(run.get("config"), dict) or _settings(run["config"]) != _settings(config.to_dict()):
            return False
        if "dataset_fingerprint" in run:
            return run["dataset_fingerprint"] == fingerprint
        return run.get("dataset") == str(dataset.resolve())
    return same


def evaluate(dataset_dir: Path | str, out_dir: Path | str, config: EvalConfig,
             on_progress: Callable[[int, int], None] | None = None, *, resume: bool = False,
             budget: Budget | None = None, on_outcome: Callable[[dict[str, Any]], None] | None = None,
             executor: str = "local", ray_address: str | None = None, overwrite: bool = False) -> RunSummary:
    """Run ``config.agent`` on every task of ``dataset_dir``; write results, report and config into
    ``out_dir`` (holding its lock). An ``out_dir`` holding an earlier run is continued with
    ``resume`` (same configuration) or replaced with ``overwrite``, else refused. Raises
    :class:`EvalError` for bad input (before any work), and ``backends.workers.Interrupted`` after
    Ctrl-C (finished rows are kept for ``resume``)."""
    dataset, out = Path(dataset_dir), Path(out_dir)
    export = check_run(dataset, out, config, resume=resume, overwrite=overwrite)
    try:
        existed = out.exists()
        ensure_writable_folder(out)
    except RunFolderError as exc:
        raise EvalError(str(exc)) from None
    except OSError as exc:
        raise EvalError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    rows_skipped: list[dict[str, str]] = []
    source = dataset
    if export:  # its tasks as a dataset folder in the run's own folder, read like any other
        dataset = out / DATASET
        try:
            rows_skipped = _rebuild(source, dataset)
            _check_tasks(dataset, config)
        except EvalError:
            shutil.rmtree(dataset, ignore_errors=True)
            if not existed:
                shutil.rmtree(out, ignore_errors=True)
            raise
    batch = EvalBatch(dataset, out, config, on_progress, on_outcome, overwrite, rows_skipped,
                      export=source if export else None, executor=executor)
    try:
        return run_batch(out, batch, resume=resume, budget=budget, executor=executor, ray_address=ray_address)
    except RunFolderError as exc:
        raise EvalError(str(exc)) from None


def check_run(dataset: Path, out: Path, config: EvalConfig, *, resume: bool = False, overwrite: bool = False) -> bool:
    """Raise :class:`EvalError` for a run :func:`evaluate` would refuse before any work (bad
    configuration, no dataset, --task-ids it lacks, an --out it must not write), writing nothing:
    a command asks before it shows progress. True for a Hugging Face export (its task ids are
    checked once it is read back)."""
    config.validate()
    export = is_hf_export(dataset)
    if not export and not (dataset / "tasks").is_dir():
        raise EvalError(f"{dataset}: not a dataset folder (no tasks/)")
    if not export:
        _check_tasks(dataset, config)
    try:
        check_out(out, resume=resume, overwrite=overwrite)
    except RunFolderError as exc:
        raise EvalError(str(exc)) from None
    return export


def _check_tasks(dataset: Path, config: EvalConfig) -> None:
    """Refuse, before any work, an oracle run on a dataset without plans and ``--task-ids`` it lacks."""
    if config.agent == "oracle":
        _check_oracle_plans(dataset)
    if config.task_ids:
        unknown = config.unknown_ids(entry.name for entry in os.scandir(dataset / "tasks"))
        if unknown:
            raise EvalError(f"--task-ids: no task {', '.join(printable(t) for t in unknown[:5])} in {dataset}"
                            + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""))


def _rebuild(export: Path, dataset: Path) -> list[dict[str, str]]:
    """An export's tasks written into ``dataset`` (replacing an earlier copy: the same bytes); the
    rows that could not be read, as skipped entries."""
    if dataset.is_symlink() or dataset.is_file():
        dataset.unlink()
    shutil.rmtree(dataset, ignore_errors=True)
    try:
        rebuilt = rebuild_dataset(export, dataset)
    except HfFolderError as exc:
        raise EvalError(str(exc)) from None
    except OSError as exc:
        raise EvalError(f"{export}: cannot be read back into {dataset} ({exc.strerror or exc})") from None
    skipped = [{"id": where, "error": f"{export}: {where}: {reason}"} for where, reason in rebuilt.skipped]
    if not rebuilt.written:
        first = ": ".join(rebuilt.skipped[0]) if rebuilt.skipped else "it holds no row"
        raise EvalError(f"{export}: no task could be read from the export ({first})")
    return skipped


def _check_oracle_plans(dataset: Path) -> None:
    """The oracle agent replays plans: a dataset with none (a Plus split of seed tasks) is refused."""
    from backends.dataset_reader import iter_tasks

    if not any(task.task is not None and task.task.oracle for task in iter_tasks(dataset)):
        raise EvalError(f"--agent oracle: no task of {dataset} has an oracle plan to replay (tasks regenerated "
                        "from seeds come without one); use --agent llm or --agent none")


def _lines(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    if "skipped" in outcome:
        return [{"id": outcome["id"], "skipped": outcome["skipped"]}]
    return outcome["rows"]


def _record(dataset_dir: str, task_id: str) -> tuple[TaskRecord | None, str | None]:
    """A task's record read again (with the checks the parent's reading made), or why it cannot be."""
    from backends.dataset_reader import load_task

    loaded = load_task(Path(dataset_dir), task_id)
    return loaded.task, (loaded.error or "unreadable") if loaded.task is None else None


def _run_job(dataset_dir: str, out_dir: str, config: EvalConfig, work_dir: str | None, task_id: str
             ) -> dict[str, Any]:
    """One task in a worker: its record read, then :func:`run_task`; the outcome names the token
    counter that counted its context (``counter``, for the report: the parent need not load it)."""
    record, problem = _record(dataset_dir, task_id)
    if record is None:  # changed since the run read it
        return {"id": task_id, "skipped": f"evaluation failed: {problem}"}
    outcome = run_task(dataset_dir, task_id, record, out_dir, config, work_dir)
    if "rows" in outcome:
        from backends.tokens import counter_name

        outcome["counter"] = counter_name()
    return outcome


@dataclass(frozen=True)
class TaskOnTheWay:
    """A task a Ray node runs without seeing the dataset: its folder is packed into bytes
    (``backends.carried_folder``) only as the job is handed to Ray, so that the parent holds no more
    packed tasks than jobs in flight; a folder that cannot be packed travels as its reason."""

    dataset: str
    task_id: str

    def __reduce__(self) -> tuple[Any, ...]:
        try:
            folder: CarriedFolder | str = pack_folder(Path(self.dataset) / "tasks" / self.task_id, untrusted=True)
        except (UntrustedInputError, OSError) as exc:
            folder = f"{exc.__class__.__name__}: {str(exc)[:300]}"
        return (_CarriedTask, (self.dataset, self.task_id, folder))


@dataclass(frozen=True)
class _CarriedTask:
    dataset: str          # the driver's dataset folder: named in a skipped task's reason as a local run does
    task_id: str
    folder: CarriedFolder | str


def _run_carried_job(config: EvalConfig, work: str, task: _CarriedTask) -> dict[str, Any]:
    """One task on a Ray node that may not see the dataset or ``--out``: its folder written in this
    machine's own work folder (``backends.scratch.node_work_folder``), run there, its rows returned."""
    if isinstance(task.folder, str):
        return {"id": task.task_id, "skipped": f"evaluation failed: {task.folder}"}
    node = node_work_folder(work)
    dataset = node / f"dataset-{os.getpid()}"
    try:
        unpack_folder(task.folder, dataset / "tasks")
        outcome = _run_job(str(dataset), str(node / "out"), config, str(node / "trials"), task.task_id)
    finally:
        shutil.rmtree(dataset / "tasks" / task.task_id, ignore_errors=True)
    if "skipped" in outcome:
        outcome["skipped"] = outcome["skipped"].replace(str(dataset), task.dataset)
    return outcome


class _Refusals:
    """An eval run's guard (``backends.batch.Guard``): the server refusing every request alike
    stops the run at once (``backends.llm.failures``); no pause helps."""

    def __init__(self) -> None:
        self.watch = RefusalWatch()

    def tripped(self) -> bool:
        return self.watch.tripped()

    def recovered(self, on_wait: Callable[[float], None] | None = None) -> bool:
        """Never: the run stops (the finished tasks stay in the progress file for --resume)."""
        raise RunRefused(self.watch.message() + "; rerun with --resume once fixed")


# What a run writes before it can measure its own (the tour's llm run, ``docs/results.md``): about
# 3.5 KiB of result line a trial, and about 40 KiB of reports.
ROW_BYTES = 3_500
REPORT_BYTES = 40 * 1024


class EvalBatch:
    """``homer eval`` as a ``backends.batch.Batch``: one item per task (all its trials), in one round."""

    what, error, work_folder = "homer eval", EvalError, True

    def __init__(self, dataset: Path, out: Path, config: EvalConfig,
                 on_progress: Callable[[int, int], None] | None,
                 on_outcome: Callable[[dict[str, Any]], None] | None, overwrite: bool,
                 rows_skipped: list[dict[str, str]] | None = None, export: Path | None = None,
                 executor: str = "local") -> None:
        self.dataset, self.out, self.config, self.overwrite = dataset, out, config, overwrite
        self.executor = executor
        self.rows_skipped = rows_skipped or []  # an export's rows that could not be read back
        self.export = export  # the Hugging Face export the dataset folder was rebuilt from
        self.on_progress, self.on_outcome = on_progress, on_outcome
        self.guard = _Refusals()  # the server refusing every request alike stops the run (backends.llm.failures)
        self.pending = True
        self.counter: str | None = None  # the token counter a worker counted with (backends.tokens)

    def start(self, resume: bool) -> None:
        dataset, out, config = self.dataset, self.out, self.config
        # under the folder's lock: no other writer's temporary file is in flight
        if self.overwrite:
            clear(out)  # the earlier run's files, and any temporary file a killed write left
        else:
            remove_leftovers(out)
        self.started = time.perf_counter()
        self.summary = RunSummary(out=out, config=config, skipped=list(self.rows_skipped))
        # every task read, checked and digested on the workers (harness.task_survey); the parent keeps
        # a few bytes a task, not the tasks: a worker reads its task again when it runs it (_run_job)
        tasks = survey(dataset, config.takes, partial(record_problem, request=config.request), config.workers)
        self.summary.skipped.extend(tasks.skipped)
        jobs, digests = tasks.jobs, tasks.digests
        fingerprint = dataset_fingerprint(digests)
        self.header = _progress_header(config, fingerprint)
        self.earlier = earlier_run(out, self.header, config.trials, _same_run(config, dataset, fingerprint)) \
            if resume else None
        self.identity = {"config": config.to_dict(), "dataset": str(dataset.resolve()),
                         "dataset_fingerprint": fingerprint, "task_digests": digests,
                         **({"export": str(self.export.resolve())} if self.export is not None else {})}
        self.total = len(jobs)
        write_state(out, {"state": RUNNING, **self.identity, "started": now_text()})  # the folder names its run first
        if config.needs_client():  # the workers split the endpoint's rate budget between them
            from backends.llm.rate_limit import set_share

            set_share(1 / config.workers)
        done = self.earlier.done if self.earlier is not None else set()
        self.jobs = frozenset(jobs)
        self.todo = [task_id for task_id in jobs if task_id not in done]
        self.done = self.total - len(self.todo)
        shutil.rmtree(out / WORK, ignore_errors=True)  # an older run's copies

    def _kept(self) -> Iterator[dict[str, Any]]:
        """The lines an earlier attempt finished, of this run's tasks (its skipped tasks noted as they pass)."""
        if self.earlier is None:
            return
        for item in self.earlier.items(self.jobs.__contains__):
            if "skipped" in item:
                self.summary.skipped.append({"id": item["id"], "error": item["skipped"]})
            yield item

    @contextmanager
    def log(self) -> Iterator[ProgressLog]:
        # the interrupted run's lines are written again with the header, so that a later resume keeps them too
        with ProgressLog(self.out, self.header, self._kept()) as log:
            self.progress = log
            self.earlier = None  # read: nothing of it is held any longer
            if self.on_progress:
                self.on_progress(self.done, self.total)
            yield log

    def _collect(self, outcome: dict[str, Any]) -> None:
        """One finished task: its lines appended to the progress file (synced), nothing held."""
        self.done += 1
        for reason in ([outcome["skipped"]] if "skipped" in outcome else [r.get("error") for r in outcome["rows"]]):
            self.guard.watch.see(reason if isinstance(reason, str) and reason.startswith("error:") else None)
        if "skipped" in outcome:
            self.summary.skipped.append({"id": outcome["id"], "error": outcome["skipped"]})
        self.counter = outcome.get("counter") or self.counter
        self.progress.write(_lines(outcome))
        if self.on_outcome:  # what this run did (resumed tasks are counted once, up front)
            self.on_outcome(outcome)
        if self.on_progress:
            self.on_progress(self.done, self.total)

    def record(self, outcome: dict[str, Any]) -> None:
        self._collect(outcome)

    def next_round(self, work: str | None) -> Round | None:
        todo, self.pending = (self.todo if self.pending else []), False
        if not todo:
            return None
        workers = min(self.config.workers, max(1, len(todo)))
        if self.executor == "ray" and work is not None:  # a node may see neither the dataset nor --out
            return Round([TaskOnTheWay(str(self.dataset), task_id) for task_id in todo],
                         partial(_run_carried_job, self.config, work), workers)
        return Round(todo, partial(_run_job, str(self.dataset), str(self.out), self.config, work), workers)

    def failed(self, task_id: str | TaskOnTheWay, failure: JobFailure) -> dict[str, Any]:
        if isinstance(task_id, TaskOnTheWay):
            task_id = task_id.task_id
        return failed_rows(task_id, _record(str(self.dataset), task_id)[0], self.config.trials, failure)

    def space_needed(self) -> int | None:
        """About the bytes the run still writes: the progress file's bytes per task so far (before
        any, ``ROW_BYTES`` a trial) times the tasks to go, the results as big again (a sorted copy
        of the progress file) and the reports (``REPORT_BYTES``)."""
        total, done = getattr(self, "total", None), getattr(self, "done", 0)
        if total is None:
            return None
        try:
            written = os.stat(self.out / PROGRESS).st_size
        except OSError:
            written = 0
        each = written / done if done and written else ROW_BYTES * self.config.trials
        to_go = each * max(0, total - done)
        return int(2 * to_go + written + REPORT_BYTES)

    def retry(self) -> None:
        pass  # never reached: the guard raises instead of recovering

    def stopped(self) -> Exception:
        return RunRefused(self.guard.watch.message() + "; rerun with --resume once fixed")

    def finalise(self) -> RunSummary:
        summary = self.summary
        summary.skipped.sort(key=lambda s: s["id"])
        summary.elapsed = time.perf_counter() - self.started
        _write(summary, self.dataset, self.identity, self.counter)
        return summary


def _write(summary: RunSummary, dataset: Path, identity: dict[str, Any], counter: str | None = None) -> None:
    """The run's files (``backends.batch.finish_folder``): results (the progress file's rows,
    sorted by a streaming merge, ``harness.run_folder.write_results``) and the reports from the
    figures summed in the same pass (``harness.totals``), then ``run.json`` finished (last: until
    then the folder says the run is still running); then the progress file goes."""
    config = summary.config.to_dict()
    totals = RunTotals(summary.config.trials)
    task: list[dict[str, Any]] = []  # the rows of the task being read (results are sorted by task)

    def take(row: dict[str, Any]) -> None:
        if task and row["id"] != task[0]["id"]:
            totals.add_task(task)
            task.clear()
        task.append(row)

    summary.runs = write_results(summary.out, take)
    if task:
        totals.add_task(task)
    summary.metrics, summary.errors = totals.metrics(), totals.errors
    report = render_report(summary.metrics, config, dataset=str(dataset), skipped=summary.skipped,
                           errors=summary.errors, elapsed=summary.elapsed, failed=totals.failed, counter=counter)
    from harness.report_html import (
        render_html,  # matplotlib: loaded only when a run is written
    )

    html = render_html(summary.metrics, config, dataset=str(dataset), totals=totals)
    run = {"state": FINISHED, **identity, "tasks": summary.metrics["groups"]["overall"]["tasks"],
           "runs": summary.runs, "skipped": summary.skipped, "metrics": summary.metrics,
           "elapsed_seconds": round(summary.elapsed, 3), "finished": now_text()}
    finish_folder(summary.out, [(REPORT, report.encode("utf-8")), (REPORT_HTML, html.encode("utf-8"))],
                  (RUN, state_bytes(run)), (PROGRESS,), sync_state=True)


__all__ = ["EvalConfig", "EvalError", "RunSummary", "evaluate", "run_task", "make_agent", "record_problem",
           "sampling_of", "AGENTS", "REQUESTS"]
