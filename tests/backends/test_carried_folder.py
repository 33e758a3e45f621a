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


def test_a_ray_builds_job_never_names_the_output_folder_and_hands_its_task_back_as_bytes(tmp_path, monkeypatch):
    from backends import scratch
    from orchestrator.build import BuildBatch
    from orchestrator.roles import BuildConfig

    monkeypatch.setenv(scratch.ENV, str(tmp_path / "scratch"))
    out = tmp_path / "driver-only" / "ds"
    batch = BuildBatch(out, 1, BuildConfig(seed=13, days=2, utterances_per_day=12), 2, "ray", None, None)
    assert batch.start(resume=False) is None
    work = scratch.claim_work_folder()
    round_ = batch.next_round(str(work))
    assert round_ is not None and str(out).encode() not in pickle.dumps(round_.run)  # what a node receives
    before = tree(out)
    outcome = round_.run(round_.items[0])  # as a node runs it (here, in this process)
    assert tree(out) == before  # the job wrote nothing into the driver's folder
    assert outcome["status"] == "accepted" and "staged" not in outcome
    carried = outcome["carried"]
    files = dict(carried.files)
    assert carried.name == outcome["id"] and json.loads(files[("task.json",)])["id"] == outcome["id"]
    scratch.release_work_folder(work)
    assert list((tmp_path / "scratch").iterdir()) == []  # the node's work folder went with the batch's
