"""Human annotations of a dataset's tasks, kept in SQLite next to the dataset.

The quality guideline's criteria (:data:`CRITERIA`) each get a yes / no verdict and a comment per
annotator and task, and every task an overall keep / drop (:data:`OVERALL`). Verdicts are stored
as they are given (one row per annotator, task and criterion; a later verdict replaces the
earlier one and keeps its time), in ``<dataset>/review.sqlite`` in WAL mode, so several annotators
can write at once without losing a verdict. Post-edits are kept as revisions (task, field, the
new value, annotator, time), never written into the dataset's files until it is applied.

Annotations made elsewhere come in as CSV (columns ``annotator, task, criterion, verdict`` and
optionally ``comment``); a bad row is one error naming the file, line and column.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar, cast

from backends.llm.strict_json import JSONLimitError, loads_limited
from office_env.untrusted import UntrustedInputError, printable, read_file, sqlite_problem

DB_NAME = "review.sqlite"
CRITERIA = ("completeness", "soundness", "clarity", "solvability", "realism")
CRITERION_TEXT = {
    "completeness": "every detail the task needs is in the history or the office",
    "soundness": "the intent alone does not give the task away (no leakage); the criteria check what it asks",
    "clarity": "the task, the chat and the criteria are clear and hang together",
    "solvability": "an assistant who read the history and the office can do it",
    "realism": "the office, the people and the language read like real work",
}
OVERALL = "overall"
VERDICTS = {**{c: ("yes", "no") for c in CRITERIA}, OVERALL: ("keep", "drop")}
MAX_COMMENT_CHARS = 4000
MAX_NAME_CHARS = 80
MAX_CSV_BYTES = 16 * 1024 * 1024
MAX_FIELD_CHARS = 200               # a revision's field name
MAX_VALUE_CHARS = 256 * 1024        # a revision's JSON value
MAX_VALUE_DEPTH = 8                 # its nesting (a turn edit is two levels)
MAX_WARNINGS = 100
BUSY_MS = 10_000
T = TypeVar("T")  # what a stored row is read as

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    annotator TEXT NOT NULL, task TEXT NOT NULL, criterion TEXT NOT NULL,
    verdict TEXT NOT NULL, comment TEXT NOT NULL DEFAULT '', at REAL NOT NULL,
    PRIMARY KEY (annotator, task, criterion));
CREATE TABLE IF NOT EXISTS revisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, task TEXT NOT NULL, field TEXT NOT NULL,
    value TEXT NOT NULL, annotator TEXT NOT NULL, at REAL NOT NULL);
"""


class AnnotationError(ValueError):
    """A verdict, a name or an imported row that cannot be stored; the message says which field."""


class StoreFileError(AnnotationError):
    """``review.sqlite`` itself cannot be used (a link, not a database); the message names it."""


@dataclass(frozen=True)
class Verdict:
    annotator: str
    task: str
    criterion: str
    verdict: str
    comment: str = ""
    at: float = 0.0


def _connect(path: Path) -> sqlite3.Connection:
    """Open ``path`` as SQLite only when it is a regular file (or absent): a link would make
    SQLite create or write the file it points to, outside the dataset."""
    problem = sqlite_problem(path)
    if problem is not None:
        raise StoreFileError(f"{printable(path)}: {problem}; refused")
    before = _identity(path)
    db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=rwc", uri=True, timeout=BUSY_MS / 1000,
                         isolation_level=None)
    after = _identity(path)
    if after is None or (before is not None and after != before):  # swapped while opening
        db.close()
        raise StoreFileError(f"{printable(path)}: changed while being opened; refused")
    return db


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else (-1, -1)


def check_verdict(annotator: str, task: str, criterion: str, verdict: str, comment: str = "") -> None:
    """Refuse what the store must not hold, naming the field."""
    for field, value in (("annotator", annotator), ("task", task)):
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS \
                or not value.isprintable():
            raise AnnotationError(f"{field}: {printable(str(value))[:100]!r} is not a name (1-{MAX_NAME_CHARS} "
                                  "printable characters)")
    if criterion not in VERDICTS:
        raise AnnotationError(f"criterion: {printable(str(criterion))[:60]!r} is not one of {', '.join(VERDICTS)}")
    if verdict not in VERDICTS[criterion]:
        raise AnnotationError(f"verdict: {printable(str(verdict))[:60]!r} for {criterion} must be "
                              f"{' or '.join(VERDICTS[criterion])}")
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS:
        raise AnnotationError(f"comment: at most {MAX_COMMENT_CHARS} characters")


