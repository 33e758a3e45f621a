"""Task families that carry a detail out of a message or a document into another app: a booking
from a mail into the calendar, a quote from a mail into a log, the next meeting from the notes into
the calendar and an invitation, a message forwarded with its figures.

The chat says which message or document and what to do with it; the detail itself (a date, a
time, an amount) is only in the office, so an agent has to find and read it.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any, Iterable, cast

from generators.chances import DRAFT
from generators.english import possessive
from generators.families.base import (
    NEXT_MEETING_RE,
    QUOTE_RE,
    TIME_FORMAT,
    FamilyInput,
    booking,
    calendar_of,
    call,
    chance,
    computed,
    distinct,
    docs,
    draft,
    event_check,
    excluding_past,
    facts_in,
    family,
    fmt,
    inbox_of,
    mail,
    misreadings_of,
    name_of,
    near,
    number,
    out_name,
    own_words,
    piece,
    present_on,
    send,
    sender_user,
    stem,
)
from generators.families.single_app import MEETING_TITLES, first_free_booking
from generators.families.time_rules import hour_of, hour_piece, is_free, slot_on, slot_times
from generators.model import Distractor, TaskDraft
from generators.value_pools import INVITEES
from office_env.evaluation import builders as cr
from office_env.money import CODE

_BOOKING_RE = re.compile(r"on (\d{4}-\d{2}-\d{2}) from (\d{1,2}:\d{2}) to (\d{1,2}:\d{2})")


def _first(full_name: str) -> str:
    return full_name.split()[0]


def _other_titles(inp: FamilyInput, title: str, near_text: str) -> tuple:
    if not chance(inp, DRAFT.distract):
        return ()
    other = inp.rng.choice([t for t in MEETING_TITLES if distinct(t, title)])
    return (near(other, near_text.format(other)),)


def _days_ahead(inp: FamilyInput, texts: Iterable[tuple[Any, str]], pattern: re.Pattern[str]) -> list[tuple]:
    """(source, what, day) for the first match of ``pattern`` (what, then an ISO day) in each of
    ``texts`` (source, text), where that day is after today."""
    found = []
    for source, text in texts:
        match = pattern.search(text)
        if match:
            day = datetime.strptime(match.group(2), "%Y-%m-%d")
            if day.date() > inp.now.date():
                found.append((source, match.group(1), day))
    return found


def _opened(inp: FamilyInput, message: dict) -> list:
    """The calls that find a mail in the user's inbox and read it."""
    return [call("email_list_emails", user=inp.user), call("email_read_email", user=inp.user, email_id=message["id"])]


@family("mail_to_calendar", ("email", "calendar"), "medium")
def mail_to_calendar(inp: FamilyInput) -> TaskDraft | None:
    """Put the slot a colleague booked (given in their mail) on the user's calendar, under the title
    the chat gives."""
    found = []
    for m in inbox_of(inp.notes, inp.user):
        match = _BOOKING_RE.search(own_words(m))
        who = name_of(inp, sender_user(m))
        if match and who and not m.get("subject", "").lower().startswith("re:"):
            start = datetime.strptime(f"{match.group(1)} {match.group(2)}", "%Y-%m-%d %H:%M")
            end = datetime.strptime(f"{match.group(1)} {match.group(3)}", "%Y-%m-%d %H:%M")
            if end > start > inp.now:
                found.append((m, who, start, end))
    once = [f for f in found if sum(g[1] == f[1] for g in found) == 1]  # a sender names one booking only
    if not once:
        return None
    message, sender, start, end = inp.rng.choice(once)
    title = inp.rng.choice(MEETING_TITLES)
    others = [n for _, n, _, _ in once if n != sender and distinct(n, sender)]
    superseded: tuple[str, ...] = ()
    if others and chance(inp, DRAFT.correct):
        superseded = (inp.rng.choice(others),)
    about = "the room booking"
    m1 = piece(1, "fact", f"the booking to put in my calendar is the one {sender} sent", sender, cue="sender",
               about=about, superseded=superseded)
    m2 = piece(2, "action", f"call it {title} in my calendar", title, cue="meeting_title", about=about,
               distractors=_other_titles(inp, title, "the {} is a separate series, leave it alone"))

    def plan(mid: str, value: str) -> list:
        if mid == "m1":
            m, _, s0, e0 = next(f for f in once if f[1] == value)
            summary = title
        else:
            m, s0, e0, summary = message, start, end, value
        return [*_opened(inp, m), booking(inp.user, summary, s0, e0)]

    return draft(
        inp,
        description=f"Add '{title}' to {inp.calendar_words} at the time {sender} booked "
                    f"in the mail '{message['subject']}': {start:%Y-%m-%d %H:%M}-{end:%H:%M}.",
        subtasks=["Find the booking mail and read it.", "Add the event at the booked time."],
        evaluation=[event_check(inp.user, title, start, end)],
        memory=[m1, m2],
        oracle=plan("m2", title),
        baseline=[call("email_list_emails", user=inp.user), *first_free_booking(inp)],
        misreadings=misreadings_of([m1, m2], plan),
    )


