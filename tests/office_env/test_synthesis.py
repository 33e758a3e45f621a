"""Seeded office worlds and the testbeds written from them: determinism, content, readability."""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
import sys
from datetime import date, datetime, time as clock, timedelta
from email import policy
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from pathlib import Path

import openpyxl
import pytest

from office_env import Snapshot, Workspace, default_registry, evaluate_criteria
from office_env.formats import ics_io
from office_env.synthesis import KINDS, Person, World, make_world, write_workspace
from office_env.synthesis import world as world_module
from office_env.synthesis.documents import build_files as _build_files

pytestmark = pytest.mark.slow


@functools.lru_cache(maxsize=None)
def world_files(seed: int) -> tuple:
    """The files of ``make_world(seed)``, made once for the tests that read many worlds (the writers
    are the slow part)."""
    return tuple(_build_files(make_world(seed)))

SEEDS = (0, 1, 7, 42, 2024)
SHEET_HEADERS = {
    "salaries": ["Name", "Department", "Title", "Salary"],
    "budget": ["Category", "Q1", "Q2", "Q3", "Q4"],
    "inventory": ["Item", "SKU", "Quantity", "Unit Price"],
    "sales": ["Date", "Region", "Product", "Units", "Revenue"],
    "scores": ["Name", "Module 1", "Module 2", "Final"],
    "expenses": ["Claim", "Employee", "Date", "Category", "Amount", "Status"],
    "purchase_orders": ["PO", "Date", "Vendor", "Item", "Quantity", "Unit Price", "Amount", "Status"],
}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[int, tuple[World, Path, dict[str, str]]]:
    """A few worlds written once for the read-only checks of this module."""
    out = {}
    for seed in SEEDS:
        world = make_world(seed)
        root = tmp_path_factory.mktemp(f"world{seed}") / "testbed"
        out[seed] = (world, root, write_workspace(world, root))
    return out


def _by_kind(manifest: dict[str, str], kind: str) -> list[str]:
    return sorted(path for path, k in manifest.items() if k == kind)


# -- worlds ------------------------------------------------------------------------------------

def test_name_banks_are_large_unique_and_latin1():
    banks = {
        "FIRST_NAMES": (world_module.FIRST_NAMES, 60), "LAST_NAMES": (world_module.LAST_NAMES, 60),
        "ROLES": (world_module.ROLES, 20), "COMPANIES": (world_module.COMPANIES, 30),
        "PROJECTS": (world_module.PROJECTS, 40), "CITIES": (world_module.CITIES, 20),
    }
    for label, (bank, minimum) in banks.items():
        assert isinstance(bank, tuple), label
        assert len(bank) >= minimum, label
        assert len(set(bank)) == len(bank), f"{label} has repeats"
        for entry in bank:
            entry.encode("ascii")  # plain ASCII survives the PDF core fonts
    assert len({n.lower() for n in world_module.FIRST_NAMES}) == len(world_module.FIRST_NAMES)


def test_make_world_shape_over_many_seeds():
    first_day, last_day = date(2024, 1, 8), date(2025, 6, 27)
    allowed_times = {clock(9, 0), clock(9, 15), clock(9, 30), clock(9, 45), clock(10, 0), clock(10, 15), clock(10, 30)}
    seen_times, seen_sizes = set(), set()
    for seed in range(300):
        world = make_world(seed)
        assert 5 <= len(world.colleagues) <= 8
        assert 3 <= len(world.projects) <= 5 and len(set(world.projects)) == len(world.projects)
        assert world.people[0] == world.user and world.people[1:] == world.colleagues
        users = [p.user for p in world.people]
        assert len(set(users)) == len(users)
        for person in world.people:
            assert person.user == person.first.lower()
            assert person.name == f"{person.first} {person.last}"
            assert person.email == f"{person.user}@example.com"
            assert person.role in world_module.ROLES
        assert first_day <= world.now.date() <= last_day
        assert world.now.weekday() < 5
        assert world.now.time() in allowed_times and world.now.second == 0
        assert world.company in world_module.COMPANIES and world.city in world_module.CITIES
        assert world.team == world.user.department
        seen_times.add(world.now.time())
        seen_sizes.add(len(world.colleagues))
    assert seen_times == allowed_times  # every quarter hour of the window is reachable
    assert seen_sizes == {5, 6, 7, 8}


