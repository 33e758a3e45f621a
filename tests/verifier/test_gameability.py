"""Gameability detectors, memory dynamics and text statistics (``verifier.gameability``), on small
hand-made records; the dataset card's section; and ``homer build/verify/stats`` with ``--strict``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orchestrator.card import render_card, statistics
from verifier.gameability import (DETECTORS, THRESHOLD, acknowledges, dynamics, gameability, has_value_token,
                                  normalize, questions_answered, record_cues, text_stats, value_tokens)

from tests.support.homer_cli import ForkedHomer, homer_forked, homer_here
from tests.support.records import record_with

pytestmark = pytest.mark.slow


def turn(role: str, text: str, **marks) -> dict:
    return {"role": role, "text": text, "ts": "2024-03-04T09:00:00", **marks}


def record(task_id: str, days: list[list[dict]], memory: list[dict] | None = None, query: str = "Do it.") -> dict:
    """A minimal task record: the dialogue (a list of days, each a list of turns) and its memory."""
    return {"id": task_id, "split": "neo", "family": "hand_made", "difficulty": "easy", "apps": ["word"],
            "app_count": 1, "query": query, "memory": memory or [],
            "dialogue": [{"day": d, "date": f"2024-03-0{d}", "turns": turns} for d, turns in enumerate(days, start=1)],
            "provenance": {}}


def u(text: str, **marks) -> dict:
    return turn("user", text, **marks)


def a(text: str, **marks) -> dict:
    return turn("assistant", text, **marks)


# -- the building blocks ---------------------------------------------------------------------------

def test_normalize_collapses_white_space_and_folds_case():
    assert normalize("  Hello\n  THERE\tfriend ") == "hello there friend"


@pytest.mark.parametrize("text, expected", [
    ("The budget is 12,500.50 or 12500", ["number:12500.50", "number:12500"]),
    ("Save it as Q3_report.xlsx please", ["file:q3_report.xlsx"]),
    ("Write to ann.lee@corp.example.com today", ["email:ann.lee@corp.example.com"]),
    ("Meet at 14:00, or 2:30 pm, or 10am", ["time:14:00", "time:2:30pm", "time:10am"]),
    ("Due 2024-03-05, 3/4 or March 3rd, or 5 May 2024", ["date:2024-03-05", "date:3/4", "date:march3rd",
                                                         "date:5may2024"]),
    ("The Q3 numbers and memo_mar42 are words, not values", []),
    ("Nothing to see here.", []),
])
def test_value_tokens(text: str, expected: list[str]):
    assert value_tokens(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Room 4 is free", True), ("see you at noon", True), ("open budget.PDF", True), ("mail bo@x.org", True),
    ("the report is late", False), ("a.b is not a file", False),
])
def test_has_value_token(text: str, expected: bool):
    assert has_value_token(text) is expected


def test_the_extension_test_finds_what_a_look_behind_first_pattern_finds():
    """The file-extension test starts at the dot and looks behind it for the word character: over
    texts of dots, extensions, case, digits and non-ASCII words it finds a file name exactly where
    the pattern with the look-behind first does."""
    import random
    import re

    from generators.specifics import file_extensions
    from verifier.gameability import _extension_re

    before = re.compile(rf"(?<=\w)\.(?:{file_extensions()})(?![\w])", re.IGNORECASE)
    pieces = ["a", "Zoë", "_", "7", " ", ".", "..", "-", "/", "@", "\n", "xlsx", "DOCX", "pdf", "Pdfs", "txt",
              "csv", ".eml", "é", "(", ")", ",", "report", "x.Ics"]
    rng = random.Random(5)
    found = 0
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        want = [m.span() for m in before.finditer(text)]
        assert [m.span() for m in _extension_re().finditer(text)] == want, text
        found += bool(want)
    assert found > 500


@pytest.mark.parametrize("text", [
    "Noted.", "Will do!", "Got it, Zara.", "Understood, thanks.", "Okay, it's on my list.",
    "I'll remember that.", "I\u2019ll keep it handy.", "Sure, I'll take care of that.", "I will make sure it happens.",
    "Right, I'll look after that later on.", "Good to know.", "Thanks for flagging it.",
])
def test_acknowledgements(text: str):
    assert acknowledges(text)


@pytest.mark.parametrize("text", [
    "What a lovely day.", "Cake in the kitchen is the best kind of office news.", "I love that film.",
    "Illness is no fun.", "That sounds like a long drive.",
])
def test_not_acknowledgements(text: str):
    assert not acknowledges(text)


# -- the detectors -----------------------------------------------------------------------------------

SHARED = ["Good morning!", "The coffee machine is broken again.", "Busy day ahead."]


def small_dataset() -> list[dict]:
    """Two tasks. Task A: 6 user turns, 2 of them evidence; task B: 5 user turns, 1 evidence."""
    task_a = record("a", [
        [u(SHARED[0]), a("Morning!"),
         u("Save the memo as plan.docx.", evidence=["m1"]), a("Noted, I'll remember that."),
         u("My cat knocked over a plant."), a("Cats will be cats."),
         u(SHARED[1]), a("Oh no, not again.")],
        [u("The limit is 3,500 euros.", evidence=["m2"]), a("Understood."),
         u("We had 3500 visitors at the fair."), a("That is a big crowd."),
         u(SHARED[2])],
    ], memory=[{"id": "m1", "kind": "fact", "text": "memo file", "value": "plan.docx"},
               {"id": "m2", "kind": "fact", "text": "limit", "value": "3,500"}])
    task_b = record("b", [
        [u(SHARED[0]), a("Hello."),
         u("Send it to bo@corp.example.com.", evidence=["m1"]), a("Will do."),
         u(SHARED[1]), a("Noted, I'll tell facilities."),
         u("Lunch was at 12:30 today."), a("A late lunch then.")],
        [u(SHARED[2]), a("Good luck with it.")],
    ], memory=[{"id": "m1", "kind": "fact", "text": "recipient", "value": "bo@corp.example.com"}])
    return [task_a, task_b]


def test_unique_user_turn_hits_texts_no_other_task_says():
    result = gameability(small_dataset())["unique_user_turn"]
    # A: plan.docx (ev), cat, 3,500 (ev), 3500 visitors; B: e-mail (ev), lunch. Shared lines miss.
    assert result == {"precision": 3 / 6, "recall": 1.0, "hits": 6, "evidence_hits": 3, "evidence_turns": 3}


def test_unique_user_turn_compares_normalized_text():
    records = small_dataset()
    records[1]["dialogue"][1]["turns"].append(u("  my CAT knocked over   a plant. "))
    result = gameability(records)["unique_user_turn"]
    assert result["hits"] == 5 and result["evidence_hits"] == 3  # the cat line is no longer unique (in A nor B)


def test_value_token_hits_digits_times_files_and_addresses():
    result = gameability(small_dataset())["value_token"]
    # A: plan.docx (ev), 3,500 (ev), 3500 visitors; B: e-mail (ev), 12:30. Assistant turns are not counted.
    assert result == {"precision": 3 / 5, "recall": 1.0, "hits": 5, "evidence_hits": 3, "evidence_turns": 3}


def test_acknowledged_hits_user_turns_answered_with_a_promise():
    result = gameability(small_dataset())["acknowledged"]
    # A: plan.docx -> "Noted, I'll remember", 3,500 -> "Understood."; B: e-mail -> "Will do.",
    # coffee machine -> "Noted, I'll tell facilities." (a miss for the evidence set).
    assert result == {"precision": 3 / 4, "recall": 1.0, "hits": 4, "evidence_hits": 3, "evidence_turns": 3}


def test_acknowledged_needs_the_next_turn_of_the_same_day():
    records = [record("a", [[u("Remember 42.", evidence=["m1"])], [a("Noted."), u("Hi.")]])]
    assert gameability(records)["acknowledged"]["hits"] == 0


def test_first_last_mention_marks_only_the_first_and_last_turn_of_each_value():
    records = [record("a", [
        [u("The code is 7781.", evidence=["m1"]),   # 0: first 7781
         a("Thanks, 7781 it is."),                  # 1: middle: not a hit
         u("Room 12 is booked."),                   # 2: first and last of 12
         a("Lovely weather.")],                     # 3: no value
        [u("Remember the code 7,781?"),             # 4: last 7781 (thousands separator normalized)
         a("Yes.")],
    ])]
    result = gameability(records)["first_last_mention"]
    assert result == {"precision": 1 / 3, "recall": 1.0, "hits": 3, "evidence_hits": 1, "evidence_turns": 1}


def test_first_last_mention_counts_evidence_turns_of_either_role():
    records = [record("a", [[u("Hello."), a("Your slot is 09:30.", evidence=["m1"]), u("Fine.")]])]
    result = gameability(records)["first_last_mention"]
    assert result == {"precision": 1.0, "recall": 1.0, "hits": 1, "evidence_hits": 1, "evidence_turns": 1}
    # the user-turn detectors only look at user evidence turns
    assert gameability(records)["value_token"]["evidence_turns"] == 0


def test_no_hits_means_precision_zero_and_no_evidence_recall_zero():
    records = [record("a", [[u("Hello."), a("Hi."), u("Nice day.", evidence=["m1"])]]),
               record("b", [[u("Hello."), a("Hi."), u("Nice day.")]])]
    result = gameability(records)
    assert result["value_token"] == {"precision": 0.0, "recall": 0.0, "hits": 0, "evidence_hits": 0,
                                     "evidence_turns": 1}
    assert result["passed"] is True
    empty = gameability([])
    assert all(empty[name]["precision"] == 0.0 and empty[name]["recall"] == 0.0 for name in DETECTORS)
    assert empty["passed"] is True


def test_passed_is_every_precision_at_most_the_threshold():
    assert THRESHOLD == 0.35
    result = gameability(small_dataset())
    assert set(result) == {*DETECTORS, "passed"}
    assert result["passed"] is False  # 0.5, 0.6, 0.75 above the threshold
    # Hide the three evidence turns among many look-alikes in other tasks: precision falls.
    records = small_dataset()
    for n in range(12):
        records.append(record(f"z{n}", [[u(f"I counted {n} pigeons today."), a("Noted, I'll remember that."),
                                          u("Today's count is 3,500."), a("Noted.")]]))
    result = gameability(records)
    assert [result[name]["hits"] for name in DETECTORS] == [6 + 12, 5 + 24, 4 + 24, 5 + 24]
    assert all(result[name]["precision"] <= THRESHOLD for name in DETECTORS), result
    assert result["passed"] is True


# -- dynamics ------------------------------------------------------------------------------------------

def test_dynamics_shares():
    plain = record("plain", [[u("Due on the 4th.", evidence=["m1"]), a("Noted.")], [u("Hi.")]],
                   memory=[{"id": "m1", "kind": "fact", "text": "due", "value": "4th"}])
    rich = record("rich", [
        [u("The venue is Hall A.", superseded=["m1"]), a("Okay."),
         u("Budget is 900.", evidence=["m2"], thread="t1"), a("Noted."),
         u("Budget for the other event is 950.", distractor=["m2"])],
        [u("Actually the venue is Hall B.", evidence=["m1"]), a("Updated."),
         u("Send it Tuesday next week at 14:00.", evidence=["m3"], thread="t1")],
    ], memory=[{"id": "m1", "kind": "fact", "text": "venue", "value": "Hall B", "superseded": ["Hall A"]},
               {"id": "m2", "kind": "fact", "text": "budget", "value": "900", "thread": "t1",
                "distractors": [{"value": "950", "text": "the other event"}]},
               {"id": "m3", "kind": "action", "text": "send", "value": "2024-03-12 14:00", "thread": "t1",
                "said_as": "Tuesday next week at 14:00"}])
    assert dynamics([plain, rich]) == {"knowledge_update": 0.5, "distractor": 0.5, "multi_session": 0.5,
                                       "relative_time": 0.5}
    assert dynamics([plain]) == {"knowledge_update": 0.0, "distractor": 0.0, "multi_session": 0.0,
                                 "relative_time": 0.0}
    assert dynamics([]) == {"knowledge_update": 0.0, "distractor": 0.0, "multi_session": 0.0, "relative_time": 0.0}
    outright = record("outright", [[u("Send it Tuesday 12 March at 14:00.", evidence=["m1"])]],
                      memory=[{"id": "m1", "kind": "action", "text": "send", "value": "2024-03-12 14:00",
                               "said_as": "Tuesday 12 March at 14:00"}])
    assert dynamics([outright])["relative_time"] == 0.0  # said in words, but needs no day to resolve it
    # a build's cues read the dynamics in their own walk over the turns: the same answers
    assert dynamics([plain, rich], [record_cues(r) for r in (plain, rich)]) == dynamics([plain, rich])


def test_multi_session_needs_one_thread_on_two_days():
    memory = [{"id": "m1", "kind": "fact", "text": "x", "value": "1"},
              {"id": "m2", "kind": "fact", "text": "y", "value": "2"}]
    days = [[u("One.", evidence=["m1"])], [u("Two.", evidence=["m2"])]]
    assert dynamics([record("apart", days, memory=memory)])["multi_session"] == 0.0  # two lone items, a day each
    threaded = [{**m, "thread": "t1"} for m in memory]
    assert dynamics([record("thread", days, memory=threaded)])["multi_session"] == 1.0  # one thread, two days
    other_threads = [{**memory[0], "thread": "t1"}, {**memory[1], "thread": "t2"}]
    assert dynamics([record("threads", days, memory=other_threads)])["multi_session"] == 0.0
    restated = record("r", [[u("One.", evidence=["m1"])], [u("Still one.", evidence=["m1"])]], memory=memory)
    assert dynamics([restated])["multi_session"] == 1.0  # a lone item said on two days
    # empty marks count as absent
    empty = record("e", [[u("One.", evidence=["m1"], distractor=[])]],
                   memory=[{"id": "m1", "kind": "fact", "text": "x", "value": "1", "superseded": [], "said_as": ""}])
    assert dynamics([empty]) == {"knowledge_update": 0.0, "distractor": 0.0, "multi_session": 0.0,
                                 "relative_time": 0.0}
    cases = [record("apart", days, memory=memory), record("thread", days, memory=threaded),
             record("threads", days, memory=other_threads), restated, empty]
    assert [record_cues(r)["dynamics"]["multi_session"] for r in cases] == [False, True, False, True, False]


# -- text statistics ------------------------------------------------------------------------------------

def test_text_stats():
    task_a = record("a", [[u("Hello!"), a("Hi."), u("Save it as x.docx.", thread="t1"), a("Noted.", thread="t1")],
                          [u("hello! "), a("Hi.")]])
    task_b = record("b", [[u("Hello!"), a("Welcome back."), u("The Q2 review moved.", thread="w1"), a("Okay.")]])
    stats = text_stats([task_a, task_b])
    assert stats["utterances"] == 10
    # distinct: hello!, hi., save..., noted., welcome back., the q2..., okay.
    assert stats["distinct_share"] == pytest.approx(7 / 10)
    # in another task too: the three "hello!" (A twice, B once)
    assert stats["cross_task_share"] == pytest.approx(3 / 10)
    # A repeats "hello!" and "hi." on day 2
    assert stats["repeats"] == 2 and stats["histories_with_repeats"] == 1
    assert stats["work_turn_share"] == pytest.approx(3 / 10)
    # of 5 user utterances, A's second "hello! " repeats its first
    assert stats["near_repeat_share"] == pytest.approx(1 / 5)
    assert text_stats([]) == {"utterances": 0, "distinct_share": 0.0, "cross_task_share": 0.0, "repeats": 0,
                              "histories_with_repeats": 0, "work_turn_share": 0.0, "near_repeat_share": 0.0,
                              "shape_repeat_share": 0.0}
    # a line said again with other fillers, closers or punctuation is a near repeat; with another
    # name, the same sentence of another name; another line is neither
    told = record("n", [[u("Ha, ate lunch at my desk, Ada stole a chip."), a("Ha."),
                         u("Ate lunch at my desk, Ada stole a chip, anyway!"), a("Again?"),
                         u("Ate lunch at my desk, Marcus stole a chip."), a("Classic."),
                         u("Ate lunch in the park, Ada stole a chip.")]])
    stats = text_stats([told])
    assert stats["near_repeat_share"] == pytest.approx(1 / 4)
    assert stats["shape_repeat_share"] == pytest.approx(2 / 4)


# -- the dataset card -------------------------------------------------------------------------------------

def whole(partial: dict) -> dict:
    """A hand-made record as a whole task (``record_with``): the card reads every field of a task."""
    return record_with(**{key: value for key, value in partial.items() if key != "provenance"})


def test_card_has_the_gameability_section_and_the_format():
    stats = statistics([whole(r) for r in small_dataset()])
    card = render_card(stats, {"config": {"seed": 1, "days": 2, "utterances_per_day": 8}})
    assert "## Gameability" in card and "### Memory dynamics" in card and "### Text" in card
    for name in DETECTORS:
        assert f"| {name} | " in card
    assert "| acknowledged | user turns the assistant answers with an acknowledgement or a promise | 0.750 | 1.000 | 4 | 3 | 3 |" in card
    assert "MISSED: " in card and "`acknowledged` (0.750)" in card and "above 0.35" in card
    assert "| knowledge_update |" in card and "| multi_session |" in card
    assert "## Format" in card
    for word in ("`evidence`", "`superseded`", "`distractor`", "`thread`", "`said_as`", "`distractors`"):
        assert word in card, word

    passing = statistics([whole(record("a", [[u("Hello."), a("Hi.")]]))])
    card = render_card(passing, {"config": {}})
    assert "Passed: every detector's precision is at most 0.35" in card and "MISSED" not in card


# -- the command line ----------------------------------------------------------------------------------------

def ended(proc: ForkedHomer) -> subprocess.CompletedProcess:
    """What a ``homer`` child process (forked from this one: ``homer_forked``) printed and exited with."""
    stdout, stderr = proc.communicate(timeout=300)
    assert "Traceback" not in stderr, stderr
    assert "Traceback" not in stdout, stdout
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def here(*args: str | Path) -> subprocess.CompletedProcess:
    """The command line in this process (``homer_cli``): stats and verify of a built folder."""
    proc = homer_here(*args)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def test_strict_build_verify_and_stats_agree_with_the_detectors(tmp_path: Path):
    build_args = ("--n", "4", "--seed", "3", "--workers", "1")
    started = [homer_forked("build", "--out", tmp_path / "strict", *build_args, "--strict"),
               homer_forked("build", "--out", tmp_path / "plain", *build_args)]  # the two at once
    strict, plain = map(ended, started)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    folder = tmp_path / "strict"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "tasks").glob("*/task.json"))]
    assert len(records) == 4  # everything is written, whatever the verdict
    result = gameability(records)
    passed = result["passed"]
    assert (strict.returncode == 0) == passed, (passed, strict.returncode, strict.stdout, strict.stderr)
    if not passed:
        assert strict.returncode == 1
        assert "--strict" in strict.stderr and "gameability" in strict.stderr
    assert "gameability (detector precision" in strict.stdout and "gameability (detector precision" in plain.stdout

    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card == (tmp_path / "plain" / "README.md").read_text(encoding="utf-8")  # --strict changes no output
    assert "## Gameability" in card
    assert ("MISSED: " in card) == (not passed) and ("Passed: every detector" in card) == passed
    for name in DETECTORS:
        assert f"| {name} | " in card and f"| {result[name]['precision']:.3f} | {result[name]['recall']:.3f} |" in card

    stats, verify, verify_strict = (here("stats", folder), here("verify", folder), here("verify", folder, "--strict"))
    assert stats.returncode == 0, stats.stderr
    assert "## Gameability" in stats.stdout and "### Memory dynamics" in stats.stdout
    section = card[card.index("## Gameability"):card.index("## Build")].strip()
    assert section in stats.stdout  # the same figures as the card
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "4/4 tasks pass every gate" in verify.stdout
    line = next(l for l in verify.stdout.splitlines() if l.startswith("gameability"))
    assert line.endswith("passed") == passed and ("MISSED by" in line) == (not passed)
    assert verify_strict.returncode == (0 if passed else 1), verify_strict.stdout + verify_strict.stderr


def test_a_question_counts_as_answered_when_the_next_user_turns_take_it_up():
    chat = record("q", [[u("Got the budget to do.", thread="t1"), a("Is there a deadline?", thread="t1"),
                         u("Friday.", thread="t1"), a("Sounds fine.", thread="t1"),
                         u("Lovely day."), a("Going anywhere nice?"), u("The lido."), a("Any plans?", thread="t1"),
                         u("Ooh, a lane to myself."), a("Nice."), u("Ha."), a("Which file?", thread="t1")]])
    # taken up: the deadline (next turn, same thread) and the lido; not: "Any plans?" (two small-talk
    # turns follow) nor a question that ends the day
    assert questions_answered([chat]) == (pytest.approx(2 / 4), 4)
    assert questions_answered([]) == (1.0, 0)