@family("quote_to_sheet", ("email", "excel"), "medium")
def quote_to_sheet(inp: FamilyInput) -> TaskDraft | None:
    """Log the price a colleague's mail says a supplier quoted in a new sheet named in the chat."""
    quoted = []
    for m in inbox_of(inp.notes, inp.user):
        match = QUOTE_RE.search(own_words(m))
        who = name_of(inp, sender_user(m))
        if match and who:
            quoted.append((m, who, match.group(1), number(match.group(1).split()[0])))
    found = [(m, who, text, figure) for m, who, text, figure in quoted if figure is not None]
    if len(found) < 2:  # one quote in the inbox: the intent alone logs it
        return None
    guess = found[0]
    message, sender, amount_text, amount = inp.rng.choice(found[1:])
    out = out_name(inp, "quotes", "xlsx")
    superseded: tuple[str, ...] = ()
    about = "the quote log"
    if sum(f[1] == sender for f in found) == 1:  # "the mail from X" names one quote only if X sent one
        others = [f for f in found if f[3] != amount and f[1] != sender and distinct(f[1], sender)]
        if others and chance(inp, DRAFT.correct):
            superseded = (inp.rng.choice(others)[1],)
        m1 = piece(1, "fact", f"the quote to log came from {sender} by mail", sender, cue="sender", about=about,
                   superseded=superseded)
    else:  # the sender quoted more than once: the chat names the mail by its subject
        subject = message["subject"]
        if sum(subject.lower() in f[0]["subject"].lower() for f in found) != 1:
            return None
        others = [f for f in found if f[3] != amount and f[0]["subject"].lower() not in subject.lower()
                  and subject.lower() not in f[0]["subject"].lower()]
        if others and chance(inp, DRAFT.correct):
            superseded = (inp.rng.choice(others)[0]["subject"],)
        m1 = piece(1, "fact", f"the quote to log is the one in {possessive(sender)} mail {subject}", subject,
                   cue="mail_subject", about=about, superseded=superseded)
    m2 = piece(2, "action", f"the quote goes into a new sheet called {stem(out)}", stem(out), cue="output_file",
               about=about, thread=2)
    m3 = piece(3, "fact", "the log has Sender and Amount as its headers", "Sender and Amount", cue="layout",
               about=about, thread=2,
               distractors=((near("Amount and Sender", "the old quote log had Amount and Sender, the wrong way round"),)
                            if chance(inp, DRAFT.distract) else ()))

    def rows(path: str, who: str, value: float, swapped: bool = False) -> list:
        pair = [("Sender", who), ("Amount", value)]
        if swapped:
            pair.reverse()
        return [call("excel_create_new_file", file_path=path),
                *[c for col, (head, cell) in enumerate(pair, start=1)
                  for c in (call("excel_set_cell", file_path=path, row=1, col=col, value=head),
                            call("excel_set_cell", file_path=path, row=2, col=col, value=cell))]]

    def plan(mid: str, value: str) -> list:
        if mid == "m3":
            return [call("email_read_email", user=inp.user, email_id=message["id"]),
                    *rows(out, sender, amount, swapped=True)]
        m, who, _, figure = next(f for f in found if value in (f[1], f[0]["subject"]))
        return [*_opened(inp, m), *rows(out, who, figure)]

    return draft(
        inp,
        description=f"Create {out} with Sender and Amount in row 1, and in row 2 {sender} (or {_first(sender)}, as "
                    f"the mail signs) and the amount their mail "
                    f"'{message['subject']}' quotes ({amount_text}).",
        subtasks=["Find the quote in the mail and read it.", f"Create {out}.", "Write the header and the quote."],
        # the sender as the mail signs (first name) or as the chat names them (full name): either is theirs
        evaluation=[cr.excel_cell_value(ignore_case=True, file=out, matches=[{"row": 1, "col": 1, "value": "Sender"},
                                                       {"row": 1, "col": 2, "value": "Amount"},
                                                       {"row": 2, "col": 2, "value": fmt(amount)}]),
                    cr.contain(doc_type="xlsx", file=out, keywords=[_first(sender)])],
        memory=[m1, m2, m3],
        oracle=[*_opened(inp, message), *rows(out, sender, amount)],
        baseline=[*_opened(inp, guess[0]), *rows(out, guess[1], guess[3])],  # the intent alone: the first quote listed
        misreadings=misreadings_of([m1, m3], plan),
    )


