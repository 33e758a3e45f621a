"""How a history reads (verifier.history_form): each figure on small records where the answer is known."""

from __future__ import annotations

from typing import Any

from backends.tokens import count_tokens
from tests.support.records import dialogue_record
from verifier.history_form import (
    history_tokens,
    iso_stamps,
    written_headers,
    namings_per_work,
    same_question_answers,
    small_talk_fit,
    turned_down_after_final,
    two_turn_share,
)


def record(*sessions: list[dict[str, Any]] | dict[str, Any], memory: list[dict[str, Any]] | None = None
           ) -> dict[str, Any]:
    return dialogue_record(*sessions, memory=memory)


def user(text: str, **marks: Any) -> dict[str, Any]:
    return {"role": "user", "text": text, **marks}


def assistant(text: str, **marks: Any) -> dict[str, Any]:
    return {"role": "assistant", "text": text, **marks}


def test_iso_stamps_count_dates_said_as_stamps_but_not_inside_file_names():
    r = record([user("We've set the meeting for 2025-06-16 12:00."), assistant("Monday the 16th, noted."),
                user("The notes are in minutes_2025-06-16.docx."), user("Mail ops_2025-06-16@corp.com about it.")])
    assert iso_stamps([r]) == (1, 4)


def test_written_headers_count_a_sheets_capitals_in_user_speech():
    memory = [{"id": "m1", "value": "Category with the highest Q3", "cue": "question",
               "distractors": [{"value": "Category with the highest Q1", "text": "old news"}]},
              {"id": "m2", "value": "Budget review", "cue": "title"}]  # a title keeps its capitals
    r = record([user("Julian said the last report was about the Category with the highest Q1."),
                user("They want the category with the highest Q3."), assistant("The Category with the highest Q3?"),
                user("Book the Budget review."), user("Category with the highest Q3, they said.")], memory=memory)
    assert written_headers([r]) == (1, 4)  # at a sentence's start, its first word takes a capital


def test_two_turn_share_needs_a_value_turn_without_its_works_name():
    memory = [{"id": "m1", "value": "75", "about": "the reorder list"},
              {"id": "m2", "value": "inventory.xlsx", "about": "the reorder list"},
              {"id": "m3", "value": "Vendor review", "about": "the review meeting"}]
    r = record([user("Sofia filled me in on that one."), assistant("Is that confirmed?"),
                user("They want 75 on that one.", evidence=["m1"]),
                user("For the list, the numbers are in inventory.xlsx.", evidence=["m2"]),
                user("Vendor review, said in passing.")],  # m3: no marked turn holds it, so not judged
               memory=memory)
    share, judged = two_turn_share([r])
    assert judged == 2 and share == 0.5
    # a short answer to the assistant's question leans on it, a full sentence does not
    asked = record([assistant("Which file should the numbers come from?", thread="t1"),
                    user("For the list: inventory.xlsx.", thread="t1", evidence=["m2"])], memory=memory[1:2])
    assert two_turn_share([asked]) == (1.0, 1)
    full = record([assistant("Which file should the numbers come from?", thread="t1"),
                   user("For the reorder list the numbers are in inventory.xlsx, Sofia says.", thread="t1",
                        evidence=["m2"])], memory=memory[1:2])
    assert two_turn_share([full]) == (0.0, 1)
    # the value itself does not count as naming the work: "review" inside "Vendor review" names nothing
    r3 = record([user("It's Vendor review.", evidence=["m3"]), assistant("Noted.")], memory=memory[2:])
    assert two_turn_share([r3]) == (1.0, 1)


