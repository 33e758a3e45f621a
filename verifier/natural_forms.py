"""The oracle's right values written in the natural forms people use, one form and one kind of output
at a time, for a replay that counts where a right answer still fails.

``verifier.answer_forms`` rewrites every value of the oracle's prose at once into a style ("Monday 7
April, 2 pm, 1,374.45"). Here each form stands alone, so a check that refuses one is named: a whole
number in words ("seven thousand five hundred", "seventy-five hundred", "four days"), the British
clock with a dot ("at 14.00"), an hour said in words ("two in the afternoon"), a quarter or a half
("quarter past two", "half past ten") and a date in words ("the 8th of April 2024"). Each form is
applied to one kind of output, named by the app that holds it: a mail's content (``email``), a
document's content (``word``; ``pdf`` where the document is made a PDF), the final answer
(``system``) or a calendar event's title (``calendar``: its start and end are values of their own,
not prose). Which arguments hold a tool's words comes from its declaration (``body``, ``prose``).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Callable, Sequence

from office_env.apps import registry_cache, tool_apps
from office_env.tools import default_registry

FORMS = ("number in words", "dotted clock", "hour in words", "quarter past", "date in words")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_HOURS = ("twelve", *_UNITS[1:12])
# a whole number said as itself (not a code's, a date's, a clock's, a file's or a decimal's part):
# "4 days", "7500 GBP", "12,700.00"; a year (1900-2100) is left as it is
_NUMBER = re.compile(r"(?<![\w.,:/£$€-])(\d{1,3}(?:,\d{3})+|\d+)(\.00)?(?![\w/:-]|[.,]\d)"
                     r"(?!\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)", re.IGNORECASE)
_MONTH_BEFORE = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+$", re.IGNORECASE)
_ISO_DATE = re.compile(r"(?<![\w./-])(\d{4})-(\d{2})-(\d{2})(?![\w/-]|\.\w)")
_RANGE = re.compile(r"(?<![\w.:/-])([01]\d|2[0-3]):([0-5]\d)\s?[-–]\s?([01]\d|2[0-3]):([0-5]\d)(?![\w:])")
_CLOCK = re.compile(r"(?<![\w.:/-])([01]\d|2[0-3]):([0-5]\d)(?::00)?(?!\w|:\d|\s?[ap]\.?m\b)", re.IGNORECASE)


def _below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    tens = _UNITS[rest] if rest < 20 else _TENS[rest // 10] + (f"-{_UNITS[rest % 10]}" if rest % 10 else "")
    if not hundreds:
        return tens
    return f"{_UNITS[hundreds]} hundred" + (f" and {tens}" if rest else "")


def number_words(n: int) -> str:
    """``n`` (0 < n < 10**9) in British words; a multiple of a hundred under 10,000 that is not one of
    a thousand as people say it ("seventy-five hundred")."""
    if 1100 <= n < 10_000 and n % 100 == 0 and n % 1000:
        return f"{_below_thousand(n // 100)} hundred"
    parts = []
    for size, name in ((1_000_000, "million"), (1000, "thousand")):
        if n >= size:
            parts.append(f"{_below_thousand(n // size)} {name}")
            n %= size
    if n:
        parts.append(("and " if parts and n < 100 else "") + _below_thousand(n))
    return " ".join(parts)


def _numbers(text: str) -> str:
    def said(m: re.Match[str]) -> str:
        n = int(m.group(1).replace(",", ""))
        day = _MONTH_BEFORE.search(m.string[max(0, m.start() - 12):m.start()])  # "April 3": a date's day
        return m.group(0) if day or n < 2 or 1900 <= n <= 2100 or n >= 10**9 else number_words(n)
    return _NUMBER.sub(said, text)


def _part_of_day(hour: int) -> str:
    return "in the morning" if hour < 12 else ("in the afternoon" if hour < 18 else "in the evening")


def _hour_words(hour: int, minute: int) -> str:
    """"two in the afternoon", "half past ten in the morning"; None-like (the clock) for other minutes."""
    said = {0: "", 30: "half past "}.get(minute)
    if said is None or hour == 0:
        return f"{hour:02d}:{minute:02d}"
    return f"{said}{_HOURS[hour % 12]} {_part_of_day(hour)}" if hour != 12 or minute else "twelve noon"


def _quarter(hour: int, minute: int) -> str:
    """"quarter past two", "half past two", "quarter to three", "two o'clock": the half of the day left
    to the reader, as people leave it."""
    if minute == 15:
        return f"quarter past {_HOURS[hour % 12]}"
    if minute == 30:
        return f"half past {_HOURS[hour % 12]}"
    if minute == 45:
        return f"quarter to {_HOURS[(hour + 1) % 12]}"
    return f"{_HOURS[hour % 12]} o'clock" if minute == 0 else f"{hour:02d}:{minute:02d}"


def _ordinal(day: int) -> str:
    return f"{day}{'th' if 10 <= day % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


def _date_words(m: re.Match[str]) -> str:
    try:
        day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return m.group(0)
    return f"the {_ordinal(day.day)} of {day.strftime('%B')} {day.year}"


def _clocks(say: Callable[[int, int], str], joint: str = " to ") -> Callable[[str], str]:
    """A rewrite of each clock time by ``say``; a range's two ends ("14:00-15:00") joined by ``joint``."""
    def rewrite(text: str) -> str:
        text = _RANGE.sub(lambda m: f"{say(int(m.group(1)), int(m.group(2)))}{joint}"
                                    f"{say(int(m.group(3)), int(m.group(4)))}", text)
        return _CLOCK.sub(lambda m: say(int(m.group(1)), int(m.group(2))), text)
    return rewrite


