"""The offline Plus generator: an OfficeBench instruction -> intent, memory, subtasks, dialogue.

``regenerate(seed_task, seed=..., days=5, utterances_per_day=70, feedback="")`` rewrites one seed
task (anything with ``instruction``, ``username``, ``now`` and ``app_count``) by rule:

- **clauses**: the instruction is split on ``,``, ``;``, sentence ends (``.``, ``!``, ``?``
  before a capital, a digit or the end), `` then `` and `` and `` -- the last only when a verb
  or a subject pronoun follows (``email Bob and Carol`` stays whole, ``... and email Bob``
  splits). Nothing inside a specific is ever split (``May 17, 2024``, ``12,500``, ``a.m.``,
  quoted text); a leading ``and``/``then`` is dropped; a one-word clause joins its neighbour.
- **memory**: one piece per clause; ``text`` is the clause, ``value`` its most specific token
  that no other clause contains (file, e-mail address, date, time, number, quoted text, person,
  app -- in that order of preference, longer first; alphabetic values need three letters), else
  the clause itself. Clauses that open with a verb are actions, the rest facts. So every
  specific of the instruction is in some piece's text and reaches the dialogue verbatim.
- **subtasks**: the clauses (consecutive ones merged when there are more than five).
- **intent** and **query**: the apps and actions of the instruction in neutral words (``Please
  take care of the spreadsheet update and the message I described earlier.``), chosen by the
  seeded random stream among wordings that contain none of the instruction's specifics and
  none of the memory values.
- **sessions**: ``generators.dialogue_offline.generate_dialogue`` on a ``TaskDraft`` holding
  these pieces (if some value proves too generic for the small-talk banks, the clauses
  themselves become the values and it is tried once more).
- **other works**: given ``others`` (the split's other instructions, in the order to try),
  those that share nothing distinctive with this one are told as the history's other works: up
  to four as sibling works, their pieces planned and written exactly as the task's are (a detail
  left for the next turn, said against an anchor, corrected, met by a near miss; unmarked), the
  rest as jobs for later in their own requests and questions (``plus_siblings``, ``told_jobs``).

The same arguments give the same draft; another ``feedback`` gives another dialogue (and may
pick another intent wording).

Layering note: the specifics finder lives with its check in ``generators.specifics`` (a module
with no project imports); this generator uses it so that what it carries is exactly what the
verifier looks for.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, Iterable, Literal, Protocol, Sequence, cast

from generators.chances import DRAFT, HISTORY
from generators.decoys import ToldJob, told_in_order
from generators.dialogue_offline import generate_dialogue, plan_dialogue
from generators.history_plan import weeks_of_full_days
from generators.model import Distractor, MemoryPiece, Session, TaskDraft
from generators.near_values import OTHER_PEOPLE, near_value, spoils_span
from generators.sibling_works import Sibling, sibling_pieces
from generators.specifics import Specific, contains_specific, find_specifics, locate_specifics
from generators.spoken_time import say_days_within
from generators.thread_bank import threads
from generators.typos import fix_typos, word_frequency
from office_env.apps import registered_apps, registry_cache
from office_env.limits import MAX_TOLD_INSTRUCTION_CHARS
from office_env.seeding import rng as seeded

MAX_SUBTASKS = 5
_PATH_KEYS = ("file", "result_file", "input_file", "output_file")

_KIND_RANK = {"file": 0, "email": 1, "date": 2, "time": 3, "number": 4, "quoted": 5, "person": 6, "app": 7}

# Verbs that open an action clause, and what the intent calls that kind of work.
_ACTION_NOUN = {
    **dict.fromkeys("change update set edit modify fill replace correct swap adjust enter insert increase "
                    "decrease raise lower mark highlight append".split(), "update"),
    **dict.fromkeys("write create draft compose prepare make type generate produce".split(), "write-up"),
    **dict.fromkeys("add put include attach".split(), "addition"),
    **dict.fromkeys("delete remove cancel clear erase".split(), "clean-up"),
    **dict.fromkeys("open paste post upload download".split(), "update"),
    **dict.fromkeys("find calculate compute count sum check look read extract summarize summarise compare "
                    "identify determine get search list average total tell answer retrieve review scan collect gather "
                    "obtain analyze analyse take".split(), "lookup"),
    **dict.fromkeys("convert export save turn print".split(), "conversion"),
    **dict.fromkeys("rename move copy sort merge reorder organize organise split assign group".split(), "reshuffle"),
    **dict.fromkeys("send email e-mail mail reply forward notify inform invite respond share ask remind "
                    "confirm".split(), "message"),
    **dict.fromkeys("schedule book arrange reschedule".split(), "scheduling"),
}
_SUBJECTS = frozenset("i we he she they you".split())
# Verbs that are as often nouns after "and" ("its number and total"): no split there.
_NOUN_LIKE = frozenset("total sum average count list mark copy draft type print review answer share record "
                       "check look turn set".split())
_AND_VERBS = frozenset(_ACTION_NOUN) - _NOUN_LIKE
# A dot after these is no sentence end ("Dr. Smith").
_ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr vs etc inc ltd co no e.g i.e approx dept".split())
# Words any office instruction may say besides the apps' names and works: two instructions that share
# only these are about different things.
_OFFICE_TEXT_WORDS = frozenset("""emails mail mails file files sheet sheets docx xlsx pdfs event events
folder data documents messages named name names column columns row rows table tables list report reports
answer answers result results text content contents""".split())


@dataclass(frozen=True)
class AppTables:
    """The office apps' tables, made from their registry entries (``office_env.apps``) when first
    used and again after an app is registered or taken out (``app_tables``)."""

    order: tuple[str, ...]  # the office apps in the registry's order
    by_extension: dict[str, str]  # a file kind -> the app that opens it
    by_doc_type: dict[str, str]  # an OfficeBench doc type -> the app it means
    spoken: tuple[tuple[re.Pattern[str], str], ...]  # a pattern a person names an app with -> the app
    by_check: tuple[tuple[str, str], ...]  # the prefix of checks that touch only one app -> that app
    area: dict[str, str]  # what people call each app's work ("spreadsheet")
    office_words: frozenset[str]  # words any instruction may say (the apps' names and works among them)
    # the apps of files a colleague confuses with another ("the excel file", said "the word file"), and
    # their names before a file word
    file_apps: frozenset[str]
    file_app: re.Pattern[str]


_FILE_WORD = r"(?:files?|documents?|docs?|sheets?|spreadsheets?|reports?)\b"


@registry_cache(maxsize=1)
def app_tables() -> AppTables:
    """The tables of the apps registered now."""
    office = tuple(a for a in registered_apps() if a.office)
    area = {a.name: a.work for a in office}
    file_apps = [a.name for a in office if a.layout == "documents" and a.name in a.near_miss]
    return AppTables(
        order=tuple(a.name for a in office),
        by_extension={ext: a.name for a in office for ext in a.extensions},
        by_doc_type={doc_type: a.name for a in office for doc_type in a.doc_types},
        spoken=tuple((re.compile(pattern), a.name) for a in office for pattern in a.spoken),
        by_check=tuple((a.checks, a.name) for a in office if a.checks),
        area=area,
        office_words=frozenset(area.values()) | frozenset(a.name for a in office) | _OFFICE_TEXT_WORDS,
        file_apps=frozenset(file_apps),
        file_app=re.compile(rf"\b({'|'.join(map(re.escape, file_apps))})(?= {_FILE_WORD})", re.IGNORECASE))


_LEADS = ("Please take care of", "Could you handle", "I need you to finish", "Go ahead with",
          "Please get on with")
_TAILS = ("I described earlier", "we talked about over the last few days", "I mentioned in our chats",
          "I told you about this week", "from our recent conversations")
# The query re-asks the intent with its topic (a word of the work, never a specific), so that a
# retriever has something to match; "{topic}" is e.g. "the score spreadsheet".
_TOPIC_QUERIES = ("Can you take care of {topic} now?", "Could you finish {topic} now, please?",
                  "Time to do {topic} I asked about.", "Please get {topic} done now.",
                  "Let's finish {topic} now.", "Where are we with {topic}? Please do it now.")
_STOPWORDS = frozenset("""the a an of in on at to for from with and or by into as is are be been this that these
those it its his her their our your my me all each every new file files named name based about also than then there
some any other one two three more most less same using use used only just not no yes please should would could
will can must need needs want wants make sure following format value values number numbers total data""".split())
_FALLBACK_INTENTS = ("Please handle what I asked for in our recent chats.",
                     "Please do what we discussed.", "Go ahead with the plan from our chats.")
_QUERIES = ("Can you take care of it now?", "Could you get that done now, please?",
            "Please go ahead with it now.", "Can you handle that for me now?", "Time to get that done, please.")


class SeedLike(Protocol):
    @property
    def instruction(self) -> str: ...

    @property
    def username(self) -> str: ...

    @property
    def app_count(self) -> int: ...

    @property
    def now(self) -> datetime: ...


@dataclass
class PlusDraft:
    """What the Plus generator returns for one seed task."""

    intent: str
    query: str
    memory: list[MemoryPiece]
    subtasks: list[str]
    sessions: list[Session]
    apps: list[str]
    description: str
    specifics: list[Specific] = field(default_factory=list)

    def task_draft(self, evaluation: list[dict[str, Any]] | None = None) -> TaskDraft:
        """The draft as a ``TaskDraft`` (no oracle plan), e.g. for ``check_dialogue``."""
        return TaskDraft(family="plus", apps=list(self.apps), difficulty="medium", description=self.description,
                         intent=self.intent, subtasks=list(self.subtasks), evaluation=list(evaluation or []),
                         memory=list(self.memory), query=self.query, oracle=[])

    def dialogue_text(self) -> str:
        return "\n".join(t.text for s in self.sessions for t in s.turns)

    def dated_turns(self) -> list[tuple[str, date | None]]:
        """Each turn's text with the day it was said on (a date may be said in words)."""
        return [(t.text, _day(s.date)) for s in self.sessions for t in s.turns]


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except (TypeError, ValueError):
        return None


