"""Whole Neo and Plus builds on the llm backend, over real HTTP to the local fake endpoint.

The endpoint answers every role prompt the way the offline backend would; tests wrap that
responder to inject faults and scripted verdicts, and read the recorded requests.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks
from backends.fake_llm import FakeLLMServer
from generators.dialogue_llm import DAY_RETRIES, DAYS_PER_CALL, days_per_call, parts
from generators.dialogue_offline import task_values
from generators.history_plan import events_from_prompt
from generators.model import MemoryPiece
from generators.plus_llm import OTHER_INSTRUCTIONS
from generators.plus_offline import tellable
from office_env import load_officebench
from office_env.seed_recast import substitute
from orchestrator.build import build
from orchestrator.fake_llm.offline_responder import default_responder
from orchestrator.fake_llm.prompt_roles import inputs_of, role_of
from orchestrator.plus import regenerate_split, told_candidates
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "officebench-sample"
SMALL = {"days": 2, "utterances_per_day": 10}
CALLS = len(parts(list(range(SMALL["days"])), days_per_call(SMALL["utterances_per_day"])))  # dialogue calls a round


def llm_config(server: FakeLLMServer, tmp_path: Path, **extra) -> BuildConfig:
    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"timeout": 10, "max_retries": 2}))
    return BuildConfig(seed=4, backend="llm", model="fake-model", base_url=server.url, llm_config=str(settings),
                       **SMALL, **extra)


def roles_requested(server: FakeLLMServer) -> list[str]:
    return [role_of(r.body["messages"]) for r in server.chat_requests() if r.status == 200]


def test_neo_build_over_http_passes_verify_and_records_usage(tmp_path):
    with FakeLLMServer(default_responder()) as server:
        summary = build(tmp_path / "ds", 3, llm_config(server, tmp_path), workers=1)
        roles = roles_requested(server)
    assert summary.accepted == 3
    assert {"planner", "surfer", "task_generator", "dialogue_day", "verifier"} <= set(roles)
    # one call per part of the days, and again for days whose answer repeats lines already said
    assert 3 * CALLS <= roles.count("dialogue_day") <= 3 * CALLS * (1 + DAY_RETRIES)
    for task in iter_tasks(tmp_path / "ds"):
        usage = task.record["provenance"]["tokens"]["llm"]
        assert usage["task_generator"]["calls"] == 1
        assert CALLS <= usage["dialogue_day"]["calls"] <= CALLS * (1 + DAY_RETRIES)
        assert all(u["prompt_tokens"] > 0 for u in usage.values())
        assert task.record["provenance"]["backend"] == "llm"
    # the model's histories follow the same plan: work threads, near-misses or corrections, marked
    records = [t.record for t in iter_tasks(tmp_path / "ds")]
    turns = [turn for r in records for s in r["dialogue"] for turn in s["turns"]]
    assert any(turn.get("thread", "").startswith("t") for turn in turns)
    # (other work needs room: days of ten turns are the task's; see the sibling works' test below)
    assert any(turn.get("distractor") or turn.get("superseded") for turn in turns)
    # the answers only the office gives (sent as "checked_values") are never said in passing
    from office_env.evaluation.keywords import Haystack
    from verifier.trace import office_values

    for r in records:
        answers = office_values(r["evaluation"], [*task_values([MemoryPiece.from_dict(m) for m in r["memory"]]), r["query"]])
        unmarked = [t["text"] for s in r["dialogue"] for t in s["turns"]
                    if not (t.get("evidence") or t.get("superseded") or t.get("distractor"))]
        assert not [(a, text) for a in answers for text in unmarked if Haystack(text).has(a)]
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "## Model usage" in card and "| dialogue_day |" in card
    proc = homer_here("verify", tmp_path / "ds")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_plus_build_over_http_keeps_the_seeds_and_passes_verify(tmp_path):
    with FakeLLMServer(default_responder()) as server:
        # days of 16 utterances: a short day tells the task's work first (its near misses said as other
        # works' requests among it) and other works only where they fit; days of 12 may leave them no room
        summary = regenerate_split(SAMPLE, tmp_path / "plus", seed=2, days=5, utterances_per_day=16,
                                   backend="llm", model="fake-model", base_url=server.url)
        roles = roles_requested(server)
        sent = {i["instruction"]: i.get("other_instructions") for i in
                (inputs_of(r.body["messages"]) for r in server.chat_requests()
                 if r.status == 200 and role_of(r.body["messages"]) == "plus_generator")}
    assert summary.written == 5 and roles.count("plus_generator") == 5
    assert len(roles) <= 4 * summary.written
    # each prompt gives the other seeds' instructions its history may tell, for its jobs for later
    seeds = load_officebench(SAMPLE).tasks
    # each seed's people re-cast, in its own instruction and in the others' its history may tell
    casts = {t.record["provenance"]["seed_task"]: t.record["provenance"]["recast"]["names"]
             for t in iter_tasks(tmp_path / "plus")}
    for seed, candidates in zip(seeds, told_candidates(seeds, set(), seed=2)):
        cast = casts[seed.id]
        mine, others = substitute(seed.instruction, cast), [substitute(c, cast) for c in candidates]
        assert sent[mine] == tellable(others, mine)[:OTHER_INSTRUCTIONS]
        assert not {substitute(s.instruction, cast) for s in seeds if s.folder == seed.folder} & set(sent[mine])
    told = [t["text"] for task in iter_tasks(tmp_path / "plus") for s in task.record["dialogue"] for t in s["turns"]
            if t["role"] == "user" and t.get("thread", "").startswith("w")]
    # another seed's clause, told as the task is (its file may be said in another turn, or referred back to)
    clauses = r"find who has the highest score in|set \w+'s score in|swap the rows of \w+ and \w+ in|write its number|email the summary to"
    assert any(re.search(clauses, text.lower()) for text in told)
    proc = homer_here("verify", tmp_path / "plus")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_malformed_json_is_repaired_and_the_repair_quotes_the_error(tmp_path):
    with FakeLLMServer(default_responder()) as server:
        server.queue_faults("malformed")  # the very first chat answer: the planner's
        summary = build(tmp_path / "ds", 1, llm_config(server, tmp_path), workers=1)
        first, second = server.chat_requests()[:2]
    assert summary.accepted == 1
    assert first.fault == "malformed" and role_of(second.body["messages"]) == "planner"
    assert "could not be used: invalid JSON" in second.body["messages"][-1]["content"]


def test_429_is_retried_after_its_delay(tmp_path):
    with FakeLLMServer(default_responder(), retry_after=0.5) as server:
        server.queue_faults("429")
        summary = build(tmp_path / "ds", 1, llm_config(server, tmp_path), workers=1)
        first, second = server.chat_requests()[:2]
    assert summary.accepted == 1
    assert first.status == 429 and second.status == 200
    assert second.started - first.ended >= 0.5


def test_persistent_500_on_one_task_is_an_error_not_a_drop_and_the_batch_finishes(tmp_path):
    poisoned: list[str] = []
    lock = threading.Lock()

    def responder(body):
        if role_of(body["messages"]) == "planner":
            key = json.dumps(body["messages"], sort_keys=True)
            with lock:
                if not poisoned:
                    poisoned.append(key)  # the first task's planner request, and every retry of it
            if key in poisoned:
                raise RuntimeError("upstream is down for this request")
        return default_responder()(body)

    server = FakeLLMServer(responder).start()
    summary = build(tmp_path / "ds", 2, llm_config(server, tmp_path), workers=1)
    failed = [r for r in server.chat_requests() if r.status == 500]
    assert summary.accepted == 2 and summary.attempts == 3
    assert summary.drops == {}  # the endpoint failed, not the task: never counted as a drop
    assert len(failed) == 3  # the first try and max_retries = 2 retries
    attempts = [json.loads(line) for line in (tmp_path / "ds" / "attempts.jsonl").read_text().splitlines()]
    assert attempts[0]["status"] == "error" and attempts[0]["reason"].startswith("error: endpoint: planner")
    assert [a["status"] for a in attempts[1:]] == ["accepted", "accepted"]
    info = json.loads((tmp_path / "ds" / "build.json").read_text())
    assert info["errors"] == 1 and info["drops"] == {} and info["status"] == "incomplete"
    assert "usage_not_kept" not in info  # its only call failed: nothing was spent
    # with the endpoint well again, --resume makes the task the outage cost, as a clean run would
    poisoned.clear()
    poisoned.append("nothing is poisoned now")
    try:
        again = build(tmp_path / "ds", 2, llm_config(server, tmp_path), workers=1, resume=True)
    finally:
        server.stop()
    info = json.loads((tmp_path / "ds" / "build.json").read_text())
    assert again.accepted == 2 and info["status"] == "complete" and "errors" not in info
    assert sorted(p.name for p in (tmp_path / "ds" / "tasks").iterdir()) == ["neo-00000", "neo-00001"]


def test_an_endpoint_that_stays_down_stops_the_build_and_resume_finishes_it(tmp_path, monkeypatch):
    from orchestrator import endpoint_guard

    monkeypatch.setattr(endpoint_guard, "PAUSES", (0.05, 0.05))
    down = threading.Event()

    def responder(body):
        if down.is_set():
            raise RuntimeError("upstream is down")
        return default_responder()(body)

    with FakeLLMServer(responder, fail_model=None) as server:
        config = llm_config(server, tmp_path)
        Path(config.llm_config).write_text(json.dumps({"timeout": 10, "max_retries": 0}))  # no backoff to wait out
        first = build(tmp_path / "ds", 1, config, workers=1)  # one task made while the endpoint is up
        assert first.accepted == 1
        down.set()
        with pytest.raises(endpoint_guard.EndpointDown, match=r"endpoint down: 1 of 3 task\(s\) done.*--resume"):
            build(tmp_path / "ds", 3, config, workers=1, resume=True)
        calls_while_down = server.chat_request_total
        progress = (tmp_path / "ds" / ".progress.jsonl").read_text().splitlines()
        assert sum('"status": "error"' in line for line in progress) == endpoint_guard.THRESHOLD * 4
        down.clear()
        done = build(tmp_path / "ds", 3, config, workers=1, resume=True)
    # stopped after a bounded number of calls, and the attempts the outage ended were run again
    assert calls_while_down < 200
    assert done.accepted == 3 and not [k for k in done.drops if not k.startswith("gate ")]  # no endpoint drop
    info = json.loads((tmp_path / "ds" / "build.json").read_text())
    assert info["status"] == "complete" and "errors" not in info


def test_rejected_round_one_puts_the_feedback_in_round_two_prompts(tmp_path):
    feedback = "day 2 needs a few more lines about the weekend"
    rejected: list[bool] = []

    def responder(body):
        if role_of(body["messages"]) == "verifier" and not rejected:
            rejected.append(True)
            return json.dumps({"passed": False, "feedback": feedback})
        return default_responder()(body)

    with FakeLLMServer(responder) as server:
        summary = build(tmp_path / "ds", 1, llm_config(server, tmp_path), workers=1)
        requests = [r for r in server.chat_requests() if role_of(r.body["messages"]) == "dialogue_day"]
    assert summary.accepted == 1
    # each round asks for every day once (again for days whose answer repeats a line already said)
    told = [feedback in r.body["messages"][-1]["content"] for r in requests]
    first_round = told.index(True)
    assert not any(told[:first_round]) and all(told[first_round:])
    for count in (first_round, len(told) - first_round):
        assert CALLS <= count <= CALLS * (1 + DAY_RETRIES)
    record = next(iter_tasks(tmp_path / "ds")).record
    assert record["provenance"]["rounds"] == 2 and record["provenance"]["verifier_feedback"] == [feedback]


def test_a_rerun_with_the_cache_sends_no_request(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with FakeLLMServer(default_responder()) as server:
        config = llm_config(server, tmp_path, cache_path=str(cache))
        build(tmp_path / "first", 2, config, workers=1)
        sent = len(server.chat_requests())
        summary = build(tmp_path / "second", 2, config, workers=1)
        assert len(server.chat_requests()) == sent
    assert summary.accepted == 2
    first = sorted(p.read_bytes() for p in (tmp_path / "first" / "tasks").glob("*/task.json"))
    second = sorted(p.read_bytes() for p in (tmp_path / "second" / "tasks").glob("*/task.json"))
    assert [json.loads(b)["dialogue"] for b in first] == [json.loads(b)["dialogue"] for b in second]
    usage = json.loads(second[0])["provenance"]["tokens"]["llm"]
    assert all(u["cached_calls"] == u["calls"] for u in usage.values())


def test_offline_roles_are_answered_procedurally_and_the_model_writes_the_rest(tmp_path):
    offline_roles = ("planner", "surfer", "task_generator")
    with FakeLLMServer(default_responder()) as server:
        config = llm_config(server, tmp_path, llm_overrides=(("offline_roles", json.dumps(offline_roles)),))
        summary = build(tmp_path / "mixed", 1, config, workers=1)
        roles = roles_requested(server)
    assert summary.accepted == 1
    assert set(roles) == {"dialogue_day", "verifier"}  # nothing else asked the model
    task = next(iter_tasks(tmp_path / "mixed"))
    assert set(task.record["provenance"]["tokens"]["llm"]) == {"dialogue_day", "verifier"}
    offline = build(tmp_path / "offline", 1, BuildConfig(seed=4, **SMALL), workers=1)
    assert offline.accepted == 1  # the same procedural draft: its task, with the model's dialogue
    procedural = next(iter_tasks(tmp_path / "offline")).record
    assert (task.record["description"], task.record["evaluation"]) == (procedural["description"],
                                                                      procedural["evaluation"])
    assert task.record["dialogue"] != procedural["dialogue"]


def test_build_cli_refuses_a_remote_endpoint_without_a_key(tmp_path):
    proc = homer_here("build", "--out", tmp_path / "x", "--n", "1", "--backend", "llm", "--base-url",
                      "https://models.example.invalid/v1", env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("fault", ["fenced", "truncated"])
def test_fenced_and_truncated_answers_still_build(tmp_path, fault):
    with FakeLLMServer(default_responder()) as server:
        server.queue_faults(fault, fault)
        summary = build(tmp_path / "ds", 1, llm_config(server, tmp_path), workers=1)
        faults = [r.fault for r in server.chat_requests()][:2]
    assert summary.accepted == 1 and faults == [fault, fault]


def test_plans_follow_the_offline_walk_so_one_office_repeats_no_family(tmp_path):
    """The planner is asked for the kind the offline planner's seeded walk names (with the kinds of the
    office's other tasks), and the task generator gets the walk's fallbacks: an office's tasks differ."""
    from orchestrator.planner import planned_here, world_family

    with FakeLLMServer(default_responder()) as server:
        summary = build(tmp_path / "ds", 8, llm_config(server, tmp_path), workers=1)
        plans = [inputs_of(r.body["messages"]) for r in server.chat_requests()
                 if r.status == 200 and role_of(r.body["messages"]) == "planner"]
        tasks = [inputs_of(r.body["messages"]) for r in server.chat_requests()
                 if r.status == 200 and role_of(r.body["messages"]) == "task_generator"]
    counts = [1, 2, 3]
    assert [p["suggested_kind"] for p in plans] == [world_family(4, i, counts) for i in range(summary.attempts)]
    assert [p["kinds_planned_here"] for p in plans] == [planned_here(4, i, counts) for i in range(summary.attempts)]
    # fallbacks are the walk's other kinds of the same app count not yet planned in this office (an office
    # with many tasks of one app count may have used them all)
    assert all(t["plan"]["task_kind"] not in t["plan"]["other_kinds"] for t in tasks)
    assert sum(bool(t["plan"]["other_kinds"]) for t in tasks) >= len(tasks) - 2
    families = [json.loads(line)["family"] for line in (tmp_path / "ds" / "attempts.jsonl").read_text().splitlines()]
    # a kind the explored notes cannot serve falls back along the walk: a repeat stays rare (a random
    # suggestion repeated families in one office: 9 duplicates in 39 attempts)
    assert summary.accepted == 8 and len(families) - len(set(families)) <= 1


