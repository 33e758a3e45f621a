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
from office_env import dataset_links, untrusted
from office_env.untrusted import OUTSIDE_LINK, UntrustedInputError, copy_tree, scan_tree
from orchestrator.dataset_writer import shared_world, stage_task
from tests.support.records import task_record_sample


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder shaped like a task (its secret in a ``testbed/``), which a census that followed
    an index's ids out of ``tasks/`` would count."""
    folder = tmp_path / "outside"
    (folder / "testbed" / "data").mkdir(parents=True)
    (folder / "testbed" / "data" / "leak.txt").write_text("top secret\n", encoding="utf-8")
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
    _index(out, lines)
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


def _link_secret(outside: Path, out: Path, *tasks: str) -> None:
    for task_id in tasks:
        os.link(outside / "testbed" / "data" / "leak.txt", out / "tasks" / task_id / "testbed" / "data" / "leak.txt")


def _leak(out: Path, task_id: str) -> str:
    return f"{out / 'tasks' / task_id / 'testbed'}/data/leak.txt: {OUTSIDE_LINK}"


def _index(out: Path, lines: list) -> None:
    (out / "index.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_link_to_outside_is_refused_even_when_every_sibling_holds_it(tmp_path, outside):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    _link_secret(outside, out, "t1", "t2")
    for task_id in ("t1", "t2"):
        assert _problem(out, task_id) == _leak(out, task_id)
    assert "hard link" in (load_task(out, "t1").error or "")


def test_siblings_of_another_world_or_none_do_not_count(tmp_path):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7", "t3": "7"})
    _index(out, [{"id": "t1", "world": "7"}, {"id": "t2", "world": "8"}, {"id": "t3"}])
    # the three share their files, but the index puts t2 in another world and t3 in none: no task
    # finds every name of its files among the siblings it lists
    assert [_problem(out, t) is not None for t in ("t1", "t2", "t3")] == [True, True, True]
    assert "data/a.txt: is a hard link" in (load_task(out, "t1").error or "")
    (out / "index.jsonl").unlink()
    assert _problem(out, "t1") is not None


# each lie, and whether its id is a plain one (a line that is no task's ends the reading: a lie
# first then leaves no siblings at all, and every shared file is refused)
LIES = {
    "a path out of tasks/": ({"id": "../../outside", "world": "7"}, False),
    "a path through a task": ({"id": "t1/../../../outside", "world": "7"}, False),
    "another spelling of a folder (surrogate escapes of its UTF-8)": ({"id": "\udcc3\udcbf", "world": "7"}, False),
    "a sibling that is a link to the secret's task-shaped folder": ({"id": "linked", "world": "7"}, True),
    "a sibling whose data/ is a link there": ({"id": "halfway", "world": "7"}, True),
    "the task listed again": ({"id": "t1", "world": "7"}, True),
    "a sibling that does not exist": ({"id": "ghost", "world": "7"}, True),
}


@pytest.mark.parametrize("lie", LIES, ids=list(LIES))
@pytest.mark.parametrize("first", [True, False], ids=["lie first", "lie last"])
def test_an_index_that_lies_cannot_make_an_outside_link_count(tmp_path, outside, lie, first):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    _link_secret(outside, out, "t1")
    os.symlink(outside, out / "tasks" / "linked")
    (out / "tasks" / "halfway" / "testbed").mkdir(parents=True)
    os.symlink(outside / "testbed" / "data", out / "tasks" / "halfway" / "testbed" / "data")
    alias = out / "tasks" / "\u00ff"  # the folder the surrogate-escaped id spells in UTF-8 bytes
    (alias / "testbed" / "data").mkdir(parents=True)
    os.link(outside / "testbed" / "data" / "leak.txt", alias / "testbed" / "data" / "leak.txt")
    line, plain = LIES[lie]
    honest = [{"id": "t1", "world": "7"}, {"id": "t2", "world": "7"}, {"id": "\u00ff", "world": "7"}]
    _index(out, [line, *honest] if first else [*honest, line])
    # the secret has three names (outside, t1, the alias): no lie finds a third inside
    refused = {s.path for s in scan_tree(out / "tasks" / "t1" / "testbed").skipped}
    read = plain or not first
    assert refused == ({"data/leak.txt"} if read else {"data/a.txt", "data/b.txt", "data/leak.txt"})
    assert (_problem(out, "t2") is None) == read


def test_names_are_counted_afresh_by_every_scan(tmp_path, outside):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7", "t3": "7"})
    _link_secret(outside, out, "t2", "t3")
    assert _problem(out, "t1") is None and _problem(out, "t2") == _leak(out, "t2")
    data = [out / "tasks" / task_id / "testbed" / "data" for task_id in ("t1", "t2", "t3")]
    os.replace(data[1] / "leak.txt", data[0] / "leak.txt")
    (data[2] / "leak.txt").unlink()
    assert _problem(out, "t1") == _leak(out, "t1")  # two names (outside, t1), one found


def test_a_file_found_inside_its_world_is_looked_up_again_once_it_gains_a_link(tmp_path, outside):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7", "t3": "7"})
    assert _problem(out, "t1") is None  # remembered: t2 and t3 need no lookups
    assert _problem(out, "t2") is None
    os.link(out / "tasks" / "t3" / "testbed" / "data" / "a.txt", outside / "kept.txt")
    assert _problem(out, "t2") == f"{out / 'tasks' / 't2' / 'testbed'}/data/a.txt: {OUTSIDE_LINK}"
    os.unlink(out / "tasks" / "t3" / "testbed" / "data" / "a.txt")  # three names again, one outside,
    assert _problem(out, "t2") == f"{out / 'tasks' / 't2' / 'testbed'}/data/a.txt: {OUTSIDE_LINK}"  # a new change time
    os.replace(outside / "kept.txt", out / "tasks" / "t3" / "testbed" / "data" / "a.txt")
    assert _problem(out, "t2") is None


def test_a_name_moved_between_siblings_while_they_are_looked_at_counts_once(tmp_path, outside, monkeypatch):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7", "t3": "7"})
    for office in (out / "tasks").glob("*/testbed/data/*.txt"):  # plain files: only the secret is looked up
        os.unlink(office)
        office.write_text("mine\n", encoding="utf-8")
    _link_secret(outside, out, "t1", "t2")  # three names: outside, t1, t2
    identity, calls = dataset_links._identity, []

    def moving(fd):  # once t2's name is found, it moves to t3, which is looked at next
        calls.append(fd)
        if len(calls) == 2:
            os.replace(out / "tasks" / "t2" / "testbed" / "data" / "leak.txt",
                       out / "tasks" / "t3" / "testbed" / "data" / "leak.txt")
        return identity(fd)

    monkeypatch.setattr(dataset_links, "_identity", moving)
    assert _problem(out, "t1") == _leak(out, "t1")
    assert len(calls) == 2  # found at t1 and t2; moved, it has another change time and counts nowhere


def test_a_link_made_while_the_names_are_looked_up_and_removed_before_the_open_counts_nothing(
        tmp_path, outside, monkeypatch):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    _link_secret(outside, out, "t1")  # two names: outside, t1
    looking = untrusted.sibling_names

    def growing(root, files):  # a second name inside while the reader looks, gone before it opens
        os.link(outside / "testbed" / "data" / "leak.txt", out / "tasks" / "t2" / "testbed" / "data" / "leak.txt")
        try:
            return looking(root, files)
        finally:
            os.unlink(out / "tasks" / "t2" / "testbed" / "data" / "leak.txt")

    monkeypatch.setattr(untrusted, "sibling_names", growing)
    assert _problem(out, "t1") == _leak(out, "t1")
    with pytest.raises(UntrustedInputError, match="leak.txt"):
        copy_tree(out / "tasks" / "t1" / "testbed", tmp_path / "copy")


def test_one_folder_counts_one_name_of_a_file_whatever_it_answers_to(tmp_path, outside, monkeypatch):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    data = [out / "tasks" / task_id / "testbed" / "data" for task_id in ("t1", "t2")]
    _link_secret(outside, out, "t1", "t2")
    os.link(outside / "testbed" / "data" / "leak.txt", data[0] / "LEAK.txt")  # four names: outside, t1 twice, t2
    folded, real_stat = os.stat(data[1]), os.stat

    class CaseBlind:  # t2's data/ answers as a case-folding folder would: LEAK.txt is leak.txt there
        def __getattr__(self, name):
            return getattr(os, name)

        def stat(self, path, *, dir_fd=None, follow_symlinks=True):
            held = os.fstat(dir_fd) if dir_fd is not None else None
            if held is not None and (held.st_dev, held.st_ino) == (folded.st_dev, folded.st_ino):
                path = path.lower()
            return real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(dataset_links, "os", CaseBlind())
    assert {s.path for s in scan_tree(out / "tasks" / "t1" / "testbed").skipped} == {"data/LEAK.txt", "data/leak.txt"}


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_counts_no_name(tmp_path):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    os.chown(out / "tasks" / "t1" / "testbed" / "data" / "a.txt", 4242, 4242)
    assert _problem(out, "t1") == f"{out / 'tasks' / 't1' / 'testbed'}/data/a.txt: {OUTSIDE_LINK}"


def test_a_hostile_index_is_read_within_bounds_and_never_raises(tmp_path):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    (out / "index.jsonl").write_text(json.dumps({"id": "t1", "world": "7"}) + "\n" + "[" * 100_000 + "\n",
                                     encoding="utf-8")
    assert _problem(out, "t1") is not None  # t2 is past the line that ends the reading
    _index(out, [{"id": "\ud800", "world": "7"}, {"id": "t1", "world": "7"}, {"id": "t2", "world": "7"}])
    assert _problem(out, "t1") is not None
    _index(out, [{"id": f"x{i}", "world": "7"} for i in range(dataset_links.MAX_SIBLINGS)]
           + [{"id": "t1", "world": "7"}, {"id": "t2", "world": "7"}])
    assert _problem(out, "t1") is not None  # a world past the limit shares nothing
    with open(out / "index.jsonl", "w", encoding="utf-8") as handle:
        handle.write("\n" * 1_000_000)
    assert _problem(out, "t1") is not None


def test_a_linked_index_or_tasks_folder_is_not_followed(tmp_path):
    out = _dataset(tmp_path, {"t1": "7", "t2": "7"})
    real = tmp_path / "index.real"
    os.replace(out / "index.jsonl", real)
    os.symlink(real, out / "index.jsonl")
    assert _problem(out, "t1") is not None  # no index read through a link: no siblings
    os.replace(real, out / "index.jsonl.new")
    os.replace(out / "index.jsonl.new", out / "index.jsonl")
    assert _problem(out, "t1") is None
    moved = tmp_path / "tasks.real"
    os.replace(out / "tasks", moved)
    os.symlink(moved, out / "tasks")
    dataset_links._known.clear()  # as in a new process: the files found inside are not remembered
    assert _problem(out, "t1") is not None  # tasks/ through a link: no siblings
    files = [(("data", "a.txt"), (1, 1))]
    assert dataset_links.sibling_names(tmp_path / "elsewhere" / "testbed", files) == {}  # not a task's tree
