"""What the commands share: the help options, the option types, and the checks and helpers for
folders, budgets, executors, llm settings and interrupts. (The commands are listed, and the Typer
apps made, in :mod:`orchestrator.cli`.)"""

from __future__ import annotations

import functools
import inspect
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, NoReturn, Optional, Sequence

import typer

from office_env import limits

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}  # on every command and group


# options that build, regenerate and eval share
LLMSetOption = Annotated[list[str], typer.Option("--llm-set", help="llm: a setting over the --llm-config file's, as "
                                                 "KEY=VALUE (repeatable): max_tokens=2048, temperature=null, "
                                                 "structured_output=json_schema, context_window=8192, rpm=600, ...")]


ExecutorOption = Annotated[str, typer.Option("--executor", help="local (worker processes) or ray (Ray tasks: a local "
                                             "Ray instance, or the cluster at --ray-address; needs homeragents[ray])")]


RayAddressOption = Annotated[Optional[str], typer.Option("--ray-address", help="ray: the cluster to join (auto, "
                                                         "HOST:6379 or ray://HOST:10001); every node needs "
                                                         "homeragents; seeds, tasks and results travel through Ray, "
                                                         "so no folder needs to be shared")]


ModelOption = Annotated[Optional[str], typer.Option("--model", help="llm: model name; without the flag, "
                                                                     "HOMER_MODEL (or a .env file's), then "
                                                                     "--llm-config's, then gpt-4o-mini")]
BaseUrlOption = Annotated[Optional[str], typer.Option("--base-url", help="llm: OpenAI-compatible base URL (default: "
                                                                         "OPENAI_BASE_URL)")]
LLMConfigOption = Annotated[Optional[Path], typer.Option("--llm-config", help="llm: JSON or TOML settings file")]
CacheOption = Annotated[Optional[Path], typer.Option("--cache", help="llm: response cache file (default: in the user "
                                                                     "cache folder)")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="llm: do not cache responses")]
LearnedOption = Annotated[bool, typer.Option("--learned", help="Also train a learned reader (TF-IDF + logistic "
                                             "regression) on half the dataset's tasks and print how well it finds "
                                             "the evidence of the other half (needs scikit-learn: the bench extra)")]


def in_range(flag: str, low: float, high: float, unit: str = "", whole: bool = False) -> Callable[[Any], Any]:
    """A numeric flag's check, run as the command line is read: a finite number from ``low`` to
    ``high`` (a whole one with ``whole``), else one line naming the flag and its range (exit 2).
    A value its option's parser could not read as a number (``nan`` for a count, ``1e30``, a word)
    arrives as text and is refused the same way."""
    kind = "a whole number" if whole else "a number"

    def check(value: Any) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) or (isinstance(value, float) and not math.isfinite(value)) \
                or not low <= value <= high:
            fail(f"{flag} {value}: must be {kind} from {_plain(low)} to {_plain(high)}{unit}")
        return value
    return check


def number_parser(whole: bool) -> Callable[[Any], Any]:
    """An option's parser that reads a number and hands anything else on as text, for
    :func:`in_range` to refuse with the flag's range (click's own refusal names neither)."""
    def parse(text: Any) -> Any:
        if not isinstance(text, str):
            return text  # a default
        try:
            return int(text) if whole else float(text)
        except ValueError:
            return "".join(c if c.isprintable() else "?" for c in text.strip()[:40])
    return parse


def number_option(default: Any, *names: str, help: str, low: float, high: float, unit: str = "",
                  whole: bool = True, span: str | None = None, **extra: Any) -> Any:
    """A numeric option bounded as the command line is read (:func:`in_range`): its range is said
    at the end of its help (``span``, else "LOW to HIGH"; an empty ``span`` when the help says it),
    so ``--help`` and docs/cli.md show it."""
    span = f"{_plain(low)} to {_plain(high)}{unit}" if span is None else span
    return typer.Option(default, *names, help=f"{help} ({span})" if span else help, parser=number_parser(whole),
                        callback=in_range(names[0], low, high, unit, whole), **extra)


def _plain(number: float) -> str:
    return f"{int(number):,}" if float(number).is_integer() else f"{number:g}"