def test_the_dialogue_prompt_names_the_office_currency(tmp_path):
    from office_env.synthesis.world import make_world

    with FakeLLMServer(default_responder()) as server:
        build(tmp_path / "ds", 1, llm_config(server, tmp_path), workers=1)
        days = [r.body["messages"] for r in server.chat_requests()
                if r.status == 200 and role_of(r.body["messages"]) == "dialogue_day"]
    record = next(iter_tasks(tmp_path / "ds")).record
    currency = make_world(record["provenance"]["world_seed"]).currency
    assert days and all(inputs_of(m)["currency"] == currency for m in days)
    assert all(f"the office's currency, {currency}" in m[1]["content"] for m in days)  # the task's own part


def test_inputs_block_is_what_the_prompt_shows():
    from backends.prompts import render

    messages = render("planner", inputs={"app_count": 1, "suggested_kind": "x", "days": 5, "utterances_per_day": 70},
                      schema={}, apps=["word"], kinds=[("x", ("word",))])
    assert role_of(messages) == "planner" and inputs_of(messages)["suggested_kind"] == "x"


def test_a_price_table_gives_the_cost_of_each_task_and_of_the_dataset(tmp_path):
    settings = tmp_path / "priced.toml"
    settings.write_text('timeout = 10\nmax_retries = 1\n[prices]\n"fake-model" = [0.5, 2.0]\n')
    with FakeLLMServer(default_responder()) as server:
        config = BuildConfig(seed=4, backend="llm", model="fake-model", base_url=server.url, llm_config=str(settings),
                             **SMALL)
        build(tmp_path / "ds", 2, config, workers=1)
    records = [t.record for t in iter_tasks(tmp_path / "ds")]
    for record in records:
        spent = record["provenance"]["tokens"]["llm"]
        expected = sum(u["prompt_tokens"] * 0.5 + u["completion_tokens"] * 2.0 for u in spent.values()) / 1000
        assert record["provenance"]["cost_usd"] == pytest.approx(expected)
    total = sum(r["provenance"]["cost_usd"] for r in records)
    assert f"Cost from the price table: {total:.4f} USD" in (tmp_path / "ds" / "README.md").read_text()


