"""How far a system that does not read the chat can find its evidence turns: shallow detectors,
the memory dynamics a dataset exercises, and text statistics of its histories.

A good history hides its details among ordinary talk: a detector that only looks at surface
shape (a turn said once in the dataset, a turn with a number in it, a turn the assistant answers
with "noted", the first and the last mention of a value) should not pick out the evidence turns
(``evidence``-marked) with a precision above :data:`THRESHOLD`. :func:`gameability` runs the
detectors over a dataset (a list of ``task.json`` records) and reports, per detector, precision and
recall on the evidence turns, micro-averaged over the dataset:

- ``unique_user_turn``: user turns whose text (white space collapsed, case folded) occurs in no
  other task of the dataset (any role);
- ``value_token``: user turns holding a digit, a clock time, a file name (a word with an office or
  text extension, ``generators.specifics.file_extensions``) or an e-mail address;
- ``acknowledged``: user turns whose next turn (same day) is an assistant reply that acknowledges
  or promises (:data:`ACK_PATTERNS`);
- ``first_last_mention``: for every value-like token of a history (numbers with decimals or
  thousands separators, clock times, dates, file names, e-mail addresses; :func:`value_tokens`),
  the turns (either role) holding its first and its last mention.

For the user-turn detectors the evidence set is the evidence-marked user turns; for
``first_last_mention`` every evidence-marked turn. A detector with no hits has precision 0.

:func:`dynamics` gives the share of tasks with each memory dynamic (knowledge update,
distractor, multi-session, relative time); :func:`text_stats` the distinct and cross-task
verbatim shares of utterances, repeats inside a history and the share of work turns.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterator

from generators.derivation import RULES
from generators.english import repeat_keys
from generators.specifics import file_extensions
from generators.spoken_time import is_relative
from office_env.apps import registry_cache
from verifier.text_tally import TextTally, TextTotals, task_rows

THRESHOLD = 0.35
DETECTORS = ("unique_user_turn", "value_token", "acknowledged", "first_last_mention")
DYNAMICS = ("knowledge_update", "distractor", "multi_session", "relative_time")

# What an assistant says when it acknowledges a detail or promises to act on it. Matched anywhere
# in the lower-cased reply (typographic apostrophes are read as '), so write them in lower case.
ACK_PATTERNS = (
    r"\bnoted\b",                     # "Noted.", "duly noted"
    r"\bwill do\b",
    r"\bgot it\b",
    r"\bunderstood\b",
    r"\bon (?:my|the) (?:list|radar|to-do list)\b",
    r"\bconsider it done\b",
    r"\bleave it with me\b",
    r"\bgood to know\b",
    r"\bthanks for (?:telling|flagging|letting|mentioning|the heads[- ]up|the reminder)\b",
    r"\bkeep (?:that|it|this) in mind\b",
    r"\bmak(?:e|ing) a note\b",
    r"\bi(?:'ve| have) (?:noted|added|saved|made a note|written)\b",
    # a promise: "I'll remember", "I'll keep that ...", "I will make sure", "I'll take care ..."
    r"\bi(?:'ll| will) (?:\w+ ){0,2}(?:remember|keep|make sure|make a point|take care|note|handle|do|get|sort|"
    r"see|look after|deal|hold|file|put|have|take|come back|add|set|send|book|schedule|prepare|draft|update|"
    r"remind|follow|track|save|use|write|create|arrange|bear|log|record|flag|check|pass)\b",
)
_ACK_RE = re.compile("|".join(f"(?:{p})" for p in ACK_PATTERNS))  # on lower-cased text: 4x faster

_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
           r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
EMAIL_PATTERN = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"


def file_pattern() -> str:
    """A file's name: a word ending in one of ``generators.specifics.file_extensions`` (the
    registered apps' kinds among them)."""
    return rf"[\w][\w.-]*\.(?:{file_extensions()})(?![\w])"