# -- clauses -------------------------------------------------------------------------------------

_SEP = re.compile(r"[;]|[.!?]+(?=\s+[A-Z0-9\"'“‘(]|\s*$)|,?\s+((?i:and\s+then|then|and))\s+(?=([\w-]+))"
                  r"|,\s+(?=([\w-]+))")
_LEADING = re.compile(r"^(?:and\s+then|and|then)\s+", re.IGNORECASE)
_TRAILING = " \t\n,;.!?"
_WH = frozenset("how what which who whom whose when where why".split())
_AUX = frozenset("is are was were do does did can could should will would has have".split())
MIN_CLAUSE_WORDS = 4  # a shorter piece is a fragment: it joins its neighbour


def _protected(text: str) -> list[bool]:
    mask = [False] * len(text)
    for start, end, _ in locate_specifics(text):
        for i in range(start, end):
            mask[i] = True
        for i in (start - 1, end):  # the quotes around quoted text
            if 0 <= i < len(text) and text[i] in "\"'“”‘’":
                mask[i] = True
    return mask


def _words(text: str) -> int:
    return len(text.split())


def split_clauses(instruction: str) -> list[tuple[int, int]]:
    """The clauses of ``instruction`` as ``(start, end)`` spans (see the module docstring)."""
    text = instruction
    mask = _protected(text)
    cuts: list[tuple[int, int]] = []  # separator spans
    for m in _SEP.finditer(text):
        if any(mask[m.start():m.end()]):
            continue
        word = (m.group(1) or "").lower()
        if word == "and":
            nxt = (m.group(2) or "").lower()
            if nxt not in _AND_VERBS and nxt not in _SUBJECTS:
                continue
        if m.group(3) is not None and m.group(3).lower() not in _AND_VERBS | _WH:
            continue  # a comma inside a list or a phrase ("hw1, hw2", ", with the format")
        if text[m.start()] == ".":
            before = re.search(r"([\w.]+)$", text[:m.start()])
            if before and before.group(1).lower() in _ABBREVIATIONS:
                continue
        cuts.append((m.start(), m.end()))
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in cuts + [(len(text), len(text))]:
        spans.append((pos, start))
        pos = end
    clauses: list[tuple[int, int]] = []
    for start, end in spans:
        while start < end and text[start].isspace():
            start += 1
        lead = _LEADING.match(text[start:end])
        if lead:
            start += lead.end()
        while end > start and text[end - 1] in _TRAILING and not mask[end - 1]:
            end -= 1
        if re.search(r"\w", text[start:end]):
            clauses.append((start, end))
    merged: list[tuple[int, int]] = []
    for start, end in clauses:  # a fragment joins the clause before it
        if merged and (_words(text[start:end]) < MIN_CLAUSE_WORDS
                       or _words(text[merged[-1][0]:merged[-1][1]]) < MIN_CLAUSE_WORDS):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    if not merged:
        stripped = text.strip()
        merged = [(text.find(stripped), text.find(stripped) + len(stripped))] if stripped else []
    # Every specific must lie inside one clause; if not (it should not happen), keep one clause.
    for start, end, _ in locate_specifics(text):
        if not any(s <= start and end <= e for s, e in merged):
            stripped = text.strip().rstrip(_TRAILING) or text.strip()
            first = text.find(stripped)
            return [(first, first + len(stripped))]
    return merged


