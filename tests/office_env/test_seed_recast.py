"""A seed re-cast with other people: everywhere at once, nothing else changed, or not at all."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import docx

from office_env import load_officebench
from office_env.formats import pdf_io, xlsx_io
from office_env.officebench import write_task_folder
from office_env.sample import SAMPLE_NOW, write_sample_officebench, write_sample_office
from office_env.seed_recast import file_text, recast_seed, substitute


def _seeds(root: Path) -> dict:
    return {t.id: t for t in load_officebench(write_sample_officebench(root)).tasks}


def _digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_substitute_keeps_case_and_whole_words():
    names = {"Bob": "Dmitri", "Alice": "Yara"}
    assert substitute("Bob's mail to bob@example.com and ALICE, not Bobby or alicex", names) == \
        "Dmitri's mail to dmitri@example.com and YARA, not Bobby or alicex"


def test_every_place_of_a_person_is_recast_and_nothing_else(tmp_path):
    seed = _seeds(tmp_path / "seeds")["1-1/0"]
    before = _digests(seed.testbed)
    new, cast = recast_seed(seed, random.Random(5), tmp_path / "cast", avoid=("Priya",))
    assert {"Alice", "Bob", "Carol"} <= set(cast.names) and "Priya" not in cast.names.values()
    bob, alice = cast.names["Bob"], cast.names["Alice"]
    assert new.instruction == f"Set {bob}'s score in data/scores.xlsx to 95."
    assert new.username == alice.lower() and new.evaluation == seed.evaluation  # no name in its criterion
    assert xlsx_io.read_book(new.testbed / "data/scores.xlsx", "x").sheet(None, "x").rows[2][0] == bob
    assert (new.testbed / "emails" / bob.lower()).is_dir() and (new.testbed / "calendar" / f"{alice.lower()}.ics").is_file()
    assert f"Thanks {bob}." in file_text(next((new.testbed / "emails").rglob("Re Quarterly budget.eml")), "m")
    after = _digests(new.testbed)
    assert after["data/invoice.pdf"] == before["data/invoice.pdf"]  # no person in it: the same bytes
    assert after["data/readme.txt"] == before["data/readme.txt"]
    assert _digests(seed.testbed) == before  # the seed itself is untouched
    for path in new.testbed.rglob("*"):
        if path.is_file():
            said = substitute(path.as_posix() + "\n" + file_text(path, path.name), dict.fromkeys(cast.names, "qqqq"))
            assert "qqqq" not in said.lower(), path
    again, _ = recast_seed(seed, random.Random(5), tmp_path / "again", avoid=("Priya",))
    assert _digests(again.testbed) == after  # the same stream, the same bytes


def test_reference_and_criteria_names_follow(tmp_path):
    seeds = _seeds(tmp_path / "seeds")
    swap, cast = recast_seed(seeds["1-2/0"], random.Random(1), tmp_path / "swap")
    rows = xlsx_io.read_book(swap.reference / "scores_swapped.xlsx", "r").sheet(None, "r").rows
    assert [r[0] for r in rows[1:3]] == [cast.names["Bob"], cast.names["Alice"]]
    mail, cast = recast_seed(seeds["2-1/0"], random.Random(2), tmp_path / "mail")
    users = {c["args"].get("username") for c in mail.evaluation} - {None}
    assert users == {cast.names["Alice"].lower(), cast.names["Bob"].lower()}
    assert all((mail.testbed / "emails" / u).is_dir() or u == mail.username for u in users)


def _one_seed(root: Path, instruction: str, username: str = "alice", extra=None) -> Path:
    testbed = write_sample_office(root / "office", SAMPLE_NOW)
    if extra:
        extra(testbed)
    subtask = {"username": username, "date": "2024-05-03", "weekday": "Friday", "time": "09:30 AM",
               "task": instruction, "evaluation": [{"function": "evaluate_file_exist",
                                                   "args": {"file": "./data/answer.txt"}}]}
    write_task_folder(root / "tasks" / "1-1", [subtask], testbed)
    return root / "tasks"


def test_a_name_a_pdf_says_is_kept(tmp_path):
    def pdf(testbed: Path) -> None:
        (testbed / "data" / "memo.pdf").write_bytes(pdf_io.build("Approved by Bob on Friday."))
    seed = load_officebench(_one_seed(tmp_path, "Ask Bob and Carol for the memo.", extra=pdf)).tasks[0]
    new, cast = recast_seed(seed, random.Random(3), tmp_path / "cast")
    assert "memo.pdf" in cast.kept["Bob"] and "Bob" not in cast.names and "Carol" in cast.names
    assert new.instruction == f"Ask Bob and {cast.names['Carol']} for the memo."


def test_a_name_that_is_an_ordinary_word_is_kept(tmp_path):
    seed = load_officebench(_one_seed(tmp_path, "Mark the open rows for Bob.", username="mark")).tasks[0]
    new, cast = recast_seed(seed, random.Random(4), tmp_path / "cast")
    assert cast.kept.get("Mark") == "also an ordinary word of the seed" and new.username == "mark"
    assert "Bob" in cast.names and new.instruction.startswith("Mark the open rows for ")


def test_a_spreadsheet_word_with_a_capital_is_no_person(tmp_path):
    seed = load_officebench(_one_seed(tmp_path, "Put the Max score of Bob in answer.txt.")).tasks[0]
    new, cast = recast_seed(seed, random.Random(7), tmp_path / "cast")
    assert "Max" not in cast.names and "Max" not in cast.kept
    assert new.instruction == f"Put the Max score of {cast.names['Bob']} in answer.txt."


def test_a_name_left_in_a_file_after_rewriting_keeps_the_whole_seed(tmp_path):
    def split_runs(testbed: Path) -> None:  # "Bob" across two runs of one paragraph
        document = docx.Document()
        paragraph = document.add_paragraph("Owner: ")
        paragraph.add_run("Bo")
        paragraph.add_run("b")
        document.save(testbed / "data" / "owner.docx")
    seed = load_officebench(_one_seed(tmp_path, "Email Bob the notes.", extra=split_runs)).tasks[0]
    new, cast = recast_seed(seed, random.Random(6), tmp_path / "cast")
    assert new is seed and not cast.names
    assert any("still said in testbed/data/owner.docx" in why for why in cast.kept.values())
