"""The kept tasks' identities, passed from a build's parent to its workers through one file."""

from __future__ import annotations

import json
import os

from orchestrator import kept_identities
from orchestrator.kept_identities import NAME, KeptIdentities, repeat_of

KEYS = {0: ["description:a"], 1: ["description:b"], 2: ["description:c"], 3: ["description:d"],
        4: ["description:e"]}


def head(run: str = "0" * 32) -> str:
    """The first line of a parent's file, naming its run."""
    return json.dumps({"run": run}) + "\n"


def outcome(index: int, status: str = "accepted") -> dict:
    return {"index": index, "status": status, "keys": KEYS[index], "words": ["sheet_total", f"w{index}"]}


def test_only_kept_tasks_below_the_settled_prefix_are_written(tmp_path):
    ids = KeptIdentities(tmp_path)
    done = {0: outcome(0), 1: outcome(1, "dropped"), 3: outcome(3)}
    dropped_as_repeats = {2}
    ids.settle(done, lambda i: i not in dropped_as_repeats, "error")
    assert ids.settled == 2  # attempt 2 has no outcome yet: 3 may still become a repeat of it
    assert repeat_of(tmp_path / NAME, 9, ["description:a"], []) == 0
    assert repeat_of(tmp_path / NAME, 9, ["description:d"], []) is None
    done[2] = outcome(2)
    dropped_as_repeats.add(2)
    ids.settle(done, lambda i: i not in dropped_as_repeats, "error")
    assert ids.settled == 4
    assert repeat_of(tmp_path / NAME, 9, ["description:d"], []) == 3
    assert repeat_of(tmp_path / NAME, 9, ["description:c"], []) is None  # a repeat itself: not kept
    assert repeat_of(tmp_path / NAME, 3, ["description:d"], []) is None  # not below the asking attempt
    done[4] = outcome(4, "error")  # an error is made again: what comes after it is not settled
    done[5] = outcome(0) | {"index": 5, "keys": ["description:f"]}
    ids.settle(done, lambda i: True, "error")
    assert ids.settled == 4
    ids.close()


def test_a_worker_reads_what_was_added_since_it_last_looked_and_waits_for_a_line_s_end(tmp_path):
    path = tmp_path / NAME
    with open(path, "wb") as f:
        f.write(head().encode())
        f.write(json.dumps([0, ["description:a"], ["sheet_total", "add", "salary"]]).encode() + b"\n")
        half = json.dumps([1, ["description:b"], ["sheet_total", "add", "amount"]]).encode() + b"\n"
        f.write(half[:9])
    assert repeat_of(path, 5, ["description:a"], []) == 0
    assert repeat_of(path, 5, ["description:b"], []) is None  # its line is not whole yet
    with open(path, "ab") as f:
        f.write(half[9:])
    assert repeat_of(path, 5, ["description:b"], []) == 1
    # a description of the same family almost the same as a kept one's repeats it; another family's does not
    assert repeat_of(path, 5, ["description:z"], ["sheet_total", "add", "amount"]) == 1
    assert repeat_of(path, 5, ["description:z"], ["sheet_question", "add", "amount"]) is None


def test_a_new_run_s_file_is_read_from_its_start(tmp_path):
    first = KeptIdentities(tmp_path)
    first.settle({0: outcome(0)}, lambda i: True, "error")
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) == 0
    first.close()
    second = KeptIdentities(tmp_path)  # a resumed run writes the file again (the same inode, truncated)
    second.settle({0: outcome(1) | {"index": 0}}, lambda i: True, "error")
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) is None
    assert repeat_of(tmp_path / NAME, 5, KEYS[1], []) == 0
    second.close()


def test_a_link_or_a_line_not_written_by_a_parent_tells_a_worker_nothing(tmp_path):
    target = tmp_path / "elsewhere.jsonl"
    target.write_text(head() + json.dumps([0, KEYS[0], []]) + "\n")
    (tmp_path / NAME).symlink_to(target)
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) is None  # never followed
    try:
        KeptIdentities(tmp_path)
    except OSError:
        pass
    else:
        raise AssertionError("the parent wrote through a link")
    assert target.read_text() == head() + json.dumps([0, KEYS[0], []]) + "\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / NAME).write_text(head() + json.dumps([0, KEYS[0], []]) + "\n" + '{"index": 1}\n'
                              + json.dumps([2, KEYS[2], []]) + "\n")
    assert repeat_of(other / NAME, 5, KEYS[0], []) is None  # one line not ours: the whole file is left alone
    assert repeat_of(other / NAME, 5, KEYS[2], []) is None


def test_a_file_past_its_bound_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(kept_identities, "MAX_BYTES", 40)
    path = tmp_path / NAME
    words = ["sheet_total", "a", "long", "description", "of", "words"]
    path.write_text(head() + json.dumps([0, KEYS[0], words]) + "\n")
    assert repeat_of(path, 5, KEYS[0], []) is None


def test_a_file_without_a_run_s_first_line_tells_a_worker_nothing(tmp_path):
    (tmp_path / NAME).write_text(json.dumps([0, KEYS[0], []]) + "\n" * 40)
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) is None
    (tmp_path / "short.jsonl").write_text(head()[:20])
    assert repeat_of(tmp_path / "short.jsonl", 5, KEYS[0], []) is None