def test_make_world_is_deterministic_and_seed_sensitive():
    assert make_world(99) == make_world(99)
    assert make_world(99).to_dict() == make_world(99).to_dict()
    dumps = {json.dumps(make_world(seed).to_dict(), sort_keys=True) for seed in range(200)}
    assert len(dumps) == 200


def test_make_world_leaves_the_global_random_alone():
    random.seed(12345)
    state = random.getstate()
    make_world(3)
    make_world(4)
    assert random.getstate() == state


def test_world_to_dict_is_json_and_round_trips_people():
    world = make_world(8)
    data = json.loads(json.dumps(world.to_dict()))
    assert data["seed"] == 8
    assert datetime.fromisoformat(data["now"]) == world.now
    assert data["user"]["email"] == world.user.email
    rebuilt = [Person(p["first"], p["last"], p["user"], p["role"]) for p in data["colleagues"]]
    assert tuple(rebuilt) == world.colleagues
    assert data["projects"] == list(world.projects)
    assert world.person(world.colleagues[0].user) == world.colleagues[0]
    with pytest.raises(KeyError):
        world.person("nobody")


def test_make_world_refuses_non_integer_seeds():
    with pytest.raises(TypeError):
        make_world("7")  # type: ignore[arg-type]


# -- testbeds ----------------------------------------------------------------------------------

def test_same_seed_gives_identical_bytes_and_other_seeds_differ(tmp_path):
    first = write_workspace(make_world(5), tmp_path / "a")
    second = write_workspace(make_world(5), tmp_path / "b")
    other = write_workspace(make_world(6), tmp_path / "c")
    assert first == second
    snap_a, snap_b, snap_c = (Snapshot.of(tmp_path / name) for name in "abc")
    assert snap_a.files == snap_b.files
    assert set(snap_a.files) == set(first)  # the manifest names every file written
    assert snap_a.files != snap_c.files and set(other) == set(snap_c.files)
    shared = set(snap_a.files) & set(snap_c.files)
    assert all(snap_a.files[p] != snap_c.files[p] for p in shared)


def test_bytes_do_not_depend_on_the_process(tmp_path):
    """Another interpreter with another hash seed writes the same bytes."""
    write_workspace(make_world(31), tmp_path / "here")
    script = (
        "import sys; from pathlib import Path; from office_env.synthesis import make_world, write_workspace; "
        "write_workspace(make_world(31), Path(sys.argv[1]))"
    )
    env = dict(os.environ, PYTHONHASHSEED="987")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "there")], check=True, env=env, timeout=60)
    assert Snapshot.of(tmp_path / "here").files == Snapshot.of(tmp_path / "there").files


def test_file_names_vary_with_the_seed(monkeypatch):
    from office_env.synthesis import documents
    for module in (documents.docx_io, documents.xlsx_io, documents.pdf_io):  # names only: skip the slow bytes
        monkeypatch.setattr(module, "build", lambda *args, **kwargs: b"")
    names: dict[str, set[str]] = {}
    for seed in range(40):
        for path, kind, _ in documents.build_files(make_world(seed)):
            if kind not in ("email", "calendar"):
                names.setdefault(kind, set()).add(path)
    assert set(names) == set(KINDS) - {"email", "calendar"}
    for kind, seen in names.items():
        if kind != "handbook":
            assert len(seen) >= 3, f"{kind}: always named {seen}"
    assert len(names["handbook"]) >= 2


def test_every_kind_is_present_in_the_layout(written):
    for seed, (world, root, manifest) in written.items():
        assert set(manifest.values()) == set(KINDS), seed
        for path in manifest:
            assert (root / path).is_file()
            assert path.split("/")[0] in ("data", "emails", "calendar")
        for kind in ("salaries", "budget", "inventory", "sales", "scores", "meeting_notes", "report",
                     "invoice", "handbook"):
            (path,) = _by_kind(manifest, kind)
            assert path.startswith("data/")
        assert all(p.startswith(f"emails/{world.user.user}/") and p.endswith(".eml") for p in _by_kind(manifest, "email"))
        assert f"calendar/{world.user.user}.ics" in manifest


