"""What every offline task family shares: its declaration, its inputs, and note helpers.

A family is code that samples one concrete task from a workspace's context notes: it emits the
full description, the intent (no specifics), subtasks, catalog criteria, the memory the chat
must carry, a query sentence, an oracle plan and the intent-only baseline plan. It returns
``None`` when the workspace offers nothing it can build on.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from functools import cached_property, lru_cache
from typing import Any, Callable

from generators.chances import DRAFT
from generators.english import possessive
from generators.families.follow_up import with_follow_up_day
from generators.families.phrasing import FamilyDefinitionError, Phrasing, load_phrasing
from generators.model import Distractor, MemoryPiece, Misreading, TaskDraft, ToolCall
from office_env.apps import office_apps
from office_env.evaluation import builders as cr
from office_env.formats.built import Kept, remembered_text
from office_env.money import CODE
from office_env.synthesis.check import away_span
from office_env.synthesis.common import is_superseded

_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
NEXT_MEETING_RE = re.compile(r"next meeting on (\d{4}-\d{2}-\d{2}) at (\d{1,2}:\d{2})", re.IGNORECASE)  # fixed in notes
QUOTE_RE = re.compile(rf"quoted ((?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)? {CODE})")  # a supplier's price in a mail


@dataclass(frozen=True)
class FamilyInput:
    rng: random.Random
    notes: dict[str, dict[str, Any]]  # app -> surfer notes
    user: str  # the office user's mailbox / calendar name
    user_name: str  # "Dana Reyes"
    colleagues: tuple[tuple[str, str], ...]  # (user, full name) of colleagues
    now: datetime
    phrasing: Phrasing | None = None  # the family's intents and queries
    # the query names the work (True: a history of weeks), only points at it (False: a model was told
    # so) or either, by the family's pool (None; ``Phrasing.query``)
    named_query: bool | None = None

    def intent(self) -> str:
        """One of the family's intents (seeded)."""
        if self.phrasing is None:
            raise FamilyDefinitionError("this input carries no phrasing (build it with Family.input)")
        return self.phrasing.intent(self.rng)

    @property
    def calendar_words(self) -> str:
        """How a description names the user's calendar: "Dana Reyes's calendar (dana)"."""
        return f"{possessive(self.user_name)} calendar ({self.user})"

    def query(self, **slots: str) -> str:
        """One of the family's queries that the given slots can fill (seeded)."""
        if self.phrasing is None:
            raise FamilyDefinitionError("this input carries no phrasing (build it with Family.input)")
        return self.phrasing.query(self.rng, named=self.named_query, **slots)


def draft(inp: FamilyInput, *, about: str | None = None, **fields: Any) -> TaskDraft:
    """A family's task, with the intent and query every family draws: the intent first, then a
    query about ``about`` (default: the first memory piece's subject). The order of the two seeded
    draws is the one the dataset's bytes were written with."""
    intent = inp.intent()
    query = inp.query(about=fields["memory"][0].about if about is None else about)
    return TaskDraft(intent=intent, query=query, **fields)


@dataclass(frozen=True)
class Family:
    name: str
    apps: tuple[str, ...]
    difficulty: str
    builder: Callable[[FamilyInput], TaskDraft | None]

    def build(self, inp: FamilyInput) -> TaskDraft | None:
        """The family's task in this office, or None. A draft whose work mails a colleague the
        office shows away today (a holiday, an out-of-office notice) is drawn again, twice at most:
        nobody should be sent work they cannot answer."""
        for _ in range(3):
            draft = self.builder(inp)
            if draft is None:
                return None
            draft = replace(draft, family=self.name, apps=list(self.apps), difficulty=self.difficulty)
            if not mails_someone_away(inp, draft):
                return with_follow_up_day(inp.rng, inp.now, draft)
        return None

    @property
    def phrasing(self) -> Phrasing:
        return load_phrasing(self.name)

    def input(self, rng: random.Random, notes: dict[str, dict[str, Any]], user: str, user_name: str,
              colleagues: tuple[tuple[str, str], ...], now: datetime, named_query: bool | None = None) -> FamilyInput:
        """``named_query``: whether the task's query names its work (True for a history of weeks; None:
        the pool's own weights, ``Phrasing.query``)."""
        return FamilyInput(rng, notes, user, user_name, colleagues, now, self.phrasing, named_query)


