"""The offline dialogue generator (work threads, memory dynamics, composed talk) and the
dialogue verifier."""

from __future__ import annotations

import dataclasses
import random
import re
from collections import Counter
from datetime import date, datetime, timedelta

import pytest

from generators.dialogue_offline import capitalise_openings, generate_dialogue, plan_dialogue, task_values
from generators.families import FAMILIES
from generators.model import Distractor, MemoryPiece, Session, TaskDraft, Turn
from generators.spoken_time import names_value, read_times, said_in, spoken
from generators.thread_bank import MOVE_ROLES, THREADS_BANK, bank_sizes, threads
from generators.work_names import namings
from tests.support.bank_lines import said_as
from verifier import check_dialogue
from verifier.dialogue_rules import completion_claim

pytestmark = pytest.mark.slow

NOW = datetime(2024, 5, 20, 9, 30)  # a Monday
PEOPLE = dict(user_first="Alex", colleagues=["Sam", "Priya", "Jordan"], company="Northwind",
              projects=["Project Heron", "the intranet relaunch"], city="Leeds",
              files=["data/budget_2024.xlsx", "data/team_notes.docx"])


def make_draft(memory: list[MemoryPiece], intent: str = "Prepare the quarterly review for the team.") -> TaskDraft:
    return TaskDraft(family="hand", apps=["word", "email"], difficulty="easy", description="full description",
                     intent=intent, subtasks=["do it"], evaluation=[], memory=memory, query="Do the task.",
                     oracle=[])


PIECES = [
    MemoryPiece("m1", "fact", "the review is at 2024-05-23 15:00", "2024-05-23 15:00", thread="t1",
                superseded=("2024-05-22 10:00",), cue="meeting_time", about="the review meeting"),
    MemoryPiece("m2", "fact", "the review is called Vendor review", "Vendor review", thread="t1",
                cue="meeting_title", about="the review meeting",
                distractors=(Distractor("Budget check-in", "the Budget check-in is a different meeting"),)),
    MemoryPiece("m3", "fact", "the summary lives in report_q3.docx", "report_q3.docx", thread="t2",
                cue="document", about="the summary mail"),
    MemoryPiece("m4", "action", "Priya Okafor should get the summary", "Priya Okafor", thread="t2",
                cue="recipient", about="the summary mail"),
]
DRAFT = make_draft(PIECES)


def many_pieces(n: int) -> list[MemoryPiece]:
    kinds = ("fact", "action")
    return [MemoryPiece(f"m{i}", kinds[i % 2], f"reference code number {i} is", f"ZX-{4000 + 37 * i}")
            for i in range(n)]


def gen(draft: TaskDraft = DRAFT, seed: int = 7, **kw) -> list[Session]:
    args = dict(PEOPLE, now=NOW)
    args.update(kw)
    plan, draft = plan_dialogue(draft, seed=seed, now=args["now"], days=args.get("days", 5))
    return generate_dialogue(draft, seed=seed, plan=plan, **args)


def planned(seed: int = 7, draft: TaskDraft = DRAFT, days: int = 5) -> TaskDraft:
    return plan_dialogue(draft, seed=seed, now=NOW, days=days)[1]


def all_turns(sessions: list[Session]) -> list[Turn]:
    return [t for s in sessions for t in s.turns]


def carriers(sessions: list[Session]) -> list[Turn]:
    return [t for t in all_turns(sessions) if t.evidence]


# ---------------------------------------------------------------------------------------------
# The thread bank
# ---------------------------------------------------------------------------------------------


def test_every_family_cue_has_wording_and_questions():
    import inspect

    used = set()
    for fam in FAMILIES.values():
        used |= set(re.findall(r'cue="([a-z_]+)"', inspect.getsource(fam.builder)))
    bank = threads()
    assert used and used <= bank.cues, used - bank.cues
    for cue in used:
        assert len(bank.lines[("state", cue)]) >= 2, cue
        assert ("ask", cue) in bank.lines, cue
    sizes = bank_sizes()
    assert sizes["raise"] >= 6 and sizes["correct"] >= 5 and sizes["after"] >= 10 and sizes["distract"] >= 5


def test_assistant_thread_lines_promise_at_most():
    ctx = {"about": "the review", "user": "Alex", "weekday": "Tuesday", "when": "this morning", "anchor": "the audit",
           "value": "Thursday next week"}
    for (move, _), entries in threads().lines.items():
        for entry in entries:
            if MOVE_ROLES[move] == "A":
                text = entry.render(ctx)
                assert completion_claim(text) is None, text


# ---------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------


def test_deterministic_and_seed_sensitive():
    a, b = gen(seed=11), gen(seed=11)
    assert a == b
    assert [s.to_dict() for s in a] == [s.to_dict() for s in b]
    assert gen(seed=12) != a


def test_default_shape_and_varied_session_times():
    starts = set()
    for seed in range(6):
        sessions = gen(seed=seed)
        assert [s.day for s in sessions] == [1, 2, 3, 4, 5]
        dates = [date.fromisoformat(s.date) for s in sessions]
        assert dates == [date(2024, 5, 13) + timedelta(days=i) for i in range(5)]
        for s in sessions:
            assert 58 <= len(s.turns) <= 88, len(s.turns)  # about 72, within 20 %
            stamps = [datetime.fromisoformat(t.ts) for t in s.turns]
            assert all(st.date().isoformat() == s.date for st in stamps)
            assert all(a < b for a, b in zip(stamps, stamps[1:]))
            starts.add(stamps[0].hour)
    assert min(starts) < 11 and max(starts) >= 13  # mornings and afternoons


def test_marks_hold_and_the_verifier_agrees():
    for seed in range(12):
        draft = planned(seed)
        sessions = gen(seed=seed)
        verdict = check_dialogue(draft, sessions, now=NOW)
        assert verdict.passed, verdict.feedback
        by_id = {p.id: p for p in draft.memory}
        for s in sessions:
            said_on = date.fromisoformat(s.date)
            for t in s.turns:
                for mid in t.evidence:  # the value as said, or (said in no turn) its anchor with its own value
                    derived = by_id[mid].derived
                    low = t.text.lower()
                    assert by_id[mid].said.lower() in low or (derived is not None and derived.anchor.lower() in low
                                                              and derived.base.lower() in low), (mid, t.text)
                for mid in t.superseded:  # an earlier meeting time is said in words, as the final one is
                    assert any(v in t.text or names_value(t.text, v, said_on) for v in by_id[mid].superseded)
                    assert "2024-05" not in t.text
                for mid in t.distractor:
                    assert any(d.value in t.text or names_value(t.text, d.value, said_on)
                               for d in by_id[mid].distractors)
        # the earlier value comes on an earlier day than its correction
        day_of = {}
        for s in sessions:
            for t in s.turns:
                for mid in t.superseded:
                    day_of.setdefault(("old", mid), s.day)
                for mid in t.evidence:
                    day_of.setdefault(("new", mid), s.day)
        assert day_of[("old", "m1")] < day_of[("new", "m1")]