def test_invoices_and_agreements_name_the_user_not_a_colleague_a_task_may_write_to(written):
    """An invoice's "Attention:" line or an agreement's client contact naming a colleague told an agent
    whom to send the figures to without the chat: they name the office's own reader, the user."""
    registry = default_registry().read_only()
    seen = 0
    for world, root, manifest in written.values():
        ws = Workspace(root, now=world.now)
        for path in _by_kind(manifest, "invoice") + _by_kind(manifest, "contract"):
            text = registry.call(ws, "pdf_read_file", {"file_path": path}).observation
            named = re.findall(r"(?:Attention|Client contact): ([A-Z][a-z]+ [A-Z][a-z]+)", text)
            assert named and set(named) == {world.user.name}, (path, named)
            seen += len(named)
    assert seen >= 2 * len(written)


def test_every_file_reads_through_the_tools(written):
    registry = default_registry().read_only()
    tool_for = {".xlsx": "excel_read_file", ".docx": "word_read_file", ".pdf": "pdf_read_file"}
    for world, root, manifest in written.values():
        ws = Workspace(root, now=world.now)
        for path in manifest:
            suffix = Path(path).suffix
            if suffix in tool_for:
                result = registry.call(ws, tool_for[suffix], {"file_path": path})
            elif suffix == ".eml":
                result = registry.call(ws, "email_read_email", {"user": path.split("/")[1], "email_id": Path(path).name})
            else:
                result = registry.call(ws, "calendar_list_events", {"user": Path(path).stem})
            assert result.ok, (path, result.observation)
        listing = registry.call(ws, "email_list_emails", {"user": world.user.user})
        assert "unreadable" not in listing.observation


def test_sheets_have_headers_real_numbers_and_row_counts(written):
    row_ranges = {"salaries": (30, 60), "sales": (40, 90), "budget": (7, 11), "inventory": (30, 42), "scores": (25, 45),
                  "expenses": (30, 60), "purchase_orders": (14, 66)}
    numeric_columns = {"salaries": [3], "budget": [1, 2, 3, 4], "inventory": [2, 3], "sales": [3, 4], "scores": [1, 2, 3],
                       "expenses": [4], "purchase_orders": [4, 5, 6]}
    for world, root, manifest in written.values():
        for kind, headers in SHEET_HEADERS.items():
            (path,) = _by_kind(manifest, kind)
            rows = list(openpyxl.load_workbook(root / path).active.iter_rows(values_only=True))
            assert list(rows[0]) == headers, path
            low, high = row_ranges[kind]
            assert low <= len(rows) - 1 <= high, (path, len(rows) - 1)
            for row in rows[1:]:
                assert all(value is not None for value in row), (path, row)
                for col in numeric_columns[kind]:
                    assert isinstance(row[col], (int, float)) and not isinstance(row[col], bool), (path, row)
                    assert row[col] >= 0


def test_salary_sheet_lists_the_world_and_extra_employees(written):
    for world, root, manifest in written.values():
        (path,) = _by_kind(manifest, "salaries")
        rows = list(openpyxl.load_workbook(root / path).active.iter_rows(values_only=True))[1:]
        names = [row[0] for row in rows]
        assert len(set(names)) == len(names)
        assert {p.name for p in world.people} <= set(names)
        assert len(names) > len(world.people)  # invented employees too
        titles = {row[0]: row[2] for row in rows}
        assert all(titles[p.name] == p.role for p in world.people)
        assert all(row[3] % 500 == 0 and 40000 <= row[3] <= 150000 for row in rows)


def test_sales_revenue_is_units_times_one_price_per_product(written):
    for world, root, manifest in written.values():
        (path,) = _by_kind(manifest, "sales")
        rows = list(openpyxl.load_workbook(root / path).active.iter_rows(values_only=True))[1:]
        prices: dict[str, float] = {}
        dates = [row[0] for row in rows]
        assert dates == sorted(dates)
        for day, _region, product, units, revenue in rows:
            assert date.fromisoformat(day) < world.now.date()
            price = prices.setdefault(product, revenue / units)
            assert revenue == pytest.approx(units * price)


