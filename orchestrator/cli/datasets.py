"""``homer build|verify|stats|show|export|regenerate``: making, checking and exporting datasets."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

import typer
import typer.core

from office_env import limits
from orchestrator.cli.common import (
    DEFAULT_WORKERS,
    MAX_DAYS,
    MAX_ROUNDS,
    MAX_SEED,
    MAX_UTTERANCES,
    Batch,
    Endpoint,
    JsonProgressOption,
    LearnedOption,
    OverwriteOption,
    QuietOption,
    TaskMemoryOption,
    TaskTimeoutOption,
    WorkersOption,
    batch_failed,
    batch_options,
    check_dataset,
    check_turns,
    fail,
    llm_endpoint,
    llm_options,
    need_learned_reader,
    new_folder,
    number_option,
    parse_apps,
    parse_gates_option,
    parse_weights,
    paused,
    preset_size,
    replace_earlier,
    report_gameability,
    report_learned,
    strict_error,
    task_budget,
    writable_out,
)

# orchestrator.roles' MAX_TASKS and MIN_DAYS, not imported here: the builder's imports are slow to load
BUILD_MAX_TASKS = 99_999
BUILD_MIN_DAYS = 2


@batch_options
@llm_endpoint(cache=True)
def build_command(
    out: Path = typer.Option(..., "--out", "-o", help="Dataset folder to create (must be empty unless --resume)"),
    n: int = number_option(20, "--n", help="Number of tasks to build", low=1, high=BUILD_MAX_TASKS),
    seed: int = number_option(0, "--seed", help="Seed: the same seed gives the same dataset, byte for byte", low=0,
                              high=MAX_SEED),
    apps: str = typer.Option("1,2,3", "--apps", help="App counts the tasks use, e.g. 1,2,3 or 2; each gets an "
                             "equal share of the tasks (within one) unless --apps-weights"),
    apps_weights: Optional[str] = typer.Option(None, "--apps-weights", help="Shares of the app counts, as "
                                               "COUNT=WEIGHT per count of --apps, e.g. 1=1,2=2,3=1 (half the tasks "
                                               "use 2 apps)"),
    preset: str = typer.Option("standard", "--preset", help="History size: standard (5 days of about 72 "
                               "utterances) or challenge (30 days of about 250: over 100K cl100k tokens per task)"),
    days: Optional[int] = number_option(None, "--days", help="Days (sessions) of dialogue per task (default: the "
                                        "preset's)", low=BUILD_MIN_DAYS, high=MAX_DAYS),
    utterances: Optional[int] = number_option(None, "--utterances", help="Utterances per day, about (default: the "
                                              "preset's)", low=4, high=MAX_UTTERANCES),
    max_rounds: int = number_option(5, "--max-rounds", help="Rounds the verifier may send a dialogue back to be "
                                    "written again before the attempt is dropped", low=1, high=MAX_ROUNDS),
    workers: WorkersOption = DEFAULT_WORKERS,
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted build in --out"),
    overwrite: OverwriteOption = False,
    batch: Batch = Batch(),
    backend: str = typer.Option("offline", "--backend", help="offline (procedural, no key) or llm"),
    endpoint: Endpoint = Endpoint(),
    gates: str = typer.Option("default", "--gates", help="Extra gates: solvability, leakage, judges (comma list), "
                              "'all', or 'default' (only the built-in gates)"),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when the dataset misses the gameability threshold "
                                "(everything is still written; the card says so), or with --learned its targets"),
    learned: LearnedOption = False,
    task_timeout: TaskTimeoutOption = limits.TASK_SECONDS,
    task_memory: TaskMemoryOption = limits.TASK_MEMORY_BYTES // limits.MiB,
) -> None:
    """Build a verified Neo dataset: on the offline backend (default; no key, no network) or through
    an OpenAI-compatible endpoint (--backend llm)."""
    budget = task_budget(task_timeout, task_memory)
    if learned:
        need_learned_reader()
    days, utterances = preset_size(preset, days, utterances)
    from orchestrator.roles import size_problem

    if (problem := size_problem(n, workers, days)) is not None:  # before the builder's seconds of imports
        fail(problem)
    if overwrite or resume:
        replace_earlier("--out", out, overwrite, "build.json", "dataset", resume)
    llm = llm_options(backend, endpoint)  # the endpoint first
    counts = parse_apps(apps)
    weights, gate_names = parse_weights(apps_weights, counts), parse_gates_option(gates)
    where = batch.where()

    from generators.bank_check import check_banks

    check_banks()  # a broken dialogue bank: one line now, not after the builder's seconds of imports
    writable_out("--out", out)  # before the progress line and the builder's imports
    from orchestrator.progress import Reporter

    started = time.perf_counter()
    try:
        with Reporter("build", n, batch.progress_mode(), target="kept") as progress:
            # seconds to load: the progress shows meanwhile
            from backends.batch import space_named
            from orchestrator.build import build, space_needed
            from orchestrator.roles import BuildConfig

            config = BuildConfig(seed=seed, app_counts=counts, app_weights=weights, days=days,
                                 utterances_per_day=utterances, max_rounds=max_rounds, gates=gate_names, **llm)
            with space_named(out, needed=lambda: space_needed(out, n, config)):  # a write before or after the batch
                summary = build(out, n, config, workers=workers, resume=resume, budget=budget, on_pause=paused,
                                on_outcome=progress.outcome, on_progress=progress.counted, **where)
    except Exception as exc:
        batch_failed(exc, "attempts")
        raise
    _report_build(out, n, summary, time.perf_counter() - started, strict, learned)


def _report_build(out: Path, n: int, summary: Any, elapsed: float, strict: bool, learned: bool) -> None:
    """The build's last lines; exit 1 when fewer tasks than asked passed, or ``--strict`` and the
    dataset misses the gameability threshold (or, ``learned``, the learned reader's targets)."""
    drops = ", ".join(f"{k}: {v}" for k, v in sorted(summary.drops.items())) or "none"
    stopped = f"; {summary.repeats_stopped} duplicate(s) stopped at their drafts" if summary.repeats_stopped else ""
    typer.echo(f"built {summary.accepted} task(s) in {out} from {summary.attempts} attempt(s) "
               f"in {elapsed:.1f} s (dropped: {drops}{stopped})")
    result = report_gameability(out, summary.gameability)
    failed = False
    if summary.accepted < n:
        typer.echo(f"error: only {summary.accepted} of {n} tasks passed the gates; the commonest reasons:", err=True)
        _echo_reasons(summary.reasons)
        failed = True
    if strict and not result["passed"]:
        strict_error(result)
        failed = True
    if learned and report_learned(out, strict):
        failed = True
    if failed:
        raise typer.Exit(1)


def verify_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET", help="A dataset folder written by homer build"),
    strict: bool = typer.Option(False, "--strict",
                                help="Also exit 1 when the dataset misses the gameability threshold (or, with "
                                "--learned, the learned reader's targets)"),
    learned: LearnedOption = False,
) -> None:
    """Re-run every gate on a written dataset; one line per task, then the gameability line; exit 1 on
    any failure (and, with --strict, when a gameability detector is above the threshold).

    A task that cannot be loaded or whose gates fail on malformed content is one FAIL line; the
    other tasks are still checked."""
    check_dataset(dataset_dir)  # a folder that is none is refused before the gates' modules load
    if learned:
        need_learned_reader()
    from backends.dataset_reader import iter_tasks
    from office_env.untrusted import printable

    failures = total = 0
    records = []
    for task in iter_tasks(dataset_dir):
        total += 1
        if task.record is None or task.task is None:  # refused as it was read: the gates' modules are not needed
            failures += 1
            typer.echo(f"FAIL {task.id}: {printable(task.error)}")
            continue
        from orchestrator.review.edits import recheck

        try:
            results = recheck(task.task, task.testbed, task.reference)  # with the extra gates it was built with
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
    if not records:  # no task to measure: no module to load for it either
        typer.echo("gameability: no task passed its schema, nothing to measure")
        raise typer.Exit(1)
    from orchestrator.card import gameability_line
    from verifier.gameability import gameability

    result = gameability(records)
    typer.echo(gameability_line(result))
    missed_strict = strict and not result["passed"]
    if missed_strict:
        strict_error(result)
    if learned and report_learned(dataset_dir, strict, known=(records, total)):
        missed_strict = True
    if failures or not total or missed_strict:
        raise typer.Exit(1)


