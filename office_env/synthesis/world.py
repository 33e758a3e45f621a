"""Seeded office worlds: who works where, on what, and what day it is.

``make_world(seed)`` draws everything from ``rng(seed, legacy=RAW)`` (``random.Random(seed)``) -- never the global
generator, never the clock -- so a seed names one world for good. The name banks below are
this project's own inventions; every entry is plain ASCII so that it survives the Latin-1
core fonts of the PDF writer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from office_env.formats.eml_io import MAIL_DOMAIN
from office_env.seeding import RAW
from office_env.seeding import rng as seeded

FIRST_NAMES: tuple[str, ...] = (
    "Dana", "Marcus", "Priya", "Owen", "Lena", "Tobias", "Aisha", "Felix", "Nora", "Rafael",
    "Ingrid", "Caleb", "Mira", "Desmond", "Yara", "Elliot", "Hana", "Julian", "Sofia", "Malik",
    "Greta", "Declan", "Amara", "Victor", "Leah", "Simon", "Zara", "Hugo", "Celeste", "Ivan",
    "Talia", "Rowan", "Naomi", "Silas", "Elena", "Kofi", "Maya", "Bruno", "Clara", "Dmitri",
    "Fiona", "Gavin", "Iris", "Jonah", "Keira", "Luca", "Marisol", "Nikhil", "Olive", "Pavel",
    "Quinn", "Rosa", "Stefan", "Tessa", "Umar", "Vera", "Wesley", "Ximena", "Yusuf", "Zoe",
    "Ada", "Bennett", "Camille", "Dario", "Esther", "Farid", "Gloria", "Henrik", "Imogen", "Jasper",
)

LAST_NAMES: tuple[str, ...] = (
    "Reyes", "Whitaker", "Okafor", "Lindqvist", "Moreau", "Castellanos", "Brennan", "Takahashi",
    "Ferreira", "Novak", "Hartley", "Osei", "Delgado", "Kowalski", "Ashworth", "Mendoza",
    "Abernathy", "Sorensen", "Petrov", "Galloway", "Nakamura", "Oyelaran", "Fitzgerald", "Halvorsen",
    "Iqbal", "Jablonski", "Kearney", "Laurent", "Nguyen", "Ortega", "Pemberton", "Quintero",
    "Rasmussen", "Sandoval", "Thornton", "Underwood", "Valdez", "Wakefield", "Yamamoto", "Zielinski",
    "Archer", "Bianchi", "Calloway", "Dunmore", "Eriksen", "Fairbanks", "Gutierrez", "Holloway",
    "Ibsen", "Jovanovic", "Kimura", "Lockhart", "Marchetti", "Northcott", "Oduya", "Prescott",
    "Rahman", "Stroud", "Tanaka", "Ulrich", "Vasquez", "Winslow", "Blackwood", "Carrington",
    "Driscoll", "Ellsworth",
)

# Job title -> department. ROLES keeps the titles in a fixed order for seeded draws.
ROLE_DEPARTMENTS: dict[str, str] = {
    "Finance Manager": "Finance",
    "Financial Controller": "Finance",
    "Payroll Specialist": "Finance",
    "Data Analyst": "Analytics",
    "Business Analyst": "Analytics",
    "Operations Coordinator": "Operations",
    "Facilities Supervisor": "Operations",
    "Office Manager": "Operations",
    "Procurement Officer": "Procurement",
    "HR Business Partner": "Human Resources",
    "Recruiter": "Human Resources",
    "Training Coordinator": "Human Resources",
    "Marketing Specialist": "Marketing",
    "Communications Officer": "Marketing",
    "Sales Lead": "Sales",
    "Account Executive": "Sales",
    "Customer Success Manager": "Customer Success",
    "Product Manager": "Product",
    "UX Designer": "Product",
    "Software Engineer": "Engineering",
    "QA Engineer": "Engineering",
    "IT Support Technician": "IT",
    "Legal Counsel": "Legal",
    "Project Coordinator": "Operations",
}
ROLES: tuple[str, ...] = tuple(ROLE_DEPARTMENTS)

COMPANIES: tuple[str, ...] = (
    "Bramblecrest Logistics", "Copperleaf Foods", "Harborview Partners", "Lumen Ridge Software",
    "Tallgrass Health", "Bluefin Outfitters", "Stonebridge Insurance", "Quillmark Publishing",
    "Redwater Energy", "Silverpine Consulting", "Oakhurst Manufacturing", "Kestrel Aviation Services",
    "Maplewood Realty", "Brightforge Labs", "Cobalt Harbor Shipping", "Fernhill Garden Supply",
    "Granite Peak Construction", "Juniper Lane Media", "Larkspur Biotech", "Meridian Bay Hotels",
    "Nettlefield Farms", "Pinecrest Education", "Riverstone Legal", "Saffron Table Restaurants",
    "Thistledown Textiles", "Upland Water Works", "Vantage Row Retail", "Westgate Pharma",
    "Yellowbirch Furniture", "Zephyr Transit", "Amberline Telecom", "Birchmont Financial",
)

PROJECTS: tuple[str, ...] = (
    "Atlas Migration", "Beacon Portal", "Cedar Rebrand", "Delta Onboarding", "Ember Pricing",
    "Falcon Reporting", "Garnet Audit", "Harbor Expansion", "Indigo Launch", "Juniper Intranet",
    "Kite Mobile App", "Lantern Analytics", "Mosaic Redesign", "Nimbus Cloud Move", "Orchid Training",
    "Pioneer Warehouse", "Quartz Billing", "Rivet Automation", "Summit Partnership", "Tidal Forecast",
    "Umbra Security Hardening", "Vertex CRM", "Willow Wellness", "Xenon Data Lake", "Yonder Retail Pilot",
    "Zenith Budget Reset", "Aurora Hiring Drive", "Basalt Compliance", "Comet Helpdesk", "Dune Logistics",
    "Echo Feedback Survey", "Fjord Supplier Panel", "Glacier Archive", "Halo Customer Portal",
    "Iris Office Move", "Jade Vendor Consolidation", "Keystone ERP Upgrade", "Lotus Sustainability",
    "Monarch Sales Push", "Nova Website Refresh", "Onyx Contract Renewal", "Prism Dashboard",
)

CITIES: tuple[str, ...] = (
    "Portland", "Denver", "Austin", "Leeds", "Bristol", "Toronto", "Dublin", "Melbourne",
    "Rotterdam", "Lyon", "Porto", "Seattle", "Chicago", "Edinburgh", "Vancouver", "Auckland",
    "Cape Town", "Singapore", "Boston", "Manchester", "Minneapolis", "Atlanta",
)

# The currency each city's offices pay and are paid in.
CURRENCY_OF_CITY: dict[str, str] = {
    "Portland": "USD", "Denver": "USD", "Austin": "USD", "Seattle": "USD", "Chicago": "USD", "Boston": "USD",
    "Minneapolis": "USD", "Atlanta": "USD", "Leeds": "GBP", "Bristol": "GBP", "Edinburgh": "GBP",
    "Manchester": "GBP", "Dublin": "EUR", "Rotterdam": "EUR", "Lyon": "EUR", "Porto": "EUR", "Toronto": "CAD",
    "Vancouver": "CAD", "Melbourne": "AUD", "Auckland": "NZD", "Singapore": "SGD", "Cape Town": "ZAR",
}

# How each city's offices write a date in numbers: month first in the United States' (04/05 is
# 5 April), day first elsewhere (4 May); Canada writes it both ways, so there a numeric date no
# order settles is read either way (None).
_MONTH_FIRST = ("Portland", "Denver", "Austin", "Seattle", "Chicago", "Boston", "Minneapolis", "Atlanta")
_EITHER_ORDER = ("Toronto", "Vancouver")
DAY_FIRST_OF_CITY: dict[str, bool | None] = {
    city: False if city in _MONTH_FIRST else None if city in _EITHER_ORDER else True for city in CITIES}

# What each supplier sells, at what unit price: its invoices, orders and quotes bill these lines.
SUPPLIER_CATALOGUE: dict[str, tuple[tuple[str, float], ...]] = {
    "Greenline Office Supply": (("Printer paper A4 (5 boxes)", 118.0), ("Ink and toner bundle", 178.9),
                                ("Stationery starter box", 64.5), ("Whiteboard markers (20)", 31.0)),
    "Parkway Print Co": (("Printed brochures (500)", 325.0), ("Business cards (250)", 48.0),
                         ("Posters A2 (10)", 86.0), ("Roll-up banner", 149.0)),
    "Hollis & Grant IT Services": (("Laptop repair", 210.0), ("Network health check", 640.0),
                                   ("IT support hours", 95.0), ("Device setup", 55.0)),
    "Bluestem Catering": (("Catering for 20 people", 540.0), ("Coffee service (day)", 180.0),
                          ("Lunch platter", 96.0), ("Afternoon snacks tray", 62.0)),
    "Northgate Cleaning": (("Office cleaning (monthly)", 880.0), ("Window cleaning", 260.0),
                           ("Carpet deep clean", 420.0), ("Washroom supplies refill", 74.0)),
    "Clearview Consulting": (("Consulting hours", 135.0), ("Workshop facilitation (day)", 1450.0),
                             ("Process review report", 2200.0)),
    "Ironbark Furniture": (("Ergonomic chair", 329.0), ("Standing desk", 545.0), ("Desk assembly", 95.0),
                           ("Furniture delivery", 120.0)),
    "Sparrow Travel Desk": (("Rail ticket", 86.0), ("Hotel night", 165.0), ("Flight booking fee", 35.0)),
    "Tandem Courier": (("Courier deliveries", 42.5), ("Same-day delivery", 68.0), ("Pallet shipment", 240.0)),
    "Redleaf Software": (("Software licence (annual)", 1200.0), ("Support plan (month)", 240.0),
                         ("Training seat", 310.0)),
    "Summit Facility Care": (("Meeting room hire (day)", 450.0), ("HVAC service visit", 380.0),
                             ("Security patrol (night)", 210.0)),
    "Larchmont Stationers": (("Notebooks (box of 50)", 75.0), ("Ballpoint pens (box of 100)", 39.0),
                             ("Envelopes (box of 500)", 44.0), ("Ink and toner bundle", 178.9)),
}

CALENDAR_WEEKS = 3  # calendars hold the week before "now", its week, and the week after

FIRST_DAY = date(2024, 1, 8)
LAST_DAY = date(2025, 6, 27)
START_TIMES: tuple[time, ...] = tuple(time(9 + m // 60, m % 60) for m in range(0, 91, 15))  # 09:00-10:30


def department_of(role: str) -> str:
    """The department a job title belongs to ("General" for titles not in the bank)."""
    return ROLE_DEPARTMENTS.get(role, "General")


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    user: str  # lowercase first name, unique within a world: mailbox and calendar owner
    role: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def email(self) -> str:
        return f"{self.user}@{MAIL_DOMAIN}"

    @property
    def department(self) -> str:
        return department_of(self.role)

    def to_dict(self) -> dict[str, str]:
        return {"first": self.first, "last": self.last, "user": self.user, "role": self.role,
                "name": self.name, "email": self.email}


@dataclass(frozen=True)
class World:
    seed: int
    now: datetime
    user: Person
    colleagues: tuple[Person, ...]
    company: str
    team: str
    projects: tuple[str, ...]
    city: str

    @property
    def people(self) -> tuple[Person, ...]:
        """The user first, then the colleagues."""
        return (self.user, *self.colleagues)

    @property
    def currency(self) -> str:
        """The code of the money the office's documents are written in (its city's)."""
        return CURRENCY_OF_CITY[self.city]

    @property
    def day_first(self) -> bool | None:
        """Whether the office writes a numeric date day first (None: both orders are usual)."""
        return DAY_FIRST_OF_CITY[self.city]

    def person(self, user: str) -> Person:
        """The person whose user name is ``user`` (KeyError if nobody)."""
        for person in self.people:
            if person.user == user:
                return person
        raise KeyError(user)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "now": self.now.isoformat(),
            "user": self.user.to_dict(),
            "colleagues": [p.to_dict() for p in self.colleagues],
            "company": self.company,
            "team": self.team,
            "projects": list(self.projects),
            "city": self.city,
            "currency": self.currency,
        }


def _weekdays() -> tuple[date, ...]:
    days, day = [], FIRST_DAY
    while day <= LAST_DAY:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return tuple(days)


_WEEKDAYS = _weekdays()


def make_world(seed: int) -> World:
    """The world named by ``seed``: same seed, same world, on every machine."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed: expected an int, got {type(seed).__name__}")
    rng = seeded(seed, legacy=RAW)
    count = rng.randint(5, 8) + 1
    firsts = rng.sample(FIRST_NAMES, count)
    lasts = rng.sample(LAST_NAMES, count)
    roles = rng.sample(ROLES, count)
    people = tuple(Person(f, last, f.lower(), r) for f, last, r in zip(firsts, lasts, roles))
    company = rng.choice(COMPANIES)
    projects = tuple(rng.sample(PROJECTS, rng.randint(3, 5)))
    city = rng.choice(CITIES)
    now = datetime.combine(rng.choice(_WEEKDAYS), rng.choice(START_TIMES))
    return World(
        seed=seed,
        now=now,
        user=people[0],
        colleagues=people[1:],
        company=company,
        team=people[0].department,
        projects=projects,
        city=city,
    )
