"""A staged folder carried back as bytes (a Ray node without the output folder): the same tree
written on the driver's side, whole or not at all, and nothing written outside it."""

from __future__ import annotations

import json
import os
import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from backends.carried_folder import CarriedFolder, pack_folder, unpack_folder
from office_env.untrusted import UntrustedInputError


def tree(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def staged(tmp_path: Path) -> Path:
    folder = tmp_path / "node" / "neo-00007"
    (folder / "testbed" / "Documents" / "empty").mkdir(parents=True)
    (folder / "testbed" / "Documents" / "report.docx").write_bytes(bytes(range(256)) * 40)
    (folder / "task.json").write_text('{"id": "neo-00007"}\n', encoding="utf-8")
    return folder


def test_a_packed_folder_is_written_whole_on_the_other_side_and_replaces_an_older_copy(tmp_path):
    source = staged(tmp_path)
    carried = pickle.loads(pickle.dumps(pack_folder(source)))  # as Ray hands it over
    driver = tmp_path / "driver" / "staging"
    (driver / "neo-00007").mkdir(parents=True)
    (driver / "neo-00007" / "stale.txt").write_text("from a killed run")
    written = unpack_folder(carried, driver)
    assert written == driver / "neo-00007"
    assert tree(written) == tree(source)  # the empty folder too, and no stale file
    assert (written.stat().st_mode & 0o777) == 0o755
    assert sorted(os.listdir(driver)) == ["neo-00007"]  # no temporary copy left


@pytest.mark.parametrize("parts", [("..", "escape.txt"), ("testbed", "/etc"), ("",), ("a\0b",)])
def test_a_path_that_is_not_below_the_folder_is_refused_and_nothing_is_left(tmp_path, parts):
    carried = pack_folder(staged(tmp_path))
    bad = replace(carried, files=(*carried.files, (parts, b"x")))
    with pytest.raises(UntrustedInputError):
        unpack_folder(bad, tmp_path / "driver")
    assert os.listdir(tmp_path / "driver") == []
    assert not (tmp_path / "escape.txt").exists()
    with pytest.raises(UntrustedInputError):
        unpack_folder(CarriedFolder("../up", (), ()), tmp_path / "driver")


def test_a_link_in_the_staged_folder_is_refused_when_packing(tmp_path):
    source = staged(tmp_path)
    (source / "testbed" / "link").symlink_to("/etc/hostname")
    with pytest.raises(UntrustedInputError, match="neither a folder nor a regular file"):
        pack_folder(source)


@pytest.fixture(scope="module")
def ray_build_job(tmp_path_factory):
    """One attempt of a build run as a Ray node runs it (here, in this process): the driver's
    folder before and after it, and its outcome."""
    from backends import scratch
    from orchestrator.build import BuildBatch
    from orchestrator.roles import BuildConfig

    tmp_path = tmp_path_factory.mktemp("ray-build")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(scratch.ENV, str(tmp_path / "scratch"))
        out = tmp_path / "driver-only" / "ds"
        batch = BuildBatch(out, 1, BuildConfig(seed=13, days=2, utterances_per_day=12), 2, "ray", None, None)
        assert batch.start(resume=False) is None
        work = scratch.claim_work_folder()
        round_ = batch.next_round(str(work))
        assert round_ is not None
        before = tree(out)
        outcome = round_.run(round_.items[0])
        after = tree(out)
        scratch.release_work_folder(work)
        left = list((tmp_path / "scratch").iterdir())
    return {"out": out, "run": round_.run, "before": before, "after": after, "outcome": outcome, "left": left,
            "tmp": tmp_path}


def test_a_ray_builds_job_never_names_the_output_folder_and_hands_its_task_back_as_bytes(ray_build_job):
    job = ray_build_job
    assert str(job["out"]).encode() not in pickle.dumps(job["run"])  # what a node receives
    assert job["after"] == job["before"]  # the job wrote nothing into the driver's folder
    outcome = job["outcome"]
    assert outcome["status"] == "accepted" and "staged" not in outcome
    files = dict(outcome["carried"].files)
    assert outcome["carried"].name == outcome["id"] and json.loads(files[("task.json",)])["id"] == outcome["id"]
    assert job["left"] == []  # the node's work folder went with the batch's


def test_a_ray_evals_task_travels_as_bytes_and_gives_the_rows_of_a_local_run(ray_build_job, tmp_path, monkeypatch):
    from backends import scratch
    from harness.context import ContextConfig
    from harness.runner import EvalConfig, TaskOnTheWay, _run_carried_job, _run_job

    monkeypatch.setenv(scratch.ENV, str(tmp_path / "scratch"))
    dataset = tmp_path / "driver-only" / "ds"
    task = unpack_folder(ray_build_job["outcome"]["carried"], dataset / "tasks")
    config = EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"))
    local = _run_job(str(dataset), str(tmp_path / "run"), config, str(tmp_path / "trials"), task.name)
    sent = pickle.dumps(TaskOnTheWay(str(dataset), task.name))  # packed as Ray hands it over
    dataset.rename(tmp_path / "gone")  # a node does not see the driver's folder
    work = scratch.claim_work_folder()
    carried = _run_carried_job(config, str(work), pickle.loads(sent))
    scratch.release_work_folder(work)
    assert local["rows"][0]["passed"] is True and carried == local
    assert list((tmp_path / "scratch").iterdir()) == []