_ATTENDEES_RE = re.compile(r"^Attendees: (.+)$")


def _attendees(inp: FamilyInput, doc: dict) -> list[tuple[str, str]]:
    """The colleagues (user, name) a meeting's notes list as its attendees, the user left out."""
    users = {n: u for u, n in inp.colleagues}
    for line in doc["lines"]:
        match = _ATTENDEES_RE.match(line.strip())
        if match:
            return [(users[n], n) for n in (x.strip() for x in match.group(1).split(",")) if n in users]
    return []


@family("next_meeting_invite", ("word", "calendar", "email"), "hard")
def next_meeting_invite(inp: FamilyInput) -> TaskDraft | None:
    """Book the next meeting the notes of a project fix (date and time from the notes, length and
    title from the chat) and send the invitation with the time to a colleague the chat names and to
    everyone else the notes list at the last meeting: the notes give the when and the who."""
    found = []
    for d in docs(inp.notes, "word"):
        for line in d["lines"]:
            match = NEXT_MEETING_RE.search(line)
            if match:
                start = datetime.strptime(f"{match.group(1)} {match.group(2)}", "%Y-%m-%d %H:%M")
                if start > inp.now:
                    found.append((d, start))
    if not found or not inp.colleagues:
        return None
    doc, start = inp.rng.choice(found)
    mine = calendar_of(inp.notes, inp.user)  # the length the chat gives never double-books the user
    lengths = [m for m in (30, 45, 60, 90) if is_free(mine, start, start + timedelta(minutes=m))]
    if not lengths:
        return None
    minutes = inp.rng.choice(lengths)
    end = start + timedelta(minutes=minutes)
    title = inp.rng.choice(MEETING_TITLES)
    present = present_on(inp, start.date())
    attendees = _attendees(inp, doc)
    if not present or not attendees or any(a not in present for a in attendees):
        return None  # everyone the notes list is invited: nobody who is away that day
    outside = [p for p in present if p not in attendees]
    if not outside:
        return None
    who, name = inp.rng.choice(outside)
    group = inp.rng.choice(INVITEES)
    others = [f for f in found if f[1] != start and distinct(stem(f[0]["file"]), stem(doc["file"]))]
    distractors: tuple[Distractor, ...] = ()
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)[0]
        distractors = (near(stem(other["file"]), f"{stem(other['file'])} is from the other project, ignore that one"),)
    about = "the follow-up meeting"
    m1 = piece(1, "fact", f"the next meeting is the one fixed in {stem(doc['file'])}", stem(doc["file"]),
               cue="document", about=about, distractors=distractors)
    m2 = piece(2, "action", f"book it as {title}", title, cue="meeting_title", about=about,
               distractors=_other_titles(inp, title, "the {} is a different series, not this one"))
    m3 = piece(3, "fact", f"the follow-up meeting runs {minutes} minutes", f"{minutes} minutes", cue="duration",
               about=about)
    m4 = piece(4, "action", f"{name} should get the invitation with the date and time", name, cue="recipient",
               about="the invitation with the date and time", thread=2)
    m5 = piece(5, "action", f"the invitation also goes to {group}, as the notes list them", group, cue="invitees",
               about="the invitation with the date and time", thread=2)

    def plan(mid: str, value: str) -> list:
        d, s0 = (next(f for f in found if stem(f[0]["file"]) == value) if mid == "m1" else (doc, start))
        e0 = s0 + timedelta(minutes=minutes)
        summary = value if mid == "m2" else title
        text = f"Please join the {title} on {s0:%Y-%m-%d} from {s0:%H:%M} to {e0:%H:%M}."
        return [call("word_read_file", file_path=d["file"]),
                booking(inp.user, summary, s0, e0),
                # the colleague the chat names last: a follow-up day the chat adds is said for their mail
                *(mail(inp, u, n, f"Invitation: {title}", text) for u, n in [*_attendees(inp, d), (who, name)])]

    return draft(
        inp,
        description=f"Read the next meeting's date and time in {doc['file']} ({start:%Y-%m-%d %H:%M}), add '{title}' "
                    f"for {minutes} minutes to {inp.calendar_words}, and email {name} "
                    f"({who}) and everyone the notes list at the last meeting "
                    f"({', '.join(f'{n} ({u})' for u, n in attendees)}) the invitation with the date and start time.",
        subtasks=[f"Read {doc['file']}.", "Book the meeting for the length I gave.",
                  f"Email {name} and the last meeting's attendees the invitation."],
        evaluation=[event_check(inp.user, title, start, end),
                    *(cr.email_sent(sender=inp.user, recipient=u, body_keywords=[f"{start:%Y-%m-%d}", f"{start:%H:%M}"])
                      for u, _ in [*attendees, (who, name)])],
        memory=[m1, m2, m3, m4, m5],
        oracle=plan("", ""),
        baseline=first_free_booking(inp),
        misreadings=misreadings_of([m1, m2], plan),
        computed=[computed(end.strftime(TIME_FORMAT), "add_minutes", [start.strftime("%Y-%m-%d %H:%M"), str(minutes)],
                           given=("m3",)),
                  # who else is invited: the group the chat names, as the notes list it
                  computed(len(attendees), "count", [n for _, n in attendees], given=("m1", "m5"),
                           note=f"attendees of the last meeting in {doc['file']}")],
    )


