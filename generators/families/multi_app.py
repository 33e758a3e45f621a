"""Task families that chain two or three apps."""

from __future__ import annotations

from generators.families.base import (
    FamilyInput, call, calendar_of, docs, family, fmt, invoice_facts, pick_column, piece, stem,
)
from generators.families.single_app import MEETING_TITLES, MEMO_TOPICS, _out_name, free_slots_after
from generators.model import TaskDraft

SUBJECTS = ("Quick numbers", "Figures you asked for", "Follow-up", "For your review", "Heads-up", "Numbers for Friday")


def _colleague(inp: FamilyInput) -> tuple[str, str]:
    return inp.rng.choice(inp.colleagues)


def _total(inp: FamilyInput):
    picked = pick_column(inp, min_rows=3)
    if not picked:
        return None
    table, _, col = picked
    return table, table.headers[col], round(sum(table.column(col)), 2)


@family("sheet_total_email", ("excel", "email"), "medium")
def sheet_total_email(inp: FamilyInput) -> TaskDraft | None:
    found = _total(inp)
    if not found or not inp.colleagues:
        return None
    table, header, total = found
    who, name = _colleague(inp)
    subject = inp.rng.choice(SUBJECTS)
    body = f"Hi {name.split()[0]}, the total {header} in {stem(table.file)} is {fmt(total)}."
    return TaskDraft(
        family="sheet_total_email", apps=["excel", "email"], difficulty="medium",
        description=f"Sum the {header} column of {table.file} and email the total to {name} ({who}) "
                    f"with the subject '{subject}'.",
        intent="Send my colleague the total they asked for from our spreadsheet.",
        subtasks=[f"Read {table.file}.", f"Sum the {header} column.", f"Email the total to {name}."],
        evaluation=[{"function": "evaluate_email_sent",
                     "args": {"sender": inp.user, "recipient": who, "body_keywords": [fmt(total)]}}],
        memory=[piece(1, "fact", f"{name} asked me for the total {header}", name),
                piece(2, "fact", f"the {header} figures to add up are in {stem(table.file)}", stem(table.file)),
                piece(3, "action", f"the email with the {header} total should have the subject '{subject}'", subject)],
        query="Can you send that total to my colleague?",
        oracle=[call("excel_read_file", file_path=table.file),
                call("email_send_email", sender=inp.user, recipient=who, subject=subject, content=body)],
        baseline=[],
    )


@family("invoice_to_sheet", ("pdf", "excel"), "medium")
def invoice_to_sheet(inp: FamilyInput) -> TaskDraft | None:
    found = invoice_facts(inp)
    if not found:
        return None
    pdf, number, total = found
    out = _out_name(inp, "invoices", "xlsx")
    return TaskDraft(
        family="invoice_to_sheet", apps=["pdf", "excel"], difficulty="medium",
        description=f"Create {out} with the header Invoice, Total in row 1 and the invoice number and total "
                    f"from {pdf} in row 2.",
        intent="Record the invoice details in the new spreadsheet I described.",
        subtasks=[f"Read {pdf}.", f"Create {out}.", "Write the header and the invoice row."],
        evaluation=[{"function": "evaluate_excel_cell_value",
                     "args": {"file": out, "matches": [{"row": 1, "col": 1, "value": "Invoice"},
                                                       {"row": 1, "col": 2, "value": "Total"},
                                                       {"row": 2, "col": 1, "value": number},
                                                       {"row": 2, "col": 2, "value": fmt(total)}]}}],
        memory=[piece(1, "action", f"the invoice log should be a new sheet called {stem(out)}", stem(out)),
                piece(2, "fact", f"the invoice we need to log is the one in {stem(pdf)}", stem(pdf)),
                piece(3, "fact", "the log needs two columns, Invoice then Total", "Invoice then Total")],
        query="Please log that invoice in the new sheet.",
        oracle=[call("pdf_read_file", file_path=pdf), call("excel_create_new_file", file_path=out),
                call("excel_set_cell", file_path=out, row=1, col=1, value="Invoice"),
                call("excel_set_cell", file_path=out, row=1, col=2, value="Total"),
                call("excel_set_cell", file_path=out, row=2, col=1, value=number),
                call("excel_set_cell", file_path=out, row=2, col=2, value=total)],
        baseline=[call("excel_create_new_file", file_path="data/invoices.xlsx")],
    )


