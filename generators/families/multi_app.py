"""Task families that chain two or three apps."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import cast

from generators.chances import DRAFT
from generators.english import column_words, join_and, possessive
from generators.families.base import (
    NEXT_MEETING_RE,
    TIME_FORMAT,
    FamilyInput,
    all_invoice_facts,
    booking,
    calendar_of,
    call,
    cell,
    chance,
    column_sum,
    computed,
    distinct,
    docs,
    draft,
    event_check,
    event_time,
    extreme,
    facts_in,
    family,
    first_column,
    fmt,
    guess_total,
    guessed_right,
    invoice_facts,
    label_for,
    mail,
    misreadings_of,
    mistaken_for,
    near,
    out_name,
    pick_column,
    piece,
    present_on,
    send,
    stem,
    weekday_text,
)
from generators.families.single_app import MEETING_TITLES, MEMO_TOPICS, free_slots_after, meeting_dynamics, slot_rule
from generators.families.time_rules import SlotChoice, choose_window, slot_times, window_piece, with_correction
from generators.model import Distractor, TaskDraft
from generators.value_pools import ROW_LABELS
from office_env.evaluation import builders as cr
from office_env.evaluation import keywords as kw
from office_env.synthesis.common import superseded_path

SUBJECTS = ("Quick numbers", "Figures you asked for", "Follow-up", "For your review", "Heads-up", "Numbers for Friday")


def _colleague(inp: FamilyInput) -> tuple[str, str]:
    return inp.rng.choice(inp.colleagues)


def _other_colleague(inp: FamilyInput, *taken: str) -> tuple[str, str] | None:
    """A colleague other than the ``taken`` names whose name neither holds nor is held by them."""
    options = [(u, n) for u, n in inp.colleagues if all(distinct(n, t) and n.split()[0] != t.split()[0] for t in taken)]
    return inp.rng.choice(options) if options else None


def _total(inp: FamilyInput, avoid: tuple | None = None):
    picked = pick_column(inp, min_rows=3, summable=True, avoid=avoid)
    if not picked:
        return None
    table, _, col = picked
    return table, table.headers[col], round(sum(table.column(col)), 2), col


def _renamed(inp: FamilyInput, out: str, prefix: str, ext: str) -> tuple[str, ...]:
    """Sometimes an earlier output name, corrected later in the chat."""
    if not chance(inp, DRAFT.correct):
        return ()
    first = out_name(inp, prefix, ext)
    return (stem(first),) if distinct(stem(first)[: -len(ext) - 1], stem(out)[: -len(ext) - 1]) else ()


@family("sheet_total_email", ("excel", "email"), "medium")
def sheet_total_email(inp: FamilyInput) -> TaskDraft | None:
    found = _total(inp)
    if not found or not inp.colleagues:
        return None
    table, header, total, col = found
    who, name = _colleague(inp)
    subject = inp.rng.choice(SUBJECTS)
    users = {name: who}
    superseded: tuple[str, ...] = ()
    distractors: tuple[Distractor, ...] = ()
    first = _other_colleague(inp, name)
    if first and chance(inp, DRAFT.correct):
        superseded, users[first[1]] = (first[1],), first[0]
    other = _other_colleague(inp, name, *superseded)
    if other and chance(inp, DRAFT.distract):
        distractors, users[other[1]] = (near(other[1], f"{other[1]} had the same kind of question last quarter, "
                                                       "and that one is closed"),), other[0]

    def body(person: str) -> str:
        return f"Hi {person.split()[0]}, the total {header} in {stem(table.file)} is {fmt(total)}."

    about = f"the {column_words(header)} total"
    m1 = piece(1, "fact", f"{name} asked me for the total {header}", name, cue="requester",
               about=about, superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the {header} figures to add up are in {stem(table.file)}", stem(table.file),
               cue="source_file", about=about)
    m3 = piece(3, "action", f"the email with the {header} total should have the subject '{subject}'", subject,
               cue="subject", about=about, thread=2)

    def plan(person: str) -> list:
        return [call("excel_read_file", file_path=table.file),
                send(inp, users[person], subject, body(person))]

    return draft(
        inp,
        description=f"Sum the {header} column of {table.file} and email the total to {name} ({who}) "
                    f"with the subject '{subject}'.",
        subtasks=[f"Read {table.file}.", f"Sum the {header} column.", f"Email the total to {name}."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=who, subject_keywords=[subject],
                                  body_keywords=[fmt(total)])],
        memory=[m1, m2, m3],
        oracle=plan(name),
        # the intent alone: the likeliest colleague and a plain subject
        baseline=[call("excel_read_file", file_path=table.file),
                  send(inp, inp.colleagues[0][0], "Total", f"The total {header} is {fmt(total)}.")],
        misreadings=misreadings_of([m1], lambda mid, person: plan(person)),
        computed=[column_sum(table, col, given=("m2",))],
    )


def _invoice_rows(out: str, number: str, total: float, first: str = "Invoice") -> list:
    pair = {"Invoice": number, "Total": total}
    second = "Total" if first == "Invoice" else "Invoice"
    return [call("excel_create_new_file", file_path=out),
            call("excel_set_cell", file_path=out, row=1, col=1, value=first),
            call("excel_set_cell", file_path=out, row=1, col=2, value=second),
            call("excel_set_cell", file_path=out, row=2, col=1, value=pair[first]),
            call("excel_set_cell", file_path=out, row=2, col=2, value=pair[second])]


@family("invoice_to_sheet", ("pdf", "excel"), "medium")
def invoice_to_sheet(inp: FamilyInput) -> TaskDraft | None:
    """Log the invoice the chat names in a new sheet; the intent alone logs the first one listed."""
    found = all_invoice_facts(inp)
    if len(found) < 2:
        return None
    guess = found[0]
    pdf, number, total = inp.rng.choice(found[1:])
    out = out_name(inp, "invoices", "xlsx")
    superseded = _renamed(inp, out, "invoices", "xlsx")
    distractors: tuple[Distractor, ...] = ()
    if chance(inp, DRAFT.distract):
        distractors = (near("Total then Invoice", "the old payables log had Total then Invoice, which nobody liked"),)
    m1 = piece(1, "action", f"the invoice log should be a new sheet called {stem(out)}", stem(out), cue="output_file",
               about="the invoice log", superseded=superseded)
    m2 = piece(2, "fact", f"the invoice we need to log is the one in {stem(pdf)}", stem(pdf), cue="document",
               about="the invoice log")
    m3 = piece(3, "fact", "the log needs two columns, Invoice then Total", "Invoice then Total", cue="layout",
               about="the invoice log", distractors=distractors)

    def plan(mid: str, value: str) -> list:
        if mid == "m1":
            return [call("pdf_read_file", file_path=pdf), *_invoice_rows(f"data/{value}", number, total)]
        return [call("pdf_read_file", file_path=pdf), *_invoice_rows(out, number, total, first="Total")]

    return draft(
        inp,
        description=f"Create {out} with the header Invoice, Total in row 1 and the invoice number and total "
                    f"from {pdf} in row 2.",
        subtasks=[f"Read {pdf}.", f"Create {out}.", "Write the header and the invoice row."],
        evaluation=[cr.excel_cell_value(ignore_case=True, file=out, matches=[{"row": 1, "col": 1, "value": "Invoice"},
                                                       {"row": 1, "col": 2, "value": "Total"},
                                                       {"row": 2, "col": 1, "value": number},
                                                       {"row": 2, "col": 2, "value": fmt(total)}])],
        memory=[m1, m2, m3],
        oracle=[call("pdf_read_file", file_path=pdf), *_invoice_rows(out, number, total)],
        baseline=[call("pdf_read_file", file_path=guess[0]), *_invoice_rows(out, guess[1], guess[2])],
        misreadings=misreadings_of([m1, m3], plan),
    )


MAX_NOTE_FACTS = 3  # specifics of a document its mail must hold (and of its older copy, must not)


def _older_copy(inp: FamilyInput, doc: dict) -> dict | None:
    """The superseded copy the office keeps beside ``doc`` (``meeting_notes_old.docx``: the same
    title, some figures and dates not yet corrected), when the notes list it."""
    wanted = superseded_path(doc["file"])
    return next((f for f in inp.notes.get("word", {}).get("files", [])
                 if f.get("file") == wanted and "error" not in f and f.get("lines")), None)


@family("notes_to_email", ("word", "email"), "easy")
def notes_to_email(inp: FamilyInput) -> TaskDraft | None:
    """Send a colleague the full text of a document (which one, and to whom, is said in the chat):
    the mail's body must hold the document's title line and its own specifics (dates, amounts,
    clock times: what a mention of the title alone, or another document, lacks), none the
    superseded copy beside it has instead (its draft of the same meeting, under the same title);
    its subject is the sender's choice (nothing asks for one)."""
    options = [d for d in docs(inp.notes, "word") if len(d["lines"]) >= 3]
    if not options or not inp.colleagues:
        return None
    doc = inp.rng.choice(options)
    who, name = _colleague(inp)
    if doc is options[0] and who == inp.colleagues[0][0]:
        return None  # the intent alone sends the first document to the likeliest colleague

    def subject_of(d: dict) -> str:
        return f"Recap: {d['lines'][0][:40]}".strip()

    text = "\n".join(doc["lines"])
    older = _older_copy(inp, doc)
    old_text = "\n".join(older["lines"]) if older else ""
    # what the full text holds and neither a mention of its title nor the older copy does
    own = [f for f in dict.fromkeys(facts_in("\n".join(doc["lines"][1:]))) if not kw.present(old_text, [f])]
    stale = [f for f in dict.fromkeys(facts_in(old_text)) if not kw.present(text, [f])]
    key = max(doc["lines"][1:], key=len)
    words = own[:MAX_NOTE_FACTS] or [w.strip(".,;:") for w in key.split() if len(w.strip(".,;:")) > 4][:2]
    if not words or (older and not own):
        return None
    users = {name: who}
    superseded: tuple[str, ...] = ()
    first = _other_colleague(inp, name)
    if first and chance(inp, DRAFT.correct):
        superseded, users[first[1]] = (first[1],), first[0]
    distractors: tuple[Distractor, ...] = ()
    others = [d for d in options if d is not doc and distinct(stem(d["file"]), stem(doc["file"]))
              and d["lines"][0][:40] != doc["lines"][0][:40]]
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)
        distractors = (near(stem(other["file"]), f"{stem(other['file'])} has the notes from the meeting before, "
                                                 "those went round already"),)
    m1 = piece(1, "fact", f"{name} missed the discussion and needs the notes", name, cue="recipient",
               about="the notes hand-off", superseded=superseded)
    m2 = piece(2, "fact", f"the notes to forward are in {stem(doc['file'])}", stem(doc["file"]), cue="document",
               about="the notes hand-off", distractors=distractors)

    def plan(mid: str, value: str) -> list:
        d = doc if mid == "m1" else next(o for o in options if stem(o["file"]) == value)
        person = value if mid == "m1" else name
        return [call("word_read_file", file_path=d["file"]),
                send(inp, users[person], subject_of(d), "\n".join(d["lines"]))]

    return draft(
        inp,
        description=f"Email the full text of {doc['file']} (it opens with '{doc['lines'][0]}') to {name} ({who}).",
        subtasks=[f"Read {doc['file']}.", f"Email its content to {name}."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=who,
                                  body_keywords=[doc["lines"][0][:40].strip(), *words],
                                  **({"body_excludes": stale[:MAX_NOTE_FACTS]} if stale else {}))],
        memory=[m1, m2],
        oracle=plan("m1", name),
        # the intent alone: the first document, to the likeliest colleague
        baseline=[call("word_read_file", file_path=options[0]["file"]),
                  send(inp, inp.colleagues[0][0], "Notes", "\n".join(options[0]["lines"]))],
        misreadings=misreadings_of([m1, m2], plan),
    )


