"""The specifics of an instruction, and the check that a Plus task carries them all in its chat.

``find_specifics(instruction)`` lists every specific, in order of first appearance, each once
(``Specific(kind, text)``, ``text`` exactly as written, end-of-sentence dots removed);
``locate_specifics`` gives the same with character offsets. ``check_specifics(instruction,
intent, dialogue_text)`` returns one problem per specific missing from the dialogue and per
specific that leaks into the intent.

Rules, applied in this order; text claimed by an earlier rule is not looked at again:

1. ``quoted``: text between quotes: ``"..."``, ``“...”``, ``‘...’``, and ``'...'`` when the
   opening quote does not follow a letter or digit (so ``Bob's`` is no quote); at most 100
   characters on one line. A quoted file name (spaces allowed: ``'Q2 report.pdf'``) or e-mail
   address gets that kind instead.
2. ``email``: an e-mail address (``name@domain.tld``).
3. ``file``: a name (optionally with a folder path, ``data/scores.xlsx``) ending in a known
   document, text, mail, calendar, image or archive extension (:func:`file_extensions`: every
   registered app's kinds and a few no app opens).
4. ``date``: ``2024-05-17``; ``5/17/2024``, ``5/17``, ``17.05.2024``; ``May 17``,
   ``May 17th, 2024``, ``Sept. 3``; ``17 May 2024``, ``17th of May``; ``May 2024``; a weekday
   (``Friday``, ``Fridays``); a capitalised month name on its own (not ``May``, which is also a
   verb); ``today``, ``tomorrow``, ``tonight``, ``yesterday``.
5. ``time``: ``10:30``, ``14:00:15``, ``10:30 a.m``, ``10:30 AM``, ``3pm``, ``3 p.m.``,
   ``3 o'clock``, ``noon``, ``midnight``, ``midday``, ``morning``, ``afternoon``, ``evening``.
6. ``number``: integers and decimals, with thousands separators (``12,500.00``; a comma counts
   only before exactly three digits), a currency sign in front (``$``, ``€``, ``£``, ``¥``) and a
   percent sign, ``percent``, a currency word or sign after (``15%``, ``30 USD``, ``40 dollars``,
   ``1.5$``); a number is taken whole or not at all (never ``1`` of ``1.5``); also
   words that mix letters and digits (``midterm1``, ``Q3``, ``A4``, ``10k``, ``1st``). Number
   words (``three``) are not specifics.
7. ``app``: ``Word`` (capitalised, or ``MS``/``Microsoft Word``), ``Excel``, ``PDF``,
   ``email``/``e-mail`` (and ``emails``, ``emailed``, ``emailing``), ``mail``, ``calendar``
   (each app's ``spoken`` patterns in ``office_env.apps``); any case except ``Word``.
8. ``person``: a capitalised word (``Bob``, ``McDonald``, ``O'Brien``, ``Mary-Jane``; a
   possessive ``'s`` is left out) that is not in ``ALWAYS_STOP`` (titles, ``I``, greetings,
   company suffixes) and, at the start of a sentence (or after ``:``/``;``), neither a common
   word (``COMMON_WORDS``: verbs, pronouns, determiners, prepositions, question words ...) nor
   followed by a determiner or object pronoun (``Tabulate the ...`` is a verb, not a name).
   Capitalised words next to each other (one space apart) make one name: ``Jane Doe``.

Matching for the check is case-insensitive, on white-space-normalised text with typographic
quotes made plain, and whole-token: a specific must not continue into a letter or digit on either
side (``95`` is not found in ``1995``, ``Bob`` is found in ``Bob's``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date
from typing import Iterable

from generators.spoken_time import names_value
from office_env.apps import file_kind_pattern, file_kinds, registered_apps, registry_cache
from office_env.money import CODE

__all__ = ["Specific", "find_specifics", "locate_specifics", "check_specifics", "contains_specific",
           "normalize", "file_extensions", "is_file_kind", "NAMED_ONLY_KINDS", "KINDS"]

KINDS = ("quoted", "email", "file", "date", "time", "number", "app", "person")

# kinds of file a person names that office_env.apps.file_kinds leaves out (no app opens them, and
# a stated value or a mutant's file is none of them): decks, web pages and data, images, archives, logs
NAMED_ONLY_KINDS = ("ppt", "odp", "json", "xml", "html", "htm", "gif", "bmp", "svg", "tiff", "tif", "zip", "log")


def file_extensions() -> str:
    """Every kind a file named in a text may end in, as one regular-expression alternation (the
    specifics' files, the gameability detectors' file names): ``office_env.apps.file_kinds`` (every
    registered app's kinds and the few no app opens), then ``NAMED_ONLY_KINDS``."""
    return file_kind_pattern(*NAMED_ONLY_KINDS)


def is_file_kind(kind: str) -> bool:
    """Whether a file named in a text may end in ``kind`` (lower case): one of ``file_extensions``'."""
    return kind in file_kinds() or kind in NAMED_ONLY_KINDS


@dataclass(frozen=True)
class Specific:
    """One specific: ``kind`` (see ``KINDS``) and ``text`` as written in the instruction."""

    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.kind} {self.text!r}"


