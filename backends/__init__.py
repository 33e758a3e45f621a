"""Shared plumbing below the roles: token counting, role prompts, the LLM client layer
(``backends.llm``: client, settings, preflight, response cache, rate limits), job executors
(local processes or Ray), scratch folders, folder locks, reading datasets, and the fake
OpenAI-compatible endpoint the LLM client is tested against (``backends.fake_llm``)."""