# names of a meeting not booked yet (never "the hour I have to find": it gets a title and an attendee)
_SLOT_ABOUTS = ("the meeting I need", "the meeting I have to fit in", "the meeting I am trying to book",
                "the meeting I have to set up", "the meeting I need to book")


@family("common_slot", ("calendar", "email"), "hard")
def common_slot(inp: FamilyInput) -> TaskDraft | None:
    mine = calendar_of(inp.notes, inp.user)
    if not mine:
        return None
    free = set(free_slots_after(mine, inp.now))
    commons = {(u, n): sorted(s for s in free_slots_after(cast(dict, calendar_of(inp.notes, u)), inp.now) if s in free)
               for u, n in inp.colleagues if calendar_of(inp.notes, u)}
    others = [person for person, common in commons.items() if common]  # not one away all that time
    if not others:
        return None
    who, name = inp.rng.choice(others)
    common = commons[(who, name)]
    choice = choose_window(inp, common)
    if choice is None:
        return None
    day = inp.rng.choice(choice.days())
    choice = with_correction(inp, choice, day)
    start, end = choice.slot(day)  # type: ignore[misc]  # the window was chosen for a free slot that day
    title = inp.rng.choice(MEETING_TITLES)
    day_text = weekday_text(day)
    rule = slot_rule(choice, "both")
    by_day = {weekday_text(d): d for d in choice.days()}
    superseded: tuple[str, ...] = ()
    earlier = [t for t in by_day if distinct(t, day_text)]
    if earlier and chance(inp, DRAFT.correct):
        superseded = (inp.rng.choice(earlier),)
    distractors: tuple[Distractor, ...] = ()
    titles = [t for t in MEETING_TITLES if distinct(t, title)]
    if chance(inp, DRAFT.distract):
        other = inp.rng.choice(titles)
        distractors = (near(other, f"the {other} is another meeting altogether, nothing to do with this one"),)
    about = inp.rng.choice(_SLOT_ABOUTS)
    m1 = piece(1, "action", f"I need an hour for a {title}", title, cue="meeting_title",
               about=about, distractors=distractors)
    m2 = piece(2, "fact", f"that meeting should be on {day_text}, as early as we are both free",
               day_text, cue="meeting_day", about=about, superseded=superseded)
    m3 = piece(3, "fact", f"the meeting is with {name}, who should get the time by email", name, cue="attendee",
               about=about, thread=2)
    m4 = window_piece(4, choice, rule, about)

    def plan(mid: str, value: str) -> list:
        summary = value if mid == "m1" else title
        slot = choice.slot(by_day[value]) if mid == "m2" else choice.slot(day, value) if mid == "m4" else (start, end)
        steps = [call("calendar_list_events", user=inp.user), call("calendar_list_events", user=who)]
        if slot is None:  # nothing both are free for in that window: an agent that kept it books nothing
            return steps
        s0, e0 = slot
        return [*steps, booking(inp.user, summary, s0, e0),
                send(inp, who, summary, f"{summary} is booked for {s0:%Y-%m-%d %H:%M}-{e0:%H:%M}.")]

    return draft(
        inp,
        description=f"Find the earliest whole hour on {day:%Y-%m-%d} between {choice.window[0]}:00 and "
                    f"{choice.window[1]}:00 when both {inp.user_name} ({inp.user}) and {name} ({who}) are free, add "
                    f"'{title}' to {possessive(inp.user_name)} calendar then, and email {name} the time.",
        subtasks=["Check both calendars on that day.", "Book the earliest common free hour within the window.",
                  f"Email {name} the time."],
        evaluation=[event_check(inp.user, title, start, end),
                    cr.calendar_no_overlap(username=inp.user),
                    # the chat asks for the time by email, nothing more
                    cr.email_sent(sender=inp.user, recipient=who, body_keywords=[f"{start:%H:%M}"])],
        memory=[m1, m2, m3, m4],
        oracle=plan("m1", title),
        # the intent alone: the first common hour, a plain title, the likeliest colleague
        baseline=[call("calendar_list_events", user=inp.user),
                  booking(inp.user, "Meeting", common[0][0], common[0][1]),
                  send(inp, inp.colleagues[0][0], "Meeting", f"Booked for {common[0][0]:%Y-%m-%d %H:%M}.")],
        misreadings=misreadings_of([m1, m2, m4], plan),
        computed=[computed(start.strftime(TIME_FORMAT), "rule", [], rule=rule, given=("m2", "m4")),
                  computed(end.strftime(TIME_FORMAT), "rule", [], rule=rule, given=("m2", "m4")),
                  computed(f"{start:%H:%M}", "rule", [], rule=rule, given=("m2", "m4"))],
    )


