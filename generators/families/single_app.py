"""Task families that need one app."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

from generators.chances import DRAFT
from generators.english import column_words, join_and
from generators.families.base import (
    TIME_FORMAT,
    FamilyInput,
    all_invoice_facts,
    answer_from,
    booking,
    calendar_of,
    call,
    chance,
    column_sum,
    computed,
    distinct,
    docs,
    draft,
    event_check,
    extreme,
    facts_in,
    family,
    first_column,
    fmt,
    guess_total,
    guessed_right,
    inbox_of,
    label_for,
    misreadings_of,
    mistaken_for,
    near,
    out_name,
    own_words,
    pick_column,
    piece,
    send,
    sender_user,
    stem,
    weekday_text,
)
from generators.families.time_rules import SlotChoice, choose_window, window_piece, with_correction
from generators.model import Distractor, TaskDraft
from office_env.evaluation import builders as cr

MEMO_TOPICS = (
    ("vendor contract", "parking passes", "quarterly review"),
    ("onboarding checklist", "laptop refresh", "security training"),
    ("team offsite", "travel budget", "client feedback"),
    ("hiring plan", "office move", "holiday rota"),
    ("release notes", "support backlog", "pricing update"),
)
MEETING_TITLES = ("Vendor review", "Budget check-in", "Hiring sync", "Roadmap planning", "Client prep",
                  "Design critique", "Quarterly forecast", "Training debrief", "Contract walkthrough")


@family("sheet_question", ("excel",), "easy")
def sheet_question(inp: FamilyInput) -> TaskDraft | None:
    guess = first_column(inp)  # the intent alone: the first sheet's first figures, their highest
    picked = pick_column(inp, avoid=guess)
    if not picked:
        return None
    table, label, col = picked
    highest = inp.rng.random() < DRAFT.highest
    answer = label_for(table, label, col, highest)
    if answer is None:
        return None
    guessed = label_for(guess[0], guess[1], guess[2], True) if guess else None
    if guessed == answer:
        return None
    which = "highest" if highest else "lowest"
    header, what = table.headers[col], table.headers[label]
    question = f"which {what} has the {which} {header} in {stem(table.file)}"
    asked = f"{what} with the {which} {header}"  # said whole: a sheet's rows may be named by more than one column
    answers = {asked: answer}
    superseded: tuple[str, ...] = ()
    other = f"{what} with the {'lowest' if highest else 'highest'} {header}"
    alt = label_for(table, label, col, not highest)
    if alt and alt != answer and chance(inp, DRAFT.correct):
        superseded, answers[other] = (other,), alt
    distractors: tuple[Distractor, ...] = ()
    others = [c for c in table.numeric_columns() if c != col]
    if others and chance(inp, DRAFT.distract):
        c2 = inp.rng.choice(others)
        near_q = f"{what} with the {which} {table.headers[c2]}"
        alt2 = label_for(table, label, c2, highest)
        if alt2 and alt2 != answer and near_q.lower() not in asked.lower():
            distractors, answers[near_q] = (
                near(near_q, f"last month the question was the {near_q}, and that one is settled"),), alt2
    m1 = piece(1, "fact", f"my manager wants to know the {asked}", asked,
               cue="question", about="my manager's question", superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the numbers for my manager's question are in {stem(table.file)}", stem(table.file),
               cue="source_file", about="my manager's question")

    def plan(value_of: str) -> list:
        return answer_from("excel", table.file, value_of)

    return draft(
        inp,
        description=f"Find {question} (file {table.file}) and write the answer into data/answer.txt.",
        subtasks=[f"Read {table.file}.", f"Find the {what} with the {which} {header}.",
                  "Write it into data/answer.txt."],
        evaluation=[cr.answer(keywords=[answer])],
        memory=[m1, m2],
        oracle=plan(answer),
        baseline=answer_from("excel", guess[0].file, guessed)
        if guess and guessed else [call("system_write_answer", text="I do not know which question you mean.")],
        misreadings=misreadings_of([m1], lambda mid, value: plan(answers[value])),
        computed=[extreme(table, label, col, highest, given=("m1",))],
    )


@family("sheet_total", ("excel",), "medium")
def sheet_total(inp: FamilyInput) -> TaskDraft | None:
    guess = first_column(inp, min_rows=3, summable=True)  # the intent alone: the first sheet's first total
    picked = pick_column(inp, min_rows=3, summable=True, avoid=guess)
    if not picked:
        return None
    table, _, col = picked
    totals = table.totals()
    header = table.headers[col]
    total = totals[header]
    if guessed_right(guess, total):
        return None
    others = [h for h in totals if h != header and totals[h] != total and h.lower() not in header.lower()
              and header.lower() not in h.lower()]
    value = f"total of the {header} column"
    superseded, distractors = mistaken_for(inp, others, "total of the {} column", "{} total",
                                           "the {} total was already sent round last week")
    about = inp.rng.choice(("the Friday total", "the total for the review", "the quarter-end total",
                            "the total for finance"))
    m1 = piece(1, "action", f"I need the total of the {header} column", value, cue="column_total",
               about=about, superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the {header} total should come from {stem(table.file)}", stem(table.file),
               cue="source_file", about=about)

    def plan(amount: float) -> list:
        return answer_from("excel", table.file, fmt(amount))

    def misread_plan(mid: str, said: str) -> list | None:
        for h, amount in totals.items():
            if said in (f"total of the {h} column", f"{h} total"):
                return plan(amount)
        return None

    return draft(
        inp,
        description=f"Add up the {header} column of {table.file} and write the total into data/answer.txt.",
        subtasks=[f"Read {table.file}.", f"Sum the {header} column.", "Write the total into data/answer.txt."],
        evaluation=[cr.answer(number=total, tolerance=0.01)],
        memory=[m1, m2],
        oracle=plan(total),
        baseline=answer_from("excel", guess[0].file, fmt(cast(float, guess_total(guess)))) if guess else
        [call("system_write_answer", text="0")],
        misreadings=misreadings_of([m1], misread_plan),
        computed=[column_sum(table, col, given=("m1",))],
    )


def _bumped(inp: FamilyInput, old: float) -> float:
    return round(old * inp.rng.choice((1.1, 1.25, 0.8, 1.5)) + inp.rng.randint(1, 9), 0 if old == int(old) else 2)


def _figure_words(header: str) -> str:
    """A column as the name of one figure in it: ``salary``, ``unit price``, ``Q3 figure``."""
    words = column_words(header)
    return words if words.split()[-1] in ("salary", "price", "amount", "quantity", "total", "cost", "score", "figure") \
        else f"{words} figure"


@family("sheet_update", ("excel",), "easy")
def sheet_update(inp: FamilyInput) -> TaskDraft | None:
    picked = pick_column(inp)
    if not picked:
        return None
    table, label, col = picked
    r = inp.rng.randrange(len(table.rows))
    old = table.column(col)[r]
    new = _bumped(inp, old)
    if new == old:
        return None
    who, header, value = table.rows[r][label], table.headers[col], fmt(new)
    # "the salary for Ada Northcott", "the Q3 figure for Consultants" (not "Consultants's Q3")
    what = f"the {_figure_words(header)} for {who}"
    taken = {fmt(v) for v in table.column(col)} | {value}
    superseded: tuple[str, ...] = ()
    distractors: tuple[Distractor, ...] = ()
    first = fmt(_bumped(inp, old))
    if first not in taken and value not in first and first not in value and chance(inp, DRAFT.correct):
        superseded = (first,)
        taken.add(first)
    others = [i for i in range(len(table.rows)) if i != r]
    if others and chance(inp, DRAFT.distract):
        o = inp.rng.choice(others)
        figure = fmt(_bumped(inp, table.column(col)[o]))
        if figure not in taken and all(figure not in t and t not in figure for t in taken):
            distractors = (near(figure, f"for {table.rows[o][label]} the {_figure_words(header)} may go to {figure} "
                                        "next quarter, but nothing is decided there yet"),)
    m1 = piece(1, "fact", f"{what} in {stem(table.file)} is changing to {value}", value, cue="new_figure",
               about=what, superseded=superseded, distractors=distractors)

    def plan(figure: str) -> list:
        return [call("excel_set_cell", file_path=table.file, row=r + 2, col=col + 1,
                     value=float(figure) if "." in figure else int(figure))]

    return TaskDraft(
        description=f"In {table.file}, set the {header} of {who} (row {r + 2}, column {col + 1}) to {value}.",
        intent=inp.intent(),
        subtasks=[f"Open {table.file}.", f"Set {what} to the new value."],
        evaluation=[cr.excel_cell_value(ignore_case=True, file=table.file,
                                        matches=[{"row": r + 2, "col": col + 1, "value": value}])],
        memory=[m1],
        query=inp.query(what=what),
        oracle=plan(value),
        baseline=[call("excel_read_file", file_path=table.file)],
        misreadings=misreadings_of([m1], lambda mid, figure: plan(figure)),
    )


@family("write_memo", ("word",), "medium")
def write_memo(inp: FamilyInput) -> TaskDraft | None:
    """A memo on points given in the chat that must also repeat a decision recorded in one of the
    office's documents (which one is said in the chat)."""
    sources = [(d, line, fact) for d in docs(inp.notes, "word") for line in d["lines"]
               if any(w in line.lower() for w in ("decision", "approved", "agreed")) for fact in facts_in(line)[:1]]
    if not sources:
        return None
    doc, line, fact = inp.rng.choice(sources)
    topics = inp.rng.choice(MEMO_TOPICS)
    out = out_name(inp, "memo", "docx")
    points = list(topics)[:2]
    superseded: tuple[str, ...] = ()
    if chance(inp, DRAFT.correct):
        first = out_name(inp, "memo", "docx")
        if stem(first) != stem(out) and stem(first)[:-5] not in stem(out) and stem(out)[:-5] not in stem(first):
            superseded = (stem(first),)
    distractors: tuple[Distractor, ...] = ()
    spare = [t for group in MEMO_TOPICS if group != topics for t in group
             if all(t not in p and p not in t for p in points)]
    if chance(inp, DRAFT.distract):
        other = inp.rng.choice(spare)
        distractors = (near(other, f"the memo for next month is the one about the {other}, not this one"),)

    def content_of(items: list[str], decision: str) -> str:
        return ("Memo\n" + "\n".join(f"- {p.capitalize()}: to be discussed this week." for p in items)
                + f"\n- Recorded decision: {decision}")

    memory = [piece(1, "action", f"I want a memo saved as {stem(out)}", stem(out), cue="output_file",
                    about="the memo", superseded=superseded)]
    memory += [piece(i + 2, "fact", f"the memo has to cover the {p}", p, cue="memo_point", about="the memo",
                     distractors=distractors if i == 0 else ())
               for i, p in enumerate(points)]
    memory.append(piece(len(points) + 2, "fact", f"the memo should repeat the decision written in {stem(doc['file'])}",
                        stem(doc["file"]), cue="document", about="the memo", thread=2))

    def plan(mid: str, value: str) -> list:
        if mid == "m1":
            return [call("word_read_file", file_path=doc["file"]),
                    call("word_write_to_file", file_path=f"data/{value}", content=content_of(points, line))]
        return [call("word_read_file", file_path=doc["file"]),
                call("word_write_to_file", file_path=out, content=content_of([value] + points[1:], line))]

    return draft(
        inp,
        description=f"Write a Word memo {out} that covers {join_and(points)} and repeats the decision recorded in "
                    f"{doc['file']} ({fact}).",
        subtasks=[f"Read {doc['file']} for the decision.", f"Create {out}.",
                  "Write one line per point and the decision."],
        evaluation=[cr.file_exist(file=out),
                    cr.contain(doc_type="docx", file=out, keywords=[*points, fact])],
        memory=memory,
        oracle=[call("word_read_file", file_path=doc["file"]),
                call("word_write_to_file", file_path=out, content=content_of(points, line))],
        # the intent alone: the first notes' decision under the memo's name, with no points of its own to add
        baseline=[call("word_read_file", file_path=docs(inp.notes, "word")[0]["file"]),
                  call("word_write_to_file", file_path=out, content="Memo\n- Decision as recorded in the notes.")],
        misreadings=misreadings_of(memory[:2], plan),
    )


