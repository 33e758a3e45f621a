"""homer export --hf (a Hugging Face dataset folder) and --sft (oracle trajectories for fine-tuning)."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from backends.dataset_reader import task_now
from office_env import Workspace, default_registry, evaluate_criteria
from orchestrator.build import build
from orchestrator.cli import app
from orchestrator.roles import BuildConfig

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "data"
    build(out, 3, BuildConfig(seed=17))
    return out


def export(dataset: Path, *args: str) -> None:
    result = CliRunner().invoke(app, ["export", str(dataset), *args])
    assert result.exit_code == 0, result.output


def records(dataset: Path) -> dict[str, dict]:
    return {p.name: json.loads((p / "task.json").read_text()) for p in (dataset / "tasks").iterdir()}


def test_hf_rows_carry_each_task_and_its_office_and_the_export_is_reproducible(dataset: Path, tmp_path: Path):
    export(dataset, "--hf", str(tmp_path / "a"))
    export(dataset, "--hf", str(tmp_path / "b"))
    shards = sorted((tmp_path / "a" / "data").glob("test-*.jsonl"))
    assert shards and all(s.read_bytes() == (tmp_path / "b" / "data" / s.name).read_bytes() for s in shards)
    rows = [json.loads(line) for s in shards for line in s.read_text().splitlines()]
    by_id = records(dataset)
    assert sorted(r["id"] for r in rows) == sorted(by_id)
    for row in rows:
        record = by_id[row["id"]]
        assert json.loads(row["dialogue"]) == record["dialogue"] and json.loads(row["evaluation"]) == record["evaluation"]
        assert row["intent"] == record["intent"] and row["utterances"] == sum(len(s["turns"]) for s in record["dialogue"])
        office = zipfile.ZipFile(io.BytesIO(base64.b64decode(row["testbed_zip"])))
        testbed = dataset / "tasks" / row["id"] / "testbed"
        on_disk = sorted(p.relative_to(testbed).as_posix() for p in testbed.rglob("*") if p.is_file())
        assert sorted(office.namelist()) == on_disk == sorted(row["testbed_files"])
        assert all(office.read(name) == (testbed / name).read_bytes() for name in on_disk)
    card = (tmp_path / "a" / "README.md").read_text()
    header = card.split("---\n")[1]
    yaml = pytest.importorskip("yaml")
    meta = yaml.safe_load(header)
    assert meta["configs"][0]["data_files"][0]["path"] == "data/test-*.jsonl" and "load_dataset" in card


def test_hf_folder_loads_with_datasets(dataset: Path, tmp_path: Path):
    datasets = pytest.importorskip("datasets", reason="the datasets package is not installed")
    export(dataset, "--hf", str(tmp_path / "hf"))
    loaded = datasets.load_dataset(str(tmp_path / "hf"), split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == len(records(dataset)) and {"intent", "dialogue", "testbed_zip"} <= set(loaded.column_names)
    assert sorted(loaded["id"]) == sorted(records(dataset))


def test_sft_trajectories_validate_against_the_tools_and_solve_the_task(dataset: Path, tmp_path: Path):
    export(dataset, "--sft", str(tmp_path / "sft"))
    lines = [json.loads(line) for line in (tmp_path / "sft" / "train.jsonl").read_text().splitlines()]
    by_id = records(dataset)
    assert sorted(r["id"] for r in lines) == sorted(by_id)
    for example in lines:
        record, messages = by_id[example["id"]], example["messages"]
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in example["tools"]}
        assert [m["role"] for m in messages[:2]] == ["system", "user"] and messages[-1]["role"] == "assistant"
        assert record["intent"] in messages[1]["content"]
        assert record["dialogue"][0]["turns"][0]["text"][:40] in messages[1]["content"]  # the history is in context
        calls = []
        for ask, answer in zip(messages[2:-1:2], messages[3:-1:2]):
            (call,) = ask["tool_calls"]
            args = json.loads(call["function"]["arguments"])
            assert not list(Draft202012Validator(schemas[call["function"]["name"]]).iter_errors(args))
            assert answer == {"role": "tool", "tool_call_id": call["id"], "content": answer["content"]}
            calls.append((call["function"]["name"], args))
        # the calls as written, replayed on a fresh copy of the office, pass the task's criteria
        testbed = dataset / "tasks" / example["id"] / "testbed"
        ws = Workspace(testbed, now=task_now(record)).copy_to(tmp_path / f"replay-{example['id']}")
        assert all(r.ok for r in default_registry().run(ws, calls))
        assert evaluate_criteria(ws, record["evaluation"], None).passed


def test_sft_with_retrieval_and_a_task_without_a_plan(dataset: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    first = sorted(records(copy))[0]
    path = copy / "tasks" / first / "task.json"
    record = json.loads(path.read_text())
    record["oracle"] = []
    path.write_text(json.dumps(record))
    result = CliRunner().invoke(app, ["export", str(copy), "--sft", str(tmp_path / "rag"), "--sft-mode", "rag",
                                      "--sft-top-k", "1"])
    assert result.exit_code == 0 and f"left out {first}: no oracle plan" in result.output
    lines = [json.loads(line) for line in (tmp_path / "rag" / "train.jsonl").read_text().splitlines()]
    assert len(lines) == len(records(copy)) - 1 and all(line["metadata"]["context"] == "rag" for line in lines)


def test_export_targets_are_checked(dataset: Path, tmp_path: Path):
    runner = CliRunner()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    taken = runner.invoke(app, ["export", str(dataset), "--hf", str(tmp_path / "full")])
    assert taken.exit_code == 2 and "not empty" in taken.output and (tmp_path / "full" / "x").read_text() == "keep me"
    assert runner.invoke(app, ["export", str(dataset)]).exit_code == 2
    both = runner.invoke(app, ["export", str(dataset), "--hf", str(tmp_path / "a"), "--sft", str(tmp_path / "b")])
    assert both.exit_code == 2 and "choose one export target" in both.output
    mode = runner.invoke(app, ["export", str(dataset), "--sft", str(tmp_path / "c"), "--sft-mode", "vibes"])
    assert mode.exit_code == 2 and "--sft-mode" in mode.output


def test_a_task_that_cannot_be_exported_is_named_and_the_rest_go_on(dataset: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    first = sorted(records(copy))[0]
    shutil.rmtree(copy / "tasks" / first / "testbed")
    sft = CliRunner().invoke(app, ["export", str(copy), "--sft", str(tmp_path / "sft")])
    assert sft.exit_code == 0 and f"left out {first}" in sft.output
    assert len((tmp_path / "sft" / "train.jsonl").read_text().splitlines()) == len(records(copy)) - 1
    hf = CliRunner().invoke(app, ["export", str(copy), "--hf", str(tmp_path / "hf")])
    assert hf.exit_code == 1 and f"skipped {first}: no testbed/" in hf.output


def test_sft_leaves_out_a_plan_with_a_failing_step_naming_the_step(dataset: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    first = min(records(copy))
    path = copy / "tasks" / first / "task.json"
    record = json.loads(path.read_text())
    record["oracle"].insert(1, {"tool": "word_read_file", "args": {"file_path": "data/no-such-file.docx"}})
    path.write_text(json.dumps(record))
    result = CliRunner().invoke(app, ["export", str(copy), "--sft", str(tmp_path / "sft")])
    assert result.exit_code == 0
    assert f"left out {first}: step 2 (word_read_file) fails: " in result.output
    assert "no-such-file.docx" in result.output
    assert len((tmp_path / "sft" / "train.jsonl").read_text().splitlines()) == len(records(copy)) - 1


@pytest.mark.parametrize("target", ["--officebench", "--hf"])
def test_a_disk_that_fills_under_an_export_is_one_line_and_leaves_no_half_export(dataset: Path, tmp_path: Path,
                                                                                monkeypatch, target: str):
    import errno
    import os

    import orchestrator.hf_export
    import orchestrator.officebench_export
    from tests.support.homer_cli import homer_here

    calls = []
    module, name = ((orchestrator.officebench_export, "write_task_folder") if target == "--officebench"
                    else (orchestrator.hf_export, "card"))
    real = getattr(module, name)

    def fills(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2 or name == "card":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, fills)
    out = tmp_path / "export"
    proc = homer_here("export", dataset, target, out, "-q")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: no space left on the device writing into {out} (") and "export again" in line
    assert "more needed" in line  # about the dataset's tasks' size
    assert len(calls) == (2 if name != "card" else 1)  # the export stopped at the first write without space
    assert not out.exists() or not any(out.iterdir())  # nothing half-written is left to block the next try
    monkeypatch.setattr(module, name, real)
    assert homer_here("export", dataset, target, out, "-q").returncode == 0