def test_an_old_value_turned_down_is_said_beside_the_one_that_stands_as_often_as_not(monkeypatch):
    """The frames that turn an earlier value down hold the final one too in about half their turns
    (marked evidence as well; the old one said before it or after), over weeks of history too, and
    the verifier agrees; a day said relative to the day it was said on is never repeated so on
    another day."""
    from generators.chances import HISTORY

    monkeypatch.setattr("generators.history_plan.HISTORY", dataclasses.replace(HISTORY, derive=0.0, decline=1.0,
                                                                               decline_long=1.0))
    doc = MemoryPiece("m3", "fact", "the summary lives in report_q3.docx", "report_q3.docx", thread="t2",
                      superseded=("report_q2.docx",), cue="document", about="the summary mail")
    draft = make_draft([PIECES[0], PIECES[1], doc, PIECES[3]])
    both = alone = old_last = 0  # the file's turn-downs (a day said relative to its day never has the final beside it)
    for seed in range(24):
        days = 25 if seed % 2 else 5
        planned_draft = plan_dialogue(draft, seed=seed, now=NOW, days=days)[1]
        sessions = gen(draft, seed=seed, days=days)
        assert check_dialogue(planned_draft, sessions, now=NOW).passed
        said = {"m1": False, "m3": False}
        for t in all_turns(sessions):
            for mid in said:
                if mid in t.superseded and said[mid]:  # an earlier value after the final one: turned down
                    if mid in t.evidence:
                        both += 1
                        assert mid == "m3" and "report_q3.docx" in t.text, t.text  # m1 is said relative to its day
                        old_last += t.text.find("report_q2.docx") > t.text.find("report_q3.docx")
                    elif mid == "m3":
                        alone += 1
                said[mid] = said[mid] or mid in t.evidence
    assert both and alone and 0.2 < both / (both + alone) < 0.8, (both, alone)
    assert 0 < old_last < both  # the one that stands is said first now and then: the last value said is no tell


def test_values_come_in_the_users_words_not_the_memory_text():
    for seed in range(6):
        for t in carriers(gen(seed=seed)):
            assert t.role == "user"
            assert not any(p.text.lower() in t.text.lower() for p in PIECES), t.text


def test_work_threads_other_work_and_no_repeats():
    for seed in range(4):
        sessions = gen(seed=seed)
        turns = all_turns(sessions)
        threads = Counter(t.thread[:1] for t in turns if t.thread)
        assert threads["t"] >= 8 and threads["w"] >= 20, threads
        assert (threads["t"] + threads["w"]) / len(turns) >= 0.3
        texts = [" ".join(t.text.lower().split()) for t in turns]
        assert len(texts) == len(set(texts))
        task_threads = {t.thread for t in turns if t.thread.startswith("t")}
        assert task_threads == {"t1", "t2"}
        # a thread is talked about on more than one day
        days = {th: {s.day for s in sessions for t in s.turns if t.thread == th} for th in task_threads}
        assert max(len(d) for d in days.values()) >= 2


def test_chat_around_the_work_keeps_to_what_the_office_records():
    """The office has its colleagues' absences and addresses and its own documents: the chat
    around the work sends no colleague on leave, gives none an address of its own making, names
    an office document as the user sees it (no 'data/' folder) and says nothing twice in a line."""
    away = re.compile(r"\b(on holiday|training course|trade fair|conference in|client workshop|out-of-office|"
                      r"won't be around|still no|back from|came back|returned|got back|is away|standing in for)\b",
                      re.I)
    for seed in range(6):
        turns = [t for t in all_turns(gen(seed=seed)) if not t.thread.startswith("t")]
        for turn in turns:
            for clause in re.split(r"[.;:,]\s", turn.text):
                if away.search(clause):
                    assert not any(re.search(rf"\b{c}\b", clause) for c in PEOPLE["colleagues"]), turn.text
            for local, _ in re.findall(r"([\w.+-]+)@([\w-]+\.[\w.]+)", turn.text):
                assert local.split(".")[0] not in {c.lower() for c in PEOPLE["colleagues"]}, turn.text
            assert "data/" not in turn.text, turn.text
            words = re.findall(r"[a-z0-9']+(?:[_.@/-][a-z0-9']+)*", turn.text.lower())
            assert not any(a == b and not a.isdigit() for a, b in zip(words, words[1:])), turn.text


def test_other_work_has_no_colleague_do_anything_on_days_the_office_shows_them_away():
    """Given the spans the office's mail shows colleagues away, a session on one of those days has
    no other-work turn naming them; on the other days they still come up. Spans off the history
    change nothing."""
    away = [("Sam", date(2024, 5, 14), date(2024, 5, 16)), ("Jordan", date(2024, 5, 17), date(2024, 5, 24))]
    elsewhere = 0
    for seed in range(6):
        for session in gen(seed=seed, absences=away):
            day = date.fromisoformat(session.date)
            for name, first, last in away:
                named = [t.text for t in session.turns if t.thread.startswith("w") and re.search(rf"\b{name}\b", t.text)]
                if first <= day <= last:
                    assert not named, (seed, day, named)
                else:
                    elsewhere += len(named)
        assert gen(seed=seed, absences=[("Sam", date(2023, 1, 2), date(2023, 1, 6))]) == gen(seed=seed)
    assert elsewhere > 5


def test_relative_times_are_said_and_resolvable():
    relative = 0
    for seed in range(30):
        draft = planned(seed)
        m1 = draft.memory[0]
        if not m1.said_as:
            continue
        relative += 1
        sessions = gen(seed=seed)
        turn_day = next(s for s in sessions for t in s.turns if "m1" in t.evidence)
        said_on = date.fromisoformat(turn_day.date)
        target = datetime.strptime(m1.value, "%Y-%m-%d %H:%M")
        assert [t.when for t in read_times(m1.said_as, said_on)] == [target] and "2024-" not in m1.said_as
    assert relative >= 5


