"""Offline task families, registered by name (see ``base.FAMILIES``)."""

from generators.families import (  # noqa: F401  (registers families)
    decision_work,
    document_work,
    mail_work,
    multi_app,
    sheet_work,
    single_app,
)
from generators.families.base import FAMILIES, Family, FamilyInput, check_families

__all__ = ["FAMILIES", "Family", "FamilyInput", "check_families"]
