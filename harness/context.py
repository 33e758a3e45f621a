"""The history context an evaluated agent gets: the whole multi-day chat, or what retrieval
over it returns.

Modes (:class:`ContextConfig`):

- ``long-context``: the whole dialogue as :func:`generators.model.transcript` prints it (a
  header per day, ``[HH:MM:SS] role: text`` per turn, no evidence marks);
- ``rag``: the dialogue is cut into units, the ``top_k`` units best matching the task's query
  sentence are kept and shown in chronological order, each with its date. Units by storage and
  granularity:

  ============  ===========  ==================  =============================================
  storage       granularity  unit id             unit text
  ============  ===========  ==================  =============================================
  raw           session      ``d<day>``          the day's transcript
  raw           utterance    ``d<day>t<i>``      ``<date> <HH:MM:SS> <role>: <text>`` (i 1-based)
  summary       session      ``s<day>``          a header with the date, then the day's summary
  summary       chunk        ``c<n>``            a header with the days and dates, then one
                                                 summary of ``chunk_sessions`` consecutive days
  ============  ===========  ==================  =============================================

  Ranking is BM25 (:class:`~harness.retrieval.BM25Retriever`) over the words of each unit (its
  turns' texts, or its summary: no clock times, role names or headers), or, with ``embeddings``
  set, the cosine similarity of the endpoint's embedding vectors of those same texts.

Summaries come from the ``summarizer`` role when a client is given, else from the extractive
summarizer (:mod:`harness.summaries`); with ``summary_cache`` they are kept on disk.

The agent never sees evidence ids, criteria, memory or the full description: only the dialogue's
dates, times, roles and texts go into a context (and into the summarizer's prompt).
``evidence_recall`` is measured here, from the record's evidence marks, for the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from backends.task_record import TaskRecord, parse_record
from backends.tokens import count_tokens
from generators.model import Session, transcript
from harness.summaries import EXTRACTIVE_KIND, cached_summary, extractive_summary, llm_kind, llm_summary

MODES = ("long-context", "rag")
STORAGES = ("raw", "summary")
GRANULARITIES = {"raw": ("session", "utterance"), "summary": ("session", "chunk")}


# what --mode rag retrieves when --granularity / --top-k are not given: a fraction of a standard
# history (5 days of about 70 turns: 20 turns are about 6 % of it, 2 days 40 %), never all of it
DEFAULT_GRANULARITY = {"raw": "utterance", "summary": "session"}
DEFAULT_TOP_K = {"utterance": 20, "session": 2, "chunk": 1}


def rag_defaults(storage: str, granularity: str | None, top_k: int | None) -> tuple[str, int]:
    """The granularity and top-k a rag run uses: the given ones, else the defaults above."""
    granularity = granularity or DEFAULT_GRANULARITY.get(storage, "session")
    return granularity, top_k if top_k is not None else DEFAULT_TOP_K.get(granularity, 2)


@dataclass(frozen=True)
class ContextConfig:
    mode: str = "long-context"  # or "rag"
    storage: str = "raw"  # or "summary"
    granularity: str = "session"  # raw: session|utterance; summary: session|chunk
    top_k: int = 5
    chunk_sessions: int = 2
    embeddings: str | None = None  # an embedding model name on the llm endpoint; None = BM25

    def validate(self) -> "ContextConfig":
        """Raise ``ValueError`` naming the option for a value or combination that cannot work;
        returns self. In long-context mode the rag options must keep their defaults."""
        if self.mode not in MODES:
            raise ValueError(f"--mode {self.mode!r} is unknown; use one of: {', '.join(MODES)}")
        if self.storage not in STORAGES:
            raise ValueError(f"--storage {self.storage!r} is unknown; use one of: {', '.join(STORAGES)}")
        allowed = GRANULARITIES[self.storage]
        if self.granularity not in allowed:
            raise ValueError(f"--granularity {self.granularity!r} does not go with --storage {self.storage!r}; "
                             f"use one of: {', '.join(allowed)}")
        for name in ("top_k", "chunk_sessions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be a whole number of at least 1 (got {value!r})")
        if self.embeddings is not None and (not isinstance(self.embeddings, str) or not self.embeddings.strip()):
            raise ValueError(f"--embeddings must be an embedding model name (leave it out for BM25) "
                             f"(got {self.embeddings!r})")
        if self.mode == "long-context":
            for name, default in (("storage", "raw"), ("granularity", "session"), ("embeddings", None)):
                if getattr(self, name) != default:
                    raise ValueError(f"--{name} {getattr(self, name)!r} only applies with --mode rag; "
                                     f"--mode long-context shows the whole raw dialogue")
        return self

    def label(self) -> str:
        """A short name: ``long-context``, ``rag/raw/session/k=5``, ``rag/summary/chunk=2/k=5``,
        with ``/emb=<model>`` when ranked by embeddings."""
        if self.mode == "long-context":
            return "long-context"
        granularity = f"chunk={self.chunk_sessions}" if self.granularity == "chunk" else self.granularity
        label = f"{self.mode}/{self.storage}/{granularity}/k={self.top_k}"
        return f"{label}/emb={self.embeddings}" if self.embeddings else label


@dataclass
class HistoryContext:
    text: str
    tokens: int
    units: list[str]  # ids of the units included, in order
    evidence_recall: float | None  # None in long-context mode or when the task has no evidence
    whole: bool = False  # rag: retrieval returned every unit, so the context is the whole history


@dataclass(frozen=True)
class _Unit:
    id: str
    days: tuple[int, ...]  # the sessions it covers
    index: str  # what retrieval ranks: the words said (no clock times, roles or headers)
    text: str = ""  # as shown to the agent (summary units; raw units are printed once chosen)
    session: int = 0  # raw units: the position of their session in the dialogue
    turn: int | None = None  # utterance units: the 1-based turn index


def _weekday(date: str) -> str:
    return datetime.strptime(date, "%Y-%m-%d").strftime("%A")


def sessions_of(record: TaskRecord) -> list[Session]:
    """The record's dialogue as sessions, in day order."""
    return sorted((Session.from_dict(s.to_dict()) for s in record.dialogue), key=lambda s: s.day)