def test_roles_alternate_and_the_user_opens():
    for s in gen(seed=3):
        assert [t.role for t in s.turns] == ["user", "assistant"] * (len(s.turns) // 2)
        assert all(t.text.strip() for t in s.turns)
        for t in s.turns:
            if t.role == "assistant":
                assert completion_claim(t.text) is None, t.text


@pytest.mark.parametrize("days", (1, 2, 5, 8))
def test_verifier_passes_pieces_without_cues(days):
    for n in range(0, 9, 2):
        draft = make_draft(many_pieces(n))
        sessions = gen(draft=draft, seed=100 + n, days=days)
        assert len(sessions) == days
        verdict = check_dialogue(draft, sessions, min_days=days, now=NOW)
        assert verdict.passed, verdict.feedback
        assert len({m for t in carriers(sessions) for m in t.evidence}) == n


def test_pieces_that_name_each_other_are_marked_together():
    memory = [MemoryPiece("a", "action", "mail report_q3.docx to Priya", "report_q3.docx"),
              MemoryPiece("b", "fact", "Priya is the reviewer", "Priya")]
    draft = make_draft(memory)
    sessions = gen(draft=draft, colleagues=["Sam"])
    verdict = check_dialogue(draft, sessions, now=NOW)
    assert verdict.passed, verdict.feedback
    assert ("a", "b") in [t.evidence for t in carriers(sessions)]


def test_handles_names_and_values_that_collide():
    memory = [MemoryPiece("a", "fact", "Alex owns the budget file", "Alex"),
              MemoryPiece("b", "action", "loop in Sam on the invite", "Sam", cue="recipient", about="the invite"),
              MemoryPiece("c", "fact", "the supplier is Northwind", "Northwind")]
    draft = make_draft(memory)
    for seed in range(3):
        sessions = gen(draft=draft, seed=seed)
        assert check_dialogue(draft, sessions, now=NOW).passed


def test_without_colleagues_projects_or_company():
    plan, draft = plan_dialogue(DRAFT, seed=1, now=NOW, days=5)
    sessions = generate_dialogue(draft, seed=1, now=NOW, user_first="Kim", plan=plan)
    assert check_dialogue(draft, sessions, now=NOW).passed


def test_bad_input():
    with pytest.raises(ValueError, match="days"):
        gen(days=0)
    with pytest.raises(ValueError, match="at least 2 days"):
        gen(days=1)
    with pytest.raises(ValueError, match="empty value"):
        gen(draft=make_draft([MemoryPiece("x", "fact", "nothing", " ")]))
    with pytest.raises(ValueError, match="used twice"):
        gen(draft=make_draft([PIECES[2], PIECES[2]]))


def test_sunday_now_and_now_as_date():
    sessions = gen(now=datetime(2024, 5, 19, 12))  # Sunday -> last session Friday 17th
    assert sessions[-1].date == "2024-05-17" and sessions[0].date == "2024-05-13"


# ---------------------------------------------------------------------------------------------
# Verifier on hand-broken dialogues
# ---------------------------------------------------------------------------------------------


BASE = planned(21)


def _base() -> list[Session]:
    return gen(seed=21)


def _replace_turn(sessions: list[Session], day: int, index: int, **changes) -> list[Session]:
    out = list(sessions)
    turns = list(out[day].turns)
    turns[index] = turns[index]._replace(**changes)
    out[day] = dataclasses.replace(out[day], turns=tuple(turns))
    return out


def _locate(sessions: list[Session], piece_id: str) -> tuple[int, int]:
    for d, s in enumerate(sessions):
        for i, t in enumerate(s.turns):
            if piece_id in t.evidence:
                return d, i
    raise AssertionError(piece_id)


def _fails(sessions, needle, draft=BASE, **kw):
    verdict = check_dialogue(draft, sessions, now=NOW, **kw)
    assert not verdict.passed
    lines = verdict.feedback.splitlines()
    assert any(re.search(needle, line) for line in lines), verdict.feedback
    return lines


def test_verifier_ok_on_generated_and_on_dicts():
    sessions = _base()
    assert check_dialogue(BASE, sessions, now=NOW).to_dict() == {"passed": True, "feedback": "ok"}
    assert check_dialogue(BASE, [s.to_dict() for s in sessions], now=NOW).passed


def test_missing_piece():
    d, i = _locate(_base(), "m2")
    broken = _replace_turn(_base(), d, i, text="By the way, the summary file is somewhere.", evidence=())
    _fails(broken, r"memory m2 .*missing")


def test_value_in_an_unmarked_turn():
    sessions = _base()
    d, i = _locate(sessions, "m3")
    other = (d + 1) % len(sessions)
    broken = _replace_turn(sessions, other, 2, text="The file was REPORT_Q3.DOCX, did I say?")
    derived = any(p.id == "m3" and p.derived is not None for p in planned(21).memory)
    # a value said in no single turn (named by reference) is refused when a turn says it at all
    _fails(broken, rf"day {other + 1} turn 3: " + ("says memory m3 .* outright" if derived else
                                                   "holds memory m3 .*evidence does not list 'm3'"))


def test_earlier_value_after_its_correction_or_unmarked():
    sessions = _base()
    d, _ = _locate(sessions, "m1")
    late = _replace_turn(sessions, d, 2, text="Oh, it was 2024-05-22 10:00 at first.", superseded=("m1",))
    _fails(late, rf"day {d + 1} turn 3: an earlier value of m1 is said on or after the day of its correction")
    unmarked = _replace_turn(sessions, 0, 2, text="Oh, it was 2024-05-22 10:00 at first.")
    _fails(unmarked, r"day 1 turn 3: holds an earlier value of m1 but is not marked superseded")
    wrong = _replace_turn(sessions, 0, 2, superseded=("m1",))
    _fails(wrong, r"day 1 turn 3: marked superseded for m1 but holds none of its earlier values")


def test_near_miss_unmarked_or_marked_wrongly():
    sessions = _base()
    unmarked = _replace_turn(sessions, 0, 2, text="The budget check-in ran long again.")
    _fails(unmarked, r"day 1 turn 3: holds a near-miss of m2 but is not marked distractor")
    wrong = _replace_turn(sessions, 0, 2, distractor=("m2",))
    _fails(wrong, r"day 1 turn 3: marked distractor for m2 but holds none of its near-miss values")


def test_repeated_utterance():
    sessions = _base()
    broken = _replace_turn(sessions, 2, 4, text=sessions[0].turns[2].text.upper())
    _fails(broken, r"day 3 turn 5: repeats day 1 turn 3 word for word")


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


def test_each_turn_problem_is_worded_in_full():
    """The turn rules' lines, word for word: a generator repairs the spot a line names."""
    from verifier.dialogue_rules import _turn_problems

    day = date(2024, 5, 6)
    turns = (Turn("assistant", "Hi.", "2024-05-06T09:00:00"), Turn("assistant", " ", "2024-05-06T09:00:00"),
             Turn("bot", "Hm.", "bad"), Turn("user", "Ok.", "2024-05-07T09:01:00"),
             Turn("user", "So.", "2024-05-06T08:00:00"))
    assert _turn_problems([Session(1, day.isoformat(), turns), Session(2, "2024-05-07", ())], [day, None]) == [
        "day 1 turn 1: the session is opened by the assistant; the user opens each session",
        "day 1 turn 2: two assistant turns in a row (turns 1 and 2); roles must alternate",
        "day 1 turn 2: empty turn",
        "day 1 turn 2: timestamp 2024-05-06T09:00:00 is not after the previous turn's (2024-05-06T09:00:00); "
        "timestamps must increase",
        "day 1 turn 3: unknown role 'bot'",
        "day 1 turn 3: bad timestamp 'bad' (expected YYYY-MM-DDTHH:MM:SS)",
        "day 1 turn 4: timestamp 2024-05-07T09:01:00 is not on the session date 2024-05-06",
        "day 1 turn 5: two user turns in a row (turns 4 and 5); roles must alternate",
        "day 1 turn 5: timestamp 2024-05-06T08:00:00 is not after the previous turn's (2024-05-07T09:01:00); "
        "timestamps must increase",
        "day 2: the session has no turns"]


def test_too_few_days():
    sessions = gen(seed=21, days=3)
    draft = planned(21, days=3)
    _fails(sessions, r"too few days: 3", draft=draft)
    assert check_dialogue(draft, sessions, min_days=3, now=NOW).passed


def test_dates_out_of_order_or_not_before_now():
    sessions = _base()
    swapped = [sessions[1], sessions[0]] + sessions[2:]
    _fails(swapped, r"date .* (distinct and ascending)")
    late = gen(seed=21, now=datetime(2024, 5, 27, 9))
    draft = plan_dialogue(DRAFT, seed=21, now=datetime(2024, 5, 27, 9), days=5)[1]
    _fails(late, r"day 5: date 2024-05-24 is not before now \(2024-05-20\)", draft=draft)


def test_value_leaked_into_intent():
    draft = dataclasses.replace(BASE, intent="Book the review and copy priya okafor on the mail.")
    lines = _fails(_base(), r"intent leaks memory m4 \(value 'Priya Okafor'\)", draft=draft)
    assert len(lines) == 1


def test_a_spoken_value_takes_a_capital_where_it_opens_a_sentence_and_nowhere_else():
    """A value said in words ("next tuesday") starts a line or a sentence with a capital; inside
    a sentence, after a comma or a colon, it stays as it is. Random lines give what the plain
    pattern gives (the look for an opening first spares most lines the pattern)."""
    assert capitalise_openings("next tuesday works. next tuesday, yes", "next tuesday") == \
        "Next tuesday works. Next tuesday, yes"
    assert capitalise_openings("so, next tuesday?\tnext tuesday", "next tuesday") == "so, next tuesday?\tNext tuesday"
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(["ab", "a", ". ", "? ", "!\n", " ", ",", ".", "B"]) for _ in range(rng.randrange(8)))
        said = rng.choice(["ab", "a", "b", "ab a", "B", "1", "a.", "a. ab"])  # one pattern kept per said
        plain = re.sub(rf"(^|[.?!]\s+){re.escape(said)}", lambda m: m.group(1) + said[:1].upper() + said[1:], text)
        assert capitalise_openings(text, said) == plain, (text, said)