def test_a_wrong_value_said_in_the_thread_after_the_final_one_is_counted():
    piece = {"id": "m1", "value": "359", "thread": "t1", "superseded": ["400"]}
    near = {"id": "m2", "value": "75", "thread": "t2", "distractors": [{"value": "15", "text": "the warehouse uses 15"}]}
    kept = record([user("Make it 400.", thread="t1"), user("No, 359.", thread="t1"),
                   user("Priya suggested 400, but we're keeping 359.", thread="t1")], memory=[piece])
    assert turned_down_after_final([kept]) == (0.0, 1)  # in the last turn, 359 comes after 400
    turned = record([user("Make it 359.", thread="t1"), user("Priya suggested 400, no.", thread="t1")], memory=[piece])
    assert turned_down_after_final([turned]) == (1.0, 1)
    settled = record([user("Make it 400.", thread="t1"), user("No, 359.", thread="t1"),
                      user("Someone said 400 in the canteen.")], memory=[piece])  # another thread: not counted
    assert turned_down_after_final([settled]) == (0.0, 1)
    both = record([user("75 on that one.", thread="t2"), user("The warehouse uses 15.", thread="t2")],
                  memory=[near, piece])  # m1's final value is never said: not judged
    assert turned_down_after_final([both]) == (1.0, 1)


def test_a_wrong_day_said_in_words_after_the_final_one_is_counted_by_both_measures():
    """A corrected day is said as people say it ("Monday the 7th of next month"), never as its
    ISO value: the measures read days in words against the day each turn was said."""
    from verifier.adversary import last_value_misleads

    piece = {"id": "m1", "value": "2025-04-01", "said_as": "Tuesday the 1st of next month", "thread": "t1",
             "superseded": ["2025-04-07"]}
    dated = [{"date": "2025-03-10", "turns": [user("Let's say Monday the 7th of next month.", thread="t1"),
                                              assistant("Noted.")]},
             {"date": "2025-03-20", "turns": [user("We go with Tuesday the 1st of next month.", thread="t1"),
                                              assistant("Noted.")]},
             {"date": "2025-03-24", "turns": [user("Someone floated Monday the 7th of next month again. No.",
                                                   thread="t1"), assistant("Noted.")]}]
    turned = record(*dated, memory=[piece])
    assert turned_down_after_final([turned]) == (1.0, 1)
    assert last_value_misleads([turned]) == (1.0, 1)
    settled = record(*dated[:2], memory=[piece])
    assert turned_down_after_final([settled]) == (0.0, 1)
    assert last_value_misleads([settled]) == (0.0, 1)
    # the same words said a month later name another day: not the corrected one
    later = record(*dated[:2], {"date": "2025-04-14", "turns": dated[2]["turns"]}, memory=[piece])
    assert last_value_misleads([later]) == (0.0, 1)


def test_the_same_small_talk_question_answered_two_ways():
    same_day = record([assistant("Nice. How old is Rex?"), user("Four, acts like a puppy."),
                       assistant("Ha. How old is Rex?"), user("Nearly eleven, grey whiskers."),
                       assistant("Is it urgent?", thread="t1"), user("Not really.", thread="t1")])
    assert same_question_answers([same_day]) == {"asked": 2, "same_day": 1, "history": 1}
    two_days = record([assistant("How old is Rex?"), user("Four, acts like a puppy.")],
                      [assistant("So, how old is Rex?"), user("Nearly eleven.")],
                      [assistant("How old is Rex?"), user("Four, acts like a puppy.")])
    assert same_question_answers([two_days]) == {"asked": 3, "same_day": 0, "history": 1}


def test_history_tokens_count_every_utterance():
    r = record([user("Good morning!"), assistant("Morning, Zara.")], [user("The list is done."), assistant("Good.")])
    assert history_tokens([r]) == [count_tokens("Good morning!") + count_tokens("Morning, Zara.")
                                   + count_tokens("The list is done.") + count_tokens("Good.")]


