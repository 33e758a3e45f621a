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

The same arguments give the same draft; another ``feedback`` gives another dialogue (and may
pick another intent wording).

Layering note: the specifics finder lives with its check in ``generators.specifics`` (a module
with no project imports); this generator uses it so that what it carries is exactly what the
verifier looks for.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Protocol, Sequence

from generators.dialogue_offline import generate_dialogue
from generators.model import MemoryPiece, Session, TaskDraft
from generators.specifics import Specific, contains_specific, find_specifics, locate_specifics

APP_ORDER = ("word", "excel", "pdf", "email", "calendar")
MAX_SUBTASKS = 5

_EXT_APP = {
    "doc": "word", "docx": "word", "docm": "word", "odt": "word", "rtf": "word",
    "xls": "excel", "xlsx": "excel", "xlsm": "excel", "csv": "excel", "ods": "excel", "tsv": "excel",
    "pdf": "pdf", "eml": "email", "msg": "email", "ics": "calendar",
}
_DOC_TYPE_APP = {"doc": "word", "docx": "word", "xlsx": "excel", "xls": "excel", "pdf": "pdf",
                 "email": "email", "ics": "calendar"}
_PATH_KEYS = ("file", "result_file", "input_file", "output_file")

_KIND_RANK = {"file": 0, "email": 1, "date": 2, "time": 3, "number": 4, "quoted": 5, "person": 6, "app": 7}

