"""The texts of a dataset counted from each task's rows, in one part or split by digest."""

from collections import Counter

import verifier.text_tally as text_tally
from verifier.text_tally import TextTally, TextTotals, task_rows

# (texts, user positions, user evidence positions) per task
TASKS = {
    1: (["hello", "hi", "send it", "noted", "hello"], [0, 2, 4], [2]),
    2: (["hello", "welcome", "the q2 review moved", "okay"], [0, 2], [2]),
    3: (["send it", "sure", "fine"], [0, 2], [0]),
    4: (["another day", "hi"], [0], [0]),
}


def counted_directly(keys):
    """What the totals must be, from the texts themselves."""
    tasks_with = Counter(text for key in keys for text in set(TASKS[key][0]))
    totals = TextTotals(distinct=len(tasks_with))
    for key in keys:
        texts, user, evidence = TASKS[key]
        totals.shared_turns += sum(1 for text in texts if tasks_with[text] > 1)
        totals.unique_user_turns += sum(1 for p in user if tasks_with[texts[p]] == 1)
        totals.unique_user_evidence += sum(1 for p in evidence if tasks_with[texts[p]] == 1)
    return totals


def test_totals_are_those_of_the_texts_over_the_tasks_that_count(tmp_path, monkeypatch):
    tally = TextTally(tmp_path)
    for key, task in TASKS.items():
        tally.add(key, task_rows(*task))
    whole = tally.totals()
    assert whole == counted_directly(TASKS) and whole.distinct == 10
    # a task left out (a duplicate, one past its quota) takes its texts with it: "fine" is no more
    # and "send it" is said by one task only, so task 1's evidence turn saying it is unique now
    kept = {1, 2, 4}
    assert tally.totals(kept) == counted_directly(kept)
    assert (whole.unique_user_evidence, tally.totals(kept).unique_user_evidence) == (2, 3)
    # split into parts by digest (one row a part), the same totals
    monkeypatch.setattr(text_tally, "PART_BYTES", text_tally.ROW.size)
    assert tally.totals() == whole and tally.totals(kept) == counted_directly(kept)
    tally.close()
    assert list(tmp_path.iterdir()) == []  # nothing left on disk


def test_a_text_digest_is_the_blake2b_of_its_utf8_whatever_came_before():
    """The digest is copied from one kept empty hash object: each text's is its own BLAKE2b-128,
    in any order, the empty text and texts beyond ASCII included."""
    import hashlib

    texts = ["", "hello", "héllo wörld", "日本語のテキスト", "a" * 10_000, "hello", "\0", "noted 🙂"]
    for text in [*texts, *reversed(texts)]:
        assert text_tally.text_digest(text) == hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
