"""The evaluation-criteria catalog: validate a criteria list, then score a testbed with it."""

from office_env.evaluation.catalog import (
    CriterionResult,
    EvaluationReport,
    InvalidCriteria,
    Problem,
    catalog_summary,
    criteria_schema,
    evaluate_criteria,
    validate_criteria,
)
from office_env.evaluation.checks import CHECKS

__all__ = [
    "CHECKS",
    "CriterionResult",
    "EvaluationReport",
    "InvalidCriteria",
    "Problem",
    "catalog_summary",
    "criteria_schema",
    "evaluate_criteria",
    "validate_criteria",
]