def test_small_talk_reactions_that_echo_and_answers_that_do_not_fit_are_counted():
    r = record([user("Slept like a log, Elm Street was silent."), assistant("A silent Elm Street, nice. All week?"),
                user("When Prism Dashboard is busy, Sam says."), assistant("Poor you, what a slog."),
                user("Coffee from the corner place."), assistant("Lucky you, what a treat. Coffee helping?"),
                user("The Kiln coffee is working, mostly."), assistant("That sounds lovely."),
                user("Ticket 44 is open.", thread="t1"), assistant("Which queue is it in?", thread="t1")])
    found = small_talk_fit([r])
    # "A silent Elm Street, nice." repeats the street; the other three reactions comment on their line
    assert found["reactions"] == 4 and found["echoes"] == 1
    # "All week?" expects a yes or no: "When ... is busy" gives an occasion; the coffee answer fits
    assert found["judged"] == 2 and found["mismatched"] == 1
    # a greeting returned is no echo, a name is
    assert small_talk_fit([record([user("Morning! Cake from Ana today."), assistant("Morning. Thank Ana for us.")])]) \
        == {"reactions": 1, "echoes": 1, "judged": 0, "mismatched": 0}
    # a farewell answered in its own words is no echo either: "wish me luck" -> "Good luck!"
    assert small_talk_fit([record([user("Dentist near Ashby Hill, wish me luck."), assistant("Good luck! See you."),
                                   user("Popping out, back soon."), assistant("No rush back, Ashby can wait.")])]) \
        == {"reactions": 2, "echoes": 0, "judged": 0, "mismatched": 0}


def test_namings_per_work_counts_each_way_a_work_is_called_once_across_its_threads():
    memory = [{"id": "m1", "about": "the quote log", "thread": "t1", "value": "x"},
              {"id": "m2", "about": "the quote log", "thread": "t2", "value": "y"}]
    turns = [user("We have the quote log to deal with.", thread="t1"), user("Any news on the log?", thread="t2"),
             user("That log again: x.", thread="t1"), user("For that one, y.", thread="t2"),
             user("The quote log is late.", thread="t1"),  # the full name again: no new naming
             user("this log is on a slide of the catalogue", thread="w1")]  # other work does not count
    assert namings_per_work([record(turns, memory=memory)]) == [4]  # full, "the log", "that log", "that one"


def test_namings_per_work_counts_a_thread_of_two_abouts_as_one_work():
    """Pieces of one thread with two abouts ("the renewal reminder", "the reminder on the last
    weekday") are one work: the names of both count for it, once each."""
    memory = [{"id": "m1", "about": "the renewal reminder", "thread": "t1", "value": "x"},
              {"id": "m2", "about": "the reminder on the last weekday", "thread": "t1", "value": "y"},
              {"id": "m3", "about": "the quote log", "thread": "t2", "value": "z"}]
    turns = [user("Keep the renewal reminder in mind.", thread="t1"), user("The renewal thing is late.", thread="t1"),
             user("For the reminder on the last weekday, y.", thread="t1"), user("That reminder again.", thread="t1"),
             user("The reminder: x.", thread="t1"), user("The quote log, z.", thread="t2")]
    assert namings_per_work([record(turns, memory=memory)]) == [5, 1]


def test_a_derived_value_always_needs_two_turns_whatever_its_relation_names():
    piece = {"id": "m1", "value": "inventory.xlsx", "about": "the reorder list",
             "said_as": "the file from the handover I mentioned",
             "derived": {"rule": "refers", "amount": 0, "anchor": "the file from the handover",
                         "base": "the inventory sheet"}}
    turns = [user("For the reorder list the numbers are in the file from the handover I mentioned.", evidence=["m1"]),
             user("The file from the handover is the inventory sheet.", evidence=["m1"])]
    assert two_turn_share([record(turns, memory=[piece])]) == (1.0, 1)
    plain = {k: v for k, v in piece.items() if k not in ("said_as", "derived")}
    said = [user("For the reorder list the numbers are in inventory.xlsx.", evidence=["m1"]), assistant("Noted.")]
    assert two_turn_share([record(said, memory=[plain])]) == (0.0, 1)  # the same sentence, the value said outright