# Verbs that open an action clause, and what the intent calls that kind of work.
_ACTION_NOUN = {
    **dict.fromkeys("change update set edit modify fill replace correct swap adjust enter insert increase "
                    "decrease raise lower mark highlight append".split(), "update"),
    **dict.fromkeys("write create draft compose prepare make type".split(), "write-up"),
    **dict.fromkeys("add put include attach".split(), "addition"),
    **dict.fromkeys("delete remove cancel clear erase".split(), "clean-up"),
    **dict.fromkeys("open paste post upload download".split(), "update"),
    **dict.fromkeys("find calculate compute count sum check look read extract summarize summarise compare "
                    "identify determine get search list average total tell answer retrieve review".split(), "lookup"),
    **dict.fromkeys("convert export save turn print".split(), "conversion"),
    **dict.fromkeys("rename move copy sort merge reorder organize organise split".split(), "reshuffle"),
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
_AREA = {"word": "document", "excel": "spreadsheet", "pdf": "file", "email": "message", "calendar": "schedule"}

_LEADS = ("Please take care of", "Could you handle", "I need you to finish", "Go ahead with",
          "Please get on with")
_TAILS = ("I described earlier", "we talked about over the last few days", "I mentioned in our chats",
          "I told you about this week", "from our recent conversations")
_FALLBACK_INTENTS = ("Please handle what I asked for in our recent chats.",
                     "Please do what we discussed.", "Go ahead with the plan from our chats.")
_QUERIES = ("Can you take care of it now?", "Could you get that done now, please?",
            "Please go ahead with it now.", "Can you handle that for me now?", "Time to get that done, please.")


class SeedLike(Protocol):
    instruction: str
    username: str
    app_count: int

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


# -- clauses -------------------------------------------------------------------------------------

_SEP = re.compile(r"[,;]|[.!?]+(?=\s+[A-Z0-9\"'“‘(]|\s*$)|\s+((?i:and\s+then|then|and))\s+(?=([\w-]+))")
_LEADING = re.compile(r"^(?:and\s+then|and|then)\s+", re.IGNORECASE)
_TRAILING = " \t\n,;.!?"


def _protected(text: str) -> list[bool]:
    mask = [False] * len(text)
    for start, end, _ in locate_specifics(text):
        for i in range(start, end):
            mask[i] = True
        for i in (start - 1, end):  # the quotes around quoted text
            if 0 <= i < len(text) and text[i] in "\"'“”‘’":
                mask[i] = True
    return mask


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
    for start, end in clauses:
        if merged and len(text[start:end].split()) < 2:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    if len(merged) > 1 and len(text[merged[0][0]:merged[0][1]].split()) < 2:
        merged[0:2] = [(merged[0][0], merged[1][1])]
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
        kind = "action" if _first_word(text) in _ACTION_NOUN else "fact"
        pieces.append(MemoryPiece(id=f"m{index + 1}", kind=kind, text=text, value=value))
    return pieces


# -- apps, intent, query ------------------------------------------------------------------------

def _ordered(apps: Iterable[str]) -> list[str]:
    found = set(apps)
    return [a for a in APP_ORDER if a in found]


def _apps_of_text(text: str) -> list[str]:
    apps = []
    for spec in find_specifics(text):
        if spec.kind == "file":
            apps.append(_EXT_APP.get(spec.text.rsplit(".", 1)[-1].lower(), ""))
        elif spec.kind == "app":
            low = spec.text.lower()
            apps.append("word" if low.endswith("word") else "excel" if "excel" in low else "pdf" if "pdf" in low
                        else "calendar" if "calendar" in low else "email")
    return _ordered(a for a in apps if a)


def infer_apps(instruction: str, evaluation: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Apps (word, excel, pdf, email, calendar) that the instruction names (app words, file
    extensions) or that the criteria touch (doc types, file arguments, calendar/email checks);
    ``["system"]`` when there are none (an answer-file task)."""
    apps = list(_apps_of_text(instruction))
    for item in evaluation:
        if not isinstance(item, dict):
            continue
        function = str(item.get("function", ""))
        args = item.get("args") if isinstance(item.get("args"), dict) else {}
        if function.startswith("evaluate_calendar"):
            apps.append("calendar")
        if function.startswith("evaluate_email"):
            apps.append("email")
        doc_type = str(args.get("doc_type", "")).lower()
        if doc_type in _DOC_TYPE_APP:
            apps.append(_DOC_TYPE_APP[doc_type])
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and "." in value:
                apps.append(_EXT_APP.get(value.rsplit(".", 1)[-1].lower(), ""))
    return _ordered(a for a in apps if a) or ["system"]


def _phrase(clause: str) -> str | None:
    apps = _apps_of_text(clause)
    area = _AREA[apps[0]] if apps else None
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


# -- the generator -------------------------------------------------------------------------------

def _first_name(username: str) -> str:
    part = re.split(r"[._\s-]+", username.strip())[0] if username.strip() else ""
    return part[:1].upper() + part[1:] if part else "there"


def regenerate(seed_task: SeedLike, *, seed: int, days: int = 5, utterances_per_day: int = 70,
               feedback: str = "") -> PlusDraft:
    """Rewrite one seed task as intent + memory + subtasks + a ``days``-session dialogue."""
    instruction = seed_task.instruction.strip()
    now = seed_task.now
    rng = random.Random(json.dumps(["homeragents.plus_offline/1", seed, instruction, seed_task.username,
                                    now.isoformat(), days, utterances_per_day, feedback], ensure_ascii=False))
    specifics = find_specifics(instruction)
    spans = split_clauses(instruction)
    clauses = [instruction[s:e] for s, e in spans]
    apps = infer_apps(instruction)
    last_error: ValueError | None = None
    for token_values in (True, False):
        memory = memory_pieces(instruction, spans, token_values=token_values)
        values = [p.value for p in memory]
        intent = make_intent(clauses, specifics, values, rng)
        query = _pick(_QUERIES, rng, specifics, values)
        draft = PlusDraft(intent=intent, query=query, memory=memory, subtasks=group_clauses(instruction, spans),
                          sessions=[], apps=apps, description=instruction, specifics=specifics)
        try:
            draft.sessions = generate_dialogue(
                draft.task_draft(), seed=seed, now=now, user_first=_first_name(seed_task.username),
                days=days, utterances_per_day=utterances_per_day, feedback=feedback)
        except ValueError as exc:  # a value too generic for the banks: carry whole clauses instead
            last_error = exc
            continue
        return draft
    assert last_error is not None
    raise last_error
