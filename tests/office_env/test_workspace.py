"""Workspace: sandboxed path resolution, users, listing, copies, snapshots, atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from office_env import OfficeError, PathError, Snapshot, Workspace
from office_env import workspace as workspace_module
from office_env.sample import SAMPLE_NOW as NOW




@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the testbed (never inside it) holding a secret file."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret", encoding="utf-8")
    return folder


def stray_temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp"))


# -- construction ------------------------------------------------------------------------------

def test_missing_root_is_refused(tmp_path):
    with pytest.raises(PathError, match="does not exist"):
        Workspace(tmp_path / "nope")


def test_root_is_resolved_and_now_kept(testbed):
    ws = Workspace(testbed / "data" / "..", now=NOW)
    assert ws.root == testbed.resolve()
    assert ws.now == NOW


def test_relative_names_a_path_as_resolving_it_in_full_would(testbed, outside):
    """A path's testbed-relative name is read off a plain path below the root; a link, a missing
    part, "." or ".." among its parts still gives what resolving the whole path gives."""
    ws = Workspace(testbed, now=NOW)
    (ws.root / "data" / "inner").mkdir()
    (ws.root / "data" / "inner" / "f.txt").write_text("x", encoding="utf-8")
    (ws.root / "linked").symlink_to(ws.root / "data" / "inner")
    (ws.root / "away").symlink_to(outside)
    for rel in ["data/notes.docx", "data/inner/f.txt", "linked/f.txt", "linked", "data/inner/../notes.docx",
                "data/./notes.docx", "data/missing/new.txt", "emails", "data//notes.docx"]:
        path = Path(f"{ws.root}/{rel}")
        assert ws.relative(path) == path.resolve().relative_to(ws.root).as_posix(), rel
    assert ws.relative(ws.root / "linked" / "f.txt") == "data/inner/f.txt"
    with pytest.raises(ValueError):
        ws.relative(ws.root / "away" / "secret.txt")  # a link out of the testbed has no name in it


# -- resolve: accepted --------------------------------------------------------------------------

@pytest.mark.parametrize("relpath", ["data/notes.docx", "./data/notes.docx", "data/./notes.docx",
                                     "data\\notes.docx", "  data/notes.docx  "])
def test_resolve_accepts_relative_paths(ws, testbed, relpath):
    assert ws.resolve(relpath) == testbed.resolve() / "data" / "notes.docx"


def test_resolve_accepts_paths_that_do_not_exist_yet(ws, testbed):
    assert ws.resolve("data/new/report.docx") == testbed.resolve() / "data" / "new" / "report.docx"


# -- resolve: refused ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "relpath, message",
    [
        ("/etc/passwd", "absolute"),
        ("C:\\x", "absolute"),
        ("c:/windows/x", "absolute"),
        ("\\\\server\\share\\x", "absolute"),
        ("~/x", "absolute"),
        ("~", "absolute"),
        ("..", "'..'"),
        ("../x", "'..'"),
        ("data/../../x", "'..'"),
        ("data/..", "'..'"),
        ("data\\..\\..\\x", "'..'"),
        ("data/x\x00.txt", "NUL byte"),
        ("", "empty path"),
        ("   ", "empty path"),
        (".", "testbed itself"),
        ("./", "testbed itself"),
    ],
)
def test_resolve_refuses_escapes_with_a_clear_message(ws, relpath, message):
    with pytest.raises(PathError) as info:
        ws.resolve(relpath, field="file_path")
    text = str(info.value)
    assert text.startswith("file_path:")
    assert message in text


@pytest.mark.parametrize("value, type_name", [(None, "NoneType"), (42, "int"), (["data"], "list"),
                                              (b"data/x", "bytes"), (Path("data/x"), "PosixPath")])
def test_resolve_refuses_non_strings(ws, value, type_name):
    with pytest.raises(PathError, match=f"path: expected a path string, got {type_name}"):
        ws.resolve(value)


def test_symlinked_dir_pointing_outside_is_refused(ws, testbed, outside):
    os.symlink(outside, testbed / "data" / "out")
    for relpath in ("data/out", "data/out/secret.txt", "data/out/new.txt"):
        with pytest.raises(PathError, match="leads outside the testbed"):
            ws.resolve(relpath)


def test_symlinked_file_pointing_outside_is_refused(ws, testbed, outside):
    os.symlink(outside / "secret.txt", testbed / "data" / "secret.txt")
    with pytest.raises(PathError, match=r"'data/secret.txt' leads outside the testbed"):
        ws.resolve("data/secret.txt")


def test_dangling_symlink_pointing_outside_is_refused(ws, testbed, outside):
    os.symlink(outside / "not-yet.txt", testbed / "data" / "later.txt")
    with pytest.raises(PathError, match="outside the testbed"):
        ws.resolve("data/later.txt")
    with pytest.raises(PathError):
        ws.write_bytes("data/later.txt", b"x")
    assert not (outside / "not-yet.txt").exists()


def test_symlinks_pointing_inside_are_allowed(ws, testbed):
    os.symlink(testbed / "data" / "notes.docx", testbed / "data" / "alias.docx")
    os.symlink("data", testbed / "docs")  # relative link to a folder inside
    real = testbed.resolve() / "data" / "notes.docx"
    assert ws.resolve("data/alias.docx") == real
    assert ws.resolve("docs/notes.docx") == real


def test_resolve_gives_the_full_resolution_for_every_kind_of_path(ws, testbed, outside):
    """The walk below the root gives what resolving the whole path gives, or refuses what leads out."""
    os.symlink("data", testbed / "docs")
    os.symlink(testbed / "docs", testbed / "docs2")  # a chain of links inside
    os.symlink(outside, testbed / "data" / "out")
    os.symlink("loop", testbed / "loop")  # a link to itself
    (testbed / "data" / "deep" / "er").mkdir(parents=True)
    root = testbed.resolve()
    for relpath in ("data", "data/notes.docx", "docs/notes.docx", "docs2/notes.docx", "docs2/new/x.txt",
                    "data/notes.docx/below", "data/deep/er", "data/deep/er/new.txt", "missing/a/b.txt"):
        assert ws.resolve(relpath) == (root / relpath).resolve(), relpath
    for relpath in ("data/out/secret.txt", "docs/out", "docs2/out/new.txt"):
        with pytest.raises(PathError, match="leads outside the testbed"):
            ws.resolve(relpath)
    for relpath in ("loop", "loop/x"):  # what resolving the whole path does with a loop, as before
        try:
            expected = (root / relpath).resolve()
        except RuntimeError as exc:  # Python < 3.13
            with pytest.raises(type(exc)):
                ws.resolve(relpath)
        else:
            assert ws.resolve(relpath) == expected


def test_write_through_symlink_outside_never_touches_the_target(ws, testbed, outside):
    os.symlink(outside / "secret.txt", testbed / "data" / "secret.txt")
    with pytest.raises(PathError):
        ws.write_bytes("data/secret.txt", b"overwritten")
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "top secret"


# -- users --------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    ("alice", "alice"), ("alice@example.com", "alice"), ("  bob  ", "bob"), ("Dana Reyes", "Dana Reyes"),
    ("j.doe-2", "j.doe-2"), ("Carol@other.org", "Carol"),
])
def test_check_user_accepts_names_and_addresses(given, expected):
    assert Workspace.check_user(given) == expected


@pytest.mark.parametrize("bad", ["", "   ", ".", "..", "../x", "a/b", "a\\b", "/root", ".hidden",
                                 "-dash", "@example.com", "x" * 65, "nul\x00byte", "tab\tname"])
def test_check_user_refuses_bad_names(bad):
    with pytest.raises(PathError, match="recipient: .* is not a valid user name"):
        Workspace.check_user(bad, field="recipient")


def test_check_user_refuses_non_strings():
    with pytest.raises(PathError, match="user: expected a user name, got int"):
        Workspace.check_user(7)


def test_mailbox_and_calendar_lookup_ignore_case(ws, testbed):
    root = testbed.resolve()
    assert ws.mailbox("ALICE") == root / "emails" / "alice"
    assert ws.mailbox("Alice@Example.com") == root / "emails" / "alice"
    assert ws.calendar_file("aLiCe") == root / "calendar" / "alice.ics"


def test_exact_match_wins_over_case_insensitive_match(ws, testbed):
    (testbed / "emails" / "Alice").mkdir()
    root = testbed.resolve()
    assert ws.mailbox("Alice") == root / "emails" / "Alice"
    assert ws.mailbox("alice") == root / "emails" / "alice"


def test_unknown_user_gets_the_default_location(ws, testbed):
    root = testbed.resolve()
    assert ws.mailbox("zed") == root / "emails" / "zed"
    assert ws.calendar_file("zed") == root / "calendar" / "zed.ics"
    assert not (root / "emails" / "zed").exists()


def test_mailbox_symlinked_outside_is_refused(ws, testbed, outside):
    os.symlink(outside, testbed / "emails" / "eve")
    with pytest.raises(PathError, match="outside the testbed"):
        ws.mailbox("eve")
    with pytest.raises(PathError, match="outside the testbed"):
        ws.mailbox("EVE")


def _entry_as_found_by_following_links(ws, folder, name, suffix=""):
    """``find_user_entry`` as it was written before its fast path: the exact entry by ``exists``
    (following links), then a case-blind match."""
    base = ws.root / folder
    if (base / f"{name}{suffix}").exists():
        return ws.resolve(f"{folder}/{name}{suffix}")
    if base.is_dir():
        for entry in sorted(base.iterdir()):
            if entry.name.lower() == f"{name}{suffix}".lower():
                return ws.resolve(f"{folder}/{entry.name}")
    return None


def test_find_user_entry_finds_what_following_links_finds(ws, testbed, outside):
    emails, calendar = testbed / "emails", testbed / "calendar"
    (emails / "Carol").mkdir()
    (emails / "dave").write_text("a file where a mailbox would be", encoding="utf-8")
    os.symlink(emails / "alice", emails / "ally")  # a link to a mailbox inside
    os.symlink(emails / "gone", emails / "ghost")  # a dangling link inside
    os.symlink(outside, emails / "eve")  # a link out
    os.symlink(calendar / "alice.ics", calendar / "al.ics")
    (testbed / "data" / "emails").mkdir()
    for folder, suffix in (("emails", ""), ("calendar", ".ics"), ("data/emails", ""), ("nowhere", "")):
        for name in ("alice", "ALICE", "carol", "Carol", "dave", "ally", "ALLY", "ghost", "eve", "Eve", "al", "zed"):
            try:
                expected = _entry_as_found_by_following_links(ws, folder, name, suffix)
            except PathError as exc:
                with pytest.raises(PathError, match="outside the testbed"):
                    ws.find_user_entry(folder, name, suffix)
                assert "outside the testbed" in str(exc)
                continue
            assert ws.find_user_entry(folder, name, suffix) == expected, (folder, name)


def test_bad_user_is_refused_by_mailbox_and_calendar(ws):
    with pytest.raises(PathError, match="owner: '../alice' is not a valid user name"):
        ws.mailbox("../alice", field="owner")
    with pytest.raises(PathError, match="not a valid user name"):
        ws.calendar_file("a/b")


def test_users_lists_mailboxes_and_calendars(ws, testbed):
    assert ws.users() == ["alice", "bob"]
    (testbed / "calendar" / "carol.ics").write_bytes(b"")
    assert ws.users() == ["alice", "bob", "carol"]


# -- listing ------------------------------------------------------------------------------------

ALL_FILES = [
    "calendar/alice.ics",
    "data/invoice.pdf",
    "data/notes.docx",
    "data/readme.txt",
    "data/scores.xlsx",
    "emails/alice/Lunch.eml",
    "emails/alice/Quarterly budget.eml",
    "emails/bob/Re Quarterly budget.eml",
]


def test_list_files_whole_testbed(ws):
    assert ws.list_files() == ALL_FILES
    assert ws.list_files(".") == ALL_FILES
    assert ws.list_files("./") == ALL_FILES


def test_list_files_of_a_folder(ws):
    assert ws.list_files("data") == [f for f in ALL_FILES if f.startswith("data/")]
    assert ws.list_files("./emails/alice") == ["emails/alice/Lunch.eml", "emails/alice/Quarterly budget.eml"]
    assert ws.list_files("missing") == []


def test_list_files_skips_symlinks_and_refuses_escapes(ws, testbed, outside):
    os.symlink(outside, testbed / "data" / "out")
    os.symlink(outside / "secret.txt", testbed / "data" / "secret.txt")
    os.symlink(testbed / "data" / "notes.docx", testbed / "data" / "alias.docx")
    listed = ws.list_files()
    assert listed == ALL_FILES
    assert not any("secret" in f or "alias" in f for f in listed)
    with pytest.raises(PathError, match="folder: '../' contains '..'"):
        ws.list_files("../")
    with pytest.raises(PathError, match="outside the testbed"):
        ws.list_files("data/out")


# -- copies -------------------------------------------------------------------------------------

def test_copy_is_independent(ws, testbed, tmp_path):
    copy = ws.copy_to(tmp_path / "copy")
    assert isinstance(copy, Workspace)
    assert copy.root == (tmp_path / "copy").resolve()
    assert copy.now == NOW
    assert copy.snapshot() == ws.snapshot()
    copy.write_bytes("data/readme.txt", b"changed in the copy")
    copy.write_bytes("data/extra.txt", b"only in the copy")
    assert (testbed / "data" / "readme.txt").read_text(encoding="utf-8") == "Plain text file for the team.\n"
    assert not (testbed / "data" / "extra.txt").exists()
    assert ws.snapshot().diff(copy.snapshot()).to_dict() == {
        "added": ["data/extra.txt"], "removed": [], "changed": ["data/readme.txt"],
    }


def test_copy_refuses_a_testbed_holding_symlinks(ws, testbed, tmp_path, outside):
    os.symlink(outside, testbed / "data" / "out")
    os.symlink(outside / "secret.txt", testbed / "data" / "secret.txt")
    with pytest.raises(PathError) as info:
        ws.copy_to(tmp_path / "copy")
    assert str(info.value) == f"{testbed.resolve()}/data/out: is a symlink (and 1 more refused entry)"
    assert not (tmp_path / "copy").exists()


def test_copy_holds_fresh_files_and_links_only_trusted_sources(ws, testbed, tmp_path):
    copy = ws.copy_to(tmp_path / "copy", link=True)  # an untrusted source: copied, never linked
    source, copied = testbed / "data" / "notes.docx", copy.root / "data" / "notes.docx"
    assert copied.read_bytes() == source.read_bytes()
    assert os.stat(copied).st_ino != os.stat(source).st_ino and os.stat(source).st_nlink == 1
    assert copy.trusted and not ws.trusted
    scratch = copy.copy_to(tmp_path / "scratch", link=True)  # the project's own copy: linked
    assert os.stat(scratch.root / "data" / "notes.docx").st_ino == os.stat(copied).st_ino
    assert scratch.snapshot() == copy.snapshot() == ws.snapshot()


def test_copy_keeps_empty_folders(ws, testbed, tmp_path):
    (testbed / "data" / "empty" / "deeper").mkdir(parents=True)
    copy = ws.copy_to(tmp_path / "copy")
    assert (copy.root / "data" / "empty" / "deeper").is_dir()


def test_symlinked_root_is_refused(testbed, tmp_path):
    os.symlink(testbed, tmp_path / "link")
    with pytest.raises(PathError, match="is a symlink"):
        Workspace(tmp_path / "link")


def test_copy_refuses_existing_destination(ws, tmp_path):
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "keep.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(PathError, match="already exists"):
        ws.copy_to(dest)
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


# -- snapshots ----------------------------------------------------------------------------------

def test_snapshot_hashes_every_regular_file(ws, testbed, outside):
    os.symlink(outside / "secret.txt", testbed / "data" / "secret.txt")
    os.symlink(outside, testbed / "data" / "out")
    os.mkfifo(testbed / "data" / "pipe")  # reading it would block forever
    snap = ws.snapshot()
    assert sorted(snap.files) == ALL_FILES
    assert all(len(digest) == 64 for digest in snap.files.values())
    assert Snapshot.of(testbed) == snap


def test_diff_lists_added_removed_changed_exactly(ws, testbed):
    before = ws.snapshot()
    (testbed / "data" / "new.txt").write_text("new", encoding="utf-8")
    (testbed / "emails" / "alice" / "Lunch.eml").unlink()
    (testbed / "data" / "readme.txt").write_text("edited", encoding="utf-8")
    os.utime(testbed / "data" / "notes.docx", (0, 0))  # touched, same bytes: not a change
    diff = before.diff(ws.snapshot())
    assert diff.added == ["data/new.txt"]
    assert diff.removed == ["emails/alice/Lunch.eml"]
    assert diff.changed == ["data/readme.txt"]
    assert not diff.empty
    summary = diff.summary()
    assert summary.splitlines()[0] == "1 added, 1 removed, 1 changed"
    for line in ("added: data/new.txt", "removed: emails/alice/Lunch.eml", "changed: data/readme.txt"):
        assert line in summary.splitlines()
    assert "notes.docx" not in summary


def test_diff_with_only_changes_mentions_only_changes(ws, testbed):
    before = ws.snapshot()
    (testbed / "data" / "readme.txt").write_text("edited", encoding="utf-8")
    (testbed / "calendar" / "alice.ics").write_bytes(b"other")
    diff = before.diff(ws.snapshot())
    assert diff.to_dict() == {"added": [], "removed": [], "changed": ["calendar/alice.ics", "data/readme.txt"]}
    assert diff.summary().splitlines()[0] == "2 changed"
    assert "added" not in diff.summary() and "removed" not in diff.summary()


def test_empty_diff_says_no_files_changed(ws):
    diff = ws.snapshot().diff(ws.snapshot())
    assert diff.empty
    assert diff.summary() == "no files changed"
    assert diff.to_dict() == {"added": [], "removed": [], "changed": []}


# -- atomic writes ------------------------------------------------------------------------------

def test_write_bytes_replaces_content_and_leaves_no_temp_files(ws, testbed):
    target = ws.write_bytes("data/readme.txt", b"replaced")
    assert target == testbed.resolve() / "data" / "readme.txt"
    assert target.read_bytes() == b"replaced"
    ws.write_bytes("data/readme.txt", b"again")
    assert target.read_bytes() == b"again"
    assert stray_temp_files(testbed) == []


def test_write_bytes_creates_folders(ws, testbed):
    ws.write_bytes("data/sub/deeper/new.bin", b"\x00\x01")
    assert (testbed / "data" / "sub" / "deeper" / "new.bin").read_bytes() == b"\x00\x01"
    assert stray_temp_files(testbed) == []


def test_write_bytes_under_a_file_is_refused_as_making_its_folder_refuses(ws, testbed):
    with pytest.raises(FileExistsError):  # the folder "data/readme.txt" cannot be made: a file holds its name
        ws.write_bytes("data/readme.txt/inner.txt", b"x")
    assert (testbed / "data" / "readme.txt").read_text(encoding="utf-8") == "Plain text file for the team.\n"
    assert stray_temp_files(testbed) == []


def test_written_files_are_ordinary_shared_files(ws, testbed):
    old = os.umask(0o077)
    try:
        target = ws.write_bytes("data/new/shared.txt", b"x")
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o644


def test_write_bytes_refuses_escapes(ws, tmp_path):
    with pytest.raises(PathError, match="out_path: '../escaped.txt' contains '..'"):
        ws.write_bytes("../escaped.txt", b"x", field="out_path")
    assert not (tmp_path / "escaped.txt").exists()


def test_write_bytes_onto_a_folder_names_the_path(ws, testbed):
    with pytest.raises(OfficeError) as info:
        ws.write_bytes("data", b"x")
    assert str(info.value) == "data: is a folder, not a file"
    assert (testbed / "data").is_dir()
    assert stray_temp_files(testbed) == []


def test_failed_write_keeps_old_content_and_removes_temp_file(ws, testbed, monkeypatch):
    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(workspace_module.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        ws.write_bytes("data/readme.txt", b"half written")
    assert (testbed / "data" / "readme.txt").read_text(encoding="utf-8") == "Plain text file for the team.\n"
    assert stray_temp_files(testbed) == []
