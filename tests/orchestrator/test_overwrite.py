"""Every command that writes a folder: an earlier output there is continued with --resume (where
the command has it) or replaced with --overwrite, and otherwise refused with one line; a folder
holding anything else is never emptied; a link is never written through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.build import build
from orchestrator.cli import app
from orchestrator.roles import BuildConfig

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ow") / "ds"
    build(out, 2, BuildConfig(seed=3, days=2, utterances_per_day=12))
    return out


def _run(*args: str):
    return CliRunner().invoke(app, [*map(str, args)])


@pytest.mark.parametrize("command, marker", [
    (["export", "{ds}", "--officebench", "{out}"], "export.json"),
    (["export", "{ds}", "--hf", "{out}"], "README.md"),
    (["export", "{ds}", "--sft", "{out}"], "train.jsonl"),
    (["probe", "{ds}", "--agent", "oracle", "--out", "{out}"], "probe.json"),
    (["eval", "{ds}", "--agent", "none", "--mode", "rag", "--out", "{out}"], "run.json"),
    (["build", "--n", "1", "--seed", "4", "--days", "2", "--utterances", "12", "--out", "{out}"], "build.json"),
])
def test_an_earlier_output_is_refused_unless_overwrite_and_anything_else_is_kept(dataset, tmp_path, command, marker):
    out = tmp_path / "out"
    args = [part.format(ds=dataset, out=out) for part in command]
    first = _run(*args)
    assert first.exit_code in (0, 1), first.output
    assert (out / marker).exists()
    (out / marker).touch()
    stamp = (out / marker).stat().st_mtime_ns
    again = _run(*args)
    assert again.exit_code == 2 and "--overwrite" in again.output, again.output
    assert (out / marker).stat().st_mtime_ns == stamp  # nothing replaced without a word
    replaced = _run(*args, "--overwrite")
    assert replaced.exit_code in (0, 1), replaced.output
    assert (out / marker).exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    refused = _run(*[part.format(ds=dataset, out=mine) for part in command], "--overwrite")
    assert refused.exit_code == 2 and (mine / "notes.txt").read_text() == "keep me"


def test_horizons_and_resume_follow_the_same_rule(dataset, tmp_path):
    out = tmp_path / "sweep"
    args = ["eval", dataset, "--agent", "none", "--mode", "rag", "--horizons", "2,3", "--out", out]
    assert _run(*args).exit_code == 0
    again = _run(*args)
    assert again.exit_code == 2 and "holds an earlier horizon sweep" in again.output
    assert _run(*args, "--overwrite").exit_code == 0
    assert json.loads((out / "horizon.json").read_text())["horizons"] == [2, 3]
    both = _run("eval", dataset, "--agent", "none", "--mode", "rag", "--out", tmp_path / "r", "--resume",
                "--overwrite")
    assert both.exit_code == 2 and "exclude each other" in both.output
