"""Task families that work on a sheet's rows: a group the chat names, a threshold it sets, two
periods it compares. The chat says which group, threshold or periods; the answer comes from the
rows, so neither the chat nor the sheet alone is enough.
"""

from __future__ import annotations

import re
from typing import Any, Callable, cast

from generators.english import column_words, join_and
from generators.families.base import (
    FamilyInput,
    Table,
    additive,
    answer_from,
    call,
    computed,
    distinct,
    draft,
    excluding_past,
    family,
    fmt,
    key_dynamics,
    mail,
    misreadings_of,
    out_name,
    piece,
    send,
    stem,
    tables,
)
from generators.model import MemoryPiece, TaskDraft
from office_env.evaluation import builders as cr

MAX_LISTED = 8  # a list longer than this is not something one writes into an email by hand


def _colleague(inp: FamilyInput, *taken: str) -> tuple[str, str] | None:
    options = [(u, n) for u, n in inp.colleagues if all(distinct(n, t) for t in taken)]
    return inp.rng.choice(options) if options else None


def group_columns(table: Table) -> list[int]:
    """Text columns whose values repeat (a region, a department, a product): rows form groups."""
    return table.group_columns()


def label_column(table: Table) -> int | None:
    return table.label_column()


def _group_pieces(inp: FamilyInput, file: str, key: str, answers: dict[str, Any], near_text: str, about: str,
                  asked: str, source: str) -> tuple[MemoryPiece, MemoryPiece]:
    """The pieces of a question about one group: which group (sometimes said over another whose
    answer differs, see :func:`key_dynamics`), and which sheet holds the rows."""
    superseded, distractors = key_dynamics(inp, key, [k for k in answers if answers[k] != answers[key]], near_text)
    return (piece(1, "fact", asked, key, cue="filter_value", about=about, superseded=superseded,
                  distractors=distractors),
            piece(2, "fact", source, stem(file), cue="source_file", about=about))


# -- a group's total, emailed -------------------------------------------------------------------

@family("group_total_email", ("excel", "email"), "medium")
def group_total_email(inp: FamilyInput) -> TaskDraft | None:
    """Email a colleague the total of one group (a region, a product) of a sheet's amount column."""
    options = [(t, g, c) for t in tables(inp.notes) for g in group_columns(t) for c in t.numeric_columns()
               if additive(t.headers[c])]
    person = _colleague(inp)
    if not options or person is None:
        return None
    table, g, c = inp.rng.choice(options)
    who, name = person
    groups = sorted({r[g] for r in table.rows})
    totals = {k: round(sum(v for r, v in zip(table.rows, table.column(c)) if r[g] == k), 2) for k in groups}
    key = inp.rng.choice(groups)
    amount_word = column_words(table.headers[c])
    superseded, distractors = key_dynamics(inp, key, [k for k in groups if totals[k] != totals[key]],
                                        "{} was last month's question, and that one is answered")
    about = f"the {amount_word} figure"
    m1 = piece(1, "fact", f"the total {amount_word} that was asked for is the one for {key}", key, cue="filter_value",
               about=about,
               superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"{name} is the one who asked for that total", name, cue="recipient", about=about,
               thread=2)
    m3 = piece(3, "fact", f"the figures are in {stem(table.file)}", stem(table.file), cue="source_file", about=about)

    def plan(value: str) -> list:
        return [call("excel_read_file", file_path=table.file),
                mail(inp, who, name, f"{table.headers[c]} for {value}",
                     f"The total {amount_word} for {value} in {stem(table.file)} is "
                     f"{fmt(totals[value])}.")]

    rows = [v for r, v in zip(table.rows, table.column(c)) if r[g] == key]
    return draft(
        inp,
        description=f"Add up the {table.headers[c]} of the rows of {table.file} whose {table.headers[g]} is {key} and "
                    f"email the total to {name} ({who}).",
        subtasks=[f"Read {table.file}.", f"Add up {amount_word} for {key}.", f"Email the total to {name}."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=who, body_keywords=[fmt(totals[key])])],
        memory=[m1, m2, m3],
        oracle=plan(key),
        baseline=[call("excel_read_file", file_path=table.file),
                  send(inp, inp.colleagues[0][0], table.headers[c],
                       f"The total is {fmt(round(sum(table.column(c)), 2))}.")],
        misreadings=misreadings_of([m1], lambda mid, value: plan(value)),
        computed=[computed(totals[key], "sum", [fmt(v) for v in rows], given=("m1",),
                           note=f"{table.headers[c]} where {table.headers[g]} is {key}")],
    )


