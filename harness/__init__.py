"""The evaluation harness: the history context an agent gets (long-context or retrieval over the
chat), running agents on tasks (``harness.runner``) and scoring them (``harness.scores``,
``harness.report``). Import from the modules themselves: the package loads nothing, so a command
that only reads a run pays for no office tools."""
