"""Task families that need one app."""

from __future__ import annotations

from datetime import datetime, timedelta

from generators.families.base import (
    FamilyInput, call, calendar_of, docs, family, fmt, inbox_of, invoice_facts, pick_column, piece, stem,
)
from generators.model import TaskDraft

MEMO_TOPICS = (
    ("vendor contract", "parking passes", "quarterly review"),
    ("onboarding checklist", "laptop refresh", "security training"),
    ("team offsite", "travel budget", "client feedback"),
    ("hiring plan", "office move", "holiday rota"),
    ("release notes", "support backlog", "pricing update"),
)
MEETING_TITLES = ("Vendor review", "Budget check-in", "Hiring sync", "Roadmap planning", "Client prep",
                  "Design critique", "Quarterly forecast", "Training debrief", "Contract walkthrough")
FILE_WORDS = ("notes", "summary", "brief", "update", "recap", "plan")


def _out_name(inp: FamilyInput, prefix: str, ext: str) -> str:
    month = inp.now.strftime("%b").lower()
    return f"data/{prefix}_{inp.rng.choice(FILE_WORDS)}_{month}{inp.rng.randint(2, 99)}.{ext}"


@family("sheet_question", ("excel",), "easy")
def sheet_question(inp: FamilyInput) -> TaskDraft | None:
    picked = pick_column(inp)
    if not picked:
        return None
    table, label, col = picked
    values = table.column(col)
    highest = inp.rng.random() < 0.5
    target = max(values) if highest else min(values)
    if values.count(target) != 1:
        return None
    answer = table.rows[values.index(target)][label]
    which = "highest" if highest else "lowest"
    question = f"which {table.headers[label]} has the {which} {table.headers[col]} in {stem(table.file)}"
    return TaskDraft(
        family="sheet_question", apps=["excel"], difficulty="easy",
        description=f"Find {question} (file {table.file}) and write the answer into data/answer.txt.",
        intent="Answer the spreadsheet question I mentioned and put the answer in the answer file.",
        subtasks=[f"Read {table.file}.", f"Find the {table.headers[label]} with the {which} {table.headers[col]}.",
                  "Write it into data/answer.txt."],
        evaluation=[{"function": "evaluate_answer", "args": {"keywords": [answer]}}],
        memory=[piece(1, "fact", f"my manager wants to know which {table.headers[label]} has the {which} {table.headers[col]}", f"{which} {table.headers[col]}"),
                piece(2, "fact", f"the numbers for my manager's question are in {stem(table.file)}", stem(table.file))],
        query="Can you answer the spreadsheet question from my manager now?",
        oracle=[call("excel_read_file", file_path=table.file), call("system_write_answer", text=answer)],
        baseline=[call("system_write_answer", text="I do not know which question you mean.")],
    )


@family("sheet_total", ("excel",), "medium")
def sheet_total(inp: FamilyInput) -> TaskDraft | None:
    picked = pick_column(inp, min_rows=3)
    if not picked:
        return None
    table, _, col = picked
    total = round(sum(table.column(col)), 2)
    header = table.headers[col]
    return TaskDraft(
        family="sheet_total", apps=["excel"], difficulty="medium",
        description=f"Add up the {header} column of {table.file} and write the total into data/answer.txt.",
        intent="Work out the total I asked for from one of our sheets and write it in the answer file.",
        subtasks=[f"Read {table.file}.", f"Sum the {header} column.", "Write the total into data/answer.txt."],
        evaluation=[{"function": "evaluate_answer", "args": {"number": total, "tolerance": 0.01}}],
        memory=[piece(1, "action", f"I need the total of the {header} column", f"total of the {header} column"),
                piece(2, "fact", f"the {header} total should come from {stem(table.file)}", stem(table.file))],
        query="Could you get me that total from the sheet?",
        oracle=[call("excel_read_file", file_path=table.file), call("system_write_answer", text=fmt(total))],
        baseline=[call("system_write_answer", text="0")],
    )