@family("doc_to_pdf", ("word",), "easy")
def doc_to_pdf(inp: FamilyInput) -> TaskDraft | None:
    options = docs(inp.notes, "word")
    if not options:
        return None
    doc = inp.rng.choice(options)
    out = out_name(inp, "shared", "pdf")
    words = sorted({w.strip(".,;:()") for w in " ".join(doc["lines"][2:]).split()
                    if len(w.strip(".,;:()")) > 6 and w.strip(".,;:()").isalpha()}, key=lambda w: (-len(w), w))[:2]
    if not words:
        return None
    # and what tells it from another document holding those two words (its draft, "meeting_notes_old.docx")
    checked = words + telling_words(doc, [d for d in inp.notes.get("word", {}).get("files", [])
                                          if d.get("lines") and "error" not in d and d["file"] != doc["file"]], words)
    distractors: tuple[Distractor, ...] = ()
    others = [d for d in options if d is not doc and stem(d["file"]) not in stem(doc["file"])
              and stem(doc["file"]) not in stem(d["file"])
              and not all(w in " ".join(d["lines"]) for w in words)]
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)
        distractors = (near(stem(other["file"]), f"{stem(other['file'])} is the older write-up, it stays internal"),)
    superseded: tuple[str, ...] = ()
    if chance(inp, DRAFT.correct):
        first = out_name(inp, "shared", "pdf")
        if stem(first)[:-4] not in stem(out) and stem(out)[:-4] not in stem(first):
            superseded = (stem(first),)
    m1 = piece(1, "fact", f"the document to share is {stem(doc['file'])}", stem(doc["file"]), cue="document",
               about="the PDF copy", distractors=distractors)
    m2 = piece(2, "action", f"the shared PDF copy should be called {stem(out)}", stem(out), cue="output_file",
               about="the PDF copy", superseded=superseded)

    def plan(mid: str, value: str) -> list:
        if mid == "m1":
            path = next(d["file"] for d in options if stem(d["file"]) == value)
            return [call("word_convert_to_pdf", file_path=path, output_path=out)]
        return [call("word_convert_to_pdf", file_path=doc["file"], output_path=f"data/{value}")]

    return draft(
        inp,
        description=f"Convert {doc['file']} to PDF and save it as {out}.",
        subtasks=[f"Convert {doc['file']} to PDF.", f"Save it as {out}."],
        evaluation=[cr.file_exist(file=out),
                    cr.contain(doc_type="pdf", file=out, keywords=checked)],
        memory=[m1, m2],
        oracle=[call("word_convert_to_pdf", file_path=doc["file"], output_path=out)],
        # the intent alone: the first document, under its own name
        baseline=[call("word_convert_to_pdf", file_path=options[0]["file"])],
        misreadings=misreadings_of([m1, m2], plan),
    )