def _shared_meetings(inp: FamilyInput, mine: dict) -> list[tuple[str, str, dict]]:
    """Meetings still ahead that the user shares with a colleague: the same title at the same time
    in both calendars, at most an hour long (so the new one fits a free hour)."""
    out = []
    for who, name in inp.colleagues:
        theirs = calendar_of(inp.notes, who)
        if not theirs:
            continue
        times = {(e["summary"], e["start"], e["end"]) for e in theirs.get("events", [])}
        for event in mine.get("events", []):
            start = event_time(event["start"])
            end = event_time(event["end"])
            if ((event["summary"], event["start"], event["end"]) in times and start >= inp.now
                    and end - start <= timedelta(hours=1)):
                out.append((who, name, {**event, "start_t": start, "end_t": end}))
    return out


def _move_target(inp: FamilyInput) -> tuple[list, tuple, tuple, SlotChoice, date] | None:
    """Which shared meeting moves, to which window and day: the shared meetings, the chosen one
    (colleague, their name, the event), the first hour both are free, the window and the day."""
    mine = calendar_of(inp.notes, inp.user)
    shared = _shared_meetings(inp, mine) if mine else []
    if not shared:
        return None
    assert mine is not None  # a meeting is shared only with a calendar of the user's
    who, name, event = inp.rng.choice(shared)
    old = event["start_t"]
    # a meeting is shared only with a colleague who has a calendar
    theirs = {s for s in free_slots_after(cast(dict, calendar_of(inp.notes, who)), inp.now)}
    common = sorted(s for s in free_slots_after(mine, inp.now) if s in theirs and s[0].date() != old.date())
    if not common:
        return None
    # the intent alone moves the next shared meeting to the first hour both are free: never the answer
    earliest = min(s for s in free_slots_after(mine, inp.now) if s in theirs)
    guessed = earliest[0].date() if event["summary"] == shared[0][2]["summary"] else None
    choice = choose_window(inp, [s for s in common if s[0].date() != guessed])
    if choice is None:
        return None
    day = inp.rng.choice(choice.days())
    return shared, (who, name, event), earliest, with_correction(inp, choice, day), day


