"""The follow-up day's working days, counted in one pass, against counting each from the start."""

from __future__ import annotations

from datetime import date, timedelta

from generators.families.follow_up import _workdays


def _workday(start: date, ahead: int) -> date:
    day = start
    while ahead > 0:
        day += timedelta(days=1)
        if day.weekday() < 5:
            ahead -= 1
    return day


def test_the_working_days_after_a_day_are_counted_in_one_pass():
    for offset in range(0, 400, 3):  # every weekday, month ends, a leap day, a year's turn
        start = date(2023, 12, 1) + timedelta(days=offset)
        assert _workdays(start, 9) == [_workday(start, k) for k in range(1, 10)], start
    assert _workdays(date(2025, 1, 3), 0) == []
