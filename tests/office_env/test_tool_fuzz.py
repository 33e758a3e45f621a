"""Every tool, called with arguments generated from its own JSON schema, answers with an observation.

Arguments are built from each tool's schema: strings mix realistic values (existing files, users,
times) with control characters, unpaired surrogates, XML-illegal characters, path pieces
(``../``, ``/``, NUL, drive letters) and very long runs; integers sit at, inside and beyond their
bounds; optional properties come and go, and now and then a required one is missing, a type is
wrong or an unknown property is added. For every call: no exception escapes, a failing
observation starts with ``Error:``, none is the registry's last-line "internal error" (every input
meets a deliberate check), no file appears or changes outside the testbed, and the observation
is at most ``MAX_OBSERVATION_CHARS`` plus the cut marker.

``bench/tool_fuzz.py`` runs the same generators for ten thousand calls and more.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from office_env import Workspace, default_registry
from office_env.limits import MAX_OBSERVATION_CHARS
from office_env.sample import SAMPLE_NOW, write_sample_office
from office_env.tools.registry import INTERNAL_ERROR

pytestmark = pytest.mark.slow

MARKER_CHARS = len("\n... [cut: 999,999,999,999 more characters]")
EXAMPLES = int(os.environ.get("HOMER_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])

# -- values worth trying, per argument name ----------------------------------------------------

FILES = ["data/notes.docx", "data/scores.xlsx", "data/invoice.pdf", "data/readme.txt", "data/broken.docx",
         "data/broken.xlsx", "data/far.xlsx", "data/notes.pdf", "data/new.docx", "data/new.xlsx", "data/new.pdf",
         "emails/alice/Lunch.eml", "calendar/alice.ics", "data", "emails", "data/answer.txt", "./data/notes.docx",
         "data\\notes.docx", "DATA/NOTES.DOCX", "data/sub/deeper/new.docx"]
USERS = ["alice", "bob", "carol", "Alice", "alice@example.com", "bob@example.com", "dana", "alice@", "@example.com"]
TIMES = ["2024-05-06 10:00:00", "2024-05-06 11:00:00", "2024-05-06 10:00", "2024-05-06T10:30", "2024-02-30 10:00",
         "0001-01-01 00:00", "9999-12-31 23:59:59", "yesterday"]
REALISTIC: dict[str, list[Any]] = {
    "file_path": FILES,
    "output_path": FILES,
    "folder": ["", ".", "./", "data", "data/", "emails", "emails/alice", "calendar", "nope", "data/readme.txt"],
    "user": USERS,
    "sender": USERS,
    "recipient": USERS,
    "email_id": ["Lunch.eml", "Lunch", "Quarterly budget.eml", "Re Quarterly budget", "nope.eml", ".eml", "..eml"],
    "sheet": ["Scores", "Sheet", "Sheet1", "scores"],
    "sheet_name": ["Scores", "New", "A", "x" * 31],
    "start": TIMES,
    "end": TIMES,
    "summary": ["Team sync", "1:1 with Bob", "Budget review", "team SYNC"],
    "location": ["Room 2", ""],
    "subject": ["Quarterly budget", "Re: Lunch", "Hi"],
    "content": ["Hello", "# Heading\nBody line\n\nLast", "", "=SUM(A1:A3)"],
    "text": ["Carol", "The answer is 42."],
    "value": ["Alice", "42", "-0.5", "007", "=1+1", 5, 2.5, True, None, 10 ** 30, "9" * 5000, "1." + "5" * 400],
    "mode": ["overwrite", "append"],
}
NASTY = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x85", "\n", "\r", "\r\n", "\t", "\u2028",
         "\u2029", "\u200e", "\u202e", "\ufffe", "\uffff", "\ud800", "\udfff", "\U0001F600", "\u00e9", "../", "..",
         "/", "//", "\\", "~", "C:", "%s", "{}", "=SUM(A1)", "@", "*", "?", ":", "[", "]", "'", '"', "<", ">", "&",
         ".docx", ".xlsx", ".pdf", ".eml", ".ics", ".txt", "data/", "emails/alice/", "calendar/", " ", "# ", ".",
         "Bcc: x@y.z", "=?utf-8?q?a?="]
LONG = st.builds(lambda piece, n: piece * n,
                 st.sampled_from(["a", "a ", "/a", "\u00e9", "\x0b", "../", "x.docx/"]),
                 st.sampled_from([31, 32, 63, 64, 199, 200, 201, 256, 998, 999, 1000, 4097, 20_001, 100_000]))
PIECE = st.one_of(st.text(max_size=12), st.sampled_from(NASTY), LONG)
FUZZ_TEXT = st.lists(PIECE, max_size=5).map("".join)
WRONG_TYPES = st.sampled_from([None, [], {}, ["a"], {"a": 1}, True, 1.5, -1, "x"])


def _strings(name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    choices = [FUZZ_TEXT]
    if "enum" in schema:
        choices.insert(0, st.sampled_from(schema["enum"]))
    known = [v for v in REALISTIC.get(name, []) if isinstance(v, str)]
    if known:
        real = st.sampled_from(known)
        choices.insert(0, real)
        choices.append(st.tuples(real, FUZZ_TEXT, st.booleans()).map(lambda t: t[0] + t[1] if t[2] else t[1] + t[0]))
    return st.one_of(*choices)


def _integers(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    lo, hi = schema.get("minimum", -(2 ** 31)), schema.get("maximum", 2 ** 31)
    edges = sorted({lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 0, -1, 2 ** 31, -(2 ** 63), 10 ** 20, 1_048_576, 16_384})
    return st.one_of(st.integers(lo, min(hi, lo + 50)), st.integers(lo, hi), st.sampled_from(edges),
                     st.sampled_from([2.0, 2.5, math.nan, math.inf, -math.inf, 1e300]))


def _numbers() -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from([0, -0.0, 10 ** 30, 2 ** 63, 10 ** 5000, 1e-320, math.nan, math.inf]))


def value_strategy(name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values for one property: what its schema admits, its edges and beyond, now and then a wrong type."""
    types = schema.get("type", "string")
    types = types if isinstance(types, list) else [types]
    choices = []
    for kind in types:
        if kind == "string":
            choices.append(_strings(name, schema))
        elif kind == "integer":
            choices.append(_integers(schema))
        elif kind == "number":
            choices.append(_numbers())
        elif kind == "boolean":
            choices.append(st.booleans())
        elif kind == "null":
            choices.append(st.none())
    known = [v for v in REALISTIC.get(name, []) if not isinstance(v, str)]
    if known:
        choices.append(st.sampled_from(known))
    return st.one_of(st.one_of(*choices), st.one_of(*choices), st.one_of(*choices), WRONG_TYPES)


