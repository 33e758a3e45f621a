"""How a family's task is asked: pools of intents and queries, kept as data in
``templates/families/<family>.toml``.

One string per family made every task of a kind read the same, and an agent could learn the
string instead of the work. Each family has at least ``MIN_PHRASES`` intents and queries. An
intent names the work without its specifics, so it takes no slots; a query may use the slots its
family passes (a colleague's first name, a short name for the work), rendered with Jinja2 and
strict undefined names. A missing, unreadable or malformed file is a ``FamilyDefinitionError``
naming the file and field, raised when the families are loaded, before any task is built.
"""

from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

import jinja2
from jinja2 import meta, nodes

FAMILY_TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "families"
MIN_PHRASES = 5
MAX_PHRASE_CHARS = 300
QUERY_SLOTS = frozenset({"first", "about", "what", "when", "doc"})
WORK_SLOTS = frozenset({"about", "what"})  # the slots that name the work

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


class FamilyDefinitionError(ValueError):
    """A family's definition (its code registration or its phrasing file) is unusable."""


@dataclass(frozen=True)
class Query:
    """A query's template; one that is only text and slots (every one so far) also as its parts
    (text, or the name of a slot), joined without Jinja: a render made a Jinja context each time,
    for a few slots of plain text, in every draft (and in each of a task's sibling drafts)."""

    template: jinja2.Template
    parts: tuple[tuple[str, bool], ...] | None  # (text, is a slot's name); None: rendered by Jinja

    def render(self, **slots: str) -> str:
        if self.parts is not None and all(text in slots for text, slot in self.parts if slot):
            return "".join(str(slots[text]) if slot else text for text, slot in self.parts)
        return self.template.render(**slots)  # a slot not given: Jinja's error for it


def _plain_parts(tree: nodes.Template) -> tuple[tuple[str, bool], ...] | None:
    """The parts of a template that is only text and slots (as Jinja outputs them: the text as
    parsed, a slot as ``str`` of its value), or None."""
    parts: list[tuple[str, bool]] = []
    for output in tree.body:
        if not isinstance(output, nodes.Output):
            return None
        for node in output.nodes:
            if type(node) is nodes.TemplateData:
                parts.append((node.data, False))
            elif type(node) is nodes.Name and node.ctx == "load":
                parts.append((node.name, True))
            else:
                return None
    return tuple(parts)


@dataclass(frozen=True)
class Phrasing:
    intents: tuple[str, ...]
    queries: tuple[Query, ...]
    query_slots: tuple[frozenset[str], ...]

    def intent(self, rng: random.Random) -> str:
        return rng.choice(self.intents)

    def query(self, rng: random.Random, named: bool | None = None, **slots: str) -> str:
        """A query from the pool whose slots are all given, four times as likely one that uses every
        slot given (naming the work lets a search of the history with the query find its turns: with
        half the pool naming it, about four queries in five do, ``DRAFT.named_query``; the others keep
        a family's queries from all being one sentence). ``named`` True: only one that names the work
        (:data:`WORK_SLOTS`) if the pool has one: after weeks of history "that meeting" points at
        nothing in particular; False: only one that does not, if the pool has one (a model told so
        writes one); None: the pool's weights above."""
        usable = [t for t, needs in zip(self.queries, self.query_slots) if needs <= slots.keys()]
        richest = [t for t, needs in zip(self.queries, self.query_slots) if slots and needs == set(slots)]
        naming = [t for t, needs in zip(self.queries, self.query_slots) if needs & WORK_SLOTS and needs <= slots.keys()]
        pointers = [t for t, needs in zip(self.queries, self.query_slots)
                    if not needs & WORK_SLOTS and needs <= slots.keys()] if named is False else []
        usable = naming if named and naming else pointers if pointers else richest * 3 + usable
        if not usable:
            raise FamilyDefinitionError(f"no query can be rendered with the slots {sorted(slots)}")
        return " ".join(rng.choice(usable).render(**slots).split())


def _strings(data: dict, key: str, label: str) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or len(value) < MIN_PHRASES:
        raise FamilyDefinitionError(f"{label}: {key}: expected a list of at least {MIN_PHRASES} phrasings")
    for i, text in enumerate(value):
        if not isinstance(text, str) or not text.strip():
            raise FamilyDefinitionError(f"{label}: {key}[{i}]: expected a non-empty string")
        if len(text) > MAX_PHRASE_CHARS:
            raise FamilyDefinitionError(f"{label}: {key}[{i}]: longer than {MAX_PHRASE_CHARS} characters")
    if len(set(value)) != len(value):
        raise FamilyDefinitionError(f"{label}: {key}: holds the same phrasing twice")
    return value


def _slots(text: str, where: str, *, compiled: bool = True) -> tuple[Query | None, frozenset[str]]:
    """The query of ``text`` (compiled from its parse, when ``compiled``) and the names it uses."""
    try:
        tree = _ENV.parse(text)
        names = frozenset(meta.find_undeclared_variables(tree))
        if not compiled:
            return None, names
        parts = _plain_parts(tree)  # before compiling: the compiler's optimiser may rework the tree
        return Query(_ENV.from_string(tree), parts), names
    except jinja2.TemplateSyntaxError as exc:
        raise FamilyDefinitionError(f"{where}: not a valid template ({exc.message})") from None


def load_phrasing(name: str, folder: Path | None = None) -> Phrasing:
    """The phrasing pools of family ``name`` (from ``folder``, default ``FAMILY_TEMPLATES``);
    raises FamilyDefinitionError naming file and field."""
    return _load(name, folder or FAMILY_TEMPLATES)


@lru_cache(maxsize=None)
def _load(name: str, folder: Path) -> Phrasing:
    path = folder / f"{name}.toml"
    label = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FamilyDefinitionError(f"{label}: missing (every family needs its intents and queries)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FamilyDefinitionError(f"{label}: unreadable ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise FamilyDefinitionError(f"{label}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"intents", "queries"})
    if unknown:
        raise FamilyDefinitionError(f"{label}: {unknown[0]}: unknown field (expected intents and queries)")
    intents = _strings(data, "intents", label)
    for i, text in enumerate(intents):
        if _slots(text, f"{label}: intents[{i}]", compiled=False)[1]:
            raise FamilyDefinitionError(f"{label}: intents[{i}]: an intent names no specifics, so it takes no slots")
    queries, needs = [], []
    for i, text in enumerate(_strings(data, "queries", label)):
        template, names = _slots(text, f"{label}: queries[{i}]")
        extra = sorted(names - QUERY_SLOTS)
        if extra:
            raise FamilyDefinitionError(f"{label}: queries[{i}]: unknown slot {extra[0]!r} "
                                        f"(slots: {', '.join(sorted(QUERY_SLOTS))})")
        queries.append(cast(Query, template))  # compiled
        needs.append(names)
    if not any(not n for n in needs):
        raise FamilyDefinitionError(f"{label}: queries: at least one query must take no slots")
    return Phrasing(tuple(intents), tuple(queries), tuple(needs))
