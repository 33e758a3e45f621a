"""The offline dialogue generator and the dialogue verifier."""

from __future__ import annotations

import dataclasses
import re
from datetime import date, datetime, timedelta

import pytest

from generators.dialogue_offline import BANKS, BankError, bank_sizes, generate_dialogue, parse_bank
from generators.model import MemoryPiece, Session, TaskDraft, Turn
from verifier import check_dialogue
from verifier.dialogue_rules import completion_claim

NOW = datetime(2024, 5, 20, 9, 30)  # a Monday
PEOPLE = dict(user_first="Alex", colleagues=["Sam", "Priya", "Jordan"], company="Northwind",
              projects=["Project Heron", "the intranet relaunch"])
ACTION_WORDS = ("please", "remind me", "send", "schedule", "update", "can you", "could you")
PROMISE_WORDS = ("i'll", "i will", "let me")


def make_draft(memory: list[MemoryPiece], intent: str = "Prepare the quarterly review for the team.") -> TaskDraft:
    return TaskDraft(family="hand", apps=["word", "email"], difficulty="easy", description="full description",
                     intent=intent, subtasks=["do it"], evaluation=[], memory=memory, query="Do the task.",
                     oracle=[])


PIECES = [
    MemoryPiece("m1", "fact", "The taxi to the airport cost 14.50 euros.", "14.50"),
    MemoryPiece("m2", "fact", "the quarterly summary lives in report_q3.docx", "report_q3.docx"),
    MemoryPiece("m3", "action", "Book the review meeting for 2024-05-17 15:00.", "2024-05-17 15:00"),
    MemoryPiece("m4", "action", "Priya should be copied on the summary mail.", "Priya"),
]
DRAFT = make_draft(PIECES)


def many_pieces(n: int) -> list[MemoryPiece]:
    kinds = ("fact", "action")
    return [MemoryPiece(f"p{i}", kinds[i % 2], f"reference code number {i} is", f"ZX-{4000 + 37 * i}")
            for i in range(n)]


def gen(draft: TaskDraft = DRAFT, seed: int = 7, **kw) -> list[Session]:
    args = dict(PEOPLE, now=NOW)
    args.update(kw)
    return generate_dialogue(draft, seed=seed, **args)


def all_turns(sessions: list[Session]) -> list[Turn]:
    return [t for s in sessions for t in s.turns]


def carriers(sessions: list[Session]) -> list[Turn]:
    return [t for t in all_turns(sessions) if t.evidence]


# ---------------------------------------------------------------------------------------------
# Banks
# ---------------------------------------------------------------------------------------------


def test_bank_sizes_meet_the_minimums():
    sizes = bank_sizes()
    assert sizes["small_talk"] >= 120
    assert sizes["carry"] >= 25
    assert sizes["acknowledge"] >= 20
    assert sizes["openers"] >= 10 and sizes["closers"] >= 10


def _render_all(bank: str, extra: dict | None = None) -> list[tuple[str, str]]:
    ctx = dict(user="Alex", assistant="Assistant", weekday="Tuesday", colleague="Sam", colleague2="Jordan",
               project="Project Heron", company="Northwind", statement="x marks 42", sentence="X marks 42")
    ctx.update(extra or {})
    return [(line.role, line.render(ctx)) for entry in BANKS[bank] for line in entry.lines]


def test_small_talk_asks_for_nothing_and_promises_nothing():
    rendered = _render_all("small_talk") + _render_all("openers") + _render_all("closers")
    for role, text in rendered:
        low = text.lower()
        if role == "U":
            assert not any(w in low for w in ACTION_WORDS), text
        else:
            assert not any(w in low for w in PROMISE_WORDS), text
            assert completion_claim(text) is None, text
    distinct = {tuple(line.render(dict.fromkeys(e.needs, "X")) for line in e.lines)
                for e in BANKS["small_talk"]}
    assert len(distinct) >= 120


def test_acknowledgements_promise_and_never_claim():
    for _, text in _render_all("acknowledge"):
        low = text.lower()
        assert "i'll" in low or "will" in low, text
        assert not re.search(r"\bdone\b|completed|i have sent|i've updated", low), text
        assert completion_claim(text) is None, text