SUFFIXES = {"word": ".docx", "excel": ".xlsx", "pdf": ".pdf", "system": ".txt"}
OUTPUTS = {"word_convert_to_pdf": ".pdf", "excel_convert_to_pdf": ".pdf", "pdf_convert_to_word": ".docx"}


def realistic_strategy(tool: str, name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values a careful caller would send: known files of the tool's kind, users, times, in-range
    integers. With these a call gets past validation into the tool's own code."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type", "string")
    if kind == "integer":
        return st.integers(schema.get("minimum", 1), min(schema.get("maximum", 10), 12))
    suffix = OUTPUTS.get(tool) if name == "output_path" else SUFFIXES.get(tool.split("_", 1)[0])
    pool = REALISTIC.get(name, [])
    if name in ("file_path", "output_path") and suffix:
        own = [f for f in FILES if f.endswith(suffix)] + ([f"data/out{suffix}", f"data/sub/out{suffix}"])
        if tool == "system_read_text":
            own += ["emails/alice/Lunch.eml", "calendar/alice.ics", "data/answer.txt"]
        pool = own + own + pool
    if pool:
        return st.sampled_from(pool)
    return st.text(max_size=20)


def arguments(parameters: dict[str, Any], tool: str = "") -> st.SearchStrategy[Any]:
    """Argument objects for a tool schema: all realistic, one property fuzzed, or all fuzzed;
    optional properties present or absent; sometimes a required one missing, an unknown one
    added, or not an object at all."""
    properties = parameters.get("properties", {})
    required = set(parameters.get("required", []))
    fuzzed = {key: value_strategy(key, schema) for key, schema in properties.items()}
    real = {key: realistic_strategy(tool, key, schema) for key, schema in properties.items()}

    def objects(values: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({k: s for k, s in values.items() if k in required},
                                     optional={k: s for k, s in values.items() if k not in required})

    def drop_one(args: dict[str, Any], index: int) -> dict[str, Any]:
        if not args:
            return args
        key = sorted(args)[index % len(args)]
        return {k: v for k, v in args.items() if k != key}

    all_real, all_fuzzed = objects(real), objects(fuzzed)
    variants = [all_real, all_fuzzed, all_fuzzed,
                st.builds(drop_one, all_real, st.integers(0, 10)),
                st.builds(lambda args, extra: {**args, extra: 1}, all_real, st.sampled_from(["zzz", "path", "file"])),
                st.sampled_from([None, [], "args", 7])]
    if properties:
        one_fuzzed = st.sampled_from(sorted(properties)).flatmap(
            lambda key: st.tuples(all_real, st.just(key), fuzzed[key])).map(lambda t: {**t[0], t[1]: t[2]})
        variants += [one_fuzzed] * 4
    return st.one_of(*variants)


# -- the testbed the calls run against ---------------------------------------------------------

def write_fuzz_testbed(parent: Path) -> Workspace:
    """The sample office plus a few files that are not what they claim, beside a folder that no
    call may touch (``outside/``)."""
    root = write_sample_office(parent / "testbed")
    (root / "data" / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (root / "data" / "broken.xlsx").write_bytes(b"")
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "first"
    workbook.active.cell(1_048_576, 16_384, "last")
    workbook.save(root / "data" / "far.xlsx")
    outside = parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("keep out\n", encoding="utf-8")
    return Workspace(root, now=SAMPLE_NOW)


def outside_state(parent: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``parent`` except the testbed, with its size and mtime."""
    state = {}
    for folder, dirs, files in os.walk(parent):
        if Path(folder) == parent:
            dirs[:] = [d for d in dirs if d != "testbed"]
        for name in dirs + files:
            st_ = os.lstat(os.path.join(folder, name))
            state[os.path.relpath(os.path.join(folder, name), parent)] = (st_.st_size, st_.st_mtime_ns)
    return state


def problems_with(name: str, result: Any) -> list[str]:
    """What is wrong with one call's result (empty when it is a proper observation)."""
    found = []
    observation = result.observation
    if not isinstance(observation, str) or not observation:
        return [f"{name}: observation is not a non-empty string: {observation!r}"]
    if not result.ok and not observation.startswith("Error: "):
        found.append(f"{name}: failing observation does not start with 'Error: ': {observation[:200]!r}")
    if observation.startswith(f"Error: {name}: {INTERNAL_ERROR} ("):
        found.append(f"{name}: {observation[:300]}")
    if len(observation) > MAX_OBSERVATION_CHARS + MARKER_CHARS:
        found.append(f"{name}: observation of {len(observation)} characters")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in observation):
        found.append(f"{name}: observation holds an unpaired surrogate")
    return found


TOOLS = sorted(default_registry().names)


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_answers_every_schema_input(name, tmp_path):
    registry = default_registry()
    ws = write_fuzz_testbed(tmp_path)
    before = outside_state(tmp_path)

    @FUZZ
    @given(args=arguments(registry.get(name).parameters, name))
    def call(args):
        result = registry.call(ws, name, args)
        assert not problems_with(name, result), problems_with(name, result)
        assert outside_state(tmp_path) == before, f"{name} changed something outside the testbed"

    call()
