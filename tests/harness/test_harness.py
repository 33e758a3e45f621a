"""The agent-running harness: agents (oracle, none, llm over real HTTP), every history-context mode,
trials and pass^k, corrupt tasks, the output folder, and ``homer eval``'s
output and exit codes (run in this process: ``homer_cli``).

One small offline dataset is built once for the module; every run evaluates it (or a copy).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks
from backends.fake_llm import FakeLLMServer
from backends.task_record import RecordError, parse_record
from harness.agents import REQUEST_MARKER, Episode, LLMAgent, agent_messages
from harness.context import ContextConfig
from harness.report import metrics, table
from harness.runner import EvalConfig, EvalError, evaluate, record_problem
from office_env import Workspace, default_registry
from orchestrator.build import build
from orchestrator.fake_llm.agent_answer import choose_plan, dataset_agent_plans, request_of
from orchestrator.fake_llm.offline_responder import agent_responder, offline_responder
from orchestrator.fake_llm.prompt_roles import ROLE_OPENINGS, role_of
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow

LONG = ContextConfig(mode="long-context")
CONTEXTS = {
    "long-context": LONG,
    "rag-raw-session": ContextConfig(mode="rag", storage="raw", granularity="session", top_k=2),
    "rag-raw-utterance": ContextConfig(mode="rag", storage="raw", granularity="utterance", top_k=5),
    "rag-summary-session": ContextConfig(mode="rag", storage="summary", granularity="session", top_k=2),
    "rag-summary-chunk": ContextConfig(mode="rag", storage="summary", granularity="chunk", top_k=1, chunk_sessions=2),
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("harness") / "ds"
    summary = build(out, 6, BuildConfig(seed=5, days=3, utterances_per_day=16), workers=1)
    assert summary.accepted == 6
    return out


@pytest.fixture(scope="module")
def records(dataset: Path) -> dict[str, dict]:
    return {t.id: t.record for t in iter_tasks(dataset)}


def homer(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = homer_here(*args, env=env)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def read_rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def llm_settings(tmp_path: Path, **extra) -> str:
    path = tmp_path / "llm.json"
    path.write_text(json.dumps({"timeout": 10, "max_retries": 0, **extra}))
    return str(path)


# -- scripted agents ---------------------------------------------------------------------------

def test_trials_copy_testbeds_into_the_runs_work_folder_and_leave_none_behind(dataset, tmp_path, monkeypatch):
    """The trials' copies go to the work folder (``backends.scratch``, here ``HOMER_SCRATCH``), never
    under the run folder, and that folder is gone when the run ends."""
    scratch = tmp_path / "scratch"
    monkeypatch.setenv("HOMER_SCRATCH", str(scratch))
    copies = []
    real = Workspace.copy_to

    def copy_to(self, dest, **kwargs):
        copies.append(Path(dest))
        return real(self, dest, **kwargs)

    monkeypatch.setattr(Workspace, "copy_to", copy_to)
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="none", context=LONG))
    assert not summary.skipped and len(copies) >= len(summary.rows)
    assert all(scratch in copy.parents for copy in copies), copies
    assert sorted(p.name for p in scratch.iterdir()) == []
    assert not (tmp_path / "run" / ".work").exists()


def test_oracle_agent_passes_every_task_and_writes_the_run_folder(dataset, records, tmp_path):
    before = {t.id: Workspace(t.testbed).snapshot() for t in iter_tasks(dataset)}
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="oracle", context=LONG))
    assert summary.pass_rate == 1.0 and not summary.skipped and not summary.errors
    rows = read_rows(tmp_path / "run")
    assert [(r["id"], r["trial"]) for r in rows] == sorted((i, 1) for i in records)
    for row in rows:
        record = records[row["id"]]
        assert row["passed"] and row["app_count"] == record["app_count"]
        assert row["steps"] == len(record["oracle"]) == row["trajectory"]["step_count"]
        assert all(c["passed"] for c in row["criteria"]) and len(row["criteria"]) == len(record["evaluation"])
        assert all(len(s["observation"]) <= 510 for s in row["trajectory"]["steps"])
        assert row["context_tokens"] > 0 and row["evidence_recall"] is None and row["error"] is None
    report = (tmp_path / "run" / "report.md").read_text()
    for count in sorted({r["app_count"] for r in records.values()}):
        label = f"{count} app{'s' if count > 1 else ''}"
        tasks = sum(r["app_count"] == count for r in records.values())
        assert f"| {label} | {tasks} | 100.0 [100.0, 100.0] | 1.00 [1.00, 1.00] |" in report
    assert "| **overall** | 6 | 100.0 [100.0, 100.0] | 1.00 [1.00, 1.00] |" in report
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["config"]["agent"] == "oracle" and run["config"]["context"]["mode"] == "long-context"
    assert run["metrics"]["groups"]["overall"]["pass_rate"] == 1.0
    assert not (tmp_path / "run" / ".work").exists()
    # the dataset's testbeds are untouched (the runs used copies)
    assert all(Workspace(t.testbed).snapshot().diff(before[t.id]).empty for t in iter_tasks(dataset))


def test_none_agent_passes_nothing(dataset, tmp_path):
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="none", context=LONG, workers=2))
    assert summary.pass_rate == 0.0 and summary.overall["tasks"] == 6
    assert all(r["steps"] == 0 and not r["passed"] for r in summary.rows)


def test_officebench_semantics_fails_exactly_the_criteria_officebench_has_no_function_for(dataset, records, tmp_path):
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="oracle", context=LONG, semantics="officebench"))
    ours = {"evaluate_answer", "evaluate_calendar_event", "evaluate_calendar_no_event", "evaluate_email_sent",
            "evaluate_email_not_sent", "evaluate_stated_values", "evaluate_not_pasted"}
    for row in summary.rows:
        for result in row["criteria"]:
            assert result["passed"] == (result["function"] not in ours), (row["id"], result)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["config"]["semantics"] == "officebench"
    with pytest.raises(EvalError, match="--semantics 'loose'"):
        EvalConfig(agent="oracle", context=LONG, semantics="loose").validate()


def test_step_cap_stops_the_agent(dataset, records, tmp_path):
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="oracle", context=LONG, step_cap=1))
    for row in summary.rows:
        assert row["steps"] <= 1
        if len(records[row["id"]]["oracle"]) > 1:
            assert row["trajectory"]["stop_reason"] == "step_cap" and not row["passed"]


def test_trials_give_pass_k(dataset, tmp_path):
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="oracle", context=LONG, trials=2, workers=2))
    assert len(summary.rows) == 12 and [r["trial"] for r in summary.rows[:2]] == [1, 2]
    assert summary.pass_k == 1.0 and summary.pass_rate == 1.0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "pass^2 (%)" in report and "pass@1 (%)" in report


def test_pass_k_counts_a_task_only_when_every_trial_passes():
    rows = [{"id": "a", "trial": 1, "app_count": 1, "passed": True, "steps": 2, "context_tokens": 10},
            {"id": "a", "trial": 2, "app_count": 1, "passed": False, "steps": 4, "context_tokens": 10},
            {"id": "b", "trial": 1, "app_count": 2, "passed": True, "steps": 1, "context_tokens": 30},
            {"id": "b", "trial": 2, "app_count": 2, "passed": True, "steps": 1, "context_tokens": 30}]
    data = metrics(rows, trials=2)
    overall = data["groups"]["overall"]
    assert overall["pass_rate"] == 0.75 and overall["pass_k"] == 0.5
    assert data["groups"]["1"]["pass_k"] == 0.0 and data["groups"]["2"]["pass_k"] == 1.0
    assert data["groups"]["3"]["tasks"] == 0 and overall["steps"] == 2.0 and overall["context_tokens"] == 20
    text = table(data, rag=False)
    assert "| 1 app | 1 | 50.0 [50.0, 50.0] | 0.0 [0.0, 0.0] | - |" in text and "| 3 apps | 0 | - | - |" in text


# -- history context modes -------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CONTEXTS))
def test_every_context_mode_runs_and_reports_tokens(dataset, tmp_path, name):
    config = CONTEXTS[name]
    summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="oracle", context=config))
    assert summary.pass_rate == 1.0
    for row in summary.rows:
        assert row["context_tokens"] > 0 and row["context_units"]
        if config.mode == "rag":
            assert 0.0 <= row["evidence_recall"] <= 1.0 and len(row["context_units"]) <= config.top_k
        else:
            assert row["evidence_recall"] is None
    report = (tmp_path / "run" / "report.md").read_text()
    assert ("retrieval recall (%)" in report) == (config.mode == "rag")
    assert config.label() in report
    if config.storage == "summary":
        assert list((tmp_path / "run" / ".cache").rglob("*.json"))


def test_rag_ranked_by_embeddings_from_the_endpoint(dataset, tmp_path):
    context = ContextConfig(mode="rag", granularity="utterance", top_k=4, embeddings="fake-embed")
    with FakeLLMServer() as server:
        summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="oracle", context=context, base_url=server.url,
                                                                llm_config=llm_settings(tmp_path)))
        embeddings = [r for r in server.requests if r.path.endswith("/embeddings")]
    assert summary.pass_rate == 1.0 and len(embeddings) >= 6
    assert all(len(r["context_units"]) == 4 and r["evidence_recall"] is not None for r in summary.rows)
    assert "emb=fake-embed" in (tmp_path / "run" / "report.md").read_text()


def test_homer_eval_rag_prints_the_table(dataset, tmp_path):
    proc = homer("eval", dataset, "--agent", "oracle", "--mode", "rag", "--granularity", "utterance",
                 "--top-k", "3", "--workers", "2", "--out", tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert "| **overall** | 6 | 100.0 [100.0, 100.0] |" in proc.stdout and "retrieval recall (%)" in proc.stdout
    rows = read_rows(tmp_path / "run")
    assert len(rows) == 6 and all(len(r["context_units"]) == 3 and r["context_units"][0].startswith("d") for r in rows)
    assert {"results.jsonl", "report.md", "run.json"} <= {p.name for p in (tmp_path / "run").iterdir()}


def test_homer_eval_rag_warns_when_retrieval_returns_the_whole_history(dataset, tmp_path):
    whole = homer("eval", dataset, "--agent", "oracle", "--mode", "rag", "--granularity", "session", "--top-k", "5",
                  "--out", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    assert "warning: retrieval returned the whole history for 6 of 6 task(s)" in whole.stderr
    assert "the whole history for 6 of 6" in (tmp_path / "whole" / "report.md").read_text()
    default = homer("eval", dataset, "--agent", "oracle", "--mode", "rag", "--out", tmp_path / "default")
    assert default.returncode == 0, default.stderr
    assert "whole history" not in default.stderr
    rows, long_rows = read_rows(tmp_path / "default"), read_rows(tmp_path / "whole")
    assert all(len(r["context_units"]) == 20 and "t" in r["context_units"][0] for r in rows)  # 20 utterances
    assert max(r["context_tokens"] for r in rows) < min(r["context_tokens"] for r in long_rows)


# -- the llm agent over real HTTP -----------------------------------------------------------

def test_llm_agent_through_the_fake_endpoint(dataset, records, tmp_path):
    plans = dataset_agent_plans(dataset)
    config = dict(context=CONTEXTS["rag-raw-utterance"], model="fake-model", llm_config=llm_settings(tmp_path))
    with FakeLLMServer(agent_responder(plans, mode="oracle")) as server:
        passed = evaluate(dataset, tmp_path / "oracle", EvalConfig(agent="llm", base_url=server.url, workers=2, **config))
        requests = [r.body for r in server.chat_requests()]
    with FakeLLMServer(agent_responder(plans, mode="none")) as server:
        failed = evaluate(dataset, tmp_path / "none", EvalConfig(agent="llm", base_url=server.url, **config))
    assert passed.pass_rate == 1.0 and not passed.errors
    assert failed.pass_rate == 0.0 and all(r["steps"] == 0 for r in failed.rows)
    for row in passed.rows:
        assert row["steps"] == len(records[row["id"]]["oracle"])
        assert row["trajectory"]["final_message"] and row["trajectory"]["usage"]["calls"] == row["steps"] + 1
    assert "## Agent model usage" in (tmp_path / "oracle" / "report.md").read_text()
    calls = sum(row["trajectory"]["usage"]["calls"] for row in passed.rows)
    assert f"Agent model usage: {calls} call(s), " in (tmp_path / "oracle" / "report.html").read_text()
    # what the agent saw: every tool, and never the criteria, description, memory, evidence or oracle
    assert all(role_of(body["messages"]) == "agent" for body in requests)
    assert {t["function"]["name"] for t in requests[0]["tools"]} == set(default_registry().names)
    seen = {}
    for body in requests:
        seen.setdefault(request_of(body["messages"]), []).append(
            "\n".join(m.get("content") or "" for m in body["messages"][:2]))
    for record in records.values():
        prompts = seen[record["intent"]]
        for prompt in prompts:
            assert record["description"] not in prompt
            assert json.dumps(record["evaluation"]) not in prompt and "evaluate_" not in prompt
            assert json.dumps(record["oracle"][0]["args"]) not in prompt
            assert '"evidence"' not in prompt and "{m1}" not in prompt
            assert json.dumps(record["memory"][0]) not in prompt


def test_llm_agent_reports_an_endpoint_that_fails(dataset, tmp_path):
    with FakeLLMServer(fail_model="broken-model") as server:
        summary = evaluate(dataset, tmp_path / "run", EvalConfig(agent="llm", context=LONG, model="broken-model",
                                                                base_url=server.url,
                                                                llm_config=llm_settings(tmp_path)))
    # errors are not fails: no run was scored, so there is no pass rate, and the count says why
    assert summary.pass_rate is None and summary.overall["tasks"] == 0 and len(summary.errors) == 6
    assert all(r["trajectory"]["stop_reason"] == "error" and r["error"].startswith("error: endpoint: ")
               and "500" in r["error"] for r in summary.rows)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Runs that ended with an error (6)" in report and "| errors (runs) |" in report
    assert "6 run(s) ended with an error and are counted neither as passes nor as fails" in report


def test_eval_exits_1_when_errors_pass_max_errors(dataset, tmp_path):
    def agent_fails(body: dict):
        if role_of(body["messages"]) == "agent":  # the endpoint answers, but not the agent's requests
            raise RuntimeError("overloaded")
        return offline_responder(body)

    settings = llm_settings(tmp_path)
    with FakeLLMServer(agent_fails) as server:
        args = ["eval", dataset, "--agent", "llm", "--mode", "long-context", "--model", "fake-model",
                "--base-url", server.url, "--llm-config", settings]
        strict = homer(*args, "--out", tmp_path / "strict")
        lenient = homer(*args, "--out", tmp_path / "lenient", "--max-errors", 6)
    assert strict.returncode == 1 and "6 run(s) ended with an error (6 endpoint), more than --max-errors 0" in strict.stderr
    assert lenient.returncode == 0, lenient.stderr


def test_llm_agent_loop_on_a_workspace(dataset, records, tmp_path):
    """Bad tool arguments become failed steps; the step cap ends the loop."""
    task = next(t for t in iter_tasks(dataset) if len(t.record["oracle"]) >= 2)
    ws = Workspace(task.testbed).copy_to(tmp_path / "ws")
    calls = iter([{"name": "system_list_files", "arguments": "{not json"},
                  {"name": "no_such_tool", "arguments": {}},
                  {"name": "system_list_files", "arguments": {}}])

    def responder(body):
        from backends.fake_llm import Reply

        return Reply(tool_calls=[next(calls)])

    with FakeLLMServer(responder) as server:
        from backends.llm import LLMClient, LLMSettings

        client = LLMClient(LLMSettings(base_url=server.url, model="fake-model", max_retries=0))
        episode = Episode(task.id, "Ann", "ann", task.record["now"], "Do it.", "", ws, default_registry(), step_cap=2)
        trajectory = LLMAgent(client).run(episode)
    assert trajectory.step_count == 2 and trajectory.stop_reason == "step_cap"
    assert [s["ok"] for s in trajectory.steps] == [False, False]
    assert "not a JSON object" in trajectory.steps[0]["observation"]
    assert "unknown tool" in trajectory.steps[1]["observation"]


def test_a_reasoning_models_thinking_is_not_its_answer(dataset, records, tmp_path):
    """A reasoning model served without a reasoning parser writes "<think>...</think>" before its
    answer: the trajectory's answer is what follows, so a value it weighed and dropped is not scored."""
    task = next(iter(iter_tasks(dataset)))
    ws = Workspace(task.testbed).copy_to(tmp_path / "ws")

    def responder(body):
        from backends.fake_llm import Reply

        return Reply(content='<think>\nMaybe 18? {"answer": 18} No: the mail says 28.\n</think>\n\nThe answer is 28.')

    with FakeLLMServer(responder) as server:
        from backends.llm import LLMClient, LLMSettings

        client = LLMClient(LLMSettings(base_url=server.url, model="fake-model", max_retries=0))
        episode = Episode(task.id, "Ann", "ann", task.record["now"], "Do it.", "", ws, default_registry(), step_cap=2)
        trajectory = LLMAgent(client).run(episode)
    assert trajectory.final_message == "The answer is 28."