def telling_words(doc: dict, others: list[dict], words: list[str]) -> list[str]:
    """What tells ``doc`` from each of ``others`` that holds all of ``words`` too (the draft of the
    same notes beside them, "meeting_notes_old.docx"): for each, the longest of ``doc``'s figures
    and dates it lacks, else its longest long word it lacks; none when ``words`` tell them apart."""
    def tokens(lines: list[str]) -> list[str]:
        return [t.strip(".,;:()") for t in " ".join(lines).split() if t.strip(".,;:()")]

    extra: list[str] = []
    for other in others:
        text = " ".join(other["lines"]).lower()
        if not all(w.lower() in text for w in [*words, *extra]):
            continue
        theirs = {t.lower() for t in tokens(other["lines"])}
        fresh = [t for t in tokens(doc["lines"]) if t.lower() not in theirs and t.lower() not in text
                 and (any(c.isdigit() for c in t) or (t.isalpha() and len(t) > 6))]
        if fresh:
            extra.append(max(fresh, key=lambda t: (any(c.isdigit() for c in t), len(t))))
    return extra


def earliest_start(now: datetime) -> datetime:
    """The first whole hour more than an hour after ``now``: no free slot the families see starts
    earlier (the slot families book on later days only; a time said outright may be today)."""
    return (now + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)