def stats_command(dataset_dir: Path = typer.Argument(..., metavar="DATASET",
                                                     help="A dataset folder written by homer build")) -> None:
    """Print the dataset card's statistics (per app count: sessions, utterances, tokens), then its
    gameability section (detectors, memory dynamics, text statistics)."""
    check_dataset(dataset_dir)
    from backends.dataset_reader import iter_tasks
    from office_env.untrusted import printable
    from orchestrator.card import gameability_section, statistics, table
    from verifier.gates import schema_gate

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


def show_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET", help="A dataset folder"),
    task_id: str = typer.Argument(..., metavar="TASK_ID", help="The task's id, e.g. neo-00003"),
    day: Optional[int] = number_option(None, "--day", help="Print this day of the chat, every turn with its marks",
                                       low=1, high=limits.MAX_DIALOGUE_TURNS),
    as_json: bool = typer.Option(False, "--json", help="Print the view as JSON"),
) -> None:
    """Print one task readably: intent, description, memory with the turns that say it, criteria in
    words, the oracle plan and the testbed's files (--day N: one day of the chat)."""
    check_dataset(dataset_dir)
    from backends.dataset_reader import load_task

    task = load_task(dataset_dir, task_id)
    if task.task is None:
        fail(task.error or f"{task_id}: unreadable")
    from orchestrator.show import day_view, render_day, render_task, task_view
    if day is not None:
        view = day_view(task.task, day)
        if view is None:
            days = [session.day for session in task.task.dialogue]
            fail(f"--day {day}: {task_id} has no such day (days: {', '.join(map(str, days)) or 'none'})")
        typer.echo(json.dumps(view, ensure_ascii=False, indent=1) if as_json else render_day(view), nl=as_json)
        return
    view = task_view(task.task, task.folder / "testbed")
    typer.echo(json.dumps(view, ensure_ascii=False, indent=1) if as_json else render_task(view), nl=as_json)


