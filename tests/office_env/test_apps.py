"""One app registry (office_env/apps.py) that every layer takes its app names and tables from."""

import functools
import importlib
import importlib.util
import json
import random
import re
import sys
import tomllib
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pytest

from generators.families import FAMILIES
from generators.model import ToolCall
from generators.schemas import task_draft_schema
from office_env.apps import (
    LOADED_BY,
    OTHER_FILE_KINDS,
    App,
    app_of_doc_type,
    app_of_extension,
    file_kind_pattern,
    file_kinds,
    get_app,
    kind_readers,
    load,
    office_apps,
    read_as,
    readings,
    register_app,
    registered_apps,
    tool_apps,
    unregister_app,
)
from office_env.evaluation import criteria_schema, evaluate_criteria, validate_criteria
from office_env.evaluation.stated import value_key
from office_env.tools import default_registry
from orchestrator.planner import general_plan_schema
from surfers.notes import notes_schema


def test_the_app_list_is_one_list_every_layer_takes():
    """Tools, families, schemas, the planner and the task record's schema name the registered apps
    in the registry's order, the file system last."""
    assert office_apps() == ("word", "excel", "pdf", "email", "calendar")
    assert tool_apps() == (*office_apps(), "system")
    assert {name.split("_", 1)[0] for name in default_registry().names} == set(tool_apps())
    assert {app for fam in FAMILIES.values() for app in fam.apps} == set(office_apps())
    assert general_plan_schema()["properties"]["apps"]["items"]["enum"] == list(office_apps())
    assert task_draft_schema()["properties"]["apps"]["items"]["enum"] == list(office_apps())
    assert [ref["$ref"].rsplit("/", 1)[1] for ref in notes_schema()["oneOf"]] == [f"{a}_notes" for a in office_apps()]
    record = json.loads((Path(__file__).resolve().parents[2] / "verifier/schemas/task.schema.json").read_text())
    assert record["properties"]["apps"]["items"]["enum"] == list(tool_apps())


def test_each_entry_names_tools_that_exist_and_only_read():
    """An app's surfer tools are tools of that app that change no file."""
    tools = default_registry()
    for name in office_apps():
        for tool in get_app(name).read_tools:
            assert tool in tools and tools.only_reads(tool) and tools.get(tool).app == name, (name, tool)


def test_file_kinds_and_doc_types_map_back_to_their_app():
    assert (app_of_extension("XLSX"), app_of_extension("docx"), app_of_extension("ics")) == (
        "excel", "word", "calendar")
    assert app_of_extension("exe") is None
    assert (app_of_doc_type("email"), app_of_doc_type("xls"), app_of_doc_type("odt")) == ("email", "excel", None)


def test_a_criterion_reads_a_file_as_its_apps_doc_type_and_plain_text_alike():
    """The kinds a criterion reads, each with the doc type its files are read as (a .doc as a
    Word file), and the doc types read alike: one reader's, or plain text's (OfficeBench reads an
    .ics as txt)."""
    assert read_as() == {"docx": "docx", "doc": "docx", "xlsx": "xlsx", "pdf": "pdf", "ics": "ics", "txt": "txt"}
    # as a person sees them (a re-cast seed's names are found so): the packages and mail; the rest as plain text
    assert list(kind_readers()) == ["docx", "docm", "xlsx", "xlsm", "pdf", "eml"]
    ways = readings()
    assert ways["doc"] == ways["docx"] and ways["ics"] == ways["txt"]
    assert len({ways["docx"], ways["xlsx"], ways["pdf"], ways["txt"]}) == 4 and "xls" not in ways


def test_file_names_may_end_in_each_apps_kinds_and_a_few_others():
    """One list of the kinds a file's name ends in, which the patterns finding file names use."""
    assert file_kinds()[:3] == ("docx", "doc", "docm") and file_kinds()[-5:] == OTHER_FILE_KINDS
    assert {"xlsx", "csv", "pdf", "eml", "ics", "txt"} <= set(file_kinds()) and len(set(file_kinds())) == len(file_kinds())
    # a value an output states is a file's name when it ends in any of them, not an app's first kind alone
    assert [value_key("file", name) for name in ("data/minutes.odt", "deck.md", "notes.docx.bak")] == [
        "minutes.odt", "deck.md", None]
    # the patterns' one alternation of them: more kinds after, each once
    assert file_kind_pattern().split("|") == list(file_kinds())
    assert file_kind_pattern("zip", "pdf").split("|") == [*file_kinds(), "zip"]


