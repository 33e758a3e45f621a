"""A circuit breaker for batches on the llm backend: an endpoint that keeps failing stops the run.

When the endpoint itself fails (unreachable, timing out, 429 or 5xx after every retry), an attempt
ends as an ``error`` outcome (``error: endpoint: ...``), never as a drop: ``--resume`` runs it
again. After ``threshold`` such outcomes in a row the batch stops handing out attempts and waits:
the endpoint is asked again after each pause of ``PAUSES`` (the same check as before the run); when
it answers, the batch goes on and the failed attempts are run again; when it does not -- or it
answers the check but fails every attempt again, ``MAX_TRIPS`` times with no success between --
the run stops with :class:`EndpointDown` ("endpoint down: N done; rerun with --resume"), keeping
what it made. A server that refuses the requests alike (``error: refused: ...``, a 4xx no retry
changes; see ``backends.llm.failures``) is no outage: no pause is taken, the run stops at once with
``RunRefused`` and the server's message.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from backends.llm.failures import RefusalWatch, RunRefused, kind_of

PAUSES = (5.0, 15.0, 30.0)  # seconds before each new check of a failing endpoint
THRESHOLD = 3               # endpoint errors in a row that pause the batch
MAX_TRIPS = 3               # pauses with no successful attempt between them before the run stops
ERROR = "error"


class EndpointDown(Exception):
    """The endpoint failed repeatedly and did not come back; what finished is kept for ``--resume``."""


def endpoint_error(exc: BaseException) -> str | None:
    """The outcome reason for an exception that is the endpoint's failure (``error: endpoint: ...``),
    or None for any other (a bad request, a bad answer: the attempt's own drop)."""
    first = str(exc).splitlines()[0][:300] if str(exc) else exc.__class__.__name__
    if getattr(exc, "transient", False):
        return f"error: endpoint: {first}"
    if getattr(exc, "refused", False):  # a 4xx no retry changes: the run stops once it repeats
        return f"error: refused: {first}"
    return None


def timeout_reason(failure: Any) -> str:
    """An llm attempt that ran out of its time budget, as an error reason naming the settings."""
    return (f"error: timeout: {failure.detail}; a slow endpoint needs a larger --task-timeout (and the "
            f"timeout setting: --llm-set timeout=SECONDS)")


def endpoint_probe(config: Any) -> Callable[[], bool]:
    """A check that the build's endpoint answers (the preflight), for :class:`Breaker`."""
    def probe() -> bool:
        from backends.llm import LLMClient, PreflightError
        from backends.llm.settings import settings_for

        try:
            with LLMClient(settings_for(config)) as client:
                client.preflight(seconds=10.0, wait=0)
        except (PreflightError, ValueError):
            return False
        return True

    return probe


def outcome_sink(breaker: "Breaker", record: Callable[[dict[str, Any]], None],
                 on_outcome: Callable[[dict[str, Any]], None] | None) -> Callable[[int, dict[str, Any]], None]:
    """The batch's result callback: the breaker sees each outcome, the log records it, and the
    progress display (``on_outcome``) gets its status and what it spent."""
    def seen(position: int, item: dict[str, Any]) -> None:
        breaker.see(item)
        shown = {k: v for k, v in item.items() if k in ("status", "tokens", "cost_usd")}
        record(item)
        if on_outcome is not None:
            on_outcome(shown)

    return seen


def share_budget(config: Any, workers: int) -> None:
    """On the llm backend, the worker processes split the endpoint's rate budget between them."""
    if config.backend == "llm":
        from backends.llm.rate_limit import set_share

        set_share(1 / max(1, workers))


class Breaker:
    """Counts endpoint errors in a row; ``tripped`` once there are ``threshold`` of them."""

    def __init__(self, probe: Callable[[], bool] | None, threshold: int = THRESHOLD,
                 pauses: tuple[float, ...] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.probe, self.threshold = probe, threshold
        self.pauses = PAUSES if pauses is None else pauses
        self.sleep = sleep
        self.in_row = 0
        self.errors = 0
        self.trips = 0  # pauses since the last attempt the endpoint did not end
        self.refusals = RefusalWatch()

    def see(self, item: dict[str, Any]) -> None:
        error = item.get("status") == ERROR
        self.refusals.see(str(item.get("reason") or "") if error else None)
        if error and kind_of(str(item.get("reason") or "")) != "refused":
            self.in_row += 1
            self.errors += 1
        elif not error:
            self.in_row = self.trips = 0

    def tripped(self) -> bool:
        """Stop handing out attempts: the endpoint keeps failing, or refuses every request alike."""
        return self.refusals.tripped() or (self.probe is not None and self.in_row >= self.threshold)

    def check_refused(self) -> None:
        """Raise :class:`RunRefused` (exit 2, the server's message) when the server refused alike."""
        if self.refusals.tripped():
            raise RunRefused(self.refusals.message() + "; rerun with --resume once fixed")

    def recovered(self, on_wait: Callable[[float], None] | None = None) -> bool:
        """Pause and check the endpoint again, up to ``len(pauses)`` times; True once it answers
        (False at once after ``MAX_TRIPS`` pauses with no successful attempt between them). Raises
        :class:`RunRefused` at once when the server refused every request alike: no pause helps."""
        self.check_refused()
        self.trips += 1
        if self.trips > MAX_TRIPS:
            return False
        for pause in self.pauses:
            if on_wait is not None:
                on_wait(pause)
            self.sleep(pause)
            if self.probe is not None and self.probe():
                self.in_row = 0
                return True
        return False
