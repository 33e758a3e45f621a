"""The office's apps, listed once: the tools, the surfers, the families, the generators' schemas
and the planner take their app names (and their order) from here."""

from __future__ import annotations

# The apps a task works in, in the order prompts, schemas and records list them.
OFFICE_APPS: tuple[str, ...] = ("word", "excel", "pdf", "email", "calendar")
# The apps that have tools: the office's, and the file system every task may look through.
TOOL_APPS: tuple[str, ...] = (*OFFICE_APPS, "system")
