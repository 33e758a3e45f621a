"""The fake endpoint as the evaluated agent: oracle, none and noisy, found from the prompt alone,
driven through the harness's real tool-calling loop over HTTP (and ``homer fake-llm --agent``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from backends.fake_llm import FakeLLMServer
from harness.context import ContextConfig
from harness.runner import EvalConfig, evaluate
from orchestrator.build import build
from orchestrator.fake_llm.agent_answer import dataset_agent_plans
from orchestrator.fake_llm.noisy_agent import (
    FATAL,
    SLIPS,
    Step,
    draw,
    next_step,
    script,
)
from orchestrator.fake_llm.offline_responder import agent_responder
from orchestrator.roles import BuildConfig

from tests.support.homer_cli import homer_forked, homer_here

pytestmark = pytest.mark.slow

LONG = ContextConfig(mode="long-context")
PLAN = [{"tool": "system_list_files", "args": {"folder": "data"}},
        {"tool": "excel_read_file", "args": {"file_path": "data/a.xlsx"}},
        {"tool": "excel_set_cell", "args": {"file_path": "data/a.xlsx", "row": 3, "col": 2, "value": "1,250.40"}}]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fake-agent") / "ds"
    assert build(out, 12, BuildConfig(seed=3, days=3, utterances_per_day=16), workers=1).accepted == 12
    return out


def settings(tmp_path: Path) -> str:
    path = tmp_path / "llm.json"
    path.write_text(json.dumps({"timeout": 10, "max_retries": 0}))
    return str(path)


def test_no_noise_is_the_plan_and_full_noise_always_errs_the_same_way():
    assert script(PLAN, seed=1, noise=0.0, prompt="p") == [Step(c["tool"], c["args"]) for c in PLAN]
    for prompt in map(str, range(40)):
        fatal, slip, _ = draw(7, 1.0, prompt)
        assert fatal in FATAL and slip in SLIPS
        assert script(PLAN, 7, 1.0, prompt) == script(PLAN, 7, 1.0, prompt)  # seeded by the prompt
        assert script(PLAN, 7, 1.0, prompt) != [Step(c["tool"], c["args"]) for c in PLAN]
    scripts = {json.dumps([s.__dict__ for s in script(PLAN, 7, 1.0, str(p))]) for p in range(40)}
    assert len(scripts) > 5  # the mistakes vary between tasks


def test_a_misremembered_value_changes_a_digit_of_the_last_write():
    for prompt in map(str, range(200)):
        if draw(2, 1.0, prompt)[:2] == ("misremembered_value", "looks_around"):
            steps = script(PLAN, 2, 1.0, prompt)
            assert steps[0] == Step("system_list_files", {"folder": "data"})
            assert steps[-1].args["value"] == "1,250.41"
            return
    pytest.fail("no prompt drew that pair")


def test_the_next_step_is_read_from_the_calls_made_and_a_broken_one_is_asked_again():
    steps = [Step("a", {}), Step("b", '{"x', broken=True), Step("b", {"x": 1})]
    assert next_step(steps, 0, 0) == steps[0]
    assert next_step(steps, 1, 0) == steps[1]       # the planned broken call
    assert next_step(steps, 1, 1) == steps[2]       # then the right one
    assert next_step(steps, 2, 1) is None           # then the final message
    plain = [Step("a", {}), Step("b", {})]
    assert next_step(plain, 1, 1) == plain[1]       # a call a fault broke is sent again


def test_noisy_agent_passes_some_tasks_through_the_real_loop(dataset, tmp_path):
    plans = dataset_agent_plans(dataset)
    config = dict(context=LONG, model="fake-model", llm_config=settings(tmp_path))
    rows = []
    for seed in (1, 2):  # two noisy agents, a mistake in half the tasks: 24 tries at a slip without one
        with FakeLLMServer(agent_responder(plans, mode="noisy", noise=0.5, seed=seed)) as server:
            noisy = evaluate(dataset, tmp_path / f"noisy{seed}", EvalConfig(agent="llm", base_url=server.url, **config))
            with_tools = [r for r in server.chat_requests() if r.body.get("tools")]
        assert not noisy.errors
        assert len(with_tools) == sum(r["trajectory"]["usage"]["calls"] for r in noisy.rows)
        rows += noisy.rows
    assert any(r["passed"] for r in rows) and not all(r["passed"] for r in rows)
    with FakeLLMServer(agent_responder(plans, mode="oracle")) as server:
        oracle = evaluate(dataset, tmp_path / "oracle", EvalConfig(agent="llm", base_url=server.url, **config))
    assert oracle.pass_rate == 1.0 and not oracle.errors
    assert all(r["trajectory"]["usage"]["calls"] == r["steps"] + 1 for r in rows)  # one call a turn, then the answer
    assert any(not step["ok"] for r in rows for step in r["trajectory"]["steps"])  # a slip answered with an error
    assert any(r["passed"] and not all(s["ok"] for s in r["trajectory"]["steps"]) for r in rows)  # and recovered


HOMER = Path(sys.executable).parent / "homer"
COMMAND = [str(HOMER)] if HOMER.exists() else [sys.executable, "-c", "from orchestrator.cli import main; main()"]
ENV = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}


def homer(*args: object, timeout: int = 60) -> subprocess.CompletedProcess:
    """The console script as a child process (a refusal that regressed into serving would time out)."""
    return subprocess.run([*COMMAND, *map(str, args)], env=ENV, capture_output=True, text=True, timeout=timeout)


def test_fake_llm_agent_options_are_checked(tmp_path, dataset):
    for args, said in ((["--agent", "noisy"], "--agent noisy needs --dataset"),
                       (["--agent", "smart", "--dataset", dataset], "--agent 'smart'"),
                       (["--agent", "noisy", "--dataset", dataset, "--noise", "1.5"], "--noise 1.5"),
                       (["--agent", "oracle", "--dataset", tmp_path], "not a dataset folder")):
        proc = homer("fake-llm", "--port", "0", *args)
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_homer_fake_llm_plays_the_noisy_agent_for_homer_eval(dataset, tmp_path):
    # a server process of its own, forked from this one (a console script would spend seconds importing)
    server = homer_forked("fake-llm", "--port", "0", "--agent", "noisy", "--dataset", dataset, "--seed", "2",
                          "--noise", "0.5", pipe_stdout=True)
    try:
        ready = server.stdout.readline()
        url = re.search(r"http://\S+/v1", ready).group(0)
        assert "playing the noisy agent (noise 0.5, seed 2)" in ready
        proc = homer_here("eval", dataset, "--agent", "llm", "--base-url", url, "--mode", "long-context", "--out",
                          tmp_path / "run", "-q")
    finally:
        server.terminate()
        server.communicate(10)
    assert proc.returncode == 0, proc.stderr
    overall = re.search(r"\| \*\*overall\*\* \| 12 \| ([0-9.]+) ", proc.stdout)
    assert overall and 0.0 < float(overall.group(1)) < 100.0, proc.stdout


def test_a_refused_parameter_stops_eval_at_once_with_the_servers_message(dataset, tmp_path):
    from backends.llm.failures import RunRefused

    plans = dataset_agent_plans(dataset)
    with FakeLLMServer(agent_responder(plans), profile="openai-reasoning") as server:
        with pytest.raises(RunRefused) as caught:  # no endpoint check here: the run itself sees the 400s
            evaluate(dataset, tmp_path / "run", EvalConfig(agent="llm", base_url=server.url, model="my-deployment",
                                                           context=LONG, llm_config=settings(tmp_path)))
        asked = server.chat_request_total
        proc = homer_here("eval", dataset, "--agent", "llm", "--base-url", server.url, "--model", "my-deployment",
                          "--mode", "long-context", "--out", tmp_path / "cli")
    assert "Unsupported parameter" in str(caught.value) and "temperature" in str(caught.value)
    assert asked == 3  # three refusals in a row, then no more of the 12 tasks
    assert not (tmp_path / "run" / "results.jsonl").exists()
    assert proc.returncode == 2 and "temperature" in proc.stderr and "--llm-set temperature=null" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "cli").exists()


def test_error_summaries_count_the_commonest_reasons_with_the_advice_for_each_kind():
    from backends.llm.failures import RefusalWatch, summary_lines
    from orchestrator.endpoint_guard import Breaker

    refused = "error: refused: agent: model m at u: HTTP 400: Unsupported parameter: 'temperature'"
    reasons = [refused] * 4 + [f"error: context: the history has {n:,} tokens, over 8,000" for n in (9000, 9500)]
    reasons += ["verifier: a fact is missing", "error: endpoint: cannot connect"]
    lines = "\n".join(summary_lines(reasons))
    assert lines.index("4 x error: refused") < lines.index("2 x error: context: the history has 9,000")
    assert "fix the setting it names" in lines and "--resume alone will not help" in lines
    assert "1 other(s)" in lines  # the fourth reason, past the top three
    watch = RefusalWatch()
    for reason in (refused, None, refused, "verifier: dropped", refused, "error: endpoint: down", refused):
        watch.see(reason)
    assert not watch.tripped()  # a success or a drop between refusals: the server takes some requests
    watch.see(refused)
    assert watch.tripped() and "Unsupported parameter" in watch.message()
    key = RefusalWatch()
    key.see("error: refused: agent: HTTP 401: Incorrect API key provided.")
    assert key.tripped()  # a refused key stops at the first
    breaker = Breaker(probe=lambda: True)
    for _ in range(3):
        breaker.see({"status": "error", "reason": refused})
    assert breaker.tripped() and breaker.errors == 0  # refusals are not an endpoint outage
    with pytest.raises(Exception, match="refused the requests"):
        breaker.check_refused()