@family("notes_to_email", ("word", "email"), "easy")
def notes_to_email(inp: FamilyInput) -> TaskDraft | None:
    options = [d for d in docs(inp.notes, "word") if len(d["lines"]) >= 3]
    if not options or not inp.colleagues:
        return None
    doc = inp.rng.choice(options)
    who, name = _colleague(inp)
    subject = f"{inp.rng.choice(('Notes', 'Summary', 'Recap'))}: {doc['lines'][0][:40]}".strip()
    key = max(doc["lines"][1:], key=len)
    words = [w.strip(".,;:") for w in key.split() if len(w.strip(".,;:")) > 4][:2]
    if not words:
        return None
    return TaskDraft(
        family="notes_to_email", apps=["word", "email"], difficulty="easy",
        description=f"Email the content of {doc['file']} to {name} ({who}) with the subject '{subject}'.",
        intent="Forward the document I mentioned to the colleague I named.",
        subtasks=[f"Read {doc['file']}.", f"Email its content to {name}."],
        evaluation=[{"function": "evaluate_email_sent",
                     "args": {"sender": inp.user, "recipient": who, "subject_keywords": [doc["lines"][0][:40]],
                              "body_keywords": words}}],
        memory=[piece(1, "fact", f"{name} missed the discussion and needs the notes", name),
                piece(2, "fact", f"the notes to forward are in {stem(doc['file'])}", stem(doc["file"]))],
        query="Can you forward those notes now?",
        oracle=[call("word_read_file", file_path=doc["file"]),
                call("email_send_email", sender=inp.user, recipient=who, subject=subject,
                     content="\n".join(doc["lines"]))],
        baseline=[],
    )


@family("common_slot", ("calendar", "email"), "hard")
def common_slot(inp: FamilyInput) -> TaskDraft | None:
    mine = calendar_of(inp.notes, inp.user)
    if not mine:
        return None
    others = [(u, n) for u, n in inp.colleagues if calendar_of(inp.notes, u)]
    if not others:
        return None
    who, name = inp.rng.choice(others)
    theirs = {s for s in free_slots_after(calendar_of(inp.notes, who), inp.now)}
    common = sorted(s for s in free_slots_after(mine, inp.now) if s in theirs)
    if not common:
        return None
    day = inp.rng.choice(sorted({s[0].date() for s in common}))
    start, end = next(s for s in common if s[0].date() == day)
    title = inp.rng.choice(MEETING_TITLES)
    day_text = day.strftime("%A %B %d").replace(" 0", " ")
    fmt_t = "%Y-%m-%d %H:%M:%S"
    return TaskDraft(
        family="common_slot", apps=["calendar", "email"], difficulty="hard",
        description=f"Find the earliest hour on {day:%Y-%m-%d} when both {inp.user} and {name} ({who}) are free, "
                    f"add '{title}' to {inp.user}'s calendar then, and email {name} the time.",
        intent="Find a time that works for me and my colleague, book it, and let them know.",
        subtasks=["Check both calendars on that day.", "Book the earliest common free hour.", f"Email {name} the time."],
        evaluation=[{"function": "evaluate_calendar_event",
                     "args": {"username": inp.user, "summary": title, "start": start.strftime(fmt_t),
                              "end": end.strftime(fmt_t)}},
                    {"function": "evaluate_calendar_no_overlap", "args": {"username": inp.user}},
                    {"function": "evaluate_email_sent",
                     "args": {"sender": inp.user, "recipient": who, "body_keywords": [title]}}],
        memory=[piece(1, "action", f"I need an hour with {name} for a {title}", title),
                piece(2, "fact", f"the meeting with {name} should be on {day_text}, the earliest hour we are both free", day_text)],
        query="Please set up that meeting with my colleague.",
        oracle=[call("calendar_list_events", user=inp.user), call("calendar_list_events", user=who),
                call("calendar_create_event", user=inp.user, summary=title, start=start.strftime(fmt_t),
                     end=end.strftime(fmt_t)),
                call("email_send_email", sender=inp.user, recipient=who, subject=title,
                     content=f"{title} is booked for {start:%Y-%m-%d %H:%M}-{end:%H:%M}.")],
        baseline=[],
    )


