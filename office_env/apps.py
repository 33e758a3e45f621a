"""The office's apps, each declared once by an :class:`App` entry: the tools, the surfers, the
families, the schemas (the task record's app enum among them), the planner and the Plus generator
take their app names, file kinds and words from here, so a new app is one entry (``register_app``).

This is the bottom layer: an entry names what upper layers hold for the app (its offline surfer,
its review page's file view) by ``"module:attribute"`` references that the layer owning them loads
(:func:`load`), as an entry point does; nothing here imports them.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, TypeVar

Layout = Literal["documents", "owner_folders", "owner_files"]

_STR: Mapping[str, Any] = {"type": "string"}
_STRINGS: Mapping[str, Any] = {"type": "array", "items": _STR}
_TIME: Mapping[str, Any] = {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"}


def notes_object(properties: Mapping[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A closed JSON object schema (every property required unless ``required`` says otherwise)."""
    return {"type": "object", "properties": dict(properties),
            "required": list(properties) if required is None else required, "additionalProperties": False}


@dataclass(frozen=True)
class App:
    """One app of the office, everything the layers need to know of it.

    ``extensions`` are the file kinds it opens (lower case, no dot), the first the kind its files
    are written as; ``layout`` says where its items are: ``documents`` (files of its kinds anywhere
    outside the other apps' folders), ``owner_folders`` (``<folder><owner>/...``, a mailbox) or
    ``owner_files`` (``<folder><owner>.<extension>``, a calendar). ``notes_key`` is the list its
    surfer notes hold, ``notes_item`` the ``$defs`` entry of one item and ``notes_defs`` the
    definitions it adds to the notes schema. ``spoken`` are the patterns a person names the app with
    ("Excel", "e-mail"); ``work`` is the word people call its work ("spreadsheet")."""

    name: str
    work: str
    tools: str  # the module declaring its tools (``@tool("<name>", ...)``)
    read_tools: tuple[str, ...] = ()  # the read-only tools its items are read with (its surfer's)
    # a read tool -> the testbed file one call reads, "{argument}" for the call's arguments
    # ("emails/{user}/{email_id}"); a documents app's read tools read their "{file_path}" unless named here
    reads: Mapping[str, str] = field(default_factory=dict)
    extensions: tuple[str, ...] = ()
    doc_types: tuple[str, ...] = ()  # OfficeBench criteria's doc_type values that mean this app
    checks: str = ""  # the prefix of the evaluation checks that touch only this app ("evaluate_email")
    layout: Layout = "documents"
    folder: str = ""  # where an owner layout keeps its items ("emails/")
    notes_key: str = "files"
    notes_item: str = ""
    notes_defs: Mapping[str, Any] = field(default_factory=dict)
    spoken: tuple[str, ...] = ()
    # a word naming it -> the other app a colleague misremembers instead ("the excel file" -> "pdf"); excel
    # and pdf, about as common in requests, take each other's place and the rarer word takes excel's, so
    # a wrong request names excel or pdf about as often as a right one does (word only in right ones, rare)
    near_miss: Mapping[str, str] = field(default_factory=dict)
    # the evaluation's text view of its files, by criterion doc_type: "module:function", reader(path, label) -> str
    readers: Mapping[str, str] = field(default_factory=dict)
    # what a person reading one of its files sees, by file kind: "module:function", text(path, label) -> str;
    # its kinds not named here are read as plain text (office_env.seed_recast finds people's names so)
    kind_readers: Mapping[str, str] = field(default_factory=dict)
    # "module:function": files of its own in a synthesized office, maker(world, rng) -> [(path, kind, bytes)],
    # written after the world's document kinds (the built-in apps' files, office_env.synthesis)
    synthesis: str = ""
    surfer: str = ""  # "module:function": the offline surfer, explorer(reader, users) -> notes
    preview: str = ""  # "module:function": the review page's view of one of its files, view(path, label) -> dict
    # its files are UTF-8 text its readers read whole, as every such app's readers do: a criterion may
    # read one as another such app's doc type (OfficeBench reads an .ics as txt)
    plain_text: bool = False
    office: bool = True  # False for the file system every task may look through

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9]*", self.name):
            raise ValueError(f"app name {self.name!r}: lower-case letters and digits (tools are <app>_<op>)")
        if self.office and not (self.surfer and self.notes_item and self.read_tools and self.extensions):
            raise ValueError(f"app {self.name}: an office app needs a surfer, notes, read tools and file kinds")
        if set(self.kind_readers) - set(self.extensions):
            raise ValueError(f"app {self.name}: kind_readers names a kind that is none of its extensions")

    def references(self) -> list[tuple[str, str]]:
        """``(field, reference)`` of each object it names for a layer to load (``LOADED_BY[field]``)."""
        named = [("tools", self.tools), *(("readers", ref) for ref in self.readers.values()),
                 *(("kind_readers", ref) for ref in self.kind_readers.values())]
        optional = [("synthesis", self.synthesis), ("surfer", self.surfer), ("preview", self.preview)]
        return named + [(name, ref) for name, ref in optional if ref]

    def read_paths(self) -> dict[str, str]:
        """Each of its read tools that reads one file, with the path that file has (``reads``)."""
        default = dict.fromkeys(self.read_tools, "{file_path}") if self.layout == "documents" else {}
        return {**default, **self.reads}

    @property
    def suffix(self) -> str:
        """The suffix of the files it writes (``.xlsx``); "" for an app without files."""
        return f".{self.extensions[0]}" if self.extensions else ""


