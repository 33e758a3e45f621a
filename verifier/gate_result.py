"""One gate's verdict on one record: passed, why, whether it did not apply, any votes, and what the
record keeps of what the gate found."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GateResult:
    passed: bool
    detail: str
    skipped: bool = False  # not applicable to this record (counts as passed)
    votes: tuple[dict[str, Any], ...] | list[dict[str, Any]] = ()  # the judge panel's votes and reasons
    # what the writer stores in the record's provenance (key -> value): a gate never writes into the record
    keep: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"passed": self.passed, "detail": self.detail}
        if self.skipped:
            data["skipped"] = True
        if self.votes:
            data["votes"] = list(self.votes)
        return data
