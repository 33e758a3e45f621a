"""The review web page (``homer review DATASET``): read a task, judge it, post-edit it.

A Starlette application served by uvicorn; pages are Jinja2 templates (``templates/review/``)
with autoescaping on, since every text of a dataset may be a model's or a stranger's. Verdicts
and accepted edits go to the dataset's ``review.sqlite`` (``orchestrator.review.annotations``) at once; an
edit is stored only when the task's gates pass with it (``orchestrator.review.edits``).

Safety: the server binds 127.0.0.1 unless told otherwise, and then needs a token, checked on
every request (``?token=`` once, then a cookie, or ``Authorization: Bearer``); a POST is read only
once it shows this server's form secret and a size within bounds (``review.http``); the Host
header must be one of the server's names (no DNS rebinding); testbed paths go through
``Workspace.resolve``. SQLite is used from the thread pool only, with a short busy timeout: a
database another program holds locked is an HTTP 503 that keeps the typed verdict for a retry.
"""

from __future__ import annotations

import hmac
import json
import secrets
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from backends.dataset_reader import iter_tasks, load_task
from backends.prompts import TEMPLATES
from backends.task_record import TaskRecord, plan_calls
from office_env import Workspace
from office_env.apps import get_app
from office_env.formats import ics_io
from office_env.untrusted import printable
from orchestrator.review.annotations import (
    CRITERIA,
    CRITERION_TEXT,
    OVERALL,
    VERDICTS,
    AnnotationError,
    AnnotationStore,
    check_verdict,
)
from orchestrator.review.edits import TEXT_FIELDS, EditError, check_edit, edited_record
from orchestrator.review.history_pages import OTHER_TEXT_CHARS, history_page, other_text_chars
from orchestrator.review.http import HostCheck, Refused, allowed_hosts, plain, read_form
from orchestrator.review.preview import list_files, mailbox, preview, week_view
from orchestrator.review.report import render_report, review_report
from orchestrator.review.run_pages import RunPages, run_list, run_task
from orchestrator.show import MARKS, criterion_in_words
from verifier.gates import schema_gate

TOKEN_COOKIE = "homer_review_token"
TOKEN_ENV = "HOMER_REVIEW_TOKEN"
BUSY_MS = 2_000  # how long a page waits for SQLite's lock before answering 503
BUSY_MESSAGE = ("the annotations database is busy (another program is writing review.sqlite); "
                "nothing was lost: try again in a moment")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES / "review")), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["urlquote"] = lambda value: quote(str(value), safe="")
    return env


class ReviewServer:
    """The page's state: the dataset, the annotator, the secrets and one SQLite connection per thread."""

    def __init__(self, dataset: Path, annotator: str, token: str | None = None,
                 hosts: tuple[str, ...] = allowed_hosts("127.0.0.1"), busy_ms: int = BUSY_MS,
                 runs: RunPages | list[Path] | None = None) -> None:
        check_verdict(annotator, "task", OVERALL, "keep")  # a usable name, or AnnotationError
        self.dataset = Path(dataset)
        # eval runs on this dataset, shown beside its tasks
        self.runs = runs if isinstance(runs, RunPages) else RunPages(list(runs or []))
        self.annotator = annotator
        self.token = token
        self.hosts = hosts
        self.busy_ms = busy_ms
        self._warned: set[str] = set()
        self.form_secret = secrets.token_urlsafe(24)
        self.env = _environment()
        self._local = threading.local()
        self._index: list[dict[str, Any]] | None = None
        self._index_lock = threading.Lock()
        self.write_lock = threading.Lock()  # this server's writes, one at a time, each numbered
        self.writes = 0

    # -- helpers ---------------------------------------------------------------------------------

    def store(self) -> AnnotationStore:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = AnnotationStore(self.dataset, busy_ms=self.busy_ms)
        return store

    def warnings(self) -> list[str]:
        """Rows of review.sqlite skipped as unsound (said once on the terminal, and on the task list)."""
        seen = list(self.store().skipped)
        for line in seen:
            if line not in self._warned:
                self._warned.add(line)
                print(f"warning: {line}", file=sys.stderr)
        return seen

    def index(self) -> list[dict[str, Any]]:
        """Every task's id, family and app count (read once; a task that cannot be read is listed with its error)."""
        with self._index_lock:
            if self._index is None:
                rows = []
                for task in iter_tasks(self.dataset):
                    typed = task.task
                    rows.append({"id": task.id, "family": (typed.family or typed.split) if typed is not None else "?",
                                 "app_count": typed.app_count if typed is not None else 0, "error": task.error,
                                 "intent": typed.intent[:200] if typed is not None else ""})
                self._index = rows
            return self._index

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("annotator", self.annotator)
        context.setdefault("form_secret", self.form_secret)
        context.setdefault("dataset", str(self.dataset))
        context.setdefault("run_names", list(self.runs.folders))
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=status)

    def error(self, message: str, status: int) -> HTMLResponse:
        return self.render("error.html", status=status, message=message)

    # -- middleware ------------------------------------------------------------------------------

    def authorised(self, request: Request) -> Response | None:
        """None when the request may go on, else the response that refuses it."""
        if self.token is None:
            return None
        given = request.query_params.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            given = header[7:].strip()
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return plain("a token is needed: open the address printed by homer review", 401)
        return None


