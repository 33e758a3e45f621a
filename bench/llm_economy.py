"""Benchmark: LLM calls and tokens per accepted task, per role, for Neo and Plus builds run
through the local fake endpoint (real HTTP; every answer computed by the offline backend).

Targets: Neo <= 8 calls and <= 40K tokens per accepted task; Plus <= 4 calls per accepted task.
The endpoint also reports the prompt tokens a prefix cache would have held (cached / uncached columns).
Tokens are counted by the endpoint with the project's approximate counter (see the dataset card).
Run: ``python bench/llm_economy.py [--neo 40] [--seeds datasets/officebench-sample]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.dataset_reader import iter_tasks  # noqa: E402
from backends.fake_llm import FakeLLMServer  # noqa: E402
from orchestrator.build import build  # noqa: E402
from orchestrator.card import llm_usage, usage_table  # noqa: E402
from orchestrator.fake_llm.offline_responder import default_responder  # noqa: E402
from orchestrator.plus import regenerate_split  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def report(name: str, out: Path, requests: int, call_target: float, token_target: float | None) -> None:
    records = [t.record for t in iter_tasks(out) if t.record is not None]
    usage = llm_usage(records)
    calls = sum(u["calls_per_task"] for u in usage.values())
    tokens = sum(u["tokens_per_task"] for u in usage.values())
    print(f"\n{name}: {len(records)} accepted task(s), {requests} HTTP requests to the endpoint")
    print(usage_table(usage))
    verdict = f"calls/task {calls:.2f} (target <= {call_target:g}: {'met' if calls <= call_target else 'MISSED'})"
    if token_target is not None:
        verdict += (f"; tokens/task {tokens:.0f} (target <= {token_target:g}: "
                    f"{'met' if tokens <= token_target else 'MISSED'})")
    print(verdict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neo", type=int, default=40, help="Neo tasks to build")
    parser.add_argument("--seeds", type=Path, default=ROOT / "datasets" / "officebench-sample")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    try:
        with FakeLLMServer(default_responder()) as server:
            config = BuildConfig(seed=args.seed, backend="llm", model="fake-model", base_url=server.url)
            build(tmp / "neo", args.neo, config, workers=1)
            report("Neo", tmp / "neo", server.chat_request_total, 8, 40_000)
            before = server.chat_request_total
            regenerate_split(args.seeds, tmp / "plus", seed=args.seed, backend="llm", model="fake-model",
                             base_url=server.url)
            report("Plus", tmp / "plus", server.chat_request_total - before, 4, None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
