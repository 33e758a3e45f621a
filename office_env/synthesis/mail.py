"""The mailbox of a world: mail about its files and people, replies and forwards, everyday notices,
and the absences it announces (checked against the calendars)."""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from typing import Any

from office_env.apps import get_app
from office_env.formats import eml_io
from office_env.synthesis.common import UNSAFE, WEEKDAY_NAMES, Away, Facts, Files, iso, workday_before
from office_env.synthesis.sheets import BUDGET_CATEGORIES, REGIONS
from office_env.synthesis.world import ROLES, Person, World

# One mail before it is written: sender, subject, body, when, the people copied.
Mail = tuple[Person, str, str, datetime, tuple[str, ...]]

_MAIL_TOPICS = (
    ("Budget numbers for {quarter}",
     "Hi {to},\n\nThe {quarter} budget for {category} came in at {amount} {currency}. "
     "Could you check it against {budget_file} before {weekday}?\n\nThanks,\n{sender}"),
    ("{project} status",
     "Hi {to},\n\nQuick update on {project}: we are about {percent}% done and the next milestone is {date}. "
     "I will share the details at the sync.\n\nBest,\n{sender}"),
    ("Invoice {invoice}",
     "Hi {to},\n\nFinance asked about invoice {invoice} from {invoice_file}: they booked {invoice_booked} {currency} "
     "against {invoice_po}, the order's amount before tax. Can you tell me the total due and the due date the "
     "invoice itself gives?\n\nRegards,\n{sender}"),
    ("Team lunch on {weekday}",
     "Hi {to},\n\nWe are planning a team lunch on {weekday} at 12:30 near the {city} office. "
     "Let me know if you can join.\n\nCheers,\n{sender}"),
    ("Training results",
     "Hi {to},\n\nThe training results are in {scores_file}. {count} people still need to finish the final module.\n\n"
     "Best,\n{sender}"),
    ("Stock check",
     "Hi {to},\n\nWe are running low on some supplies; {inventory_file} has the latest counts. "
     "Should I order {count} more units of the items under 20?\n\nThanks,\n{sender}"),
    ("Sales figures for {month}",
     "Hi {to},\n\nThe {month} sales are logged in {sales_file}. The {region} region had a strong week.\n\n"
     "Best,\n{sender}"),
    ("Room booking for the {project} review",
     "Hi {to},\n\nI booked a room for the {project} review on {date} from {hour}:00 to {end}:00. "
     "Shout if that clashes with anything.\n\nThanks,\n{sender}"),
    ("Meeting room for the {team} workshop",  # a second booking: which one the chat means matters
     "Hi {to},\n\nI reserved the big meeting room for the {team} workshop on {date} from {hour2}:00 to "
     "{end2}:00. Please keep it free.\n\nBest,\n{sender}"),
    ("Holiday cover",
     "Hi {to},\n\nI am out from {date} for {count} days. {other} has agreed to cover my open items.\n\n"
     "Best,\n{sender}"),
    ("Leave approved",
     "Hi {to},\n\nMy leave came through: I am out from {date} for {days} days. {other} has agreed to cover my "
     "open items.\n\nThanks,\n{sender}"),
    ("Updated policy draft",
     "Hi {to},\n\nThe updated draft is saved as {report_file}. Comments welcome until {weekday}.\n\n"
     "Regards,\n{sender}"),
    ("Vendor meeting follow-up",
     "Hi {to},\n\nThanks for joining the vendor call on the {category} work. "
     "They quoted {quote} {currency} for the first year; "
     "I will ask for a second quote by {date}.\n\nBest,\n{sender}"),
    ("Second quote for the {category} work",
     "Hi {to},\n\nThe second supplier came back on the {category} work: they quoted {quote2} {currency} for the same "
     "scope, with delivery in {count} weeks.\n\nRegards,\n{sender}"),
    ("New starter next week",
     "Hi {to},\n\nA new {role} starts on {date}. Could you add them to the {project} channel?\n\nThanks,\n{sender}"),
)