_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\b\.?)?|\d{1,2}\s*[ap]\.?m\b\.?|\bnoon\b|\bmidnight\b"
_DATE = (rf"\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|"
         rf"\b{_MONTHS}\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?(?!\d)|"
         rf"\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTHS}\b(?: \d{{4}})?")
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# Order matters: at one position the first alternative that matches wins (a file name before
# the number inside it, a date or a time before a bare number).
@registry_cache(maxsize=1)
def value_re() -> re.Pattern[str]:
    """A value-like token: an e-mail address, a file's name, a date, a clock time or a number (the
    group named by its kind)."""
    return re.compile(rf"(?<![\w@.-])(?:(?P<email>{EMAIL_PATTERN})|(?P<file>{file_pattern()})|(?P<date>{_DATE})|"
                      rf"(?P<time>{_TIME})|(?P<number>{_NUMBER}))", re.IGNORECASE)


# The cheap tests behind has_value_token (also the filter before value_re): each starts with a
# literal, which the regex engine finds fast.
_DIGIT_RE = re.compile(r"\d")
_EMAIL_RE = re.compile(r"[\w.+-]@[\w-]+\.[\w-]")
_CLOCK_WORD_RE = re.compile(r"\b(?:noon|midnight)\b")


@registry_cache(maxsize=1)
def _extension_re() -> re.Pattern[str]:
    """A dot after a word character, then a file extension (the word character is looked for
    behind the dot, so that the pattern starts with the dot: the engine jumps from dot to dot)."""
    return re.compile(rf"\.(?<=\w\.)(?:{file_extensions()})(?![\w])", re.IGNORECASE)


def normalize(text: str) -> str:
    """White space collapsed, case folded: the form texts are compared in."""
    return " ".join(str(text).split()).casefold()


def value_tokens(text: str) -> list[str]:
    """The value-like tokens of a text, normalized (case folded; numbers without thousands
    separators; times and dates without inner spaces and dots)."""
    finder = _value_finder()
    return finder.tokens(text) if finder.has(text) else []


def has_value_token(text: str) -> bool:
    """A digit, a clock time, a file name or an e-mail address."""
    return _value_finder().has(text)


class _ValueFinder:
    """:func:`has_value_token` and the tokens of :func:`value_tokens`, with the registry's
    patterns looked up once (a record's cues ask them of every turn)."""

    def __init__(self) -> None:
        self._extension = _extension_re().search
        self._values = value_re().finditer

    def has(self, text: str) -> bool:
        if _DIGIT_RE.search(text):
            return True
        if "@" in text and _EMAIL_RE.search(text):
            return True
        if "." in text and self._extension(text):
            return True
        lower = text.lower()
        return ("noon" in lower or "midnight" in lower) and _CLOCK_WORD_RE.search(lower) is not None

    def tokens(self, text: str) -> list[str]:
        found: list[str] = []
        for match in self._values(text):
            kind = match.lastgroup
            token = match.group(0).casefold()
            if kind == "number":
                token = token.replace(",", "")
            elif kind in ("time", "date"):
                token = re.sub(r"[\s.,]", "", token)
            found.append(f"{kind}:{token}")
        return found


@registry_cache(maxsize=1)
def _value_finder() -> _ValueFinder:
    return _ValueFinder()


def acknowledges(text: str) -> bool:
    """An acknowledgement or a promise (:data:`ACK_PATTERNS`)."""
    return _ACK_RE.search(str(text).lower().replace("\u2019", "'")) is not None


# -- walking a record --------------------------------------------------------------------------

def _sessions(record: dict[str, Any]) -> list[dict[str, Any]]:
    # raw on purpose: the cues read records as written (a build's, a stranger's dataset that
    # ``homer verify`` reports on, bench/quality.py's) and hand-made histories (a dialogue alone)
    sessions = [s for s in record.get("dialogue") or [] if isinstance(s, dict)]
    return sorted(sessions, key=lambda s: s.get("day", 0) if isinstance(s.get("day"), (int, float)) else 0)


def _turns(record: dict[str, Any]) -> Iterator[tuple[int, int, dict[str, Any], dict[str, Any] | None]]:
    """``(day, position in the history, turn, next turn of the same day or None)``."""
    position = 0
    for session in _sessions(record):
        turns = [t for t in session.get("turns") or [] if isinstance(t, dict)]
        for i, turn in enumerate(turns):
            yield session.get("day", 0), position, turn, turns[i + 1] if i + 1 < len(turns) else None
            position += 1


def _ids(turn: dict[str, Any], mark: str) -> list[str]:
    value = turn.get(mark)
    return [str(v) for v in value] if isinstance(value, list) else []


def _text(turn: dict[str, Any]) -> str:
    return str(turn.get("text") or "")


