"""bench/mutants.py kills the misreadings the gates proved, and finds the wrong values a weakened
check lets through."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from orchestrator.build import build
from orchestrator.roles import BuildConfig

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "mutants.py"


def _bench():
    spec = importlib.util.spec_from_file_location("mutants_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_bench_kills_misreadings_and_finds_a_weakened_check(tmp_path: Path):
    bench = _bench()
    out = tmp_path / "ds"
    assert build(out, 4, BuildConfig(seed=9, days=2, utterances_per_day=14), workers=1).accepted == 4
    figures = bench.measure(out, tmp_path / "scratch")
    assert figures["tasks"] == 4 and figures["mutants"] > 0
    for kind in ("superseded", "near_miss"):  # the gates proved every misreading fails
        row = figures["by_kind"].get(kind)
        assert row is None or row["killed"] == row["mutants"], figures["by_kind"]
    assert figures["killed"] + figures["equivalent"] + figures["survivors"] == figures["mutants"]
    assert figures["survivors"] == 0, figures["survivor_list"]  # the target
    assert figures["by_kind"]["hedge"]["killed"] > 0
    # every other value of the same kind the chat says, another colleague, another file of the office
    for kind in ("same_kind", "person", "file"):
        assert figures["by_kind"][kind]["killed"] == figures["by_kind"][kind]["mutants"] > 0, figures["by_kind"]
    # a check that keeps only its first keyword, without the check of what the output states, lets
    # a wrong figure elsewhere in the output through
    weakened = None
    for path in sorted(out.glob("tasks/*/task.json")):
        record = json.loads(path.read_text())
        record["evaluation"] = [c for c in record["evaluation"] if c["function"] != "evaluate_stated_values"]
        for criterion in record["evaluation"]:
            keys = criterion["args"].get("body_keywords") or criterion["args"].get("keywords")
            if criterion["function"] in ("evaluate_email_sent", "evaluate_contain") and keys and len(keys) > 1:
                kept = [k for k in keys if not any(ch.isdigit() for ch in str(k))][:1] or [keys[0]]
                criterion["args"]["body_keywords" if "body_keywords" in criterion["args"] else "keywords"] = kept
                weakened = record["id"]
        if weakened:
            path.write_text(json.dumps(record))
            break
    assert weakened, "no task with a multi-keyword check"
    again = bench.measure(out, tmp_path / "scratch2")
    assert again["survivors"] > figures["survivors"], (figures["survivor_list"], again["survivor_list"])
    assert any(line.startswith(weakened) for line in again["survivor_list"])
    # without its stated values, a mail greeting or signed by another colleague passes too
    assert any(line.startswith(weakened) and ": person named" in line for line in again["survivor_list"]), \
        again["survivor_list"]
