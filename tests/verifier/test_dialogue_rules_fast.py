"""The dialogue rules read faster (``verifier.dialogue_rules``) answer as their plain readings do: a
file's name found with ``str.find`` as its pattern finds it, the marks' problems found among the
marked turns as a pass over every turn finds them, and a whole dialogue's verdict, its sessions told
sound in C loops, as the verdict of a loop over every turn."""

from __future__ import annotations

import dataclasses
import random
import re
import sys
from datetime import date, datetime
from typing import Any

from generators.dialogue_offline import generate_dialogue, plan_dialogue
from generators.model import Session, TaskDraft, Turn, Verdict
from tests.generators.test_dialogue import PIECES as DIALOGUE_PIECES
from verifier.dialogue_rules import (
    _MARKS_SEEN,
    FileName,
    ValueHolder,
    _any_of,
    _day_problems,
    _derivation,
    _derived_problems,
    _repeat_and_claim_problems,
    _session,
    _short,
    _where,
    _word_char,
    _wrong_name,
    check_dialogue,
    find_mark_problems,
    mark_problems,
    says_value,
)


def _pattern(name: FileName) -> re.Pattern[str]:
    """The pattern a file's name was looked for with before."""
    ending = r"(?![\w-]|\.\w)" if name.stem else r"(?![\w-])"
    return re.compile(rf"(?<![\w./-]){re.escape(name.word)}{ending}")


def test_a_word_character_is_what_the_patterns_w_matches():
    word = re.compile(r"\w")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert _word_char(char) == (word.fullmatch(char) is not None), hex(code)


# letters and digits (ASCII and not: a Unicode letter, decimal digit, superscript, fraction, numeral),
# the marks the patterns look at, a space and the separator of joined texts
PIECES = ["a", "b", "2", "_", "é", "\u0663", "\u00b2", "\u00bd", "\u216b", ".", "/", "-", " ", ",", "\0", "x"]


def test_a_file_name_is_found_where_its_pattern_finds_it():
    rng = random.Random(7)
    words = ["ab", "a2", "a_b", "a.b", "ab.2", "é2", "a-b", "2"]
    for _ in range(40000):
        name = FileName(rng.choice(words), stem=rng.random() < 0.5)
        pieces = [rng.choice(PIECES + [name.word] * 3) for _ in range(rng.randrange(0, 9))]
        text = "".join(pieces)
        assert name.search(text) == (_pattern(name).search(text) is not None), (name.word, name.stem, text)


def test_the_names_of_a_value_are_those_its_pattern_named():
    for value, word, stem in [("data/scores_old.xlsx", "scores_old.xlsx", False), ("Report2.docx", "report2", True),
                              ("notes.txt", None, None), ("14:00", None, None), ("a/B_1.PDF", "b_1.pdf", False)]:
        name = _wrong_name(value)
        assert (name.word, name.stem) == (word, stem) if word else name is None, value


# -- the marks -----------------------------------------------------------------------------------

def _held_wrong(holder: ValueHolder, value: str) -> list[bool]:
    """``ValueHolder.held_wrong`` as it was: its pattern searched in every turn."""
    name = _wrong_name(value)
    held = holder.held(value)
    if name is None:
        return held
    pattern = _pattern(name)
    return [h or pattern.search(turn[3]) is not None for h, turn in zip(held, holder.turns)]


