"""A user's own agent as ``--agent module:Class`` (harness/agent_plugins.py), through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.agent_plugins import (
    AgentLoadError,
    build_plugin,
    check_agent_name,
    is_plugin,
)
from orchestrator.build import build
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow

PLUGIN = textwrap.dedent('''
    from harness.agents import Trajectory


    class ReplaysTheMail:
        """Sends one mail per run, to prove the episode's workspace and registry reach it."""

        name = "replays"

        def run(self, episode):
            trajectory = Trajectory()
            result = episode.registry.call(episode.workspace, "email_list_emails", {"user": episode.username})
            trajectory.add_step("email_list_emails", {"user": episode.username}, result.ok, result.observation)
            trajectory.final_message = f"looked at {episode.username}'s mail for: {episode.request[:40]}"
            return trajectory


    class Crashes:
        def run(self, episode):
            raise RuntimeError("my agent broke")


    NOT_AN_AGENT = 3
''')


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plugins") / "ds"
    assert build(out, 2, BuildConfig(seed=5, days=2, utterances_per_day=12), workers=1).accepted == 2
    return out


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "my_agents.py").write_text(PLUGIN)
    return folder


def _homer(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """The console script in a fresh interpreter whose import path is this process's less ``cwd``:
    ``homer`` itself must find the user's module in the folder it runs in."""
    command = [str(Path(sys.executable).parent / "homer"), *map(str, args)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir() and Path(p) != cwd)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, env=env, check=False)


def test_a_users_agent_runs_from_the_current_folder_and_its_crash_fails_only_its_runs(dataset, plugin_dir, tmp_path):
    done = _homer(plugin_dir, "eval", dataset, "--agent", "my_agents:ReplaysTheMail", "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    assert json.loads((tmp_path / "run" / "run.json").read_text())["config"]["agent"] == "my_agents:ReplaysTheMail"
    assert all(r["trajectory"]["steps"][0]["tool"] == "email_list_emails" for r in rows)
    assert all("looked at" in r["trajectory"]["final_message"] for r in rows)
    # the same loader in this process, from the same folder (the fresh process above proved the path)
    broke = homer_here("eval", dataset, "--agent", "my_agents:Crashes", "--out", tmp_path / "broke", cwd=plugin_dir)
    assert "Traceback" not in broke.stderr
    rows = [json.loads(line) for line in (tmp_path / "broke" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all("my agent broke" in str(r.get("error")) for r in rows)


@pytest.mark.parametrize("spec, says", [
    ("nosuchmodule:Agent", "no module named 'nosuchmodule'"),
    ("my_agents:Missing", "has no 'Missing'"),
    ("my_agents:NOT_AN_AGENT", "not a class or function"),
    ("my agents", "must be one of llm, oracle, none or module:Class"),
])
def test_an_agent_that_cannot_be_loaded_is_one_line_and_exit_2_before_anything_is_written(
        spec, says, dataset, plugin_dir, tmp_path):
    done = homer_here("eval", dataset, "--agent", spec, "--out", tmp_path / "run", cwd=plugin_dir)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()


def test_the_loader_tells_names_from_specs(plugin_dir, monkeypatch):
    monkeypatch.chdir(plugin_dir)
    assert is_plugin("pkg.mod:Agent") and not is_plugin("oracle") and not is_plugin("a:b:c")
    check_agent_name("oracle")
    assert callable(build_plugin("my_agents:ReplaysTheMail").run)
    with pytest.raises(AgentLoadError):
        check_agent_name("oracles")
