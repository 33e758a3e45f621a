"""Checks need what only the right work holds, and let a right answer carry its natural context.

Replayed over tasks the offline families build on real synthesized offices: a mail passing on
notes must hold the notes' own specifics (not only their title, which their older draft shares);
an answer may give the whole table's count beside the group's; a count may be written in words;
a date or a clock time is not a figure of its own.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from generators.families import FAMILIES
from generators.families.follow_up import promise
from generators.hedges import context_answers, exclude_hedges, written_answers
from office_env import Workspace, default_registry, evaluate_criteria
from office_env.evaluation.keywords import spelled_numbers
from office_env.synthesis import make_world, write_workspace
from office_env.synthesis.common import NEAR_MISS_MARK
from surfers import explore, office_apps

pytestmark = pytest.mark.slow

WORLD_SEEDS = (0, 1, 2, 3, 4, 5)
NUMBER_WORDS = ("two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
                "seventeen eighteen nineteen twenty").split()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    out = []
    for seed in WORLD_SEEDS:
        world = make_world(seed)
        testbed = tmp_path_factory.mktemp(f"context-world{seed}") / "testbed"
        write_workspace(world, testbed)
        out.append((world, testbed, {app: explore(app, Workspace(testbed, now=world.now)) for app in office_apps()}))
    return out


def drafts_over(name: str, worlds, salts: int):
    for world, testbed, notes in worlds:
        for salt in range(salts):
            inp = FAMILIES[name].input(random.Random(f"{world.seed}:{salt}"), notes, world.user.user, world.user.name,
                                       tuple((p.user, p.name) for p in world.colleagues), world.now)
            draft = FAMILIES[name].build(inp)
            if draft is not None:
                yield world, testbed, notes, salt, draft


def passes(testbed: Path, tmp_path: Path, criteria: list[dict], calls: list[tuple[str, dict]], label: str) -> bool:
    ws = Workspace(testbed).copy_to(tmp_path / label)
    results = default_registry().run(ws, calls)
    assert all(r.ok for r in results), [r.to_dict() for r in results if not r.ok]
    return evaluate_criteria(ws, criteria).passed


def test_notes_mailed_need_their_own_specifics_not_the_title_nor_the_older_draft(worlds, tmp_path):
    """The body check held the title and two words of a line that often held the title too: a
    one-line mention passed, and so did the older draft kept beside the notes (same title)."""
    built = older_seen = 0
    for world, testbed, notes, salt, draft in drafts_over("notes_to_email", worlds, 4):
        built += 1
        read = next(c.args["file_path"] for c in draft.oracle if c.tool == "word_read_file")
        files = {f["file"]: f for f in notes["word"]["files"] if f.get("lines")}
        lines = files[read]["lines"]
        (mail,) = [c for c in draft.evaluation if c["function"] == "evaluate_email_sent"]
        to = {"sender": mail["args"]["sender"], "recipient": mail["args"]["recipient"], "subject": "The notes"}
        label = f"notes{world.seed}-{salt}"
        right = "\n".join(lines) + promise(draft)
        assert passes(testbed, tmp_path, [mail], [("email_send_email", {**to, "content": right})], label + "a")
        mention = f"the {lines[0]} notes are on the drive." + promise(draft)  # a promise kept: only the notes lack
        assert not passes(testbed, tmp_path, [mail], [("email_send_email", {**to, "content": mention})], label + "b")
        base, _, ext = read.rpartition(".")
        older = files.get(f"{base}{NEAR_MISS_MARK}.{ext}")
        if older is None:
            continue
        older_seen += 1
        stale = "\n".join(older["lines"]) + promise(draft)
        assert not passes(testbed, tmp_path, [mail], [("email_send_email", {**to, "content": stale})], label + "c")
        both = right + "\n\n" + stale  # the right notes and the draft beside them: a hedge
        assert not passes(testbed, tmp_path, [mail], [("email_send_email", {**to, "content": both})], label + "d")
    assert built and older_seen


def test_a_count_may_give_the_whole_table_s_count_as_context_but_not_a_misread_count(worlds, tmp_path):
    """"3 of the 33 claims are Travel." failed: the intent-only plan's count of every row was refused."""
    seen = 0
    for world, testbed, _, salt, draft in drafts_over("group_headcount", worlds, 4):
        (check,) = exclude_hedges(draft).evaluation
        target = int(check["args"]["number"])
        misread = {a for m in draft.misreadings for a in written_answers(m.plan)}
        whole = [a for a in context_answers(draft) if a not in misread and a != str(target)]
        if not whole:
            continue
        seen += 1
        label = f"count{world.seed}-{salt}"
        answer = f"{target} of the {whole[0]} rows."
        assert passes(testbed, tmp_path, [check], [("system_write_answer", {"text": answer})], label + "a"), answer
        for k, wrong in enumerate(sorted(misread - {str(target)})):
            hedge = f"{target} (or {wrong})"
            assert not passes(testbed, tmp_path, [check], [("system_write_answer", {"text": hedge})], f"{label}b{k}")
    assert seen


