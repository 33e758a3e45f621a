"""The gates, each declared once with ``@gate``: what it needs, when it runs, where it is reported,
and which records get it.

A gate is a function ``check(task, run) -> GateResult``: ``task`` is the record typed
(``backends.task_record.TaskRecord``), ``run`` what the run has for it (``GateRun``: the office,
the replays, the earlier gates' findings). A gate reads the record; it never changes it. What a
gate finds that the record keeps (the trace's sources) it returns in ``GateResult.keep``, and the
writer stores it.

``needs`` says what a gate reads besides the record's own fields:

- ``dialogue``: the chat and its memory marks;
- ``testbed``: the office's files as they are (nothing copied);
- ``replays``: copies of the testbed that plans are replayed on (``office_env.replays``);
- ``oracle``: the oracle plan (a record without one skips the gate, or fails it: see the gate);
- ``reference``: the expected files of ``reference/``;
- ``agent``: an agent run on a copy of the testbed (``verifier.agent_gates``);
- ``llm``: a model (the judge panel; rule judges when there is none).

Which records get a gate is declared with it: ``splits`` (``neo``, ``plus``), ``backends``
(``offline``, ``llm``) and ``kind`` (``built-in``: every record of those; ``chosen``: only when
picked with ``--gates``). ``gates_for`` lists them.

``order`` is when the gate runs among those a record gets, lowest first, in three stages:

- below ``RECORD_STAGE`` (``schema``): a failure skips (fails) every later gate;
- from ``RECORD_STAGE`` (``memory_evidence``, ``specifics``, ``criteria_traced``): what reads the
  record (and the office as text) alone; in a build (``drop_early``) a failure here leaves every
  gate of the last stage not run (skipped), so a dropped task is spared its replays;
- from ``REPLAY_STAGE``: ``fails_untouched``, ``reference_passes``, ``oracle_passes``,
  ``baseline_fails``, ``findings_not_pastes`` (reads the oracle's observations and the trace, so
  after ``oracle_passes`` and ``criteria_traced``), ``answer_forms``, ``corrections_bite``,
  ``distractors_bite``, then ``solvability``, ``leakage`` and ``judges``.

``report`` is where the gate's result stands among a record's results (its ``provenance.gates``,
and so which failure a dropped task is named by); it is not the run order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from backends.task_record import TaskRecord
from office_env.replays import Replays
from office_env.untrusted import Tree
from verifier.gate_result import GateResult

NEEDS = frozenset({"dialogue", "testbed", "replays", "oracle", "reference", "agent", "llm"})
SPLITS = ("neo", "plus")
BACKENDS = ("offline", "llm")
Kind = Literal["built-in", "chosen"]
RECORD_STAGE, REPLAY_STAGE = 10, 20


@dataclass
class GateRun:
    """What one record's gates share besides the record: its office, what the run was given, and
    what earlier gates found that later ones read."""

    testbed: Path | None
    reference: Path | None = None
    trusted: bool = False  # a testbed this project wrote: replays may hard-link its files
    client: Any = None  # the judges' model (None: rule judges)
    agents: Any = None  # the solvability and leakage agents (``verifier.agent_gates.GateAgents``)
    now: datetime | None = None  # from the replay stage on
    work: Path | None = None  # from the replay stage on: the gates' scratch folder
    replays: Replays | None = None  # from the replay stage on: the one copy the plans share
    observations: list[str] = field(default_factory=list)  # what the oracle's calls returned
    trace: dict[str, str] = field(default_factory=dict)  # criteria_traced's sources (argument path -> source)
    testbed_scan: Tree | None = None  # criteria_traced's walk of the testbed, the replays' first look at it


def replay_inputs(run: GateRun) -> tuple[Path, datetime, Path, Replays]:
    """The testbed, moment, scratch folder and replays a gate of the replay stage reads:
    ``verifier.gates.run_gates`` sets them (its testbed is no option) before that stage runs."""
    return cast(Path, run.testbed), cast(datetime, run.now), cast(Path, run.work), cast(Replays, run.replays)


Check = Callable[[TaskRecord, GateRun], GateResult]


@dataclass(frozen=True)
class Gate:
    name: str
    needs: tuple[str, ...]
    order: int
    report: int
    check: Check
    splits: tuple[str, ...] = SPLITS
    backends: tuple[str, ...] = BACKENDS
    kind: Kind = "built-in"

    @property
    def stage(self) -> str:
        return "schema" if self.order < RECORD_STAGE else "record" if self.order < REPLAY_STAGE else "replay"

    def applies(self, split: str | None, backend: str | None, chosen: tuple[str, ...] = ()) -> bool:
        """Whether a record of ``split`` and ``backend`` gets this gate (``None``: a record too broken
        to say; every gate of the others applies) when ``chosen`` are the gates picked with ``--gates``."""
        return ((split is None or split in self.splits) and (backend is None or backend in self.backends)
                and (self.kind == "built-in" or self.name in chosen))


_REGISTRY: dict[str, Gate] = {}


def gate(name: str, *, needs: tuple[str, ...] = (), order: int, report: int, splits: tuple[str, ...] = SPLITS,
         backends: tuple[str, ...] = BACKENDS, kind: Kind = "built-in") -> Callable[[Check], Check]:
    """Register the decorated ``check(task, run) -> GateResult`` as gate ``name``; a need, split or
    backend outside the known ones, or a name, order or report place already taken, is a
    ``ValueError`` where it is declared."""
    for what, given, known in (("need", needs, NEEDS), ("split", splits, SPLITS), ("backend", backends, BACKENDS)):
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ValueError(f"gate {name!r}: unknown {what} {unknown[0]!r}; choose from {', '.join(sorted(known))}")

    def register(check: Check) -> Check:
        if name in _REGISTRY and _REGISTRY[name].check.__qualname__ != check.__qualname__:
            raise ValueError(f"gate {name!r} is declared twice")
        for what, value in (("order", order), ("report", report)):
            taken = next((g for g in _REGISTRY.values() if getattr(g, what) == value and g.name != name), None)
            if taken is not None:
                raise ValueError(f"gate {name!r}: {what} {value} is taken by {taken.name!r}")
        _REGISTRY[name] = Gate(name, tuple(needs), order, report, check, tuple(splits), tuple(backends), kind)
        return check

    return register


def registered() -> tuple[Gate, ...]:
    """Every declared gate, in the order they run (``verifier.gates`` declares them when imported)."""
    return tuple(sorted(_REGISTRY.values(), key=lambda g: g.order))


def gates_for(split: str | None, backend: str | None, chosen: tuple[str, ...] = ()) -> tuple[Gate, ...]:
    """The gates a record of ``split`` and ``backend`` gets, with ``chosen`` picked by ``--gates``,
    in the order their results are reported (``report``)."""
    return tuple(sorted((g for g in _REGISTRY.values() if g.applies(split, backend, chosen)), key=lambda g: g.report))


def chosen_gates() -> tuple[str, ...]:
    """The gates run only when picked with ``--gates`` (an agent's or the judges'), in report order."""
    return tuple(g.name for g in sorted(_REGISTRY.values(), key=lambda g: g.report) if g.kind == "chosen")


def in_order(names: tuple[str, ...]) -> tuple[Gate, ...]:
    """The gates ``names`` in the order they run; a name no gate is declared with is a ``KeyError``."""
    gates = {g.name: g for g in registered()}
    missing = [n for n in names if n not in gates]
    if missing:
        raise KeyError(f"no gate is declared as {missing[0]!r}")
    return tuple(sorted((gates[n] for n in names), key=lambda g: g.order))