def _slot_time(text: str) -> datetime:
    """A free slot's "YYYY-MM-DD HH:MM:SS" (read fast: every family drawn on an office reads its
    calendar's slots); anything else as strptime reads it, or ValueError."""
    if len(text) == 19 and text[10] == " ":
        return datetime.fromisoformat(text)
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def free_slots_after(cal: dict, now: datetime) -> list[tuple[datetime, datetime]]:
    slots = []
    earliest = earliest_start(now)
    for slot in cal.get("free_slots", []):
        start = _slot_time(slot["start"])
        if start >= earliest:
            slots.append((start, _slot_time(slot["end"])))
    return slots


def first_free_booking(inp: FamilyInput) -> list:
    """What an agent that knows only the intent books: a "Meeting" in the user's first free hour."""
    cal = calendar_of(inp.notes, inp.user)
    slots = free_slots_after(cal, inp.now) if cal else []
    return [call("calendar_list_events", user=inp.user), *([booking(inp.user, "Meeting", *slots[0])] if slots else [])]


def meeting_dynamics(inp: FamilyInput, slots: list[tuple[datetime, datetime]], slot: tuple[datetime, datetime],
                     title: str, near_text: str):
    """A meeting's time as said (``when``), the span of every time said for it, sometimes an
    earlier free slot said first and corrected later, and sometimes another meeting's title as a
    near-miss (``near_text`` with ``{}`` for it)."""
    when = slot[0].strftime("%Y-%m-%d %H:%M")
    spans = {when: slot}
    superseded: tuple[str, ...] = ()
    earlier = [sl for sl in slots if sl[0] != slot[0] and distinct(sl[0].strftime("%Y-%m-%d %H:%M"), when)]
    if earlier and chance(inp, DRAFT.correct):
        first = inp.rng.choice(earlier)
        superseded = (first[0].strftime("%Y-%m-%d %H:%M"),)
        spans[superseded[0]] = first
    distractors: tuple = ()
    if chance(inp, DRAFT.distract):
        other = inp.rng.choice([t for t in MEETING_TITLES if distinct(t, title)])
        distractors = (near(other, near_text.format(other)),)
    return when, spans, superseded, distractors


