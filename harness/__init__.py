"""The evaluation harness: the history context an agent gets (long-context or retrieval over the
chat), running agents on tasks and scoring them."""

from __future__ import annotations

from harness.context import ContextConfig, HistoryContext, build_context
from harness.retrieval import BM25Retriever, EmbeddingRetriever, tokenize

__all__ = ["ContextConfig", "HistoryContext", "build_context", "BM25Retriever", "EmbeddingRetriever", "tokenize"]

# Running and scoring agents (harness.agents, harness.runner, harness.report).
from harness.agents import Agent, Episode, LLMAgent, NoneAgent, OracleAgent, Trajectory  # noqa: E402
from harness.runner import EvalConfig, EvalError, RunSummary, evaluate  # noqa: E402

__all__ += ["Agent", "Episode", "Trajectory", "OracleAgent", "NoneAgent", "LLMAgent", "EvalConfig", "EvalError",
            "RunSummary", "evaluate"]
