"""The world check: generated offices hang together, and a world that does not is caught and its
tasks dropped with the reason."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from office_env.formats import eml_io, ics_io, pdf_io, xlsx_io
from office_env.synthesis import documents, make_world, write_workspace
from office_env.synthesis.check import check_world

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    world = make_world(21)
    root = tmp_path_factory.mktemp("world") / "testbed"
    manifest = write_workspace(world, root)
    return world, root, manifest


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """seed -> (world, testbed, manifest): each generated office written once for the module's tests,
    which only read it (a test that changes one changes a copy). ``write_workspace`` raises
    WorldCheckError for an office that does not hang together."""
    offices: dict[int, tuple] = {}

    def office_of(seed: int) -> tuple:
        if seed not in offices:
            world = make_world(seed)
            root = tmp_path_factory.mktemp(f"world{seed}") / "testbed"
            offices[seed] = (world, root, write_workspace(world, root))
        return offices[seed]

    return office_of


def _copy(tmp_path: Path, root: Path) -> Path:
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(root, target)
    return target


def _path(manifest: dict[str, str], kind: str) -> str:
    return next(p for p, k in manifest.items() if k == kind)


@pytest.mark.parametrize("seed", range(12))
def test_generated_worlds_hang_together(written, seed):
    world, root, manifest = written(seed)  # write_workspace raises WorldCheckError otherwise
    assert check_world(world, root, manifest) == []
    assert 30 <= len(manifest) <= 60


def test_a_month_sheet_holding_another_month_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = _path(manifest, "sales_previous")  # always named for its month
    rows = [list(r) for r in xlsx_io.read_book(copy / path, path).sheet(None, path).rows]
    day = datetime.fromisoformat(rows[1][0]) + timedelta(days=40)
    rows[1][0] = day.strftime("%Y-%m-%d")
    (copy / path).write_bytes(xlsx_io.build(rows, "Sales", world.now))
    problems = check_world(world, copy, manifest)
    assert any(path in p and "named for" in p for p in problems), problems


def test_a_sheet_named_for_a_year_holding_another_years_rows_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = _path(manifest, "expenses")
    rows = [list(r) for r in xlsx_io.read_book(copy / path, path).sheet(None, path).rows]
    renamed = f"data/expenses_{world.now.year}.xlsx"
    rows[1][2] = f"{world.now.year - 1}-12-15"  # a December claim in this year's sheet
    (copy / path).unlink()
    (copy / renamed).write_bytes(xlsx_io.build(rows, "Claims", world.now))
    manifest = {(renamed if p == path else p): k for p, k in manifest.items()}
    problems = check_world(world, copy, manifest)
    assert f"{renamed}: named for {world.now.year} but holds rows dated {world.now.year - 1}-12-15" in problems, problems
    rows[1][2] = f"{world.now.year}-01-15"
    (copy / renamed).write_bytes(xlsx_io.build(rows, "Claims", world.now))
    assert not any(renamed in p for p in check_world(world, copy, manifest))


def test_mail_from_a_stranger_and_an_unknown_region_are_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = f"emails/{world.user.user}/Odd.eml"
    (copy / path).write_bytes(eml_io.build("mallory@elsewhere.org", world.user.user, "Odd",
                                           "The Atlantis region had a strong week.", world.now - timedelta(days=1)))
    problems = check_world(world, copy, {**manifest, path: "email"})
    assert any("mallory@elsewhere.org is nobody in the office" in p for p in problems), problems
    assert any("Atlantis region" in p for p in problems), problems


def test_an_invoice_billing_items_its_order_lacks_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = _path(manifest, "invoice")
    text = pdf_io.read_text(copy / path, path)
    lines = [line for line in text.splitlines()]
    first = next(i for i, line in enumerate(lines) if " x " in line and " = " in line)
    lines[first] = "Catering for 200 people - 1 x 99.00 = 99.00"
    (copy / path).write_bytes(pdf_io.build("\n".join(lines), title="Invoice"))
    problems = check_world(world, copy, manifest)
    assert any(path in p and "not the items of" in p for p in problems), problems


def test_an_invoice_due_on_a_weekend_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = _path(manifest, "invoice")
    lines = pdf_io.read_text(copy / path, path).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Due date:"))
    due = date.fromisoformat(lines[at].split(":", 1)[1].strip())
    saturday = due + timedelta(days=(5 - due.weekday()) % 7)
    lines[at] = f"Due date: {saturday:%Y-%m-%d}"
    (copy / path).write_bytes(pdf_io.build("\n".join(lines), title="Invoice"))
    problems = check_world(world, copy, manifest)
    assert problems == [f"{path}: due {saturday:%Y-%m-%d}, a weekend"], problems


def test_overlapping_events_are_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = f"calendar/{world.user.user}.ics"
    events = ics_io.read_events(copy / path, path)
    first = events[0]
    clash = ics_io.CalendarEvent("Clash", first.start, first.end + timedelta(minutes=30), "")
    (copy / path).write_bytes(ics_io.build([*events, clash], world.user.user, world.now))
    problems = check_world(world, copy, manifest)
    assert any(path in p and "overlap" in p for p in problems), problems


def _away_mails(root: Path, manifest: dict[str, str]) -> list[tuple[str, eml_io.Mail]]:
    mails = [(p, eml_io.read(root / p, p)) for p, k in manifest.items() if k == "email"]
    return [(p, m) for p, m in mails if not m.subject.startswith(("Re:", "Fwd:"))
            and ("out of the office until" in m.body or "I am out from" in m.body)]


def test_a_colleague_who_says_they_are_away_has_those_days_blocked_and_writes_nothing_after(written):
    seen = blocked = 0
    for seed in (*range(8), 41, 58):  # 41 and 58 once had one colleague both on holiday and out of office
        world, root, manifest = written(seed)
        users = {p.email: p.user for p in world.people}
        for path, mail in _away_mails(root, manifest):
            seen += 1
            calendar = f"calendar/{users[mail.sender]}.ics"
            assert calendar in manifest, (seed, path)  # their absence is visible where meetings are found
            blocks = {e.start.date(): e for e in ics_io.read_events(root / calendar, calendar)
                      if e.summary.startswith("Out of office")}
            assert all((e.start.hour, e.end.hour) == (9, 17) for e in blocks.values()), (seed, path)
            found = re.search(r"until (\S+?)\.? with|out from (\S+) for (\d+) day", mail.body)
            if found.group(1):
                first, last = mail.when().date(), date.fromisoformat(found.group(1)) - timedelta(days=1)
            else:
                first = date.fromisoformat(found.group(2))
                last = first + timedelta(days=int(found.group(3)) - 1)
            monday = world.now.date() - timedelta(days=world.now.weekday() + 7)
            days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
            days = [d for d in days if d.weekday() < 5 and 0 <= (d - monday).days < 21]
            assert set(days) <= set(blocks), (seed, path)
            blocked += bool(days)
            if "out of the office until" in mail.body:  # the notice is the last thing they sent
                assert all(m.when() <= mail.when() for p, m in ((p, eml_io.read(root / p, p)) for p, k in
                                                                   manifest.items() if k == "email")
                           if m.sender == mail.sender), (seed, path)
    assert seen >= 4 and blocked >= 2


def test_each_absence_in_an_inbox_is_another_colleague_s(written):
    """A cover note needs two colleagues away; one colleague sent both a holiday and an
    out-of-office mail in some offices (seeds 41 and 58)."""
    for seed in (*range(6), 41, 58):
        world, root, manifest = written(seed)
        senders = [mail.sender for _, mail in _away_mails(root, manifest)]
        assert len(senders) >= 2 and len(set(senders)) == len(senders), (seed, senders)


def _blocked(world, root: Path, manifest: dict[str, str]):
    """An away mail of ``world`` whose sender's calendar blocks some of those days (an absence may
    also start after the calendar's weeks): (path, mail, user, calendar, events, block), else None."""
    for path, mail in _away_mails(root, manifest):
        user = next(p.user for p in world.people if p.email == mail.sender)
        calendar = f"calendar/{user}.ics"
        if calendar in manifest:
            events = ics_io.read_events(root / calendar, calendar)
            block = next((e for e in events if e.summary.startswith("Out of office")), None)
            if block is not None:
                return path, mail, user, calendar, events, block
    return None