def slot_rule(choice: SlotChoice, whose: str = "mine") -> str:
    """The rule a booked slot follows, in words that name the window the chat gives."""
    who = "my first free one" if whose == "mine" else "the earliest when we are both free"
    return f"one hour, on the hour within {choice.text}, {who}"


@family("schedule_meeting", ("calendar",), "medium")
def schedule_meeting(inp: FamilyInput) -> TaskDraft | None:
    """Book a meeting in the first free hour of a day said in the chat, within the office hours said
    in the chat: the time comes from the calendar, the day and the window from the chat."""
    cal = calendar_of(inp.notes, inp.user)
    choice = choose_window(inp, free_slots_after(cal, inp.now) if cal else [])
    if choice is None:
        return None
    days = {weekday_text(d): d for d in choice.days()}
    day_text = inp.rng.choice(sorted(days))
    day = days[day_text]
    choice = with_correction(inp, choice, day)
    start, end = choice.slot(day)  # type: ignore[misc]  # the window was chosen for a free slot that day
    rule = slot_rule(choice)
    title = inp.rng.choice(MEETING_TITLES)
    superseded: tuple[str, ...] = ()
    earlier = [d for d in days if distinct(d, day_text)]
    if earlier and chance(inp, DRAFT.correct):
        superseded = (inp.rng.choice(earlier),)
    distractors: tuple[Distractor, ...] = ()
    if chance(inp, DRAFT.distract):
        other = inp.rng.choice([t for t in MEETING_TITLES if distinct(t, title)])
        distractors = (near(other, f"the {other} is a different meeting, not this one"),)
    about = "the new meeting"
    m1 = piece(1, "fact", f"there will be a meeting called {title}", title, cue="meeting_title",
               about=about, distractors=distractors)
    m2 = piece(2, "fact", f"the new meeting goes on {day_text}", day_text, cue="session_day",
               about=about, superseded=superseded)
    m3 = window_piece(3, choice, rule, about)

    def plan(mid: str, value: str) -> list | None:
        summary = value if mid == "m1" else title
        slot = choice.slot(days[value]) if mid == "m2" else choice.slot(day, value) if mid == "m3" else (start, end)
        if slot is None:  # nothing free in that window: an agent that kept it books nothing
            return [call("calendar_list_events", user=inp.user)]
        return [call("calendar_list_events", user=inp.user), booking(inp.user, summary, *slot)]

    return draft(
        inp,
        description=f"Add '{title}' to {inp.user}'s calendar on {start:%Y-%m-%d} in the first free whole hour between "
                    f"{choice.window[0]}:00 and {choice.window[1]}:00 (that is {start:%H:%M}-{end:%H:%M}), without "
                    "overlapping other events.",
        subtasks=["Check my calendar on that day.", "Create the event in the first free hour within the window."],
        evaluation=[event_check(inp.user, title, start, end),
                    cr.calendar_no_overlap(username=inp.user)],
        memory=[m1, m2, m3],
        oracle=plan("m1", title),
        baseline=first_free_booking(inp),
        misreadings=misreadings_of([m1, m2, m3], plan),
        computed=[computed(start.strftime(TIME_FORMAT), "rule", [], rule=rule, given=("m2", "m3")),
                  computed(end.strftime(TIME_FORMAT), "rule", [], rule=rule, given=("m2", "m3"))],
    )


