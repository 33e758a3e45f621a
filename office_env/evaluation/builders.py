"""Typed builders for criteria, one per check of the registry.

``email_sent(sender=..., recipient=..., body_keywords=[...])`` is the criterion
``{"function": "evaluate_email_sent", "args": {...}}``. Each builder's parameters are made from its
check's argument schema (keyword-only, required where the schema requires them), so code that
writes criteria gets a ``TypeError`` for a misspelt or missing argument when it runs, not a task
that the catalog rejects later; the arguments keep the order they are given in.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from office_env.evaluation.checks import CHECKS

Criterion = dict[str, Any]
PREFIX = "evaluate_"


def builder(name: str) -> Callable[..., Criterion]:
    """The builder of check ``name``: its signature and docstring come from the registry."""
    schema = CHECKS[name].args_schema
    required = set(schema.get("required", ()))
    signature = inspect.Signature(
        [inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY,
                           default=inspect.Parameter.empty if arg in required else None)
         for arg in schema["properties"]],
        return_annotation=Criterion)
    # a call that names only known arguments and all the required ones binds: the signature is
    # asked only for the error of one that does not (criterion after criterion of every task is built)
    known = frozenset(schema["properties"])

    def build(**args: Any) -> Criterion:
        if not (known.issuperset(args) and required.issubset(args)):
            try:
                signature.bind(**args)
            except TypeError as exc:
                raise TypeError(f"{name}: {exc}") from None
        return {"function": name, "args": args}

    build.__signature__ = signature  # type: ignore[attr-defined]  # inspect.signature reads it; typeshed has no such field
    build.__name__ = build.__qualname__ = name[len(PREFIX):]
    build.__doc__ = CHECKS[name].description
    return build


contain = builder("evaluate_contain")
not_contain = builder("evaluate_not_contain")
file_exist = builder("evaluate_file_exist")
file_not_exist = builder("evaluate_file_not_exist")
exact_match = builder("evaluate_exact_match")
diff_contain_text = builder("evaluate_diff_contain_text")
excel_cell_value = builder("evaluate_excel_cell_value")
excel_cell_comparator = builder("evaluate_excel_cell_comparator")
calendar_no_overlap = builder("evaluate_calendar_no_overlap")
calendar_event = builder("evaluate_calendar_event")
calendar_no_event = builder("evaluate_calendar_no_event")
email_sent = builder("evaluate_email_sent")
email_not_sent = builder("evaluate_email_not_sent")
answer = builder("evaluate_answer")
stated_values = builder("evaluate_stated_values")
not_pasted = builder("evaluate_not_pasted")
