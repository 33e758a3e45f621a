"""The Word and PDF documents of a world: meeting notes, reports, purchase orders, supplier
invoices and contracts (each vendor sells what its trade sells), the handbook."""

from __future__ import annotations

import random
from datetime import date, timedelta

from office_env.formats import docx_io, pdf_io
from office_env.synthesis.common import (
    WEEKDAY_NAMES,
    Facts,
    Files,
    due_date,
    format_money,
    iso,
    kind_rng,
    slug,
    superseded_path,
    workday_before,
    xlsx,
)
from office_env.synthesis.sheets import BUDGET_CATEGORIES, claim_limit
from office_env.synthesis.world import SUPPLIER_CATALOGUE, Person, World, department_of

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


def meeting_notes(world: World, rng: random.Random, facts: Facts) -> Files:
    """The minutes of the last sync, and beside them the earlier draft they replaced: the same
    meeting with some figures and dates not yet corrected."""
    project = rng.choice(world.projects)
    day = workday_before(world.now, rng, 1, 10)
    attendees = [world.user] + rng.sample(world.colleagues, rng.randint(2, min(4, len(world.colleagues))))
    later = day + timedelta(days=rng.randint(7, 21))
    while later.weekday() >= 5:  # the next meeting, a milestone, a booking: on a working day
        later += timedelta(days=1)
    facts.update(notes_day=iso(day), notes_later=iso(later), notes_people=",".join(p.user for p in attendees[1:]))
    values = {
        "project": project, "city": world.city, "currency": world.currency,
        "a": attendees[1].first, "b": attendees[2].first,
        "weekday": rng.choice(WEEKDAY_NAMES[:5]), "date": iso(later),
        "category": rng.choice(facts.get("budget_categories", ",".join(BUDGET_CATEGORIES)).split(",")).lower(),
        "amount": f"{rng.randrange(1500, 25001, 250):,}", "count": rng.randint(3, 40),
        "hour": rng.choice((10, 11, 14, 15)),
    }
    drafted = later + timedelta(days=rng.choice((-3, -2, 2, 3, 7)))
    while drafted.weekday() >= 5 or drafted == later:  # the draft's date: another working day
        drafted += timedelta(days=1)
    draft = dict(values, date=iso(drafted),
                 amount=f"{rng.randrange(1500, 25001, 250):,}", count=rng.randint(3, 40),
                 hour=rng.choice([h for h in (10, 11, 14, 15) if h != values["hour"]]))
    templates = rng.sample(_ACTION_LINES, rng.randint(5, 9))
    for needed in _ALWAYS_NOTED:  # every sync records a decision, a milestone and when it meets next
        if needed not in templates:
            spare = [i for i, line in enumerate(templates) if line not in _ALWAYS_NOTED]
            templates[rng.choice(spare)] = needed
    head = [f"# {project} sync", f"Date: {iso(day)}", "Attendees: " + ", ".join(p.name for p in attendees)]
    final = head + [line.format(**values) for line in templates]
    earlier = head[:1] + ["Draft - not yet checked by the attendees"] + head[1:] + \
        [line.format(**draft) for line in templates[:-1]]
    stem = rng.choice(("meeting_notes", f"{slug(project)}_sync_notes", f"notes_{iso(day)}", "team_meeting_minutes"))
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


def report(world: World, rng: random.Random, facts: Facts) -> Files:
    key = rng.choice(sorted(_REPORTS))
    title, paragraphs = _REPORTS[key]
    owner = rng.choice(world.people)
    values = {
        "company": world.company, "city": world.city, "currency": world.currency, "team": world.team,
        "project": rng.choice(world.projects), "owner": owner.name, "role": owner.role,
        "days": rng.choice((3, 5, 7, 10, 14)), "hours": rng.randint(2, 9),
        "window": rng.choice((30, 45, 60, 90)), "per_week": rng.randint(1, 4), "score": rng.randint(68, 96),
        "amount": rng.choice((35, 40, 45, 50, 60, 75)), "limit": rng.randrange(150, 1001, 25),
        "date": iso(workday_before(world.now, rng, 20, 120)), "claim_limit": claim_limit(world),
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
    rng = kind_rng(world, "vendors")
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
        f"Invoice date: {iso(issued)}",
        f"Due date: {iso(due_date(issued))}",
        "Items:",
    ]
    subtotal = 0.0
    for service, quantity, price in items:
        amount = round(quantity * price, 2)
        subtotal = round(subtotal + amount, 2)
        lines.append(f"{service} - {quantity} x {format_money(price)} = {format_money(amount)}")
    rate = rng.choice((0, 5, 8, 10))
    tax = round(subtotal * rate / 100, 2)
    total = round(subtotal + tax, 2)
    lines += [f"Subtotal: {format_money(subtotal)} {world.currency}",
              f"Tax ({rate}%): {format_money(tax)} {world.currency}",
              f"Total due: {format_money(total)} {world.currency}"]
    if paid is not None:
        lines.append(f"Status: paid on {iso(paid)}")
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


