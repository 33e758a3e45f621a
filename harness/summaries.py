"""Summaries of chat sessions for the "summary" storage of the history context.

Two summarizers with one output (plain text):

- :func:`extractive_summary` (no model): every user turn that carries a concrete detail (a digit,
  a file name, an e-mail address, a quoted title, a capitalised name inside a sentence, a time
  word such as a weekday, a month, "tomorrow" or "noon") or a request ("please", "has to",
  "make sure", "remember"...) is kept whole; of the other user turns
  only the first sentence, in order, while they fit in a small word budget. Assistant turns are
  left out (the assistant only acknowledges). Deterministic.
- :func:`llm_summary`: the ``summarizer`` role prompt (``templates/prompts/summarizer.j2``)
  through an :class:`~backends.llm.LLMClient`, answer ``{"summary": str}``.

:func:`cached_summary` keeps each summary in a JSON file so that a rerun does not recompute it.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

from backends.prompts import render
from generators.model import Session, Turn
from office_env.untrusted import UntrustedInputError, load_json
from office_env.workspace import atomic_write

EXTRACTIVE_KIND = "extractive-v1"  # change it when the extractive summarizer changes (cached summaries are keyed by it)
WORDS_PER_SESSION = 40  # the budget for first sentences of turns without details, per session
SUMMARIZER_ROLE = "summarizer"
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
    "additionalProperties": False,
}

_MONTHS = ("january february march april june july august september october november december")  # not "may"
_TIME_WORDS = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|" + _MONTHS.replace(" ", "|")
    + r"|tomorrow|yesterday|tonight|noon|midnight|o'clock|deadline)(?![\w'])", re.I)  # "5 pm": the digit
_REQUEST = re.compile(  # a request or an instruction, even without a specific in it
    r"\b(?:please|has to|have to|needs? to|must|should|make sure|remember|don't forget|keep in mind)\b", re.I)
_DETAIL = re.compile(
    r"\d"                                        # numbers, amounts, dates, times
    r"|\b[\w-]+\.[A-Za-z][A-Za-z0-9]{1,4}\b"     # file names (report.xlsx)
    r"|@"                                        # e-mail addresses
    r"|\"[^\"]+\"|\u201c[^\u201d]+\u201d")       # quoted titles
_WORD = re.compile(r"\S+")
_CAPITALISED = re.compile(r"^[(\"'\u201c]?[A-Z][A-Za-z]")
_SENTENCE_END = re.compile(r"[.!?:;][)\"'\u201d]*$")
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)")
_NOT_NAMES = {"OK", "Ok", "Okay"}


def has_detail(text: str) -> bool:
    """True when ``text`` carries something concrete a summary must keep."""
    if _DETAIL.search(text) or _TIME_WORDS.search(text) or _REQUEST.search(text):
        return True
    words = _WORD.findall(text)
    for previous, word in zip(words, words[1:]):  # the first word of the text is a sentence start
        if (_CAPITALISED.match(word) and not _SENTENCE_END.search(previous)
                and word.strip("(\"'\u201c.,!?;:") not in _NOT_NAMES):
            return True
    return False


def first_sentence(text: str) -> str:
    match = _FIRST_SENTENCE.match(text)
    return match.group(1) if match else text


def _session_summary(turns: Sequence[Turn], budget: int) -> str:
    pieces: list[str] = []
    spent = 0
    over = False
    for turn in turns:
        if turn.role != "user":
            continue
        text = " ".join(turn.text.split())
        if not text:
            continue
        if has_detail(text):
            pieces.append(text)
        elif not over:
            sentence = first_sentence(text)
            words = len(sentence.split())
            if spent + words > budget:
                over = True  # later small talk is left out; details still get through
            else:
                pieces.append(sentence)
                spent += words
    return " ".join(pieces)


def extractive_summary(sessions: Sequence[Session], *, words_per_session: int = WORDS_PER_SESSION) -> str:
    """The extractive summary of one or more sessions: for one session its kept sentences, for
    several one line per session, ``YYYY-MM-DD (Weekday): ...`` (sessions with nothing kept are
    left out)."""
    if len(sessions) == 1:
        return _session_summary(sessions[0].turns, words_per_session)
    lines = []
    for session in sessions:
        body = _session_summary(session.turns, words_per_session)
        if body:
            lines.append(f"{session.date} ({_weekday(session.date)}): {body}")
    return "\n".join(lines)


def _weekday(date: str) -> str:
    return datetime.strptime(date, "%Y-%m-%d").strftime("%A")


def summarizer_inputs(unit_id: str, sessions: Sequence[Session]) -> dict[str, Any]:
    """What the summarizer prompt shows the model: the sessions' turns, never evidence marks."""
    return {
        "unit": unit_id,
        "sessions": [{"day": s.day, "date": s.date, "weekday": _weekday(s.date),
                      "turns": [{"role": t.role, "ts": t.ts, "text": t.text} for t in s.turns]}
                     for s in sessions],
    }


def llm_summary(client: Any, unit_id: str, sessions: Sequence[Session]) -> str:
    """The summary the ``summarizer`` role writes for these sessions."""
    messages = render(SUMMARIZER_ROLE, inputs=summarizer_inputs(unit_id, sessions), schema=SUMMARY_SCHEMA)
    return client.structured(SUMMARIZER_ROLE, messages, SUMMARY_SCHEMA)["summary"].strip()


def llm_kind(client: Any) -> str:
    """The summarizer kind of a client, ``llm:<model of the summarizer role>`` when it is known."""
    settings = getattr(client, "settings", None)
    model_for = getattr(settings, "model_for", None)
    return f"llm:{model_for(SUMMARIZER_ROLE)}" if callable(model_for) else "llm"


def summary_key(unit_text: str, kind: str) -> str:
    return hashlib.sha256(f"{kind}\n{unit_text}".encode("utf-8")).hexdigest()


_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _safe_name(name: str) -> str:
    clean = _SAFE.sub("_", name).lstrip(".") or "_"
    if clean != name:  # keep distinct ids distinct after cleaning
        clean = f"{clean[:80]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"
    return clean


def cache_file(cache_dir: Path, record_id: str, scope: str, unit_id: str) -> Path:
    """``<cache_dir>/<record id>/<scope>/<unit id>.json``; ``scope`` names the unit layout
    (``session``, ``chunk2``...), so one record's summaries for every layout live side by side."""
    return Path(cache_dir) / _safe_name(record_id) / _safe_name(scope) / f"{_safe_name(unit_id)}.json"


def cached_summary(cache_dir: Path | None, record_id: str, scope: str, unit_id: str, unit_text: str,
                   kind: str, compute: Callable[[], str]) -> str:
    """The summary stored for this unit when its key (sha256 of the summarizer kind and the unit's
    text) matches, else ``compute()``, stored with an atomic write (temporary file + rename).
    An unreadable cache file counts as a miss and is replaced."""
    if cache_dir is None:
        return compute()
    path = cache_file(cache_dir, record_id, scope, unit_id)
    key = summary_key(unit_text, kind)
    try:
        stored = load_json(path)
        if isinstance(stored, dict) and stored.get("key") == key and isinstance(stored.get("summary"), str):
            return stored["summary"]
    except UntrustedInputError:
        pass
    summary = compute()
    entry = {"key": key, "kind": kind, "record": record_id, "scope": scope, "unit": unit_id, "summary": summary}
    atomic_write(path, (json.dumps(entry, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    return summary
