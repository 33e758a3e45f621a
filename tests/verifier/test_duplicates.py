"""Duplicate tasks: identities, the first of each kept by index, near-duplicates for the card."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from backends.task_record import parse_record
from orchestrator.build import build
from orchestrator.roles import BuildConfig
from tests.support.records import provenance, record_with
from verifier.duplicates import FirstOfEach, NearIndex, alike, duplicate_keys, first_of_each, near_duplicates

pytestmark = pytest.mark.slow


def task(tid: str, out: str, total: str = "15766.74", world: int = 7, description: str | None = None) -> dict:
    return record_with(
        tid, family="sheet_total", user={"name": "Dana Hale", "username": "dana"}, memory=[], computed=None,
        description=description or f"Add up the Salary column of data/team.xlsx and save it in {out}.",
        provenance=provenance(world_seed=world),
        evaluation=[{"function": "evaluate_contain", "args": {"doc_type": "docx", "file": out, "keywords": [total]}},
                    {"function": "evaluate_email_sent", "args": {"sender": "dana", "recipient": "marcus",
                                                                 "body_keywords": [total]}}],
    )


def keys(record: dict) -> set[str]:
    """The identities of a record as a task.json holds it."""
    return set(duplicate_keys(parse_record(record)))


def near_pairs(records: list[dict]) -> list[tuple[str, str, str]]:
    return near_duplicates([parse_record(r) for r in records])


def test_tasks_that_differ_only_in_the_output_name_are_one_task():
    a, b = task("a", "data/memo_x.docx", description="Same words."), task("b", "data/memo_y.docx", description="Other.")
    assert keys(a) & keys(b)
    assert not keys(a) & keys(task("c", "data/memo_x.docx", total="99", description="Z."))
    assert not keys(a) & keys(task("d", "data/memo_x.docx", world=8, description="Q."))


def test_tasks_that_differ_only_in_who_gets_the_result_are_one_task():
    a = task("a", "data/memo.docx", description="One.")
    b = task("b", "data/memo.docx", description="Two.")
    b["evaluation"][1]["args"]["recipient"] = "priya"
    assert keys(a) & keys(b)
    only_people = task("c", "data/memo.docx", description="Three.")
    only_people["evaluation"] = [{"function": "evaluate_email_sent", "args": {"sender": "dana", "recipient": "omar"}}]
    other = dict(only_people, id="d", description="Four.", evaluation=[
        {"function": "evaluate_email_sent", "args": {"sender": "dana", "recipient": "lena"}}])
    assert not keys(only_people) & keys(other)  # nothing computed: no shared key


def test_tasks_that_do_the_same_office_work_under_other_names_are_one_task():
    """Two follow-up sessions for the same people at the same hour, titled differently in the chat."""
    def session(tid: str, title: str, names: list[str], start: str) -> dict:
        return record_with(
            tid, family="followup_session", user={"name": "Owen Park", "username": "owen"}, computed=None,
            description=f"Book {title} for {', '.join(names)} at {start}.", provenance=provenance(world_seed=3),
            memory=[{"id": "m1", "kind": "fact", "text": "title", "value": title},
                    {"id": "m2", "kind": "fact", "text": "minutes", "value": "55"}],
            evaluation=[{"function": "evaluate_calendar_event",
                         "args": {"username": "owen", "summary": title, "start": start}},
                        {"function": "evaluate_email_sent",
                         "args": {"sender": "owen", "recipient": "gloria", "body_keywords": names}}])
    a = session("a", "Practice catch-up", ["Rowan Ortega", "Naomi Nguyen"], "2024-06-06 12:00:00")
    b = session("b", "Extra training hour", ["Rowan Ortega", "Naomi Nguyen"], "2024-06-06 12:00:00")
    assert keys(a) & keys(b)
    later = session("c", "Extra training hour", ["Rowan Ortega", "Naomi Nguyen"], "2024-06-07 12:00:00")
    fewer = session("d", "Extra training hour", ["Rowan Ortega"], "2024-06-06 12:00:00")
    assert not keys(a) & keys(later)
    assert not keys(a) & keys(fewer)


def test_the_same_computation_in_one_office_is_one_task_whichever_family_asks_for_it():
    a = dict(task("a", "data/memo.docx", description="One."),
             computed=[{"value": 15766.74, "op": "sum", "inputs": ["1", "2"]}])
    b = dict(task("b", "data/other.docx", total="15,766.74", description="Two."), family="report_pdf",
             computed=[{"value": "15,766.74", "op": "sum", "inputs": ["1", "2"]}])
    b["evaluation"] = [{"function": "evaluate_answer", "args": {"keywords": ["15,766.74"]}}]
    assert keys(a) & keys(b)
    assert not keys(a) & keys(dict(b, provenance=provenance(world_seed=8)))
    counted = dict(b, computed=[{"value": "15766.74", "op": "count", "inputs": []}])
    assert not keys(a) & keys(counted)


def test_the_same_description_is_a_duplicate_whatever_it_checks():
    a = task("a", "data/a.docx", description="Email Marcus the total.")
    b = task("b", "data/b.docx", total="1", world=9, description="Email  marcus the TOTAL.")
    assert keys(a) & keys(b)


def test_first_of_each_keeps_the_lowest_index_whatever_the_order():
    items = [(5, ["k1"]), (2, ["k2", "k1"]), (9, ["k3"]), (7, ["k2"]), (1, [])]
    kept, dropped = first_of_each(items)
    assert kept == [1, 2, 9]
    assert dropped == {5: 2, 7: 2}
    assert first_of_each(list(reversed(items))) == (kept, dropped)


def test_near_duplicates_name_pairs_and_reasons():
    base = task("a", "data/a.docx", description="Write the quarterly salary summary for the finance review today.")
    same = copy.deepcopy(base) | {"id": "b"}
    alike = task("c", "data/c.docx", total="5", world=3,
                 description="Write the quarterly salary summary for the finance review today please.")
    other = task("d", "data/d.docx", total="6", world=4, description="Book a meeting with Marcus on Friday.")
    pairs = near_pairs([base, same, alike, other])
    assert ("a", "b", "same description") in pairs
    assert any(p[:2] == ("a", "c") and p[2].startswith("descriptions 9") for p in pairs)
    assert not [p for p in pairs if "d" in p[:2]]


def _every_pair_first_of_each(items, near, quotas=None):
    """The definition, comparing each task with every kept one of its family (with ``quotas``, a
    task past its group's quota, given those kept below it, is passed over)."""
    seen, kept, dropped, families = {}, [], {}, {}
    for index, keys in sorted(items):
        if quotas is not None:
            group = quotas.count_of(index)
            if sum(1 for i in kept if quotas.count_of(i) == group) >= quotas.quota.get(group, 0):
                continue
        earlier = next((seen[k] for k in keys if k in seen), None)
        family, *words = near[index]
        if earlier is None:
            earlier = next((i for i, other in families.get(family, ()) if alike(frozenset(words), other)), None)
        if earlier is not None:
            dropped[index] = earlier
            continue
        kept.append(index)
        seen.update(dict.fromkeys(keys, index))
        families.setdefault(family, []).append((index, frozenset(words)))
    return kept, dropped


class _ThreeGroups:
    """Quotas of three groups, an index's group its remainder by 3 (as a build's app counts)."""

    def __init__(self, quota):
        self.quota = quota

    def count_of(self, index):
        return index % 3


def test_an_attempt_past_its_quota_changes_no_verdict_whatever_the_order_outcomes_come_in():
    """Parallel workers may run an attempt past its group's quota (its quota filled below it by
    outcomes not yet in); one that repeats nothing would, as a first, make a later attempt of
    another group a repeat. With quotas it takes no part: the verdicts are those of the
    definition, and of the outcomes without it (as a build that runs one attempt at a time)."""
    import random

    rng = random.Random(8)
    shown = Counter()
    for _ in range(200):
        quotas = _ThreeGroups({g: rng.randint(0, 6) for g in range(3)})
        items, near = [], {}
        for index in sorted(rng.sample(range(60), rng.randint(1, 40))):
            items.append((index, [f"k{rng.randint(0, 12)}"] if rng.random() < 0.5 else [f"own{index}"]))
            near[index] = [rng.choice("ab"), *rng.sample([f"w{i}" for i in range(8)], 6)]
        expected = _every_pair_first_of_each(items, near, quotas)
        assert first_of_each(items, near, quotas) == expected
        arriving, come = FirstOfEach(quotas=quotas), []
        for index, keys in rng.sample(items, len(items)):  # as the parent reads it: after each outcome
            arriving.add(index, keys, near[index])
            come.append((index, keys))
            assert (arriving.kept, arriving.dropped) == _every_pair_first_of_each(come, near, quotas)
        assert (arriving.kept, arriving.dropped) == expected
        live = [item for item in items if item[0] not in arriving.past_quota]
        assert first_of_each(live, near, quotas) == expected
        assert all(arriving.is_kept(i) == (i in expected[0]) for i, _ in items)
        plain_repeats = first_of_each(items, near)[1]  # every attempt taking part: a repeat of one past its quota
        shown["a live repeat of one past its quota"] += any(plain_repeats.get(i) in arriving.past_quota
                                                             for i, _ in live)
        shown["past a quota"] += bool(arriving.past_quota)
    assert shown["a live repeat of one past its quota"] > 10 and shown["past a quota"] > 100, shown


def test_near_duplicates_are_found_by_index_with_the_verdicts_of_comparing_every_pair():
    import random

    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(50)]
    for _ in range(150):
        stems = [rng.sample(vocabulary, rng.randint(0, 24)) for _ in range(4)]
        items, near = [], {}
        for index in rng.sample(range(500), rng.randint(1, 50)):
            words = set(rng.choice(stems))
            for _ in range(rng.randint(0, 3)):  # one to three words changed: at or about the 90 % line
                words.discard(rng.choice(vocabulary)) if rng.random() < 0.5 else words.add(rng.choice(vocabulary))
            items.append((index, [f"k{rng.randint(0, 40)}"] if rng.random() < 0.4 else []))
            near[index] = [rng.choice("ab"), *sorted(words)]
        expected = _every_pair_first_of_each(items, near)
        assert first_of_each(items, near) == expected
        arriving = FirstOfEach()  # outcomes in the order workers finish them
        for index, keys in rng.sample(items, len(items)):
            arriving.add(index, keys, near[index])
        assert (arriving.kept, arriving.dropped) == expected
        # alike by description only ("-": a description without words)
        records = [record_with(f"t{i}", family=near[i][0], description=" ".join(near[i][1:]) or "-", computed=None,
                               provenance=provenance(world_seed=i)) for i, _ in items]
        pairs = [(a["id"], b["id"]) for n, a in enumerate(records) for b in records[n + 1:]
                 if a["description"] == b["description"]  # (both without words, too)
                 or alike(frozenset(a["description"].split()) - {"-"}, frozenset(b["description"].split()) - {"-"})]
        assert [p[:2] for p in near_pairs(records)] == pairs


