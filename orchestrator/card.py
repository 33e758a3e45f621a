"""Dataset statistics in the shape of the paper's Table 4, and the dataset card around them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import median
from typing import Any

from backends.llm.usage import COUNTERS
from backends.task_record import TaskRecord, typed_records
from backends.tokens import count_tokens, counter_description, counter_name
from verifier.duplicates import near_duplicates
from verifier.gameability import DETECTORS, THRESHOLD, CueSums, cue_counts, cue_rows, missed, record_cues
from verifier.learned_reader import F1_PRECISION_TARGET, GUESSER_TARGET, LEARNED_ISOLATION_TARGET, REPORT_MIN_TASKS
from verifier.text_tally import TextTally, TextTotals

Records = Sequence[TaskRecord | dict[str, Any]]


def _tokens(record: TaskRecord) -> int:
    """Dialogue tokens, from provenance when the record carries them (same counter)."""
    counted = record.provenance.tokens or {}
    if counted.get("counter") == counter_name() and isinstance(counted.get("dialogue"), int):
        return int(counted["dialogue"])
    return sum(count_tokens(t.text) for s in record.dialogue for t in s.turns)


def _row(conversations: int, sessions: int, turns: int, tokens: int) -> dict[str, float]:
    return {
        "conversations": conversations,
        "sessions_per_conversation": sessions / conversations if conversations else 0.0,
        "utterances_per_session": turns / sessions if sessions else 0.0,
        "tokens_per_conversation": tokens / conversations if conversations else 0.0,
        "tokens_per_session": tokens / sessions if sessions else 0.0,
        "tokens_per_utterance": tokens / turns if turns else 0.0,
    }


def task_figures(record: TaskRecord, plain: dict[str, Any] | None = None) -> tuple[dict[str, Any], bytes]:
    """What the card takes of one task: its figures (JSON-able, a few hundred bytes whatever the
    history's length) and its texts' rows (``verifier.text_tally``). A build's workers compute
    them where the task is made; the parent only sums them (:class:`CardSums`). ``plain``: the
    record as read, when it was read (the cues read a record as written)."""
    cues = record_cues(record.to_dict() if plain is None else plain)
    provenance = record.provenance
    figures = {
        "app_count": record.app_count, "apps": list(record.apps), "family": record.family,
        "difficulty": record.difficulty, "sessions": len(record.dialogue),
        "turns": sum(len(s.turns) for s in record.dialogue), "tokens": _tokens(record),
        "steps": len(record.oracle) if record.oracle else None,
        "llm": {role: {key: spent.get(key, 0) for key in COUNTERS}
                for role, spent in (provenance.tokens or {}).get("llm", {}).items()},
        "gates": {name: [bool(result.get("skipped")), bool(result.get("passed"))]
                  for name, result in provenance.gates.items()},
        "cost_usd": provenance.extra("cost_usd"),
        "cues": cue_counts(cues),
    }
    return figures, cue_rows(cues)


class CardSums:
    """The card's figures summed one task at a time (:func:`task_figures`), in the order of the
    dataset's index (the gates' table lists gates as they first come): nothing of a task is held
    but its cost, for a sum in the same order as before."""

    def __init__(self) -> None:
        self.rows: dict[int, list[int]] = {}  # per app count: tasks, sessions, turns, tokens
        self.families: Counter[str] = Counter()
        self.apps: Counter[str] = Counter()
        self.difficulty: Counter[str] = Counter()
        self.steps: dict[int, Counter[int]] = {}
        self.llm: dict[str, dict[str, int]] = {}
        self.gates: dict[str, dict[str, int]] = {}
        self.costs: list[Any] = []
        self.cues = CueSums()

    def add(self, figures: dict[str, Any]) -> None:
        count = figures["app_count"]
        row = self.rows.setdefault(count, [0, 0, 0, 0])
        for i, value in enumerate((1, figures["sessions"], figures["turns"], figures["tokens"])):
            row[i] += value
        self.families["?" if figures["family"] is None else figures["family"]] += 1
        self.apps.update(figures["apps"])
        self.difficulty["?" if figures["difficulty"] is None else figures["difficulty"]] += 1
        if figures["steps"]:
            self.steps.setdefault(count, Counter())[figures["steps"]] += 1
        _add_usage(self.llm, figures["llm"])
        for name, (skipped, passed) in figures["gates"].items():
            self.gates.setdefault(name, {"passed": 0, "skipped": 0})["skipped" if skipped else "passed"] += passed
        self.costs.append(figures["cost_usd"])
        self.cues.add(figures["cues"])

    def statistics(self, near: list[tuple[str, str, str]], texts: TextTotals) -> dict[str, Any]:
        """The card's figures (see :func:`statistics`), with the dataset's near duplicates and
        the totals of its texts."""
        overall = [sum(row[i] for row in self.rows.values()) for i in range(4)]
        costs = self.costs
        return {
            "by_app_count": {str(count): _row(*self.rows[count]) for count in sorted(self.rows)},
            "overall": _row(*overall),
            "families": dict(sorted(self.families.items())),
            "apps": dict(sorted(self.apps.items())),
            "difficulty": dict(sorted(self.difficulty.items())),
            "steps_by_app_count": {str(count): _steps(self.steps[count]) for count in sorted(self.steps)},
            "near_duplicates": [list(pair) for pair in near],
            "token_counter": counter_description(),
            "llm_usage": _per_task(self.llm, self.cues.tasks),
            "gates": self.gates,
            "cost_usd": round(sum(costs), 6) if costs and all(isinstance(c, (int, float)) for c in costs) else None,
            "gameability": self.cues.gameability(texts),
            "dynamics": self.cues.dynamics_shares(),
            "text": self.cues.text_stats(texts),
        }


def _steps(counts: Counter[int]) -> dict[str, float]:
    """Oracle steps of an app count's tasks: median, min and max."""
    steps = sorted(counts.elements())
    return {"median": float(median(steps)), "min": steps[0], "max": steps[-1]}


