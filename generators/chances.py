"""Every chance a draft, a history plan and its writer draw against, each defined once.

These numbers decide what a benchmark is like: how often a value is corrected, given a near miss,
derived from two turns, said in two turns, called by its full name. They sit together, typed, so
that a reader sees them side by side and a test can vary one (``dataclasses.replace``) without
reaching into a module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DraftChances:
    """What a task draft holds (``generators.families``; Plus: ``generators.plus_offline``)."""

    correct: float = 0.55  # a draft's key value said, then corrected on a later day
    distract: float = 0.95  # a draft gets a near-miss detail where its family has one
    plus_correct: float = 0.6  # a Plus history says one value first and corrects it on a later day
    plus_distract: float = 1.0  # a Plus history mentions a near miss of a value that has one
    deciding_window: float = 0.7  # a window that rules out some day's first free hour is taken, when one does
    corrected_window: float = 0.4  # a window or start time is said first with another value
    follow_up: float = 0.75  # a mail-sending draft's mail must name a follow-up day said in the chat
    moved_follow_up: float = 0.35  # that day is said first as another one and moved later


@dataclass(frozen=True)
class HistoryChances:
    """How a history is laid out (``generators.history_plan``) and written (``generators.dialogue_offline``)."""

    recap: float = 0.5  # a thread is checked on once more after its last detail
    split: float = 0.5  # a detail comes in two turns (the work named, then the value alone)
    decline: float = 0.5  # a corrected piece's earlier value comes up again and is turned down
    decline_long: float = 0.8  # the same over weeks of history, where an old value has more time to resurface
    evidence_share: float = 0.38  # at most this share of a thread's user turns state a value
    derive: float = 0.8  # a day, clock, window, number, length or person is said in no single turn
    free_anchor: float = 0.35  # a thread names an anchor nothing is derived from
    free_anchor_beside: float = 0.75  # beside each anchor a value is derived from, another of its kind for nothing
    relative_day: float = 0.7  # a "Monday June 16" day is said relative to the day it is said on
    full_name: float = 0.3  # after it is raised, a thread's line calls the work by its full name
    stated_full_names: float = 0.7  # the same for a line that states a value
    named_answers: float = 0.6  # a two-turn detail's answer names its work (a retriever must find it)
    long_history_named_answers: float = 0.65  # the same over weeks of history (more talk to find it among)
    withhold: float = 0.5  # a request not planned in two turns is said with its detail left out
    work_share: float = 0.36  # target share of work turns (task and other work) in a day
    long_history_work_share: float = 0.5  # the same over weeks of history (more work, less small talk a day)
    short_opens: float = 0.5  # a short session has an opener
    short_closes: float = 0.45  # a short session has a closer
    reply_opener: float = 0.85  # a reply in a work thread opens with a short "Okay," or "Right."
    decoy_sentence_split: float = 0.2  # a decoy's sentence is said after a lead-in this much more often
    decoy_detail: float = 0.85  # a decoy's turn gives its next detail while it has some left


DRAFT = DraftChances()
HISTORY = HistoryChances()
