"""Requests said with a detail left for the next turn, and the near misses of regenerated tasks.

``generators.withheld`` decides which detail a sentence can leave out; the offline writer says
such a request in three turns (the request with a placeholder, the assistant's question, the
value) for the task and for its decoys alike; ``generators.plus_offline`` gives a piece whose
value has no near value of its own (an app, a whole clause) a near miss of its whole sentence.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import replace
from datetime import datetime

import pytest

from generators.chances import HISTORY
from generators.near_values import OTHER_PEOPLE, near_value
from generators.plus_offline import regenerate
from generators.spoken_time import value_time
from generators.thread_bank import threads
from generators.withheld import detail_to_withhold, withheld_kind, withhold
from tests.support.bank_lines import said_as

# the assistant's question for a detail, after a short opener or none ("Which file?", "Right, which file?")
ASKS = re.compile(r"^(?:(?:Okay|Right|Thanks|Ah|Mm|Alright|Sure|Oh)[,.] )?"
                  r"(?:[Ww]hich|[Ww]hat|[Ww]ho|[Hh]ow much|And the file|Sure, which|Okay, (?:what|who|the))")


class Seed:
    def __init__(self, instruction: str, now: datetime = datetime(2024, 5, 17, 9, 0)) -> None:
        self.instruction, self.username, self.app_count, self.now = instruction, "alice", 1, now


@pytest.mark.parametrize("value, kind", [
    ("data/scores.xlsx", "file"), ("Bob", "person"), ("bob@corp.com", "email"), ("$1,200", "number"),
    ("20%", "number"), ("95", "number"), ("15:00", "time"), ("May 17, 2024", "date"), ("'Budget review'", None),
    ("hw1", None), ("CS161", None), ("excel", None), ("swap the rows of Alice and Bob", None)])
def test_what_kind_of_detail_a_sentence_can_leave_out(value, kind):
    assert withheld_kind(value) == kind


def test_a_detail_is_left_out_only_where_it_stands_as_a_word_of_its_own():
    assert withhold("set Bob's score in data/scores.xlsx to 95", "data/scores.xlsx", "a file I'll look up") == \
        "set Bob's score in a file I'll look up to 95"
    assert withhold("add 'Budget review' to my calendar", "Budget review", "a title") == "add a title to my calendar"
    assert withhold("others are 1.5$/pound", "1.5$", "a figure") is None  # glued to the unit
    assert withhold("add his hw1, hw2, and hw3 together", "hw2", "a figure") is None  # one of a list
    assert withhold("copy a.xlsx to a.xlsx.bak and a.xlsx", "a.xlsx", "x") is None  # said twice: which one?
    assert detail_to_withhold("add a new header Team to the sheet and send it to Owen Ashdown") == \
        ("Owen Ashdown", "person")  # a capitalised header is no person; a full name is
    assert detail_to_withhold("sort the canteen excel file by Region") is None


@pytest.mark.parametrize("value, kind, pattern", [
    ("CS161", "number", r"CS16[02]"), ("midterm2", "number", r"midterm[13]"), ("$1,200", "number", r"\$1,\d{3}"),
    ("20%", "number", r"\d+%"), ("3pm", "time", r"(?:2|4)pm"), ("3:00 PM", "time", r"(?:2|4):00 PM"),
    ("May 17, 2024", "date", r"May \d{1,2}, 2024"), ("Tuesday", "date", r"[A-Z][a-z]+day"),
    ("Bob", "person", r"[A-Z][a-z]+"), ("bob@abc.com", "email", r"[a-z]+@abc\.com"),
    ("12 pm", "time", r"1 pm"), ("May 31, 2024", "date", r"(?:May (?:29|30)|June [1-7]), 2024"),
    ("Jan. 30", "date", r"(?:Jan\. (?:28|29)|Feb\. [1-6])"), ("March", "date", r"February|April"),
    ("Excel", "app", r"PDF"), ("excel", "app", r"pdf"), ("PDF", "app", r"Excel"), ("Word", "app", r"Excel"), ("scores.xlsx", "file", r"scores_?[23]\.xlsx"), ("midterm1.xlsx", "file", r"midterm(?:2|1_[23])\.xlsx")])
def test_near_values_keep_the_shape_of_the_value(value, kind, pattern):
    for seed in range(6):
        alt = near_value(value, kind, random.Random(seed))
        assert alt and alt != value and re.fullmatch(pattern, alt), (value, alt)


def test_no_near_value_where_a_confusion_would_be_nonsense():
    rng = random.Random(1)
    assert near_value("Concert Announcement", "person", rng) is None  # capitalised words, not a person
    assert near_value("Larger", "person", rng) is None  # a sentence's capitalised first word is no one
    assert near_value("Dmitri", "person", rng) in OTHER_PEOPLE  # a re-cast seed's or a world's person is
    assert near_value("Feb 29, 2023", "date", rng) is None  # no such day to move from
    assert near_value("", "app", rng) is None


def test_a_placeholder_stands_only_where_it_reads():
    for sentence, value, kind in [("generate a report.docx from it", "report.docx", "file"),
                                  ("save it in a doc file named contact.docx", "contact.docx", "file"),
                                  ("scan the Concert Announcement pdf file", "Concert Announcement", "person"),
                                  ("find the lowest score of midterm 1 in the sheet", "1", "number"),
                                  ("the room needs 5 people at most", "5", "number"), ("pay 0.5 now", "0", "number"),
                                  ("send a email revenues.eml to Bob", "revenues.eml", "file"),
                                  ("make a table counts.xlsx of the emails", "counts.xlsx", "file"),
                                  ("create calendar event Bob.ics for them", "Bob.ics", "file"),
                                  ("what is 2024 total revenue from the report?", "2024", "number"),
                                  ("what was the total revenue of 2024?", "2024", "number")]:
        assert withhold(sentence, value, "<X>", kind) is None, sentence
    assert withhold("the average must be higher than 6.9", "6.9", "<X>", "number") == "the average must be higher than <X>"
    for amount in ("raise the budget to 2000", "set the budget to 2000 for each person", "a cost over 2500 here"):
        assert withhold(amount, re.search(r"\d+", amount).group(), "<X>", "number") is not None, amount
    assert withhold("save it as report.pdf", "report.pdf", "<X>", "file") == "save it as <X>"
    # "email" the verb, not the noun: a person after it may wait for the next turn
    assert withhold("Email John Smith the report", "John Smith", "<X>", "person") == "Email <X> the report"


def _exchanges(draft):
    turns = [t for s in draft.sessions for t in s.turns]
    return [(turns[i - 1], t, turns[i + 1]) for i, t in enumerate(turns)
            if t.role == "assistant" and 0 < i < len(turns) - 1 and ASKS.match(t.text) and t.text.endswith("?")]


@functools.lru_cache(maxsize=1)
def _relations() -> list[str]:
    """Every relation a derived value may be said in ("the file with the audit figures"), longest first."""
    from generators.derivation import RULES, anchor_kind, anchor_names

    out = set()
    for (move, key), lines in threads().lines.items():
        if move != "relation":
            continue
        rule = next(r for r in RULES if key == r or key.startswith(r + "_"))
        for name in anchor_names(anchor_kind(RULES[rule])):
            # a file_type relation names a file's name beside its anchor: the rest of it is the relation
            out |= {line.render({"anchor": name, "amount": 10, "name": ""}).lower().strip(" ,(") for line in lines}
    return sorted(out, key=len, reverse=True)


def _collapsed(text: str) -> str:
    """``text`` with a relation said in it as one word (a detail said against an anchor is one detail)."""
    low = text.lower()
    for relation in _relations():
        if relation in low:
            return low.replace(relation, "it")
    return low


def test_a_request_with_its_detail_left_out_is_answered_in_the_next_turn():
    text = "Set Bob's score in data/scores.xlsx to 95, then email the summary to Carol"
    found = 0
    for seed in range(8):
        draft = regenerate(Seed(text), seed=seed)
        values = {m.id: m.value for m in draft.memory}
        said = {m.id: (m.said_as or m.value).lower() for m in draft.memory}  # a derived value: its relation
        for opener, ask, answer in _exchanges(draft):
            if not opener.thread.startswith("t") or not answer.evidence:
                continue
            found += 1
            (mid,) = answer.evidence
            assert values[mid] not in opener.text and said[mid] not in opener.text.lower() and said[mid] in answer.text.lower()
            assert opener.thread == ask.thread == answer.thread and opener.role == answer.role == "user"
            assert len(_collapsed(answer.text).split()) <= 9  # the value, not the request again
    assert found >= 4  # the task's requests are said this way, in most histories


def test_decoys_are_said_the_same_way():
    decoy, task = [], []
    for seed in range(3, 7):
        draft = regenerate(Seed("Write the invoice total into data/invoice_summary.docx and email it to Carol"), seed=seed)
        decoy += [(o, a) for o, a, _ in _exchanges(draft) if o.thread.startswith("w")]
        task += [(o, a) for o, a, _ in _exchanges(draft) if o.thread.startswith("t")]
    assert decoy and task  # a placeholder does not tell the task's thread from another job's


def test_a_value_without_a_near_value_of_its_own_gets_a_near_miss_of_its_sentence():
    text = "Find the lowest cost in the budget excel file and write it into a new word file"
    seen = 0
    for seed in range(12):
        draft = regenerate(Seed(text), seed=seed)
        for piece in draft.memory:
            for near in piece.distractors:
                if piece.value.lower() in ("excel", "word"):
                    seen += 1
                    assert near.value != piece.text and piece.value.lower() not in near.value.lower()
                    assert near.value in near.text
                    holders = [t for s in draft.sessions for t in s.turns if near.value.lower() in t.text.lower()]
                    assert holders and all(piece.id in t.distractor for t in holders)
    assert seen


def test_a_day_said_relative_to_the_session_is_the_piecessaid_as(monkeypatch):
    # a day said outright (derived days: test_derivation)
    monkeypatch.setattr("generators.history_plan.HISTORY", replace(HISTORY, derive=0.0))
    draft = regenerate(Seed("Add 'Budget review' to my calendar on 2024-05-21 from 15:00 to 16:00",
                            now=datetime(2024, 5, 17, 9, 0)), seed=1)
    (piece,) = [m for m in draft.memory if m.value == "2024-05-21"]
    assert piece.said_as and "2024" not in piece.said_as
    said_on = [s.date for s in draft.sessions for t in s.turns if piece.id in t.evidence]
    assert said_on and all(piece.said_as in t.text for s in draft.sessions for t in s.turns if piece.id in t.evidence)
    from datetime import date
    assert str(value_time("2024-05-21")) == "2024-05-21" and date.fromisoformat(said_on[0]) < date(2024, 5, 17)


def test_a_jobs_sentence_changes_its_detail_as_the_tasks_corrections_do():
    from generators.withheld import changed_detail

    rng = random.Random(2)
    new, detail = changed_detail("sort data/canteen_feedback.xlsx by Owner and save it as a new copy", rng)
    assert re.fullmatch(r"data/canteen_feedback_(?:v2|final|new|updated)\.xlsx", detail)
    assert new == f"sort {detail} by Owner and save it as a new copy"
    new, detail = changed_detail("the hours should add up to more than 204", rng)
    assert detail != "204" and re.fullmatch(r"\d+", detail) and new.endswith(detail)
    assert changed_detail("sort the canteen excel file by Region", rng) is None
    # in the histories: other jobs' changed details are said the way the task's corrections are
    later = 0
    for seed in range(6):
        draft = regenerate(Seed("Write the invoice total into data/invoice_summary.docx and email it to Carol"),
                           seed=seed)
        said: list[str] = []
        for turn in (t for s in draft.sessions for t in s.turns if t.role == "user" and t.thread.startswith("w")):
            for stem, ext in re.findall(r"([\w/]+)_(?:v2|final|updated)\.(\w+)", turn.text):
                later += any(f"{stem}.{ext}" in earlier for earlier in said)  # a file said before, now a later one
            said.append(turn.text)
    assert later


def test_a_changed_detail_in_two_turns_says_what_kind_of_detail_changed():
    """"The file for the score spreadsheet isn't the one I said." / "Which file?" / the new file:
    the question follows from the line before it, for the task's corrections and other jobs' alike."""
    from generators.thread_bank import threads

    kinds = {kind: [said_as(line) for line in lines]
             for (move, kind), lines in threads().lines.items() if move == "correct_split" and kind != "any"}
    from generators.dialogue_offline import _PLAIN_OPENERS, _REPLY_OPENERS

    # "Okay, what day ..." = "Ah, what day ..." = "Fine, what day ...": whichever opener a question took
    nod = re.compile(rf"^(?:(?:{'|'.join(sorted({*_REPLY_OPENERS, *_PLAIN_OPENERS}))})[,.] )+", re.I)

    def core(text: str) -> str:
        return nod.sub("", text).lower()

    asks = {kind: {core(line.render({})) for line in threads().lines[("ask_withheld", kind)]} for kind in kinds}
    seen = {"t": 0, "w": 0}
    for seed in range(12):
        draft = regenerate(Seed("Set Bob's score in data/scores.xlsx to 95, then email the summary to Carol"),
                           seed=seed)
        for opener, ask, answer in _exchanges(draft):
            said = [kind for kind, patterns in kinds.items() if any(p.match(opener.text) for p in patterns)]
            if not said:
                continue
            (kind,) = said
            seen[opener.thread[0]] += 1
            assert core(ask.text) in asks[kind], (opener.text, ask.text)
            assert answer.role == "user" and len(_collapsed(answer.text).split()) <= 9
            if opener.thread.startswith("t"):
                assert answer.evidence  # the new value stands
    assert seen["t"] and seen["w"]



def test_an_earlier_value_comes_in_two_turns_as_a_final_one_does():
    """The form of a two-turn detail (the work named, a question, the value) does not tell the
    value that stands from the one corrected later: an earlier value, a request's wording or a
    figure, comes in two turns as often as a final one does."""
    from datetime import date, timedelta

    from generators.history_plan import plan_history
    from generators.model import MemoryPiece

    dates = [date(2024, 5, 13) + timedelta(days=i) for i in range(5)]
    split: dict[tuple[str, str], list[bool]] = {}
    for seed in range(40):
        pieces = [MemoryPiece("m1", "action", "send the CS161 grades to Bob", "CS161", thread="t1", cue="requested",
                              about="the grades", superseded=("CS162",)),
                  MemoryPiece("m2", "fact", "the budget is 400", "400", thread="t2", cue="amount",
                              about="the budget", superseded=("350",))]
        days, _ = plan_history(pieces, dates, random.Random(seed))
        for event in (e for d in days for e in d.events if e.move in ("state", "correct")):
            split.setdefault((event.piece.cue, event.mark), []).append(event.split)
    earlier = split[("requested", "superseded")]
    assert 0.3 < sum(earlier) / len(earlier) < 0.7  # as often as a final value that is not a correction
    # a figure's earlier value too: no turn shape is kept for the values that stand
    figure = split[("amount", "superseded")]
    assert 0.3 < sum(figure) / len(figure) < 0.7


def test_a_near_value_asked_for_another_work_comes_in_the_requests_own_two_turns():
    """A request's near value said as another work's request comes, as the request's own values do
    (its final value, or an earlier one corrected later), as the request with its detail left out,
    the assistant's question and the value alone: the form of a two-turn request does not tell the
    right work's value from the wrong one."""
    text = "Find the invoice total in the memo and email it to Carol"
    seen = {"own": 0, "distractor": 0}
    for seed in range(24):
        draft = regenerate(Seed(text), seed=seed, days=28, utterances_per_day=11,
                           others=["Send the parking survey results to Dan"])
        for opener, ask, answer in _exchanges(draft):
            if "email it to" not in opener.text.lower():
                continue
            seen["own"] += bool(answer.evidence or answer.superseded)
            seen["distractor"] += bool(answer.distractor)
            assert not opener.evidence and not opener.distractor  # the request holds no value
    assert seen["own"] and seen["distractor"], seen