# The layer that loads each kind of reference an entry holds (``tools`` names a module, the others a
# ``"module:attribute"``): the module it names belongs to that layer or to one below it in the import
# contract (pyproject.toml), as an import of it there would; tests/office_env/test_apps.py holds this.
LOADED_BY: Mapping[str, str] = {"tools": "office_env", "readers": "office_env", "kind_readers": "office_env",
                                "synthesis": "office_env", "surfer": "surfers", "preview": "orchestrator"}

_REVIEW = "orchestrator.review.preview"
_SURFERS = "surfers.offline"
_MAILBOXES = "emails/"
_CALENDARS = "calendar/"

_WORD = App(
    name="word", work="document", tools="office_env.tools.word", read_tools=("word_read_file",),
    extensions=("docx", "doc", "docm", "odt", "rtf"), doc_types=("doc", "docx"),
    readers={"docx": "office_env.formats.docx_io:read_text", "doc": "office_env.formats.docx_io:read_text"},
    kind_readers=dict.fromkeys(("docx", "docm"), "office_env.formats.docx_io:read_text"),
    notes_item="word_file",
    notes_defs={"word_file": notes_object({"file": _STR, "lines": _STRINGS, "people": _STRINGS})},
    spoken=(r"\b(?:(?:Microsoft|MS)\s+)?Word\b",), near_miss={"word": "excel"},
    surfer=f"{_SURFERS}:explore_word", preview=f"{_REVIEW}:word_view")
_EXCEL = App(
    name="excel", work="spreadsheet", tools="office_env.tools.excel", read_tools=("excel_read_file",),
    extensions=("xlsx", "xls", "xlsm", "csv", "ods", "tsv"), doc_types=("xlsx", "xls"),
    readers={"xlsx": "office_env.formats.xlsx_io:read_text"},
    kind_readers=dict.fromkeys(("xlsx", "xlsm"), "office_env.formats.xlsx_io:read_text"),
    notes_item="excel_file", notes_defs={"excel_file": notes_object({
        "file": _STR, "sheet": _STR, "headers": _STRINGS, "rows": {"type": "array", "items": _STRINGS}})},
    spoken=(r"(?i)\b(?:(?:Microsoft|MS)\s+)?Excel\b",), near_miss={"excel": "pdf"},
    surfer=f"{_SURFERS}:explore_excel", preview=f"{_REVIEW}:sheet_view")
_PDF = App(
    name="pdf", work="file", tools="office_env.tools.pdf", read_tools=("pdf_read_file",),
    extensions=("pdf",), doc_types=("pdf",), readers={"pdf": "office_env.formats.pdf_io:read_text"},
    kind_readers={"pdf": "office_env.formats.pdf_io:read_text"},
    notes_item="pdf_file", notes_defs={"pdf_file": notes_object({
        "file": _STR, "lines": _STRINGS,
        "numbers": {"type": "array", "items": {"type": "string", "pattern": r"^[0-9][0-9,]*(\.[0-9]+)?$"}}})},
    spoken=(r"(?i)\bPDFs?\b",), near_miss={"pdf": "excel", "pdfs": "excel files"},
    surfer=f"{_SURFERS}:explore_pdf", preview=f"{_REVIEW}:pdf_view")
