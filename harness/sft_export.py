"""Oracle trajectories as chat-format fine-tuning data (``homer export --sft DIR``).

Each task with an oracle plan becomes one JSONL line ``{"id", "messages", "tools", "metadata"}``
in the shape chat fine-tuning tools read (OpenAI's chat format with ``tools`` and ``tool_calls``):
the agent's own opening (system prompt, then the history context and the request, exactly as
``homer eval`` gives them), then one assistant message per plan step calling one tool, its result
as a ``tool`` message (the real observation, from replaying the plan on a copy of the task's
office), and a closing assistant message. A trajectory is kept only when every call's arguments
validate against the tool's schema, every call succeeds and the final state passes the task's
criteria; the rest are listed with the reason.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.dataset_reader import folder_written_whole, iter_tasks, task_day_first, task_now, ticking
from backends.task_record import TaskRecord
from harness.agents import MODEL_OBSERVATION_CHARS, Episode, agent_messages
from harness.context import ContextConfig, build_context
from office_env import OfficeError, default_registry
from office_env.replays import replay_plan
from office_env.untrusted import UntrustedInputError

CLOSING = "Done: every step of the request is carried out."


@dataclass
class SftSummary:
    written: int = 0
    skipped: list[str] = field(default_factory=list)


def trajectory_of(record: TaskRecord, testbed: Path, reference: Path | None, context: ContextConfig,
                  scratch: Path) -> dict[str, Any]:
    """One task's training example, or ``ValueError`` saying why it has none."""
    plan = record.oracle or []
    if not plan:
        raise ValueError("no oracle plan")
    registry = default_registry()
    for index, call in enumerate(plan):
        problems = registry.validate(call.tool, call.args)
        if problems:
            raise ValueError(f"step {index + 1} ({call.tool}): {problems[0]}")
    history = build_context(record, context)
    calls = [{"tool": c.tool, "args": c.args} for c in plan]
    replay = replay_plan(testbed, calls, task_now(record), scratch, "office")  # a copy: never a link into the dataset
    failed = replay.failed()
    if failed is not None:
        index, result = failed
        raise ValueError(f"step {index + 1} ({plan[index].tool}) fails: {result.observation[:200]}")
    episode = Episode(task_id=record.id, user_name=record.user.name, username=record.user.username,
                      now=record.now.to_dict(), request=record.intent, context=history.text,
                      workspace=replay.workspace, registry=registry)
    messages: list[dict[str, Any]] = list(agent_messages(episode))
    for index, (call, result) in enumerate(zip(plan, replay.results, strict=True)):
        call_id = f"call_{index + 1}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": call.tool, "arguments": json.dumps(call.args, ensure_ascii=False)}}]})
        shown = result.observation if len(result.observation) <= MODEL_OBSERVATION_CHARS else (
            result.observation[:MODEL_OBSERVATION_CHARS] + "\n[... cut: the rest of this result is not shown]")
        messages.append({"role": "tool", "tool_call_id": call_id, "content": shown})
    report = replay.score(record.criteria(), reference, initial_dir=testbed, day_first=task_day_first(record))
    if not report.passed:
        raise ValueError("the replayed plan does not pass the criteria: " + "; ".join(
            r.reason for r in report.failures())[:200])
    messages.append({"role": "assistant", "content": CLOSING})
    return {"id": record.id, "messages": messages, "tools": registry.openai_tools(),
            "metadata": {"split": record.split, "family": record.family,
                         "app_count": record.app_count, "context": context.mode,
                         "context_tokens": history.tokens, "steps": len(plan)}}


def export_sft(dataset: Path, out: Path, context: ContextConfig,
               on_outcome: Callable[[dict[str, Any]], None] | None = None) -> SftSummary:
    """Write ``out/train.jsonl`` and a README; the folder appears whole (temporary name, then rename)."""
    summary = SftSummary()
    with folder_written_whole(out) as tmp:
        with (tmp / "train.jsonl").open("w", encoding="utf-8") as handle:
            for task in ticking(iter_tasks(dataset), on_outcome, lambda: summary.written):
                if task.task is None:
                    summary.skipped.append(f"{task.id}: cannot be read: {task.error}")
                    continue
                scratch = Path(tempfile.mkdtemp(prefix="sft-"))
                try:
                    example = trajectory_of(task.task, task.testbed, task.reference, context, scratch)
                except (ValueError, KeyError, TypeError, AttributeError, OfficeError, UntrustedInputError) as exc:
                    summary.skipped.append(f"{task.id}: {exc}")  # this task only: the rest go on
                    continue
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
                handle.write(json.dumps(example, ensure_ascii=False) + "\n")
                summary.written += 1
        (tmp / "README.md").write_text(_readme(dataset, context, summary), encoding="utf-8")
    return summary


def _readme(dataset: Path, context: ContextConfig, summary: SftSummary) -> str:
    return (f"# Oracle trajectories of {dataset.name}\n\n"
            f"`train.jsonl`: {summary.written} example(s), one per task with an oracle plan that replays and "
            f"passes its criteria ({len(summary.skipped)} task(s) left out). Each line is "
            "`{\"id\", \"messages\", \"tools\", \"metadata\"}` in the chat format with tool calls: the system "
            f"prompt, the user message with the history ({context.mode}) and the request, one assistant "
            "tool call per step with its real result as a `tool` message, and a closing assistant message.\n\n"
            "```python\nimport json\nrows = [json.loads(line) for line in open(\"train.jsonl\")]\n"
            "print(rows[0][\"messages\"][-2])\n```\n")