def export_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET",
                                       help="A dataset folder written by homer build or homer regenerate"),
    officebench: Optional[Path] = typer.Option(None, "--officebench", help="Folder to write OfficeBench's tasks/ "
                                               "layout into"),
    hf: Optional[Path] = typer.Option(None, "--hf", help="Folder to write a Hugging Face dataset into (JSONL "
                                      "shards, the offices packed per task, a card that datasets.load_dataset reads)"),
    sft: Optional[Path] = typer.Option(None, "--sft", help="Folder to write oracle trajectories into, as chat-format "
                                       "JSONL with tool calls and their results"),
    sft_mode: str = typer.Option("long-context", "--sft-mode", help="sft: the history in the prompt "
                                 "(long-context) or retrieved for the query (rag, BM25)"),
    sft_top_k: int = number_option(2, "--sft-top-k", help="sft, rag: sessions retrieved (of 5 in a standard history)",
                                   low=1, high=MAX_DAYS),
    lossy: bool = typer.Option(False, "--lossy", help="officebench: keep a task whose criteria cannot all be "
                               "carried over, without those criteria (they are listed)"),
    quiet: QuietOption = False,
    json_progress: JsonProgressOption = False,
    overwrite: OverwriteOption = False,
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
        fail("choose one export target: --officebench DIR, --hf DIR or --sft DIR")
    check_dataset(dataset_dir)
    flag, out = chosen[0]
    context = None
    markers: dict[str, str | tuple[str, ...]] = {"--officebench": "export.json", "--hf": ("README.md", "data"),
                                                 "--sft": "train.jsonl"}
    marker = markers[flag]
    replace_earlier(flag, out, overwrite, marker, f"{flag[2:]} export")
    if sft is not None:
        from harness.context import ContextConfig

        try:
            context = ContextConfig(mode=sft_mode, top_k=sft_top_k).validate()
        except ValueError as exc:
            fail(str(exc).replace("--mode", "--sft-mode"))
    new_folder(flag, out)
    from backends.batch import space_named
    from backends.dataset_reader import count_tasks
    from orchestrator.progress import Reporter, mode_for

    with Reporter("export", count_tasks(dataset_dir), mode_for(quiet, json_progress),
                  kept_word="exported") as progress, \
            space_named(out, again="run the export again", needed=lambda: _still_to_copy(dataset_dir / "tasks", out)):
        if hf is not None:
            from orchestrator.hf_export import export_hf

            summary = export_hf(dataset_dir, hf, on_outcome=progress.outcome)
        elif sft is not None:
            from harness.sft_export import export_sft

            assert context is not None  # made above for --sft
            result = export_sft(dataset_dir, sft, context, on_outcome=progress.outcome)
        else:
            from orchestrator.officebench_export import export_officebench

            exported = export_officebench(dataset_dir, out, lossy=lossy, on_outcome=progress.outcome)
    if hf is not None:
        for line in summary.skipped:
            typer.echo(f"skipped {line}", err=True)
        typer.echo(f"exported {summary.written} task(s) in {summary.shards} shard(s) to {hf}")
        raise typer.Exit(1 if summary.skipped else 0)
    if sft is not None:
        for line in result.skipped:
            typer.echo(f"left out {line}", err=True)
        typer.echo(f"exported {result.written} trajectory(ies) to {sft / 'train.jsonl'}"
                   + (f" ({len(result.skipped)} task(s) left out)" if result.skipped else ""))
        return
    _officebench_summary(exported, out)