MAX_TASK_SECONDS = 7 * 24 * 3600  # a week: a task that needs longer is a hang
MAX_TASK_MEMORY_MIB = 1024 * 1024  # 1 TiB
CORES = os.cpu_count() or 1
MAX_DAYS = 365  # days of history a task may have (the challenge preset has 30)
MAX_UTTERANCES = 1_000  # utterances a day, about
MAX_ROUNDS = 20  # dialogue rounds the verifier may ask for
MAX_SEED = 2**32 - 1  # a seed: any of these gives its own draws
MAX_WORKERS = 8 * CORES  # workers beyond this only wait for the cores (an llm run's threads wait on the endpoint)
# the options build, regenerate and eval share, each bounded as the command line is read
TaskTimeoutOption = Annotated[float, number_option(..., "--task-timeout", help="Seconds one task may take (0: no "
                                                   "limit); a task over it is recorded as 'error: timeout'",
                                                   low=0, high=MAX_TASK_SECONDS, whole=False,
                                                   unit=" seconds (0: no limit)", span=f"0 to {MAX_TASK_SECONDS:,} s")]
TaskMemoryOption = Annotated[int, number_option(..., "--task-memory", help="MiB of memory one task may add to its "
                                                "worker (0: no limit); over it: 'error: memory'",
                                                low=0, high=MAX_TASK_MEMORY_MIB, unit=" MiB (0: no limit)")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress (the result lines are still printed)")]


JsonProgressOption = Annotated[bool, typer.Option("--json-progress", help="Progress as one JSON object per finished "
                                                  "item on standard error, for scripts")]


# the same default for every command that runs a batch: the CPU count, at most 4 (2 on a 2-core machine)
DEFAULT_WORKERS = max(1, min(4, CORES))
WorkersOption = Annotated[int, number_option(..., "--workers", "-w", help="Worker processes, 1 to 8 per core "
                                             f"(default: the CPU count, at most 4; {DEFAULT_WORKERS} here)",
                                             low=1, high=MAX_WORKERS, unit=f" ({MAX_WORKERS} here: 8 per core)",
                                             span="")]


# a batch's failures by (module, class): exit code of the one line each gets; Ctrl-C is its own
_BATCH_FAILURES = {("orchestrator.dataset_folder", "BuildError"): 2, ("backends.ray_executor", "RayUnavailable"): 2,
                   ("harness.runner", "EvalError"): 2, ("orchestrator.horizon_sweep", "SweepError"): 2,
                   ("orchestrator.endpoint_guard", "EndpointDown"): 1, ("backends.llm.failures", "RunRefused"): 2}


def batch_failed(exc: Exception, what: str) -> None:
    """One line and the exit for a batch's known failure (matched by name, so its module need not
    be loaded to catch it: a command shows progress before its slow modules load); returns for
    any other exception, which the caller raises."""
    for cls in type(exc).__mro__:
        key = (cls.__module__, cls.__name__)
        if key == ("backends.job_contract", "Interrupted"):
            interrupted(exc, what)
        if key in _BATCH_FAILURES:
            fail(str(exc).replace("\n", " "), code=_BATCH_FAILURES[key])


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _is_seed_folder(path: Path) -> bool:
    """An OfficeBench checkout, its tasks/ folder or one task folder (``subtasks/`` somewhere)."""
    for root in (path, path / "tasks"):
        try:
            if (root / "subtasks").is_dir() or any((child / "subtasks").is_dir()
                                                   for child in list(root.iterdir())[:200]):
                return True
        except OSError:
            continue
    return False


def check_dataset(path: Path, export_ok: bool = False) -> None:
    """A dataset folder (``tasks/<id>/task.json``; with ``export_ok`` also a Hugging Face export,
    which the command reads back), else one line: what it is and what to run."""
    if not path.is_dir():
        fail(f"{path}: no such folder" if not path.exists() else f"{path}: not a folder")
    if _is_seed_folder(path):
        fail(f"{path}: an OfficeBench seed folder, not a dataset; make a dataset from it with "
              f"`homer regenerate --seeds {path} --out DIR`")
    from backends.hf_folder import is_hf_export

    if is_hf_export(path):
        if export_ok:
            return
        fail(f"{path}: a Hugging Face export (homer export --hf), not a dataset folder; `homer eval` reads it "
             f"back, other commands need the folder it was exported from")
    if not (path / "tasks").is_dir():
        fail(f"{path}: not a dataset folder (no tasks/); `homer build --out DIR` writes one")
    from office_env.untrusted import entry_problem, printable

    problem = entry_problem(path / "build.json", folder=False)
    if problem is not None:  # a link, a FIFO, a device: never followed, never read
        fail(f"{printable(path / 'build.json')}: {problem}; refused")
    unfinished = _unfinished(path)
    if unfinished:
        typer.echo(f"warning: {path}: {unfinished}", err=True)


def _unfinished(path: Path) -> str | None:
    """Why a dataset's tasks may not be all it was meant to hold (None when its build finished, or
    nothing says): a build writing it now, or one that stopped or kept fewer tasks than asked."""
    from backends.folder_lock import writer_alive
    from office_env.untrusted import UntrustedInputError, load_json

    try:
        state = load_json(path / "build.json")
    except UntrustedInputError:
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


def task_budget(task_timeout: float, task_memory: int) -> Any:
    """The per-task budget from ``--task-timeout`` / ``--task-memory`` (0 turns a limit off; their
    ranges are checked as the command line is read: ``TaskTimeoutOption``, ``TaskMemoryOption``)."""
    from backends.job_contract import Budget

    if 0 < task_memory < 64:
        fail(f"--task-memory must be 0 (no limit) or at least 64 MiB (got {task_memory})")
    return Budget(seconds=task_timeout or None, memory_bytes=task_memory * limits.MiB or None)


def interrupted(exc: Any, what: str = "tasks") -> None:
    typer.echo(f"\ninterrupted: {exc.done} of {exc.total} {what} done; rerun with --resume to continue", err=True)
    raise typer.Exit(exc.exit_code)


def parse_apps(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        counts = ()
    if not counts or any(c not in (1, 2, 3) for c in counts):
        fail(f"--apps: {text!r} must be a comma-separated list of app counts from 1, 2, 3 (e.g. 1,2,3)")
    return counts


def parse_weights(text: str | None, counts: tuple[int, ...]) -> tuple[int, ...]:
    """``--apps-weights 1=2,2=1,3=1``: one whole weight (1-100) per app count of ``--apps``, in its
    order; empty (equal shares) when not given."""
    if text is None:
        return ()
    weights: dict[int, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        count, _, weight = part.partition("=")
        try:
            weights[int(count)] = int(weight)
        except ValueError:
            fail(f"--apps-weights: {part!r} must be COUNT=WEIGHT, e.g. 1=2,2=1,3=1")
    if sorted(weights) != list(counts) or any(not 1 <= w <= 100 for w in weights.values()):
        fail(f"--apps-weights: {text!r} must give each app count of --apps ({', '.join(map(str, counts))}) "
              "one whole weight from 1 to 100, e.g. " + ",".join(f"{c}=1" for c in counts))
    return tuple(weights[c] for c in counts)


def parse_gates_option(text: str) -> tuple[str, ...]:
    if text.strip().lower() in ("", "default"):  # the usual case: no need to load the gates (seconds) to know
        return ()
    from verifier.gates import parse_gates

    try:
        return parse_gates(text)
    except ValueError as exc:
        fail(str(exc))
    return ()


def _default_cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "homeragents" / "llm-cache.sqlite"


def _executor(executor: str, ray_address: str | None) -> dict[str, Any]:
    """The executor options, checked: local worker processes, or Ray (installed, reachable)."""
    if executor not in ("local", "ray"):
        fail(f"--executor {executor!r}: must be local or ray")
    if ray_address and executor != "ray":
        fail("--ray-address needs --executor ray")
    if executor == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            fail('--executor ray needs Ray: pip install "homeragents[ray]"')
    return {"executor": executor, "ray_address": ray_address}


def paused(seconds: float) -> None:
    typer.echo(f"the endpoint keeps failing: waiting {seconds:g} s, then checking it again", err=True)


def preflight(settings: Any, routes: tuple[str, ...] = ("chat",), embedding_model: str | None = None) -> None:
    """Fail in seconds, with one line, when the endpoint cannot serve the run (down, key refused,
    model not served, a route or parameter refused), instead of spending every attempt on it."""
    from backends.llm import LLMClient, PreflightError

    start = time.monotonic()
    with LLMClient(settings) as client:
        try:
            notes = client.preflight(models=None if "chat" in routes or "tools" in routes else (), routes=routes,
                                     embedding_model=embedding_model)
        except PreflightError as exc:
            fail(f"endpoint check failed after {time.monotonic() - start:.1f} s: {exc}")
    for note in notes:
        typer.echo(f"warning: {note}", err=True)


def _overrides(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    """``--llm-set KEY=VALUE`` flags, parsed (a bad one is exit 2)."""
    if not pairs:
        return ()
    from backends.llm import LLMConfigError
    from backends.llm.settings import parse_override

    try:
        return tuple(parse_override(pair) for pair in pairs)
    except LLMConfigError as exc:
        fail(str(exc))


@dataclass(frozen=True)
class Endpoint:
    """A command's llm options as given: --model, --base-url, --llm-config, --llm-set and, where the
    command caches responses, --cache and --no-cache (see :func:`llm_endpoint`)."""

    model: Optional[str] = None
    base_url: Optional[str] = None
    llm_config: Optional[Path] = None
    llm_set: Sequence[str] = ()
    cache: Optional[Path] = None
    no_cache: bool = False

    @property
    def overrides(self) -> tuple[tuple[str, str], ...]:
        """--llm-set, parsed (a bad one is exit 2)."""
        return _overrides(list(self.llm_set))

    def settings(self, routes: tuple[str, ...] = ("chat",)) -> Any:
        """The endpoint settings the options resolve to, checked against the endpoint (see :func:`_llm_settings`)."""
        return _llm_settings(self.model, self.base_url, self.llm_config, self.overrides, routes)


_ENDPOINT_OPTIONS: tuple[tuple[str, Any, Any], ...] = (("model", ModelOption, None), ("base_url", BaseUrlOption, None),
                     ("llm_config", LLMConfigOption, None), ("llm_set", LLMSetOption, []),
                     ("cache", CacheOption, None), ("no_cache", NoCacheOption, False))


@dataclass(frozen=True)
class Batch:
    """Where a batch command runs its items and how it shows progress, as given: --executor,
    --ray-address, --quiet, --json-progress (see :func:`batch_options`)."""

    executor: str = "local"
    ray_address: Optional[str] = None
    quiet: bool = False
    json_progress: bool = False

    def where(self) -> dict[str, Any]:
        """The executor options, checked (see :func:`_executor`)."""
        return _executor(self.executor, self.ray_address)

    def progress_mode(self) -> str:
        from orchestrator.progress import mode_for

        return mode_for(self.quiet, self.json_progress)


_BATCH_OPTIONS = (("executor", ExecutorOption, "local"), ("ray_address", RayAddressOption, None),
                  ("quiet", QuietOption, False), ("json_progress", JsonProgressOption, False))


def _option_group(name: str, group: Callable[..., Any], options: Sequence[tuple[str, Any, Any]]
                  ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command's options ``options`` (name, annotated type, default), taken as one parameter
    ``name`` made by ``group(**options)``: Typer is shown the options where that parameter stands,
    so --help lists them in the same place for every command."""

    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            if param.name == name:
                params += [inspect.Parameter(option, param.kind, default=default, annotation=annotated)
                           for option, annotated, default in options]
            else:
                params.append(param)

        @functools.wraps(command)
        def run(**given: Any) -> Any:
            return command(**{name: group(**{option: given.pop(option) for option, _, _ in options})}, **given)

        run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]  # what Typer reads
        run.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
        return run

    return wrap


def llm_endpoint(cache: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command's llm options as one ``endpoint: Endpoint`` parameter: --model, --base-url,
    --llm-config, --llm-set and, with ``cache``, --cache and --no-cache."""
    return _option_group("endpoint", Endpoint, _ENDPOINT_OPTIONS if cache else _ENDPOINT_OPTIONS[:4])


def batch_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """A batch command's --executor, --ray-address, --quiet and --json-progress as one
    ``batch: Batch`` parameter."""
    return _option_group("batch", Batch, _BATCH_OPTIONS)(command)


def _llm_settings(model: Optional[str], base_url: Optional[str], llm_config: Optional[Path],
                  overrides: tuple[tuple[str, str], ...], routes: tuple[str, ...] = ("chat",)) -> Any:
    """The endpoint settings the llm options resolve to, checked against the endpoint (a bad one: exit 2)."""
    from types import SimpleNamespace

    from backends.llm import LLMConfigError
    from backends.llm.settings import settings_for

    try:
        settings = settings_for(SimpleNamespace(llm_config=llm_config, base_url=base_url, model=model,
                                                llm_overrides=overrides))
    except LLMConfigError as exc:
        fail(str(exc))
    preflight(settings, routes)
    return settings


def llm_options(backend: str, endpoint: Endpoint) -> dict[str, Any]:
    """Check the llm options (and the settings they resolve to) before any work starts."""
    if backend not in ("offline", "llm"):
        fail(f"--backend {backend!r}: must be offline or llm")
    if backend == "offline":
        if endpoint.llm_set:
            fail("--llm-set needs --backend llm")
        return {}
    from backends.prompts import check_prompts

    check_prompts()  # a broken prompt template: one line now (see main), not an error per request
    overrides = endpoint.overrides
    settings = endpoint.settings(routes=("chat", "tools"))  # surfers call tools
    cache_path = None if endpoint.no_cache else (endpoint.cache or settings.cache_path or _default_cache())
    return {"backend": "llm", "model": settings.model, "base_url": settings.endpoint,
            "llm_config": str(endpoint.llm_config) if endpoint.llm_config else None,
            "cache_path": str(cache_path) if cache_path else None,
            **({"llm_overrides": overrides} if overrides else {})}


def preset_size(preset: str, days: Optional[int], utterances: Optional[int]) -> tuple[int, int]:
    """The history size: the preset's, with --days / --utterances over it."""
    from orchestrator.roles import PRESETS

    if preset not in PRESETS:
        fail(f"--preset {preset!r}: must be one of {', '.join(PRESETS)}")
    days = PRESETS[preset][0] if days is None else days
    utterances = PRESETS[preset][1] if utterances is None else utterances
    if not 1 <= days <= MAX_DAYS:
        fail(f"--days {days}: must be a whole number from 1 to {MAX_DAYS}")
    if not 4 <= utterances <= MAX_UTTERANCES:
        fail(f"--utterances {utterances}: must be a whole number from 4 to {MAX_UTTERANCES:,}")
    check_turns(days, utterances)
    return days, utterances


def check_turns(days: int, utterances: int) -> None:
    """Refuse, naming both flags, a history longer than a task may hold (the readers would refuse
    every task built with it)."""
    if days * utterances > limits.MAX_DIALOGUE_TURNS:
        fail(f"--days {days} x --utterances {utterances}: {days * utterances:,} turns a history, over the "
             f"{limits.MAX_DIALOGUE_TURNS:,} a task may hold")


def report_gameability(dataset_dir: Path, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """Print the gameability line of a written dataset (``known``: its figures, when the build just
    computed them for the card); return the result."""
    from backends.dataset_reader import iter_tasks
    from orchestrator.card import gameability_line
    from verifier.gameability import gameability

    result = known or gameability([t.record for t in iter_tasks(dataset_dir) if t.record is not None])
    typer.echo(gameability_line(result))
    return result


def need_learned_reader() -> None:
    """``--learned`` without scikit-learn: one line, exit 2, before anything runs."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        fail("--learned: the learned reader needs scikit-learn: pip install 'homeragents[bench]'")


def report_learned(dataset_dir: Path, strict: bool = False,
                   known: tuple[list[dict[str, Any]], int] | None = None) -> bool:
    """Print the learned reader's line of a written dataset (``--learned``): trained and scored on
    two held-out halves of its own tasks (at most ``verifier.learned_reader.REPORT_TASKS`` of them,
    spread over it). ``known``: the dataset's records a caller has read already and its count of
    tasks, else only the tasks spread over it are read here. Returns whether ``strict`` and the
    reader missed a target (the error line is printed); a dataset too small to measure misses none."""
    from orchestrator.card import learned_line
    from verifier.learned_reader import cross_validated, meets_targets, spread

    if known is None:
        from backends.dataset_reader import LoadedTask, listed_tasks, load_task_folder

        entries = [e for e in listed_tasks(dataset_dir) if not isinstance(e, LoadedTask)]
        known = ([task.record for entry in spread(entries) if (task := load_task_folder(*entry)).record is not None],
                 len(entries))
    records, total = known
    result = cross_validated(records)
    typer.echo(learned_line(result, total))
    if not strict or result is None or meets_targets(result):
        return False
    from verifier.learned_reader import F1_PRECISION_TARGET, GUESSER_TARGET, LEARNED_ISOLATION_TARGET

    typer.echo(f"error: --strict: the learned reader missed its targets (precision at best F1 <= "
               f"{F1_PRECISION_TARGET:.2f}, top-5 isolation <= {100 * LEARNED_ISOLATION_TARGET:.0f} %, typed guesser "
               f"<= {100 * GUESSER_TARGET:.0f} %)", err=True)
    return True


def strict_error(result: dict[str, Any]) -> None:
    from verifier.gameability import THRESHOLD, missed

    over = ", ".join(f"{name} {result[name]['precision']:.3f}" for name in missed(result))
    typer.echo(f"error: --strict: gameability missed: detector precision above {THRESHOLD:.2f} ({over})", err=True)


def refuse_filled(flag: str, out: Path) -> None:
    """An output folder must be absent or empty, and not a link: else one line, exit 2 (nothing
    is created, nothing is written through the link)."""
    from office_env.untrusted import SYMLINK, output_folder_problem, printable

    problem = output_folder_problem(out)
    if problem == SYMLINK:
        fail(f"{flag} {printable(out)}: is a symlink; refused (give the real folder)")
    if out.exists() and not out.is_dir():
        fail(f"{flag} {out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()):
        fail(f"{flag} {out}: exists and is not empty; choose a new folder")


def writable_out(flag: str, out: Path) -> None:
    """Refuse (exit 2) an output folder that cannot be written, before a command shows progress or
    loads its modules, and without making it: the nearest existing folder on its path must take a
    file (a probe, removed at once), and ``out`` itself, when it exists, must be a folder."""
    import os
    import tempfile

    from backends.dataset_reader import WRITE_PROBE

    if out.exists() and not out.is_dir():
        fail(f"{flag} {out}: exists and is not a folder")
    here = out
    while not here.exists() and here != here.parent:
        here = here.parent
    if os.path.islink(here) and here == out:
        return  # the commands refuse a linked folder themselves, with their own words
    try:
        if not here.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        fd, probe = tempfile.mkstemp(prefix=WRITE_PROBE, dir=here)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        fail(f"{flag} {out}: cannot write there ({exc.strerror or exc})")


def new_folder(flag: str, out: Path) -> None:
    """A folder to write a new output into: absent or empty (``refuse_filled``), and writable."""
    from backends.dataset_reader import ensure_writable_folder

    refuse_filled(flag, out)
    try:
        ensure_writable_folder(out)
    except OSError as exc:
        fail(f"{flag} {out}: cannot write there ({exc.strerror or exc})")


OverwriteOption = Annotated[bool, typer.Option("--overwrite", help="Replace the earlier output in --out (only "
                                               "when it holds this command's output)")]


def replace_earlier(flag: str, out: Path, overwrite: bool, marker: str | tuple[str, ...], what: str,
                     resume: bool = False) -> None:
    """The rule for every folder a command writes: absent or empty is written; an earlier output
    of this command (every ``marker`` name is in it, none a link) is continued with ``--resume`` (where the command has
    it; same options) or replaced with ``--overwrite``, else refused; anything else is refused.
    A link is never written through."""
    import shutil

    from backends.folder_lock import writer_alive
    from office_env.untrusted import SYMLINK, output_folder_problem, printable

    if resume and overwrite:
        fail("--resume and --overwrite exclude each other: continue the output in --out, or replace it")
    problem = output_folder_problem(out)
    if problem == SYMLINK:
        fail(f"{flag} {printable(out)}: is a symlink; refused (give the real folder)")
    if problem is not None:
        fail(f"{flag} {printable(out)}: exists and is not a folder")
    if not out.exists() or not any(out.iterdir()) or resume:
        return
    markers = (marker,) if isinstance(marker, str) else marker
    earlier = all(os.path.exists(out / name) and not os.path.islink(out / name) for name in markers)
    if not earlier:
        fail(f"{flag} {printable(out)}: exists and is not empty; choose a new folder")
    if not overwrite:
        again = "pass --resume to continue it (same options) or " if what in ("dataset", "regenerated dataset") else ""
        fail(f"{flag} {printable(out)}: holds an earlier {what}; {again}pass --overwrite to replace it, or choose a "
              "new folder")
    if writer_alive(out):
        fail(f"{flag} {printable(out)}: another homer process is writing it now")
    for entry in list(out.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` if a refused sweep left it empty."""
    try:
        folder.rmdir()
    except OSError:
        pass
