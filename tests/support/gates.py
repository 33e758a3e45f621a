"""The gates each kind of record gets, in the order their results are reported, as they have been
since before the registry declared them: a gate declared with the wrong split, kind or report place
changes these."""

NEO_GATES = ("schema", "fails_untouched", "oracle_passes", "memory_evidence", "baseline_fails", "corrections_bite",
             "distractors_bite", "criteria_traced", "answer_forms", "findings_not_pastes")
PLUS_GATES = ("schema", "fails_untouched", "reference_passes", "oracle_passes", "memory_evidence", "baseline_fails",
              "corrections_bite", "distractors_bite", "specifics")
CHOSEN_GATES = ("solvability", "leakage", "judges")  # only with --gates