def test_a_fifo_in_the_file_s_place_is_neither_waited_on_nor_read(tmp_path):
    os.mkfifo(tmp_path / NAME)
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) is None
    try:
        KeptIdentities(tmp_path)
    except OSError:
        pass
    else:
        raise AssertionError("the parent wrote into a FIFO")


def test_the_parent_never_empties_a_file_that_has_another_name(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text("someone else's\n")
    os.link(other, tmp_path / NAME)
    try:
        KeptIdentities(tmp_path)
    except OSError:
        pass
    else:
        raise AssertionError("the parent took a hard-linked file")
    assert other.read_text() == "someone else's\n"


def test_a_first_line_that_names_no_run_tells_a_worker_nothing(tmp_path):
    line = json.dumps({"rum": "0" * 32}) + "\n"  # as long as a run's line, not one
    assert len(line) == len(head())
    (tmp_path / NAME).write_text(line + json.dumps([0, KEYS[0], []]) + "\n")
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) is None
    (tmp_path / NAME).write_text(head() + json.dumps([0, KEYS[0], []]) + "\n")
    assert repeat_of(tmp_path / NAME, 5, KEYS[0], []) == 0


def test_an_interrupted_build_leaves_none_of_its_files_open(tmp_path):
    """Ctrl-C ends the rounds without ``finalise``: the kept identities and the outcome log are
    closed all the same (the texts and the figures hold a descriptor only past 4 MiB, so this
    build does not tell whether they are)."""
    import pytest

    from backends.job_contract import Interrupted
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    out = tmp_path / "ds"

    def open_under_out() -> list[str]:
        names = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                names.append(os.readlink(f"/proc/self/fd/{fd}"))
            except FileNotFoundError:  # the listing's own descriptor, closed by now
                pass
        return [name for name in names if name.startswith(str(out))]

    def stop_after_one(done: int, total: int) -> None:
        assert any(name.endswith(NAME) for name in open_under_out())  # open while the rounds run
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        build(out, 4, BuildConfig(seed=5, days=2, utterances_per_day=12), on_progress=stop_after_one)
    assert open_under_out() == []


class _TwoCounts:
    """Strata of two app counts: even attempts are of one app, odd of two; a quota of one each."""

    quota = {1: 1, 2: 1}

    @staticmethod
    def count_of(index: int) -> int:
        return 1 if index % 2 == 0 else 2


def test_the_prefix_passes_over_idle_attempts_a_quota_filled_for_good_never_runs(tmp_path):
    ids = KeptIdentities(tmp_path)
    # 0 fills the one-app quota for good: 2 and 4, which no worker holds, never run; 1 is dropped
    done = {0: outcome(0), 1: outcome(1, "dropped"), 3: outcome(3)}
    ids.settle(done, lambda i: True, "error", _TwoCounts(), lambda i: True, limit=5)
    assert ids.settled == 5
    assert repeat_of(tmp_path / NAME, 9, KEYS[3], []) == 3
    # 2 is still running (handed out before 0 was kept): it may yet come first, so 3 is not written
    (tmp_path / "running").mkdir()
    running = KeptIdentities(tmp_path / "running")
    running.settle(done, lambda i: True, "error", _TwoCounts(), lambda i: i != 2, limit=5)
    assert running.settled == 2
    assert repeat_of(tmp_path / "running" / NAME, 9, KEYS[3], []) is None
    done[2] = outcome(2)
    running.settle(done, lambda i: True, "error", _TwoCounts(), lambda i: True, limit=5)
    assert running.settled == 5
    # 1 has no outcome and its quota is not filled: it may still run and come before 3
    (tmp_path / "open").mkdir()
    still_open = KeptIdentities(tmp_path / "open")
    still_open.settle({0: outcome(0), 3: outcome(3)}, lambda i: True, "error", _TwoCounts(), lambda i: True, limit=5)
    assert still_open.settled == 1
    # no attempt at or past the limit is passed over (every quota filled: the prefix stops there)
    (tmp_path / "last").mkdir()
    last = KeptIdentities(tmp_path / "last")
    last.settle({0: outcome(0), 1: outcome(1)}, lambda i: True, "error", _TwoCounts(), lambda i: True, limit=3)
    assert last.settled == 3
    # without the strata nothing is passed over
    (tmp_path / "plain").mkdir()
    plain = KeptIdentities(tmp_path / "plain")
    plain.settle({0: outcome(0), 3: outcome(3)}, lambda i: True, "error")
    assert plain.settled == 1


def test_a_long_file_read_in_pieces_tells_what_it_tells_read_whole(tmp_path, monkeypatch):
    ids = KeptIdentities(tmp_path)
    ids.settle({i: outcome(i) for i in KEYS}, lambda i: True, "error")
    whole = [repeat_of(tmp_path / NAME, 9, KEYS[i], []) for i in KEYS]
    assert whole == list(KEYS)
    monkeypatch.setattr(kept_identities, "_READ", None)
    monkeypatch.setattr(kept_identities, "PIECE", 7)  # lines split across pieces, many pieces a line
    assert [repeat_of(tmp_path / NAME, 9, KEYS[i], []) for i in KEYS] == whole


def test_lines_out_of_index_order_tell_a_worker_nothing(tmp_path):
    path = tmp_path / NAME
    lines = [json.dumps([i, KEYS[i], ["sheet_total", f"w{i}"]]) for i in (0, 3, 1)]
    path.write_text(head() + "\n".join(lines) + "\n")
    assert repeat_of(path, 9, KEYS[0], []) is None  # not a parent's file: it writes in index order