@family("pdf_total", ("pdf",), "easy")
def pdf_total(inp: FamilyInput) -> TaskDraft | None:
    """The total of the invoice the chat names by number. The intent alone ("the total accounting
    needs") reads the first open invoice listed; the task is set on another one."""
    found = all_invoice_facts(inp)
    nothing: list[tuple[str, str, float] | None] = [None]
    guess = (all_invoice_facts(inp, unpaid=True) or found or nothing)[0]
    others = [f for f in found if f != guess]
    if guess is None or not others:
        return None
    pdf, number, total = inp.rng.choice(others)
    distractors: tuple[Distractor, ...] = ()
    deposit = fmt(round(total * inp.rng.choice((0.2, 0.25, 0.3)), 2))
    if distinct(deposit, fmt(total)) and chance(inp, DRAFT.distract):
        distractors = (near(deposit, f"last month's bill from that supplier came to {deposit}"),)
    m1 = piece(1, "fact", f"accounting needs the total of invoice {number}", number, cue="invoice_number",
               about="the amount accounting needs", distractors=distractors)

    def plan(amount: str) -> list:
        return answer_from("pdf", pdf, amount)

    return draft(
        inp,
        description=f"Read the total of invoice {number} from {pdf} and write it into data/answer.txt.",
        subtasks=[f"Read {pdf}.", "Write its total into data/answer.txt."],
        evaluation=[cr.answer(number=total, tolerance=0.01)],
        memory=[m1],
        oracle=plan(fmt(total)),
        baseline=answer_from("pdf", guess[0], fmt(guess[2])),
        misreadings=misreadings_of([m1], lambda mid, value: plan(value)),
    )


