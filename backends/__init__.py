"""Shared plumbing below the roles: token counting, role prompts, the LLM client layer
(``backends.llm``: client, settings, preflight, response cache, rate limits), job executors
(local processes or Ray), scratch folders, folder locks and reading datasets."""
