"""The dialogue banks' one format and its parser: the words of the offline writer live as data in
``templates/dialogue/`` (``threads.bank``, ``small_talk/*.bank``, ``work/*.bank``), and every bank
is read here, so a bank of any kind is written and checked the same way.

Format, one statement per line (leading and trailing spaces are ignored)::

    # a comment (also: blank lines)
    == name                 start a section: a named list of entries (lower case, digits, _ and dots)
    == name: a | b          a section whose entries give the fields a and b (a data section)
    when flag !flag ...     the following entries of the section need these flags (``!flag``: must
                            not hold; ``when *`` lifts the condition); only where a bank allows it
    - text                  one entry; ``- ~`` is the empty entry
    - first | second        an entry with fields, separated by `` | `` outside ``[ ]``
    - text | expects: a b   a tag as the last field (``key: words``), where a bank allows the key

A section is defined once (in one file). Text is plain ASCII; ``{slot}`` inserts a value (in
the thread and small-talk banks ``{^slot}`` too: with its first letter upper-cased). What else
an entry's text may hold, and which slots and sections a bank needs, is each bank's own:
``generators.thread_bank``, ``generators.small_talk.bank`` and ``generators.other_work.bank``
compile the entries. A malformed line raises :class:`BankError` naming the file and line
(``homer`` stops at start with it). See docs/dialogue-banks.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from office_env.untrusted import UntrustedInputError, read_file

DIALOGUE_DIR = Path(__file__).resolve().parent.parent / "templates" / "dialogue"

MAX_BANK_BYTES = 4 << 20  # a bank file is a few hundred lines; anything far larger is not one
_NAME = r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*"
_HEADER = re.compile(r"==\s*(\S[^:]*?)\s*(?::(.*))?\Z")
_SECTION_NAME = re.compile(_NAME + r"\Z")
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_TAG = re.compile(r"([a-z]+):\s*(.*)\Z")
_TAG_WORD = re.compile(r"[a-z][a-z0-9-]*\Z")
FIELD_SEP = " | "


class BankError(ValueError):
    """A dialogue bank is malformed (the message names the file and line)."""


@dataclass(frozen=True, slots=True)
class Entry:
    fields: tuple[str, ...]  # the entry's text split at " | " (one field: ("",) for "- ~")
    when: tuple[str, ...]  # the condition in force: known flags, "!flag" for must-not-hold; () for none
    where: str  # "file:line" of the entry
    tags: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (key, words) of the tag field, if any


@dataclass(slots=True)
class Section:
    name: str
    columns: tuple[str, ...] | None  # the declared field names of a data section
    where: str
    entries: list[Entry] = field(default_factory=list)


def split_fields(body: str, where: str) -> list[str]:
    """Split an entry at " | " outside [alternatives]; check the brackets pair up."""
    if "[" not in body and "]" not in body:  # most entries: every separator is outside brackets
        return body.split(FIELD_SEP)
    fields: list[str] = []
    depth = start = i = 0
    while i < len(body):
        ch = body[i]
        if ch == "[":
            if depth:
                raise BankError(f"{where}: nested [ ] alternatives are not supported")
            depth = 1
        elif ch == "]":
            if not depth:
                raise BankError(f"{where}: ']' without '['")
            depth = 0
        elif not depth and body.startswith(FIELD_SEP, i):
            fields.append(body[start:i])
            i += len(FIELD_SEP)
            start = i
            continue
        i += 1
    if depth:
        raise BankError(f"{where}: '[' without ']'")
    fields.append(body[start:])
    return fields


def _header(line: str, where: str) -> tuple[str, tuple[str, ...] | None]:
    match = _HEADER.match(line)
    name = match.group(1) if match else line[2:].strip()
    if not match or not _SECTION_NAME.match(name):
        raise BankError(f"{where}: bad section name {name!r} (lower case, digits, _ and dots)")
    if match.group(2) is None:
        return name, None
    columns = tuple(c.strip() for c in match.group(2).split("|"))
    if not all(_FIELD_NAME.match(c) for c in columns) or len(set(columns)) != len(columns):
        raise BankError(f"{where}: bad field list {match.group(2).strip()!r} (distinct lower-case names, "
                        "separated by '|')")
    return name, columns


def _condition(line: str, where: str, flags: frozenset[str] | None) -> tuple[str, ...]:
    if flags is None:
        raise BankError(f"{where}: this bank's entries take no 'when' conditions")
    words = line[4:].split()
    if not words:
        raise BankError(f"{where}: 'when' needs flags (or '*')")
    if words == ["*"]:
        return ()
    for word in words:
        if word.removeprefix("!") not in flags:
            raise BankError(f"{where}: unknown flag {word.removeprefix('!')!r}")
    if {w for w in words if not w.startswith("!")} & {w[1:] for w in words if w.startswith("!")}:
        raise BankError(f"{where}: a flag is both required and forbidden")
    return tuple(words)


def _tag(fields: list[str], where: str, tags: frozenset[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Take the tag field (``key: word word``) off the end of ``fields``, if the bank has tags."""
    match = _TAG.match(fields[-1]) if tags and len(fields) > 1 else None
    if match is None:
        return ()
    key, words = match.group(1), match.group(2).split()
    if key not in tags:
        raise BankError(f"{where}: unknown tag {key!r}; this bank's tags are {', '.join(sorted(tags))}")
    bad = [w for w in words if not _TAG_WORD.match(w)]
    if not words or bad:
        raise BankError(f"{where}: tag {key!r} needs words (lower case, digits and '-'), got {match.group(2)!r}")
    fields.pop()
    return ((key, tuple(words)),)