def test_documents_carry_world_facts_dated_before_now(written):
    registry = default_registry().read_only()
    for world, root, manifest in written.values():
        ws = Workspace(root, now=world.now)
        (notes,) = _by_kind(manifest, "meeting_notes")
        text = registry.call(ws, "word_read_file", {"file_path": notes}).observation
        lines = [line for line in text.splitlines()[1:] if line.strip()]
        assert any(project in lines[0] for project in world.projects)
        day = date.fromisoformat(re.search(r"Date: (\d{4}-\d{2}-\d{2})", text).group(1))
        assert day < world.now.date()
        assert world.user.name in text
        assert 5 <= sum(1 for line in lines if line.startswith("- ")) <= 9
        (draft,) = _by_kind(manifest, "meeting_notes_old")  # the near miss beside it: an earlier draft
        assert draft == notes.replace(".docx", "_old.docx")
        draft_text = registry.call(ws, "word_read_file", {"file_path": draft}).observation
        assert "Draft" in draft_text and draft_text != text

        (report,) = _by_kind(manifest, "report")
        paragraphs = [line for line in registry.call(ws, "word_read_file", {"file_path": report}).observation.splitlines()[2:] if line]
        assert 6 <= len(paragraphs) <= 10

        (invoice,) = _by_kind(manifest, "invoice")
        text = registry.call(ws, "pdf_read_file", {"file_path": invoice}).observation
        assert re.search(r"Invoice number: INV-\d{4}-\d{4}", text)
        issued = date.fromisoformat(re.search(r"Invoice date: (\S+)", text).group(1))
        assert issued < world.now.date()
        items = [float(m.replace(",", "")) for m in re.findall(r" = ([\d,]+\.\d\d)", text)]
        subtotal = float(re.search(r"Subtotal: ([\d,.]+)", text).group(1).replace(",", ""))
        tax = float(re.search(r"Tax \(\d+%\): ([\d,.]+)", text).group(1).replace(",", ""))
        total = float(re.search(r"Total due: ([\d,.]+)", text).group(1).replace(",", ""))
        assert 1 <= len(items) <= 3
        assert subtotal == pytest.approx(sum(items)) and total == pytest.approx(subtotal + tax)
        assert "Terms and conditions" in text and "Status: paid" not in text
        (paid,) = _by_kind(manifest, "invoice_paid")
        assert "Status: paid on" in registry.call(ws, "pdf_read_file", {"file_path": paid}).observation

        (handbook,) = _by_kind(manifest, "handbook")
        lines = [line for line in registry.call(ws, "pdf_read_file", {"file_path": handbook}).observation.splitlines()[1:] if line.strip()]
        assert 30 <= len(lines) <= 90
        assert world.company in lines[0]


def test_every_city_has_a_currency_and_an_office_quotes_money_only_in_its_own(written):
    from office_env.money import CURRENCY_CODES

    assert set(world_module.CITIES) == set(world_module.CURRENCY_OF_CITY)
    assert set(world_module.CURRENCY_OF_CITY.values()) <= set(CURRENCY_CODES)
    registry = default_registry().read_only()
    assert len({world.currency for world, _, _ in written.values()}) >= 2  # the seeds cover several currencies
    for world, root, manifest in written.values():
        ws = Workspace(root, now=world.now)
        codes = set()
        for path, kind in manifest.items():
            if path.endswith((".pdf", ".docx")):
                tool = "pdf_read_file" if path.endswith(".pdf") else "word_read_file"
                text = registry.call(ws, tool, {"file_path": path}).observation
            elif kind == "email":
                text = (root / path).read_text(encoding="utf-8", errors="replace")
            else:
                continue
            codes |= set(re.findall(r"\d (" + "|".join(CURRENCY_CODES) + r")\b", text))
        assert codes == {world.currency}, (world.city, codes)


