"""Task families where a value from one app is judged against another app's figures before
anything is written: a quote against the budget line the chat names, a region's best product
written up and shared as a PDF.
"""

from __future__ import annotations

import re
from typing import cast

from generators.english import column_words
from generators.families.base import (
    QUOTE_RE,
    FamilyInput,
    additive,
    call,
    cell,
    computed,
    draft,
    family,
    fmt,
    inbox_of,
    key_dynamics,
    mail,
    misreadings_of,
    name_of,
    number,
    out_name,
    own_words,
    piece,
    sender_user,
    stem,
    tables,
)
from generators.families.sheet_work import group_columns, label_column
from generators.model import TaskDraft
from office_env.evaluation import builders as cr

_SOLD_HEADERS = ("product", "item", "service")  # what a best seller is chosen among
_WORK_RE = re.compile(r"on the ([a-z][a-z ]*?) work\b")  # what a quote is for: its budget line
VERDICT_RULE = "it is within budget when the budget covers the quote, else over budget"
VERDICT_WORDS = "within budget or over budget"
_PERIOD_RE = re.compile(r"^(?:Q[1-4]|H[12]|FY ?\d{2,4}|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*)"
                        r"(?: \d{4})?$")


@family("quote_vs_budget", ("email", "excel", "word"), "hard")
def quote_vs_budget(inp: FamilyInput) -> TaskDraft | None:
    """Judge the quote in a colleague's mail against the budget line of the work it is for, in the
    period the chat names, write the verdict and the margin into a memo, and answer the mail with
    them: the mail gives the quote and whom to answer, the sheet the budget."""
    # QUOTE_RE's figure is a number
    quotes = [(m, cast(float, number(match.group(1).split()[0])), work.group(1)) for m in inbox_of(inp.notes, inp.user)
              for match, work in [(QUOTE_RE.search(own_words(m)), _WORK_RE.search(own_words(m)))] if match and work]
    if not quotes:
        return None
    message, quote, work = inp.rng.choice(quotes)
    options = []
    for t in tables(inp.notes):  # a sheet of budget lines by period that holds the quoted work's line
        label = label_column(t)
        periods = [c for c in t.numeric_columns() if _PERIOD_RE.match(t.headers[c].strip())]
        if (label is not None and len(periods) >= 2 and len(t.rows) <= 40
                and any(str(r[label]).lower() == work for r in t.rows)):
            options.append((t, label, periods))
    if not options:
        return None
    table, label, periods = inp.rng.choice(options)
    cells = {(r[label], table.headers[c]): v for r in table.rows if str(r[label]).lower() == work for c in periods
             for v in [number(r[c]) if c < len(r) else None] if v is not None}
    quarter = f"Q{(inp.now.month - 1) // 3 + 1}"
    here = [k for k in sorted(cells) if k[1] == quarter]
    guess = f"{here[0][0]} in {quarter}" if here else None
    elsewhere = sorted(k for k in cells if k[1] != quarter and (not here or cells[k] != cells[here[0]]))
    if guess is None or not elsewhere:
        return None
    line, period = inp.rng.choice(elsewhere)  # another quarter's figure: the intent alone gets the margin wrong
    budget = cells[(line, period)]
    margin = round(budget - quote, 2)
    verdict = "within budget" if margin >= 0 else "over budget"
    out = out_name(inp, "quote_check", "docx")
    said = f"{line} in {period}"
    others = [f"{k} in {p}" for k, p in cells if (budget - quote >= 0) != (cells[(k, p)] - quote >= 0)]
    superseded, distractors = key_dynamics(inp, said, others, "{} was the line for last year's quote")
    sender = message.get("from", "").split("@")[0]
    sender_name = name_of(inp, sender)
    if sender_name is None:
        return None
    about = "the quote check"
    m1 = piece(1, "fact", f"the quote to check is the one in {sender.capitalize()}'s mail about {message['subject']}",
               message["subject"], cue="mail_subject", about=about)
    m2 = piece(2, "fact", f"check it against the budget for {said}; {VERDICT_RULE}", said, cue="budget_line",
               about=about, superseded=superseded, distractors=distractors)
    m3 = piece(3, "action", f"write the verdict into {stem(out)}", stem(out), cue="output_file", about=about, thread=2)
    m4 = piece(4, "action", f"the verdict says {VERDICT_WORDS}, with the margin", VERDICT_WORDS, cue="verdict_words",
               about=about)
    m5 = piece(5, "action", f"answer {sender_name}'s mail with the verdict and the margin too", sender_name,
               cue="recipient", about="the answer on the quote", thread=2)

    def finding(value: str) -> str:
        name, _, when = value.rpartition(" in ")
        left = round(cells[(name, when)] - quote, 2)
        word = "within budget" if left >= 0 else "over budget"
        return f"The quote of {fmt(quote)} is {word} for {value}: margin {fmt(abs(left))}."

    def plan(mid: str, value: str) -> list:
        return [call("email_read_email", user=inp.user, email_id=message["id"]),
                call("excel_read_file", file_path=table.file),
                call("word_write_to_file", file_path=out, content=f"Quote check\n{finding(value)}"),
                mail(inp, sender, sender_name, f"Re: {message['subject']}", finding(value))]

    opposite = "over budget" if verdict == "within budget" else "within budget"
    return draft(
        inp,
        description=f"Compare the quote in the mail '{message['subject']}' ({fmt(quote)}) with the {period} budget of "
                    f"{line} in {table.file} ({fmt(budget)}) and write into {out} whether it is {verdict} and by how "
                    f"much ({fmt(abs(margin))}), and answer {sender_name} ({sender}) with the same.",
        subtasks=["Read the quote in the mail.", f"Find the budget line in {table.file}.",
                  f"Write the verdict and the margin into {out}.", f"Answer {sender_name}'s mail with them."],
        evaluation=[cr.contain(doc_type="docx", file=out, keywords=[verdict, fmt(abs(margin))]),
                    # the chat says both verdict words: a note that echoes both must not pass
                    cr.not_contain(doc_type="docx", file=out, keywords=[opposite]),
                    cr.email_sent(sender=inp.user, recipient=sender, body_keywords=[verdict, fmt(abs(margin))]),
                    cr.email_not_sent(sender=inp.user, recipient=sender, body_keywords=[opposite])],
        memory=[m1, m2, m3, m4, m5],
        oracle=plan("m2", said),
        baseline=plan("m2", guess),  # the intent alone: this quarter's line
        misreadings=misreadings_of([m2], plan),
        computed=[computed(abs(margin), "difference", [fmt(budget), fmt(quote)] if margin >= 0 else
                           [fmt(quote), fmt(budget)], given=("m2",),
                           note=f"{period} budget of {line} against the quote"),
                  computed(verdict, "rule", [], rule=VERDICT_RULE, given=("m2", "m4"))],
    )


