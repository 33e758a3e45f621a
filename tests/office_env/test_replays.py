"""The one replay copy the gates of a task share: each replay starts from the testbed exactly."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime, timedelta, timezone

import pytest

from office_env import PathError, Snapshot, default_registry
from office_env.formats import docx_io, eml_io, pdf_io
from office_env.formats.built import Kept, remembered, remembered_text
from office_env.replays import COPY_NAME, Replays, replay_plan
from office_env.sample import SAMPLE_NOW, write_sample_office

WRITES = [  # a new mailbox, a new file, a changed sheet, a removed event, an answer
    {"tool": "email_send_email", "args": {"sender": "alice", "recipient": "zoe", "subject": "Hi", "content": "4,200"}},
    {"tool": "word_write_to_file", "args": {"file_path": "data/new/memo.docx", "content": "Memo\nline"}},
    {"tool": "word_convert_to_pdf", "args": {"file_path": "data/notes.docx"}},
    {"tool": "excel_set_cell", "args": {"file_path": "data/scores.xlsx", "row": 2, "col": 2, "value": 1}},
    {"tool": "calendar_delete_event", "args": {"user": "alice", "summary": "Team sync"}},
    {"tool": "system_write_answer", "args": {"text": "42"}},
]


@pytest.fixture
def testbed(tmp_path):
    return write_sample_office(tmp_path / "world")


def identities(root):
    return {p.relative_to(root).as_posix(): (p.stat().st_dev, p.stat().st_ino) for p in root.rglob("*") if p.is_file()}


def test_each_replay_starts_from_the_testbed_and_shares_its_files(testbed, tmp_path):
    replays = Replays(testbed, SAMPLE_NOW, tmp_path / "work", trusted=True)
    original = Snapshot.of(testbed)
    for round_ in range(3):
        ws = replays.state(WRITES, f"replay-{round_}")
        assert ws.root == (tmp_path / "work" / COPY_NAME).resolve()
        changed = original.diff(Snapshot.of(ws.root))
        assert not changed.empty  # the plan wrote: a new mailbox, a memo, a PDF, a sheet, a calendar, an answer
        fresh = replays.workspace(f"next-{round_}")
        assert original.diff(Snapshot.of(fresh.root)).empty, "a replay sees an earlier replay's writes"
        assert identities(fresh.root) == identities(testbed)  # linked again, not copied
    assert original.diff(Snapshot.of(testbed)).empty


def test_a_reused_copy_leaves_what_a_fresh_copy_leaves(testbed, tmp_path):
    reused = Replays(testbed, SAMPLE_NOW, tmp_path / "a", trusted=True)
    fresh = Replays(testbed, SAMPLE_NOW, tmp_path / "b", trusted=True, reuse=False)
    plans = [WRITES, WRITES[::-1], WRITES[2:4], [], WRITES]
    for i, plan in enumerate(plans):
        one, two = reused.state(plan, f"p{i}"), fresh.state(plan, f"p{i}")
        assert Snapshot.of(one.root).diff(Snapshot.of(two.root)).empty
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [f"p{i}" for i in range(len(plans))]


def test_another_tasks_replays_never_see_these_writes(testbed, tmp_path):
    first = Replays(testbed, SAMPLE_NOW, tmp_path / "task-1", trusted=True)
    second = Replays(testbed, SAMPLE_NOW, tmp_path / "task-2", trusted=True)
    first.state(WRITES, "oracle")
    assert Snapshot.of(testbed).diff(Snapshot.of(second.workspace("oracle").root)).empty


@pytest.fixture
def outside(tmp_path):
    """A folder beside the work folder with a file of its own: what a link out of a copy leads to."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    return folder