def test_a_bad_entry_is_refused():
    with pytest.raises(ValueError, match="lower-case"):
        App(name="My App", work="thing", tools="x")
    with pytest.raises(ValueError, match="needs a surfer"):
        App(name="toy", work="thing", tools="x")
    with pytest.raises(ValueError, match="kind_readers"):
        App(name="toy", work="thing", tools="x", office=False, extensions=("toy",), kind_readers={"txt": "m:f"})
    with pytest.raises(ValueError, match="already registered"):
        register_app(get_app("word"))


ROOT = Path(__file__).resolve().parents[2]
CONTAIN_BOARD = {"function": "evaluate_contain",
                 "args": {"doc_type": "toy", "file": "data/sprint.toy", "keywords": ["banner"]}}


def _doc_types(function: str) -> list[str]:
    """The ``doc_type`` enum the criteria schema gives ``function``."""
    branch = next(b for b in criteria_schema()["items"]["allOf"]
                  if b["if"]["properties"]["function"]["const"] == function)
    return branch["then"]["properties"]["args"]["properties"]["doc_type"]["enum"]


def test_the_criteria_doc_types_are_the_apps_readers_and_the_mailbox():
    """Each app's text readers give the doc types a criterion may read (a mailbox besides), in
    OfficeBench's order for the built-in ones."""
    assert _doc_types("evaluate_contain") == ["txt", "ics", "doc", "docx", "xlsx", "pdf", "email"]
    assert _doc_types("evaluate_exact_match") == ["txt", "ics", "doc", "docx", "pdf", "xlsx"]
    assert validate_criteria([CONTAIN_BOARD]) != []


