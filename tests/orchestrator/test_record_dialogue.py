"""A built record keeps the dicts its chat was validated from as its sessions' JSON: they are what
the sessions dump to, key for key and in the same order, for every mix of marks a draft's turns
carry; a day given as a float (which the record writes whole) is dumped afresh."""

from __future__ import annotations

import json
import random

from backends.task_record import Session, TaskRecord
from generators.model import Session as DraftSession
from generators.model import Turn
from tests.support.records import task_record_sample


def _sessions(rng: random.Random) -> list[DraftSession]:
    out = []
    for day in range(1, rng.randint(1, 4) + 1):
        turns = []
        for n in range(rng.randint(2, 8)):
            marks = {name: tuple(f"m{rng.randint(1, 9)}" for _ in range(rng.randint(1, 2)))
                     for name in ("evidence", "superseded", "distractor") if rng.random() < 0.3}
            thread = rng.choice(["", "", "t1", "w2"])
            text = rng.choice(["Hi.", "Zoë ’s 1,200 €", "a\nb"])
            turns.append(Turn(role=rng.choice(["user", "assistant"]), text=text,
                              ts=f"2025-03-{day:02d}T09:{n:02d}:00", thread=thread, **marks))
        out.append(DraftSession(day=day, date=f"2025-03-{day:02d}", turns=tuple(turns)))
    return out


def _record(dialogue: list[dict]) -> TaskRecord:
    return TaskRecord.model_validate({**task_record_sample(), "dialogue": dialogue})


def test_a_draft_s_chat_dicts_are_what_its_record_dumps():
    rng = random.Random(2)
    for _ in range(200):
        dialogue = [s.to_dict() for s in _sessions(rng)]
        record = _record(dialogue)
        record.keep_dialogue_dicts(dialogue)
        assert record.dialogue_dicts() is dialogue  # kept, not dumped again
        fresh = [s.to_dict() for s in record.dialogue]
        assert json.dumps(record.dialogue_dicts()) == json.dumps(fresh)
        assert json.dumps(record.to_dict()) == json.dumps(_record(dialogue).to_dict())


def test_a_day_given_as_a_float_is_dumped_afresh():
    dialogue = [s.to_dict() for s in _sessions(random.Random(4))]
    dialogue[0] = {**dialogue[0], "day": float(dialogue[0]["day"])}
    record = _record(dialogue)
    record.keep_dialogue_dicts(dialogue)
    assert record.dialogue_dicts() is not dialogue
    assert record.dialogue_dicts()[0]["day"] == 1 and type(record.dialogue_dicts()[0]["day"]) is int
    assert [Session.model_validate(s).to_dict() for s in dialogue] == record.dialogue_dicts()