@family("forward_mail", ("email",), "easy")
def forward_mail(inp: FamilyInput) -> TaskDraft | None:
    """Forward a colleague's mail (named by its sender in the chat) to another colleague, with its
    figures and dates in the body."""
    found = []
    inbox = inbox_of(inp.notes, inp.user)
    wrote = Counter(sender_user(m) for m in inbox)  # "the mail from X" names one mail only if X wrote one
    subjects = [m.get("subject", "").lower() for m in inbox if not m.get("subject", "").lower().startswith("re:")]
    for m in inbox:
        facts = facts_in(own_words(m))
        sender = name_of(inp, sender_user(m))
        subject = m.get("subject", "")
        if not facts or not sender or subject.lower().startswith("re:"):
            continue
        if wrote[sender_user(m)] == 1:
            found.append((m, sender, facts[:2], sender, "sender"))
        elif sum(subject.lower() in other for other in subjects) == 1:  # else its subject names it, if only it
            found.append((m, sender, facts[:2], subject, "mail_subject"))
    if not found:
        return None
    message, sender, facts, named, cue = inp.rng.choice(found)
    had_it = {address.split("@")[0].lower()  # no forward to someone the mail went to
              for _, address in getaddresses([message.get("to", ""), message.get("cc", "")])}
    targets = [(u, n) for u, n in inp.colleagues if n != sender and distinct(n, sender) and u.lower() not in had_it]
    if not targets:
        return None
    who, name = inp.rng.choice(targets)
    last = found[-1][0]
    first = next(u for u, n in inp.colleagues if n != found[-1][1])
    if last is message and first == who:
        return None
    superseded: tuple[str, ...] = ()
    olds = [n for u, n in targets if n != name and distinct(n, name)]
    inp.rng.shuffle(olds)
    if olds and chance(inp, DRAFT.correct):
        superseded = (olds.pop(),)
    distractors = ((near(olds[0], f"{olds[0]} already has a copy of that one"),)
                   if olds and chance(inp, DRAFT.distract) else ())
    users = {n: u for u, n in inp.colleagues}
    about = "the mail to pass on"
    m1 = piece(1, "fact", f"the mail to pass on is the one from {sender} about {message['subject']}", named,
               cue=cue, about=about)
    m2 = piece(2, "action", f"it should be forwarded to {name}", name, cue="recipient", about=about,
               superseded=superseded, distractors=distractors, thread=2)

    def plan(person: str) -> list:
        return [*_opened(inp, message),
                send(inp, users[person], f"Fwd: {message['subject']}",
                     f"Forwarding {possessive(_first(sender))} message:\n\n{message.get('body', '')}")]

    return draft(
        inp,
        description=f"Forward the mail '{message['subject']}' from {sender} to {name} ({users[name]}), keeping its "
                    f"text (with {', '.join(facts)}).",
        subtasks=["Find the mail and read it.", f"Forward it to {name} with its text."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=users[name], subject_keywords=[message["subject"]],
                                  body_keywords=facts)],
        memory=[m1, m2],
        oracle=plan(name),
        # the intent alone: pass the newest such mail to the first colleague it did not go to
        baseline=[*_opened(inp, last),
                  send(inp, first, f"Fwd: {last['subject']}", f"Forwarding this message:\n\n{last.get('body', '')}")],
        misreadings=misreadings_of([m2], lambda mid, person: plan(person)),
    )