def _officebench_summary(summary: Any, out: Path) -> None:
    """The OfficeBench export's result, then every task it skipped or left out with the reason, at
    the end where it is seen (a default export leaves many out: criteria OfficeBench cannot say)."""
    extra = [f"{len(summary.skipped)} skipped" if summary.skipped else "",
             f"{len(summary.left_out)} left out" if summary.left_out else "",
             f"{len(summary.lossy)} without some criteria" if summary.lossy else "",
             f"{len(summary.widened)} without their where-stated checks" if summary.widened else ""]
    note = ", ".join(e for e in extra if e)
    typer.echo(f"exported {summary.written} task(s) to {out / 'tasks'}" + (f" ({note})" if note else ""))
    for prefix, lines in (("skipped", summary.skipped), ("warning: left out", summary.left_out),
                          ("warning: exported without some criteria", summary.lossy)):
        for line in lines:
            typer.echo(f"{prefix} {line}", err=True)
    if summary.widened:
        typer.echo(f"note: {len(summary.widened)} task(s) exported without their where-stated checks (OfficeBench "
                   f"cannot check a value only where an output states it); the list is in {out / 'export.json'}",
                   err=True)
    if summary.left_out or summary.skipped:
        typer.echo(f"{len(summary.left_out)} task(s) left out (a criterion OfficeBench cannot express, or the "
                   f"export failed its check; --lossy keeps the first kind without those criteria), "
                   f"{len(summary.skipped)} skipped; the list is in {out / 'export.json'}", err=True)
    raise typer.Exit(1 if summary.skipped else 0)


