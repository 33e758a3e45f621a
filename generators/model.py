"""What generators produce: a task draft (T, I, K, E, memory, query, oracle plan) and a dialogue.

Plain dataclasses with ``to_dict``/``from_dict`` so that drafts cross process boundaries and
land in ``task.json`` unchanged. Surfer notes stay plain JSON dictionaries (see
``surfers.notes``) so this layer needs no import from its siblings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
