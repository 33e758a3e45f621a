"""The world check: a generated office must hang together before any task is set in it.

``check_world(world, files)`` reads the files back through the project's own readers (as an agent
would see them) and lists every inconsistency: a file count outside the range, a sheet named for
a month that holds another month's rows, a mail from someone who does not work there, an invoice
billing items its vendor does not sell or quoting a purchase order the order log lacks, a region
praised in a mail that the sales sheet does not have, a budget figure or a quote in a mail for work
the budget sheet lacks, overlapping events in one calendar, a calendar that does not span its
weeks, a colleague who writes or holds a meeting while their own mail says they are away. A build
runs it on every world it writes and drops the world's tasks, with the problems as the reason,
when it finds any.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path
from typing import cast

from office_env.apps import get_app
from office_env.formats import eml_io, ics_io, pdf_io, xlsx_io
from office_env.synthesis.world import CALENDAR_WEEKS, SUPPLIER_CATALOGUE, World

FILES_RANGE = (30, 60)
ROWS_RANGE = (1, 300)  # data rows of one sheet: every row fits in one read of the sheet
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_REGION_RE = re.compile(r"The (\w+) region had")
OUT_OF_OFFICE = "Out of office"  # the calendar block (one a day, dated) of a day a colleague's mail says they are away
_BUDGET_LINE_RE = re.compile(r"budget for ([a-z][a-z ]*?) came in at|on the ([a-z][a-z ]*?) work\b")
_AWAY_UNTIL_RE = re.compile(r"out of the office until (\d{4}-\d{2}-\d{2})")
_AWAY_FOR_RE = re.compile(r"out from (\d{4}-\d{2}-\d{2}) for (\d+) days?")
_ITEM_RE = re.compile(r"^(?P<item>.+?) - \d+ x [\d,]+\.\d{2} = [\d,]+\.\d{2}$")


class WorldCheckError(ValueError):
    """A generated world that does not hang together; the message lists every problem."""


def check_world(world: World, root: Path, manifest: dict[str, str]) -> list[str]:
    """Every inconsistency in the testbed at ``root`` (``manifest``: path -> kind) of ``world``;
    empty when it hangs together. Reads go through the read cache, so the surfers that explore
    the same files next find them parsed."""
    problems: list[str] = []
    low, high = FILES_RANGE
    if not low <= len(manifest) <= high:
        problems.append(f"the office has {len(manifest)} files, outside {low}-{high}")
    sheets, texts, mails, events = {}, {}, {}, {}
    for path, kind in manifest.items():
        target = Path(root) / path
        if path.endswith(".xlsx"):
            view = xlsx_io.read_book(target, path)
            sheets[path] = [list(r) for r in view.sheet(None, path).rows]
            count = len(sheets[path]) - 1
            if not ROWS_RANGE[0] <= count <= ROWS_RANGE[1]:
                problems.append(f"{path}: {count} data rows, outside {ROWS_RANGE[0]}-{ROWS_RANGE[1]}")
        elif path.endswith(".pdf"):
            texts[path] = pdf_io.read_text(target, path)
        elif kind == "email":
            mails[path] = eml_io.read(target, path)
        elif kind == "calendar":
            events[path] = ics_io.read_events(target, path)
    problems += _sheet_months(sheets)
    problems += _people(world, sheets, manifest, mails)
    problems += _regions(sheets, manifest, mails)
    problems += _budget_lines(sheets, manifest, mails)
    problems += _invoices(sheets, manifest, texts)
    problems += _invoice_mail(manifest, texts, mails)
    problems += _calendars(world, events)
    problems += _absences(world, mails, events)
    problems += _roles(world, texts)
    return problems


_TEAM_LEAD_RE = re.compile(r"The ([A-Z][a-z]+(?: [A-Z][a-z]+)*) team lead is ([A-Z][\w'-]+ [A-Z][\w'-]+)\.")


def _roles(world: World, texts: dict[str, str]) -> list[str]:
    """A document that names a team's lead names someone of that team (the payroll's department)."""
    out = []
    by_name = {p.name: p for p in world.people}
    for path, text in texts.items():
        for team, name in _TEAM_LEAD_RE.findall(" ".join(text.split())):
            person = by_name.get(name)
            if person is None or person.department != team:
                out.append(f"{path}: {name} leads the {team} team, but works in "
                           f"{person.department if person else 'no team of the office'}")
    return out


def _column(rows: list[list], header: str) -> list:
    if not rows or header not in rows[0]:
        return []
    c = rows[0].index(header)
    return [r[c] for r in rows[1:] if c < len(r)]


_YEAR_IN_NAME_RE = re.compile(r"(?<!\d)(20\d\d)(?!\d)")


def _sheet_months(sheets: dict[str, list[list]]) -> list[str]:
    """A sheet whose name names a month, or a year, holds only that month's or year's dates."""
    out = []
    for path, rows in sheets.items():
        name = path.rsplit("/", 1)[-1].lower()
        dates = [date.fromisoformat(str(d)[:10]) for d in _column(rows, "Date")]
        named = [m for m in _MONTHS if m in name]
        if named:
            month = _MONTHS.index(named[0]) + 1
            stray = [d for d in dates if d.month != month]
            if stray:
                out.append(f"{path}: named for {named[0]} but holds rows dated {stray[0]}")
        year = _YEAR_IN_NAME_RE.search(name)
        stray = [d for d in dates if year and d.year != int(year.group(1))]
        if stray:
            assert year is not None  # a row is stray only against a year in the name
            out.append(f"{path}: named for {year.group(1)} but holds rows dated {stray[0]}")
    return out


def _people(world: World, sheets: dict[str, list[list]], kinds: dict[str, str],
            mails: dict[str, eml_io.Mail]) -> list[str]:
    """Mail comes from and goes to the world's people; every listed name is on the payroll."""
    out = []
    addresses = {p.email for p in world.people}
    for path, mail in mails.items():
        for field, value in (("From", mail.sender), ("To", mail.recipient), ("Cc", mail.cc)):
            for address in filter(None, (a.strip() for a in value.split(","))):
                if address not in addresses:
                    out.append(f"{path}: {field} {address} is nobody in the office")
    payroll = next((set(_column(rows, "Name")) for path, rows in sheets.items() if kinds[path] == "salaries"), set())
    for path, rows in sheets.items():
        for header in ("Name", "Employee"):
            missing = sorted(set(_column(rows, header)) - payroll)
            if payroll and missing:
                out.append(f"{path}: {header} {missing[0]!r} is not on the payroll")
    return out


