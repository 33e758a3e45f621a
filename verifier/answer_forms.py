"""The oracle's answers written the ways people write them, for a gate that replays each.

An agent that writes "Monday 7 April", "2 pm" or "1,374.45" where the oracle wrote "2025-04-07",
"14:00" or "1374.45" has answered right, and the checks must say so. :func:`answer_form_plans`
rewrites the free text the oracle writes (a mail's content, a document's content, the final
answer) into each of :data:`FORMS`, a date in numbers in the office city's order (``21/10/2025``
in Leeds, ``10/21/2025`` in Chicago); the ``answer_forms`` gate replays every rewritten plan and
requires the criteria to pass. File names, addresses, subjects, sheet cells and calendar fields
are left as they are: they are names and values, not prose (a tool's ``body`` says which argument
is its prose).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Callable, Mapping

from office_env.apps import registry_cache
from office_env.tools import default_registry

FORMS = ("words", "numbers", "us")

_ISO_DATE = re.compile(r"(?<![\w./-])(\d{4})-(\d{2})-(\d{2})(?![\w/-]|\.\w)")
_CLOCK = re.compile(r"(?<![\w.:/-])([01]\d|2[0-3]):([0-5]\d)(?!\w|:\d|\s?[ap]\.?m\b)", re.IGNORECASE)
_CURRENCY_AFTER = re.compile(r"\s?(?:[A-Z]{3}\b|pounds|dollars|euros)")
_AMOUNT = re.compile(r"(?<![\w.,/-])(\d{4,})(\.\d+)?(?![\w/-]|[.,]\d)")


@registry_cache(maxsize=1)
def text_args() -> Mapping[str, str]:
    """The free-text argument of each tool that writes prose (its declared ``body``: a mail's
    content, a document's, the answer; a subject or an event's title is a name, left as written)."""
    return {t.name: t.body for t in default_registry() if t.body}


def _day(match: re.Match[str]) -> date | None:
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _date_words(day: date, year: int) -> str:
    """"Monday 7 April" in ``year``, else "7 April 2026"."""
    return f"{day.strftime('%A')} {day.day} {day.strftime('%B')}" if day.year == year else \
        f"{day.day} {day.strftime('%B')} {day.year}"


def _clock_words(hour: int, minute: int, *, dots: bool = False) -> str:
    """"2 pm", "9:30 am", "noon", "midnight" (``dots``: "2 p.m.")."""
    if (hour, minute) == (12, 0):
        return "noon"
    if (hour, minute) == (0, 0):
        return "midnight"
    half = ("p.m." if dots else "pm") if hour >= 12 else ("a.m." if dots else "am")
    shown = hour % 12 or 12
    return f"{shown} {half}" if minute == 0 else f"{shown}:{minute:02d} {half}"


def _grouped(match: re.Match[str]) -> str:
    """An amount with thousands separators: one with cents (1374.45), or a whole number said as
    money (12700 EUR); a bare whole number may be a code or a year (PO 10234, 2024): left as it is."""
    whole, fraction = match.group(1), match.group(2) or ""
    after = match.string[match.end():match.end() + 8]
    before = match.string[max(0, match.start() - 2):match.start()]
    money = bool(_CURRENCY_AFTER.match(after)) or any(sign in before for sign in "$£€")
    if not fraction and not money:
        return match.group(0)
    return f"{int(whole):,}{fraction}"


def rewrite(text: str, form: str, year: int, day_first: bool | None = True) -> str:
    """``text`` with its ISO dates, 24-hour clock times and large or exact amounts written in
    ``form``: "words" (Monday 7 April, 2 pm, 1,374.45), "numbers" (07/04/2025, 2:00 PM) or "us"
    (April 7, 2025, 2 p.m.). ``year``: the task's, which a date in it goes without; ``day_first``:
    the office's order of a numeric date (False: month first)."""
    numeric = "%m/%d" if day_first is False else "%d/%m"
    dates: Callable[[date], str] = {
        "words": lambda d: _date_words(d, year),
        "numbers": lambda d: d.strftime(f"{numeric}/%Y"),
        "us": lambda d: f"{d.strftime('%B')} {d.day}, {d.year}",
    }[form]
    text = _ISO_DATE.sub(lambda m: dates(d) if (d := _day(m)) else m.group(0), text)
    clocks: Callable[[int, int], str] = {
        "words": lambda h, m: _clock_words(h, m),
        "numbers": lambda h, m: f"{h % 12 or 12}:{m:02d} {'PM' if h >= 12 else 'AM'}",
        "us": lambda h, m: _clock_words(h, m, dots=True),
    }[form]
    text = _CLOCK.sub(lambda m: clocks(int(m.group(1)), int(m.group(2))), text)
    if form == "words":
        text = _AMOUNT.sub(_grouped, text)
    return text


def answer_form_plans(oracle: list[dict[str, Any]], now: datetime,
                      day_first: bool | None = True) -> list[tuple[str, list[dict[str, Any]]]]:
    """(form, plan) for each form that changes what the oracle writes (none when it writes no
    prose, or none with a date, a time or an amount); numeric dates in ``day_first``'s order."""
    out, text = [], text_args()
    for form in FORMS:
        plan, changed = [], False
        for call in oracle:
            key = text.get(call.get("tool", ""))
            args = dict(call.get("args") or {})
            if key and isinstance(args.get(key), str):
                new = rewrite(args[key], form, now.year, day_first)
                changed |= new != args[key]
                args[key] = new
            plan.append({"tool": call["tool"], "args": args})
        if changed:
            out.append((form, plan))
    return out
