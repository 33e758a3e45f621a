"""A local OpenAI-compatible endpoint (real HTTP on 127.0.0.1) for testing the llm backend:
scripted or procedural answers and injectable faults. See :mod:`orchestrator.fake_llm.server`."""

from __future__ import annotations

from orchestrator.fake_llm.server import (
    DEFAULT_MODEL,
    FAULTS,
    FakeLLMServer,
    RecordedRequest,
    Reply,
    Responder,
    echo_responder,
    embedding_for,
    scripted,
)


def default_responder() -> Responder:
    """The responder ``homer fake-llm`` serves with: every role prompt of this project answered
    the way the offline backend would (anything else gets an error object)."""
    from orchestrator.fake_llm.offline_responder import offline_responder

    return offline_responder


__all__ = ["FakeLLMServer", "Reply", "RecordedRequest", "Responder", "default_responder", "echo_responder",
           "scripted", "embedding_for", "FAULTS", "DEFAULT_MODEL"]
