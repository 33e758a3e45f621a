"""Talk about work that is not the task: other projects, colleagues, meetings, reports, files.

One :class:`OtherWork` object serves one history. ``exchange(when, pairs)`` returns ``pairs``
user/assistant pairs about one piece of other work. The user only reports (status, figures,
news, things done, things for much later); the user never asks for anything, and the assistant
acknowledges, reacts, asks a follow-up question, or promises something for a clearly later
time (a named month or quarter well ahead of ``when``). Never a claim that it did anything.

These turns are meant to look like task turns to a scanning agent: most user lines carry a
value-like token (money, percentages, decimals, clock times, dates, file names, e-mail
addresses) and about half of the replies use the same acknowledging words as task turns
(:data:`ACK_WORDS`).

Storylines ("arcs") run across days: a project milestone (planned or running, progress,
slipped, finished, looked back on), a supplier's contact away (out, still out, back) and a hiring
round (open, interviews, offer, accepted).

What the office itself records, the talk does not invent: no colleague of the office (the names
in ``colleagues``) goes on leave, to a course or abroad, and none gets an address (the office's
mail has theirs); people away and outside addresses belong to suppliers' staff (names from the
bank that are not the office's). A colleague the office shows away (``absences``: the spans its
mail gives) is not named in an exchange on a day of theirs away, nor in one whose lines name such
a day: someone else chairs that meeting or sends those figures, and a storyline whose owner is
away rests until they are back. Office documents are named as what they are (a figure is in a
sheet, never in a PDF) and nothing is invented about one once it is named; invented file names
live elsewhere (a team site, a shared drive) and are never an office document's name extended.
A fact is told once a history (a fragment is not used again, with other figures, while others
are left), a reaction names no figure, date or place but the answered line's, and a time of
something that already happened today lies before the moment it is told. Every date is computed
from ``when`` and each arc's own dates, so a later day never contradicts an earlier one: an arc
is mentioned at most once a day, a finish date lies between its last mention and today, a new
deadline lies after today. Calls are expected in chronological order; a call earlier than an
arc's last mention leaves that arc alone.

Composition: a user line is an optional lead ("By the way,") + an intro, answer or remark
fragment + an optional tail; a reply is one or two of acknowledgement / reaction / question /
far-off promise. Slot values (amounts, counts, dates, names, file names) are drawn per exchange
and kept per storyline. The assistant only echoes values the user has said. Lines that would
read the same in every history (no name, project or value in them) are avoided. Every line is
new within the history (the object remembers what it produced) and passes ``avoid(text)``;
a fragment that fails is recomposed with other fragments or values, an exchange that cannot be
completed is recomposed on another topic. Exchanges of up to about 25 pairs are supported.

The package: ``bank`` (the banks and their slots), ``story`` (dates, an exchange's slot values,
arcs, plans), ``office`` (who and what the talk may name, where people are, the moment it is said
at), ``makers`` (:class:`~generators.other_work.makers.SlotValues`, the values a slot is filled
with) and ``composer`` (:class:`OtherWork`, which holds one of each and composes the exchanges).

Wording lives in ``templates/dialogue/work/*.bank``, in the dialogue banks' one format
(``generators.dialogue_bank``; docs/dialogue-banks.md): ``== section`` headers followed by one
fragment per ``- `` line, ``{slot}`` fields filled by str.format, ``== data.x: a | b`` sections
whose entries give several related slots at once. The banks are read and checked on first use
(the first ``OtherWork``, or :func:`load`), once; a malformed line raises :class:`BankError`
naming the file and line.
"""

from __future__ import annotations

from typing import Any

from generators.other_work.bank import ACK_WORDS, WORK_DIR, BankError, load, load_work_banks, parse_work_banks


def __getattr__(name: str) -> Any:
    """``OtherWork`` on first use: importing the composer reads and compiles the banks."""
    if name == "OtherWork":
        from generators.other_work.composer import OtherWork

        return OtherWork
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["OtherWork", "ACK_WORDS", "BankError", "WORK_DIR", "load", "load_work_banks", "parse_work_banks"]
