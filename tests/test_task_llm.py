"""What the llm task generator is shown of the surfers' notes."""

from __future__ import annotations

from generators.task_llm import notes_for_prompt


def test_the_prompt_leaves_out_superseded_copies_and_quoted_replies():
    notes = {
        "excel": {"app": "excel", "files": [{"file": "data/budget.xlsx", "rows": [["a"]]},
                                            {"file": "data/budget_old.xlsx", "rows": [["b"]]}]},
        "email": {"app": "email", "mailboxes": [{"user": "dana", "messages": [
            {"id": "Re_x.eml", "subject": "Re: x",
             "body": "Agreed.\n\nOn 2025-03-02 10:00 Marcus Reyes wrote:\n> The quote is 4,200 USD.\n> Marcus"},
        ]}]},
    }
    shown = notes_for_prompt(notes)
    assert [f["file"] for f in shown["excel"]["files"]] == ["data/budget.xlsx"]
    assert shown["email"]["mailboxes"][0]["messages"][0]["body"] == "Agreed."
    assert notes["excel"]["files"][1]["file"] == "data/budget_old.xlsx"  # the notes themselves are untouched
    assert "4,200" in notes["email"]["mailboxes"][0]["messages"][0]["body"]
