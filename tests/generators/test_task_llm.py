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
    notes["pdf"] = {"app": "pdf", "files": [{"file": "data/invoice.pdf", "lines": ["Total 1,200.50"],
                                             "numbers": ["1,200.50"]}]}
    shown = notes_for_prompt(notes)
    assert [f["file"] for f in shown["excel"]["files"]] == ["data/budget.xlsx"]
    assert shown["pdf"]["files"] == [{"file": "data/invoice.pdf", "lines": ["Total 1,200.50"]}]  # numbers: in the lines
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


def test_sheets_reach_the_prompt_as_csv_tables_that_read_back_into_the_same_rows():
    from generators.task_llm import table_rows

    sheet = {"file": "data/claims.xlsx", "sheet": "Claims", "headers": ["Claim", "Note", "Amount"],
             "rows": [["EC-1", 'said "ok", then left', "1,250.50"], ["EC-2", "two\nlines", ""]]}
    odd = {"file": "data/x.xlsx", "headers": ["a"], "rows": [[1]]}  # not all text: left as it is
    shown = notes_for_prompt({"excel": {"app": "excel", "files": [sheet, odd]}})["excel"]["files"]
    assert "rows" not in shown[0] and shown[0]["table"].startswith("Claim,Note,Amount\n")
    assert shown[1] == odd
    assert table_rows(shown[0]) == sheet and table_rows(odd) == odd


def _task_prompt(kind: str, apps: list[str], **plan: object) -> list[dict]:
    from generators.task_llm import task_prompt

    notes = {"excel": {"app": "excel", "files": [{"file": "data/b.xlsx", "sheet": "S", "headers": ["A"],
                                                  "rows": [["1"]]}]}}
    inputs = {"user": {"username": "dana", "name": "Dana Lee"}, "colleagues": [], "now": "2025-03-03 09:00 (Monday)",
              "notes": notes, "plan": {"apps": apps, "task_kind": kind, "difficulty": "easy", "other_kinds": {}, **plan}}
    return task_prompt(inputs)


def _shown_schema(system: str) -> dict:
    """The schema a system prompt ends with (``json_answer`` in templates/prompts/_rules.j2)."""
    import json

    return json.JSONDecoder().raw_decode(system[system.index('{"$schema"'):])[0]


def test_the_prompt_names_every_tool_a_plan_may_call_with_its_arguments():
    from office_env import default_registry

    system = _task_prompt("sheet_total", ["excel"])[0]["content"]
    for tool in default_registry().openai_tools():
        assert f"{tool['function']['name']}(" in system
    assert "email_send_email(sender, recipient, subject, content)" in system
    assert "calendar_create_event(user, summary, start, end, location?)" in system


def test_the_prompt_shows_a_short_form_of_the_schema_the_reply_is_held_to():
    """The arguments of every check and tool as a schema would take three times the tokens (an 8K
    window could not hold the prompt): the prompt shows the schema with them left to its catalog and
    tool list, and the reply is held to the whole schema, which refuses what the short form lets by."""
    import json

    from jsonschema import Draft202012Validator

    from generators.schemas import task_draft_prompt_schema, task_draft_schema

    shown, whole = _shown_schema(_task_prompt("sheet_total", ["excel"])[0]["content"]), task_draft_schema()
    assert shown == json.loads(json.dumps(task_draft_prompt_schema()))
    assert list(shown["properties"]) == list(whole["properties"])
    cue = shown["properties"]["memory"]["items"]["properties"]["cue"]
    assert cue == whole["properties"]["memory"]["items"]["properties"]["cue"] and "output_file" in cue["enum"]
    assert 3 * len(json.dumps(shown)) < len(json.dumps(whole))
    draft = _full_draft()
    assert Draft202012Validator(shown).is_valid(draft) and Draft202012Validator(whole).is_valid(draft)
    loose = {**draft, "evaluation": [{"function": "evaluate_answers", "args": {"keywords": ["4"]}}],
             "oracle": [{"tool": "excel_read", "args": {}}]}
    assert Draft202012Validator(shown).is_valid(loose) and not Draft202012Validator(whole).is_valid(loose)