def _sales_options(inp: FamilyInput) -> list[tuple]:
    """Every (table, group column, sold-item column, additive amount column) a best seller can be found in."""
    options = []
    for t in tables(inp.notes):
        groups = [c for c in group_columns(t) if t.headers[c].strip().lower() not in ("date", "day", "month")]
        items = [c for c in groups if t.headers[c].strip().lower() in _SOLD_HEADERS]
        amounts = [c for c in t.numeric_columns() if additive(t.headers[c])]
        for g in groups:
            for item in items:
                if item != g:
                    for c in amounts:
                        options.append((t, g, item, c))
    return options


def _item_totals(table, g: int, item: int, c: int, key: str) -> tuple[list[str], list]:
    """Each item's total in group ``key`` as flat (name, total) pairs, and how each total is computed."""
    amounts: dict[str, list[float]] = {}  # per item of the group, its amounts in the sheet's order: one pass
    for r, v in zip(table.rows, table.column(c)):
        if r[g] == key:
            amounts.setdefault(r[item], []).append(v)
    pairs: list[str] = []
    for name in sorted(amounts):
        pairs += [name, fmt(round(sum(amounts[name]), 2))]
    sums = [computed(float(pairs[i + 1]), "sum", [fmt(v) for v in amounts[pairs[i]]],
                     given=("m1",), note=f"{table.headers[c]} of {pairs[i]} in {key}")
            for i in range(0, len(pairs), 2)]
    return pairs, sums


def _best_items(table, g: int, item: int, c: int) -> dict[str, tuple[str, float] | None]:
    """Per value of the group column, its item with the highest total (the total rounded as it
    grows) and that total, or None when two items share it. One pass over the sheet: asked of
    every group, a pass per group grew with groups times rows."""
    running: dict[str, dict[str, float]] = {}
    for r, v in zip(table.rows, table.column(c)):
        sums = running.setdefault(r[g], {})
        sums[r[item]] = round(sums.get(r[item], 0) + v, 2)
    best: dict[str, tuple[str, float] | None] = {}
    for key, sums in running.items():
        top = max(sums.values())
        winners = [k for k, v in sums.items() if v == top]
        best[key] = (winners[0], top) if len(winners) == 1 else None
    return best


