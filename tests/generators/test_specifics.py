"""``generators.specifics``: what counts as a specific of an OfficeBench-style instruction, and the
check that a dialogue carries every one while the intent holds none."""

from __future__ import annotations

import pytest

from generators.specifics import Specific, check_specifics, contains_specific, find_specifics, locate_specifics


def kinds(instruction: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text) for s in find_specifics(instruction)]


# -- extraction on realistic instructions ----------------------------------------------------

def test_party_invitation():
    assert kinds("Bob was invited to a party held by Jane Doe, send an email party.eml to Bob to notify him") == [
        ("person", "Bob"), ("person", "Jane Doe"), ("app", "email"), ("file", "party.eml")]


def test_calendar_meeting_with_slashed_date_and_dotted_times():
    assert kinds("Add a meeting to Bob's calendar at 5/17/2024 10:30 a.m to 11:00 a.m.") == [
        ("person", "Bob"), ("app", "calendar"), ("date", "5/17/2024"), ("time", "10:30 a.m"), ("time", "11:00 a.m")]


def test_score_change_keeps_a_column_name_with_a_digit_whole():
    assert kinds("change Bob's midterm1 score to 100 in score.xlsx") == [
        ("person", "Bob"), ("number", "midterm1"), ("number", "100"), ("file", "score.xlsx")]


def test_numbers_decimals_thousands_percent_money():
    found = kinds("Raise the Q3 travel budget in data/budget_2024.xlsx by 12.5% to $12,500.00, "
                  "note that 1,200 units shipped at 3.75 EUR each and 40 dollars went to fees.")
    assert found == [("number", "Q3"), ("file", "data/budget_2024.xlsx"), ("number", "12.5%"),
                     ("number", "$12,500.00"), ("number", "1,200"), ("number", "3.75 EUR"), ("number", "40 dollars")]
    # digits inside a file name or a thousands group are not separate numbers
    assert ("number", "2024") not in found and ("number", "500") not in found


def test_dates_in_every_written_form():
    found = kinds("Move the review from May 17 to 17 May 2024, then to 2024-06-01; the report is due "
                  "Friday, June 3rd, 2024 and the kickoff was in March. Check 12/05 and 17.05.2024 tomorrow.")
    dates = [text for kind, text in found if kind == "date"]
    assert dates == ["May 17", "17 May 2024", "2024-06-01", "Friday", "June 3rd, 2024", "March", "12/05",
                     "17.05.2024", "tomorrow"]
    assert all(kind == "date" for kind, _ in found)  # "Move", "Check" are verbs, not names


def test_times_in_every_written_form():
    found = kinds("Book the room from 9:00 AM to 14:30, lunch at noon, the call at 3 pm and drinks at 6p.m. "
                  "Nothing after midnight; the retro is Thursday afternoon.")
    assert [text for kind, text in found if kind == "time"] == ["9:00 AM", "14:30", "noon", "3 pm", "6p.m", "midnight",
                                                                "afternoon"]
    assert kinds("Rate the 1:1 meeting")[0] == ("number", "1")  # a ratio is no time


def test_email_addresses_and_file_names_with_paths():
    found = kinds("Forward meeting_notes.docx and ./data/Q2 report.pdf to jane.doe@example.com, cc ops-team@corp.co.uk.")
    assert ("email", "jane.doe@example.com") in found and ("email", "ops-team@corp.co.uk") in found
    assert ("file", "meeting_notes.docx") in found and ("file", "report.pdf") in found
    assert not any(kind == "person" for kind, _ in found)  # "Forward" starts the sentence: a verb


def test_quoted_titles_are_one_specific():
    found = kinds("Add 'Budget review' to my calendar and rename the event \"Kick-off 2.0\". Don't touch Bob's 'old' file.")
    assert ("quoted", "Budget review") in found and ("quoted", "Kick-off 2.0") in found and ("quoted", "old") in found
    assert ("person", "Budget") not in found and ("number", "2.0") not in found
    assert ("person", "Bob") in found
    assert kinds("Convert the file 'sales report.xlsx' into a pdf file.") == [
        ("file", "sales report.xlsx"), ("app", "pdf")]


