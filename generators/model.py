"""What generators produce: a task draft (T, I, K, E, memory, query, oracle plan) and a dialogue.

Plain dataclasses with ``to_dict``/``from_dict`` so that drafts cross process boundaries and
land in ``task.json`` unchanged. Surfer notes stay plain JSON dictionaries (see
``surfers.notes``) so this layer needs no import from its siblings.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Distractor:
    """A near-miss detail said in the chat that resembles a memory piece but is not it (another
    meeting, a similar file, a figure for someone else). ``text`` states it and holds ``value``."""

    value: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"value": self.value, "text": self.text}


@dataclass(frozen=True)
class Derivation:
    """How a value said in no single turn follows from two (``generators.derivation``): one turn
    says that ``anchor`` (a named event, figure or role) is ``base``; the piece's own turn says
    its value against the anchor (``MemoryPiece.said_as``: "two days after the supplier visit").
    ``rule`` and ``amount`` (days, minutes or units) give the value from ``base``."""

    rule: str
    amount: int
    anchor: str
    base: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "amount": self.amount, "anchor": self.anchor, "base": self.base}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Derivation":
        return cls(str(data["rule"]), int(data["amount"]), str(data["anchor"]), str(data["base"]))


@dataclass(frozen=True)
class MemoryPiece:
    """A fact or action item that exists only in the chat.

    ``value`` is the final specific (a number, a file name, a time, a person) that its evidence
    turns contain verbatim (or, when ``said_as`` is set, the relative phrase that resolves to it
    on the day it is said); ``text`` says it as the user would mean it. ``thread`` groups the
    pieces of one line of work; ``superseded`` are earlier values said and later corrected, in
    order; ``distractors`` are near-miss details. ``cue`` (what role the value plays: a file to
    read, a recipient, a meeting time ...) and ``about`` (a short noun phrase for the work it
    belongs to) let a dialogue writer put it in the user's own words. ``derived``: the value is
    said in no turn; ``said_as`` is then the relation its final turn holds, and the anchor's own
    turn (also evidence) says the base.
    """

    id: str
    kind: Literal["fact", "action"]
    text: str
    value: str
    thread: str = ""
    superseded: tuple[str, ...] = ()
    distractors: tuple[Distractor, ...] = ()
    said_as: str = ""
    cue: str = ""
    about: str = ""
    derived: Derivation | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "kind": self.kind, "text": self.text, "value": self.value}
        if self.thread:
            data["thread"] = self.thread
        if self.superseded:
            data["superseded"] = list(self.superseded)
        if self.distractors:
            data["distractors"] = [d.to_dict() for d in self.distractors]
        if self.said_as:
            data["said_as"] = self.said_as
        if self.cue:
            data["cue"] = self.cue
        if self.about:
            data["about"] = self.about
        if self.derived is not None:
            data["derived"] = self.derived.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MemoryPiece":
        return cls(id=data["id"], kind=data["kind"], text=data["text"], value=data["value"],
                   thread=data.get("thread", ""), superseded=tuple(data.get("superseded", ())),
                   distractors=tuple(Distractor(d["value"], d["text"]) for d in data.get("distractors", ())),
                   said_as=data.get("said_as", ""), cue=data.get("cue", ""), about=data.get("about", ""),
                   derived=Derivation.from_dict(data["derived"]) if data.get("derived") else None)

    @property
    def said(self) -> str:
        """What the evidence turns must contain: the relative phrase when there is one, else the value."""
        return self.said_as or self.value


@dataclass(frozen=True)
class Misreading:
    """The oracle plan with a superseded or distractor ``value`` in place of memory ``memory``'s
    final one: what an agent that took the first mention or the near-miss would do. It must fail
    the criteria, or the correction (or distractor) does not matter."""

    memory: str
    dynamic: Literal["superseded", "distractor"]
    value: str
    plan: list["ToolCall"]

    def to_dict(self) -> dict[str, Any]:
        return {"memory": self.memory, "dynamic": self.dynamic, "value": self.value,
                "plan": [{"tool": c.tool, "args": c.args} for c in self.plan]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Misreading":
        return cls(data["memory"], data["dynamic"], data["value"], [ToolCall.from_dict(c) for c in data["plan"]])


@dataclass(frozen=True)
class ToolCall:
    """One office tool call of a plan: ``tool`` is a registry name, ``args`` its arguments."""

    tool: str
    args: dict[str, Any]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ToolCall":
        return cls(tool=data["tool"], args=dict(data["args"]))


@dataclass(kw_only=True)
class TaskDraft:
    """A generated task before the dialogue.

    ``description`` (T) is complete and hidden from the evaluated agent; ``intent`` (I) is the
    user's goal without the specifics; ``subtasks`` (K) split it into 1-5 steps; ``evaluation``
    (E) uses only the catalog; ``memory`` holds what the chat must carry (never the computed
    answer); ``oracle`` solves the task; ``baseline`` is what an agent that knows only the
    intent would do (chat-only values blanked or defaulted) and must not pass.
    """

    family: str = ""  # a registered family's draft gets its name, apps and difficulty from ``@family``
    apps: list[str] = field(default_factory=list)
    difficulty: str = ""
    description: str
    intent: str
    subtasks: list[str]
    evaluation: list[dict[str, Any]]
    memory: list[MemoryPiece]
    query: str
    oracle: list[ToolCall]
    baseline: list[ToolCall] = field(default_factory=list)
    misreadings: list[Misreading] = field(default_factory=list)
    computed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["memory"] = [m.to_dict() for m in self.memory]
        data["misreadings"] = [m.to_dict() for m in self.misreadings]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TaskDraft":
        return cls(
            family=data["family"], apps=list(data["apps"]), difficulty=data["difficulty"],
            description=data["description"], intent=data["intent"], subtasks=list(data["subtasks"]),
            evaluation=list(data["evaluation"]),
            memory=[MemoryPiece.from_dict(m) for m in data["memory"]], query=data["query"],
            oracle=[ToolCall.from_dict(c) for c in data["oracle"]],
            baseline=[ToolCall.from_dict(c) for c in data.get("baseline", [])],
            misreadings=[Misreading.from_dict(m) for m in data.get("misreadings", [])],
            computed=[dict(c) for c in data.get("computed", [])],
        )


class Turn(NamedTuple):
    """One utterance. Marks are memory ids: ``evidence`` (the turn states the piece's final
    value), ``superseded`` (an earlier value, corrected later), ``distractor`` (a near-miss
    detail resembling the piece). ``thread`` is set on work turns: "t<n>" for the task's own
    threads, "w<n>" for other work; small talk has none.

    A named tuple rather than a frozen dataclass: as immutable, equal and hashed by the same
    field values, and made in a third of the time (a chat's every turn is one, and a frozen
    dataclass sets each field through ``object.__setattr__``). ``_replace`` gives a changed copy."""

    role: Role
    text: str
    ts: str  # ISO 8601 local time, e.g. 2024-05-01T09:02:00
    evidence: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    distractor: tuple[str, ...] = ()
    thread: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The turn as a record holds it: the marks it has, in this order (written out, not
        looked up by name: a record's every turn is made into one)."""
        data: dict[str, Any] = {"role": self.role, "text": self.text, "ts": self.ts}
        if self.evidence:
            data["evidence"] = list(self.evidence)
        if self.superseded:
            data["superseded"] = list(self.superseded)
        if self.distractor:
            data["distractor"] = list(self.distractor)
        if self.thread:
            data["thread"] = self.thread
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Turn":
        return cls(role=data["role"], text=data["text"], ts=data["ts"], evidence=tuple(data.get("evidence", ())),
                   superseded=tuple(data.get("superseded", ())), distractor=tuple(data.get("distractor", ())),
                   thread=data.get("thread", ""))


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