def test_bank_parser_names_the_bad_line():
    entries = parse_bank("# c\n@kind: fact\nU: Hi {{ user }}\nA: Hello\n---\nU: Bye\nA: Bye\n", "x.j2")
    assert len(entries) == 2 and entries[0].needs == {"user"} and entries[0].tags == {"kind": "fact"}
    assert entries[1].lines[0].static == "Bye"
    with pytest.raises(BankError, match=r"x\.j2:2"):
        parse_bank("U: fine\nQ: what\n", "x.j2")
    with pytest.raises(BankError, match=r"x\.j2:1: template error"):
        parse_bank("U: {{ broken\n", "x.j2")


# ---------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------


def test_deterministic_and_seed_sensitive():
    a, b = gen(seed=11), gen(seed=11)
    assert a == b
    assert [s.to_dict() for s in a] == [s.to_dict() for s in b]
    assert gen(seed=12) != a
    assert gen(seed=11, feedback="memory m1 is missing") != a


def test_default_shape():
    sessions = gen()
    assert len(sessions) == 5
    assert [s.day for s in sessions] == [1, 2, 3, 4, 5]
    dates = [date.fromisoformat(s.date) for s in sessions]
    assert dates == sorted(dates) and len(set(dates)) == 5
    assert all(d.weekday() < 5 and d < NOW.date() for d in dates)
    assert dates[-1] == date(2024, 5, 17)  # Friday before the Monday "now"
    assert dates[0] == date(2024, 5, 13)
    for s in sessions:
        n = len(s.turns)
        assert n % 2 == 0 and 63 <= n <= 77, n
        stamps = [datetime.fromisoformat(t.ts) for t in s.turns]
        assert all(st.date().isoformat() == s.date for st in stamps)
        first = stamps[0].time()
        assert (8, 30) <= (first.hour, first.minute) and first <= datetime(2000, 1, 1, 10).time()
        gaps = [(b - a).total_seconds() for a, b in zip(stamps, stamps[1:])]
        assert all(20 <= g <= 150 for g in gaps)
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", t.ts) for t in s.turns)


def test_every_piece_once_with_evidence_and_nowhere_else():
    for seed in range(4):
        sessions = gen(seed=seed)
        carried = carriers(sessions)
        assert sorted(i for t in carried for i in t.evidence) == ["m1", "m2", "m3", "m4"]
        by_id = {p.id: p for p in PIECES}
        for t in carried:
            assert t.role == "user" and len(t.evidence) == 1
            assert by_id[t.evidence[0]].value in t.text  # verbatim
        for t in all_turns(sessions):
            hits = [p.id for p in PIECES if p.value.lower() in t.text.lower()]
            assert hits == list(t.evidence), (t.text, hits)
        # pieces keep their order across the days
        order = [t.evidence[0] for t in carried]
        assert order == ["m1", "m2", "m3", "m4"]


