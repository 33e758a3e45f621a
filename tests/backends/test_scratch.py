"""Where a batch keeps its short-lived files, and that a killed batch's files do not stay there."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from backends import scratch
from orchestrator.build import build
from orchestrator.roles import BuildConfig


def test_the_variable_names_the_place_and_each_claim_is_a_private_folder_of_this_process(tmp_path, monkeypatch):
    monkeypatch.setenv(scratch.ENV, str(tmp_path / "s"))
    assert scratch.scratch_root() == tmp_path / "s"
    first, second = scratch.claim_work_folder(), scratch.claim_work_folder()
    assert first != second and first.parent == tmp_path / "s" and first.name.startswith(scratch.PREFIX)
    assert (first.stat().st_mode & 0o777) == 0o700
    assert (first / scratch.OWNER).read_text().split()[0] == str(os.getpid())
    scratch.release_work_folder(first)
    assert not first.exists() and second.exists()


def test_without_the_variable_a_memory_file_system_with_room_is_preferred(monkeypatch):
    monkeypatch.delenv(scratch.ENV, raising=False)
    root = scratch.scratch_root()
    shm_ok = scratch.SHM.is_dir() and os.access(scratch.SHM, os.W_OK)
    if shm_ok:
        st = os.statvfs(scratch.SHM)
        shm_ok = st.f_bavail * st.f_frsize >= scratch.MIN_FREE_BYTES
    assert root == (scratch.SHM if shm_ok else Path(tempfile.gettempdir()))
    monkeypatch.setattr(scratch, "MIN_FREE_BYTES", 1 << 62)  # no memory file system has that much room
    assert scratch.scratch_root() == Path(tempfile.gettempdir())


def test_a_work_folder_whose_process_is_gone_is_removed_by_the_next_claim(tmp_path, monkeypatch):
    monkeypatch.setenv(scratch.ENV, str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    here = scratch._pid_namespace()
    orphan = tmp_path / (scratch.PREFIX + "killed")
    (orphan / "worlds").mkdir(parents=True)
    (orphan / scratch.OWNER).write_text(f"{dead.stdout.strip()} {here}")
    other_container = tmp_path / (scratch.PREFIX + "elsewhere")
    other_container.mkdir()
    (other_container / scratch.OWNER).write_text(f"{dead.stdout.strip()} pid:[not-ours]")
    unowned = tmp_path / (scratch.PREFIX + "garbled")
    unowned.mkdir()
    (unowned / scratch.OWNER).write_text("not a pid")
    live = tmp_path / (scratch.PREFIX + "running")
    live.mkdir()
    (live / scratch.OWNER).write_text(f"{os.getppid()} {here}")
    elsewhere = tmp_path / "someone-else"
    elsewhere.mkdir()
    link = tmp_path / (scratch.PREFIX + "link")
    link.symlink_to(elsewhere)
    scratch.claim_work_folder()
    assert not orphan.exists() and not unowned.exists()
    assert live.exists() and elsewhere.exists() and link.is_symlink()
    assert other_container.exists()  # its owner's id means nothing in this PID namespace


def test_a_build_leaves_nothing_in_its_scratch_place(tmp_path, monkeypatch):
    monkeypatch.setenv(scratch.ENV, str(tmp_path / "scratch"))
    summary = build(tmp_path / "out", 2, BuildConfig(seed=3, days=2, utterances_per_day=12), workers=1)
    assert summary.accepted == 2
    assert list((tmp_path / "scratch").iterdir()) == []
    assert not (tmp_path / "out" / ".work").exists()


def test_a_nodes_work_folder_is_shared_by_its_workers_owned_and_released_with_the_batchs(tmp_path, monkeypatch):
    monkeypatch.setenv(scratch.ENV, str(tmp_path))
    work = scratch.claim_work_folder()
    node = scratch.node_work_folder(str(work))
    assert node == scratch.node_work_folder(str(work)) == tmp_path / f"{work.name}-node"
    assert (node / scratch.OWNER).read_text().split()[0] == str(os.getpid())  # a sweep knows whose it is
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # its temporary name is gone
    scratch.release_work_folder(work)
    assert not node.exists() and not work.exists()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    earlier = tmp_path / f"{scratch.PREFIX}earlier-node"  # an earlier batch's, whose worker process is gone
    earlier.mkdir()
    (earlier / scratch.OWNER).write_text(f"{dead.stdout.strip()} {scratch._pid_namespace()}")
    scratch.node_work_folder(str(tmp_path / f"{scratch.PREFIX}next"))
    assert not earlier.exists()
    trap = tmp_path / f"{scratch.PREFIX}trap-node"
    trap.symlink_to(tmp_path / "elsewhere")  # a name another user could have planted
    with pytest.raises(PermissionError):
        scratch.node_work_folder(str(tmp_path / f"{scratch.PREFIX}trap"))


def test_a_nodes_work_folder_a_live_process_works_in_outlives_the_process_that_made_it(tmp_path, monkeypatch):
    """A local Ray instance ends with each round, and with it the worker that made the node's
    folder; the next round's workers work in it still. Another batch's sweep must leave it while
    one of them holds it (it removed the worlds under a running attempt), and take it after."""
    monkeypatch.setenv(scratch.ENV, str(tmp_path))
    batch = str(tmp_path / f"{scratch.PREFIX}batch")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom backends import scratch\nscratch.node_work_folder(sys.argv[1])\n"
         "print('held', flush=True)\nsys.stdin.read()", batch],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        node = tmp_path / f"{scratch.PREFIX}batch-node"
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        (node / scratch.OWNER).write_text(f"{dead.stdout.strip()} {scratch._pid_namespace()}")  # its maker is gone
        scratch.release_work_folder(scratch.claim_work_folder())  # another batch's sweep
        assert (node / scratch.OWNER).exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    scratch.release_work_folder(scratch.claim_work_folder())
    assert not node.exists()