@family("sheet_update", ("excel",), "easy")
def sheet_update(inp: FamilyInput) -> TaskDraft | None:
    picked = pick_column(inp)
    if not picked:
        return None
    table, label, col = picked
    r = inp.rng.randrange(len(table.rows))
    old = table.column(col)[r]
    new = round(old * inp.rng.choice((1.1, 1.25, 0.8, 1.5)) + inp.rng.randint(1, 9), 0 if old == int(old) else 2)
    if new == old:
        return None
    who, header, value = table.rows[r][label], table.headers[col], fmt(new)
    return TaskDraft(
        family="sheet_update", apps=["excel"], difficulty="easy",
        description=f"In {table.file}, set the {header} of {who} (row {r + 2}, column {col + 1}) to {value}.",
        intent="Update the spreadsheet entry I told you about with the new figure.",
        subtasks=[f"Open {table.file}.", f"Set {who}'s {header} to the new value."],
        evaluation=[{"function": "evaluate_excel_cell_value",
                     "args": {"file": table.file, "matches": [{"row": r + 2, "col": col + 1, "value": value}]}}],
        memory=[piece(1, "fact", f"{who}'s {header} in {stem(table.file)} is changing to {value}", value)],
        query="Please make that spreadsheet change we talked about.",
        oracle=[call("excel_set_cell", file_path=table.file, row=r + 2, col=col + 1, value=new)],
        baseline=[call("excel_read_file", file_path=table.file)],
    )


@family("write_memo", ("word",), "medium")
def write_memo(inp: FamilyInput) -> TaskDraft | None:
    topics = inp.rng.choice(MEMO_TOPICS)
    out = _out_name(inp, "memo", "docx")
    points = list(topics)
    content = "Memo\n" + "\n".join(f"- {p.capitalize()}: to be discussed this week." for p in points)
    memory = [piece(1, "action", f"I want a memo saved as {stem(out)}", stem(out))]
    memory += [piece(i + 2, "fact", f"the memo has to cover the {p}", p) for i, p in enumerate(points)]
    return TaskDraft(
        family="write_memo", apps=["word"], difficulty="medium",
        description=f"Write a Word memo {out} that covers: {', '.join(points)}.",
        intent="Write up the memo I described, with every point I asked for.",
        subtasks=[f"Create {out}.", "Write one line per required point."],
        evaluation=[{"function": "evaluate_file_exist", "args": {"file": out}},
                    {"function": "evaluate_contain", "args": {"doc_type": "docx", "file": out, "keywords": points}}],
        memory=memory,
        query="Can you write the memo I asked about?",
        oracle=[call("word_write_to_file", file_path=out, content=content)],
        baseline=[call("word_write_to_file", file_path="data/memo.docx", content="Memo\n- Points to be confirmed.")],
    )


@family("doc_to_pdf", ("word",), "easy")
def doc_to_pdf(inp: FamilyInput) -> TaskDraft | None:
    options = docs(inp.notes, "word")
    if not options:
        return None
    doc = inp.rng.choice(options)
    out = _out_name(inp, "shared", "pdf")
    words = [w for w in " ".join(doc["lines"][:3]).replace(",", " ").split() if len(w) > 5][:2]
    if not words:
        return None
    return TaskDraft(
        family="doc_to_pdf", apps=["word"], difficulty="easy",
        description=f"Convert {doc['file']} to PDF and save it as {out}.",
        intent="Turn the document I mentioned into a PDF under the name I gave you.",
        subtasks=[f"Convert {doc['file']} to PDF.", f"Save it as {out}."],
        evaluation=[{"function": "evaluate_file_exist", "args": {"file": out}},
                    {"function": "evaluate_contain", "args": {"doc_type": "pdf", "file": out, "keywords": words}}],
        memory=[piece(1, "fact", f"the document to share is {stem(doc['file'])}", stem(doc["file"])),
                piece(2, "action", f"the shared PDF copy should be called {stem(out)}", stem(out))],
        query="Please make the PDF copy I asked for.",
        oracle=[call("word_convert_to_pdf", file_path=doc["file"], output_path=out)],
        baseline=[],
    )


def free_slots_after(cal: dict, now: datetime) -> list[tuple[datetime, datetime]]:
    slots = []
    for slot in cal.get("free_slots", []):
        start = datetime.strptime(slot["start"], "%Y-%m-%d %H:%M:%S")
        if start > now + timedelta(hours=1):
            slots.append((start, datetime.strptime(slot["end"], "%Y-%m-%d %H:%M:%S")))
    return slots


