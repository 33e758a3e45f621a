"""Phrasing pools of the task families: every family has enough intents and queries, and a
broken phrasing file is one line naming the file and field, at start."""

from __future__ import annotations

import random
from collections import Counter
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generators.families import FAMILIES
from generators.families.phrasing import (
    FAMILY_TEMPLATES, MIN_PHRASES, FamilyDefinitionError, load_phrasing,
)


def test_every_family_has_distinct_intents_and_queries():
    files = {p.stem for p in FAMILY_TEMPLATES.glob("*.toml")}
    assert files == set(FAMILIES), "every family has a phrasing file and every file a family"
    for name, fam in FAMILIES.items():
        assert len(set(fam.phrasing.intents)) >= MIN_PHRASES, name
        assert len(fam.phrasing.queries) >= MIN_PHRASES, name


def test_queries_use_only_the_slots_given(tmp_path: Path):
    (tmp_path / "fam.toml").write_text('intents = ["a", "b", "c"]\n'
                                       'queries = ["Plain.", "Ask {{ first }}.", "Tell {{ first }} about {{ about }}."]\n',
                                       encoding="utf-8")
    phrasing = load_phrasing("fam", tmp_path)
    rng = random.Random(3)
    assert {phrasing.query(rng) for _ in range(30)} == {"Plain."}
    # a query that uses every slot given is twice as likely (naming the work helps find its
    # history), but not the only one: a family's queries are not all one sentence
    asked = Counter(phrasing.query(rng, first="Marcus") for _ in range(600))
    assert set(asked) == {"Ask Marcus.", "Plain."} and asked["Ask Marcus."] > 1.5 * asked["Plain."]
    both = Counter(phrasing.query(rng, first="Marcus", about="the  budget") for _ in range(600))
    assert set(both) == {"Tell Marcus about the budget.", "Ask Marcus.", "Plain."}
    assert both["Tell Marcus about the budget."] > both["Ask Marcus."]
    assert {phrasing.query(rng, about="the budget") for _ in range(30)} == {"Plain."}


@pytest.mark.parametrize("text, words", [
    (None, "missing (every family needs its intents and queries)"),
    ("intents = [", "not valid TOML"),
    ('intents = ["a", "b"]\nqueries = ["x", "y", "z"]', "intents: expected a list of at least 3 phrasings"),
    ('intents = ["a", "b", "{{ first }}"]\nqueries = ["x", "y", "z"]', "intents[2]: an intent names no specifics"),
    ('intents = ["a", "b", "c"]\nqueries = ["x", "y", "{{ amount }}"]', "queries[2]: unknown slot 'amount'"),
    ('intents = ["a", "b", "c"]\nqueries = ["x", "y", "{{ first"]', "queries[2]: not a valid template"),
    ('intents = ["a", "b", "c"]\nqueries = ["x", "y", "z"]\ntone = "dry"', "tone: unknown field"),
    ('intents = ["a", "a", "c"]\nqueries = ["x", "y", "z"]', "intents: holds the same phrasing twice"),
    ('intents = ["a", "b", "c"]\nqueries = ["{{ first }}", "{{ first }}!", "{{ first }}?"]',
     "queries: at least one query must take no slots"),
])
def test_a_broken_phrasing_file_names_file_and_field(tmp_path: Path, text, words):
    if text is not None:
        (tmp_path / "fam.toml").write_text(text, encoding="utf-8")
    with pytest.raises(FamilyDefinitionError) as caught:
        load_phrasing("fam", tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'fam.toml'}: ")
    assert words in str(caught.value)


def test_homer_stops_at_start_with_one_line_on_a_broken_family_file(tmp_path: Path):
    templates = tmp_path / "families"
    shutil.copytree(FAMILY_TEMPLATES, templates)
    (templates / "write_memo.toml").write_text('intents = ["only one"]\nqueries = []\n', encoding="utf-8")
    script = ("import sys; from pathlib import Path; import generators.families.phrasing as p; "
              f"p.FAMILY_TEMPLATES = Path({str(templates)!r}); "
              "from orchestrator.cli import main; sys.argv = ['homer', 'build', '--n', '1', '--out', "
              f"{str(tmp_path / 'out')!r}]; main()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (f"error: {templates / 'write_memo.toml'}: intents: expected a list of at least "
                                   f"{MIN_PHRASES} phrasings")
    assert not (tmp_path / "out").exists()