@family("sheet_to_report", ("excel", "word"), "medium")
def sheet_to_report(inp: FamilyInput) -> TaskDraft | None:
    picked = pick_column(inp)
    if not picked:
        return None
    table, label, col = picked
    values = table.column(col)
    top = max(values)
    if values.count(top) != 1:
        return None
    who = table.rows[values.index(top)][label]
    out = _out_name(inp, "report", "docx")
    header = table.headers[col]
    return TaskDraft(
        family="sheet_to_report", apps=["excel", "word"], difficulty="medium",
        description=f"Write {out} naming the {table.headers[label]} with the highest {header} in {table.file} "
                    "and that value.",
        intent="Write the short report I asked for from the spreadsheet.",
        subtasks=[f"Read {table.file}.", f"Find the highest {header}.", f"Write {out}."],
        evaluation=[{"function": "evaluate_contain",
                     "args": {"doc_type": "docx", "file": out, "keywords": [who, fmt(top)]}}],
        memory=[piece(1, "action", f"the report should say who has the highest {header}", f"highest {header}"),
                piece(2, "fact", f"the little report should use the figures in {stem(table.file)}", stem(table.file)),
                piece(3, "action", f"save the report as {stem(out)}", stem(out))],
        query="Could you write that little report now?",
        oracle=[call("excel_read_file", file_path=table.file),
                call("word_write_to_file", file_path=out,
                     content=f"Report\nHighest {header}: {who} with {fmt(top)}.")],
        baseline=[call("word_write_to_file", file_path="data/report.docx", content="Report\nTo be completed.")],
    )


@family("invoice_pipeline", ("pdf", "excel", "email"), "hard")
def invoice_pipeline(inp: FamilyInput) -> TaskDraft | None:
    found = invoice_facts(inp)
    if not found or not inp.colleagues:
        return None
    pdf, number, total = found
    out = _out_name(inp, "payables", "xlsx")
    who, name = _colleague(inp)
    return TaskDraft(
        family="invoice_pipeline", apps=["pdf", "excel", "email"], difficulty="hard",
        description=f"Read {pdf}, create {out} with Invoice and Total in row 1 and the invoice number and total in "
                    f"row 2, then email {name} ({who}) the invoice number and total.",
        intent="Log the invoice in a new sheet and tell the colleague I mentioned about it.",
        subtasks=[f"Read {pdf}.", f"Create {out} with the invoice row.", f"Email {name}."],
        evaluation=[{"function": "evaluate_excel_cell_value",
                     "args": {"file": out, "matches": [{"row": 2, "col": 1, "value": number},
                                                       {"row": 2, "col": 2, "value": fmt(total)}]}},
                    {"function": "evaluate_email_sent",
                     "args": {"sender": inp.user, "recipient": who, "body_keywords": [number, fmt(total)]}}],
        memory=[piece(1, "fact", f"the invoice in {stem(pdf)} has to be logged", stem(pdf)),
                piece(2, "action", f"the invoice goes into a new sheet named {stem(out)}", stem(out)),
                piece(3, "action", f"{name} should get the invoice number and amount by email", name)],
        query="Please handle that invoice now.",
        oracle=[call("pdf_read_file", file_path=pdf), call("excel_create_new_file", file_path=out),
                call("excel_set_cell", file_path=out, row=1, col=1, value="Invoice"),
                call("excel_set_cell", file_path=out, row=1, col=2, value="Total"),
                call("excel_set_cell", file_path=out, row=2, col=1, value=number),
                call("excel_set_cell", file_path=out, row=2, col=2, value=total),
                call("email_send_email", sender=inp.user, recipient=who, subject=f"Invoice {number}",
                     content=f"Invoice {number} totals {fmt(total)}.")],
        baseline=[],
    )