@batch_options
@llm_endpoint(cache=True)
def regenerate_command(
    seeds: Path = typer.Option(..., "--seeds",
                               help="OfficeBench seed tasks: a checkout, its tasks/ folder, or one task folder"),
    out: Path = typer.Option(..., "--out", "-o", help="Dataset folder to create (must be empty unless --resume)"),
    backend: str = typer.Option("offline", "--backend", help="offline (procedural, no key) or llm"),
    seed: int = number_option(0, "--seed", help="Seed: the same seeds and seed give the same dataset, byte for byte",
                              low=0, high=MAX_SEED),
    shape: str = typer.Option("paper", "--shape", help="paper (about 28 short sessions of about 11 utterances, "
                              "as HomerAgents+ has them) or neo (5 sessions of about 70)"),
    preset: Optional[str] = typer.Option(None, "--preset", help="challenge: 30 days of about 250 utterances (over "
                                         "100K tokens per task) instead of the shape's"),
    days: Optional[int] = number_option(None, "--days", help="Days (sessions) of dialogue per task (default: the "
                                        "shape's)", low=1, high=MAX_DAYS),
    utterances: Optional[int] = number_option(None, "--utterances", help="Utterances per day, about (default: the "
                                              "shape's)", low=4, high=MAX_UTTERANCES),
    max_rounds: int = number_option(5, "--max-rounds", help="Rounds the verifier may send a dialogue back to be "
                                    "written again before the attempt is dropped", low=1, high=MAX_ROUNDS),
    workers: WorkersOption = DEFAULT_WORKERS,
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run in --out"),
    overwrite: OverwriteOption = False,
    batch: Batch = Batch(),
    endpoint: Endpoint = Endpoint(),
    gates: str = typer.Option("default", "--gates", help="Extra gates: solvability, leakage, judges (comma list), "
                              "'all', or 'default'"),
    task_timeout: TaskTimeoutOption = limits.TASK_SECONDS,
    task_memory: TaskMemoryOption = limits.TASK_MEMORY_BYTES // limits.MiB,
    repair: bool = typer.Option(False, "--repair", help="Fix seeds whose lint errors all have an unambiguous repair "
                                "(a typo'd file name, a doc_type against the extension) instead of dropping them; "
                                "every repair is recorded in the task's provenance"),
    keep_people: bool = typer.Option(False, "--keep-people", help="Keep each seed's own people; by default every "
                                     "person of a seed gets another name in its instruction, criteria and files "
                                     "(the seeds are public: their answers are known)"),
    learned: LearnedOption = False,
) -> None:
    """Regenerate a Plus split from OfficeBench seed tasks: one task per seed subtask, with an intent
    and a multi-day dialogue carrying the instruction's specifics; evaluation and files are kept,
    with the seed's people re-cast under other names unless --keep-people. Exit 0 when a task was
    written and every seed loaded, 1 otherwise (the rest is still written), 2 for bad input."""
    budget = task_budget(task_timeout, task_memory)
    if learned:
        need_learned_reader()
    if overwrite or resume:
        replace_earlier("--out", out, overwrite, "build.json", "regenerated dataset", resume)
    llm = llm_options(backend, endpoint)  # the endpoint first
    if not seeds.exists():
        fail(f"--seeds {seeds}: does not exist")
    if preset is not None:
        days, utterances = preset_size(preset, days, utterances)
    if days is not None and days < 1:
        fail(f"--days must be at least 1 (got {days})")
    if utterances is not None and utterances < 4:
        fail(f"--utterances must be at least 4 (got {utterances})")
    if days is not None and utterances is not None:  # one flag with a shape's other size stays under the cap
        check_turns(days, utterances)
    gate_names, where = parse_gates_option(gates), batch.where()

    from generators.bank_check import check_banks

    check_banks()  # a broken dialogue bank: one line now, before the regenerator loads
    writable_out("--out", out)
    from orchestrator.progress import Reporter

    started = time.perf_counter()
    try:
        with Reporter("regenerate", None, batch.progress_mode()) as progress:
            # seconds to load: the progress shows meanwhile
            from backends.batch import space_named
            from orchestrator.plus import SHAPES, regenerate_split

            if shape not in SHAPES:
                fail(f"--shape {shape!r}: must be one of {', '.join(SHAPES)}")
            size = SHAPES.get(shape, SHAPES["paper"])
            turns = (days or size[0]) * (utterances or size[1])
            with space_named(out, needed=lambda: _regenerated_size(seeds, out, turns)):
                summary = regenerate_split(seeds, out, seed=seed, days=days, utterances_per_day=utterances,
                                           shape=shape, workers=workers, resume=resume, gates=gate_names,
                                           max_rounds=max_rounds,
                                           budget=budget, repair_seeds=repair, keep_people=keep_people,
                                           on_pause=paused, on_outcome=progress.outcome,
                                           **where, on_progress=progress.counted, **llm)
    except Exception as exc:
        batch_failed(exc, "seeds")
        raise
    _say_regenerated(summary, out, time.perf_counter() - started, learned)


