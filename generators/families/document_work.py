"""Task families built on what documents state: an invoice's due date and line items, a policy's
figures, a results sheet that decides who needs a follow-up session.

The chat says which document, what to book or log and for whom; the dates, amounts and names are
in the office, and one app's finding decides what happens in the next.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, cast

from generators.chances import DRAFT
from generators.english import column_words, join_and, possessive
from generators.families.base import (
    TIME_FORMAT,
    FamilyInput,
    Table,
    answer_from,
    booked_and_mailed,
    booking,
    calendar_of,
    call,
    chance,
    computed,
    distinct,
    docs,
    draft,
    event_check,
    excluding,
    excluding_past,
    family,
    fmt,
    left_out,
    mail,
    misreadings_of,
    near,
    number,
    out_name,
    piece,
    present_on,
    send,
    stem,
    tables,
    weekday_text,
)
from generators.families.sheet_work import MAX_LISTED, label_column
from generators.families.single_app import first_free_booking, free_slots_after, slot_rule
from generators.families.time_rules import (
    choose_window,
    hour_of,
    hour_piece,
    slot_on,
    slot_times,
    window_piece,
    with_correction,
)
from generators.model import Distractor, TaskDraft, ToolCall
from generators.value_pools import STATUS_WORDS
from office_env.evaluation import builders as cr
from office_env.money import CODE
from office_env.tools import list_files_call

_ITEM_RE = re.compile(r"^(?P<item>.+?) - (?P<qty>\d+) x (?P<price>[\d,]+\.\d{2}) = (?P<amount>[\d,]+\.\d{2})$")
_POLICY_RE = re.compile(r"^(?P<topic>[A-Z][A-Za-z ]{3,40}?)(?::| is| are| cost| costs)\b"
                        r".*?(?P<number>\d[\d,]*(?:\.\d+)?)")


def _invoices(inp: FamilyInput) -> list[dict]:
    """Invoice PDFs as {file, number, vendor, due, total, items}, from their lines."""
    out = []
    for doc in docs(inp.notes, "pdf"):
        fields = {}
        items = []
        for line in doc["lines"]:
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
            match = _ITEM_RE.match(line.strip())
            if match:
                items.append((match["item"], int(match["qty"]), number(match["amount"])))
        total = number(fields.get("total due", "").split(" ")[0]) if fields.get("total due") else None
        try:
            due = datetime.strptime(fields.get("due date", ""), "%Y-%m-%d")
        except ValueError:
            due = None
        if fields.get("invoice number") and fields.get("vendor") and due and total is not None:
            out.append({"file": doc["file"], "number": fields["invoice number"], "vendor": fields["vendor"],
                        "due": due, "total": total, "items": items, "po": fields.get("po reference", ""),
                        "paid": "status" in fields and fields["status"].lower().startswith("paid")})
    return out


OTHER_VENDORS = ("Harrow Office Supply", "Bellwether Catering", "Quayside Print Works", "Fenwick IT Services",
                 "Marlow Cleaning Co", "Tamsin Travel Partners")


def _vendor_near_miss(inp: FamilyInput, invoices: list[dict], vendor: str, text: str) -> tuple:
    """A near-miss supplier: another invoice's vendor, or one the office has no invoice from."""
    if not chance(inp, DRAFT.distract):
        return ()
    others = [i["vendor"] for i in invoices if distinct(i["vendor"], vendor)]
    others = others or [v for v in OTHER_VENDORS if distinct(v, vendor)]
    other = inp.rng.choice(others)
    return (near(other, text.format(other)),)


def _colleague(inp: FamilyInput) -> tuple[str, str] | None:
    return inp.rng.choice(inp.colleagues) if inp.colleagues else None


