"""What generators produce: a task draft (T, I, K, E, memory, query, oracle plan) and a dialogue.

Plain dataclasses with ``to_dict``/``from_dict`` so that drafts cross process boundaries and
land in ``task.json`` unchanged. Surfer notes stay plain JSON dictionaries (see
``surfers.notes``) so this layer needs no import from its siblings.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class MemoryPiece:
    """A fact or action item that exists only in the chat.

    ``value`` is the specific (a number, a file name, a time, a person) that the carrying turn
    must contain verbatim; ``text`` says it as the user would mean it.
    """

    id: str
    kind: Literal["fact", "action"]
    text: str
    value: str

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MemoryPiece":
        return cls(id=data["id"], kind=data["kind"], text=data["text"], value=data["value"])


@dataclass(frozen=True)
class ToolCall:
    """One office tool call of a plan: ``tool`` is a registry name, ``args`` its arguments."""

    tool: str
    args: dict[str, Any]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ToolCall":
        return cls(tool=data["tool"], args=dict(data["args"]))


@dataclass
class TaskDraft:
    """A generated task before the dialogue.

    ``description`` (T) is complete and hidden from the evaluated agent; ``intent`` (I) is the
    user's goal without the specifics; ``subtasks`` (K) split it into 1-5 steps; ``evaluation``
    (E) uses only the catalog; ``memory`` holds what the chat must carry (never the computed
    answer); ``oracle`` solves the task; ``baseline`` is what an agent that knows only the
    intent would do (chat-only values blanked or defaulted) and must not pass.
    """

    family: str
    apps: list[str]
    difficulty: str
    description: str
    intent: str
    subtasks: list[str]
    evaluation: list[dict[str, Any]]
    memory: list[MemoryPiece]
    query: str
    oracle: list[ToolCall]
    baseline: list[ToolCall] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TaskDraft":
        return cls(
            family=data["family"], apps=list(data["apps"]), difficulty=data["difficulty"],
            description=data["description"], intent=data["intent"], subtasks=list(data["subtasks"]),
            evaluation=list(data["evaluation"]),
            memory=[MemoryPiece.from_dict(m) for m in data["memory"]], query=data["query"],
            oracle=[ToolCall.from_dict(c) for c in data["oracle"]],
            baseline=[ToolCall.from_dict(c) for c in data.get("baseline", [])],
        )


@dataclass(frozen=True)
class Turn:
    role: Role
    text: str
    ts: str  # ISO 8601 local time, e.g. 2024-05-01T09:02:00
    evidence: tuple[str, ...] = ()  # ids of the memory pieces this turn carries

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "text": self.text, "ts": self.ts}
        if self.evidence:
            data["evidence"] = list(self.evidence)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Turn":
        return cls(role=data["role"], text=data["text"], ts=data["ts"], evidence=tuple(data.get("evidence", ())))


@dataclass(frozen=True)
class Session:
    """One day of chat."""

    day: int  # 1-based
    date: str  # YYYY-MM-DD
    turns: tuple[Turn, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"day": self.day, "date": self.date, "turns": [t.to_dict() for t in self.turns]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Session":
        return cls(day=data["day"], date=data["date"], turns=tuple(Turn.from_dict(t) for t in data["turns"]))


@dataclass(frozen=True)
class Verdict:
    """A verifier's answer: ``{"passed": bool, "feedback": str}``."""

    passed: bool
    feedback: str

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "feedback": self.feedback}


_TURN_LINE = re.compile(r"^\[(\d{2}:\d{2}:\d{2})\] (user|assistant): (.*?)(?: \{([m0-9, ]+)\})?$")
_DAY_LINE = re.compile(r"^## Day (\d+) - (\d{4}-\d{2}-\d{2})")


def transcript(sessions: list[Session], *, evidence: bool = False) -> str:
    """The dialogue as plain text: a header per day, one ``[HH:MM:SS] role: text`` line per turn
    (with ``{m1, m2}`` evidence marks when asked). Far fewer tokens than JSON, and readable."""
    lines = []
    for session in sessions:
        weekday = datetime.strptime(session.date, "%Y-%m-%d").strftime("%A")
        lines.append(f"## Day {session.day} - {session.date} ({weekday})")
        for turn in session.turns:
            mark = f" {{{', '.join(turn.evidence)}}}" if evidence and turn.evidence else ""
            text = " ".join(turn.text.split())
            lines.append(f"[{turn.ts[11:19]}] {turn.role}: {text}{mark}")
    return "\n".join(lines)


def parse_transcript(text: str) -> list[Session]:
    """The inverse of ``transcript`` (turn texts with their white space folded)."""
    sessions: list[Session] = []
    day, date, turns = 0, "", []
    for line in text.splitlines():
        header = _DAY_LINE.match(line)
        if header:
            if date:
                sessions.append(Session(day, date, tuple(turns)))
            day, date, turns = int(header.group(1)), header.group(2), []
            continue
        match = _TURN_LINE.match(line)
        if match and date:
            marks = tuple(m.strip() for m in (match.group(4) or "").split(",") if m.strip())
            turns.append(Turn(match.group(2), match.group(3), f"{date}T{match.group(1)}", marks))  # type: ignore[arg-type]
    if date:
        sessions.append(Session(day, date, tuple(turns)))
    return sessions