# -- pages ---------------------------------------------------------------------------------------

def _my_overall(verdicts: list[Any], annotator: str) -> dict[str, str]:
    return {v.task: v.verdict for v in verdicts if v.criterion == OVERALL and v.annotator == annotator}


def task_list(server: ReviewServer, request: Request) -> Response:
    params = request.query_params
    verdicts = server.store().verdicts()
    mine = _my_overall(verdicts, server.annotator)
    reviewers: dict[str, set[str]] = {}
    for v in verdicts:
        reviewers.setdefault(v.task, set()).add(v.annotator)
    edits: dict[str, int] = {}
    for revision in server.store().revisions():
        edits[revision["task"]] = edits.get(revision["task"], 0) + 1
    rows = []
    for row in server.index():
        verdict = mine.get(row["id"], "")
        if params.get("apps") and str(row["app_count"]) != params["apps"]:
            continue
        if params.get("family") and row["family"] != params["family"]:
            continue
        if params.get("verdict") and verdict != params["verdict"]:
            continue
        if params.get("unreviewed") and verdict:
            continue
        rows.append({**row, "verdict": verdict, "reviewers": len(reviewers.get(row["id"], ())),
                     "edits": edits.get(row["id"], 0)})
    families = sorted({r["family"] for r in server.index()})
    app_counts = sorted({r["app_count"] for r in server.index() if r["app_count"]})
    return server.render("list.html", rows=rows, families=families, app_counts=app_counts, params=dict(params),
                         total=len(server.index()), query=urlencode(dict(params)), warnings=server.warnings())


def _load(server: ReviewServer, task_id: str) -> tuple[Any, TaskRecord | None, Response | None]:
    """The task, the record as edited so far, or the page that says why there is none."""
    if not any(row["id"] == task_id for row in server.index()):
        return None, None, server.error(f"no task {task_id!r} in this dataset", 404)
    task = load_task(server.dataset, task_id)
    if task.record is None:
        return task, None, server.error(f"task {task_id!r} cannot be read: {task.error}", 422)
    shape = schema_gate(task.record)
    if not shape.passed or task.task is None:  # a stranger's record: say which field is wrong, not fail on it
        return task, None, server.error(f"task {task_id!r} is malformed: {shape.detail}", 422)
    try:
        record = edited_record(task.task, server.store().revisions(task_id))
    except EditError as exc:
        return task, None, server.error(f"task {task_id!r}: its stored edits no longer apply ({exc})", 422)
    except (KeyError, TypeError, AttributeError) as exc:
        return task, None, server.error(f"task {task_id!r}: malformed content ({exc.__class__.__name__})", 422)
    return task, record, None


def _neighbours(server: ReviewServer, task_id: str) -> tuple[str | None, str | None]:
    ids = [row["id"] for row in server.index()]
    at = ids.index(task_id)
    return (ids[at - 1] if at > 0 else None), (ids[at + 1] if at + 1 < len(ids) else None)


