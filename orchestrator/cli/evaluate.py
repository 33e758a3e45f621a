"""``homer eval|probe|report|compare``: running agents on datasets and reading the results."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import typer
import typer.core

from office_env import limits
from office_env.untrusted import printable
from orchestrator.cli import review
from orchestrator.cli.common import (
    DEFAULT_WORKERS,
    MAX_DAYS,
    MAX_SEED,
    MAX_WORKERS,
    Batch,
    Endpoint,
    JsonProgressOption,
    OverwriteOption,
    QuietOption,
    TaskMemoryOption,
    TaskTimeoutOption,
    WorkersOption,
    batch_options,
    check_dataset,
    fail,
    interrupted,
    llm_endpoint,
    new_folder,
    number_option,
    preflight,
    refuse_filled,
    remove_if_empty,
    replace_earlier,
    task_budget,
    writable_out,
)

MAX_TRIALS = 100  # pass^k over more runs than this says nothing new and costs a run each
MAX_STEPS = 1_000  # tool calls in one run: the default allows 30, a reference plan takes a dozen
MAX_CONTEXT_TOKENS = 10_000_000  # as the llm settings' context_window
MAX_RUNS = 10_000_000  # tasks or runs a count may name (a build makes at most 99,999 tasks, 100 trials each)
MAX_PROBES_PER_TASK = 1_000


@batch_options
@llm_endpoint()
def eval_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET",
                                       help="A dataset folder written by homer build or homer regenerate"),
    agent: str = typer.Option(..., "--agent", help="llm (a model through an OpenAI-compatible endpoint), "
                              "oracle (replays the reference plan), none (does nothing), or your own agent "
                              "as module:Class (imported from the current folder or PYTHONPATH; see docs/eval.md)"),
    mode: str = typer.Option("long-context", "--mode", help="long-context (the whole chat) or rag (retrieval over it)"),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder to write (absent or empty; an earlier run there "
                             "needs --resume or --overwrite)"),
    storage: str = typer.Option("raw", "--storage", help="rag: raw (the chat itself) or summary (summaries of it)"),
    granularity: Optional[str] = typer.Option(None, "--granularity",
                                              help="rag: utterance|session (raw), session|chunk"),
    top_k: Optional[int] = number_option(None, "--top-k", help="rag: units retrieved per task (default: 20 "
                                         "utterances, 2 sessions or 1 chunk)", low=1, high=limits.MAX_DIALOGUE_TURNS),
    chunk_sessions: int = number_option(2, "--chunk-sessions", help="rag summary/chunk: days per chunk", low=1,
                                        high=MAX_DAYS),
    embeddings: Optional[str] = typer.Option(None, "--embeddings",
                                             help="rag: rank by this embedding model on the endpoint (default: BM25)"),
    trials: int = number_option(1, "--trials", help="Runs per task (pass^k over them)", low=1, high=MAX_TRIALS),
    workers: WorkersOption = DEFAULT_WORKERS,
    step_cap: int = number_option(30, "--step-cap", help="Tool calls allowed per run", low=1, high=MAX_STEPS),
    horizons: Optional[str] = typer.Option(None, "--horizons", help="A sweep: evaluate the tasks with their history "
                                           "stretched to each of these day counts (e.g. 5,10,20,40) and fit how "
                                           "success falls with the horizon"),
    max_context_tokens: Optional[int] = number_option(None, "--max-context-tokens", help="The model's context: a "
                                                      "task whose history context is longer is an error run ('error: "
                                                      "context'), not sent and not scored", low=1,
                                                      high=MAX_CONTEXT_TOKENS),
    endpoint: Endpoint = Endpoint(),
    resume: bool = typer.Option(False, "--resume",
                                help="Continue an interrupted run in --out (finished tasks are kept)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the run in --out (its summary cache is kept)"),
    batch: Batch = Batch(),
    max_errors: int = number_option(0, "--max-errors", help="Runs that may end with an error (endpoint down, history "
                                    "too long for the model) before the command exits 1; they never count as fails",
                                    low=0, high=MAX_RUNS),
    semantics: str = typer.Option("homer", "--semantics", help="How criteria are scored: homer, or officebench "
                                  "(OfficeBench's own verdicts, to compare with published numbers)"),
    task_timeout: TaskTimeoutOption = limits.TASK_SECONDS,
    task_memory: TaskMemoryOption = limits.TASK_MEMORY_BYTES // limits.MiB,
    limit: Optional[int] = number_option(None, "--limit", help="Only the first N tasks, in the dataset's order", low=1,
                                         high=MAX_RUNS),
    task_ids: Optional[str] = typer.Option(None, "--task-ids", help="Only these tasks: ids separated by commas "
                                           "(an id the dataset does not hold is refused)"),
) -> None:
    """Evaluate an agent on a dataset (long-context or RAG history); write results.jsonl, report.md
    and run.json into --out and print the report's table. Exit 0 when the run completed (whatever the
    pass rate) with at most --max-errors runs ended by an error, 1 with more, 2 for bad options."""
    budget = task_budget(task_timeout, task_memory)
    if max_errors < 0:
        fail(f"--max-errors {max_errors}: must be 0 or more")
    check_dataset(dataset_dir, export_ok=True)  # a folder that is none: refused before the harness loads
    from backends.job_contract import Interrupted
    from backends.llm.failures import RunRefused
    from backends.ray_executor import RayUnavailable
    from harness.runner import EvalConfig, EvalError, check_run, evaluate
    from orchestrator.progress import Reporter

    if endpoint.llm_config is not None and not endpoint.llm_config.is_file():
        fail(f"--llm-config {endpoint.llm_config}: no such file")
    context = _context(mode, storage, granularity, top_k, chunk_sessions, embeddings)
    config = EvalConfig(agent=agent, context=context, trials=trials, step_cap=step_cap, workers=workers,
                        model=endpoint.model, base_url=endpoint.base_url,
                        llm_config=str(endpoint.llm_config) if endpoint.llm_config else None, semantics=semantics,
                        llm_overrides=endpoint.overrides, max_context_tokens=max_context_tokens, limit=limit,
                        task_ids=tuple(t.strip() for t in (task_ids or "").split(",") if t.strip()))
    try:
        config.validate()
        if config.needs_client():
            from harness.runner import llm_settings, sampling_of

            routes = (("chat", "tools") if agent == "llm" else ()) + (("embeddings",) if embeddings else ())
            settings = llm_settings(config)
            preflight(settings, routes, embedding_model=embeddings)
            if agent == "llm":  # what is sent, whether given, set in the environment or defaulted: in run.json
                config = dataclasses.replace(config, model=settings.model_for("agent"), base_url=settings.endpoint,
                                             sampling=sampling_of(settings, settings.model_for("agent")))
        writable_out("--out", out)
        if horizons is not None:
            _horizon_sweep(dataset_dir, out, config, horizons, batch.progress_mode(), resume, overwrite)
            return
        check_run(dataset_dir, out, config, resume=resume, overwrite=overwrite)  # a refusal is its one line alone
        with Reporter("eval", None, batch.progress_mode(), kept_word="scored") as progress:
            summary = evaluate(dataset_dir, out, config, resume=resume, overwrite=overwrite, budget=budget,
                               on_outcome=progress.outcome,
                               **batch.where(),
                               on_progress=progress.counted)
    except (EvalError, RayUnavailable, RunRefused) as exc:
        fail(str(exc).replace("\n", " "))
    except Interrupted as exc:
        interrupted(exc)
    _say_evaluated(summary, config, out, max_errors)


def _say_evaluated(summary: Any, config: Any, out: Path, max_errors: int) -> None:
    """The end of ``homer eval``: skipped tasks, the report's table, the one-line summary, and exit 1
    when more runs than ``max_errors`` ended with an error."""
    from harness.report import table, whole_history_warning

    for item in summary.skipped:
        typer.echo(f"skipped {item['id']}: {item['error']}", err=True)
    typer.echo(table(summary.metrics, rag=config.context.mode == "rag"))
    if warning := whole_history_warning(summary.metrics, config.to_dict()):
        typer.echo(f"warning: {warning}", err=True)
    overall = summary.overall
    errors = f", {overall['errors']} run(s) ended with an error" if overall["errors"] else ""
    typer.echo(f"evaluated {overall['tasks']} task(s) x {config.trials} trial(s) with the {config.agent} agent "
               f"({config.context.label()}) in {summary.elapsed:.1f} s; skipped {len(summary.skipped)}{errors}; "
               f"report: {out / 'report.md'}")
    _check_errors([e["error"] for e in summary.errors] + [s["error"] for s in summary.skipped
                                                          if str(s["error"]).startswith("error:")], max_errors)


def _check_errors(ended: list[Any], max_errors: int) -> None:
    """Exit 1, with the commonest reasons and the advice for each, when more runs ended with an error
    than --max-errors allows."""
    if len(ended) <= max_errors:
        return
    from backends.llm.failures import summary_lines

    kinds = Counter(str(e).split(":", 1)[0] if not str(e).startswith("error: ")
                    else str(e).split(":", 2)[1].strip() for e in ended)
    detail = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    typer.echo(f"error: {len(ended)} run(s) ended with an error ({detail}), more than --max-errors "
               f"{max_errors}; pass rates leave them out; the commonest reasons:", err=True)
    for line in summary_lines(str(e) for e in ended):
        typer.echo(line, err=True)
    raise typer.Exit(1)


def _context(mode: str, storage: str, granularity: Optional[str], top_k: Optional[int], chunk_sessions: int,
             embeddings: Optional[str]) -> Any:
    """The history context the options ask for; rag without --granularity / --top-k takes a
    fraction of the history (harness.context.rag_defaults), never all of it."""
    from harness.context import ContextConfig, rag_defaults

    if mode == "rag":
        granularity, top_k = rag_defaults(storage, granularity, top_k)
    return ContextConfig(mode=mode, storage=storage, granularity=granularity or "session",
                         top_k=5 if top_k is None else top_k, chunk_sessions=chunk_sessions, embeddings=embeddings)


def _horizon_sweep(dataset_dir: Path, out: Path, config: Any, horizons: str, progress_mode: str, resume: bool,
                   overwrite: bool) -> None:
    from harness.horizon import fit_line
    from orchestrator.horizon_sweep import SweepError, parse_horizons, run_sweep
    from orchestrator.progress import Reporter

    if resume:
        fail("--resume does not apply to --horizons (a sweep runs whole); --overwrite replaces one")
    replace_earlier("--out", out, overwrite, "horizon.json", "horizon sweep")
    new_folder("--out", out)
    try:
        days = parse_horizons(horizons)
        with Reporter("horizons", None, progress_mode, kept_word="scored") as progress:
            result = run_sweep(dataset_dir, out, config, days, on_outcome=progress.outcome, on_total=progress.set_total)
    except SweepError as exc:
        remove_if_empty(out)
        fail(str(exc))
    for point in result.get("points", []):
        typer.echo(f"{point['days']:>4} days: pass rate {100 * point['pass_rate']:.1f} % "
                   f"({point.get('context_tokens') or 0:,.0f} context tokens)")
    typer.echo(f"fit over {result.get('tasks', 0)} task(s): {fit_line(result)}; report: {out / 'horizon-report.md'}")


@llm_endpoint()
def probe_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET", help="A dataset folder"),
    agent: str = typer.Option(..., "--agent", help="llm (a model), oracle (the answer key) or none (always the first "
                              "option: chance)"),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder to write (absent or empty)"),
    mode: str = typer.Option("long-context", "--mode", help="The history given with each question: long-context or "
                             "rag (BM25 retrieval for the question)"),
    top_k: int = number_option(2, "--top-k", help="rag: sessions retrieved (of 5 in a standard history)", low=1,
                               high=MAX_DAYS),
    eval_run: Optional[Path] = typer.Option(None, "--eval", help="An eval run on the same dataset: split its failed "
                                            "tasks into 'did not remember' and 'remembered but did not act'"),
    per_task: Optional[int] = number_option(None, "--per-task", help="At most N questions a task (its first N, in a "
                                            "fixed order): a sample that costs a paid model less", low=1,
                                            high=MAX_PROBES_PER_TASK),
    workers: int = number_option(DEFAULT_WORKERS, "--workers", "-w", help="Tasks probed at once, 1 to 8 per core "
                                 "(threads: an llm agent's requests overlap; default: the CPU count, at most 4; "
                                 f"{DEFAULT_WORKERS} here)", low=1, high=MAX_WORKERS,
                                 unit=f" ({MAX_WORKERS} here: 8 per core)", span=""),
    quiet: QuietOption = False,
    json_progress: JsonProgressOption = False,
    endpoint: Endpoint = Endpoint(),
    overwrite: OverwriteOption = False,
) -> None:
    """Memory probes: per task, multiple-choice questions built by rules from its memory pieces
    (the final value, which value is current, what was corrected, near-misses, a day relative to
    another), asked closed-book and with the history; accuracy per memory dynamic."""
    check_dataset(dataset_dir)
    from harness.context import ContextConfig
    from harness.probe_run import AGENTS, ProbeConfig, run_probes

    if agent not in AGENTS:
        fail(f"--agent: {agent!r} is not one of {', '.join(AGENTS)}")
    try:
        context = ContextConfig(mode=mode, top_k=top_k).validate()
    except ValueError as exc:
        fail(str(exc))
    replace_earlier("--out", out, overwrite, "probe.json", "probe run")
    refuse_filled("--out", out)
    eval_rows = _eval_rows(eval_run, dataset_dir) if eval_run is not None else None
    client = None
    if agent == "llm":
        from backends.llm import LLMClient

        client = LLMClient(endpoint.settings())
    new_folder("--out", out)
    from backends.llm.failures import RunRefused
    from orchestrator.progress import Reporter, mode_for

    try:
        with Reporter("probe", None, mode_for(quiet, json_progress), kept_word="probed") as progress:
            summary = run_probes(dataset_dir, out, ProbeConfig(agent, context, per_task), client, eval_rows,
                                 workers=workers, eval_source=str(eval_run.resolve()) if eval_run else None,
                                 on_outcome=progress.outcome, on_total=progress.set_total)
    except RunRefused as exc:
        fail(str(exc))
    _say_probed(summary, out)


def _eval_rows(eval_run: Path, dataset_dir: Path) -> list:
    """The rows of ``--eval``'s run, refused (exit 2) unless it is a run on ``dataset_dir``."""
    from backends.dataset_reader import dataset_identity
    from harness.scores import RunError, pairing_problem, read_run

    try:
        meta, rows = read_run(eval_run)
    except RunError as exc:
        fail(f"--eval: {exc}")
    problem = pairing_problem(meta, dataset_identity(dataset_dir))
    if problem is not None:
        fail(f"--eval {eval_run}: not a run on {dataset_dir}: {problem}")
    return rows