_COVER_RE = re.compile(r"out from (\d{4}-\d{2}-\d{2}) for (\d+) days?\. "
                       r"([A-Z][a-z]+(?: [A-Z][a-z]+)?) has agreed to cover")
_NOTICE_RE = re.compile(r"out of the office until (\d{4}-\d{2}-\d{2}).*?please contact ([A-Z][a-z]+(?: [A-Z][a-z]+)?)",
                        re.DOTALL)
_STARTER_RE = re.compile(r"new ([A-Z][A-Za-z ]+?) starts on (\d{4}-\d{2}-\d{2})")


@family("cover_note", ("email", "word"), "medium")
def cover_note(inp: FamilyInput) -> TaskDraft | None:
    """A cover note for a colleague's absence: who is away, the dates their mail gives, and who
    covers, all taken from their mail (a holiday ahead, or an out-of-office notice; which colleague
    is said in the chat). The note is checked for the date the mail itself writes (a holiday's
    first day and its length, a notice's last day) and the two people by first name (the mail
    signs with it, the chat says the whole name). The intent alone writes up the first such mail
    listed; the task is set on another."""
    found = []
    for m in inbox_of(inp.notes, inp.user):
        words, away = own_words(m), name_of(inp, sender_user(m))
        holiday, notice = _COVER_RE.search(words), _NOTICE_RE.search(words)
        if away and holiday:
            found.append((m, away, holiday.group(1), f"for {holiday.group(2)} days", holiday.group(3),
                          holiday.group(1), holiday.group(2)))
        elif away and notice:
            try:
                sent = parsedate_to_datetime(m.get("date", ""))
            except (TypeError, ValueError):
                continue
            found.append((m, away, f"{sent:%Y-%m-%d}", f"until {notice.group(1)}",
                          notice.group(2), notice.group(1), ""))
    found = [f for f in found if all(f[1] != g[1] for g in found if g is not f)]  # one absence a colleague
    if len(found) < 2:
        return None
    guess = found[0]
    message, away, start, days, cover, written, count = inp.rng.choice(found[1:])
    out = out_name(inp, "cover", "docx")
    distractors: tuple[Distractor, ...] = ()
    others = [n for _, n in inp.colleagues if n != away and distinct(n, away) and distinct(n, cover)]
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)
        distractors = (near(other, f"{other} was away last month, that cover is over"),)
    about = "the cover note"
    m1 = piece(1, "fact", f"the cover note is for {away}'s time off", away, cue="sender", about=about,
               distractors=distractors)
    m2 = piece(2, "action", f"save the cover note as {stem(out)}", stem(out), cue="output_file", about=about, thread=2)

    def plan(mid: str, person: str) -> list:
        hit = next((f for f in found if f[1] == person), None)
        if hit is None:  # nobody by that name wrote about time off: nothing to write from
            return [call("email_list_emails", user=inp.user)]
        m, who, s0, span, c, _, _ = hit
        return [*_opened(inp, m),
                call("word_write_to_file", file_path=out,
                     content=f"Cover note\n{who} is away from {s0} {span}.\n{c} covers the open items.")]

    return draft(
        inp,
        description=f"Write {out} saying that {away} is away from {start} {days} and that {cover} covers, as "
                    f"{possessive(_first(away))} mail '{message['subject']}' says.",
        subtasks=["Find the mail about the time off and read it.", f"Write the cover note {out}."],
        # a holiday's length too (as a count: "10" is found as "ten"); a notice's last day is its date
        evaluation=[cr.contain(doc_type="docx", file=out,
                               keywords=[_first(away), written, *([count] if count else []), _first(cover)])],
        memory=[m1, m2],
        oracle=plan("m1", away),
        baseline=plan("m1", guess[1]),
        misreadings=misreadings_of([m1], plan),
    )