FAMILIES: dict[str, Family] = {}


def check_families() -> None:
    """Load every family's phrasing file now: a command that builds tasks calls this first, so
    a broken definition stops it at start with one line naming the file and field."""
    if not FAMILIES:
        raise FamilyDefinitionError("no task family is registered")
    for fam in FAMILIES.values():
        fam.phrasing


def family(name: str, apps: tuple[str, ...], difficulty: str):
    """Register a family (its phrasing file is read on first use; see ``check_families``). Its
    drafts get ``name``, ``apps`` and ``difficulty`` from here, so a builder leaves them out.
    ``difficulty`` is the family's aim, given to a model as a hint; a task's recorded difficulty is
    measured (``generators.difficulty``)."""
    def register(build: Callable[[FamilyInput], TaskDraft | None]):
        if name in FAMILIES:
            raise FamilyDefinitionError(f"family {name}: defined twice")
        if difficulty not in ("easy", "medium", "hard"):
            raise FamilyDefinitionError(f"family {name}: difficulty: {difficulty!r} must be easy, medium or hard")
        known = office_apps()
        if not apps or len(set(apps)) != len(apps) or any(a not in known for a in apps):
            raise FamilyDefinitionError(f"family {name}: apps: {apps!r} must be distinct names from {', '.join(known)}")
        FAMILIES[name] = Family(name, apps, difficulty, build)
        return build
    return register


# -- helpers over surfer notes ----------------------------------------------------------------

def number(text: str) -> float | None:
    cleaned = str(text).replace(",", "").strip()
    return float(cleaned) if _NUMBER_RE.match(cleaned) else None


