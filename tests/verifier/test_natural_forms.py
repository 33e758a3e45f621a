"""A right value written in a natural form passes the checks: the rewrite the bench replays, and the
forms it found refused (an amount in words beside its currency, a dotted clock in a range or after a
date, an hour said without its half of the day where a stated value binds it)."""

from __future__ import annotations

import pytest

from office_env.evaluation import keywords as kw
from office_env.evaluation.stated import wrong_statements
from verifier.natural_forms import REWRITES, labels, natural_form_plans, number_words

TEXT = "Malik is away from 2024-04-08 for 4 days, from 14:00-15:00. Allowance 7500 GBP, INV-2024-6843, 3 April."


@pytest.mark.parametrize("form, expected", [
    ("number in words", "for four days, from 14:00-15:00. Allowance seventy-five hundred GBP, INV-2024-6843, 3 April."),
    ("dotted clock", "from 14.00-15.00."),
    ("hour in words", "from two in the afternoon to three in the afternoon."),
    ("quarter past", "from two o'clock to three o'clock."),
    ("date in words", "away from the 8th of April 2024 for"),
])
def test_each_form_rewrites_only_its_values(form, expected):
    assert expected in REWRITES[form](TEXT)


def test_number_words_and_the_plans_per_kind_of_output():
    assert [number_words(n) for n in (4, 105, 7500, 12700, 3249)] == [
        "four", "one hundred and five", "seventy-five hundred", "twelve thousand seven hundred",
        "three thousand two hundred and forty-nine"]
    oracle = [{"tool": "word_write_to_file", "args": {"file_path": "data/a.docx", "content": "Business cards (250): 4"}},
              {"tool": "word_convert_to_pdf", "args": {"file_path": "data/a.docx", "output_path": "data/a.pdf"}},
              {"tool": "email_send_email", "args": {"sender": "a", "recipient": "b", "subject": "s",
                                                    "content": "Meet at 09:15."}}]
    criteria = [{"function": "evaluate_contain", "args": {"keywords": ["Business cards (250)", "225 EUR"]}}]
    assert labels(criteria) == ["Business cards (250)"]
    plans = {(form, kind): plan for form, kind, plan in natural_form_plans(oracle, labels(criteria))}
    assert plans["number in words", "pdf"][0]["args"]["content"] == "Business cards (250): four"
    assert plans["quarter past", "email"][2]["args"]["content"] == "Meet at quarter past nine."
    assert plans["quarter past", "email"][0] == oracle[0] and ("quarter past", "pdf") not in plans
    # an event's title is its text, a mail's subject is a name; a delete names an event it finds
    event = {"user": "b", "summary": "Review at 09:15", "start": "2024-04-08 09:15:00", "end": "2024-04-08 10:00:00"}
    calendar = [{"tool": "calendar_create_event", "args": event},
                {"tool": "calendar_delete_event", "args": {"user": "b", "summary": "Sync at 09:15"}},
                {"tool": "email_send_email", "args": {"sender": "a", "recipient": "b", "subject": "At 09:15",
                                                      "content": "See you."}}]
    plans = {(form, kind): plan for form, kind, plan in natural_form_plans(calendar)}
    assert plans["quarter past", "calendar"][0]["args"]["summary"] == "Review at quarter past nine"
    assert plans["quarter past", "calendar"][1:] == calendar[1:] and {kind for _, kind in plans} == {"calendar"}


@pytest.mark.parametrize("text, keyword, found", [
    ("A one-time allowance of two hundred and twenty-five EUR covers a chair.", "225 EUR", True),
    ("An allowance of €225 or 225 euros.", "225 EUR", True),
    ("An allowance of 225.00 EUR.", "225 EUR", True),
    ("An allowance of 1225 EUR.", "225 EUR", False),  # a longer number is another amount
    ("An allowance of 225 GBP.", "225 EUR", False),
    ("Core hours are 10.00 to 15.00 local time.", "10:00", True),
    ("I moved the sync to 2025-04-03 13.00-13.30.", "13:00", True),
    ("Prices rose 10.50-12.00 EUR.", "10:50", False),  # amounts, not a range of times
])
def test_amounts_in_words_and_dotted_clocks_are_found(text, keyword, found):
    assert (kw.missing(text, [keyword]) == []) is found


def test_an_hour_said_without_its_half_of_the_day_is_the_right_stated_time():
    entry = [{"value": "10:00", "kind": "time", "before": ["forecast from"]}]
    assert wrong_statements("Quarterly forecast from ten o'clock to eleven o'clock.", entry) == []
    assert wrong_statements("Quarterly forecast from nine o'clock to ten o'clock.", entry)
