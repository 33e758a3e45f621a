"""A mail or document that is mostly its sources copied out fails: the lines, the check, the generator."""

from __future__ import annotations

import pytest

from generators.model import TaskDraft, ToolCall
from generators.paste_checks import paste_checks
from office_env.evaluation import evaluate_criteria, validate_criteria
from office_env.evaluation.pasted import is_paste, line_keys
from office_env.officebench_translate import to_officebench

SOURCE = ("Invoice number: INV-2024-6843\nVendor: Greenline Office Supply\n"
          "Stationery starter box - 12 x 64.50 = 774.00\nInk and toner bundle - 11 x 178.90 = 1,967.90\n"
          "Total due: 3,249.61 GBP\nPayment by bank transfer to Greenline Office Supply; quote the invoice number.\n"
          "1. Payment is due 30 days after the invoice date.\n")
KEYS = frozenset(line_keys([SOURCE]))


@pytest.mark.parametrize("text, pasted", [
    (SOURCE, True),
    # the same lines re-spaced, re-cased, under a label, after a short answer: still the sources
    ("Hi Nora,\nthe total is 3249.61.\n\nCONTENT: stationery starter box -  12 x 64.50 = 774.00\n"
     + SOURCE.split("\n", 3)[3], True),
    ("Invoice INV-2024-6843 totals 3249.61.", False),
    # one quoted line beside the answer is a quotation, not a paste
    ("Hi Nora,\nInvoice INV-2024-6843 totals 3249.61 GBP.\nTotal due: 3,249.61 GBP\n"
     "Payment by bank transfer to Greenline Office Supply; quote the invoice number.\nBest,\nTobias", False),
    ("Hi Nora, the invoice from Greenline Office Supply totals three thousand two hundred and forty-nine "
     "pounds sixty-one; the ink and toner bundle is most of it. Payment is due 30 days after the invoice date.",
     False),
])
def test_an_output_is_a_paste_when_most_of_its_words_are_source_lines(text, pasted):
    assert is_paste(text, KEYS) is pasted


def test_the_check_fails_a_pasted_mail_or_document_and_passes_an_answer(ws, registry):
    keys = line_keys([SOURCE])
    mail = {"function": "evaluate_not_pasted",
            "args": {"doc_type": "email", "sender": "alice", "recipient": "bob", "source_lines": keys}}
    doc = {"function": "evaluate_not_pasted", "args": {"doc_type": "docx", "file": "data/note.docx",
                                                       "source_lines": keys}}
    assert validate_criteria([mail, doc]) == []
    assert evaluate_criteria(ws, [mail, doc]).passed  # nothing written yet: other checks ask for it
    send = {"sender": "alice", "recipient": "bob", "subject": "Invoice", "content": "INV-2024-6843 totals 3249.61."}
    assert registry.call(ws, "email_send_email", send).ok
    assert registry.call(ws, "word_write_to_file", {"file_path": "data/note.docx", "content": SOURCE}).ok
    mail_result, doc_result = evaluate_criteria(ws, [mail, doc]).results
    assert mail_result.passed and not doc_result.passed and "copied out" in doc_result.reason
    assert registry.call(ws, "email_send_email", {**send, "content": SOURCE}).ok
    assert not evaluate_criteria(ws, [mail]).passed  # every message between the two is read


@pytest.mark.parametrize("lines", [[], ["not-hex-digits"], ["abc"]])
def test_bad_source_lines_are_one_error_naming_the_criterion(lines):
    problems = validate_criteria([{"function": "evaluate_not_pasted", "args": {
        "doc_type": "docx", "file": "data/a.docx", "source_lines": lines}}])
    assert len(problems) == 1 and "evaluation[0]" in str(problems[0]), problems


def _draft(content: str) -> TaskDraft:
    return TaskDraft(description="d", intent="i", subtasks=["s"], memory=[], query="q", evaluation=[], oracle=[
        ToolCall("system_read_text", {"file_path": "data/invoice.txt"}),
        ToolCall("word_write_to_file", {"file_path": "data/note.docx", "content": content})])


def test_the_generator_adds_the_check_where_the_oracle_answers_and_not_where_it_forwards(ws):
    (ws.root / "data" / "invoice.txt").write_text(SOURCE)
    answered = paste_checks(_draft("Cover note\nInvoice INV-2024-6843 totals 3249.61."), ws).evaluation
    assert [c["function"] for c in answered] == ["evaluate_not_pasted"] and validate_criteria(answered) == []
    assert set(answered[0]["args"]["source_lines"]) == KEYS  # the lines the read tool showed
    assert paste_checks(_draft(SOURCE), ws).evaluation == []  # a forward: there the paste is the answer
    assert to_officebench(answered).widened and not to_officebench(answered).lost


def test_the_read_tools_are_made_once_and_again_for_new_apps(monkeypatch):
    from office_env import apps
    from office_env.tools import default_registry, read_only_registry

    kept = read_only_registry()
    assert kept is read_only_registry()  # made once
    assert kept.names == default_registry().read_only().names and kept.names
    assert not any(tool.writes for tool in kept)
    monkeypatch.setattr(apps, "_generation", apps.generation() + 1)  # as register_app does
    assert read_only_registry() is not kept and read_only_registry().names == default_registry().read_only().names