def _layer_ranks() -> dict[str, int]:
    """Each package's height in the import contract's layers (pyproject.toml): 0 for the bottom one;
    packages of one layer (``surfers : generators : harness``) share a height and import none of each other."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    return {package.strip(): rank for rank, layer in enumerate(reversed(layers)) for package in layer.split(":")}


def _may_load(loader: str, module: str, ranks: dict[str, int]) -> bool:
    package = module.split(".", 1)[0]
    return package == loader or ranks[package] < ranks[loader]


def _resolved(field: str, ref: str) -> object:
    return importlib.import_module(ref) if field == "tools" else load(ref)


def test_every_reference_resolves_in_a_layer_its_loader_may_import():
    """An entry names upper-layer code by string, which lint-imports cannot see: each reference
    resolves (a module for ``tools``, a callable otherwise) and names a module of the layer that loads
    it (``LOADED_BY``) or of one below it, as the import contract would ask of an import there."""
    ranks = _layer_ranks()
    assert set(LOADED_BY.values()) <= set(ranks)
    for app in registered_apps():
        for field, ref in app.references():
            module = ref.partition(":")[0]
            assert module.split(".", 1)[0] in ranks, (app.name, field, ref)
            assert _may_load(LOADED_BY[field], module, ranks), (app.name, field, ref, LOADED_BY[field])
            found = _resolved(field, ref)
            assert callable(found) if field != "tools" else found.__name__ == ref, (app.name, field, ref)
    # the rule refuses what an import there would be refused
    assert not _may_load("office_env", "surfers.offline", ranks) and not _may_load("surfers", "generators.x", ranks)
    assert _may_load("orchestrator", "surfers.offline", ranks) and _may_load("surfers", "office_env.apps", ranks)


def test_each_reference_kind_is_loaded_where_the_registry_says():
    """The ``load(<entry>.<field>)`` calls of product code sit in the layer ``LOADED_BY`` names for it."""
    sites: dict[str, set[str]] = {}
    for package in _layer_ranks():
        for path in (ROOT / package).rglob("*.py"):
            for field in re.findall(r"\bload\(\w+\.(\w+)\)", path.read_text(encoding="utf-8")):
                sites.setdefault(field, set()).add(package)
    assert {"synthesis", "surfer", "preview"} <= set(sites)
    assert all(sites[field] == {LOADED_BY[field]} for field in sites), sites


# -- a new app is one registry entry --------------------------------------------------------------

TOY_PACKAGE = {
    "__init__.py": '''
from office_env.apps import App, notes_object

TOY = App(
    name="toy", work="board", tools="toyapp.tools", read_tools=("toy_read_board",), extensions=("toy",),
    notes_item="toy_board",
    notes_defs={"toy_board": notes_object({"file": {"type": "string"},
                                           "cards": {"type": "array", "items": {"type": "string"}}})},
    spoken=(r"(?i)\\btoy boards?\\b",), near_miss={"toy": "word"}, readers={"toy": "toyapp.surfer:board_text"},
    kind_readers={"toy": "toyapp.surfer:board_seen"},
    synthesis="toyapp.surfer:boards",
    surfer="toyapp.surfer:explore_toy", preview="toyapp.surfer:board_view")
''',
    "tools.py": '''
from office_env.tools.common import write
from office_env.tools.registry import tool
from office_env.workspace import Workspace


@tool("toy", "read_board", "Read a .toy board's cards.", writes=False,
      properties={"file_path": {"type": "string"}}, required=["file_path"])
def read_board(ws: Workspace, file_path: str) -> str:
    return f"{file_path}:\\n" + ws.resolve(file_path, field="file_path").read_text(encoding="utf-8")


@tool("toy", "new_board", "Create an empty .toy board.", writes=True,
      properties={"file_path": {"type": "string"}}, required=["file_path"], creates=True)
def new_board(ws: Workspace, file_path: str) -> str:
    write(ws, file_path, b"", "file_path")
    return f"Created {file_path}."


@tool("toy", "add_card", "Add a card to a .toy board.", writes=True,
      properties={"file_path": {"type": "string"}, "card": {"type": "string"}}, required=["file_path", "card"],
      prose=("card",), body="card", edits=True)
def add_card(ws: Workspace, file_path: str, card: str) -> str:
    old = ws.resolve(file_path, field="file_path").read_bytes()
    write(ws, file_path, old + card.encode() + b"\\n", "file_path")
    return f"Added a card to {file_path}."


@tool("toy", "list_mine", "The cards a user is given.", writes=False,
      properties={"user": {"type": "string"}}, required=["user"])
def list_mine(ws: Workspace, user: str) -> str:
    return f"No cards for {user}."


@tool("toy", "close_card", "Close a card a user is given, by its title.", writes=True,
      properties={"user": {"type": "string"}, "card": {"type": "string"}}, required=["user", "card"],
      person="user", prose=("card",), no_words=True, listed_by="toy_list_mine")
def close_card(ws: Workspace, user: str, card: str) -> str:
    return f"Closed {card!r}."


@tool("toy", "export", "Export a .toy board as a .docx document.", writes=True,
      properties={"file_path": {"type": "string"}}, required=["file_path"], converts_to="word")
def export(ws: Workspace, file_path: str) -> str:
    return f"Exported {file_path}."
''',
    "surfer.py": '''
from surfers.offline import documents, list_files


def explore_toy(reader, users=None):
    boards = []
    for file in documents(list_files(reader), ".toy"):
        text = reader.call("toy_read_board", {"file_path": file}).observation
        boards.append({"file": file, "cards": text.splitlines()[1:]})
    return {"app": "toy", "files": boards}


def boards(world, rng):
    return [("data/backlog.toy", "toy_board", f"{world.user.name}: {rng.choice(['ship', 'plan'])}".encode())]


def board_text(path, label):
    return path.read_text(encoding="utf-8")


def board_seen(path, label):
    return "cards: " + path.read_text(encoding="utf-8").replace("\\n", "; ")


def board_view(path, label):
    return {"kind": "text", "text": "toy board: " + path.read_text(encoding="utf-8")}
''',
}


@pytest.fixture()
def toy_app(tmp_path, monkeypatch):
    """The toy app's package on the path, registered as a plugin registers it; taken out after."""
    package = tmp_path / "plugins" / "toyapp"
    package.mkdir(parents=True)
    for name, text in TOY_PACKAGE.items():
        (package / name).write_text(text.lstrip(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(package.parent))
    import toyapp

    register_app(toyapp.TOY)
    yield toyapp.TOY
    unregister_app("toy")
    for module in [m for m in sys.modules if m == "toyapp" or m.startswith("toyapp.")]:
        del sys.modules[module]


def test_a_registered_app_is_in_the_tools_surfers_schemas_planner_and_review_page(toy_app, tmp_path):
    """One ``register_app`` call, and no other edit, puts a new app in every layer: its tools in the
    registry, its files in a synthesized office, its surfer behind ``explore`` (notes valid against
    the notes schema), its reader in the evaluation and the trace (the files its read tool reads),
    the criteria's doc types, the Plus generator's and the specifics' tables, the task record's enum
    (a record of it is read), the planner's prompt and schema, the review page's view."""
    from starlette.testclient import TestClient

    from backends.task_record import parse_record, task_schema
    from generators.near_values import near_value
    from generators.plus_offline import infer_apps, topic_of
    from generators.specifics import find_specifics
    from office_env.evaluation.content import read_document
    from office_env.synthesis.documents import build_files
    from office_env.synthesis.world import make_world
    from office_env.workspace import Workspace
    from orchestrator.planner import planner_prompt
    from orchestrator.review.app import ReviewServer, create_app
    from surfers import explore, validate_notes
    from surfers.llm import _tools, app_files
    from tests.support.records import record_with, write_json
    from office_env.seed_recast import file_text
    from verifier.gameability import value_tokens
    from verifier.trace import _read_paths, office_text

    assert office_apps() == ("word", "excel", "pdf", "email", "calendar", "toy") and tool_apps()[-1] == "system"
    assert "toy_read_board" in default_registry().names and default_registry().only_reads("toy_read_board")
    assert app_of_extension("toy") == "toy" and file_kind_pattern().split("|")[-len(OTHER_FILE_KINDS) - 1] == "toy"
    assert [(p, k) for p, k, _ in build_files(make_world(3))][-1] == ("data/backlog.toy", "toy_board")

    dataset = tmp_path / "data"
    task = dataset / "tasks" / "toy-00001"
    testbed = task / "testbed"
    (testbed / "data").mkdir(parents=True)
    (testbed / "data" / "sprint.toy").write_text("ship the banner\nfix the login", encoding="utf-8")
    (testbed / "data" / "notes.docx").write_bytes(b"")
    notes = explore("toy", testbed)
    cards = ["ship the banner", "fix the login"]
    assert notes == {"app": "toy", "files": [{"file": "data/sprint.toy", "cards": cards}]}
    assert validate_notes(notes) == [] and validate_notes({"app": "toy", "files": [{"file": 3}]}) != []
    assert app_files("toy", ["data/sprint.toy", "data/notes.docx"]) == ["data/sprint.toy"]
    assert _tools("toy").names == ["system_list_files", "toy_read_board"]
    board = testbed / "data" / "sprint.toy"
    assert read_document(board, "data/sprint.toy", "toy") == "ship the banner\nfix the login"
    assert "fix the login" in office_text(testbed).files["data/sprint.toy"].text
    assert file_text(board, "data/sprint.toy") == "cards: ship the banner; fix the login"  # as a seed's re-cast reads it
    assert _read_paths([{"tool": "toy_read_board", "args": {"file_path": "./data/sprint.toy"}}]) == {"data/sprint.toy"}

    # a criterion reads its files as its own doc type: in the schema, valid, and scored by its reader
    assert _doc_types("evaluate_contain")[-2:] == ["email", "toy"] and "toy" in _doc_types("evaluate_exact_match")
    assert validate_criteria([CONTAIN_BOARD]) == []
    assert evaluate_criteria(Workspace(testbed), [CONTAIN_BOARD]).passed

    # a seed instruction that names its files or the app is about the app (its work: a board)
    instruction = "Add the release card to data/sprint.toy on the toy board."
    assert [(s.kind, s.text) for s in find_specifics(instruction)] == [
        ("file", "data/sprint.toy"), ("app", "toy board")]
    assert infer_apps(instruction) == ["toy"] and infer_apps("Check it.", [CONTAIN_BOARD]) == ["toy"]
    assert value_tokens("Use sprint.toy, not notes.zip.") == ["file:sprint.toy", "file:notes.zip"]  # the detectors'
    assert topic_of(instruction, find_specifics(instruction), ["toy"]).endswith(" board")
    assert near_value("toy", "app", random.Random(1)) == "word"

    assert task_schema()["properties"]["apps"]["items"]["enum"] == [*office_apps(), "system"]
    record = record_with("toy-00001", apps=["toy"], app_count=1,
                         evaluation=[{"function": "evaluate_file_exist", "args": {"file": "data/sprint.toy"}}])
    assert parse_record(record).apps == ["toy"]
    assert general_plan_schema()["properties"]["apps"]["items"]["enum"][-1] == "toy"
    inputs = {"app_count": 1, "suggested_kind": "lookup", "days": 3, "utterances_per_day": 8}
    assert "of the apps word, excel, pdf, email, calendar, toy." in planner_prompt(inputs)[1]["content"]

    write_json(task / "task.json", record)
    client = TestClient(create_app(ReviewServer(dataset, "ana")), base_url="http://127.0.0.1")
    page = client.get("/task/toy-00001")
    assert page.status_code == 200 and "1 app(s): toy" in page.text
    view = client.get("/task/toy-00001/file", params={"path": "data/sprint.toy"})
    assert view.status_code == 200 and "toy board: ship the banner" in view.text


BOARDS = ["data/sprint_1.toy", "data/sprint_2.toy"]
BOARD_TEXT = "data/sprint.toy:\nship the banner on the landing page\nfix the login of the staff portal"


def _memo_from_board() -> list[dict]:
    return [{"tool": "toy_read_board", "args": {"file_path": "data/sprint.toy"}},
            {"tool": "word_write_to_file", "args": {"file_path": "data/memo.docx", "content": "Two cards are left."}}]


def _toy_steps() -> list[tuple[ToolCall, list[ToolCall]]]:
    """Calls of the toy's writes, each with the steps discovery puts before it while the toy is registered."""
    listing = ToolCall("system_list_files", {"folder": "data"})
    return [(ToolCall("toy_new_board", {"file_path": BOARDS[0]}), []),
            (ToolCall("toy_add_card", {"file_path": BOARDS[0], "card": "ship"}),
             [listing, ToolCall("toy_read_board", {"file_path": BOARDS[0]})]),
            (ToolCall("toy_close_card", {"user": "ana", "card": "ship"}), [ToolCall("toy_list_mine", {"user": "ana"})])]


ADDING = [{"tool": "toy_read_board", "args": {"file_path": "data/sprint.toy"}},
          {"tool": "toy_add_card", "args": {"file_path": "data/sprint.toy", "card": "Ship the banner on 2025-04-08"}}]
NOW = datetime(2025, 4, 7, 9, 0)


def _file_details(tmp_path: Path) -> tuple[str | None, list[str], list[dict | None]]:
    """The decoy made for a detail naming a board, and the lint's notes on a seed whose instruction
    names one that no criterion checks and whose criterion reads another as a PDF (with the
    repairs): what the file-name patterns and the doc types of file kinds make of a ``.toy`` name."""
    from generators.decoys import make_value
    from generators.model import MemoryPiece
    from office_env.officebench import SeedTask
    from verifier.seed_lint import lint_task

    piece = MemoryPiece(id="m1", kind="fact", text="Use data/sprint.toy as the source.", value="data/sprint.toy",
                        cue="source_file")
    decoy = make_value(piece, "the launch plan", date(2025, 4, 7), random.Random(3), ["Ann Lee"])
    seed = SeedTask(id="1-1", app_count=1, username="Alice", date="2020-05-01", weekday="Friday", time="10:00 AM",
                    instruction="Add the release card to sprint.toy and note it in notes.txt.",
                    evaluation=[{"function": "evaluate_contain",
                                 "args": {"doc_type": "txt", "file": "data/notes.txt", "keywords": ["release"]}},
                                {"function": "evaluate_contain",
                                 "args": {"doc_type": "pdf", "file": "data/backlog.toy", "keywords": ["ship"]}}],
                    folder=tmp_path / "1", subtask_file=tmp_path / "1" / "subtasks" / "0.json",
                    testbed=tmp_path / "1" / "testbed", reference=None)
    findings = lint_task(seed)
    return (decoy, [f.message for f in findings if f.code == "instruction_mismatch"],
            [f.repair for f in findings if f.code == "doc_type_mismatch"])


@functools.cache
def _mutants_bench():
    """bench/mutants.py, loaded once (its file-name patterns follow the registry)."""
    spec = importlib.util.spec_from_file_location("mutants_bench_apps", ROOT / "bench" / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _bench_files() -> tuple[list[str], list[tuple[str, str]]]:
    """The files the mutation bench finds a plan naming, and the keys of a memory value naming a board."""
    bench = _mutants_bench()
    plan = [{"tool": "toy_add_card", "args": {"file_path": "data/sprint.toy", "card": "See data/backlog.toy."}}]
    return bench._file_names(plan), bench._memory_keys("data/sprint.toy", bench.Office("ana", (), ()), 2025, None)


def test_a_registered_apps_read_tool_is_a_read_to_discovery_stated_values_and_the_paste_plan(toy_app, tmp_path):
    """The app's read tool is a read wherever plans are judged by what they read: discovery opens a
    look-alike board with it (and not again one the plan reads itself), a mail naming the board
    the oracle read says the file its work was drawn from, and a paste plan pastes what it returned.
    Its writes' declarations are read as the built-in ones are: discovery's steps before them, and
    a card's free text rewritten by the answer forms and the natural forms and pasted over."""
    from generators.discovery import discover_plan
    from generators.model import TaskDraft
    from generators.stated_values import state_checks
    from verifier.answer_forms import answer_form_plans
    from verifier.natural_forms import natural_form_plans
    from verifier.paste_plan import paste_plan

    second = ToolCall("toy_read_board", {"file_path": BOARDS[1]})
    assert discover_plan([second], BOARDS) == [
        ToolCall("system_list_files", {"folder": "data"}), ToolCall("toy_read_board", {"file_path": BOARDS[0]}), second]
    both = [second, ToolCall("toy_read_board", {"file_path": BOARDS[0]})]
    assert discover_plan(both, BOARDS)[1:] == both
    # its own declarations say what comes before its writes: nothing before a board it makes, the
    # board read before a card is added to it, the user's cards listed before one is closed by title
    for call, before in _toy_steps():
        assert discover_plan([call], BOARDS) == [*before, call], call

    mail = "Hi Elliot,\n\nTwo cards of sprint.toy are left: the banner and the login.\n\nBest,\nZara"
    draft = TaskDraft(description="d", intent="i", subtasks=["s"], evaluation=[], memory=[], query="q", oracle=[
        ToolCall("toy_read_board", {"file_path": "data/sprint.toy"}),
        ToolCall("email_send_email", {"sender": "zara", "recipient": "elliot", "subject": "Cards", "content": mail})])
    checks = [c for c in state_checks(draft).evaluation if c["function"] == "evaluate_stated_values"]
    named = [v for v in checks[0]["args"]["values"] if v["kind"] == "file"]
    assert [(v["value"], v.get("alone")) for v in named] == [("sprint.toy", [])]  # read: it stands alone
    # a board the oracle adds a card to is its output too (its tool declares it edits): no longer a file
    # read that must stand alone
    edited = replace(draft, oracle=[draft.oracle[0], ToolCall("toy_add_card", {"file_path": "data/sprint.toy",
                                                                                 "card": "the login"}),
                                     draft.oracle[1]])
    assert [(v["value"], v.get("alone")) for c in state_checks(edited).evaluation
            if c["function"] == "evaluate_stated_values" for v in c["args"]["values"] if v["kind"] == "file"] == [
        ("sprint.toy", None)]
    # what a conversion writes comes from its declaration: the toy export's Word document, the PDF a
    # Word document is turned into, nothing for a tool that converts nothing
    from office_env.tools import converted_path
    assert converted_path("toy_export", {"file_path": "data/sprint.toy"}) == "data/sprint.docx"
    assert converted_path("word_convert_to_pdf", {"file_path": "data/a.docx", "output_path": "out/b.pdf"}) == "out/b.pdf"
    assert converted_path("toy_add_card", {"file_path": "data/sprint.toy"}) is None
    assert value_key("file", "data/sprint.toy") == "sprint.toy"  # a stated value may be a board

    pasted = paste_plan(_memo_from_board(), [BOARD_TEXT, "Wrote data/memo.docx (1 paragraph(s))."])
    assert pasted is not None and pasted[1]["args"]["content"] == BOARD_TEXT

    assert [(form, plan[1]["args"]["card"]) for form, plan in answer_form_plans(ADDING, NOW)][0] == (
        "words", "Ship the banner on Tuesday 8 April")
    assert ("date in words", "toy") in {(form, kind) for form, kind, _ in natural_form_plans(ADDING)}
    # a card of a board it exports is a Word document's words; a card closed by its title writes none
    exported = [*ADDING, {"tool": "toy_export", "args": {"file_path": "data/sprint.toy"}}]
    assert {kind for _, kind, _ in natural_form_plans(exported)} == {"word"}
    assert natural_form_plans([{"tool": "toy_close_card", "args": {"user": "ana", "card": "Ship on 2025-04-08"}}]) == []
    pasted = paste_plan(ADDING, [BOARD_TEXT, "Added a card to data/sprint.toy."])
    assert pasted is not None and pasted[1]["args"]["card"] == BOARD_TEXT

    # its file kind is a file's: a decoy names a board of its own, the lint sees the board named and
    # a board read as a PDF (to be read as a board)
    decoy, mismatches, repairs = _file_details(tmp_path)
    assert decoy is not None and re.fullmatch(r"data/launch_plan_\w+_[a-z]{3}\d+\.toy", decoy), decoy
    assert mismatches == ["the instruction names 'sprint.toy', which no criterion checks"]
    assert repairs == [{"field": "evaluation[1].args.doc_type", "from": "pdf", "to": "toy"}]
    assert _bench_files() == (["sprint.toy", "backlog.toy"], [("file", "sprint.toy")])  # the mutants' files


def test_an_app_taken_out_is_gone_from_every_layer(toy_app, tmp_path):
    from backends.task_record import RecordError, parse_record
    from generators.discovery import discover_plan
    from generators.plus_offline import infer_apps
    from generators.specifics import find_specifics
    from tests.support.records import record_with
    from verifier.answer_forms import answer_form_plans
    from verifier.gameability import has_value_token
    from verifier.natural_forms import natural_form_plans
    from verifier.paste_plan import paste_plan
    from office_env.seed_recast import file_text
    from verifier.trace import _read_paths

    assert has_value_token("Fix sprint.toy.") and infer_apps("Fix data/sprint.toy.") == ["toy"] and validate_criteria([CONTAIN_BOARD]) == []
    unregister_app("toy")
    assert "toy" not in office_apps() and "toy_read_board" not in default_registry().names
    assert "toy" not in _doc_types("evaluate_contain") and validate_criteria([CONTAIN_BOARD]) != []
    assert value_key("file", "data/sprint.toy") is None and "toy" not in file_kind_pattern().split("|")
    assert infer_apps("Fix data/sprint.toy.") == ["system"]
    assert find_specifics("Fix data/sprint.toy on the toy board.") == []
    assert not has_value_token("Fix sprint.toy.")
    board = tmp_path / "sprint.toy"
    board.write_text("ship\nfix", encoding="utf-8")
    assert file_text(board, "sprint.toy") == "ship\nfix"  # plain text again
    assert _read_paths([{"tool": "toy_read_board", "args": {"file_path": "data/sprint.toy"}}]) == set()
    # a look-alike board is read as text, and what the toy's reader returned is no read to paste
    assert discover_plan([ToolCall("toy_read_board", {"file_path": BOARDS[1]})], BOARDS)[1] == ToolCall(
        "system_read_text", {"file_path": BOARDS[0]})
    # its writes are unknown calls now: a board named is found in its folder, nothing else comes first
    listing = ToolCall("system_list_files", {"folder": "data"})
    assert [discover_plan([call], BOARDS) for call, _ in _toy_steps()] == [
        [listing, call] if "file_path" in call.args else [call] for call, _ in _toy_steps()]
    assert paste_plan(_memo_from_board(), [BOARD_TEXT, "Wrote data/memo.docx (1 paragraph(s))."]) is None
    # a card is no prose to the forms or the paste any more, and a board's name names no file
    assert answer_form_plans(ADDING, NOW) == [] and natural_form_plans(ADDING) == []
    assert _file_details(tmp_path) == (None, [], []) and _bench_files() == ([], [])
    with pytest.raises(RecordError, match="toy"):
        parse_record(record_with("toy-00001", apps=["toy"], app_count=1))
    assert general_plan_schema()["properties"]["apps"]["items"]["enum"] == list(office_apps())
