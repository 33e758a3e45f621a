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

from backends.prompts import TEMPLATES
from generators.families import FAMILIES
from generators.families.phrasing import (
    FAMILY_TEMPLATES, MIN_PHRASES, WORK_SLOTS, FamilyDefinitionError, load_phrasing,
)

pytestmark = pytest.mark.slow


def test_every_family_has_distinct_intents_and_queries():
    files = {p.stem for p in FAMILY_TEMPLATES.glob("*.toml")}
    assert files == set(FAMILIES), "every family has a phrasing file and every file a family"
    for name, fam in FAMILIES.items():
        assert len(set(fam.phrasing.intents)) >= MIN_PHRASES, name
        assert len(fam.phrasing.queries) >= MIN_PHRASES, name


def test_queries_use_only_the_slots_given(tmp_path: Path):
    (tmp_path / "fam.toml").write_text('intents = ["a", "b", "c", "d", "e"]\n'
                                       'queries = ["Plain.", "Ask {{ first }}.", "Tell {{ first }} about {{ about }}.", '
                                       '"By {{ when }}.", "Read {{ doc }}."]\n',
                                       encoding="utf-8")
    phrasing = load_phrasing("fam", tmp_path)
    rng = random.Random(3)
    assert {phrasing.query(rng) for _ in range(30)} == {"Plain."}
    # a query that uses every slot given is four times as likely (naming the work lets a search of
    # the history find its turns), but not the only one: a family's queries are not all one sentence
    asked = Counter(phrasing.query(rng, first="Marcus") for _ in range(600))
    assert set(asked) == {"Ask Marcus.", "Plain."} and asked["Ask Marcus."] > 3 * asked["Plain."]
    both = Counter(phrasing.query(rng, first="Marcus", about="the  budget") for _ in range(600))
    assert set(both) == {"Tell Marcus about the budget.", "Ask Marcus.", "Plain."}
    assert both["Tell Marcus about the budget."] > 3 * both["Ask Marcus."]
    assert {phrasing.query(rng, about="the budget") for _ in range(30)} == {"Plain."}
    # after weeks of history the query names the work whenever the pool has such a query
    named = {phrasing.query(rng, named=True, first="Marcus", about="the budget") for _ in range(30)}
    assert named == {"Tell Marcus about the budget."}
    assert {phrasing.query(rng, named=True, first="Marcus") for _ in range(40)} == {"Ask Marcus.", "Plain."}
    # a model told to only point at the work: a query without the work's name, where the pool has one
    pointing = {phrasing.query(rng, named=False, first="Marcus", about="the budget") for _ in range(40)}
    assert pointing == {"Ask Marcus.", "Plain."}


def test_every_family_can_name_its_work_in_the_query():
    """A Challenge history (weeks long) asks with a query naming the work: each family's pool has one."""
    for name, fam in FAMILIES.items():
        assert any(needs & WORK_SLOTS for needs in fam.phrasing.query_slots), name


@pytest.mark.parametrize("text, words", [
    (None, "missing (every family needs its intents and queries)"),
    ("intents = [", "not valid TOML"),
    ('intents = ["a", "b", "c", "d"]\nqueries = ["x", "y", "z", "v", "w"]',
     "intents: expected a list of at least 5 phrasings"),
    ('intents = ["a", "b", "{{ first }}", "d", "e"]\nqueries = ["x", "y", "z", "v", "w"]',
     "intents[2]: an intent names no specifics"),
    ('intents = ["a", "b", "c", "d", "e"]\nqueries = ["x", "y", "{{ amount }}", "v", "w"]',
     "queries[2]: unknown slot 'amount'"),
    ('intents = ["a", "b", "c", "d", "e"]\nqueries = ["x", "y", "{{ first", "v", "w"]',
     "queries[2]: not a valid template"),
    ('intents = ["a", "b", "c", "d", "e"]\nqueries = ["x", "y", "z", "v", "w"]\ntone = "dry"',
     "tone: unknown field"),
    ('intents = ["a", "a", "c", "d", "e"]\nqueries = ["x", "y", "z", "v", "w"]',
     "intents: holds the same phrasing twice"),
    ('intents = ["a", "b", "c", "d", "e"]\nqueries = ["{{ first }}", "{{ first }}!", "{{ first }}?", '
     '"{{ first }}.", "{{ first }}..."]',
     "queries: at least one query must take no slots"),
])
def test_a_broken_phrasing_file_names_file_and_field(tmp_path: Path, text, words):
    if text is not None:
        (tmp_path / "fam.toml").write_text(text, encoding="utf-8")
    with pytest.raises(FamilyDefinitionError) as caught:
        load_phrasing("fam", tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'fam.toml'}: ")
    assert words in str(caught.value)


