"""Criteria no state can pass together are named, and homer verify's schema gate refuses them."""

from __future__ import annotations

import pytest

from office_env.evaluation.contradictions import contradictions


def c(function: str, **args) -> dict:
    return {"function": function, "args": args}


@pytest.mark.parametrize("criteria, expected", [
    ([c("evaluate_file_exist", file="data/a.docx"), c("evaluate_file_not_exist", file="./data/a.docx")], 1),
    ([c("evaluate_file_exist", file="data/a.docx"), c("evaluate_file_not_exist", file="data/b.docx")], 0),
    ([c("evaluate_contain", doc_type="pdf", file="data/a.pdf", keywords=["Rail ticket", "30"]),
      c("evaluate_not_contain", doc_type="pdf", file="data/a.pdf", keywords=["hotel night", "rail  TICKET"])], 1),
    ([c("evaluate_contain", doc_type="pdf", file="data/a.pdf", keywords=["Rail ticket"]),
      c("evaluate_not_contain", doc_type="pdf", file="data/a.pdf", keywords=["Hotel night"])], 0),
    ([c("evaluate_calendar_event", username="bo", summary="Vendor review", start="2024-09-24 11:00:00"),
      c("evaluate_calendar_no_event", username="bo", summary="Vendor review", start="2024-09-24 11:00:00")], 1),
    ([c("evaluate_calendar_event", username="bo", summary="Vendor review", start="2024-09-24 11:00:00"),
      c("evaluate_calendar_no_event", username="bo", summary="Vendor review", start="2024-09-24 12:00:00")], 0),
    ([c("evaluate_email_sent", sender="zara", recipient="sofia", body_keywords=["5546", "14"]),
      c("evaluate_email_not_sent", sender="zara", recipient="sofia", body_keywords=["5546"])], 1),
    ([c("evaluate_email_sent", sender="zara", recipient="sofia", body_keywords=["5546"]),
      c("evaluate_email_not_sent", sender="zara", recipient="sofia", body_keywords=["2810"])], 0),
    ([c("evaluate_email_sent", sender="zara", recipient="sofia", body_keywords=["5546"]),
      c("evaluate_email_not_sent", sender="zara", recipient="naomi", body_keywords=["5546"])], 0),
])
def test_pairs_no_state_can_pass(criteria, expected):
    assert len(contradictions(criteria)) == expected

