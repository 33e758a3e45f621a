"""A value must be right where an output states it, not only the result beside it.

A check's keywords find what an output must hold; around it an output often restates what the work
was drawn from: the threshold of a list ("below 75"), the total of the claims ("they come to 202.15
EUR"), the file an agenda is in ("Agenda: agenda_mar11.docx"), the supplier whose contract ends
("the Larchmont Stationers agreement"). A careful reader checks those too: a list drawn below 75 and
sent as "below 76" is wrong even when its rows are right.

A value offered beside the right one is a hedge wherever it stands ("37500 or 37501", "202.15/203.15",
"the 3rd (or 4th)"). Otherwise a stated value is known by its cue, the word the output binds it to.
A value of the same kind (a number, a day, a clock time, a file, or one of a set of names) with a
cue word right before it or right after it, at most ``MAX_FILLERS`` small words between (an
article, a preposition, a unit, a colon), in the same sentence, must be the right one. An output that
words it otherwise, or does not state it at all, is not judged here: the checks of the result do that.

Two places bind a person's name without a content word: a greeting ("Hi Elliot,") binds it to the
greeting's word, and a sign-off binds the name on the line after it ("Best,\nZara") to the cue
``sign-off``. There a name offered beside the right one is a hedge only in the greeting or the
sign-off itself ("Hi Elliot or Hugo,"): a body that names people as alternatives ("Elliot or Hugo
can approve it") says who may act, not whom the mail is to. A file may stand alone (``alone``: the
files an output may name without it, the task's own outputs): an output that names another file and
never this one names it in this one's place ("the total in budget_old.xlsx is 180700" where the work
was drawn from finance_budget.xlsx), whatever words bind it.

A period said in words (a quarter "Q3" or "the third quarter", a half "H1", a month "February" that
is no date's) is a value of its own kind: "Largest increase from Q1 to Q3" binds Q1 to "increase
from" and Q3, the pair's second end, to "increase to", so "from Q3 to Q1" states both wrongly;
"Hardware in Q2" binds Q2 to "hardware".
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from itertools import accumulate
from typing import Any

from office_env.apps import file_kind_pattern, registry_cache
from office_env.evaluation import keywords as kw

KINDS = ("number", "day", "time", "file", "name", "period")
MAX_FILLERS = 3
# small words a value and its cue may have between them ("above the 200 EUR limit", "the quote of 31600")
FILLERS = frozenset("""
    the a an of at than is are was were be been being set as about around approximately roughly
    our my your their its this that these those new old current agreed in on for per
    eur usd gbp chf cad aud jpy € $ £ % percent units unit pcs items
    monday tuesday wednesday thursday friday saturday sunday
    : = ( ) - – — ,
""".split())
# small words that say which way a value stands and are kept in its cue: "moved the sync from 14:30"
# and "moved the sync to 13:00" bind their times to "sync from" and "sync to"
KEEPS = frozenset({"from", "to", "until", "till", "by", "before", "after"})
# what offers a second value in the first one's place: a hedge ("below 75 or 76", "202.15/203.15")
# (a date's weekday may lead the second: "Thursday, 3 April or Friday, 4 April")
_ALTERNATIVE_RE = re.compile(r"\s*(?:,?\s*(?:or|or maybe|or perhaps|or possibly|maybe|perhaps)\s|/|\s?\(or\s)"
                             r"\s*(?:the\s)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+(?:the\s)?)?")
# words that are no cue: what binds a value is a content word of the sentence ("below", "limit")
NOT_CUES = FILLERS | KEEPS | frozenset("""
    and or but not nor no with without i we you he she they it me us him her them will would can could
    should shall may might must do does did have has had please hi hello dear best thanks regards
    also just only still then there here which who whom what when where while if so
