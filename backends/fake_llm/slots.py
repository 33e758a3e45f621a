"""The fake endpoint's slots: how many chat requests it works on at once, and what it says of them.

Like llama.cpp, a request that finds every slot busy waits for one, and the work on a request goes
on when its client has gone (a timed-out attempt still holds its slot until it is done). What the
servers show of it: llama.cpp's ``GET /slots`` (one row a slot, ``is_processing``) and vLLM's
``GET /metrics`` (``vllm:num_requests_running`` and ``vllm:num_requests_waiting``, in Prometheus'
text format).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from backends.fake_llm.wire import FaultError


class Slots:
    """``count`` slots (None: no limit, stated as one slot)."""

    def __init__(self, count: int | None, stopping: threading.Event) -> None:
        if count is not None and count < 1:
            raise ValueError(f"slots must be at least 1, got {count}")
        self.count = count
        self._gate = threading.Semaphore(count) if count else None
        self._stopping = stopping
        self._lock = threading.Lock()
        self.running = 0
        self.waiting = 0

    @property
    def total(self) -> int:
        return self.count or 1

    @contextmanager
    def occupy(self) -> Iterator[None]:
        """Hold a slot for one request's work, waiting for one when all are busy."""
        with self._lock:
            self.waiting += 1
        try:
            while self._gate is not None and not self._gate.acquire(timeout=0.1):
                if self._stopping.is_set():
                    raise FaultError(503, "the server is stopping", "server_error")
        finally:
            with self._lock:
                self.waiting -= 1
        with self._lock:
            self.running += 1
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
            if self._gate is not None:
                self._gate.release()

    def llama_slots(self, n_ctx: int | None) -> list[dict]:
        """llama.cpp's ``/slots``: the first ``running`` slots are processing."""
        with self._lock:
            running = self.running
        return [{"id": i, "n_ctx": n_ctx, "speculative": False, "is_processing": i < running}
                for i in range(self.total)]

    def vllm_metrics(self, model: str) -> bytes:
        """vLLM's ``/metrics`` gauges of running and waiting requests."""
        with self._lock:
            running, waiting = self.running, self.waiting
        model = model.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
        lines = []
        for name, value, what in (("running", running, "Number of requests in model execution batches."),
                                  ("waiting", waiting, "Number of requests waiting to be processed.")):
            lines += [f"# HELP vllm:num_requests_{name} {what}", f"# TYPE vllm:num_requests_{name} gauge",
                      f'vllm:num_requests_{name}{{model_name="{model}"}} {float(value)}']
        return ("\n".join(lines) + "\n").encode("utf-8")


__all__ = ["Slots"]
