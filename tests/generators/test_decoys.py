"""Decoys (``generators.decoys``): other jobs for later, said in the task's own sentences with
made-up details of the same kinds, unmarked; and Plus keeps numbers whole."""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta

import pytest

from generators.decoys import MAX_CHANGES, ToldJob, changed_value, make_decoys, make_told_decoys, make_value
from generators.model import MemoryPiece
from generators.specifics import find_specifics
from generators.thread_bank import threads

from tests.generators.test_dialogue import DRAFT, PIECES, all_turns, gen

START = date(2024, 5, 13)


def piece(value: str, cue: str) -> MemoryPiece:
    return MemoryPiece("m", "fact", value, value, cue=cue, about="the review meeting")


@pytest.mark.parametrize("seed", range(12))
def test_made_up_values_keep_the_shape_and_never_copy_the_office(seed):
    rng = random.Random(seed)
    about = "the parking survey"
    file = make_value(piece("report_q3.docx", "document"), about, START, rng, ["Sam"])
    assert re.fullmatch(r"parking_survey_[a-z]+_[a-z]{3}\d{1,2}\.docx", file)
    # a file in the task's folder gets one in that folder too: the path tells no job from the task
    in_folder = make_value(piece("data/report_q3.docx", "document"), about, START, rng, ["Sam"])
    assert re.fullmatch(r"data/parking_survey_[a-z]+_[a-z]{3}\d{1,2}\.docx", in_folder)
    assert make_value(piece("Priya Okafor", "recipient"), about, START, rng, ["Sam", "Jo"]) in ("Sam", "Jo")
    moment = make_value(piece("2024-05-23 15:00", "meeting_time"), about, START, rng, [])  # the writer says it
    when = datetime.strptime(moment, "%Y-%m-%d %H:%M")
    assert when.weekday() < 5 and 2 <= (when.date() - START).days <= 18 and when.minute in (0, 30)
    assert re.fullmatch(r"\d+ minutes", make_value(piece("30 minutes", "duration"), about, START, rng, []))
    number = make_value(piece("40.36", "new_figure"), about, START, rng, [])
    assert re.fullmatch(r"[1-9]{2}\.\d{2}", number)
    assert make_value(piece("Vendor review", "meeting_title"), about, START, rng, []).startswith("Parking survey ")
    subject = make_value(piece("Training results", "mail_subject"), about, START, rng, [])
    assert subject.startswith("Parking survey ") and subject != "Training results"
    assert make_value(piece("Final", "column_total"), about, START, rng, [], ["Hours", "Cost"]) in ("Hours", "Cost")
    # what cannot be made up without the office is left out: a field with no fields to draw from, a sentence
    assert make_value(piece("East", "filter_value"), about, START, rng, ["Sam"]) is None
    assert make_value(piece("the quote to check is the one in Ana's mail", "note"), about, START, rng, ["Sam"]) is None


def test_decoys_mirror_the_task_and_avoid_its_names():
    rng = random.Random(3)
    decoys = make_decoys(PIECES, ["the review rota", "the desk move", "the quiz night"], START, rng, ["Sam"],
                         ok=lambda text: "review" not in text.lower())
    assert [d.about for d in decoys] and all("review" not in d.about for d in decoys)
    for decoy in decoys:  # one detail a piece at most, in an order of its own
        ids = [p.id for p, _ in decoy.details]
        assert all(p in PIECES for p, _ in decoy.details) and len(set(ids)) == len(ids)
        assert all(v != p.value for p, v in decoy.details)
    decoy = decoys[0]
    first, old = decoy.details[0]
    new = changed_value(decoy, first, old, START, rng, ["Sam"], ok=lambda text: True)
    assert new and new != old


def test_a_value_the_writer_refuses_is_drawn_again():
    """A decoy's moment that ``ok`` refuses (say, a day the task's values name) is drawn anew,
    not dropped."""
    refused: list[str] = []

    def ok(text: str) -> bool:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", text) and not refused:
            refused.append(text)
            return False
        return True

    decoys = make_decoys(PIECES[:1], ["the desk move"], START, random.Random(5), ["Sam"], ok=ok, count=1)
    assert refused and len(decoys) == 1
    (_, value), = decoys[0].details
    assert value != refused[0] and re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", value)


def _patterns(moves: tuple[str, ...]) -> list[re.Pattern[str]]:
    """The thread bank's lines of ``moves`` as patterns: every slot matches any text."""
    out = []
    slots = {k: f"\x00{k}\x00" for k in ("about", "value", "who", "when", "weekday", "user", "text")}
    for (move, _), entries in threads().lines.items():
        if move in moves:
            for entry in entries:
                body = re.escape(entry.render(slots))
                out.append(re.compile("^(?:.+ )?" + re.sub(r"\x00\w+\x00", ".+?", body.replace("\\x00", "\x00")) + "$"))
    return out