_REPLIES = (
    "Hi {to},\n\nAdding to this: I can take care of it by {weekday}. Let me know if anything changes.\n\n{sender}",
    "Hi {to},\n\nJust checking whether you saw this. A short answer is fine.\n\n{sender}",
)
_DOUBLE_CHECK = ("Hi {to},\n\nFollowing up on the message above: the number I have is {figure} {currency}, "
                 "please double check.\n\nThanks,\n{sender}")
# Replies that fit only some topics (by subject template): a figure to double-check, a booking moved.
_TOPIC_REPLIES = {
    "Budget numbers for {quarter}": (_DOUBLE_CHECK.replace("{figure}", "{amount}"),),
    "Vendor meeting follow-up": (_DOUBLE_CHECK.replace("{figure}", "{quote}"),),
    "Room booking for the {project} review": ("Hi {to},\n\nAgreed. I moved it to {date} so that {other} can join."
                                              "\n\nBest,\n{sender}",),
    "Team lunch on {weekday}": ("Hi {to},\n\nCount me in. {other} said they would come too.\n\n{sender}",),
}


# Everyday mail that no task is about: notices, newsletters, social plans. Some are forwarded on.
_NOTICES = (
    ("IT maintenance this weekend",
     "Hi all,\n\nThe file server and VPN will be down on Saturday from 08:00 to 14:00 for updates. "
     "Save your work to the shared folder before you leave on Friday. (IT Support asked me to pass this "
     "on.)\n\n{sender}"),
    ("Reminder: security awareness training",
     "Hi {to},\n\nThe yearly security awareness module is open until {date}. It takes about 40 minutes. "
     "{count} people in the {team} team have finished it so far.\n\nThanks,\n{sender}"),
    ("{company} newsletter",
     "Hello everyone,\n\nThis month: the {city} office kitchen reopens, the charity run raised money for the "
     "local food bank, and the {project} team shares what they learned.\n\nEnjoy the read,\n{sender}"),
    ("Friday drinks",
     "Hi all,\n\nDrinks on the roof terrace this Friday from 17:00. Partners welcome; tell me about dietary "
     "needs.\n\n{sender}"),
    ("Parking during the resurfacing",
     "Hi all,\n\nThe car park is closed from {date} for three days while it is resurfaced. Please use the "
     "public car park on the corner; keep your receipts. (Facilities asked me to share this.)\n\n{sender}"),
    ("Updated org chart",
     "Hi {to},\n\nThe org chart now shows the new reporting lines for {team}. Tell me if anything looks wrong "
     "before I send it to the whole company.\n\nBest,\n{sender}"),
    ("Lunch and learn: spreadsheets",
     "Hi all,\n\nOn {weekday} at 12:30 {sender} walks through pivot tables and lookups in 30 minutes. "
     "Bring your lunch and a question.\n\nSee you there"),
    ("Out of office",
     "Hello,\n\nI am out of the office until {date} with limited access to e-mail. For anything urgent, please "
     "contact {other}.\n\n{sender}"),
    ("Coffee machine on floor 2",
     "Hi all,\n\nThe coffee machine on floor 2 is broken again; a technician is booked for {weekday}. "
     "Floor 3's machine works.\n\n{sender}"),
    ("Quarterly all-hands slides",
     "Hi {to},\n\nThe slides from the all-hands are in the shared drive. The Q&A will be answered in next "
     "month's newsletter.\n\nRegards,\n{sender}"),
    ("Desk moves next month",
     "Hi {to},\n\nAs part of the office changes the {team} team moves to the east wing next month. Crates "
     "arrive the week before; label everything with your name.\n\nThanks,\n{sender}"),
    ("Purchase order {po} received",
     "Hi {to},\n\nFor the record, everything ordered on {po} from {po_vendor} was delivered and is logged in "
     "{po_file}. Nothing was missing.\n\nBest,\n{sender}"),
    ("Agreement with {contract_vendor}",
     "Hi {to},\n\nFor reference, the signed agreement with {contract_vendor} is saved as {contract_file}. "
     "Legal keeps the original.\n\nRegards,\n{sender}"),
    ("Expense claims this month",
     "Hi {to},\n\nA reminder to submit this month's claims. The log is {expenses_file}; claims without "
     "receipts are sent back.\n\nThanks,\n{sender}"),
)


