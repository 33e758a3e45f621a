"""The evaluation-criteria catalog: validate a criteria list, then score a testbed with it.

The names below load their modules on first use, so reading a criterion's type
(``office_env.evaluation.criterion``) does not pull in every file format's reader."""

from importlib import import_module
from typing import Any

SEMANTICS = ("homer", "officebench")  # how criteria are scored: homer's checks, or OfficeBench's own verdicts

_EXPORTS = {
    "CHECKS": "office_env.evaluation.checks",
    **dict.fromkeys(("CriterionResult", "EvaluationReport", "InvalidCriteria", "Problem", "catalog_summary",
                     "criteria_schema", "evaluate_criteria", "validate_criteria"), "office_env.evaluation.catalog"),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'office_env.evaluation' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = sorted([*_EXPORTS, "SEMANTICS"])
