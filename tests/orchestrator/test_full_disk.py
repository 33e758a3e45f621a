"""A disk that fills while a command writes ends it with one line naming the folder, the space free
there and the space the command still needs, exit 1 (``backends.batch.space_named``), whatever the
command. The write itself is made to fail with ENOSPC, as tests/backends/test_batch.py does: a
real full disk needs a mount, which a test cannot count on (``unshare -m`` with a small tmpfs shows
the same lines by hand)."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from tests.support.homer_cli import homer_here


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as os.write says it: no file name


def _line(proc, out: Path, again: str) -> re.Match:
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    found = re.fullmatch(rf"error: no space left on the device writing into {re.escape(str(out))} \([\d.]+ (MiB|KiB) "
                         rf"free, about ([\d.]+) (MiB|KiB) more needed\); free some space and {again}", line)
    assert found, line
    return found


@pytest.fixture
def empty(tmp_path) -> Path:
    """A dataset of no task: every command runs through to its writes in milliseconds."""
    (tmp_path / "ds" / "tasks").mkdir(parents=True)
    return tmp_path / "ds"


def test_probe_names_its_folder_and_the_bytes_it_was_writing(empty, tmp_path, monkeypatch):
    import harness.probe_run

    monkeypatch.setattr(harness.probe_run, "atomic_write", _full)
    out = tmp_path / "probe"
    _line(homer_here("probe", empty, "--agent", "none", "--out", out, "-q"), out, "run the probe again")


def test_eval_names_its_folder_and_what_a_run_still_writes(empty, tmp_path, monkeypatch):
    import harness.run_folder
    from harness.runner import REPORT_BYTES

    monkeypatch.setattr(harness.run_folder, "write_synced", _full)  # run.json, its first file
    out = tmp_path / "run"
    found = _line(homer_here("eval", empty, "--agent", "none", "--out", out, "-q"), out, r"rerun with --resume")
    assert round(float(found[2])) == REPORT_BYTES // 1024  # no task to go: the reports


def test_report_and_review_report_name_their_folder_and_exit_1(empty, tmp_path, monkeypatch):
    import office_env.workspace
    import orchestrator.dataset_writer

    run = tmp_path / "run"
    assert homer_here("eval", empty, "--agent", "none", "--out", run, "-q").returncode == 0
    monkeypatch.setattr(office_env.workspace, "atomic_write", _full)
    _line(homer_here("report", run), run, "run the report again")
    assert not (run / "research-report.md").exists()
    monkeypatch.setattr(orchestrator.dataset_writer, "atomic_write", _full)
    folder = tmp_path / "review"
    _line(homer_here("review", "report", empty, "--out", folder), folder, "run the report again")  # was exit 2


def test_a_write_no_command_named_still_names_its_folder(tmp_path, monkeypatch):
    """The fallback of ``orchestrator.cli.main``: the folder of the file the error names."""
    import orchestrator.build

    target = tmp_path / "elsewhere" / "file.json"

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(orchestrator.build, "space_needed", full)  # the build's own estimate fails too
    monkeypatch.setattr(orchestrator.build, "build", full)
    proc = homer_here("build", "--n", "1", "--out", tmp_path / "out", "-q")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: no space left on the device writing {target} (under {target.parent}: ")
