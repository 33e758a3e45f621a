"""The gate registry: every gate declared once, with its needs, and run in one documented order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import verifier.gates  # noqa: F401  (declares the gates)
from verifier import gate_registry
from verifier.gate_registry import NEEDS, RECORD_STAGE, REPLAY_STAGE, gate, in_order, registered
from verifier.gates import AGENT_GATES, GATES, PLUS_GATES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "concepts.md"


def test_every_gate_a_record_gets_is_declared_and_every_declared_gate_is_used():
    names = [g.name for g in registered()]
    assert len(names) == len(set(names))
    assert set(names) == set(GATES) | set(PLUS_GATES) | set(AGENT_GATES)
    assert all(set(g.needs) <= NEEDS for g in registered())


def test_the_run_order_has_its_stages():
    gates = {g.name: g for g in registered()}
    assert registered()[0].name == "schema" and gates["schema"].stage == "schema"
    assert {n for n, g in gates.items() if g.stage == "record"} == {"memory_evidence", "specifics", "criteria_traced"}
    assert gates["oracle_passes"].order < gates["findings_not_pastes"].order  # it reads the oracle's observations
    assert all(g.order >= REPLAY_STAGE for g in registered() if {"replays", "agent", "llm"} & set(g.needs))
    assert [g.name for g in in_order(GATES)][:4] == ["schema", "memory_evidence", "criteria_traced", "fails_untouched"]


def test_the_docs_table_is_the_registry():
    rows = re.findall(r"^\| (\d+) \| `(\w+)`[^|]*\| ([^|]+) \| (\w+) \|$", DOCS.read_text(encoding="utf-8"),
                      re.MULTILINE)
    documented = [(int(order), name, tuple(n.strip() for n in needs.split(",")) if needs.strip() != "the record"
                   else (), stage) for order, name, needs, stage in rows]
    assert documented == [(g.order, g.name, g.needs, g.stage) for g in registered()]


def test_a_gate_declared_wrong_is_refused_where_it_is_declared(monkeypatch):
    monkeypatch.setattr(gate_registry, "_REGISTRY", dict(gate_registry._REGISTRY))
    with pytest.raises(ValueError, match="unknown need 'internet'"):
        gate("probe", needs=("internet",), order=99)
    with pytest.raises(ValueError, match="order 0 is taken by 'schema'"):
        gate("probe", order=0)(lambda run: None)
    with pytest.raises(ValueError, match="'schema' is declared twice"):
        gate("schema", order=RECORD_STAGE + 9)(lambda run: None)
    with pytest.raises(KeyError, match="no gate is declared as 'probe'"):
        in_order(("schema", "probe"))
