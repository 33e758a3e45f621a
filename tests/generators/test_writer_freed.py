"""A history's writer and its parts are freed by reference counting once the history is written:
none of them is left for the cycle collector (a build writes a history per task, and cyclic
garbage of that size makes the collector run again and again)."""

from __future__ import annotations

import gc
import weakref

import pytest

from generators.decoy_talk import calls_back
from generators.dialogue_offline import HistoryWriter, generate_dialogue, plan_dialogue
from generators.sibling_works import sibling_pieces
from tests.generators.test_dialogue import DRAFT, NOW, PEOPLE, gen
from tests.generators.test_sibling_works import OTHER, SIBLING, family

pytestmark = pytest.mark.slow


def _parts(writer: HistoryWriter) -> dict[str, object]:
    """The writer and the parts it holds that call back into it or hold each other."""
    return {"writer": writer, "small talk": writer.small, "other work": writer.work,
            "slot values": writer.work.values, "office clock": writer.work.clock, "decoys": writer.decoys,
            "work names": writer.names, "decks": writer.decks}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_written_history_leaves_no_cyclic_garbage(monkeypatch, seed):
    made: list[dict[str, weakref.ref[object]]] = []
    init = HistoryWriter.__init__

    def noted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append({name: weakref.ref(part) for name, part in _parts(self).items()})

    monkeypatch.setattr(HistoryWriter, "__init__", noted)
    gen(seed=seed)  # warm-up: the banks are read once, and kept
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        sessions = gen(seed=seed, days=8)
        assert sessions and any(t.thread.startswith("w") for s in sessions for t in s.turns)  # other work said
        alive = [name for name, ref in made[-1].items() if ref() is not None]
    finally:
        if was_enabled:
            gc.enable()
    assert alive == [], f"left for the cycle collector: {alive}"


def test_a_history_with_siblings_leaves_no_cyclic_garbage(monkeypatch):
    """Sibling works and jobs for later (the decoys' lines call back into the writer) told too."""
    refs: list[weakref.ref[HistoryWriter]] = []
    init = HistoryWriter.__init__

    def noted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        refs.append(weakref.ref(self))

    monkeypatch.setattr(HistoryWriter, "__init__", noted)
    task = family(DRAFT, "hand")
    siblings = sibling_pieces(task, [family(SIBLING, "b"), family(OTHER, "c")])
    plan, draft = plan_dialogue(task, seed=5, now=NOW, days=5, siblings=siblings)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        sessions = generate_dialogue(draft, seed=5, plan=plan, now=NOW, siblings=siblings, **PEOPLE)
        assert any(t.thread.startswith("w") for s in sessions for t in s.turns)
        assert refs and refs[-1]() is None, "the writer was left for the cycle collector"
    finally:
        if was_enabled:
            gc.enable()


def test_calls_back_calls_the_method_without_holding_its_object():
    class Owner:
        def __init__(self) -> None:
            self.seen: list[tuple[object, ...]] = []
            self.back = calls_back(self.note)  # held by the object itself: no cycle

        def note(self, *args: object, key: str = "") -> str:
            self.seen.append((*args, key))
            return f"{len(self.seen)}:{key}"

    owner = Owner()
    assert owner.back(1, 2, key="k") == "1:k" and owner.back() == "2:"
    assert owner.seen == [(1, 2, "k"), ("",)]
    gone = weakref.ref(owner)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del owner
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()