def _add_usage(totals: dict[str, dict[str, int]], usage: dict[str, dict[str, int]]) -> None:
    for role, spent in usage.items():
        bucket = totals.setdefault(role, dict.fromkeys(COUNTERS, 0))
        for key in bucket:
            bucket[key] += spent.get(key, 0)


def _per_task(totals: dict[str, dict[str, int]], tasks: int) -> dict[str, dict[str, float]]:
    n = max(1, tasks)
    return {role: {**t, "calls_per_task": t["calls"] / n,
                   "tokens_per_task": (t["prompt_tokens"] + t["completion_tokens"]) / n,
                   "cached_per_task": t["cached_prompt_tokens"] / n}
            for role, t in sorted(totals.items())}


def llm_usage(records: Records) -> dict[str, dict[str, float]]:
    """Model calls and tokens per role, summed over the tasks and per task."""
    totals: dict[str, dict[str, int]] = {}
    for record in typed_records(records):
        _add_usage(totals, (record.provenance.tokens or {}).get("llm", {}))
    return _per_task(totals, len(records))


def statistics(records: Records) -> dict[str, Any]:
    """The card's figures of a dataset's records (a build sums its workers' :func:`task_figures`
    instead)."""
    typed = typed_records(records)
    sums, texts = CardSums(), TextTally()
    try:
        for n, (record, given) in enumerate(zip(typed, records, strict=True)):
            figures, rows = task_figures(record, given if isinstance(given, dict) else None)
            sums.add(figures)
            texts.add(n, rows)
        return sums.statistics(near_duplicates(typed), texts.totals())
    finally:
        texts.close()