def test_model_timestamps_are_kept_when_usable_and_replaced_otherwise():
    import random
    from datetime import date

    from generators.dialogue_llm import turn_times

    day = date(2024, 5, 6)
    good = [{"ts": "2024-05-06T09:00:00"}, {"ts": "2024-05-06T09:00:30"}]
    assert turn_times(good, day, random.Random(1)) == ["2024-05-06T09:00:00", "2024-05-06T09:00:30"]
    for bad in ([{"ts": "2024-05-06T09:00:00"}, {"ts": "2024-05-06T08:00:00"}],  # going back
                [{"ts": "2024-05-07T09:00:00"}, {"ts": "2024-05-07T09:01:00"}],  # another day
                [{"ts": "2024-05-06T09:00:00"}, {}]):                              # one missing
        times = turn_times(bad, day, random.Random(1))
        assert all(t.startswith("2024-05-06") for t in times) and times[0] < times[1]


def test_solvability_and_leakage_gates_run_the_model_agent(tmp_path):
    with FakeLLMServer(default_responder()) as server:
        config = llm_config(server, tmp_path, gates=("solvability", "leakage"))
        summary = build(tmp_path / "ds", 2, config, workers=1)
        agent_requests = [r for r in server.chat_requests() if role_of(r.body["messages"]) == "agent"]
    assert summary.accepted == 2
    for task in iter_tasks(tmp_path / "ds"):
        gates = task.record["provenance"]["gates"]
        assert gates["solvability"]["passed"] and "llm agent given only the description passes" in gates["solvability"]["detail"]
        assert gates["leakage"]["passed"] and "given only the intent fails" in gates["leakage"]["detail"]
    requests = [r.body["messages"][1]["content"] for r in agent_requests]
    descriptions = [t.record["description"] for t in iter_tasks(tmp_path / "ds")]
    intents = [t.record["intent"] for t in iter_tasks(tmp_path / "ds")]
    assert any(d in text for d in descriptions for text in requests)
    assert any(i in text for i in intents for text in requests)


