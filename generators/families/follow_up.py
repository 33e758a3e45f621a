"""A day the user promises in the chat and the mail must name: "tell them we'll follow up Thursday week".

Most tasks that end in a mail carry only office values and names. People also say *when*, and they
say it relative to the day they speak ("this Friday", "Tuesday next week"), so an agent must resolve
the phrase against that session's date days later. This adds such a day to a share of the drafts
whose work sends a mail: a memory piece (sometimes corrected once), the day in the mail's checked
keywords (any natural written form of the date passes) and in every plan's mail.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from datetime import date, datetime, timedelta

from generators.chances import DRAFT
from generators.model import MemoryPiece, Misreading, TaskDraft, ToolCall
from generators.spoken_time import value_time

CUE = "follow_up_day"
_SIGN_OFF = re.compile(r"^(best|kind regards|regards|many thanks|thanks|cheers|all the best|warm regards)\b"
                       r"[^\n]*\n?[^\n]{0,60}$", re.IGNORECASE)
_ISO_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


def _workdays(start: date, count: int) -> list[date]:
    """The first ``count`` working days after ``start``, in order."""
    days: list[date] = []
    day = start
    while len(days) < count:
        day += timedelta(days=1)
        if day.weekday() < 5:
            days.append(day)
    return days


def written_day(day: date) -> str:
    """How the mail writes the day: "Thursday, 4 December 2025"."""
    return f"{day:%A}, {day.day} {day:%B %Y}"


def _promise_line(day: date) -> str:
    return f"I will follow up on {written_day(day)}."


def promise(draft: TaskDraft) -> str:
    """The sentence a mail keeps the draft's follow-up promise with ("" when it made none)."""
    return "".join(f" {_promise_line(date.fromisoformat(m.value))}" for m in draft.memory if m.cue == CUE)


def _with_day(call: ToolCall, day: date) -> ToolCall:
    """``call`` (a mail send) with the follow-up sentence put before the sign-off."""
    content = str(call.args.get("content", ""))
    line = _promise_line(day)
    paragraphs = content.rstrip().split("\n\n")
    at = len(paragraphs) - 1 if len(paragraphs) > 1 and _SIGN_OFF.match(paragraphs[-1]) else len(paragraphs)
    return ToolCall(call.tool, {**call.args, "content": "\n\n".join([*paragraphs[:at], line, *paragraphs[at:]])})


def _plan_with_day(plan: list[ToolCall], recipient: str | None, day: date) -> list[ToolCall]:
    """``plan`` with the day in its last mail sent to ``recipient`` (None: its last mail; a
    misreading of the recipient still knows the day)."""
    sends = [i for i, c in enumerate(plan)
             if c.tool == "email_send_email" and recipient in (None, c.args.get("recipient"))]
    if not sends:
        return plan
    out = list(plan)
    out[sends[-1]] = _with_day(plan[sends[-1]], day)
    return out


def _taken_days(draft: TaskDraft, now: datetime) -> set[date]:
    """The days the draft already names (its memory's final, earlier and near-miss values, and the
    dates its checks and plans write): the follow-up day must be none of them, or two things would
    be said, written or refused the same way."""
    values = [v for m in draft.memory for v in (m.value, *m.superseded, *(d.value for d in m.distractors))]
    plans = [draft.oracle, draft.baseline, *(m.plan for m in draft.misreadings)]
    written = json.dumps([draft.evaluation, [[c.args for c in plan] for plan in plans]], default=str)
    days = {d for d in map(value_time, set(_ISO_DAY.findall(written))) if isinstance(d, date)}  # each day once
    for value in values:
        when = value_time(str(value), now.date() - timedelta(days=60))
        if when is not None:
            days.add(when.date() if isinstance(when, datetime) else when)
    return days


def _checked_mail(draft: TaskDraft) -> dict | None:
    """The last mail criterion with body keywords that the oracle's mail meets, or None."""
    for check in reversed(draft.evaluation):
        args = check.get("args", {})
        if check.get("function") == "evaluate_email_sent" and isinstance(args.get("body_keywords"), list) \
                and any(c.tool == "email_send_email" and c.args.get("recipient") == args.get("recipient")
                        for c in draft.oracle):
            return check
    return None


def with_follow_up_day(rng: random.Random, now: datetime, draft: TaskDraft) -> TaskDraft:
    """``draft``, or (for a share of mail-sending drafts) the draft whose mail must also name a
    follow-up day said in the chat. The coin and the day come from ``rng`` after the family drew
    everything else, so the rest of the draft is the same either way."""
    check = _checked_mail(draft)
    if check is None or rng.random() >= DRAFT.follow_up or any(m.cue == CUE for m in draft.memory):
        return draft
    recipient = check["args"]["recipient"]
    taken = _taken_days(draft, now)
    free = [d for d in _workdays(now.date(), 9) if d not in taken]
    if len(free) < 3:
        return draft
    day = rng.choice(free[1:7])
    superseded: tuple[str, ...] = ()
    if rng.random() < DRAFT.moved_follow_up:
        superseded = (rng.choice([d for d in free if d != day]).isoformat(),)
    if any(str(m.value).lower() in day.isoformat() for m in draft.memory):  # "20" is in "2025-...": said twice
        return draft
    anchor = next((m for m in draft.memory if m.cue in ("recipient", "reply_point", "mail_subject")), draft.memory[0])
    index = 1 + max(int(m.id[1:]) for m in draft.memory if m.id[1:].isdigit())
    piece = MemoryPiece(id=f"m{index}", kind="fact", text=f"the mail should say we follow up on {day.isoformat()}",
                        value=day.isoformat(), thread=anchor.thread, superseded=superseded, cue=CUE,
                        about=anchor.about)
    checked = {**check, "args": {**check["args"], "body_keywords": [*check["args"]["body_keywords"], day.isoformat()]}}
    misreadings = [replace(m, plan=_plan_with_day(m.plan, None, day)) for m in draft.misreadings]
    misreadings += [Misreading(piece.id, "superseded", old,
                               _plan_with_day(draft.oracle, recipient, date.fromisoformat(old)))
                    for old in superseded]
    return replace(
        draft,
        description=f"{draft.description.rstrip()} In that mail, say that you will follow up on {day.isoformat()} "
                    f"({day:%A}).",
        evaluation=[checked if c is check else c for c in draft.evaluation],
        memory=[*draft.memory, piece],
        oracle=_plan_with_day(draft.oracle, recipient, day),
        misreadings=misreadings,
    )
