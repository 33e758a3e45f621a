"""Verifiers: the dialogue rules as code, the quality gates (answer forms, pastes, traces,
misreadings), the judge panel, the learned adversaries and the seed lint."""

from verifier.dialogue_rules import check_dialogue

__all__ = ["check_dialogue"]