def test_person_names_rules():
    found = kinds("Tabulate the scores for Mary-Jane O'Brien. Will you ask Will and Dr. McDonald? "
                  "Please send Grace the list.")
    people = [text for kind, text in found if kind == "person"]
    # sentence-initial verbs ("Tabulate", "Please") and modal "Will" are not names; titles drop out
    assert people == ["Mary-Jane O'Brien", "Will", "McDonald", "Grace"]


def test_app_names_word_needs_a_capital():
    assert kinds("Count every word in notes.docx") == [("file", "notes.docx")]
    found = kinds("Open the Word document, copy the table into Excel, export a PDF and e-mail it; add it to the calendar.")
    assert [text for kind, text in found if kind == "app"] == ["Word", "Excel", "PDF", "e-mail", "calendar"]


def test_each_specific_once_in_order_with_offsets():
    instruction = "Email Bob the memo.docx, then email Bob again."
    assert kinds(instruction) == [("app", "Email"), ("person", "Bob"), ("file", "memo.docx")]
    spans = locate_specifics(instruction)
    assert [instruction[s:e] for s, e, _ in spans] == ["Email", "Bob", "memo.docx", "email", "Bob"]
    assert all(instruction[s:e] == spec.text for s, e, spec in spans)


def test_a_text_s_kept_specifics_are_those_found_afresh_and_a_caller_s_list_is_its_own():
    texts = ["Email Bob the memo.docx, then email Bob again.",
             "Send Dana Reyes the 2025-03-04 totals: 1,250.50 USD by 14:30 (see data/q1_sales.xlsx).",
             "Book 'Quarterly Review' on Tuesday May 7 at 3pm with Hugo and Zara.",
             "Please tidy up the shared folder when you have time.", ""]
    for text in texts * 2:  # each asked again after the others
        first = find_specifics(text)
        expected = []
        for _, _, spec in locate_specifics(text):
            if all((s.kind, s.text.lower()) != (spec.kind, spec.text.lower()) for s in expected):
                expected.append(spec)
        assert first == expected
        first.append(Specific("person", "Nobody"))
        assert find_specifics(text) == expected


def test_nothing_specific():
    assert find_specifics("") == []
    assert find_specifics("Please tidy up the shared folder when you have time.") == []


# -- the check -----------------------------------------------------------------------------------

PARTY = "Bob was invited to a party held by Jane Doe, send an email party.eml to Bob to notify him"


def test_check_passes_when_the_dialogue_carries_everything_and_the_intent_nothing():
    dialogue = ["Morning! How was the weekend?", "By the way, BOB was invited to a party held by jane\n  doe.",
                "Also send an email party.eml to Bob's inbox later."]
    assert check_specifics(PARTY, "Let the guest know about the party I mentioned.", dialogue) == []


def test_check_reports_each_missing_specific_and_each_leak():
    problems = check_specifics(PARTY, "Send the email about the party.", "Jane Doe is hosting. Remember party.eml.")
    assert problems == ["dialogue misses person 'Bob'", "dialogue misses app 'email'", "intent leaks app 'email'"]


def test_check_matches_whole_tokens_only():
    instruction = "Set Bob's score in data/scores.xlsx to 95."
    problems = check_specifics(instruction, "Fix the score.", "Bob scored in 1995, see data/scores.xlsx.")
    assert problems == ["dialogue misses number '95'"]
    assert contains_specific("Bob's file", Specific("person", "Bob"))
    assert not contains_specific("Bobby's file", "Bob")
    assert contains_specific("meet at 10:30 A.M. sharp", "10:30 a.m")


@pytest.mark.parametrize("intent", ["Ask bob about it.", "Put it in the CALENDAR.", "Use 5/17/2024 please."])
def test_intent_leaks_are_case_insensitive(intent):
    instruction = "Add a meeting to Bob's calendar at 5/17/2024 10:30 a.m to 11:00 a.m"
    dialogue = instruction
    problems = check_specifics(instruction, intent, dialogue)
    assert len(problems) == 1 and problems[0].startswith("intent leaks")