def test_a_history_says_its_decoys_in_the_sentences_of_the_task_and_marks_none_of_them():
    stating = _patterns(("state", "answer", "correct"))
    unmarked = marked = 0
    for seed in range(8):
        for turn in all_turns(gen(DRAFT, seed=seed)):
            if turn.role != "user" or not any(p.match(turn.text) for p in stating):
                continue
            if turn.thread.startswith("w"):  # another job's detail, in a task sentence
                assert not (turn.evidence or turn.superseded or turn.distractor)
                unmarked += 1
            elif turn.evidence:
                marked += 1
    assert marked > 20 and unmarked >= marked


@pytest.mark.parametrize("text, whole", [("others are 1.5$/pound", "1.5$"), ("apples are 2$/pound", "2$"),
                                         ("costs $1.50 each", "$1.50"), ("rate of 3.5% applies", "3.5%"),
                                         ("1,200.50 in total", "1,200.50")])
def test_a_number_is_a_specific_whole_or_not_at_all(text, whole):
    found = [s.text for s in find_specifics(text) if s.kind == "number"]
    assert found == [whole]
    assert not any(re.fullmatch(r"\d", f) for f in found)


def test_a_decoy_never_names_a_day_the_task_names():
    """A decoy's day said in words that names the task's day ("Monday next week" for the task's
    2024-05-27) is left unsaid: the memory marks read days by what they name."""
    from generators.dialogue_offline import HistoryWriter

    task = MemoryPiece("m1", "fact", "follow up on 2024-05-27", "2024-05-27", cue="follow_up_day", about="the answer")
    writer = HistoryWriter([task], rng=random.Random(1), user_first="Alex", colleagues=["Sam"])
    said_on = datetime(2024, 5, 20, 10, 0)  # a Monday: 2024-05-27 is "Monday next week"
    assert not writer.decoys.ok("2024-05-27")
    assert writer.decoys.ok("2024-05-28")
    assert writer.decoys.worded("2024-05-27", "follow_up_day", said_on) == ""
    assert writer.decoys.worded("2024-05-29", "follow_up_day", said_on) != ""


def test_told_jobs_become_decoys_in_order_each_with_its_own_name_and_clean_sentences():
    told = [ToldJob("the salary spreadsheet", (("requested", "sort the salary excel file by Name"),
                                               ("asked", "who earns the most in data/salary.xlsx?"))),
            ToldJob("the salary report", (("requested", "email the salary report to Dana"),)),  # "salary" taken
            ToldJob("the seminar schedule", (("requested", "add the seminar to my calendar on May 7"),)),  # refused
            ToldJob("the weather document", (("note", "the forecast is in weather.docx"),)),
            ToldJob("the expense message", (("requested", "email Bob the expense total"),))]

    def ok(text: str) -> bool:
        return "May 7" not in text and "Bob" not in text

    decoys = make_told_decoys(told, ok, count=2)
    assert [d.about for d in decoys] == ["the salary spreadsheet", "the weather document"]
    assert [(p.cue, value) for p, value in decoys[0].details] == [
        ("requested", "sort the salary excel file by Name"), ("asked", "who earns the most in data/salary.xlsx?")]
    assert all(p.text == p.value == value for d in decoys for p, value in d.details)
    assert make_told_decoys(told, ok, count=9)[-1].about == "the weather document"  # nothing clean is left


def test_a_job_for_later_changes_its_plan_no_more_often_than_the_task():
    changing = _patterns(("correct", "correct_split"))
    most = 0
    for seed in range(6):
        turns = all_turns(gen(DRAFT, seed=seed, days=25, utterances_per_day=12))
        decoys = {t.thread for t in turns if t.role == "user" and t.thread.startswith("w")
                  and any(p.match(t.text) for p in _patterns(("job_raise",)))}
        for thread in decoys:
            changes = sum(1 for t in turns if t.thread == thread and t.role == "user"
                          and any(p.match(t.text) for p in changing))
            most = max(most, changes)
    assert 1 <= most <= MAX_CHANGES == 2  # as often as a task thread is corrected


def test_a_told_sentence_that_leans_back_waits_for_the_one_before_it():
    from generators.decoys import told_in_order

    sentences = ["read the invoice PDF", "email it to Carol", "find all emails from this year in the inbox",
                 "extract students and their IDs into ids.xlsx", 'add "This is a test" to notes.docx',
                 "put them in a folder"]
    assert told_in_order(sentences, lambda s: True) == [0, 1, 2, 3, 4, 5]
    assert told_in_order(sentences, lambda s: not s.startswith("read")) == [2, 3, 4, 5]  # "it" lost its invoice
    assert told_in_order(sentences, lambda s: "Carol" not in s and "notes" not in s) == [0, 2, 3]



