"""The review page over HTTP (Starlette's test client, the real app): pages, verdicts, post-edits
checked by the gates, safety, and ``homer review apply`` on the result."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from orchestrator.build import build
from orchestrator.cli import app
from orchestrator.review.annotations import AnnotationStore
from orchestrator.review.app import TOKEN_COOKIE, ReviewServer, create_app
from orchestrator.review.http import allowed_hosts
from orchestrator.roles import BuildConfig

from tests.support.records import evidence_turn, plain_turn

pytestmark = pytest.mark.slow

LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("review") / "data"
    build(out, 3, BuildConfig(seed=21))
    return out


@pytest.fixture()
def dataset(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(built, copy)
    return copy


def client_for(dataset: Path, annotator: str = "ana", **kwargs) -> tuple[ReviewServer, TestClient]:
    server = ReviewServer(dataset, annotator, **kwargs)
    return server, TestClient(create_app(server), base_url=LOCAL)


def task_ids(dataset: Path) -> list[str]:
    return sorted(p.name for p in (dataset / "tasks").iterdir())


def record_of(dataset: Path, task_id: str) -> dict:
    return json.loads((dataset / "tasks" / task_id / "task.json").read_text())


def test_the_list_filters_and_the_task_page_shows_the_task(dataset: Path):
    server, client = client_for(dataset)
    ids = task_ids(dataset)
    page = client.get("/")
    assert page.status_code == 200 and all(i in page.text for i in ids)
    record = record_of(dataset, ids[0])
    only = client.get("/", params={"apps": str(record["app_count"]), "family": record["family"]}).text
    assert ids[0] in only
    others = [i for i in ids if record_of(dataset, i)["family"] != record["family"]]
    assert all(f"/task/{i}\"" not in only for i in others)
    task = client.get(f"/task/{ids[0]}").text
    for text in (record["intent"], record["query"], record["memory"][0]["id"]):
        assert text.replace("'", "&#39;") in task
    d, t = evidence_turn(record)
    mid = record["dialogue"][d]["turns"][t]["evidence"][0]
    role = record["dialogue"][d]["turns"][t]["role"]
    assert f'class="turn {role} evidence" id="d{d}-t{t}"' in task and f'href="#d{d}-t{t}"' in task
    assert f'id="memory-{mid}"' in task
    files = client.get(f"/task/{ids[0]}").text.count("/file?path=")
    assert files >= 10  # the office's files are listed with previews


def test_the_list_shows_intents_and_the_history_numbers_its_turns_and_shows_the_marked_ones_alone(dataset: Path):
    import html
    import re

    server, client = client_for(dataset)
    ids = task_ids(dataset)
    record = record_of(dataset, ids[0])
    listing = client.get("/").text
    assert f'<td class="intent">{html.escape(record["intent"][:200])}</td>' in listing
    page = client.get(f"/task/{ids[0]}").text
    first = record["dialogue"][0]["turns"][2]
    assert 'id="d0-t2" data-field="turn:0:2"' in page
    shown = re.search(r'id="d0-t2".*?<span class="at">([^<]*)</span>', page).group(1)
    assert shown == f"3 {first['ts'][11:16]}"  # its number in the day and its time
    every = page.count('class="turn ')
    marked = client.get(f"/task/{ids[0]}", params={"marked": "1"}).text
    anchors = re.findall(r'class="turn [^"]*" id="d(\d+)-t(\d+)"', marked)
    wanted = {(d, t) for d, session in enumerate(record["dialogue"]) for t, turn in enumerate(session["turns"])
              if any(turn.get(m) for m in ("evidence", "superseded", "distractor"))}
    before = {(d, t - 1) for d, t in wanted if t > 0}  # the question a marked answer replies to
    assert {(int(d), int(t)) for d, t in anchors} == wanted | before
    assert len(anchors) < every and 'id="all-turns"' in marked and 'id="marked-only"' in page

def test_previews_of_each_kind_and_paths_that_leave_the_testbed(dataset: Path):
    _, client = client_for(dataset)
    task = task_ids(dataset)[0]
    testbed = dataset / "tasks" / task / "testbed"
    seen = set()
    for path in sorted(p for p in testbed.rglob("*") if p.is_file()):
        rel = path.relative_to(testbed).as_posix()
        kind = path.suffix.lower()
        if kind in seen:
            continue
        seen.add(kind)
        page = client.get(f"/task/{task}/file", params={"path": rel})
        assert page.status_code == 200, (rel, page.text[:300])
        if kind == ".xlsx":
            assert "<table class=\"sheet\">" in page.text
        if kind == ".pdf":
            assert "Page 1" in page.text
    assert {".docx", ".xlsx", ".pdf", ".eml", ".ics"} <= seen
    for bad in ("../task.json", "/etc/passwd", "data/../../task.json"):
        page = client.get(f"/task/{task}/file", params={"path": bad})
        assert page.status_code == 404 and 'id="error"' in page.text and '"id"' not in page.text
    (testbed / "out").symlink_to("/etc")  # a stranger's testbed with a link out of it
    page = client.get(f"/task/{task}/file", params={"path": "out/passwd"})
    assert page.status_code in (404, 422) and 'id="error"' in page.text and "root:" not in page.text
    (testbed / "out").unlink()
    user = next(p.name for p in (testbed / "emails").iterdir())
    threads = client.get(f"/task/{task}/file", params={"mailbox": user})
    assert threads.status_code == 200 and "thread" in threads.text
    assert client.get(f"/task/{task}/file", params={"mailbox": "../x"}).status_code == 404


def test_bad_input_gets_a_page_that_says_why(dataset: Path):
    ids = task_ids(dataset)
    (dataset / "tasks" / ids[1] / "task.json").write_text("{ not json")
    _, client = client_for(dataset)
    missing = client.get("/task/no-such-task")
    assert missing.status_code == 404 and "no task &#39;no-such-task&#39;" in missing.text
    corrupt = client.get(f"/task/{ids[1]}")
    assert corrupt.status_code == 422 and "cannot be read" in corrupt.text and "Traceback" not in corrupt.text
    assert client.get("/nowhere").status_code == 404
    result = CliRunner().invoke(app, ["review", str(dataset / "tasks")])
    assert result.exit_code == 2 and "not a dataset folder" in result.output


def test_model_text_is_escaped(dataset: Path):
    task = task_ids(dataset)[0]
    path = dataset / "tasks" / task / "task.json"
    record = json.loads(path.read_text())
    record["dialogue"][0]["turns"][0]["text"] = "<script>window.owned = 1</script><img src=x onerror=alert(1)>"
    path.write_text(json.dumps(record))
    _, client = client_for(dataset)
    page = client.get(f"/task/{task}").text
    assert "<script>window.owned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.owned = 1&lt;/script&gt;" in page


def test_verdicts_are_saved_and_need_the_pages_form_secret(dataset: Path):
    server, client = client_for(dataset)
    task = task_ids(dataset)[0]
    form = {"criterion": "clarity", "verdict": "yes", "comment": "reads well"}
    assert client.post(f"/task/{task}/verdict", data=form).status_code == 403  # another site's form
    late = client.post(f"/task/{task}/verdict", data={**form, "secret": server.form_secret})
    assert late.status_code == 403  # the secret must come first: it is checked before the rest is read
    saved = client.post(f"/task/{task}/verdict", data={"secret": server.form_secret, **form},
                        headers={"Accept": "application/json"})
    assert saved.status_code == 200 and saved.json()["ok"]
    bad = client.post(f"/task/{task}/verdict", data={"secret": server.form_secret, **form, "verdict": "maybe"},
                      headers={"Accept": "application/json"})
    assert bad.status_code == 422 and "verdict" in bad.json()["error"]
    with AnnotationStore(dataset) as store:
        rows = store.verdicts(task)
    assert [(v.annotator, v.criterion, v.verdict, v.comment) for v in rows] == [("ana", "clarity", "yes", "reads well")]
    assert "saved: yes" in client.get(f"/task/{task}").text


def test_an_edit_is_stored_when_the_gates_pass_and_refused_with_the_reason_when_not(dataset: Path):
    server, client = client_for(dataset)
    task = task_ids(dataset)[0]
    record = record_of(dataset, task)
    before = (dataset / "tasks" / task / "task.json").read_bytes()
    d, t = plain_turn(record)
    good = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": f"turn:{d}:{t}",
                                                   "text": "Thanks, that works for me."}, follow_redirects=False)
    assert good.status_code == 303
    d2, t2 = evidence_turn(record)
    refused = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": f"turn:{d2}:{t2}",
                                                      "text": "Nothing to note today."})
    assert refused.status_code == 422 and "edit refused" in refused.text and "memory_evidence" in refused.text
    unknown = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": "provenance",
                                                      "text": "x"})
    assert unknown.status_code == 422 and "not an editable field" in unknown.text
    with AnnotationStore(dataset) as store:
        revisions = store.revisions(task)
    assert [(r["field"], r["value"]["text"], r["annotator"]) for r in revisions] == \
        [(f"turn:{d}:{t}", "Thanks, that works for me.", "ana")]
    assert (dataset / "tasks" / task / "task.json").read_bytes() == before  # nothing written until apply
    assert "Thanks, that works for me." in client.get(f"/task/{task}").text


def test_memory_edits_keep_what_is_left_empty_and_a_new_value_must_be_in_the_chat(dataset: Path):
    server, client = client_for(dataset)
    task = task_ids(dataset)[0]
    piece = record_of(dataset, task)["memory"][0]
    form = {"secret": server.form_secret, "field": f"memory:{piece['id']}"}
    renamed = client.post(f"/task/{task}/edit", data={**form, "text": "what the user said about it"},
                          follow_redirects=False)
    assert renamed.status_code == 303
    moved = client.post(f"/task/{task}/edit", data={**form, "value": "a value nobody said"})
    assert moved.status_code == 422 and "memory_evidence" in moved.text
    with AnnotationStore(dataset) as store:
        (revision,) = store.revisions(task)
    assert revision["value"] == {"text": "what the user said about it", "value": piece["value"]}


def test_a_token_guards_every_request_and_the_host_must_be_this_server(dataset: Path):
    server = ReviewServer(dataset, "ana", token="s3cret", hosts=allowed_hosts("0.0.0.0", ["review.example"]))
    client = TestClient(create_app(server), base_url="http://review.example:8765")
    assert client.get("/").status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    first = client.get("/?token=s3cret")
    assert first.status_code == 200 and TOKEN_COOKIE in first.cookies
    assert client.get(f"/task/{task_ids(dataset)[0]}").status_code == 200  # the cookie carries it
    assert TestClient(create_app(server), base_url=LOCAL).get(
        "/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    _, local = client_for(dataset)
    assert local.get("/", headers={"Host": "attacker.example"}).status_code == 400  # DNS rebinding
    # bound to every interface, a valid token does not make another name this server
    evil = client.get("/", headers={"Host": "evil.example", "Authorization": "Bearer s3cret"})
    assert evil.status_code == 400 and "--allowed-host evil.example" in evil.text
    assert client.get("/", headers={"Host": "localhost:8765", "Authorization": "Bearer s3cret"}).status_code == 200


def test_apply_keeps_by_the_rule_applies_edits_and_verify_passes(dataset: Path, tmp_path: Path):
    ids = task_ids(dataset)
    record = record_of(dataset, ids[0])
    d, t = plain_turn(record)
    with AnnotationStore(dataset) as store:
        store.set("ana", ids[0], "overall", "keep")
        store.set("ben", ids[0], "overall", "keep")
        store.set("ana", ids[1], "overall", "keep")
        store.set("ben", ids[1], "overall", "drop")
        store.set("ana", ids[2], "overall", "drop")
        store.set("ben", ids[2], "overall", "drop")
        store.revise(ids[0], f"turn:{d}:{t}", {"text": "Thanks, that works for me.", "evidence": [],
                                               "superseded": [], "distractor": []}, "ana")
    runner = CliRunner()
    strict = runner.invoke(app, ["review", "apply", str(dataset), "--out", str(tmp_path / "any"), "--rule", "any-drop"])
    assert strict.exit_code == 0, strict.output
    assert sorted(p.name for p in (tmp_path / "any" / "tasks").iterdir()) == [ids[0]]
    loose = runner.invoke(app, ["review", "apply", str(dataset), "--out", str(tmp_path / "maj"), "--rule", "majority"])
    assert loose.exit_code == 0, loose.output
    assert sorted(p.name for p in (tmp_path / "maj" / "tasks").iterdir()) == [ids[0], ids[1]]  # a tie keeps
    edited = record_of(tmp_path / "maj", ids[0])
    assert edited["dialogue"][d]["turns"][t]["text"] == "Thanks, that works for me."
    assert edited["provenance"]["review"]["edits"][0]["annotator"] == "ana"
    card = (tmp_path / "maj" / "README.md").read_text()
    assert "majority" in card and "ana, ben" in card and "kappa" in card
    build_json = json.loads((tmp_path / "maj" / "build.json").read_text())
    assert build_json["review"]["rule"] == "majority" and build_json["review"]["kept"] == 2
    verified = runner.invoke(app, ["verify", str(tmp_path / "maj")])
    assert verified.exit_code == 0, verified.output
    again = runner.invoke(app, ["review", "apply", str(dataset), "--out", str(tmp_path / "maj")])
    assert again.exit_code == 2 and "not an empty folder" in again.output
    assert runner.invoke(app, ["review", "apply", str(dataset), "--out", str(tmp_path / "x"),
                               "--rule", "vibes"]).exit_code == 2


def test_the_serve_command_refuses_a_bad_annotator_and_port(dataset: Path):
    runner = CliRunner()
    assert runner.invoke(app, ["review", str(dataset), "--port", "99999"]).exit_code == 2
    bad = runner.invoke(app, ["review", str(dataset), "--annotator", "a\x01b"])
    assert bad.exit_code == 2 and "--annotator" in bad.output


def test_edits_keep_the_builds_dialogue_rules_and_pages_refuse_framing(dataset: Path):
    server, client = client_for(dataset)
    task = task_ids(dataset)[0]
    record = record_of(dataset, task)
    leaked = f"{record['intent']} ({record['memory'][0]['value']})"
    refused = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": "intent", "text": leaked})
    assert refused.status_code == 422 and "dialogue_rules: intent leaks memory" in refused.text
    d, t = plain_turn(record)
    earlier = record["dialogue"][0]["turns"][0]["text"]
    repeat = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": f"turn:{d}:{t}",
                                                     "text": earlier})
    assert repeat.status_code == 422 and "word for word" in repeat.text
    page = client.get(f"/task/{task}")
    assert page.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in page.headers["content-security-policy"]


def test_a_malformed_task_names_its_field(dataset: Path):
    task = task_ids(dataset)[0]
    path = dataset / "tasks" / task / "task.json"
    record = json.loads(path.read_text())
    record["dialogue"] = "not a list"
    path.write_text(json.dumps(record))
    _, client = client_for(dataset)
    page = client.get(f"/task/{task}")
    assert page.status_code == 422 and "task.json: dialogue: Input should be a valid list" in page.text


def test_apply_that_would_drop_everything_writes_nothing(dataset: Path, tmp_path: Path):
    result = CliRunner().invoke(app, ["review", "apply", str(dataset), "--out", str(tmp_path / "none"),
                                      "--unreviewed", "drop"])
    assert result.exit_code == 1 and "nothing written" in result.output and not (tmp_path / "none").exists()