def _reference_problems(memory: list[dict[str, Any]], turns: list[Any]) -> list[str]:
    """``find_mark_problems`` as it was written first: a pass over every turn for each check."""
    problems: list[str] = []
    known = {m.get("id") for m in memory}
    for where, _, _, _, evidence, superseded, distractor, _ in turns:
        for mid in (*evidence, *superseded, *distractor):
            if mid not in known:
                problems.append(f"{where}: marks {mid!r}, which is not a memory id")
    holder = ValueHolder(turns)
    for m in memory:
        mid, value = m["id"], str(m.get("value") or "")
        name = f"memory {mid} (value {_short(m.get('said_as') or value)})"
        if not value.strip():
            problems.append(f"memory {mid}: empty value")
            continue
        derivation = _derivation(m)
        if m.get("derived") is not None and derivation is None:
            problems.append(f"memory {mid}: 'derived' is not a rule, amount, anchor and base")
            continue
        if derivation is not None:
            problems += _derived_problems(m, derivation, name, turns, holder)
            relation = str(m.get("said_as") or "").lower()
            finals = [bool(relation) and relation in t[3] for t in turns]
        else:
            finals = holder.held(value)
        holding = [t for t, final in zip(turns, finals) if final]
        marked = [t for t in holding if mid in t[4]]
        if not holding:
            problems.append(f"{name} is missing from the dialogue")
        for t in holding:
            if mid not in t[4]:
                problems.append(f"{t[0]}: holds {name} but its evidence does not list {mid!r}")
        if derivation is None:
            for t, final in zip(turns, finals):
                if mid in t[4] and not final:
                    problems.append(f"{t[0]}: evidence lists {mid!r} but the text does not hold its value")
        if marked and marked[0][2] != "user":
            problems.append(f"{marked[0][0]}: {name} is first said by the {marked[0][2]}; the user must say it")
        first_day = marked[0][1] if marked else None
        first_at = next((i for i, (t, final) in enumerate(zip(turns, finals)) if mid in t[4] and final), None)
        olds = [str(v) for v in m.get("superseded", ()) if str(v).strip()]
        olds_at = _any_of([_held_wrong(holder, v) for v in olds], len(turns))
        before = 0
        for i, t in enumerate(turns):
            holds_old = olds_at[i]
            if holds_old and mid not in t[5]:
                problems.append(f"{t[0]}: holds an earlier value of {mid} but is not marked superseded")
            if mid in t[5]:
                if not holds_old:
                    problems.append(f"{t[0]}: marked superseded for {mid} but holds none of its earlier values")
                if first_at is not None and i > first_at:
                    continue
                before += 1
                if first_day is not None and t[1] >= first_day:
                    problems.append(f"{t[0]}: an earlier value of {mid} is said on or after the day of its "
                                    f"correction (day {first_day}); say it on an earlier day")
        if olds and not before:
            problems.append(f"{name}: its earlier value is never said before the correction")
        nears = [str(d.get("value", "")) for d in m.get("distractors", ()) if str(d.get("value", "")).strip()]
        nears_at = _any_of([_held_wrong(holder, v) for v in nears], len(turns))
        for t, holds_near in zip(turns, nears_at):
            if holds_near and mid not in t[6]:
                problems.append(f"{t[0]}: holds a near-miss of {mid} but is not marked distractor")
            if mid in t[6] and not holds_near:
                problems.append(f"{t[0]}: marked distractor for {mid} but holds none of its near-miss values")
    return problems


MEMORY = [
    {"id": "m1", "value": "data/scores_new.xlsx", "superseded": ["data/scores_old.xlsx"],
     "distractors": [{"value": "data/scores_2.xlsx"}]},
    {"id": "m2", "value": "report3.docx", "superseded": ["report2.docx"], "distractors": [{"value": "memo_1.pdf"}]},
    {"id": "m3", "value": "14:00", "superseded": ["11:30"], "distractors": [{"value": "15:00"}]},
    {"id": "m4", "value": "2025-03-14", "superseded": ["2025-03-12"]},
    {"id": "m5", "value": "42", "distractors": [{"value": "24"}, {"value": "40"}]},
    {"id": "m6", "value": "2025-03-13", "said_as": "two days after the supplier visit",
     "derived": {"rule": "days_after", "amount": 2, "anchor": "the supplier visit", "base": "2025-03-11"}},
    {"id": "m7", "value": ""},
    {"id": "m8", "value": "Ana", "derived": {"rule": "covers"}},
]
# what a turn may say: each value, earlier and near-miss value, their bare names and stems, the
# derived piece's relation and anchor, a day said in words, and the marks around a name
SAID = ["data/scores_new.xlsx", "scores_new.xlsx", "data/scores_old.xlsx", "scores_old.xlsx", "scores_old",
        "scores_2.xlsx", "report3.docx", "report2.docx", "report2", "report2.pdf", "memo_1.pdf", "memo_1", "14:00",
        "11:30", "15:00", "2025-03-14", "2025-03-12", "friday", "42", "24", "40", "two days after the supplier visit",
        "the supplier visit", "2025-03-11", "ana", "/", ".", "-", "_", "x", " ", ", ", ".d", "2"]
IDS = ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]


def _turns(rng: random.Random) -> list[Any]:
    turns = []
    for day in range(1, rng.randrange(2, 5)):
        on = date(2025, 3, 8 + day) if rng.random() < 0.9 else None
        for n in range(rng.randrange(1, 7)):
            text = "".join(rng.choice(SAID) for _ in range(rng.randrange(0, 5)))
            marks = tuple(tuple(rng.sample(IDS, rng.choice((0, 0, 0, 1, 2)))) for _ in range(3))
            turns.append((f"day {day} turn {n + 1}", day, rng.choice(("user", "assistant")), text, *marks, on))
    return turns