def test_a_jobs_files_sit_in_the_folder_the_tasks_files_do():
    """A made-up request names its file in the task's folder ("data/..."), or in none when the
    task's files have none: a path's folder tells no job from the task."""
    lines = threads().job_details
    people = ["Ines Okafor", "Hugo Brandt"]
    fields = ["Region", "Owner"]
    for text, folder in (("sort data/scores.xlsx by Name", "data/"), ("sort scores.xlsx by Name", ""),
                         ("email the summary to Carol", None)):
        piece = MemoryPiece("m1", "action", text, "Carol", cue="requested")
        found = set()
        for seed in range(40):
            others = [MemoryPiece("m2", "action", "put it in reports/q1.docx", "reports/q1.docx", cue="requested")] \
                if folder is None else []
            value = make_value(piece, "the desk move", date(2024, 5, 20), random.Random(seed), people, fields, lines,
                               like=" ".join(p.text for p in [piece, *others]))
            for path in re.findall(r"(?<![\w/])((?:[\w-]+/)*)[\w-]+\.(?:xlsx|docx|pdf)\b", value or ""):
                found.add(path)
        want = {"reports/"} if folder is None else {folder}
        assert found and found <= want | {""}, (text, found)
        assert folder != "data/" or "data/" in found


def test_a_jobs_answers_name_their_work_as_often_as_the_tasks(monkeypatch):
    """A detail given after the assistant asks is drawn from the answers that name their work
    (``answer.named``) at one rate for the task's threads and the other jobs' alike: a line that
    names its work says nothing of whose work it is."""
    import sys

    from generators.dialogue_offline import HistoryWriter

    drawn = {"generators.dialogue_offline": [0, 0], "generators.decoy_talk": [0, 0]}  # [answers, named]
    line = HistoryWriter._line

    def noted(self, move, cue, *args, **kwargs):
        caller = sys._getframe(1).f_globals["__name__"]
        if move == "answer" and cue in ("named", "any") and caller in drawn:
            drawn[caller][0] += 1
            drawn[caller][1] += cue == "named"
        return line(self, move, cue, *args, **kwargs)

    monkeypatch.setattr(HistoryWriter, "_line", noted)
    for seed in range(100):
        gen(DRAFT, seed=seed, days=25, utterances_per_day=12)
    (tasks, task_named), (jobs, job_named) = drawn.values()
    assert tasks >= 150 and jobs >= 200, drawn  # a gap of 0.15 is three standard errors
    assert abs(task_named / tasks - job_named / jobs) < 0.15, drawn
    assert 0.5 < job_named / jobs < 0.8, drawn


def test_a_line_names_a_task_day_as_the_plain_reading_says_with_the_days_kept_or_not():
    """``names_task_day`` with the task's days worked out by the caller (a history keeps them per
    day) or by itself answers as reading the text's days against the values' does; a sibling's
    detail that names the task's day is unsayable on the day it would name it, sayable on another."""
    from generators.decoy_talk import names_task_day, task_days
    from generators.dialogue_offline import HistoryWriter
    from generators.history_plan import Event
    from generators.spoken_time import read_times, value_time

    def plain(text: str, said_on: date, values: list[str]) -> bool:
        days = {t.date() if isinstance(t, datetime) else t for t in (value_time(v, said_on) for v in values) if t}
        return any((f.when.date() if isinstance(f.when, datetime) else f.when) in days
                   for f in read_times(text, said_on))

    texts = ["Monday next week works", "tomorrow at 14:00 then", "see you on Monday", "the 27th", "no day here",
             "Tuesday next week at 10:00", "by Friday", "next Monday, first thing"]
    for values in (["2024-05-27"], ["report.xlsx", "14"], ["Monday June 3", "2024-05-28 14:00"], []):
        for day in (date(2024, 5, 20) + timedelta(days=i) for i in range(0, 12, 3)):
            for text in texts:
                want = plain(text, day, values)
                assert names_task_day(text, day, values) is want
                assert names_task_day(text, day, values, task_days(day, values)) is want

    task = MemoryPiece("m1", "fact", "follow up on 2024-05-27", "2024-05-27", cue="follow_up_day", about="the answer")
    writer = HistoryWriter([task], rng=random.Random(1), user_first="Alex", colleagues=["Sam"])
    sibling = MemoryPiece("w1", "fact", "the review is on Monday next week", "Monday next week", cue="meeting_day",
                          about="the review")
    event = Event("state", "w1", sibling, said="Monday next week")
    for _ in range(2):  # the second time from the days kept
        assert not writer.sayable(event, datetime(2024, 5, 20, 10))  # Monday next week is 2024-05-27
        assert writer.sayable(event, datetime(2024, 5, 13, 10))