_EMAIL = App(
    name="email", work="message", tools="office_env.tools.email",
    read_tools=("email_list_emails", "email_read_email"), extensions=("eml", "msg"), doc_types=("email",),
    reads={"email_read_email": _MAILBOXES + "{user}/{email_id}"},
    kind_readers={"eml": "office_env.formats.eml_io:read_text"},
    checks="evaluate_email", layout="owner_folders", folder=_MAILBOXES, notes_key="mailboxes",
    notes_item="mailbox", notes_defs={
        "message": notes_object({"id": _STR, "from": _STR, "to": _STR, "cc": _STR, "subject": _STR, "date": _STR,
                                 "body": _STR}, required=["id", "from", "to", "subject", "date", "body"]),
        "mailbox": notes_object({
            "user": _STR,
            "messages": {"type": "array", "items": {"oneOf": [{"$ref": "#/$defs/message"}, {"$ref": "#/$defs/error"}]}},
        })},
    spoken=(r"(?i)\be-?mail(?:s|ed|ing)?\b", r"(?i)\bmail\b"),
    near_miss=dict.fromkeys(("email", "emails", "mail", "e-mail", "e-mails"), "calendar"),
    surfer=f"{_SURFERS}:explore_email", preview=f"{_REVIEW}:mail_view")
_CALENDAR = App(
    name="calendar", work="schedule", tools="office_env.tools.calendar", read_tools=("calendar_list_events",),
    reads={"calendar_list_events": _CALENDARS + "{user}.ics"},
    extensions=("ics",), doc_types=("ics",), checks="evaluate_calendar", layout="owner_files", folder=_CALENDARS,
    readers={"ics": "office_env.evaluation.content:read_ics"}, plain_text=True,
    notes_key="calendars", notes_item="calendar", notes_defs={
        "event": notes_object({"summary": _STR, "start": _TIME, "end": _TIME}),
        "calendar": notes_object({
            "user": _STR,
            "events": {"type": "array", "items": {"$ref": "#/$defs/event"}},
            "free_slots": {"type": "array", "items": notes_object({"start": _TIME, "end": _TIME})},
        })},
    spoken=(r"(?i)\bcalendars?\b",), near_miss={"calendar": "email", "calendars": "emails"},
    surfer=f"{_SURFERS}:explore_calendar", preview=f"{_REVIEW}:calendar_view")
_SYSTEM = App(name="system", work="file", tools="office_env.tools.system", read_tools=("system_read_text",),
              extensions=("txt",),
              readers={"txt": "office_env.evaluation.content:read_plain"}, plain_text=True, office=False)

# In the order prompts, schemas and records list them; registered apps follow.
_REGISTRY: dict[str, App] = {a.name: a for a in (_WORD, _EXCEL, _PDF, _EMAIL, _CALENDAR, _SYSTEM)}
_BUILT_IN = tuple(_REGISTRY)
_generation = 0


def register_app(app: App) -> App:
    """Add ``app`` to the office (after the apps before it); its name must be new."""
    global _generation
    if app.name in _REGISTRY:
        raise ValueError(f"app {app.name!r} is already registered")
    _REGISTRY[app.name] = app
    _generation += 1
    return app


def unregister_app(name: str) -> None:
    """Take a registered app out again (the built-in ones stay)."""
    global _generation
    if name in _BUILT_IN:
        raise ValueError(f"app {name!r} is built in")
    if _REGISTRY.pop(name, None) is not None:
        _generation += 1


def generation() -> int:
    """A number that changes whenever the registry does: what caches of derived tables key on."""
    return _generation


_P = ParamSpec("_P")
_R = TypeVar("_R")


def registry_cache(maxsize: int = 128) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """``functools.lru_cache`` for what is made from the registered apps: the registry's
    ``generation`` is part of the key, so a call after ``register_app`` or ``unregister_app``
    makes it afresh (arguments must be hashable)."""
    def decorate(func: Callable[_P, _R]) -> Callable[_P, _R]:
        def make(_generation: int, *args: Any, **kwargs: Any) -> _R:
            return func(*args, **kwargs)

        made: Callable[..., _R] = functools.lru_cache(maxsize)(make)

        @functools.wraps(func)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            return made(_generation, *args, **kwargs)

        return call
    return decorate


def registered_apps() -> tuple[App, ...]:
    """Every app, the file system last of the built-in ones."""
    return tuple(_REGISTRY.values())