def is_question(instruction: str, span: tuple[int, int]) -> bool:
    """Whether a clause asks something: it ends with a question mark, or opens with a question
    word or an auxiliary ("how many ...", "is there ...")."""
    start, end = span
    after = instruction[end:end + 2].lstrip(" ")
    if after.startswith("?") or instruction[start:end].rstrip().endswith("?"):
        return True
    return _first_word(instruction[start:end]) in _WH | _AUX


def group_clauses(instruction: str, clauses: Sequence[tuple[int, int]], limit: int = MAX_SUBTASKS) -> list[str]:
    """At most ``limit`` subtasks: consecutive clauses merged as evenly as possible, each merged
    subtask the instruction's own text from its first clause to its last."""
    if len(clauses) <= limit:
        return [instruction[s:e] for s, e in clauses]
    size, extra = divmod(len(clauses), limit)
    out, pos = [], 0
    for i in range(limit):
        n = size + (1 if i < extra else 0)
        out.append(instruction[clauses[pos][0]:clauses[pos + n - 1][1]])
        pos += n
    return out


# -- memory --------------------------------------------------------------------------------------

def _distinctive(value: str) -> bool:
    return bool(re.search(r"\d", value)) or len(re.sub(r"[^A-Za-z]", "", value)) >= 3


def _first_word(text: str) -> str:
    m = re.match(r"[\W_]*([A-Za-z][\w-]*)", text)
    return m.group(1).lower() if m else ""


def memory_pieces(instruction: str, clauses: Sequence[tuple[int, int]], *, token_values: bool = True
                  ) -> list[MemoryPiece]:
    """One piece per clause (see the module docstring)."""
    located = locate_specifics(instruction)
    texts = [instruction[s:e] for s, e in clauses]
    lowered = [t.lower() for t in texts]
    pieces = []
    for index, ((start, end), text) in enumerate(zip(clauses, texts)):
        value = text
        if token_values:
            inside = [spec for s, e, spec in located if start <= s and e <= end]
            others = [low for j, low in enumerate(lowered) if j != index]
            candidates = sorted(
                (spec for spec in inside
                 if _distinctive(spec.text) and not any(spec.text.lower() in low for low in others)),
                key=lambda spec: (_KIND_RANK[spec.kind], -len(spec.text)))
            if candidates:
                value = candidates[0].text
        kind: Literal["fact", "action"] = "action" if _first_word(text) in _ACTION_NOUN else "fact"
        said, _ = fix_typos(text)
        if value == text or not said.startswith(value):
            said = _said_within(said)
        if is_question(instruction, (start, end)):
            cue = "asked"
            said = said.rstrip(" ?") + "?"
        else:
            cue = "requested" if kind == "action" else "note"
        if value == text:  # the whole clause is the value: said as a person says it, days included
            said = say_days_within(said)
            value = said
        pieces.append(MemoryPiece(id=f"m{index + 1}", kind=kind, text=said, value=value, cue=cue))
    return pieces


# -- apps, intent, query ------------------------------------------------------------------------