def task_page(server: ReviewServer, request: Request, message: str = "", problems: list[str] | None = None,
              status: int = 200, kept: dict[str, str] | None = None) -> Response:
    task_id = request.path_params["task_id"]
    task, record, refusal = _load(server, task_id)
    if refusal is not None:
        return refusal
    assert record is not None  # _load gives a record or a refusal
    written = record.to_dict()  # the page shows the record as its task.json would hold it
    other = other_text_chars(written)
    if other > OTHER_TEXT_CHARS:
        return server.error(f"task {task_id!r} is too large to review: {other:,} characters outside its history "
                            f"(a page shows at most {OTHER_TEXT_CHARS:,})", 422)
    try:
        page = int(request.query_params.get("page", "0"))
    except ValueError:
        page = -1
    only_marked = request.query_params.get("marked") == "1"
    days, marked, pages = history_page(record, page, only_marked=only_marked)
    if not 0 <= page < pages:
        return server.error(f"task {task_id!r} has history pages 0 to {pages - 1}, not "
                            f"{printable(request.query_params.get('page', ''))[:40]!r}", 404)
    started = time.perf_counter()
    store = server.store()
    verdicts = store.verdicts(task_id)
    mine = {v.criterion: v for v in verdicts if v.annotator == server.annotator}
    others = [v for v in verdicts if v.annotator != server.annotator]
    testbed = task.testbed
    files = list_files(testbed)
    ws = Workspace(testbed) if testbed.is_dir() else None
    users = ws.users() if ws is not None else []
    calendars = []
    for user in users:
        assert ws is not None  # the users are its own
        try:
            path = ws.calendar_file(user)
            if path.is_file():
                calendars.append({"user": user, "weeks": week_view(ics_io.read_events(path, ws.relative(path)))})
        except Exception as exc:  # a stranger's calendar: say why it cannot be shown
            calendars.append({"user": user, "weeks": [], "error": str(exc)[:200]})
    previous, following = _neighbours(server, task_id)
    criteria = [criterion_in_words(c) for c in record.criteria()]
    revisions = store.revisions(task_id)
    return server.render(
        "task.html", status=status, task_id=task_id, record=written, days=days, marked=marked, files=files,
        users=[u for u in users if (testbed / get_app("email").folder / u).is_dir()], calendars=calendars,
        criteria=criteria,
        guideline=[(c, CRITERION_TEXT[c]) for c in CRITERIA], verdict_choices=VERDICTS, mine=mine, others=others,
        previous=previous, following=following, revisions=revisions, page=page, pages=pages, message=message,
        only_marked=only_marked,
        problems=problems or [],
        kept=kept or {},
        marks=MARKS, memory_ids=[m.id for m in record.memory], text_fields=TEXT_FIELDS,
        oracle=plan_calls(record.oracle), render_ms=lambda: f"{1000 * (time.perf_counter() - started):.0f}",
        json=json, in_runs=server.runs.outcomes_of(task_id))


def file_page(server: ReviewServer, request: Request) -> Response:
    task_id = request.path_params["task_id"]
    task, record, refusal = _load(server, task_id)
    if refusal is not None:
        return refusal
    testbed = task.testbed
    user = request.query_params.get("mailbox")
    if user is not None:
        try:
            threads = mailbox(testbed, Workspace.check_user(user))
        except Exception as exc:
            return server.error(f"mailbox {user!r}: {str(exc)[:200]}", 404)
        return server.render("mailbox.html", task_id=task_id, user=user, threads=threads)
    view = preview(testbed, request.query_params.get("path", ""))
    return server.render("file.html", status=404 if view["kind"] == "error" else 200, task_id=task_id, view=view)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _back(task_id: str, anchor: str = "") -> RedirectResponse:
    return RedirectResponse(f"/task/{quote(task_id, safe='')}" + (f"#{anchor}" if anchor else ""), status_code=303)


def _busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


async def verdict_post(server: ReviewServer, request: Request) -> Response:
    task_id = request.path_params["task_id"]
    if not any(row["id"] == task_id for row in await run_in_threadpool(server.index)):
        return server.error(f"no task {task_id!r} in this dataset", 404)
    form = await read_form(request, server.form_secret)
    typed = {key: form.get(key, "") for key in ("criterion", "verdict", "comment")}
    try:
        elapsed, number = await run_in_threadpool(_save_verdict, server, task_id, typed)
    except AnnotationError as exc:
        if _wants_json(request):
            return JSONResponse({"ok": False, "error": str(exc)}, status_code=422)
        return server.error(str(exc), 422)
    except sqlite3.OperationalError as exc:
        if not _busy(exc):
            raise
        if _wants_json(request):  # the page keeps what was typed and tries again
            return JSONResponse({"ok": False, "busy": True, "error": BUSY_MESSAGE}, status_code=503,
                                headers={"Retry-After": "1"})
        return server.render("busy.html", status=503, message=BUSY_MESSAGE, task_id=task_id, typed=typed)
    if _wants_json(request):
        return JSONResponse({"ok": True, "saved_ms": round(1000 * elapsed, 2), "write": number})
    return _back(task_id, "annotate")


def _save_verdict(server: ReviewServer, task_id: str, typed: dict[str, str]) -> tuple[float, int]:
    """Store a verdict; how long it took and its number among this server's writes. Posts on one
    key that overlap are stored in the order of their numbers, so the acknowledged write with the
    highest number is the one the file keeps."""
    started = time.perf_counter()
    store = server.store()
    with server.write_lock:
        store.set(server.annotator, task_id, typed["criterion"], typed["verdict"], typed["comment"])
        server.writes += 1
        number = server.writes
    return time.perf_counter() - started, number


