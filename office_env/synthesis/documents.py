"""Write a seeded world's testbed: spreadsheets, Word and PDF documents, a mailbox, calendars.

``write_workspace(world, root)`` lays out ``root`` in the OfficeBench shape (``data/``,
``emails/<user>/``, ``calendar/<user>.ics``) using only the project's own writers, each
stamped with ``world.now``, so one seed always gives the same bytes. Every document kind
draws from its own generator (``Random("<seed>:<kind>")``): changing one kind's content never
shifts another's.

All content is dated before ``world.now`` except calendar events, which fill the working week
around it. Sheets start with a header row and hold real numbers (int or float), never
numeric strings.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable

from office_env.formats import docx_io, eml_io, ics_io, pdf_io, xlsx_io
from office_env.formats.ics_io import CalendarEvent
from office_env.synthesis.world import (
    FIRST_NAMES,
    LAST_NAMES,
    ROLES,
    Person,
    World,
    department_of,
)

KINDS: tuple[str, ...] = (
    "salaries", "budget", "inventory", "sales", "scores",
    "meeting_notes", "report", "invoice", "handbook", "email", "calendar",
)

Files = list[tuple[str, str, bytes]]  # (testbed-relative path, kind, bytes)
Facts = dict[str, str]  # what later kinds (the mailbox) may mention: file names, invoice number

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_UNSAFE = re.compile(r"[^A-Za-z0-9 _.-]+")


# -- helpers -----------------------------------------------------------------------------------

def _rng(world: World, kind: str) -> random.Random:
    return random.Random(f"{world.seed}:{kind}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _money(value: float) -> str:
    return f"{value:,.2f}"


def _iso(day: date | datetime) -> str:
    return day.strftime("%Y-%m-%d")


def _workday_before(now: datetime, rng: random.Random, low: int, high: int) -> date:
    """A weekday from ``low`` to ``high`` days before ``now`` (the nearest earlier one if the
    range holds only a weekend)."""
    days = [now.date() - timedelta(days=k) for k in range(low, high + 1)]
    weekdays = [day for day in days if day.weekday() < 5]
    if weekdays:
        return rng.choice(weekdays)
    day = days[-1]
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return day


def _extra_people(world: World, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """(name, role) of invented employees whose first and last names the world does not use."""
    used_first = {p.first for p in world.people}
    used_last = {p.last for p in world.people}
    firsts = rng.sample([f for f in FIRST_NAMES if f not in used_first], count)
    lasts = rng.sample([n for n in LAST_NAMES if n not in used_last], count)
    return [(f"{f} {n}", rng.choice(ROLES)) for f, n in zip(firsts, lasts)]


def _xlsx(rows: list[list], sheet: str, world: World) -> bytes:
    return xlsx_io.build(rows, sheet_name=sheet, stamp=world.now)


# -- spreadsheets ------------------------------------------------------------------------------

_SALARY_BANDS = {
    "Finance Manager": (88000, 118000), "Financial Controller": (95000, 130000),
    "Payroll Specialist": (52000, 68000), "Data Analyst": (64000, 88000),
    "Business Analyst": (66000, 90000), "Operations Coordinator": (48000, 62000),
    "Facilities Supervisor": (50000, 66000), "Office Manager": (47000, 60000),
    "Procurement Officer": (55000, 74000), "HR Business Partner": (70000, 92000),
    "Recruiter": (52000, 70000), "Training Coordinator": (49000, 63000),
    "Marketing Specialist": (54000, 72000), "Communications Officer": (53000, 70000),
    "Sales Lead": (78000, 105000), "Account Executive": (60000, 84000),
    "Customer Success Manager": (68000, 90000), "Product Manager": (92000, 125000),
    "UX Designer": (72000, 98000), "Software Engineer": (88000, 135000),
    "QA Engineer": (70000, 96000), "IT Support Technician": (45000, 60000),
    "Legal Counsel": (105000, 145000), "Project Coordinator": (50000, 66000),
}


def _salaries(world: World, rng: random.Random, facts: Facts) -> Files:
    people = [(p.name, p.role) for p in world.people]
    people += _extra_people(world, rng, rng.randint(1, 12 - len(people)))
    rng.shuffle(people)
    rows: list[list] = [["Name", "Department", "Title", "Salary"]]
    for name, role in people:
        low, high = _SALARY_BANDS.get(role, (50000, 90000))
        rows.append([name, department_of(role), role, rng.randrange(low, high + 1, 500)])
    year = world.now.year
    name = rng.choice(("salaries.xlsx", "team_salaries.xlsx", f"payroll_{year}.xlsx", "staff_compensation.xlsx"))
    return [(f"data/{name}", "salaries", _xlsx(rows, "Salaries", world))]


_BUDGET_CATEGORIES = (
    "Travel", "Software licenses", "Office supplies", "Training", "Marketing events", "Consultants",
    "Hardware", "Facilities", "Catering", "Recruiting", "Subscriptions", "Team offsite",
)


def _budget(world: World, rng: random.Random, facts: Facts) -> Files:
    rows: list[list] = [["Category", "Q1", "Q2", "Q3", "Q4"]]
    for category in rng.sample(_BUDGET_CATEGORIES, rng.randint(5, 8)):
        base = rng.randrange(2000, 40001, 100)
        rows.append([category] + [max(100, base + rng.randrange(-1500, 3001, 100)) for _ in range(4)])
    year = world.now.year
    name = rng.choice(("budget.xlsx", f"budget_{year}.xlsx", "annual_budget.xlsx",
                       f"{_slug(world.team)}_budget.xlsx"))
    return [(f"data/{name}", "budget", _xlsx(rows, f"Budget {year}", world))]


_INVENTORY_ITEMS = (
    ("Printer paper A4 box", 24.5), ("Toner cartridge", 89.0), ("USB-C dock", 149.0),
    ("Ergonomic chair", 329.0), ("Standing desk", 545.0), ("Whiteboard markers pack", 8.75),
    ("Laptop stand", 39.9), ("Wireless mouse", 27.5), ("Noise-cancelling headset", 189.0),
    ("27-inch monitor", 279.0), ("Notebook pack of 5", 12.4), ("Desk lamp", 34.0),
    ("Ethernet cable 3m", 6.2), ("HDMI adapter", 15.8), ("Coffee beans 1kg", 21.0),
    ("Label printer", 119.0), ("Webcam HD", 64.0), ("Filing cabinet", 210.0),
)


def _inventory(world: World, rng: random.Random, facts: Facts) -> Files:
    rows: list[list] = [["Item", "SKU", "Quantity", "Unit Price"]]
    skus: set[str] = set()
    for item, price in rng.sample(_INVENTORY_ITEMS, rng.randint(6, 12)):
        prefix = "".join(word[0] for word in item.split() if word[0].isalpha()).upper()[:3]
        sku = f"{prefix}-{rng.randint(1000, 9999)}"
        while sku in skus:
            sku = f"{prefix}-{rng.randint(1000, 9999)}"
        skus.add(sku)
        rows.append([item, sku, rng.randint(0, 400), round(price * rng.uniform(0.85, 1.15), 2)])
    name = rng.choice(("inventory.xlsx", "stock_list.xlsx", "office_inventory.xlsx", "supplies_stock.xlsx"))
    return [(f"data/{name}", "inventory", _xlsx(rows, "Inventory", world))]


_REGIONS = ("North", "South", "East", "West", "Central")
_PRODUCTS = (
    ("Starter plan", 49.0), ("Pro plan", 129.0), ("Enterprise plan", 480.0), ("Support package", 95.5),
    ("Onboarding workshop", 750.0), ("Hardware kit", 312.25), ("Training voucher", 60.0),
)


def _sales(world: World, rng: random.Random, facts: Facts) -> Files:
    products = rng.sample(_PRODUCTS, rng.randint(3, 5))
    regions = rng.sample(_REGIONS, rng.randint(3, 5))
    days = sorted(_workday_before(world.now, rng, 1, 60) for _ in range(rng.randint(10, 20)))
    rows: list[list] = [["Date", "Region", "Product", "Units", "Revenue"]]
    for day in days:
        product, price = rng.choice(products)
        units = rng.randint(1, 60)
        rows.append([_iso(day), rng.choice(regions), product, units, round(units * price, 2)])
    month = world.now.strftime("%B").lower()
    name = rng.choice(("sales.xlsx", "sales_log.xlsx", f"sales_{month}.xlsx", "regional_sales.xlsx"))
    return [(f"data/{name}", "sales", _xlsx(rows, "Sales", world))]


def _scores(world: World, rng: random.Random, facts: Facts) -> Files:
    names = [p.name for p in world.people]
    names += [name for name, _ in _extra_people(world, rng, rng.randint(0, 3))]
    rng.shuffle(names)
    rows: list[list] = [["Name", "Module 1", "Module 2", "Final"]]
    for name in names:
        rows.append([name, rng.randint(52, 100), rng.randint(48, 100), rng.randint(50, 100)])
    name = rng.choice(("training_scores.xlsx", "grade_book.xlsx", "course_results.xlsx", "compliance_training.xlsx"))
    return [(f"data/{name}", "scores", _xlsx(rows, "Scores", world))]


# -- Word documents ----------------------------------------------------------------------------

_ACTION_LINES = (
    "- {a} will send the revised figures for {project} by {weekday}.",
    "- The {project} milestone moves to {date}; {b} updates the plan.",
    "- Spending on {category} is capped at {amount} USD this quarter.",
    "- {b} books a room for the {project} review on {date}.",
    "- {a} and {b} to agree on the vendor shortlist before {weekday}.",
    "- Headcount stays at {count} until the {project} go-live.",
    "- Open question: who owns the {project} handover? {a} to follow up.",
    "- {b} shares the customer feedback summary ({count} responses) in the team folder.",
    "- Next meeting on {date} at {hour}:00 in the {city} office.",
    "- Decision: the {category} request of {amount} USD is approved.",
    "- {a} to check the contract renewal date with Legal.",
    "- Risks: timeline slip of {count} days if testing starts late.",
)


def _meeting_notes(world: World, rng: random.Random, facts: Facts) -> Files:
    project = rng.choice(world.projects)
    day = _workday_before(world.now, rng, 1, 10)
    attendees = [world.user] + rng.sample(world.colleagues, rng.randint(2, min(4, len(world.colleagues))))
    later = day + timedelta(days=rng.randint(7, 21))
    values = {
        "project": project, "city": world.city,
        "a": attendees[1].first, "b": attendees[2].first,
        "weekday": rng.choice(WEEKDAY_NAMES[:5]), "date": _iso(later),
        "category": rng.choice(_BUDGET_CATEGORIES).lower(),
        "amount": f"{rng.randrange(1500, 25001, 250):,}", "count": rng.randint(3, 40),
        "hour": rng.choice((10, 11, 14, 15)),
    }
    lines = [
        f"# {project} sync",
        f"Date: {_iso(day)}",
        "Attendees: " + ", ".join(p.name for p in attendees),
    ]
    lines += [line.format(**values) for line in rng.sample(_ACTION_LINES, rng.randint(4, 8))]
    name = rng.choice(("meeting_notes.docx", f"{_slug(project)}_sync_notes.docx", f"notes_{_iso(day)}.docx",
                       "team_meeting_minutes.docx"))
    return [(f"data/{name}", "meeting_notes", docx_io.build("\n".join(lines), world.now))]


_REPORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "travel_policy": ("Travel Policy", (
        "This policy applies to every employee of {company} who travels for work.",
        "Trips must be approved by your manager at least {days} days before departure.",
        "Economy class is the default for flights shorter than {hours} hours.",
        "The daily meal allowance is {amount} USD in {city} and most other cities.",
        "Hotel bookings go through the travel desk; the nightly limit is {limit} USD.",
        "Keep every receipt and file the expense claim within {window} days of returning.",
        "Rail is preferred over flights for journeys under {hours} hours door to door.",
        "Questions about this policy go to {owner}, {role}.",
        "Personal days added to a business trip are at your own cost.",
        "This version replaces all earlier travel rules and takes effect on {date}.",
    )),
    "expense_policy": ("Expense Policy", (
        "{company} reimburses reasonable costs that employees incur while doing their job.",
        "Claims above {limit} USD need a second approval from Finance.",
        "Client meals are capped at {amount} USD per person, drinks included.",
        "Software purchases must be checked with IT before anyone buys them.",
        "Submit claims monthly; claims older than {window} days are not paid.",
        "Mileage is paid at a fixed rate per kilometre, published each January.",
        "Gifts to clients may not exceed {amount} USD in value.",
        "Corporate cards are for business use only and are reviewed every quarter.",
        "The owner of this policy is {owner}, {role}.",
        "This policy is effective from {date}.",
    )),
    "remote_work_policy": ("Remote Work Policy", (
        "Employees of {company} may work remotely up to {per_week} days per week.",
        "Core hours are 10:00 to 15:00 local time; be reachable by chat and phone.",
        "The {city} office remains open for anyone who prefers to work on site.",
        "A one-time home office allowance of {limit} USD covers a chair, desk or screen.",
        "Internet costs are reimbursed up to {amount} USD per month.",
        "Team days happen on site once per month; your manager announces the date.",
        "Company laptops must use the VPN outside the office network.",
        "Working from another country for more than {window} days a year needs HR approval.",
        "Questions go to {owner}, {role}.",
        "This policy takes effect on {date} and is reviewed yearly.",
    )),
    "quarterly_report": ("Quarterly Report", (
        "This report summarises the {team} team's results for the last quarter at {company}.",
        "Revenue reached {limit} thousand USD, up {hours} percent on the previous quarter.",
        "The {project} work finished {days} days ahead of plan.",
        "Spending stayed within budget; the largest item was travel at {amount} thousand USD.",
        "Customer satisfaction rose to {score} out of 100 in the latest survey.",
        "Two roles were filled and one remains open in the {city} office.",
        "Main risk for next quarter: supplier delays on {project}.",
        "Priorities for next quarter are cost control and the {project} rollout.",
        "Prepared by {owner}, {role}.",
        "Figures are unaudited as of {date}.",
    )),
}


def _report(world: World, rng: random.Random, facts: Facts) -> Files:
    key = rng.choice(sorted(_REPORTS))
    title, paragraphs = _REPORTS[key]
    owner = rng.choice(world.people)
    values = {
        "company": world.company, "city": world.city, "team": world.team,
        "project": rng.choice(world.projects), "owner": owner.name, "role": owner.role,
        "days": rng.choice((3, 5, 7, 10, 14)), "hours": rng.randint(2, 9),
        "window": rng.choice((30, 45, 60, 90)), "per_week": rng.randint(1, 4), "score": rng.randint(68, 96),
        "amount": rng.choice((35, 40, 45, 50, 60, 75)), "limit": rng.randrange(150, 1001, 25),
        "date": _iso(_workday_before(world.now, rng, 20, 120)),
    }
    chosen = sorted(rng.sample(range(len(paragraphs)), rng.randint(6, 10)))
    text = "\n".join([f"# {title}"] + [paragraphs[i].format(**values) for i in chosen])
    name = f"{key}.docx" if rng.random() < 0.5 else f"{key}_{world.now.year}.docx"
    return [(f"data/{name}", "report", docx_io.build(text, world.now))]


# -- PDF documents -----------------------------------------------------------------------------

_VENDORS = (
    "Greenline Office Supply", "Parkway Print Co", "Hollis & Grant IT Services", "Bluestem Catering",
    "Northgate Cleaning", "Clearview Consulting", "Ironbark Furniture", "Sparrow Travel Desk",
    "Tandem Courier", "Redleaf Software", "Summit Facility Care", "Larchmont Stationers",
)
_SERVICES = (
    ("Consulting hours", 135.0), ("Laptop repair", 210.0), ("Catering for 20 people", 540.0),
    ("Office cleaning (monthly)", 880.0), ("Printed brochures (500)", 325.0), ("Courier deliveries", 42.5),
    ("Software licence (annual)", 1200.0), ("Desk assembly", 95.0), ("Meeting room hire (day)", 450.0),
    ("Ink and toner bundle", 178.9),
)


def _invoice(world: World, rng: random.Random, facts: Facts) -> Files:
    number = f"INV-{world.now.year}-{rng.randint(1000, 9999)}"
    vendor = rng.choice(_VENDORS)
    issued = _workday_before(world.now, rng, 3, 25)
    lines = [
        "INVOICE",
        f"Invoice number: {number}",
        f"Vendor: {vendor}",
        f"Bill to: {world.company}, {world.city}",
        f"Attention: {rng.choice(world.people).name}",
        f"Invoice date: {_iso(issued)}",
        f"Due date: {_iso(issued + timedelta(days=30))}",
        "Items:",
    ]
    subtotal = 0.0
    for service, price in rng.sample(_SERVICES, rng.randint(2, 5)):
        quantity = rng.randint(1, 12)
        amount = round(quantity * price, 2)
        subtotal = round(subtotal + amount, 2)
        lines.append(f"{service} - {quantity} x {_money(price)} = {_money(amount)}")
    rate = rng.choice((0, 5, 8, 10))
    tax = round(subtotal * rate / 100, 2)
    lines += [f"Subtotal: {_money(subtotal)} USD", f"Tax ({rate}%): {_money(tax)} USD",
              f"Total due: {_money(subtotal + tax)} USD"]
    facts.update(invoice_number=number, invoice_due=_iso(issued + timedelta(days=30)),
                 invoice_total=_money(subtotal + tax))
    name = rng.choice((f"invoice_{number.split('-')[-1]}.pdf", "invoice.pdf", f"{_slug(vendor)}_invoice.pdf"))
    return [(f"data/{name}", "invoice", pdf_io.build("\n".join(lines), title=f"Invoice {number}", stamp=world.now))]


_HANDBOOK_LINES = (
    "Office hours are {start}:00 to {end}:00, Monday to Friday.",
    "Annual leave is {leave} days per year, plus public holidays.",
    "Book leave at least {notice} days ahead in the HR portal.",
    "The IT helpdesk is on extension {ext}; urgent issues by phone only.",
    "New starters meet their buddy on day one and their manager within {notice} days.",
    "Visitors sign in at reception and wear a badge at all times.",
    "Fire drills happen twice a year; the assembly point is the {city} car park.",
    "Expense claims are paid with the next monthly salary run.",
    "Laptops are replaced every {years} years; report damage to IT straight away.",
    "The {team} team lead is {lead}.",
    "Payroll questions go to {payroll}.",
    "Meeting rooms are booked through the shared calendar, at most {hours} hours at a time.",
    "Parking permits cost {fee} USD per month.",
    "Sick days: tell your manager before {start}:30 on the first day.",
    "Security badges cost {fee} USD to replace.",
    "Training budget: {budget} USD per person per year.",
)


def _handbook(world: World, rng: random.Random, facts: Facts) -> Files:
    title = rng.choice(("Employee Handbook", "Onboarding Guide", "Office Manual"))
    lead = rng.choice(world.people)
    payroll = rng.choice(world.colleagues)
    values = {
        "start": rng.choice((8, 9)), "end": rng.choice((17, 18)), "leave": rng.choice((22, 25, 26, 28, 30)),
        "notice": rng.choice((5, 7, 10, 14)), "ext": rng.randint(2000, 4999), "city": world.city,
        "years": rng.choice((3, 4)), "team": world.team, "lead": lead.name,
        "payroll": f"{payroll.name} ({payroll.email})", "hours": rng.choice((2, 3, 4)),
        "fee": rng.choice((15, 20, 25, 35)), "budget": rng.randrange(500, 3001, 250),
    }
    body = [line.format(**values) for line in rng.sample(_HANDBOOK_LINES, rng.randint(6, 13))]
    lines = [f"{title} - {world.company}", f"Version {rng.randint(1, 6)}.{rng.randint(0, 9)}"] + body
    name = f"{_slug(title)}.pdf"
    return [(f"data/{name}", "handbook", pdf_io.build("\n".join(lines), title=title, stamp=world.now))]


# -- mailbox -----------------------------------------------------------------------------------

_MAIL_TOPICS = (
    ("Budget numbers for {quarter}",
     "Hi {to},\n\nThe {quarter} budget for {category} came in at {amount} USD. "
     "Could you check it against {budget_file} before {weekday}?\n\nThanks,\n{sender}"),
    ("{project} status",
     "Hi {to},\n\nQuick update on {project}: we are about {percent}% done and the next milestone is {date}. "
     "I will share the details at the sync.\n\nBest,\n{sender}"),
    ("Invoice {invoice}",
     "Hi {to},\n\nFinance asked about invoice {invoice} from {invoice_file}. It is due on {invoice_due}. "
     "Can you confirm the total of {invoice_total} USD is correct?\n\nRegards,\n{sender}"),
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
    ("Holiday cover",
     "Hi {to},\n\nI am out from {date} for {count} days. {other} has agreed to cover my open items.\n\n"
     "Best,\n{sender}"),
    ("Updated policy draft",
     "Hi {to},\n\nThe updated draft is saved as {report_file}. Comments welcome until {weekday}.\n\n"
     "Regards,\n{sender}"),
    ("Vendor meeting follow-up",
     "Hi {to},\n\nThanks for joining the vendor call. They quoted {amount} USD for the first year; "
     "I will ask for a second quote by {date}.\n\nBest,\n{sender}"),
    ("New starter next week",
     "Hi {to},\n\nA new {role} starts on {date}. Could you add them to the {project} channel?\n\nThanks,\n{sender}"),
)

_REPLIES = (
    "Hi {to},\n\nAdding to this: I can take care of it by {weekday}. Let me know if anything changes.\n\n{sender}",
    "Hi {to},\n\nFollowing up on the message above: the number I have is {amount} USD, please double check.\n\n"
    "Thanks,\n{sender}",
    "Hi {to},\n\nAgreed. I moved it to {date} so that {other} can join.\n\nBest,\n{sender}",
    "Hi {to},\n\nJust checking whether you saw this. A short answer is fine.\n\n{sender}",
)


def _safe_name(subject: str, taken: set[str]) -> str:
    stem = _UNSAFE.sub("_", subject).strip(" ._")[:80] or "message"
    name, counter = f"{stem}.eml", 2
    while name.lower() in taken:
        name, counter = f"{stem}-{counter}.eml", counter + 1
    taken.add(name.lower())
    return name


def _mail_time(now: datetime, rng: random.Random, low: int, high: int) -> datetime:
    day = _workday_before(now, rng, low, high)
    return datetime(day.year, day.month, day.day, rng.randint(8, 17), rng.randrange(0, 60, 1))


def _emails(world: World, rng: random.Random, facts: Facts) -> Files:
    user = world.user
    values = {
        "quarter": f"Q{(world.now.month - 1) // 3 + 1}", "project": rng.choice(world.projects),
        "category": rng.choice(_BUDGET_CATEGORIES).lower(), "amount": f"{rng.randrange(800, 45001, 50):,}",
        "weekday": rng.choice(WEEKDAY_NAMES[:5]), "percent": rng.randrange(20, 96, 5),
        "city": world.city, "count": rng.randint(2, 9), "month": world.now.strftime("%B"),
        "region": rng.choice(_REGIONS), "hour": rng.choice((10, 11, 14, 15)),
        "role": rng.choice(ROLES), "invoice": facts.get("invoice_number", "INV-0000"),
        "invoice_due": facts.get("invoice_due", "the end of the month"),
        "invoice_total": facts.get("invoice_total", "the quoted"),
        "invoice_file": facts.get("invoice", "the shared folder"),
        "budget_file": facts.get("budget", "the budget sheet"),
        "scores_file": facts.get("scores", "the training sheet"),
        "inventory_file": facts.get("inventory", "the stock list"),
        "sales_file": facts.get("sales", "the sales log"),
        "report_file": facts.get("report", "the shared folder"),
        "to": user.first,
    }
    values["end"] = values["hour"] + 1
    count = rng.randint(6, 10)
    threads = rng.randint(1, 3)
    topics = rng.sample(_MAIL_TOPICS, count - threads)
    out: Files = []
    taken: set[str] = set()
    for index, (subject_t, body_t) in enumerate(topics):
        sender, other = rng.sample(world.colleagues, 2)
        local = dict(values, sender=sender.first, other=other.first,
                     date=_iso(world.now + timedelta(days=rng.randint(2, 20))))
        subject = subject_t.format(**local)
        threaded = index < threads
        when = _mail_time(world.now, rng, 4, 13) if threaded else _mail_time(world.now, rng, 1, 13)
        out.append((sender.user, subject, body_t.format(**local), when))
        if threaded:
            replier = rng.choice([sender, other])
            third = rng.choice([p for p in world.colleagues if p != replier])
            reply_when = when + timedelta(hours=rng.randint(2, 40), minutes=rng.randint(0, 59))
            if reply_when >= world.now:
                reply_when = world.now - timedelta(hours=1)
            body = rng.choice(_REPLIES).format(**dict(local, sender=replier.first, other=third.first))
            out.append((replier.user, f"Re: {subject}", body, reply_when))
    files_out: Files = []
    for sender, subject, body, when in sorted(out, key=lambda m: m[3]):
        name = _safe_name(subject, taken)
        data = eml_io.build(sender, user.user, subject, body, when)
        files_out.append((f"emails/{user.user}/{name}", "email", data))
    return files_out


# -- calendars ---------------------------------------------------------------------------------

_EVENT_TITLES = (
    "{project} status review", "Budget check-in", "Vendor call", "Quarterly planning", "Design review",
    "Interview: {role} candidate", "Focus time", "Training: data privacy", "Client demo", "All-hands",
    "Hiring sync", "Expense approvals", "{project} kickoff", "Team retrospective", "Office move planning",
    "Supplier negotiation", "Onboarding session", "Board prep",
)
_LOCATIONS = ("Room 2A", "Room 3B", "Board room", "Video call", "Cafe corner", "")
_DURATIONS = (30, 60, 60, 60, 90, 120)


class _Week:
    """Busy intervals of one person during the working week; places events without overlap."""

    def __init__(self, monday: date) -> None:
        self.monday = monday
        self.busy: list[tuple[datetime, datetime]] = []

    def free(self, start: datetime, end: datetime) -> bool:
        return all(end <= s or start >= e for s, e in self.busy)

    def candidates(self, rng: random.Random, minutes: int) -> list[datetime]:
        out = []
        for offset in range(5):
            day = self.monday + timedelta(days=offset)
            first = datetime(day.year, day.month, day.day, 9)
            for step in range(0, (17 * 60 - 9 * 60 - minutes) // 30 + 1):
                out.append(first + timedelta(minutes=30 * step))
        rng.shuffle(out)
        return out


def _calendars(world: World, rng: random.Random) -> Files:
    monday = world.now.date() - timedelta(days=world.now.weekday())
    owners = [world.user] + rng.sample(world.colleagues, rng.randint(2, 3))
    weeks = {p.user: _Week(monday) for p in owners}
    events: dict[str, list[CalendarEvent]] = {p.user: [] for p in owners}
    titles: dict[str, set[str]] = {p.user: set() for p in owners}

    def place(people: list[Person], summary: str, location: str, durations: tuple[int, ...] = _DURATIONS) -> bool:
        if any(summary in titles[p.user] for p in people):
            return False
        minutes = rng.choice(durations)
        for start in weeks[people[0].user].candidates(rng, minutes):
            end = start + timedelta(minutes=minutes)
            if all(weeks[p.user].free(start, end) for p in people):
                for p in people:
                    weeks[p.user].busy.append((start, end))
                    events[p.user].append(CalendarEvent(summary, start, end, location))
                    titles[p.user].add(summary)
                return True
        return False

    # Meetings the user shares with each colleague who has a calendar.
    for colleague in owners[1:]:
        for _ in range(rng.randint(1, 2)):
            summary = rng.choice((f"1:1 with {colleague.first}", f"{rng.choice(world.projects)} sync",
                                  f"{colleague.first} / {world.user.first} catch-up"))
            place([world.user, colleague], summary, rng.choice(_LOCATIONS), (30, 60))
    for person in owners:
        target = rng.randint(4, 10)
        attempts = 0
        while len(events[person.user]) < target and attempts < 50:
            attempts += 1
            summary = rng.choice(_EVENT_TITLES).format(project=rng.choice(world.projects), role=rng.choice(ROLES))
            place([person], summary, rng.choice(_LOCATIONS))
    out: Files = []
    for person in owners:
        items = sorted(events[person.user], key=lambda e: (e.start, e.summary))
        out.append((f"calendar/{person.user}.ics", "calendar", ics_io.build(items, person.user, world.now)))
    return out


# -- the testbed -------------------------------------------------------------------------------

_SHEETS_AND_DOCS: tuple[tuple[str, Callable[[World, random.Random, Facts], Files]], ...] = (
    ("salaries", _salaries), ("budget", _budget), ("inventory", _inventory), ("sales", _sales),
    ("scores", _scores), ("meeting_notes", _meeting_notes), ("report", _report),
    ("invoice", _invoice), ("handbook", _handbook),
)


def build_files(world: World) -> Files:
    """Every file of the world's testbed as ``(path, kind, bytes)``, in writing order."""
    files: Files = []
    facts: Facts = {}
    for kind, maker in _SHEETS_AND_DOCS:
        made = maker(world, _rng(world, kind), facts)
        files.extend(made)
        facts[kind] = made[0][0].rsplit("/", 1)[-1]
    files.extend(_emails(world, _rng(world, "email"), facts))
    files.extend(_calendars(world, _rng(world, "calendar")))
    paths = [path for path, _, _ in files]
    if len(set(paths)) != len(paths):  # a bank edit that makes two kinds share a name is a bug
        raise AssertionError(f"duplicate testbed paths: {sorted(p for p in paths if paths.count(p) > 1)}")
    return files


def write_workspace(world: World, root: Path) -> dict[str, str]:
    """Write the world's testbed into ``root`` (absent or empty); return path -> document kind."""
    root = Path(root)
    if root.exists():
        if not root.is_dir():
            raise FileExistsError(f"{root}: exists and is not a folder")
        if any(root.iterdir()):
            raise FileExistsError(f"{root}: folder is not empty; synthesis writes into a fresh testbed")
    manifest: dict[str, str] = {}
    for folder in ("data", f"emails/{world.user.user}", "calendar"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for path, kind, data in build_files(world):
        (root / path).write_bytes(data)
        manifest[path] = kind
    return manifest
