"""One gate's verdict on one record: passed, why, whether it did not apply, and any votes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateResult:
    passed: bool
    detail: str
    skipped: bool = False  # not applicable to this record (counts as passed)
    votes: tuple[dict[str, Any], ...] | list[dict[str, Any]] = ()  # the judge panel's votes and reasons

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"passed": self.passed, "detail": self.detail}
        if self.skipped:
            data["skipped"] = True
        if self.votes:
            data["votes"] = list(self.votes)
        return data
