"""Small rules of written English for generated text: possessives, articles, lists, and column
names shown to people.

Slot-filled text gives itself away ("Office supplies's Q2", "a invoice", "unit_price"); these
helpers are what every family and document writer uses instead of bare f-strings.
"""

from __future__ import annotations

import functools
import re

_VOWEL_SOUND_EXCEPTIONS = ("hour", "honest", "honour", "heir")
_CONSONANT_SOUND_EXCEPTIONS = ("uni", "use", "usu", "eu", "one", "once")
_ACRONYM_RE = re.compile(r"^[A-Z0-9]{2,}$")
_SPLIT_RE = re.compile(r"[_\-]+|(?<=[a-z0-9])(?=[A-Z])")


def possessive(name: str) -> str:
    """``Marcus's``, ``the team's``, ``the sales teams'`` (a plural in -s takes only the apostrophe)."""
    name = name.strip()
    if not name:
        return name
    if name.endswith("s") and name.split()[-1][:1].islower() and name.split()[-1] not in ("boss", "business", "class"):
        return f"{name}'"
    return f"{name}'s"


def article(phrase: str) -> str:
    """``a`` or ``an`` for ``phrase`` by its first sound (``an invoice``, ``a unit price``, ``an hour``,
    ``an HR review``)."""
    word = phrase.strip().split()[0] if phrase.strip() else ""
    lower = word.lower()
    if _ACRONYM_RE.match(word):
        return "an" if word[0] in "AEFHILMNORSX8" else "a"
    if lower.startswith(_VOWEL_SOUND_EXCEPTIONS):
        return "an"
    if lower.startswith(_CONSONANT_SOUND_EXCEPTIONS):
        return "a"
    return "an" if lower[:1] in "aeiou" else "a"


def with_article(phrase: str) -> str:
    return f"{article(phrase)} {phrase}"


_FUNCTION_OPENERS = frozenset("the a an our this that these those my their its his her last someone".split())


def mid_sentence(clause: str) -> str:
    """``clause`` as it reads inside a sentence: a capital that only marked its start is dropped
    ("The overtime total was sent" after "I noticed"), a name's or an acronym's is kept."""
    first = clause.split(" ", 1)[0]
    keeps = first.lower() not in _FUNCTION_OPENERS or len(first) > 1 and not first[1:].islower()  # "THE", "AN"
    return clause if keeps else clause[:1].lower() + clause[1:]