_TURN_LINE = re.compile(r"^\[(\d{2}:\d{2}(?::\d{2})?)\] (user|assistant): (.*?)"
                        r"(?: \{((?:(?:old:|near:)?m[0-9]+(?:, )?)+)\})?$")
_DAY_LINE = re.compile(r"^## Day (\d+) - (\d{4}-\d{2}-\d{2})")


def _marks(turn: Turn) -> str:
    marks = [*turn.evidence, *(f"old:{m}" for m in turn.superseded), *(f"near:{m}" for m in turn.distractor)]
    return f" {{{', '.join(marks)}}}" if marks else ""


def transcript(sessions: list[Session], *, evidence: bool = False, work_only: bool = False,
               seconds: bool = True) -> str:
    """The dialogue as plain text: a header per day, one ``[HH:MM:SS] role: text`` line per turn
    (with marks when asked: ``{m1}`` evidence, ``{old:m2}`` superseded, ``{near:m3}``
    distractor). Far fewer tokens than JSON, and readable. ``work_only``: only the turns of work
    threads (the task's and the other work's) and marked turns; small talk left out.
    ``seconds=False``: ``[HH:MM]`` (a reader who names a turn by its time needs no more; two
    tokens fewer a line)."""
    lines = []
    for session in sessions:
        weekday = datetime.strptime(session.date, "%Y-%m-%d").strftime("%A")
        lines.append(f"## Day {session.day} - {session.date} ({weekday})")
        for turn in session.turns:
            if work_only and not (turn.thread or turn.evidence or turn.superseded or turn.distractor):
                continue
            mark = _marks(turn) if evidence else ""
            text = " ".join(turn.text.split())
            lines.append(f"[{turn.ts[11:19] if seconds else turn.ts[11:16]}] {turn.role}: {text}{mark}")
    return "\n".join(lines)


def parse_transcript(text: str) -> list[Session]:
    """The inverse of ``transcript`` (turn texts with their white space folded; a time without
    seconds read as on the minute)."""
    sessions: list[Session] = []
    day, date = 0, ""
    turns: list[Turn] = []
    for line in text.splitlines():
        header = _DAY_LINE.match(line)
        if header:
            if date:
                sessions.append(Session(day, date, tuple(turns)))
            day, date, turns = int(header.group(1)), header.group(2), []
            continue
        match = _TURN_LINE.match(line)
        if match and date:
            marks = [m.strip() for m in (match.group(4) or "").split(",") if m.strip()]
            clock = match.group(1) if len(match.group(1)) == 8 else f"{match.group(1)}:00"
            turns.append(Turn(match.group(2), match.group(3), f"{date}T{clock}",  # type: ignore[arg-type]  # the pattern admits a Role only
                              evidence=tuple(m for m in marks if ":" not in m),
                              superseded=tuple(m[4:] for m in marks if m.startswith("old:")),
                              distractor=tuple(m[5:] for m in marks if m.startswith("near:"))))
    if date:
        sessions.append(Session(day, date, tuple(turns)))
    return sessions
