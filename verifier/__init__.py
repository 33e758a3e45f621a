"""Verifiers: the dialogue rules as code (quality filters and the judge panel come later)."""

from verifier.dialogue_rules import check_dialogue

__all__ = ["check_dialogue"]
