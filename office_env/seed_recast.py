"""A seed task re-cast with other people: the same work, other names.

OfficeBench's seeds are public, and so are their values: whoever has read seed 1-1 knows that
Bob's score becomes 95 and that Carol has the highest one. A split regenerated from them with the
seed's own people is answered by memory of the seed, and a reader trained on one regeneration
knows the next one's values. So each regeneration gives every person of the seed another first
name, drawn by the task's random stream, everywhere at once: the instruction, the criteria, the
names of folders and files (``emails/bob/``, ``calendar/alice.ics``) and the words inside the
testbed's and reference's files (mail headers and bodies, calendars, Word and Excel text, plain
text). The files keep every other byte: text is replaced word for word in place, and a Word or
Excel package is re-packed member for member with only its XML text nodes changed.

Who is a person: the seed's user, its mailbox and calendar owners (``emails/<name>/``,
``calendar/<name>.ics``) and those of the split's other seeds, and the first names (the office's
bank, ``OTHER_FIRST_NAMES``) that the instruction or a file says capitalised or in an address. A name
is left as it is (and said why in ``Cast.kept``) when a PDF says it (PDFs are not re-written) or
when it is also a common English word ("Mark the rows", "may") or a lower-case word of the seed. After re-writing, every
file is read back: if an old name is still in any of them (a name split across a Word run, a
base64 mail body), the seed is used as it is and ``Cast.kept`` says why, rather than a task whose
files disagree with its instruction.
"""

from __future__ import annotations

import dataclasses
import io
import os
import random
import re
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from office_env.apps import get_app, kind_readers, load, registry_cache
from office_env.errors import OfficeError
from office_env.formats.bounded import read_bytes
from office_env.formats.ooxml import open_package, read_member
from office_env.officebench import SeedTask
from office_env.synthesis.world import FIRST_NAMES
from office_env.untrusted import copy_tree

_ID = re.compile(r"^[a-z]{3,20}$")
_CAPITALISED = re.compile(r"(?<![A-Za-z])[A-Z][a-z]{2,19}(?![A-Za-z])")
# First names a seed may say that the office's bank does not hold: found as people, never drawn
# (a common English word among them, "Mark", "Grace", is kept by ``_ordinary_word``).
OTHER_FIRST_NAMES = frozenset("""
alice bob carol dave david eve frank heidi ivan judy mallory oscar peggy trent walter anna
jack john mary tom emma olivia liam noah james sophia isabella mia charlotte amelia harper evelyn
abigail emily elizabeth sofia ella madison scarlett victoria aria chloe camila penelope layla lily
william benjamin lucas henry alexander michael daniel matthew joseph samuel sebastian jackson aiden
owen wyatt luke gabriel anthony isaac dylan leo thomas charles christopher josh andrew ryan nathan
adam kevin brian george edward steven paul linda susan karen nancy betty helen sandra donna ruth
sharon michelle laura sarah kimberly jessica cynthia angela melissa rebecca amy kathy lisa tina
peter richard robert jennifer patricia barbara margaret dorothy jason eric jeff larry scott justin
mike tim jim bill sam ben dan joe alex chris kate jane lucy amanda rachel tony kelly jenny
""".split())
_OOXML = frozenset({".docx", ".docm", ".xlsx", ".xlsm", ".pptx"})
_TEXT_NODE = re.compile(r">([^<]+)<")


@dataclass(frozen=True)
class Cast:
    """Who became whom (``{"Bob": "Dmitri"}``, names as a person is written), and the names left
    as they were with the reason (``{"Dana": "said in data/invoice.pdf, which is not re-written"}``)."""

    names: dict[str, str] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"names": dict(self.names), **({"kept": dict(self.kept)} if self.kept else {})}


def _cased(found: str, new: str) -> str:
    if found.islower():
        return new.lower()
    if found.isupper() and len(found) > 1:
        return new.upper()
    return new[:1].upper() + new[1:].lower()


@lru_cache(maxsize=256)
def _names_pattern(olds: tuple[str, ...]) -> re.Pattern[str]:
    """Any of ``olds`` (lower case) as a whole word, in any case."""
    return re.compile(r"(?<![A-Za-z])(" + "|".join(re.escape(o) for o in sorted(olds, key=len, reverse=True))
                      + r")(?![A-Za-z])", re.IGNORECASE)


def substitute(text: str, names: dict[str, str]) -> str:
    """``text`` with every whole-word occurrence of each old name (any case) replaced by its new
    name in the same case (``bob@`` -> ``dmitri@``, ``Bob's`` -> ``Dmitri's``), in one pass."""
    if not names:
        return text
    lookup = {old.lower(): new for old, new in names.items()}
    return _names_pattern(tuple(sorted(lookup))).sub(lambda m: _cased(m.group(1), lookup[m.group(1).lower()]), text)