def _safe_name(subject: str, taken: set[str]) -> str:
    stem = UNSAFE.sub("_", subject).strip(" ._")[:80] or "message"
    name, counter = f"{stem}.eml", 2
    while name.lower() in taken:
        name, counter = f"{stem}-{counter}.eml", counter + 1
    taken.add(name.lower())
    return name


def _mail_time(now: datetime, rng: random.Random, low: int, high: int) -> datetime:
    day = workday_before(now, rng, low, high)
    return datetime(day.year, day.month, day.day, rng.randint(8, 17), rng.randrange(0, 60, 1))


def _forwarded(sender: Person, when: datetime, subject: str, body: str) -> str:
    """The quoted block of a forwarded message."""
    return (f"---------- Forwarded message ----------\nFrom: {sender.name} <{sender.email}>\n"
            f"Date: {when.strftime('%Y-%m-%d %H:%M')}\nSubject: {subject}\n\n{body}")




_ISO_DAY_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
# the mails that say their sender is away, and the value holding how many days (none: until a date)
_ABSENCE_DAYS = {"Holiday cover": "count", "Leave approved": "days", "Out of office": None}
_BOOKINGS = ("Room booking for the {project} review", "Meeting room for the {team} workshop")


def _absentees(world: World, subjects: list[str], in_notes: set[str], rng: random.Random) -> dict[str, Person]:
    """Who sends each absence mail: one colleague each, the out-of-office notice first, from someone
    who was not at the last sync (they are away now) when the office has such a colleague."""
    out: dict[str, Person] = {}
    for subject in sorted((s for s in subjects if s in _ABSENCE_DAYS), key=lambda s: s != "Out of office"):
        free = [p for p in world.colleagues if p not in out.values()]
        if subject == "Out of office":
            free = [p for p in free if p.user not in in_notes] or free
        out[subject] = rng.choice(free or list(world.colleagues))
    return out


def _clear_absences(world: World, out: list, absences: list[tuple[int, str, int | None]],
                    facts: Facts) -> list[tuple[Person, date, date]]:
    """Keep each absence clear of the days its person is busy elsewhere in the office (a date they
    name in their own mail, the meeting whose notes list them and the next one those notes fix):
    a holiday starts after them, an out-of-office notice is sent after a past one and ends before
    a coming one. Rewrites the absence mails (and the replies quoting them) to match, and returns
    each absence as (person, first day, last day)."""
    attendees = set(facts.get("notes_people", "").split(","))
    spans = []
    leave = {out[position][2] for position, _, _ in absences}  # another absence of theirs is no busy day
    for position, old, days in absences:  # days: None for an out-of-office notice
        person, subject, body, when, cc = out[position]
        busy = {date.fromisoformat(d) for m in out if m[0] == person and m[2] not in leave
                for d in _ISO_DAY_RE.findall(m[2].split("\n\nOn ")[0].split("---------- Forwarded")[0])}
        if person.user in attendees:
            busy |= {date.fromisoformat(facts[k]) for k in ("notes_day", "notes_later") if k in facts}
        if days is None:  # the out-of-office notice: away from the day it is sent until the date it names
            past = [d for d in busy if when.date() <= d < world.now.date()]
            if past:  # sent the morning after the last day they were still about
                when = max(when, min(datetime.combine(max(past) + timedelta(days=1), datetime.min.time())
                                     + timedelta(hours=8), world.now - timedelta(minutes=10)))
            until = date.fromisoformat(old)
            coming = [d for d in busy if when.date() < d < until]
            if coming:
                until = min(coming)
            first, last = when.date(), until - timedelta(days=1)
        else:
            first = date.fromisoformat(old)  # a holiday: from the date it names, for its days
            for _ in range(60):  # on the first working day clear of them
                if first.weekday() < 5 and not any(first <= d <= first + timedelta(days=days - 1) for d in busy):
                    break
                first += timedelta(days=1)
            last, until = first + timedelta(days=days - 1), first
        new = iso(until)
        if new != old:
            for other, (s2, sub2, b2, w2, c2) in enumerate(out):
                if other == position or sub2 == f"Re: {subject}":
                    out[other] = (s2, sub2, b2.replace(old, new), w2, c2)
        out[position] = (person, subject, out[position][2], when, cc)
        spans.append((person, first, last))
    return spans