def _full_draft() -> dict:
    read = {"tool": "excel_read_file", "args": {"file_path": "data/b.xlsx"}}
    return {"family": "sheet_question", "apps": ["excel"], "difficulty": "easy", "description": "Count the rows.",
            "intent": "Count the rows of the sheet.", "subtasks": ["Count the rows."],
            "evaluation": [{"function": "evaluate_answer", "args": {"keywords": ["4"]}}],
            "memory": [{"id": "m1", "kind": "fact", "text": "use the b.xlsx sheet", "value": "b.xlsx",
                        "cue": "source_file", "superseded": ["c.xlsx"]}],
            "query": "How many rows?", "oracle": [read, {"tool": "system_write_answer", "args": {"text": "4"}}],
            "misreadings": [{"memory": "m1", "dynamic": "superseded", "value": "c.xlsx",
                             "plan": [{"tool": "excel_read_file", "args": {"file_path": "data/c.xlsx"}},
                                      {"step": 2}]}]}


def test_the_draft_schema_takes_only_registered_checks_tools_and_kinds_and_has_a_strict_form():
    """A grammar or strict mode holds the model to what the schema says: a criterion of a registered
    check with its arguments, a plan call of a registered tool with its arguments, a registered task
    kind, a cue the dialogue writer has lines for, prose of a bounded length."""
    from jsonschema import Draft202012Validator

    from backends.llm.strict_schema import strict_form
    from generators.schemas import PROSE_MAX_CHARS, task_draft_schema
    from generators.task_llm import draft_problems

    schema = task_draft_schema()
    assert strict_form(schema) is not None
    valid = Draft202012Validator(schema).is_valid
    draft = _full_draft()
    assert valid(draft) and not draft_problems(draft)
    read = draft["oracle"][0]
    refused = [
        {**draft, "family": "sheet_questions"},
        {**draft, "evaluation": [{"function": "evaluate_answers", "args": {"keywords": ["4"]}}]},
        {**draft, "evaluation": [{"function": "evaluate_answer", "args": {"keywords": ["4"], "strict": True}}]},
        {**draft, "evaluation": [{"function": "evaluate_answer", "args": {"file_path": "data/answer.txt"}}]},
        {**draft, "oracle": [{"tool": "excel_read", "args": read["args"]}]},
        {**draft, "oracle": [{"tool": "excel_read_file", "args": {"path": "data/b.xlsx"}}]},
        {**draft, "baseline": [{"tool": "excel_read_file", "args": {**read["args"], "sheet_name": "S"}}]},
        {**draft, "misreadings": [{**draft["misreadings"][0], "plan": [{"tool": "excel_read_file", "args": {}}]}]},
        {**draft, "memory": [{**draft["memory"][0], "cue": "the source"}]},
        {**draft, "description": "x" * (PROSE_MAX_CHARS + 1)},
    ]
    assert [valid(bad) for bad in refused] == [False] * len(refused)


def test_which_optional_arguments_a_criterion_needs_is_left_to_the_catalog_and_still_refused():
    """The schema leaves out a check's rules on which of its optional arguments a value needs (a grammar
    engine reads them as "any object"); the draft's criteria are checked against the catalog's own
    schemas, and the problem is quoted back to the model."""
    from jsonschema import Draft202012Validator

    from generators.schemas import task_draft_schema
    from generators.task_llm import draft_problems

    neither = {**_full_draft(), "evaluation": [{"function": "evaluate_email_sent", "args": {"body_keywords": ["4"]}}]}
    assert Draft202012Validator(task_draft_schema()).is_valid(neither)
    assert [p for p in draft_problems(neither) if p.startswith("evaluation[0].args")]
    mailbox = {**_full_draft(), "evaluation": [{"function": "evaluate_contain",
                                                "args": {"doc_type": "email", "keywords": ["4"]}}]}
    assert [p for p in draft_problems(mailbox) if p.startswith("evaluation[0].args")]