REWRITES: dict[str, Callable[[str], str]] = {
    "number in words": _numbers,
    "dotted clock": _clocks(lambda h, m: f"{h}.{m:02d}", "-"),
    "hour in words": _clocks(_hour_words),
    "quarter past": _clocks(_quarter),
    "date in words": lambda text: _ISO_DATE.sub(_date_words, text),
}


@registry_cache(maxsize=1)
def _written() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each tool that writes words, with its app and the arguments holding them: its free text
    (``body``: a mail's content, a document's, the answer), or for an item with none its prose (an
    event's title); a tool declared ``no_words`` (a delete by title) writes none."""
    return {t.name: (t.app, (t.body,) if t.body else t.prose) for t in default_registry()
            if t.writes and t.prose and not t.no_words}


@registry_cache(maxsize=1)
def _conversions() -> dict[str, str]:
    """Each tool that converts the file its ``file_path`` names to another app's kind (its
    declaration's ``converts_to``), with that app."""
    apps = tool_apps()
    return {t.name: t.converts_to for t in default_registry() if t.converts_to in apps}


def _kind_args(call: dict[str, Any], converted: dict[str, str]) -> tuple[str, tuple[str, ...]] | None:
    """The output kind of a call (its app, or the app its file is converted to) and the arguments
    that hold its prose; None for a call with none."""
    written = _written().get(call.get("tool", ""))
    if written is None:
        return None
    app, keys = written
    path = (call.get("args") or {}).get("file_path")
    return (converted.get(path, app) if path is not None else app), keys


def _keeping(rewrite: Callable[[str], str], names: Sequence[str]) -> Callable[[str], str]:
    """``rewrite`` applied around each of ``names`` (a label the criteria ask for word for word,
    "Business cards (250)": a name, not a value), which stays as it is."""
    if not names:
        return rewrite
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)), re.IGNORECASE)

    def around(text: str) -> str:
        out, at = [], 0
        for m in pattern.finditer(text):
            out += [rewrite(text[at:m.start()]), m.group(0)]
            at = m.end()
        return "".join([*out, rewrite(text[at:])])
    return around


def natural_form_plans(oracle: list[dict[str, Any]],
                       names: Sequence[str] = ()) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(form, kind, plan) for each form and kind of output whose prose the form changes: the oracle
    with that kind's prose rewritten in that form alone; ``names``: labels with figures the criteria
    ask for word for word, left as they are."""
    conversions = _conversions()
    converted = {str(c["args"].get("file_path")): conversions[c["tool"]] for c in oracle
                 if c.get("tool") in conversions and c.get("args")}
    out = []
    for form, plain in REWRITES.items():
        rewrite = _keeping(plain, names)
        for kind in tool_apps():
            plan, changed = [], False
            for call in oracle:
                args = dict(call.get("args") or {})
                found = _kind_args(call, converted)
                if found and found[0] == kind:
                    for key in found[1]:
                        if isinstance(args.get(key), str):
                            new = rewrite(args[key])
                            changed |= new != args[key]
                            args[key] = new
                plan.append({"tool": call["tool"], "args": args})
            if changed:
                out.append((form, kind, plan))
    return out


_AMOUNT_WORDS = re.compile(r"^[\d.,]+\s?[A-Za-z]{3}$|^[A-Za-z]{3}\s?[\d.,]+$")  # "225 EUR": a value, no label


def labels(criteria: list[dict[str, Any]]) -> list[str]:
    """The keywords of ``criteria`` that are labels with figures ("Business cards (250)", "Q3"): said
    word for word, not values a person would write in another form."""
    out = []
    for criterion in criteria:
        args = criterion.get("args") or {}
        for key in ("keywords", "body_keywords", "subject_keywords"):
            for word in args.get(key, ()):
                text = str(word)
                if any(c.isalpha() for c in text) and any(c.isdigit() for c in text) \
                        and not _AMOUNT_WORDS.match(text.strip()):
                    out.append(text)
    return out
