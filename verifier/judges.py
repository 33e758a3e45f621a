"""The judge panel: five independent judges apply the quality guideline; three or more
negative votes drop a task. Votes and reasons are kept in provenance.

Offline, the judges are rules, one per emphasis of the guideline; on the llm backend each judge
is a separate model call, told which point to weigh most (so the five are not one opinion
asked five times).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from backends.prompts import render
from backends.task_record import TaskRecord
from backends.task_record import Turn as TurnRecord
from generators.model import Session, Turn, transcript
from verifier.dialogue_rules import ValueHolder, marked_turns
from verifier.schemas import JUDGE_VOTE_SCHEMA

PANEL = ("completeness", "no leakage", "clarity and solvability", "realism", "language")
REJECTS_TO_DROP = 3
_CLAIMS = re.compile(r"\b(i(?:'ve| have) (?:sent|booked|updated|created|scheduled|written|done))\b", re.I)


@dataclass(frozen=True)
class Vote:
    judge: str
    accept: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "vote": "accept" if self.accept else "reject", "reason": self.reason}


def _turns(record: TaskRecord) -> list[TurnRecord]:
    return [t for s in record.dialogue for t in s.turns]


def _completeness(record: TaskRecord) -> Vote:
    holder = ValueHolder(marked_turns(record.dialogue_dicts()))
    indices = range(len(holder.turns))
    texts = [t[3] for t in holder.turns]

    def given(m: Any) -> bool:
        if m.derived is not None:  # said in no turn: its relation and its anchor are
            return any((m.said_as or "").lower() in t for t in texts) and \
                any(holder.names_anchor(i, m.derived.anchor, m.derived.base) for i in indices)
        return any(holder.holds(i, m.value) for i in indices)

    missing = [m.said_as or m.value for m in record.memory if not given(m)]
    if missing:
        return Vote("completeness", False, f"the chat never gives {missing[0]!r}")
    return Vote("completeness", True, "every detail the task needs is in the chat")


def _leakage(record: TaskRecord) -> Vote:
    intent = record.intent.lower()
    leaked = [m.value for m in record.memory if m.value.lower() in intent]
    if leaked:
        return Vote("no leakage", False, f"the intent gives away {leaked[0]!r}")
    if intent.strip() == record.description.strip().lower():
        return Vote("no leakage", False, "the intent repeats the full description")
    return Vote("no leakage", True, "the intent keeps the specifics out")


def _clarity(record: TaskRecord) -> Vote:
    if not record.description.strip() or not record.subtasks:
        return Vote("clarity and solvability", False, "the task has no description or no subtasks")
    if len(set(record.subtasks)) != len(record.subtasks):
        return Vote("clarity and solvability", False, "a subtask is repeated")
    return Vote("clarity and solvability", True, "one clear job, split into distinct steps")


def _realism(record: TaskRecord) -> Vote:
    turns = _turns(record)
    carrying = sum(1 for t in turns if t.evidence or t.superseded or t.distractor)
    if len(record.dialogue) < 2:
        return Vote("realism", False, "a single session is not a working relationship")
    if turns and carrying / len(turns) > 0.5:
        return Vote("realism", False, "almost every turn is a task detail; there is no small talk")
    return Vote("realism", True, "task details sit among believable small talk")


def _language(record: TaskRecord) -> Vote:
    turns = _turns(record)
    texts = [t.text.strip() for t in turns]
    if any(not t for t in texts):
        return Vote("language", False, "a turn is empty")
    claims = [t for t in turns if t.role == "assistant" and _CLAIMS.search(t.text)]
    if claims:
        return Vote("language", False, f"the assistant claims work done in the chat: {claims[0].text[:60]!r}")
    repeats = sum(1 for a, b in zip(texts, texts[1:]) if a == b)
    if repeats:
        return Vote("language", False, "the same line is said twice in a row")
    return Vote("language", True, "fluent, varied turns")


RULE_JUDGES: tuple[Callable[[TaskRecord], Vote], ...] = (_completeness, _leakage, _clarity, _realism, _language)


def _sessions(record: TaskRecord) -> list[Session]:
    return [Session(s.day, s.date, tuple(Turn.from_dict(t.to_dict()) for t in s.turns)) for s in record.dialogue]


def llm_votes(client: Any, record: TaskRecord) -> list[Vote]:
    text = transcript(_sessions(record))
    votes = []
    for number, emphasis in enumerate(PANEL, start=1):
        inputs = {"judge": number, "weigh_most": emphasis, "description": record.description,
                  "intent": record.intent, "subtasks": list(record.subtasks), "query": record.query}
        data = client.structured("judge", render("judge", inputs=inputs, transcript=text, schema=JUDGE_VOTE_SCHEMA),
                                 JUDGE_VOTE_SCHEMA)
        votes.append(Vote(emphasis, data["vote"] == "accept", data["reason"]))
    return votes


def judge_panel(record: TaskRecord, client: Any = None) -> tuple[bool, str, list[dict[str, Any]]]:
    """(passed, detail, votes): passed unless ``REJECTS_TO_DROP`` or more judges reject."""
    votes = llm_votes(client, record) if client is not None else [judge(record) for judge in RULE_JUDGES]
    rejects = [v for v in votes if not v.accept]
    passed = len(rejects) < REJECTS_TO_DROP
    detail = (f"{len(votes) - len(rejects)} of {len(votes)} judges accept"
              + (f"; rejected for: {'; '.join(f'{v.judge}: {v.reason}' for v in rejects)}" if rejects else ""))
    return passed, detail, [v.to_dict() for v in votes]