def test_the_worked_example_is_a_draft_the_schema_and_the_draft_checks_accept():
    """The prompt's example is the offline builder's task in a fixed office, not text kept by hand:
    whatever the builder, the schema or the checks become, it is a reply that would be taken. It sits
    in the system part, before the schema, so every call shares it in a prompt cache."""
    from jsonschema import Draft202012Validator

    from backends.prompts import compact_json
    from generators.schemas import task_draft_schema
    from generators.task_llm import draft_problems, expand_steps, task_example

    office, example = task_example()
    assert Draft202012Validator(task_draft_schema()).is_valid(example) and not draft_problems(example)
    assert all(Draft202012Validator(task_draft_schema()).is_valid({**example, "oracle": expand_steps(
        example["oracle"], m["plan"])}) for m in example.get("misreadings", ()))
    system = _task_prompt("sheet_total", ["excel"])[0]["content"]
    assert compact_json(office) in system and office["excel"]["files"][0]["table"].startswith("Item,Units,Price\n")
    assert system.index(compact_json(example)) < system.index('{"$schema"')


def test_the_fallback_kinds_are_listed_once_each_with_the_apps_it_needs():
    user = _task_prompt("sheet_question", ["excel", "email"],
                        other_kinds={"sheet_total": ["excel"], "forward_mail": ["email"]})[1]["content"]
    assert '"other_kinds":{"sheet_total":["excel"],"forward_mail":["email"]}' in user
    assert user.count("sheet_total") == user.count("forward_mail") == user.count('["excel","email"]') == 1
    assert "other_kinds" not in _task_prompt("sheet_question", ["excel"])[1]["content"].split("```")[-1]


def test_a_history_of_weeks_asks_for_a_query_that_names_the_work():
    short = _task_prompt("sheet_total", ["excel"])[1]["content"]
    weeks = _task_prompt("sheet_total", ["excel"], long_history=True)[1]["content"]
    assert "the query name the work" not in short and "the query name the work" in weeks


def test_a_short_history_is_told_task_by_task_whether_its_query_names_the_work():
    """A model cannot draw "four in five": each plan says which (``DRAFT.named_query`` of them name it)."""
    named = _task_prompt("sheet_total", ["excel"], query_names_work=True)[1]["content"]
    pointing = _task_prompt("sheet_total", ["excel"], query_names_work=False)[1]["content"]
    assert "the query name the work" in named and "only point at the work" not in named
    assert "only point at the work" in pointing and "the query name the work" not in pointing


def test_two_tasks_of_one_office_share_their_prompt_up_to_the_plan():
    """Prefix caching: instructions, catalog and schema (system) and the office (start of the user
    message) are byte-identical across tasks; the task's own part comes last."""
    first, second = _task_prompt("sheet_total", ["excel"]), _task_prompt("sheet_question", ["excel"])
    assert first[0] == second[0] and "evaluate_excel_cell_value" in first[0]["content"]
    a, b = first[1]["content"], second[1]["content"]
    shared = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert a.index('"data/b.xlsx"') < a.index('"plan"') <= shared
    assert a[:a.index('"plan"')] == b[:b.index('"plan"')]


