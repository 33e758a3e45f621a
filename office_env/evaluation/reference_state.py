"""The reference-applied state of a task: its testbed with every expected file copied over the
file its exact-match criterion checks.

An OfficeBench seed has no solution plan, but its ``reference/`` folder holds the files a right
answer produces. Applying them is the one solution offline code can build without understanding
the task: if that state passes every criterion (and the untouched testbed fails), the task is
proven solvable; if it passes the exact-match criteria only, the rest is left to an agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from office_env.evaluation.checks import Context
from office_env.formats.bounded import read_bytes
from office_env.workspace import Workspace

EXACT = "evaluate_exact_match"


def apply_reference(ws: Workspace, criteria: list[dict[str, Any]], reference_dir: Path | None,
                    initial_dir: Path | None = None) -> list[int]:
    """Copy each exact-match criterion's expected file (from ``reference_dir``, the initial testbed
    or the testbed itself, resolved as the check resolves it) onto its result file in ``ws``; the
    indexes of the criteria applied. An expected file that is missing is skipped (its criterion
    then fails); a path that leaves its folder raises ``PathError`` as the check would."""
    ctx = Context(ws, reference_dir, initial_dir)
    applied = []
    for index, item in enumerate(criteria):
        if item.get("function") != EXACT:
            continue
        args = item["args"]
        source = ctx.path(args["expected_file"], "expected_file")
        if not source.is_file():
            continue
        ws.write_bytes(args["result_file"], read_bytes(source, str(args["expected_file"])), field="result_file")
        applied.append(index)
    return applied
