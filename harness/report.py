"""Scores of an evaluation run, and its Markdown report in the paper's shape.

``metrics(rows, trials)`` groups the result rows (one per task and trial) by app count:

- ``pass_rate``: the macro average over tasks of each task's pass fraction over its trials
  (pass@1 as the mean over trials);
- ``pass_k``: the share of tasks that passed every one of their ``k`` trials (only reported when
  ``trials > 1``);
- ``context_tokens`` and ``steps``: means over runs; ``recall``: the mean evidence recall of the
  retrieved context over runs that have one (RAG only);
- ``errors``: runs that ended with an error (the endpoint failed, the history did not fit the
  model, the agent crashed). They are neither passes nor fails: pass rates, context tokens and
  steps are over the other runs, and a task whose every run ended so is left out of them.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence, cast

from backends.tokens import counter_name
from harness.run_view import failed_criteria, first_failure
from harness.scores import RESAMPLES
from harness.totals import APP_COUNTS, FAILED_SHOWN, OVERALL, totals_of


def metrics(rows: Iterable[dict[str, Any]], trials: int) -> dict[str, Any]:
    """``{"trials": k, "groups": {"1": {...}, "2": {...}, "3": {...}, "overall": {...}}}``; each
    group also has 95 % bootstrap intervals and ONS (see ``harness.scores``). The figures of
    ``harness.totals.RunTotals``, which an eval run computes in one pass over its sorted rows."""
    return totals_of(rows, trials).metrics()


def whole_history_warning(data: dict[str, Any], config: dict[str, Any]) -> str | None:
    """One line when retrieval returned the whole history of some tasks: there RAG is long-context
    under another name (its tokens, context and recall are the same), which a reader must know."""
    whole = data.get("whole_history")
    if not whole:
        return None
    tasks = data["groups"][OVERALL]["tasks"]
    context = config.get("context") or {}
    return (f"retrieval returned the whole history for {whole} of {tasks} task(s) (--top-k {context.get('top_k')} "
            f"with {context.get('granularity')} units): there this RAG run is the same as long-context; "
            "use a smaller --top-k or finer units (--granularity utterance)")


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _with_ci(value: float | None, ci: Any) -> str:
    if value is None:
        return "-"
    return pct(value) + (f" [{pct(ci[0])}, {pct(ci[1])}]" if ci else "")


def ons(value: float | None, ci: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def table_rows(data: dict[str, Any], *, rag: bool) -> tuple[list[str], list[list[str]]]:
    """The results table's headers and rows (a row per app count and one overall), as text cells;
    the errors column only when some run ended with an error."""
    k = data["trials"]
    headers = ["apps", "tasks", ("pass@1 (%)" if k > 1 else "pass rate (%)") + " [95% CI]"]
    if k > 1:
        headers.append(f"pass^{k} (%) [95% CI]")
    headers += ["ONS [95% CI]", "avg context tokens", "avg steps"]
    if rag:
        headers.append("retrieval recall (%)")
    errors = any(group["errors"] for group in data["groups"].values())
    if errors:
        headers.append("errors (runs)")
    rows = []
    for name, group in data["groups"].items():
        label = "overall" if name == OVERALL else f"{name} app{'s' if name != '1' else ''}"
        cells = [label, str(group["tasks"]), _with_ci(group["pass_rate"], group.get("pass_rate_ci"))]
        if k > 1:
            cells.append(_with_ci(group["pass_k"], group.get("pass_k_ci")))
        cells += [ons(group.get("ons"), group.get("ons_ci")), _num(group["context_tokens"]), _num(group["steps"])]
        if rag:
            cells.append(pct(group["recall"]))
        if errors:
            cells.append(str(group["errors"]))
        rows.append(cells)
    return headers, rows


def markdown_table(headers: list[str], rows: list[list[str]], *, bold_last: bool = False) -> str:
    """A Markdown table: the first column left-aligned, the rest right-aligned; ``bold_last``
    sets the last row's label in bold (a total)."""
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join(" --- " if i == 0 else " ---: " for i in range(len(headers))) + "|"]
    for n, cells in enumerate(rows):
        if bold_last and n == len(rows) - 1:
            cells = [f"**{cells[0]}**", *cells[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(data: dict[str, Any], *, rag: bool) -> str:
    """The results table in Markdown, the overall row in bold."""
    headers, rows = table_rows(data, rag=rag)
    return markdown_table(headers, rows, bold_last=True)


def failed_runs(rows: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    """Each failed trial (not an error) as (task, trial, its first failed criterion: function and
    reason), in the rows' order."""
    failed = []
    for row in rows:
        if row.get("passed") or row.get("error"):
            continue
        why = first_failure(failed_criteria(row)) or "no criterion passed it"
        failed.append((str(row.get("id")), int(row.get("trial") or 1), why[:300]))
    return failed


def render_report(data: dict[str, Any], config: dict[str, Any], *, dataset: str,
                  skipped: list[dict[str, str]], errors: list[dict[str, Any]], elapsed: float | None = None,
                  rows: list[dict[str, Any]] | None = None,
                  failed: Sequence[tuple[str, int, str]] | None = None, counter: str | None = None) -> str:
    """The whole ``report.md`` (with ``rows``, or their ``failed`` trials as :func:`failed_runs`
    gives them or ``harness.totals.RunTotals.failed`` keeps them, the failed trials and why each
    failed). ``counter``: the token counter the run's workers counted with (default: this
    process's, ``backends.tokens.counter_name``, which loads the vocabulary)."""
    context = config.get("context") or {}
    rag = context.get("mode") == "rag"
    overall = data["groups"][OVERALL]
    k = data["trials"]
    out = [f"# Evaluation: {config['agent']} agent, {config.get('context_label') or context.get('mode')}", ""]
    summary = (f"{overall['tasks']} task(s) of `{dataset}`, {k} trial(s) each: pass rate "
               f"{pct(overall['pass_rate'])} %")
    if k > 1:
        summary += f" (pass@1, mean over trials), pass^{k} {pct(overall['pass_k'])} %"
    if overall["errors"]:
        summary += (f"; {overall['errors']} run(s) ended with an error and are counted neither as passes nor as "
                    "fails (see below)")
    out += [summary + ".", ""]
    warning = whole_history_warning(data, config)
    if warning:
        out += [f"**Warning:** {warning}.", ""]
    out += ["## Results", "", table(data, rag=rag), ""]
    out += ["Pass rates are macro averages over tasks; a task passes a trial only if every criterion passes.",
            f"Intervals: 95 % percentile bootstrap over tasks ({RESAMPLES} seeded resamples). ONS = (agent - none) / "
            "(oracle - none), where none is how often doing nothing passes and oracle how often the reference plan "
            "passes, both measured on the same tasks (tasks without a plan are left out of ONS)."]
    if overall["tasks"]:  # a run that scored no task counted no token
        out.append(f"Context tokens are counted with {counter or counter_name()} (`backends.tokens`).")
    if rag:
        out.append("Retrieval recall: the share of the task's evidence turns present in the retrieved context.")
    if k > 1:
        out.append(f"pass^{k}: a task counts only if all {k} of its trials pass.")
    out.append("")
    if usage_line(data):
        out += ["## Agent model usage", "", cast(str, usage_line(data)), ""]
    out += ["## Configuration", ""]
    for key, value in config.items():
        if key == "context" and isinstance(value, dict):
            value = ", ".join(f"{k_}={v}" for k_, v in value.items())
        out.append(f"- {key}: {'-' if value is None else value}")
    if elapsed is not None:
        out.append(f"- elapsed: {elapsed:.1f} s")
    out.append("")
    if skipped:
        out += [f"## Skipped tasks ({len(skipped)})", ""]
        out += [f"- `{item['id']}`: {item['error']}" for item in skipped]
        out.append("")
    if failed is None:
        failed = failed_runs(rows or [])
    if failed:
        out += [f"## Failed tasks ({len(failed)} trial(s); `homer view RUN --task ID` shows what the agent did)", ""]
        out += [f"- `{task}` trial {trial}: {why}" for task, trial, why in failed[:FAILED_SHOWN]]
        if len(failed) > FAILED_SHOWN:
            out.append(f"- ... and {len(failed) - FAILED_SHOWN} more (`homer view RUN` lists them all)")
        out.append("")
    if errors:
        out += [f"## Runs that ended with an error ({len(errors)})", ""]
        out += [f"- `{item['id']}` trial {item['trial']}: {item['error']}" for item in errors[:50]]
        if len(errors) > 50:
            out.append(f"- ... and {len(errors) - 50} more (see results.jsonl)")
        out.append("")
    return "\n".join(out)


__all__ = ["metrics", "table", "render_report", "failed_runs", "whole_history_warning", "APP_COUNTS", "OVERALL",
           "FAILED_SHOWN"]


def usage_line(data: dict[str, Any]) -> str | None:
    """The agent model's calls and tokens over a run, in one sentence (None when no model ran)."""
    usage = data.get("agent_usage")
    if not usage:
        return None
    runs = max(1, data["groups"][OVERALL]["runs"])
    return (f"{usage['calls']} call(s), {usage['prompt_tokens']:,} prompt and {usage['completion_tokens']:,} "
            f"completion tokens ({usage['calls'] / runs:.1f} calls and "
            f"{(usage['prompt_tokens'] + usage['completion_tokens']) / runs:,.0f} tokens per run).")
