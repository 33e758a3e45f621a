"""bench/mutants.py writes each wrong value in the form the oracle wrote the right one, and finds the
values a chat says by kind (the fast part of the mutation bench; the bench itself is in
test_mutants_bench.py)."""

from __future__ import annotations

import importlib.util
import sys
from datetime import date
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "mutants.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("mutants_bench_forms", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _mail(content: str, recipient: str = "elliot") -> list[dict]:
    return [{"tool": "email_read_email", "args": {"user": "zara", "email_id": "Stock check.eml"}},
            {"tool": "email_send_email", "args": {"sender": "zara", "recipient": recipient, "subject": "List",
                                                  "content": content}}]


@pytest.mark.parametrize("written, new, expected", [
    ("Thursday, 3 April 2025", date(2025, 4, 4), "Friday, 4 April 2025"),
    ("2025-04-03", date(2025, 3, 31), "2025-03-31"),
    ("April 3, 2025", date(2025, 4, 10), "April 10, 2025"),
    ("Thu 3rd Apr 2025", date(2025, 4, 1), "Tue 1st Apr 2025"),
    ("03/04/2025", date(2025, 4, 12), "12/04/2025"),
])
def test_a_date_is_written_in_the_form_of_the_one_it_replaces(bench, written, new, expected):
    assert bench._day_text(written, date(2025, 4, 3), new) == expected


def test_a_plan_s_dates_and_clocks_move_in_every_form_it_writes_them(bench):
    plan = _mail("Join on Thursday, 3 April 2025 from 2 pm to 15:00 (2025-04-03). Thanks.") + [
        {"tool": "calendar_create_event", "args": {"user": "zara", "summary": "Sync", "start": "2025-04-03 14:00:00",
                                                   "end": "2025-04-03 15:00:00"}}]
    moved = bench._with_day(plan, date(2025, 4, 3), date(2025, 4, 4), True)
    assert moved[1]["args"]["content"] == "Join on Friday, 4 April 2025 from 2 pm to 15:00 (2025-04-04). Thanks."
    assert moved[2]["args"]["start"] == "2025-04-04 14:00:00" and moved[0] == plan[0]
    later = bench._with_clock(plan, (14, 0), (16, 30))
    assert later[1]["args"]["content"] == "Join on Thursday, 3 April 2025 from 4:30 pm to 15:00 (2025-04-03). Thanks."
    assert later[2]["args"]["start"] == "2025-04-03 16:30:00" and later[2]["args"]["end"] == plan[2]["args"]["end"]


def test_a_figure_is_replaced_by_value_and_never_inside_a_date_or_a_code(bench):
    plan = _mail("The 1,950 EUR of PO-1950 on 2025-01-19 under 1950: 19.50 left.") + [
        {"tool": "excel_set_cell", "args": {"file_path": "data/a.xlsx", "row": 2, "col": 2, "value": 1950}}]
    changed = bench._with_number(plan, 1950.0, "2,050")
    assert changed[1]["args"]["content"] == "The 2,050 EUR of PO-1950 on 2025-01-19 under 2,050: 19.50 left."
    assert changed[2]["args"]["value"] == 2050


def test_another_colleague_takes_the_mailbox_and_the_names_but_not_the_address(bench):
    elliot, hugo = bench.Person("Elliot Gutierrez", "Elliot", "elliot"), bench.Person("Hugo Wakefield", "Hugo", "hugo")
    plan = _mail("Hi Elliot,\n\nElliot Gutierrez (elliot@example.com) asked; Elliott is someone else.")
    swapped = bench._with_person(plan, elliot, hugo)
    assert swapped[1]["args"]["recipient"] == "hugo"
    assert swapped[1]["args"]["content"] == \
        "Hi Hugo,\n\nHugo Wakefield (elliot@example.com) asked; Elliott is someone else."
    named = bench._with_person(plan, elliot, hugo, mailbox=False)
    assert named[1]["args"]["recipient"] == "elliot" and named[1]["args"]["content"].startswith("Hi Hugo,")


def test_the_values_a_chat_says_are_found_by_kind(bench):
    people = (bench.Person("Zara Osei", "Zara", "zara"), bench.Person("Hugo Wakefield", "Hugo", "hugo"),
              bench.Person("Sofia Okafor", "Sofia", "sofia"))
    office = bench.Office("zara", people, ("data/inventory.xlsx",))
    text = ("Hugo was named lead last Thursday, effective from April 9; the walk-round is at 12:30 and the "
            "file is inventory.xlsx, 479 items counted on 2025-03-17.")
    found: dict[str, dict] = {}
    for (kind, _), value in bench._values_in(text, 2025, office, True):
        found.setdefault(kind, {})[value] = None
    found = {kind: list(values) for kind, values in found.items()}
    assert found["number"] == ["479"]
    assert found["day"] == [date(2025, 4, 9), date(2025, 3, 17)]  # a date without its year is the chat's year
    assert found["time"] == [(12, 30)] and found["file"] == ["inventory.xlsx"]
    assert [p.user for p in found["person"]] == ["hugo"]


def test_mutants_of_a_mail_swap_its_recipient_and_its_names_never_for_its_own_two_people(bench):
    people = tuple(bench.Person(f"{first} X", first, first.lower()) for first in ("Zara", "Elliot", "Hugo", "Sofia"))
    office = bench.Office("zara", people, ())
    oracle = _mail("Hi Elliot,\n\nBelow 75: Tea box.\n\nBest,\nZara")
    whats = [m.what for m in bench._person_mutants(oracle, office)]
    assert "send_email recipient elliot -> hugo" in whats and "send_email recipient elliot -> zara" not in whats
    assert "named Elliot X -> Hugo X" in whats and "named Zara X -> Sofia X" in whats
    assert not [w for w in whats if w.startswith("named") and w.endswith(("-> Zara X", "-> Elliot X"))]


def test_plain_word_mutants_name_another_period_and_turn_a_pair_round(bench):
    oracle = _mail("Largest increase from Q1 to Q3 in February; the sync on 3 March 2025 runs 11:00-12:00.")
    whats = {m.what: m.plan[1]["args"]["content"] for m in bench._word_mutants(oracle, True)}
    assert whats["Q1 -> Q2"].startswith("Largest increase from Q2 to Q3 in February")
    assert {w for w in whats if w.startswith("Q3 ->")} == {"Q3 -> Q1", "Q3 -> Q2", "Q3 -> Q4"}
    assert {w for w in whats if w.startswith("February ->")} == {"February -> January", "February -> March"}
    assert not [w for w in whats if w.startswith("March")]  # a date's month is the date's
    assert whats["'Q1 to Q3' -> 'Q3 to Q1'"].startswith("Largest increase from Q3 to Q1 in February")
    assert whats["'11:00-12:00' -> '12:00-11:00'"].endswith("runs 12:00-11:00.")
