"""Subsets of a dataset (``eval --limit``, ``--task-ids``) and runs that record the model actually
sent, whether given, set in the environment or a ``.env`` file, or defaulted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.fake_llm import FakeLLMServer
from backends.llm import LLMConfigError, LLMSettings
from orchestrator.build import build
from orchestrator.fake_llm.agent_answer import dataset_agent_plans
from orchestrator.fake_llm.offline_responder import agent_responder
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("subsets") / "ds"
    assert build(out, 4, BuildConfig(seed=8, days=2, utterances_per_day=12), workers=1).accepted == 4
    return out


def ids_of(run: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run / "results.jsonl").read_text().splitlines()]


def test_limit_and_task_ids_choose_the_tasks_and_unknown_ids_are_refused(dataset, tmp_path):
    every = sorted(p.name for p in (dataset / "tasks").iterdir())
    first = homer_here("eval", dataset, "--agent", "oracle", "--out", tmp_path / "first", "--limit", "2", "-q")
    assert first.returncode == 0, first.stderr
    assert ids_of(tmp_path / "first") == every[:2]
    chosen = homer_here("eval", dataset, "--agent", "none", "--out", tmp_path / "chosen", "-q",
                        "--task-ids", f"{every[3]},{every[1]}")
    assert chosen.returncode == 0 and sorted(ids_of(tmp_path / "chosen")) == [every[1], every[3]]
    run = json.loads((tmp_path / "chosen" / "run.json").read_text())
    assert run["config"]["task_ids"] == [every[3], every[1]] and set(run["task_digests"]) == set(every)
    refused = homer_here("eval", dataset, "--agent", "oracle", "--out", tmp_path / "refused", "--task-ids",
                         f"{every[0]},neo-99999,../x", "-q")
    assert refused.returncode == 2 and "'../x' is not a task id" in refused.stderr
    unknown = homer_here("eval", dataset, "--agent", "oracle", "--out", tmp_path / "unknown", "--task-ids",
                         f"{every[0]},neo-99999", "-q")
    assert unknown.returncode == 2 and "no task neo-99999 in" in unknown.stderr
    assert not (tmp_path / "unknown").exists() and not (tmp_path / "refused").exists()
    # runs on subsets of one dataset pair on the tasks both scored, and say which each did better on
    compared = homer_here("compare", tmp_path / "first", tmp_path / "chosen", "--json")
    data = json.loads(compared.stdout)
    assert data["tasks"] == 1 and data["a_better_tasks"] == [every[1]] and data["only_a"] == data["only_b"] == 1
    # a resume keeps to the subset its run was started with
    again = homer_here("eval", dataset, "--agent", "oracle", "--out", tmp_path / "first", "--limit", "3",
                       "--resume", "-q")
    assert again.returncode == 2


def test_the_model_sent_is_recorded_from_the_flag_the_environment_a_dotenv_or_the_default(dataset, tmp_path,
                                                                                          monkeypatch):
    monkeypatch.delenv("HOMER_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    plans = dataset_agent_plans(dataset)
    with FakeLLMServer(agent_responder(plans, mode="oracle")) as server:
        def model_of(name: str, *extra: str, env: dict | None = None) -> str:
            proc = homer_here("eval", dataset, "--agent", "llm", "--base-url", server.url, "--out", tmp_path / name,
                              "--limit", "1", "-q", *extra, cwd=tmp_path, env=env)
            assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr  # no warning either
            return json.loads((tmp_path / name / "run.json").read_text())["config"]["model"]

        assert model_of("default") == "gpt-4o-mini"
        (tmp_path / ".env").write_text("# the project's model\nHOMER_MODEL=from-dotenv\nOTHER=x\n")
        assert model_of("dotenv") == "from-dotenv"
        assert model_of("environment", env={"HOMER_MODEL": "from-environment"}) == "from-environment"
        assert model_of("flag", "--model", "from-flag", env={"HOMER_MODEL": "from-environment"}) == "from-flag"
        sent = {r.body["model"] for r in server.chat_requests() if r.body and r.body.get("tools")}
        homer_here("eval", dataset, "--agent", "llm", "--base-url", server.url, "--out", tmp_path / "sampled",
                   "--limit", "1", "-q", "--llm-set", "temperature=0.3", "--llm-set", "max_tokens=777", cwd=tmp_path)
        agent_bodies = [r.body for r in server.chat_requests() if r.body and r.body.get("tools")]
    assert {"gpt-4o-mini", "from-dotenv", "from-environment", "from-flag"} <= sent
    run = json.loads((tmp_path / "sampled" / "run.json").read_text())
    sampling = run["config"]["sampling"]  # what the requests carried
    assert sampling == {"temperature": 0.3, "max_tokens": 777, "parallel_tool_calls": True}
    assert {key: agent_bodies[-1][key] for key in sampling} == sampling
    assert "- sampling: {'temperature': 0.3, 'max_tokens': 777" in (tmp_path / "sampled" / "report.md").read_text()
    (tmp_path / ".env").unlink()
    (tmp_path / ".env").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("HOMER_MODEL=linked\n")
    with pytest.raises(LLMConfigError, match=r"\.env: is a symlink"):
        LLMSettings.load()
