"""Shared plumbing below the agent roles: token accounting now; the LLM client, configuration
and response cache join it with the llm backend."""