def emails(world: World, rng: random.Random, facts: Facts, away: Away | None = None) -> Files:
    """The user's inbox. ``away``, when given, receives the days each colleague's mail says they
    are away (a holiday ahead; an out-of-office notice, sent after their last other mail)."""
    values = _mail_values(world, rng, facts)
    topics, threads = _mail_topics(rng)
    in_notes = set(facts.get("notes_people", "").split(","))
    absentees = _absentees(world, [t[0][0] for t in topics], in_notes, rng)
    out, absences = _topic_mails(world, rng, facts, values, topics, threads, absentees)
    _settle_order(world, rng, out)
    spans = _clear_absences(world, out, absences, facts)
    if away is not None:
        for person, first, last in spans:
            away.setdefault(person.user, []).append((first, last))
    taken: set[str] = set()
    files_out: Files = []
    for sender, subject, body, when, cc in sorted(out, key=lambda m: (m[3], m[1])):
        name = _safe_name(subject, taken)
        data = eml_io.build(sender.user, world.user.user, subject, body, when, cc=cc)
        files_out.append((f"{get_app('email').folder}{world.user.user}/{name}", "email", data))
    return files_out


def _mail_values(world: World, rng: random.Random, facts: Facts) -> dict[str, Any]:
    """The slots every mail template may use: the office's files and figures, a few drawn ones."""
    regions = facts.get("sales_regions", ",".join(REGIONS)).split(",")
    values: dict[str, Any] = {
        "quarter": f"Q{(world.now.month - 1) // 3 + 1}", "project": rng.choice(world.projects),
        "category": rng.choice(facts.get("budget_categories", ",".join(BUDGET_CATEGORIES)).split(",")).lower(),
        "weekday": rng.choice(WEEKDAY_NAMES[:5]), "percent": rng.randrange(20, 96, 5),
        "city": world.city, "currency": world.currency, "count": rng.randint(2, 9),
        "month": facts.get("sales_month", world.now.strftime("%B")),
        "region": rng.choice(regions), "hour": rng.choice((10, 11, 14, 15)),
        "role": rng.choice(ROLES), "invoice": facts.get("invoice_number", "INV-0000"),
        "invoice_booked": facts.get("invoice_booked", "the ordered amount"),
        "invoice_po": facts.get("invoice_po", "its order"),
        "invoice_file": facts.get("invoice", "the shared folder"),
        "budget_file": facts.get("budget", "the budget sheet"),
        "scores_file": facts.get("scores", "the training sheet"),
        "inventory_file": facts.get("inventory", "the stock list"),
        "sales_file": facts.get("sales", "the sales log"),
        "report_file": facts.get("report", "the shared folder"),
        "po": facts.get("po_previous", "the last order"), "po_vendor": facts.get("po_previous_vendor", "the supplier"),
        "po_file": facts.get("purchase_orders", "the order log"),
        "contract_vendor": facts.get("contract_vendor", "the supplier"),
        "contract_file": facts.get("contract", "the shared folder"),
        "expenses_file": facts.get("expenses", "the claims log"),
        "company": world.company, "team": world.team,
        "to": world.user.first,
    }
    values["end"] = values["hour"] + 1
    values["hour2"] = rng.choice([h for h in (9, 10, 13, 14, 16) if h != values["hour"]])
    values["end2"] = values["hour2"] + 1
    values["days"] = rng.choice([n for n in range(2, 11) if n != values["count"]])
    # The budget figure a colleague reports is the sheet's for this quarter; two suppliers quote the
    # same scope within a fifth of each other; the three never coincide.
    lines = dict(line.split("=", 1) for line in facts.get("budget_lines", "").split(";") if "=" in line)
    amount = int(lines[values["category"]]) if values["category"] in lines else rng.randrange(800, 45001, 50)
    quote = rng.choice([q for q in range(800, 45001, 50) if q != amount])
    near = [q for q in range(round(quote * 0.8 / 50) * 50, round(quote * 1.2 / 50) * 50 + 1, 50)
            if q not in (quote, amount)]
    values.update(amount=f"{amount:,}", quote=f"{quote:,}", quote2=f"{rng.choice(near):,}")
    return values


