"""A mail or document that is mostly its sources copied out fails, whatever the task's kind.

A look-up's value is read, not worked out: pasting what was read carries it, and the checks of the
value alone pass that paste. ``paste_checks`` adds, for each mail and document the oracle writes
(``generators.stated_values.prose_targets``), an ``evaluate_not_pasted`` check naming the lines of
everything the oracle reads, as the read tools show them on the untouched office
(``office_env.evaluation.pasted``). An output the oracle itself makes mostly of those lines (a
forward, notes passed on) gets none: there a paste is the answer. Nor does one the untouched office
already fails (an older message between the same people that quotes the sources).
"""

from __future__ import annotations

import copy
from dataclasses import replace

from generators.model import TaskDraft
from generators.stated_values import prose_targets
from office_env.evaluation import evaluate_criteria
from office_env.evaluation.builders import not_pasted
from office_env.evaluation.pasted import is_paste, line_keys
from office_env.tools import read_only_registry
from office_env.workspace import Workspace


def _source_keys(draft: TaskDraft, workspace: Workspace) -> list[str]:
    """The digests of every line the oracle's reads return on the untouched office."""
    reads = read_only_registry()
    calls = [(call.tool, dict(call.args)) for call in draft.oracle if call.tool in reads]
    return line_keys(result.observation for result in reads.run(workspace, calls) if result.ok)


def paste_checks(draft: TaskDraft, workspace: Workspace | None) -> TaskDraft:
    """The draft with an ``evaluate_not_pasted`` check for each of its oracle's mails and documents
    (see the module docstring); unchanged without a workspace or when the oracle reads nothing."""
    targets = prose_targets(draft)
    if workspace is None or not targets:
        return draft
    keys = _source_keys(draft, workspace)
    if not keys:
        return draft
    evaluation = copy.deepcopy(draft.evaluation)
    for target, text in targets:
        if is_paste(text, frozenset(keys)):
            continue
        check = not_pasted(**target, source_lines=keys)
        if check not in evaluation and evaluate_criteria(workspace, [check]).passed:
            evaluation.append(check)
    return replace(draft, evaluation=evaluation) if evaluation != draft.evaluation else draft