def test_inbox_messages_come_from_colleagues_with_threads(written):
    for world, root, manifest in written.values():
        paths = _by_kind(manifest, "email")
        assert 15 <= len(paths) <= 40
        colleagues = {p.email for p in world.colleagues}
        subjects, copied = [], 0
        for path in paths:
            message = BytesParser(policy=policy.default).parsebytes((root / path).read_bytes())
            assert message["From"] in colleagues
            assert message["To"] == world.user.email
            copied += bool(message["Cc"])
            assert all(a.strip() in colleagues for a in str(message["Cc"] or "").split(",") if a.strip())
            when = parsedate_to_datetime(message["Date"]).replace(tzinfo=None)
            assert world.now - timedelta(days=14) <= when < world.now, (path, when)
            subjects.append(str(message["Subject"]))
            assert message.get_content().strip()
        replies = [s for s in subjects if s.startswith("Re: ")]
        assert len(replies) >= 2, "no threads in the inbox"
        assert all(reply[4:] in subjects for reply in replies)
        assert copied, "nobody is ever copied"
        assert len({p.lower() for p in paths}) == len(paths)


def test_the_invoice_mail_asks_what_only_the_invoice_answers(written):
    """Finance's mail names the invoice and the order amount it booked; the total due and the due
    date are the PDF's to give (a mail quoting them made the invoice a file nobody needs to open)."""
    registry = default_registry().read_only()
    for world, root, manifest in written.values():
        ws = Workspace(root, now=world.now)
        invoice = _by_kind(manifest, "invoice")[0]
        text = registry.call(ws, "pdf_read_file", {"file_path": invoice}).observation
        number = re.search(r"Invoice number: (\S+)", text).group(1)
        total = re.search(r"Total due: ([\d,.]+)", text).group(1)
        due = re.search(r"Due date: (\S+)", text).group(1)
        po = re.search(r"PO reference: (\S+)", text).group(1)
        mails = [BytesParser(policy=policy.default).parsebytes((root / path).read_bytes())
                 for path in manifest if path.endswith(".eml")]
        asking = [m.get_body(("plain",)).get_content() for m in mails if str(m["Subject"]) == f"Invoice {number}"]
        assert asking, invoice
        for body in asking:
            assert invoice.rsplit("/", 1)[-1] in body and po in body
            assert total not in body and due not in body, body


def test_inbox_dates_and_threads_over_many_seeds():
    from office_env.synthesis import documents
    seen_forward = False
    for seed in range(300, 380):
        world = make_world(seed)
        mails = documents.emails(world, documents.kind_rng(world, "email"), {})
        assert 15 <= len(mails) <= 40, seed
        subjects = []
        on_thread: dict[str, set[str]] = {}  # a first mail's subject -> who sent it or was copied
        replies = []
        for path, _kind, data in mails:
            message = BytesParser(policy=policy.default).parsebytes(data)
            when = parsedate_to_datetime(message["Date"]).replace(tzinfo=None)
            assert world.now - timedelta(days=14) <= when < world.now, (seed, path, when)
            subjects.append(str(message["Subject"]))
            people = {a.username for a in message["From"].addresses}
            people |= {a.username for a in message["Cc"].addresses} if message["Cc"] else set()
            if str(message["Subject"]).startswith("Re: "):
                replies.append((str(message["Subject"])[4:], message["From"].addresses[0].username, people))
            else:
                on_thread[str(message["Subject"])] = people
        for subject, replier, people in replies:  # a reply comes from someone the thread reached, to all of it
            assert replier in on_thread[subject], (seed, subject, replier)
            assert on_thread[subject] <= people | {world.user.user}, (seed, subject)
        assert any(s.startswith("Re: ") and s[4:] in subjects for s in subjects), seed
        forwards = [s for s in subjects if s.startswith("Fwd: ")]
        assert all(s[5:] in subjects for s in forwards), seed
        seen_forward = seen_forward or bool(forwards)
    assert seen_forward, "no inbox holds a forwarded message"