def test_strangers_in_the_copy_are_removed_never_followed(testbed, tmp_path, outside):
    replays = Replays(testbed, SAMPLE_NOW, tmp_path / "work", trusted=True)
    root = replays.workspace("first").root
    os.unlink(root / "data" / "readme.txt")
    os.symlink(outside / "keep.txt", root / "data" / "readme.txt")  # a link where a testbed file was
    os.symlink(outside, root / "emails" / "mallory")  # a linked folder
    os.mkfifo(root / "data" / "pipe")
    (root / "data" / ".tmp-half-written").write_bytes(b"x")
    mailbox = next(p for p in (root / "emails").iterdir() if p.is_dir() and not p.is_symlink())
    shutil.rmtree(mailbox)  # a testbed folder gone, and a file where it was
    mailbox.write_bytes(b"not a folder")
    calendars = root / "calendar"
    shutil.rmtree(calendars)  # a folder gone with all it held
    ws = replays.workspace("second")
    assert Snapshot.of(testbed).diff(Snapshot.of(ws.root)).empty
    assert identities(ws.root) == identities(testbed)
    assert not any(p.is_symlink() for p in ws.root.rglob("*"))
    assert (outside / "keep.txt").read_text() == "mine" and sorted(os.listdir(outside)) == ["keep.txt"]


def test_a_copy_that_cannot_be_put_back_is_made_again(testbed, tmp_path):
    replays = Replays(testbed, SAMPLE_NOW, tmp_path / "work", trusted=True)
    root = replays.workspace("first").root
    os.unlink(root / "data" / "notes.docx")
    replays._copy.files["data/notes.docx"] = (0, 0)  # as if the testbed's file were another than the one linked
    ws = replays.workspace("second")
    assert Snapshot.of(testbed).diff(Snapshot.of(ws.root)).empty


def test_an_untrusted_testbed_gets_a_fresh_copy_per_replay_never_a_link(testbed, tmp_path):
    replays = Replays(testbed, SAMPLE_NOW, tmp_path / "work", trusted=False)
    one, two = replays.state(WRITES, "one"), replays.workspace("two")
    assert one.root != two.root
    assert all(p.stat().st_nlink == 1 for p in testbed.rglob("*") if p.is_file())
    assert Snapshot.of(testbed).diff(Snapshot.of(two.root)).empty


def test_the_tools_write_the_same_bytes_when_they_write_again(testbed, tmp_path):
    """The remembered builders give the bytes a fresh build gives, in any workspace."""
    seen = []
    for name in ("a", "b"):
        ws = Replays(testbed, SAMPLE_NOW, tmp_path / name, trusted=True, reuse=False).state(WRITES, name)
        seen.append({rel: (ws.root / rel).read_bytes() for rel in ("data/new/memo.docx", "data/notes.pdf")}
                    | {p.name: p.read_bytes() for p in (ws.root / "emails" / "zoe").iterdir()})
    assert seen[0] == seen[1]
    assert seen[0]["data/new/memo.docx"] == docx_io.written.__wrapped__("Memo\nline", SAMPLE_NOW)
    assert seen[0]["Hi.eml"] == eml_io.build("alice", "zoe", "Hi", "4,200", SAMPLE_NOW)


def test_remembered_text_keeps_the_latest_short_texts_and_never_a_long_one_or_an_error():
    calls = []

    @remembered_text(2, 5)
    def read(text):
        calls.append(text)
        if text == "bad":
            raise ValueError("bad")
        return text.upper()

    assert read("ab") == read("ab") == "AB" and calls == ["ab"]
    assert read("toolong") == read("toolong") == "TOOLONG" and calls.count("toolong") == 2  # over 5: never kept
    for _ in range(2):
        with pytest.raises(ValueError):
            read("bad")
    assert calls.count("bad") == 2
    read("cd"), read("ef"), read("ab")  # two kept: "ab" went first
    assert calls.count("ab") == 2 and read.cache_info().currsize == 2 and read.__wrapped__("x") == "X"

    @remembered_text(4, 5)
    def ordered(text, first):  # the arguments after the text are part of the key
        calls.append((text, first))
        return text[0] if first else text[-1]

    assert [ordered("ab", True), ordered("ab", False), ordered("ab", True)] == ["a", "b", "a"]
    assert calls.count(("ab", True)) == 1 and calls.count(("ab", False)) == 1
    assert ordered("toolong", True) == ordered("toolong", True) and calls.count(("toolong", True)) == 2


