"""A request said with one detail left for the next turn: "set Bob's score in a file I still have
to look up to 95" -- "Which file?" -- "data/scores.xlsx".

A user who gives a whole instruction in one sentence makes the sentence the evidence, and a
reader who knows the instruction's words finds it without reading. People often say what is to
be done first and the detail when they have it; the reader must join the two turns. This module
finds the detail a sentence can leave out (its value, a file, a person, a figure, a day, a time,
an address or a quoted title standing as a word of its own) and says it as a placeholder from
the thread bank's ``withheld.<kind>`` lines; the assistant asks with an ``ask_withheld.<kind>``
line and the user answers with the value.
"""

from __future__ import annotations

import random
import re

from generators.near_values import near_value, spoils_span
from generators.specifics import find_specifics
from office_env.apps import registry_cache

WITHHELD_KINDS = ("file", "email", "date", "time", "number", "person", "quoted")
_QUOTES = "\"'“”‘’"
# words after which a placeholder ("a file I still have to look up") does not read: an article, a
# possessive, a naming verb; and the nouns that make the detail a name's first half
_NAMING = frozenset("a an the this that its my our your their his her named called titled name filename file "
                    "files".split())
_NOUNS = frozenset("file files pdf pdfs excel doc docx document documents word sheet sheets spreadsheet people "
                   "students student report reports table folder column columns row rows items points score scores "
                   "id ids format template list".split())
# nouns a detail may stand after as its name ("send a email revenues.eml", "create calendar event Bob.ics")
_KIND_NOUNS = frozenset("email emails mail mails event events message messages invitation image images card "
                        "memo letter note notes calendar slide slides chart".split())
# words a figure follows when it is an amount, not a label's number ("more than 6.9", "by 5%", "to 95")
_BEFORE_FIGURE = frozenset("to than by of at is are be was were for from under over above below about around "
                           "exceeds exceed exceeding reaches reach costs cost pay paid set equals equal with "
                           "budget limit least most only up down total".split())
_YEAR = re.compile(r"199\d|200[1-9]|20[1-3]\d")  # not 2000: as often an amount ("a budget of 2000")
_BEFORE_YEAR = frozenset("of from since until in during".split())  # "the revenue of 2024": a year
_AFTER_AMOUNT = frozenset("for in and or per each to at on of from with by".split())  # "2000 for each": an amount
_FIGURE = re.compile(r"[$€£¥]?\s?\d[\d,]*(?:\.\d+)?\s?(?:%|[$€£¥]|percent|dollars?|euros?|pounds?)?")
_BEFORE = " ("  # what may stand before a detail said as a word of its own
_AFTER = " ,.;:?!)"  # and after it


@registry_cache(maxsize=4096)  # a history's plan asks of each piece of the task and of every sibling
def withheld_kind(value: str) -> str | None:
    """The kind of ``value`` when it is one specific of :data:`WITHHELD_KINDS`, else None."""
    found = find_specifics(value)
    if len(found) == 1 and found[0].text == value.strip() and found[0].kind in WITHHELD_KINDS:
        if found[0].kind == "number" and not _FIGURE.fullmatch(value.strip()):
            return None  # a label with a number in it ("hw1", "CS161") is no figure to look up
        return found[0].kind
    return None


# Of a made-up sentence, the kinds a placeholder can stand for: a capitalised word may be a sheet's
# header ("add a new header Team"), so a person is a full name only.
_MADE_UP_KINDS = ("file", "email", "date", "time", "number")
_FULL_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z'-]+)+")


def detail_to_withhold(sentence: str) -> tuple[str, str] | None:
    """A detail of ``sentence`` that it can leave out (:func:`withhold`), and its kind: the
    first of its files, addresses, days, times, figures and full names said as a word of its own."""
    for spec in find_specifics(sentence):
        if spec.kind == "number" and not _FIGURE.fullmatch(spec.text):
            continue
        if (spec.kind in _MADE_UP_KINDS or (spec.kind == "person" and _FULL_NAME.fullmatch(spec.text))) \
                and withhold(sentence, spec.text, "_", spec.kind) is not None:
            return spec.text, spec.kind
    return None


def withhold(sentence: str, value: str, placeholder: str, kind: str | None = None) -> str | None:
    """``sentence`` with ``value`` (said once, as a word of its own, quotes and all) in place of
    ``placeholder``; None where a placeholder would not read: the value not there once, glued to
    other text ("1.5$/pound", "0.5"), one of a list, after an article or a naming word ("named
    report.pdf"), before a noun ("Budget Report pdf file") or after one ("a email revenues.eml",
    "calendar event Bob.ics"), or, for a figure (``kind``
    "number"), a label's number ("midterm 1", "class 5") or a year ("2024 total revenue", "the
    revenue of 2024") rather than an amount ("a budget of 2000 for each person")."""
    if not value or sentence.count(value) != 1:
        return None
    start = sentence.index(value)
    end = start + len(value)
    if 0 < start and end < len(sentence) and sentence[start - 1] in _QUOTES and sentence[end] in _QUOTES:
        start, end = start - 1, end + 1
    if (start and sentence[start - 1] not in _BEFORE) or (end < len(sentence) and sentence[end] not in _AFTER):
        return None
    if sentence[end:end + 1] in (".", ":") and sentence[end + 1:end + 2].isalnum():
        return None  # "0" of "0.5", "report.docx" of "report.docx.bak"
    if sentence[end:end + 1] == "," or sentence[max(0, start - 2):start] == ", ":
        return None  # one of a list ("hw1, hw2 and hw3"): a placeholder there reads as another item
    before = re.findall(r"[A-Za-z']+", sentence[:start])
    after = re.match(r"\s*([A-Za-z']+)", sentence[end:])
    previous, following = (before[-1].lower() if before else ""), (after.group(1).lower() if after else "")
    if previous in _NAMING or following in _NOUNS or previous in _NOUNS or (
            previous in _KIND_NOUNS and kind not in ("person", "email")):  # "email John Smith": a verb
        return None  # the detail names what the word before it is ("a email revenues.eml"): no gap there
    if kind == "number" and (previous not in _BEFORE_FIGURE or (_YEAR.fullmatch(value) and (
            (following and following not in _AFTER_AMOUNT) or previous in _BEFORE_YEAR))):
        return None  # a label's number, or a year ("2024 total revenue", "revenue of 2024"), is no amount
    out = sentence[:start] + placeholder + sentence[end:]
    return re.sub(r"\s{2,}", " ", out).strip()


def changed_detail(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A change of plan of a sentence: its detail (:func:`detail_to_withhold`) moved to another of
    its kind (a later version of a file, another figure, day, time or person); the new sentence
    and the new detail, or None when it has no such detail."""
    held = detail_to_withhold(sentence)
    if held is None:
        return None
    value, kind = held
    alt: str | None
    if kind == "file" and "." in value:
        stem, ext = value.rsplit(".", 1)
        stem = re.sub(r"_(?:v\d+|final|new|updated)$", "", stem)  # a later version of the file, not of its last one
        alt = f"{stem}_{rng.choice(('v2', 'final', 'new', 'updated'))}.{ext}"
    else:
        alt = near_value(value, kind, rng)
    if not alt or alt.lower() in sentence.lower() or spoils_span(sentence, new := sentence.replace(value, alt, 1)):
        return None  # (no span of days or hours moved to end before it starts)
    return new, alt