def _still_to_copy(source: Path, out: Path) -> int | None:
    """About the bytes a command copying ``source`` into ``out`` still writes (asked once a write
    found no space): the bytes under ``source`` less those under ``out``."""
    from office_env.untrusted import scan_tree

    try:
        total, written = (scan_tree(folder, check_links=False, max_file_bytes=None, max_total_bytes=None).total_bytes
                          if folder.exists() else 0 for folder in (source, out))
    except (OSError, ValueError):  # (an unreadable entry: no estimate, the line still names the folder)
        return None
    return max(total - written, 0) or None


def _regenerated_size(seeds: Path, out: Path, turns: int) -> int | None:
    """About the bytes a regeneration still writes (asked once a write found no space): a task a
    seed subtask, each with its seed's files and a task.json of ``turns`` turns, less the bytes
    the folder holds."""
    from office_env.untrusted import scan_tree
    from orchestrator.dataset_writer import TURN_BYTES

    try:
        tree = scan_tree(seeds, check_links=False, max_file_bytes=None, max_total_bytes=None)
        written = scan_tree(out, check_links=False, max_file_bytes=None, max_total_bytes=None).total_bytes \
            if out.exists() else 0
    except (OSError, ValueError):
        return None
    files: dict[tuple[str, ...], int] = {}  # a seed task's folder: the bytes of its files
    subtasks: dict[tuple[str, ...], int] = {}  # and its subtasks, each a task with a copy of those files
    for entry in tree.files:
        cut = next((i for i, part in enumerate(entry.parts) if part in ("subtasks", "testbed", "reference")), None)
        if cut is not None:
            task = entry.parts[:cut]
            files[task] = files.get(task, 0) + entry.size
            subtasks[task] = subtasks.get(task, 0) + (entry.parts[cut] == "subtasks")
    total = sum(count * (files[task] + TURN_BYTES * turns) for task, count in subtasks.items())
    return max(total - written, 0) or None


def _say_regenerated(summary: Any, out: Path, elapsed: float, learned: bool) -> None:
    """The end of ``homer regenerate``: each warning, skipped seed, dropped and unfinished task on a
    line, the one-line summary (and, ``learned``, the learned reader's line), and exit 1 when a seed
    did not load or no task was written."""
    for warning in summary.warnings:
        typer.echo(f"warning: {warning['file']}: {warning['field']}: {warning['message']}")
    for problem in summary.skipped:
        typer.echo(f"skipped: {problem['file']}: {problem['field']}: {problem['message']}")
    for item in summary.dropped:
        typer.echo(f"dropped: {item['seed']} ({item['id']}): {item['reason']}")
    for item in summary.errors:
        typer.echo(f"not done (the endpoint failed; --resume runs it again): {item['seed']} ({item['id']}): "
                   f"{item['reason']}")
    drops = ", ".join(f"{k}: {v}" for k, v in sorted(summary.drops.items())) or "none"
    typer.echo(f"regenerated {summary.written} task(s) in {out} from {summary.loaded} seed(s) in {elapsed:.1f} s "
               f"(skipped seeds: {len(summary.skipped_files)}; dropped: {drops})")
    if learned and summary.written:
        report_learned(out)
    if summary.skipped_files or not summary.written:
        if not summary.written:
            typer.echo("error: no task was written; the commonest reasons:", err=True)
            _echo_reasons([item["reason"] for item in [*summary.dropped, *summary.errors]])
        raise typer.Exit(1)


def _echo_reasons(reasons: list[str]) -> None:
    """The commonest reasons attempts ended with, counted, each with the advice for its kind."""
    from backends.llm.failures import summary_lines

    for line in summary_lines(reasons):
        typer.echo(line, err=True)