def _mail_topics(rng: random.Random) -> tuple[list[tuple[tuple[str, str], bool]], int]:
    """Which work mails (True) and notices (False) the inbox holds, and how many work mails are threads."""
    count = len(_MAIL_TOPICS)  # every kind of work mail, each in its own words: every family finds its mail
    threads = rng.randint(2, 4)
    topics = [(t, True) for t in rng.sample(_MAIL_TOPICS, count)]
    subjects = [t[0][0] for t in topics]
    if "Second quote for the {category} work" in subjects and "Vendor meeting follow-up" not in subjects:
        topics = [t for t in topics if t[0][0] != "Second quote for the {category} work"]  # no second without a first
    notices = rng.sample(_NOTICES, rng.randint(7, 10))
    away_notice = next(t for t in _NOTICES if t[0] == "Out of office")
    if away_notice not in notices:  # every inbox holds somebody's out-of-office notice
        notices[-1] = away_notice
    topics += [(t, False) for t in notices]
    return topics, threads


def _topic_mails(world: World, rng: random.Random, facts: Facts, values: dict[str, Any],
                 topics: list[tuple[tuple[str, str], bool]], threads: int, absentees: dict[str, Person],
                 ) -> tuple[list[Mail], list[tuple[int, str, int | None]]]:
    """Each topic's mail with its replies or forward, and where the absence mails stand."""
    out: list[Mail] = []
    absences: list[tuple[int, str, int | None]] = []  # each absence mail: (position in out, its date, its days)
    booked_by: list[Person] = []  # each room booking another colleague's: the chat names it by its sender
    for index, ((subject_t, body_t), work) in enumerate(topics):
        sender, other = rng.sample(world.colleagues, 2)
        if subject_t in _BOOKINGS:
            if sender in booked_by:
                sender = next((p for p in world.colleagues if p not in booked_by and p != other), sender)
            booked_by.append(sender)
        if subject_t in absentees:  # each absence another colleague's; the one away now was not at the last sync
            sender = absentees[subject_t]
            if other == sender:
                other = next(p for p in world.colleagues if p != sender)
        ahead = rng.randint(2, 20)
        if subject_t == "New starter next week":  # a start date in the week after the mail's week
            ahead = 7 - world.now.weekday() + rng.randint(0, 4)
        day = (world.now + timedelta(days=ahead)).date()
        while day.weekday() >= 5:  # a booking, a leave's first day, a return: on a working day
            day += timedelta(days=1)
        local = dict(values, sender=sender.first, other=other.first, date=iso(day))
        subject = subject_t.format(**local)
        body = body_t.format(**local)
        others = [p for p in world.colleagues if p not in (sender,)]
        cc = tuple(p.user for p in rng.sample(others, rng.randint(0, min(2, len(others)))))
        threaded = work and index < threads
        if threaded and other.user not in cc:  # whoever joins the thread was copied on its first mail
            cc = (*cc, other.user)
        when = _mail_time(world.now, rng, 4, 13) if threaded else _mail_time(world.now, rng, 1, 13)
        if subject_t == "New starter next week":  # sent this morning, so "next week" is the week after now's
            when, threaded = world.now - timedelta(minutes=rng.randint(20, 90)), False
        issued = facts.get("invoice_issued")
        if subject_t == "Invoice {invoice}" and issued and when.date() <= date.fromisoformat(issued):
            # a question about the invoice comes after the invoice: the next day, or an hour ago
            when = min(datetime.combine(date.fromisoformat(issued) + timedelta(days=1), when.time()),
                       world.now - timedelta(hours=1))
        if subject_t in _ABSENCE_DAYS:
            key = _ABSENCE_DAYS[subject_t]
            absences.append((len(out), local["date"], local[key] if key else None))
        out.append((sender, subject, body, when, cc))
        if threaded:  # a reply, sometimes a second one, all copying the same people
            replier = sender
            for turn in range(rng.randint(1, 2)):
                replier = rng.choice([p for p in (sender, other) if p != replier] or [other])
                third = rng.choice([p for p in world.colleagues if p != replier])
                reply_when = when + timedelta(hours=rng.randint(2, 30) * (turn + 1), minutes=rng.randint(0, 59))
                if reply_when >= world.now:
                    reply_when = world.now - timedelta(hours=1 + turn)
                replies = _REPLIES + _TOPIC_REPLIES.get(subject_t, ())
                reply = rng.choice(replies).format(**dict(local, sender=replier.first, other=third.first))
                quoted = "\n".join("> " + line for line in body.split("\n"))
                # a reply to all: the first mail's sender and copies, never the replier themself
                copied = tuple(dict.fromkeys(u for u in (sender.user, *cc) if u != replier.user))
                out.append((replier, f"Re: {subject}", f"{reply}\n\nOn {when.strftime('%Y-%m-%d %H:%M')} "
                            f"{sender.name} wrote:\n{quoted}", reply_when, copied))
        elif not work and subject_t != "Out of office" and rng.random() < 0.3:  # a notice forwarded on
            forwarder = rng.choice([p for p in world.colleagues if p != sender])
            fwd_when = when + timedelta(hours=rng.randint(1, 20))
            if fwd_when >= world.now:
                fwd_when = world.now - timedelta(minutes=30)
            note = f"Hi {world.user.first},\n\nIn case this did not reach you.\n\n{forwarder.first}\n\n"
            out.append((forwarder, f"Fwd: {subject}", note + _forwarded(sender, when, subject, body), fwd_when, ()))
    return out, absences


