"""The seed lint on small OfficeBench-like folders holding one defect each."""

from __future__ import annotations

from pathlib import Path

import pytest

from office_env import evaluate_criteria, load_officebench
from office_env.formats import docx_io, xlsx_io
from verifier.seed_lint import apply_repairs, edit_distance, lint_seeds

from tests.support.records import write_json

REF = "../../../../reference/"


def subtask(task: str, evaluation: list, **extra) -> dict:
    return {"username": "Alice", "date": "2020-05-01", "weekday": "Friday", "time": "10:00 AM",
            "task": task, "evaluation": evaluation, **extra}


def contain(file: str, *keywords: str, doc_type: str = "txt") -> dict:
    return {"function": "evaluate_contain", "args": {"doc_type": doc_type, "file": file, "keywords": list(keywords)}}


def exact(result: str, expected: str, doc_type: str = "xlsx") -> dict:
    return {"function": "evaluate_exact_match",
            "args": {"doc_type": doc_type, "result_file": result, "expected_file": expected}}


def seed(tasks: Path, folder: str, item: dict | str, files: dict[str, bytes] | None = None,
         reference: dict[str, bytes] | None = None, index: int = 0) -> None:
    (tasks / folder / "subtasks").mkdir(parents=True, exist_ok=True)
    target = tasks / folder / "subtasks" / f"{index}.json"
    if isinstance(item, str):
        target.write_text(item, encoding="utf-8")
    else:
        write_json(target, item)
    data = tasks / folder / "testbed" / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name, content in (files or {"notes.txt": b"nothing here\n"}).items():
        (data / name).write_bytes(content)
    if reference is not None:
        (tasks / folder / "reference").mkdir(exist_ok=True)
        for name, content in reference.items():
            (tasks / folder / "reference" / name).write_bytes(content)


SALARY = xlsx_io.build([["Name", "Salary"], ["Ann", 100], ["Bo", 300]])
SWAPPED = xlsx_io.build([["Name", "Salary"], ["Ann", 300], ["Bo", 100]])


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks"
    seed(tasks, "1-1", subtask("Write the total into report.txt", [contain("data/reprot.txt", "42")]))
    seed(tasks, "1-2", subtask("swap the lowest and highest salary in the salary sheet",
                               [exact("./data/salery.xlsx", REF + "salery.xlsx")]),
         files={"salary.xlsx": SALARY}, reference={"salary.xlsx": SWAPPED})
    seed(tasks, "1-3", subtask("Put the names into list.docx",
                               [contain("data/list.docx", "Ann", doc_type="xlsx"),
                                contain("data/list.docx", "Bo", doc_type="doc")]))
    seed(tasks, "1-4", subtask("Say hello in readme.txt", [contain("data/readme.txt", "hello")]),
         files={"readme.txt": b"hello world\n"})
    seed(tasks, "1-5", subtask("Make out.txt", [{"function": "evaluate_file_exist", "args": {"file": "data/out.txt"}}]))
    seed(tasks, "1-6", subtask("Count into count.txt", [{"function": "evaluate_contain", "file": "data/count.txt",
                                                         "args": {"doc_type": "txt", "keywords": ["7"]}}]))
    seed(tasks, "1-7", '{"username": "Alice", "task": ')
    seed(tasks, "1-8", subtask("Write the number of 2014 orders into answer.txt", [contain("data/answer.txt", "4")]),
         files={"orders.txt": b"14 orders in 2014\n"})
    seed(tasks, "1-9", subtask("Convert draft.docx to PDF", [contain("data/draft.pdf", "x", doc_type="pdf")]),
         files={"draft.docx": docx_io.build("x")})
    seed(tasks, "1-10", subtask("Make target.txt from notes", [exact("data/out.txt", "data/target.txt", "txt")]),
         files={"target.txt": b"the answer\n"})
    return tmp_path


def codes(report, task: str) -> list[str]:
    return sorted(f.code for f in report.of(task))


def test_each_defect_is_found_with_its_file_field_and_severity(seeds: Path):
    report = lint_seeds(seeds)
    assert report.subtasks == 10 and report.loaded == 9
    assert codes(report, "1-1/0") == ["instruction_mismatch", "typo_file"]  # says report.txt, checks reprot.txt
    typo = [f for f in report.of("1-1/0") if f.code == "typo_file"]
    assert typo[0].severity == "error"
    assert typo[0].field == "evaluation[0].args.file" and typo[0].file.endswith("0.json")
    assert "report.txt" in typo[0].message and typo[0].repair["to"] == "data/report.txt"
    assert codes(report, "1-2/0") == ["missing_reference", "typo_file"]
    assert codes(report, "1-3/0") == ["doc_type_mismatch"]  # "doc" on a .docx reads as Word: no finding
    assert report.of("1-3/0")[0].repair == {"field": "evaluation[0].args.doc_type", "from": "xlsx", "to": "docx"}
    assert codes(report, "1-4/0") == ["passes_untouched"]
    assert codes(report, "1-5/0") == ["exists_only"]
    assert codes(report, "1-6/0") == ["misplaced_key"]
    assert [f.code for f in report.findings if f.file.endswith(str(Path("1-7", "subtasks", "0.json")))] == ["load"]
    weak = report.of("1-8/0")
    assert [f.code for f in weak] == ["weak_keyword"] and "14" in weak[0].message
    assert codes(report, "1-9/0") == []  # the same stem in another format is a known file
    assert "expected_in_testbed" in codes(report, "1-10/0")
    assert report.errors == sum(f.severity == "error" for f in report.findings) == 6