def _ordered(apps: Iterable[str]) -> list[str]:
    found = set(apps)
    return [a for a in app_tables().order if a in found]


def _apps_of_text(text: str) -> list[str]:
    apps = []
    tables = app_tables()
    for spec in find_specifics(text):
        if spec.kind == "file":
            apps.append(tables.by_extension.get(spec.text.rsplit(".", 1)[-1].lower(), ""))
        elif spec.kind == "app":
            apps.append(next((app for pattern, app in tables.spoken if pattern.search(spec.text)), ""))
    return _ordered(a for a in apps if a)


def infer_apps(instruction: str, evaluation: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Apps (word, excel, pdf, email, calendar) that the instruction names (app words, file
    extensions) or that the criteria touch (doc types, file arguments, calendar/email checks);
    ``["system"]`` when there are none (an answer-file task)."""
    apps = list(_apps_of_text(instruction))
    tables = app_tables()
    for item in evaluation:
        if not isinstance(item, dict):
            continue
        function = str(item.get("function", ""))
        args = cast("dict[str, Any]", item.get("args")) if isinstance(item.get("args"), dict) else {}
        apps.extend(app for prefix, app in tables.by_check if function.startswith(prefix))
        doc_type = str(args.get("doc_type", "")).lower()
        if doc_type in tables.by_doc_type:
            apps.append(tables.by_doc_type[doc_type])
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and "." in value:
                apps.append(tables.by_extension.get(value.rsplit(".", 1)[-1].lower(), ""))
    return _ordered(a for a in apps if a) or ["system"]


def _phrase(clause: str) -> str | None:
    apps = _apps_of_text(clause)
    area = app_tables().area[apps[0]] if apps else None
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w-]*", clause)]
    action = next((_ACTION_NOUN[w] for w in words if w in _ACTION_NOUN), None)
    if action == "message" or area == "message":
        return "the message"
    if action == "scheduling" or (area == "schedule" and action in ("addition", "write-up", None)):
        return "the scheduling"
    if area and action:
        return f"the {area} {action}"
    if area:
        return f"the {area} work"
    if action:
        return f"the {action}"
    return None


def _listing(items: Sequence[str]) -> str:
    if len(items) > 3:
        items = [*items[:2], "the rest"]
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _clean(sentence: str, specifics: Sequence[Specific], values: Sequence[str]) -> bool:
    low = sentence.lower()
    return not any(contains_specific(sentence, s) for s in specifics) and not any(v.lower() in low for v in values)


def _pick(candidates: Sequence[str], rng: random.Random, specifics: Sequence[Specific], values: Sequence[str]) -> str:
    order = list(candidates)
    rng.shuffle(order)
    for sentence in order:
        if _clean(sentence, specifics, values):
            return sentence
    return order[0]  # every wording leaks: the verifier will say so


def make_intent(clauses: Sequence[str], specifics: Sequence[Specific], values: Sequence[str],
                rng: random.Random) -> str:
    phrases = list(dict.fromkeys(p for p in (_phrase(c) for c in clauses) if p)) or ["the request"]
    things = _listing(phrases)
    wordings = []
    for lead in _LEADS:
        for tail in _TAILS:
            end = "?" if lead.startswith("Could") else "."
            wordings.append(f"{lead} {things} {tail}{end}")
    sentence = _pick(wordings, rng, specifics, values)
    if _clean(sentence, specifics, values):
        return sentence
    return _pick(_FALLBACK_INTENTS, rng, specifics, values)


_NOT_NOUN = ("ly", "est", "ed")  # adverbs, superlatives, participles do not name the work
# words that say which or how, not what: "the containing spreadsheet", "the first spreadsheet"
_NOT_TOPIC = frozenset("""containing contains satisfying satisfy transferring travelling sleeping editing
first second third last further previous earlier later separate corresponding under over them they him
least maximum minimum effective ascending descending alphabetic alphabetical short long sent common incoming
outgoing annual duplicate word sheet excel spreadsheet document pdf message schedule calendar email
respective respectively specific specified certain given whole entire original receive past traveling""".split())
_BEFORE_NOUN = r"(?i)(?:\b(?:the|a|an|all|his|her|their|our|my|each|every|of|in|for|from|about)|'s)\s+$"
_AFTER_NOUN = r"(?i)\s+(?:excel|file|files|pdf|word|sheet|spreadsheet|document|column|list|report|table|data)\b"


def topic_of(instruction: str, specifics: Sequence[Specific], apps: Sequence[str]) -> str:
    """A short name for the work: the instruction's most topical word (the rarest in English among
    its known words that are no specific, no verb and no filler) and the app it is done in:
    ``the salary spreadsheet``; only the app (``the spreadsheet``) when no word qualifies."""
    masked = instruction
    for start, end, _ in sorted(locate_specifics(instruction), reverse=True):
        masked = masked[:start] + " " + masked[end:]
    skip = _STOPWORDS | set(_ACTION_NOUN) | _WH | _AUX | _SUBJECTS | _NOT_TOPIC
    masked = fix_typos(masked)[0]
    found = [(m.group(1).lower(), m.start(1)) for m in re.finditer(r"(?<![\w.])([A-Za-z]{4,})(?![\w.])", masked)]
    words = [(w, at) for w, at in found if w not in skip and word_frequency(w) > 0 and not w.endswith(_NOT_NOUN)
             and not any(contains_specific(w, s) for s in specifics)]
    areas = app_tables().area
    area = areas.get(apps[0], "work") if apps and apps[0] in areas else "task"
    if not words:
        return f"the {area}"
    # a noun place: after an article, a possessive or a preposition, or before a file word
    nouny = [w for w, at in words if re.search(_BEFORE_NOUN, masked[:at])
             or re.match(_AFTER_NOUN, masked[at + len(w):])]
    word = min(nouny or [w for w, _ in words], key=word_frequency)  # the rarest says what it is about
    return f"the {word}" if word == area else f"the {word} {area}"


def content_words(text: str) -> set[str]:
    """The plain words of ``text`` that can say what it is about (four letters or more, no filler)."""
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)} - _STOPWORDS - _WH - _AUX - _SUBJECTS


def query_names_work(query: str, instruction: str) -> bool:
    """Whether ``query`` holds a plain word of the instruction (typos corrected or not) or the
    name of an app's work; an instruction without such words asks nothing of its query."""
    wanted = content_words(fix_typos(instruction)[0]) | content_words(instruction)
    said = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", query)}
    return not wanted or bool(said & (wanted | set(app_tables().area.values()) | {"task"}))