def record_cues(record: dict[str, Any]) -> dict[str, Any]:
    """What the dataset figures need of one record, JSON-able: the normalized text of each turn,
    the positions of its user, evidence and cue turns, its memory dynamics and its work turns. A
    build computes it where the record is made (in parallel) and the card sums it. One walk over
    the turns gives all of it (the memory dynamics' turn facts too: :func:`_note_turn`), written
    out in the loop: it runs for every turn of every task built."""
    texts: list[str] = []
    users: list[int] = []
    evidence: list[int] = []
    user_evidence: list[int] = []
    value_token: list[int] = []
    acknowledged: list[int] = []
    cues: dict[str, Any] = {"texts": texts, "user": users, "evidence": evidence, "user_evidence": user_evidence,
                            "value_token": value_token, "acknowledged": acknowledged}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    work = near_repeats = shape_repeats = 0
    cores: set[str] = set()
    shapes: set[str] = set()
    distractor = False
    days: dict[str, set] = {}  # memory id -> the days of its evidence turns
    position = 0  # in the history
    finder = _value_finder()
    for session in _sessions(record):
        day = session.get("day", 0)
        turns = [t for t in session.get("turns") or [] if isinstance(t, dict)]
        for i, turn in enumerate(turns):
            text = _text(turn)
            texts.append(normalize(text))
            user = turn.get("role") == "user"
            work += bool(turn.get("thread"))
            ids, marked_distractor = _note_turn(day, turn, days)
            distractor = distractor or marked_distractor
            if ids:
                evidence.append(position)
                if user:
                    user_evidence.append(position)
            valued = finder.has(text)
            if valued:
                for token in finder.tokens(text):
                    first.setdefault(token, position)
                    last[token] = position
            if user:
                core, shape = repeat_keys(text)
                near_repeats += core in cores
                shape_repeats += shape in shapes
                cores.add(core)
                shapes.add(shape)
                users.append(position)
                if valued:
                    value_token.append(position)
                following = turns[i + 1] if i + 1 < len(turns) else None
                if (following is not None and following.get("role") == "assistant"
                        and acknowledges(_text(following))):
                    acknowledged.append(position)
            position += 1
    cues["near_repeats"] = near_repeats
    cues["shape_repeats"] = shape_repeats
    cues["first_last_mention"] = sorted({*first.values(), *last.values()})
    cues["work_turns"] = work
    cues["dynamics"] = _dynamics(record, distractor, days)
    return cues