def _settle_order(world: World, rng: random.Random, out: list[Mail]) -> None:
    """Move mails that must follow another: a second quote after the first, an out-of-office
    notice after its sender's last mail."""
    first_quote = next((m[3] for m in out if m[1] == "Vendor meeting follow-up"), None)
    for position, (sender, subject, body, when, cc) in enumerate(out):
        if subject.startswith("Second quote") and first_quote is not None and when <= first_quote:
            # the second quote answers the first one's promise: it (and its replies) come after it
            moved = min(first_quote + timedelta(hours=rng.randint(3, 48)), world.now - timedelta(minutes=40))
            for other, (s2, sub2, b2, w2, c2) in enumerate(out):
                if sub2 in (subject, f"Re: {subject}"):
                    out[other] = (s2, sub2, b2,
                                  min(w2 + (moved - when), world.now - timedelta(minutes=10 + other % 20)), c2)
            when = moved
        if subject == "Out of office":  # nobody away writes again: the notice follows their last mail
            last = max((m[3] for m in out if m[0] == sender and m[1] != subject), default=when)
            if last >= when:
                when = min(last + timedelta(minutes=rng.randint(20, 240)), world.now - timedelta(minutes=10))
                out[position] = (sender, subject, body, when, cc)

# -- calendars ---------------------------------------------------------------------------------