def test_a_draft_cut_at_the_reply_limit_is_asked_again_to_fit_under_the_same_limit():
    """A cut draft costs one more call, not the attempt: the model is told the limit it hit and
    to leave out the baseline plan; a draft cut again ends the attempt."""
    import json
    from datetime import datetime

    import pytest

    from backends.fake_llm import FakeLLMServer, scripted
    from backends.llm import LLMClient, LLMSettings
    from backends.llm.client import ReplyCutError
    from generators.task_llm import generate_task_llm

    draft = {"family": "sheet_question", "apps": ["excel"], "difficulty": "easy", "description": "Count the rows.",
             "intent": "Count the rows of the sheet.", "subtasks": ["Count the rows."],
             "evaluation": [{"function": "evaluate_answer", "args": {"keywords": ["4"]}}],
             "memory": [{"id": "m1", "kind": "fact", "text": "use the budget sheet", "value": "budget sheet"}],
             "query": "How many rows?"}
    ask = {"plan": {"apps": ["excel"], "task_kind": "sheet_question", "difficulty": "easy", "other_kinds": {}},
           "notes": {"excel": {"app": "excel", "files": []}}, "user": {"username": "dana", "name": "Dana Lee"},
           "colleagues": [], "now": datetime(2025, 3, 3, 9)}
    with FakeLLMServer(scripted(json.dumps(draft), json.dumps(draft))) as server:
        client = LLMClient(LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10,
                                       max_retries=0))
        server.queue_faults("truncated")
        assert generate_task_llm(client, **ask).intent == draft["intent"]
        first, second = (r.body for r in server.chat_requests())
    assert second["max_tokens"] == first["max_tokens"] == 4096
    assert "leave out the baseline plan" in second["messages"][1]["content"]
    assert "cut at the reply limit of 4096 tokens" in second["messages"][1]["content"]
    assert "leave out the baseline plan" not in first["messages"][1]["content"]
    with FakeLLMServer(scripted(json.dumps(draft), json.dumps(draft))) as server:
        server.queue_faults("truncated", "truncated")
        with pytest.raises(ReplyCutError):
            generate_task_llm(LLMClient(LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10,
                                                    max_retries=0)), **ask)
        assert len(server.chat_requests()) == 2


def test_a_misreading_names_the_oracle_calls_it_keeps_by_their_number():
    """A misreading's plan is the oracle's with one value changed: the calls it keeps are written as
    {"step": k} and read back as the oracle's k-th call; a step the oracle lacks is a problem quoted
    back to the model."""
    import json
    from datetime import datetime

    from backends.fake_llm import FakeLLMServer, scripted
    from backends.llm import LLMClient, LLMSettings
    from generators.task_llm import draft_problems, expand_steps, generate_task_llm, with_step_refs

    read = {"tool": "excel_read_file", "args": {"file_path": "data/b.xlsx"}}
    right = {"tool": "system_write_answer", "args": {"text": "4"}}
    wrong = {"tool": "system_write_answer", "args": {"text": "5"}}
    assert with_step_refs([read, right], [read, wrong]) == [{"step": 1}, wrong]
    assert expand_steps([read, right], [{"step": 1}, wrong]) == [read, wrong]
    draft = {"family": "sheet_question", "apps": ["excel"], "difficulty": "easy", "description": "Count the rows.",
             "intent": "Count the rows of the sheet.", "subtasks": ["Count the rows."],
             "evaluation": [{"function": "evaluate_answer", "args": {"keywords": ["4"]}}],
             "memory": [{"id": "m1", "kind": "fact", "text": "use the b.xlsx sheet", "value": "b.xlsx",
                         "superseded": ["c.xlsx"]}],
             "query": "How many rows?", "oracle": [read, right]}
    bad = {**draft, "misreadings": [{"memory": "m1", "dynamic": "superseded", "value": "c.xlsx",
                                     "plan": [{"step": 3}, wrong]}]}
    good = {**draft, "misreadings": [{"memory": "m1", "dynamic": "superseded", "value": "c.xlsx",
                                      "plan": [{"step": 1}, wrong]}]}
    assert any("names step 3, but the oracle has 2" in p for p in draft_problems(bad))
    ask = {"plan": {"apps": ["excel"], "task_kind": "sheet_question", "difficulty": "easy", "other_kinds": {}},
           "notes": {"excel": {"app": "excel", "files": []}}, "user": {"username": "dana", "name": "Dana Lee"},
           "colleagues": [], "now": datetime(2025, 3, 3, 9)}
    with FakeLLMServer(scripted(json.dumps(bad), json.dumps(good))) as server:
        client = LLMClient(LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10,
                                       max_retries=0))
        task = generate_task_llm(client, **ask)
        second = server.chat_requests()[1].body
    assert "names step 3" in second["messages"][1]["content"]
    (misreading,) = task.misreadings
    assert [(c.tool, c.args) for c in misreading.plan] == [(read["tool"], read["args"]), (wrong["tool"], wrong["args"])]