def _say_probed(summary: dict, out: Path) -> None:
    """The end of ``homer probe``: each task it could not read (with the file and field), accuracy
    closed-book and with the history, the commonest reasons for unanswered questions, and the split
    of an eval run's failures."""
    from backends.llm.failures import summary_lines

    everything = summary["by_dynamic"]["all"]

    def pct(value: Optional[float]) -> str:
        return "-" if value is None else f"{100 * value:.1f} %"

    for item in summary["skipped"]:
        typer.echo(printable(f"skipped {item['id']}: {item['reason']}"), err=True)
    skipped = f", {len(summary['skipped'])} task(s) skipped" if summary["skipped"] else ""
    typer.echo(f"{summary['questions']} question(s) over {summary['tasks']} task(s){skipped}: closed-book "
               f"{pct(everything['closed_book'])}, with the history {pct(everything['with_history'])}; "
               f"report: {out / 'probe-report.md'}")
    if summary["errors"]:
        typer.echo(f"{len(summary['errors'])} question(s) not answered; the commonest reasons:", err=True)
        for line in summary_lines(e["error"] for e in summary["errors"]):
            typer.echo(line, err=True)
    if "eval_split" in summary:
        split = summary["eval_split"]
        typer.echo(f"eval failures: {split['remembered_but_did_not_act']} remembered but did not act, "
                   f"{split['did_not_remember']} did not remember, {split['not_probed']} without probes")