def test_a_plus_answer_never_gives_a_value_alone_as_a_whole_turn():
    """"What's the number, then?" is answered "It's 1." in Plus, never "1.": a writer without bare
    values draws every answer line but the value alone, for any detail alike."""
    from generators.dialogue_offline import HistoryWriter
    from generators.model import MemoryPiece

    piece = MemoryPiece("m1", "fact", "the midterm is 1", "1", cue="note", about="the midterm task")
    when = datetime(2024, 5, 20, 10, 0)

    def answers(bare: bool) -> list[str]:
        writer = HistoryWriter([piece], rng=random.Random(3), user_first="Alex", bare_values=bare)
        ctx = {**writer._slots("the midterm task", when), "value": "1"}
        out = []
        for _ in range(len(threads().lines[("answer", "any")])):
            try:
                out.append(writer._line("answer", "any", ctx, "1"))
            except ValueError:
                break
        return out

    assert "1." in answers(True)  # the default (Neo) writer may say it
    plus = answers(False)
    assert plus and not any(a.strip(" .!?") == "1" for a in plus) and all("1" in a for a in plus)


def test_a_plus_history_has_no_user_turn_that_is_a_value_alone():
    # (seed 9 with bare values allowed: "answer, in the file type the reviewers want." as a turn)
    for seed in (8, 9):
        draft = regenerate(Seed("Find the lowest score of midterm 1 in data/scores.xlsx and write it into answer.txt"),
                           seed=seed)
        values = {v.lower() for p in draft.memory for v in (p.value, p.said_as, *p.superseded,
                                                              *(d.value for d in p.distractors)) if v}
        bare = [t.text for s in draft.sessions for t in s.turns if t.role == "user"
                and t.text.strip(" .!?").lower() in values]
        assert not bare, bare
