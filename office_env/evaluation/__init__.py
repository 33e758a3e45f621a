"""The evaluation-criteria catalog: validate a criteria list, then score a testbed with it.

The names below load their modules on first use, so reading a criterion's type
(``office_env.evaluation.criterion``) does not pull in every file format's reader."""

from office_env.lazy_exports import lazy_exports

SEMANTICS = ("homer", "officebench")  # how criteria are scored: homer's checks, or OfficeBench's own verdicts

_EXPORTS = {
    "CHECKS": "office_env.evaluation.checks",
    **dict.fromkeys(("CriterionResult", "EvaluationReport", "InvalidCriteria", "Problem", "catalog_summary",
                     "criteria_schema", "evaluate_criteria", "validate_criteria"), "office_env.evaluation.catalog"),
}


__getattr__ = lazy_exports("office_env.evaluation", _EXPORTS, globals())


__all__ = sorted([*_EXPORTS, "SEMANTICS"])