def _regions(sheets: dict[str, list[list]], kinds: dict[str, str], mails: dict[str, eml_io.Mail]) -> list[str]:
    regions = {r for path, rows in sheets.items() if kinds[path] == "sales" for r in _column(rows, "Region")}
    out = []
    for path, mail in mails.items():
        for region in _REGION_RE.findall(mail.body):
            if region not in regions:
                out.append(f"{path}: praises the {region} region, which the sales sheet does not have")
    return out


def _budget_lines(sheets: dict[str, list[list]], kinds: dict[str, str], mails: dict[str, eml_io.Mail]) -> list[str]:
    """A budget figure or a supplier's quote in a mail is for a line of the budget sheet."""
    lines = {str(c).lower() for path, rows in sheets.items() if kinds[path] == "budget"
             for c in _column(rows, "Category")}
    out = []
    for path, mail in mails.items():
        for found in _BUDGET_LINE_RE.finditer(mail.body):
            line = found.group(1) or found.group(2)
            if lines and line not in lines:
                out.append(f"{path}: speaks of the {line} budget, which the budget sheet does not have")
    return out


def _invoices(sheets: dict[str, list[list]], kinds: dict[str, str], texts: dict[str, str]) -> list[str]:
    """An invoice bills its purchase order's items, from that order's vendor, due on a weekday after it is issued."""
    orders: dict[str, tuple[str, set[str]]] = {}
    for path, rows in sheets.items():
        if kinds[path] == "purchase_orders":
            for po, vendor, item in zip(_column(rows, "PO"), _column(rows, "Vendor"), _column(rows, "Item")):
                orders.setdefault(po, (vendor, set()))[1].add(item)
                if item not in {name for name, _ in SUPPLIER_CATALOGUE.get(vendor, ())}:
                    out_of_trade = f"{path}: {po} orders {item!r}, which {vendor} does not sell"
                    return [out_of_trade]
    out = []
    for path, text in texts.items():
        if not kinds[path].startswith("invoice"):
            continue
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())}
        vendor, po = fields.get("vendor", ""), fields.get("po reference", "")
        items = [m["item"] for m in map(_ITEM_RE.match, text.splitlines()) if m]
        if po not in orders:
            out.append(f"{path}: quotes {po or 'no'} purchase order, which the order log does not have")
        elif orders[po][0] != vendor:
            out.append(f"{path}: {vendor} bills {po}, an order to {orders[po][0]}")
        elif set(items) != orders[po][1]:
            out.append(f"{path}: bills {sorted(items)}, not the items of {po}")
        try:
            due = date.fromisoformat(fields["due date"])
            if due <= date.fromisoformat(fields["invoice date"]):
                out.append(f"{path}: due {fields['due date']}, not after its date {fields['invoice date']}")
            if due.weekday() >= 5:
                out.append(f"{path}: due {fields['due date']}, a weekend")
        except (KeyError, ValueError):
            out.append(f"{path}: no readable invoice and due dates")
    return out


