"""An eval run's pages on the review server (``homer view RUN --serve``) in a real browser:
headless Chromium driven by Playwright. A run of the fake endpoint's noisy agent on a small
dataset: the run's list with its outcomes and filters, a failed task's page with the failed
criterion, the agent's calls and the reference plan, and the links to the task's review page and
back. A screenshot of each goes to ``test-artifacts/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.fake_llm import FakeLLMServer
from harness.context import ContextConfig
from harness.runner import EvalConfig, evaluate
from orchestrator.build import build
from orchestrator.fake_llm.agent_answer import dataset_agent_plans
from orchestrator.fake_llm.offline_responder import agent_responder
from orchestrator.review.app import ReviewServer, create_app
from orchestrator.roles import BuildConfig
from tests.support.browser import ARTIFACTS, chromium_page, require_browser
from tests.support.review_server import serving

pytestmark = pytest.mark.slow  # builds a dataset and runs evals


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("run-page")
    dataset = root / "data"
    assert build(dataset, 6, BuildConfig(seed=3, days=2, utterances_per_day=10), workers=1).accepted == 6
    # the first of a few agent seeds whose run has both kinds of page to see (a task passes, one fails):
    # the noisy agent errs in about half of six tasks, so one seed in thirty-two has all of one kind
    for seed in range(1, 6):
        with FakeLLMServer(agent_responder(dataset_agent_plans(dataset), "noisy", noise=0.5, seed=seed)) as server:
            config = EvalConfig(agent="llm", context=ContextConfig(mode="long-context"), model="fake-model",
                                base_url=server.url)
            summary = evaluate(dataset, root / f"noisy{seed}", config)
        if 0 < summary.pass_rate < 1:
            return dataset, root / f"noisy{seed}"
    raise AssertionError("the noisy agent passed all tasks or none, seed after seed")


@pytest.fixture()
def served(run):
    require_browser()
    dataset, folder = run
    with serving(ReviewServer(dataset, "ana", runs=[folder])) as port:
        yield run, f"http://127.0.0.1:{port}"


def test_a_run_its_failed_task_and_the_way_back(served):
    from harness.run_view import run_view

    (dataset, folder), base = served
    view = run_view(folder)
    failed = [t for t in view["tasks"] if t["outcome"] == "fail"]
    with chromium_page(dataset.parent, 1400, 1000) as page:
        page.goto(base + "/")
        page.locator("a.run-link").click()  # the run from the review page's header
        page.wait_for_url(f"**/run/{folder.name}")
        assert page.locator("#run-tasks tr[data-href]").count() == 6
        assert f"{len(failed)} fail" in page.locator("#run-head").inner_text()
        page.select_option("#filters select[name=outcome]", "fail")
        page.locator("#filters button").click()
        page.wait_for_url("**outcome=fail**")
        rows = page.locator("#run-tasks tr[data-href]")
        assert rows.count() == len(failed) and all("fail" in rows.nth(i).inner_text() for i in range(rows.count()))
        page.screenshot(path=str(ARTIFACTS / "run-list.png"), full_page=True)

        task = failed[0]
        page.keyboard.press("j")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/run/{folder.name}/task/{task['id']}")
        assert page.locator("#outcome").inner_text() == "fail"
        reason = task["trials"][0]["failed"][0]["reason"] if task["trials"][0]["failed"] else task["trials"][0]["error"]
        assert reason[:60] in page.locator(".trial").first.inner_text()
        assert page.locator(".calls li").count() == len(task["trials"][0]["calls"])
        assert page.locator("#reference-plan li").count() >= 1
        page.screenshot(path=str(ARTIFACTS / "run-task.png"), full_page=True)

        page.locator("#review-link").click()  # to the task's history, and back to the run
        page.wait_for_url(f"**/task/{task['id']}")
        assert page.locator(".turn.evidence").count() >= 1
        page.locator("#in-runs a").click()
        page.wait_for_url(f"**/run/{folder.name}/task/{task['id']}")


def test_a_run_page_refuses_what_it_does_not_hold(run):
    from starlette.testclient import TestClient

    dataset, folder = run
    client = TestClient(create_app(ReviewServer(dataset, "ana", runs=[folder])), base_url="http://127.0.0.1")
    assert client.get("/run/nope").status_code == 404
    assert client.get(f"/run/{folder.name}/task/no-such-task").status_code == 404
    page = client.get(f"/run/{folder.name}?outcome=pass&apps=1")
    assert page.status_code == 200 and "outcome-fail" not in page.text


def test_the_reports_list_each_failed_task_with_its_failed_criterion(run):
    from harness.run_view import run_view

    _, folder = run
    failed = [t for t in run_view(folder)["tasks"] if t["outcome"] == "fail"]
    markdown = (folder / "report.md").read_text()
    html = (folder / "report.html").read_text()
    assert f"## Failed tasks ({len(failed)} trial(s);" in markdown and 'id="failed"' in html
    for task in failed:
        criterion = task["trials"][0]["failed"][0]
        assert f"- `{task['id']}` trial 1: {criterion['function']}: " in markdown
        assert f"<td>{task['id']}</td>" in html
    passed = [t["id"] for t in run_view(folder)["tasks"] if t["outcome"] == "pass"]
    assert not any(f"`{task}` trial" in markdown for task in passed)


def test_serve_says_in_one_line_when_the_runs_dataset_is_gone(run, tmp_path):
    import json
    import shutil

    from tests.support.homer_cli import homer_here

    _, folder = run
    moved = Path(shutil.copytree(folder, tmp_path / "moved"))
    meta = json.loads((moved / "run.json").read_text())
    meta["dataset"] = str(tmp_path / "gone")
    (moved / "run.json").write_text(json.dumps(meta))
    proc = homer_here("view", moved, "--serve", "--port", "1")
    assert proc.returncode == 2 and "is not there any more" in proc.stderr and "--run" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    bad = homer_here("view", tmp_path / "nowhere", "--serve")
    assert bad.returncode == 2 and bad.stderr.startswith("error:"), bad.stderr
    dataset, _ = run
    no_run = homer_here("review", dataset, "--run", tmp_path / "nowhere", "--port", "1")
    assert no_run.returncode == 2 and no_run.stderr.startswith("error: --run:"), no_run.stderr