def _gate_table(stats: dict[str, Any], drops: dict[str, int]) -> str:
    names = list(stats.get("gates", {})) + [k[5:] for k in drops
                                            if k.startswith("gate ") and k[5:] not in stats.get("gates", {})]
    if not names:
        return ""
    lines = ["| gate | passed (written tasks) | skipped | dropped attempts |", "|---|---:|---:|---:|"]
    for name in names:
        c = stats.get("gates", {}).get(name, {"passed": 0, "skipped": 0})
        lines.append(f"| {name} | {c['passed']} | {c['skipped']} | {drops.get(f'gate {name}', 0)} |")
    return "\n".join(lines) + "\n"


def usage_table(usage: dict[str, dict[str, float]]) -> str:
    """Per role: calls (and those answered from the response cache), prompt tokens (and those the
    endpoint's prompt cache held), completion tokens, and per task: calls, all tokens, and the
    prompt tokens split into cached and uncached."""
    if not usage:
        return ""
    lines = [("| role | calls | from response cache | prompt tokens | of which prompt-cached | completion tokens "
              "| calls / task | tokens / task | cached / task | uncached / task |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows = [*usage.items(), ("all", {key: sum(u.get(key, 0) for u in usage.values()) for key in (
        "calls", "cached_calls", "prompt_tokens", "cached_prompt_tokens", "completion_tokens", "calls_per_task",
        "tokens_per_task", "cached_per_task")})]
    for role, u in rows:
        cached = u.get("cached_per_task", 0)
        lines.append(f"| {role} | {u['calls']} | {u['cached_calls']} | {u['prompt_tokens']} "
                     f"| {u.get('cached_prompt_tokens', 0)} | {u['completion_tokens']} | {u['calls_per_task']:.2f} "
                     f"| {u['tokens_per_task']:.0f} | {cached:.0f} | {u['tokens_per_task'] - cached:.0f} |")
    return "\n".join(lines) + "\n"


def table(stats: dict[str, Any]) -> str:
    head = ("| apps | conversations | sessions / conversation | utterances / session | tokens / conversation "
            "| tokens / session | tokens / utterance |\n|---|---:|---:|---:|---:|---:|---:|\n")
    rows = []
    for label, row in [*stats["by_app_count"].items(), ("all", stats["overall"])]:
        rows.append(f"| {label} | {row['conversations']} | {row['sessions_per_conversation']:.2f} | "
                    f"{row['utterances_per_session']:.1f} | {row['tokens_per_conversation']:.0f} | "
                    f"{row['tokens_per_session']:.0f} | {row['tokens_per_utterance']:.1f} |")
    return head + "\n".join(rows) + "\n"


DETECTOR_DESCRIPTIONS = {
    "unique_user_turn": "user turns whose text occurs in no other task",
    "value_token": "user turns holding a digit, clock time, file name or e-mail address",
    "acknowledged": "user turns the assistant answers with an acknowledgement or a promise",
    "first_last_mention": "turns with the first or the last mention of a value-like token",
}

DYNAMIC_DESCRIPTIONS = {
    "knowledge_update": "a memory piece whose value is corrected later (`superseded`)",
    "distractor": "a turn with a near-miss detail (`distractor` mark)",
    "multi_session": "a memory thread whose evidence turns lie on two or more days",
    "relative_time": "a day or time said relative to the day it is said (`said_as`: \"Thursday next week\")",
}


def gameability_verdict(result: dict[str, Any]) -> str:
    """One sentence: passed, or which detectors are above the threshold."""
    over = missed(result)
    if not over:
        return (f"Passed: every detector's precision is at most {THRESHOLD:.2f}, so none of these shallow "
                "cues picks out the evidence turns.")
    names = ", ".join(f"`{name}` ({result[name]['precision']:.3f})" for name in over)
    return (f"MISSED: {names} {'has' if len(over) == 1 else 'have'} a precision above {THRESHOLD:.2f}: "
            "a system that does not read the chat finds the evidence turns by "
            f"{'this cue' if len(over) == 1 else 'these cues'} alone.")


