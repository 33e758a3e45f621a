"""A record's cues read in one written-out loop (``verifier.gameability.record_cues``) are the cues
its plain reading finds, on records of every shape a stranger's dataset may hold; and the value
test with its patterns looked up once answers as the test that looks them up each time."""

from __future__ import annotations

import random
import re
from typing import Any

from generators.english import repeat_keys
from verifier.gameability import (
    _CLOCK_WORD_RE,
    _DIGIT_RE,
    _EMAIL_RE,
    _dynamics,
    _extension_re,
    _note_turn,
    _text,
    _turns,
    acknowledges,
    has_value_token,
    normalize,
    record_cues,
    value_re,
    value_tokens,
)


def _has_value_token(text: str) -> bool:
    """``has_value_token`` as it was first written."""
    if _DIGIT_RE.search(text):
        return True
    if "@" in text and _EMAIL_RE.search(text):
        return True
    if "." in text and _extension_re().search(text):
        return True
    lower = text.lower()
    return ("noon" in lower or "midnight" in lower) and _CLOCK_WORD_RE.search(lower) is not None


def _value_tokens(text: str) -> list[str]:
    """``value_tokens`` as it was first written."""
    if not _has_value_token(text):
        return []
    found = []
    for match in value_re().finditer(text):
        kind, token = match.lastgroup, match.group(0).casefold()
        if kind == "number":
            token = token.replace(",", "")
        elif kind in ("time", "date"):
            token = re.sub(r"[\s.,]", "", token)
        found.append(f"{kind}:{token}")
    return found


def _record_cues(record: dict[str, Any]) -> dict[str, Any]:
    """``record_cues`` as it was first written: a walk over ``_turns`` with a helper for each fact."""
    texts, users, evidence, user_evidence, value_token, acknowledged = [], [], [], [], [], []
    cues: dict[str, Any] = {"texts": texts, "user": users, "evidence": evidence, "user_evidence": user_evidence,
                            "value_token": value_token, "acknowledged": acknowledged}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    work = near_repeats = shape_repeats = 0
    cores: set[str] = set()
    shapes: set[str] = set()
    distractor = False
    days: dict[str, set] = {}
    for day, position, turn, following in _turns(record):
        text = _text(turn)
        texts.append(normalize(text))
        user = turn.get("role") == "user"
        work += bool(turn.get("thread"))
        ids, marked_distractor = _note_turn(day, turn, days)
        distractor = distractor or marked_distractor
        if ids:
            evidence.append(position)
            if user:
                user_evidence.append(position)
        valued = _has_value_token(text)
        for token in _value_tokens(text) if valued else ():
            first.setdefault(token, position)
            last[token] = position
        if not user:
            continue
        core, shape = repeat_keys(text)
        near_repeats += core in cores
        shape_repeats += shape in shapes
        cores.add(core)
        shapes.add(shape)
        users.append(position)
        if valued:
            value_token.append(position)
        if following is not None and following.get("role") == "assistant" and acknowledges(_text(following)):
            acknowledged.append(position)
    cues["near_repeats"] = near_repeats
    cues["shape_repeats"] = shape_repeats
    cues["first_last_mention"] = sorted({*first.values(), *last.values()})
    cues["work_turns"] = work
    cues["dynamics"] = _dynamics(record, distractor, days)
    return cues


TEXTS = ["Noted.", "Got it, I'll remember that.", "Sure, I\u2019ll keep that in mind.", "Ha, the lido was packed again.",
         "The report is report_v2.xlsx, due 14:00.", "Send it to ana.ruiz@example.com by noon.", "Budget: 1,250.50 EUR.",
         "Meeting on March 3rd at 9 am.", "Well, the lido was packed again, honestly.", "Ana says hi.", "Bo says hi.",
         "Midnight snacks again", "notes.TXT is in data/.", "Is there a deadline?", "ok", "", "  spaced   out\ttext ",
         "Straße 12", "\u0663 apples", "2024-03-05", "I will follow up.", "Understood!", "x.y.z", "Thanks for flagging."]


def _value(rng: random.Random) -> Any:
    return rng.choice([rng.choice(TEXTS), None, 7, 2.5, True, ["m1"], {"a": 1}])


def _turn(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice(["turn", 3, None, ["user", "hi"]])
    turn: dict[str, Any] = {}
    if rng.random() < 0.95:
        turn["role"] = rng.choice(["user", "assistant", "assistant", "user", "system", None])
    if rng.random() < 0.95:
        turn["text"] = rng.choice(TEXTS) if rng.random() < 0.9 else _value(rng)
    for mark in ("evidence", "distractor", "superseded"):
        if rng.random() < 0.2:
            turn[mark] = rng.choice([["m1"], ["m2", "m1"], [], "m1", [1, 2.0], None, ["m3"]])
    if rng.random() < 0.3:
        turn["thread"] = rng.choice(["t1", "w2", "", None, 0, 1])
    return turn


def _record(rng: random.Random) -> dict[str, Any]:
    sessions: list[Any] = []
    for _ in range(rng.randrange(0, 5)):
        if rng.random() < 0.05:
            sessions.append(rng.choice(["day", 1, None]))
            continue
        session: dict[str, Any] = {"turns": [_turn(rng) for _ in range(rng.randrange(0, 8))]}
        if rng.random() < 0.9:
            session["day"] = rng.choice([1, 2, 3, 2.0, "2", None, True])
        if rng.random() < 0.05:
            session["turns"] = rng.choice([None, [], "turns"])
        sessions.append(session)
    memory = [{"id": f"m{i}", "thread": rng.choice([None, "t1", "t2"]),
               "superseded": rng.choice([None, [], ["old"]]), "said_as": rng.choice([None, "next Tuesday", "at 9"]),
               "derived": rng.choice([None, {"rule": "days_after"}, {"rule": "more"}])} for i in range(1, 4)]
    record: dict[str, Any] = {"memory": memory}
    if rng.random() < 0.97:
        record["dialogue"] = sessions if rng.random() < 0.97 else None
    return record


def test_a_records_cues_are_those_its_plain_reading_finds():
    rng = random.Random(5)
    kinds = set()
    for _ in range(3000):
        record = _record(rng)
        expected = _record_cues(record)
        assert record_cues(record) == expected, record
        kinds |= {key for key, value in expected.items() if value and key != "dynamics"}
        kinds |= {key for key, value in expected["dynamics"].items() if value}
    assert kinds >= {"texts", "user", "evidence", "user_evidence", "value_token", "acknowledged", "near_repeats",
                     "shape_repeats", "first_last_mention", "work_turns", "distractor", "multi_session"}


def test_the_value_test_is_the_one_that_looks_its_patterns_up_each_time():
    rng = random.Random(9)
    pieces = [*TEXTS, " ", "a.", ".docx", "@", "x@y.z", "noon", "NOON", "12", "report", "\u00b2", ".pdf."]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 5)))
        assert has_value_token(text) == _has_value_token(text), text
        assert value_tokens(text) == _value_tokens(text), text