def test_the_marks_problems_are_those_a_pass_over_every_turn_finds():
    rng = random.Random(11)
    found = 0
    for _ in range(1500):
        memory = rng.sample(MEMORY, rng.randrange(1, len(MEMORY) + 1))
        turns = _turns(rng)
        expected = _reference_problems(memory, turns)
        found += bool(expected)
        assert find_mark_problems(memory, turns) == expected, (memory, turns)
        _MARKS_SEEN.clear()
        assert mark_problems(memory, turns) == mark_problems(memory, turns) == expected
    assert found > 1000  # the cases break the rules in many ways


def test_kept_marks_answer_only_for_the_same_marks():
    rng = random.Random(3)
    memory, turns = MEMORY[:5], _turns(rng)
    first = mark_problems(memory, turns)
    for field, value in ((1, 1.0), (4, ("m1",)), (3, "other text"), (7, None)):
        changed = list(turns)
        changed[0] = (*turns[0][:field], value, *turns[0][field + 1:])
        assert mark_problems(memory, changed) == _reference_problems(memory, changed)
    assert mark_problems(memory, turns) == first == _reference_problems(memory, turns)


def test_marks_whose_hashes_meet_are_told_apart():
    """Days -1 and -2 hash alike (CPython's hash of -1 is -2's): the kept answer of one is not the other's."""
    assert hash(-1) == hash(-2)
    memory = [MEMORY[3]]
    answers = []
    for day in (-1, -2):
        turns = [("day 0 turn 1", 0, "user", "2025-03-12", (), ("m4",), (), None),
                 ("day x turn 1", day, "user", "2025-03-14", ("m4",), (), (), None)]
        answers.append(mark_problems(memory, turns))
        assert answers[-1] == _reference_problems(memory, turns)
    assert answers[0] != answers[1]


# -- a whole dialogue ----------------------------------------------------------------------------

def _turn_problems(sessions: list[Session], dates: list[date | None]) -> list[str]:
    """``_turn_problems`` as it was: every turn of every session asked in turn."""
    problems: list[str] = []
    for session, day in zip(sessions, dates):
        label = f"day {session.day}"
        if not session.turns:
            problems.append(f"{label}: the session has no turns")
            continue
        last_ts: datetime | None = None
        previous = ""
        for number, turn in enumerate(session.turns, 1):
            role = turn.role
            if role not in ("user", "assistant"):
                problems.append(f"{_where(session.day, number)}: unknown role {role!r}")
            elif number == 1 and role != "user":
                problems.append(f"{_where(session.day, number)}: the session is opened by the {role}; "
                                "the user opens each session")
            elif number > 1 and role == previous:
                problems.append(f"{_where(session.day, number)}: two {role} turns in a row (turns {number - 1} "
                                f"and {number}); roles must alternate")
            previous = role
            if not isinstance(turn.text, str) or not turn.text.strip():
                problems.append(f"{_where(session.day, number)}: empty turn")
            try:
                stamp = datetime.fromisoformat(turn.ts)
            except (TypeError, ValueError):
                problems.append(f"{_where(session.day, number)}: bad timestamp {turn.ts!r} "
                                "(expected YYYY-MM-DDTHH:MM:SS)")
                continue
            if day is not None and stamp.date() != day:
                problems.append(f"{_where(session.day, number)}: timestamp {turn.ts} is not on the session date {day}")
            if last_ts is not None and stamp <= last_ts:
                problems.append(f"{_where(session.day, number)}: timestamp {turn.ts} is not after the previous "
                                f"turn's ({last_ts.isoformat(timespec='seconds')}); timestamps must increase")
            last_ts = stamp
    return problems