# -- a group's average, in the answer file ----------------------------------------------------

@family("group_average", ("excel",), "easy")
def group_average(inp: FamilyInput) -> TaskDraft | None:
    """The average of a column over one group the chat names, written in the answer file."""
    options = [(t, g, c) for t in tables(inp.notes) for g in group_columns(t) for c in t.numeric_columns()]
    if not options:
        return None
    table, g, c = inp.rng.choice(options)
    groups = sorted({r[g] for r in table.rows})
    means = {k: round(sum(vals) / len(vals), 2) for k in groups
             for vals in ([v for r, v in zip(table.rows, table.column(c)) if r[g] == k],)}
    key = inp.rng.choice(groups)
    value_word = column_words(table.headers[c])
    m1, m2 = _group_pieces(inp, table.file, key, means, "the average for {} was already worked out at the last review",
                           f"the average {value_word}", f"the average {value_word} is wanted for {key} only",
                           f"the numbers are in {stem(table.file)}")

    def plan(value: str) -> list:
        return answer_from("excel", table.file, fmt(means[value]))

    rows = [v for r, v in zip(table.rows, table.column(c)) if r[g] == key]
    return draft(
        inp,
        description=f"Work out the average {table.headers[c]} of the rows of {table.file} whose {table.headers[g]} is "
                    f"{key} (to two decimals) and write it into data/answer.txt.",
        subtasks=[f"Read {table.file}.", f"Average {value_word} over {key}.", "Write it into data/answer.txt."],
        evaluation=[cr.answer(number=means[key], tolerance=0.01)],
        memory=[m1, m2],
        oracle=plan(key),
        baseline=answer_from("excel", table.file, fmt(round(sum(table.column(c)) / len(table.rows), 2))),
        misreadings=misreadings_of([m1], lambda mid, value: plan(value)),
        computed=[computed(means[key], "mean", [fmt(v) for v in rows], given=("m1",),
                           note=f"{table.headers[c]} where {table.headers[g]} is {key}")],
    )


# -- rows under a threshold, listed in an email ------------------------------------------------