def test_tokens_of_dropped_tasks_are_counted(tmp_path):
    verdicts = []

    def responder(body):
        if role_of(body["messages"]) == "verifier" and len(verdicts) < 4:  # both rounds of two attempts rejected
            verdicts.append(False)
            return json.dumps({"passed": False, "feedback": "day 1 is off topic"})
        return default_responder()(body)

    with FakeLLMServer(responder) as server:
        config = llm_config(server, tmp_path, max_rounds=2)  # two rejected rounds an attempt say as much as five
        Path(config.llm_config).write_text(json.dumps({"timeout": 10, "max_retries": 2,
                                                       "prices": {"fake-model": [0.001, 0.002]}}))
        summary = build(tmp_path / "ds", 1, config, workers=1)
    info = json.loads((tmp_path / "ds" / "build.json").read_text())
    assert summary.accepted == 1 and info["drops"] == {"verifier": 2} and summary.attempts == 3
    spent = info["usage_not_kept"]
    assert spent["verifier"]["calls"] == 4 and spent["dialogue_day"]["prompt_tokens"] > 0
    tokens = sum(v["prompt_tokens"] + v["completion_tokens"] for v in spent.values())
    assert 0.001 * tokens / 1000 <= info["cost_not_kept_usd"] <= 0.002 * tokens / 1000
    assert f"({info['cost_not_kept_usd']:.4f} USD) more" in (tmp_path / "ds" / "README.md").read_text()
    kept = json.loads(next((tmp_path / "ds" / "tasks").glob("*/task.json")).read_text())
    assert kept["provenance"]["tokens"]["llm"]["verifier"]["calls"] == 1  # the kept task's calls are its own


