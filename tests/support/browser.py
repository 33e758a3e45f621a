"""Headless Chromium (Debian's, which .ci/run installs) driven by Playwright, for the tests that
walk the review pages; screenshots go to ``test-artifacts/`` (or ``$HOMER_TEST_ARTIFACTS``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("HOMER_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def require_browser() -> None:
    """Skip the test where Playwright or Chromium is missing; in CI, fail it instead."""
    reason = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "playwright is not installed (pip install -e '.[test]')"
    if reason is None and not Path(CHROMIUM).exists():
        reason = "no chromium: .ci/run installs Debian's chromium (apt-get install chromium)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test must run in CI: {reason}")
        pytest.skip(reason)


@contextmanager
def chromium_page(home: Path, width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A page of a fresh headless Chromium (its profile under ``home``), closed when the block ends."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, env={**os.environ, "HOME": str(home)})
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