def _invoice_mail(kinds: dict[str, str], texts: dict[str, str], mails: dict[str, eml_io.Mail]) -> list[str]:
    """A mail about an invoice is written after the invoice's date."""
    issued = {}
    for path, text in texts.items():
        if kinds[path].startswith("invoice"):
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())}
            if fields.get("invoice number") and fields.get("invoice date"):
                issued[fields["invoice number"]] = fields["invoice date"]
    out = []
    for path, mail in mails.items():
        when = mail.when()
        for number, day in issued.items():
            if when is not None and number in mail.subject and _iso_date(day) \
                    and when.date() <= cast(date, _iso_date(day)):
                out.append(f"{path}: asks about {number} on {when:%Y-%m-%d}, before or on its date {day}")
    return out


def _iso_date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _calendars(world: World, events: dict[str, list]) -> list[str]:
    out = []
    monday = world.now.date() - timedelta(days=world.now.weekday())
    first = monday - timedelta(days=7)
    last = first + timedelta(days=7 * CALENDAR_WEEKS - 1)
    for path, items in events.items():
        items = sorted(items, key=lambda e: e.start)
        for a, b in zip(items, items[1:]):
            if b.start < a.end:
                out.append(f"{path}: {a.summary!r} and {b.summary!r} overlap")
        days: defaultdict[date, int] = defaultdict(int)
        for e in items:
            days[e.start.date()] += 1
            if not first <= e.start.date() <= last:
                out.append(f"{path}: {e.summary!r} on {e.start.date()} is outside the calendar's weeks")
        weeks = {(d - first).days // 7 for d in days}
        if len(weeks) < CALENDAR_WEEKS:
            out.append(f"{path}: events in {len(weeks)} of its {CALENDAR_WEEKS} weeks")
    return out


def away_span(body: str, sent: date) -> tuple[date, date, bool] | None:
    """The first and last day a mail sent on ``sent`` says its sender is away, and whether it is
    an out-of-office notice (away from the day it is sent); None when it says no such thing."""
    until, since = _AWAY_UNTIL_RE.search(body), _AWAY_FOR_RE.search(body)
    if until:
        return sent, date.fromisoformat(until.group(1)) - timedelta(days=1), True
    if since:
        first = date.fromisoformat(since.group(1))
        return first, first + timedelta(days=int(since.group(2)) - 1), False
    return None


def _absences(world: World, mails: dict[str, eml_io.Mail], events: dict[str, list]) -> list[str]:
    """A colleague whose mail says they are away writes no mail while away, and their calendar
    holds nothing but the out-of-office blocks on those days."""
    out = []
    users = {p.email: p.user for p in world.people}
    for path, mail in mails.items():
        sent = mail.when()
        if sent is None or mail.subject.startswith(("Re:", "Fwd:")):
            continue
        sent = sent.replace(tzinfo=None)
        span = away_span(mail.body, sent.date())
        if span is None:
            continue
        first, last, notice = span
        if notice:
            later = sorted(p for p, m in mails.items() if m.sender == mail.sender and p != path
                           and (m.when() or sent).replace(tzinfo=None) > sent)
            if later:
                out.append(f"{path}: its sender is away until after {last} but wrote {later[0]} afterwards")
        calendar = f"{get_app('calendar').folder}{users.get(mail.sender, '')}{get_app('calendar').suffix}"
        for event in events.get(calendar, ()):
            if first <= event.start.date() <= last and not event.summary.startswith(OUT_OF_OFFICE):
                out.append(f"{calendar}: {event.summary!r} on {event.start.date()} while {path} says they are away")
    return out

