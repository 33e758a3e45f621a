"""The spreadsheets of a world: salaries, the budget (and its superseded copy), inventory, sales
of this month and the last, training scores, expense claims."""

from __future__ import annotations

import random
from datetime import date, timedelta

from office_env.synthesis.common import (
    Facts,
    Files,
    iso,
    kind_rng,
    slug,
    staff,
    superseded_path,
    workday_before,
    xlsx,
)
from office_env.synthesis.world import World, department_of

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


def salaries(world: World, rng: random.Random, facts: Facts) -> Files:
    rows: list[list] = [["Name", "Department", "Title", "Salary"]]
    for name, role in staff(world):
        low, high = _SALARY_BANDS.get(role, (50000, 90000))
        rows.append([name, department_of(role), role, rng.randrange(low, high + 1, 500)])
    year = world.now.year
    name = rng.choice(("salaries.xlsx", "team_salaries.xlsx", f"payroll_{year}.xlsx", "staff_compensation.xlsx"))
    return [(f"data/{name}", "salaries", xlsx(rows, "Salaries", world))]


BUDGET_CATEGORIES = (
    "Travel", "Software licenses", "Office supplies", "Training", "Marketing events", "Consultants",
    "Hardware", "Facilities", "Catering", "Recruiting", "Subscriptions", "Team offsite",
)


def budget(world: World, rng: random.Random, facts: Facts) -> Files:
    """This year's budget, and beside it the superseded version it replaced (same categories,
    other figures): a near miss for anyone who opens the first file that matches."""
    categories = rng.sample(BUDGET_CATEGORIES, rng.randint(7, 11))
    facts.update(budget_categories=",".join(categories))  # the mail's budget lines and quotes are among them
    rows: list[list] = [["Category", "Q1", "Q2", "Q3", "Q4"]]
    old: list[list] = [list(rows[0])]
    for category in categories:
        base = rng.randrange(2000, 40001, 100)
        quarters = [max(100, base + rng.randrange(-1500, 3001, 100)) for _ in range(4)]
        rows.append([category, *quarters])
        old.append([category, *(max(100, q + rng.randrange(-2500, 2501, 100)) for q in quarters)])
    # the mail's budget figure for a line is this quarter's, as the sheet has it
    quarter = (world.now.month - 1) // 3 + 1
    facts.update(budget_lines=";".join(f"{row[0].lower()}={row[quarter]}" for row in rows[1:]))
    year = world.now.year
    stem = rng.choice(("budget", f"budget_{year}", "annual_budget", f"{slug(world.team)}_budget"))
    return [(f"data/{stem}.xlsx", "budget", xlsx(rows, f"Budget {year}", world)),
            (superseded_path(f"data/{stem}.xlsx"), "budget_old", xlsx(old, f"Budget {year}", world))]


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


def inventory(world: World, rng: random.Random, facts: Facts) -> Files:
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
    return [(f"data/{name}", "inventory", xlsx(rows, "Inventory", world))]


REGIONS = ("North", "South", "East", "West", "Central")
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
    weekdays = _month_days(month)
    days = sorted(rng.choice(weekdays) for _ in range(count))
    rows: list[list] = [["Date", "Region", "Product", "Units", "Revenue"]]
    for day in days:
        product, price = rng.choice(products)
        units = rng.randint(1, 60)
        rows.append([iso(day), rng.choice(regions), product, units, round(units * price, 2)])
    return rows


def sales(world: World, rng: random.Random, facts: Facts) -> Files:
    """Last full month's sales (the current file) and the month before it, each file holding only
    its own month's rows and only the world's regions and products."""
    products = rng.sample(_PRODUCTS, rng.randint(3, 5))
    regions = rng.sample(REGIONS, rng.randint(3, 5))
    month = _previous_month(world.now.date())
    before = _previous_month(month)
    label, earlier = month.strftime("%B").lower(), before.strftime("%B").lower()
    name = rng.choice(("sales.xlsx", "sales_log.xlsx", f"sales_{label}.xlsx", "regional_sales.xlsx"))
    facts.update(sales_month=month.strftime("%B"), sales_regions=",".join(regions))
    return [(f"data/{name}", "sales", xlsx(_sales_rows(rng, month, products, regions, rng.randint(40, 90)),
                                            "Sales", world)),
            (f"data/sales_{earlier}.xlsx", "sales_previous",
             xlsx(_sales_rows(rng, before, products, regions, rng.randint(40, 90)), "Sales", world))]


def scores(world: World, rng: random.Random, facts: Facts) -> Files:
    directory = staff(world)
    names = [p.name for p in world.people]
    pool = [name for name, _ in directory if name not in names]
    names += rng.sample(pool, min(len(pool), rng.randint(22, 32)))
    rng.shuffle(names)
    rows: list[list] = [["Name", "Module 1", "Module 2", "Final"]]
    for name in names:
        rows.append([name, rng.randint(52, 100), rng.randint(48, 100), rng.randint(50, 100)])
    name = rng.choice(("training_scores.xlsx", "grade_book.xlsx", "course_results.xlsx", "compliance_training.xlsx"))
    return [(f"data/{name}", "scores", xlsx(rows, "Scores", world))]


_CLAIM_CATEGORIES = (("Travel", 40, 900), ("Meals", 12, 140), ("Hotel", 90, 420), ("Taxi", 8, 75),
                     ("Software", 10, 300), ("Training", 50, 800), ("Office supplies", 5, 120))


def claim_limit(world: World) -> int:
    """The amount above which an expense claim needs a second approval: one figure for the world,
    so the handbook and an expense policy never disagree."""
    return kind_rng(world, "claim_limit").choice((150, 200, 250, 300))


def expenses(world: World, rng: random.Random, facts: Facts) -> Files:
    """Expense claims of the last two months by people on the payroll."""
    directory = staff(world)
    rows: list[list] = [["Claim", "Employee", "Date", "Category", "Amount", "Status"]]
    days = sorted(workday_before(world.now, rng, 1, 60) for _ in range(rng.randint(30, 60)))
    for number, day in enumerate(days, start=rng.randint(100, 800)):
        category, low, high = rng.choice(_CLAIM_CATEGORIES)
        status = "Submitted" if (world.now.date() - day).days < 10 else rng.choice(("Approved", "Approved", "Paid",
                                                                                    "Rejected"))
        rows.append([f"EC-{number}", rng.choice(directory)[0], iso(day), category,
                     round(rng.uniform(low, high), 2), status])
    names = ["expense_claims.xlsx", "claims_log.xlsx"]
    if days[0].year == world.now.year:  # a sheet named for the year holds that year's claims only
        names.insert(1, f"expenses_{world.now.year}.xlsx")
    name = rng.choice(names)
    return [(f"data/{name}", "expenses", xlsx(rows, "Claims", world))]


# -- Word documents ----------------------------------------------------------------------------
