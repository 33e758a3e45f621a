"""Every role's prompt starts with what stays the same across its calls, long enough for a
provider's prompt cache (OpenAI's holds a shared beginning of 1,024 tokens or more): two calls for
two tasks share that beginning, and the task's own values come after it."""

from __future__ import annotations

from backends.fake_llm.prefix_cache import prompt_sequence
from backends.prompts import render
from generators.schemas import dialogue_days_schema
from verifier.schemas import VERDICT_SCHEMA

CACHED = 1024


def shared_tokens(a: list[dict], b: list[dict]) -> int:
    x, y = prompt_sequence({"messages": a}), prompt_sequence({"messages": b})
    return next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))


def test_two_tasks_of_one_office_share_the_planner_prompt_up_to_the_task():
    from generators.families import FAMILIES
    from orchestrator.planner import general_plan_schema

    files = [f"data/report_{i}.xlsx" for i in range(60)]

    def plan(kind: str, count: int) -> list[dict]:
        inputs = {"files": files, "user": "dana", "now": "2024-05-06 09:00 (Monday)", "days": 5,
                  "utterances_per_day": 70, "app_count": count, "suggested_kind": kind, "kinds_planned_here": [kind]}
        return render("planner", inputs=inputs, schema=general_plan_schema(), apps=["word", "excel"],
                      kinds=[(k, f.apps) for k, f in sorted(FAMILIES.items())])

    first, second = plan("sheet_total", 1), plan("notes_to_email", 2)
    assert first[0] == second[0]
    assert shared_tokens(first, second) >= CACHED


def test_two_tasks_share_the_dialogue_writer_and_verifier_instructions():
    def day(user: str, city: str, days: int, currency: str, away: list[dict]) -> list[dict]:
        inputs = {"total_days": days, "utterances": 40, "user_first": user, "colleagues": ["Bo"], "company": "Acme",
                  "projects": [], "city": city, "currency": currency, "files": [], "task_values": [],
                  "checked_values": [], "away": away,
                  "days": [{"day": 1, "date": "2024-05-06", "weekday": "Monday", "events": []}]}
        return render("dialogue_day", inputs=inputs, schema=dialogue_days_schema(1), feedback="")

    ana = day("Ana", "Porto", 5, "EUR", [{"name": "Bo", "first": "2024-05-01", "last": "2024-05-10"}])
    ben = day("Ben", "Leeds", 9, "GBP", [])
    assert ana[0] == ben[0] and "Ana" in ana[1]["content"] and "Porto" in ana[1]["content"]
    assert "EUR" in ana[1]["content"] and "Bo 2024-05-01 to 2024-05-10" in ana[1]["content"]
    assert shared_tokens(ana, ben) >= CACHED

    def check(min_days: int, intent: str) -> list[dict]:
        return render("verifier", inputs={"min_days": min_days, "intent": intent, "memory": []},
                      transcript="## Day 1 - 2024-05-06 (Monday)", schema=VERDICT_SCHEMA)

    neo, plus = check(5, "Total the budget."), check(12, "Book the review.")
    assert neo[0] == plus[0] and "at least 5 days" in neo[1]["content"]
    assert shared_tokens(neo, plus) >= CACHED