def test_the_llm_histories_have_no_colleague_the_office_shows_away_doing_other_work(tmp_path):
    """Each day's prompt lists the colleagues the user's mailbox shows away (as the world check
    reads those mails), and a day inside one's span has no other-work turn naming them."""
    import dataclasses

    from office_env import Workspace, mail_store
    from office_env.synthesis.check import away_span

    with FakeLLMServer(default_responder()) as server:
        config = llm_config(server, tmp_path)
        config = dataclasses.replace(config, days=5, utterances_per_day=24)
        summary = build(tmp_path / "ds", 2, config, workers=1)
        prompts = [inputs_of(r.body["messages"]) for r in server.chat_requests()
                   if r.status == 200 and role_of(r.body["messages"]) == "dialogue_day"]
    assert summary.accepted == 2
    expected, away_days = set(), 0
    for task in iter_tasks(tmp_path / "ds"):
        record = task.record
        user = record["user"]["username"]
        spans = []
        for _, mail in mail_store.messages(Workspace(tmp_path / "ds" / "tasks" / record["id"] / "testbed"), user):
            sent = mail.when()
            span = away_span(mail.body, sent.date()) if sent and not mail.subject.startswith(("Re:", "Fwd:")) else None
            if span is not None:  # the sender's user name is their first name, lower-cased
                spans.append((mail.sender.split("@")[0].capitalize(), span[0].isoformat(), span[1].isoformat()))
        expected.add(tuple(sorted(spans)))
        for session in record["dialogue"]:
            for name, lo, hi in spans:
                if lo <= session["date"] <= hi:
                    away_days += 1
                    assert not [t["text"] for t in session["turns"] if t.get("thread", "").startswith("w")
                                and re.search(rf"\b{name}\b", t["text"])], (record["id"], session["date"], name)
    sent = {tuple(sorted((a["name"], a["first"], a["last"]) for a in p["away"])) for p in prompts}
    assert sent <= expected and any(sent)
    assert away_days > 0