def test_roles_alternate_and_the_user_opens():
    for s in gen(seed=3):
        assert [t.role for t in s.turns] == ["user", "assistant"] * (len(s.turns) // 2)
        assert all(t.text.strip() for t in s.turns)


def test_acknowledgement_follows_each_carry_and_small_talk_is_clean():
    sessions = gen(seed=5)
    for s in sessions:
        for i, t in enumerate(s.turns):
            if t.evidence:
                reply = s.turns[i + 1]
                assert reply.role == "assistant" and "i'll" in reply.text.lower()
                assert completion_claim(reply.text) is None
            elif t.role == "user" and i > 0:
                assert not any(w in t.text.lower() for w in ACTION_WORDS), t.text


def test_piece_spread_over_days():
    sessions = gen(days=8)
    per_day = [sum(1 for t in s.turns if t.evidence) for s in sessions]
    assert sum(per_day) == 4 and max(per_day) == 1
    sessions = gen(draft=make_draft(many_pieces(8)), days=3)
    per_day = [sum(1 for t in s.turns if t.evidence) for s in sessions]
    assert sorted(per_day) == [2, 3, 3]


@pytest.mark.parametrize("days", range(1, 9))
def test_verifier_passes_generated_dialogues(days):
    for n in range(9):
        draft = make_draft(many_pieces(n))
        for seed in (1, 2):
            sessions = gen(draft=draft, seed=seed * 100 + n, days=days)
            assert len(sessions) == days
            verdict = check_dialogue(draft, sessions, min_days=days, now=NOW)
            assert verdict.passed, verdict.feedback
            assert verdict.feedback == "ok"
            assert len(carriers(sessions)) == n


def test_handles_names_and_values_that_collide():
    # The user's name, a colleague and the company are memory values; they must not leak.
    memory = [MemoryPiece("a", "fact", "Alex owns the budget file", "Alex"),
              MemoryPiece("b", "action", "loop in Sam on the invite", "Sam"),
              MemoryPiece("c", "fact", "the supplier is Northwind", "Northwind")]
    draft = make_draft(memory)
    for seed in range(5):
        sessions = gen(draft=draft, seed=seed)
        assert check_dialogue(draft, sessions, now=NOW).passed


def test_pieces_that_name_each_other_travel_together():
    memory = [MemoryPiece("a", "action", "mail report_q3.docx to Priya", "report_q3.docx"),
              MemoryPiece("b", "fact", "Priya is the reviewer", "Priya"),
              MemoryPiece("c", "fact", "the fee is 14 euros", "14"),
              MemoryPiece("d", "fact", "the discounted fee is 14.50", "14.50")]
    draft = make_draft(memory)
    sessions = gen(draft=draft)
    verdict = check_dialogue(draft, sessions, now=NOW)
    assert verdict.passed, verdict.feedback
    assert [t.evidence for t in carriers(sessions)] == [("a", "b"), ("c", "d")]


def test_short_and_long_days():
    draft = make_draft(many_pieces(6))
    sessions = gen(draft=draft, days=2, utterances_per_day=2)
    assert [len(s.turns) for s in sessions] == [8, 8]  # 2 per piece + 2 (opener)
    assert check_dialogue(draft, sessions, min_days=2, now=NOW).passed
    sessions = gen(draft=draft, days=1, utterances_per_day=1200)
    assert check_dialogue(draft, sessions, min_days=1, now=NOW).passed


def test_without_colleagues_projects_or_company():
    sessions = generate_dialogue(DRAFT, seed=1, now=NOW, user_first="Kim")
    assert check_dialogue(DRAFT, sessions, now=NOW).passed


def test_bad_input():
    with pytest.raises(ValueError, match="days"):
        gen(days=0)
    with pytest.raises(ValueError, match="empty value"):
        gen(draft=make_draft([MemoryPiece("x", "fact", "nothing", " ")]))
    with pytest.raises(ValueError, match="used twice"):
        gen(draft=make_draft([PIECES[0], PIECES[0]]))


def test_sunday_now_and_now_as_date():
    sessions = gen(now=datetime(2024, 5, 19, 12))  # Sunday -> last session Friday 17th
    assert sessions[-1].date == "2024-05-17" and sessions[0].date == "2024-05-13"
    assert gen(now=date(2024, 5, 22))[-1].date == "2024-05-21"


# ---------------------------------------------------------------------------------------------
# Verifier on hand-broken dialogues
# ---------------------------------------------------------------------------------------------


def _base() -> list[Session]:
    return gen(seed=21)


def _replace_turn(sessions: list[Session], day: int, index: int, **changes) -> list[Session]:
    out = list(sessions)
    turns = list(out[day].turns)
    turns[index] = dataclasses.replace(turns[index], **changes)
    out[day] = dataclasses.replace(out[day], turns=tuple(turns))
    return out


def _locate(sessions: list[Session], piece_id: str) -> tuple[int, int]:
    for d, s in enumerate(sessions):
        for i, t in enumerate(s.turns):
            if piece_id in t.evidence:
                return d, i
    raise AssertionError(piece_id)


def _fails(sessions, needle, draft=DRAFT, **kw):
    verdict = check_dialogue(draft, sessions, now=NOW, **kw)
    assert not verdict.passed
    lines = verdict.feedback.splitlines()
    assert any(re.search(needle, line) for line in lines), verdict.feedback
    return lines


def test_verifier_ok_on_generated_and_on_dicts():
    sessions = _base()
    assert check_dialogue(DRAFT, sessions, now=NOW).to_dict() == {"passed": True, "feedback": "ok"}
    assert check_dialogue(DRAFT, [s.to_dict() for s in sessions], now=NOW).passed


def test_missing_piece():
    d, i = _locate(_base(), "m2")
    broken = _replace_turn(_base(), d, i, text="By the way, the summary file is somewhere.", evidence=())
    _fails(broken, r"memory m2 .*missing")


def test_repeated_piece():
    sessions = _base()
    d, i = _locate(sessions, "m1")
    other = (d + 1) % len(sessions)
    broken = _replace_turn(sessions, other, 2, text="The taxi was 14.50, did I say?")
    _fails(broken, rf"memory m1 .*appears in 2 turns .*day {other + 1} turn 3")


def test_two_user_turns_in_a_row():
    broken = _replace_turn(_base(), 1, 3, role="user")
    _fails(broken, r"day 2 turn 4: two user turns in a row")


def test_assistant_opens():
    sessions = _base()
    first = dataclasses.replace(sessions[2], turns=sessions[2].turns[1:])
    broken = sessions[:2] + [first] + sessions[3:]
    _fails(broken, r"day 3 turn 1: .*opened by the assistant")


def test_empty_turn():
    broken = _replace_turn(_base(), 0, 4, text="   ")
    _fails(broken, r"day 1 turn 5: empty turn")


def test_decreasing_timestamp():
    sessions = _base()
    earlier = datetime.fromisoformat(sessions[3].turns[5].ts) - timedelta(hours=1)
    broken = _replace_turn(sessions, 3, 6, ts=earlier.strftime("%Y-%m-%dT%H:%M:%S"))
    _fails(broken, r"day 4 turn 7: timestamp .* not after the previous")


def test_timestamp_off_the_session_date():
    sessions = _base()
    broken = _replace_turn(sessions, 0, 0, ts="2024-05-01T08:00:00")
    _fails(broken, r"day 1 turn 1: timestamp .* not on the session date")


def test_too_few_days():
    sessions = gen(days=3)
    _fails(sessions, r"too few days: 3")
    assert check_dialogue(DRAFT, sessions, min_days=3, now=NOW).passed


def test_dates_out_of_order_or_not_before_now():
    sessions = _base()
    swapped = [sessions[1], sessions[0]] + sessions[2:]
    _fails(swapped, r"date .* (distinct and ascending)")
    late = gen(now=datetime(2024, 5, 27, 9))
    _fails(late, r"day 5: date 2024-05-24 is not before now \(2024-05-20\)")


def test_value_leaked_into_intent():
    draft = make_draft(PIECES, intent="Book the review and copy priya on the mail.")
    lines = _fails(gen(draft=draft), r"intent leaks memory m4 \(value 'Priya'\)", draft=draft)
    assert len(lines) == 1


def test_assistant_claims_completion():
    sessions = _base()
    d, i = _locate(sessions, "m3")
    broken = _replace_turn(sessions, d, i + 1, text="Great, I've sent it.")
    _fails(broken, rf"day {d + 1} turn {i + 2}: the assistant claims completion \(\"i've sent\"\)")


def test_value_said_by_assistant_and_evidence_problems():
    sessions = _base()
    d, i = _locate(sessions, "m4")
    moved = _replace_turn(sessions, d, i, text="Something to keep in mind.", evidence=())
    moved = _replace_turn(moved, d, i + 1, text="Understood, Priya will be copied; I'll remember.")
    _fails(moved, rf"day {d + 1} turn {i + 2}: memory m4 .* said by the assistant")
    no_ev = _replace_turn(sessions, d, i, evidence=())
    _fails(no_ev, r"evidence does not list 'm4'")
    bogus = _replace_turn(sessions, 0, 2, evidence=("m9",))
    _fails(bogus, r"day 1 turn 3: evidence id 'm9' is not a memory id")


def test_every_violation_is_reported_on_its_own_line():
    sessions = _base()
    broken = _replace_turn(sessions, 0, 4, text="")
    broken = _replace_turn(broken, 1, 3, role="user")
    verdict = check_dialogue(DRAFT, broken[:4], now=NOW)
    lines = verdict.feedback.splitlines()
    assert any("too few days" in x for x in lines)
    assert any("day 1 turn 5: empty turn" in x for x in lines)
    assert any("day 2 turn 4: two user turns" in x for x in lines)
