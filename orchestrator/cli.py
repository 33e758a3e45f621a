"""The ``homer`` command line.

Exit codes: 0 success, 1 the thing checked failed (a task, a criterion), 2 bad input
(unreadable file, invalid criteria, missing folder). Errors are one line each, no tracebacks.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import typer.core

from office_env import limits  # the limits alone: the commands import what they use, so help is quick

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="homeragents: build, check and score long-horizon office-agent tasks.")
officebench_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Work with OfficeBench task folders.")
app.add_typer(officebench_app, name="officebench")


class _ReviewGroup(typer.core.TyperGroup):
    """``homer review DATASET`` serves the page; ``homer review report|apply ...`` are subcommands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


review_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, cls=_ReviewGroup,
                         help="Human review of a dataset: `homer review DATASET` serves the review page; "
                              "report and apply work on its annotations.")
app.add_typer(review_app, name="review")


# options that build, regenerate and eval share
LLMSetOption = Annotated[list[str], typer.Option("--llm-set", help="llm: a setting over the --llm-config file's, as "
                                                 "KEY=VALUE (repeatable): max_tokens=2048, temperature=null, "
                                                 "structured_output=json_schema, context_window=8192, rpm=600, ...")]
ExecutorOption = Annotated[str, typer.Option("--executor", help="local (worker processes) or ray (Ray tasks: a local "
                                             "Ray instance, or the cluster at --ray-address; needs homeragents[ray])")]