def fmt(value: float) -> str:
    """A number as people write it in a file: 1200, 12.5 (no trailing .0)."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def cell(value: float) -> int | float:
    """A number as a person types it into a cell: 12, not 12.0."""
    return int(value) if value == int(value) else value


@dataclass(frozen=True)
class Table:
    file: str
    sheet: str
    headers: list[str]
    rows: list[list[str]]

    # A table is read by every family drawn on its office (the task's and its siblings'): what its
    # columns are is worked out once (families only read a table, never change it).
    @cached_property
    def _numeric(self) -> tuple[int, ...]:
        return tuple(c for c in range(len(self.headers))
                     if self.rows and all(c < len(r) and number(r[c]) is not None for r in self.rows))

    @cached_property
    def _label(self) -> int | None:
        for c in range(len(self.headers)):
            values = [r[c] if c < len(r) else "" for r in self.rows]
            if all(v and number(v) is None for v in values) and len(set(values)) == len(values):
                return c
        return None

    @cached_property
    def _groups(self) -> tuple[int, ...]:
        out = []
        for c in range(len(self.headers)):
            values = [r[c] if c < len(r) else "" for r in self.rows]
            if all(v and number(v) is None for v in values) and 2 <= len(set(values)) <= len(values) // 2:
                out.append(c)
        return tuple(out)

    def numeric_columns(self) -> list[int]:
        """Columns (0-based) where every row holds a number."""
        return list(self._numeric)

    def group_columns(self) -> list[int]:
        """Text columns whose values repeat (a region, a department, a product): rows form groups."""
        return list(self._groups)

    def totals(self) -> dict[str, float]:
        """Each column a total means something for (see :func:`additive`), by header."""
        return {self.headers[c]: round(sum(self.column(c)), 2) for c in self.numeric_columns()
                if additive(self.headers[c])}

    def label_column(self) -> int | None:
        """The first column of distinct non-numeric labels (names, items, categories)."""
        return self._label

    def column(self, c: int) -> list[float]:
        found = self._columns.get(c)
        if found is None:
            found = self._columns[c] = tuple(number(r[c]) for r in self.rows)  # type: ignore[misc]  # a numeric column
        return list(found)

    @cached_property
    def _columns(self) -> dict[int, tuple[float, ...]]:
        return {}


def _per_notes(kept: Kept[tuple[Any, Any]], notes: Any, key: Any, make: Callable[[], Any]) -> Any:
    """``make()`` kept per notes object and ``key``: every family drawn on a world (the task's and
    its siblings') reads the same notes, and families only read them. The entry holds the object
    beside its result, so no other object takes its id while the entry is kept."""
    known = kept.get((id(notes), key), lambda: (notes, make()))
    return known[1] if known[0] is notes else make()


_TABLES: Kept[tuple[Any, Any]] = Kept(32)  # a world's excel notes -> its tables


def tables(notes: dict[str, dict[str, Any]]) -> list[Table]:
    excel = notes.get("excel", {})
    return list(_per_notes(_TABLES, excel, None, lambda: _tables_of(excel)))


def _tables_of(excel: dict[str, Any]) -> list[Table]:
    out = []
    for entry in excel.get("files", []):
        if ("error" in entry or not entry.get("headers") or len(entry.get("rows", [])) < 2
                or is_superseded(entry["file"])):
            continue
        out.append(Table(entry["file"], entry.get("sheet", ""), list(entry["headers"]),
                         [list(r) for r in entry["rows"]]))
    return out


def labelled_tables(notes: dict[str, dict[str, Any]]) -> list[tuple[Table, int, list[int]]]:
    """Tables with a label column and at least one numeric column."""
    out = []
    for table in tables(notes):
        label, numeric = table.label_column(), table.numeric_columns()
        if label is not None and numeric:
            out.append((table, label, numeric))
    return out


def pick_column(inp: FamilyInput, min_rows: int = 2, summable: bool = False,
                avoid: tuple[Table, int, int] | None = None) -> tuple[Table, int, int] | None:
    """A random (table, label column, numeric column) from the workspace's sheets, or None;
    ``summable``: only columns whose total means something (see ``additive``); ``avoid``: not that
    table's column (the one an intent-only agent reaches for, see ``first_column``)."""
    skip = (avoid[0].file, avoid[2]) if avoid else None
    options = [(t, label, [c for c in numeric if (additive(t.headers[c]) or not summable) and (t.file, c) != skip])
               for t, label, numeric in labelled_tables(inp.notes) if len(t.rows) >= min_rows]
    options = [o for o in options if o[2]]
    if not options:
        return None
    table, label, numeric = inp.rng.choice(options)
    return table, label, inp.rng.choice(numeric)


def first_column(inp: FamilyInput, min_rows: int = 2, summable: bool = False) -> tuple[Table, int, int] | None:
    """The (table, label column, numeric column) an agent that knows only the intent reaches for
    first: the first sheet of the listing that fits, and its first fitting column. An intent-only
    baseline works from it (a task whose answer it gives needs no chat)."""
    for t, label, numeric in labelled_tables(inp.notes):
        numeric = [c for c in numeric if additive(t.headers[c]) or not summable]
        if len(t.rows) >= min_rows and numeric:
            return t, label, numeric[0]
    return None


def label_for(table: Table, label: int, col: int, highest: bool) -> str | None:
    """The label of the row with the highest (or lowest) value of ``col``; None on a tie."""
    values = table.column(col)
    target = max(values) if highest else min(values)
    return table.rows[values.index(target)][label] if values.count(target) == 1 else None


def docs(notes: dict[str, dict[str, Any]], app: str) -> list[dict[str, Any]]:
    return [f for f in notes.get(app, {}).get("files", [])
            if "error" not in f and f.get("lines") and not is_superseded(f["file"])]


def calendar_of(notes: dict[str, dict[str, Any]], user: str) -> dict[str, Any] | None:
    for cal in notes.get("calendar", {}).get("calendars", []):
        if cal.get("user", "").lower() == user.lower():
            return cal
    return None


def inbox_of(notes: dict[str, dict[str, Any]], user: str) -> list[dict[str, Any]]:
    for box in notes.get("email", {}).get("mailboxes", []):
        if box.get("user", "").lower() == user.lower():
            return list(box.get("messages", []))
    return []


_QUOTE_HEAD_RE = re.compile(r"^On .{0,200} wrote:\s*$", re.MULTILINE)
_FORWARD_RE = re.compile(r"^-+ ?Forwarded message ?-+\s*$", re.MULTILINE)


def own_words(message: dict[str, Any]) -> str:
    """A mail's body without the message it quotes or forwards (``On ... wrote:``, ``>`` lines, a
    ``Forwarded message`` block): a question, a date or a figure quoted in a reply or passed on in a
    forward belongs to the first sender, not to the one who replied or forwarded it."""
    return _own_words(str(message.get("body", "")))


MAX_KEPT_BODY = 16 * 1024  # a longer body (a stranger's office may hold one) is read every time, not held


# the latest bodies' own words: a task and each of its sibling drafts read the same office's mails
@remembered_text(1024, MAX_KEPT_BODY)
def _own_words(body: str) -> str:
    for cut in (_QUOTE_HEAD_RE.search(body), _FORWARD_RE.search(body)):
        body = body[:cut.start()] if cut else body
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(">"))