# (what the reply says, with {} for the value; values to choose from; a near-miss sentence; words
# of the subjects of the mails it answers: a point is passed on only in reply to a mail it fits)
REPLY_POINTS = (
    ("the review can move to {}", ("Room 4B", "Room 2A", "Room 5C", "Room 3D"), "the training next week is in {}",
     ("review", "status")),
    ("we should use the {} this time", ("blue template", "green template", "short template"),
     "the board pack always uses the {}", ("policy draft", "budget numbers", "status", "org chart")),
    ("the client asked for a call {}", ("after 3 pm", "before 11 am", "after 4 pm"),
     "the supplier prefers calls {}", ("status", "vendor meeting")),
    ("the draft needs one more section on {}", ("risks", "costs", "timelines"),
     "last quarter's draft was missing a section on {}", ("policy draft", "status")),
    ("the second shipment arrives on {}", ("Thursday morning", "Friday afternoon", "Monday morning"),
     "the first shipment came on {}", ("purchase order", "stock check", "invoice")),
    ("the booking is for {}", ("14 people", "18 people", "22 people"), "the kickoff dinner was for {}",
     ("team lunch", "room booking", "lunch and learn")),
    ("{} should be copied next time", ("Jordan from legal", "Priya from finance", "Sam from procurement"),
     "{} is out until the end of the month", ("invoice", "budget numbers", "vendor meeting", "second quote",
                                              "agreement with", "expense claims")),
)


def _points_for(subject: str) -> list[tuple]:
    return [point for point in REPLY_POINTS if any(word in subject.lower() for word in point[3])]


@family("reply_to_mail", ("email",), "easy")
def reply_to_mail(inp: FamilyInput) -> TaskDraft | None:
    """A reply that passes on a point given in the chat and confirms the specific (a date, an
    amount, a time) the sender wrote, so the agent has to open the right message."""
    read = [(m, facts_in(own_words(m))) for m in inbox_of(inp.notes, inp.user)
            if not m.get("subject", "").lower().startswith("re:") and "@" in m.get("from", "")]
    inbox = [(m, facts[0]) for m, facts in read if facts and _points_for(m.get("subject", ""))]
    if not inbox:
        return None
    message, fact = inp.rng.choice(inbox)
    shape, choices, near_shape, _ = inp.rng.choice(_points_for(message["subject"]))
    value, *rest = inp.rng.sample(choices, len(choices))
    rest = [r for r in rest if distinct(r, value)]
    point = shape.format(value)
    sender = sender_user(message)
    subject = message["subject"]
    superseded: tuple[str, ...] = ()
    if rest and chance(inp, DRAFT.correct):
        superseded = (rest.pop(),)
    distractors: tuple[Distractor, ...] = ()
    if rest and chance(inp, DRAFT.distract):
        distractors = (near(rest[0], near_shape.format(rest[0])),)
    m1 = piece(1, "fact", f"about the '{subject}' email, {point}", value, cue="reply_point",
               about=f"the reply about {subject}", superseded=superseded, distractors=distractors)

    def plan(said: str) -> list:
        return [call("email_list_emails", user=inp.user),
                call("email_read_email", user=inp.user, email_id=message["id"]),
                send(inp, sender, f"Re: {subject}",
                     f"Hi,\n\nThanks for your message: {shape.format(said)}. Confirming {fact} as you wrote."
                     f"\n\nBest regards,\n{inp.user_name}")]

    return draft(
        inp, about=subject,
        description=f"Reply to the email '{subject}' from {message['from']} (subject 'Re: {subject}'), tell them that "
                    f"{point}, and confirm the {fact} they gave.",
        subtasks=[f"Find the email '{subject}' and read it.",
                  "Send the reply with my point and their detail confirmed."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=sender, subject_keywords=[subject],
                                  body_keywords=[value, fact])],
        memory=[m1],
        oracle=plan(value),
        # the intent alone answers the first such mail, confirming its detail, with no point to pass on
        baseline=[call("email_list_emails", user=inp.user),
                  call("email_read_email", user=inp.user, email_id=inbox[0][0]["id"]),
                  send(inp, sender_user(inbox[0][0]), f"Re: {inbox[0][0]['subject']}",
                       f"Hi,\n\nThanks for your message. Confirming {inbox[0][1]} as you wrote.\n\n"
                       f"Best regards,\n{inp.user_name}")],
        misreadings=misreadings_of([m1], lambda mid, said: plan(said)),
    )
