"""The simulated office: a sandboxed testbed, the apps' tools, and the evaluation catalog.

Public surface:
- ``Workspace`` -- one testbed folder; every path stays inside it.
- ``default_registry()`` -- the typed office tools (``tools.read_only_registry()`` for explorers).
- ``validate_criteria`` / ``evaluate_criteria`` -- the criteria catalog.
- ``load_officebench`` -- OfficeBench task folders as validated seed tasks.
"""

from office_env.lazy_exports import lazy_exports

# The names below load their modules on first use: ``office_env.limits`` or ``office_env.errors``
# alone does not pull in every file format's library (what keeps ``homer --help`` quick).
_EXPORTS = {
    "CorruptFileError": "office_env.errors", "MissingFileError": "office_env.errors",
    "OfficeError": "office_env.errors", "PathError": "office_env.errors",
    "CriterionResult": "office_env.evaluation", "EvaluationReport": "office_env.evaluation",
    "InvalidCriteria": "office_env.evaluation", "Problem": "office_env.evaluation",
    "criteria_schema": "office_env.evaluation", "evaluate_criteria": "office_env.evaluation",
    "validate_criteria": "office_env.evaluation",
    "LoadReport": "office_env.officebench", "SeedTask": "office_env.officebench",
    "load_officebench": "office_env.officebench",
    "Snapshot": "office_env.snapshot", "SnapshotDiff": "office_env.snapshot",
    "Tool": "office_env.tools", "ToolRegistry": "office_env.tools", "ToolResult": "office_env.tools",
    "default_registry": "office_env.tools",
    "Workspace": "office_env.workspace",
}


__getattr__ = lazy_exports("office_env", _EXPORTS, globals())


__all__ = sorted(_EXPORTS)