""".split())

SIGN_OFF = "sign-off"  # the cue of the name on the line after a closing ("Best,\nZara")
# the words a greeting names its reader after: an agent may say "Hello Elliot" where the oracle says "Hi Elliot"
GREETINGS = ("hi", "hello", "dear", "hey")
ADDRESS_CUES = frozenset((*GREETINGS, SIGN_OFF))  # the cues that bind a name as whom a mail is to or from
# a line that closes a letter: the name on the next line signs it
_CLOSING_RE = re.compile(r"(?:^|\n)[ \t]*(?:(?:all the |very )?best(?: wishes| regards)?|(?:kind |warm |many |best )?"
                         r"(?:regards|thanks)|thank you|cheers|sincerely|(?:yours )?(?:sincerely|truly)|take care)"
                         r"[ \t]*[,.!]?[ \t]*\n\s*$")
_SENTENCE_END_RE = re.compile(r"[.!?;](?=\s|$)|\n")
# a quarter or a half is one token, a value (a cue is never read past it): "q3", "h1"
_PERIOD_TOKEN = r"(?:q[1-4]|h[12])(?![\w-])"
_TOKEN_RE = re.compile(rf"{_PERIOD_TOKEN}|[a-z][a-z'’-]*|\d[\d.,:-]*\w*|[€$£%:=()–—,/-]|\S+")
_PERIOD_TOKEN_RE = re.compile(_PERIOD_TOKEN)
_MONTH_WORDS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
# a period in words: "q3", "the third quarter", "quarter 3", "h1", "the first half", a month's name ("may" is as
# often a verb, and is left out; "sept" and a three-letter name are the month too)
_PERIOD_RE = re.compile(
    r"(?<![\w-])(?:(q[1-4]|h[12])|(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]quarter|quarter\s([1-4])"
    r"|(first|second|1st|2nd)[\s-]half"
    r"|(jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)(?:uary|ruary|ch|il|e|y|ust|tember|ember|ober)?\.?)"
    r"(?![\w-])")
_NUMBER_RE = re.compile(r"(?<![\w.,:-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[:.,-]\d)")


@registry_cache(maxsize=1)
def file_name_re() -> re.Pattern[str]:
    """A file's name: one ending in a kind a file's name may end in (``office_env.apps.file_kinds``)."""
    return re.compile(rf"(?<![\w/.-])(?:[\w-]+/)*[\w.-]+\.(?:{file_kind_pattern()})\b")


MAX_KEPT_VALUE_CHARS = 256  # a longer value is read at each call, not kept


def value_key(kind: str, value: Any, day_first: bool | None = None) -> Any:
    """What a value of ``kind`` is compared by (None when ``value`` is not one). It depends on the
    value's text alone (spacing folded, lower-cased), so the latest texts' are kept: a check reads each
    of its values again for every output it reads, and a gate scores its outputs again."""
    text = " ".join(str(value).split()).lower()
    return (_key_of if len(text) > MAX_KEPT_VALUE_CHARS else _kept_key_of)(kind, text, day_first)


def _key_of(kind: str, text: str, day_first: bool | None) -> Any:
    """``value_key`` of a value written ``text`` (its key is immutable: it is kept)."""
    if kind == "number":
        found = _numbers(kw.without_thousands(text))
        return found[0][2] if len(found) == 1 else None
    if kind == "day":
        days = kw.date_spans(text, day_first)
        return next(iter(days[0][2])) if len(days) == 1 and len(days[0][2]) == 1 else None
    if kind == "time":
        clocks = kw.clock_spans(text)
        return clocks[0][2] if clocks else None
    if kind == "file":
        return text.rsplit("/", 1)[-1] if file_name_re().fullmatch(text) else None
    if kind == "period":
        periods = _periods(text)
        return periods[0][2] if len(periods) == 1 and (periods[0][0], periods[0][1]) == (0, len(text)) else None
    return text or None


_kept_key_of = registry_cache(maxsize=1024)(_key_of)  # a file's name is one of the registry's kinds


def _periods(text: str) -> list[tuple[int, int, str]]:
    """(start, end, key) of each period ``text`` (lower-cased) says in words, not a date's month; the
    key is "q3", "h1" or the month's name ("february")."""
    dates = [(a, b) for a, b, _ in kw.date_spans(text)]
    out = []
    for m in _PERIOD_RE.finditer(text):
        code, quarter, number, half, month = m.groups()
        if month:
            full = next(w for w in _MONTH_WORDS if w.startswith(month))
            if not full.startswith(m.group(0).rstrip(".")) or any(a <= m.start() < b for a, b in dates):
                continue  # "junk" is no June; a date's month is the date's
            key = full
        else:
            key = code or (f"q{_ORDINALS[quarter]}" if quarter else f"q{number}" if number else f"h{_ORDINALS[half]}")
        out.append((m.start(), m.end(), key))
    return out


