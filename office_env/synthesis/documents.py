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
from office_env.synthesis.check import OUT_OF_OFFICE, WorldCheckError, check_world
from office_env.synthesis.world import (
    CALENDAR_WEEKS,
    SUPPLIER_CATALOGUE,
    FIRST_NAMES,
    LAST_NAMES,
    ROLES,
    Person,
    World,
    department_of,
)

KINDS: tuple[str, ...] = (
    "salaries", "budget", "budget_old", "inventory", "sales", "sales_previous", "scores", "expenses",
    "purchase_orders", "meeting_notes", "meeting_notes_old", "report", "invoice", "invoice_paid", "contract",
    "handbook", "email", "calendar",
)

Files = list[tuple[str, str, bytes]]  # (testbed-relative path, kind, bytes)
Facts = dict[str, str]  # what later kinds (the mailbox) may mention: file names, invoice number

NEAR_MISS_MARK = "_old"  # a superseded copy beside the current file: budget_2025.xlsx, budget_2025_old.xlsx


def is_superseded(path: str) -> bool:
    """A file kept beside the one that replaced it (``budget_old.xlsx``): no task is set on it, no
    checked value may come from it alone; an agent must tell the two apart."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].endswith(NEAR_MISS_MARK)


def superseded_path(path: str) -> str:
    """Where the superseded copy of ``path`` is kept: ``data/budget_2025.xlsx`` -> ``data/budget_2025_old.xlsx``."""
    base, _, ext = path.rpartition(".")
    return f"{base}{NEAR_MISS_MARK}.{ext}"

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


def _due_date(issued: date) -> date:
    """When an invoice issued on ``issued`` falls due: 30 days on, moved to the next weekday (the
    invoice's terms say so), so no payment is due on a weekend."""
    due = issued + timedelta(days=30)
    while due.weekday() >= 5:
        due += timedelta(days=1)
    return due


def _extra_people(world: World, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """(name, role) of invented employees whose first and last names the world does not use."""
    used_first = {p.first for p in world.people}
    used_last = {p.last for p in world.people}
    firsts = rng.sample([f for f in FIRST_NAMES if f not in used_first], count)
    lasts = rng.sample([n for n in LAST_NAMES if n not in used_last], count)
    return [(f"{f} {n}", rng.choice(ROLES)) for f, n in zip(firsts, lasts)]


def staff(world: World) -> list[tuple[str, str]]:
    """(name, role) of everyone on the payroll: the world's people and 25-45 more, in a seeded
    order. Every sheet that lists employees draws from this one directory."""
    rng = _rng(world, "staff")
    people = [(p.name, p.role) for p in world.people]
    people += _extra_people(world, rng, rng.randint(25, 45))
    rng.shuffle(people)
    return people


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
    rows: list[list] = [["Name", "Department", "Title", "Salary"]]
    for name, role in staff(world):
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
    """This year's budget, and beside it the superseded version it replaced (same categories,
    other figures): a near miss for anyone who opens the first file that matches."""
    categories = rng.sample(_BUDGET_CATEGORIES, rng.randint(7, 11))
    facts.update(budget_categories=",".join(categories))  # the mail's budget lines and quotes are among them
    rows: list[list] = [["Category", "Q1", "Q2", "Q3", "Q4"]]
    old: list[list] = [list(rows[0])]
    for category in categories:
        base = rng.randrange(2000, 40001, 100)
        quarters = [max(100, base + rng.randrange(-1500, 3001, 100)) for _ in range(4)]
        rows.append([category, *quarters])
        old.append([category, *(max(100, q + rng.randrange(-2500, 2501, 100)) for q in quarters)])
    quarter = (world.now.month - 1) // 3 + 1  # the mail's budget figure for a line is this quarter's, as the sheet has it
    facts.update(budget_lines=";".join(f"{row[0].lower()}={row[quarter]}" for row in rows[1:]))
    year = world.now.year
    stem = rng.choice(("budget", f"budget_{year}", "annual_budget", f"{_slug(world.team)}_budget"))
    return [(f"data/{stem}.xlsx", "budget", _xlsx(rows, f"Budget {year}", world)),
            (superseded_path(f"data/{stem}.xlsx"), "budget_old", _xlsx(old, f"Budget {year}", world))]


_INVENTORY_ITEMS = (
    ("Printer paper A4 box", 24.5), ("Printer paper A3 box", 31.0), ("Toner cartridge black", 89.0),
    ("Toner cartridge cyan", 96.0), ("Toner cartridge magenta", 96.0), ("Toner cartridge yellow", 96.0),
    ("USB-C dock", 149.0), ("Ergonomic chair", 329.0), ("Standing desk", 545.0), ("Desk drawer unit", 118.0),
    ("Whiteboard markers pack", 8.75), ("Whiteboard eraser", 4.2), ("Laptop stand", 39.9), ("Wireless mouse", 27.5),
    ("Wireless keyboard", 45.0), ("Noise-cancelling headset", 189.0), ("USB headset", 42.0),
    ("27-inch monitor", 279.0), ("24-inch monitor", 189.0), ("Monitor arm", 74.0), ("Notebook pack of 5", 12.4),
    ("Sticky notes pack", 6.5), ("Ballpoint pens box", 9.8), ("Desk lamp", 34.0), ("Ethernet cable 3m", 6.2),
    ("Ethernet cable 10m", 11.9), ("HDMI adapter", 15.8), ("USB-C charger 65W", 39.0), ("Power strip 6-way", 18.5),
    ("Coffee beans 1kg", 21.0), ("Tea selection box", 14.0), ("Paper cups sleeve", 7.4), ("Label printer", 119.0),
    ("Label tape roll", 13.5), ("Webcam HD", 64.0), ("Filing cabinet", 210.0), ("Archive boxes pack", 22.0),
    ("Lever arch files pack", 16.0), ("Shredder", 149.0), ("First aid kit", 36.0), ("Hand sanitiser 5l", 28.0),
    ("Batteries AA pack", 9.0), ("Presentation clicker", 29.0), ("Footrest", 32.0), ("Visitor badges pack", 19.0),
)


def _inventory(world: World, rng: random.Random, facts: Facts) -> Files:
    rows: list[list] = [["Item", "SKU", "Quantity", "Unit Price"]]
    skus: set[str] = set()
    for item, price in rng.sample(_INVENTORY_ITEMS, rng.randint(30, 42)):
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


def _month_days(first: date) -> list[date]:
    """The weekdays of the month that starts on ``first``."""
    days, day = [], first
    while day.month == first.month:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def _previous_month(day: date) -> date:
    """The first day of the month before ``day``'s."""
    return (day.replace(day=1) - timedelta(days=1)).replace(day=1)


def _sales_rows(rng: random.Random, month: date, products: list[tuple[str, float]], regions: list[str],
                count: int) -> list[list]:
    days = sorted(rng.choice(_month_days(month)) for _ in range(count))
    rows: list[list] = [["Date", "Region", "Product", "Units", "Revenue"]]
    for day in days:
        product, price = rng.choice(products)
        units = rng.randint(1, 60)
        rows.append([_iso(day), rng.choice(regions), product, units, round(units * price, 2)])
    return rows


def _sales(world: World, rng: random.Random, facts: Facts) -> Files:
    """Last full month's sales (the current file) and the month before it, each file holding only
    its own month's rows and only the world's regions and products."""
    products = rng.sample(_PRODUCTS, rng.randint(3, 5))
    regions = rng.sample(_REGIONS, rng.randint(3, 5))
    month = _previous_month(world.now.date())
    before = _previous_month(month)
    label, earlier = month.strftime("%B").lower(), before.strftime("%B").lower()
    name = rng.choice(("sales.xlsx", "sales_log.xlsx", f"sales_{label}.xlsx", "regional_sales.xlsx"))
    facts.update(sales_month=month.strftime("%B"), sales_regions=",".join(regions))
    return [(f"data/{name}", "sales", _xlsx(_sales_rows(rng, month, products, regions, rng.randint(40, 90)),
                                            "Sales", world)),
            (f"data/sales_{earlier}.xlsx", "sales_previous",
             _xlsx(_sales_rows(rng, before, products, regions, rng.randint(40, 90)), "Sales", world))]


def _scores(world: World, rng: random.Random, facts: Facts) -> Files:
    directory = staff(world)
    names = [p.name for p in world.people]
    pool = [name for name, _ in directory if name not in names]
    names += rng.sample(pool, min(len(pool), rng.randint(22, 32)))
    rng.shuffle(names)
    rows: list[list] = [["Name", "Module 1", "Module 2", "Final"]]
    for name in names:
        rows.append([name, rng.randint(52, 100), rng.randint(48, 100), rng.randint(50, 100)])
    name = rng.choice(("training_scores.xlsx", "grade_book.xlsx", "course_results.xlsx", "compliance_training.xlsx"))
    return [(f"data/{name}", "scores", _xlsx(rows, "Scores", world))]


_CLAIM_CATEGORIES = (("Travel", 40, 900), ("Meals", 12, 140), ("Hotel", 90, 420), ("Taxi", 8, 75),
                     ("Software", 10, 300), ("Training", 50, 800), ("Office supplies", 5, 120))


def claim_limit(world: World) -> int:
    """The amount above which an expense claim needs a second approval: one figure for the world,
    so the handbook and an expense policy never disagree."""
    return _rng(world, "claim_limit").choice((150, 200, 250, 300))


def _expenses(world: World, rng: random.Random, facts: Facts) -> Files:
    """Expense claims of the last two months by people on the payroll."""
    directory = staff(world)
    rows: list[list] = [["Claim", "Employee", "Date", "Category", "Amount", "Status"]]
    days = sorted(_workday_before(world.now, rng, 1, 60) for _ in range(rng.randint(30, 60)))
    for number, day in enumerate(days, start=rng.randint(100, 800)):
        category, low, high = rng.choice(_CLAIM_CATEGORIES)
        status = "Submitted" if (world.now.date() - day).days < 10 else rng.choice(("Approved", "Approved", "Paid",
                                                                                    "Rejected"))
        rows.append([f"EC-{number}", rng.choice(directory)[0], _iso(day), category,
                     round(rng.uniform(low, high), 2), status])
    names = ["expense_claims.xlsx", "claims_log.xlsx"]
    if days[0].year == world.now.year:  # a sheet named for the year holds that year's claims only
        names.insert(1, f"expenses_{world.now.year}.xlsx")
    name = rng.choice(names)
    return [(f"data/{name}", "expenses", _xlsx(rows, "Claims", world))]


# -- Word documents ----------------------------------------------------------------------------

_ACTION_LINES = (
    "- {a} will send the revised figures for {project} by {weekday}.",
    "- The {project} milestone moves to {date}; {b} updates the plan.",
    "- Spending on {category} is capped at {amount} {currency} this quarter.",
    "- {b} books a room for the {project} review on {date}.",
    "- {a} and {b} to agree on the vendor shortlist before {weekday}.",
    "- Headcount stays at {count} until the {project} go-live.",
    "- Open question: who owns the {project} handover? {a} to follow up.",
    "- {b} shares the customer feedback summary ({count} responses) in the team folder.",
    "- Next meeting on {date} at {hour}:00 in the {city} office.",
    "- Decision: the {category} request of {amount} {currency} is approved.",
    "- {a} to check the contract renewal date with Legal.",
    "- Risks: timeline slip of {count} days if testing starts late.",
)

_ALWAYS_NOTED = tuple(line for line in _ACTION_LINES
                      if line.startswith(("- Decision:", "- Next meeting", "- The {project} milestone")))


def _meeting_notes(world: World, rng: random.Random, facts: Facts) -> Files:
    """The minutes of the last sync, and beside them the earlier draft they replaced: the same
    meeting with some figures and dates not yet corrected."""
    project = rng.choice(world.projects)
    day = _workday_before(world.now, rng, 1, 10)
    attendees = [world.user] + rng.sample(world.colleagues, rng.randint(2, min(4, len(world.colleagues))))
    later = day + timedelta(days=rng.randint(7, 21))
    while later.weekday() >= 5:  # the next meeting, a milestone, a booking: on a working day
        later += timedelta(days=1)
    facts.update(notes_day=_iso(day), notes_later=_iso(later), notes_people=",".join(p.user for p in attendees[1:]))
    values = {
        "project": project, "city": world.city, "currency": world.currency,
        "a": attendees[1].first, "b": attendees[2].first,
        "weekday": rng.choice(WEEKDAY_NAMES[:5]), "date": _iso(later),
        "category": rng.choice(facts.get("budget_categories", ",".join(_BUDGET_CATEGORIES)).split(",")).lower(),
        "amount": f"{rng.randrange(1500, 25001, 250):,}", "count": rng.randint(3, 40),
        "hour": rng.choice((10, 11, 14, 15)),
    }
    drafted = later + timedelta(days=rng.choice((-3, -2, 2, 3, 7)))
    while drafted.weekday() >= 5 or drafted == later:  # the draft's date: another working day
        drafted += timedelta(days=1)
    draft = dict(values, date=_iso(drafted),
                 amount=f"{rng.randrange(1500, 25001, 250):,}", count=rng.randint(3, 40),
                 hour=rng.choice([h for h in (10, 11, 14, 15) if h != values["hour"]]))
    templates = rng.sample(_ACTION_LINES, rng.randint(5, 9))
    for needed in _ALWAYS_NOTED:  # every sync records a decision, a milestone and when it meets next
        if needed not in templates:
            spare = [i for i, line in enumerate(templates) if line not in _ALWAYS_NOTED]
            templates[rng.choice(spare)] = needed
    head = [f"# {project} sync", f"Date: {_iso(day)}", "Attendees: " + ", ".join(p.name for p in attendees)]
    final = head + [line.format(**values) for line in templates]
    earlier = head[:1] + ["Draft - not yet checked by the attendees"] + head[1:] + \
        [line.format(**draft) for line in templates[:-1]]
    stem = rng.choice(("meeting_notes", f"{_slug(project)}_sync_notes", f"notes_{_iso(day)}", "team_meeting_minutes"))
    return [(f"data/{stem}.docx", "meeting_notes", docx_io.build("\n".join(final), world.now)),
            (superseded_path(f"data/{stem}.docx"), "meeting_notes_old", docx_io.build("\n".join(earlier), world.now))]


_REPORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "travel_policy": ("Travel Policy", (
        "This policy applies to every employee of {company} who travels for work.",
        "Trips must be approved by your manager at least {days} days before departure.",
        "Economy class is the default for flights shorter than {hours} hours.",
        "The daily meal allowance is {amount} {currency} in {city} and most other cities.",
        "Hotel bookings go through the travel desk; the nightly limit is {limit} {currency}.",
        "Keep every receipt and file the expense claim within {window} days of returning.",
        "Rail is preferred over flights for journeys under {hours} hours door to door.",
        "Questions about this policy go to {owner}, {role}.",
        "Personal days added to a business trip are at your own cost.",
        "This version replaces all earlier travel rules and takes effect on {date}.",
    )),
    "expense_policy": ("Expense Policy", (
        "{company} reimburses reasonable costs that employees incur while doing their job.",
        "Claims above {claim_limit} {currency} need a second approval from Finance.",
        "Client meals are capped at {amount} {currency} per person, drinks included.",
        "Software purchases must be checked with IT before anyone buys them.",
        "Submit claims monthly; claims older than {window} days are not paid.",
        "Mileage is paid at a fixed rate per kilometre, published each January.",
        "Gifts to clients may not exceed {amount} {currency} in value.",
        "Corporate cards are for business use only and are reviewed every quarter.",
        "The owner of this policy is {owner}, {role}.",
        "This policy is effective from {date}.",
    )),
    "remote_work_policy": ("Remote Work Policy", (
        "Employees of {company} may work remotely up to {per_week} days per week.",
        "Core hours are 10:00 to 15:00 local time; be reachable by chat and phone.",
        "The {city} office remains open for anyone who prefers to work on site.",
        "A one-time home office allowance of {limit} {currency} covers a chair, desk or screen.",
        "Internet costs are reimbursed up to {amount} {currency} per month.",
        "Team days happen on site once per month; your manager announces the date.",
        "Company laptops must use the VPN outside the office network.",
        "Working from another country for more than {window} days a year needs HR approval.",
        "Questions go to {owner}, {role}.",
        "This policy takes effect on {date} and is reviewed yearly.",
    )),
    "quarterly_report": ("Quarterly Report", (
        "This report summarises the {team} team's results for the last quarter at {company}.",
        "Revenue reached {limit} thousand {currency}, up {hours} percent on the previous quarter.",
        "The {project} work finished {days} days ahead of plan.",
        "Spending stayed within budget; the largest item was travel at {amount} thousand {currency}.",
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
        "company": world.company, "city": world.city, "currency": world.currency, "team": world.team,
        "project": rng.choice(world.projects), "owner": owner.name, "role": owner.role,
        "days": rng.choice((3, 5, 7, 10, 14)), "hours": rng.randint(2, 9),
        "window": rng.choice((30, 45, 60, 90)), "per_week": rng.randint(1, 4), "score": rng.randint(68, 96),
        "amount": rng.choice((35, 40, 45, 50, 60, 75)), "limit": rng.randrange(150, 1001, 25),
        "date": _iso(_workday_before(world.now, rng, 20, 120)), "claim_limit": claim_limit(world),
    }
    chosen = sorted(rng.sample(range(len(paragraphs)), rng.randint(6, 10)))
    text = "\n".join([f"# {title}"] + [paragraphs[i].format(**values) for i in chosen])
    name = f"{key}.docx" if rng.random() < 0.5 else f"{key}_{world.now.year}.docx"
    return [(f"data/{name}", "report", docx_io.build(text, world.now))]


# -- PDF documents -----------------------------------------------------------------------------

# Each vendor sells what its trade sells (``world.SUPPLIER_CATALOGUE``): an invoice, a purchase
# order and a contract name only the items of their vendor's catalogue.
_VENDORS = tuple(SUPPLIER_CATALOGUE)


def _vendors(world: World) -> list[str]:
    """The world's suppliers (4-6, seeded): the invoices, orders and contract come from them."""
    rng = _rng(world, "vendors")
    return rng.sample(_VENDORS, rng.randint(4, 6))


def _invoice_text(world: World, rng: random.Random, number: str, vendor: str, issued: date, po: str,
                  items: list[tuple[str, int, float]], paid: date | None) -> tuple[str, float]:
    """An invoice's text (page one, a page break, the vendor's terms) and its total due."""
    lines = [
        "INVOICE",
        f"Invoice number: {number}",
        f"Vendor: {vendor}",
        f"Bill to: {world.company}, {world.city}",
        f"Attention: {world.user.name}",  # the office's own reader: naming a colleague would tell whom to tell
        f"PO reference: {po}",
        f"Invoice date: {_iso(issued)}",
        f"Due date: {_iso(_due_date(issued))}",
        "Items:",
    ]
    subtotal = 0.0
    for service, quantity, price in items:
        amount = round(quantity * price, 2)
        subtotal = round(subtotal + amount, 2)
        lines.append(f"{service} - {quantity} x {_money(price)} = {_money(amount)}")
    rate = rng.choice((0, 5, 8, 10))
    tax = round(subtotal * rate / 100, 2)
    total = round(subtotal + tax, 2)
    lines += [f"Subtotal: {_money(subtotal)} {world.currency}", f"Tax ({rate}%): {_money(tax)} {world.currency}",
              f"Total due: {_money(total)} {world.currency}"]
    if paid is not None:
        lines.append(f"Status: paid on {_iso(paid)}")
    lines += ["", f"Payment by bank transfer to {vendor}; quote the invoice number.", pdf_io.PAGE_BREAK,
              "Terms and conditions", *(t.format(vendor=vendor, company=world.company) for t in _INVOICE_TERMS)]
    return "\n".join(lines), total


_INVOICE_TERMS = (
    "1. Payment is due 30 days after the invoice date, or on the next working day when that falls on a weekend, "
    "unless a purchase order states otherwise.",
    "2. Late payments may carry interest of 1 percent per month on the amount outstanding.",
    "3. Queries about this invoice must reach {vendor} within 14 days of the invoice date.",
    "4. Goods remain the property of {vendor} until the invoice is paid in full.",
    "5. Services are delivered as described in the purchase order issued by {company}.",
    "6. Prices exclude tax unless stated; tax is charged at the rate shown on page one.",
    "7. Any credit note is issued against this invoice number and offset against the next invoice.",
    "8. These terms follow the framework agreement between {vendor} and {company}, where one exists.",
)


def _purchase_orders(world: World, rng: random.Random, facts: Facts) -> Files:
    """Orders to the world's vendors, each for items of that vendor's catalogue. The first orders
    are the ones the invoices answer (``facts``: their numbers, vendors and items)."""
    vendors = _vendors(world)
    rows: list[list] = [["PO", "Date", "Vendor", "Item", "Quantity", "Unit Price", "Amount", "Status"]]
    start = rng.randint(2100, 7800)
    orders: list[tuple[str, date, str, list[tuple[str, int, float]]]] = []
    for index in range(rng.randint(14, 22)):
        vendor = vendors[index % len(vendors)] if index < 2 else rng.choice(vendors)
        day = _workday_before(world.now, rng, 10 if index < 2 else 5, 80)
        lines = rng.randint(2 if index < 2 else 1, min(4, len(SUPPLIER_CATALOGUE[vendor])))  # an invoiced order has 2+ lines
        items = [(item, rng.randint(1, 12), price) for item, price in rng.sample(SUPPLIER_CATALOGUE[vendor], lines)]
        orders.append((f"PO-{start + index}", day, vendor, items))
    for po, day, vendor, items in sorted(orders, key=lambda o: (o[1], o[0])):
        status = "Invoiced" if po in (orders[0][0], orders[1][0]) else rng.choice(("Open", "Received", "Received"))
        for item, quantity, price in items:
            rows.append([po, _iso(day), vendor, item, quantity, price, round(quantity * price, 2), status])
    for key, (po, day, vendor, items) in zip(("current", "previous"), orders[:2]):
        facts[f"po_{key}"] = po
        facts[f"po_{key}_vendor"] = vendor
        facts[f"po_{key}_day"] = _iso(day)
        facts[f"po_{key}_items"] = "|".join(f"{i}~{q}~{p}" for i, q, p in items)
    names = ["purchase_orders.xlsx", "procurement_orders.xlsx"]
    if all(day.year == world.now.year for _, day, _, _ in orders):  # a log named for the year holds its orders only
        names.insert(1, f"po_log_{world.now.year}.xlsx")
    name = rng.choice(names)
    return [(f"data/{name}", "purchase_orders", _xlsx(rows, "Orders", world))]


def _ordered(facts: Facts, key: str) -> tuple[str, str, date, list[tuple[str, int, float]]]:
    items = [(i, int(q), float(p)) for i, q, p in (part.split("~") for part in facts[f"po_{key}_items"].split("|"))]
    return facts[f"po_{key}"], facts[f"po_{key}_vendor"], date.fromisoformat(facts[f"po_{key}_day"]), items


def _invoice(world: World, rng: random.Random, facts: Facts) -> Files:
    """The open invoice for the first purchase order (often billing one line's quantity above the
    order), and an earlier, paid one for the second: two invoices in one folder, told apart by
    number, vendor, date and status."""
    po, vendor, ordered, items = _ordered(facts, "current")
    booked = round(sum(round(q * p, 2) for _, q, p in items), 2)  # what finance booked: the order, before tax
    if rng.random() < 0.85:  # as often happens, one line bills more than was ordered
        k = rng.randrange(len(items))
        item, quantity, price = items[k]
        items = [*items[:k], (item, quantity + rng.randint(1, 3), price), *items[k + 1:]]
    number = f"INV-{world.now.year}-{rng.randint(1000, 9999)}"
    issued = max(ordered + timedelta(days=2), _workday_before(world.now, rng, 3, 25))
    if issued >= world.now.date():
        issued = _workday_before(world.now, rng, 1, 2)
    text, total = _invoice_text(world, rng, number, vendor, issued, po, items, None)
    facts.update(invoice_number=number, invoice_due=_iso(_due_date(issued)), invoice_total=_money(total),
                 invoice_vendor=vendor, invoice_issued=_iso(issued), invoice_po=po, invoice_booked=_money(booked))
    name = rng.choice((f"invoice_{number.split('-')[-1]}.pdf", "invoice.pdf", f"{_slug(vendor)}_invoice.pdf"))
    out = [(f"data/{name}", "invoice", pdf_io.build(text, title=f"Invoice {number}", stamp=world.now))]
    po2, vendor2, ordered2, items2 = _ordered(facts, "previous")
    number2 = f"INV-{world.now.year}-{rng.randint(1000, 9999)}"
    while number2 == number:
        number2 = f"INV-{world.now.year}-{rng.randint(1000, 9999)}"
    issued2 = ordered2 + timedelta(days=rng.randint(2, 6))
    paid = issued2 + timedelta(days=rng.randint(10, 25))
    text2, _ = _invoice_text(world, rng, number2, vendor2, issued2, po2, items2, paid)
    name2 = f"invoice_{number2.split('-')[-1]}.pdf"
    if f"data/{name2}" == out[0][0]:
        name2 = f"invoice_{number2.split('-')[-1]}_paid.pdf"
    out.append((f"data/{name2}", "invoice_paid", pdf_io.build(text2, title=f"Invoice {number2}", stamp=world.now)))
    return out


_CONTRACT_CLAUSES = (
    ("Parties", ("This agreement is made between {company} of {city} (the client) and {vendor} (the supplier).",
                 "Each party signs through an authorised representative named at the end of this agreement.")),
    ("Scope of services", ("The supplier provides the following to the client when ordered: {items}.",
                           "Orders are placed as purchase orders quoting this agreement.",
                           "The supplier names one account contact for the client's orders and queries.")),
    ("Fees", ("The standing fee is {fee} {currency} per month, invoiced on the first working day of each month.",
              "Items ordered on purchase orders are invoiced at the catalogue prices in force on the order date.",
              "Prices may change once a year with {notice} days' written notice.")),
    ("Term", ("This agreement starts on {start} and ends on {end}.",
              "It renews for a further 12 months unless either party gives notice at least {notice} days "
              "before the end date.")),
    ("Service levels", ("The supplier answers a query within two working days.",
                        "Faults reported before noon are handled the same working day where possible.",
                        "Missed service levels are credited at 5 percent of the monthly fee per incident.")),
    ("Confidentiality", ("Each party keeps the other's business information confidential during the term and "
                         "for three years after it.",
                         "Information that is public or independently known is not confidential.")),
    ("Data protection", ("The supplier handles personal data only on the client's written instructions.",
                         "A data breach is reported to the client within 48 hours of discovery.")),
    ("Liability", ("Neither party is liable for indirect or consequential loss.",
                   "Each party's total liability in a contract year is capped at the fees paid in that year.")),
    ("Termination", ("Either party may end this agreement for a material breach not fixed within 30 days of "
                     "notice.",
                     "On termination the client pays for services delivered up to the end date.")),
    ("Notices", ("Notices go in writing to the contacts below; e-mail is accepted when acknowledged.",
                 "Client contact: {contact}, {contact_role}.",
                 "Supplier contact: the account manager of {vendor}.")),
    ("Governing law", ("This agreement is governed by the law of the place where the client is registered.",
                       "Disputes go first to a meeting of both account contacts, then to mediation.")),
)


def _notice_periods(end: date, today: date) -> tuple[int, ...]:
    """The notice periods an agreement ending on ``end`` may have so that notice can still be given
    (a week or more ahead), as an office watching its renewals would have it; 30 days when none."""
    fits = tuple(n for n in (30, 45, 60, 90) if end - timedelta(days=n) >= today + timedelta(days=7))
    return fits or (30,)


def _contract(world: World, rng: random.Random, facts: Facts) -> Files:
    """A framework agreement with one of the world's vendors: a few pages whose dates, notice period
    and fee are in the clauses, and whose items are that vendor's."""
    vendor = rng.choice(_vendors(world))
    start = _workday_before(world.now, rng, 200, 420)
    end = start.replace(year=start.year + 1) - timedelta(days=1) if not (start.month == 2 and start.day == 29) \
        else date(start.year + 1, 2, 28)
    while end < world.now.date():
        end = end.replace(year=end.year + 1) if not (end.month == 2 and end.day == 29) else date(end.year + 1, 2, 28)
    contact = world.user  # the office's own signatory: naming a colleague would tell whom to tell
    values = {"company": world.company, "city": world.city, "currency": world.currency, "vendor": vendor,
              "items": ", ".join(item for item, _ in SUPPLIER_CATALOGUE[vendor]), "fee": f"{rng.randrange(300, 4001, 50):,}",
              "notice": rng.choice(_notice_periods(end, world.now.date())), "start": _iso(start), "end": _iso(end),
              "contact": contact.name, "contact_role": contact.role}
    lines = [f"Framework Services Agreement - {vendor}", f"Agreement reference: FSA-{start.year}-{rng.randint(100, 999)}",
             ""]
    for number, (heading, clauses) in enumerate(_CONTRACT_CLAUSES, start=1):
        lines.append(f"{number}. {heading}")
        lines += [f"{number}.{k} {clause.format(**values)}" for k, clause in enumerate(clauses, start=1)]
        lines.append("")
    lines += [f"Signed for {world.company}: {contact.name}, {contact.role}", f"Signed for {vendor}: account manager",
              f"Date: {_iso(start)}"]
    facts.update(contract_vendor=vendor, contract_end=_iso(end), contract_notice=str(values["notice"]))
    name = rng.choice((f"{_slug(vendor)}_agreement.pdf", "supplier_contract.pdf", f"contract_{_slug(vendor)}.pdf"))
    return [(f"data/{name}", "contract", pdf_io.build("\n".join(lines), title=f"Agreement {vendor}",
                                                       stamp=world.now))]


_HANDBOOK_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Working hours", (
        "Office hours are {start}:00 to {end}:00, Monday to Friday.",
        "Flexible starts are possible between 07:30 and 10:00 when your team agrees.",
        "Sick days: tell your manager before {start}:30 on the first day.",
        "Overtime is agreed in advance with your manager and recorded in the HR portal.")),
    ("Leave", (
        "Annual leave is {leave} days per year, plus public holidays.",
        "Book leave at least {notice} days ahead in the HR portal.",
        "Up to five unused days may be carried into the first quarter of the next year.",
        "Parental, bereavement and study leave follow the separate leave guide on the intranet.")),
    ("Your first weeks", (
        "New starters meet their buddy on day one and their manager within {notice} days.",
        "The {team} team lead is {lead}.",
        "Your manager books the induction sessions; attendance is part of probation.",
        "Probation lasts six months and ends with a review meeting.")),
    ("IT and equipment", (
        "The IT helpdesk is on extension {ext}; urgent issues by phone only.",
        "Laptops are replaced every {years} years; report damage to IT straight away.",
        "Install software only from the company catalogue; ask IT for anything else.",
        "Lock your screen whenever you leave your desk.",
        "Report lost devices and suspicious e-mails to IT within the hour.")),
    ("Money matters", (
        "Payroll questions go to {payroll}.",
        "Expense claims are paid with the next monthly salary run.",
        "Expense claims above {claim_limit} {currency} need a second approval from Finance before they are paid.",
        "Training budget: {budget} {currency} per person per year.",
        "Parking permits cost {fee} {currency} per month.",
        "Salaries are paid on the last working day of each month.")),
    ("The building", (
        "Visitors sign in at reception and wear a badge at all times.",
        "Security badges cost {fee} {currency} to replace.",
        "Meeting rooms are booked through the shared calendar, at most {hours} hours at a time.",
        "Fire drills happen twice a year; the assembly point is the {city} car park.",
        "Bicycles are parked in the basement rack; showers are on the ground floor.",
        "The kitchen is cleaned each evening; label food you keep in the fridge.")),
    ("Conduct", (
        "Treat colleagues, clients and suppliers with respect; report harassment to HR in confidence.",
        "Gifts from suppliers above a token value are declined politely and reported to your manager.",
        "Conflicts of interest are declared to your manager and HR as soon as they arise.",
        "Company information stays within the company unless it has been published.")),
)


