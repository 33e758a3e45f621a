"""The gate registry: every gate declared once, with its needs, and run in one documented order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import verifier.gates  # noqa: F401  (declares the gates)
from verifier import gate_registry
from tests.support.gates import CHOSEN_GATES, NEO_GATES, PLUS_GATES
from verifier.gate_registry import NEEDS, RECORD_STAGE, REPLAY_STAGE, gate, gates_for, in_order, registered
from verifier.gates import parse_gates

DOCS = Path(__file__).resolve().parents[2] / "docs" / "concepts.md"


def test_every_gate_a_record_gets_is_declared_and_every_declared_gate_is_used():
    names = [g.name for g in registered()]
    assert len(names) == len(set(names))
    assert set(names) == set(NEO_GATES) | set(PLUS_GATES) | set(CHOSEN_GATES)
    assert all(set(g.needs) <= NEEDS for g in registered())


def test_which_gates_a_record_gets_is_declared_with_each_gate():
    """Split, backend and kind pick a record's gates; they are reported in their declared place."""
    names = lambda gates: tuple(g.name for g in gates)  # noqa: E731
    for backend in ("offline", "llm"):
        assert names(gates_for("neo", backend)) == NEO_GATES
        assert names(gates_for("plus", backend)) == PLUS_GATES
        assert names(gates_for("neo", backend, CHOSEN_GATES)) == NEO_GATES + CHOSEN_GATES
    assert names(gates_for("plus", "offline", ("judges",))) == PLUS_GATES + ("judges",)
    assert parse_gates("all") == CHOSEN_GATES and parse_gates("judges, schema") == ("judges",)
    with pytest.raises(ValueError, match="unknown gate 'probe'"):
        parse_gates("probe")


def test_the_run_order_has_its_stages():
    gates = {g.name: g for g in registered()}
    assert registered()[0].name == "schema" and gates["schema"].stage == "schema"
    assert {n for n, g in gates.items() if g.stage == "record"} == {"memory_evidence", "specifics", "criteria_traced"}
    assert gates["oracle_passes"].order < gates["findings_not_pastes"].order  # it reads the oracle's observations
    assert all(g.order >= REPLAY_STAGE for g in registered() if {"replays", "agent", "llm"} & set(g.needs))
    assert [g.name for g in in_order(NEO_GATES)][:4] == ["schema", "memory_evidence", "criteria_traced", "fails_untouched"]


def test_the_docs_table_is_the_registry():
    rows = re.findall(r"^\| (\d+) \| `(\w+)`[^|]*\| ([^|]+) \| (\w+) \|$", DOCS.read_text(encoding="utf-8"),
                      re.MULTILINE)
    documented = [(int(order), name, tuple(n.strip() for n in needs.split(",")) if needs.strip() != "the record"
                   else (), stage) for order, name, needs, stage in rows]
    assert documented == [(g.order, g.name, g.needs, g.stage) for g in registered()]


def test_a_gate_declared_wrong_is_refused_where_it_is_declared(monkeypatch):
    monkeypatch.setattr(gate_registry, "_REGISTRY", dict(gate_registry._REGISTRY))
    with pytest.raises(ValueError, match="unknown need 'internet'"):
        gate("probe", needs=("internet",), order=99, report=99)
    with pytest.raises(ValueError, match="unknown split 'lite'"):
        gate("probe", order=99, report=99, splits=("lite",))
    with pytest.raises(ValueError, match="order 0 is taken by 'schema'"):
        gate("probe", order=0, report=99)(lambda task, run: None)
    with pytest.raises(ValueError, match="report 0 is taken by 'schema'"):
        gate("probe", order=99, report=0)(lambda task, run: None)
    with pytest.raises(ValueError, match="'schema' is declared twice"):
        gate("schema", order=RECORD_STAGE + 9, report=99)(lambda task, run: None)
    with pytest.raises(KeyError, match="no gate is declared as 'probe'"):
        in_order(("schema", "probe"))