def test_the_fake_endpoint_refuses_other_instructions_it_cannot_bound():
    from orchestrator.fake_llm.plus_answer import MAX_OTHER_CHARS, MAX_OTHERS, answer_plus

    base = {"instruction": "Find who has the highest score in data/scores.xlsx.", "username": "alice",
            "now": "2024-05-03 09:30 (Friday)", "days": 2, "utterances_per_day": 6}
    for bad in ("Send an email", [1], ["Send an email."] * (MAX_OTHERS + 1), ["y" * (MAX_OTHER_CHARS + 1)]):
        assert "'other_instructions'" in answer_plus({**base, "other_instructions": bad}, "")["error"]
    good = answer_plus({**base, "other_instructions": ["Email Bob the budget figures from budget.xlsx."]}, "")
    assert "error" not in good and len(good["dialogue"]) == 2


def test_the_llm_histories_tell_the_sibling_works_unmarked_as_the_plan_gives_them(tmp_path):
    """The dialogue prompts carry the sibling works' events (``w`` threads, no mark) beside the
    task's; the written histories state their values in those threads, never marked."""
    with FakeLLMServer(default_responder()) as server:
        config = dataclasses.replace(llm_config(server, tmp_path), utterances_per_day=40)
        summary = build(tmp_path / "ds", 2, config, workers=1)
        asked = [inputs_of(r.body["messages"]) for r in server.chat_requests()
                 if r.status == 200 and role_of(r.body["messages"]) == "dialogue_day"]
    assert summary.accepted == 2
    sibling: dict[tuple, list] = {}  # the task's values -> its sibling works' events
    for inputs in asked:
        sibling.setdefault(tuple(inputs["task_values"]), []).extend(
            e.to_dict() for d in inputs["days"] for e in events_from_prompt(d["events"])
            if e.thread.startswith("w") and not e.mark)
    assert {"raise", "state"} <= {e["move"] for events in sibling.values() for e in events}
    told = []
    for task in iter_tasks(tmp_path / "ds"):
        r = task.record
        values = tuple(sorted(set(task_values([MemoryPiece.from_dict(m) for m in r["memory"]]))))
        stated = {e["say"] for e in sibling[values] if e["move"] == "state"}
        told += [t for s in r["dialogue"] for t in s["turns"] if t["role"] == "user" and any(v in t["text"] for v in stated)]
    assert told and all(t.get("thread", "").startswith("w") and not t.get("evidence") for t in told)
    # beside them, other work and jobs for later, on threads of their own
    threads = {t.get("thread", "") for task in iter_tasks(tmp_path / "ds") for s in task.record["dialogue"]
               for t in s["turns"]}
    assert {t for t in threads if t.startswith("w")} - {t.get("thread") for t in told}


