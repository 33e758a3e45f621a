"""Use an endpoint's rate limits fully without running into them.

One :class:`Limiter` per endpoint in a process (shared by every client to it), doing three things:

- **budgets**: token buckets for requests per minute (``rpm``) and tokens per minute (``tpm``),
  refilled continuously and holding at most ``BURST_SECONDS`` of budget, so no 60-second window
  sees more than the budget. A request takes one request and its prompt's estimated tokens before
  it is sent; its completion tokens are taken when the answer comes (the bucket may go into debt,
  which the next requests wait out);
- **adaptive concurrency** (additive increase, multiplicative decrease): the number of requests in
  flight may grow by one per window of successful answers, up to ``max_concurrency``, and is
  halved on a 429 or a timeout;
- **server pauses**: a 429's ``Retry-After`` (or ``retry-after-ms``) holds every new request of
  the process until it has passed; the openai client's own retry waits it out too.

A batch run in ``k`` worker processes gives each its share of the budget (:func:`set_share`),
so together they keep to it.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

BURST_SECONDS = 1.0     # budget a bucket may hold: a second's worth (at least one request)
SAFETY = 0.97           # of the budget used: the server's clock and ours may differ a little
_SHARE = 1.0            # this process's share of every budget (see set_share)
_LIMITERS: dict[tuple, "Limiter"] = {}
_LIMITERS_LOCK = threading.Lock()


def set_share(share: float) -> None:
    """This process's share of each endpoint's budget (``1 / workers`` in a batch's workers)."""
    global _SHARE
    _SHARE = max(1e-6, min(1.0, share))


class _Bucket:
    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * BURST_SECONDS)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` can be taken (0: now). A request larger than the bucket waits
        for a full bucket and then takes it into debt."""
        self._refill(now)
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float) -> None:
        self.level -= amount


class Limiter:
    def __init__(self, rpm: int | None, tpm: int | None, max_concurrency: int) -> None:
        self.requests = _Bucket(rpm * SAFETY * _SHARE) if rpm else None
        self.tokens = _Bucket(tpm * SAFETY * _SHARE) if tpm else None
        self.max_concurrency = max(1, max_concurrency)
        self.limit = float(self.max_concurrency)
        self.in_flight = 0
        self.paused_until = 0.0
        self.throttled = 0  # 429s seen (including those the client retried)
        self._cond = threading.Condition()

    # -- taking a slot -----------------------------------------------------------------------

    @contextmanager
    def slot(self, tokens: int = 0) -> Iterator[None]:
        """Hold one request's place: wait for the concurrency limit, a server pause and the budgets."""
        with self._cond:
            while True:
                now = time.monotonic()
                waits = [self.paused_until - now]
                if self.in_flight >= max(1, int(self.limit)):
                    waits.append(float("inf"))
                if self.requests is not None:
                    waits.append(self.requests.wait_for(1, now))
                if self.tokens is not None:
                    waits.append(self.tokens.wait_for(tokens, now))
                wait = max(waits)
                if wait <= 0:
                    break
                self._cond.wait(None if wait == float("inf") else min(wait, 5.0))
            self.in_flight += 1
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None:
                self.tokens.take(tokens)
        try:
            yield
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def cap(self, slots: int) -> None:
        """The server works on ``slots`` requests at once (this process's share of them): more in
        flight would only queue there, their time running out while they wait."""
        with self._cond:
            self.max_concurrency = min(self.max_concurrency, max(1, int(slots * _SHARE)))
            self.limit = min(self.limit, float(self.max_concurrency))

    # -- what the endpoint said ------------------------------------------------------------------

    def spent(self, tokens: int) -> None:
        """Tokens a reply turned out to cost beyond the estimate taken (its completion)."""
        if self.tokens is not None and tokens > 0:
            with self._cond:
                self.tokens.take(tokens)

    def succeeded(self) -> None:
        with self._cond:
            self.limit = min(float(self.max_concurrency), self.limit + 1.0 / max(1.0, self.limit))
            self._cond.notify_all()

    def backed_off(self, retry_after: float | None = None) -> None:
        """A 429 or a timeout: halve the concurrency; hold new requests for ``retry_after`` seconds."""
        with self._cond:
            self.throttled += 1
            self.limit = max(1.0, self.limit / 2)
            if retry_after is not None and retry_after > 0:
                self.paused_until = max(self.paused_until, time.monotonic() + min(retry_after, 120.0))


def limiter_for(endpoint: str, model: str, rpm: int | None, tpm: int | None, max_concurrency: int) -> Limiter:
    """The process's limiter for ``model`` at ``endpoint`` with these budgets (clients with the same settings
    share it; providers count rate limits per model)."""
    key = (endpoint.rstrip("/"), model, rpm, tpm, max_concurrency, _SHARE)
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is None:
            limiter = _LIMITERS[key] = Limiter(rpm, tpm, max_concurrency)
        return limiter


def retry_after_seconds(headers: object) -> float | None:
    """``retry-after-ms`` or ``Retry-After`` (seconds) of a response, when it is a number."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except (TypeError, ValueError):
            continue
        if seconds >= 0:
            return seconds
    return None
