"""``homer eval`` on a Hugging Face export (``homer export --hf``): the export's rows rebuilt as the
dataset they came from (same records, same files, same fingerprint and scores), a stranger's rows
refused one by one."""

from __future__ import annotations

import base64
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from backends.dataset_reader import dataset_identity
from backends.hf_folder import is_hf_export, rebuild_dataset
from harness.context import ContextConfig
from harness.runner import EvalConfig, EvalError, evaluate
from orchestrator.build import build
from orchestrator.hf_export import export_hf
from orchestrator.roles import BuildConfig
from tests.support.homer_cli import homer_here

pytestmark = pytest.mark.slow  # builds a dataset and runs evals


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hf-eval") / "ds"
    assert build(out, 3, BuildConfig(seed=21, days=2, utterances_per_day=10), workers=1).accepted == 3
    return out


@pytest.fixture(scope="module")
def exported(dataset, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hf-eval") / "hf"
    assert export_hf(dataset, out).written == 3
    return out


def oracle(dataset: Path, out: Path, **options):
    return evaluate(dataset, out, EvalConfig(agent="oracle", context=ContextConfig(mode="long-context"), **options))


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_the_export_is_rebuilt_into_the_very_dataset(dataset, exported, tmp_path):
    assert is_hf_export(exported) and not is_hf_export(dataset)
    assert rebuild_dataset(exported, tmp_path / "back").skipped == []
    source, back = dataset_identity(dataset), dataset_identity(tmp_path / "back")
    assert back["task_digests"] == source["task_digests"]  # every record and every file as it was
    for task in (dataset / "tasks").iterdir():
        assert json.loads((tmp_path / "back" / "tasks" / task.name / "task.json").read_text()) == \
            json.loads((task / "task.json").read_text())


def test_eval_on_the_export_scores_as_on_the_dataset(dataset, exported, tmp_path):
    direct = oracle(dataset, tmp_path / "direct")
    proc = homer_here("eval", exported, "--agent", "oracle", "--mode", "long-context", "--out", tmp_path / "back", "-q")
    assert proc.returncode == 0, proc.stderr
    run = json.loads((tmp_path / "back" / "run.json").read_text())
    first = json.loads((tmp_path / "direct" / "run.json").read_text())
    assert run["dataset_fingerprint"] == first["dataset_fingerprint"] and run["export"] == str(exported.resolve())
    assert direct.pass_rate == 1.0 and run["metrics"]["groups"]["overall"]["pass_rate"] == 1.0
    assert [(r["id"], r["passed"], r["steps"]) for r in rows(tmp_path / "back")] == \
        [(r["id"], r["passed"], r["steps"]) for r in rows(tmp_path / "direct")]
    compared = homer_here("compare", tmp_path / "direct", tmp_path / "back", "--json")
    assert compared.returncode == 0, compared.stderr  # the same dataset by content: the runs pair up
    resumed = homer_here("eval", exported, "--agent", "oracle", "--mode", "long-context", "--out", tmp_path / "back",
                         "--resume", "-q")
    assert resumed.returncode == 0, resumed.stderr
    viewed = homer_here("view", tmp_path / "back", "--json")
    assert viewed.returncode == 0 and len(json.loads(viewed.stdout)["tasks"]) == 3, viewed.stderr
    one = homer_here("view", tmp_path / "back", "--json", "--task", direct.rows[0]["id"])
    assert json.loads(one.stdout)["tasks"][0]["oracle"]  # the plan, read from the tasks the run kept
    refused = homer_here("verify", exported)
    assert refused.returncode == 2 and "a Hugging Face export" in refused.stderr and "homer eval" in refused.stderr


def _zip(members: dict[str, bytes]) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def test_a_strangers_rows_are_skipped_one_by_one_naming_the_row(exported, tmp_path):
    hf = Path(shutil.copytree(exported, tmp_path / "hostile"))
    shard = next((hf / "data").glob("*.jsonl"))
    good = [json.loads(line) for line in shard.read_text().splitlines()]
    escape = dict(good[0], id="escape", testbed_zip=_zip({"../../outside.txt": b"x"}))
    absolute = dict(good[0], id="absolute", testbed_zip=_zip({"/etc/passwd": b"x"}))
    odd_id = dict(good[0], id="../up")
    twice = dict(good[1])
    bad_rest = dict(good[0], id="rest", record_rest="[1, 2]")
    lines = [json.dumps(r) for r in (good[0], escape, absolute, odd_id, good[1], twice, bad_rest)] + ["{not json"]
    shard.write_text("\n".join(lines) + "\n")
    rebuilt = rebuild_dataset(hf, tmp_path / "back")
    reasons = dict(rebuilt.skipped)
    assert rebuilt.written == 2 and sorted(p.name for p in (tmp_path / "back" / "tasks").iterdir()) == \
        sorted([good[0]["id"], good[1]["id"]])
    where = f"of data/{shard.name}"
    assert "is not a plain relative path" in reasons[f"row 2 {where}"]
    assert "is not a plain relative path" in reasons[f"row 3 {where}"]
    assert "is not a task id" in reasons[f"row 4 {where}"] and "is given twice" in reasons[f"row 6 {where}"]
    assert "record_rest: not a JSON object" in reasons[f"row 7 {where}"]
    assert "invalid JSON" in reasons[f"row 8 {where}"]
    assert not (tmp_path / "outside.txt").exists() and not list(tmp_path.glob("**/outside.txt"))
    run = oracle(hf, tmp_path / "run")  # the readable rows are evaluated, the others listed as skipped
    assert len(run.rows) == 2 and len(run.skipped) == 6
    assert any(s["id"] == f"row 2 {where}" for s in run.skipped)


def test_an_export_with_no_readable_row_is_refused_and_writes_nothing(exported, tmp_path):
    hf = Path(shutil.copytree(exported, tmp_path / "empty"))
    next((hf / "data").glob("*.jsonl")).write_text("{}\n")
    with pytest.raises(EvalError, match="no task could be read from the export"):
        oracle(hf, tmp_path / "run")
    assert not (tmp_path / "run").exists()
