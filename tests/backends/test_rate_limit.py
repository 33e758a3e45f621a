"""The llm client keeps to an endpoint's rate limits and backs off on 429s (real HTTP, fake endpoint)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from backends.fake_llm import FakeLLMServer
from backends.fake_llm.server import Reply
from backends.llm import LLMClient, LLMSettings
from backends.llm.rate_limit import Limiter, retry_after_seconds

pytestmark = pytest.mark.slow

ASK = [{"role": "user", "content": "Say something short."}]


def hammer(client: LLMClient, seconds: float, threads: int = 6) -> list[BaseException]:
    errors: list[BaseException] = []
    deadline = time.monotonic() + seconds

    def run() -> None:
        while time.monotonic() < deadline:
            try:
                client.chat("bench", ASK)
            except BaseException as exc:  # surfaced by the caller
                errors.append(exc)
                return

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return errors


def test_a_client_with_the_budget_never_meets_a_429():
    with FakeLLMServer(lambda body: Reply(content="ok"), rate_limit=(120, 100_000)) as server:
        client = LLMClient(LLMSettings(base_url=server.url, model=f"m-{uuid.uuid4().hex}", rpm=120, max_concurrency=6, timeout=10))
        errors = hammer(client, 2.5)
        answered = sorted(r.started for r in server.chat_requests() if r.status == 200)
        throttled = server.throttled
    assert not errors and throttled == 0
    # 2 requests a second (and a second's burst): at most about 6 in the first 2.5 s, never the hundreds 6
    # threads could send; the threads' last calls, waiting at the deadline, are sent at the same pace after
    # it. (How few a busy machine gets through is not this test's point: the limiter's own pace is tested
    # on its clock below.)
    # (no gap between two arrivals is asserted: a busy server stamps queued requests together, and the
    # server's own limit, met with no 429, is what says the client kept to its budget)
    first = [t for t in answered if t - answered[0] <= 2.5]
    assert len(answered) >= 3 and len(first) <= 7


def test_without_the_budget_429s_are_waited_out_and_nothing_is_lost():
    # a server allowing 5 requests a second (its window shortened from a minute for the test)
    with FakeLLMServer(lambda body: Reply(content="ok"), rate_limit=(5, 100_000), rate_window=1.0) as server:
        client = LLMClient(LLMSettings(base_url=server.url, model=f"m2-{uuid.uuid4().hex}", max_concurrency=4, max_retries=8, timeout=10))
        errors = hammer(client, 2.0, threads=4)
        limiter = client._slots
        throttled = server.throttled
        answered = sum(1 for r in server.chat_requests() if r.status == 200)
        admitted = sorted(server.admitted)  # the rate limit's own clock: arrival stamps drift under load
    assert not errors and throttled > 0 and limiter.throttled == throttled
    assert limiter.limit < 4  # halved on the 429s
    # whatever the 429s, every answer was let in by the limit, and no second of it let in more than 5
    assert len(admitted) == answered
    assert all(sum(1 for t in admitted if s <= t < s + 1.0) <= 5 for s in admitted)


def test_a_429_pauses_every_thread_and_halves_the_concurrency():
    limiter = Limiter(None, None, max_concurrency=8)
    for _ in range(20):
        limiter.succeeded()
    assert limiter.limit == 8
    limiter.backed_off(retry_after=0.3)
    assert limiter.limit == 4 and limiter.throttled == 1
    start = time.monotonic()
    with limiter.slot():
        waited = time.monotonic() - start
    assert waited >= 0.25
    limiter.succeeded()
    assert 4 < limiter.limit < 5  # additive increase: a fraction per success


def test_budgets_pace_requests_and_tokens():
    limiter = Limiter(rpm=600, tpm=6000, max_concurrency=4)  # 10 requests and 100 tokens a second
    start = time.monotonic()
    for _ in range(4):
        with limiter.slot(tokens=50):
            pass
    # the token bucket holds a second's 100 tokens (times the safety margin): 200 tokens take ~1 s more
    assert time.monotonic() - start >= 0.9


def test_retry_after_headers():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "soon"}) is None and retry_after_seconds(None) is None


def test_the_client_reacts_to_a_429_it_retried_by_itself():
    with FakeLLMServer(lambda body: Reply(content="ok"), retry_after=0.2) as server:
        client = LLMClient(LLMSettings(base_url=server.url, model=f"m3-{uuid.uuid4().hex}", max_concurrency=4, max_retries=2, timeout=10))
        server.queue_faults("429")
        result = client.chat("bench", ASK)
        limiter = client._slots
    assert result.content == "ok" and limiter.throttled == 1 and 2 <= limiter.limit < 3  # halved, then one success