def _entry(line: str, section: Section, where: str,
           tags: frozenset[str] = frozenset()) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    body = line[1:].strip()
    if not body:
        raise BankError(f"{where}: empty entry (write '- ~' for the empty fragment)")
    if body == "~":
        fields = [""]
    else:
        fields = [f.strip() for f in split_fields(body, where)]
        if not all(fields):
            raise BankError(f"{where}: empty field in {body!r}")
    tag = _tag(fields, where, tags)
    if section.columns is not None and len(fields) != len(section.columns):
        raise BankError(f"{where}: expected {len(section.columns)} fields ({' | '.join(section.columns)}), "
                        f"got {len(fields)}")
    return tuple(fields), tag


def parse_bank(text: str, name: str, sections: dict[str, Section] | None = None, *,
               flags: frozenset[str] | None = None, tags: frozenset[str] = frozenset()) -> dict[str, Section]:
    """Parse one bank file's text into ``sections`` (a new dict unless given: the sections of the
    bank's earlier files, whose names this file may not define again). ``flags``: the flags
    ``when`` lines may name (None: the bank has no conditions); ``tags``: the keys a last field
    ``key: words`` may have (none: a last field is always text)."""
    sections = {} if sections is None else sections
    section: Section | None = None
    when: tuple[str, ...] = ()
    for lineno, raw in enumerate(text.splitlines(), 1):
        where = f"{name}:{lineno}"
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not line.isascii():
            bad = next(ch for ch in line if not ch.isascii())
            raise BankError(f"{where}: non-ASCII character {bad!r}; banks are plain ASCII")
        if line.startswith("=="):
            sec_name, columns = _header(line, where)
            if sec_name in sections:
                raise BankError(f"{where}: section {sec_name!r} is already defined at {sections[sec_name].where}")
            section = sections[sec_name] = Section(sec_name, columns, where)
            when = ()
        elif section is None:
            raise BankError(f"{where}: expected '== section.name' before any entry or condition")
        elif line == "when" or line.startswith("when "):
            when = _condition(line, where, flags)
        elif line.startswith("- ") or line == "-":
            fields, tag = _entry(line, section, where, tags)
            section.entries.append(Entry(fields, when, where, tag))
        else:
            raise BankError(f"{where}: expected '- text', 'when flags', '== section' or '#', got {line[:40]!r}")
    return sections


def parse_banks(files: Sequence[tuple[str, str]], *, flags: frozenset[str] | None = None,
                tags: frozenset[str] = frozenset()) -> dict[str, Section]:
    """Parse the texts of one bank's files (``(name, text)`` pairs, in order); every section has entries."""
    sections: dict[str, Section] = {}
    for name, text in files:
        parse_bank(text, name, sections, flags=flags, tags=tags)
    for sec in sections.values():
        if not sec.entries:
            raise BankError(f"{sec.where}: section {sec.name!r} has no entries")
    return sections


def read_bank_files(paths: Sequence[Path], what: str) -> list[tuple[str, str]]:
    """The texts of bank files: regular files only (no links), of bounded size, UTF-8."""
    texts = []
    for path in paths:
        try:
            texts.append((str(path), read_file(path, str(path), max_bytes=MAX_BANK_BYTES).decode("utf-8")))
        except UntrustedInputError as exc:
            raise BankError(f"{exc} ({what})") from None
        except UnicodeDecodeError as exc:
            raise BankError(f"{path}: cannot read {what} ({exc})") from None
    return texts


def read_bank_dir(directory: Path, what: str) -> list[tuple[str, str]]:
    """The texts of every ``*.bank`` file of ``directory``, in name order: one bank's files."""
    try:
        paths = sorted(p for p in directory.iterdir() if p.suffix == ".bank")
    except OSError as exc:
        raise BankError(f"{directory}: cannot list {what} ({exc.strerror or exc})") from exc
    if not paths:
        raise BankError(f"{directory}: no *.bank files")
    return read_bank_files(paths, what)