def _move_first_shared(inp: FamilyInput, first: tuple, earliest: datetime) -> list:
    """The intent alone: the next shared meeting, moved to the first hour both are free."""
    who, _, event = first
    return [call("calendar_list_events", user=inp.user),
            call("calendar_delete_event", user=inp.user, summary=event["summary"]),
            booking(inp.user, event["summary"], earliest, earliest + (event["end_t"] - event["start_t"])),
            send(inp, who, "Moved", f"Moved to {earliest:%Y-%m-%d %H:%M}.")]


def _move_dynamics(inp: FamilyInput, choice: SlotChoice, day: date, shared: list, title: str) -> tuple[tuple, tuple]:
    """Sometimes another day of the window said first, sometimes another shared meeting that stays."""
    superseded: tuple[str, ...] = ()
    earlier = [weekday_text(d) for d in choice.days() if distinct(weekday_text(d), weekday_text(day))]
    if earlier and chance(inp, DRAFT.correct):
        superseded = (inp.rng.choice(earlier),)
    distractors: tuple = ()
    others = [e["summary"] for w, _, e in shared if e["summary"] != title and distinct(e["summary"], title)
              and e["start_t"].date() != day]
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)
        distractors = (near(other, f"the {other} stays where it is, that one is fine"),)
    return superseded, distractors


