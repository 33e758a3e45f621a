"""Benchmark: how much of an endpoint's rate limit the llm client uses, and what 429s cost.

Starts the fake endpoint in its rate-limit mode (default 600 requests and 200,000 tokens per
minute, each answer taking ``--latency`` seconds like a model's), then runs "tasks" (``--calls``
chat calls each, one after another) on ``--threads`` threads for ``--seconds`` through clients
with the same budget in their settings (``rpm``, ``tpm``). Prints the share of the request and
token budgets used, the 429s the server answered, and the tasks lost (a call that failed for
good). Target: >= 90 % of the binding budget over a 2-minute run, no task lost to 429s.
Run: ``python bench/rate_limit.py [--seconds 120] [--rpm 600] [--tpm 200000] [--threads 24]``.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.fake_llm import FakeLLMServer  # noqa: E402
from backends.fake_llm.server import Reply  # noqa: E402
from backends.llm import LLMClient, LLMError, LLMSettings  # noqa: E402

PROMPT = "Summarise the week's invoices for the finance team in two sentences. " * 12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--tpm", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=24)
    parser.add_argument("--calls", type=int, default=5, help="chat calls per task")
    parser.add_argument("--latency", type=float, default=0.4, help="seconds each answer takes")
    args = parser.parse_args()
    answer = Reply(content="Invoices were paid on time except two, which are queried with the supplier. " * 3)
    answered: list[float] = []  # when each answer was made (the server keeps only its last 1,000 requests)

    def responder(body: dict) -> Reply:
        answered.append(time.monotonic())
        return answer

    with FakeLLMServer(responder, rate_limit=(args.rpm, args.tpm), latency=args.latency) as server:
        settings = LLMSettings(base_url=server.url, model="fake-model", rpm=args.rpm, tpm=args.tpm,
                               max_concurrency=args.threads, max_retries=6, timeout=30, max_tokens={"default": 200})
        client = LLMClient(settings)
        deadline = time.monotonic() + args.seconds
        done, lost = [0], [0]
        lock = threading.Lock()

        def worker() -> None:
            while time.monotonic() < deadline:
                try:
                    for _ in range(args.calls):
                        client.chat("bench", [{"role": "user", "content": PROMPT}])
                except LLMError:
                    with lock:
                        lost[0] += 1
                    continue
                with lock:
                    done[0] += 1

        start = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(args.threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - start
        served = [t for t in answered if t - start <= args.seconds]
        usage = client.usage.to_dict()["bench"]
        throttled = server.throttled
    minutes = args.seconds / 60
    per_call = (usage["prompt_tokens"] + usage["completion_tokens"]) / max(1, usage["calls"])
    request_share = len(served) / (args.rpm * minutes)
    token_share = len(served) * per_call / (args.tpm * minutes)  # the calls answered inside the window
    binding = max(request_share, token_share)
    print(f"{args.seconds:.0f} s budget window ({elapsed:.0f} s with the last tasks), {args.threads} threads, "
          f"{args.latency:g} s per answer")
    print(f"requests: {len(served)} answered = {100 * request_share:.1f} % of {args.rpm} per minute")
    print(f"tokens: {len(served) * per_call:,.0f} ({per_call:.0f} a call) = {100 * token_share:.1f} % of "
          f"{args.tpm:,} per minute")
    print(f"429s answered by the server: {throttled}; tasks done: {done[0]}; tasks lost: {lost[0]}")
    ok = binding >= 0.9 and lost[0] == 0
    print(f"budget used: {100 * binding:.1f} % (target >= 90 % and no task lost: {'met' if ok else 'MISSED'})")


if __name__ == "__main__":
    main()