RayAddressOption = Annotated[Optional[str], typer.Option("--ray-address", help="ray: the cluster to join (auto, or "
                                                         "ray://HOST:10001); every node needs homeragents and --out's folder")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress (the result lines are still printed)")]
JsonProgressOption = Annotated[bool, typer.Option("--json-progress", help="Progress as one JSON object per finished "
                                                  "item on standard error, for scripts")]


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _is_seed_folder(path: Path) -> bool:
    """An OfficeBench checkout, its tasks/ folder or one task folder (``subtasks/`` somewhere)."""
    for root in (path, path / "tasks"):
        try:
            if (root / "subtasks").is_dir() or any((child / "subtasks").is_dir() for child in list(root.iterdir())[:200]):
                return True
        except OSError:
            continue
    return False


def _check_dataset(path: Path) -> None:
    """A dataset folder (``tasks/<id>/task.json``), else one line: what it is and what to run."""
    if not path.is_dir():
        _fail(f"{path}: no such folder" if not path.exists() else f"{path}: not a folder")
    if _is_seed_folder(path):
        _fail(f"{path}: an OfficeBench seed folder, not a dataset; make a dataset from it with "
              f"`homer regenerate --seeds {path} --out DIR`")
    if not (path / "tasks").is_dir():
        _fail(f"{path}: not a dataset folder (no tasks/); `homer build --out DIR` writes one")
    unfinished = _unfinished(path)
    if unfinished:
        typer.echo(f"warning: {path}: {unfinished}", err=True)


def _unfinished(path: Path) -> str | None:
    """Why a dataset's tasks may not be all it was meant to hold (None when its build finished, or
    nothing says): a build writing it now, or one that stopped or kept fewer tasks than asked."""
    from backends.folder_lock import writer_alive

    try:
        state = json.loads((path / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict):
        return None
    status = state.get("status")
    again = (f"`homer regenerate --seeds SEEDS --out {path} --resume`" if "seeds_fingerprint" in state
             else f"`homer build --out {path} --resume`")
    if status == "running":
        if writer_alive(path):
            return "its build is writing it now: these are the tasks so far"
        return f"its build stopped before it finished; {again} completes it"
    if status == "incomplete":
        return f"its build kept fewer tasks than asked (build.json says why); {again} tries again"
    return None


def _budget(task_timeout: float, task_memory: int) -> Any:
    """The per-task budget from ``--task-timeout`` / ``--task-memory`` (0 turns a limit off)."""
    from backends.workers import Budget

    if task_timeout < 0:
        _fail(f"--task-timeout must be 0 or more seconds (got {task_timeout:g})")
    if task_memory < 0 or 0 < task_memory < 64:
        _fail(f"--task-memory must be 0 (no limit) or at least 64 MiB (got {task_memory})")
    return Budget(seconds=task_timeout or None, memory_bytes=task_memory * limits.MiB or None)


def _interrupted(exc: Any, what: str = "tasks") -> None:
    typer.echo(f"\ninterrupted: {exc.done} of {exc.total} {what} done; rerun with --resume to continue", err=True)
    raise typer.Exit(exc.exit_code)


@officebench_app.command("check")
def officebench_check(path: Path = typer.Argument(..., help="An OfficeBench checkout, its tasks/ folder, or one task folder")) -> None:
    """Load and validate every subtask; print counts per app count and one line per problem. Exit 1
    when a subtask cannot be loaded or a criterion needs a reference file that is missing."""
    from office_env import load_officebench

    if not path.exists():
        _fail(f"{path}: does not exist")
    report = load_officebench(path)
    counts = report.by_app_count()
    per_apps = ", ".join(f"{n} app{'s' if n > 1 else ''}: {c}" for n, c in counts.items()) or "none"
    typer.echo(f"loaded {len(report.tasks)} of {report.subtask_files} subtasks from {report.folders} task folders "
               f"({per_apps})")
    for warning in report.warnings:
        typer.echo(f"warning: {warning}")
    for problem in report.problems:
        typer.echo(f"problem: {problem}")
    if report.problems or report.warnings:
        # a criterion that needs a missing reference file can never pass: as bad as a broken file
        typer.echo(f"{len(report.problems)} problem(s), {len(report.warnings)} missing reference(s)")
        raise typer.Exit(1)


@officebench_app.command("lint")
def officebench_lint(
    path: Path = typer.Argument(..., help="An OfficeBench checkout, its tasks/ folder, or one task folder"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (findings with task, file, field, "
                                 "severity, code, message, repair)"),
) -> None:
    """Find seed defects per subtask: criteria that pass untouched, missing references, typo'd or
    unknown file names, doc_type against the extension, misplaced keys, weak criteria, the
    instruction and the criteria naming different files. Exit 1 when a finding is an error."""
    from verifier.seed_lint import lint_seeds

    if not path.exists():
        _fail(f"{path}: does not exist")
    report = lint_seeds(path)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for finding in report.findings:
            typer.echo(str(finding))
        counts = ", ".join(f"{code}: {n}" for code, n in report.counts().items()) or "none"
        typer.echo(f"linted {report.loaded} of {report.subtasks} subtasks: {report.errors} error(s), "
                   f"{len(report.findings) - report.errors} warning(s) ({counts})")
    if report.errors:
        raise typer.Exit(1)


def _criteria_from(file: Path) -> tuple[list[Any], Optional[Path], Optional[Path], tuple[int, ...]]:
    """Criteria, default reference folder and default initial testbed from a subtask JSON
    (``<task>/subtasks/<i>.json``), a task JSON (``<task>/task.json``) or a bare list.

    The file is read with the JSON limits and never through a symlink; the task's own
    ``reference/`` and ``testbed/`` are taken only when they are real folders (a symlinked one
    is an error, not a fallback)."""
    from office_env.officebench import misplaced_criteria, normalize_criteria
    from office_env.untrusted import SYMLINK, UntrustedInputError, entry_problem, is_real_dir, load_json, printable

    try:
        data = load_json(file)
    except UntrustedInputError as exc:
        _fail(str(exc))
    if isinstance(data, dict):
        if "evaluation" not in data:
            _fail(f"{printable(file)}: evaluation: missing (expected a subtask or task JSON, or a list of criteria)")
        criteria = normalize_criteria(data["evaluation"])
        misplaced = misplaced_criteria(data["evaluation"])
    else:
        criteria, misplaced = data, misplaced_criteria(data)
    folder = Path(os.path.abspath(file)).parent
    task_dir = folder.parent if folder.name == "subtasks" and is_real_dir(folder) else folder
    found = []
    for name in ("reference", "testbed"):
        path = task_dir / name
        problem = entry_problem(path, folder=True)
        if problem == SYMLINK:
            _fail(f"{printable(path)}: {problem}; refused (give --{'reference' if name == 'reference' else 'initial'} "
                  "explicitly to use another folder)")
        found.append(path if is_real_dir(path) else None)
    return criteria, found[0], found[1], misplaced


@app.command("score")
def score(
    testbed: Path = typer.Argument(..., help="Testbed folder to score (data/, emails/, calendar/)"),
    criteria: Path = typer.Option(..., "--criteria", "-c", help="Subtask or task JSON, or a JSON list of criteria"),
    reference: Optional[Path] = typer.Option(None, "--reference", help="Folder for expected files (default: the task's reference/)"),
    initial: Optional[Path] = typer.Option(None, "--initial", help="The testbed before the agent acted (default: the task's testbed/)"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
    semantics: str = typer.Option("homer", "--semantics", help="homer (its checks) or officebench (OfficeBench's own "
                                  "verdicts, its substring rules and crashes as failures; see the README)"),
    task_timeout: float = typer.Option(600.0, "--task-timeout", help="Seconds scoring may take (0: no limit)"),
    task_memory: int = typer.Option(2048, "--task-memory", help="MiB of memory scoring may use (0: no limit)"),
) -> None:
    """Score a testbed with a criteria list; exit 0 only if every criterion passes.

    The testbed, the reference folder and the initial testbed are opened as untrusted trees
    (office_env.untrusted): one that is a symlink or holds a symlink, special file, hard link to a
    file outside it, odd name or more than the tree limits is refused (exit 2, one line naming the
    path), because scoring through a link could read and print any file of the machine. Scoring
    runs in a worker process within the time and memory budget: a testbed that would take longer
    or more is reported (exit 2) instead of hanging the command."""
    from backends.workers import Interrupted, JobFailure, run_jobs
    from office_env import InvalidCriteria, OfficeError, Workspace
    from office_env.evaluation.officebench_semantics import scorer
    from office_env.untrusted import printable, tree_problem

    try:
        evaluate = scorer(semantics)
    except ValueError as exc:
        _fail(str(exc))
    items, default_reference, default_initial, misplaced = _criteria_from(criteria)
    extra = {"misplaced": misplaced} if semantics == "officebench" else {}
    if not testbed.exists() and not testbed.is_symlink():
        _fail(f"{printable(testbed)}: testbed folder does not exist")
    reference_dir, initial_dir = reference or default_reference, initial or default_initial
    for option, folder in (("testbed", testbed), ("--reference", reference_dir), ("--initial", initial_dir)):
        problem = tree_problem(folder) if folder is not None else None
        if problem is not None:
            _fail(f"{option}: {problem}")
    budget = _budget(task_timeout, task_memory)

    def scored(_: None) -> tuple[str, Any]:
        try:
            workspace = Workspace(testbed)
            return "ok", evaluate(workspace, items, reference_dir, initial_dir=initial_dir, file=printable(criteria),
                                  **extra)
        except InvalidCriteria as exc:
            return "invalid", list(exc.problems)
        except OfficeError as exc:
            return "error", str(exc)

    outcome: list[tuple[str, Any]] = []

    def failed(_: int, failure: JobFailure) -> None:
        outcome.append(("error", f"{printable(criteria)}: scoring {printable(testbed)} failed ({failure.reason})"))

    try:
        run_jobs(scored, [None], workers=1, budget=budget, on_result=lambda _, result: outcome.append(result),
                 on_failure=failed)
    except Interrupted as exc:
        typer.echo("\ninterrupted: nothing scored", err=True)
        raise typer.Exit(exc.exit_code)
    kind, report = outcome[0]
    if kind == "invalid":
        for problem in report:
            typer.echo(f"invalid: {problem}", err=True)
        raise typer.Exit(2)
    if kind == "error":
        _fail(report)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for result in report.results:
            mark = "PASS" if result.passed else "FAIL"
            typer.echo(f"{mark} [{result.index}] {result.function}: {result.reason}")
        passed = sum(r.passed for r in report.results)
        typer.echo(f"{passed}/{len(report.results)} criteria passed: task {'PASSED' if report.passed else 'FAILED'}")
    raise typer.Exit(0 if report.passed else 1)


# -- dataset build, verify, stats ------------------------------------------------------------

def _parse_apps(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        counts = ()
    if not counts or any(c not in (1, 2, 3) for c in counts):
        _fail(f"--apps: {text!r} must be a comma-separated list of app counts from 1, 2, 3 (e.g. 1,2,3)")
    return counts


def _parse_gates(text: str) -> tuple[str, ...]:
    from verifier.gates import parse_gates

    try:
        return parse_gates(text)
    except ValueError as exc:
        _fail(str(exc))
    return ()


def _default_cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "homeragents" / "llm-cache.sqlite"


def _executor(executor: str, ray_address: str | None) -> dict[str, Any]:
    """The executor options, checked: local worker processes, or Ray (installed, reachable)."""
    if executor not in ("local", "ray"):
        _fail(f"--executor {executor!r}: must be local or ray")
    if ray_address and executor != "ray":
        _fail("--ray-address needs --executor ray")
    if executor == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            _fail('--executor ray needs Ray: pip install "homeragents[ray]"')
    return {"executor": executor, "ray_address": ray_address}


def _paused(seconds: float) -> None:
    typer.echo(f"the endpoint keeps failing: waiting {seconds:g} s, then checking it again", err=True)


def _preflight(settings: Any) -> None:
    """Fail in seconds, with one line, when the endpoint cannot serve the run (down, key refused,
    model not served), instead of spending every attempt on it."""
    from backends.llm import LLMClient, PreflightError

    start = time.monotonic()
    with LLMClient(settings) as client:
        try:
            client.preflight()
        except PreflightError as exc:
            _fail(f"endpoint check failed after {time.monotonic() - start:.1f} s: {exc}")


def _overrides(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    """``--llm-set KEY=VALUE`` flags, parsed (a bad one is exit 2)."""
    if not pairs:
        return ()
    from backends.llm import LLMConfigError
    from backends.llm.settings import parse_override

    try:
        return tuple(parse_override(pair) for pair in pairs)
    except LLMConfigError as exc:
        _fail(str(exc))


def _llm_settings(model: Optional[str], base_url: Optional[str], llm_config: Optional[Path],
                  overrides: tuple[tuple[str, str], ...]) -> Any:
    """The endpoint settings the llm options resolve to, checked against the endpoint (a bad one: exit 2)."""
    from types import SimpleNamespace

    from backends.llm import LLMConfigError
    from backends.llm.settings import settings_for

    try:
        settings = settings_for(SimpleNamespace(llm_config=llm_config, base_url=base_url, model=model,
                                                llm_overrides=overrides))
    except LLMConfigError as exc:
        _fail(str(exc))
    _preflight(settings)
    return settings


def _llm_options(backend: str, model: Optional[str], base_url: Optional[str], llm_config: Optional[Path],
                 cache: Optional[Path], no_cache: bool, llm_set: list[str] | None = None) -> dict[str, Any]:
    """Check the llm options (and the settings they resolve to) before any work starts."""
    if backend not in ("offline", "llm"):
        _fail(f"--backend {backend!r}: must be offline or llm")
    if backend == "offline":
        if llm_set:
            _fail("--llm-set needs --backend llm")
        return {}
    from backends.prompts import check_prompts

    check_prompts()  # a broken prompt template: one line now (see main), not an error per request
    overrides = _overrides(llm_set or [])
    settings = _llm_settings(model, base_url, llm_config, overrides)
    cache_path = None if no_cache else (cache or settings.cache_path or _default_cache())
    return {"backend": "llm", "model": settings.model, "base_url": settings.endpoint,
            "llm_config": str(llm_config) if llm_config else None,
            "cache_path": str(cache_path) if cache_path else None,
            **({"llm_overrides": overrides} if overrides else {})}


@app.command("build")
def build_command(
    out: Path = typer.Option(..., "--out", "-o", help="Dataset folder to create (must be empty unless --resume)"),
    n: int = typer.Option(20, "--n", help="Number of tasks to build"),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seed gives the same dataset, byte for byte"),
    apps: str = typer.Option("1,2,3", "--apps", help="App counts to draw from, e.g. 1,2,3 or 2"),
    preset: str = typer.Option("standard", "--preset", help="History size: standard (5 days of about 72 "
                               "utterances) or challenge (30 days of about 250: over 100K cl100k tokens per task)"),
    days: Optional[int] = typer.Option(None, "--days", help="Days (sessions) of dialogue per task (default: the "
                                       "preset's)"),
    utterances: Optional[int] = typer.Option(None, "--utterances", help="Utterances per day, about (default: the "
                                             "preset's)"),
    workers: int = typer.Option(max(1, min(4, os.cpu_count() or 1)), "--workers", "-w", help="Worker processes"),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted build in --out"),
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    quiet: QuietOption = False,
    json_progress: JsonProgressOption = False,
    backend: str = typer.Option("offline", "--backend", help="offline (procedural, no key) or llm"),
    model: Optional[str] = typer.Option(None, "--model", help="llm: model name (default from --llm-config or gpt-4o-mini)"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="llm: OpenAI-compatible base URL (default: OPENAI_BASE_URL)"),
    llm_config: Optional[Path] = typer.Option(None, "--llm-config", help="llm: JSON or TOML settings file"),
    llm_set: LLMSetOption = [],
    cache: Optional[Path] = typer.Option(None, "--cache", help="llm: response cache file (default: in the user cache folder)"),
    no_cache: bool = typer.Option(False, "--no-cache", help="llm: do not cache responses"),
    gates: str = typer.Option("default", "--gates", help="Extra gates: solvability, leakage, judges (comma list), "
                              "'all', or 'default' (only the built-in gates)"),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when the dataset misses the gameability threshold "
                                "(everything is still written; the card says so)"),
    task_timeout: float = typer.Option(limits.TASK_SECONDS, "--task-timeout", help="Seconds one task may take "
                                       "(0: no limit); a task over it is recorded as 'error: timeout'"),
    task_memory: int = typer.Option(limits.TASK_MEMORY_BYTES // limits.MiB, "--task-memory", help="MiB of memory one "
                                    "task may add to its worker (0: no limit); over it: 'error: memory'"),
) -> None:
    """Build a verified Neo dataset: on the offline backend (default; no key, no network) or through
    an OpenAI-compatible endpoint (--backend llm)."""
    budget = _budget(task_timeout, task_memory)
    days, utterances = _preset(preset, days, utterances)
    llm = _llm_options(backend, model, base_url, llm_config, cache, no_cache, llm_set)  # the endpoint first

    from backends.ray_executor import RayUnavailable
    from backends.workers import Interrupted
    from orchestrator.build import BuildError, build
    from orchestrator.endpoint_guard import EndpointDown
    from orchestrator.progress import Reporter, mode_for
    from orchestrator.roles import BuildConfig

    config = BuildConfig(seed=seed, app_counts=_parse_apps(apps), days=days, utterances_per_day=utterances,
                         gates=_parse_gates(gates), **llm)
    started = time.perf_counter()
    try:
        with Reporter("build", n, mode_for(quiet, json_progress), target="kept") as progress:
            summary = build(out, n, config, workers=workers, resume=resume, budget=budget, on_pause=_paused,
                            on_outcome=progress.outcome, **_executor(executor, ray_address))
    except (BuildError, RayUnavailable) as exc:
        _fail(str(exc))
    except EndpointDown as exc:
        _fail(str(exc), code=1)
    except Interrupted as exc:
        _interrupted(exc, "attempts")
    elapsed = time.perf_counter() - started
    drops = ", ".join(f"{k}: {v}" for k, v in sorted(summary.drops.items())) or "none"
    typer.echo(f"built {summary.accepted} task(s) in {out} from {summary.attempts} attempt(s) "
               f"in {elapsed:.1f} s (dropped: {drops})")
    result = _gameability(out, summary.gameability)
    failed = False
    if summary.accepted < n:
        typer.echo(f"error: only {summary.accepted} of {n} tasks passed the gates", err=True)
        failed = True
    if strict and not result["passed"]:
        _strict_error(result)
        failed = True
    if failed:
        raise typer.Exit(1)


def _preset(preset: str, days: Optional[int], utterances: Optional[int]) -> tuple[int, int]:
    """The history size: the preset's, with --days / --utterances over it."""
    from orchestrator.roles import PRESETS

    if preset not in PRESETS:
        _fail(f"--preset {preset!r}: must be one of {', '.join(PRESETS)}")
    days = PRESETS[preset][0] if days is None else days
    utterances = PRESETS[preset][1] if utterances is None else utterances
    if days < 1:
        _fail(f"--days must be at least 1 (got {days})")
    if utterances < 4:
        _fail(f"--utterances must be at least 4 (got {utterances})")
    return days, utterances


def _gameability(dataset_dir: Path, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """Print the gameability line of a written dataset (``known``: its figures, when the build just
    computed them for the card); return the result."""
    from orchestrator.card import gameability_line
    from orchestrator.dataset import iter_tasks
    from verifier.gameability import gameability

    result = known or gameability([t.record for t in iter_tasks(dataset_dir) if t.record is not None])
    typer.echo(gameability_line(result))
    return result


def _strict_error(result: dict[str, Any]) -> None:
    from verifier.gameability import THRESHOLD, missed

    over = ", ".join(f"{name} {result[name]['precision']:.3f}" for name in missed(result))
    typer.echo(f"error: --strict: gameability missed: detector precision above {THRESHOLD:.2f} ({over})", err=True)


@app.command("verify")
def verify_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder written by homer build"),
    strict: bool = typer.Option(False, "--strict", help="Also exit 1 when the dataset misses the gameability threshold"),
) -> None:
    """Re-run every gate on a written dataset; one line per task, then the gameability line; exit 1 on
    any failure (and, with --strict, when a gameability detector is above the threshold).

    A task that cannot be loaded or whose gates fail on malformed content is one FAIL line; the
    other tasks are still checked."""
    from office_env.untrusted import printable
    from orchestrator.card import gameability_line
    from orchestrator.dataset import iter_tasks
    from verifier.gameability import gameability
    from verifier.review_edits import recheck

    _check_dataset(dataset_dir)
    failures = total = 0
    records = []
    for task in iter_tasks(dataset_dir):
        total += 1
        if task.record is None:
            failures += 1
            typer.echo(f"FAIL {task.id}: {printable(task.error)}")
            continue
        try:
            results = recheck(task.record, task.testbed, task.reference)  # with the extra gates it was built with
        except Exception as exc:  # malformed content the schema lets through must not stop the others
            failures += 1
            typer.echo(f"FAIL {task.id}: gates could not run ({exc.__class__.__name__}: "
                       f"{printable(str(exc).splitlines()[0][:300] if str(exc) else '')})")
            continue
        if results["schema"].passed:
            records.append(task.record)
        bad = {k: r for k, r in results.items() if not r.passed}
        if bad:
            failures += 1
            typer.echo(printable(f"FAIL {task.id}: " + "; ".join(f"{k}: {r.detail}" for k, r in bad.items())))
        else:
            typer.echo(f"ok   {task.id}")
    typer.echo(f"{total - failures}/{total} tasks pass every gate")
    result = gameability(records)
    typer.echo(gameability_line(result))
    missed_strict = strict and not result["passed"]
    if missed_strict:
        _strict_error(result)
    if failures or not total or missed_strict:
        raise typer.Exit(1)


@app.command("stats")
def stats_command(dataset_dir: Path = typer.Argument(..., help="A dataset folder written by homer build")) -> None:
    """Print the dataset card's statistics (per app count: sessions, utterances, tokens), then its
    gameability section (detectors, memory dynamics, text statistics)."""
    from office_env.untrusted import printable
    from orchestrator.card import gameability_section, statistics, table
    from orchestrator.dataset import iter_tasks
    from verifier.gates import schema_gate

    _check_dataset(dataset_dir)
    records = []
    for task in iter_tasks(dataset_dir):
        if task.record is None:
            typer.echo(f"skipped {task.id}: {printable(task.error)}", err=True)
            continue
        schema = schema_gate(task.record)  # the statistics read every field the schema requires
        if not schema.passed:
            typer.echo(printable(f"skipped {task.id}: {task.folder / 'task.json'}: {schema.detail}"), err=True)
            continue
        records.append(task.record)
    stats = statistics(records)
    typer.echo(table(stats))
    families = {k: v for k, v in stats["families"].items() if k != "?"}
    if families:  # a Plus split's tasks come from seeds, not families
        typer.echo("families: " + ", ".join(f"{k} {v}" for k, v in families.items()))
    typer.echo("apps: " + ", ".join(f"{k} {v}" for k, v in stats["apps"].items()))
    typer.echo(f"tokens: {stats['token_counter']}")
    typer.echo("")
    typer.echo(gameability_section(stats).rstrip("\n"))


@app.command("show")
def show_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder"),
    task_id: str = typer.Argument(..., help="The task's id, e.g. neo-00003"),
    day: Optional[int] = typer.Option(None, "--day", help="Print this day of the chat, every turn with its marks"),
    as_json: bool = typer.Option(False, "--json", help="Print the view as JSON"),
) -> None:
    """Print one task readably: intent, description, memory with the turns that say it, criteria in
    words, the oracle plan and the testbed's files (--day N: one day of the chat)."""
    from backends.dataset import load_task
    from orchestrator.show import day_view, render_day, render_task, task_view

    _check_dataset(dataset_dir)
    task = load_task(dataset_dir, task_id)
    if task.record is None:
        _fail(task.error or f"{task_id}: unreadable")
    if day is not None:
        view = day_view(task.record, day)
        if view is None:
            sessions = task.record.get("dialogue") if isinstance(task.record.get("dialogue"), list) else []
            days = [s.get("day") for s in sessions if isinstance(s, dict)]
            _fail(f"--day {day}: {task_id} has no such day (days: {', '.join(map(str, days)) or 'none'})")
        typer.echo(json.dumps(view, ensure_ascii=False, indent=1) if as_json else render_day(view), nl=as_json)
        return
    view = task_view(task.record, task.folder / "testbed")
    typer.echo(json.dumps(view, ensure_ascii=False, indent=1) if as_json else render_task(view), nl=as_json)


def _refuse_filled(flag: str, out: Path) -> None:
    """An output folder must be absent or empty: else one line, exit 2 (nothing is created)."""
    if out.exists() and not out.is_dir():
        _fail(f"{flag} {out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()):
        _fail(f"{flag} {out}: exists and is not empty; choose a new folder")


def _new_folder(flag: str, out: Path) -> None:
    """A folder to write a new output into: absent or empty (``_refuse_filled``), and writable."""
    from backends.dataset import ensure_writable_folder

    _refuse_filled(flag, out)
    try:
        ensure_writable_folder(out)
    except OSError as exc:
        _fail(f"{flag} {out}: cannot write there ({exc.strerror or exc})")


@app.command("export")
def export_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder written by homer build or homer regenerate"),
    officebench: Optional[Path] = typer.Option(None, "--officebench", help="Folder to write OfficeBench's tasks/ "
                                               "layout into"),
    hf: Optional[Path] = typer.Option(None, "--hf", help="Folder to write a Hugging Face dataset into (JSONL "
                                      "shards, the offices packed per task, a card that datasets.load_dataset reads)"),
    sft: Optional[Path] = typer.Option(None, "--sft", help="Folder to write oracle trajectories into, as chat-format "
                                       "JSONL with tool calls and their results"),
    sft_mode: str = typer.Option("long-context", "--sft-mode", help="sft: the history in the prompt "
                                 "(long-context) or retrieved for the query (rag, BM25)"),
    sft_top_k: int = typer.Option(5, "--sft-top-k", help="sft, rag: sessions retrieved"),
    lossy: bool = typer.Option(False, "--lossy", help="officebench: keep a task whose criteria cannot all be "
                               "carried over, without those criteria (they are listed)"),
) -> None:
    """Export a dataset: to OfficeBench's layout (--officebench), as a Hugging Face dataset (--hf),
    or as fine-tuning data of oracle trajectories (--sft). Exactly one target.

    OfficeBench: tasks/<apps>-<k>/subtasks/0.json, testbed/, reference/, the criteria in
    OfficeBench's nine functions; a task with a criterion OfficeBench cannot express is left out
    with a warning (kept without it under --lossy); each export is checked to fail untouched and
    pass when solved. A task that cannot be loaded or exported is skipped with one line naming it
    (exit 1 if any)."""
    chosen = [(flag, path) for flag, path in (("--officebench", officebench), ("--hf", hf), ("--sft", sft)) if path]
    if len(chosen) != 1:
        _fail("choose one export target: --officebench DIR, --hf DIR or --sft DIR")
    _check_dataset(dataset_dir)
    flag, out = chosen[0]
    _new_folder(flag, out)
    if hf is not None:
        from orchestrator.hf_export import export_hf

        summary = export_hf(dataset_dir, hf)
        for line in summary.skipped:
            typer.echo(f"skipped {line}", err=True)
        typer.echo(f"exported {summary.written} task(s) in {summary.shards} shard(s) to {hf}")
        raise typer.Exit(1 if summary.skipped else 0)
    if sft is not None:
        from harness.context import ContextConfig
        from harness.sft_export import export_sft

        try:
            context = ContextConfig(mode=sft_mode, top_k=sft_top_k).validate()
        except ValueError as exc:
            _fail(str(exc).replace("--mode", "--sft-mode"))
        result = export_sft(dataset_dir, sft, context)
        for line in result.skipped:
            typer.echo(f"left out {line}", err=True)
        typer.echo(f"exported {result.written} trajectory(ies) to {sft / 'train.jsonl'}"
                   + (f" ({len(result.skipped)} task(s) left out)" if result.skipped else ""))
        return
    from orchestrator.officebench_export import export_officebench

    summary = export_officebench(dataset_dir, out, lossy=lossy)
    for line in summary.skipped:
        typer.echo(f"skipped {line}", err=True)
    for line in summary.left_out:
        typer.echo(f"warning: left out {line}", err=True)
    for line in summary.lossy:
        typer.echo(f"warning: exported without some criteria {line}", err=True)
    extra = [f"{len(summary.skipped)} skipped" if summary.skipped else "",
             f"{len(summary.left_out)} left out" if summary.left_out else "",
             f"{len(summary.lossy)} without some criteria" if summary.lossy else ""]
    note = ", ".join(e for e in extra if e)
    typer.echo(f"exported {summary.written} task(s) to {out / 'tasks'}" + (f" ({note})" if note else ""))
    raise typer.Exit(1 if summary.skipped else 0)


@app.command("fake-llm")
def fake_llm_command(
    port: int = typer.Option(8000, "--port", "-p", help="Port to listen on (0 picks a free one)"),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on"),
    fault: list[str] = typer.Option([], "--fault", help="Fault for the next chat request, in order (repeatable): "
                                    "malformed, fenced, truncated, 429, 500, slow, or a broken reply shape (message_string, "
                                    "choices_empty, choices_object, content_object, tool_calls_object, function_missing, "
                                    "arguments_object, arguments_deep, usage_strings, body_array, body_deep, body_not_json); "
                                    "a request header X-Fake-Fault also works"),
    fail_model: Optional[str] = typer.Option(None, "--fail-model", help="Answer every request for this model with HTTP 500"),
    retry_after: float = typer.Option(1.0, "--retry-after", help="Seconds in the Retry-After header of a 429"),
    profile: str = typer.Option("default", "--profile", help="Behave like a kind of server: default, openai, "
                                "openai-reasoning, vllm, llama-cpp or ollama (refused parameters, tools ignored "
                                "without tool_choice, context overflow as HTTP 400 or a silent cut, no embeddings)"),
) -> None:
    """Serve a local OpenAI-compatible endpoint (chat, embeddings, models) until Ctrl-C; every role
    prompt of this project is answered the way the offline backend would."""
    import signal
    import threading

    from orchestrator.fake_llm import FAULTS, FakeLLMServer, default_responder
    from orchestrator.fake_llm.server import serve_forever

    from orchestrator.fake_llm.profiles import PROFILES

    unknown = [f for f in fault if f not in FAULTS]
    if unknown:
        _fail(f"--fault {unknown[0]!r}: must be one of {', '.join(FAULTS)}")
    if profile not in PROFILES:
        _fail(f"--profile {profile!r}: must be one of {', '.join(PROFILES)}")
    if not 0 <= port <= 65535:
        _fail(f"--port {port}: must be from 0 to 65535 (0 picks a free port)")
    if retry_after < 0:
        _fail(f"--retry-after {retry_after:g}: must be 0 or more seconds")

    def _interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as cleanly as Ctrl-C
    try:
        server = FakeLLMServer(default_responder(), host=host, port=port, retry_after=retry_after,
                               fail_model=fail_model, profile=profile).start()
        server.queue_faults(*fault)
    except (OSError, OverflowError) as exc:
        _fail(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})")
    described = "" if profile == "default" else f" behaving like {profile}"
    serve_forever(server, ready=lambda s: typer.echo(f"fake OpenAI-compatible endpoint at {s.url}{described} "
                                                     "(Ctrl-C to stop)"))


@app.command("regenerate")
def regenerate_command(
    seeds: Path = typer.Option(..., "--seeds", help="OfficeBench seed tasks: a checkout, its tasks/ folder, or one task folder"),
    out: Path = typer.Option(..., "--out", "-o", help="Dataset folder to create (must be empty unless --resume)"),
    backend: str = typer.Option("offline", "--backend", help="offline (procedural, no key) or llm"),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seeds and seed give the same dataset, byte for byte"),
    shape: str = typer.Option("paper", "--shape", help="paper (about 28 short sessions of about 11 utterances, "
                              "as HomerAgents+ has them) or neo (5 sessions of about 70)"),
    preset: Optional[str] = typer.Option(None, "--preset", help="challenge: 30 days of about 250 utterances (over "
                                         "100K tokens per task) instead of the shape's"),
    days: Optional[int] = typer.Option(None, "--days", help="Days (sessions) of dialogue per task (default: the shape's)"),
    utterances: Optional[int] = typer.Option(None, "--utterances", help="Utterances per day, about (default: the shape's)"),
    workers: int = typer.Option(1, "--workers", "-w", help="Worker processes"),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run in --out"),
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    quiet: QuietOption = False,
    json_progress: JsonProgressOption = False,
    model: Optional[str] = typer.Option(None, "--model", help="llm: model name"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="llm: OpenAI-compatible base URL"),
    llm_config: Optional[Path] = typer.Option(None, "--llm-config", help="llm: JSON or TOML settings file"),
    llm_set: LLMSetOption = [],
    cache: Optional[Path] = typer.Option(None, "--cache", help="llm: response cache file"),
    no_cache: bool = typer.Option(False, "--no-cache", help="llm: do not cache responses"),
    gates: str = typer.Option("default", "--gates", help="Extra gates: solvability, leakage, judges (comma list), "
                              "'all', or 'default'"),
    task_timeout: float = typer.Option(limits.TASK_SECONDS, "--task-timeout", help="Seconds one task may take "
                                       "(0: no limit); a task over it is recorded as 'error: timeout'"),
    task_memory: int = typer.Option(limits.TASK_MEMORY_BYTES // limits.MiB, "--task-memory", help="MiB of memory one "
                                    "task may add to its worker (0: no limit); over it: 'error: memory'"),
    repair: bool = typer.Option(False, "--repair", help="Fix seeds whose lint errors all have an unambiguous repair "
                                "(a typo'd file name, a doc_type against the extension) instead of dropping them; "
                                "every repair is recorded in the task's provenance"),
) -> None:
    """Regenerate a Plus split from OfficeBench seed tasks: one task per seed subtask, with an intent
    and a multi-day dialogue carrying the instruction's specifics; evaluation, testbed and reference
    files are kept. Exit 0 when a task was written and every seed loaded, 1 otherwise (the rest is
    still written), 2 for bad input."""
    budget = _budget(task_timeout, task_memory)
    llm = _llm_options(backend, model, base_url, llm_config, cache, no_cache, llm_set)  # the endpoint first

    from backends.ray_executor import RayUnavailable
    from backends.workers import Interrupted
    from orchestrator.build import BuildError
    from orchestrator.endpoint_guard import EndpointDown
    from orchestrator.plus import regenerate_split
    from orchestrator.progress import Reporter, mode_for
    if not seeds.exists():
        _fail(f"--seeds {seeds}: does not exist")
    from orchestrator.plus import SHAPES

    if shape not in SHAPES:
        _fail(f"--shape {shape!r}: must be one of {', '.join(SHAPES)}")
    if preset is not None:
        days, utterances = _preset(preset, days, utterances)
    if days is not None and days < 1:
        _fail(f"--days must be at least 1 (got {days})")
    if utterances is not None and utterances < 4:
        _fail(f"--utterances must be at least 4 (got {utterances})")
    started = time.perf_counter()
    try:
        with Reporter("regenerate", None, mode_for(quiet, json_progress)) as progress:
            summary = regenerate_split(seeds, out, seed=seed, days=days, utterances_per_day=utterances, shape=shape,
                                       workers=workers, resume=resume, gates=_parse_gates(gates), budget=budget,
                                       repair_seeds=repair, on_pause=_paused, on_outcome=progress.outcome,
                                       **_executor(executor, ray_address),
                                       on_progress=progress.counted, **llm)
    except (BuildError, RayUnavailable) as exc:
        _fail(str(exc))
    except EndpointDown as exc:
        _fail(str(exc), code=1)
    except Interrupted as exc:
        _interrupted(exc, "seeds")
    for warning in summary.warnings:
        typer.echo(f"warning: {warning['file']}: {warning['field']}: {warning['message']}")
    for problem in summary.skipped:
        typer.echo(f"skipped: {problem['file']}: {problem['field']}: {problem['message']}")
    for item in summary.dropped:
        typer.echo(f"dropped: {item['seed']} ({item['id']}): {item['reason']}")
    for item in summary.errors:
        typer.echo(f"not done (the endpoint failed; --resume runs it again): {item['seed']} ({item['id']}): "
                   f"{item['reason']}")
    elapsed = time.perf_counter() - started
    drops = ", ".join(f"{k}: {v}" for k, v in sorted(summary.drops.items())) or "none"
    typer.echo(f"regenerated {summary.written} task(s) in {out} from {summary.loaded} seed(s) in {elapsed:.1f} s "
               f"(skipped seeds: {len(summary.skipped_files)}; dropped: {drops})")
    if summary.skipped_files or not summary.written:
        if not summary.written:
            typer.echo("error: no task was written", err=True)
        raise typer.Exit(1)


@app.command("eval")
def eval_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder written by homer build or homer regenerate"),
    agent: str = typer.Option(..., "--agent", help="llm (a model through an OpenAI-compatible endpoint), "
                              "oracle (replays the reference plan) or none (does nothing)"),
    mode: str = typer.Option(..., "--mode", help="long-context (the whole chat in the prompt) or rag (retrieval over it)"),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder to write (empty, or an earlier run to replace)"),
    storage: str = typer.Option("raw", "--storage", help="rag: raw (the chat itself) or summary (summaries of it)"),
    granularity: str = typer.Option("session", "--granularity", help="rag: session or utterance (raw); session or chunk (summary)"),
    top_k: int = typer.Option(5, "--top-k", help="rag: units retrieved per task"),
    chunk_sessions: int = typer.Option(2, "--chunk-sessions", help="rag summary/chunk: days per chunk"),
    embeddings: Optional[str] = typer.Option(None, "--embeddings", help="rag: rank by this embedding model on the endpoint (default: BM25)"),
    trials: int = typer.Option(1, "--trials", help="Runs per task (pass^k over them)"),
    workers: int = typer.Option(1, "--workers", "-w", help="Worker processes"),
    step_cap: int = typer.Option(30, "--step-cap", help="Tool calls allowed per run"),
    horizons: Optional[str] = typer.Option(None, "--horizons", help="A sweep: evaluate the tasks with their history "
                                           "stretched to each of these day counts (e.g. 5,10,20,40) and fit how "
                                           "success falls with the horizon"),
    max_context_tokens: Optional[int] = typer.Option(None, "--max-context-tokens", help="The model's context: a task "
                                                     "whose history context is longer is an error run ('error: "
                                                     "context'), not sent and not scored"),
    model: Optional[str] = typer.Option(None, "--model", help="llm: model name (default from --llm-config or gpt-4o-mini)"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="llm: OpenAI-compatible base URL (default: OPENAI_BASE_URL)"),
    llm_config: Optional[Path] = typer.Option(None, "--llm-config", help="llm: JSON or TOML settings file"),
    llm_set: LLMSetOption = [],
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run in --out (finished tasks are kept)"),
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    quiet: QuietOption = False,
    json_progress: JsonProgressOption = False,
    max_errors: int = typer.Option(0, "--max-errors", help="Runs that may end with an error (endpoint down, history "
                                   "too long for the model) before the command exits 1; they never count as fails"),
    semantics: str = typer.Option("homer", "--semantics", help="How criteria are scored: homer, or officebench "
                                  "(OfficeBench's own verdicts, to compare with published numbers)"),
    task_timeout: float = typer.Option(limits.TASK_SECONDS, "--task-timeout", help="Seconds one task may take "
                                       "(0: no limit); a task over it is recorded as 'error: timeout'"),
    task_memory: int = typer.Option(limits.TASK_MEMORY_BYTES // limits.MiB, "--task-memory", help="MiB of memory one "
                                    "task may add to its worker (0: no limit); over it: 'error: memory'"),
) -> None:
    """Evaluate an agent on a dataset (long-context or RAG history); write results.jsonl, report.md
    and run.json into --out and print the report's table. Exit 0 when the run completed (whatever the
    pass rate) with at most --max-errors runs ended by an error, 1 with more, 2 for bad options."""
    from harness.context import ContextConfig
    from orchestrator.progress import Reporter, mode_for
    from harness.report import table
    from backends.workers import Interrupted
    from backends.ray_executor import RayUnavailable
    from harness.runner import EvalConfig, EvalError, evaluate

    budget = _budget(task_timeout, task_memory)
    if max_errors < 0:
        _fail(f"--max-errors {max_errors}: must be 0 or more")
    _check_dataset(dataset_dir)
    if llm_config is not None and not llm_config.is_file():
        _fail(f"--llm-config {llm_config}: no such file")
    context = ContextConfig(mode=mode, storage=storage, granularity=granularity, top_k=top_k,
                            chunk_sessions=chunk_sessions, embeddings=embeddings)
    config = EvalConfig(agent=agent, context=context, trials=trials, step_cap=step_cap, workers=workers, model=model,
                        base_url=base_url, llm_config=str(llm_config) if llm_config else None, semantics=semantics,
                        llm_overrides=_overrides(llm_set), max_context_tokens=max_context_tokens)
    try:
        config.validate()
        if config.needs_client():
            from harness.runner import llm_settings

            _preflight(llm_settings(config))
        if horizons is not None:
            _horizon_sweep(dataset_dir, out, config, horizons)
            return
        with Reporter("eval", None, mode_for(quiet, json_progress), kept_word="scored") as progress:
            summary = evaluate(dataset_dir, out, config, resume=resume, budget=budget, on_outcome=progress.outcome,
                               **_executor(executor, ray_address),
                               on_progress=progress.counted)
    except (EvalError, RayUnavailable) as exc:
        _fail(str(exc).replace("\n", " "))
    except Interrupted as exc:
        _interrupted(exc)
    for item in summary.skipped:
        typer.echo(f"skipped {item['id']}: {item['error']}", err=True)
    typer.echo(table(summary.metrics, rag=mode == "rag"))
    overall = summary.overall
    errors = f", {overall['errors']} run(s) ended with an error" if overall["errors"] else ""
    typer.echo(f"evaluated {overall['tasks']} task(s) x {trials} trial(s) with the {agent} agent "
               f"({context.label()}) in {summary.elapsed:.1f} s; skipped {len(summary.skipped)}{errors}; "
               f"report: {out / 'report.md'}")
    ended = [e["error"] for e in summary.errors] + [s["error"] for s in summary.skipped
                                                     if str(s["error"]).startswith("error:")]
    if len(ended) > max_errors:
        kinds = Counter(str(e).split(":", 1)[0] if not str(e).startswith("error: ")
                        else str(e).split(":", 2)[1].strip() for e in ended)
        detail = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
        typer.echo(f"error: {len(ended)} run(s) ended with an error ({detail}), more than --max-errors "
                   f"{max_errors}; pass rates leave them out; rerun with --resume after fixing the endpoint", err=True)
        raise typer.Exit(1)


@review_app.command("report")
def review_report_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder"),
    annotations: Optional[Path] = typer.Option(None, "--annotations", help="Import annotations made elsewhere first: "
                                               "a CSV with columns annotator, task, criterion, verdict[, comment]"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
) -> None:
    """Fleiss' kappa per guideline criterion and overall (Cohen's kappa too with two annotators),
    keep / drop counts and the tasks with disagreement; written to review-report.md and .json in
    the dataset folder."""
    from orchestrator.dataset import write_json, write_text
    from verifier.annotations import AnnotationError, AnnotationStore
    from verifier.review_report import render_report, review_report

    _check_dataset(dataset_dir)
    try:
        with AnnotationStore(dataset_dir) as store:
            if annotations is not None:
                if not annotations.is_file():
                    _fail(f"--annotations {annotations}: no such file")
                typer.echo(f"imported {store.import_csv(annotations)} verdict(s) from {annotations}", err=True)
            report = review_report(store.verdicts())
    except AnnotationError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{dataset_dir}: cannot open its annotations ({exc.strerror or exc})")
    text = render_report(report, str(dataset_dir))
    write_json(dataset_dir / "review-report.json", report)
    write_text(dataset_dir / "review-report.md", text)
    typer.echo(json.dumps(report, indent=1) if as_json else text)


def _horizon_sweep(dataset_dir: Path, out: Path, config: Any, horizons: str) -> None:
    from orchestrator.horizon_sweep import SweepError, fit_line, parse_horizons, run_sweep

    _new_folder("--out", out)
    try:
        days = parse_horizons(horizons)
        result = run_sweep(dataset_dir, out, config, days)
    except SweepError as exc:
        _remove_if_empty(out)
        _fail(str(exc))
    for point in result.get("points", []):
        typer.echo(f"{point['days']:>4} days: pass rate {100 * point['pass_rate']:.1f} % "
                   f"({point.get('context_tokens') or 0:,.0f} context tokens)")
    typer.echo(f"fit over {result.get('tasks', 0)} task(s): {fit_line(result)}; report: {out / 'horizon-report.md'}")


def _remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` if a refused sweep left it empty."""
    try:
        folder.rmdir()
    except OSError:
        pass


@app.command("probe")
def probe_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder"),
    agent: str = typer.Option(..., "--agent", help="llm (a model), oracle (the answer key) or none (always the first "
                              "option: chance)"),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder to write (absent or empty)"),
    mode: str = typer.Option("long-context", "--mode", help="The history given with each question: long-context or "
                             "rag (BM25 retrieval for the question)"),
    top_k: int = typer.Option(5, "--top-k", help="rag: sessions retrieved"),
    eval_run: Optional[Path] = typer.Option(None, "--eval", help="An eval run on the same dataset: split its failed "
                                            "tasks into 'did not remember' and 'remembered but did not act'"),
    model: Optional[str] = typer.Option(None, "--model", help="llm: model name"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="llm: OpenAI-compatible base URL"),
    llm_config: Optional[Path] = typer.Option(None, "--llm-config", help="llm: JSON or TOML settings file"),
    llm_set: LLMSetOption = [],
) -> None:
    """Memory probes: per task, multiple-choice questions built by rules from its memory pieces
    (the final value, which value is current, what was corrected, near-misses, a day relative to
    another), asked closed-book and with the history; accuracy per memory dynamic."""
    from harness.context import ContextConfig
    from harness.probe_run import AGENTS, ProbeConfig, run_probes

    _check_dataset(dataset_dir)
    if agent not in AGENTS:
        _fail(f"--agent: {agent!r} is not one of {', '.join(AGENTS)}")
    try:
        context = ContextConfig(mode=mode, top_k=top_k).validate()
    except ValueError as exc:
        _fail(str(exc))
    _refuse_filled("--out", out)
    eval_rows = None
    if eval_run is not None:
        from harness.scores import RunError, read_run, same_dataset

        try:
            meta, eval_rows = read_run(eval_run)
        except RunError as exc:
            _fail(f"--eval: {exc}")
        if not same_dataset(meta["dataset"], dataset_dir):
            _fail(f"--eval {eval_run}: a run on another dataset ({meta['dataset']})")
    client = None
    if agent == "llm":
        from backends.llm import LLMClient

        client = LLMClient(_llm_settings(model, base_url, llm_config, _overrides(llm_set)))
    _new_folder("--out", out)
    summary = run_probes(dataset_dir, out, ProbeConfig(agent, context), client, eval_rows)
    everything = summary["by_dynamic"]["all"]

    def pct(value: Optional[float]) -> str:
        return "-" if value is None else f"{100 * value:.1f} %"

    typer.echo(f"{summary['questions']} question(s) over {summary['tasks']} task(s): closed-book "
               f"{pct(everything['closed_book'])}, with the history {pct(everything['with_history'])}; "
               f"report: {out / 'probe-report.md'}")
    if "eval_split" in summary:
        split = summary["eval_split"]
        typer.echo(f"eval failures: {split['remembered_but_did_not_act']} remembered but did not act, "
                   f"{split['did_not_remember']} did not remember, {split['not_probed']} without probes")


@app.command("report")
def report_command(
    run: Path = typer.Argument(..., help="An eval run folder"),
    probes: Optional[Path] = typer.Option(None, "--probes", help="A homer probe run on the same dataset"),
    horizons: Optional[Path] = typer.Option(None, "--horizons", help="A homer eval --horizons sweep on the same "
                                            "dataset"),
) -> None:
    """One research report from runs on the same dataset: scores with intervals and ONS, the pass^k
    curve, pass rate by evidence recall, probe accuracy per dynamic and the failure split, the
    horizon curve and its fit. Written to RUN/research-report.md and .html (figures inline)."""
    from harness.research_report import compose
    from harness.scores import RunError
    from office_env.workspace import atomic_write

    try:
        markdown, html = compose(run, probes, horizons)
    except RunError as exc:
        _fail(str(exc))
    atomic_write(run / "research-report.md", markdown.encode("utf-8"))
    atomic_write(run / "research-report.html", html.encode("utf-8"))
    typer.echo(markdown)
    typer.echo(f"report: {run / 'research-report.html'}", err=True)


@app.command("compare")
def compare_command(
    run_a: Path = typer.Argument(..., help="An eval run folder (A)"),
    run_b: Path = typer.Argument(..., help="Another run on the same dataset (B)"),
    resamples: int = typer.Option(1000, "--resamples", help="Bootstrap resamples over tasks"),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed"),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON"),
) -> None:
    """B against A on the tasks both scored: the pass-rate difference with its 95 % bootstrap
    interval (tasks resampled, paired) and an exact sign test over the tasks where they differ."""
    from harness.scores import RunError, compare_runs, read_run, same_dataset

    if not 100 <= resamples <= 1_000_000:
        _fail(f"--resamples: {resamples} is outside 100..1,000,000")
    try:
        meta_a, rows_a = read_run(run_a)
        meta_b, rows_b = read_run(run_b)
    except RunError as exc:
        _fail(str(exc))
    if not same_dataset(meta_a["dataset"], meta_b["dataset"]):
        _fail(f"{run_b}: a run on another dataset ({meta_b['dataset']}, not {meta_a['dataset']}); compare runs "
              "on the same tasks")
    result = compare_runs(rows_a, rows_b, resamples, seed)
    if as_json:
        typer.echo(json.dumps(result, indent=1))
        return
    if not result["tasks"]:
        _fail("the two runs share no scored task", 1)

    def pct(value: float) -> str:
        return f"{100 * value:+.1f}" if value is not None else "-"

    low, high = result["difference_ci"]
    agent = lambda meta: (meta.get("config") or {}).get("agent", "?")  # noqa: E731
    typer.echo(f"A: {run_a} ({agent(meta_a)}): {100 * result['pass_rate_a']:.1f} %   "
               f"B: {run_b} ({agent(meta_b)}): {100 * result['pass_rate_b']:.1f} %   on {result['tasks']} common task(s)")
    typer.echo(f"B - A: {pct(result['difference'])} points, 95 % CI [{pct(low)}, {pct(high)}] "
               f"({resamples} paired bootstrap resamples)")
    typer.echo(f"tasks B did better on: {result['b_better']}, A did better on: {result['a_better']}, same: "
               f"{result['same']}; sign test p = {result['sign_test_p']:.4g}")
    if result["only_a"] or result["only_b"]:
        typer.echo(f"left out: {result['only_a']} task(s) only in A, {result['only_b']} only in B")


@review_app.command("serve")
def review_serve_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder"),
    annotator: Optional[str] = typer.Option(None, "--annotator", help="Your name on every verdict and edit "
                                            "(default: the USER environment variable)"),
    port: int = typer.Option(8765, "--port", help="The port to listen on"),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to bind; any other than 127.0.0.1 / localhost "
                             "needs --token"),
    token: Optional[str] = typer.Option(None, "--token", envvar="HOMER_REVIEW_TOKEN", help="A secret every request "
                                        "must carry (also from HOMER_REVIEW_TOKEN); one is made up for a non-local host"),
) -> None:
    """Serve the review page: the task list, each task with its history, office and oracle plan,
    verdicts per guideline criterion saved at once, and post-edits checked by the task's gates."""
    import secrets

    from verifier.annotations import AnnotationError

    _check_dataset(dataset_dir)
    if not 1 <= port <= 65535:
        _fail(f"--port: {port} is not a port (1-65535)")
    name = annotator or os.environ.get("USER") or "annotator"
    local = host in ("127.0.0.1", "localhost", "::1")
    if not local and not token:
        token = secrets.token_urlsafe(18)
    try:
        import uvicorn

        from orchestrator.review_app import ReviewServer, create_app

        server = ReviewServer(dataset_dir, name, token, hosts=("127.0.0.1", "localhost", "[::1]") if local else ("*",))
        server.store()
    except AnnotationError as exc:
        _fail(f"--annotator: {exc}")
    except OSError as exc:
        _fail(f"{dataset_dir}: cannot open its annotations ({exc.strerror or exc})")
    address = f"http://{'localhost' if local else host}:{port}/" + (f"?token={token}" if token else "")
    typer.echo(f"review page for {dataset_dir} as {name}: {address}  (Ctrl-C stops)", err=True)
    try:
        uvicorn.run(create_app(server), host=host, port=port, log_level="warning")
    except OSError as exc:
        _fail(f"--port {port}: cannot listen ({exc.strerror or exc})")


@review_app.command("apply")
def review_apply_command(
    dataset_dir: Path = typer.Argument(..., help="A reviewed dataset folder"),
    out: Path = typer.Option(..., "--out", help="The new dataset's folder (absent or empty)"),
    rule: str = typer.Option("majority", "--rule", help="any-drop: a task one annotator dropped goes; majority: a "
                             "task goes when more annotators dropped than kept it"),
    unreviewed: str = typer.Option("keep", "--unreviewed", help="keep or drop the tasks nobody gave an overall verdict"),
) -> None:
    """Write a new dataset with the post-edits applied and the dropped tasks removed; every kept
    task's gates run again, and the card records the annotators, kappa and the rule."""
    from orchestrator.review_apply import ApplyError, NothingKept, apply_review

    _check_dataset(dataset_dir)
    try:
        summary = apply_review(dataset_dir, out, rule, unreviewed)
    except NothingKept as exc:
        _fail(str(exc), 1)
    except ApplyError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"--out {out}: cannot be written ({exc.strerror or exc})")
    typer.echo(f"kept {summary['kept']} task(s), dropped {len(summary['dropped'])}, applied {summary['edits']} "
               f"edit(s); wrote {out}")
    for item in summary["dropped"]:
        typer.echo(f"  dropped {item['id']}: {item['reason']}")


# The errors of the project's own definition files (families' phrasing, dialogue banks, prompt
# templates), each naming its file and line. Known by (module, class) name: a bank is parsed when
# its module is imported, and a module whose import failed is no longer in sys.modules.
_DEFINITION_ERRORS = frozenset({("generators.families.phrasing", "FamilyDefinitionError"),
                                ("generators.thread_bank", "BankError"), ("generators.small_talk.bank", "BankError"),
                                ("generators.other_work.bank", "WorkBankError"), ("backends.prompts", "PromptTemplateError")})


def _definition_error(exc: BaseException) -> bool:
    return any((cls.__module__, cls.__name__) in _DEFINITION_ERRORS for cls in type(exc).__mro__)


def main() -> None:
    try:
        app()
    except Exception as exc:
        if not _definition_error(exc):
            raise
        typer.echo(f"error: {exc}", err=True)  # a broken definition file: found at start, before any work
        sys.exit(2)
    except KeyboardInterrupt:  # Ctrl-C outside a batch (while starting, or in a one-shot command)
        typer.echo("\ninterrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