def test_a_near_index_compares_a_description_with_few_others():
    index = NearIndex()
    words = [frozenset(f"task{i} w{i} x{i} y{i} z{i} shared common words here today".split()) for i in range(2000)]
    for i, w in enumerate(words):
        index.add(i, w)
    close = words[7] - {"here"}  # one word of ten left out: 90 % alike
    assert index.alike(close) == [7]
    looked_at = {k for word in index._prefix(close) for k in index._by_word.get(word, ())}
    assert len(looked_at) < 200  # not the 2,000 a comparison with every description makes

def test_near_pairs_compare_a_description_with_few_others_however_many_share_its_common_words(monkeypatch):
    """Descriptions of one template share most words: ordered rarest first, a prefix holds a
    task's own words, so the comparisons grow with the tasks, not with their square."""
    import verifier.duplicates as duplicates

    compared = []

    def counted(a, b, threshold=duplicates.NEAR_JACCARD):
        compared.append((a, b))
        return alike(a, b, threshold)

    monkeypatch.setattr(duplicates, "alike", counted)
    template = "follow up the mail with the data that is due and it goes to the team".split()
    tasks = [(f"t{i}", [f"k{i}"], frozenset([*template, f"name{i}", f"file{i}", f"day{i}"])) for i in range(3000)]
    twin = frozenset([*template, "name7", "file7", "day7", "today"])  # 17 of 18 words: 94 % alike
    pairs = duplicates.near_pairs([*tasks, ("twin", ["k-twin"], twin)])
    assert pairs == [("t7", "twin", "descriptions 94 % alike")]
    assert len(compared) < 100  # not the 4.5 million of every pair