_NO_LEAD = "Your manager introduces you to the {team} team in your first week."


def _leads(person: Person) -> bool:
    """Whether a person's title is one that leads a team (manager, lead, supervisor, controller)."""
    return any(w in person.role for w in ("Manager", "Lead", "Supervisor", "Controller"))


def _handbook(world: World, rng: random.Random, facts: Facts) -> Files:
    title = rng.choice(("Employee Handbook", "Onboarding Guide", "Office Manual"))
    # the team lead is of the team and holds a lead's title (a team with none is not said to have a
    # lead); the guide's questions go to that lead, else to HR or someone who manages; payroll
    # questions go to finance: as the payroll sheet says
    team = [p for p in world.people if p.department == world.team]
    leads = [p for p in team if _leads(p)]
    lead = rng.choice(leads) if leads else None
    contacts = ([p for p in world.colleagues if department_of(p.role) == "Human Resources"]
                or [p for p in world.colleagues if _leads(p)] or list(world.colleagues))
    contact = lead or rng.choice(contacts)
    finance = [p for p in world.colleagues if department_of(p.role) in ("Finance", "Human Resources")]
    payroll = rng.choice(finance or list(world.colleagues))
    values = {
        "start": rng.choice((8, 9)), "end": rng.choice((17, 18)), "leave": rng.choice((22, 25, 26, 28, 30)),
        "notice": rng.choice((5, 7, 10, 14)), "ext": rng.randint(2000, 4999), "city": world.city,
        "currency": world.currency,
        "years": rng.choice((3, 4)), "team": world.team, "lead": lead.name if lead else "",
        "payroll": f"{payroll.name} ({payroll.email})", "hours": rng.choice((2, 3, 4)),
        "fee": rng.choice((15, 20, 25, 35)), "budget": rng.randrange(500, 3001, 250),
        "claim_limit": claim_limit(world),
    }
    lines = [f"{title} - {world.company}", f"Version {rng.randint(1, 6)}.{rng.randint(0, 9)}",
             f"This guide is for everyone who works at {world.company} in {world.city}. It is updated when the "
             "rules change; the version number above tells you which edition you are reading.", ""]
    sections = rng.sample(_HANDBOOK_SECTIONS, rng.randint(6, len(_HANDBOOK_SECTIONS)))
    money = next(section for section in _HANDBOOK_SECTIONS if section[0] == "Money matters")
    if money not in sections:  # every handbook says how expenses are paid and approved
        sections[rng.randrange(len(sections))] = money
    for number, (heading, body) in enumerate(sections, start=1):
        lines.append(f"{number}. {heading}")
        lines += [(line if lead or "{lead}" not in line else _NO_LEAD).format(**values) for line in body]
        lines.append("")
    lines.append(f"Questions about this guide go to {contact.name}, {contact.role}.")
    name = f"{_slug(title)}.pdf"
    return [(f"data/{name}", "handbook", pdf_io.build("\n".join(lines), title=title, stamp=world.now))]