def test_a_short_capitalised_value_leaks_only_as_itself_not_inside_a_word():
    """A department called "IT" is not the "it" of "write it down", nor inside "with"."""
    it = dataclasses.replace(BASE, memory=[dataclasses.replace(BASE.memory[0], value="IT")])
    for intent, leaks in (("Count them and write it down with care.", False), ("Count the IT staff.", True)):
        draft = dataclasses.replace(it, intent=intent)
        found = [line for line in check_dialogue(draft, _base(), now=NOW).feedback.splitlines() if "intent leaks" in line]
        assert bool(found) is leaks, (intent, found)


def test_assistant_claims_completion():
    sessions = _base()
    d, i = _locate(sessions, "m3")
    broken = _replace_turn(sessions, d, i + 1, text="Great, I've sent it.")
    _fails(broken, rf"day {d + 1} turn {i + 2}: the assistant claims completion \(\"i've sent\"\)")


def test_the_claim_gate_agrees_with_the_claims_themselves():
    """The gate that looks at a claim's first letter before its alternatives finds a claim in a text
    exactly where one of the claim patterns does, over texts of subjects, adverbs, deeds, promises
    and other words in any order."""
    from verifier import dialogue_rules

    pieces = ["i've", "i have", "i", "we've", "we have", "just", "already", "now", "successfully", "sent", "set up",
              "taken care of", "has", "have", "been", "it's", "it is", "that's", "all", "everything's", "everything is",
              "done", "finished", "completed", "task", "is", "complete", "i'll", "will", "once", "the", "report",
              "sorted", "and", ".", "!", ",", "so", "we", "upload", "uploaded", "x"]
    rng = random.Random(7)
    texts = [" ".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8))) for _ in range(5000)]
    found = [dialogue_rules._ANY_COMPLETION.search(t) is not None for t in texts]
    assert found == [any(p.search(t) for p in dialogue_rules._COMPLETION) for t in texts]
    assert 300 < sum(found) < 4700  # claims and texts without one alike


def test_value_said_by_assistant_and_evidence_problems():
    sessions = _base()
    d, i = _locate(sessions, "m4")
    user = sessions[d].turns[i]
    moved = _replace_turn(sessions, d, i, text="Something to keep in mind.", evidence=())
    moved = _replace_turn(moved, d, i + 1, text="Understood, Priya Okafor will get it; I'll remember.", evidence=("m4",))
    _fails(moved, rf"day {d + 1} turn {i + 2}: memory m4 .* first said by the assistant")
    no_ev = _replace_turn(sessions, d, i, evidence=())
    _fails(no_ev, r"evidence does not list 'm4'")
    assert user.text != "Something to keep in mind."
    bogus = _replace_turn(sessions, 0, 2, evidence=("m9",))
    _fails(bogus, r"day 1 turn 3: marks 'm9', which is not a memory id")


def test_every_violation_is_reported_on_its_own_line():
    sessions = _base()
    broken = _replace_turn(sessions, 0, 4, text="")
    broken = _replace_turn(broken, 1, 3, role="user")
    verdict = check_dialogue(BASE, broken[:4], now=NOW)
    lines = verdict.feedback.splitlines()
    assert any("too few days" in x for x in lines)
    assert any("day 1 turn 5: empty turn" in x for x in lines)
    assert any("day 2 turn 4: two user turns" in x for x in lines)


def test_no_line_states_an_answer_the_office_gives_even_by_chance():
    from office_env.evaluation.keywords import Haystack

    plain = all_turns(gen(days=5, utterances_per_day=72))
    numbers = Counter(n for t in plain if not (t.evidence or t.superseded or t.distractor)
                      for n in Haystack(t.text).numbers())
    answer = f"{numbers.most_common(1)[0][0]:g}"  # a number the small talk and other work say most often
    guarded = all_turns(gen(days=5, utterances_per_day=72, answers=[answer, "quarterly figures"]))
    unmarked = [t.text for t in guarded if not (t.evidence or t.superseded or t.distractor)]
    assert not [text for text in unmarked if Haystack(text).has(answer) or "quarterly figures" in text.lower()]
    assert abs(len(guarded) - len(plain)) <= len(plain) // 20  # about the same length, other lines


def test_office_values_are_the_checked_values_no_memory_piece_says():
    from verifier.trace import office_values

    criteria = [{"function": "evaluate_excel_cell_value",
                 "args": {"file": "data/x.xlsx", "matches": [{"row": 2, "col": 3, "value": "4"}]}},
                {"function": "evaluate_email_sent",
                 "args": {"to": "priya@northwind.test", "subject_keywords": ["Vendor review"],
                          "body_keywords": ["12,500", "report_q3.docx"]}},
                {"function": "evaluate_calendar_event", "args": {"start": "2024-05-23 15:00:00", "title": "x"}}]
    assert office_values(criteria, task_values(PIECES)) == ["4", "12,500"]
    # whole words of a said value, or of the query, are said: a layout's headers, a mail the query names
    layout = [{"function": "evaluate_excel_cell_value",
               "args": {"file": "data/x.xlsx", "matches": [{"row": 1, "col": 1, "value": "Invoice"},
                                                           {"row": 2, "col": 1, "value": "Voice"}]}},
              {"function": "evaluate_email_sent", "args": {"to": "a@b.test", "subject_keywords": ["Team lunch"]}}]
    assert office_values(layout, ["invoice then total"]) == ["Voice", "Team lunch"]
    assert office_values(layout, ["invoice then total", "Can you answer the mail about Team lunch now?"]) == ["Voice"]


