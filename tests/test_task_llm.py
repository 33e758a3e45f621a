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


def _draft(intent: str, value: str) -> dict:
    return {"intent": intent, "evaluation": [{"function": "evaluate_answer", "args": {"keywords": ["4"]}}],
            "memory": [{"id": "m1", "kind": "fact", "text": f"the count is for {value} only", "value": value}]}


def test_an_intent_is_refused_for_a_memory_value_it_holds_as_words_not_for_letters_inside_words():
    from generators.task_llm import draft_problems

    def refused(intent: str, value: str) -> bool:
        return any(p.startswith("intent:") for p in draft_problems(_draft(intent, value)))

    assert not refused("Count the people I asked about and write it down.", "IT")  # a department, not "it"
    assert refused("Count the IT people and write the number down.", "IT")
    assert not refused("Tell me how the Q31 plan is going.", "Q3")
    assert refused("Total the q3 column.", "Q3 column")
    assert refused("Send the total to dana lee.", "Dana Lee")