@family("top_product_pdf", ("excel", "word", "pdf"), "hard")
def top_product_pdf(inp: FamilyInput) -> TaskDraft | None:
    """Name the best-selling item of the group the chat names (by the measure the chat names), log
    it in a new sheet, write it up and share it as a PDF. The ranked column is what is sold or
    bought (a product, an item), the group a text column that is not a date."""
    options = _sales_options(inp)
    if not options:
        return None
    table, g, item, c = inp.rng.choice(options)

    best = _best_items(table, g, item, c)  # every value of the group column is a key
    keys = [k for k in sorted(best) if best[k] is not None]
    if not keys:
        return None
    key = inp.rng.choice(keys)
    winner, top = best[key]  # type: ignore[misc]  # keys have a single best
    doc = out_name(inp, "best_seller", "docx")
    pdf = doc[:-5] + ".pdf"
    log = out_name(inp, "best_seller_log", "xlsx")
    others = [k for k in keys if best[k][0] != winner]  # type: ignore[index]  # likewise
    superseded, distractors = key_dynamics(inp, key, others, "last month's note was the one about {}")
    about = "the best-seller note"
    what = column_words(table.headers[item])
    m1 = piece(1, "fact", f"the best-seller note is about {key}", key, cue="filter_value", about=about,
               superseded=superseded, distractors=distractors)
    m2 = piece(2, "action", f"save the note as {stem(doc)} and share a PDF of it", stem(doc), cue="output_file",
               about=about, thread=2)
    m3 = piece(3, "fact", f"the figures are in {stem(table.file)}", stem(table.file), cue="source_file", about=about)
    m4 = piece(4, "fact", f"best seller means the highest total in the {table.headers[c]} column",
               table.headers[c], cue="column_total", about=about)
    m5 = piece(5, "action", f"log the best seller in a new sheet, {stem(log)}", stem(log), cue="output_file",
               about=about, thread=2)

    def plan(mid: str, value: str) -> list:
        name, amount = best[value]  # type: ignore[misc]  # a plan is made for a key's value
        return [call("excel_read_file", file_path=table.file), call("excel_create_new_file", file_path=log),
                call("excel_set_cell", file_path=log, row=1, col=1, value=table.headers[item]),
                call("excel_set_cell", file_path=log, row=1, col=2, value=table.headers[c]),
                call("excel_set_cell", file_path=log, row=2, col=1, value=name),
                call("excel_set_cell", file_path=log, row=2, col=2, value=cell(amount)),
                call("word_write_to_file", file_path=doc,
                     content=f"Best seller in {value}: {name}, {fmt(amount)} {column_words(table.headers[c])}."),
                call("word_convert_to_pdf", file_path=doc)]

    pairs, sums = _item_totals(table, g, item, c, key)
    if len(sums) > 40:
        return None
    # a finding, not a paste of the sheet: the runners-up must not be in the note
    totals = {pairs[i]: float(pairs[i + 1]) for i in range(0, len(pairs), 2)}
    runners = [n for n in sorted(totals, key=lambda n: -totals[n])
               if n != winner and n.lower() not in winner.lower() and winner.lower() not in n.lower()][:3]
    refuse = [cr.not_contain(doc_type="pdf", file=pdf, keywords=runners)]
    return draft(
        inp,
        description=f"In {table.file}, find the {table.headers[item]} with the highest total {table.headers[c]} where "
                    f"{table.headers[g]} is {key} ({winner}, {fmt(top)}), log it with its total in a new sheet "
                    f"{log}, write it with that total into {doc}, and convert {doc} to "
                    f"{pdf}.",
        subtasks=[f"Read {table.file}.", f"Total {column_words(table.headers[c])} per {what} for {key}.",
                  f"Log the best one in {log}.", f"Write it into {doc}.", f"Convert it to {pdf}."],
        # the log is laid out as its writer likes: it holds the best seller and its total, no runner-up
        evaluation=[cr.contain(doc_type="xlsx", file=log, keywords=[winner, *([fmt(top)] if top >= 100 else [])]),
                    *([cr.not_contain(doc_type="xlsx", file=log, keywords=runners)] if runners else []),
                    cr.file_exist(file=pdf),
                    cr.contain(doc_type="pdf", file=pdf, keywords=[winner, fmt(top)]),
                    *(refuse if runners else [])],
        memory=[m1, m2, m3, m4, m5],
        oracle=plan("m1", key),
        baseline=[call("excel_read_file", file_path=table.file),
                  call("word_write_to_file", file_path="data/best_seller.docx", content="Best seller: to be checked."),
                  call("word_convert_to_pdf", file_path="data/best_seller.docx")],
        misreadings=misreadings_of([m1], plan),
        computed=[*sums, computed(winner, "argmax", pairs, given=("m1",), note=f"best {what} in {key}")],
    )