def test_turn_stamps_are_what_strftime_gives_also_past_the_day():
    from datetime import date, datetime, time, timedelta

    from generators.session_clock import _DATE_FORMAT, _TS_FORMAT, _stamp

    midnight = datetime.combine(date(2025, 3, 4), time())
    prefix = midnight.strftime(_DATE_FORMAT)
    for seconds in [*range(0, 90_000, 7), 86_399, 86_400, -5]:
        assert _stamp(midnight, prefix, seconds) == (midnight + timedelta(seconds=seconds)).strftime(_TS_FORMAT)


def test_pieces_about_one_work_share_one_filler_when_its_name_holds_a_value():
    """An "about" naming a value cannot be said; its pieces then share one stand-in for it."""
    generic_abouts = threads().generic_abouts

    about = "the Vendor review pack"  # holds m1's value, so it is never said
    memory = [MemoryPiece("m1", "fact", "the pack is for the Vendor review", "Vendor review", cue="meeting_title",
                          about=about),
              MemoryPiece("m2", "fact", "the pack lives in report_q3.docx", "report_q3.docx", cue="document",
                          about=about),
              MemoryPiece("m3", "action", "Priya Okafor should get the pack", "Priya Okafor", cue="recipient",
                          about=about)]
    draft = make_draft(memory)
    checked = 0
    for seed in range(6):
        sessions = gen(draft=draft, seed=seed)
        used = set()
        for piece in ("m1", "m2", "m3"):
            day, index = _locate(sessions, piece)
            text = sessions[day].turns[index].text.lower()
            used |= {g for g in generic_abouts if g.lower() in text}
        assert len(used) <= 1, (seed, used)
        checked += bool(used)
    assert checked


def test_thread_lines_read_right_with_every_kind_of_work_name_and_relative_time():
    """"My manager handed me my manager's question today", "Everyone can make the meeting at Wednesday
    next week at 14:00", "employee_handbook.pdf is the sheet behind ...": lines must fit any name."""
    ctx = {"user": "Kim", "weekday": "Monday", "when": "this morning", "text": "the other one is older", "who": "Sam", "final": "14:00",
           "anchor": "the audit", "amount": "10", "name": "rota_summary",
           "first": "Sam", "day": "May 3", "time": "10:00", "file": "rota.xlsx", "number": "3", "field": "Cost",
           "sheet": "the rota excel file", "out": "rota_summary"}
    values = {"meeting_time": "Wednesday next week at 14:00", "source_file": "employee_handbook.pdf"}
    for about in ("my manager's question", "the names and the time of the follow-up session", "the quote check"):
        for (move, cue), lines in threads().lines.items():
            for line in lines:
                text = line.render({**ctx, "about": about, "value": values.get(cue, "x")}).lower()
                assert "handed me my" not in text and " at wednesday" not in text, (line.where, text)
                assert "employee_handbook.pdf is the sheet" not in text, (line.where, text)


# Names of work that a line must fit however it is built: plural, two things joined, a noun the
# line might say again ("The mail for the mail to pass on", "No news on the approval news").
AWKWARD_ABOUTS = ("the claims for second approval", "the invoice's number and amount", "the mail to pass on",
                  "the approval news", "the policy figures sheet", "the amount figure",
                  "the names and the time of the follow-up session")
# a verb that agrees with its subject in number ("the claims ... is still on")
_AGREEING_VERB = re.compile(r"\s+(?:is|was|has|does|isn't|wasn't|hasn't|doesn't|needs|goes|gets|takes|sits|comes|"
                            r"belongs|changes|works|starts|lands|looks|stays|runs|means|matters|says)\b")
_CLAUSE_START = re.compile(r"(?:^|[.!?:;,]\s+|\b(?:so|that|and|but|confirmed|heads up|how|whether|if|what|when)\s+)$",
                           re.I)
_NOUN_BEFORE = re.compile(r"\b(\w+)\s+(?:for|about|of|on|from|in|to|with)\s+$")


def test_no_bank_line_conjugates_a_verb_on_the_work():
    """A work's name may be plural ("the travel claims", "those two"): no line of the thread bank,
    the task's or other jobs', puts a verb that agrees in number right after it."""
    text = THREADS_BANK.read_text(encoding="utf-8")
    lines = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    assert len(lines) > 300
    for line in lines:
        for hit in re.finditer(r"\{\^?about\}", line):
            before, after = line[:hit.start()], line[hit.end():]
            assert not (_CLAUSE_START.search(before) and _AGREEING_VERB.match(after)), line


def awkward_draft(shift: int) -> TaskDraft:
    """Every cue that takes a plain value, each piece about one of AWKWARD_ABOUTS (``shift``
    turns which one, so that over ``len(AWKWARD_ABOUTS)`` shifts every cue meets every name)."""
    from generators.thread_bank import SENTENCE_CUES

    cues = sorted(threads().cues - SENTENCE_CUES)
    memory = []
    for i, cue in enumerate(cues):
        about = AWKWARD_ABOUTS[(i + shift) % len(AWKWARD_ABOUTS)]
        memory.append(MemoryPiece(f"m{i}", ("fact", "action")[i % 2], f"reference code {i}", f"ZX-{4000 + 37 * i}",
                                  thread=f"t{AWKWARD_ABOUTS.index(about) + 1}", cue=cue, about=about))
    return make_draft(memory)


def test_lines_about_the_work_agree_with_any_name_of_it_and_never_say_its_noun_twice():
    """"The claims for second approval is still on for later", "The mail for the mail to pass on is
    ...": a line does not conjugate a verb on the work's name (it may be plural) nor put a noun of
    that name right before it. Checked over every line the generator writes, many seeds."""
    checked = 0
    for seed in range(3 * len(AWKWARD_ABOUTS)):
        for turn in all_turns(gen(draft=awkward_draft(seed), seed=seed, days=5)):
            if not turn.thread.startswith("t"):
                continue
            low = turn.text.lower()
            for about in AWKWARD_ABOUTS:
                for hit in re.finditer(re.escape(about), low):
                    checked += 1
                    before, after = low[:hit.start()], low[hit.end():]
                    assert not (_CLAUSE_START.search(before) and _AGREEING_VERB.match(after)), turn.text
                    noun = _NOUN_BEFORE.search(before)
                    assert not noun or noun.group(1) not in re.findall(r"\w+", about), turn.text
    assert checked > 500