@family("report_pdf", ("excel", "word", "pdf"), "hard")
def report_pdf(inp: FamilyInput) -> TaskDraft | None:
    found = _total(inp)
    if not found:
        return None
    table, header, total = found
    doc = _out_name(inp, "totals", "docx")
    pdf = doc[:-5] + ".pdf"
    return TaskDraft(
        family="report_pdf", apps=["excel", "word", "pdf"], difficulty="hard",
        description=f"Sum the {header} column of {table.file}, write the total into {doc}, and convert it to {pdf}.",
        intent="Prepare the totals document I described and export it as a PDF.",
        subtasks=[f"Read {table.file}.", f"Write the total into {doc}.", f"Convert {doc} to PDF."],
        evaluation=[{"function": "evaluate_file_exist", "args": {"file": pdf}},
                    {"function": "evaluate_contain", "args": {"doc_type": "pdf", "file": pdf, "keywords": [fmt(total)]}}],
        memory=[piece(1, "action", f"I need the total {header} written up", f"total {header}"),
                piece(2, "fact", f"the {header} figures for that write-up are in {stem(table.file)}", stem(table.file)),
                piece(3, "action", f"the {header} write-up should be saved as {stem(doc)}, plus a PDF copy", stem(doc))],
        query="Can you prepare that totals document and the PDF?",
        oracle=[call("excel_read_file", file_path=table.file),
                call("word_write_to_file", file_path=doc, content=f"Total {header}: {fmt(total)}"),
                call("word_convert_to_pdf", file_path=doc)],
        baseline=[call("word_write_to_file", file_path="data/totals.docx", content="Total: to be confirmed"),
                  call("word_convert_to_pdf", file_path="data/totals.docx")],
    )


@family("meeting_pack", ("calendar", "word", "email"), "hard")
def meeting_pack(inp: FamilyInput) -> TaskDraft | None:
    cal = calendar_of(inp.notes, inp.user)
    slots = free_slots_after(cal, inp.now) if cal else []
    if not slots or not inp.colleagues:
        return None
    start, end = inp.rng.choice(slots)
    title = inp.rng.choice(MEETING_TITLES)
    who, name = _colleague(inp)
    points = list(inp.rng.choice(MEMO_TOPICS))[:2]
    agenda = _out_name(inp, "agenda", "docx")
    when = start.strftime("%Y-%m-%d %H:%M")
    fmt_t = "%Y-%m-%d %H:%M:%S"
    return TaskDraft(
        family="meeting_pack", apps=["calendar", "word", "email"], difficulty="hard",
        description=f"Book '{title}' on {inp.user}'s calendar at {when}-{end:%H:%M}, write the agenda {agenda} "
                    f"covering {', '.join(points)}, and email {name} ({who}) about it.",
        intent="Set up the meeting I described: book it, write its agenda and invite my colleague.",
        subtasks=["Book the meeting.", f"Write the agenda {agenda}.", f"Email {name}."],
        evaluation=[{"function": "evaluate_calendar_event",
                     "args": {"username": inp.user, "summary": title, "start": start.strftime(fmt_t),
                              "end": end.strftime(fmt_t)}},
                    {"function": "evaluate_contain",
                     "args": {"doc_type": "docx", "file": agenda, "keywords": points}},
                    {"function": "evaluate_email_sent",
                     "args": {"sender": inp.user, "recipient": who, "body_keywords": [title]}}],
        memory=[piece(1, "fact", f"we are holding a meeting at {when}", when),
                piece(2, "fact", f"the upcoming meeting will be called the {title}", title),
                piece(3, "action", f"the agenda goes in {stem(agenda)} and covers {points[0]} and {points[1]}",
                      stem(agenda)),
                piece(4, "action", f"{name} should be invited to the meeting by email", name)],
        query="Please set up that meeting with the agenda.",
        oracle=[call("calendar_create_event", user=inp.user, summary=title, start=start.strftime(fmt_t),
                     end=end.strftime(fmt_t)),
                call("word_write_to_file", file_path=agenda, content="Agenda\n" + "\n".join(points)),
                call("email_send_email", sender=inp.user, recipient=who, subject=f"Invitation: {title}",
                     content=f"Please join the {title} on {when}. Agenda: {agenda}.")],
        baseline=[],
    )


