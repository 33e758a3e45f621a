"""Write a seeded world's testbed: spreadsheets, Word and PDF documents, a mailbox, calendars.

``write_workspace(world, root)`` lays out ``root`` in the OfficeBench shape (``data/``,
``emails/<user>/``, ``calendar/<user>.ics``) using only the project's own writers, each
stamped with ``world.now``, so one seed always gives the same bytes. Every document kind
draws from its own generator (``Random("<seed>:<kind>")``): changing one kind's content never
shifts another's.

All content is dated before ``world.now`` except calendar events, which fill the working week
around it. Sheets start with a header row and hold real numbers (int or float), never
numeric strings.

Each kind is built by its own module: ``sheets`` (salaries, budget, inventory, sales, scores,
expenses), ``papers`` (notes, reports, purchase orders, invoices, contracts, the handbook),
``mail`` and ``calendars``; ``common`` holds what they share. This module assembles and writes.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

from office_env.apps import get_app, load, registered_apps
from office_env.formats import docx_io, pdf_io, xlsx_io  # noqa: F401 - the writers every kind uses
from office_env.synthesis.calendars import calendars
from office_env.synthesis.check import WorldCheckError, check_world
from office_env.synthesis.common import Away, Facts, Files, kind_rng
from office_env.synthesis.mail import emails
from office_env.synthesis.papers import contract, handbook, invoice, meeting_notes, purchase_orders, report
from office_env.synthesis.sheets import budget, expenses, inventory, salaries, sales, scores
from office_env.synthesis.world import World

_SHEETS_AND_DOCS: tuple[tuple[str, Callable[[World, random.Random, Facts], Files]], ...] = (
    ("salaries", salaries), ("budget", budget), ("inventory", inventory), ("sales", sales),
    ("scores", scores), ("expenses", expenses), ("purchase_orders", purchase_orders),
    ("meeting_notes", meeting_notes), ("report", report), ("invoice", invoice), ("contract", contract),
    ("handbook", handbook),
)


def build_files(world: World) -> Files:
    """Every file of the world's testbed as ``(path, kind, bytes)``, in writing order."""
    files: Files = []
    facts: Facts = {}
    for kind, maker in _SHEETS_AND_DOCS:
        made = maker(world, kind_rng(world, kind), facts)
        files.extend(made)
        facts[kind] = made[0][0].rsplit("/", 1)[-1]
    away: Away = {}
    files.extend(emails(world, kind_rng(world, "email"), facts, away))
    files.extend(calendars(world, kind_rng(world, "calendar"), away))
    for app in registered_apps():  # an app's own files, from the maker its registry entry names
        if app.synthesis:
            files.extend(load(app.synthesis)(world, kind_rng(world, app.name)))
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
    for folder in ("data", f"{get_app('email').folder}{world.user.user}", get_app("calendar").folder):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for path, kind, data in build_files(world):
        (root / path).write_bytes(data)
        manifest[path] = kind
    problems = check_world(world, root, manifest)
    if problems:
        raise WorldCheckError(f"world {world.seed}: {len(problems)} problem(s): " + "; ".join(problems[:5]))
    return manifest