def test_the_work_is_called_by_names_a_person_would_use():
    assert namings("the meeting I have to move")[:4] == (
        "the meeting I have to move", "the meeting", "that meeting", "this meeting")
    assert "the amount" in namings("the amount accounting needs")
    assert namings("the claims for second approval")[1:4] == ("the claims", "those claims", "these claims")
    assert "that news" in namings("the approval news")
    # a hyphened head is a word too; the words before it name the work without it
    assert namings("the notes hand-off")[1:] == ("the hand-off", "that hand-off", "this hand-off",
                                                "the notes thing", "the notes one", "that one")
    # a word that says which one, or a figure, is no name of its own: no "the final thing", "the module 1 one"
    assert not [n for n in namings("the final figure for Hana Lockhart") + namings("the module 1 figure")
                if n.endswith((" thing", " one")) and n != "that one"]
    # two things named together are "those two", never "the deadline" alone
    assert namings("the agreement's end date and notice deadline")[1:] == ("those two",)
    # a plural is no "one", and a word ending in -us is no plural
    assert "the meeting one" not in namings("the meeting notes") and "those notes" in namings("the meeting notes")
    assert "that bonus" in namings("the staff bonus")


def test_no_day_or_time_is_said_as_a_stamp():
    """Final, earlier and near-miss times, and the made-up jobs' times too, are said in words."""
    stamp = re.compile(r"(?<![\w-])\d{4}-\d\d-\d\d(?![\w.])")
    worded = 0
    for seed in range(8):
        for s in gen(seed=seed):
            for t in s.turns:
                assert not stamp.search(t.text), (seed, s.day, t.text)
                worded += bool(read_times(t.text, date.fromisoformat(s.date))) and not t.evidence and t.role == "user"
    assert worded > 8  # not only the task's: earlier values, and other jobs' times


def test_a_question_about_the_work_gets_an_answer_not_a_nod():
    """"Did the room booking come up in your notes at all?" is answered ("Yes, it's in my notes.
    Some details are still missing."), never "Happy to help when you're ready."; for the task's
    work and other jobs' alike; it may open as an answer does ("Well, ...", "Mm. ..."), never with
    a nod ("Thanks. ...", "Got it, ...")."""
    from generators.dialogue_offline import with_opener

    assert with_opener("Well", "Only a few pieces so far.") == "Well, only a few pieces so far."
    assert with_opener("Honestly", "I have the parts you gave me.") == "Honestly, I have the parts you gave me."
    assert with_opener("Mm", "Only a few pieces so far.") == "Mm. Only a few pieces so far."
    opened = re.compile(r"^(?:Well|Mm|Hmm|Honestly|Let me see|So)[,.] ")
    asked = [said_as(line) for line in threads().lines[("mention", "any")] if line.render(
        {k: "x" for k in line.needs}).endswith("?")]
    answers = [said_as(line) for line in threads().lines[("mention_reply", "asked")]]
    seen = {"t": 0, "w": 0}
    openings = 0
    for seed in range(12):  # three of the bank's forty mentions are questions: a dozen histories ask some
        turns = all_turns(gen(seed=seed, days=10))
        for turn, reply in zip(turns, turns[1:]):
            if turn.role == "user" and turn.thread[:1] in seen and any(p.match(turn.text) for p in asked):
                seen[turn.thread[:1]] += 1
                answer = opened.sub("", reply.text)
                openings += answer != reply.text
                assert reply.role == "assistant" and any(p.match(answer) for p in answers), (turn.text, reply.text)
    assert seen["t"] and seen["w"] and openings


def test_a_mention_is_never_met_with_a_nod_or_thanks():
    """A mention may be a worry or a slip ("Bit worried about the memo, to be honest.", "I meant to
    sort out the memo this morning and didn't."): its reply is plain ("Okay. I'll keep it in view."),
    never opened with "Good." or "Thanks,", for the task's work and other jobs alike."""
    said = [said_as(line) for line in threads().lines[("mention", "any")] if not line.render(
        {k: "x" for k in line.needs}).endswith("?")]
    nod = re.compile(r"^(?:Good|Thanks)[,.!] ")
    seen = {"t": 0, "w": 0}
    for seed in range(8):
        turns = all_turns(gen(seed=seed, days=10))
        for turn, reply in zip(turns, turns[1:]):
            if (turn.role == "user" and reply.role == "assistant" and turn.thread[:1] in seen
                    and any(p.match(turn.text) for p in said)):
                seen[turn.thread[:1]] += 1
                assert not nod.match(reply.text), (turn.text, reply.text)
    assert seen["t"] > 20 and seen["w"], seen


def test_a_reply_calls_the_work_by_a_short_name():
    """Right after the user talks about the work, the assistant calls it by a short name ("Okay, no
    rush on the review.", "Noted for that one."), as people do: the full name only answers the work
    being raised. (A reply repeating "the review meeting" each time is what a search for the work's
    name finds first, ahead of the turns that give its details.)"""
    raised = [said_as(line) for key in (("raise", "any"), ("job_raise", "any")) for line in threads().lines[key]]
    full = {"t": ("the review meeting", "the summary mail"), "w": threads().jobs}  # the task's works, other jobs'
    short = {"t": ("review", "summary", "that one", "those two"),
             "w": tuple({n for job in threads().jobs for n in namings(job)[1:] if n != "that one"})}
    seen = {"t": 0, "w": 0}
    for seed in range(8):
        turns = all_turns(gen(seed=seed))
        for turn, reply in zip(turns, turns[1:]):
            kind = reply.thread[:1]
            if (turn.role == "user" and reply.role == "assistant" and kind in seen and reply.thread == turn.thread
                    and not any(p.match(turn.text) for p in raised)):
                low = reply.text.lower()
                assert not any(name in low for name in full[kind]), (turn.text, reply.text)
                seen[kind] += any(word in low for word in short[kind])
    assert seen["t"] > 5 and seen["w"] > 5, seen  # replies still name the work, by its short names


def test_a_window_given_in_two_turns_keeps_its_rule(monkeypatch):
    """A window states a rule (one hour, on the hour): given after the assistant asks, its answer
    says the rule too, so the booking's length is never a hidden convention."""
    from dataclasses import replace

    from generators.chances import HISTORY

    monkeypatch.setattr("generators.history_plan.HISTORY", replace(HISTORY, split=1.0, derive=0.0))
    window = MemoryPiece("m1", "fact", "for the new meeting, one hour on the hour within 10:00-16:00", "10:00-16:00",
                         thread="t1", cue="time_window", about="the new meeting")
    answers = 0
    for seed in range(4):
        turns = all_turns(gen(make_draft([window]), seed=seed))
        for i, turn in enumerate(turns):
            if "m1" in turn.evidence:
                assert "one hour" in turn.text.lower() and "on the hour" in turn.text.lower(), turn.text
                answers += i >= 2 and turns[i - 1].role == "assistant" and turns[i - 1].text.endswith("?")
    assert answers  # the detail was given in two turns, and its answer said the rule


FOLDER_FILE = [MemoryPiece("m1", "action", "set Bob's score in data/scores.xlsx to 95", "data/scores.xlsx", thread="t1",
                           superseded=("data/scores_old.xlsx",), cue="requested", about="the score spreadsheet")]