@family("invoice_due_reminder", ("pdf", "calendar", "email"), "hard")
def invoice_due_reminder(inp: FamilyInput) -> TaskDraft | None:
    """A reminder on the due date of the vendor's invoice the chat names, and a note to a colleague
    with the invoice's number and amount."""
    every = _invoices(inp)
    invoices = [i for i in every if i["due"].date() > inp.now.date()]
    person = _colleague(inp)
    if not invoices or person is None:
        return None
    invoice = inp.rng.choice(invoices)
    who, name = person
    slot = slot_on(inp, invoice["due"], (15, 30), (9, 10, 14))
    if slot is None or (invoice is invoices[0] and slot.hour == 9):
        return None
    minutes, hour, said_first, start, end = slot
    title = inp.rng.choice(("Invoice due", "Supplier payment", "Payment due", "Settle the invoice"))
    rule = f"at {hour}:00 on the day it falls due"
    distractors = _vendor_near_miss(inp, every, invoice["vendor"], "the {} bill is already settled")
    about = "the invoice reminder"
    m1 = piece(1, "fact", f"the invoice to watch is the one from {invoice['vendor']}", invoice["vendor"], cue="vendor",
               about=about, distractors=distractors)
    m2 = piece(2, "action", f"put a reminder of {minutes} minutes in my calendar on the day it falls due",
               f"{minutes} minutes", cue="duration", about=about)
    m3 = piece(3, "fact", f"{name} in accounts needs the invoice number and amount by email", name, cue="recipient",
               about="the invoice's number and amount", thread=2)
    m4 = hour_piece(4, hour, rule, "the due-date reminder", said_first)
    m5 = piece(5, "action", f"call the reminder {title}", title, cue="meeting_title", about=about)

    def plan(vendor: str, at: int = hour) -> list:
        inv = next((i for i in every if i["vendor"] == vendor), None)
        if inv is None:  # a supplier the office has no invoice from: nothing to book or send
            return [ToolCall(*list_files_call("data"))]
        s0 = inv["due"].replace(hour=at)
        return [call("pdf_read_file", file_path=inv["file"]),
                booking(inp.user, title, s0, s0 + timedelta(minutes=minutes)),
                mail(inp, who, name, f"Invoice {inv['number']}",
                     f"{inv['vendor']} invoice {inv['number']} for {fmt(inv['total'])} is due on "
                     f"{inv['due']:%Y-%m-%d}.")]

    return draft(
        inp,
        description=f"Read {invoice['file']} (from {invoice['vendor']}), add a {minutes}-minute '{title}' reminder to "
                    f"{inp.calendar_words} at {hour}:00 on its due date "
                    f"({invoice['due']:%Y-%m-%d}), and email {name} ({who}) its number {invoice['number']} and amount "
                    f"{fmt(invoice['total'])}.",
        subtasks=["Find the vendor's invoice and read it.", "Add the reminder on its due date.",
                  f"Email {name} the number and amount."],
        evaluation=booked_and_mailed(inp, title, start, end, who, [invoice["number"], fmt(invoice["total"])]),
        memory=[m1, m2, m3, m4, m5],
        oracle=plan(invoice["vendor"]),
        baseline=plan(invoices[0]["vendor"], 9),  # the intent alone: the first open invoice, first thing that day
        misreadings=misreadings_of([m1, m4], lambda mid, value: plan(value) if mid == "m1" else
                                   plan(invoice["vendor"], hour_of(value))),
        computed=slot_times(start, minutes, rule, ("m1", "m4"), ("m2",)),
    )


@family("invoice_items_to_sheet", ("pdf", "excel"), "hard")
def invoice_items_to_sheet(inp: FamilyInput) -> TaskDraft | None:
    """Copy every line item of the vendor's invoice into a new sheet, one row each."""
    invoices = [i for i in _invoices(inp) if 1 <= len(i["items"]) <= 6]
    if len(invoices) < 2:  # one invoice: the intent alone copies it
        return None
    invoice = inp.rng.choice(invoices[1:])
    out = out_name(inp, "invoice_lines", "xlsx")
    superseded: tuple[str, ...] = ()
    others = [i for i in invoices if i["vendor"] != invoice["vendor"] and distinct(i["vendor"], invoice["vendor"])]
    if others and chance(inp, DRAFT.correct):
        superseded = (inp.rng.choice(others)["vendor"],)
    about = "the invoice breakdown"
    m1 = piece(1, "fact", f"the breakdown is for the invoice from {invoice['vendor']}", invoice["vendor"], cue="vendor",
               about=about, superseded=superseded,
               distractors=_vendor_near_miss(inp, [i for i in invoices if i["vendor"] not in superseded],
                                             invoice["vendor"], "the {} invoice was broken down last quarter"))
    m2 = piece(2, "action", f"the breakdown goes into a new sheet called {stem(out)}", stem(out), cue="output_file",
               about=about, thread=2)
    m3 = piece(3, "fact", "the columns are Item, Quantity and Amount", "Item, Quantity and Amount", cue="layout",
               about=about, thread=2)

    def rows(inv: dict) -> list:
        calls = [call("excel_create_new_file", file_path=out)]
        for col, head in enumerate(("Item", "Quantity", "Amount"), start=1):
            calls.append(call("excel_set_cell", file_path=out, row=1, col=col, value=head))
        for r, (item, qty, amount) in enumerate(inv["items"], start=2):
            calls += [call("excel_set_cell", file_path=out, row=r, col=1, value=item),
                      call("excel_set_cell", file_path=out, row=r, col=2, value=qty),
                      call("excel_set_cell", file_path=out, row=r, col=3, value=amount)]
        return calls

    def plan(vendor: str) -> list:
        inv = next((i for i in invoices if i["vendor"] == vendor), None)
        if inv is None:  # a supplier the office has no invoice from: nothing to copy
            return [call("excel_create_new_file", file_path=out)]
        return [call("pdf_read_file", file_path=inv["file"]), *rows(inv)]

    matches = [{"row": 1, "col": c, "value": h} for c, h in enumerate(("Item", "Quantity", "Amount"), start=1)]
    for r, (item, qty, amount) in enumerate(invoice["items"], start=2):
        matches += [{"row": r, "col": 1, "value": item}, {"row": r, "col": 2, "value": str(qty)},
                    {"row": r, "col": 3, "value": fmt(amount)}]
    return draft(
        inp,
        description=f"Create {out} with Item, Quantity and Amount in row 1 and one row per line item of "
                    f"{invoice['file']} (the {invoice['vendor']} invoice), in the invoice's order.",
        subtasks=["Find the vendor's invoice and read it.", f"Create {out} with the header.", "Add one row per item."],
        evaluation=[cr.excel_cell_value(file=out, matches=matches, ignore_case=True)],
        memory=[m1, m2, m3],
        oracle=plan(invoice["vendor"]),
        baseline=plan(invoices[0]["vendor"]),  # the intent alone copies the first invoice listed
        misreadings=misreadings_of([m1], lambda mid, vendor: plan(vendor)),
    )