def test_mail_or_a_meeting_from_someone_away_is_caught(tmp_path, written):
    world, written_root, manifest, found = next((world, root, manifest, found) for world, root, manifest in
                                                map(written, range(40)) for found in [_blocked(world, root, manifest)]
                                                if found)
    root = _copy(tmp_path, written_root)
    path, mail, user, calendar, events, block = found
    kept = [e for e in events if e is not block]
    meeting = ics_io.CalendarEvent("Supplier call", block.start.replace(hour=10), block.start.replace(hour=11), "")
    (root / calendar).write_bytes(ics_io.build([*kept, meeting], user, world.now))
    late = f"emails/{world.user.user}/Late.eml"
    (root / late).write_bytes(eml_io.build(user, world.user.user, "One more thing", "Hi,\n\nOne more thing.",
                                           world.now - timedelta(minutes=1)))
    problems = check_world(world, root, {**manifest, late: "email"})
    assert any(calendar in p and "'Supplier call'" in p and "away" in p for p in problems), problems
    if "out of the office until" in mail.body:
        assert any(path in p and "Late.eml" in p for p in problems), problems


def test_a_build_drops_the_tasks_of_a_world_that_fails_the_check(tmp_path, monkeypatch):
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    real = documents.check_world

    def strict(world, root, manifest):  # the real check, plus one rule this world breaks
        return [*real(world, root, manifest), "data/x.xlsx: a rule this test adds"]

    monkeypatch.setattr(documents, "check_world", strict)
    out = tmp_path / "ds"
    summary = build(out, 2, BuildConfig(seed=5), workers=1)
    assert summary.accepted == 0
    attempts = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert attempts and all(a["reason"].startswith("world check: world ") for a in attempts), \
        sorted({a["reason"][:200] for a in attempts})
    assert "a rule this test adds" in attempts[0]["reason"]