def test_fake_endpoint_agent_prompts(records):
    record = next(iter(records.values()))
    ws = Workspace(Path("."))
    episode = Episode("x", record["user"]["name"], record["user"]["username"], record["now"], record["intent"],
                      "history", ws, default_registry())
    messages = agent_messages(episode)
    assert messages[0]["content"].startswith(ROLE_OPENINGS["agent"]) and role_of(messages) == "agent"
    assert f"\n{REQUEST_MARKER}\n" in messages[1]["content"] and request_of(messages) == record["intent"]
    # the default responder (no plans) answers in "none" mode
    reply = offline_responder({"messages": messages})
    assert reply.content and not reply.tool_calls
    # tasks sharing a request: the plan whose specifics the prompt carries wins
    first = [{"tool": "word_read_file", "args": {"file_path": "data/alpha_notes.docx"}}]
    second = [{"tool": "word_read_file", "args": {"file_path": "data/beta_notes.docx"}}]
    assert choose_plan([first, second], "you said beta_notes.docx yesterday") == second
    assert choose_plan([first, second], "nothing specific") == first
    with pytest.raises(ValueError):
        agent_responder({}, mode="maybe")


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("path, value, field", [
    (("dialogue",), None, "dialogue"),
    (("dialogue",), [], "dialogue"),
    (("dialogue", 0, "day"), "one", "dialogue.0.day"),
    (("dialogue", 0, "turns"), {"role": "user"}, "dialogue.0.turns"),
    (("dialogue", 0, "turns", 1, "text"), None, "dialogue.0.turns.1.text"),
    (("dialogue", 0, "turns", 0, "role"), "system", "dialogue.0.turns.0.role"),
])
def test_a_record_whose_dialogue_an_agent_cannot_be_shown_is_refused(dataset, path, value, field):
    record = json.loads(next((dataset / "tasks").glob("*/task.json")).read_text())
    assert record_problem(parse_record(record), "query") is None
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(RecordError) as refused:  # the reader refuses it: it never reaches an agent
        parse_record(record)
    assert refused.value.field.startswith(field)


