"""The hard links a dataset's tasks share with the other tasks of their world: accepted when every
name is found in the siblings the index lists, refused as a link to outside otherwise."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks, load_task, task_digest
from backends.task_record import parse_record
from office_env.dataset_links import shared_names
from office_env.untrusted import OUTSIDE_LINK, copy_tree, scan_tree
from orchestrator.dataset_writer import shared_world, stage_task
from tests.support.records import task_record_sample


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder shaped like a task (its secret in a ``testbed/``), which a census that followed
    an index's ids out of ``tasks/`` would count."""
    folder = tmp_path / "outside"
    (folder / "testbed").mkdir(parents=True)
    (folder / "testbed" / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return folder


def _dataset(tmp_path: Path, worlds: dict[str, str | None]) -> Path:
    """A finished dataset whose tasks (id to world; None: no world in the index) hard-link one copy
    of a small office, staged as a build stages them: one shared copy per world."""
    out = tmp_path / "ds"
    staging = out / ".work" / "staging"
    staging.mkdir(parents=True)
    (out / "tasks").mkdir()
    office = tmp_path / "office"
    (office / "data").mkdir(parents=True)
    (office / "data" / "a.txt").write_text("a\n", encoding="utf-8")
    (office / "data" / "b.txt").write_text("b\n", encoding="utf-8")
    lines = []
    for task_id, world in worlds.items():
        copy = shared_world(out / ".work", office, f"w{world}")
        staged = stage_task(staging, parse_record(task_record_sample(task_id)), copy, trusted=True, link=True)
        os.replace(staged, out / "tasks" / task_id)
        lines.append({"id": task_id, **({"world": world} if world is not None else {})})
    (out / "index.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    shutil.rmtree(out / ".work")
    return out


def _problem(out: Path, task_id: str) -> str | None:
    return scan_tree(out / "tasks" / task_id / "testbed").problem()


def test_a_world_shared_by_its_tasks_is_read_whole(tmp_path):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7", "t3": "7"})
    assert os.stat(out / "tasks" / "t1" / "testbed" / "data" / "a.txt").st_nlink == 3  # one name per task
    for task_id in ("t1", "t2", "t3"):
        assert _problem(out, task_id) is None
    tasks = list(iter_tasks(out))
    assert [t.error for t in tasks] == [None, None, None]
    plain = tmp_path / "plain"
    copy_tree(out / "tasks" / "t2", plain / "tasks" / "t2")  # no links: the same task, by content
    assert os.stat(plain / "tasks" / "t2" / "testbed" / "data" / "a.txt").st_nlink == 1
    assert task_digest(load_task(out, "t2")) == task_digest(load_task(plain, "t2"))


def test_a_link_to_outside_is_refused_even_when_every_sibling_holds_it(tmp_path, outside):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    for task_id in ("t1", "t2"):
        os.link(outside / "testbed" / "secret.txt", out / "tasks" / task_id / "testbed" / "data" / "leak.txt")
    for task_id in ("t1", "t2"):
        assert _problem(out, task_id) == \
            f"{out / 'tasks' / task_id / 'testbed'}/data/leak.txt: {OUTSIDE_LINK}"
    assert "hard link" in (load_task(out, "t1").error or "")


def test_siblings_of_another_world_or_none_do_not_count(tmp_path):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7", "t3": "7"})
    lines = [{"id": "t1", "world": "7"}, {"id": "t2", "world": "8"}, {"id": "t3"}]
    (out / "index.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    # the three share their files, but the index puts t2 in another world and t3 in none: no task
    # finds every name of its files among the siblings it lists
    assert [_problem(out, t) is not None for t in ("t1", "t2", "t3")] == [True, True, True]
    assert "data/a.txt: is a hard link" in (load_task(out, "t1").error or "")
    (out / "index.jsonl").unlink()
    assert _problem(out, "t1") is not None


def test_an_index_that_lies_cannot_make_an_outside_link_count(tmp_path, outside):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    os.link(outside / "testbed" / "secret.txt", out / "tasks" / "t1" / "testbed" / "data" / "leak.txt")
    os.symlink(outside, out / "tasks" / "linked")  # a sibling that is a link to the secret's folder
    lies = [{"id": "t1", "world": "7"}, {"id": "t2", "world": "7"}, {"id": "../../outside", "world": "7"},
            {"id": "..", "world": "7"}, {"id": "t1/../../../outside", "world": "7"}, {"id": "ghost", "world": "7"},
            {"id": "linked", "world": "7"},
            {"id": "t2", "world": True}, "not an object", {"id": 3, "world": "7"}]
    (out / "index.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lies) + "{broken\n",
                                     encoding="utf-8")
    assert _problem(out, "t1") == f"{out / 'tasks' / 't1' / 'testbed'}/data/leak.txt: {OUTSIDE_LINK}"
    assert _problem(out, "t2") is None


def test_a_linked_index_or_tasks_folder_is_not_followed(tmp_path, outside):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    real = tmp_path / "index.real"
    os.replace(out / "index.jsonl", real)
    os.symlink(real, out / "index.jsonl")
    assert _problem(out, "t1") is not None  # no index read through a link: no siblings
    assert shared_names(out / "tasks" / "t1" / "testbed") == {}
    assert shared_names(tmp_path / "elsewhere" / "testbed") == {}  # not a task's tree