def test_a_budget_figure_for_work_the_budget_sheet_lacks_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    path = f"emails/{world.user.user}/Odd budget.eml"
    colleague = world.colleagues[0].user
    (copy / path).write_bytes(eml_io.build(colleague, world.user.user, "Odd budget",
                                           "The Q1 budget for moon landings came in at 900 USD.",
                                           world.now - timedelta(days=1)))
    problems = check_world(world, copy, {**manifest, path: "email"})
    assert any(path in p and "moon landings budget" in p for p in problems), problems


def test_a_mail_about_an_invoice_written_before_its_date_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    invoice = next(p for p, k in manifest.items() if k == "invoice")
    text = pdf_io.read_text(root / invoice, invoice)
    number = re.search(r"Invoice number: (\S+)", text).group(1)
    issued = date.fromisoformat(re.search(r"Invoice date: (\S+)", text).group(1))
    path = f"emails/{world.user.user}/Early question.eml"
    (copy / path).write_bytes(eml_io.build(world.colleagues[0].user, world.user.user, f"Invoice {number}",
                                           "Can you confirm the total?", datetime.combine(issued, datetime.min.time())
                                           - timedelta(days=1) + timedelta(hours=10)))
    problems = check_world(world, copy, {**manifest, path: "email"})
    assert [p for p in problems if p.startswith(path)] == [
        f"{path}: asks about {number} on {issued - timedelta(days=1)}, before or on its date {issued}"]


def test_a_team_lead_from_another_team_is_caught(tmp_path, office):
    world, root, manifest = office
    copy = _copy(tmp_path, root)
    outsider = next(p for p in world.colleagues if p.department != world.team)
    path = "data/team_notes.pdf"
    (copy / path).write_bytes(pdf_io.build(f"Team notes\nThe {world.team} team lead is {outsider.name}.", stamp=world.now))
    problems = check_world(world, copy, {**manifest, path: "report"})
    assert [p for p in problems if p.startswith(path)] == [
        f"{path}: {outsider.name} leads the {world.team} team, but works in {outsider.department}"]
    assert not [p for p in check_world(world, root, manifest) if "leads the" in p]


def test_dates_in_mail_and_notes_fall_on_working_days(written):
    """A room booked for a Sunday, a leave starting on a Saturday, an out-of-office ending on one, a
    draft's milestone on a Saturday: all seen in generated offices before."""
    from office_env.formats import docx_io

    for seed in range(6):
        world, root, manifest = written(seed)
        for path, kind in manifest.items():
            if kind == "email":
                mail = eml_io.read(root / path, path)
                text = mail.body.split("\n>")[0]  # its own words, not a quoted earlier mail
            elif kind.startswith("meeting_notes"):
                text = docx_io.read_text(root / path, path)
            else:
                continue
            for found in re.findall(r"\d{4}-\d{2}-\d{2}", text):
                day = date.fromisoformat(found)
                if day > world.now.date() or kind.startswith("meeting_notes"):
                    assert day.weekday() < 5, (seed, path, found)