def plus_problems(draft: PlusDraft, instruction: str) -> list[str]:
    """The Plus rules both backends must meet: every memory piece a whole clause (no fragment of
    fewer than ``MIN_CLAUSE_WORDS`` words unless the instruction itself is that short), and a
    query that names the work with a plain word of the instruction."""
    problems = []
    if _words(instruction) >= MIN_CLAUSE_WORDS:
        for piece in draft.memory:
            if _words(piece.text) < MIN_CLAUSE_WORDS:
                problems.append(f"memory {piece.id}: {piece.text!r} is a fragment; keep the clause whole")
    if not query_names_work(draft.query, instruction):
        problems.append(f"query: {draft.query!r} names nothing of the work; re-ask the intent with its topic")
    return problems


# -- the generator -------------------------------------------------------------------------------

def _first_name(username: str) -> str:
    part = re.split(r"[._\s-]+", username.strip())[0] if username.strip() else ""
    return part[:1].upper() + part[1:] if part else "there"


# Over weeks of short sessions its one line of work is talked about without values this often at
# least: little else is said of it, and a person calls it several ways.
PLUS_MENTIONS = 4
_NEAR_TEXTS = {"file": "{alt} is an old copy, not the one we use",
               "number": "{alt} was last year's figure, not this one",
               "time": "{alt} is already taken by another meeting", "date": "{alt} was the old date, that one is gone",
               "person": "{alt} has nothing to do with this one"}
def _near_text(piece: MemoryPiece, alt: str, kinds: dict[str, str], rng: random.Random) -> str:
    """A near miss said of the same work: the piece's own sentence with ``alt`` in place of its
    value, as an old note or a colleague's guess has it (so the sentence's words are said in a turn
    that is not the evidence too); a short remark when the sentence does not hold the value."""
    if piece.value in piece.text:
        return _near_sentence(piece.text.rstrip(" .?!").replace(piece.value, alt), rng)
    return _NEAR_TEXTS[kinds[piece.value]].format(alt=alt)


def _near_sentence(sentence: str, rng: random.Random) -> str:
    line = rng.choice(threads().lines[("near_clause", "any")])
    return line.render({"value": sentence, "who": rng.choice(OTHER_PEOPLE)})


def _weak(value: str, kind: str) -> bool:
    """A near value too plain to stand alone in a chat ("word", "calendar"): the whole sentence is
    the near miss instead."""
    return kind == "app" or not _distinctive(value)


# a pair's word in a set phrase says no item ("lower case", "best regards", "look after", "First, ..."):
# it is never changed there
_FIXED_PHRASE = re.compile(r"(?i)\b(?:lower case|upper case|best regards|look after|after all|at first|first of all"
                           r"|top up|at last|at the latest|at the earliest|at best|at worst)\b|^(?:first|last),")


def _word_swaps(text: str) -> list[tuple[int, int, str]]:
    """Where ``text`` says a word of a ``near_word`` pair whose other word it does not say, and that
    other word, in the case the text writes it ("highest" -> "lowest")."""
    swaps, own = threads().near_words, set(re.findall(r"[a-z]+", text.lower()))
    fixed = [(f.start(), f.end()) for f in _FIXED_PHRASE.finditer(text)]
    return [(m.start(), m.end(), _cased(swaps[m.group(0).lower()], m.group(0)))
            for m in re.finditer(r"(?<![\w'-])[A-Za-z]+(?![\w'-])", text)
            if m.group(0).lower() in swaps and swaps[m.group(0).lower()] not in own
            and not any(a <= m.start() and m.end() <= b for a, b in fixed)]


def _swapped(value: str, rng: random.Random) -> str | None:
    """``value`` with one word of a ``near_word`` pair put for its other ("average salary" -> "median
    salary", "monthly" -> "yearly"); None when it says none."""
    found = _word_swaps(value)
    if not found:
        return None
    start, end, alt = rng.choice(found)
    return value[:start] + alt + value[end:]


def _cased(word: str, like: str) -> str:
    """``word`` written in the case ``like`` is written in (Highest -> Lowest, HIGHEST -> LOWEST)."""
    return word.upper() if like.isupper() and len(like) > 1 else word.capitalize() if like[:1].isupper() else word


