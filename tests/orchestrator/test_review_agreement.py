"""Agreement statistics and the annotation store of the human review."""

from __future__ import annotations

import random
import threading
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from orchestrator.review.agreement import cohen_kappa, fleiss_kappa, table_of
from orchestrator.review.annotations import AnnotationError, AnnotationStore, read_csv
from orchestrator.review.report import render_report, review_report

pytestmark = pytest.mark.slow

# Fleiss (1971)-style worked example as published on Wikipedia ("Fleiss' kappa"): 10 subjects,
# 14 raters each, 5 categories; kappa = 0.210 (P-bar 0.378, P-e-bar 0.213).
WORKED = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
          [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_matches_the_published_worked_example():
    assert fleiss_kappa(WORKED) == pytest.approx(0.2099, abs=5e-4)


def pairwise_fleiss(table):
    """A second implementation: agreement as the share of agreeing ordered pairs of ratings."""
    agree = pairs = 0
    totals = Counter()
    for row in table:
        ratings = [c for c, n in enumerate(row) for _ in range(n)]
        totals.update(ratings)
        if len(ratings) < 2:
            continue
        item_pairs = list(combinations(ratings, 2))
        agree_here = sum(1 for a, b in item_pairs if a == b) / len(item_pairs)
        agree += agree_here
        pairs += 1
    observed = agree / pairs
    n = sum(totals.values())
    chance = sum((count / n) ** 2 for count in totals.values())
    return (observed - chance) / (1 - chance)


def test_fleiss_agrees_with_a_second_implementation_on_random_tables():
    rng = random.Random(4)
    for _ in range(200):
        raters = rng.randint(2, 7)
        table = []
        for _ in range(rng.randint(2, 30)):
            row = [0] * rng.randint(2, 4)
            for _ in range(raters):
                row[rng.randrange(len(row))] += 1
            table.append(row)
        if len({c for row in table for c, n in enumerate(row) if n}) < 2:
            continue
        assert fleiss_kappa(table) == pytest.approx(pairwise_fleiss(table), abs=1e-9)


def test_cohen_against_counts_by_hand():
    # 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["yes"] * 3, ["yes"] * 3) is None  # chance alone agrees fully: undefined
    with pytest.raises(ValueError):
        cohen_kappa(["yes"], [])


def test_two_annotators_fleiss_is_scotts_pi_and_table_of_checks_labels():
    # pairs agree on 2 of 3 items; pooled shares 1/2 and 1/2 give chance 1/2: (2/3 - 1/2) / (1/2) = 1/3
    assert fleiss_kappa([[2, 0], [0, 2], [1, 1]]) == pytest.approx(1 / 3)
    assert fleiss_kappa([[3, 0], [3, 0]]) is None and fleiss_kappa([[1, 0]]) is None
    with pytest.raises(ValueError, match="not one of"):
        table_of({"t1": ["yes", "maybe"]}, ("yes", "no"))


def test_store_keeps_every_verdict_of_two_writers(tmp_path):
    def write(name: str) -> None:
        with AnnotationStore(tmp_path) as store:
            for i in range(150):
                store.set(name, f"neo-{i:05d}", "clarity", "yes" if i % 3 else "no", comment=f"{name} {i}")

    threads = [threading.Thread(target=write, args=(name,)) for name in ("ana", "ben")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with AnnotationStore(tmp_path) as store:
        verdicts = store.verdicts()
        store.set("ana", "neo-00000", "clarity", "no", comment="changed my mind")
        again = store.verdicts("neo-00000")
    assert len(verdicts) == 300 and Counter(v.annotator for v in verdicts) == {"ana": 150, "ben": 150}
    assert [(v.annotator, v.verdict, v.comment) for v in again] == [("ana", "no", "changed my mind"), ("ben", "no", "ben 0")]


def test_store_refuses_bad_verdicts(tmp_path):
    with AnnotationStore(tmp_path) as store:
        with pytest.raises(AnnotationError, match="criterion"):
            store.set("ana", "neo-1", "beauty", "yes")
        with pytest.raises(AnnotationError, match="verdict"):
            store.set("ana", "neo-1", "overall", "yes")
        with pytest.raises(AnnotationError, match="annotator"):
            store.set("a\nb", "neo-1", "clarity", "yes")


def test_csv_import_is_all_or_nothing_and_names_the_line(tmp_path):
    for task in ("neo-1", "neo-2"):
        (tmp_path / "tasks" / task).mkdir(parents=True)
    stranger = tmp_path / "stranger.csv"
    stranger.write_text("annotator,task,criterion,verdict\nana,neo-1,clarity,yes\nana,../../etc,clarity,yes\n")
    good = tmp_path / "good.csv"
    good.write_text("annotator,task,criterion,verdict,comment\nana,neo-1,clarity,yes,fine\nben,neo-1,clarity,no,\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("annotator,task,criterion,verdict\nana,neo-2,clarity,yes\nana,neo-2,overall,maybe\n")
    missing = tmp_path / "missing.csv"
    missing.write_text("who,task,verdict\nana,neo-1,yes\n")
    with AnnotationStore(tmp_path) as store:
        assert store.import_csv(good) == 2
        with pytest.raises(AnnotationError, match=r"bad.csv: line 3: verdict: 'maybe' for overall must be keep or drop"):
            store.import_csv(bad)
        with pytest.raises(AnnotationError, match="line 1: missing column"):
            list(read_csv(missing))
        with pytest.raises(AnnotationError, match=r"line 3: task: '../../etc' is not a task of"):
            store.import_csv(stranger)
        assert len(store.verdicts()) == 2  # nothing of the bad files was stored


def test_report_counts_kappas_and_disagreements(tmp_path):
    with AnnotationStore(tmp_path) as store:
        for task, (a, b) in {"t1": ("keep", "keep"), "t2": ("drop", "drop"), "t3": ("keep", "drop")}.items():
            store.set("ana", task, "overall", a)
            store.set("ben", task, "overall", b)
        for task, (a, b) in {"t1": ("yes", "yes"), "t2": ("no", "yes"), "t3": ("yes", "yes")}.items():
            store.set("ana", task, "clarity", a)
            store.set("ben", task, "clarity", b)
        report = review_report(store.verdicts())
    assert report["annotators"] == ["ana", "ben"]
    assert report["counts"] == {"keep": 1, "drop": 1, "tie": 1} and report["disagreements"] == ["t2", "t3"]
    overall = report["criteria"]["overall"]
    # 3 tasks, 2 raters, p_o = 2/3. Fleiss pools the shares (keep 3/6): p_e = 1/2 -> 1/3. Cohen keeps each
    # annotator's own (ana keeps 2 of 3, ben 1 of 3): p_e = (2*1 + 1*2) / 9 = 4/9 -> (2/9) / (5/9) = 0.4
    assert overall["fleiss_kappa"] == pytest.approx(1 / 3) and overall["cohen_kappa"] == pytest.approx(0.4)
    text = render_report(report, "ds")
    assert "| overall | 3 | 3 | 0.333 | 0.400 |" in text and "- `t3`" in text


def test_review_report_command(tmp_path):
    import json
    import subprocess
    import sys

    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    dataset = tmp_path / "ds"
    assert build(dataset, 2, BuildConfig(seed=3, days=2, utterances_per_day=12), workers=1).accepted == 2
    ids = sorted(p.name for p in (dataset / "tasks").iterdir())
    csv_file = tmp_path / "votes.csv"
    csv_file.write_text("annotator,task,criterion,verdict\n" + "".join(
        f"{who},{task},overall,{verdict}\n" for task in ids for who, verdict in (("ana", "keep"), ("ben", "keep"))))
    homer = str(Path(sys.executable).parent / "homer")
    proc = subprocess.run([homer, "review", "report", str(dataset), "--annotations", str(csv_file), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["counts"] == {"keep": 2, "drop": 0, "tie": 0} and report["criteria"]["overall"]["fleiss_kappa"] is None
    assert (dataset / "review-report.md").is_file() and "imported 4 verdict(s)" in proc.stderr
    bad = subprocess.run([homer, "review", "report", str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert bad.returncode == 2 and "no such folder" in bad.stderr