def _threshold_family(name: str, wanted: Callable[[str], bool], what: str, near_text: str,
                      marks: tuple[int, ...]) -> None:
    """Register a family that emails the labels of the rows whose column is below a threshold said
    in the chat (people under a pass mark, items under a reorder level)."""

    @family(name, ("excel", "email"), "medium")
    def build(inp: FamilyInput) -> TaskDraft | None:
        options = [(t, label, c) for t in tables(inp.notes) for label in [label_column(t)] if label is not None
                   for c in t.numeric_columns() if wanted(t.headers[c])]
        person = _colleague(inp)
        if not options or person is None:
            return None
        table, label, c = inp.rng.choice(options)
        who, colleague = person
        column_values = table.column(c)
        limit = min(MAX_LISTED, len(column_values) // 2)
        cuts = [float(m) for m in marks if 1 <= sum(x < m for x in column_values) <= limit]
        if not cuts:
            return None
        cut = inp.rng.choice(cuts)
        below = [r[label] for r, v in zip(table.rows, table.column(c)) if v < cut]
        lower = [fmt(v) for v in cuts if v < cut and sum(x < v for x in table.column(c)) < len(below)]
        # an earlier or near-miss threshold is lower, so it lists fewer rows and misses some
        superseded, distractors = key_dynamics(inp, fmt(cut), lower, near_text)
        column = column_words(table.headers[c])
        about = f"the {what} list"
        m1 = piece(1, "fact", f"anything under {fmt(cut)} goes on the {what} list", fmt(cut),
                   cue="threshold", about=about, superseded=superseded, distractors=distractors)
        m2 = piece(2, "fact", f"{colleague} should get the {what} list by email", colleague, cue="recipient",
                   about=about, thread=2)
        m3 = piece(3, "fact", f"the {what} list comes from {stem(table.file)}", stem(table.file), cue="source_file",
                   about=about)
        m4 = piece(4, "fact", f"the {what} list goes by the {table.headers[c]} column", table.headers[c],
                   cue="column_total", about=about)  # a sheet may hold several scores or counts

        def plan(threshold: str) -> list:
            t = float(threshold)
            names = [r[label] for r, v in zip(table.rows, table.column(c)) if v < t]
            return [call("excel_read_file", file_path=table.file),
                    mail(inp, who, colleague, f"{what.capitalize()} list",
                         f"Below {fmt(t)} {column}: {join_and(names)}.")]

        return draft(
            inp,
            description=f"Find the rows of {table.file} whose {table.headers[c]} is below {fmt(cut)} and email their "
                        f"{table.headers[label]} values ({join_and(below)}) to {colleague} ({who}).",
            subtasks=[f"Read {table.file}.", f"List every {column_words(table.headers[label])} under the threshold.",
                      f"Email the list to {colleague}."],
            evaluation=[cr.email_sent(sender=inp.user, recipient=who, body_keywords=below,
                                      **excluding_past(table.rows, label, column_values, cut, below,
                                                       (colleague, inp.user_name)))],
            memory=[m1, m2, m3, m4],
            oracle=plan(fmt(cut)),
            baseline=[call("excel_read_file", file_path=table.file),
                      send(inp, inp.colleagues[0][0], f"{what.capitalize()} list", f"Lowest: {table.rows[0][label]}.")],
            misreadings=misreadings_of([m1], lambda mid, value: plan(value)),
            computed=[computed(len(below), "count", below, given=("m1",),
                               note=f"{table.headers[label]} with {table.headers[c]} below {fmt(cut)}")],
        )


def _is_score(header: str) -> bool:
    return any(w in header.lower() for w in ("final", "score", "grade", "module", "result"))


def _is_stock(header: str) -> bool:
    return any(w in header.lower() for w in ("quantity", "stock", "on hand", "units in"))


_threshold_family("pass_mark_email", _is_score, "follow-up", "the pass mark for the old course was {}",
                  (50, 55, 60, 65, 70, 75, 80, 85))
_threshold_family("reorder_email", _is_stock, "reorder", "the warehouse uses {} for the big items",
                  (5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150))


# -- the largest change between two periods, in a memo -----------------------------------------

@family("period_change_memo", ("excel", "word"), "hard")
def period_change_memo(inp: FamilyInput) -> TaskDraft | None:
    """A memo naming the row with the largest increase between two period columns the chat names,
    and by how much."""
    options = []
    for t in tables(inp.notes):
        label = label_column(t)
        periods = [c for c in t.numeric_columns() if additive(t.headers[c])]
        if label is not None and len(periods) >= 3 and len(t.rows) <= 40:  # one computed change per row
            options.append((t, label, periods))
    if not options:
        return None
    table, label, periods = inp.rng.choice(options)
    pairs = [(a, b) for i, a in enumerate(periods) for b in periods[i + 1:]]

    def changes(a: int, b: int) -> dict[str, float]:
        return {r[label]: round(vb - va, 2) for r, va, vb in zip(table.rows, table.column(a), table.column(b))}

    def winner(a: int, b: int) -> str | None:
        diff = changes(a, b)
        best = max(diff.values())
        tops = [k for k, v in diff.items() if v == best]
        return tops[0] if len(tops) == 1 and best > 0 else None

    pairs = [(a, b) for a, b in pairs if winner(a, b) is not None]
    if not pairs:
        return None
    # the intent alone compares the last two periods; the task asks for a pair where that gives another answer
    last = (periods[-2], periods[-1])
    guessed = winner(*last)
    pairs_set = [(x, y) for x, y in pairs if (x, y) != last and winner(x, y) != guessed]
    if not pairs_set:
        return None
    a, b = inp.rng.choice(pairs_set)
    said = {f"{table.headers[x]} to {table.headers[y]}": (x, y) for x, y in pairs}
    key = f"{table.headers[a]} to {table.headers[b]}"
    others = [k for k, (x, y) in said.items() if winner(x, y) != winner(a, b)]
    superseded, distractors = key_dynamics(inp, key, others, "{} was the comparison in last year's pack")
    out = out_name(inp, "change", "docx")
    about = "the change memo"
    m1 = piece(1, "fact", f"the memo compares {key}", key, cue="periods", about=about, superseded=superseded,
               distractors=distractors)
    m2 = piece(2, "action", f"the memo is saved as {stem(out)}", stem(out), cue="output_file", about=about, thread=2)
    m3 = piece(3, "fact", f"the numbers are in {stem(table.file)}", stem(table.file), cue="source_file", about=about)

    def content(value: str) -> str:
        x, y = said[value]
        top = cast(str, winner(x, y))  # the pairs said all have a winner
        return (f"Change memo\nLargest increase from {value}: {top}, up {fmt(changes(x, y)[top])}.")

    def plan(mid: str, value: str) -> list:
        return [call("excel_read_file", file_path=table.file), call("word_write_to_file", file_path=out,
                                                                    content=content(value))]

    top = cast(str, winner(a, b))  # the pairs kept all have a winner
    diff = changes(a, b)
    steps: list[dict[str, Any]] = []
    for r, va, vb in zip(table.rows, table.column(a), table.column(b)):
        steps.append(computed(diff[r[label]], "difference", [fmt(vb), fmt(va)], given=("m1",),
                              note=f"{r[label]}: {table.headers[b]} minus {table.headers[a]}"))
    pairs_in = [x for r in table.rows for x in (r[label], fmt(diff[r[label]]))]
    steps.append(computed(top, "argmax", pairs_in, given=("m1",), note="largest increase"))
    return draft(
        inp,
        description=f"In {table.file}, find the {table.headers[label]} whose value grew most from {table.headers[a]} "
                    f"to {table.headers[b]} ({top}, up {fmt(diff[top])}) and write it, with the increase, into {out}.",
        subtasks=[f"Read {table.file}.", f"Work out each change from {table.headers[a]} to {table.headers[b]}.",
                  f"Write the largest one into {out}."],
        evaluation=[cr.contain(doc_type="docx", file=out, keywords=[top, fmt(diff[top])])],
        memory=[m1, m2, m3],
        oracle=plan("m1", key),
        baseline=[call("excel_read_file", file_path=table.file),
                  call("word_write_to_file", file_path=out,
                       content=f"Change memo\nLargest increase: {guessed}, up "
                               f"{fmt(changes(*last).get(guessed, 0)) if guessed else 0}.")],
        misreadings=misreadings_of([m1], plan),
        computed=steps,
    )


_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")


@family("group_headcount", ("excel",), "easy")
def group_headcount(inp: FamilyInput) -> TaskDraft | None:
    """How many rows (people, orders) belong to the group the chat names, in the answer file."""
    # not by date: a small count is in the dates the chat says (4 orders on 2025-04-07, near 2025-04-03)
    options = [(t, g) for t in tables(inp.notes) for g in group_columns(t)
               if not all(_ISO_DAY.match(str(r[g])) for r in t.rows)]
    if not options:
        return None
    table, g = inp.rng.choice(options)
    counts = {k: sum(r[g] == k for r in table.rows) for k in sorted({r[g] for r in table.rows})}
    keys = [k for k in sorted(counts) if str(counts[k]) not in str(k)]  # nor a count inside its group's name
    if not keys:
        return None
    key = inp.rng.choice(keys)
    m1, m2 = _group_pieces(inp, table.file, key, counts, "{} was counted for the last report",
                           f"the {column_words(table.headers[g])} count", f"the count is for {key} only",
                           f"count the rows of {stem(table.file)}")
    label = label_column(table)

    def plan(value: str) -> list:
        return answer_from("excel", table.file, str(counts[value]))

    members = [r[label] if label is not None else str(i) for i, r in enumerate(table.rows) if r[g] == key]
    return draft(
        inp,
        description=f"Count the rows of {table.file} whose {table.headers[g]} is {key} ({counts[key]}) and write the "
                    "number into data/answer.txt.",
        subtasks=[f"Read {table.file}.", f"Count the rows for {key}.", "Write the count into data/answer.txt."],
        evaluation=[cr.answer(number=counts[key], tolerance=0)],
        memory=[m1, m2],
        oracle=plan(key),
        baseline=answer_from("excel", table.file, str(len(table.rows))),
        misreadings=misreadings_of([m1], lambda mid, value: plan(value)),
        computed=[computed(counts[key], "count", members, given=("m1",),
                           note=f"rows where {table.headers[g]} is {key}")],
    )