def office_apps() -> tuple[str, ...]:
    """The apps a task works in, in the order prompts, schemas and records list them."""
    return tuple(a.name for a in _REGISTRY.values() if a.office)


def tool_apps() -> tuple[str, ...]:
    """The apps that have tools: the office's, and the file system every task may look through."""
    return tuple(a.name for a in _REGISTRY.values() if a.office) + tuple(
        a.name for a in _REGISTRY.values() if not a.office)


@registry_cache(maxsize=1)
def all_read_tools() -> frozenset[str]:
    """Every app's read tools, the file system's among them: the calls that read an app's items."""
    return frozenset(tool for a in _REGISTRY.values() for tool in a.read_tools)


@registry_cache(maxsize=1)
def file_readers() -> tuple[tuple[str, App], ...]:
    """Each read tool that reads the one file its ``file_path`` argument names (``App.read_paths``:
    a document app's, the file system's), with its app, apps in order."""
    return tuple((tool, a) for a in _REGISTRY.values() for tool, path in a.read_paths().items()
                 if path == "{file_path}")


# kinds of file people name that no app opens: slides, notes, pictures
OTHER_FILE_KINDS = ("pptx", "md", "jpg", "jpeg", "png")


@registry_cache(maxsize=1)
def file_kinds() -> tuple[str, ...]:
    """Every kind (no dot) a file's name may end in: each app's file kinds, apps in order, then
    ``OTHER_FILE_KINDS``; what the patterns that tell a file's name in a text are made from."""
    return tuple(dict.fromkeys([*(kind for a in _REGISTRY.values() for kind in a.extensions), *OTHER_FILE_KINDS]))


@registry_cache(maxsize=4)
def file_kind_pattern(*more: str) -> str:
    """``file_kinds`` (then ``more``, each kind once) as one regular-expression alternation, each
    kind escaped (``docx|doc|...``): the end of every pattern that tells a file's name in a text,
    so each follows the registered apps."""
    return "|".join(map(re.escape, dict.fromkeys((*file_kinds(), *more))))


def get_app(name: str) -> App:
    """The entry of ``name``; ``KeyError`` for an app nobody registered."""
    return _REGISTRY[name]


def app_of_extension(extension: str) -> str | None:
    """The office app that opens files of ``extension`` (no dot, any case), if one does."""
    low = extension.lower()
    return next((a.name for a in _REGISTRY.values() if a.office and low in a.extensions), None)


def app_of_doc_type(doc_type: str) -> str | None:
    """The office app an OfficeBench ``doc_type`` names, if one does."""
    low = doc_type.lower()
    return next((a.name for a in _REGISTRY.values() if a.office and low in a.doc_types), None)


@registry_cache(maxsize=1)
def kind_readers() -> dict[str, str]:
    """Each file kind some app reads as a person sees it (``App.kind_readers``), with the reader's
    reference; apps in order, the first app of a kind takes it."""
    kinds: dict[str, str] = {}
    for a in _REGISTRY.values():
        for kind, ref in a.kind_readers.items():
            kinds.setdefault(kind, ref)
    return kinds


def text_readers() -> dict[str, str]:
    """Every criterion doc type a file is read as, with its reader's reference, apps in order."""
    return {doc_type: ref for a in _REGISTRY.values() for doc_type, ref in a.readers.items()}


@registry_cache(maxsize=1)
def read_as() -> dict[str, str]:
    """Each file kind a criterion reads (a kind of an app that has a reader of that name), with the
    doc type its files are read as: the first of its app's doc types with the same reader (a
    ``.doc`` is read as ``docx``); apps in order, the first app of a kind takes it."""
    kinds: dict[str, str] = {}
    for a in _REGISTRY.values():
        for kind in a.extensions:
            if kind in a.readers:
                kinds.setdefault(kind, next(d for d, ref in a.readers.items() if ref == a.readers[kind]))
    return kinds


PLAIN_TEXT = "plain text"  # how the doc types of every ``plain_text`` app are read (``readings``)


@registry_cache(maxsize=1)
def readings() -> dict[str, str]:
    """Each doc type a criterion reads, with how it is read: its reader's reference, or
    ``PLAIN_TEXT`` for a ``plain_text`` app's; two doc types read alike when these are equal."""
    return {d: PLAIN_TEXT if a.plain_text else ref for a in _REGISTRY.values() for d, ref in a.readers.items()}


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names (called by the layer that owns it)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)