def _numbers(text: str) -> list[tuple[int, int, float]]:
    """Figures of their own: not the parts of a date, a clock time or a code ("EC-523", "Q2", "65W")."""
    hidden = sorted([(a, b) for a, b, _ in kw.date_spans(text)] + [(a, b) for a, b, _ in kw.clock_spans(text)])
    starts = [a for a, _ in hidden]
    reach = list(accumulate((b for _, b in hidden), max))  # the furthest end of the spans up to each one

    def covered(start: int, end: int) -> bool:  # a span that starts before ``end`` and ends after ``start``
        before = bisect_left(starts, end)
        return before > 0 and reach[before - 1] > start

    return [(m.start(), m.end(), round(float(m.group(0).replace(",", "")), 6)) for m in _NUMBER_RE.finditer(text)
            if not covered(m.start(), m.end())]


@registry_cache(maxsize=256)  # a check reads one output for each of its values, and a gate scores it again
def candidates(text: str, kind: str, day_first: bool | None = None,
               names: tuple[str, ...] = ()) -> list[tuple[int, int, Any]]:
    """(start, end, key) of every value of ``kind`` in ``text`` (lower-cased, thousands separators
    out), compared by ``value_key``; a name is one of ``names``."""
    if kind == "number":
        return _numbers(text)
    if kind == "day":
        return kw.date_spans(text, day_first)
    if kind == "time":
        return kw.clock_spans(text)
    if kind == "file":
        return [(m.start(), m.end(), m.group(0).rsplit("/", 1)[-1]) for m in file_name_re().finditer(text)]
    if kind == "period":
        return _periods(text)
    found: list[tuple[int, int, str]] = []
    for name in sorted({" ".join(n.split()).lower() for n in names if n.strip()}, key=len, reverse=True):
        if name not in text:  # most names are not in a text: one substring search instead of a pattern's
            continue
        for m in whole_word_re(name).finditer(text):
            if not any(a < m.end() and m.start() < b for a, b, _ in found):  # the longest name first
                found.append((m.start(), m.end(), name))
    return sorted(found)


@lru_cache(maxsize=1024)  # a check looks for the same names in every output, and each gate again
def whole_word_re(word: str) -> re.Pattern[str]:
    """The pattern of ``word`` standing alone (no word character either side)."""
    return re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])")


_REACH = 200  # characters either side of a value that can hold its cue (a few words, a long file name)


def _sentence(text: str, start: int, end: int) -> tuple[str, str]:
    """The words of a span's sentence before it and after it (within ``_REACH``)."""
    head = text[max(0, start - _REACH):start]
    ends = list(_SENTENCE_END_RE.finditer(head))
    before = head[ends[-1].end():] if ends else head
    tail = text[end:end + _REACH]
    stop = _SENTENCE_END_RE.search(tail)
    return before, tail[:stop.start()] if stop else tail


def _cue(tokens: list[str], before: bool) -> str | None:
    """The cue in ``tokens`` (read outward from a value): its first content word within
    ``MAX_FILLERS`` small words, with the ``KEEPS`` words passed on the way, in the text's order
    ("sync from"); None when a figure or another value comes first. A period is the second end of a
    pair: read back past the first end ("increase from q1 to q2" binds q2 to "increase to")."""
    kept: list[str] = []
    pair = -1  # where the first end of a pair of periods stands
    uncounted = 0  # that end and its "from" are no small words between the value and its cue
    for at, token in enumerate(tokens):
        if at - uncounted > MAX_FILLERS:
            return None
        if token in FILLERS:
            continue
        if pair >= 0 and at == pair + 1 and token in KEEPS:
            uncounted += 1
            continue  # the "from" of "from q1 to q2": the first end's own
        if token in KEEPS:
            kept.append(token)
            continue
        if before and pair < 0 and kept == ["to"] and _PERIOD_TOKEN_RE.fullmatch(token):
            pair, uncounted = at, 1
            continue
        if not token[0].isalpha() or _PERIOD_TOKEN_RE.fullmatch(token):
            return None
        return " ".join([token, *reversed(kept)] if before else [*kept, token])
    return None