def left_out(nearest: list[str], listed: list[str], avoid: tuple[str, ...] = (), limit: int = 3) -> list[str]:
    """What a list must leave out, checked so that pasting every row cannot pass: the first
    ``limit`` of ``nearest`` (the rows closest to the cut, in order) that neither hold nor sit in a
    listed value or a text the message has anyway (``avoid``: the names it greets and signs with)."""
    out: list[str] = []
    for value in nearest:
        low = value.lower()
        if all(low not in other.lower() and other.lower() not in low for other in (*listed, *avoid, *out)):
            out.append(value)
        if len(out) == limit:
            break
    return out


def excluding(values: list[str]) -> dict[str, list[str]]:
    """The ``body_excludes`` argument of a mail check, when there is anything to leave out."""
    return {"body_excludes": values} if values else {}


def excluding_past(rows: list, label: int, values: list[float], cut: float, listed: list[str],
                   people: tuple[str, ...]) -> dict[str, list[str]]:
    """``body_excludes`` for a mail listing the rows under ``cut``: the labels of the rows at or above
    it, nearest first, that no right answer holds (``people``: whom the mail greets and is signed by,
    whole names and each of their words)."""
    nearest = [row[label] for row, v in sorted(zip(rows, values), key=lambda p: p[1]) if v >= cut]
    return excluding(left_out(nearest, listed, tuple(w for person in people for w in (person, *person.split()))))


def piece(index: int, kind: str, text: str, value: str, *, cue: str = "", about: str = "", thread: int = 1,
          superseded: tuple[str, ...] = (), distractors: tuple[Distractor, ...] = ()) -> MemoryPiece:
    """Memory piece ``m<index>`` of thread ``t<thread>``; ``cue`` and ``about`` let the dialogue
    say it in the user's words; ``superseded`` values are said first and corrected later."""
    return MemoryPiece(id=f"m{index}", kind=kind, text=text, value=value, thread=f"t{thread}",  # type: ignore[arg-type]  # kind: a family passes one of the model's kinds
                       superseded=tuple(superseded), distractors=tuple(distractors), cue=cue, about=about)


def near(value: str, text: str) -> Distractor:
    """A near-miss detail: ``text`` states ``value``, which resembles a memory piece's value."""
    if value not in text:
        raise ValueError(f"distractor text {text!r} does not hold its value {value!r}")
    return Distractor(value, text)


def misread(memory: MemoryPiece, dynamic: str, value: str, plan: list[ToolCall]) -> Misreading:
    return Misreading(memory.id, dynamic, value, plan)  # type: ignore[arg-type]  # a family passes one of the dynamics


def misreadings_of(pieces: list[MemoryPiece],
                   plan_for: Callable[[str, str], list[ToolCall] | None]) -> list[Misreading]:
    """For every superseded and distractor value of ``pieces``, the plan an agent that took it
    for the final value would run (``plan_for(memory id, value)``; None: no plan for it)."""
    out = []
    for p in pieces:
        for value in p.superseded:
            plan = plan_for(p.id, value)
            if plan is not None:
                out.append(misread(p, "superseded", value, plan))
        for d in p.distractors:
            plan = plan_for(p.id, d.value)
            if plan is not None:
                out.append(misread(p, "distractor", d.value, plan))
    return out