@family("move_shared_meeting", ("calendar", "email"), "hard")
def move_shared_meeting(inp: FamilyInput) -> TaskDraft | None:
    """Move a meeting the user shares with a colleague to another day the chat names, at the
    earliest hour both calendars have free there within the office hours the chat gives, and tell
    the colleague the new time."""
    target = _move_target(inp)
    if target is None:
        return None
    shared, (who, name, event), earliest, choice, day = target
    title, old, length = event["summary"], event["start_t"], event["end_t"] - event["start_t"]
    start = choice.slot(day)[0]  # type: ignore[index]  # the window was chosen for a free slot that day
    end = start + length
    minutes = int(length.total_seconds() // 60)
    day_text = weekday_text(day)
    superseded, distractors = _move_dynamics(inp, choice, day, shared, title)
    about = "the meeting I have to move"
    rule = f"on the hour within {choice.text}, the earliest that day when we are both free, keeping its length"
    m1 = piece(1, "fact", f"I can't make the {title} on {weekday_text(old.date())}, it has to move", title,
               cue="move_title", about=about, distractors=distractors)
    m2 = piece(2, "action", f"move it to {day_text}, as early as we are both free, same length", day_text,
               cue="move_day", about=about,
               superseded=superseded)
    m3 = piece(3, "action", f"let {name} know the new time by email", name, cue="attendee", about=about, thread=2)
    m4 = window_piece(4, choice, rule, about, one_hour=False)
    by_day = {weekday_text(d): d for d in choice.days()}
    by_title = {e["summary"]: (w, e) for w, _, e in shared}

    def plan(mid: str, value: str) -> list | None:
        summary, to, s0, was = title, who, start, old
        if mid == "m1":
            if value not in by_title:
                return None
            to, moved = by_title[value]
            summary, was = value, moved["start_t"]
            if s0.date() == was.date():
                return None
        elif mid in ("m2", "m4"):
            slot = choice.slot(by_day[value]) if mid == "m2" else choice.slot(day, value)
            if slot is None:  # nothing both are free for in that window: an agent that kept it moves nothing
                return [call("calendar_list_events", user=inp.user), call("calendar_list_events", user=to)]
            s0 = slot[0]
        return [call("calendar_list_events", user=inp.user), call("calendar_list_events", user=to),
                call("calendar_delete_event", user=inp.user, summary=summary),
                booking(inp.user, summary, s0, s0 + length),
                mail(inp, to, name, f"New time: {summary}", f"I had to move the {summary} from {was:%Y-%m-%d %H:%M} to "
                                                            f"{s0:%Y-%m-%d %H:%M}-{s0 + length:%H:%M}.")]

    return draft(
        inp,
        description=f"Move '{title}' ({old:%Y-%m-%d %H:%M}) in {inp.calendar_words} to "
                    f"{day:%Y-%m-%d} at the earliest whole hour between {choice.window[0]}:00 and "
                    f"{choice.window[1]}:00 when both {inp.user_name} and {name} ({who}) are free, "
                    f"keeping its {minutes} minutes, remove it from its old time, and email {name} the new time.",
        subtasks=[f"Find the {title} in both calendars.", f"Find the earliest common free hour on {day:%Y-%m-%d}.",
                  "Move the meeting there.", f"Email {name} the new time."],
        evaluation=[event_check(inp.user, title, start, end),
                    cr.calendar_no_event(username=inp.user, summary=title, start=old.strftime(TIME_FORMAT)),
                    cr.calendar_no_overlap(username=inp.user),
                    cr.email_sent(sender=inp.user, recipient=who, body_keywords=[f"{start:%H:%M}"])],
        memory=[m1, m2, m3, m4],
        oracle=plan("m1", title),
        # the intent alone: the next shared meeting, moved to the first hour both are free
        baseline=_move_first_shared(inp, shared[0], earliest[0]),
        misreadings=misreadings_of([m1, m2, m4], plan),
        computed=[computed(minutes, "minutes_between",
                           [old.strftime(TIME_FORMAT), event["end_t"].strftime(TIME_FORMAT)], given=("m1",),
                           note=f"the length of the {title} in the calendar"),
                  *slot_times(start, minutes, rule, ("m2", "m4"), ("m2",)),
                  computed(f"{start:%H:%M}", "rule", [], rule=rule, given=("m2", "m4"))],
    )


@family("sheet_to_report", ("excel", "word"), "medium")
def sheet_to_report(inp: FamilyInput) -> TaskDraft | None:
    guess = first_column(inp)  # the intent alone: the highest of the first sheet's first figures
    picked = pick_column(inp, avoid=guess)
    if not picked:
        return None
    table, label, col = picked
    values = table.column(col)
    who = label_for(table, label, col, True)
    if who is None:
        return None
    top = max(values)
    out = out_name(inp, "report", "docx")
    header = table.headers[col]
    superseded: tuple[str, ...] = ()
    low = label_for(table, label, col, False)
    what = table.headers[label]  # said whole: a sheet's rows may be named by more than one column
    guessed = label_for(guess[0], guess[1], guess[2], True) if guess else None
    if guessed == who:
        return None
    if low and low != who and chance(inp, DRAFT.correct):
        superseded = (f"{what} with the lowest {header}",)
    distractors: tuple[Distractor, ...] = ()
    others = [c for c in table.numeric_columns() if c != col and distinct(table.headers[c], header)
              and label_for(table, label, c, True) not in (None, who)]
    if others and chance(inp, DRAFT.distract):
        c2 = inp.rng.choice(others)
        distractors = (near(f"{what} with the highest {table.headers[c2]}",
                            f"the last report was about the {what} with the highest {table.headers[c2]}, that one is "
                            "old news"),)

    def content(mid: str, said: str) -> str:
        which, _, head = said.removeprefix(f"{what} with the ").partition(" ")
        c = table.headers.index(head)
        name = label_for(table, label, c, which == "highest")
        amount = max(table.column(c)) if which == "highest" else min(table.column(c))
        return f"Report\n{which.capitalize()} {head}: {name} with {fmt(amount)}."

    m1 = piece(1, "action", f"the report should name the {what} with the highest {header}",
               f"{what} with the highest {header}",
               cue="question", about="the little report", superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the little report should use the figures in {stem(table.file)}", stem(table.file),
               cue="source_file", about="the little report")
    m3 = piece(3, "action", f"save the report as {stem(out)}", stem(out), cue="output_file",
               about="the little report", thread=2)

    def plan(mid: str, said: str) -> list:
        return [call("excel_read_file", file_path=table.file),
                call("word_write_to_file", file_path=out, content=content(mid, said))]

    return draft(
        inp,
        description=f"Write {out} naming the {table.headers[label]} with the highest {header} in {table.file} "
                    "and that value.",
        subtasks=[f"Read {table.file}.", f"Find the highest {header}.", f"Write {out}."],
        evaluation=[cr.contain(doc_type="docx", file=out, keywords=[who, fmt(top)])],
        memory=[m1, m2, m3],
        oracle=[call("excel_read_file", file_path=table.file),
                call("word_write_to_file", file_path=out, content=f"Report\nHighest {header}: {who} with {fmt(top)}.")],
        baseline=[call("excel_read_file", file_path=guess[0].file),
                  call("word_write_to_file", file_path=out,
                       content=f"Report\nHighest {guess[0].headers[guess[2]]}: {guessed} with "
                               f"{fmt(max(guess[0].column(guess[2])))}.")] if guess and guessed else
        [call("word_write_to_file", file_path=out, content="Report")],
        misreadings=misreadings_of([m1], plan),
        computed=[extreme(table, label, col, True, given=("m1",))],
    )


@family("invoice_pipeline", ("pdf", "excel", "email"), "hard")
def invoice_pipeline(inp: FamilyInput) -> TaskDraft | None:
    found = invoice_facts(inp, unpaid=True)
    if not found or not inp.colleagues:
        return None
    pdf, number, total = found
    out = out_name(inp, "payables", "xlsx")
    who, name = _colleague(inp)
    users = {name: who}
    superseded = _renamed(inp, out, "payables", "xlsx")
    distractors: tuple[Distractor, ...] = ()
    other = _other_colleague(inp, name)
    if other and chance(inp, DRAFT.distract):
        distractors, users[other[1]] = (near(other[1], f"{other[1]} used to look after supplier invoices, "
                                                       "before the team changed"),), other[0]
    m1 = piece(1, "fact", f"the invoice in {stem(pdf)} has to be logged", stem(pdf), cue="document",
               about="the supplier invoice")
    m2 = piece(2, "action", f"the invoice goes into a new sheet named {stem(out)}", stem(out), cue="output_file",
               about="the supplier invoice", superseded=superseded)
    m3 = piece(3, "action", f"{name} should get the invoice number and amount by email", name, cue="recipient",
               about="the invoice's number and amount", thread=2, distractors=distractors)
    m4 = piece(4, "fact", "the sheet has a header row, Invoice then Total, and the invoice below it",
               "Invoice then Total", cue="layout", about="the supplier invoice")

    def plan(mid: str, value: str) -> list:
        sheet = f"data/{value}" if mid == "m2" else out
        person = value if mid == "m3" else name
        return [call("pdf_read_file", file_path=pdf), *_invoice_rows(sheet, number, total),
                send(inp, users[person], f"Invoice {number}", f"Invoice {number} totals {fmt(total)}.")]

    return draft(
        inp,
        description=f"Read {pdf}, create {out} with Invoice and Total in row 1 and the invoice number and total in "
                    f"row 2, then email {name} ({who}) the invoice number and total.",
        subtasks=[f"Read {pdf}.", f"Create {out} with the invoice row.", f"Email {name}."],
        evaluation=[cr.excel_cell_value(ignore_case=True, file=out, matches=[{"row": 1, "col": 1, "value": "Invoice"},
                                                       {"row": 1, "col": 2, "value": "Total"},
                                                       {"row": 2, "col": 1, "value": number},
                                                       {"row": 2, "col": 2, "value": fmt(total)}]),
                    cr.email_sent(sender=inp.user, recipient=who, body_keywords=[number, fmt(total)])],
        memory=[m1, m2, m3, m4],
        oracle=plan("", ""),
        # the intent alone: a plainly named log, the likeliest colleague
        baseline=[call("pdf_read_file", file_path=pdf), *_invoice_rows("data/invoices.xlsx", number, total),
                  send(inp, inp.colleagues[0][0], "Invoice", f"Invoice {number} totals {fmt(total)}.")],
        misreadings=misreadings_of([m2, m3], plan),
    )


@family("report_pdf", ("excel", "word", "pdf"), "hard")
def report_pdf(inp: FamilyInput) -> TaskDraft | None:
    """Total the column the chat names, write the total at the foot of that column in the sheet
    (on a row with the label the chat gives), write it up and share the write-up as a PDF."""
    guess = first_column(inp, min_rows=3, summable=True)  # the intent alone: the first sheet's first total
    found = _total(inp, avoid=guess)
    if not found:
        return None
    table, header, total, col = found
    if col == 0:  # the label goes in the first column, beside the total
        return None
    foot = len(table.rows) + 2  # the row under the last one (the header is row 1)
    doc = out_name(inp, "totals", "docx")
    pdf = doc[:-5] + ".pdf"
    totals = table.totals()
    if guessed_right(guess, total):
        return None
    others = [h for h, v in totals.items() if distinct(h, header) and v != total]
    superseded, distractors = mistaken_for(inp, others, "total {}", "{} figures",
                                           "the {} figures went into last month's pack")
    label, *rest = inp.rng.sample(ROW_LABELS, len(ROW_LABELS))
    old_label = (rest[0],) if chance(inp, DRAFT.correct) else ()

    def plan(mid: str, said: str) -> list:
        head = (header if mid == "m4" else said[len("total "):] if said.startswith("total ")
                else said[: -len(" figures")])
        at = table.headers.index(head) + 1
        value = totals[head]
        return [call("excel_read_file", file_path=table.file),
                call("excel_set_cell", file_path=table.file, row=foot, col=1, value=said if mid == "m4" else label),
                call("excel_set_cell", file_path=table.file, row=foot, col=at, value=cell(value)),
                call("word_write_to_file", file_path=doc, content=f"Total {head}: {fmt(value)}"),
                call("word_convert_to_pdf", file_path=doc)]

    about = "the totals write-up"
    m1 = piece(1, "action", f"I need the total {header} written up", f"total {header}", cue="column_total",
               about=about, superseded=superseded, distractors=distractors)
    m2 = piece(2, "fact", f"the {header} figures for that write-up are in {stem(table.file)}", stem(table.file),
               cue="source_file", about=about)
    m3 = piece(3, "action", f"the {header} write-up should be saved as {stem(doc)}, plus a PDF copy", stem(doc),
               cue="output_file", about=about, thread=2)
    m4 = piece(4, "action", f"put the total under the column in the sheet too, on a row labelled {label}", label,
               cue="row_label", about=about, superseded=old_label)
    return draft(
        inp,
        description=f"Sum the {header} column of {table.file} ({fmt(total)}), write the total under the column (row "
                    f"{foot}) with '{label}' in the first column, write the total into {doc}, and convert it to {pdf}.",
        subtasks=[f"Read {table.file}.", f"Add a {label} row under the {header} figures.",
                  f"Write the total into {doc}.", f"Convert {doc} to PDF."],
        evaluation=[cr.excel_cell_value(file=table.file, ignore_case=True,
                                        matches=[{"row": foot, "col": 1, "value": label},
                                                 {"row": foot, "col": col + 1, "value": fmt(total)}]),
                    cr.file_exist(file=pdf),
                    cr.contain(doc_type="pdf", file=pdf, keywords=[fmt(total)])],
        memory=[m1, m2, m3, m4],
        oracle=plan("m1", f"total {header}"),
        baseline=[call("excel_read_file", file_path=guess[0].file),
                  call("word_write_to_file", file_path=doc,
                       content=f"Total {guess[0].headers[guess[2]]}: {fmt(cast(float, guess_total(guess)))}"),
                  call("word_convert_to_pdf", file_path=doc)] if guess else
        [call("word_write_to_file", file_path=doc, content="Totals"), call("word_convert_to_pdf", file_path=doc)],
        misreadings=misreadings_of([m1, m4], plan),
        computed=[column_sum(table, col, given=("m1",))],
    )


def _plain_meeting_pack(inp: FamilyInput, slot: tuple[datetime, datetime]) -> list:
    """The intent alone: the first free hour, a plain title and agenda, the likeliest colleague."""
    return [booking(inp.user, "Meeting", slot[0], slot[1]),
            call("word_write_to_file", file_path="data/agenda.docx", content="Agenda\nTo be agreed."),
            send(inp, inp.colleagues[0][0], "Invitation", f"Please join the meeting on {slot[0]:%Y-%m-%d %H:%M}.")]


@family("meeting_pack", ("calendar", "word", "email"), "hard")
def meeting_pack(inp: FamilyInput) -> TaskDraft | None:
    """Book a meeting said in the chat, write its agenda (points from the chat plus the date of the
    previous meeting, read from its notes in the office), and invite a colleague."""
    cal = calendar_of(inp.notes, inp.user)
    slots = free_slots_after(cal, inp.now) if cal else []
    notes = [(d, fact) for d in docs(inp.notes, "word") for line in d["lines"][:4] if line.lower().startswith("date")
             for fact in facts_in(line)[:1]]
    if not slots or not inp.colleagues or not notes:
        return None
    doc, last = inp.rng.choice(notes)
    fixed = next((m for line in doc["lines"] for m in [NEXT_MEETING_RE.search(line)] if m), None)
    if fixed:  # the follow-up comes before the series' next meeting the notes fix, not beside it that day
        slots = [s for s in slots if f"{s[0]:%Y-%m-%d}" < fixed.group(1)]
        if not slots:
            return None
    start, end = inp.rng.choice(slots)
    minutes = int((end - start).total_seconds() // 60)
    title = inp.rng.choice(MEETING_TITLES)
    present = present_on(inp, start.date())
    if not present:
        return None
    who, name = inp.rng.choice(present)
    series = doc["lines"][0].strip()
    if series.lower().endswith(" sync"):  # a follow-up of the series whose last meeting the notes record
        title = f"{series[:-len(' sync')]} follow-up"
    points = list(inp.rng.choice(MEMO_TOPICS))[:2]
    agenda = out_name(inp, "agenda", "docx")
    when, spans, superseded, distractors = meeting_dynamics(
        inp, slots, (start, end), title, "the {} is a separate meeting, that one runs itself")
    m1 = piece(1, "fact", f"we are holding a meeting at {when}", when, cue="meeting_time", about="the meeting",
               superseded=superseded)
    m2 = piece(2, "fact", f"the upcoming meeting will be called the {title}", title, cue="meeting_title",
               about="the meeting", distractors=distractors)
    m3 = piece(3, "fact", f"the meeting runs for {minutes} minutes", f"{minutes} minutes", cue="duration",
               about="the meeting")
    m4 = piece(4, "action", f"the agenda goes in {stem(agenda)}", stem(agenda), cue="output_file",
               about="the agenda", thread=2)
    m5 = piece(5, "action", f"the agenda covers {points[0]}", points[0], cue="agenda_point", about="the agenda",
               thread=2)
    m6 = piece(6, "action", f"the agenda also covers {points[1]}", points[1], cue="agenda_point", about="the agenda",
               thread=2)
    m7 = piece(7, "fact", f"the agenda opens with the date of the previous meeting, from {stem(doc['file'])}",
               stem(doc["file"]), cue="previous_notes", about="the agenda", thread=2)
    m8 = piece(8, "action", f"{name} should be invited to the meeting by email, with its time", name, cue="recipient",
               about="the invitation with the meeting's time", thread=3)

    def plan(mid: str, value: str) -> list:
        summary, (s0, e0) = (title, spans[value]) if mid == "m1" else (value, (start, end))
        return [call("calendar_list_events", user=inp.user),
                booking(inp.user, summary, s0, e0),
                call("word_read_file", file_path=doc["file"]),
                call("word_write_to_file", file_path=agenda,
                     content=f"Agenda: {summary}\nPrevious meeting: {last}\n" + "\n".join(points)),
                send(inp, who, f"Invitation: {summary}",
                     f"Please join the {summary} on {s0:%Y-%m-%d} from {s0:%H:%M} to {e0:%H:%M}. "
                     f"Agenda: {agenda}.")]

    return draft(
        inp,
        description=f"Book '{title}' on {inp.calendar_words} at {when}-{end:%H:%M} "
                    f"({minutes} minutes), write the agenda {agenda} covering {join_and(points)} and opening with the "
                    f"date of the previous meeting from {doc['file']} ({last}), and email {name} ({who}) "
                    "the invitation with the time.",
        subtasks=["Book the meeting.", f"Read {doc['file']} for the previous meeting's date.",
                  f"Write the agenda {agenda}.", f"Email {name} the invitation."],
        evaluation=[event_check(inp.user, title, start, end),
                    cr.contain(doc_type="docx", file=agenda, keywords=[*points, last]),
                    # the title may head the subject instead
                    cr.email_sent(sender=inp.user, recipient=who, body_keywords=[f"{start:%H:%M}"])],
        memory=[m1, m2, m3, m4, m5, m6, m7, m8],
        oracle=plan("m1", when),
        baseline=_plain_meeting_pack(inp, slots[0]),
        misreadings=misreadings_of([m1, m2], plan),
        computed=[computed(end.strftime(TIME_FORMAT), "add_minutes", [when, str(minutes)], given=("m3",))],
    )