def test_a_reading_of_its_text_alone_keeps_and_reads_as_one_taking_more_arguments():
    calls: dict[str, list[str]] = {"alone": [], "more": []}

    @remembered_text(3, 4)
    def alone(text):
        calls["alone"].append(text)
        return text[::-1]

    @remembered_text(3, 4)
    def more(text, suffix=""):
        calls["more"].append(text)
        return text[::-1] + suffix

    texts = ["ab", "abcd", "abcde", "ab", "x", "y", "z", "ab", "abcde", "", "x"]
    assert [alone(t) for t in texts] == [more(t) for t in texts]
    assert calls["alone"] == calls["more"] and alone.cache_info() == more.cache_info()  # the same kept, the same read
    alone.cache_clear()
    assert alone.cache_info().currsize == 0 and alone.__wrapped__("ab") == "ba" and alone.__name__ == "alone"


def test_remembered_keeps_results_by_value_type_and_zone_and_never_an_error():
    calls = []

    @remembered
    def build(text, when=None):
        calls.append((text, when))
        if text == "bad":
            raise ValueError("bad")
        return f"{text}|{when.isoformat() if when else ''}".encode()

    assert build("a") == build("a") and len(calls) == 1
    assert build(1) != build(1.0) and build(1) != build(True)  # equal values of two types are two keys
    assert build(0.0) != build(-0.0) and build(-0.0) == b"-0.0|"  # and two floats written apart
    assert build((1, 0.0)) == b"(1, 0.0)|" and build((True, -0.0)) == b"(True, -0.0)|"  # inside a tuple too
    here, there = datetime(2024, 5, 3, 10, tzinfo=timezone(timedelta(hours=1))), datetime(2024, 5, 3, 9, tzinfo=UTC)
    assert here == there and build("t", here) != build("t", there)
    for _ in range(2):
        with pytest.raises(ValueError):
            build("bad")
    assert calls.count(("bad", None)) == 2
    assert build(["a"]) == build(["a"]) and sum(1 for c in calls if c[0] == ["a"]) == 2  # no key: built each time
    huge = "x" * (300 * 1024)
    build(huge), build(huge)
    assert sum(1 for c in calls if c[0] is huge) == 2  # over MAX_CHARS: never kept
    assert pdf_io.remembered_build("x", title="t", stamp=SAMPLE_NOW) == pdf_io.build("x", title="t", stamp=SAMPLE_NOW)


def test_kept_results_go_least_recently_used_first():
    made = []
    kept: Kept[str] = Kept(2)
    for key in "abacab":
        assert kept.get(key, lambda key=key: made.append(key) or key.upper()) == key.upper()
    assert made == ["a", "b", "c", "b"]  # "b" went when "c" came, "a" was used since


def test_kept_results_shared_by_threads_miss_but_never_fail():
    """Threads that add, find and evict the same few keys at the finest switch interval: an entry
    another thread drops between two steps is a miss (made again, or None), never a KeyError; the
    bound holds and a kept None is kept."""
    import sys
    import threading

    kept: Kept[int | None] = Kept(4)
    errors: list[BaseException] = []

    def work(start: int) -> None:
        try:
            for i in range(20_000):
                key = (start + i) % 7
                assert kept.get(key, lambda key=key: key) == key
                assert kept.find((start + 3 * i) % 7) in (None, (start + 3 * i) % 7)
        except BaseException as exc:  # reported below: a thread's failure is not the test's
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and len(kept) <= 4
    nones: Kept[None] = Kept(2)
    made = []
    assert nones.get("a", lambda: made.append("a")) is None and nones.get("a", lambda: made.append("a")) is None
    assert made == ["a"]


def test_one_plan_on_a_copy_of_its_own_is_replayed_and_scored_and_never_touches_the_testbed(testbed, tmp_path):
    """``replay_plan``: what eval's reference runs and both exports replay with."""
    plan = [*WRITES, {"tool": "word_read_file", "args": {"file_path": "data/missing.docx"}}]
    replay = replay_plan(testbed, plan, SAMPLE_NOW, tmp_path / "work", "oracle")
    assert replay.workspace.root == (tmp_path / "work" / "oracle").resolve()
    assert len(replay.results) == len(plan) and replay.failed()[0] == len(WRITES)
    assert "missing.docx" in replay.failed()[1].observation
    assert all(p.stat().st_nlink == 1 for p in testbed.rglob("*") if p.is_file())  # copied, never linked
    sent = [{"function": "evaluate_email_sent", "args": {"recipient": "zoe", "subject_keywords": ["Hi"]}}]
    assert replay.score(sent).passed
    assert not replay_plan(testbed, [], SAMPLE_NOW, tmp_path / "work", "untouched").score(sent).passed