def chance(inp: "FamilyInput", p: float) -> bool:
    """A seeded coin: memory dynamics are drawn per task, not per family."""
    return inp.rng.random() < p


def mistaken_for(inp: FamilyInput, others: list[str], first: str, near_value: str,
                 near_text: str) -> tuple[tuple[str, ...], tuple[Distractor, ...]]:
    """A piece's dynamics drawn from ``others`` (what it could be taken for): sometimes one said
    first and corrected later (``first``), then sometimes a near miss (``near_value``, ``near_text``);
    each a format string of the other value. ``others`` loses the one said first."""
    superseded: tuple[str, ...] = ()
    if others and chance(inp, DRAFT.correct):
        superseded = (first.format(others.pop(inp.rng.randrange(len(others)))),)
    if others and chance(inp, DRAFT.distract):
        other = inp.rng.choice(others)
        return superseded, (near(near_value.format(other), near_text.format(other)),)
    return superseded, ()


def distinct(a: str, b: str) -> bool:
    """Neither value holds the other (case-insensitive), so each can be found in a turn on its own."""
    return a.lower() not in b.lower() and b.lower() not in a.lower()


def key_dynamics(inp: FamilyInput, key: str, others: list[str], near_text: str) -> tuple[tuple[str, ...], tuple]:
    """An earlier key said and corrected later, and a near-miss key, drawn from ``others`` (keys
    whose answers differ from ``key``'s); either may be absent."""
    others = [o for o in others if distinct(o, key)]
    inp.rng.shuffle(others)
    superseded: tuple[str, ...] = ()
    distractors: tuple = ()
    if others and chance(inp, DRAFT.correct):
        superseded = (others.pop(),)
    others = [o for o in others if all(distinct(o, s) for s in superseded)]
    if others and chance(inp, DRAFT.distract):
        other = others.pop()
        distractors = (near(other, near_text.format(other)),)
    return superseded, distractors


def guess_total(guess: tuple[Table, int, int] | None) -> float | None:
    """The total the intent alone would give (the first sheet's first summable column), if any."""
    return round(sum(guess[0].column(guess[2])), 2) if guess else None


def guessed_right(guess: tuple[Table, int, int] | None, total: float) -> bool:
    """Whether the intent-alone guess already gives ``total`` (then the task tests nothing)."""
    guessed = guess_total(guess)
    return guessed is not None and abs(guessed - total) <= 0.01


def call(tool: str, **args: Any) -> ToolCall:
    return ToolCall(tool, args)


def answer_from(app: str, file: str, text: str) -> list[ToolCall]:
    """The plan of a question answered from one file: read it with ``app``'s tool, write ``text``."""
    return [call(f"{app}_read_file", file_path=file), call("system_write_answer", text=text)]


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def sender_user(message: dict) -> str:
    """The user name of a mail's sender (``hugo`` of ``hugo@example.com``)."""
    return message.get("from", "").split("@")[0].strip(" <>\"'")


def name_of(inp: FamilyInput, user: str) -> str | None:
    """The full name of the colleague with user name ``user``, if one has it."""
    return next((n for u, n in inp.colleagues if u == user), None)


FILE_WORDS = ("notes", "summary", "brief", "update", "recap", "plan")


def out_name(inp: FamilyInput, prefix: str, ext: str) -> str:
    """A new file's name as people date them: ``memo_brief_may21.docx`` (a day the month has)."""
    month = inp.now.strftime("%b").lower()
    return f"data/{prefix}_{inp.rng.choice(FILE_WORDS)}_{month}{inp.rng.randint(1, 28)}.{ext}"


def weekday_text(day) -> str:
    """A day as said: ``Tuesday May 7``."""
    return day.strftime("%A %B %d").replace(" 0", " ")


def present_on(inp: FamilyInput, day: date) -> list[tuple[str, str]]:
    """The colleagues (user, name) whose own mail does not say they are away on ``day`` (a holiday
    ahead, an out-of-office notice): nobody is invited to a meeting on a day they said they are out."""
    away = _away_on(inp.notes, inp.user, day)
    return [(u, n) for u, n in inp.colleagues if u not in away]