def substitute_values(value: Any, names: dict[str, str]) -> Any:
    """A criterion's arguments with every string re-cast (keys are the catalog's, kept)."""
    if isinstance(value, str):
        return substitute(value, names)
    if isinstance(value, list):
        return [substitute_values(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute_values(v, names) for k, v in value.items()}
    return value


# -- reading what a file says -------------------------------------------------------------------

def _plain_text(path: Path, label: str) -> str:
    data = read_bytes(path, label)
    try:
        return data.decode("utf-8").replace("\r\n ", "").replace("\n ", "")  # unfolded, as a calendar's lines
    except UnicodeDecodeError:
        return ""


@registry_cache(maxsize=1)
def _readers() -> dict[str, Callable[[Path, str], str]]:
    """Each suffix an app reads as a person sees it (``office_env.apps.kind_readers``), with that reader."""
    return {f".{kind}": load(ref) for kind, ref in kind_readers().items()}


def file_text(path: Path, label: str) -> str:
    """What a person reading the file sees, for finding and checking names ("" if unreadable)."""
    try:
        return _readers().get(path.suffix.lower(), _plain_text)(path, label)
    except (OfficeError, OSError, ValueError):
        return ""


def _files(root: Path | None) -> list[Path]:
    if root is None or not root.is_dir():
        return []
    found: list[Path] = []
    for here, folders, files in os.walk(root):
        folders.sort()
        found += [Path(here) / f for f in sorted(files)]
    return found


# -- who the seed's people are ---------------------------------------------------------------

def seed_ids(seed: SeedTask) -> set[str]:
    """The lower-case ids a seed names its people by in its layout: user, mailbox and calendar owners
    (where the mail and calendar apps' entries keep them, the folders OfficeBench's testbeds use)."""
    ids = {seed.username.strip().lower()}
    if seed.testbed.is_dir():
        mail = seed.testbed / get_app("email").folder
        if mail.is_dir():
            ids |= {p.name.lower() for p in mail.iterdir() if p.is_dir()}
        calendars = get_app("calendar")
        calendar = seed.testbed / calendars.folder
        if calendar.is_dir():
            ids |= {p.stem.lower() for p in calendar.iterdir() if p.suffix.lower() == calendars.suffix}
    return {i for i in ids if _ID.match(i)}


def split_people(seeds: Iterable[SeedTask]) -> tuple[str, ...]:
    """The ids of every seed of a split (sorted): a name one seed's layout holds is a person when
    another seed only says it ("meeting need to be prepared by Alice")."""
    return tuple(sorted(set().union(*(seed_ids(s) for s in seeds))))


def _addressed(texts: dict[str, str], names: set[str]) -> set[str]:
    """The local parts of the seed's mail addresses that are first names (``peter@``), not
    services (``amazon@``, ``noreply@``)."""
    return {m.lower() for t in texts.values() for m in re.findall(r"(?<![\w.+-])([A-Za-z]+)@", t)} & names


COMMON_WORD = 1e-5  # a share of running English text: "mark", "may", "grace" are over it, "bob" is not


@lru_cache(maxsize=1)
def _english() -> Any:
    from spellchecker import SpellChecker

    return SpellChecker(distance=1)


def _ordinary_word(name: str, texts: Iterable[str]) -> bool:
    """Whether ``name`` is also a common English word ("Mark the rows") or said as a lower-case
    word of the seed, not as a path or an address part."""
    if _english().word_usage_frequency(name.lower()) >= COMMON_WORD:
        return True
    pattern = re.compile(rf"(?<![\w./@-]){re.escape(name.lower())}(?![\w@./-])")
    return any(pattern.search(t) for t in texts)


def people(seed: SeedTask, texts: dict[str, str], known: Iterable[str] = ()) -> tuple[list[str], dict[str, str]]:
    """The seed's people (capitalised, sorted) and those to keep as they are, with why; ``known``:
    other ids of the split (``split_people``), a person here when said capitalised."""
    bank = {n.lower() for n in FIRST_NAMES} | OTHER_FIRST_NAMES | {k.lower() for k in known}
    ids = seed_ids(seed) | _addressed(texts, bank)
    said = set()
    for text in texts.values():
        said |= {w for w in _CAPITALISED.findall(text) if w.lower() in ids or w.lower() in bank}
    found = sorted({w.capitalize() for w in said} | {i.capitalize() for i in ids})
    speech = [t for label, t in texts.items() if label != "criteria"]
    kept: dict[str, str] = {}
    for name in found:
        said_in = _names_pattern((name.lower(),)).search
        where = [label for label, text in texts.items() if label.lower().endswith(".pdf") and said_in(text)]
        if where:
            kept[name] = f"said in {where[0]}, which is not re-written"
        elif _ordinary_word(name, speech):
            kept[name] = "also an ordinary word of the seed"
    return [n for n in found if n not in kept], kept


# -- re-writing files ----------------------------------------------------------------------------

def _bytes_substituted(data: bytes, names: dict[str, str]) -> bytes:
    # latin-1 maps every byte to one character: only the names' ASCII letters change
    return substitute(data.decode("latin-1"), names).encode("latin-1")


def _package_substituted(path: Path, label: str, names: dict[str, str]) -> bytes | None:
    """The Word or Excel package with its XML text nodes re-cast, member order and dates kept;
    None when nothing in it changes."""
    changed = False
    members: list[tuple[zipfile.ZipInfo, bytes]] = []
    with open_package(path, label, "office") as package:
        for info in package.infolist():
            data = read_member(package, info)
            if info.filename.endswith((".xml", ".rels")):
                text = data.decode("latin-1")
                new = _TEXT_NODE.sub(lambda m: ">" + substitute(m.group(1), names) + "<", text)
                if new != text:
                    changed, data = True, new.encode("latin-1")
            members.append((info, data))
    if not changed:
        return None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for info, data in members:
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            entry.compress_type, entry.external_attr = info.compress_type, info.external_attr
            package.writestr(entry, data)
    return out.getvalue()


def _rewrite(path: Path, label: str, names: dict[str, str]) -> None:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return
    if suffix in _OOXML:
        data = _package_substituted(path, label, names)
    else:
        old = read_bytes(path, label)
        data = _bytes_substituted(old, names)
        data = None if data == old else data
    if data is not None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)