def report_command(
    run: Path = typer.Argument(..., metavar="RUN", help="An eval run folder"),
    probes: Optional[Path] = typer.Option(None, "--probes", help="A homer probe run on the same dataset"),
    horizons: Optional[Path] = typer.Option(None, "--horizons", help="A homer eval --horizons sweep on the same "
                                            "dataset"),
) -> None:
    """One research report from runs on the same dataset: scores with intervals and ONS, the pass^k
    curve, pass rate by evidence recall, probe accuracy per dynamic and the failure split, the
    horizon curve and its fit. Written to RUN/research-report.md and .html (figures inline)."""
    from backends.batch import space_named
    from harness.research_report import compose
    from harness.scores import RunError
    from office_env.workspace import atomic_write

    try:
        markdown, html = compose(run, probes, horizons)
    except RunError as exc:
        fail(str(exc))
    files = {"research-report.md": markdown.encode("utf-8"), "research-report.html": html.encode("utf-8")}
    with space_named(run, again="run the report again", needed=sum(map(len, files.values()))):
        for name, data in files.items():
            atomic_write(run / name, data)
    typer.echo(markdown)
    typer.echo(f"report: {run / 'research-report.html'}", err=True)


def view_command(
    run: Path = typer.Argument(..., metavar="RUN", help="An eval run folder"),
    task: Optional[str] = typer.Option(None, "--task", help="One task: every trial's tool calls with what each "
                                       "gave back, its final message, and the task's reference plan"),
    as_json: bool = typer.Option(False, "--json", help="Print the per-task data as JSON, for scripts"),
    serve_page: bool = typer.Option(False, "--serve", help="Serve it as a page instead (the review page of the "
                                    "run's dataset, with the run beside it): filters, each task's calls beside "
                                    "its reference plan, links to its history"),
    port: int = review.PortOption,
    host: str = review.HostOption,
    token: Optional[str] = review.TokenOption,
    allowed_host: list[str] = review.AllowedHostOption,
) -> None:
    """What the agent did on each task of a run: each task's outcome (pass, fail, error), the
    criteria that failed with their reasons, steps and tokens; --task ID adds its tool calls and
    results and the reference plan; --serve shows it all on a local page."""
    from harness.run_view import render_view, run_view
    from harness.scores import RunError

    if serve_page:
        from orchestrator.review.run_pages import RunPages

        pages = RunPages([run])
        try:
            pages.load_all()  # read once: the page is served from what is read here
        except RunError as exc:
            fail(str(exc))
        name = next(iter(pages.folders))
        dataset = pages.dataset(name)
        if not (dataset / "tasks").is_dir():
            fail(f"{printable(run)}: its dataset {printable(dataset)} is not there any more; serve the run with "
                 f"`homer review serve DATASET --run {printable(run)}`")
        review.serve(dataset, None, port, host, token, allowed_host, pages, start=pages.path(name, task))
        return
    try:
        view = run_view(run, task)
    except RunError as exc:
        fail(str(exc))
    typer.echo(json.dumps(view, indent=1, ensure_ascii=False) if as_json else _terminal_safe(render_view(view)))