def test_a_near_index_built_again_as_it_grows_finds_what_comparing_every_set_finds():
    """The index orders words rarest first among the sets it held when it last doubled: across
    those rebuilds, with sets taken out and put back, it finds exactly the alike sets."""
    import random

    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(30)]
    stems = [rng.sample(vocabulary, 12) for _ in range(5)]
    index, held = NearIndex(), {}
    for key in range(400):
        words = set(rng.choice(stems))
        for _ in range(rng.randint(0, 2)):
            words.discard(rng.choice(vocabulary)) if rng.random() < 0.5 else words.add(rng.choice(vocabulary))
        words = frozenset(words)
        assert index.alike(words) == sorted(k for k, w in held.items() if alike(words, w)), key
        index.add(key, words)
        held[key] = words
        if rng.random() < 0.2:  # an attempt taken back out (one that came in late is put in again after)
            gone = rng.choice(sorted(held))
            index.remove(gone)
            del held[gone]


def test_a_build_holds_no_duplicates_and_says_which_it_dropped(tmp_path: Path):
    out = tmp_path / "ds"
    # 24 tasks of three apps repeat one (seed 3); short histories: a duplicate is of the task, not its chat
    summary = build(out, 24, BuildConfig(seed=3, app_counts=(3,), days=2, utterances_per_day=12))
    records = [json.loads(p.read_text()) for p in sorted((out / "tasks").glob("*/task.json"))]
    assert len(records) == summary.accepted == 24
    assert near_pairs(records) == []
    attempts = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    duplicates = [a for a in attempts if re.match(r"duplicate: (the same task|almost the same description) as neo-",
                                                   a["reason"])]
    assert duplicates and summary.drops.get("duplicate", 0) == len(duplicates)
    kept = {r["id"] for r in records}
    assert all(a["reason"].split()[-1] in kept for a in duplicates)