def _raw_units(sessions: list[Session], granularity: str) -> list[_Unit]:
    if granularity == "session":
        return [_Unit(f"d{s.day}", (s.day,), "\n".join(t.text for t in s.turns), session=p)
                for p, s in enumerate(sessions)]
    return [_Unit(f"d{s.day}t{i}", (s.day,), t.text, session=p, turn=i)
            for p, s in enumerate(sessions) for i, t in enumerate(s.turns, start=1)]


def _shown(unit: _Unit, sessions: list[Session]) -> str:
    """A unit as the agent sees it: a summary unit's text, a session's transcript, or one
    ``<date> <HH:MM:SS> <role>: <text>`` line."""
    if unit.text:
        return unit.text
    session = sessions[unit.session]
    if unit.turn is None:
        return transcript([session])
    turn = session.turns[unit.turn - 1]
    return f"{session.date} {turn.ts[11:19]} {turn.role}: {' '.join(turn.text.split())}"


def _summary_units(record: TaskRecord, sessions: list[Session], config: ContextConfig, client: Any,
                   summary_cache: Path | None) -> list[_Unit]:
    if config.granularity == "session":
        groups = [(f"s{s.day}", [s]) for s in sessions]
        scope = "session"
    else:
        n = config.chunk_sessions
        groups = [(f"c{i + 1}", sessions[start:start + n]) for i, start in enumerate(range(0, len(sessions), n))]
        scope = f"chunk{n}"
    kind = llm_kind(client) if client is not None else EXTRACTIVE_KIND
    record_id = record.id
    units = []
    for unit_id, group in groups:
        if client is not None:
            def compute(unit_id=unit_id, group=group) -> str:
                return llm_summary(client, unit_id, group)
        else:  # each variant binds only what it reads; both are called with no argument
            def compute(group=group) -> str:  # type: ignore[misc]  # another signature, on purpose
                return extractive_summary(group)
        summary = cached_summary(summary_cache, record_id, scope, unit_id, transcript(group), kind, compute)
        first, last = group[0], group[-1]
        if len(group) == 1:
            header = f"## Summary of Day {first.day} - {first.date} ({_weekday(first.date)})"
        else:
            header = (f"## Summary of Days {first.day}-{last.day} - {first.date} ({_weekday(first.date)}) "
                      f"to {last.date} ({_weekday(last.date)})")
        units.append(_Unit(unit_id, tuple(s.day for s in group), summary, f"{header}\n{summary}".rstrip()))
    return units


def _rank(units: list[_Unit], query: str, config: ContextConfig, client: Any) -> list[int]:
    from harness.retrieval import BM25Retriever, EmbeddingRetriever  # numpy: loaded by a run that ranks

    if not units:
        return []
    if config.embeddings is None:
        return BM25Retriever([u.index for u in units]).top(query, config.top_k)
    # an endpoint may refuse empty strings: an empty unit or query is sent as "(empty)"
    texts = [text if text.strip() else "(empty)" for text in [u.index for u in units] + [query]]
    vectors = client.embed(texts, model=config.embeddings)
    if len(vectors) != len(units) + 1:
        raise ValueError(f"embeddings model {config.embeddings!r} returned {len(vectors)} vectors "
                         f"for {len(units) + 1} texts")
    return EmbeddingRetriever(vectors[:-1]).top(vectors[-1], config.top_k)


def _evidence_recall(sessions: list[Session], chosen: list[_Unit], granularity: str) -> float | None:
    turns = {(s.day, i) for s in sessions for i, t in enumerate(s.turns, start=1) if t.evidence}
    if not turns:
        return None
    if granularity == "utterance":
        covered = {(u.days[0], u.turn) for u in chosen} & turns
        return len(covered) / len(turns)
    days = {day for day, _ in turns}
    covered_days = {day for u in chosen for day in u.days} & days
    return len(covered_days) / len(days)


def build_context(record: TaskRecord | dict[str, Any], config: ContextConfig, *, client: Any = None,
                  summary_cache: Path | None = None) -> HistoryContext:
    """The history context of one task record, typed or as read (parsed here; see the module
    docstring). ``client`` (an :class:`~backends.llm.LLMClient`) writes the summaries and computes
    embeddings; it is needed when ``config.embeddings`` is set."""
    config.validate()
    record = record if isinstance(record, TaskRecord) else parse_record(record)
    sessions = sessions_of(record)
    if config.mode == "long-context":
        text = transcript(sessions)
        return HistoryContext(text, count_tokens(text), [f"d{s.day}" for s in sessions], None)
    if config.embeddings is not None and client is None:
        raise ValueError(f"context embeddings={config.embeddings!r} needs an llm client (the endpoint that "
                         "serves the embedding model); leave embeddings unset for BM25")
    if config.storage == "raw":
        units = _raw_units(sessions, config.granularity)
    else:
        units = _summary_units(record, sessions, config, client, summary_cache)
    query = record.query
    picked = sorted(_rank(units, query, config, client))  # unit order is chronological
    chosen = [units[i] for i in picked]
    text = ("\n\n" if config.storage == "summary" else "\n").join(_shown(u, sessions) for u in chosen)
    return HistoryContext(text, count_tokens(text), [u.id for u in chosen],
                          _evidence_recall(sessions, chosen, config.granularity), whole=len(chosen) >= len(units))