def _terminal_safe(text: str) -> str:
    """Text for a terminal: each line with its control characters escaped (an agent's output is a stranger's)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def compare_command(
    run_a: Path = typer.Argument(..., metavar="RUN_A", help="An eval run folder (A)"),
    run_b: Path = typer.Argument(..., metavar="RUN_B", help="Another run on the same dataset (B)"),
    resamples: int = number_option(1000, "--resamples", help="Bootstrap resamples over tasks", low=100,
                                   high=1_000_000),
    seed: int = number_option(0, "--seed", help="Bootstrap seed", low=0, high=MAX_SEED),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON"),
) -> None:
    """B against A on the tasks both scored: the pass-rate difference with its 95 % bootstrap
    interval (tasks resampled, paired) and an exact sign test over the tasks where they differ."""
    from harness.scores import RunError, compare_tasks, open_run, pairing_problem, per_task

    if not 100 <= resamples <= 1_000_000:
        fail(f"--resamples: {resamples} is outside 100..1,000,000")
    try:
        meta_a, rows_a = open_run(run_a)
        tasks_a = per_task(rows_a)  # the rows read one at a time; a few figures per task kept
        meta_b, rows_b = open_run(run_b)
        tasks_b = per_task(rows_b)
    except RunError as exc:
        fail(str(exc))
    problem = pairing_problem(meta_a, meta_b)
    if problem is not None:
        fail(f"{run_b}: not a run on the dataset of {run_a}: {problem}; compare runs on the same tasks")
    result = compare_tasks(tasks_a, tasks_b, resamples, seed)
    if as_json:
        typer.echo(json.dumps(result, indent=1))
        return
    if not result["tasks"]:
        fail("the two runs share no scored task", 1)

    def pct(value: float) -> str:
        return f"{100 * value:+.1f}" if value is not None else "-"

    low, high = result["difference_ci"]
    agent = lambda meta: (meta.get("config") or {}).get("agent", "?")  # noqa: E731
    typer.echo(f"A: {run_a} ({agent(meta_a)}): {100 * result['pass_rate_a']:.1f} %   "
               f"B: {run_b} ({agent(meta_b)}): {100 * result['pass_rate_b']:.1f} %   "
               f"on {result['tasks']} common task(s)")
    typer.echo(f"B - A: {pct(result['difference'])} points, 95 % CI [{pct(low)}, {pct(high)}] "
               f"({resamples} paired bootstrap resamples)")
    typer.echo(f"tasks B did better on: {result['b_better']}, A did better on: {result['a_better']}, same: "
               f"{result['same']}; sign test p = {result['sign_test_p']:.4g}")
    for side in ("b", "a"):
        names = result[f"{side}_better_tasks"]
        if names:
            more = f" and {len(names) - 20} more (--json lists them all)" if len(names) > 20 else ""
            typer.echo(f"{side.upper()} did better on: {', '.join(printable(str(t)) for t in names[:20])}{more}")
    if result["only_a"] or result["only_b"]:
        typer.echo(f"left out: {result['only_a']} task(s) only in A, {result['only_b']} only in B")
