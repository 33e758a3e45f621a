"""The dialogue banks' one format: the shared parser, the thread bank compiled from it, and a
broken bank of each kind stopping ``homer`` at start with one line naming the file and line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generators.dialogue_bank import DIALOGUE_DIR, BankError, parse_banks, read_bank_dir, read_bank_files
from generators.thread_bank import MOVE_ROLES, THREADS_BANK, parse_threads, threads

LINE = {"anchor": "{anchor} is {value}", "relation": "after {anchor}",  # these moves name their anchor
        "near_word": "high / low"}  # a pair of words

FLAGS = frozenset({"morning", "rainy"})
SAMPLE_SEEDS = Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample"


def test_a_bank_parses_into_sections_of_entries_with_fields_and_conditions():
    text = ("# a comment\n\n== greet.open\n- Hello {user}, nice [day|morning].\nwhen morning !rainy\n"
            "- first | second [a | b] | third\n- ~\nwhen *\n  - spaced out  \n== data.x: a | b\n- one | two\n")
    sections = parse_banks([("x.bank", text)], flags=FLAGS)
    assert list(sections) == ["greet.open", "data.x"]
    greet, data = sections["greet.open"], sections["data.x"]
    assert greet.columns is None and greet.where == "x.bank:3" and data.columns == ("a", "b")
    assert [(e.fields, e.when, e.where) for e in greet.entries] == [
        (("Hello {user}, nice [day|morning].",), (), "x.bank:4"),
        (("first", "second [a | b]", "third"), ("morning", "!rainy"), "x.bank:6"),
        (("",), ("morning", "!rainy"), "x.bank:7"),
        (("spaced out",), (), "x.bank:9"),
    ]
    assert data.entries[0].fields == ("one", "two")


@pytest.mark.parametrize("text, message", [
    ("- an entry before any section\n", "x.bank:1: expected '== section.name'"),
    ("== Bad Name\n- x\n", "x.bank:1: bad section name 'Bad Name'"),
    ("== data.x: a | A\n- x | y\n", "x.bank:1: bad field list 'a | A'"),
    ("== data.x: a | a\n- x | y\n", "x.bank:1: bad field list"),
    ("== a.b\n- x\n== a.b\n- y\n", "x.bank:3: section 'a.b' is already defined at x.bank:1"),
    ("== a.b\n\n== c.d\n- y\n", "x.bank:1: section 'a.b' has no entries"),
    ("== a.b\n-\n", "x.bank:2: empty entry (write '- ~'"),
    ("== a.b\n- x |  | y\n", "x.bank:2: empty field"),
    ("== a.b\nhello there\n", "x.bank:2: expected '- text'"),
    ("== a.b\n- caf\u00e9\n", "x.bank:2: non-ASCII character"),
    ("== a.b\n- hi [one|two\n", "x.bank:2: '[' without ']'"),
    ("== a.b\n- hi one]\n", "x.bank:2: ']' without '['"),
    ("== a.b\n- hi [one [two]]\n", "x.bank:2: nested [ ]"),
    ("== a.b\nwhen\n- x\n", "x.bank:2: 'when' needs flags"),
    ("== a.b\nwhen sunny_tuesday\n- hi\n", "x.bank:2: unknown flag 'sunny_tuesday'"),
    ("== a.b\nwhen !sunny\n- hi\n", "x.bank:2: unknown flag 'sunny'"),
    ("== a.b\nwhen rainy !rainy\n- hi\n", "x.bank:2: a flag is both required and forbidden"),
    ("== data.x: a | b\n- one\n", "x.bank:2: expected 2 fields (a | b), got 1"),
])
def test_a_malformed_line_names_the_file_and_line(text, message):
    parse_banks([("ok.bank", "== ok\n- fine\n")], flags=FLAGS)
    with pytest.raises(BankError) as info:
        parse_banks([("ok.bank", "== ok\n- fine\n"), ("x.bank", text)], flags=FLAGS)
    assert str(info.value).startswith(message[:9]) and message in str(info.value), info.value


def test_a_tag_field_is_read_only_where_a_bank_has_tags():
    text = "== a.b\n- Any plans? | expects: plan yes-no\n- Note: x | y\n"
    tagged = parse_banks([("x.bank", text)], tags=frozenset({"expects"}))["a.b"].entries
    assert tagged[0].fields == ("Any plans?",) and tagged[0].tags == (("expects", ("plan", "yes-no")),)
    assert tagged[1].tags == () and tagged[1].fields == ("Note: x", "y")  # a tag is the last field only
    plain = parse_banks([("x.bank", text)])["a.b"].entries
    assert plain[0].fields == ("Any plans?", "expects: plan yes-no") and plain[0].tags == ()
    for bad, message in (("- x | expects:\n", "tag 'expects' needs words"), ("- x | expects: Plan\n", "needs words"),
                         ("- x | gives: plan\n", "x.bank:2: unknown tag 'gives'")):
        with pytest.raises(BankError, match=message):
            parse_banks([("x.bank", "== a.b\n" + bad)], tags=frozenset({"expects"}))


def test_conditions_are_refused_where_a_bank_takes_none():
    with pytest.raises(BankError, match=r"^x\.bank:2: this bank's entries take no 'when' conditions"):
        parse_banks([("x.bank", "== a.b\nwhen morning\n- hi\n")])


def test_bank_files_are_regular_files_of_bounded_size(tmp_path: Path):
    (tmp_path / "a.bank").write_text("== a\n- x\n", encoding="utf-8")
    (tmp_path / "b.bank").symlink_to(tmp_path / "a.bank")
    with pytest.raises(BankError, match=r"b\.bank: is a symlink \(test bank\)"):
        read_bank_dir(tmp_path, "test bank")
    (tmp_path / "b.bank").unlink()
    (tmp_path / "b.bank").write_bytes(b"== a\n- \xff\n")
    with pytest.raises(BankError, match=r"b\.bank: cannot read test bank"):
        read_bank_dir(tmp_path, "test bank")
    (tmp_path / "b.bank").unlink()
    assert read_bank_dir(tmp_path, "test bank") == [(str(tmp_path / "a.bank"), "== a\n- x\n")]
    (tmp_path / "empty").mkdir()
    with pytest.raises(BankError, match=r"empty: no \*\.bank files"):
        read_bank_dir(tmp_path / "empty", "test bank")
    with pytest.raises(BankError, match=r"missing: cannot list test bank"):
        read_bank_dir(tmp_path / "missing", "test bank")
    with pytest.raises(BankError, match=r"missing\.bank: does not exist \(the thread bank\)"):
        read_bank_files([tmp_path / "missing.bank"], "the thread bank")


def test_every_dialogue_bank_is_in_the_one_format():
    files = sorted(DIALOGUE_DIR.rglob("*"))
    assert {p.suffix for p in files if p.is_file()} == {".bank"}
    assert THREADS_BANK in files and len(files) > 10


# --------------------------------------------------------------------------------------------
# The thread bank
# --------------------------------------------------------------------------------------------


def test_thread_lines_fill_slots_and_capitalise_on_request():
    bank = parse_threads("== raise\n- {^about} landed, {user}.\n- Plain words.\n== job\n- the desk move\n" + "".join(
        f"== {move}\n- {LINE.get(move, 'x')}\n" for move in MOVE_ROLES if move not in ("raise", "job")), "t.bank")
    line, plain = bank.lines[("raise", "any")]
    assert line.render({"about": "the weekly report", "user": "Dana"}) == "The weekly report landed, Dana."
    assert line.needs == {"about", "user"} and plain.static == "Plain words." and plain.needs == frozenset()
    assert bank.jobs == ("the desk move",)


def test_a_value_that_ends_its_own_sentence_takes_no_full_stop_after_it():
    bank = parse_threads("== state.note\n- In short, {value}.\n- Save {value}.pdf now.\n== job\n- the desk move\n" + "".join(
        f"== {move}\n- {LINE.get(move, 'x')}\n" for move in MOVE_ROLES if move not in ("state", "job")), "t.bank")
    stop, ending = bank.lines[("state", "note")]
    assert stop.render({"value": "how many rows are there?"}) == "In short, how many rows are there?"
    assert stop.render({"value": "the total"}) == "In short, the total."
    assert ending.render({"value": "report v2."}) == "Save report v2..pdf now."  # a file's ending stays


def test_the_thread_bank_is_read_once_and_has_every_move():
    bank = threads()
    assert threads() is bank
    assert {move for move, _ in bank.lines} == set(MOVE_ROLES)
    assert bank.cues and all(("state", cue) in bank.lines for cue in bank.cues)


@pytest.mark.parametrize("extra, message", [
    ("== state.extra\n- the file for {about} is {vaule}\n", "unknown slot {vaule}; a thread line may use about"),
    ("== state.extra\n- the file is {value\n", "stray brace"),
    ("== state.extra\n- the file is {About}\n", "stray brace"),
    ("== state.extra\n- ~\n", "empty thread entry"),
    ("== state.extra\n- one | two\n", "a thread entry is one line of text, got 2 fields"),
    ("== chat.any\n- hello\n", "unknown move 'chat'"),
    ("== data.x: a\n- hello\n", "unknown move 'data'"),
    ("== state.extra: a\n- hello\n", "thread sections declare no fields"),
    ("== near_word.extra\n- highest lowest\n", "a near_word line is two lower-case words"),
    ("== near_word.extra\n- Highest / lowest\n", "a near_word line is two lower-case words"),
    ("== near_word.extra\n- highest / tallest\n", "'highest' is in another near_word pair already"),
    ("== decline.extra\n- {value} again, {final} stands.\n", "a decline.kept line says the value that stands"),
])
def test_a_thread_line_that_cannot_be_used_is_refused_when_the_bank_is_read(extra, message):
    text = THREADS_BANK.read_text(encoding="utf-8")
    lines = text.count("\n")
    with pytest.raises(BankError) as info:
        parse_threads(text + extra, "extra.bank")
    assert str(info.value).startswith(f"extra.bank:{lines + 1}:") or str(info.value).startswith(
        f"extra.bank:{lines + 2}:"), info.value
    assert message in str(info.value)


def test_a_thread_bank_without_a_move_is_refused():
    text = THREADS_BANK.read_text(encoding="utf-8").replace("== near_clause\n", "== answer.near\n")
    with pytest.raises(BankError, match=r"no '== near_clause' section"):
        parse_threads(text, "t.bank")


# --------------------------------------------------------------------------------------------
# Read on first use; a broken bank stops a build at start
# --------------------------------------------------------------------------------------------


def _python(code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, check=False,
                          env={**os.environ, **(env or {})})


@pytest.mark.slow
def test_the_banks_are_read_on_first_use_not_at_import():
    proc = _python("import sys; import orchestrator.build, orchestrator.plus, orchestrator.horizon_sweep; "
                   "from generators.thread_bank import threads; from generators.small_talk import load; "
                   "from generators.other_work import load as work; "
                   "print(threads.cache_info().currsize, load.cache_info().currsize, work.cache_info().currsize, "
                   "'generators.small_talk.tables' in sys.modules, 'generators.other_work.tables' in sys.modules)")
    assert proc.returncode == 0 and proc.stdout.split() == ["0", "0", "0", "False", "False"], proc.stderr


def _homer_with(module: str, name: str, path: Path, *args: str) -> subprocess.CompletedProcess:
    """``homer ARGS`` in a fresh interpreter whose ``module.name`` (a bank's path) is ``path``."""
    args = ("homer", *args)
    return _python(f"import sys, importlib; from pathlib import Path; importlib.import_module({module!r}).{name} = "
                   f"Path({str(path)!r}); from orchestrator.cli import main; sys.argv = {list(args)!r}; main()")


@pytest.mark.slow
@pytest.mark.parametrize("kind, module, name, breakage", [
    ("threads", "generators.thread_bank", "THREADS_BANK", ("== raise\n", "== raise\n- I've got {abuot}.\n")),
    ("small_talk", "generators.small_talk.bank", "BANK_DIR", ("== m.open\n", "== m.open\n- oh [so|\n")),
    ("work", "generators.other_work.bank", "WORK_DIR", ("== lead.more\n", "== lead.more\n- Also {projcet},\n")),
])
def test_homer_stops_at_start_with_one_line_on_a_broken_bank(tmp_path: Path, kind, module, name, breakage):
    banks = tmp_path / "dialogue"
    shutil.copytree(DIALOGUE_DIR, banks)
    path = banks / "threads.bank" if kind == "threads" else banks / kind
    target = path if kind == "threads" else next(p for p in sorted(path.glob("*.bank"))
                                                 if breakage[0] in p.read_text(encoding="utf-8"))
    text = target.read_text(encoding="utf-8")
    lineno = text[:text.index(breakage[0])].count("\n") + 2
    target.write_text(text.replace(breakage[0], breakage[1], 1), encoding="utf-8")
    commands = [("build", "--n", "1", "--workers", "1", "--out", str(tmp_path / "out"))]
    if kind == "threads":  # Plus writes histories too
        commands.append(("regenerate", "--seeds", str(SAMPLE_SEEDS), "--workers", "1", "--out", str(tmp_path / "out")))
    for command in commands:
        proc = _homer_with(module, name, path, *command)
        assert proc.returncode == 2, proc.stderr
        lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith(f"{command[0]}: ")]
        assert len(lines) == 1 and lines[0].startswith(f"error: {target}:{lineno}: "), proc.stderr
        assert not (tmp_path / "out").exists()


def test_no_anchor_name_ends_in_a_preposition():
    """A relation names its anchor before "for the work" ("in the file type the reviewers asked for
    for the term task" doubled its last word): no anchor's name ends in a preposition."""
    ends = {"for", "to", "with", "on", "in", "of", "at", "from", "about", "by"}
    names = [line.render({}) for (move, _), lines in threads().lines.items() if move == "anchor_name" for line in lines]
    assert names and not [n for n in names if n.split()[-1].lower() in ends]


def test_an_entry_without_brackets_splits_as_the_bracket_scan_splits_it():
    import random

    from generators.dialogue_bank import split_fields

    rng = random.Random(5)
    for _ in range(2000):
        body = "".join(rng.choice(["a", " ", "|", " | ", "||", "b c"]) for _ in range(rng.randrange(1, 12)))
        scanned = split_fields(body + "[x]", "bank:1")  # brackets: the scan; "[x]" holds no separator
        assert scanned[-1].endswith("[x]")
        assert split_fields(body, "bank:1") == scanned[:-1] + [scanned[-1][:-3]], body