# -- patterns ------------------------------------------------------------------------------------

_MONTHS_FULL = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")
_MONTHS_LOWER = frozenset(m.lower() for m in _MONTHS_FULL)
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
          r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\b\.?")
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?"
_ORD = r"(?:st|nd|rd|th)?"
_AMPM = r"[AaPp]\.?[Mm]\b\.?"
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

_QUOTES = (
    re.compile(r'"(?=\S)([^"\n]{1,100}?)(?<=\S)"'),
    re.compile(r"“(?=\S)([^”\n]{1,100}?)(?<=\S)”"),
    re.compile(r"‘(?=\S)((?:[^’\n]|’(?=\w)){1,100}?)(?<=\S)’(?!\w)"),
    re.compile(r"(?<![\w'])'(?=\S)((?:[^'\n]|'(?=\w)){1,100}?)(?<=\S)'(?!\w)"),
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_DATES = (
    re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b(?!/)"),
    re.compile(r"\b\d{1,2}\.\d{1,2}\.\d{4}\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{1,2}}{_ORD}\b(?!:)(?:,?\s+\d{{4}}\b)?"),
    re.compile(rf"\b\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}}\b)?"),
    re.compile(rf"\b{_MONTH}\s+\d{{4}}\b"),
    re.compile(rf"\b{_WEEKDAY}\b", re.IGNORECASE),
    re.compile(r"\b(?:January|February|March|April|June|July|August|September|October|November|December)\b"),
    re.compile(r"\b(?:today|tomorrow|tonight|yesterday)\b", re.IGNORECASE),
)
_TIMES = (
    re.compile(rf"\b\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:\s?{_AMPM})?(?![\w:])"),
    re.compile(rf"\b\d{{1,2}}\s?{_AMPM}"),
    re.compile(r"\b\d{1,2}\s?o['’]clock\b", re.IGNORECASE),
    re.compile(r"\b(?:noon|midnight|midday|morning|afternoon|evening)\b", re.IGNORECASE),
)
_NUMBERS = (
    # a number is whole or not at all: never "1" of "1.5" (a sign may follow it too: "1.5$/pound")
    re.compile(rf"(?<![\w.$€£¥])(?:[$€£¥]\s?)?{_NUM}(?![\d.,]\d)"
               rf"(?:\s?%|\s(?:percent|{CODE}|dollars?|euros?|pounds?)\b|[$€£¥])?(?![\w$€£¥])"),
    re.compile(r"\b(?=[A-Za-z_]*\d)(?=\w*[A-Za-z])\w+\b"),
)


@dataclass(frozen=True)
class _AppPatterns:
    spoken: tuple[re.Pattern[str], ...]
    file: re.Pattern[str]  # a file name, with its folders
    file_end: re.Pattern[str]  # a quoted name with spaces ending in a file kind: 'Q2 report.pdf'


@registry_cache(maxsize=1)
def _app_patterns() -> _AppPatterns:
    """The patterns that follow the registered apps, made when first used and again after an app is
    registered or taken out."""
    ext = file_extensions()
    return _AppPatterns(
        tuple(re.compile(pattern) for app in registered_apps() if app.office for pattern in app.spoken),
        re.compile(rf"(?<![\w@/.-])(?:\.{{1,2}}/)?(?:[\w-]+/)*\w[\w.-]*\.(?:{ext})\b", re.IGNORECASE),
        re.compile(rf"\w\.(?:{ext})$", re.IGNORECASE))


_NAME = re.compile(r"(?<![\w'’-])([A-Z](?:[a-z]+(?:[A-Z][a-z]+)?(?:-[A-Z][a-z]+)?|['’][A-Z][a-z]+))"
                   r"(?:['’]s)?(?![\w'’-])")

# Words that are never names, wherever they stand.
ALWAYS_STOP = frozenset(
    "i mr mrs ms miss dr prof sir madam dear hi hello hey thanks thank ok okay inc ltd llc co corp "
    "am pm".split()
)

# Common words that start sentences: never a name in first position.
COMMON_WORDS = frozenset("""
a an the this that these those there here it its it's they them their we us our you your he him his
she her hers me my mine who whom whose which what when where why how whoever whatever some any all
each every both either neither no not none nothing everything something anything one another other
and or but so yet nor if then else also too just only even still once after before while until since
because though although unless whether as at by for from in into of off on onto out over under up
upon with within without about above across against along among around behind below beneath beside
between beyond down during except inside near outside past through throughout toward towards via
per than like please kindly can could would should will shall may might must do does did done have
has had is are was were be been being get gets got give gives let lets make makes go goes come
add append attach book bring calculate cancel change check choose clean clear close collect combine
compare compile complete compose compute confirm convert copy correct count create decide delete
determine draft edit email enter export extract figure fill find finish fix forward generate help
highlight identify import include inform insert invite keep label list locate look mark merge modify
move note notify open organize organise paste pick plan prepare print put read record remind remove
rename reorder replace reply report reschedule respond retrieve review rewrite save schedule search
select send set share show sort split start store subtract sum summarize summarise swap switch take
tell total transfer translate turn type update use verify want need write answer ask assign average
arrange divide multiply increase decrease reduce raise lower append tidy double compute fetch draw
analyze analyse estimate evaluate explain describe plot predict rank filter format upload download scan
suggest provide return group match measure mention rewrite transcribe visualize visualise
based according given using first second third next last finally then today tomorrow yesterday
new old good great sure yes yeah hmm oh well now later soon again also instead otherwise meanwhile
note important reminder ps fyi re fw fwd subject task goal steps step hint
""".split())

# After a sentence-initial word, these make it an imperative verb ("Tabulate the scores").
_OBJECT_WORDS = frozenset(
    "the a an my our your his her their its this that these those all each every some any it them me "
    "him us everyone everybody".split()
)

_SENTENCE_END = ".!?:;\n"
_OPENERS = " \t\"'“‘([{"


def _sentence_initial(text: str, start: int) -> bool:
    j = start - 1
    while j >= 0 and text[j] in _OPENERS:
        j -= 1
    return j < 0 or text[j] in _SENTENCE_END


def _strip_dot(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start and text[end - 1] in ".,":
        end -= 1
    return start, end


def locate_specifics(instruction: str) -> list[tuple[int, int, Specific]]:
    """Every specific occurrence as ``(start, end, Specific)``, sorted by position (repeats kept)."""
    text = instruction
    taken = [False] * len(text)
    found: list[tuple[int, int, Specific]] = []

    def free(start: int, end: int) -> bool:
        return start < end and not any(taken[start:end])

    def claim(start: int, end: int, kind: str, whole: tuple[int, int] | None = None) -> None:
        lo, hi = whole or (start, end)
        for i in range(lo, hi):
            taken[i] = True
        found.append((start, end, Specific(kind, text[start:end])))

    app_patterns = _app_patterns()
    for pattern in _QUOTES:
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            inner = m.group(1)
            kind = "quoted"
            if _EMAIL.fullmatch(inner):
                kind = "email"
            elif app_patterns.file.fullmatch(inner) or app_patterns.file_end.search(inner):
                kind = "file"
            claim(m.start(1), m.end(1), kind, whole=(m.start(), m.end()))
    for m in _EMAIL.finditer(text):
        if free(m.start(), m.end()):
            claim(m.start(), m.end(), "email")
    for m in app_patterns.file.finditer(text):
        if free(m.start(), m.end()):
            claim(m.start(), m.end(), "file")
    for kind, patterns in (("date", _DATES), ("time", _TIMES), ("number", _NUMBERS), ("app", app_patterns.spoken)):
        for pattern in patterns:
            for m in pattern.finditer(text):
                start, end = _strip_dot(text, m.start(), m.end())
                if free(start, end):
                    claim(start, end, kind)

    # Names: capitalised words outside everything claimed so far, joined when adjacent.
    # A token is (start, end of the word, end including a possessive 's).
    tokens: list[tuple[int, int, int]] = []
    for m in _NAME.finditer(text):
        start, end = m.start(1), m.end(1)
        if not free(start, m.end()):
            continue
        word = m.group(1).lower()
        if word in ALWAYS_STOP or word in _MONTHS_LOWER:
            continue
        if _sentence_initial(text, start):
            if word in COMMON_WORDS:
                continue
            following = re.match(r"\s+([A-Za-z']+)", text[m.end():])
            if following and following.group(1).lower() in _OBJECT_WORDS:
                continue
        tokens.append((start, end, m.end()))
    groups: list[list[tuple[int, int, int]]] = []
    for token in tokens:
        last = groups[-1][-1] if groups else None
        # join "Jane Doe": the previous word ended one space before, with no possessive
        if last is not None and last[1] == last[2] and text[last[1]:token[0]] == " ":
            groups[-1].append(token)
        else:
            groups.append([token])
    for group in groups:
        start, end = group[0][0], group[-1][1]
        for i in range(start, group[-1][2]):
            taken[i] = True
        found.append((start, end, Specific("person", text[start:end])))
    found.sort(key=lambda item: (item[0], item[1]))
    return found


def find_specifics(instruction: str) -> list[Specific]:
    """Every specific of ``instruction`` (see the module docstring), each once, in order."""
    return list(_specifics(instruction))


# the last texts' specifics (what a file names depends on the registered apps): a draft's
# misreadings often write one text, read again against each output the oracle writes
@registry_cache(maxsize=64)
def _specifics(instruction: str) -> tuple[Specific, ...]:
    seen: set[tuple[str, str]] = set()
    out: list[Specific] = []
    for _, _, spec in locate_specifics(instruction):
        key = (spec.kind, normalize(spec.text))
        if key not in seen:
            seen.add(key)
            out.append(spec)
    return tuple(out)


# -- the check -----------------------------------------------------------------------------------

_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def normalize(text: str) -> str:
    """Lower case, typographic quotes made plain, white space collapsed to single spaces."""
    return " ".join(text.translate(_PLAIN).split()).lower()


def contains_specific(haystack: str, specific: Specific | str) -> bool:
    """Whether ``specific`` occurs in ``haystack`` as whole tokens (case- and space-insensitive)."""
    needle = normalize(specific.text if isinstance(specific, Specific) else specific)
    if not needle:
        return False
    pattern = rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])"
    return re.search(pattern, normalize(haystack)) is not None