_AWAY: Kept[tuple[Any, Any]] = Kept(256)  # a world's mail notes, user and day -> who is away (asked mostly of today)


def _away_on(notes: dict[str, dict[str, Any]], user: str, day: date) -> frozenset[str]:
    """The senders (user names) whose mail in ``user``'s inbox says they are away on ``day``."""
    email = notes.get("email", {})

    def away() -> frozenset[str]:
        found = set()
        for m in inbox_of(notes, user):
            when = m.get("date", "")
            span = _away_said(when, str(m.get("body", ""))) if isinstance(when, str) else _away_of(m)
            if span is not None and span[0] <= day <= span[1]:
                found.add(sender_user(m))
        return frozenset(found)

    return _per_notes(_AWAY, email, (user, day), away)


def _away_of(message: dict[str, Any]) -> tuple[date, date, bool] | None:
    """The days a mail says its sender is away (``away_span`` of its own words on the day it was
    sent); None when it says none or its date does not read."""
    try:
        sent = parsedate_to_datetime(message.get("date", "")).date()
    except (TypeError, ValueError):
        return None
    return away_span(own_words(message), sent)


@lru_cache(maxsize=1024)  # the drafts of one world read its inbox again, family after family
def _away_said(when: str, body: str) -> tuple[date, date, bool] | None:
    return _away_of({"date": when, "body": body})


def mails_someone_away(inp: FamilyInput, draft: TaskDraft) -> bool:
    """Whether the draft's oracle sends mail to a colleague the office shows away on its day."""
    sent = {c.args.get("recipient") for c in draft.oracle if c.tool == "email_send_email"}
    if not sent:
        return False
    here = {u for u, _ in present_on(inp, inp.now.date())}
    return any(u in sent and u not in here for u, _ in inp.colleagues)


def all_invoice_facts(inp: FamilyInput, unpaid: bool = False) -> list[tuple[str, str, float]]:
    """(file, invoice number, total) of every PDF whose lines name an invoice number and a total,
    in the listing's order; the last number on the last line mentioning a total is the amount due.
    ``unpaid``: only invoices without a paid status (nothing is still due on one marked paid)."""
    out = []
    for doc in docs(inp.notes, "pdf"):
        if unpaid and any(line.lower().startswith("status: paid") for line in doc["lines"]):
            continue
        number = next((word for line in doc["lines"] if "invoice" in line.lower() and "number" in line.lower()
                       for word in line.replace(":", " ").replace("#", " ").split()
                       if any(ch.isdigit() for ch in word)), None)
        totals = [n for line in doc["lines"] if "total" in line.lower()
                  for n in (number_in_words(line),) if n is not None]
        if number and totals:
            out.append((doc["file"], number, totals[-1]))
    return out


def invoice_facts(inp: FamilyInput, unpaid: bool = False) -> tuple[str, str, float] | None:
    """One invoice of :func:`all_invoice_facts`, at random; None when there is none."""
    found = all_invoice_facts(inp, unpaid)
    return inp.rng.choice(found) if found else None


def number_in_words(line: str) -> float | None:
    """The last number written in ``line`` (thousands separators and currency signs ignored)."""
    found = None
    for word in line.replace("$", " ").split():
        value = number(word.strip(".,;:()"))
        if value is not None:
            found = value
    return found


# -- what a column's numbers mean ------------------------------------------------------------

_LEVEL_WORDS = ("price", "rate", "score", "grade", "percent", "%", "rating", "age", "average", "mean", "final",
                "module", "index", "ratio", "margin", "per ", "score", "level", "discount")
_ADDITIVE_WORDS = ("amount", "total", "cost", "revenue", "sales", "salary", "units", "quantity", "qty", "hours",
                   "spend", "spent", "budget", "actual", "paid", "count", "headcount", "stock", "on hand",
                   "q1", "q2", "q3", "q4", "value", "fee", "expense", "invoiced", "ordered", "received")


def additive(header: str) -> bool:
    """Whether a column's numbers add up to something meaningful (amounts, counts, hours), as
    opposed to levels (prices, rates, scores) that one averages or compares but never totals."""
    text = f" {header.lower()} "
    if any(word in text for word in _LEVEL_WORDS):
        return False
    return any(word in text for word in _ADDITIVE_WORDS)