@family("welcome_session", ("email", "calendar"), "medium")
def welcome_session(inp: FamilyInput) -> TaskDraft | None:
    """Book a welcome session on a new starter's first day (the date is in a colleague's mail; the
    hour, length and title are said in the chat)."""
    found = _days_ahead(inp, ((m, own_words(m)) for m in inbox_of(inp.notes, inp.user)), _STARTER_RE)
    if not found:
        return None
    message, role, day = inp.rng.choice(found)
    slot = slot_on(inp, day, (30, 45, 60), (9, 10, 11, 14))
    if slot is None:
        return None
    minutes, hour, said_first, start, end = slot
    title = inp.rng.choice(("New starter intro", "First-day walkthrough", "Induction hour"))
    rule = f"at {hour}:00 on their first day"
    about = "the welcome session"
    m1 = piece(1, "action", f"book the welcome session for the new {role} on their first day", role, cue="new_starter",
               about=about)
    m2 = piece(2, "fact", f"the welcome session lasts {minutes} minutes", f"{minutes} minutes", cue="duration",
               about=about)
    m3 = piece(3, "action", f"call it {title}", title, cue="meeting_title", about=about,
               distractors=_other_titles(inp, title, "the {} is a different meeting, already booked"))
    m4 = hour_piece(4, hour, rule, "the first-day welcome session", said_first)

    def plan(mid: str, value: str) -> list:
        summary = value if mid == "m3" else title
        s0 = start.replace(hour=hour_of(value)) if mid == "m4" else start
        return [*_opened(inp, message), booking(inp.user, summary, s0, s0 + timedelta(minutes=minutes))]

    return draft(
        inp,
        description=f"Add '{title}' to {inp.calendar_words} at {hour}:00 for {minutes} "
                    f"minutes on {day:%Y-%m-%d}, the first day of the new {role} "
                    f"(from the mail '{message['subject']}').",
        subtasks=["Find the new starter's first day in the mail.", "Book the welcome session then."],
        evaluation=[event_check(inp.user, title, start, end)],
        memory=[m1, m2, m3, m4],
        oracle=plan("", ""),
        baseline=first_free_booking(inp),
        misreadings=misreadings_of([m3, m4], plan),
        computed=slot_times(start, minutes, rule, ("m1", "m4"), ("m2",)),
    )


_STOCK_RE = re.compile(r"items under (\d+)")
_CONFIRM_RE = re.compile(r"invoice (\S+) from (\S+?\.pdf)\b.*?the total due and the due date")


@family("stock_question_reply", ("email", "excel"), "medium")
def stock_question_reply(inp: FamilyInput) -> TaskDraft | None:
    """Answer a colleague's stock question: the items under the level their mail names, read from the
    stock sheet (which colleague is said in the chat)."""
    from generators.families.base import tables
    from generators.families.sheet_work import label_column

    asks = [(m, int(match.group(1))) for m in inbox_of(inp.notes, inp.user)
            for match in [_STOCK_RE.search(own_words(m))] if match and name_of(inp, sender_user(m))]
    sheets = [(t, label, c) for t in tables(inp.notes) for label in [label_column(t)] if label is not None
              for c in t.numeric_columns() if any(w in t.headers[c].lower() for w in ("quantity", "stock", "on hand"))]
    if not asks or not sheets:
        return None
    message, asked = inp.rng.choice(asks)
    table, label, c = inp.rng.choice(sheets)

    def under(limit: int) -> list:
        return [r[label] for r, v in zip(table.rows, table.column(c)) if v < limit]

    # the chat moves the level the mail asks about: the mail alone gives the wrong list
    levels = [n for n in (5, 10, 15, 20, 25, 30, 40, 50)
              if n != asked and 1 <= len(under(n)) <= 8 and under(n) != under(asked)]
    if not levels:
        return None
    level = inp.rng.choice(levels)
    low = under(level)
    sender = cast(str, name_of(inp, sender_user(message)))  # asks come only from named colleagues
    about = "the stock question"
    m1 = piece(1, "fact", f"the stock question came from {sender}", sender, cue="sender", about=about)
    m2 = piece(2, "fact", f"the counts to use are in {stem(table.file)}", stem(table.file), cue="source_file",
               about=about)
    m3 = piece(3, "fact", f"we reorder below {level} now, whatever the mail says", str(level), cue="threshold",
               about=about)

    def plan(mid: str, value: str) -> list:
        return [call("email_read_email", user=inp.user, email_id=message["id"]),
                call("excel_read_file", file_path=table.file),
                mail(inp, sender_user(message), sender, f"Re: {message['subject']}",
                     f"Under {value}: {', '.join(under(int(value)))}.")]

    return draft(
        inp,
        description=f"Reply to {possessive(sender)} mail '{message['subject']}' with the items of {table.file} whose "
                    f"{table.headers[c]} is under {level}, the level the chat gives instead of the mail's {asked} "
                    f"({', '.join(low)}).",
        subtasks=["Read the stock question.", f"Find the items under the level in {table.file}.", "Reply with them."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=sender_user(message), body_keywords=low,
                                  **excluding_past(table.rows, label, table.column(c), level, low,
                                                   (sender, inp.user_name)))],
        memory=[m1, m2, m3],
        oracle=plan("m3", str(level)),
        baseline=plan("m3", str(asked)),  # the intent alone answers the level the mail asks about
        misreadings=[],
        computed=[computed(len(low), "count", low, given=("m3",), note=f"{table.headers[label]} under {level}")],
    )


