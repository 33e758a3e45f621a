"""The eval run folder's states (harness.run_folder): what a kill can leave, and what a resume reads."""

from __future__ import annotations

import json

import pytest

from harness.run_folder import PROGRESS, RESULTS, RUN, ProgressLog, RunFolderError, check_out, clear, earlier_run

HEADER = {"header": {"config": {"agent": "oracle"}, "dataset_fingerprint": "abc"}}


def _row(task: str, trial: int = 1, error: str | None = None) -> dict:
    return {"id": task, "trial": trial, "passed": True, "criteria": [], "error": error}


def test_check_out_refuses_a_link_a_file_a_foreign_folder_and_an_earlier_run_without_a_flag(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(RunFolderError, match="is a symlink"):
        check_out(tmp_path / "link", resume=True, overwrite=False)
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunFolderError, match="not a folder"):
        check_out(tmp_path / "file", resume=False, overwrite=False)
    (tmp_path / "real" / "notes.txt").write_text("mine")
    with pytest.raises(RunFolderError, match="holds no earlier evaluation run"):
        check_out(tmp_path / "real", resume=False, overwrite=True)
    run = tmp_path / "run"
    run.mkdir()
    (run / RESULTS).write_text("")
    (run / f".{RUN}.123.tmp").write_text("")  # an interrupted atomic write
    with pytest.raises(RunFolderError, match="pass --resume .* or --overwrite"):
        check_out(run, resume=False, overwrite=False)
    check_out(run, resume=True, overwrite=False)
    with pytest.raises(RunFolderError, match="exclude each other"):
        check_out(run, resume=True, overwrite=True)
    (run / ".cache").mkdir()
    clear(run)
    assert sorted(p.name for p in run.iterdir()) == [".cache"]
    # a link planted under a temporary file's name is refused naming the link, not as a foreign folder
    (run / RESULTS).write_text("")
    (run / f".{RUN}.77.tmp").symlink_to(tmp_path / "file")
    with pytest.raises(RunFolderError) as refused:
        check_out(run, resume=True, overwrite=False)
    assert f".{RUN}.77.tmp has a temporary file's name but is a symlink" in str(refused.value)
    assert "no earlier evaluation run" not in str(refused.value)
    assert (tmp_path / "file").read_text() == "x"


def test_the_progress_log_is_header_first_and_keeps_the_earlier_lines(tmp_path):
    with ProgressLog(tmp_path, HEADER, [_row("a")]) as log:
        lines = (tmp_path / PROGRESS).read_text().splitlines()
        assert [json.loads(line) for line in lines] == [HEADER, _row("a")]  # on disk before any task runs
        log.write([_row("b")])
    assert len((tmp_path / PROGRESS).read_text().splitlines()) == 3
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_resume_reads_every_state_a_kill_leaves(tmp_path):
    same = lambda run: run.get("config") == {"agent": "oracle"}  # noqa: E731
    assert earlier_run(tmp_path, HEADER, 1, same).done == set()  # nothing yet
    (tmp_path / RUN).write_text(json.dumps({"state": "running", "config": {"agent": "oracle"}}))
    (tmp_path / PROGRESS).write_text("")  # killed before the header reached the disk (older writers)
    assert earlier_run(tmp_path, HEADER, 1, same).done == set()
    (tmp_path / PROGRESS).write_text("\n".join(json.dumps(x) for x in [
        HEADER, _row("a"), _row("b", error="error: endpoint: down"), {"id": "c", "skipped": "unusable"}])
        + '\n{"id": "d", "tri')  # a line cut by the kill
    found = earlier_run(tmp_path, HEADER, 1, same)
    assert sorted(found.done) == ["a", "c"]  # an endpoint's error runs again; the cut line is redone
    assert list(found.items(lambda task: True)) == [_row("a"), {"id": "c", "skipped": "unusable"}]
    assert list(found.items(lambda task: task != "a")) == [{"id": "c", "skipped": "unusable"}]  # only this run's
    (tmp_path / PROGRESS).unlink()  # a finished run: its rows come from results.jsonl
    (tmp_path / RUN).write_text(json.dumps({"state": "finished", "config": {"agent": "oracle"},
                                            "skipped": [{"id": "c", "error": "unusable"}]}))
    (tmp_path / RESULTS).write_text(json.dumps(_row("a")) + "\n" + json.dumps(_row("b")) + "\n")
    assert sorted(earlier_run(tmp_path, HEADER, 1, same).done) == ["a", "b", "c"]
    (tmp_path / RUN).write_text(json.dumps({"state": "running", "config": {"agent": "none"}}))
    with pytest.raises(RunFolderError, match="another agent"):
        earlier_run(tmp_path, HEADER, 1, same)


def test_a_resume_keeps_a_task_only_with_every_trial_and_the_last_row_of_each(tmp_path):
    same = lambda run: True  # noqa: E731
    lines = [HEADER, _row("a", 1), _row("b", 1), {**_row("a", 2), "steps": 1}, {**_row("a", 2), "steps": 2},
             _row("c", 1), _row("c", 2, error="error: timeout"), _row("d", 3), {"id": "b", "skipped": "gone"}]
    (tmp_path / PROGRESS).write_text("".join(json.dumps(x) + "\n" for x in lines))
    found = earlier_run(tmp_path, HEADER, 2, same)
    assert found.done == {"a", "b"}  # b: skipped for good; c: a trial ended by an error; d: trial 3 of 2
    assert list(found.items(lambda task: True)) == [_row("a", 1), {**_row("a", 2), "steps": 2},
                                                    {"id": "b", "skipped": "gone"}]


def test_a_folder_named_like_a_run_file_or_a_probe_is_foreign_and_a_probe_file_is_cleared(tmp_path):
    from harness.run_folder import clear

    run = tmp_path / "run"
    (run / ".write-test.dir").mkdir(parents=True)  # a folder, not what a killed probe leaves
    (run / "run.json").write_text("{}")
    with pytest.raises(RunFolderError, match="write-test.dir"):
        check_out(run, resume=False, overwrite=True)
    (run / ".write-test.dir").rmdir()
    (run / "results.jsonl").mkdir()
    with pytest.raises(RunFolderError, match="results.jsonl"):
        check_out(run, resume=False, overwrite=True)
    (run / "results.jsonl").rmdir()
    (run / ".write-test.k2x9").write_bytes(b"")  # left by a kill between the probe's creation and removal
    (run / ".write-test").write_bytes(b"")  # as an earlier version named it
    check_out(run, resume=False, overwrite=True)
    clear(run)
    assert sorted(p.name for p in run.iterdir()) == []