def test_a_plus_history_is_written_in_parts_that_fit_the_limit_and_join_into_one():
    """Under a 1,024-token reply limit a 6-day history comes in parts of 3 days; the first, cut at
    the limit (the model writes its JSON spaced, not compact as asked), is asked again as two smaller
    parts (never with a higher limit); the later parts are shown the memory and its marks so far; put
    together they are the history one whole answer gives."""
    from backends.fake_llm.server import Reply
    from backends.llm import LLMClient, LLMSettings
    from generators.plus_llm import part_days, regenerate_llm
    from orchestrator.fake_llm.plus_answer import answer_plus

    def spaced(body: dict) -> Reply:
        reply = default_responder()(body)
        assert isinstance(reply, Reply) and reply.content is not None
        return Reply(content=json.dumps(json.loads(reply.content)))

    seed = load_officebench(SAMPLE).tasks[0]
    assert part_days(6, 12, 1024) == [[1, 2, 3], [4, 5, 6]] and part_days(28, 11, 4096) == [
        list(range(1, 11)), list(range(11, 21)), list(range(21, 29))]
    with FakeLLMServer(spaced) as server:
        settings = LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10, max_retries=0,
                               max_tokens={"default": 1024})
        with LLMClient(settings) as client:
            draft = regenerate_llm(client, seed, days=6, utterances_per_day=12)
        asked = [inputs_of(r.body["messages"]) for r in server.chat_requests()]
        limits = {r.body["max_tokens"] for r in server.chat_requests()}
    parts = [a["part"] for a in asked]
    assert parts[:3] == [[1, 2, 3], [1], [2, 3]] and limits == {1024}  # the first part cut, asked again in two
    answered = [part for i, part in enumerate(parts) if not any(  # a part asked again in smaller ones was cut
        later[0] == part[0] and len(later) < len(part) for later in parts[i + 1:])]
    assert [day for part in answered for day in part] == [1, 2, 3, 4, 5, 6] and max(map(len, parts)) == 3
    assert "memory" not in asked[0] and "memory" not in asked[1]
    assert all(a["memory"] == asked[2]["memory"] for a in asked[2:]) and set(asked[-1]["marked"][0]) == {
        "memory", "mark", "day"}
    whole = answer_plus({k: v for k, v in asked[0].items() if k != "part"}, "")
    assert [m.to_dict() for m in draft.memory] == whole["memory"] and draft.intent == whole["intent"]
    assert [[(t.role, t.text) for t in s.turns] for s in draft.sessions] == [
        [(next(iter(t)), next(iter(t.values()))) for t in d["turns"]] for d in whole["dialogue"]]


