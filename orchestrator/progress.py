"""Progress of a batch (build, regenerate, eval and its horizon sweep, probe, export) as its outcomes
arrive, for a person or a script, shown from the command's first second.

Four modes, chosen by the command line:

- ``bar`` (a terminal): a live bar with done / total, kept, dropped, errors, the rate, the time
  left, and the tokens (and cost) spent so far;
- ``lines`` (not a terminal: nohup, CI, a pipe): one plain line at the start, then every ``every``
  outcomes and at least every ``seconds`` while the batch runs, so a log shows the run is alive;
- ``json`` (``--json-progress``): one JSON object per outcome, for scripts;
- ``quiet`` (``--quiet``): nothing.

Everything goes to standard error; standard output keeps the command's result.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, TextIO

MODES = ("bar", "lines", "json", "quiet")
EVERY = 10        # outcomes between two lines in "lines" mode
SECONDS = 10.0    # and at most this long between two lines while the batch runs


def mode_for(quiet: bool, json_progress: bool, stream: TextIO | None = None) -> str:
    if json_progress:
        return "json"
    if quiet:
        return "quiet"
    stream = stream or sys.stderr
    return "bar" if stream.isatty() else "lines"


def _cached(item: dict[str, Any]) -> int:
    """Prompt tokens of a build outcome that the endpoint's prompt cache held."""
    return sum(int(spent.get("cached_prompt_tokens", 0)) for spent in (item.get("tokens") or {}).values()
               if isinstance(spent, dict))


def _tokens(item: dict[str, Any]) -> int:
    """Tokens an outcome spent: a build's per-role ``tokens``, or an eval row's trajectory usage."""
    total = 0
    for spent in (item.get("tokens") or {}).values():
        if isinstance(spent, dict):
            total += int(spent.get("prompt_tokens", 0)) + int(spent.get("completion_tokens", 0))
    for row in item.get("rows") or []:
        usage = (row.get("trajectory") or {}).get("usage") or {}
        total += int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    return total


class Reporter:
    """Counts outcomes and shows them in the chosen mode; use as a context manager."""

    def __init__(self, what: str, total: int | None, mode: str, *, stream: TextIO | None = None,
                 every: int = EVERY, seconds: float = SECONDS, target: str = "done", kept_word: str = "kept") -> None:
        """``target``: what ``total`` counts -- ``done`` (every outcome: seeds, tasks) or ``kept``
        (a build asks for n kept tasks, however many attempts that takes)."""
        if mode not in MODES:
            raise ValueError(f"unknown progress mode {mode!r}: expected one of {', '.join(MODES)}")
        self.what, self.total, self.mode, self.target, self.kept_word = what, total, mode, target, kept_word
        self.stream = stream or sys.stderr
        self.every, self.seconds = every, seconds
        self.done = self.kept = self.dropped = self.errors = self.tokens = self.cached = 0
        self.not_needed = 0  # target "kept": accepted attempts the dataset does not take (a duplicate, one too many)
        self._batch_kept: int | None = None  # target "kept": the batch's own count of the tasks it holds
        self.cost = 0.0
        self.started = time.monotonic()
        self._last_line = self.started
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._bar: Any = None
        self._task: Any = None

    # -- life cycle ----------------------------------------------------------------------------

    def __enter__(self) -> "Reporter":
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn(self.what), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[counts]}"), console=Console(file=self.stream),
                                 transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.what, total=self.total, counts="")
        elif self.mode == "lines":
            self._write_line()  # from the first second: a log shows the command started
            self._ticker = threading.Thread(target=self._tick, name="progress-lines", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)
        if self._bar is not None:
            self._bar.__exit__(*exc)

    # -- updates -------------------------------------------------------------------------------

    def set_total(self, total: int) -> None:
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total)

    def counted(self, done: int, total: int) -> None:
        """An ``on_progress(done, total)`` callback: takes the total once the batch knows it; with
        target ``kept``, ``done`` is the batch's own count of the tasks it holds (without the
        duplicates it has found), which an accepted outcome is then read against."""
        if total != self.total:
            self.set_total(total)
        if self.target == "kept":
            self._batch_kept = done

    def outcome(self, item: dict[str, Any]) -> None:
        """One finished attempt, seed or task: ``status`` accepted / dropped / error, or an eval
        outcome (``rows``, or ``skipped``)."""
        with self._lock:
            self.done += 1
            status = item.get("status")
            rows = item.get("rows") or []
            if status == "accepted" and self.target == "kept":
                self._accepted()
            elif status == "accepted" or (rows and not any(r.get("error") for r in rows)):
                self.kept += 1
            elif status == "error" or any(r.get("error") for r in rows):
                self.errors += 1
            else:
                self.dropped += 1
            self.tokens += _tokens(item)
            self.cached += _cached(item)
            cost = item.get("cost_usd")
            if isinstance(cost, (int, float)):
                self.cost += cost
            self._show(final=False)

    def _accepted(self) -> None:
        """An accepted build attempt: kept when the batch's count rose with it (or, without a count,
        while fewer than the total are kept); else not needed (a duplicate, or one past the total)."""
        limit = self.total or float("inf")
        if self._batch_kept is not None:
            if self._batch_kept > self.kept:
                self.kept = int(min(self._batch_kept, limit))
            else:
                self.not_needed += 1
        elif self.kept < limit:
            self.kept += 1
        else:
            self.not_needed += 1

    @property
    def progress(self) -> int:
        return self.kept if self.target == "kept" else self.done

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.progress / elapsed
        total = f"/{self.total}" if self.total else ""
        left = ""
        if self.total and rate > 0 and self.progress < self.total:
            left = f", about {(self.total - self.progress) / rate:,.0f} s left"
        cached = f" ({self.cached:,} prompt-cached)" if self.cached else ""
        money = (f", {self.tokens:,} tokens{cached}" if self.tokens else "") + (
            f", {self.cost:.4f} USD" if self.cost else "")
        head = (f"{self.kept}{total} {self.kept_word} from {self.done} attempt(s)" if self.target == "kept"
                else f"{self.done}{total} done ({self.kept} {self.kept_word}")
        spare = f", {self.not_needed} not needed" if self.not_needed else ""
        tail = f"{self.dropped} dropped, {self.errors} errors{spare}" + ("" if self.target == "kept" else ")")
        return f"{self.what}: {head}, {tail}, {rate:.2f}/s{left}{money}, {elapsed:.0f} s"

    def as_dict(self) -> dict[str, Any]:
        return {"event": "progress", "what": self.what, "done": self.done, "total": self.total, "kept": self.kept,
                "dropped": self.dropped, "errors": self.errors, "not_needed": self.not_needed, "tokens": self.tokens,
                "cached_prompt_tokens": self.cached, "cost_usd": round(self.cost, 6),
                "elapsed": round(time.monotonic() - self.started, 3)}

    def _show(self, final: bool) -> None:
        if self.mode == "json":
            self.stream.write(json.dumps(self.as_dict()) + "\n")
            self.stream.flush()
        elif self.mode == "bar" and self._bar is not None:
            counts = (f"{self.kept} {self.kept_word}, {self.dropped} dropped, {self.errors} errors, "
                      f"{self.tokens:,} tokens")
            self._bar.update(self._task, completed=self.progress, counts=counts)
        elif self.mode == "lines" and (final or self.done == 1 or self.done % self.every == 0):
            self._write_line()

    def _write_line(self) -> None:
        self._last_line = time.monotonic()
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(min(1.0, self.seconds)):
            with self._lock:
                if time.monotonic() - self._last_line >= self.seconds:
                    self._write_line()