@lru_cache(maxsize=1024)
def cues(text: str, start: int, end: int) -> tuple[str | None, str | None]:
    """The cues a span at ``start:end`` of ``text`` is bound to: before it and after it."""
    before, after = _sentence(text, start, end)
    cue_before = _cue(list(reversed(_TOKEN_RE.findall(before))), True)
    if cue_before is None and not before.strip() and _CLOSING_RE.search(text[max(0, start - len(before) - 60):
                                                                             start - len(before)]):
        cue_before = SIGN_OFF  # the first words of the line after "Best,"
    return cue_before, _cue(_TOKEN_RE.findall(after), False)


@lru_cache(maxsize=256)  # a check reads one output for each of its values, and a gate scores it again
def prepared(text: str, kind: str) -> str:
    """The text a kind is looked for in: lower-cased, and for numbers with the thousands separators
    out and numbers written in words as figures ("seventy-five" is 75)."""
    text = text.lower()
    if kind == "number":
        return kw.without_thousands(kw.words_as_digits(text))
    if kind == "time":  # a day written before a time is where it stands: "from 2025-04-01 14:30" is "from 14:30"
        for start, end, _ in reversed(kw.date_spans(text)):
            text = text[:start] + "on".ljust(end - start) + text[end:]
    return text


def wrong_statements(text: str, values: list[dict[str, Any]], day_first: bool | None = None) -> list[str]:
    """One line for each value of ``values`` (``{value, kind, before, after, others, alone}``) that
    ``text`` states otherwise: a value of the kind bound to one of its cue words that is not the
    value, or another file named where a file standing alone never is."""
    problems = []
    for entry in values:
        kind = entry["kind"]
        right = value_key(kind, entry["value"], day_first)
        plain = prepared(text, kind)
        before = {c.lower() for c in entry.get("before", ())}
        after = {c.lower() for c in entry.get("after", ())}
        names = (str(entry["value"]), *entry.get("others", ())) if kind == "name" else ()
        found = candidates(plain, kind, day_first, names)
        # a greeting's or a sign-off's name: another offered beside it is a hedge in that place only
        address = ADDRESS_CUES & before if kind == "name" else frozenset()
        if kind == "file" and "alone" in entry and not any(same(kind, key, right) for _, _, key in found):
            allowed = {value_key(kind, a) for a in entry["alone"]}
            in_place = [key for _, _, key in found if key not in allowed]
            if in_place:
                problems.append(f"names {in_place[0]!r} where it is {entry['value']!r}")
        right_spans = {(s, e) for s, e, k in found if same(kind, k, right)}  # one pass, not one per value found
        for i, (start, end, key) in enumerate(found):
            if (start, end) in right_spans:
                continue  # the right value, or a reading of it ("ten o'clock": 10:00 or 22:00)
            beside = [j for j in (i - 1, i + 1) if 0 <= j < len(found) and same(kind, found[j][2], right)
                      and _ALTERNATIVE_RE.fullmatch(plain[min(end, found[j][1]):max(start, found[j][0])])
                      and (not address or cues(plain, found[j][0], found[j][1])[0] in address)]
            if beside:
                problems.append(f"offers {plain[start:end]!r} beside {entry['value']!r}")
                continue
            cue_before, cue_after = cues(plain, start, end)
            cue = cue_before if cue_before in before else cue_after if cue_after in after else None
            if cue is not None:
                problems.append(f"states {plain[start:end]!r} by {cue!r} where it is {entry['value']!r}")
    return problems


def same(kind: str, key: Any, right: Any) -> bool:
    """Whether a value found (``key``) is the right one (``right``, from ``value_key``)."""
    if right is None:
        return True  # a value the check cannot read judges nothing (the schema's checks come first)
    if kind == "number":
        return abs(key - right) < 0.005
    if kind == "day":
        return right in key or (0, right[1], right[2]) in key
    if kind == "time":
        return key == right or (key[0] + 12, key[1]) == right  # "2:30" may be said of 14:30
    return key == right
