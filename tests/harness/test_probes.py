"""Memory probes (harness.probes): answers computed by rules, plausible wrong options, about half
answerable; homer probe with the oracle, none and llm agents, and the split of an eval run's failures."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backends.task_record import RecordError, parse_record
from harness.probes import NONE_OF_THESE, cue_pool, option_text, probes_for
from orchestrator.build import build
from orchestrator.cli import app
from backends.fake_llm import FakeLLMServer
from orchestrator.fake_llm.offline_responder import offline_responder
from orchestrator.roles import BuildConfig

from tests.support.records import task_record_sample, task_records

pytestmark = pytest.mark.slow

def piece(**fields) -> dict:
    return {"kind": "fact", "text": "said", **fields}


RAW = {
    **task_record_sample("t1"), "now": {"date": "2024-11-13", "weekday": "Wednesday", "time": "09:00"},
    "memory": [
        piece(id="m1", value="Roadmap planning", cue="meeting_title", about="the new meeting",
              distractors=[{"value": "Client prep", "text": "another meeting"}]),
        piece(id="m2", value="shared_summary_nov90.pdf", cue="output_file", about="the PDF copy",
              superseded=["shared_summary_nov5.pdf"]),
        piece(id="m3", value="Friday November 15", cue="meeting_day", about="the review"),
        piece(id="m4", value="Dana Fitzgerald", cue="recipient", about="the approval news"),
    ],
}
RECORD = parse_record(RAW)


def test_answers_are_computed_by_rule():
    probes = {(p.piece, p.dynamic): p for p in probes_for(RECORD)}
    assert set(probes) == {("m1", "near_miss"), ("m2", "current"), ("m2", "corrected"), ("m3", "final"),
                           ("m3", "relative_time"), ("m4", "final")}
    current = probes[("m2", "current")]
    assert option_text(current, current.answer) == "shared_summary_nov90.pdf" and current.answerable
    assert set(current.options) >= {"shared_summary_nov5.pdf", "shared_summary_nov90.pdf"}
    for key, right in ((("m2", "corrected"), "shared_summary_nov5.pdf"), (("m1", "near_miss"), "Roadmap planning"),
                       (("m4", "final"), "Dana Fitzgerald")):
        probe = probes[key]
        picked = option_text(probe, probe.answer)
        assert picked == (right if probe.answerable else NONE_OF_THESE)
        assert (right in probe.options) == probe.answerable  # unanswerable: the right value is left out
    near = probes[("m1", "near_miss")]
    assert "Client prep" in near.options  # the look-alike itself is offered
    timing = probes[("m3", "relative_time")]
    reference = datetime.strptime(timing.question.rsplit(" ", 1)[1].rstrip("?"), "%Y-%m-%d").date()
    when = datetime(2024, 11, 15).date()
    expected = "before that day" if when < reference else "on that day" if when == reference else "after that day"
    assert option_text(timing, timing.answer) == expected
    assert probes_for(RECORD) == probes_for(RECORD)  # the same record, the same questions


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probes") / "data"
    build(out, 6, BuildConfig(seed=12))
    return out


def test_about_half_are_answerable_and_wrong_options_are_of_the_same_kind(dataset: Path):
    recs = [parse_record(r) for r in task_records(dataset)]
    pool = cue_pool(recs)
    probes = [p for r in recs for p in probes_for(r, pool)]
    values = [p for p in probes if p.dynamic in ("final", "near_miss", "corrected")]
    share = sum(p.answerable for p in values) / len(values)
    assert len(values) >= 10 and 0.3 <= share <= 0.7
    by_piece = {(r.id, m.id): m for r in recs for m in r.memory}
    for probe in values:
        same_kind = set(pool[str(by_piece[(probe.task, probe.piece)].cue)])
        offered = [o for o in probe.options if o != NONE_OF_THESE]
        if len(same_kind) >= 4:
            assert all(o in same_kind for o in offered), (probe.question, probe.options)


def run(dataset: Path, out: Path, *args: str):
    return CliRunner().invoke(app, ["probe", str(dataset), "--out", str(out), *args])


def test_oracle_none_and_a_model_through_the_endpoint(dataset: Path, tmp_path: Path):
    oracle = run(dataset, tmp_path / "oracle", "--agent", "oracle")
    assert oracle.exit_code == 0, oracle.output
    summary = json.loads((tmp_path / "oracle" / "probe.json").read_text())
    assert summary["by_dynamic"]["all"]["with_history"] == 1.0 and summary["questions"] > 0
    page = (tmp_path / "oracle" / "probe-report.html").read_text()
    assert 'id="probe-accuracy"' in page and "data:image/png;base64," in page
    none = run(dataset, tmp_path / "none", "--agent", "none")
    assert none.exit_code == 0
    rows = [json.loads(line) for line in (tmp_path / "none" / "probes.jsonl").read_text().splitlines()]
    # always the first option: right exactly where the answer is A, which is about chance
    assert all(r["with_history_correct"] == (r["answer"] == "A") for r in rows)
    assert sum(r["answer"] == "A" for r in rows) < 0.5 * len(rows)
    evaluated = CliRunner().invoke(app, ["eval", str(dataset), "--agent", "none", "--mode", "long-context",
                                         "--out", str(tmp_path / "eval"), "--quiet"])
    assert evaluated.exit_code == 0
    with FakeLLMServer(offline_responder) as server:
        model = run(dataset, tmp_path / "llm", "--agent", "llm", "--base-url", server.url, "--model", "m",
                    "--mode", "rag", "--top-k", "2", "--eval", str(tmp_path / "eval"))
        asked = [r for r in server.chat_requests()
                 if r.body["messages"][0]["content"].startswith("You answer questions about what a user told")]
    assert model.exit_code == 0, model.output
    result = json.loads((tmp_path / "llm" / "probe.json").read_text())
    assert len(asked) == 2 * result["questions"]  # each question closed-book and with the history
    assert sum("(no history given)" in r.body["messages"][1]["content"] for r in asked) == result["questions"]
    prompts = [r.body["messages"][1]["content"] for r in asked]
    informed = [text for text in prompts if "(no history given)" not in text]
    assert all("\nHistory:\n" in text and "Day " in text.split("\nHistory:\n", 1)[1] for text in informed)
    split = result["eval_split"]
    assert sum(split.values()) == len(task_records(dataset)) and split["passed"] == 0
    assert "remembered every probed detail but did not act" in (tmp_path / "llm" / "probe-report.md").read_text()


def test_per_task_asks_the_first_questions_of_each_task_only(dataset: Path, tmp_path: Path):
    whole = run(dataset, tmp_path / "all", "--agent", "oracle")
    some = run(dataset, tmp_path / "some", "--agent", "oracle", "--per-task", "2")
    assert whole.exit_code == some.exit_code == 0, some.output
    rows = [json.loads(line) for line in (tmp_path / "all" / "probes.jsonl").read_text().splitlines()]
    kept = [json.loads(line) for line in (tmp_path / "some" / "probes.jsonl").read_text().splitlines()]
    first = [r for task in dict.fromkeys(r["task"] for r in rows) for r in [x for x in rows if x["task"] == task][:2]]
    assert kept == first and len(kept) < len(rows)
    assert json.loads((tmp_path / "some" / "probe.json").read_text())["per_task"] == 2


def test_bad_input(dataset: Path, tmp_path: Path):
    assert run(dataset, tmp_path / "x", "--agent", "wizard").exit_code == 2
    assert run(dataset, tmp_path / "z", "--agent", "oracle", "--per-task", "0").exit_code == 2
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    assert run(dataset, tmp_path / "full", "--agent", "oracle").exit_code == 2
    other = tmp_path / "other"
    build(other, 1, BuildConfig(seed=2))
    CliRunner().invoke(app, ["eval", str(other), "--agent", "none", "--mode", "long-context",
                             "--out", str(tmp_path / "other-eval"), "--quiet"])
    refused = run(dataset, tmp_path / "y", "--agent", "oracle", "--eval", str(tmp_path / "other-eval"))
    assert refused.exit_code == 2 and "other dataset contents: task neo-00000" in refused.output


def test_a_task_that_cannot_be_read_is_named_with_its_file_and_field_and_the_rest_are_probed(dataset: Path,
                                                                                             tmp_path: Path):
    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    bad = sorted(copy.glob("tasks/*/task.json"))[0]
    record = json.loads(bad.read_text())
    record["now"]["date"] = "2024-02-30"
    bad.write_text(json.dumps(record))
    result = run(copy, tmp_path / "out", "--agent", "oracle", "--quiet")
    assert result.exit_code == 0, result.output
    assert f"skipped {record['id']}: cannot be read: {bad}: now.date: '2024-02-30'" in result.output
    assert "over 5 task(s), 1 task(s) skipped" in result.output


def test_sibling_pieces_and_malformed_memory():
    twins = parse_record({**RAW, "id": "t2", "memory": [
        piece(id="m1", value="meeting rooms", cue="sheet_row", about="the policy sheet"),
        piece(id="m2", value="security badges", cue="sheet_row", about="the policy sheet"),
        piece(id="m3", value="Dana", cue="recipient", about="the memo")]})
    probes = probes_for(twins)
    assert {p.piece for p in probes} == {"m3"}  # "which row was settled" has two answers: not asked
    assert all(NONE_OF_THESE in p.options or p.dynamic == "relative_time" for p in probes)
    assert probes_for(parse_record({**RAW, "memory": []})) == []
    assert cue_pool([parse_record({**RAW, "memory": [piece(id="m1", value="1", cue="n")]})]) == {"n": ["1"]}
    with pytest.raises(RecordError) as refused:  # malformed memory never reaches the probes: the reader refuses it
        parse_record({**RAW, "memory": [piece(id="m1", value="1", cue="n", superseded=5)]})
    assert refused.value.field.startswith("memory.0.superseded")
