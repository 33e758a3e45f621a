"""An output folder a build was killed in before it recorded anything (orchestrator.build.check_out_folder)."""

import pytest

from backends.folder_lock import LOCK_NAME
from orchestrator.dataset_folder import BuildError, check_out_folder


def test_a_start_killed_while_writing_build_json_counts_as_empty(tmp_path):
    out = tmp_path / "ds"
    out.mkdir()
    (out / LOCK_NAME).write_text("")
    (out / ".build.json.k2x9.tmp").write_text('{"config": ')  # the first build.json, cut by kill -9
    for resume in (True, False):
        check_out_folder(out, "digest", resume=resume)
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]


def test_anything_else_without_build_json_is_still_refused(tmp_path):
    out = tmp_path / "ds"
    out.mkdir()
    (out / ".build.json.k2x9.tmp").write_text("{}")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match="not a homeragents build folder"):
        check_out_folder(out, "digest", resume=True)
    assert (out / "notes.txt").exists() and (out / ".build.json.k2x9.tmp").exists()


def test_a_start_killed_while_proving_the_folder_writable_counts_as_empty(tmp_path):
    out = tmp_path / "ds"
    out.mkdir()
    (out / LOCK_NAME).write_text("")
    (out / ".write-test.k2x9ab").write_bytes(b"")  # the empty probe, left by kill -9 before it was removed
    check_out_folder(out, "digest", resume=True)
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]


def test_the_write_probe_never_writes_through_a_planted_link(tmp_path):
    out, victim = tmp_path / "ds", tmp_path / "victim.txt"
    out.mkdir()
    victim.write_text("keep me")
    (out / ".write-test").symlink_to(victim)
    with pytest.raises(BuildError):
        check_out_folder(out, "digest", resume=False)  # not empty: refused, and the link untouched
    from backends.dataset_reader import ensure_writable_folder
    ensure_writable_folder(out)
    assert victim.read_text() == "keep me" and (out / ".write-test").is_symlink()
