"""One criterion of a task's ``evaluation`` list, as a type: the check's name and its arguments.

Which names exist and what arguments each takes is the catalog's (``criteria_schema``); this
type is only the shape every criterion has, so a reader writes ``c.function``, not ``c["function"]``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Criterion(BaseModel):
    """``{"function": name, "args": {...}}``: a check of the catalog and what it is given."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    function: str
    args: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The criterion as it is written in ``task.json``."""
        return {"function": self.function, "args": self.args}
