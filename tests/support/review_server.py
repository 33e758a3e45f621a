"""A review server's app on a real uvicorn server on a free loopback port, for the tests that talk
to it over HTTP or drive it from a browser."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from orchestrator.review.app import ReviewServer, create_app


@contextmanager
def serving(server: ReviewServer) -> Iterator[int]:
    """Serve ``server`` until the block ends; yields the port."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(create_app(server), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started:
        assert time.monotonic() < deadline, "the review server did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        web.should_exit = True
        thread.join(10)