def gameability_line(result: dict[str, Any]) -> str:
    """The gameability result on one line (``homer verify``, ``homer build``)."""
    figures = ", ".join(f"{name} {result[name]['precision']:.3f}" for name in DETECTORS)
    over = missed(result)
    verdict = f"MISSED by {', '.join(over)}" if over else "passed"
    return f"gameability (detector precision on evidence turns, threshold {THRESHOLD:.2f}): {figures}: {verdict}"


def learned_line(result: dict[str, Any] | None, total: int) -> str:
    """The learned reader's figures over held-out folds of a dataset's own tasks on one line
    (``--learned``; ``total``: the dataset's tasks, of which the reader read ``result["tasks"]``)."""
    if result is None:
        return (f"learned reader: not measured (it needs {REPORT_MIN_TASKS} tasks at least, in two halves that "
                "each have evidence turns to learn from)")
    logreg, guesser = result["tfidf_logreg"], result["typed_guesser"]
    verdict = "passed" if result["passed"] else "MISSED"
    read = f"the {total} tasks" if result["tasks"] >= total else f"{result['tasks']:.0f} of the {total} tasks"
    return (f"learned reader (TF-IDF + logistic regression; {read} in two halves, no {result['apart']} in both, "
            f"each half's reader scored on the other half): precision at best F1 "
            f"{logreg['precision']:.3f} (<= {F1_PRECISION_TARGET:.2f}), top-5 isolation "
            f"{100 * logreg['isolation']:.1f} % (<= {100 * LEARNED_ISOLATION_TARGET:.0f} %), typed guesser "
            f"{100 * guesser['all_right']:.1f} % (<= {100 * GUESSER_TARGET:.0f} %): {verdict}")


def gameability_section(stats: dict[str, Any], level: int = 2) -> str:
    """The gameability table, its verdict, the memory dynamics and the text statistics (markdown)."""
    result, shares, text = stats["gameability"], stats["dynamics"], stats["text"]
    tasks = stats["overall"]["conversations"]
    head = "#" * level
    rows = [f"| {name} | {DETECTOR_DESCRIPTIONS.get(name, '')} | {result[name]['precision']:.3f} | "
            f"{result[name]['recall']:.3f} | {result[name]['hits']} | {result[name]['evidence_hits']} | "
            f"{result[name]['evidence_turns']} |" for name in DETECTORS]
    dynamic_rows = [f"| {name} | {DYNAMIC_DESCRIPTIONS.get(name, '')} | {round(share * tasks)} | {100 * share:.1f} % |"
                    for name, share in shares.items()]
    return f"""{head} Gameability

Detectors that do not read the text try to pick out the evidence turns (turns with an `evidence` mark):
precision is the share of a detector's hits that are evidence turns, recall the share of evidence turns
it hits (user turns for the first three detectors, turns of either role for the last), over the whole
dataset. Threshold: every detector's precision at most {THRESHOLD:.2f} (`homer build --strict` and
`homer verify --strict` exit 1 when a detector misses it).

| detector | flags | precision | recall | hits | evidence hits | evidence turns |
|---|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

{gameability_verdict(result)}

{head}# Memory dynamics

| dynamic | a task has it when it has | tasks | share |
|---|---|---:|---:|
{chr(10).join(dynamic_rows)}

{head}# Text

- utterances: {text['utterances']}; distinct texts: {100 * text['distinct_share']:.1f} % of them
  (texts compared with white space collapsed and case folded);
- said verbatim in another task too: {100 * text['cross_task_share']:.1f} % of the utterances;
- repeats inside a history: {text['repeats']} utterance(s) repeat an earlier one of the same history, in {text['histories_with_repeats']} histor{'y' if text['histories_with_repeats'] == 1 else 'ies'};
- work turns (with a `thread` mark): {100 * text['work_turn_share']:.1f} % of the turns.
"""  # noqa: E501 - the card's Markdown, line for line