def test_an_earlier_file_is_said_by_reference_as_a_final_one_is_and_the_marks_hold():
    """An earlier file in a folder is said as a final one is derived, as often: the request by a
    reference (unmarked: it holds no value) and an anchor that gives the file's name without its
    folder (marked superseded; the assistant's reply does not repeat the name), both before the
    correction."""
    draft = make_draft(FOLDER_FILE)
    by_reference = 0
    for seed in range(16):
        plan, planned_draft = plan_dialogue(draft, seed=seed, now=NOW, days=5)
        sessions = generate_dialogue(planned_draft, seed=seed, plan=plan, now=NOW, **PEOPLE)
        verdict = check_dialogue(planned_draft, sessions, now=NOW)
        assert verdict.passed, verdict.feedback
        turns = [(s.day, t) for s in sessions for t in s.turns]
        anchors = [e for day in plan for e in day.events if e.move == "anchor" and e.mark == "superseded"]
        for event in anchors:
            by_reference += 1
            assert event.said == "scores_old.xlsx"
            at = next(i for i, (_, t) in enumerate(turns) if "m1" in t.superseded and event.anchor.lower() in t.text.lower())
            assert "scores_old" not in turns[at + 1][1].text  # the assistant's reply
            refs = [(d, t) for d, t in turns if event.anchor.lower() in t.text.lower() and not t.superseded]
            assert refs and all(not t.evidence for _, t in refs) and any(t.role == "user" for _, t in refs)
            first_fix = min(d for d, t in turns if "m1" in t.evidence)
            assert turns[at][0] < first_fix and all(d < first_fix for d, _ in refs)
    assert by_reference >= 5


def test_a_topic_given_alone_keeps_its_article(monkeypatch):
    """A memo's point stated in full is "the hiring plan"; given after the assistant asks, it is
    "The hiring plan." too, never the bare slot "hiring plan." or "As for this memo, hiring plan."."""
    from dataclasses import replace

    from generators.chances import HISTORY

    monkeypatch.setattr("generators.history_plan.HISTORY", replace(HISTORY, split=1.0, derive=0.0))
    point = MemoryPiece("m1", "fact", "the memo should cover the hiring plan", "hiring plan", thread="t1",
                        cue="memo_point", about="the staffing memo")
    answers = 0
    for seed in range(4):
        turns = all_turns(gen(make_draft([point]), seed=seed))
        for i, turn in enumerate(turns):
            if "m1" in turn.evidence:
                assert re.search(r"\bthe hiring plan\b", turn.text, re.I), turn.text
                answers += i >= 2 and turns[i - 1].role == "assistant" and turns[i - 1].text.endswith("?")
    assert answers  # given in two turns, and its answer said the article


ARTICLE_CASES = [
    ("column_total", {"total of the Salary column": "the total of the salary column",
                      "total of the Bonus column": "the total of the bonus column",
                      "Overtime total": "the overtime total"}),
    ("column_total", {"Amount": "the amount column", "Quantity": "the quantity column",
                      "Unit Price": "the unit price column"}),
    ("question", {"category with the highest Q3": "the category with the highest Q3",
                  "category with the lowest Q3": "the category with the lowest Q3",
                  "category with the highest Q1": "the category with the highest Q1"}),
]


def test_a_column_or_a_question_is_said_with_its_article_in_every_frame(monkeypatch):
    """A column or a question's subject is a noun phrase: every turn that says it (stated, given
    after the assistant asks, corrected, turned down, or its earlier and near-miss values) says it
    with its article ("It's the salary column.", never "It's total of the salary column.") and a
    capital where it opens a sentence; a near miss's own sentence gives it its own article, once.
    (Every earlier value is turned down again, so more frames are read; the first case is read over
    more histories until one opens with a value: "The quantity column, that's what I was told.")"""
    from generators.chances import HISTORY

    monkeypatch.setattr("generators.history_plan.HISTORY", dataclasses.replace(HISTORY, decline=1.0, derive=0.0))
    opening = 0
    for case, (cue, said) in enumerate(ARTICLE_CASES):
        value, earlier, near = said
        piece = MemoryPiece("m1", "fact", f"the figure should come from the {value}", value, thread="t1", cue=cue,
                            about="the review total", superseded=(earlier,),
                            distractors=(Distractor(near, f"the {near} was already sent round last week"),))
        told = 0
        for seed in range(40):
            if seed >= 8 and (opening or case):
                break
            for turn in all_turns(gen(make_draft([piece]), seed=seed)):
                if turn.role != "user" or not (turn.evidence or turn.superseded or turn.distractor):
                    continue
                low = turn.text.lower()
                assert "the the " not in low, turn.text
                for raw, form in said.items():
                    if raw.lower() in low:
                        told += 1
                        own = turn.distractor and f"the {spoken(raw, cue, article=False)} was".lower() in low
                        assert form.lower() in low or own, turn.text
                        assert not turn.text.startswith(form), turn.text  # at a sentence's start: "The ..."
                        opening += turn.text.startswith(form[:1].upper() + form[1:])
        assert told >= 12, cue
        assert {raw: spoken(raw, cue) for raw in said} == said
    assert opening  # some turns open with the value, with a capital
    assert said_in("The Overtime total was sent.", "Overtime total", "column_total") == "The overtime total was sent."
    assert said_in("our Salary column and a Salary figure", "Salary", "column_total") \
        == "our salary column and a salary figure"
    assert said_in("they want Salary", "Salary", "column_total") == "they want the salary column"
    # a near miss whose own sentence opens with a capital (an llm draft's) is said inside the line
    near = MemoryPiece("m1", "fact", "the figure should come from the Amount", "Amount", thread="t1",
                       cue="column_total", about="the review total",
                       distractors=(Distractor("Unit Price", "The Unit Price was already sent round last week"),))
    nears = [t.text for seed in range(6) for t in all_turns(gen(make_draft([near]), seed=seed)) if t.distractor]
    assert nears and all("the unit price was already sent round" in t for t in nears), nears


def test_no_user_line_echoes_the_work_as_a_question_or_says_someone_twice():
    """"That one? office move." and "Someone said this afternoon that someone else asked ..." read
    as slots filled, not as speech."""
    echo = re.compile(r"^(?:that|this|those|these|the) [\w' -]+\? \S", re.I)
    users = 0
    for seed in range(6):
        for turn in all_turns(gen(seed=seed)):
            if turn.role == "user":
                users += 1
                assert not echo.match(turn.text), turn.text
    assert users > 200
    ctx = {"about": "the memo", "user": "Kim", "weekday": "Monday", "when": "this morning", "who": "Sam",
           "text": "someone else asked about annual leave last month"}  # a near miss as the writers word it
    for line in threads().lines[("distract", "any")]:
        assert line.render(ctx).lower().count("someone") == 1, line.where


