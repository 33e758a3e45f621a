"""A local OpenAI-compatible endpoint (real HTTP on 127.0.0.1) for testing the llm client: the
server, its wire format, listener, slots, prefix cache, tokenizer routes and server profiles. What
it answers comes from a responder; the project's own responders (every role prompt, the agents)
live in :mod:`orchestrator.fake_llm`. See :mod:`backends.fake_llm.server`."""

from __future__ import annotations

from backends.fake_llm.server import (
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

__all__ = ["DEFAULT_MODEL", "FAULTS", "FakeLLMServer", "RecordedRequest", "Reply", "Responder", "echo_responder",
           "embedding_for", "scripted"]
