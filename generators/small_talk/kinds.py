"""Reading the kinds back from said text: which follow-up question of the banks a line is, the
kinds of answer it expects, and the kinds an answer line gives. A checker of finished histories
(``verifier.history_form``) uses it to count small-talk answers that do not fit their question,
without any record of the composer's choices: each bank entry becomes a pattern of its text
(slots and drawn pools match any words, [a|b] choices their alternatives)."""

from __future__ import annotations

import functools
import re

from generators.small_talk.bank import TOPICS, Entry, answer_pools, beats_of
from generators.small_talk.tables import POOLS

_ANY = r".+?"


def _literal(text: str) -> str:
    """A literal's pattern: spaces may be gone (next to an empty choice), "a" may be "an"."""
    return re.sub(r"\ba\\ ", r"an?\\ ", re.escape(text)).replace("\\ ", r"\s*")


def _pattern(parts: tuple) -> str:
    out = []
    for part in parts:
        kind = part[0]
        if kind == 0:
            out.append(_literal(part[1]))
        elif kind == 3:
            out.append("(?:" + "|".join(_literal(o) for o in part[1]) + ")")
        elif kind == 4:
            out.append(r"(?:,\ [^,.!?]+)?")
        else:
            out.append(_ANY)
    return "".join(out)


def _compiled(entries: list[Entry], *, tail: bool) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """Patterns of the entries' first fields: a whole line (an answer) or its last sentence (a
    question after a reaction)."""
    head = r"(?:^|(?<=[.!?]\ ))" if tail else "^"
    return [(re.compile(head + _pattern(e.parts) + r"\Z", re.IGNORECASE | re.DOTALL), e.expects or e.gives)
            for e in entries]


@functools.cache
def _beat_patterns() -> tuple[tuple[str, tuple, tuple], ...]:
    """Per beat: the patterns of its tagged questions and of its answers."""
    out = []
    for topic in TOPICS:
        for beat in beats_of(POOLS, topic):
            name = f"{topic}.{beat}"
            asks = [e for e in POOLS[f"{name}.ask"].entries if e.expects]
            answers = [e for pool in answer_pools(POOLS, name) for e in POOLS[pool].entries]
            if asks and answers:
                out.append((name, tuple(_compiled(asks, tail=True)), tuple(_compiled(answers, tail=False))))
    return tuple(out)


def question_kinds(text: str) -> list[tuple[str, frozenset[str]]]:
    """The beats whose tagged follow-up question ``text`` ends with, and the kinds it expects."""
    text = " ".join(text.split())
    found = []
    for name, asks, _ in _beat_patterns():
        kinds = frozenset().union(*(k for rx, k in asks if rx.search(text)))
        if kinds:
            found.append((name, kinds))
    return found


def answer_kinds(beat: str, text: str) -> frozenset[str] | None:
    """The kinds the answers of ``beat`` that read as ``text`` give; None if none reads so."""
    text = " ".join(text.split())
    for name, _, answers in _beat_patterns():
        if name == beat:
            hits = [k for rx, k in answers if rx.search(text)]
            return frozenset().union(*hits) if hits else None
    return None


def fits(question: str, answer: str) -> bool | None:
    """Does ``answer`` give a kind ``question`` expects? None: the pair is not read as a bank
    question and one of its answers (not small talk of the banks, or paired by construction)."""
    verdict = None
    for beat, expected in question_kinds(question):
        given = answer_kinds(beat, answer)
        if given is not None:
            if given & expected:
                return True
            verdict = False
    return verdict