def _sentence_near(piece: MemoryPiece, others: Sequence[str], rng: random.Random) -> Distractor | None:
    """A near miss of a piece whose value has none of its own (another app, a whole clause): the
    piece's sentence with one specific changed (or the app it names: "a new pdf file", or for a whole
    clause a word of the bank's ``near_word`` pairs: "the lowest score" for "the highest"), said as
    an old note or a colleague's guess; its value is that whole sentence (no other turn holds it)
    and holds no value of ``others``. None when nothing in it can change."""
    text = piece.text.rstrip(" .?!")
    tables = app_tables()
    # (an app of files is changed only where a file word follows: "the invoice PDF" is no "invoice Excel")
    changes = [(s, e, near_value(spec.text, spec.kind, rng)) for s, e, spec in locate_specifics(text)
               if (piece.value == piece.text or piece.value not in text or spec.text == piece.value)
               and not (spec.kind == "app" and spec.text.lower() in tables.file_apps)]
    if tables.file_apps and (piece.value == piece.text or piece.value.lower() in tables.file_apps):
        changes += [(m.start(), m.end(), near_value(m.group(1), "app", rng)) for m in tables.file_app.finditer(text)]
    if piece.value == piece.text:  # another item of the same kind: "the lowest score" for "the highest"
        changes += _word_swaps(text)
    own = piece.value.rstrip(" .?!").lower()
    said = [v.rstrip(" .?!").lower() for v in others if v and v.strip(" .?!")]
    for start, end, alt in rng.sample(changes, len(changes)):
        # a value the sentence holds already is no change ("from 15:00 to 15:00", "the excel to excel")
        if not alt or alt.lower() == text[start:end].lower() or alt.lower() in text.lower():
            continue
        sentence = text[:start] + alt + text[end:]
        low = sentence.lower()
        if own in low or any(v in low for v in said) or spoils_span(text, sentence):
            continue
        return Distractor(sentence, _near_sentence(sentence, rng))
    return None


def _dynamics(memory: list[MemoryPiece], kinds: dict[str, str], instruction: str, rng: random.Random
              ) -> list[MemoryPiece]:
    """The pieces with, by chance, one value said first and corrected later and one near miss:
    what an agent that takes the first mention, or the wrong file, must get wrong. A piece whose
    value has no near value of its own that a chat can carry (or none that fits its sentence this
    time) gets its sentence's near miss. Where no piece has a near value, a whole clause said first
    with a detail changed (a question still a question) is the earlier value, corrected in lines
    that carry a whole clause (``correct.sentence``) and never turned down later."""
    taken = instruction.lower()

    def alternative(piece: MemoryPiece) -> str | None:
        kind = kinds.get(piece.value, "")
        alt = near_value(piece.value, kind, rng)
        if alt is None and piece.value != piece.text:  # a title or a word of no near kind: its pair's other word
            alt = _swapped(piece.value, rng)
        if (not alt or _weak(alt, kind) or alt.lower() in taken or piece.value.lower() in alt.lower()
                or alt.lower() in piece.value.lower() or spoils_span(piece.text, piece.text.replace(piece.value, alt))):
            return None  # (a near day never makes its sentence's span end before it starts)
        return alt

    def said_besides(i: int) -> list[str]:  # the values the other pieces say, first and last
        return [v for j, p in enumerate(out) if j != i for v in (p.value, *p.superseded)]

    out = list(memory)
    if rng.random() < DRAFT.plus_correct:
        options = [(i, alt) for i, p in enumerate(out) for alt in [alternative(p)] if alt]
        if not options:  # requests with no value of their own: one said first with a detail changed
            options = [(i, near.value + ("?" if p.text.rstrip().endswith("?") else "")) for i, p in enumerate(out)
                       if p.value == p.text for near in [_sentence_near(p, said_besides(i), rng)] if near]
        if options:
            i, old = rng.choice(options)
            out[i] = replace(out[i], superseded=(old,))
    if rng.random() < DRAFT.plus_distract:
        nears: list[tuple[int, Distractor]] = []
        for i, piece in enumerate(out):
            alt = _fresh(piece, (), alternative)
            if alt:
                nears.append((i, Distractor(alt, _near_text(piece, alt, kinds, rng))))
            elif alternative(piece) is None:
                if near := _sentence_near(piece, [*said_besides(i), *piece.superseded], rng):
                    nears.append((i, near))
        if nears:  # one near miss; a second for another piece as often as not
            picked = rng.sample(nears, min(len(nears), 2 if rng.random() < DRAFT.plus_second_near else 1))
            if len(nears) == 1 and rng.random() < DRAFT.plus_second_near:  # the one piece's own second
                picked += _second_near(out[nears[0][0]], nears[0], alternative, kinds, rng)
            for i, near in sorted(picked, key=lambda pair: pair[0]):
                out[i] = replace(out[i], distractors=(*out[i].distractors, near))
    return out


def _second_near(piece: MemoryPiece, first: tuple[int, Distractor], alternative: Any, kinds: dict[str, str],
                 rng: random.Random) -> list[tuple[int, Distractor]]:
    """A second near miss of the one piece that has a near value: another of its kind (a history
    of one value has as many wrong ones said in its forms as a history of two), or none."""
    index, near = first
    alt = _fresh(piece, (near.value,), alternative)
    return [(index, Distractor(alt, _near_text(piece, alt, kinds, rng)))] if alt else []


def _fresh(piece: MemoryPiece, said: Sequence[str], alternative: Any, tries: int = 4) -> str | None:
    """A near value of ``piece`` that is none of its values said already (its own, its earlier
    one, ``said``) nor holds one or is held by one; None after ``tries`` draws."""
    taken = [v.lower() for v in (piece.value, *piece.superseded, *said)]
    for _ in range(tries):
        alt = alternative(piece)
        if alt is None:
            return None
        if not any(alt.lower() in t or t in alt.lower() for t in taken):
            return alt
    return None