def test_the_session_clock_stamps_and_peeks_as_its_rule_says():
    """A turn is stamped, then 20-150 s pass, fewer when the turns left of the budget would not
    fit before midnight; a peek tells the time of the next stamp, also after a break (a peek is
    remembered until the time moves on, so a stale one would show here)."""
    from datetime import time

    from generators.session_clock import _TS_FORMAT, SessionClock

    for seed in range(200):
        script, ours, theirs = random.Random(-seed), random.Random(seed), random.Random(seed)
        day, turns = date(2024, 3, 1) + timedelta(days=seed), script.randrange(2, 3000)
        clock = SessionClock(day, turns, ours)
        window = theirs.choices(((8 * 3600, 10 * 3600 + 1800), (10 * 3600 + 1800, 13 * 3600),
                                 (13 * 3600, 16 * 3600)), weights=(5, 2, 3))[0]
        seconds, budget, stamps = theirs.randint(*window), max(1, turns + 4), []
        midnight = datetime.combine(day, time())
        for _ in range(script.randrange(1, 300)):
            move = script.random()
            if move < 0.3:
                assert clock.peek() == midnight + timedelta(seconds=seconds)
            elif move < 0.35:
                clock.pause()
                left, pause = max(0, budget - len(stamps)), theirs.randint(5400, 10800)
                seconds += pause if seconds + pause + left * 150 < 21 * 3600 else 0
            else:
                count = script.randrange(1, 4)
                clock.tick(count)
                for _ in range(count):
                    stamps.append((midnight + timedelta(seconds=seconds)).strftime(_TS_FORMAT))
                    per_turn = (86399 - seconds) // max(1, budget - len(stamps))
                    seconds += max(1, min(theirs.randint(20, 150), per_turn))
        assert clock.stamps == stamps and clock.peek() == midnight + timedelta(seconds=seconds)
        assert ours.random() == theirs.random()  # the same draws, in the same order


def test_a_works_name_is_judged_clean_as_any_text_is():
    """A line's context asks whether a work's name may be said once a history (``_clean_work``):
    the answer is ``clean``'s, whether the name holds a task value, a checked answer, a line said
    elsewhere or nothing of these; and two histories with other values judge the same name apart."""
    from generators.dialogue_offline import HistoryWriter

    piece = MemoryPiece("m1", "fact", "the pack is for the Vendor review", "Vendor review", cue="meeting_title",
                        about="the review pack")
    names = ["the Vendor review pack", "the review pack", "the Q3 budget", "the 14 invoices", "the offsite",
             "The OFFSITE", "the  offsite", "vendor REVIEW notes", "the 2024 plan", ""]
    for answers, banned in (((), ()), (("14",), ("the offsite",)), (("Q3 budget", "2024"), ())):
        writer = HistoryWriter([piece], rng=random.Random(3), user_first="Alex", colleagues=["Sam"],
                               answers=answers, banned=banned)
        for _ in range(2):  # the second time from what was kept
            assert [writer._clean_work(n) for n in names] == [writer.clean(n) for n in names]
    kept = HistoryWriter([piece], rng=random.Random(3), user_first="Alex", answers=("14",))
    other = HistoryWriter([piece], rng=random.Random(3), user_first="Alex")
    assert kept._clean_work("the 14 invoices") is False and other._clean_work("the 14 invoices") is True


def test_a_line_naming_a_task_moment_is_judged_as_names_any_does():
    """The writer reads the task's days and moments once a day (``names_task_moment``): each line
    gets ``names_any``'s answer, whether it names a value's day or moment, another day or none, on
    days the values read differently ("this Friday" is the 24th on one day and not the next week);
    two histories with other values judge the same line apart."""
    from generators.dialogue_offline import HistoryWriter
    from generators.spoken_time import names_any

    piece = MemoryPiece("m1", "fact", "the review is on 2024-05-24", "2024-05-24", cue="date", about="the review")
    moment = MemoryPiece("m2", "fact", "the call is at 2024-05-21 10:00", "2024-05-21 10:00", cue="date",
                         about="the call")
    lines = ["See you this Friday.", "Friday the 24th works.", "Tuesday next week at 10:00 then.",
             "Tuesday the 21st at 10:00, right?", "This Thursday, maybe.", "Monday the 20th of next month.",
             "No day in this one.", "Friday 24 May 2024 it is.", ""]
    days = [date(2024, 5, 13), date(2024, 5, 15), date(2024, 5, 20), date(2024, 5, 27), date(2024, 5, 15)]
    for pieces in ([piece], [piece, moment], [moment]):
        writer = HistoryWriter(pieces, rng=random.Random(3), user_first="Alex", colleagues=["Sam"])
        for day in days:  # a day asked again at the end: from what was kept
            for _ in range(2):
                assert [writer.names_task_moment(t, day) for t in lines] == \
                       [names_any(t, writer.values, day) for t in lines]
    only_date = HistoryWriter([piece], rng=random.Random(3), user_first="Alex")
    only_moment = HistoryWriter([moment], rng=random.Random(3), user_first="Alex")
    assert only_date.names_task_moment("See you this Friday.", date(2024, 5, 20)) is True
    assert only_moment.names_task_moment("See you this Friday.", date(2024, 5, 20)) is False


def test_a_line_said_elsewhere_is_never_drawn_again():
    """``banned`` lines (said already elsewhere) are skipped by the thread lines, as written or
    with other case and spacing; without any, the same draws give them."""
    from generators.dialogue_offline import HistoryWriter

    piece = MemoryPiece("m1", "fact", "the pack is for the Vendor review", "Vendor review", cue="meeting_title",
                        about="the review pack")
    when = datetime(2024, 5, 15, 10)

    def lines(banned: tuple[str, ...]) -> list[str]:
        writer = HistoryWriter([piece], rng=random.Random(3), user_first="Alex", colleagues=["Sam"], banned=banned)
        ctx = writer._slots("the review pack", when)
        return [writer._line("after", "any", ctx, question=False) for _ in range(12)]

    free = lines(())
    banned = tuple(f"  {t.upper()} " for t in free[:6])
    kept = lines(banned)
    assert not {" ".join(t.lower().split()) for t in kept} & {" ".join(t.lower().split()) for t in free[:6]}
    assert len(set(kept)) == len(kept)


def test_the_values_a_line_may_not_hold_are_kept_per_value_it_must_say():
    """A thread line may hold the task values its ``must`` or ``also`` holds, no other: the values
    it may not hold are worked out once per pair (``_others_than``) and are those worked out afresh,
    for pairs holding a value, a longer one, other case or none, asked twice; pairs that differ in
    ``also`` alone get answers of their own."""
    from generators.dialogue_offline import HistoryWriter

    piece = MemoryPiece("m1", "fact", "the pack is for the Vendor review", "Vendor review", cue="meeting_title",
                        about="the review pack")
    writer = HistoryWriter([piece], rng=random.Random(3), user_first="Alex",
                           values=["14:00", "The Salary column", "98", "friday", "98"])
    said = ["", "14:00", "at 14:00 on Friday", "the salary COLUMN", "98", "980", "Friday 98", "nothing of it"]
    for _ in range(2):  # the second time from what was kept
        for must in said:
            for also in said:
                allowed = [v for v in writer.values if (must and v in must.lower()) or (also and v in also.lower())]
                assert writer._others_than(must, also) == tuple(v for v in writer.values if v not in allowed)
    assert writer._others_than("98", "") != writer._others_than("98", "at 14:00 on Friday")