def _cues(records: list[dict[str, Any]], cues: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return cues if cues is not None else [record_cues(record) for record in records]


def cue_counts(cues: dict[str, Any]) -> dict[str, Any]:
    """What one task's :func:`record_cues` add to a dataset's figures (:class:`CueSums`) but for
    its texts (``verifier.text_tally.task_rows``): a few numbers, whatever the history's length."""
    evidence, user_evidence = set(cues["evidence"]), set(cues["user_evidence"])
    texts = cues["texts"]
    return {"evidence": len(evidence), "user_evidence": len(user_evidence), "users": len(set(cues["user"])),
            "hits": {name: [len(set(cues[name])),
                            len(set(cues[name]) & (evidence if name == "first_last_mention" else user_evidence))]
                     for name in DETECTORS[1:]},
            "utterances": len(texts), "repeats": len(texts) - len(set(texts)), "work_turns": cues["work_turns"],
            "near_repeats": cues.get("near_repeats", 0), "shape_repeats": cues.get("shape_repeats", 0),
            "dynamics": cues["dynamics"]}


def cue_rows(cues: dict[str, Any]) -> bytes:
    """One task's :func:`record_cues` texts as ``verifier.text_tally`` rows."""
    return task_rows(cues["texts"], cues["user"], cues["user_evidence"])


class CueSums:
    """:func:`cue_counts` of a dataset's tasks summed one task at a time; with the totals of their
    texts (``verifier.text_tally``) they give :func:`gameability`, :func:`dynamics` and
    :func:`text_stats` without holding any task."""

    def __init__(self) -> None:
        self.tasks = 0
        self.sums: Counter[str] = Counter()
        self.hits: dict[str, list[int]] = {name: [0, 0] for name in DETECTORS[1:]}
        self.dynamics: Counter[str] = Counter()
        self.with_repeats = 0

    def add(self, counts: dict[str, Any]) -> None:
        self.tasks += 1
        self.sums.update({key: counts[key] for key in ("evidence", "user_evidence", "users", "utterances", "repeats",
                                                      "work_turns", "near_repeats", "shape_repeats")})
        for name, (hits, both) in counts["hits"].items():
            self.hits[name][0] += hits
            self.hits[name][1] += both
        self.dynamics.update(name for name, present in counts["dynamics"].items() if present)
        self.with_repeats += bool(counts["repeats"])

    def gameability(self, texts: TextTotals) -> dict[str, Any]:
        """:func:`gameability` of the tasks summed."""
        user_evidence, evidence = self.sums["user_evidence"], self.sums["evidence"]
        result: dict[str, Any] = {"unique_user_turn": _score(texts.unique_user_turns, texts.unique_user_evidence,
                                                             user_evidence)}
        for name, (hits, both) in self.hits.items():
            result[name] = _score(hits, both, evidence if name == "first_last_mention" else user_evidence)
        result = {name: result[name] for name in DETECTORS}
        result["passed"] = all(result[name]["precision"] <= THRESHOLD for name in DETECTORS)
        return result

    def dynamics_shares(self) -> dict[str, float]:
        """:func:`dynamics` of the tasks summed."""
        return {name: self.dynamics[name] / self.tasks if self.tasks else 0.0 for name in DYNAMICS}

    def text_stats(self, texts: TextTotals) -> dict[str, Any]:
        """:func:`text_stats` of the tasks summed."""
        sums = self.sums
        utterances, users = sums["utterances"], sums["users"]
        share = (lambda k: k / utterances) if utterances else (lambda k: 0.0)
        return {"utterances": utterances, "distinct_share": share(texts.distinct),
                "cross_task_share": share(texts.shared_turns), "repeats": sums["repeats"],
                "histories_with_repeats": self.with_repeats, "work_turn_share": share(sums["work_turns"]),
                "near_repeat_share": sums["near_repeats"] / users if users else 0.0,
                "shape_repeat_share": sums["shape_repeats"] / users if users else 0.0}


def _summed(records: list[dict[str, Any]], cues: list[dict[str, Any]] | None) -> tuple[CueSums, TextTotals]:
    sums, tally = CueSums(), TextTally()
    try:
        for n, item in enumerate(_cues(records, cues)):
            sums.add(cue_counts(item))
            tally.add(n, cue_rows(item))
        return sums, tally.totals()
    finally:
        tally.close()


# -- gameability -------------------------------------------------------------------------------

def _score(hits: int, both: int, evidence: int) -> dict[str, Any]:
    return {"precision": both / hits if hits else 0.0,
            "recall": both / evidence if evidence else 0.0,
            "hits": hits, "evidence_hits": both, "evidence_turns": evidence}


def gameability(records: list[dict[str, Any]], cues: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Per detector (:data:`DETECTORS`) ``{precision, recall, hits, evidence_hits,
    evidence_turns}`` over the whole dataset, and ``passed``: every precision <= :data:`THRESHOLD`.
    ``cues``: :func:`record_cues` of the records, when the caller has them already."""
    sums, texts = _summed(records, cues)
    return sums.gameability(texts)


def missed(result: dict[str, Any]) -> list[str]:
    """The detectors of a :func:`gameability` result whose precision is above the threshold."""
    return [name for name in DETECTORS if name in result and result[name]["precision"] > THRESHOLD]


# -- memory dynamics ---------------------------------------------------------------------------

def _memory(record: dict[str, Any]) -> list[dict[str, Any]]:
    # raw on purpose, as ``_sessions``: a record as written, or a hand-made part of one
    return [m for m in record.get("memory") or [] if isinstance(m, dict)]


def _turn_dynamics(record: dict[str, Any]) -> tuple[bool, dict[str, set]]:
    """What the memory dynamics read of the turns: whether any turn is marked distractor, and the
    days of each memory id's evidence turns."""
    distractor = False
    days: dict[str, set] = {}
    for day, _, turn, _ in _turns(record):
        distractor = _note_turn(day, turn, days)[1] or distractor
    return distractor, days


def _note_turn(day: Any, turn: dict[str, Any], days: dict[str, set]) -> tuple[list[str], bool]:
    """A turn's evidence ids, their day noted in ``days``, and whether the turn is marked distractor."""
    ids = _ids(turn, "evidence")
    for memory_id in ids:
        days.setdefault(memory_id, set()).add(day)
    return ids, bool(_ids(turn, "distractor"))


def _multi_session(memory: list[dict[str, Any]], days: dict[str, set]) -> bool:
    """Some memory thread (the items sharing a ``thread``, or a lone item) has evidence turns on two
    or more days (``days``: each memory id's evidence days)."""
    group_of: dict[str, str] = {}
    for item in memory:
        thread = item.get("thread")
        group_of[str(item.get("id"))] = f"thread:{thread}" if thread else f"item:{item.get('id')}"
    grouped: dict[str, set] = {}
    for memory_id, on in days.items():
        grouped.setdefault(group_of.get(memory_id, f"item:{memory_id}"), set()).update(on)
    return any(len(d) >= 2 for d in grouped.values())


def task_dynamics(record: dict[str, Any]) -> dict[str, bool]:
    """Which memory dynamics (:data:`DYNAMICS`) one task has."""
    return _dynamics(record, *_turn_dynamics(record))


def _dynamics(record: dict[str, Any], distractor: bool, days: dict[str, set]) -> dict[str, bool]:
    """:func:`task_dynamics`, given what :func:`_turn_dynamics` reads of the turns."""
    memory = _memory(record)
    return {
        "knowledge_update": any(isinstance(m.get("superseded"), list) and m["superseded"] for m in memory),
        "distractor": distractor,
        "multi_session": _multi_session(memory, days),
        # a day said relative to the day it is said, or a day derived from one (its anchor's day is)
        "relative_time": any((isinstance(m.get("said_as"), str) and is_relative(m["said_as"]))
                             or (isinstance(m.get("derived"), dict)
                                 and RULES.get(str(m["derived"].get("rule"))) == "day")
                             for m in memory),
    }


def dynamics(records: list[dict[str, Any]], cues: list[dict[str, Any]] | None = None) -> dict[str, float]:
    """The share of tasks (0-1) with each memory dynamic (:data:`DYNAMICS`)."""
    every = [item["dynamics"] for item in cues] if cues is not None else [task_dynamics(r) for r in records]
    counts: Counter[str] = Counter()
    for found in every:
        counts.update(name for name, present in found.items() if present)
    return {name: counts[name] / len(every) if every else 0.0 for name in DYNAMICS}


# -- text statistics ---------------------------------------------------------------------------

def text_stats(records: list[dict[str, Any]], cues: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Over every utterance of the dataset (texts compared white space collapsed, case folded):

    - ``utterances``: how many;
    - ``distinct_share``: distinct texts / utterances;
    - ``cross_task_share``: utterances whose text occurs in another task / utterances;
    - ``repeats``: utterances repeating an earlier text of the same history, and
      ``histories_with_repeats``: the histories that have any;
    - ``work_turn_share``: turns with a ``thread`` mark / all turns;
    - ``near_repeat_share``: user utterances that repeat an earlier one of the same history once
      leading fillers, closing stock phrases and punctuation are set aside (``english.repeat_key``) / user
      utterances; ``shape_repeat_share``: the same with names and capitalised words set aside too
      (``english.near_key``: one sentence said again of another person or project).
    """
    sums, texts = _summed(records, cues)
    return sums.text_stats(texts)


def questions_answered(records: list[dict[str, Any]]) -> tuple[float, int]:
    """The share of the assistant's questions (a turn ending in "?") that one of the next two
    user turns of the same day takes up: a turn on the same thread (task work, other work, or
    small talk for a question in small talk). A question followed by an unrelated line ("Is
    there a deadline?" then "Ooh, a lane to myself at the lido") is unanswered. Also how many."""
    asked = answered = 0
    for record in records:
        for session in _sessions(record):
            turns = [t for t in session.get("turns") or [] if isinstance(t, dict)]
            for i, turn in enumerate(turns):
                if turn.get("role") != "assistant" or not _text(turn).rstrip().endswith("?"):
                    continue
                thread = str(turn.get("thread") or "")
                following = [t for t in turns[i + 1:] if t.get("role") == "user"][:2]
                asked += 1
                answered += any(str(t.get("thread") or "") == thread for t in following)
    return (answered / asked if asked else 1.0), asked
