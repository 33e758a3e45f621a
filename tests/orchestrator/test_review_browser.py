"""The review page in a real browser: headless Chromium (Debian's, which .ci/run installs) driven by
Playwright against ``homer review``'s app served by uvicorn on a loopback port.

The walk: open the list, open a task, go to the next with the keyboard, answer the guideline,
post-edit a turn, see the gates refuse a bad edit, reload and find it all saved. Screenshots of
the task page and the report go to ``test-artifacts/`` (or ``$HOMER_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.build import build
from orchestrator.review.annotations import CRITERIA, AnnotationStore
from orchestrator.review.app import ReviewServer
from orchestrator.roles import BuildConfig

from tests.support.browser import ARTIFACTS, chromium_page, require_browser
from tests.support.records import evidence_turn, plain_turn
from tests.support.review_server import serving

pytestmark = pytest.mark.slow

@pytest.fixture()
def served(tmp_path: Path):
    require_browser()
    dataset = tmp_path / "data"
    build(dataset, 2, BuildConfig(seed=33))
    with serving(ReviewServer(dataset, "ana")) as port:
        yield dataset, f"http://127.0.0.1:{port}"


def test_walk_annotate_edit_refuse_reload(served):
    dataset, base = served
    ids = sorted(p.name for p in (dataset / "tasks").iterdir())
    second = json.loads((dataset / "tasks" / ids[1] / "task.json").read_text())
    with chromium_page(dataset.parent, 1400, 1000) as page:
        page.goto(base + "/")
        assert page.locator("#tasks tr[data-href]").count() == 2
        page.keyboard.press("j")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/task/{ids[0]}")
        assert page.locator("#task-id").inner_text().startswith(ids[0])
        page.keyboard.press("n")  # the next task, from the keyboard
        page.wait_for_url(f"**/task/{ids[1]}")
        assert page.locator("#intent").inner_text() == second["intent"]
        assert page.locator(".turn.evidence").count() >= 1

        # answer the guideline: each criterion yes, overall keep; saved without leaving the page
        for criterion in CRITERIA:
            form = page.locator(f"form.verdict[data-criterion='{criterion}']")
            form.locator("input[name=comment]").fill(f"{criterion} fine")
            form.locator("button[value=yes]").click()
            form.locator(".status", has_text="saved: yes").wait_for()
        page.locator("#overall button[value=keep]").click()
        page.locator("#overall .status", has_text="saved: keep").wait_for()

        # a harmless post-edit of one turn is accepted by the gates
        d, t = plain_turn(second)
        page.dblclick(f"#d{d}-t{t} .role")  # loads the turn into the edit form
        assert page.input_value("#edit-turn input[name=field]") == f"turn:{d}:{t}"
        assert page.input_value("#edit-turn textarea[name=text]") == second["dialogue"][d]["turns"][t]["text"]
        page.fill("#edit-turn textarea[name=text]", "Thanks, noted for later.")
        page.click("#edit-turn button")
        page.wait_for_url(f"**/task/{ids[1]}#edits")
        assert page.locator("#revisions li").count() == 1

        # taking the evidence out of its turn fails the memory gate: refused with the reason
        d2, t2 = evidence_turn(second)
        page.dblclick(f"#d{d2}-t{t2} .role")
        marks = second["dialogue"][d2]["turns"][t2]["evidence"]
        assert page.input_value("#edit-turn input[name=evidence]") == ",".join(marks)
        page.fill("#edit-turn textarea[name=text]", "Nothing new today.")
        page.click("#edit-turn button")
        page.locator("#message").wait_for()
        assert "edit refused" in page.locator("#message").inner_text()
        assert "memory_evidence" in page.locator("#problems").inner_text()

        page.goto(f"{base}/task/{ids[1]}")  # reload: everything is still there
        for criterion in CRITERIA:
            status = page.locator(f"form.verdict[data-criterion='{criterion}'] .status").inner_text()
            assert status == "saved: yes"
        assert page.locator("#overall .status").inner_text() == "saved: keep"
        assert page.locator(f"#d{d}-t{t} .text").inner_text() == "Thanks, noted for later."
        assert page.locator("#revisions li").count() == 1
        page.screenshot(path=str(ARTIFACTS / "review-task.png"), full_page=False)
        page.goto(base + "/report")
        assert "Fleiss" in page.locator("#report").inner_text()
        page.screenshot(path=str(ARTIFACTS / "review-report.png"))
    with AnnotationStore(dataset) as store:
        assert len(store.verdicts(ids[1])) == len(CRITERIA) + 1 and len(store.revisions(ids[1])) == 1
    assert (ARTIFACTS / "review-task.png").stat().st_size > 10_000


def test_vote_at_1280x800_after_reading_the_whole_history_without_scrolling_back(served):
    """The verdict panel stays in view: at the end of a long history the keep button is on screen
    and a click there (by its position, no scrolling) saves the verdict."""
    dataset, base = served
    task = sorted(p.name for p in (dataset / "tasks").iterdir())[0]
    with chromium_page(dataset.parent, 1280, 800) as page:
        page.goto(f"{base}/task/{task}")
        assert page.evaluate("document.documentElement.scrollHeight") > 3 * 800  # a long page
        page.locator("#history .turn").last.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy({top: 200, behavior: 'instant'})")  # past the last turn (a wheel scrolls late)
        scrolled = page.evaluate("window.scrollY")
        assert scrolled > 2 * 800
        keep = page.locator("#overall button[value=keep]")
        box = keep.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 800, box  # on screen
        assert 0 <= box["x"] and box["x"] + box["width"] <= 1280
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.locator("#overall .status", has_text="saved: keep").wait_for()
        assert page.evaluate("window.scrollY") == scrolled  # voted where the reader was
        page.screenshot(path=str(ARTIFACTS / "review-task-1280x800.png"))
    with AnnotationStore(dataset) as store:
        assert [(v.criterion, v.verdict) for v in store.verdicts(task)] == [("overall", "keep")]
