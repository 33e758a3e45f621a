"""One row of a run's ``results.jsonl``: one trial of one task, as a type.

Every place that makes a row (a scored trial, a history over the context limit, a task whose
runs gave no result) builds a :class:`ResultRow`; :meth:`ResultRow.to_dict` is the one way it
becomes the JSON a run writes, so the rows of a run keep one shape and one key order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ResultRow:
    id: str
    trial: int
    app_count: int | None  # of the task (None: a task that could not be read again)
    apps: list[str]
    family: str | None
    passed: bool
    criteria: list[dict[str, Any]] = field(default_factory=list)  # one result per criterion
    steps: int = 0
    context_tokens: int = 0
    context_units: list[str] = field(default_factory=list)  # the history pieces the context holds
    evidence_recall: float | None = None
    trajectory: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    context_whole: bool = False  # the whole history fit: written only when true
    reference: dict[str, bool | None] | None = None  # whether doing nothing and the oracle pass (None: not measured)

    def to_dict(self) -> dict[str, Any]:
        """The row as ``results.jsonl`` holds it (``context_whole`` only when true, ``reference``
        only when measured)."""
        data: dict[str, Any] = {
            "id": self.id, "trial": self.trial, "app_count": self.app_count, "apps": self.apps,
            "family": self.family, "passed": self.passed, "criteria": self.criteria, "steps": self.steps,
            "context_tokens": self.context_tokens, "context_units": self.context_units,
            "evidence_recall": self.evidence_recall, "trajectory": self.trajectory, "error": self.error}
        if self.context_whole:
            data["context_whole"] = True
        if self.reference is not None:
            data["reference"] = self.reference
        return data