def test_calendars_and_messages_reach_the_prompt_in_short_forms_that_read_back_the_same():
    """A calendar's events as a CSV table and its free hours as ranges by day, a message without
    the id and cc the prompt says it has: less than half a calendar's tokens, and a reader of the
    prompt (the fake endpoint) gets the same notes back."""
    import json
    from datetime import date

    from backends.tokens import count_tokens
    from generators.task_llm import notes_from_prompt
    from surfers.offline import free_slots

    events = [{"summary": "Budget, Q3 review", "start": "2025-03-03 10:00:00", "end": "2025-03-03 11:30:00"},
              {"summary": "Offsite", "start": "2025-03-04 16:00:00", "end": "2025-03-05 09:30:00"}]
    calendar = {"user": "dana", "events": events, "free_slots": free_slots(events, date(2025, 3, 3))}
    odd = {"user": "lee", "events": [{"summary": "x", "start": "2025-03-03 10:00:30", "end": "2025-03-03 11:00:00"}],
           "free_slots": []}  # seconds the short form does not write: left as it is
    messages = [{"id": "Lunch.eml", "from": "a@x.com", "to": "b@x.com", "cc": "", "date": "Mon", "subject": "Lunch",
                 "body": "Noon?"},
                {"id": "Re_ Lunch.eml", "from": "b@x.com", "to": "a@x.com", "cc": "c@x.com", "date": "Mon",
                 "subject": "Re: Lunch", "body": "Yes."}]
    notes = {"calendar": {"app": "calendar", "calendars": [calendar, odd]},
             "email": {"app": "email", "mailboxes": [{"user": "dana", "messages": messages}]}}
    shown = notes_for_prompt(notes)
    short = shown["calendar"]["calendars"][0]
    assert short["free"]["2025-03-03"] == "09:00-10:00, 12:00-17:00" and "free_slots" not in short
    assert short["events"].splitlines()[1:] == ['2025-03-03 10:00,11:30,"Budget, Q3 review"',
                                                "2025-03-04 16:00,2025-03-05 09:30,Offsite"]
    assert shown["calendar"]["calendars"][1] == odd
    assert shown["email"]["mailboxes"][0]["messages"][0] == {"from": "a@x.com", "to": "b@x.com", "date": "Mon",
                                                             "subject": "Lunch", "body": "Noon?"}
    assert shown["email"]["mailboxes"][0]["messages"][1]["id"] == "Re_ Lunch.eml"
    assert notes_from_prompt(shown) == notes
    assert count_tokens(json.dumps(short)) * 2 < count_tokens(json.dumps(calendar))


def test_the_apps_notes_come_in_one_order_whatever_the_plan_order():
    """Two tasks of one office on the same apps planned in another order get the same notes, in
    the same order, so their prompts share the office's part in a prompt cache: the notes every
    kind is shown whole (mailboxes, calendars) first, then the files cut to the kind, each part in
    the registry's order."""
    from office_env.apps import office_apps

    notes = {app: {"app": app, "files": []} for app in ("pdf", "excel", "word")}
    notes |= {"email": {"app": "email", "mailboxes": []}, "calendar": {"app": "calendar", "calendars": []}}
    assert list(notes_for_prompt(notes)) == ["email", "calendar", *[app for app in office_apps() if app in notes
                                                                     and "files" in notes[app]]]
    assert list(notes_for_prompt(dict(reversed(list(notes.items()))))) == list(notes_for_prompt(notes))