@family("invoice_confirm_reply", ("email", "pdf"), "medium")
def invoice_confirm_reply(inp: FamilyInput) -> TaskDraft | None:
    """Answer finance's question about an invoice with the total and due date read from the invoice
    PDF itself (which colleague asked is said in the chat)."""
    asks = []
    for m in inbox_of(inp.notes, inp.user):
        match = _CONFIRM_RE.search(" ".join(own_words(m).split()))
        if match and name_of(inp, sender_user(m)):
            asks.append((m, match.group(1), match.group(2)))
    pdfs = {d["file"].rsplit("/", 1)[-1]: d for d in docs(inp.notes, "pdf")}
    asks = [(m, n, f) for m, n, f in asks if f in pdfs]
    if not asks:
        return None
    message, invoice, file = inp.rng.choice(asks)
    lines = pdfs[file]["lines"]
    total_line: list[str] = next((line.split(":", 1)[1].split() for line in lines if line.lower().startswith("total")),
                                 [])
    total, currency = (total_line + ["", ""])[:2]
    due = next((line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("due date")), None)
    if not total or not due:
        return None
    sender = cast(str, name_of(inp, sender_user(message)))  # asks come only from named colleagues
    handlers = [(u, n) for u, n in inp.colleagues if u != sender_user(message) and distinct(n, sender)]
    if not handlers:
        return None
    who, name = inp.rng.choice(handlers)  # the chat passes the answer on: the mail alone sends it back
    before = [(u, n) for u, n in handlers if u != who and distinct(n, name)]
    distractors: tuple[Distractor, ...] = ()
    if before and chance(inp, DRAFT.distract):
        previous = inp.rng.choice(before)[1]
        distractors = (near(previous, f"{previous} used to handle that supplier, before the team changed"),)
    about = "the invoice question"
    m1 = piece(1, "fact", f"the invoice question came from {sender}", sender, cue="sender", about=about)
    m2 = piece(2, "action", f"the answer goes to {name}, who handles that supplier now", name, cue="recipient",
               about="the answer to the invoice question", distractors=distractors, thread=2)
    users = dict((n, u) for u, n in handlers)

    def plan(to: str, to_name: str) -> list:
        return [call("email_read_email", user=inp.user, email_id=message["id"]),
                call("pdf_read_file", file_path=pdfs[file]["file"]),
                mail(inp, to, to_name, f"Re: {message['subject']}",
                     f"Invoice {invoice} totals {f'{total} {currency}'.strip()} and is due on {due}.")]

    return draft(
        inp,
        description=f"Answer {possessive(sender)} mail '{message['subject']}' by sending {name} ({who}) the total "
                    f"({total}) and due date ({due}) of invoice {invoice}, read from {pdfs[file]['file']}.",
        subtasks=["Read the question about the invoice.", f"Read {pdfs[file]['file']}.",
                  f"Send {name} its total and due date."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=who, body_keywords=[total, due])],
        memory=[m1, m2],
        oracle=plan(who, name),
        baseline=plan(sender_user(message), sender),  # the intent alone answers whoever asked
        misreadings=misreadings_of([m2], lambda mid, person: plan(users[person], person)),
    )


_MILESTONE_RE = re.compile(r"The (.+?) milestone moves to (\d{4}-\d{2}-\d{2})")
_DECISION_RE = re.compile(rf"Decision: the (.+?) of ([\d,]+(?:\.\d+)?) ({CODE}) is approved")