def test_the_attempts_of_one_world_repeat_a_family_only_after_using_all_others():
    from collections import Counter

    from orchestrator.planner import families_for, world_family
    from orchestrator.roles import TASKS_PER_WORLD

    for seed in range(5):
        for world in range(3):
            picked = [world_family(seed, world * TASKS_PER_WORLD + slot, [1, 2, 3]) for slot in range(TASKS_PER_WORLD)]
            by_count = Counter(picked)
            for count in (1, 2, 3):
                names = families_for(count)
                used = [by_count[name] for name in names]
                assert max(used) - min(used) <= 1, (seed, world, count, picked)


def test_a_build_spreads_its_attempts_over_every_family_not_only_within_each_world():
    from collections import Counter

    from orchestrator.planner import families_for, world_family

    for seed in range(4):
        for counts in ([1, 2, 3], [3]):
            picked = Counter(world_family(seed, index, counts) for index in range(90))
            for count in counts:
                used = [picked[name] for name in families_for(count)]
                assert max(used) - min(used) <= 1, (seed, counts, count, used)


def test_fallback_families_are_ones_the_world_reaches_last_and_differ_between_attempts():
    from orchestrator.planner import _app_count, fallback_families, families_for, world_family
    from orchestrator.roles import TASKS_PER_WORLD

    for seed in range(3):
        planned = [world_family(seed, slot, [1, 2, 3]) for slot in range(TASKS_PER_WORLD)]
        counts = [_app_count(seed, slot, [1, 2, 3]) for slot in range(TASKS_PER_WORLD)]
        firsts: dict[int, list[str]] = {}
        for slot, family in enumerate(planned):
            order = fallback_families(seed, slot, [1, 2, 3])
            same_count = [f for f, count in zip(planned, counts) if count == counts[slot]]
            assert family not in order and len(set(order)) == len(order) == len(set(same_count) | set(order)) - 1
            firsts.setdefault(counts[slot], []).append(order[0])
            # the first fallback is a family none of the world's attempts of that app count plans,
            # whenever the world leaves enough out (it turned to the alphabetically first one before)
            unused = [f for f in order if f not in same_count]
            if len(unused) >= len(same_count):
                assert order[0] in unused, (seed, slot, order[:3])
        for count, first in firsts.items():  # attempts that fall back start at different families
            if 2 * len(first) <= len(families_for(count)):  # (while planned and fallbacks fit in one order)
                assert len(set(first)) == len(first), (seed, count, first)


