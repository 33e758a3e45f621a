"""The gates, each declared once with ``@gate`` and run from here in one documented order.

A gate is a function of a ``GateRun`` (the record and what the run has for it) that returns a
``GateResult``. ``needs`` says what it reads besides the record's own fields:

- ``dialogue``: the chat and its memory marks;
- ``testbed``: the office's files as they are (nothing copied);
- ``replays``: copies of the testbed that plans are replayed on (``office_env.replays``);
- ``oracle``: the oracle plan (a record without one skips the gate, or fails it: see the gate);
- ``reference``: the expected files of ``reference/``;
- ``agent``: an agent run on a copy of the testbed (``verifier.agent_gates``);
- ``llm``: a model (the judge panel; rule judges when there is none).

``order`` is when the gate runs among those a record gets (``verifier.gates.gates_for``), lowest
first, in three stages:

- below ``RECORD_STAGE`` (``schema``): a failure skips (fails) every later gate;
- from ``RECORD_STAGE`` (``memory_evidence``, ``specifics``, ``criteria_traced``): what reads the
  record (and the office as text) alone; in a build (``drop_early``) a failure here leaves every
  gate of the last stage not run (skipped), so a dropped task is spared its replays;
- from ``REPLAY_STAGE``: ``fails_untouched``, ``reference_passes``, ``oracle_passes``,
  ``baseline_fails``, ``findings_not_pastes`` (reads the oracle's observations, so after
  ``oracle_passes``), ``answer_forms``, ``corrections_bite``, ``distractors_bite``, then
  ``solvability``, ``leakage`` and ``judges``.

The order the results are reported in (a record's ``provenance.gates``, and so which failure a
dropped task is named by) is ``gates_for``'s, not this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from office_env.replays import Replays
from verifier.gate_result import GateResult

NEEDS = frozenset({"dialogue", "testbed", "replays", "oracle", "reference", "agent", "llm"})
RECORD_STAGE, REPLAY_STAGE = 10, 20


@dataclass
class GateRun:
    """What one record's gates share: the record, its office, and what the run was given."""

    record: dict[str, Any]
    testbed: Path | None
    reference: Path | None = None
    trusted: bool = False  # a testbed this project wrote: replays may hard-link its files
    client: Any = None  # the judges' model (None: rule judges)
    agents: Any = None  # the solvability and leakage agents (``verifier.agent_gates.GateAgents``)
    now: datetime | None = None  # from the replay stage on
    work: Path | None = None  # from the replay stage on: the gates' scratch folder
    replays: Replays | None = None  # from the replay stage on: the one copy the plans share
    observations: list[str] = field(default_factory=list)  # what the oracle's calls returned
    task: Any = None  # the record typed (``backends.task_record.TaskRecord``) once the schema gate passed


def replay_inputs(run: GateRun) -> tuple[Path, datetime, Path, Replays]:
    """The testbed, moment, scratch folder and replays a gate of the replay stage reads:
    ``verifier.gates.run_gates`` sets them (its testbed is no option) before that stage runs."""
    return cast(Path, run.testbed), cast(datetime, run.now), cast(Path, run.work), cast(Replays, run.replays)


@dataclass(frozen=True)
class Gate:
    name: str
    needs: tuple[str, ...]
    order: int
    check: Callable[[GateRun], GateResult]

    @property
    def stage(self) -> str:
        return "schema" if self.order < RECORD_STAGE else "record" if self.order < REPLAY_STAGE else "replay"


_REGISTRY: dict[str, Gate] = {}


def gate(name: str, *, needs: tuple[str, ...] = (), order: int) -> Callable[[Callable[[GateRun], GateResult]],
                                                                          Callable[[GateRun], GateResult]]:
    """Register the decorated ``check(run) -> GateResult`` as gate ``name``; a need outside
    ``NEEDS``, or a name or order already taken, is a ``ValueError`` where it is declared."""
    unknown = sorted(set(needs) - NEEDS)
    if unknown:
        raise ValueError(f"gate {name!r}: unknown need {unknown[0]!r}; choose from {', '.join(sorted(NEEDS))}")

    def register(check: Callable[[GateRun], GateResult]) -> Callable[[GateRun], GateResult]:
        taken = next((g for g in _REGISTRY.values() if g.order == order and g.name != name), None)
        if name in _REGISTRY and _REGISTRY[name].check.__qualname__ != check.__qualname__:
            raise ValueError(f"gate {name!r} is declared twice")
        if taken is not None:
            raise ValueError(f"gate {name!r}: order {order} is taken by {taken.name!r}")
        _REGISTRY[name] = Gate(name, tuple(needs), order, check)
        return check

    return register


def registered() -> tuple[Gate, ...]:
    """Every declared gate, in the order they run (``verifier.gates`` declares them when imported)."""
    return tuple(sorted(_REGISTRY.values(), key=lambda g: g.order))


def in_order(names: tuple[str, ...]) -> tuple[Gate, ...]:
    """The gates ``names`` in the order they run; a name no gate is declared with is a ``KeyError``."""
    gates = {g.name: g for g in registered()}
    missing = [n for n in names if n not in gates]
    if missing:
        raise KeyError(f"no gate is declared as {missing[0]!r}")
    return tuple(sorted((gates[n] for n in names), key=lambda g: g.order))