# Words a clause may open with that are no name: said after a lead-in, in lower case ("One detail
# for later, for each class separately."), as the verbs and question words are.
_FUNCTION_WORDS = frozenset("""a an the this that these those my our your his her their its it they we he she you
there here for in on at to from with by of and or but so then also after before each every all only just now
please if next first finally""".split())
_GLUED = re.compile(r"[.!?]\s+[a-z]")  # two sentences run together ("... in midterm 2. email them ...")
_OPENS_REQUEST = frozenset(_ACTION_NOUN) | _WH | _AUX  # a request's or a question's first word
# other words a seed's clause opens with that are no name ("Use OCR to ...", "Given an Excel ...")
_PLAIN_OPENERS = frozenset("use using given pull predict".split())
_LOWER_AFTER_LEAD = _OPENS_REQUEST | _FUNCTION_WORDS | _PLAIN_OPENERS  # first words said in lower case after a lead-in


def _said_within(clause: str) -> str:
    """A clause as said after a lead-in ("please find ...", "... : how many ...?"): its first word
    in lower case unless it is a name."""
    first = _first_word(clause)
    if first not in _LOWER_AFTER_LEAD or clause[1:2].isupper():
        return clause  # a name, or an acronym ("IT staff", "AT&T")
    return clause[:1].lower() + clause[1:]


def _distinctive_words(instruction: str, specifics: Sequence[Specific]) -> set[str]:
    """What an instruction is about: its plain words but the apps', files' and verbs', and the
    names of its people."""
    words = content_words(fix_typos(instruction)[0]) | content_words(instruction)
    people = {w.lower() for s in specifics if s.kind == "person" for w in re.findall(r"[A-Za-z]+", s.text)}
    return (words - app_tables().office_words - set(_ACTION_NOUN)) | people


@registry_cache(maxsize=4096)
def _told_job(other: str) -> ToldJob | None:
    """Another seed's instruction (one of ``_other_works``) as a job for later; None when it cannot
    be one: no topic that says what it is about ("the salary spreadsheet", never "the
    spreadsheet"), or no clause to tell (``_tellable_clause``; one that leans on a clause left out
    is left out too). Each instruction is read once however many histories it is offered to."""
    specifics = find_specifics(other)
    topic = topic_of(other, specifics, infer_apps(other))
    if len(topic.split()) < 3:
        return None
    pieces = memory_pieces(other, split_clauses(other), token_values=False)
    kept = told_in_order([p.text for p in pieces], _tellable_clause)
    if not kept:
        return None
    return ToldJob(topic, tuple((pieces[i].cue, pieces[i].text) for i in kept))


@registry_cache(maxsize=4096)
def _words_of(instruction: str) -> frozenset[str]:
    return frozenset(_distinctive_words(instruction, find_specifics(instruction)))


def _other_works(others: Sequence[str], instruction: str) -> Iterable[str]:
    """The instructions of ``others``, in order, that a history of ``instruction`` may tell as other
    work (a sibling or a job for later): within the told length, sharing no distinctive word or
    person with it, so that no other work could pass for the task."""
    mine = _words_of(instruction.strip())
    seen = {instruction.strip()}
    for other in others:
        other = other.strip()
        if other and other not in seen and len(other) <= MAX_TOLD_INSTRUCTION_CHARS and not _words_of(other) & mine:
            seen.add(other)
            yield other


def _tellable(others: Sequence[str], instruction: str) -> Iterable[tuple[str, ToldJob]]:
    """``(instruction, job)`` of each of ``_other_works`` that can be told as a job for later
    (``_told_job``)."""
    for other in _other_works(others, instruction):
        if (job := _told_job(other)) is not None:
            yield other, job


def tellable(others: Sequence[str], instruction: str) -> list[str]:
    """The instructions of ``others`` a history of ``instruction`` may tell, in order (``told_jobs``)."""
    return [other for other, _ in _tellable(others, instruction)]


def _no_template_slot(clause: str) -> bool:
    """Whether a clause holds no template braces of the seed's own ("rename it to {name}.pdf"):
    no person says a slot, so neither a job for later nor a sibling work tells such a clause."""
    return "{" not in clause and "}" not in clause


def _tellable_clause(clause: str) -> bool:
    """A clause told as a job's request or question: whole, opening with a verb or a question word,
    one sentence, no template braces (``_no_template_slot``)."""
    return (_words(clause) >= MIN_CLAUSE_WORDS and not _GLUED.search(clause) and _no_template_slot(clause)
            and _first_word(clause) in _OPENS_REQUEST)


def told_jobs(others: Sequence[str], instruction: str) -> list[ToldJob]:
    """Other seed tasks' instructions as this history's jobs for later, in the order of ``others``
    (the ``tellable`` ones): each named by its topic and told in its own clauses, as its task's
    history tells them. So a seed's sentences are said in histories where they are not the task,
    and learning them from one build finds nothing in the next."""
    return [job for _, job in _tellable(others, instruction)]