_REGION_RE = re.compile(r"The (\w+) region had")
_LOGGED_RE = re.compile(r"are logged in (\S+?\.xlsx)")


@family("sales_mail_reply", ("email", "excel"), "medium")
def sales_mail_reply(inp: FamilyInput) -> TaskDraft | None:
    """Reply to a colleague's sales mail with the total of the region it praises, worked out from the
    sheet (which colleague's mail, which sheet and which measure are said in the chat)."""
    mails = [(m, match.group(1)) for m in inbox_of(inp.notes, inp.user)
             for match in [_REGION_RE.search(own_words(m))] if match and name_of(inp, sender_user(m))]
    sheets = [(t, g, c) for t in tables(inp.notes) for g in group_columns(t) for c in t.numeric_columns()
              if additive(t.headers[c]) and "revenue" in t.headers[c].lower()]
    found = [(m, region, t, g, c) for m, region in mails for t, g, c in sheets if any(r[g] == region for r in t.rows)]

    def named(m: dict) -> str:  # the sheet the mail itself points to
        logged = _LOGGED_RE.search(own_words(m))
        return f"data/{logged.group(1)}" if logged else ""

    # the chat points to another month's sheet than the mail does: the mail alone totals the wrong one
    found = [f for f in found if named(f[0]) and f[2].file != named(f[0])
             and any(t.file == named(f[0]) and any(r[f[3]] == f[1] for r in t.rows) for t, _, _ in sheets)]
    if not found:
        return None
    message, region, table, g, c = inp.rng.choice(found)
    rows = [v for r, v in zip(table.rows, table.column(c)) if r[g] == region]
    total = round(sum(rows), 2)
    mail_sheet = next(t for t, _, _ in sheets if t.file == named(message))
    if table.headers[c] not in mail_sheet.headers or table.headers[g] not in mail_sheet.headers:
        return None
    c2, g2 = mail_sheet.headers.index(table.headers[c]), mail_sheet.headers.index(table.headers[g])
    guessed = round(sum(v for r, v in zip(mail_sheet.rows, mail_sheet.column(c2)) if r[g2] == region), 2)
    if guessed == total:
        return None
    sender = cast(str, name_of(inp, sender_user(message)))  # mails come only from named colleagues
    about = "the sales reply"
    m1 = piece(1, "fact", f"the sales mail to answer is the one from {sender}", sender, cue="sender", about=about)
    # the mail names the newer month's sheet; the user wants the month before, to compare with it
    m2 = piece(2, "fact", f"the reply gives the earlier month's figures, from {stem(table.file)}, not the sheet "
                          "the mail names", stem(table.file), cue="compare_file", about=about)
    # a sales sheet holds several measures (units, revenue): the chat says which one the reply totals
    m3 = piece(3, "fact", f"the reply gives the region's total from the {table.headers[c]} column", table.headers[c],
               cue="column_total", about=about)

    def reply(sheet_file: str, amount: float) -> list:
        return [call("email_read_email", user=inp.user, email_id=message["id"]),
                call("excel_read_file", file_path=sheet_file),
                mail(inp, sender_user(message), sender, f"Re: {message['subject']}",
                     f"To compare: the {region} region's {column_words(table.headers[c])} "
                     f"in {stem(sheet_file)} comes to {fmt(amount)}.")]

    return draft(
        inp,
        description=f"Reply to {sender}'s mail '{message['subject']}' with the total {table.headers[c]} "
                    f"of the {region} region in {table.file} ({fmt(total)}).",
        subtasks=["Read the sales mail.", f"Total the {region} rows of {table.file}.", "Reply with the total."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=sender_user(message), body_keywords=[fmt(total)])],
        memory=[m1, m2, m3],
        oracle=reply(table.file, total),
        baseline=reply(mail_sheet.file, guessed),  # the intent alone totals the sheet the mail names
        misreadings=[],
        computed=[computed(total, "sum", [fmt(v) for v in rows], given=("m3",),
                           note=f"{table.headers[c]} of {region}")],
    )