def homer_with(module: str, name: str, folder: Path, *args: str | Path) -> subprocess.CompletedProcess:
    """``homer ARGS`` in a fresh interpreter whose ``module.name`` (a templates folder) is ``folder``."""
    script = (f"import sys, importlib; from pathlib import Path; importlib.import_module({module!r}).{name} = "
              f"Path({str(folder)!r}); from orchestrator.cli import main; sys.argv = {['homer', *map(str, args)]!r}; "
              "main()")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_homer_stops_at_start_with_one_line_on_a_broken_family_file(tmp_path: Path):
    templates = tmp_path / "families"
    shutil.copytree(FAMILY_TEMPLATES, templates)
    (templates / "write_memo.toml").write_text('intents = ["only one"]\nqueries = []\n', encoding="utf-8")
    proc = homer_with("generators.families.phrasing", "FAMILY_TEMPLATES", templates,
                      "build", "--n", "1", "--out", tmp_path / "out")
    assert proc.returncode == 2, proc.stderr
    # a progress line may come first (a build shows itself while it loads); the error is one line, the last
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith("build: ")]
    assert lines == [f"error: {templates / 'write_memo.toml'}: intents: expected a list of at least "
                     f"{MIN_PHRASES} phrasings"], proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == lines[0]
    assert not (tmp_path / "out").exists()


def test_homer_stops_at_start_with_one_line_on_a_broken_prompt_template(tmp_path: Path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES / "prompts", templates / "prompts")
    judge = templates / "prompts" / "judge.j2"
    judge.write_text(judge.read_text(encoding="utf-8") + "\n{% if %}\n", encoding="utf-8")
    args = ("build", "--n", "1", "--backend", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
            "--out", tmp_path / "out")
    proc = homer_with("backends.prompts", "TEMPLATES", templates, *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {judge}:"), proc.stderr
    assert not (tmp_path / "out").exists()
    judge.write_text((TEMPLATES / "prompts" / "judge.j2").read_text(encoding="utf-8"), encoding="utf-8")
    rules = templates / "prompts" / "_rules.j2"  # imported by the roles: compiled when a role renders
    rules.write_text(rules.read_text(encoding="utf-8") + "\n{% endif %}\n", encoding="utf-8")
    proc = homer_with("backends.prompts", "TEMPLATES", templates, *args)
    assert proc.returncode == 2 and proc.stderr.strip().startswith(f"error: {rules}:"), proc.stderr
    rules.write_text((TEMPLATES / "prompts" / "_rules.j2").read_text(encoding="utf-8"), encoding="utf-8")
    (templates / "prompts" / "judge.j2").unlink()
    proc = homer_with("backends.prompts", "TEMPLATES", templates, *args)
    assert proc.returncode == 2 and proc.stderr.strip() == f"error: {judge}: no such template", proc.stderr


def test_every_definition_file_error_is_reported_as_one_line():
    from backends.prompts import PromptTemplateError
    from generators.dialogue_bank import BankError
    from generators.other_work import BankError as WorkBankError
    from generators.small_talk import BankError as SmallTalkBankError
    from orchestrator.cli import _definition_error

    assert WorkBankError is SmallTalkBankError is BankError  # every dialogue bank is read by one parser
    for cls in (FamilyDefinitionError, BankError, PromptTemplateError):
        assert _definition_error(cls("file:1: what is wrong"))
    assert not _definition_error(ValueError("a bug, shown with its traceback"))
    assert not _definition_error(KeyError("templates"))


def test_a_plain_query_is_joined_as_jinja_renders_it():
    """A query of text and slots alone is joined without Jinja: for every family's queries, with
    slot values of every kind (braces, markup, white space, non-ASCII, a number), the same text as
    Jinja's render; a template with more than slots is rendered by Jinja, and a slot not given
    is Jinja's error."""
    import jinja2

    from generators.families.phrasing import QUERY_SLOTS, _slots

    values = ["the budget", "{{ about }}", "<b>R&D</b>", "  two  spaces\nand a line ", "Zoë's café", "", "%s {0}",
              "\\n", 42]
    rng = random.Random(3)
    plain = 0
    for name, fam in FAMILIES.items():
        for query, needs in zip(fam.phrasing.queries, fam.phrasing.query_slots):
            plain += query.parts is not None
            for _ in range(6):
                slots = {slot: rng.choice(values) for slot in QUERY_SLOTS}
                assert query.render(**slots) == query.template.render(**slots), name
    assert plain
    for text in ("{{ about|upper }} now", "{% if about %}{{ about }}{% endif %}", "{{ 'x' }}{{ about }}",
                 "a {{ about }}\n", "{{ about }}{{ about }} {{ what }}", "no slots at all"):
        query, _ = _slots(text, "test")
        assert query is not None
        for value in values:
            assert query.render(about=value, what="w") == query.template.render(about=value, what="w"), text
    query, _ = _slots("About {{ about }}", "test")
    assert query is not None and query.parts is not None
    with pytest.raises(jinja2.UndefinedError):
        query.render(what="w")