def _policy_figures(inp: FamilyInput) -> list[tuple[dict, str, float, str]]:
    """Every figure the policy PDFs state ("Annual leave: 25 days"): its document, topic, number and
    line (not a clock time)."""
    found = []
    for doc in docs(inp.notes, "pdf"):
        for line in doc["lines"]:
            match = _POLICY_RE.match(line.strip())
            if match and number(match["number"]) is not None and not re.search(r"\d:\d", line):
                topic = re.sub(r"^(the|a|an|our) ", "", match["topic"].strip(), flags=re.IGNORECASE)
                found.append((doc, column_words(topic), cast(float, number(match["number"])), line))
    return found


@family("policy_answer", ("pdf",), "easy")
def policy_answer(inp: FamilyInput) -> TaskDraft | None:
    """Answer a question a colleague asked about a policy figure (leave days, a budget, a fee) from
    the policy document the chat names."""
    found = _policy_figures(inp)
    topics: dict[str, list[tuple[dict[str, Any], float, str]]] = {}
    for doc, topic, value, line in found:
        topics.setdefault(topic, []).append((doc, value, line))
    unique = {t: v[0] for t, v in topics.items() if len(v) == 1 and len(t.split()) >= 2}
    person = _colleague(inp)
    if not unique or person is None:
        return None
    first = next(t for _, t, _, _ in found if t in unique)  # the intent alone: the document's first figure
    choices = sorted(t for t in unique if unique[t][1] != unique[first][1])
    if not choices:
        return None
    topic = inp.rng.choice(choices)
    doc, value, line = unique[topic]
    _, name = person
    others = [t for t in unique if distinct(t, topic) and unique[t][1] != value]
    distractors: tuple[Distractor, ...] = ()
    superseded: tuple[str, ...] = ()
    inp.rng.shuffle(others)
    if others and chance(inp, DRAFT.correct):
        superseded = (others.pop(),)
    if others and chance(inp, DRAFT.distract):
        other = others.pop()
        distractors = (near(other, f"someone else asked about {other} last month"),)
    about = f"{possessive(name.split()[0])} question"
    m1 = piece(1, "fact", f"{name.split()[0]} asked me about the {topic}", topic, cue="question", about=about,
               superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the answer is in {stem(doc['file'])}", stem(doc["file"]), cue="document", about=about)

    def plan(asked: str) -> list:
        d, v, _ = unique[asked]
        return answer_from("pdf", d["file"], fmt(v))

    return draft(
        inp,
        description=f"Find the {topic} figure in {doc['file']} ('{line}') and write the number into data/answer.txt.",
        subtasks=[f"Read {doc['file']}.", f"Find the {topic}.", "Write the figure into data/answer.txt."],
        evaluation=[cr.answer(number=value, tolerance=0.01)],
        memory=[m1, m2],
        oracle=plan(topic),
        baseline=plan(first),  # the intent alone answers with the first policy figure it meets
        misreadings=misreadings_of([m1], lambda mid, asked: plan(asked)),
    )


@family("followup_session", ("excel", "calendar", "email"), "hard")
def followup_session(inp: FamilyInput) -> TaskDraft | None:
    """Book a follow-up session in the first free hour of a day the chat gives, for the people whose
    score is under the mark the chat gives, email a colleague the names and the time, and mark each
    of them in the results sheet (in the column after its last) with the word the chat gives."""
    cal = calendar_of(inp.notes, inp.user)
    # the chat names the day by its weekday alone: only the coming six days are meant
    choice = choose_window(inp, [s for s in (free_slots_after(cal, inp.now) if cal else [])
                                 if (s[0].date() - inp.now.date()).days < 7])
    options = [(t, label, c) for t in tables(inp.notes) for label in [label_column(t)] if label is not None
               for c in t.numeric_columns() if any(w in t.headers[c].lower() for w in ("final", "score", "grade"))]
    if choice is None or not options or not inp.colleagues:
        return None
    table, label, c = inp.rng.choice(options)
    values = table.column(c)
    marks = [m for m in (50, 55, 60, 65, 70, 75, 80)
             if 1 <= sum(v < m for v in values) <= min(MAX_LISTED, len(values) // 2)]
    if not marks:
        return None
    mark = inp.rng.choice(marks)
    names = [r[label] for r, v in zip(table.rows, values) if v < mark]
    if len(set(r[label] for r in table.rows)) != len(table.rows):  # a name marks one row only
        return None
    when = inp.rng.choice(choice.days())
    day = weekday_text(when)  # with its date: a bare "Tuesday" said a week ago names a Tuesday now past
    choice = with_correction(inp, choice, when)
    start, end = choice.slot(when)  # type: ignore[misc]  # the window was chosen for a free slot that day
    rule = slot_rule(choice)
    present = present_on(inp, start.date())
    if not present:
        return None
    who, name = inp.rng.choice(present)
    title = inp.rng.choice(("Refresher session", "Practice catch-up", "Extra training hour"))
    lower = [m for m in marks if m < mark and sum(v < m for v in values) < len(names)]
    inp.rng.shuffle(lower)
    superseded = (str(lower.pop()),) if lower and chance(inp, DRAFT.correct) else ()
    distractors = ((near(str(lower[0]), f"the old course used {lower[0]} as its pass mark"),)
                   if lower and chance(inp, DRAFT.distract) else ())
    about = "the follow-up session"
    m1 = piece(1, "fact", f"everyone under {mark} needs the follow-up session", str(mark), cue="threshold",
               about=about, superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the session goes on {day}, in my first free hour", day, cue="session_day", about=about)
    m3 = piece(3, "action", f"call the session {title}", title, cue="meeting_title", about=about)
    m4 = piece(4, "fact", f"{name} organises it and needs the names and the time by email", name, cue="recipient",
               about="the names and the time of the follow-up session", thread=2)
    m5 = piece(5, "fact", f"the results are in {stem(table.file)}", stem(table.file), cue="source_file", about=about)
    m6 = window_piece(6, choice, rule, about)
    m7 = piece(7, "fact", f"the mark is checked against the {table.headers[c]} column", table.headers[c],
               cue="column_total", about=about)
    status, *rest = inp.rng.sample(_SESSION_MARKS, len(_SESSION_MARKS))
    m8 = piece(8, "action", f"once it is booked, mark each of them {status} in the results sheet, in a new column",
               status, cue="status", about=about, superseded=(rest[0],) if chance(inp, DRAFT.correct) else ())
    flag_col = len(table.headers) + 1  # the column after the sheet's last
    rows_of = {r[label]: i + 2 for i, r in enumerate(table.rows)}

    def plan(mid: str, value: str) -> list:
        word = value if mid == "m8" else status
        cut = value if mid == "m1" else str(mark)
        listed = [r[label] for r, v in zip(table.rows, values) if v < float(cut)]
        steps = [call("excel_read_file", file_path=table.file), call("calendar_list_events", user=inp.user)]
        slot = choice.slot(when, value) if mid == "m6" else (start, end)
        if slot is None:  # nothing free in that window: an agent that kept it books nothing
            return steps
        s0, e0 = slot
        return [*steps, booking(inp.user, title, s0, e0),
                mail(inp, who, name, title, f"The {title.lower()} is on {s0:%Y-%m-%d} at {s0:%H:%M}. "
                                            f"Attending: {join_and(listed)}."),
                *(call("excel_set_cell", file_path=table.file, row=rows_of[n], col=flag_col, value=word)
                  for n in listed)]

    return draft(
        inp,
        description=f"From {table.file}, list everyone whose {table.headers[c]} is under {mark} ({join_and(names)}); "
                    f"book '{title}' on {start:%Y-%m-%d} in {possessive(inp.user_name)} first free whole hour between "
                    f"{choice.window[0]}:00 and {choice.window[1]}:00 ({start:%H:%M}-{end:%H:%M}); "
                    f"email {name} ({who}) the names and the start time; "
                    f"and write '{status}' beside each of them in column {flag_col} of {table.file}.",
        subtasks=[f"Read {table.file} and list who is under the mark.", "Book the session in the first free hour.",
                  f"Email {name} the names and the time.", f"Mark them {status} in {table.file}."],
        evaluation=[event_check(inp.user, title, start, end),
                    cr.email_sent(sender=inp.user, recipient=who, body_keywords=[*names, f"{start:%H:%M}"],
                                  **excluding_past(table.rows, label, values, mark, names, (name, inp.user_name))),
                    cr.excel_cell_value(file=table.file, ignore_case=True,
                                        matches=[{"row": rows_of[n], "col": flag_col, "value": status}
                                                 for n in names])],
        memory=[m1, m2, m3, m4, m5, m6, m7, m8],
        oracle=plan("m1", str(mark)),
        baseline=[call("excel_read_file", file_path=table.file), *first_free_booking(inp)],
        misreadings=misreadings_of([m1, m6, m8], plan),
        computed=[computed(len(names), "count", names, given=("m1", "m7")),
                  computed(start.strftime(TIME_FORMAT), "rule", [], rule=rule, given=("m2", "m6")),
                  computed(end.strftime(TIME_FORMAT), "rule", [], rule=rule, given=("m2", "m6")),
                  computed(f"{start:%H:%M}", "rule", [], rule=rule, given=("m2", "m6"))],
    )


@family("policy_figures_sheet", ("pdf", "excel"), "hard")
def policy_figures_sheet(inp: FamilyInput) -> TaskDraft | None:
    """Log the policy figures the chat asks for (several topics) into a new sheet, one row each, with
    the values read from the policy document."""
    found = [(doc, topic, value) for doc, topic, value, _ in _policy_figures(inp)]
    by_doc: dict[str, list] = {}
    for doc, topic, value in found:
        if len(topic.split()) >= 2:
            by_doc.setdefault(doc["file"], []).append((topic, value))
    options = [(f, items) for f, items in by_doc.items() if len({t for t, _ in items}) >= 3]
    if not options:
        return None
    file, items = inp.rng.choice(sorted(options, key=lambda o: o[0]))
    unique: dict[str, float] = {}
    for topic, value in items:
        unique.setdefault(topic, value)
    picked = inp.rng.sample(sorted(unique), 3)
    first = list(unique)[:3]  # the intent alone logs the document's first three figures, in its order
    if picked == first:
        return None
    out = out_name(inp, "policy_figures", "xlsx")
    about = "the policy figures sheet"
    rows = join_and(picked)  # said in one turn, so the order of the rows is said too
    memory = [piece(1, "action", f"the sheet needs one row each, in this order, for the {rows}", rows, cue="row_order",
                    about=about),
              piece(2, "fact", "the sheet's header row is Topic and Value", "Topic and Value", cue="layout",
                    about=about),
              piece(3, "action", f"the policy figures go into {stem(out)}", stem(out), cue="output_file",
                    about=about, thread=2),
              piece(4, "fact", f"the figures come from {stem(file)}", stem(file), cue="source_file", about=about)]
    def log(topics: list[str]) -> list:
        calls = [call("pdf_read_file", file_path=file), call("excel_create_new_file", file_path=out),
                 call("excel_set_cell", file_path=out, row=1, col=1, value="Topic"),
                 call("excel_set_cell", file_path=out, row=1, col=2, value="Value")]
        for r, topic in enumerate(topics, start=2):
            calls += [call("excel_set_cell", file_path=out, row=r, col=1, value=topic),
                      call("excel_set_cell", file_path=out, row=r, col=2, value=unique[topic])]
        return calls

    matches = [{"row": 1, "col": 1, "value": "Topic"}, {"row": 1, "col": 2, "value": "Value"}]
    for r, topic in enumerate(picked, start=2):
        matches += [{"row": r, "col": 1, "value": topic}, {"row": r, "col": 2, "value": fmt(unique[topic])}]
    return draft(
        inp,
        description=f"Create {out} with the header Topic, Value and one row each, in this order, for the "
                    f"{', '.join(picked)} figures of {file} ({', '.join(fmt(unique[t]) for t in picked)}).",
        subtasks=[f"Read {file}.", f"Create {out} with the header.", "Add one row per figure I asked for."],
        evaluation=[cr.excel_cell_value(file=out, matches=matches, ignore_case=True)],
        memory=memory,
        oracle=log(picked),
        baseline=log(first),
        misreadings=[],
    )


# -- invoices against orders, agreements against the calendar --------------------------------

def _order_logs(inp: FamilyInput) -> Iterator[tuple[Table, list[str]]]:
    """Each order log of the office (a sheet with PO, Item and Quantity columns), with its headers
    lower-cased."""
    for table in tables(inp.notes):
        heads = [h.lower() for h in table.headers]
        if {"po", "item", "quantity"} <= set(heads):
            yield table, heads


def _ordered_quantities(inp: FamilyInput, po: str) -> tuple[str, dict[str, int]] | None:
    """(file, item -> quantity) of purchase order ``po`` in the order log, if the office has one."""
    for table, heads in _order_logs(inp):
        c_po, c_item, c_qty = heads.index("po"), heads.index("item"), heads.index("quantity")
        lines = {r[c_item]: int(number(r[c_qty]) or 0) for r in table.rows if r[c_po] == po}
        if lines:
            return table.file, lines
    return None


def _order_line_status(inp: FamilyInput, po: str, item: str) -> tuple[int, int] | None:
    """(sheet row, status column), both 1-based, of ``item``'s line of order ``po`` in the order log."""
    for table, heads in _order_logs(inp):
        if "status" not in heads:
            continue
        c_po, c_item = heads.index("po"), heads.index("item")
        rows = [i + 2 for i, r in enumerate(table.rows) if r[c_po] == po and r[c_item] == item]
        if len(rows) == 1:
            return rows[0], heads.index("status") + 1
    return None


@family("invoice_po_check", ("pdf", "excel", "email"), "hard")
def invoice_po_check(inp: FamilyInput) -> TaskDraft | None:
    """Check the supplier's open invoice against its purchase order in the order log and tell a
    colleague which line bills a different quantity than was ordered."""
    every = _invoices(inp)
    person = _colleague(inp)
    if person is None:
        return None
    found = []
    for inv in every:
        order = _ordered_quantities(inp, inv["po"]) if inv["po"] and not inv["paid"] else None
        if order is None:
            continue
        log, quantities = order
        wrong = [(item, qty, quantities[item]) for item, qty, _ in inv["items"]
                 if item in quantities and quantities[item] != qty]
        if len(wrong) == 1:
            found.append((inv, log, wrong[0]))
    if not found:
        return None
    invoice, log, (item, billed, ordered) = inp.rng.choice(found)
    line = _order_line_status(inp, invoice["po"], item)
    if line is None:
        return None
    row, status_col = line
    who, name = person
    # the lines that match their order: a finding names none of them (a paste of the invoice names all)
    _, on_order = _ordered_quantities(inp, invoice["po"])  # type: ignore[misc]  # the invoice was made from this order
    matching = [i for i, q, _ in invoice["items"]
                if on_order.get(i) == q and i.lower() not in item.lower() and item.lower() not in i.lower()]
    subject = inp.rng.choice(("Billing against the order", "Invoice query", "Order mismatch", "Invoice vs order"))
    distractors = _vendor_near_miss(inp, every, invoice["vendor"], "the {} invoice was settled already")
    about = "the invoice check"
    m1 = piece(1, "fact", f"the invoice to check against its order is the one from {invoice['vendor']}",
               invoice["vendor"], cue="vendor", about=about, distractors=distractors)
    m2 = piece(2, "action", f"send what you find to {name}", name, cue="recipient", about=about, thread=2)
    m3 = piece(3, "action", f"use the subject {subject}", subject, cue="subject", about=about, thread=2)
    status, *rest = inp.rng.sample(STATUS_WORDS, len(STATUS_WORDS))
    old_status = (rest[0],) if chance(inp, DRAFT.correct) else ()
    m4 = piece(4, "action", f"mark the order line that is off {status} in the order log", status, cue="status",
               about=about, superseded=old_status)

    def plan(vendor: str, mark: str = status) -> list:
        inv = next((i for i in every if i["vendor"] == vendor), None)
        if inv is None:
            return [ToolCall(*list_files_call("data"))]
        lines = _ordered_quantities(inp, inv["po"]) if inv["po"] else None
        ordered_lines = lines[1] if lines else {}
        diff = [(i, q, ordered_lines.get(i)) for i, q, _ in inv["items"] if ordered_lines.get(i) not in (None, q)]
        text = (f"Invoice {inv['number']} bills {diff[0][1]} x {diff[0][0]}, but {inv['po']} ordered {diff[0][2]}."
                if diff else f"Invoice {inv['number']} matches {inv['po'] or 'its order'}.")
        off = _order_line_status(inp, inv["po"], diff[0][0]) if diff and inv["po"] else None
        marked = [call("excel_set_cell", file_path=log, row=off[0], col=off[1], value=mark)] if off else []
        return [call("pdf_read_file", file_path=inv["file"]), call("excel_read_file", file_path=log), *marked,
                mail(inp, who, name, subject, text)]

    latest = every[0]
    return draft(
        inp,
        description=f"Compare {invoice['file']} ({invoice['vendor']}, invoice {invoice['number']}) with purchase order "
                    f"{invoice['po']} in {log}, set the Status of the order's {item} line (row {row}) to '{status}', "
                    f"and email {name} ({who}) with the subject '{subject}' which line differs: {item} is billed "
                    f"with quantity {billed}, but the order has {ordered}.",
        subtasks=["Read the supplier's invoice.", "Find its purchase order in the order log.",
                  f"Mark the order line {status}.", f"Email {name} the line that differs."],
        # what is off: the line and both quantities (the order's reference is the sender's to add)
        evaluation=[cr.excel_cell_value(file=log, matches=[{"row": row, "col": status_col, "value": status}],
                                        ignore_case=True),
                    cr.email_sent(sender=inp.user, recipient=who, subject_keywords=[subject],
                                  body_keywords=[item, str(billed), str(ordered)],
                                  **({"body_excludes": matching} if matching else {}))],
        memory=[m1, m2, m3, m4],
        oracle=plan(invoice["vendor"]),
        # the intent alone: the first invoice in the folder, reported as fine to the first colleague
        baseline=[call("pdf_read_file", file_path=latest["file"]),
                  send(inp, inp.colleagues[0][0], "Invoice", f"Invoice {latest['number']} looks fine.")],
        misreadings=misreadings_of([m1, m4], lambda mid, value: plan(invoice["vendor"], value) if mid == "m4" else
                                   plan(value)),
    )


_AGREEMENT_RE = re.compile(r"ends on (\d{4}-\d{2}-\d{2})")
_NOTICE_RE = re.compile(r"at least (\d+) days before the end date")


def _agreements(inp: FamilyInput) -> list[dict]:
    """Framework agreements as {file, vendor, end, notice}, from their clauses."""
    out = []
    for doc in docs(inp.notes, "pdf"):
        text = " ".join(doc["lines"])
        end, notice = _AGREEMENT_RE.search(text), _NOTICE_RE.search(text)
        title = doc["lines"][0] if doc["lines"] else ""
        if end and notice and " - " in title and "agreement" in title.lower():
            out.append({"file": doc["file"], "vendor": title.split(" - ", 1)[1].strip(),
                        "end": datetime.strptime(end.group(1), "%Y-%m-%d"), "notice": int(notice.group(1))})
    return out


def _open_notices(inp: FamilyInput) -> list[tuple[dict, datetime]]:
    """Each agreement whose last day to give notice (its end less the notice period, moved back to
    a weekday) is still ahead, with that day."""
    found = []
    for agreement in _agreements(inp):
        deadline = agreement["end"] - timedelta(days=agreement["notice"])
        while deadline.weekday() >= 5:
            deadline -= timedelta(days=1)
        if deadline.date() > inp.now.date():
            found.append((agreement, deadline))
    return found


def _remind_on_end_date(inp: FamilyInput, agreement: dict) -> list:
    """The intent alone: a reminder on the end date itself, told to the first colleague."""
    return [call("pdf_read_file", file_path=agreement["file"]),
            booking(inp.user, "Contract renewal", agreement["end"].replace(hour=9),
                    agreement["end"].replace(hour=9, minute=30)),
            send(inp, inp.colleagues[0][0], "Contract", f"The agreement ends on {agreement['end']:%Y-%m-%d}.")]


@family("contract_notice_reminder", ("pdf", "calendar", "email"), "hard")
def contract_notice_reminder(inp: FamilyInput) -> TaskDraft | None:
    """Book a reminder on the last working day the supplier's agreement can still be cancelled
    (its end date less its notice period, from the clauses) and tell a colleague the dates."""
    person = _colleague(inp)
    if person is None:
        return None
    found = _open_notices(inp)
    if not found:
        return None
    agreement, deadline = inp.rng.choice(found)
    who, name = person
    slot = slot_on(inp, deadline, (15, 30), (9, 10, 11, 14))
    if slot is None:
        return None
    minutes, hour, said_first, start, end = slot
    title = inp.rng.choice(("Renewal decision", "Contract notice deadline", "Decide on renewal", "Supplier renewal"))
    rule = (f"at {hour}:00 on the last working day we can still give notice (the end date less the notice period, "
            "moved back to a weekday)")
    about = "the renewal reminder"
    m1 = piece(1, "fact", f"the agreement to watch is the one with {agreement['vendor']}", agreement["vendor"],
               cue="supplier", about=about)
    m2 = piece(2, "action", f"book a reminder called {title} on the last weekday we can still give notice", title,
               cue="meeting_title", about=about)
    others = [(u, n) for u, n in inp.colleagues if u != who and distinct(n, name)]
    distractors: tuple[Distractor, ...] = ()
    if others and chance(inp, DRAFT.distract):
        earlier = inp.rng.choice(others)[1]
        distractors = (near(earlier, f"{earlier} had the dates of the last renewal, a year ago"),)
    m3 = piece(3, "action", f"tell {name} the end date and the notice deadline", name, cue="recipient",
               about="the agreement's end date and notice deadline", distractors=distractors, thread=2)
    m4 = hour_piece(4, hour, rule, "the reminder on the last weekday we can give notice", said_first)
    m5 = piece(5, "fact", f"the renewal reminder takes {minutes} minutes", f"{minutes} minutes", cue="duration",
               about=about)
    subject = f"{agreement['vendor']} agreement"

    users = {n: u for u, n in inp.colleagues}

    def plan(summary: str, at: int = hour, to_name: str = name) -> list:
        s0 = start.replace(hour=at)
        return [call("pdf_read_file", file_path=agreement["file"]),
                booking(inp.user, summary, s0, s0 + timedelta(minutes=minutes)),
                mail(inp, users[to_name], to_name, subject,
                     f"The {agreement['vendor']} agreement ends on {agreement['end']:%Y-%m-%d}; "
                     f"notice must be given by {deadline:%Y-%m-%d}.")]

    return draft(
        inp,
        description=f"From {agreement['file']} (the agreement with {agreement['vendor']}, ending "
                    f"{agreement['end']:%Y-%m-%d}, {agreement['notice']} days' notice), add a {minutes}-minute "
                    f"'{title}' to {inp.calendar_words} at {hour}:00 on "
                    f"{deadline:%Y-%m-%d}, the last weekday notice can be given, and email {name} ({who}) both dates.",
        subtasks=["Read the agreement's term and notice clauses.", "Book the reminder on the notice deadline.",
                  f"Email {name} the end date and the deadline."],
        evaluation=booked_and_mailed(inp, title, start, end, who,
                                     [f"{agreement['end']:%Y-%m-%d}", f"{deadline:%Y-%m-%d}"]),
        memory=[m1, m2, m3, m4, m5],
        oracle=plan(title),
        baseline=_remind_on_end_date(inp, agreement),
        misreadings=misreadings_of([m4, m3], lambda mid, value: plan(title, hour_of(value)) if mid == "m4" else
                                   plan(title, to_name=value)),
        computed=[*slot_times(start, minutes, rule, ("m1", "m4"), ("m5",)),
                  computed(f"{deadline:%Y-%m-%d}", "rule", [], rule=rule, given=("m1", "m4"))],
    )


# what the results sheet says beside those the follow-up session is booked for
_SESSION_MARKS = tuple(w for w in STATUS_WORDS if w in ("Flagged for review", "Awaiting sign-off", "Queried"))
MAX_MARKED = 6  # claims a task marks one by one: more is typing, not work
_SECOND_APPROVAL_RE = re.compile(rf"claims above ([\d,]+(?:\.\d+)?) ({CODE}) need a second approval", re.IGNORECASE)


def _claim_logs(inp: FamilyInput) -> list[tuple[str, int, list[tuple[str, float, int]]]]:
    """Expense claim sheets as (file, status column, submitted claims): a claim is (number, amount,
    sheet row, 1-based under the header)."""
    out = []
    for table in tables(inp.notes):
        heads = [h.lower() for h in table.headers]
        if not {"claim", "amount", "status"} <= set(heads):
            continue
        c_id, c_amount, c_status = heads.index("claim"), heads.index("amount"), heads.index("status")
        rows = [(r[c_id], number(r[c_amount]), r[c_status], i + 2) for i, r in enumerate(table.rows)]
        submitted = [(c, a, row) for c, a, status, row in rows if status == "Submitted" and a is not None]
        out.append((table.file, c_status + 1, submitted))
    return out


@family("claims_second_approval", ("pdf", "excel", "email"), "hard")
def claims_second_approval(inp: FamilyInput) -> TaskDraft | None:
    """Apply the handbook's second-approval limit to the expense claims still waiting: mark each
    claim above it in the log with the status the chat gives, and send the colleague the chat
    names their numbers. The PDF gives the limit, the sheet the claims, and the mail and the
    marks both carry what the two together pick."""
    rules = [(doc["file"], cast(float, number(m.group(1))), m.group(2).upper()) for doc in docs(inp.notes, "pdf")
             for line in doc["lines"] for m in [_SECOND_APPROVAL_RE.search(line)] if m]
    logs = [(f, col, sub) for f, col, sub in _claim_logs(inp)
            if any(a > limit for _, a, _ in sub for _, limit, _ in rules)
            and any(a <= limit for _, a, _ in sub for _, limit, _ in rules)]
    if not rules or not logs or len(inp.colleagues) < 2:
        return None
    policy, limit, currency = inp.rng.choice(rules)
    log, status_col, submitted = inp.rng.choice(logs)
    over = [(c, a, row) for c, a, row in submitted if a > limit]
    if not over or len(over) == len(submitted) or len(over) > MAX_MARKED:
        return None
    total = round(sum(a for _, a, _ in over), 2)
    (who, name), (other_who, other_name) = inp.rng.sample(inp.colleagues, 2)
    subject = inp.rng.choice(("Claims needing a second sign-off", "Expense claims over the limit", "Claims to approve",
                              "Second approval needed"))
    status, *rest = inp.rng.sample(STATUS_WORDS, len(STATUS_WORDS))
    about = "the claims for second approval"
    superseded = (other_name,) if chance(inp, DRAFT.correct) and distinct(other_name, name) else ()
    spare = [n for _, n in inp.colleagues if n not in (name, *superseded) and distinct(n, name)
             and all(distinct(n, s) for s in superseded)]
    distractors: tuple[Distractor, ...] = ()
    if spare and chance(inp, DRAFT.distract):
        other = inp.rng.choice(spare)
        distractors = (near(other, f"{other} used to sign off claims, but not any more"),)
    old_status = (rest[0],) if chance(inp, DRAFT.correct) else ()
    m1 = piece(1, "fact", f"the approval rule is in {stem(policy)}", stem(policy), cue="document", about=about)
    m2 = piece(2, "action", f"the claims go to {name} in Finance", name, cue="recipient", about=about,
               superseded=superseded, distractors=distractors, thread=2)
    m3 = piece(3, "action", f"use the subject {subject}", subject, cue="subject", about=about, thread=2)
    m4 = piece(4, "action", f"mark each of those claims {status} in the log's Status column", status, cue="status",
               about=about, superseded=old_status)
    ids = [c for c, _, _ in over]

    def plan(to: str, to_name: str, mark: str = status) -> list:
        text = (f"These submitted claims are above the {fmt(limit)} {currency} limit and need your approval: "
                f"{', '.join(ids)}. Together they come to {fmt(total)} {currency}.")
        return [call("pdf_read_file", file_path=policy), call("excel_read_file", file_path=log),
                *(call("excel_set_cell", file_path=log, row=row, col=status_col, value=mark) for _, _, row in over),
                mail(inp, to, to_name, subject, text)]

    def misread(mid: str, value: str) -> list | None:
        if mid == "m4":
            return plan(who, name, value)
        return plan(by_name[value], value) if value in by_name else None

    by_name = {n: u for u, n in inp.colleagues}
    everything = [c for c, _, _ in submitted]
    # the claims under the limit stay Submitted: marking every waiting claim is not the work
    marks = ([{"row": row, "col": status_col, "value": status} for _, _, row in over]
             + [{"row": row, "col": status_col, "value": "Submitted"} for _, a, row in submitted if a <= limit])
    return draft(
        inp,
        description=f"Find the claims in {log} still marked Submitted whose amount is above the "
                    f"{fmt(limit)} {currency} second-approval limit in {policy} ({join_and(ids)}), "
                    f"set their Status to '{status}', and email "
                    f"{name} ({who}) with the subject '{subject}' their numbers.",
        subtasks=[f"Read the approval limit in {policy}.", f"Pick the Submitted claims above it in {log}.",
                  f"Mark them {status} in {log}.", f"Email {name} their numbers."],
        evaluation=[cr.excel_cell_value(file=log, matches=marks, ignore_case=True),
                    cr.email_sent(sender=inp.user, recipient=who, subject_keywords=[subject],
                                  body_keywords=ids,  # the chat never asks for their total: not checked
                                  **excluding(left_out([c for c, a, _ in sorted(submitted, key=lambda p: -p[1])
                                                        if a <= limit], ids)))],
        memory=[m1, m2, m3, m4],
        oracle=plan(who, name),
        # the intent alone: every claim still waiting, with their total, to the first colleague
        baseline=[call("excel_read_file", file_path=log),
                  send(inp, inp.colleagues[0][0], "Claims",
                       f"Claims waiting: {', '.join(everything)}; "
                       f"{fmt(round(sum(a for _, a, _ in submitted), 2))} {currency} in all.")],
        misreadings=misreadings_of([m2, m4], misread),
        computed=[computed(len(ids), "count", [fmt(a) for _, a, _ in over],
                           note=f"Submitted claims above {fmt(limit)} {currency} in {log}")],
    )