def _rename_all(root: Path, names: dict[str, str]) -> None:
    """Files and folders whose names hold a person re-named, deepest first."""
    for here, folders, files in os.walk(root, topdown=False):
        for name in files + folders:
            new = substitute(name, names)
            if new != name:
                os.replace(Path(here) / name, Path(here) / new)


def _texts(seed: SeedTask, trees: dict[str, Path | None]) -> dict[str, str]:
    """What the seed says, by where: its instruction, criteria and every file (path and text)."""
    texts = {"instruction": seed.instruction, "criteria": repr(seed.evaluation)}
    for part, root in trees.items():
        if root is None:
            continue
        for path in _files(root):
            rel = f"{part}/{path.relative_to(root).as_posix()}"
            texts[rel] = rel + "\n" + file_text(path, rel)
    return texts


def recast_seed(seed: SeedTask, rng: random.Random, dest: Path, *, avoid: Iterable[str] = (),
                known: Iterable[str] = ()) -> tuple[SeedTask, Cast]:
    """``seed`` with its people re-cast into copies of its testbed and reference under ``dest``
    (which must not exist); the new names are drawn by ``rng`` from the office's name bank, never
    one the seed or ``avoid`` already says; ``known``: the split's people (``split_people``).
    Returns the seed as it is (and why, in ``Cast.kept``) when there is nobody to re-cast or a
    re-written file still says an old name."""
    trees = {"testbed": seed.testbed if seed.testbed.is_dir() else None, "reference": seed.reference}
    texts = _texts(seed, trees)
    found, kept = people(seed, texts, known)
    if not found:
        return seed, Cast(kept=kept)
    taken = ({n.lower() for n in avoid} | {n.lower() for n in found} | {n.lower() for n in kept}
             | {w.lower() for t in texts.values() for w in _CAPITALISED.findall(t)})
    pool = [n for n in FIRST_NAMES if n.lower() not in taken and not _ordinary_word(n, ())]
    if len(pool) < len(found):
        return seed, Cast(kept={**kept, **dict.fromkeys(found, "not enough unused names in the bank")})
    names = dict(zip(found, rng.sample(pool, len(found))))
    copies: dict[str, Path | None] = {}
    for part, root in trees.items():
        copies[part] = None
        if root is not None:
            for entry in copy_tree(root, dest / part).files:  # the files the copy holds, as its scan found them
                _rewrite(dest.joinpath(part, *entry.parts), f"{part}/{'/'.join(entry.parts)}", names)
            _rename_all(dest / part, names)
            copies[part] = dest / part
    recast = dataclasses.replace(
        seed, username=substitute(seed.username, names), instruction=substitute(seed.instruction, names),
        evaluation=substitute_values(seed.evaluation, names),
        testbed=copies["testbed"] or seed.testbed, reference=copies["reference"])
    left = [(label, n) for label, text in _texts(recast, copies).items() for n in names
            if _names_pattern((n.lower(),)).search(text)]
    if left:
        label, name = left[0]
        return seed, Cast(kept={**kept, **dict.fromkeys(found, f"{name} is still said in {label} after re-writing")})
    return recast, Cast(names=names, kept=kept)


__all__ = ["Cast", "file_text", "people", "recast_seed", "seed_ids", "split_people", "substitute", "substitute_values"]