def purchase_orders(world: World, rng: random.Random, facts: Facts) -> Files:
    """Orders to the world's vendors, each for items of that vendor's catalogue. The first orders
    are the ones the invoices answer (``facts``: their numbers, vendors and items)."""
    vendors = _vendors(world)
    rows: list[list] = [["PO", "Date", "Vendor", "Item", "Quantity", "Unit Price", "Amount", "Status"]]
    start = rng.randint(2100, 7800)
    orders: list[tuple[str, date, str, list[tuple[str, int, float]]]] = []
    for index in range(rng.randint(14, 22)):
        vendor = vendors[index % len(vendors)] if index < 2 else rng.choice(vendors)
        day = workday_before(world.now, rng, 10 if index < 2 else 5, 80)
        # an invoiced order has 2+ lines
        lines = rng.randint(2 if index < 2 else 1, min(4, len(SUPPLIER_CATALOGUE[vendor])))
        items = [(item, rng.randint(1, 12), price) for item, price in rng.sample(SUPPLIER_CATALOGUE[vendor], lines)]
        orders.append((f"PO-{start + index}", day, vendor, items))
    for po, day, vendor, items in sorted(orders, key=lambda o: (o[1], o[0])):
        status = "Invoiced" if po in (orders[0][0], orders[1][0]) else rng.choice(("Open", "Received", "Received"))
        for item, quantity, price in items:
            rows.append([po, iso(day), vendor, item, quantity, price, round(quantity * price, 2), status])
    for key, (po, day, vendor, items) in zip(("current", "previous"), orders[:2]):
        facts[f"po_{key}"] = po
        facts[f"po_{key}_vendor"] = vendor
        facts[f"po_{key}_day"] = iso(day)
        facts[f"po_{key}_items"] = "|".join(f"{i}~{q}~{p}" for i, q, p in items)
    names = ["purchase_orders.xlsx", "procurement_orders.xlsx"]
    if all(day.year == world.now.year for _, day, _, _ in orders):  # a log named for the year holds its orders only
        names.insert(1, f"po_log_{world.now.year}.xlsx")
    name = rng.choice(names)
    return [(f"data/{name}", "purchase_orders", xlsx(rows, "Orders", world))]


def _ordered(facts: Facts, key: str) -> tuple[str, str, date, list[tuple[str, int, float]]]:
    items = [(i, int(q), float(p)) for i, q, p in (part.split("~") for part in facts[f"po_{key}_items"].split("|"))]
    return facts[f"po_{key}"], facts[f"po_{key}_vendor"], date.fromisoformat(facts[f"po_{key}_day"]), items


def invoice(world: World, rng: random.Random, facts: Facts) -> Files:
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
    issued = max(ordered + timedelta(days=2), workday_before(world.now, rng, 3, 25))
    if issued >= world.now.date():
        issued = workday_before(world.now, rng, 1, 2)
    text, total = _invoice_text(world, rng, number, vendor, issued, po, items, None)
    facts.update(invoice_number=number, invoice_due=iso(due_date(issued)), invoice_total=format_money(total),
                 invoice_vendor=vendor, invoice_issued=iso(issued), invoice_po=po, invoice_booked=format_money(booked))
    name = rng.choice((f"invoice_{number.split('-')[-1]}.pdf", "invoice.pdf", f"{slug(vendor)}_invoice.pdf"))
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


def contract(world: World, rng: random.Random, facts: Facts) -> Files:
    """A framework agreement with one of the world's vendors: a few pages whose dates, notice period
    and fee are in the clauses, and whose items are that vendor's."""
    vendor = rng.choice(_vendors(world))
    start = workday_before(world.now, rng, 200, 420)
    end = start.replace(year=start.year + 1) - timedelta(days=1) if not (start.month == 2 and start.day == 29) \
        else date(start.year + 1, 2, 28)
    while end < world.now.date():
        end = end.replace(year=end.year + 1) if not (end.month == 2 and end.day == 29) else date(end.year + 1, 2, 28)
    contact = world.user  # the office's own signatory: naming a colleague would tell whom to tell
    values = {"company": world.company, "city": world.city, "currency": world.currency, "vendor": vendor,
              "items": ", ".join(item for item, _ in SUPPLIER_CATALOGUE[vendor]),
              "fee": f"{rng.randrange(300, 4001, 50):,}",
              "notice": rng.choice(_notice_periods(end, world.now.date())), "start": iso(start), "end": iso(end),
              "contact": contact.name, "contact_role": contact.role}
    lines = [f"Framework Services Agreement - {vendor}",
             f"Agreement reference: FSA-{start.year}-{rng.randint(100, 999)}", ""]
    for number, (heading, clauses) in enumerate(_CONTRACT_CLAUSES, start=1):
        lines.append(f"{number}. {heading}")
        lines += [f"{number}.{k} {clause.format(**values)}" for k, clause in enumerate(clauses, start=1)]
        lines.append("")
    lines += [f"Signed for {world.company}: {contact.name}, {contact.role}", f"Signed for {vendor}: account manager",
              f"Date: {iso(start)}"]
    facts.update(contract_vendor=vendor, contract_end=iso(end), contract_notice=str(values["notice"]))
    name = rng.choice((f"{slug(vendor)}_agreement.pdf", "supplier_contract.pdf", f"contract_{slug(vendor)}.pdf"))
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


def handbook(world: World, rng: random.Random, facts: Facts) -> Files:
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
    name = f"{slug(title)}.pdf"
    return [(f"data/{name}", "handbook", pdf_io.build("\n".join(lines), title=title, stamp=world.now))]


# -- mailbox -----------------------------------------------------------------------------------
