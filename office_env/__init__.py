"""The simulated office: a sandboxed testbed, the apps' tools, and the evaluation catalog.

Public surface:
- ``Workspace`` -- one testbed folder; every path stays inside it.
- ``default_registry()`` -- the typed office tools (``.read_only()`` for explorers).
- ``validate_criteria`` / ``evaluate_criteria`` -- the criteria catalog.
- ``load_officebench`` -- OfficeBench task folders as validated seed tasks.
"""

from office_env.errors import CorruptFileError, MissingFileError, OfficeError, PathError
from office_env.evaluation import (
    CriterionResult,
    EvaluationReport,
    InvalidCriteria,
    Problem,
    criteria_schema,
    evaluate_criteria,
    validate_criteria,
)
from office_env.officebench import LoadReport, SeedTask, load_officebench
from office_env.snapshot import Snapshot, SnapshotDiff
from office_env.tools import Tool, ToolRegistry, ToolResult, default_registry
from office_env.workspace import Workspace

__all__ = [
    "CorruptFileError", "CriterionResult", "EvaluationReport", "InvalidCriteria", "LoadReport",
    "MissingFileError", "OfficeError", "PathError", "Problem", "SeedTask", "Snapshot", "SnapshotDiff",
    "Tool", "ToolRegistry", "ToolResult", "Workspace", "criteria_schema", "default_registry",
    "evaluate_criteria", "load_officebench", "validate_criteria",
]