def join_and(items: list[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def column_words(header: str) -> str:
    """A column name as a person says it inside a sentence: ``unit_price`` -> ``unit price``,
    ``TotalAmount`` -> ``total amount``; acronyms (``VAT``, ``Q2``) keep their case."""
    parts = [p for p in _SPLIT_RE.split(header.strip()) if p]
    words = []
    for part in " ".join(parts).split():
        words.append(part if _ACRONYM_RE.match(part) else part.lower())
    return " ".join(words)


# A word (a file name or an address is one word): r"[a-z0-9']+(?:[_.@/-][a-z0-9']+)*", written
# possessive (nothing after a word's letters can fail, so giving any back finds nothing else):
# the engine keeps no way back, and finds a line's words in about two thirds of the time
_WORD = re.compile(r"[a-z0-9']++(?:[_.@/-][a-z0-9']++)*+")


# Words of a reaction that a line says once: "How nice, that's nice to hear", "That sounds lovely,
# by the sound of it" say them twice, as a reaction and its comment drawn apart do.
_SAID_ONCE = {word: word for word in ("nice", "lovely", "good", "great", "brilliant", "wonderful", "fantastic",
                                      "excellent", "amazing", "perfect", "fair", "classic", "interesting", "lucky",
                                      "treat", "sound", "love")}
_SAID_ONCE.update(sounds="sound", loved="love")


@functools.lru_cache(maxsize=4096)
def repeats_itself(text: str) -> bool:
    """A word said twice in a row ("the Prism Dashboard dashboard"; a number may repeat), a phrase
    of three words said twice ("see you soon. See you soon.") or a word of a reaction said twice
    ("How nice, that's nice to hear"). Remembered for the last few thousand lines: small talk draws
    the same lines again in other histories."""
    words = _WORD.findall(text.lower())
    distinct = set(words)
    if len(distinct) != len(words):  # (most lines say every word once: then no word or phrase repeats)
        for a, b in zip(words, words[1:]):
            if a == b and not a.isdigit():
                return True
        # (a phrase said twice needs four words at least)
        if len(words) > 3 and len(set(zip(words, words[1:], words[2:]))) != len(words) - 2:
            return True
    if _SAID_ONCE.keys().isdisjoint(distinct):  # (most lines say no word of a reaction)
        return False
    reacted = [_SAID_ONCE[w] for w in words if w in _SAID_ONCE]
    return len(reacted) != len(set(reacted))


_FILLERS_RE = re.compile(r"^(?:(?:ha|haha|mm|hmm|well|oh|ah|so|right|okay|ok|anyway|honestly|actually|yeah|funny|"
                         r"and|but|by the way)\b[,.!:]?\s*)+", re.IGNORECASE)
# a capitalised word: r"\b[A-Z][\w'-]*", written to open with its capital (the word's start checked
# after it), so that a line's other letters are passed at once
_CAPITAL_RE = re.compile(r"[A-Z](?<!\w[A-Z])[\w'-]*")
_NOT_WORD_RE = re.compile(r"[^\w\s\u00b7]")


_CLOSERS = ("anyway", "though", "really", "honestly", "i guess", "haha", "ha", "to be fair", "just saying", "you know",
            "as usual", "for once", "touch wood", "fingers crossed")
_CLOSERS_RE = re.compile(rf"(?:[,.;]?\s*(?:{'|'.join(_CLOSERS)})[.!]*)+$", re.IGNORECASE)
# A closer can only be taken off a line that, without its closing dots and marks, ends in one: the
# pattern above tries every position of the line (tens of microseconds), these its last letters
# (plain lower-casing where they are ASCII; the pattern's own case rules, "ſ" for "s", elsewhere).
_CLOSER_END_RE = re.compile(rf"(?:{'|'.join(_CLOSERS)})\Z", re.IGNORECASE)
_LONGEST_CLOSER = max(map(len, _CLOSERS))
# The ASCII characters some piece of _CLOSERS_RE can match (its marks, spaces, the closers' letters
# in either case): a match starts after the last ASCII character outside them, so the pattern is
# tried from there rather than from every position of the line.
_CLOSER_ASCII = "".join(c for c in map(chr, range(128)) if re.fullmatch(r"[,.;!\s]", c) or any(
    re.fullmatch(re.escape(letter), c, re.IGNORECASE) for letter in set("".join(_CLOSERS))))


def _bare(text: str) -> str:
    """The line without its leading fillers ("Ha,", "Well,") and closing stock phrase ("anyway")."""
    core = _FILLERS_RE.sub("", text.strip())
    if not core.endswith("\n"):  # "$" also matches before a final line break: leave that to the pattern
        tail = core.rstrip(".!")[-_LONGEST_CLOSER:]
        ends = tail.lower().endswith(_CLOSERS) if tail.isascii() else _CLOSER_END_RE.search(tail) is not None
        if not ends:
            return core  # what _CLOSERS_RE.sub would return: it has no match
        start = len(core.rstrip(_CLOSER_ASCII))
        if start and not core[start - 1].isascii():  # (it may fold to a closer's letter, or be a space)
            start = 0
        found = _CLOSERS_RE.search(core, start)  # the leftmost match, which runs to the line's end
        return core if found is None else core[:found.start()]
    return _CLOSERS_RE.sub("", core)


@functools.lru_cache(maxsize=8192)
def _core(text: str) -> str:
    """``_bare(text)``, remembered for the last few thousand lines: a line of small talk is keyed
    when it is drawn and again when its history is scored, and lines recur across histories."""
    return _bare(text)


# _NOT_WORD_RE's work on an ASCII line as a byte table (its marks become spaces, "·" of a name
# set aside stays): bank text is ASCII, and most names are
_ASCII_MARKS = bytes(32 if i < 128 and _NOT_WORD_RE.match(chr(i)) else i for i in range(256))


def _fold(core: str) -> str:
    if core.isascii():
        return _fold_ascii(core)
    return " ".join(_NOT_WORD_RE.sub(" ", core.casefold()).split())


def _fold_ascii(text: str) -> str:
    """``_fold`` of a text of ASCII and "\u00b7" only (Latin-1 bytes: "\u00b7" is 0xb7)."""
    return " ".join(text.lower().encode("latin-1").translate(_ASCII_MARKS).decode("latin-1").split())


def repeat_key(text: str) -> str:
    """What two lines share when one is the other said again: the line without its leading
    fillers, its closing stock phrase and punctuation."""
    return _fold(_core(text))


@functools.lru_cache(maxsize=8192)
def _unnamed(core: str) -> str:
    head = core[:1].lower() + core[1:]
    unnamed = _CAPITAL_RE.sub("\u00b7", head)
    return _fold_ascii(unnamed) if head.isascii() else _fold(unnamed)


def near_key(text: str) -> str:
    """What two lines share when one says the other again of another person or place: the line
    without its leading fillers, closing stock phrase, names and capitalised words, and punctuation."""
    return _unnamed(_core(text))


def repeat_keys(text: str) -> tuple[str, str]:
    """``(repeat_key(text), near_key(text))``, the line stripped once."""
    core = _core(text)
    return _fold(core), _unnamed(core)
