"""Opening strangers' trees and JSON: scan without following links, safe copies, bounded JSON,
and the loaders that use them (dataset tasks, seed folders, staging, scoring paths)."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from backends.dataset_reader import iter_tasks
from backends.task_record import parse_record
from office_env import PathError, load_officebench, untrusted
from office_env.evaluation.paths import inside
from office_env.limits import MAX_NAME_CHARS, MAX_TREE_DEPTH
from office_env.officebench import _subtask_key, write_task_folder
from office_env.untrusted import UntrustedInputError, copy_tree, load_json, name_problem, printable, scan_tree
from orchestrator.dataset_writer import stage_task

from tests.support.records import task_record_sample


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return folder


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "data" / "empty").mkdir(parents=True)
    (root / "data" / "a.txt").write_text("a\n", encoding="utf-8")
    (root / "emails" / "bob").mkdir(parents=True)
    (root / "emails" / "bob" / "Hi there.eml").write_text("Subject: hi\n\nhello\n", encoding="utf-8")
    return root


def reasons(scan) -> dict[str, str]:
    return {s.path: s.reason for s in scan.skipped}


# -- scanning -------------------------------------------------------------------------------------

def test_a_plain_tree_is_accepted_whole(tree):
    scan = scan_tree(tree)
    assert scan.ok and scan.problem() is None
    assert [f.rel for f in scan.files] == ["data/a.txt", "emails/bob/Hi there.eml"]
    assert ("data", "empty") in scan.folders


def test_a_symlinked_root_refuses_the_whole_tree(tree, tmp_path):
    os.symlink(tree, tmp_path / "link")
    scan = scan_tree(tmp_path / "link")
    assert scan.refused and scan.files == []
    assert scan.problem() == f"{tmp_path / 'link'}: is a symlink"


def test_symlinks_inside_are_refused_and_never_followed(tree, outside):
    os.symlink(outside / "secret.txt", tree / "data" / "leak.txt")
    os.symlink(outside, tree / "data" / "out")
    os.symlink("a.txt", tree / "data" / "alias.txt")  # even one pointing inside
    scan = scan_tree(tree)
    assert reasons(scan) == {"data/leak.txt": "is a symlink", "data/out": "is a symlink",
                             "data/alias.txt": "is a symlink"}
    assert [f.rel for f in scan.files] == ["data/a.txt", "emails/bob/Hi there.eml"]
    assert scan.problem("T") == "T/data/alias.txt: is a symlink (and 2 more refused entries)"


def test_hard_links_count_only_when_they_lead_outside(tree, outside):
    os.link(tree / "data" / "a.txt", tree / "data" / "b.txt")  # both names inside: fine
    assert scan_tree(tree).ok
    os.link(outside / "secret.txt", tree / "data" / "leak.txt")
    scan = scan_tree(tree)
    assert reasons(scan) == {"data/leak.txt": "is a hard link to a file outside the tree"}
    assert scan_tree(tree, check_links=False).ok


def test_special_files_are_refused(tree, tmp_path):
    os.mkfifo(tree / "data" / "pipe")
    server = socket.socket(socket.AF_UNIX)
    path = tree / "data" / "sock"
    try:
        server.bind(str(path))
    except OSError:
        pytest.skip("no unix sockets here")
    try:
        assert reasons(scan_tree(tree)) == {"data/pipe": "is a special file (FIFO)",
                                            "data/sock": "is a special file (socket)"}
    finally:
        server.close()


@pytest.mark.parametrize("name, why", [
    ("a\nb.txt", "control character"), ("tab\there", "control character"), ("x\u202egnp.exe", "control character"),
    ("back\\slash", "backslash"), ("x" * (MAX_NAME_CHARS + 1), "longer than"),
])
def test_odd_names_are_refused(tree, name, why):
    (tree / "data" / name).write_text("x", encoding="utf-8")
    scan = scan_tree(tree)
    assert list(reasons(scan).values()) == [f"has a bad name ({name_problem(name)})"]
    assert why in name_problem(name)
    assert "\n" not in scan.problem()


def test_names_that_are_not_utf8_are_refused_and_printed_escaped(tree):
    (tree / "data" / os.fsdecode(b"\xff\xfe.txt")).write_text("x", encoding="utf-8")
    scan = scan_tree(tree)
    assert scan.problem("T") == "T/data/\\xff\\xfe.txt: has a bad name (not valid UTF-8)"
    assert name_problem("..") and name_problem(".") and name_problem("") and name_problem("a/b")
    assert name_problem("plain name (1).docx") is None


def test_depth_count_and_size_limits(tree):
    deep = tree.joinpath(*["d"] * (MAX_TREE_DEPTH + 1))
    deep.mkdir(parents=True)
    scan = scan_tree(tree)
    assert reasons(scan) == {"/".join(["d"] * (MAX_TREE_DEPTH + 1)): untrusted.TOO_DEEP}
    assert "too many" not in str(scan_tree(tree, max_entries=100).skipped)
    assert "past the limit" in scan_tree(tree, max_entries=3).problem()
    big = scan_tree(tree / "emails", max_file_bytes=2)
    assert reasons(big) == {"bob/Hi there.eml": "is too large (19 bytes; the limit is 2 bytes)"}


# -- copying --------------------------------------------------------------------------------------

def test_copy_writes_fresh_files_and_keeps_folders(tree, tmp_path):
    copy_tree(tree, tmp_path / "copy")
    copied = tmp_path / "copy" / "data" / "a.txt"
    assert copied.read_text(encoding="utf-8") == "a\n"
    assert os.stat(copied).st_ino != os.stat(tree / "data" / "a.txt").st_ino
    assert (tmp_path / "copy" / "data" / "empty").is_dir()
    assert scan_tree(tmp_path / "copy").ok


@pytest.mark.parametrize("make", ["symlink", "fifo", "hardlink", "root"])
def test_copy_refuses_and_leaves_nothing(tree, tmp_path, outside, make):
    source = tree
    if make == "symlink":
        os.symlink(outside / "secret.txt", tree / "data" / "leak.txt")
    elif make == "fifo":
        os.mkfifo(tree / "data" / "leak.txt")
    elif make == "hardlink":
        os.link(outside / "secret.txt", tree / "data" / "leak.txt")
    else:
        source = tmp_path / "link"
        os.symlink(tree, source)
    with pytest.raises(UntrustedInputError) as info:
        copy_tree(source, tmp_path / "copy")
    assert str(info.value).startswith(str(source))
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_a_swap_between_scan_and_copy_is_refused(tree, tmp_path, outside, monkeypatch, swap):
    scanned = scan_tree(tree)
    if swap == "file":
        (tree / "data" / "a.txt").unlink()
        os.symlink(outside / "secret.txt", tree / "data" / "a.txt")
    else:
        os.rename(tree / "emails", tmp_path / "moved")
        os.symlink(outside, tree / "emails")
    monkeypatch.setattr(untrusted, "scan_tree", lambda *args, **kwargs: scanned)
    with pytest.raises(UntrustedInputError, match="is a symlink"):
        copy_tree(tree, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_folder_swapped_for_a_link_during_the_walk_is_refused(tree, tmp_path, outside, monkeypatch):
    real = untrusted.name_problem

    def swap_emails(name: str):
        if name == "emails" and not (tmp_path / "moved").exists():  # listed, not yet walked
            os.rename(tree / "emails", tmp_path / "moved")
            os.symlink(outside, tree / "emails")
        return real(name)

    monkeypatch.setattr(untrusted, "name_problem", swap_emails)
    scan = scan_tree(tree)
    assert reasons(scan) == {"emails": "is a symlink"}
    assert [f.rel for f in scan.files] == ["data/a.txt"]


def test_a_file_replaced_after_the_scan_is_refused(tree, tmp_path, monkeypatch):
    scanned = scan_tree(tree)
    (tree / "data" / "new.txt").write_text("another file\n", encoding="utf-8")
    os.replace(tree / "data" / "new.txt", tree / "data" / "a.txt")
    monkeypatch.setattr(untrusted, "scan_tree", lambda *args, **kwargs: scanned)
    with pytest.raises(UntrustedInputError, match="changed while being read"):
        copy_tree(tree, tmp_path / "copy")


# -- JSON -----------------------------------------------------------------------------------------

def test_json_within_the_limits_loads(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"a": [[{"b": 1}]]}), encoding="utf-8")
    assert load_json(path) == {"a": [[{"b": 1}]]}
    path.write_text("[" * 64 + "]" * 64, encoding="utf-8")
    assert load_json(path) is not None


@pytest.mark.parametrize("levels", [65, 500, 100_000])
def test_deep_json_is_one_line(tmp_path, levels):
    path = tmp_path / "deep.json"
    path.write_text("[" * levels + "]" * levels, encoding="utf-8")
    with pytest.raises(UntrustedInputError) as info:
        load_json(path, "tasks/x/task.json")
    assert str(info.value) == "tasks/x/task.json: nested deeper than 64 levels"
    assert info.value.kind == "json"


@pytest.mark.parametrize("content, words", [
    (b'{"a": }', "invalid JSON at line 1 column 7"),
    (b'{"a": "caf\xe9"}', "is not UTF-8 text"),
    (b"1" * 5000, "invalid JSON"),
    (b"x" * 2000, "is too large"),
])
def test_bad_json_is_one_line(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(UntrustedInputError) as info:
        load_json(path, max_bytes=1024 if words == "is too large" else 16 << 20)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_json_through_a_symlink_or_from_a_fifo_is_refused(tmp_path, outside):
    (outside / "x.json").write_text("{}", encoding="utf-8")
    os.symlink(outside / "x.json", tmp_path / "link.json")
    with pytest.raises(UntrustedInputError, match="link.json: is a symlink"):
        load_json(tmp_path / "link.json")
    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(UntrustedInputError, match=r"is a special file \(FIFO\), not a regular file"):
        load_json(tmp_path / "pipe.json")  # returns at once instead of waiting for a writer


def test_printable_escapes_controls_and_bytes():
    assert printable("plain ü name") == "plain ü name"
    assert printable("a\nb\tc\x1b") == "a\\nb\\tc\\x1b"
    assert printable(os.fsdecode(b"\xff")) == "\\xff"


# -- loaders ----------------------------------------------------------------------------------------

def _task(tasks: Path, name: str) -> Path:
    folder = tasks / name
    (folder / "testbed" / "data").mkdir(parents=True)
    (folder / "testbed" / "data" / "a.txt").write_text("a", encoding="utf-8")
    (folder / "task.json").write_text(json.dumps(task_record_sample(name)), encoding="utf-8")
    return folder


def test_iter_tasks_reports_each_bad_task_and_loads_the_rest(tmp_path, outside):
    tasks = tmp_path / "ds" / "tasks"
    _task(tasks, "good")
    os.symlink(_task(outside, "elsewhere"), tasks / "sym-folder")
    folder = _task(tasks, "sym-json")
    (folder / "task.json").unlink()
    os.symlink(outside / "elsewhere" / "task.json", folder / "task.json")
    folder = _task(tasks, "sym-testbed")
    os.rename(folder / "testbed", tmp_path / "moved")
    os.symlink(tmp_path / "moved", folder / "testbed")
    os.symlink(outside, _task(tasks, "sym-reference") / "reference")
    os.mkfifo(_task(tasks, "fifo") / "testbed" / "data" / "pipe")
    (_task(tasks, "deep") / "task.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (_task(tasks, "list") / "task.json").write_text("[]", encoding="utf-8")
    (_task(tasks, "broken") / "task.json").write_text("{ not json", encoding="utf-8")
    _task(tasks, "bad\nname")
    loaded = {t.id: t for t in iter_tasks(tmp_path / "ds")}
    assert loaded["good"].record == task_record_sample("good") and loaded["good"].error is None
    assert loaded["good"].task.id == "good"
    errors = {k: t.error for k, t in loaded.items() if t.record is None}
    assert errors == {
        "sym-folder": f"{tasks / 'sym-folder'}: is a symlink; refused",
        "sym-json": f"{tasks / 'sym-json' / 'task.json'}: is a symlink",
        "sym-testbed": f"{tasks / 'sym-testbed' / 'testbed'}: is a symlink; the task is unusable",
        "sym-reference": f"{tasks / 'sym-reference' / 'reference'}: is a symlink; the task is unusable",
        "fifo": f"{tasks / 'fifo' / 'testbed'}/data/pipe: is a special file (FIFO); the task is unusable",
        "deep": f"{tasks / 'deep' / 'task.json'}: nested deeper than 64 levels",
        "list": f"{tasks / 'list' / 'task.json'}: not valid JSON for a task (the top level is not an object)",
        "broken": f"{tasks / 'broken' / 'task.json'}: not valid JSON at line 1 column 3: "
                  "Expecting property name enclosed in double quotes",
        "bad\\nname": f"{tasks}/bad\\nname: odd folder name (contains a control character); refused",
    }


def test_a_record_too_wide_or_too_long_is_refused_before_it_is_typed_naming_the_field(tmp_path):
    from office_env.limits import MAX_RECORD_ITEMS, MAX_RECORD_TEXT_CHARS

    tasks = tmp_path / "ds" / "tasks"
    wide = task_record_sample("wide")
    wide["memory"] = [dict(wide["memory"][0], id=f"m{i}") for i in range(MAX_RECORD_ITEMS + 1)]
    long = task_record_sample("long")
    long["dialogue"][0]["turns"][1]["text"] = "word " * (MAX_RECORD_TEXT_CHARS // 5 + 1)
    keys = task_record_sample("keys")
    keys["user"] = {f"k{i}": 1 for i in range(MAX_RECORD_ITEMS + 1)}
    edge = task_record_sample("edge")  # at the limits: still a task (then typed, and its schema has the say)
    edge["dialogue"][0]["turns"][1]["text"] = "x" * MAX_RECORD_TEXT_CHARS
    for record in (wide, long, keys, edge):
        (_task(tasks, record["id"]) / "task.json").write_text(json.dumps(record), encoding="utf-8")
    loaded = {t.id: t for t in iter_tasks(tmp_path / "ds")}
    assert loaded["wide"].error == (f"{tasks / 'wide' / 'task.json'}: memory: {MAX_RECORD_ITEMS + 1:,} items, "
                                    f"over the limit of {MAX_RECORD_ITEMS:,}")
    assert loaded["long"].error.endswith(f"task.json: dialogue.0.turns.1.text: {5 * (MAX_RECORD_TEXT_CHARS // 5 + 1):,} "
                                         f"characters, over the limit of {MAX_RECORD_TEXT_CHARS:,}")
    assert loaded["keys"].error.endswith(f"task.json: user: {MAX_RECORD_ITEMS + 1:,} keys, over the limit of "
                                         f"{MAX_RECORD_ITEMS:,}")
    assert loaded["edge"].error is None and loaded["edge"].record is not None


def test_a_record_of_many_small_values_is_refused_before_it_is_parsed(tmp_path):
    from office_env.limits import MAX_RECORD_VALUES
    from office_env.untrusted import json_value_count

    text = r'{"a": [1, 2, {"b": "x, [y], {z}"}], "c": "\\", "d": "q\"[,"}'
    assert json.loads(text)["d"] == 'q"[,' and json_value_count(text) == 7  # what strings hold is skipped
    long = json.dumps({"a": 'x, "[{' * 400_000, "b": [1, 2, 3]})  # a string over many of the counter's pieces
    assert json_value_count(long) == 5 and json_value_count(long * 2) == 10
    many = json.dumps([[1, 2]] * 500_000)
    assert json_value_count(many) == 1_500_000 and 1_000 < json_value_count(many, stop_above=1_000) < 600_000
    tasks = tmp_path / "ds" / "tasks"
    pairs = task_record_sample("pairs")  # each list is within the item limit; together they are too many
    pairs["memory"][0]["evidence"] = [[[0, 0]] * 1_000 for _ in range(MAX_RECORD_VALUES // 3_000 + 1)]
    talky = task_record_sample("talky")  # commas in text are no values: a long, ordinary record is read
    talky["dialogue"][0]["turns"] = [dict(talky["dialogue"][0]["turns"][0], text="a, b, " * 6_000)] * 100
    for record in (pairs, talky):
        (_task(tasks, record["id"]) / "task.json").write_text(json.dumps(record), encoding="utf-8")
    loaded = {t.id: t for t in iter_tasks(tmp_path / "ds")}
    assert loaded["pairs"].error.startswith(f"{tasks / 'pairs' / 'task.json'}: is too large (more than ")
    assert loaded["pairs"].error.endswith(f" lists, objects and items; the limit is {MAX_RECORD_VALUES:,})")
    assert loaded["talky"].error is None

def test_stage_task_refuses_links_and_leaves_nothing(tmp_path, outside):
    staging = tmp_path / "staging"
    staging.mkdir()
    testbed = tmp_path / "testbed"
    (testbed / "data").mkdir(parents=True)
    os.symlink(outside, testbed / "data" / "out")
    with pytest.raises(UntrustedInputError, match="data/out: is a symlink"):
        stage_task(staging, parse_record(task_record_sample("t1")), testbed)
    os.symlink(outside, tmp_path / "link")
    with pytest.raises(UntrustedInputError, match="link: is a symlink"):
        stage_task(staging, parse_record(task_record_sample("t2")), tmp_path / "link")
    assert list(staging.iterdir()) == []
    (testbed / "data" / "out").unlink()
    staged = stage_task(staging, parse_record(task_record_sample("t3")), testbed, testbed)
    assert (staged / "reference" / "data").is_dir() and (staged / "task.json").is_file()


def test_write_task_folder_refuses_a_linked_testbed_and_leaves_nothing(tmp_path, outside):
    testbed = tmp_path / "testbed"
    testbed.mkdir()
    os.symlink(outside / "secret.txt", testbed / "leak.txt")
    subtask = {"username": "a", "date": "2024-01-01", "weekday": "Monday", "time": "09:00 AM", "task": "x",
               "evaluation": [{"function": "evaluate_file_exist", "args": {"file": "data/x.txt"}}]}
    with pytest.raises(UntrustedInputError, match="leak.txt: is a symlink"):
        write_task_folder(tmp_path / "out" / "1-1", [subtask], testbed)
    assert not (tmp_path / "out" / "1-1").exists()


def test_inside_never_follows_the_root_or_a_component(tmp_path, outside):
    reference = tmp_path / "reference"
    reference.mkdir()
    assert inside(reference, ["sub", "x.txt"], "../reference/sub/x.txt", "f") == reference / "sub" / "x.txt"
    os.symlink(outside, tmp_path / "linked")
    with pytest.raises(PathError, match="is a symlink; refused"):
        inside(tmp_path / "linked", ["secret.txt"], "../reference/secret.txt", "f")
    os.symlink(outside, reference / "sub")
    with pytest.raises(PathError, match="through the symlink 'sub'"):
        inside(reference, ["sub", "secret.txt"], "../reference/sub/secret.txt", "f")


def test_subtask_names_that_are_not_ascii_digits_sort_last_and_load_as_problems(tmp_path):
    assert _subtask_key(Path("\u00b2.json")) == (10**9, "\u00b2")
    assert _subtask_key(Path("12.json")) == (12, "")
    folder = tmp_path / "tasks" / "1-1"
    (folder / "subtasks").mkdir(parents=True)
    subtask = {"username": "a", "date": "2024-01-01", "weekday": "Monday", "time": "09:00 AM", "task": "x",
               "evaluation": [{"function": "evaluate_file_exist", "args": {"file": "data/x.txt"}}]}
    for name in ("0.json", "\u00b2.json", "a\nb.json"):
        (folder / "subtasks" / name).write_text(json.dumps(subtask), encoding="utf-8")
    report = load_officebench(tmp_path)
    assert [t.id for t in report.tasks] == ["1-1/0"]
    assert sorted(p.file.rsplit("/", 1)[1] for p in report.problems) == ["a\\nb.json", "\u00b2.json"]
    assert all(p.field == "file" and "odd file name" in p.message for p in report.problems)


def test_a_tree_whose_sparse_files_pass_the_total_is_refused_and_never_copied(tmp_path):
    from office_env.limits import MAX_FILE_BYTES, MAX_TREE_BYTES
    from office_env.untrusted import UntrustedInputError, copy_tree, scan_tree

    root = tmp_path / "testbed"
    (root / "data").mkdir(parents=True)
    size = MAX_FILE_BYTES - 1024 * 1024  # each under the per-file limit
    for i in range(MAX_TREE_BYTES // size + 1):
        with open(root / "data" / f"pad{i:02d}.bin", "wb") as handle:
            handle.truncate(size)
    tree = scan_tree(root)
    assert not tree.ok and "the limit for one tree" in tree.problem()
    with pytest.raises(UntrustedInputError, match="the limit for one tree"):
        copy_tree(root, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse", "link"])
def test_read_file_refuses_what_is_not_a_small_regular_file_without_hanging(tmp_path, kind):
    from office_env.untrusted import UntrustedInputError, read_file

    path = tmp_path / "build.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "sparse":
        with open(path, "wb") as handle:
            handle.truncate(2 * 1024**3)
    else:
        (tmp_path / "real.json").write_text("{}")
        path.symlink_to(tmp_path / "real.json")
    reason = {"fifo": "is a special file (FIFO)", "dev-zero": "is a symlink", "sparse": "is too large",
              "link": "is a symlink"}[kind]
    with pytest.raises(UntrustedInputError, match=re.escape(f"build.json: {reason}")):
        read_file(path)


@pytest.mark.parametrize("kind", ["link", "text", "other-database"])
def test_a_review_database_that_is_a_link_or_not_ours_is_one_error_and_nothing_is_written(tmp_path, kind):
    import sqlite3

    from orchestrator.review.annotations import AnnotationStore, StoreFileError

    dataset = tmp_path / "ds"
    dataset.mkdir()
    target = tmp_path / "elsewhere.sqlite"
    if kind == "link":
        (dataset / "review.sqlite").symlink_to(target)
        reason = "is a symlink"
    elif kind == "text":
        (dataset / "review.sqlite").write_text("hello\n")
        reason = "is not an SQLite database"
    else:
        with sqlite3.connect(dataset / "review.sqlite") as db:
            db.execute("CREATE TABLE accounts (x)")
        db.close()
        reason = "holds other tables (accounts)"
    before = (dataset / "review.sqlite").read_bytes() if kind != "link" else None
    with pytest.raises(StoreFileError, match=re.escape(f"review.sqlite: {reason}")):
        AnnotationStore(dataset)
    assert not target.exists()  # the link's target is never created
    if before is not None:
        assert (dataset / "review.sqlite").read_bytes() == before


def test_an_output_folder_that_is_a_link_is_refused_before_anything_is_written(tmp_path):
    from backends.dataset_reader import ensure_writable_folder, folder_written_whole

    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "out").symlink_to(empty)
    with pytest.raises(OSError, match="is a symlink"):
        ensure_writable_folder(tmp_path / "out")
    with pytest.raises(OSError, match="is a symlink"):
        with folder_written_whole(tmp_path / "out"):
            pass
    assert list(empty.iterdir()) == []
