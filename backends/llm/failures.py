"""What a run's failed calls mean: their kind, the advice that fits it, a summary of the commonest
reasons, and when to stop because the server refuses every request the same way.

A failed attempt or run is recorded as ``error: <kind>: <reason>``:

- ``endpoint``: the endpoint failed (unreachable, timing out, 429 or 5xx after every retry): the
  same request may work once it is back, so ``--resume`` runs it again;
- ``refused``: a 4xx that no retry changes (an unsupported parameter, a refused key, a model not
  served): the run stops once it repeats, with the server's message;
- ``context``: the prompt does not fit the model: resuming will not help;
- ``truncated``: the reply stopped at the token limit;
- ``timeout``: an attempt ran past its time budget (``--task-timeout``) waiting on the endpoint;
- ``request``: the request or the reply was unusable in another way (a broken reply shape).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

KINDS = ("endpoint", "refused", "context", "truncated", "timeout", "request")
ADVICE = {
    "endpoint": "the endpoint failed; rerun with --resume once it answers again",
    "refused": "the server refused the request; fix the setting it names, then rerun with --resume",
    "context": "the prompt does not fit the model's context; use --mode rag, a model with a larger context or "
               "a shorter history (--resume alone will not help)",
    "truncated": "the reply stopped at the token limit; raise it (--llm-set max_tokens=N)",
    "timeout": "the attempt ran out of time on a slow endpoint; raise --task-timeout, then rerun with --resume",
    "request": "the reply or request was unusable; see the reason",
}
REFUSED_IN_ROW = 3  # refusals in a row, with no success among them, that stop a run
FATAL_STATUSES = (401, 403)  # a key refused mid-run: stop at the first
NON_RETRYABLE = (400, 401, 403, 404, 405, 413, 415, 422)
_KIND_RE = re.compile(r"^error: ([a-z]+): ")
_STATUS_RE = re.compile(r"HTTP (\d{3})")
_NUMBERS_RE = re.compile(r"\d[\d,.]*")


def kind_of(reason: str) -> str | None:
    """The kind of an ``error: <kind>: ...`` reason (None for a reason that is not an error)."""
    match = _KIND_RE.match(reason or "")
    return match.group(1) if match else None


def is_refusal(status: int | None) -> bool:
    """An HTTP status no retry changes (the caller tells a context overflow apart first)."""
    return status in NON_RETRYABLE


def summary_lines(reasons: Iterable[str], top: int = 3, width: int = 240) -> list[str]:
    """The ``top`` commonest reasons with their counts (reasons that differ only in their numbers
    are one), each with the advice for its kind; then how many others."""
    groups: Counter[str] = Counter()
    example: dict[str, str] = {}
    for reason in reasons:
        key = _NUMBERS_RE.sub("#", str(reason))[:width]
        groups[key] += 1
        example.setdefault(key, str(reason))
    lines = []
    for key, count in groups.most_common(top):
        reason = example[key]
        shown = reason if len(reason) <= width else reason[:width] + "..."
        advice = ADVICE.get(kind_of(reason) or "")
        lines.append(f"  {count} x {shown}" + (f"\n      -> {advice}" if advice else ""))
    others = sum(groups.values()) - sum(n for _, n in groups.most_common(top))
    if others:
        lines.append(f"  {others} other(s) of {len(groups) - top} more reason(s)")
    return lines


class RunRefused(Exception):
    """A run stopped because the endpoint refused its requests the same way (exit 2); what it
    finished is kept for ``--resume`` once the setting is fixed."""


@dataclass
class RefusalWatch:
    """Sees each outcome's error reason (None for a success); ``refusal`` is set, and the run should
    stop, once the server refused ``REFUSED_IN_ROW`` requests in a row or refused the key once."""

    limit: int = REFUSED_IN_ROW
    in_row: int = 0
    refusal: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # probe threads share one

    def see(self, reason: str | None) -> None:
        """One outcome: None or a drop (the server answered), or an ``error: <kind>: ...`` reason."""
        kind = kind_of(reason) if reason else None
        with self._lock:
            if kind is None:
                self.in_row = 0  # the server took the request
                return
            if kind != "refused":
                return  # the endpoint's own trouble: the breaker's business
            self.in_row += 1
            status = _STATUS_RE.search(reason or "")
            if self.in_row >= self.limit or (status and int(status.group(1)) in FATAL_STATUSES):
                self.refusal = self.refusal or reason

    def tripped(self) -> bool:
        return self.refusal is not None

    def message(self) -> str:
        """The one line a command stops with."""
        reason = (self.refusal or "").removeprefix("error: refused: ")
        return f"the endpoint refused the requests, the same way each time: {reason}"


__all__ = ["ADVICE", "KINDS", "RefusalWatch", "RunRefused", "is_refusal", "kind_of", "summary_lines"]