def test_what_the_schema_passes_but_eval_cannot_use_is_named(dataset):
    record = json.loads(next((dataset / "tasks").glob("*/task.json")).read_text())
    assert record_problem(parse_record({**record, "query": "  "}), "query") == "query: missing or empty"
    impossible = {**record, "now": {**record["now"], "date": "2025-02-30"}}  # refused when read, by field
    with pytest.raises(RecordError, match=r"^now\.date: '2025-02-30' is not a day of the calendar$"):
        parse_record(impossible)


def test_a_corrupt_task_is_reported_and_the_rest_evaluated(dataset, tmp_path):
    copy = tmp_path / "ds"
    shutil.copytree(dataset, copy)
    ids = sorted(p.name for p in (copy / "tasks").iterdir())
    broken, incomplete = ids[1], ids[3]
    (copy / "tasks" / broken / "task.json").write_text("{ not json")
    record = json.loads((copy / "tasks" / incomplete / "task.json").read_text())
    del record["evaluation"]
    (copy / "tasks" / incomplete / "task.json").write_text(json.dumps(record))
    proc = homer("eval", copy, "--agent", "oracle", "--mode", "long-context", "--out", tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert f"skipped {broken}:" in proc.stderr and "not valid JSON" in proc.stderr
    assert f"skipped {incomplete}:" in proc.stderr and "evaluation: missing" in proc.stderr
    rows = read_rows(tmp_path / "run")
    assert len(rows) == 4 and not {broken, incomplete} & {r["id"] for r in rows} and all(r["passed"] for r in rows)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Skipped tasks (2)" in report and f"`{broken}`" in report and f"`{incomplete}`" in report
    skipped = json.loads((tmp_path / "run" / "run.json").read_text())["skipped"]
    assert [s["id"] for s in skipped] == [broken, incomplete]


def test_evaluate_refuses_bad_config(dataset, tmp_path):
    with pytest.raises(EvalError, match="--agent"):
        evaluate(dataset, tmp_path / "a", EvalConfig(agent="human", context=LONG))
    with pytest.raises(EvalError, match="--trials"):
        evaluate(dataset, tmp_path / "b", EvalConfig(agent="none", context=LONG, trials=0))
    with pytest.raises(EvalError, match="granularity"):
        evaluate(dataset, tmp_path / "c", EvalConfig(agent="none", context=ContextConfig(mode="rag", granularity="chunk")))
    with pytest.raises(EvalError, match="not empty"):
        evaluate(dataset, dataset, EvalConfig(agent="none", context=LONG))


@pytest.mark.parametrize("args, words", [
    (["--agent", "human", "--mode", "long-context"], "--agent"),
    (["--agent", "oracle", "--mode", "sideways"], "mode"),
    (["--agent", "oracle", "--mode", "rag", "--storage", "raw", "--granularity", "chunk"], "granularity"),
    (["--agent", "oracle", "--mode", "long-context", "--storage", "summary"], "rag"),
    (["--agent", "oracle", "--mode", "rag", "--top-k", "0"], "--top-k"),
    (["--agent", "oracle", "--mode", "long-context", "--trials", "0"], "--trials"),
    (["--agent", "llm", "--mode", "long-context", "--base-url", "https://api.example.com/v1"], "OPENAI_API_KEY"),
])
def test_homer_eval_bad_options_exit_2(dataset, tmp_path, args, words):
    proc = homer("eval", dataset, *args, "--out", tmp_path / "run", env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], proc.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_homer_eval_refuses_missing_dataset_and_busy_out(dataset, tmp_path):
    proc = homer("eval", tmp_path / "nowhere", "--agent", "none", "--mode", "long-context", "--out", tmp_path / "r")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "no such folder" in proc.stderr
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    proc = homer("eval", dataset, "--agent", "none", "--mode", "long-context", "--out", busy)
    assert proc.returncode == 2 and "not empty" in proc.stderr and (busy / "keep.txt").read_text() == "mine"
