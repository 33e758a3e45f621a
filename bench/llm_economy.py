"""Benchmark: LLM calls and tokens per accepted task, per role, for Neo and Plus builds run
through the local fake endpoint (real HTTP; every answer computed by the offline backend).

The endpoint cuts every reply at the request's max_tokens, as servers do, so long outputs are paid
as the generators ask for them (in parts that fit the default 4,096-token limit). Targets per
accepted task, every attempt counted: Neo <= 8 calls and <= 40K tokens; Plus <= 4 calls and <= 25K
tokens; and at least half of the prompt tokens in a prefix shared with an earlier call of the same
role (what a prefix cache holds: the cached / uncached columns, and the cached share per role). The
endpoint caches as OpenAI does (its ``openai`` profile): a shared beginning of at least 1,024 tokens,
in steps of 128, so a static part shorter than that saves nothing.
Tokens are counted by the endpoint with the project's approximate counter (see the dataset card).
Run: ``python bench/llm_economy.py [--neo 40] [--seeds datasets/officebench-sample]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks  # noqa: E402
from backends.fake_llm import FakeLLMServer  # noqa: E402
from backends.llm.usage import COUNTERS  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.card import llm_usage, usage_table  # noqa: E402
from orchestrator.fake_llm.offline_responder import default_responder  # noqa: E402
from orchestrator.plus import regenerate_split  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def with_not_kept(usage: dict[str, dict[str, float]], out: Path, kept: int) -> dict[str, dict[str, float]]:
    """``usage`` with what the attempts not kept spent (``build.json``'s ``usage_not_kept``) added,
    so that the figures per kept task count every attempt."""
    path = out / "build.json"
    not_kept = json.loads(path.read_text()).get("usage_not_kept") or {} if path.exists() else {}
    n = max(1, kept)
    merged = {}
    for role in sorted(set(usage) | set(not_kept)):
        row = {k: usage.get(role, {}).get(k, 0) + not_kept.get(role, {}).get(k, 0) for k in COUNTERS}
        merged[role] = {**row, "calls_per_task": row["calls"] / n,
                        "tokens_per_task": (row["prompt_tokens"] + row["completion_tokens"]) / n,
                        "cached_per_task": row["cached_prompt_tokens"] / n}
    return merged


def report(name: str, out: Path, requests: int, call_target: float, token_target: float) -> None:
    records = [t.record for t in iter_tasks(out) if t.record is not None]
    usage = with_not_kept(llm_usage(records), out, len(records))
    calls = sum(u["calls_per_task"] for u in usage.values())
    tokens = sum(u["tokens_per_task"] for u in usage.values())
    prompt = sum(u["prompt_tokens"] for u in usage.values())
    cached = sum(u["cached_prompt_tokens"] for u in usage.values())
    print(f"\n{name}: {len(records)} accepted task(s), {requests} HTTP requests to the endpoint "
          "(per task: every attempt's calls and tokens over the tasks kept)")
    print(usage_table(usage))
    print("cached share of prompt tokens: " + ", ".join(
        f"{role} {u['cached_prompt_tokens'] / max(1, u['prompt_tokens']):.0%}" for role, u in usage.items())
        + f"; all {cached / max(1, prompt):.0%} (target >= 50%: {'met' if cached >= prompt / 2 else 'MISSED'})")
    print(f"calls/task {calls:.2f} (target <= {call_target:g}: {'met' if calls <= call_target else 'MISSED'}); "
          f"tokens/task {tokens:.0f} (target <= {token_target:g}: {'met' if tokens <= token_target else 'MISSED'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neo", type=int, default=40, help="Neo tasks to build")
    parser.add_argument("--seeds", type=Path, default=ROOT / "datasets" / "officebench-sample")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    try:
        with FakeLLMServer(default_responder(), profile="openai") as server:
            config = BuildConfig(seed=args.seed, backend="llm", model="fake-model", base_url=server.url)
            build(tmp / "neo", args.neo, config, workers=1)
            report("Neo", tmp / "neo", server.chat_request_total, 8, 40_000)
            before = server.chat_request_total
            regenerate_split(args.seeds, tmp / "plus", seed=args.seed, backend="llm", model="fake-model",
                             base_url=server.url)
            report("Plus", tmp / "plus", server.chat_request_total - before, 4, 25_000)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