def test_a_repair_makes_the_reference_state_pass(seeds: Path, tmp_path: Path):
    report = lint_seeds(seeds)
    task = next(t for t in load_officebench(seeds).tasks if t.id == "1-2/0")
    evaluation, repairs = apply_repairs(task, report.of("1-2/0"))
    assert {(r["from"], r["to"]) for r in repairs} == {("./data/salery.xlsx", "./data/salary.xlsx"),
                                                       (REF + "salery.xlsx", REF + "salary.xlsx")}
    assert task.evaluation[0]["args"]["result_file"] == "./data/salery.xlsx"  # the task itself is left alone
    ws = task.copy_testbed(tmp_path / "state")
    assert not evaluate_criteria(ws, evaluation, task.reference).passed
    (ws.root / "data" / "salary.xlsx").write_bytes(SWAPPED)
    assert evaluate_criteria(ws, evaluation, task.reference).passed


def test_an_ambiguous_typo_gets_no_repair(tmp_path: Path):
    tasks = tmp_path / "tasks"
    seed(tasks, "1-1", subtask("Fill one of the sheets", [contain("data/cat.txt", "1")]),
         files={"bat.txt": b"9\n", "hat.txt": b"9\n"})
    [finding] = lint_seeds(tasks).findings
    assert finding.code == "typo_file" and finding.repair is None
    assert "bat.txt, hat.txt" in finding.message


def test_a_near_miss_file_check_is_no_typo_and_no_repair_makes_checks_contradict(tmp_path: Path):
    tasks = tmp_path / "tasks"
    exists = {"function": "evaluate_file_exist", "args": {"file": "data/memo_update_feb5.docx"}}
    not_exists = {"function": "evaluate_file_not_exist", "args": {"file": "data/memo_update_feb3.docx"}}
    seed(tasks, "1-1", subtask("Write the memo", [exists, not_exists, contain("data/memo_update_feb5.docx", "x",
                                                                               doc_type="docx")]))
    report = lint_seeds(tasks)
    assert "typo_file" not in codes(report, "1-1") and "contradiction" not in codes(report, "1-1")
    # a typo whose repair would name the file the task requires absent is left unrepaired
    seed(tasks, "1-2", subtask("Keep old.txt away", [{"function": "evaluate_file_not_exist", "args": {"file": "data/old.txt"}},
                                                     contain("data/olb.txt", "1")]), files={"old.txt": b"1\n"})
    report = lint_seeds(tasks)
    task = next(t for t in load_officebench(tmp_path).tasks if t.id == "1-2/0")
    typo = next(f for f in report.of("1-2/0") if f.code == "typo_file")
    assert typo.repair == {"field": "evaluation[1].args.file", "from": "data/olb.txt", "to": "data/old.txt"}
    evaluation, done = apply_repairs(task, report.of("1-2/0"))
    assert done == [] and evaluation[1]["args"]["file"] == "data/olb.txt"


def test_criteria_that_contradict_are_an_error(tmp_path: Path):
    tasks = tmp_path / "tasks"
    seed(tasks, "1-1", subtask("Make out.txt", [{"function": "evaluate_file_exist", "args": {"file": "data/out.txt"}},
                                                {"function": "evaluate_file_not_exist", "args": {"file": "./data/out.txt"}}]))
    [finding] = [f for f in lint_seeds(tasks).findings if f.code == "contradiction"]
    assert finding.severity == "error" and "requires data/out.txt" in finding.message


def test_broken_seeds_get_per_file_findings_not_a_crash(tmp_path: Path):
    tasks = tmp_path / "tasks"
    (tasks / "2-1" / "subtasks").mkdir(parents=True)  # no testbed/: an empty office
    write_json(tasks / "2-1" / "subtasks" / "0.json", subtask("x", [contain("data/a.txt", "1")]))
    seed(tasks, "2-2", subtask("Count the 2014 rows into answer.txt", [contain("data/answer.txt", "4")]),
         files={"rows.docx": b"PK\x03\x04 not a real document"})
    seed(tasks, "2-3", subtask("x", [contain("data/a.txt", "1")]))
    (tasks / "2-3" / "testbed" / "data" / "link.txt").symlink_to("/etc/hostname")
    report = lint_seeds(tasks)
    assert report.subtasks == 3 and report.loaded == 2
    assert codes(report, "2-1/0") == ["unknown_file"]
    assert codes(report, "2-2/0") == []  # an unreadable office file is skipped by the keyword check
    [load] = [f for f in report.findings if f.code == "load"]
    assert load.file.endswith("link.txt") and "symlink" in load.message and load.severity == "error"
    assert lint_seeds(tmp_path / "absent").findings[0].code == "load"


@pytest.mark.parametrize(("a", "b", "distance"), [("salery", "salary", 1), ("revenuse", "revenues", 2),
                                                   ("", "abc", 3), ("same", "same", 0)])
def test_edit_distance(a: str, b: str, distance: int):
    assert edit_distance(a, b) == distance == edit_distance(b, a)