@family("milestone_to_calendar", ("word", "calendar"), "medium")
def milestone_to_calendar(inp: FamilyInput) -> TaskDraft | None:
    """Put the milestone date recorded in a project's notes into the calendar, at the hour, for the
    length and under the title the chat gives."""
    found = _days_ahead(inp, ((d, line) for d in docs(inp.notes, "word") for line in d["lines"]), _MILESTONE_RE)
    if not found:
        return None
    doc, project, day = inp.rng.choice(found)
    slot = slot_on(inp, day, (15, 30), (9, 11, 15))
    if slot is None:
        return None
    minutes, hour, said_first, start, end = slot
    title = f"{project} milestone"
    rule = f"at {hour}:00 on the milestone day"
    about = "the milestone reminder"
    others = [f for f in found if distinct(stem(f[0]["file"]), stem(doc["file"])) and f[2] != day]
    distractors: tuple[Distractor, ...] = ()
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)[0]
        distractors = (near(stem(other["file"]), f"{stem(other['file'])} is about another project"),)
    m1 = piece(1, "fact", f"the milestone date is in {stem(doc['file'])}", stem(doc["file"]), cue="document",
               about=about, distractors=distractors)
    m2 = piece(2, "action", f"block {minutes} minutes for it in my calendar on the milestone day",
               f"{minutes} minutes", cue="duration", about=about)
    m3 = hour_piece(3, hour, rule, about, said_first)
    m4 = piece(4, "action", f"call the reminder {title}", title, cue="meeting_title", about=about)

    def plan(mid: str, value: str) -> list:
        d, dd = next((f[0], f[2]) for f in found if stem(f[0]["file"]) == value) if mid == "m1" else (doc, day)
        s0 = dd.replace(hour=hour_of(value) if mid == "m3" else hour)
        return [call("word_read_file", file_path=d["file"]),
                booking(inp.user, title, s0, s0 + timedelta(minutes=minutes))]

    return draft(
        inp,
        description=f"Add '{title}' to {inp.calendar_words} at {hour}:00 for {minutes} minutes "
                    f"on {day:%Y-%m-%d}, the milestone date recorded in {doc['file']}.",
        subtasks=[f"Read {doc['file']} for the milestone date.", "Book the reminder then."],
        evaluation=[event_check(inp.user, title, start, end)],
        memory=[m1, m2, m3, m4],
        oracle=plan("", ""),
        baseline=first_free_booking(inp),
        misreadings=misreadings_of([m1, m3], plan),
        computed=slot_times(start, minutes, rule, ("m1", "m3"), ("m2",)),
    )


@family("decision_email", ("word", "email"), "medium")
def decision_email(inp: FamilyInput) -> TaskDraft | None:
    """Tell a colleague the approved amount recorded in a project's notes (which notes and which
    colleague are said in the chat)."""
    found = [(d, m.group(1), m.group(2), m.group(3)) for d in docs(inp.notes, "word") for line in d["lines"]
             for m in [_DECISION_RE.search(line)] if m]
    if not found or not inp.colleagues:
        return None
    doc, what, amount, currency = inp.rng.choice(found)
    who, name = inp.rng.choice(inp.colleagues)
    if found[0][2] == amount and who == inp.colleagues[0][0]:
        return None  # the intent alone tells the first colleague the first decision it finds
    olds = [n for u, n in inp.colleagues if n != name and distinct(n, name)]
    inp.rng.shuffle(olds)
    superseded = (olds.pop(),) if olds and chance(inp, DRAFT.correct) else ()
    distractors = ((near(olds[0], f"{olds[0]} already heard about the last approval"),)
                   if olds and chance(inp, DRAFT.distract) else ())
    users = {n: u for u, n in inp.colleagues}
    about = "the approval news"
    m1 = piece(1, "fact", f"the approval is recorded in {stem(doc['file'])}", stem(doc["file"]), cue="document",
               about=about)
    m2 = piece(2, "action", f"{name} should hear about the approval by email", name, cue="recipient", about=about,
               superseded=superseded, distractors=distractors, thread=2)

    def plan(person: str) -> list:
        return [call("word_read_file", file_path=doc["file"]),
                mail(inp, users[person], person, "Approved", f"The {what} of {amount} {currency} is approved.")]

    return draft(
        inp,
        description=f"Email {name} ({users[name]}) that the {what} of {amount} {currency} is approved, as recorded in "
                    f"{doc['file']}.",
        subtasks=[f"Read {doc['file']} for the decision.", f"Email {name} the approved amount."],
        evaluation=[cr.email_sent(sender=inp.user, recipient=users[name], body_keywords=[amount])],
        memory=[m1, m2],
        oracle=plan(name),
        baseline=[call("word_read_file", file_path=found[0][0]["file"]),
                  send(inp, inp.colleagues[0][0], "Approved",
                       f"The {found[0][1]} of {found[0][2]} {found[0][3]} is approved.")],
        misreadings=misreadings_of([m2], lambda mid, person: plan(person)),
    )