def test_first_of_each_drops_an_almost_equal_description_of_the_same_family_only():
    words = ("please add up every salary column of this data sheet and write its grand total into the answer "
             "file before our finance review on monday").split()
    near = {1: ["sheet_total", *words, "team"], 4: ["sheet_total", *words, "staff"],
            6: ["pdf_total", *words, "staff"], 8: ["sheet_total", "book", "a", "room"]}
    kept, dropped = first_of_each([(i, [f"k{i}"]) for i in near], near)
    assert kept == [1, 6, 8] and dropped == {4: 1}
    assert first_of_each([(i, [f"k{i}"]) for i in near]) == ([1, 4, 6, 8], {})  # without words: keys only


def test_repeat_of_tells_without_putting_in_what_adding_in_index_order_decides():
    """What a worker asks of the kept tasks (and the parent of an attempt dropped after its
    draft): the kept one an attempt repeats, as ``add`` would find it, whatever came in after."""
    import random

    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(30)]
    for _ in range(100):
        stems = [rng.sample(vocabulary, rng.randint(1, 16)) for _ in range(3)]
        items = []
        for index in sorted(rng.sample(range(300), rng.randint(2, 40))):
            words = set(rng.choice(stems))
            for _ in range(rng.randint(0, 2)):
                words.discard(rng.choice(vocabulary)) if rng.random() < 0.5 else words.add(rng.choice(vocabulary))
            keys = [f"k{rng.randint(0, 25)}" for _ in range(rng.randint(0, 2))]
            items.append((index, keys, [rng.choice("ab"), *sorted(words)]))
        whole = FirstOfEach()
        for index, keys, words in rng.sample(items, len(items)):
            whole.add(index, keys, words)
        in_order = FirstOfEach(in_order=True)  # a worker's: it holds nothing to take back out
        for item in items:
            in_order.add(*item)
        assert (in_order.kept, in_order.dropped) == (whole.kept, whole.dropped)
        with pytest.raises(ValueError, match="not in index order"):
            in_order.add(items[-1][0], [], None)
        for position, (index, keys, words) in enumerate(items):
            assert in_order.repeat_of(index, keys, words) == whole.repeat_of(index, keys, words)
            below = FirstOfEach()
            for item in items[:position]:
                below.add(*item)
            assert whole.repeat_of(index, keys, words) == below.repeat_of(index, keys, words)
            assert whole.repeat_of(index, keys, words) == whole.dropped.get(index)
            below.add(index, keys, words)  # nothing was put in by asking: adding it decides the same
            assert below.dropped.get(index) == whole.dropped.get(index)