# -- mailbox -----------------------------------------------------------------------------------

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
     "Hi {to},\n\nThanks for joining the vendor call on the {category} work. They quoted {quote} {currency} for the first year; "
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
_DOUBLE_CHECK = ("Hi {to},\n\nFollowing up on the message above: the number I have is {figure} {currency}, please double "
                 "check.\n\nThanks,\n{sender}")
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
    stem = _UNSAFE.sub("_", subject).strip(" ._")[:80] or "message"
    name, counter = f"{stem}.eml", 2
    while name.lower() in taken:
        name, counter = f"{stem}-{counter}.eml", counter + 1
    taken.add(name.lower())
    return name


def _mail_time(now: datetime, rng: random.Random, low: int, high: int) -> datetime:
    day = _workday_before(now, rng, low, high)
    return datetime(day.year, day.month, day.day, rng.randint(8, 17), rng.randrange(0, 60, 1))


def _forwarded(sender: Person, when: datetime, subject: str, body: str) -> str:
    """The quoted block of a forwarded message."""
    return (f"---------- Forwarded message ----------\nFrom: {sender.name} <{sender.email}>\n"
            f"Date: {when.strftime('%Y-%m-%d %H:%M')}\nSubject: {subject}\n\n{body}")


Away = dict[str, list[tuple[date, date]]]  # user -> (first, last) days their mail says they are away


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
        new = _iso(until)
        if new != old:
            for other, (s2, sub2, b2, w2, c2) in enumerate(out):
                if other == position or sub2 == f"Re: {subject}":
                    out[other] = (s2, sub2, b2.replace(old, new), w2, c2)
        out[position] = (person, subject, out[position][2], when, cc)
        spans.append((person, first, last))
    return spans