def test_one_plan_refuses_a_testbed_with_a_link_and_leaves_no_copy(testbed, tmp_path):
    os.symlink("/etc/passwd", testbed / "data" / "passwd.txt")
    with pytest.raises(PathError, match="symlink"):
        replay_plan(testbed, WRITES, SAMPLE_NOW, tmp_path / "work", "oracle")
    assert not (tmp_path / "work" / "oracle").exists()


def tree_hash(root):
    """Every folder and file under ``root`` (by lstat, never followed) with a file's bytes."""
    import hashlib
    import stat

    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        st = os.lstat(path)
        kind = "d" if stat.S_ISDIR(st.st_mode) else "f" if stat.S_ISREG(st.st_mode) else "other"
        digest.update(f"{path.relative_to(root).as_posix()}\0{kind}\0".encode())
        if kind == "f":
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_a_kept_copy_serves_the_next_tasks_of_its_testbed_each_replay_starting_from_it(testbed, tmp_path):
    """With ``keep_in`` a task's copy outlives it: the next task's replays of the same testbed take it
    (no new copy), and every replay of every task starts from a tree hashing as the testbed."""
    from office_env import replays as module

    module._KEPT.clear()
    original = tree_hash(testbed)
    roots = set()
    for task in range(3):
        replays = Replays(testbed, SAMPLE_NOW, tmp_path / f"task-{task}", trusted=True, keep_in=tmp_path / "kept")
        for plan in (WRITES, WRITES[::-1], WRITES[1:3]):
            ws = replays.workspace(f"p{task}")
            assert tree_hash(ws.root) == original, f"task {task}: a replay sees an earlier replay's writes"
            roots.add(ws.root)
            default_registry().run(ws, [(c["tool"], c["args"]) for c in plan])
            assert tree_hash(ws.root) != original
        replays.close()
    assert len(roots) == 1 and not (tmp_path / "task-1").exists()  # one copy, kept, for the three tasks
    assert tree_hash(testbed) == original


def test_a_kept_copy_serves_no_other_testbed_and_few_are_kept(testbed, tmp_path):
    """A testbed changed since its copy was kept (a file replaced) gets a fresh copy; another testbed
    never takes it; past ``MAX_KEPT_COPIES`` the least recently kept copy is removed."""
    from office_env import replays as module

    module._KEPT.clear()
    kept = tmp_path / "kept"

    def root_of(bed):
        replays = Replays(bed, SAMPLE_NOW, tmp_path / "work", trusted=True, keep_in=kept)
        root = replays.workspace("oracle").root
        assert Snapshot.of(bed).diff(Snapshot.of(root)).empty
        replays.close()
        return root

    first = root_of(testbed)
    (testbed / "data" / "readme.txt.new").write_text("changed")
    os.replace(testbed / "data" / "readme.txt.new", testbed / "data" / "readme.txt")
    assert root_of(testbed) != first and not first.exists()
    others = [write_sample_office(tmp_path / f"other-{i}") for i in range(module.MAX_KEPT_COPIES)]
    roots = [root_of(bed) for bed in others]
    assert len(set(roots)) == len(roots)
    assert sorted(p.name for p in kept.iterdir()) == sorted(r.name for r in roots)  # the testbed's went first


def test_the_replays_on_one_copy_share_its_workspace_and_a_new_copy_gets_its_own(testbed, tmp_path):
    now = SAMPLE_NOW + timedelta(days=3)
    replays = Replays(testbed, now, tmp_path / "work", trusted=True)
    first = replays.state(WRITES, "one")
    again = replays.workspace("two")
    assert again is first and again.now == now and again.trusted
    assert again.root == (tmp_path / "work" / COPY_NAME).resolve()
    os.unlink(again.root / "data" / "notes.docx")
    replays._copy.files["data/notes.docx"] = (0, 0)  # cannot be put back: the copy is made again
    made = replays.workspace("three")
    assert made is not first and made.now == now
    assert Snapshot.of(testbed).diff(Snapshot.of(made.root)).empty