@registry_cache(maxsize=4096)
def _plus_memory(instruction: str, seed: int, feedback: str, days: int, token_values: bool = True
                 ) -> tuple[tuple[MemoryPiece, ...], str]:
    """An instruction's memory pieces as its history tells them (one thread ``t1`` about its topic,
    with their drawn corrections and near misses) and its topic. Drawn once a process however many
    histories tell the instruction (as their task or as a sibling)."""
    specifics = find_specifics(instruction)
    spans = split_clauses(instruction)
    topic = topic_of(instruction, specifics, infer_apps(instruction))
    memory = memory_pieces(instruction, spans, token_values=token_values)
    values = [p.value for p in memory]
    if topic and _clean(topic, specifics, values):
        memory = [replace(p, about=topic) for p in memory]
    memory = [replace(p, thread="t1") for p in memory]  # one line of work, told over several days
    if days >= 2:
        kinds = {spec.text: spec.kind for spec in specifics}
        memory = _dynamics(memory, kinds, instruction,
                           seeded("homeragents.plus_offline/dynamics", seed, instruction, feedback, token_values))
    return tuple(memory), topic


def plus_siblings(task: TaskDraft, others: Sequence[str], instruction: str, *, seed: int, feedback: str,
                  days: int) -> tuple[list[Sibling], list[ToldJob]]:
    """The split's other instructions a history of ``instruction`` may tell (``tellable``), as
    sibling works told exactly as the task is (their pieces planned and written by the same steps
    and chances: two-turn details, corrections, near misses, derived values; unmarked), up to
    ``sibling_works.MAX_SIBLINGS``, and the rest as jobs for later. So a Plus history's other
    instructions are said in the task's forms, and only which work a line is about tells them apart."""
    described: dict[str, str] = {}  # family -> instruction, of the drafts made so far

    def drafts() -> Iterable[TaskDraft]:  # made as sibling_pieces asks: it stops at its count
        for number, other in enumerate(_other_works(others, instruction), 1):
            memory, topic = _plus_memory(other, seed, feedback, days)
            # a clause with a template slot is left out, as a job for later leaves it (and one that
            # leans on it: "rename this pdf to {name}.pdf, email it ...")
            memory = tuple(memory[i] for i in told_in_order([p.text for p in memory], _no_template_slot))
            # unlike a job for later, a sibling may be named by its app alone ("the message"): it is
            # told in its own pieces, as the task is, and two works of a history share no name word
            if topic and memory:
                described[family := f"plus-sibling-{number}"] = other
                yield TaskDraft(family=family, description=other, intent="", subtasks=[], evaluation=[],
                                memory=list(memory), query="", oracle=[])

    siblings = sibling_pieces(task, drafts())
    used = {described[s.family] for s in siblings}
    return siblings, [job for other, job in _tellable(others, instruction) if other not in used]


def _long_history_persona(seed: int, days: int, utterances_per_day: int) -> dict[str, Any]:
    """Weeks of full working days need more to talk about than a seed gives (its user's name): the
    colleagues, company, projects and city of a seeded world, for the small talk and other work
    only (the task's office and its specifics stay the seed's). Short histories get none."""
    if not weeks_of_full_days(days, utterances_per_day):
        return {}
    from office_env.synthesis.world import make_world

    world = make_world(seed)
    return {"colleagues": [p.first for p in world.colleagues], "company": world.company,
            "projects": list(world.projects), "city": world.city}


def regenerate(seed_task: SeedLike, *, seed: int, days: int = 5, utterances_per_day: int = 70,
               feedback: str = "", others: Sequence[str] = ()) -> PlusDraft:
    """Rewrite one seed task as intent + memory + subtasks + a ``days``-session dialogue;
    ``others``: the split's other instructions, some of which its jobs for later tell."""
    instruction = seed_task.instruction.strip()
    now = seed_task.now
    rng = seeded("homeragents.plus_offline/1", seed, instruction, seed_task.username, now.isoformat(), days,
                 utterances_per_day, feedback)
    specifics = find_specifics(instruction)
    spans = split_clauses(instruction)
    clauses = [instruction[s:e] for s, e in spans]
    apps = infer_apps(instruction)
    last_error: ValueError | None = None
    topic = topic_of(instruction, specifics, apps)
    persona = _long_history_persona(seed, days, utterances_per_day)
    for token_values in (True, False):
        memory = list(_plus_memory(instruction, seed, feedback, days, token_values)[0])
        values = [p.value for p in memory]
        intent = make_intent(clauses, specifics, values, rng)
        queries = [q.format(topic=topic) for q in _TOPIC_QUERIES] if topic else []
        query = _pick(queries, rng, specifics, values) if queries else ""
        if not query or not _clean(query, specifics, values):
            query = _pick(_QUERIES, rng, specifics, values)
        draft = PlusDraft(intent=intent, query=query, memory=memory, subtasks=group_clauses(instruction, spans),
                          sessions=[], apps=apps, description=instruction, specifics=specifics)
        task = draft.task_draft()
        siblings, told = plus_siblings(task, others, instruction, seed=seed, feedback=feedback, days=days)
        try:
            plan, planned = plan_dialogue(task, seed=seed, now=now, days=days, feedback=feedback,
                                          long_mentions=PLUS_MENTIONS, siblings=siblings,
                                          utterances_per_day=utterances_per_day)
            draft.sessions = generate_dialogue(
                planned, seed=seed, now=now, user_first=_first_name(seed_task.username),
                days=days, utterances_per_day=utterances_per_day, feedback=feedback, plan=plan,
                stated_full_names=HISTORY.plus_stated_full_names, told=told, siblings=siblings,
                bare_values=False, **persona)
        except ValueError as exc:  # a value too generic for the banks: carry whole clauses instead
            last_error = exc
            continue
        draft.memory = list(planned.memory)  # with said_as where a day is said as the day it was said on has it
        return draft
    assert last_error is not None
    raise last_error