class AnnotationStore:
    """The SQLite file of one dataset's annotations; one connection per thread or process."""

    def __init__(self, dataset: Path, busy_ms: int = BUSY_MS) -> None:
        self.dataset = Path(dataset)
        self.path = self.dataset / DB_NAME
        self.skipped: dict[str, None] = {}  # why rows read were skipped, oldest first (at most MAX_WARNINGS)
        self._db = _connect(self.path)
        try:
            self._setup(busy_ms)
        except StoreFileError:
            self._db.close()
            raise
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            raise StoreFileError(f"{printable(self.path)}: cannot be used as the review database "
                                 f"({str(exc).splitlines()[0][:200]})") from None

    def _setup(self, busy_ms: int) -> None:
        self._db.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
        foreign = sorted({row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                         - {"verdicts", "revisions", "sqlite_sequence"})
        if foreign:  # another program's database: never add tables to it nor write verdicts there
            raise StoreFileError(f"{printable(self.path)}: holds other tables ({printable(foreign[0])[:60]}); not a "
                                 "review database")
        # two annotators opening a new file at once: switching it to WAL can be refused at once
        # (SQLite does not wait on that lock), so the setup is tried again for a few seconds
        deadline = time.monotonic() + BUSY_MS / 1000
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "AnnotationStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- verdicts ------------------------------------------------------------------------------

    def set(self, annotator: str, task: str, criterion: str, verdict: str, comment: str = "",
            at: float | None = None) -> None:
        check_verdict(annotator, task, criterion, verdict, comment)
        self._db.execute("INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (annotator, task, criterion) "
                         "DO UPDATE SET verdict = excluded.verdict, comment = excluded.comment, at = excluded.at",
                         (annotator, task, criterion, verdict, comment, time.time() if at is None else at))

    def verdicts(self, task: str | None = None) -> list[Verdict]:
        """The stored verdicts that are sound; a row that is not (a stranger's file) is skipped and
        the reason kept in :attr:`skipped`."""
        columns = [_text("annotator", MAX_NAME_CHARS), _text("task", MAX_NAME_CHARS),
                   _text("criterion", MAX_NAME_CHARS), _text("verdict", MAX_NAME_CHARS),
                   _text("comment", MAX_COMMENT_CHARS), _number("at")]
        return self._sound_rows("verdicts", columns, task, "task, criterion, annotator", _verdict,
                                lambda row: f"verdict of {_name(row[0])} on {_name(row[1])}")

    def annotators(self) -> list[str]:
        return sorted({v.annotator for v in self.verdicts()})

    def _skip(self, what: str, why: object) -> None:
        if len(self.skipped) < MAX_WARNINGS:
            self.skipped[f"{printable(self.path)}: {what} skipped ({printable(why)[:200]})"] = None

    # -- revisions -----------------------------------------------------------------------------

    def revise(self, task: str, field: str, value: Any, annotator: str) -> int:
        check_verdict(annotator, task, OVERALL, "keep")
        cursor = self._db.execute("INSERT INTO revisions (task, field, value, annotator, at) VALUES (?, ?, ?, ?, ?)",
                                  (task, field, json.dumps(value, ensure_ascii=False), annotator, time.time()))
        return int(cast(int, cursor.lastrowid))  # an INSERT sets it

    def revisions(self, task: str | None = None) -> list[dict[str, Any]]:
        """The stored post-edits that are sound, in order; a row that is not is skipped (see :meth:`verdicts`)."""
        columns = ["CASE WHEN typeof(id) = 'integer' THEN id END", _text("task", MAX_NAME_CHARS),
                   _text("field", MAX_FIELD_CHARS), _text("value", MAX_VALUE_CHARS), _text("annotator", MAX_NAME_CHARS),
                   _number("at")]
        return self._sound_rows("revisions", columns, task, "id", _revision,
                                lambda r: f"revision {r[0] if r[0] is not None else '?'} of {_name(r[1])}")

    def _sound_rows(self, table: str, columns: list[str], task: str | None, order: str,
                    read: Callable[[tuple[Any, ...]], T], named: Callable[[tuple[Any, ...]], str]) -> list[T]:
        """``read`` of every row of ``table`` (``task``'s, or all), in ``order``; a row it refuses with
        :class:`AnnotationError` is skipped, ``named`` in :attr:`skipped` with the reason."""
        rows = self._db.execute(f"SELECT {', '.join(columns)} FROM {table}" + (" WHERE task = ?" if task else "")
                                + f" ORDER BY {order}", (task,) if task else ())
        kept = []
        for row in rows:
            try:
                kept.append(read(row))
            except AnnotationError as exc:
                self._skip(named(row), exc)
        return kept

    # -- import --------------------------------------------------------------------------------

    def import_csv(self, path: Path) -> int:
        """Store every row of an annotations CSV; all or nothing (one bad row stores none)."""
        rows = list(read_csv(path))
        tasks = self.dataset / "tasks"
        for line, row in enumerate(rows, start=2):
            if not (tasks / row.task).is_dir() or "/" in row.task or row.task.startswith("."):
                raise AnnotationError(f"{printable(str(path))}: line {line}: task: {printable(row.task)[:80]!r} is not "
                                      f"a task of {printable(str(self.dataset))}")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for row in rows:
                self.set(row.annotator, row.task, row.criterion, row.verdict, row.comment)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return len(rows)


def _text(column: str, limit: int) -> str:
    """The column when it is text of at most ``limit`` characters, else NULL (never read whole)."""
    return f"CASE WHEN typeof({column}) = 'text' AND length({column}) <= {limit} THEN {column} END"


def _number(column: str) -> str:
    return f"CASE WHEN typeof({column}) IN ('integer', 'real') THEN {column} END"


def _name(value: Any) -> str:
    return repr(printable(value)[:MAX_NAME_CHARS]) if isinstance(value, str) else "?"


def _verdict(row: tuple[Any, ...]) -> Verdict:
    """One verdicts row as a :class:`Verdict`, or :class:`AnnotationError` naming its bad column."""
    if row[5] is None or not math.isfinite(row[5]):
        raise AnnotationError("at: not a time")
    if row[4] is None:
        raise AnnotationError(f"comment: not text of at most {MAX_COMMENT_CHARS} characters")
    check_verdict(*row[:5])
    return Verdict(*row)


def _revision(row: tuple[Any, ...]) -> dict[str, Any]:
    """One revisions row as a dict, or :class:`AnnotationError` naming its bad column."""
    rid, task, field, value, annotator, at = row
    if rid is None:
        raise AnnotationError("id: not an integer")
    if field is None or not field.isprintable():
        raise AnnotationError(f"field: not a name of at most {MAX_FIELD_CHARS} printable characters")
    if value is None:
        raise AnnotationError(f"value: not text of at most {MAX_VALUE_CHARS} characters")
    if at is None or not math.isfinite(at):
        raise AnnotationError("at: not a time")
    check_verdict(annotator, task, OVERALL, "keep")
    try:
        parsed = loads_limited(value, max_bytes=4 * MAX_VALUE_CHARS, max_depth=MAX_VALUE_DEPTH)
    except (JSONLimitError, ValueError, RecursionError) as exc:
        raise AnnotationError(f"value: not JSON within the limits ({exc})") from None
    return {"id": rid, "task": task, "field": field, "value": parsed, "annotator": annotator, "at": at}


def read_csv(path: Path) -> Iterator[Verdict]:
    """The verdicts of an annotations CSV, each checked; :class:`AnnotationError` names the line."""
    name = printable(str(path))
    try:
        text = read_file(path, name, max_bytes=MAX_CSV_BYTES).decode("utf-8-sig")
    except UntrustedInputError as exc:
        raise AnnotationError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise AnnotationError(f"{name}: cannot be read as UTF-8 text ({exc.__class__.__name__})") from None
    reader = csv.DictReader(text.splitlines())
    header = [h.strip().lower() for h in reader.fieldnames or []]
    missing = [c for c in ("annotator", "task", "criterion", "verdict") if c not in header]
    if missing:
        raise AnnotationError(f"{name}: line 1: missing column(s) {', '.join(missing)} (expected annotator, task, "
                              "criterion, verdict[, comment])")
    reader.fieldnames = header
    for line, row in enumerate(reader, start=2):
        if None in row:
            raise AnnotationError(f"{name}: line {line}: more cells than columns")
        values = {k: (v or "").strip() for k, v in row.items()}
        try:
            check_verdict(values["annotator"], values["task"], values["criterion"], values["verdict"],
                          values.get("comment", ""))
        except AnnotationError as exc:
            raise AnnotationError(f"{name}: line {line}: {exc}") from None
        yield Verdict(values["annotator"], values["task"], values["criterion"], values["verdict"],
                      values.get("comment", ""))