def test_a_copy_whose_root_became_a_link_is_never_followed(testbed, tmp_path, outside):
    replays = Replays(testbed, SAMPLE_NOW, tmp_path / "work", trusted=True)
    root = replays.workspace("first").root
    shutil.rmtree(root)
    os.symlink(outside, root)
    with pytest.raises((OSError, PathError)):
        replays.workspace("second")
    assert sorted(os.listdir(outside)) == ["keep.txt"] and (outside / "keep.txt").read_text() == "mine"


def _unlimited_scan(root):
    from office_env.untrusted import scan_tree

    return scan_tree(root, check_links=False, max_file_bytes=None, max_total_bytes=None)


def _kept_copy(testbed, tmp_path):
    from office_env import replays as module

    module._KEPT.clear()
    replays = Replays(testbed, SAMPLE_NOW, tmp_path / "work", trusted=True, keep_in=tmp_path / "kept")
    replays.workspace("oracle")
    copy = replays._copy
    replays.close()
    return copy


def test_a_walk_made_before_serves_the_look_at_a_kept_copy_only_as_the_look_itself_would_answer(testbed, tmp_path):
    """The trace gate's walk (no size limits) stands for the replays' own walk of the testbed only
    when it is of the same folder and within the walk's limits: in every case below the answer is
    the one the replays' own walk gives."""
    from office_env.replays import _same_walk, _still_copied

    copy = _kept_copy(testbed, tmp_path)
    assert _same_walk(_unlimited_scan(testbed), copy.testbed)
    assert _still_copied(copy, _unlimited_scan(testbed)) is _still_copied(copy) is True
    # a twin folder linking the same files: its walk lists the same inodes, but it is another folder
    twin = tmp_path / "twin"
    shutil.copytree(testbed, twin, copy_function=os.link)
    twin_scan = _unlimited_scan(twin)
    (testbed / "data" / "readme.txt.new").write_text("changed")
    os.replace(testbed / "data" / "readme.txt.new", testbed / "data" / "readme.txt")
    assert not _same_walk(twin_scan, copy.testbed)
    assert _still_copied(copy, twin_scan) is _still_copied(copy) is False
    # the testbed's own walk made after the change sees it
    assert _still_copied(copy, _unlimited_scan(testbed)) is _still_copied(copy) is False


def test_a_walk_without_size_limits_never_accepts_what_the_replays_own_walk_refuses(testbed, tmp_path):
    """A file past ``MAX_FILE_BYTES`` (or files together past ``MAX_TREE_BYTES``) is refused by the
    replays' walk; the trace gate's walk accepts it, so it is not used then."""
    from office_env.limits import MAX_FILE_BYTES, MAX_TREE_BYTES
    from office_env.replays import _Copy, _same_walk, _still_copied

    def copy_as_listed(scan):  # a kept copy made of exactly what ``scan`` lists
        return _Copy(testbed.resolve(), tmp_path / "unused", {f.rel: (f.dev, f.ino) for f in scan.files},
                     ["/".join(parts) for parts in scan.folders])

    with open(testbed / "data" / "big.bin", "wb") as handle:  # sparse: no disk used
        handle.truncate(MAX_FILE_BYTES + 1)
    scan = _unlimited_scan(testbed)
    assert scan.ok and not _same_walk(scan, testbed.resolve())
    assert _still_copied(copy_as_listed(scan), scan) is _still_copied(copy_as_listed(scan)) is False
    os.unlink(testbed / "data" / "big.bin")
    for i in range(MAX_TREE_BYTES // MAX_FILE_BYTES + 1):
        with open(testbed / "data" / f"part-{i}.bin", "wb") as handle:
            handle.truncate(MAX_FILE_BYTES)
    scan = _unlimited_scan(testbed)
    assert scan.ok and not _same_walk(scan, testbed.resolve())
    assert _still_copied(copy_as_listed(scan), scan) is _still_copied(copy_as_listed(scan)) is False