def says_value(text: str, value: str) -> bool:
    """Whether ``text`` holds a memory ``value`` as words of its own: a department called "IT" is not
    the "it" of "write it down" (a short capitalised value keeps its case), "Q3" is not in "Q31"."""
    value = value.strip()
    if not value:
        return False
    return _value_word(value, value.isupper() and len(value) <= 4).search(text) is not None


@functools.lru_cache(maxsize=2048)  # a task's values are looked for in line after line
def _value_word(value: str, acronym: bool) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", 0 if acronym else re.IGNORECASE)


def check_specifics(instruction: str, intent: str, dialogue_text: str | Iterable[str],
                    dated: Iterable[tuple[str, date | None]] = (), derived: Iterable[str] = ()) -> list[str]:
    """Problems: each specific of ``instruction`` missing from the dialogue, each one in the intent.
    ``dated``: the dialogue's turns with the day each was said on, so that a date said in words
    ("Tuesday next week") counts for the date it names (``generators.spoken_time``). ``derived``:
    the values of derived memory pieces (said in no turn; the marks check that their parts are)."""
    if not isinstance(dialogue_text, str):
        dialogue_text = "\n".join(dialogue_text)
    dialogue = normalize(dialogue_text)
    dated, derived = list(dated), list(derived)
    problems: list[str] = []
    for spec in find_specifics(instruction):
        if not contains_specific(dialogue, spec) and not any(names_value(text, spec.text, day) for text, day in dated) \
                and not any(contains_specific(value, spec) for value in derived):
            problems.append(f"dialogue misses {spec}")
        if contains_specific(intent, spec):
            problems.append(f"intent leaks {spec}")
    return problems