FORMAT = """## Format

`task.json` holds the task (`description`, `intent`, `subtasks`, `evaluation`, `oracle` when known,
`provenance`), the `query` sentence the user says at evaluation time, the ground-truth `memory` and the
`dialogue`: `[{day, date, turns: [{role, text, ts, ...marks}]}]`. Turn marks (lists of memory ids;
absent or empty when they do not apply): `evidence`, the turn states the memory piece's final value;
`superseded`, it states an earlier value that is corrected later; `distractor`, it holds a near-miss
detail resembling that piece. `thread` (a string) marks work turns: `t1`, `t2`, ... for threads of this
task's work, `w1`, `w2`, ... for other work; small talk has none. A memory item is `{id, kind, text,
value}` with, when they apply, `thread` (the thread it belongs to), `superseded` (its earlier values, in
the order said), `distractors` (`[{value, text}]`: the near misses), `said_as` (the words by which a
day or time was said on its evidence turn's day, e.g. "Tuesday next week at 14:00"; earlier and
near-miss days and times are said in words too, never as stamps), and `cue` /
`about` (the role the value plays and the work it belongs to). `misreadings` holds, for each earlier
or near-miss value, the oracle plan with that value in place of the final one: the gates check that
each fails the criteria.
"""


def _counts(title: str, counts: dict[str, int]) -> str:
    lines = [f"| {title} | tasks |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in counts.items()]
    return "\n".join(lines) + "\n"


def _steps_table(stats: dict[str, Any]) -> str:
    rows = stats.get("steps_by_app_count") or {}
    lines = ["| tasks of | median oracle steps | min | max |", "|---|---:|---:|---:|"]
    lines += [f"| {apps} app{'s' if apps != '1' else ''} | {row['median']:g} | {row['min']} | {row['max']} |"
              for apps, row in rows.items()]
    return "\n".join(lines) + "\n"


def _llm_section(stats: dict[str, Any], build: dict[str, Any] | None = None) -> str:
    usage = stats.get("llm_usage") or {}
    not_kept = (build or {}).get("usage_not_kept") or {}
    if not usage and not not_kept:
        return ""
    cost = stats.get("cost_usd")
    priced = f"Cost from the price table: {cost:.4f} USD in all.\n\n" if cost is not None else ""
    out = ("## Model usage\n\nCalls and tokens reported by the endpoint, per role (exploration of a shared office "
           "is counted once, on the first task that needed it; prompt-cached: the prompt tokens the endpoint's "
           "prompt cache held, as it reports them):\n\n" + usage_table(usage) + "\n" + priced)
    if not_kept:
        calls = sum(v["calls"] for v in not_kept.values())
        tokens = sum(v["prompt_tokens"] + v["completion_tokens"] for v in not_kept.values())
        cost = (build or {}).get("cost_not_kept_usd")
        priced = f" ({cost:.4f} USD)" if isinstance(cost, (int, float)) else ""
        out += (f"Attempts not kept (dropped by a gate or the verifier, or ended by the endpoint) spent {calls} "
                f"call(s) and {tokens:,} token(s){priced} more, not in the table above (`build.json`, "
                "`usage_not_kept`).\n\n")
    return out


def _errors_line(build: dict[str, Any]) -> str:
    errors = build.get("errors")
    count = len(errors) if isinstance(errors, list) else int(errors or 0)
    if not count:
        return ""
    return (f" Ended by the endpoint (not drops; `--resume` runs them again): {count}.")


def _days(count: Any) -> str:
    return "1 day" if count == 1 else f"{count} days"


def render_card(stats: dict[str, Any], build: dict[str, Any]) -> str:
    config = build.get("config", {})
    drops = build.get("drops", {})
    drop_lines = "\n".join(f"| {reason} | {count} |" for reason, count in sorted(drops.items())) or "| (none) | 0 |"
    return f"""# homeragents dataset

Neo split built by homeragents (`homer build`), backend `{config.get('backend', 'offline')}`, seed {config.get('seed')},
{_days(config.get('days'))} of dialogue per task, about {config.get('utterances_per_day')} utterances a day.
Every task passed the gates (schema, criteria fail untouched, oracle passes, memory evidence, intent-only baseline fails);
`homer verify` re-runs them.

## Statistics

{table(stats)}
Tokens are counted with {stats['token_counter']}.

{_llm_section(stats, build)}## Families

{_counts('family', stats['families'])}
## Apps

{_counts('app', stats['apps'])}
## Difficulty

Measured from each task's oracle steps, memory pieces, corrections and near-misses, computations and
apps (`generators/difficulty.py`), not declared by its family.

{_counts('difficulty', stats['difficulty'])}
{_steps_table(stats)}
Near-duplicate pairs (same description; same world, family and checked values; or descriptions at
least 90 % alike): {len(stats['near_duplicates'])}.

{gameability_section(stats)}
## Build

Attempts: {build.get('attempts', 0)}; accepted: {build.get('accepted', 0)}; dropped: {sum(drops.values())}.{_errors_line(build)}

{_gate_table(stats, drops)}
| dropped because | attempts |
|---|---:|
{drop_lines}

## Files

- `index.jsonl`: one line per task; `tasks/<id>/task.json`: the task; `tasks/<id>/testbed/`: its initial office.
- `schemas/task.schema.json`, `schemas/criteria.schema.json`: what every record validates against.

{FORMAT}"""  # noqa: E501 - the card's Markdown, line for line


def _cell(text: Any, limit: int = 300) -> str:
    """Text for one markdown table cell: one line, pipes escaped, long text cut."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 3] + "..."
    return flat.replace("|", "\\|")


def _lint_section(lint: dict[str, Any], repair: bool) -> str:
    """The seed lint's findings per defect class, and what became of the seeds with an error."""
    from verifier.seed_lint import CODES

    rows = "\n".join(f"| `{code}` | {CODES.get(code, ('', ''))[0]} | {count} | {_cell(CODES.get(code, ('', ''))[1])} |"
                     for code, count in sorted(lint.get("counts", {}).items())) or "| (none) | | 0 | |"
    fate = (f"With `--repair`, {lint.get('repaired', 0)} seed(s) were repaired (each repair is in the task's "
            f"`provenance.repairs`) and {lint.get('refused', 0)} dropped (`seed lint` above)." if repair else
            f"{lint.get('refused', 0)} seed(s) with an error were dropped (`seed lint` above); "
            f"`--repair` fixes the unambiguous ones instead ({lint.get('repaired', 0)} repaired).")
    return f"""Every loaded seed is linted before it is regenerated (`homer officebench lint` prints the same
findings per subtask). {fate}

| finding | severity | count | meaning |
|---|---|---:|---|
{rows}
"""


def _proof_section(proof: dict[str, Any]) -> str:
    proven, unproven = proof.get("proven", 0), proof.get("unproven", 0)
    ids = proof.get("unproven_ids", [])
    listed = ", ".join(f"`{i}`" for i in ids[:40]) + (f" and {len(ids) - 40} more" if len(ids) > 40 else "")
    return f"""The offline proof copies each expected file of `reference/` onto the file its exact-match criterion
checks: a task is **proven** when that state passes every criterion while the untouched testbed fails;
a reference that fails its own criterion drops the task. The rest are **unproven**: no expected file,
or criteria beyond the exact matches (keywords, mails, events) that only an agent can meet. They are
not counted as verified.

| proof | tasks |
|---|---:|
| proven | {proven} |
| unproven | {unproven} |

{('Unproven: ' + listed) if ids else ''}
"""


def _recast_line(build: dict[str, Any]) -> str:
    """What became of the seeds' people: re-cast (how many tasks, what was kept and why) or kept."""
    recast = build.get("recast", {})
    if recast.get("kept_people") or "tasks" not in recast:
        return ("The seed's evaluation list, testbed and reference files are kept unchanged (`--keep-people`); "
                "its instruction is the task's description.")
    kept = "; ".join(f"{why}: {count}" for why, count in recast.get("kept", {}).items())
    return (f"The seeds are public, so each task's people were re-cast under other names in its instruction, "
            f"criteria and files ({recast['tasks']} of {recast['of']} tasks; `provenance.recast` says who became "
            f"whom{'; names kept as they were: ' + kept if kept else ''}); every other byte of the evaluation list, "
            "testbed and reference files is the seed's, and the re-cast instruction is the task's description.")


def render_plus_card(stats: dict[str, Any], build: dict[str, Any]) -> str:
    """The dataset card of a Plus split (``homer regenerate``): statistics, apps, what was
    dropped and which seeds were skipped, with their reasons."""
    config = build.get("config", {})
    seeds = build.get("seeds", {})
    drops = build.get("drops", {})
    drop_lines = "\n".join(f"| {_cell(reason)} | {count} |" for reason, count in sorted(drops.items())) \
        or "| (none) | 0 |"
    dropped = "\n".join(f"| {_cell(d['seed'])} | {_cell(d['reason'])} |" for d in build.get("dropped", [])) \
        or "| (none) | |"
    skipped = "\n".join(f"| {_cell(s['file'])} | {_cell(s['field'])} | {_cell(s['message'])} |"
                        for s in build.get("skipped", [])) or "| (none) | | |"
    skipped_files = len({s["file"] for s in build.get("skipped", [])})
    app_counts = {f"{k} app{'s' if k != '1' else ''}": v["conversations"] for k, v in stats["by_app_count"].items()}
    return f"""# homeragents dataset

Plus split regenerated by homeragents (`homer regenerate`) from OfficeBench seed tasks: backend
`{config.get('backend', 'offline')}`, seed {config.get('seed')}, {_days(config.get('days'))} of dialogue per task, about {config.get('utterances_per_day')} utterances a day.

Each seed subtask became one task: an intent without the instruction's specifics, and a multi-day
dialogue that carries every one of them (times, numbers, file names, app names, people). {_recast_line(build)} Every task passed the gates (schema, criteria fail untouched, reference state, memory
evidence, specifics); there is no oracle plan, so `oracle_passes` and `baseline_fails` are recorded as
skipped. `homer verify` re-runs them.

## Solvability proof

{_proof_section(build.get('proof', {}))}

## Statistics

{table(stats)}
Tokens are counted with {stats['token_counter']}. For comparison, the paper's HomerAgents+ (its Table 4) has
about 28 sessions of about 11 utterances per conversation, about 125 tokens per session and 3,470 per
conversation; `--shape paper` (the default) aims at that shape, `--shape neo` at five long sessions.

{_llm_section(stats, build)}## App counts (from the seed folder names)

{_counts('app count', app_counts)}
## Apps

{_counts('app', stats['apps'])}
{gameability_section(stats)}
## Regeneration

Seed subtask files: {seeds.get('subtask_files', 0)}; loaded: {seeds.get('loaded', 0)}; skipped (failed to load): {skipped_files};
tasks written: {build.get('accepted', 0)}; dropped: {sum(drops.values())}.{_errors_line(build)}

| dropped because | seeds |
|---|---:|
{drop_lines}

| dropped seed | reason |
|---|---|
{dropped}

### Seed lint

{_lint_section(build.get('lint', {}), config.get('repair', False))}
### Skipped seeds

| file | field | problem |
|---|---|---|
{skipped}

## Files

- `index.jsonl`: one line per task; `tasks/<id>/task.json`: the task; `tasks/<id>/testbed/`: its initial office;
  `tasks/<id>/reference/`: the seed's expected files, when it has them.
- `schemas/task.schema.json`, `schemas/criteria.schema.json`: what every record validates against.

{FORMAT}"""  # noqa: E501 - the card's Markdown, line for line