def _check_dialogue(draft: TaskDraft, sessions: list[Any], min_days: int, now: datetime | None) -> Verdict:
    """``check_dialogue`` as it was: the turns listed for each check apart, the marks' problems found afresh."""
    try:
        read = [_session(s) for s in sessions]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return Verdict(False, f"dialogue is malformed: {exc!r}")
    problems, dates = _day_problems(read, min_days, now)
    problems += _turn_problems(read, dates)
    flat = []
    for session in read:
        for number, turn in enumerate(session.turns, 1):
            text = turn.text if isinstance(turn.text, str) else ""
            flat.append((_where(session.day, number), turn, text.lower()))
    ids = [p.id for p in draft.memory]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"memory id {dup!r} is used by more than one piece")
    said_on = [day for session, day in zip(read, dates) for _ in session.turns]
    days = [session.day for session in read for _ in session.turns]
    problems += _reference_problems([p.to_dict() for p in draft.memory],
                                    [(where, session_day, turn.role, low, turn.evidence, turn.superseded,
                                      turn.distractor, on) for (where, turn, low), session_day, on in
                                     zip(flat, days, said_on)])
    intent = draft.intent or ""
    for piece in draft.memory:
        if piece.value and says_value(intent, piece.value):
            problems.append(f"intent leaks memory {piece.id} (value {_short(piece.value)})")
    problems += _repeat_and_claim_problems(flat)
    return Verdict(not problems, "\n".join(problems) if problems else "ok")


NOW = datetime(2024, 5, 20, 9, 30)
DRAFT_PIECES = DIALOGUE_PIECES[:3]  # a time with the one it replaced, a title with a distractor, a file name


def _dialogue(seed: int) -> tuple[TaskDraft, list[Session]]:
    draft = TaskDraft(family="hand", apps=["word", "email"], difficulty="easy", description="full description",
                      intent="Prepare the review.", subtasks=["do it"], evaluation=[], memory=DRAFT_PIECES,
                      query="Do the task.", oracle=[])
    plan, draft = plan_dialogue(draft, seed=seed, now=NOW, days=5)
    return draft, generate_dialogue(draft, seed=seed, plan=plan, now=NOW, user_first="Alex",
                                    colleagues=["Sam", "Priya"], company="Northwind", projects=["Project Heron"],
                                    city="Leeds", files=["data/budget_2024.xlsx"])


def _broken(rng: random.Random, sessions: list[Session]) -> list[Any]:
    """``sessions`` with a few turns, days or dates changed (or none)."""
    out = list(sessions)
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        s = rng.randrange(len(out))
        turns = list(out[s].turns)
        change = rng.randrange(9)
        if change == 8 or not turns:
            out[s] = dataclasses.replace(out[s], **rng.choice([{"day": s + 2}, {"date": "2024-05-1x"}, {"turns": ()},
                                                              {"date": out[max(s - 1, 0)].date}]))
            continue
        n = rng.randrange(len(turns))
        turn = turns[n]
        if change == 0:
            turns[n] = turn._replace(role=rng.choice(["user", "assistant", "bot", None]))
        elif change == 1:
            turns[n] = turn._replace(text=rng.choice(["", "  ", None, turns[0].text, "I've sent it.", "Noted 14:00."]))
        elif change == 2:
            turns[n] = turn._replace(ts=rng.choice(["bad", None, turns[0].ts, "2024-05-01T08:00:00",
                                                    turn.ts + "+02:00", turn.ts[:10] + " " + turn.ts[11:16]]))
        elif change == 3:
            turns[n], turns[-1] = turns[-1], turns[n]
        elif change == 4:
            del turns[n]
        elif change == 5:
            turns[n] = turn._replace(evidence=rng.choice([(), ("m1",), ("m9",), ("m2", "m3")]))
        elif change == 6:
            turns[n] = turn._replace(superseded=rng.choice([(), ("m1",)]), distractor=rng.choice([(), ("m2",)]))
        else:
            turns.insert(n, Turn("user", "Sorry, where was I?", turn.ts))
        out[s] = dataclasses.replace(out[s], turns=tuple(turns))
    return [s.to_dict() for s in out] if rng.random() < 0.2 else out


def test_a_dialogues_verdict_is_that_of_a_loop_over_every_turn():
    rng = random.Random(4)
    failed = 0
    for seed in range(6):
        draft, sessions = _dialogue(seed)
        assert check_dialogue(draft, sessions, now=NOW).passed
        for _ in range(150):
            broken = _broken(rng, sessions)
            min_days, now = rng.choice((5, 6)), rng.choice((NOW, None, datetime(2024, 5, 15)))
            expected = _verdict(lambda: _check_dialogue(draft, broken, min_days, now))
            failed += expected != (True, "ok")
            _MARKS_SEEN.clear()
            assert _verdict(lambda: check_dialogue(draft, broken, min_days=min_days, now=now)) == expected
    assert failed > 500


def _verdict(check: Any) -> tuple[Any, str]:
    """A verdict's pass and lines, or the error it raised (a zone beside none cannot be ordered)."""
    try:
        verdict = check()
    except TypeError as exc:
        return TypeError, str(exc)
    return verdict.passed, verdict.feedback