def computed(value: Any, op: str, inputs: list[Any], *, given: tuple[str, ...] = (), rule: str = "",
             note: str = "") -> dict[str, Any]:
    """One entry of a draft's ``computed`` list (checked by ``verifier.trace``)."""
    entry: dict[str, Any] = {"value": value, "op": op, "inputs": list(inputs)}
    if given:
        entry["given"] = list(given)
    if rule:
        entry["rule"] = rule
    if note:
        entry["note"] = note
    return entry


def column_sum(table: "Table", col: int, given: tuple[str, ...] = ()) -> dict[str, Any]:
    values = table.column(col)
    return computed(round(sum(values), 2), "sum", [fmt(v) for v in values], given=given,
                    note=f"{table.headers[col]} column of {table.file}")


def extreme(table: "Table", label: int, col: int, highest: bool, given: tuple[str, ...] = ()) -> dict[str, Any]:
    """The label of the row with the highest (or lowest) value of ``col``, as a computation."""
    pairs = [x for row, v in zip(table.rows, table.column(col)) for x in (row[label], fmt(v))]
    values = table.column(col)
    target = max(values) if highest else min(values)
    return computed(table.rows[values.index(target)][label], "argmax" if highest else "argmin", pairs, given=given,
                    note=f"{table.headers[label]} with the {'highest' if highest else 'lowest'} {table.headers[col]}")


_FACT_RE = re.compile(rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?"
                      rf"|\d+(?:\.\d+)? (?:{CODE}|days|units|people)"
                      r"|\d{1,2}:\d{2})\b")


def facts_in(text: str) -> list[str]:
    """Specifics written in ``text`` that a reply or a memo could have to repeat: dates, amounts
    with thousands separators or a unit, clock times."""
    return _FACT_RE.findall(text)


# -- calendar and mail pieces every meeting or message family uses -----------------------------

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


@lru_cache(maxsize=4096)  # an office's events are read by every family drawn on it and every hour a booking might take
def event_time(text: str) -> datetime:
    """An event's start or end as the calendar notes write it (``TIME_FORMAT``)."""
    return datetime.strptime(text, TIME_FORMAT)


def booking(user: str, summary: str, start: datetime, end: datetime) -> ToolCall:
    """The tool call that puts an event on ``user``'s calendar."""
    return call("calendar_create_event", user=user, summary=summary, start=start.strftime(TIME_FORMAT),
                end=end.strftime(TIME_FORMAT))


def event_check(user: str, summary: Any, start: datetime, end: datetime) -> dict[str, Any]:
    """The criterion that ``user``'s calendar holds the event, titled like ``summary``, at that time."""
    return cr.calendar_event(username=user, summary=summary, start=start.strftime(TIME_FORMAT),
                             end=end.strftime(TIME_FORMAT))


def send(inp: FamilyInput, to: str, subject: str, content: str) -> ToolCall:
    """The tool call that sends ``to`` a mail from the user, ``content`` as it stands."""
    return call("email_send_email", sender=inp.user, recipient=to, subject=subject, content=content)


def mail(inp: FamilyInput, to: str, to_name: str, subject: str, body: str) -> ToolCall:
    """The tool call that sends ``to`` a short mail from the user (a :func:`letter` to ``to_name``)."""
    return send(inp, to, subject, letter(to_name, body, inp.user_name))


def booked_and_mailed(inp: FamilyInput, title: str, start: datetime, end: datetime, who: str,
                      keywords: list[str]) -> list[dict[str, Any]]:
    """The criteria of a booking the user then mails someone about: the event in the user's
    calendar, and a mail to ``who`` that holds ``keywords`` (the title may head its subject)."""
    return [event_check(inp.user, title, start, end),
            cr.email_sent(sender=inp.user, recipient=who, body_keywords=keywords)]


def letter(to: str, body: str, sender: str) -> str:
    """A short mail: greeting by first name, the text, and the sender's first name."""
    return f"Hi {to.split()[0]},\n\n{body}\n\nBest,\n{sender.split()[0]}"