async def edit_post(server: ReviewServer, request: Request) -> Response:
    form = await read_form(request, server.form_secret)
    return await run_in_threadpool(_edit, server, request, form)  # the gates take a moment: off the event loop


def _edit(server: ReviewServer, request: Request, form: dict[str, str]) -> Response:
    task_id = request.path_params["task_id"]
    task, record, refusal = _load(server, task_id)
    if refusal is not None:
        return refusal
    assert record is not None  # _load gives a record or a refusal
    field = form.get("field", "")
    if field.startswith("memory:"):  # a box left empty keeps what the piece has
        value: Any = {key: form[key] for key in ("text", "value") if form.get(key, "").strip()}
        which = "edit-memory"
    elif field.startswith("turn:"):
        value = {"text": form.get("text", ""),
                 **{mark: [m.strip() for m in form.get(mark, "").split(",") if m.strip()] for mark in MARKS}}
        which = "edit-turn"
    else:
        value = form.get("text", "")
        which = "edit-text"
    kept = {"form": which, **{key: form.get(key, "") for key in ("field", "text", "value", *MARKS)}}
    try:
        _, stored, failures = check_edit(record, field, value, task.testbed, task.reference)
    except EditError as exc:
        return task_page(server, request, message=f"edit refused: {exc}", status=422, kept=kept)
    if failures:
        return task_page(server, request, message="edit refused: the task's gates fail with it",
                         problems=failures, status=422, kept=kept)
    try:
        server.store().revise(task_id, field, stored, server.annotator)
    except sqlite3.OperationalError as exc:
        if not _busy(exc):
            raise
        return task_page(server, request, message=f"edit not saved yet: {BUSY_MESSAGE}", status=503, kept=kept)
    return _back(task_id, "edits")


def report_page(server: ReviewServer, request: Request) -> Response:
    report = review_report(server.store().verdicts())
    return server.render("report.html", report=report, text=render_report(report, str(server.dataset)),
                         criteria=(*CRITERIA, OVERALL), warnings=server.warnings())


def _guarded(server: ReviewServer, handler: Any) -> Any:
    """The page's endpoint: the token first; then a refusal, a busy database or a failure is a
    short page (never a traceback, on the page or the terminal)."""
    async def endpoint(request: Request) -> Response:
        refusal = server.authorised(request)
        if refusal is not None:
            return refusal
        try:
            result = handler(server, request)
            if hasattr(result, "__await__"):
                result = await result
        except Refused as exc:
            result = (JSONResponse({"ok": False, "error": exc.message}, status_code=exc.status)
                      if _wants_json(request) else plain(exc.message, exc.status))
        except Exception as exc:  # a malformed dataset or annotations file: say so in one line
            if _busy(exc):
                result = server.error(BUSY_MESSAGE, 503)
                result.headers["Retry-After"] = "1"
            else:
                print(f"warning: {printable(request.url.path)[:200]}: {exc.__class__.__name__}: "
                      f"{printable(exc)[:200]}", file=sys.stderr)
                result = server.error(f"the page failed ({exc.__class__.__name__}); the dataset or its "
                                      "review.sqlite may be malformed", 500)
        if server.token is not None and request.query_params.get("token"):
            result.set_cookie(TOKEN_COOKIE, server.token, httponly=True, samesite="strict")
        # never inside another site's frame (a framed page could be clicked into verdicts)
        result.headers["X-Frame-Options"] = "DENY"
        result.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
        return result
    return endpoint


def create_app(server: ReviewServer) -> Starlette:
    def sync(handler: Any) -> Any:
        # pages read files and SQLite: run them in the thread pool so one slow page does not stall the others
        async def call(srv: ReviewServer, request: Request) -> Response:
            return await run_in_threadpool(handler, srv, request)
        return call

    routes = [
        Route("/", _guarded(server, sync(task_list))),
        Route("/report", _guarded(server, sync(report_page))),
        Route("/task/{task_id}", _guarded(server, sync(task_page))),
        Route("/task/{task_id}/file", _guarded(server, sync(file_page))),
        Route("/task/{task_id}/verdict", _guarded(server, verdict_post), methods=["POST"]),
        Route("/task/{task_id}/edit", _guarded(server, edit_post), methods=["POST"]),
        Route("/run/{name}", _guarded(server, sync(run_list))),
        Route("/run/{name}/task/{task_id}", _guarded(server, sync(run_task))),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return server.error(f"no page at {request.url.path}", 404)

    async def failed(request: Request, exc: Exception) -> Response:
        return server.error(f"the page failed ({exc.__class__.__name__}); the dataset may be malformed", 500)

    return Starlette(routes=routes, middleware=[Middleware(HostCheck, hosts=tuple(server.hosts))],
                     exception_handlers={404: not_found, 500: failed})