def _emails(world: World, rng: random.Random, facts: Facts, away: Away | None = None) -> Files:
    """The user's inbox. ``away``, when given, receives the days each colleague's mail says they
    are away (a holiday ahead; an out-of-office notice, sent after their last other mail)."""
    user = world.user
    regions = facts.get("sales_regions", ",".join(_REGIONS)).split(",")
    values = {
        "quarter": f"Q{(world.now.month - 1) // 3 + 1}", "project": rng.choice(world.projects),
        "category": rng.choice(facts.get("budget_categories", ",".join(_BUDGET_CATEGORIES)).split(",")).lower(),
        "weekday": rng.choice(WEEKDAY_NAMES[:5]), "percent": rng.randrange(20, 96, 5),
        "city": world.city, "currency": world.currency, "count": rng.randint(2, 9), "month": facts.get("sales_month", world.now.strftime("%B")),
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
        "to": user.first,
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
    near = [q for q in range(round(quote * 0.8 / 50) * 50, round(quote * 1.2 / 50) * 50 + 1, 50) if q not in (quote, amount)]
    values.update(amount=f"{amount:,}", quote=f"{quote:,}", quote2=f"{rng.choice(near):,}")
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
    out: list[tuple[Person, str, str, datetime, tuple[str, ...]]] = []
    absences: list[tuple[int, str, int | None]] = []  # each absence mail: (position in out, its date, its days)
    taken: set[str] = set()
    in_notes = set(facts.get("notes_people", "").split(","))
    absentees = _absentees(world, [t[0][0] for t in topics], in_notes, rng)
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
        local = dict(values, sender=sender.first, other=other.first, date=_iso(day))
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
            note = f"Hi {user.first},\n\nIn case this did not reach you.\n\n{forwarder.first}\n\n"
            out.append((forwarder, f"Fwd: {subject}", note + _forwarded(sender, when, subject, body), fwd_when, ()))
    first_quote = next((m[3] for m in out if m[1] == "Vendor meeting follow-up"), None)
    for position, (sender, subject, body, when, cc) in enumerate(out):
        if subject.startswith("Second quote") and first_quote is not None and when <= first_quote:
            # the second quote answers the first one's promise: it (and its replies) come after it
            moved = min(first_quote + timedelta(hours=rng.randint(3, 48)), world.now - timedelta(minutes=40))
            for other, (s2, sub2, b2, w2, c2) in enumerate(out):
                if sub2 in (subject, f"Re: {subject}"):
                    out[other] = (s2, sub2, b2, min(w2 + (moved - when), world.now - timedelta(minutes=10 + other % 20)), c2)
            when = moved
        if subject == "Out of office":  # nobody away writes again: the notice follows their last mail
            last = max((m[3] for m in out if m[0] == sender and m[1] != subject), default=when)
            if last >= when:
                when = min(last + timedelta(minutes=rng.randint(20, 240)), world.now - timedelta(minutes=10))
                out[position] = (sender, subject, body, when, cc)
    spans = _clear_absences(world, out, absences, facts)
    if away is not None:
        for person, first, last in spans:
            away.setdefault(person.user, []).append((first, last))
    files_out: Files = []
    for sender, subject, body, when, cc in sorted(out, key=lambda m: (m[3], m[1])):
        name = _safe_name(subject, taken)
        data = eml_io.build(sender.user, user.user, subject, body, when, cc=cc)
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


class _Weeks:
    """Busy intervals of one person over the calendar's weeks; places events without overlap."""

    def __init__(self, monday: date, weeks: int) -> None:
        self.monday, self.weeks = monday, weeks
        self.busy: list[tuple[datetime, datetime]] = []

    def free(self, start: datetime, end: datetime) -> bool:
        return all(end <= s or start >= e for s, e in self.busy)

    def candidates(self, rng: random.Random, minutes: int, week: int | None = None) -> list[datetime]:
        """Free-or-not start times on the half hour, 09:00-17:00 on weekdays, shuffled; ``week``:
        only that week's."""
        out = []
        offsets = range(7 * self.weeks) if week is None else range(7 * week, 7 * week + 7)
        for offset in offsets:
            day = self.monday + timedelta(days=offset)
            if day.weekday() >= 5:
                continue
            first = datetime(day.year, day.month, day.day, 9)
            for step in range(0, (17 * 60 - 9 * 60 - minutes) // 30 + 1):
                out.append(first + timedelta(minutes=30 * step))
        rng.shuffle(out)
        return out




def _calendars(world: World, rng: random.Random, away: Away | None = None) -> Files:
    """The user's calendar and a few colleagues' over ``CALENDAR_WEEKS``. A colleague whose mail
    says they are away (``away``) has a calendar, and those days are blocked in it before anything
    is placed: a meeting found free for them never falls on a day they said they are out."""
    monday = world.now.date() - timedelta(days=world.now.weekday()) - timedelta(days=7)
    owners = [p for p in world.colleagues if p.user in (away or {})]  # at most three: one per kind of absence
    count = max(rng.randint(2, 3), len(owners))
    owners = [world.user] + owners + rng.sample([p for p in world.colleagues if p not in owners], count - len(owners))
    weeks = {p.user: _Weeks(monday, CALENDAR_WEEKS) for p in owners}
    events: dict[str, list[CalendarEvent]] = {p.user: [] for p in owners}
    titles: dict[str, set[str]] = {p.user: set() for p in owners}
    for person in owners:
        days = {first + timedelta(days=offset) for first, last in (away or {}).get(person.user, ())
                for offset in range((last - first).days + 1)}
        for day in sorted(d for d in days if d.weekday() < 5 and 0 <= (d - monday).days < 7 * CALENDAR_WEEKS):
            start, end = datetime(day.year, day.month, day.day, 9), datetime(day.year, day.month, day.day, 17)
            weeks[person.user].busy.append((start, end))
            events[person.user].append(CalendarEvent(f"{OUT_OF_OFFICE} ({_iso(day)})", start, end, ""))

    def place(people: list[Person], summary: str, location: str, durations: tuple[int, ...] = _DURATIONS,
              week: int | None = None) -> bool:
        if any(summary in titles[p.user] for p in people):
            return False
        minutes = rng.choice(durations)
        for start in weeks[people[0].user].candidates(rng, minutes, week):
            end = start + timedelta(minutes=minutes)
            if all(weeks[p.user].free(start, end) for p in people):
                for p in people:
                    weeks[p.user].busy.append((start, end))
                    events[p.user].append(CalendarEvent(summary, start, end, location))
                    titles[p.user].add(summary)
                return True
        return False

    # Meetings the user shares with each colleague who has a calendar, every week.
    for colleague in owners[1:]:
        for week in range(CALENDAR_WEEKS):
            for _ in range(rng.randint(1, 2)):
                summary = rng.choice((f"1:1 with {colleague.first}", f"{rng.choice(world.projects)} sync",
                                      f"{colleague.first} / {world.user.first} catch-up",
                                      f"Planning with {colleague.first}", f"{rng.choice(world.projects)} working session"))
                place([world.user, colleague], summary, rng.choice(_LOCATIONS), (30, 60), week)  # a title once per person
    for person in owners:
        for week in range(CALENDAR_WEEKS):  # every week gets its own events
            placed, attempts = 0, 0
            target = rng.randint(3, 7)
            while placed < target and attempts < 50:
                attempts += 1
                summary = rng.choice(_EVENT_TITLES).format(project=rng.choice(world.projects), role=rng.choice(ROLES))
                placed += place([person], summary, rng.choice(_LOCATIONS), week=week)
    out: Files = []
    for person in owners:
        items = sorted(events[person.user], key=lambda e: (e.start, e.summary))
        out.append((f"calendar/{person.user}.ics", "calendar", ics_io.build(items, person.user, world.now)))
    return out


# -- the testbed -------------------------------------------------------------------------------

_SHEETS_AND_DOCS: tuple[tuple[str, Callable[[World, random.Random, Facts], Files]], ...] = (
    ("salaries", _salaries), ("budget", _budget), ("inventory", _inventory), ("sales", _sales),
    ("scores", _scores), ("expenses", _expenses), ("purchase_orders", _purchase_orders),
    ("meeting_notes", _meeting_notes), ("report", _report), ("invoice", _invoice), ("contract", _contract),
    ("handbook", _handbook),
)


def build_files(world: World) -> Files:
    """Every file of the world's testbed as ``(path, kind, bytes)``, in writing order."""
    files: Files = []
    facts: Facts = {}
    for kind, maker in _SHEETS_AND_DOCS:
        made = maker(world, _rng(world, kind), facts)
        files.extend(made)
        facts[kind] = made[0][0].rsplit("/", 1)[-1]
    away: Away = {}
    files.extend(_emails(world, _rng(world, "email"), facts, away))
    files.extend(_calendars(world, _rng(world, "calendar"), away))
    paths = [path for path, _, _ in files]
    if len(set(paths)) != len(paths):  # a bank edit that makes two kinds share a name is a bug
        raise AssertionError(f"duplicate testbed paths: {sorted(p for p in paths if paths.count(p) > 1)}")
    return files


def write_workspace(world: World, root: Path) -> dict[str, str]:
    """Write the world's testbed into ``root`` (absent or empty) and check that it hangs together
    (``WorldCheckError`` listing the problems); return path -> document kind."""
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
    problems = check_world(world, root, manifest)
    if problems:
        raise WorldCheckError(f"world {world.seed}: {len(problems)} problem(s): " + "; ".join(problems[:5]))
    return manifest
