"""Every chance a draft, a history plan and its writer (with its other-work and small-talk parts) draw
against, each defined once.

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
    plus_correct: float = 0.8  # a Plus history says one value first and corrects it on a later day
    plus_distract: float = 1.0  # a Plus history mentions a near miss of a value that has one
    plus_second_near: float = 0.5  # ... and a near miss of another value too, where another has one
    deciding_window: float = 0.7  # a window that rules out some day's first free hour is taken, when one does
    corrected_window: float = 0.4  # a window or start time is said first with another value
    follow_up: float = 0.75  # a mail-sending draft's mail must name a follow-up day said in the chat
    moved_follow_up: float = 0.35  # that day is said first as another one and moved later
    highest: float = 0.5  # a sheet question asks for the row with the highest figure (else the lowest)
    # a near miss of a figure of 10 or more is above it, else below (``generators.near_values``: a Plus
    # draft's near misses, and the changed figures of other jobs' sentences)
    near_miss_above: float = 0.5
    # a Neo query names its work (a search of the chat with it finds the work's turns); the others only
    # point at it. A model is told which, task by task; the offline families weigh their query pools
    # to about this share (``generators.families.phrasing``). Over weeks of history every query does.
    named_query: float = 0.8


@dataclass(frozen=True)
class HistoryChances:
    """How a history is laid out (``generators.history_plan``) and written (``generators.dialogue_offline``,
    its jobs for later ``generators.decoy_talk``)."""

    recap: float = 0.5  # a thread is checked on once more after its last detail
    split: float = 0.5  # a detail comes in two turns (the work named, then the value alone)
    decline: float = 0.5  # a corrected piece's earlier value comes up again and is turned down
    decline_long: float = 0.8  # the same over weeks of history, where an old value has more time to resurface
    # ... and the value that stands is said beside it ("Not happening, 14:00 stands."): the frames that turn an old
    # value down hold the right one as often as not, so no such frame marks a turn as holding only a wrong value
    decline_kept: float = 0.5
    evidence_share: float = 0.38  # at most this share of a thread's user turns state a value
    derive: float = 0.8  # a day, clock, window, number, length or person is said in no single turn
    # a request's file without a folder (most often a new one, which no office can name: a guess is all a reader
    # who reads one turn has) is said by its name and its kind apart, its earlier and near-miss names alike
    derive_file_kind: float = 0.9
    own_wrong_anchor: float = 0.5  # a near-miss file of a value said by reference is named for its own work
    free_anchor: float = 0.35  # a thread names an anchor nothing is derived from
    free_anchor_beside: float = 0.75  # beside each anchor a value is derived from, another of its kind for nothing
    relative_day: float = 0.7  # a "Monday June 16" day is said relative to the day it is said on
    full_name: float = 0.4  # after it is raised, a user's line about the work calls it by its full name (a reply never)
    stated_full_names: float = 0.7  # the same for a line that states a value
    plus_stated_full_names: float = 0.6  # the same in a Plus history, its right and wrong values alike
    # over weeks of history, a line about the work that states no value calls it by its full name this often,
    # nearly as often as one that does: among weeks of talk the name the question asks by marks few details
    long_history_full_name: float = 0.6
    named_answers: float = 0.6  # a two-turn detail's answer names its work (a retriever must find it)
    long_history_named_answers: float = 0.65  # the same over weeks of history (more talk to find it among)
    withhold: float = 0.5  # a request not planned in two turns is said with its detail left out
    # a request's near-miss value said of another work is said in the request's own sentence, in the lines
    # the request is (a whole-clause near miss always is): the sentence frame holds right and wrong alike
    near_in_sentence: float = 0.5
    work_share: float = 0.36  # target share of work turns (task and other work) in a day
    long_history_work_share: float = 0.5  # the same over weeks of history (more work, less small talk a day)
    short_opens: float = 0.5  # a short session has an opener
    short_closes: float = 0.45  # a short session has a closer
    reply_opener: float = 0.85  # a reply in a work thread opens with a short "Okay," or "Right."
    lead: float = 0.3  # a detail stated in one turn, first in its exchange, opens with a lead-in ("Quick one.")
    ask_next: float = 0.6  # the reply before a detail stated in one turn asks for it (else it takes in what was said)
    session_break: float = 0.35  # a session of more than three blocks breaks for a few hours between two
    decoy_sentence_split: float = 0.2  # a decoy's sentence is said after a lead-in this much more often
    decoy_detail: float = 0.85  # a decoy's turn gives its next detail while it has some left
    decoy_change: float = 0.3  # else a decoy's turn changes a detail said already (up to decoys.MAX_CHANGES)
    decoy_asked: float = 0.3  # beyond the two-turn share, a decoy's detail is stated after the assistant asks for it


@dataclass(frozen=True)
class OtherWorkChances:
    """How talk about other work goes (``generators.other_work``). A pair of bounds splits one draw
    three ways, a triple four ways: below the first, below the second, ..., else the last."""

    arc_mention: float = 0.5  # an exchange goes on with an open storyline (when one may be mentioned today)
    new_arc: float = 0.45  # else, with fewer than three storylines open, it starts a new one
    milestone_planned: float = 0.5  # a new milestone is still to start (else it is under way already)
    no_progress: float = 0.5  # a milestone on track, slipped or overdue has no new progress to tell
    lead_first: float = 0.35  # an exchange's first user line opens with a lead ("By the way,")
    tail: float = 0.22  # an exchange's first user line ends with a remark in the news's mood
    ask: float = 0.6  # a reply (not the last) asks a follow-up the next user line answers
    specific_reaction: float = 0.8  # a reply reacts with a line naming something particular, when there are such
    asking_reply: tuple[float, float] = (0.25, 0.75)  # a reply that asks: ack+ask, react+ask, else ask alone
    reply_ack: float = 0.35  # a reply that neither asks nor has a promise to close with acknowledges first
    last_reply: tuple[float, float, float] = (0.25, 0.58, 0.78)  # ack+react, react, ack+promise, else react+promise
    round_money: float = 0.7  # an amount of 1,000 or more is a multiple of 50
    cents: float = 0.15  # an amount has cents
    small_cents: float = 0.5  # a small amount (12 to 480) has cents
    decimal_pct: float = 0.45  # a percentage has a decimal ("12.5%")
    past_today: float = 0.3  # a day something happened is today (late enough on a weekday), else an earlier day
    half_hours: float = 0.4  # a number of hours ends in a half ("12.5")


@dataclass(frozen=True)
class SmallTalkChances:
    """Who the person of a history's small talk is, and how its exchanges go (``generators.small_talk``).
    A pair of bounds splits one draw three ways: below the first, below the second, else the last."""

    woman: float = 0.5  # a person in their life (partner, child, sibling, friend, neighbour) is a woman
    pet: tuple[float, float] = (0.36, 0.6)  # the person has a dog, a cat, else no pet
    partner: float = 0.65  # the person has a partner
    kids: float = 0.5  # the person has children
    second_kid: float = 0.45  # a person with children has two (else one)
    sibling: float = 0.6  # the person has a sibling they talk about
    home: tuple[float, float] = (0.5, 0.8)  # a house with a garden, a flat with a balcony, else a flat
    react: float = 0.4  # a later follow-up question starts with a reaction to the user's answer


DRAFT = DraftChances()
HISTORY = HistoryChances()
OTHER_WORK = OtherWorkChances()
SMALL_TALK = SmallTalkChances()