def test_calendars_fill_the_week_without_overlaps(written):
    for world, root, manifest in written.values():
        calendars = _by_kind(manifest, "calendar")
        owners = [Path(p).stem for p in calendars]
        assert world.user.user in owners and 3 <= len(owners) <= 4
        assert set(owners) <= {p.user for p in world.people}
        monday = world.now.date() - timedelta(days=world.now.weekday())
        busy_by_owner = {}
        for path in calendars:
            events = ics_io.read_events(root / path, path)
            assert 9 <= len(events) <= 40, path
            assert len({e.summary for e in events}) == len(events)
            weeks = {(e.start.date() - (monday - timedelta(days=7))).days // 7 for e in events}
            assert weeks == {0, 1, 2}, (path, weeks)  # the week before now, its week, the week after
            for event in events:
                assert event.start.weekday() < 5
                assert event.start.date() == event.end.date()
                assert event.start.hour >= 9 and (event.end.hour, event.end.minute) <= (17, 0)
                assert event.end > event.start
            busy_by_owner[Path(path).stem] = events
        ws = Workspace(root, now=world.now)
        criteria = [{"function": "evaluate_calendar_no_overlap", "args": {"username": owner}} for owner in owners]
        report = evaluate_criteria(ws, criteria)
        assert report.passed, [r.reason for r in report.results]
        # The user shares at least one meeting with each colleague who has a calendar (and is not away).
        mine = {(e.summary, e.start) for e in busy_by_owner[world.user.user]}
        for owner in owners:
            if owner != world.user.user and not any(e.summary.startswith("Out of office") for e in busy_by_owner[owner]):
                assert mine & {(e.summary, e.start) for e in busy_by_owner[owner]}, owner


def test_calendar_events_never_overlap_over_many_seeds():
    from office_env.calendar_store import overlaps
    from office_env.synthesis import documents
    for seed in range(100, 160):
        world = make_world(seed)
        for path, _kind, data in documents.calendars(world, documents.kind_rng(world, "calendar")):
            events = ics_io.events_of(ics_io.icalendar.Calendar.from_ical(data), path)
            assert not overlaps(events), (seed, path)
            assert 9 <= len(events) <= 40, (seed, path, len(events))


def test_write_workspace_refuses_a_folder_with_files(tmp_path):
    root = tmp_path / "testbed"
    (root / "data").mkdir(parents=True)
    (root / "data" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        write_workspace(make_world(1), root)
    assert (root / "data" / "keep.txt").read_text() == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert write_workspace(make_world(1), empty)


def test_no_mail_or_event_says_a_word_twice_in_a_row():
    """A project's name ending in a word its template adds ("the Fjord Supplier Review review")."""
    import re


    doubled = re.compile(r"\b([A-Za-z]+) \1\b", re.IGNORECASE)
    for seed in range(40):
        for path, _kind, data in world_files(seed):
            if path.endswith((".eml", ".ics")):
                found = doubled.search(data.decode("utf-8", "replace"))
                assert found is None, (seed, path, found.group(0))


def test_a_second_quote_follows_the_first_and_every_reply_its_mail():
    from email.utils import parsedate_to_datetime

    from office_env.synthesis import documents

    seconds = 0
    for seed in range(120):
        world = make_world(seed)
        sent: dict[str, list] = {}
        for _path, _kind, data in documents.emails(world, documents.kind_rng(world, "email"), {}):
            message = BytesParser(policy=policy.default).parsebytes(data)
            sent.setdefault(str(message["Subject"]), []).append(parsedate_to_datetime(message["Date"]))
        for subject, times in sent.items():
            if subject.startswith("Re: ") and subject[4:] in sent:
                assert min(times) > min(sent[subject[4:]]), (seed, subject)
            if subject.startswith("Second quote"):
                seconds += 1
                assert "Vendor meeting follow-up" in sent, seed  # no second quote without a first
                assert min(times) > min(sent["Vendor meeting follow-up"]), seed
    assert seconds >= 20


def test_nobody_is_away_on_a_day_they_are_busy_elsewhere_in_the_office():
    """A holiday or an out-of-office notice never covers a date its person names in their own mail,
    nor the sync whose notes list them, nor the next meeting those notes fix."""
    import io
    import re

    from docx import Document

    from office_env.synthesis.check import away_span

    iso = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
    spans = 0
    for seed in range(60):
        world = make_world(seed)
        mails, attendees, sync_days = [], set(), set()
        for _path, kind, data in world_files(seed):
            if kind == "email":
                message = BytesParser(policy=policy.default).parsebytes(data)
                mails.append((str(message["From"]), str(message["Subject"]), message.get_content(),
                              parsedate_to_datetime(message["Date"]).date()))
            elif kind == "meeting_notes":
                text = "\n".join(p.text for p in Document(io.BytesIO(data)).paragraphs)
                attendees = {name.strip() for name in re.search(r"Attendees: (.*)", text).group(1).split(",")}
                sync_days = {date.fromisoformat(d) for d in re.findall(r"(?:Date:|Next meeting on) (\d{4}-\d{2}-\d{2})", text)}
        leave = {(sender, body) for sender, subject, body, sent in mails
                 if not subject.startswith(("Re:", "Fwd:")) and away_span(body, sent)}
        for sender, body in leave:
            sent = next(d for s, _, b, d in mails if (s, b) == (sender, body))
            first, last, _ = away_span(body, sent)
            spans += 1
            person = next(p for p in world.people if p.email in sender)
            named = {date.fromisoformat(d) for s, subject, b, _ in mails
                     if s == sender and (s, b) not in leave and not subject.startswith("Fwd:")
                     for d in iso.findall(b.split("\n\nOn ")[0])}
            if person.name in attendees:
                named |= sync_days
            assert not any(first <= d <= last for d in named), (seed, body[:80])
    assert spans >= 100


def test_the_handbook_names_a_lead_of_the_team_with_a_lead_s_title_and_finance_for_payroll():
    import io
    import re

    from pypdf import PdfReader

    from office_env.synthesis.world import department_of

    titles = ("Manager", "Lead", "Supervisor", "Controller")
    seen = 0
    for seed in range(20):
        world = make_world(seed)
        by_name = {p.name: p for p in world.people}
        handbook = next(data for _path, kind, data in world_files(seed) if kind == "handbook")
        text = " ".join(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(handbook)).pages).split())
        lead = re.search(r"team lead is ([A-Z][a-z]+ [A-Z][a-z]+)", text)
        payroll = re.search(r"Payroll questions go to ([A-Z][a-z]+ [A-Z][a-z]+)", text)
        team = [p for p in world.people if p.department == world.team]
        # of the team ("the Sales team lead" was a Facilities Supervisor) and titled as one ("the
        # Product team lead" was a UX Designer); a team with no such title is not said to have a lead
        has_lead = any(any(w in p.role for w in titles) for p in team)
        assert bool(lead) == has_lead or "The " + world.team + " team" not in text, seed
        if lead:
            seen += 1
            assert by_name[lead.group(1)].department == world.team, seed
            assert any(w in by_name[lead.group(1)].role for w in titles), seed
        contact = re.search(r"Questions about this guide go to ([A-Z][a-z]+ [A-Z][a-z]+), ([A-Za-z ]+)\.", text)
        person = by_name[contact.group(1)]
        assert contact.group(2) == person.role, seed
        assert any(w in person.role for w in titles) or department_of(person.role) == "Human Resources" \
            or not any(any(w in p.role for w in titles) or department_of(p.role) == "Human Resources"
                       for p in world.colleagues), seed
        if payroll and any(department_of(p.role) in ("Finance", "Human Resources") for p in world.colleagues):
            seen += 1
            assert department_of(by_name[payroll.group(1)].role) in ("Finance", "Human Resources"), seed
    assert seen >= 5


def test_remembered_day_lists_are_those_made_afresh():
    """The start times a calendar's placements shuffle and the weekdays a paper's date is drawn from
    are remembered per world: each equals the list made afresh for every input it depends on (a
    key that missed one, asked in turn for lists that differ only there, would answer stale)."""
    from office_env.synthesis.calendars import _starts
    from office_env.synthesis.common import _weekdays_back

    rng = random.Random(3)
    for _ in range(300):
        monday = date(2024, 1, 1) + timedelta(days=7 * rng.randint(0, 60))
        args = (monday, rng.randint(1, 3), rng.choice((30, 60, 90, 120)), rng.choice((None, 0, 1, 2)))
        assert _starts(*args) == _starts.__wrapped__(*args)
        today = date(2024, 1, 1) + timedelta(days=rng.randint(0, 400))
        low = rng.randint(0, 20)
        span = (today, low, low + rng.randint(0, 30))
        assert _weekdays_back(*span) == _weekdays_back.__wrapped__(*span)
        assert all(day.weekday() < 5 for day in _weekdays_back(*span))