@family("schedule_meeting", ("calendar",), "medium")
def schedule_meeting(inp: FamilyInput) -> TaskDraft | None:
    cal = calendar_of(inp.notes, inp.user)
    slots = free_slots_after(cal, inp.now) if cal else []
    if not slots:
        return None
    start, end = inp.rng.choice(slots)
    title = inp.rng.choice(MEETING_TITLES)
    when = start.strftime("%Y-%m-%d %H:%M")
    return TaskDraft(
        family="schedule_meeting", apps=["calendar"], difficulty="medium",
        description=f"Add '{title}' to {inp.user}'s calendar from {start:%Y-%m-%d %H:%M} to {end:%H:%M}, "
                    "without overlapping other events.",
        intent="Put the meeting I told you about on my calendar.",
        subtasks=["Check my calendar.", "Create the event at the agreed time."],
        evaluation=[{"function": "evaluate_calendar_event",
                     "args": {"username": inp.user, "summary": title, "start": f"{start:%Y-%m-%d %H:%M:%S}",
                              "end": f"{end:%Y-%m-%d %H:%M:%S}"}},
                    {"function": "evaluate_calendar_no_overlap", "args": {"username": inp.user}}],
        memory=[piece(1, "fact", f"there will be a meeting called {title}", title),
                piece(2, "fact", f"the new meeting is at {when}, for one hour", when)],
        query="Can you put that meeting on my calendar?",
        oracle=[call("calendar_create_event", user=inp.user, summary=title, start=f"{start:%Y-%m-%d %H:%M:%S}",
                     end=f"{end:%Y-%m-%d %H:%M:%S}")],
        baseline=[call("calendar_list_events", user=inp.user)],
    )


@family("pdf_total", ("pdf",), "easy")
def pdf_total(inp: FamilyInput) -> TaskDraft | None:
    found = invoice_facts(inp)
    if not found:
        return None
    pdf, number, total = found
    return TaskDraft(
        family="pdf_total", apps=["pdf"], difficulty="easy",
        description=f"Read the total amount due from {pdf} (invoice {number}) and write it into data/answer.txt.",
        intent="Look up the amount I asked about in the PDF and write it in the answer file.",
        subtasks=[f"Read {pdf}.", "Write the total due into data/answer.txt."],
        evaluation=[{"function": "evaluate_answer", "args": {"number": total, "tolerance": 0.01}}],
        memory=[piece(1, "fact", f"accounting needs the total due on invoice {number}", number)],
        query="Could you look up that amount for accounting?",
        oracle=[call("pdf_read_file", file_path=pdf), call("system_write_answer", text=fmt(total))],
        baseline=[call("system_write_answer", text="0")],
    )


REPLY_POINTS = (
    ("the review can move to Room 4B", "Room 4B"),
    ("we can approve up to 3,200 dollars for it", "3,200 dollars"),
    ("the deadline is now the 28th", "the 28th"),
    ("Jordan from legal should be copied next time", "Jordan from legal"),
    ("the vendor quote came in at 7,450", "7,450"),
    ("we should use the blue template this time", "blue template"),
    ("the client asked for a call after 3 pm", "after 3 pm"),
    ("the draft needs one more section on risks", "section on risks"),
    ("the second shipment arrives on Thursday morning", "Thursday morning"),
    ("the offsite is capped at 14 people", "14 people"),
)


@family("reply_to_mail", ("email",), "easy")
def reply_to_mail(inp: FamilyInput) -> TaskDraft | None:
    inbox = [m for m in inbox_of(inp.notes, inp.user)
             if not m.get("subject", "").lower().startswith("re:") and "@" in m.get("from", "")]
    if not inbox:
        return None
    message = inp.rng.choice(inbox)
    point, value = inp.rng.choice(REPLY_POINTS)
    sender = message["from"].split("@")[0].strip(" <>\"'")
    subject = message["subject"]
    return TaskDraft(
        family="reply_to_mail", apps=["email"], difficulty="easy",
        description=f"Reply to the email '{subject}' from {message['from']} (subject 'Re: {subject}') "
                    f"and tell them that {point}.",
        intent="Reply to the email I mentioned with the answer I gave you.",
        subtasks=[f"Find the email '{subject}'.", "Send the reply with the point I gave you."],
        evaluation=[{"function": "evaluate_email_sent",
                     "args": {"sender": inp.user, "recipient": sender, "subject_keywords": [subject],
                              "body_keywords": [value]}}],
        memory=[piece(1, "fact", f"about the '{subject}' email, {point}", value)],
        query="Could you answer that email for me now?",
        oracle=[call("email_list_emails", user=inp.user),
                call("email_send_email", sender=inp.user, recipient=sender, subject=f"Re: {subject}",
                     content=f"Hi,\n\nThanks for your message: {point}.\n\nBest regards,\n{inp.user_name}")],
        baseline=[call("email_send_email", sender=inp.user, recipient=sender, subject=f"Re: {subject}",
                       content="Thanks, I will get back to you on this.")],
    )
