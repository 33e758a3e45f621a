"""Days and times as people say them, read back against the day they were said."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from generators.spoken_time import (
    is_relative,
    last_named,
    named_moments,
    names_any,
    names_value,
    ordinal,
    read_times,
    redate,
    say_day,
    say_moment,
    say_value,
    value_time,
)

WEDNESDAY = date(2024, 5, 15)


def test_phrases_a_person_would_use():
    assert say_moment(datetime(2024, 5, 16, 9, 30), WEDNESDAY) == "tomorrow at 09:30"
    assert say_moment(datetime(2024, 5, 15, 16, 0), WEDNESDAY) == "today at 16:00"
    assert say_moment(datetime(2024, 5, 17, 14, 0), WEDNESDAY) == "this Friday at 14:00"
    assert say_moment(datetime(2024, 5, 21, 11, 0), WEDNESDAY) == "Tuesday next week at 11:00"
    assert say_day(date(2024, 5, 8), WEDNESDAY) == "Wednesday last week"
    assert say_day(date(2024, 5, 16), WEDNESDAY) == "this Thursday"  # a day alone: no bare "tomorrow"
    assert say_day(date(2024, 5, 31), WEDNESDAY) == "Friday the 31st"
    assert say_day(date(2024, 4, 22), WEDNESDAY) == "Monday the 22nd of last month"
    assert say_day(date(2024, 6, 3), WEDNESDAY) == "Monday the 3rd of next month"
    assert say_day(date(2024, 9, 2), WEDNESDAY) == "Monday 2 September"
    assert say_day(date(2023, 9, 4), WEDNESDAY) == "Monday 4 September 2023"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]
    assert say_value("2024-05-22 10:00", WEDNESDAY) == "Wednesday next week at 10:00"
    assert say_value("2024-04-22", WEDNESDAY) == "Monday the 22nd of last month"
    assert say_value("Monday May 20", WEDNESDAY) == "Monday next week"
    assert say_value("invoices.xlsx", WEDNESDAY) is None and say_value("9:00", WEDNESDAY) is None


@pytest.mark.parametrize("offset", range(0, 70, 3))
def test_every_phrase_reads_back_as_the_day_it_names(offset):
    said_on = date(2024, 12, 2) + timedelta(days=offset % 5 + 7 * (offset // 5))
    for ahead in (-400, -60, -33, -9, -4, -1, 0, 1, 2, 3, 6, 9, 13, 20, 45, 300):
        day = said_on + timedelta(days=ahead)
        phrase = say_day(day, said_on)
        assert "-" not in phrase and [(t.start, t.end, t.when) for t in read_times(phrase, said_on)] == [
            (0, len(phrase), day)], phrase
        when = datetime.combine(day, datetime.min.time()).replace(hour=9 + abs(ahead) % 8, minute=30)
        line = f"Right, so {say_moment(when, said_on)}, fine."
        assert [t.when for t in read_times(line, said_on)] == [when], line


def test_reading_is_strict_where_everyday_words_would_mislead():
    assert read_times("See you tomorrow, and yesterday was long.", WEDNESDAY) == []  # no clock: not a time
    assert [t.when for t in read_times("THIS FRIDAY AT 9:05", WEDNESDAY)] == [datetime(2024, 5, 17, 9, 5)]
    assert [t.when for t in read_times("Thursday the 16th", WEDNESDAY)] == [date(2024, 5, 16)]
    assert read_times("Friday the 16th", WEDNESDAY) == []  # the weekday disagrees with the date
    assert read_times("2024-05-17 09:00 and budget-this Friday", WEDNESDAY) == []
    assert [t.when for t in read_times("monday may 20", WEDNESDAY)] == [date(2024, 5, 20)]
    # a colon may end a phrase ("on Tuesday next week: one hour"), a clock's seconds may not
    assert [t.when for t in read_times("On Tuesday next week: one hour.", WEDNESDAY)] == [date(2024, 5, 21)]
    assert [t.when for t in read_times("Friday the 17th: sorted", WEDNESDAY)] == [date(2024, 5, 17)]
    assert [t.when for t in read_times("this Friday at 09:05:30", WEDNESDAY)] == [date(2024, 5, 17)]


def test_relative_or_said_outright():
    assert is_relative("tomorrow at 10:00") and is_relative("this Friday") and is_relative("Friday last week")
    assert is_relative("Friday the 3rd of next month")
    assert not is_relative("Monday 2 September") and not is_relative("Monday June 16") and not is_relative("soon")


def test_values_and_what_a_line_names():
    assert value_time("2024-05-22 10:00") == datetime(2024, 5, 22, 10)
    assert value_time("2024-05-22") == date(2024, 5, 22)
    assert value_time("Monday May 20") is None  # needs the day it is said on
    assert value_time("Monday May 20", WEDNESDAY) == date(2024, 5, 20)
    assert value_time("Tuesday May 20", WEDNESDAY) is None  # the weekday disagrees
    assert value_time("Tuesday February 29", date(2027, 3, 1)) == date(2028, 2, 29)  # a leap day years ahead
    assert value_time("monday June 16", date(2025, 6, 1)) == date(2025, 6, 16)
    assert names_value("We'll meet Wednesday next week at 10:00.", "2024-05-22 10:00", WEDNESDAY)
    assert not names_value("We'll meet Wednesday next week at 10:00.", "2024-05-22 10:00", date(2024, 5, 8))
    assert not names_value("We'll meet Wednesday next week at 10:00.", "2024-05-22 10:00", None)
    values = ["2024-05-24", "budget.xlsx", "monday may 20"]  # a task's values, lower-cased
    assert names_any("Interviews are on Friday the 24th.", values, WEDNESDAY)
    assert names_any("Back on Monday next week, they said.", values, WEDNESDAY)
    assert not names_any("Interviews are on Thursday the 23rd.", values, WEDNESDAY)
    assert not names_any("Interviews are on Friday the 24th.", ["budget.xlsx"], WEDNESDAY)
    # the values' days and moments kept by the caller give the same answers
    for text in ("Interviews are on Friday the 24th.", "Back on Monday next week, they said.", "On Thursday the 23rd."):
        for kept in (values, ["budget.xlsx"], []):
            wanted = named_moments(kept, WEDNESDAY)
            assert names_any(text, values, WEDNESDAY, wanted) == names_any(text, kept, WEDNESDAY)


def test_a_line_said_again_on_another_day_names_the_same_days():
    line = "Tomorrow at 16:00 then, not this Friday at 09:00, and Monday 2 September stays."
    moved = redate(line, WEDNESDAY, date(2024, 5, 6))
    assert moved == "Thursday next week at 16:00 then, not Friday next week at 09:00, and Monday 2 September stays."
    assert {t.when for t in read_times(moved, date(2024, 5, 6))} == {t.when for t in read_times(line, WEDNESDAY)}
    keep = {datetime(2024, 5, 16, 16)}
    assert redate(line, WEDNESDAY, date(2024, 5, 6), keep).startswith("Thursday next week at 16:00 then, not this Friday")

    # other talk moves with its session: "this Friday", two days after a Wednesday, becomes the day
    # two days after the new date (a Monday): this Wednesday
    shifted = redate(line, WEDNESDAY, date(2024, 5, 6), keep, shift_others=True)
    assert shifted == "Thursday next week at 16:00 then, not this Wednesday at 09:00, and Monday 2 September stays."
    assert datetime(2024, 5, 8, 9) in {t.when for t in read_times(shifted, date(2024, 5, 6))}


def test_last_named_finds_a_value_written_or_a_day_said_in_words():
    said_on = date(2025, 3, 10)
    text = "monday the 7th of next month or 2025-04-07, whichever"
    assert last_named(text, "2025-04-07", said_on) == text.index("2025-04-07")
    assert last_named("it was monday the 7th of next month", "2025-04-07", said_on) == len("it was ")
    assert last_named("it was monday the 7th of next month", "2025-04-08", said_on) == -1
    assert last_named("it was monday the 7th of next month", "2025-04-07", None) == -1  # no day: words name nothing
    assert last_named("budget.xlsx and budget.xlsx", "budget.xlsx", said_on) == len("budget.xlsx and ")


def test_talk_moved_to_another_date_never_shifts_onto_a_day_the_kept_values_name():
    """Moving a session shifts other work's relative days with it, but not onto a day a task value
    names: said there, the phrase would name that value in an unmarked turn."""
    from datetime import date, datetime

    from generators.spoken_time import read_times, redate

    old, new = date(2024, 5, 14), date(2024, 5, 7)  # a Tuesday to the Tuesday before
    text = "Thursday next week at 10:00 works for everyone."  # 23 May at 10:00, said on the 14th
    assert [f.when for f in read_times(text, old)] == [datetime(2024, 5, 23, 10, 0)]
    free = redate(text, old, new, keep=set(), shift_others=True)
    assert [f.when for f in read_times(free, new)] == [datetime(2024, 5, 16, 10, 0)]  # moved with the talk
    kept = redate(text, old, new, keep={datetime(2024, 5, 16, 10, 0)}, shift_others=True)
    assert [f.when for f in read_times(kept, new)] == [datetime(2024, 5, 23, 10, 0)]  # the day it named


def test_a_clause_said_whole_says_its_days_as_a_person_writes_them():
    """A seed clause carried whole as a Plus value (no single token of it could be) says its ISO day
    as a day, in the value and the text alike; read back, the phrase still names that day."""
    from datetime import date

    from generators.plus_offline import memory_pieces, split_clauses
    from generators.spoken_time import read_times, say_days_within

    assert say_days_within("on 2024-05-07 from 15:00") == "on Tuesday 7 May 2024 from 15:00"
    assert say_days_within("v2024-05-07 and 2024-13-40") == "v2024-05-07 and 2024-13-40"  # no day in either
    instruction = "Add 'Budget review' to my calendar on 2024-05-07 from 15:00 to 16:00."
    [piece] = memory_pieces(instruction, split_clauses(instruction), token_values=False)
    assert "2024-05-07" not in piece.value + piece.text and "Tuesday 7 May 2024" in piece.value
    assert piece.value == piece.text
    assert date(2024, 5, 7) in [f.when for f in read_times(piece.value, date(2024, 4, 20))]