def test_an_intent_only_answer_is_refused_beside_the_right_one_outside_counts_of_a_whole(worlds):
    """The intent alone reading another file, or another column of the same sheet, answers the
    same question about another thing: "205100 (or 215000)" passed a Q4 total when the intent-only
    plan had totalled Q1 of the same sheet."""
    seen = same_file = 0
    for name in ("sheet_total", "pdf_total"):
        for *_, draft in drafts_over(name, worlds, 3):
            reads = {c.args.get("file_path") for c in draft.oracle if "file_path" in c.args}
            answers = written_answers(draft.baseline)
            (check,) = [c for c in exclude_hedges(draft).evaluation if c["function"] == "evaluate_answer"]
            if not answers or float(answers[-1]) == float(check["args"]["number"]):
                continue
            seen += 1
            same_file += all(c.args["file_path"] in reads for c in draft.baseline if "file_path" in c.args)
            assert float(answers[-1]) in [float(x) for x in check["args"].get("excludes", [])], check
    assert seen and same_file


def test_an_invoice_mismatch_may_write_its_counts_in_words(worlds, tmp_path):
    """"bills five ... ordered four" failed the keywords "5" and "4"."""
    seen = 0
    for world, testbed, _, salt, draft in drafts_over("invoice_po_check", worlds, 4):
        (mail,) = [c["args"] for c in draft.evaluation if c["function"] == "evaluate_email_sent"]
        item, billed, ordered = mail["body_keywords"][:3]
        words = {n: w for w in NUMBER_WORDS for n in spelled_numbers(w)}
        if int(billed) not in words or int(ordered) not in words:
            continue
        seen += 1
        body = f"The invoice bills {words[int(billed)]} {item}, but we only ordered {words[int(ordered)]}." + promise(draft)
        call = ("email_send_email", {"sender": mail["sender"], "recipient": mail["recipient"],
                                     "subject": " ".join(mail.get("subject_keywords", [])) or "Invoice", "content": body})
        assert passes(testbed, tmp_path, [{"function": "evaluate_email_sent", "args": mail}], [call],
                      f"po{world.seed}-{salt}"), body
    assert seen


def test_a_best_seller_s_small_total_is_not_found_in_a_date_or_a_time(worlds, tmp_path):
    """A lone "4" was found in "2024-07-04" or "4:30 pm" written beside the best seller's name."""
    seen = 0
    for world, testbed, _, salt, draft in drafts_over("top_product_pdf", worlds, 4):
        (contain,) = [c["args"] for c in draft.evaluation
                      if c["function"] == "evaluate_contain" and c["args"]["doc_type"] == "pdf"]
        winner, total = contain["keywords"]
        if not re.fullmatch(r"[1-9]|1[0-2]", str(total)):
            continue
        seen += 1
        doc = next(c.args["file_path"] for c in draft.oracle if c.tool == "word_write_to_file")
        checks = [c for c in draft.evaluation if c["function"] in ("evaluate_file_exist", "evaluate_contain")
                  and c["args"].get("doc_type", "pdf") == "pdf"]  # the PDF's checks (the log is checked apart)
        for k, text in enumerate((f"Best seller: {winner}. Written 2024-{int(total):02d}-{int(total):02d}.",
                                  f"Best seller: {winner}, talk at {total}:30 pm.")):
            calls = [("word_write_to_file", {"file_path": doc, "content": text}), ("word_convert_to_pdf", {"file_path": doc})]
            assert not passes(testbed, tmp_path, checks, calls, f"top{world.seed}-{salt}-{k}"), text
        calls = [("word_write_to_file", {"file_path": doc, "content": f"Best seller: {winner}, total {total}."}),
                 ("word_convert_to_pdf", {"file_path": doc})]
        assert passes(testbed, tmp_path, checks, calls, f"top{world.seed}-{salt}-ok")
    assert seen