def test_a_dialogue_is_asked_in_parts_that_fit_and_a_cut_part_again_in_halves(tmp_path):
    """Days are asked as many at a time as the reply limit is planned to hold (three of 70 turns
    at 4,096 tokens, so five days take two calls); a part cut at the limit anyway (the model writes
    its JSON spaced, not compact as asked) is asked again as two halves under the same limit."""
    from backends.fake_llm.server import Reply
    assert days_per_call(70) == DAYS_PER_CALL == 3 and [len(p) for p in parts(list(range(5)), 3)] == [3, 2]
    assert days_per_call(10, 800) == 4 and days_per_call(70, 2048) == 1

    def spaced(body: dict) -> Reply:
        reply = default_responder()(body)
        assert isinstance(reply, Reply) and reply.content is not None
        return Reply(content=json.dumps(json.loads(reply.content)))

    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"timeout": 10, "max_retries": 2, "max_tokens": {"default": 4096,
                                                                                      "dialogue_day": 800}}))
    with FakeLLMServer(spaced) as server:
        config = BuildConfig(seed=4, backend="llm", model="fake-model", base_url=server.url, llm_config=str(settings),
                             days=4, utterances_per_day=10)
        summary = build(tmp_path / "ds", 1, config, workers=1)
        asked = [(len(inputs_of(r.body["messages"])["days"]), r.body["max_tokens"]) for r in server.chat_requests()
                 if r.status == 200 and role_of(r.body["messages"]) == "dialogue_day"]
    assert asked[:3] == [(4, 800), (2, 800), (2, 800)], asked
    assert summary.accepted == 1
