"""Benchmark: what the tool definitions cost every agent request, and the reply room a small
context window leaves.

Prints the cl100k token count of the 20 agent tools (and of the read-only tools a surfer gets) as
the openai client sends them (compact JSON) and as the client's own estimate counts them (spaced
JSON, as chat templates render them), per app. Target: the 20 tools in at most 1,500 tokens as sent.
With ``--dataset DIR`` it also prints, for each task, the first agent request of a standard RAG run
(``--mode rag``: the default 20 utterances), the reply limit an 8K window leaves it (``--window``) and
the room left for the run's tool results and replies. With ``--server URL`` (a llama.cpp server's
root, e.g. ``http://127.0.0.1:8080``) it also counts the 20 tools with that server's tokenizer:
their spaced JSON, the tool lines the shipped ChatML template writes (each function's compact JSON;
target at most 1,500), and what they add to a templated prompt (``/apply-template``, ``/tokenize``).
Run: ``python bench/tool_tokens.py [--dataset DIR] [--window 8192] [--server URL]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# bench/office_env.py would shadow the office_env package: keep bench/ off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from backends.llm.client import prompt_tokens  # noqa: E402
from backends.llm.settings import DEFAULT_MAX_TOKENS  # noqa: E402
from backends.llm.window import NoRoom, reply_limit, with_margin  # noqa: E402
from backends.tokens import count_tokens, counter_name  # noqa: E402
from office_env import default_registry  # noqa: E402

TARGET = 1500


def sent(tools: list[dict]) -> int:
    return count_tokens(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))


def spaced(tools: list[dict]) -> int:
    return count_tokens(json.dumps(tools))


def tool_figures() -> list[dict]:
    registry = default_registry()
    tools = registry.openai_tools()
    print(f"tool definitions ({counter_name()} tokens): as sent (compact JSON) / as estimated (spaced JSON)")
    for app in sorted({t.app for t in registry}):
        view = registry.for_apps([app])
        print(f"  {app:<9} {len(view):>2} tools  {sent(view.openai_tools()):>5} / {spaced(view.openai_tools()):>5}")
    reads = registry.read_only().openai_tools()
    print(f"  {'read-only':<9} {len(reads):>2} tools  {sent(reads):>5} / {spaced(reads):>5}  (surfers)")
    total = sent(tools)
    print(f"  {'all':<9} {len(tools):>2} tools  {total:>5} / {spaced(tools):>5}  "
          f"(target <= {TARGET:,} as sent: {'met' if total <= TARGET else 'MISSED'})")
    return tools


def server_figures(root: str, tools: list[dict]) -> None:
    import urllib.request

    def post(route: str, body: dict) -> dict:
        request = urllib.request.Request(f"{root.rstrip('/')}{route}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            return json.loads(reply.read())

    def tokens(text: str) -> int:
        return len(post("/tokenize", {"content": text, "add_special": True})["tokens"])

    messages = [{"role": "user", "content": "Say OK."}]
    bare = tokens(post("/apply-template", {"messages": messages})["prompt"])
    templated = tokens(post("/apply-template", {"messages": messages, "tools": tools, "tool_choice": "auto"})["prompt"])
    # what templates/llama_server/chatml-tools.jinja writes: a line per function, compact JSON
    lines = tokens("\n".join(json.dumps(t["function"], separators=(",", ":"), ensure_ascii=False) for t in tools))
    print(f"\nthe 20 tools with the tokenizer of {root}: {tokens(json.dumps(tools)):,} (spaced JSON), "
          f"{tokens(json.dumps(tools, separators=(',', ':'))):,} (compact), {lines:,} as the shipped template "
          f"writes them (target <= {TARGET:,}: {'met' if lines <= TARGET else 'MISSED'}); with its instructions "
          f"they add {templated - bare:,} tokens to a templated prompt")


def rag_room(dataset: Path, window: int, tools: list[dict]) -> None:
    from backends.dataset_reader import iter_tasks
    from harness.agents import Episode, agent_messages
    from harness.context import ContextConfig, build_context, rag_defaults

    granularity, top_k = rag_defaults("raw", None, None)
    config = ContextConfig(mode="rag", storage="raw", granularity=granularity, top_k=top_k)
    print(f"\nfirst agent request of a standard RAG run (raw/{granularity}/k={top_k}) in a {window:,}-token window:")
    limits = []
    for task in iter_tasks(dataset):
        record = task.record
        if record is None:
            continue
        context = build_context(record, config)
        episode = Episode(task_id=task.id, user_name=record["user"]["name"], username=record["user"]["username"],
                          now=dict(record["now"]), request=record["intent"], context=context.text, workspace=None,
                          registry=default_registry())
        estimate = prompt_tokens(agent_messages(episode), tools)
        try:
            limit = reply_limit(DEFAULT_MAX_TOKENS, window, estimate)
        except NoRoom as exc:
            print(f"  {task.id}: prompt {estimate:,} tokens (tools included): no room ({exc.room:,} left)")
            continue
        limits.append(limit)
        print(f"  {task.id}: prompt {estimate:,} tokens (tools included), reply limit {limit:,}, "
              f"{window - with_margin(estimate):,} left for tool results and replies")
    if limits:
        print(f"  reply limit: min {min(limits):,}, max {max(limits):,} (configured {DEFAULT_MAX_TOKENS:,})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="a built dataset: also show the reply room of its tasks")
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--server", help="a llama.cpp server's root URL: also count with its tokenizer")
    args = parser.parse_args()
    tools = tool_figures()
    if args.server:
        server_figures(args.server, tools)
    if args.dataset is not None:
        rag_room(args.dataset, args.window, tools)


if __name__ == "__main__":
    main()
