"""The review server against an attacker and an unlucky user: POST bodies refused before they are
read (real uvicorn, raw sockets), a locked review.sqlite, a shipped review.sqlite with hostile rows,
escape codes on the terminal, the Host check, a busy port and ``review report --out``."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import threading
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from orchestrator.build import build
from orchestrator.cli import app
from orchestrator.review.annotations import AnnotationError, AnnotationStore, check_verdict
from orchestrator.review.app import ReviewServer, create_app
from orchestrator.review.http import allowed_hosts
from orchestrator.roles import BuildConfig

from tests.support.review_server import serving
from tests.support.records import evidence_turn, plain_turn

pytestmark = pytest.mark.slow

LOCAL = "http://127.0.0.1"
JSON = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("review-hard") / "data"
    build(out, 2, BuildConfig(seed=21))
    return out


@pytest.fixture()
def dataset(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(built, copy)
    return copy


def ids_of(dataset: Path) -> list[str]:
    return sorted(p.name for p in (dataset / "tasks").iterdir())


@pytest.fixture()
def served(dataset: Path):
    """The app on a real uvicorn server on a loopback port: (server, port)."""
    server = ReviewServer(dataset, "ana")
    with serving(server) as port:
        yield server, port


def raw_post(port: int, path: str, headers: str, first: bytes) -> bytes:
    """Send a POST's head and only ``first`` of its body; the answer the server gives without the rest."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}\r\n".encode() + first)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def test_a_huge_or_unsigned_post_is_refused_before_its_body_is_read(served):
    server, port = served
    path = f"/task/{ids_of(server.dataset)[0]}/verdict"
    form = "application/x-www-form-urlencoded"
    # 400 MB declared, 20 bytes sent: the answer comes without the rest
    huge = raw_post(port, path, f"Content-Type: {form}\r\nContent-Length: 400000000\r\n", b"criterion=clarity&ver")
    assert huge.startswith(b"HTTP/1.1 413 ")
    # no length (chunked), a first chunk without the secret: refused on it
    chunked = raw_post(port, path, f"Content-Type: {form}\r\nTransfer-Encoding: chunked\r\n",
                       b"1f\r\ncriterion=clarity&verdict=yes&x\r\n")
    assert chunked.startswith(b"HTTP/1.1 403 ")
    # the secret, then more than the limit in chunks: refused once past it
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {form}\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        start = f"secret={server.form_secret}&comment=".encode()
        sock.sendall(f"{len(start):x}\r\n".encode() + start + b"\r\n")
        chunk = b"a" * 65536
        answer = b""
        for _ in range(8):  # 512 KiB at most; the server answers after 256
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except OSError:
                break
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_a_post_from_another_site_is_refused(dataset: Path):
    server = ReviewServer(dataset, "ana")
    client = TestClient(create_app(server), base_url=LOCAL)
    path = f"/task/{ids_of(dataset)[0]}/verdict"
    form = {"secret": server.form_secret, "criterion": "clarity", "verdict": "yes"}
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
        refused = client.post(path, data=form, headers={**JSON, **headers})
        assert refused.status_code == 403 and "another site" in refused.text
    same = client.post(path, data=form, headers={**JSON, "Origin": LOCAL, "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200
    multipart = client.post(path, files={"secret": (None, server.form_secret)}, headers=JSON)
    assert multipart.status_code == 415


def test_a_locked_database_is_a_503_that_keeps_the_verdict_for_a_retry(dataset: Path):
    server = ReviewServer(dataset, "ana", busy_ms=50)
    client = TestClient(create_app(server), base_url=LOCAL)
    task = ids_of(dataset)[0]
    server.store()  # the file exists, in WAL mode
    other = sqlite3.connect(dataset / "review.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    try:
        form = {"secret": server.form_secret, "criterion": "overall", "verdict": "drop",
                "comment": "the dates contradict"}
        busy = client.post(f"/task/{task}/verdict", data=form, headers=JSON)
        assert busy.status_code == 503 and busy.json()["busy"] and busy.headers["retry-after"] == "1"
        page = client.post(f"/task/{task}/verdict", data=form)
        assert page.status_code == 503 and "Traceback" not in page.text
        assert 'value="the dates contradict"' in page.text and 'value="drop"' in page.text  # kept for the retry
        assert client.get("/").status_code == 200  # reading pages go on meanwhile
        record = json.loads((dataset / "tasks" / task / "task.json").read_text())
        d, t = plain_turn(record)
        edit = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": f"turn:{d}:{t}",
                                                       "text": "Thanks, that works for me."})
        assert edit.status_code == 503 and "not saved yet" in edit.text
        assert "Thanks, that works for me." in edit.text[edit.text.index('id="edit-turn"'):]  # kept to send again
    finally:
        other.execute("ROLLBACK")
        other.close()
    saved = client.post(f"/task/{task}/verdict", data=form, headers=JSON)
    assert saved.status_code == 200
    with AnnotationStore(dataset) as store:
        assert [(v.verdict, v.comment) for v in store.verdicts(task)] == [("drop", "the dates contradict")]


def hostile_rows(dataset: Path) -> None:
    """A review.sqlite as a stranger could ship it: sound rows among rows that are not."""
    task = ids_of(dataset)[0]
    with AnnotationStore(dataset) as store:
        store.set("ana", task, "overall", "keep")
        store.set("ben", task, "overall", "drop")
    db = sqlite3.connect(dataset / "review.sqlite", isolation_level=None)
    rows = [("\x1b[31mred\x1b[0m", task, "overall", "keep", "", 1.0),      # escape codes in a name
            ("cy\u202egnp", task, "overall", "keep", "", 1.0),              # a direction override
            ("dee", task, "overall", "maybe", "", 1.0),                     # not a verdict
            ("eve", task, "nonsense", "yes", "", 1.0),                      # not a criterion
            ("fay", task, "overall", "keep", "x" * 100_000, 1.0),           # a comment over the limit
            ("gus", task, "overall", "keep", "", "yesterday"),              # a time that is text
            (b"\xff\xfe", task, "overall", "keep", "", 1.0),                # a blob
            ("hal", task, "overall", "keep", b"\x00", 1.0)]                # a blob for text
    for row in rows:
        db.execute("INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?)", row)
    deep = "[" * 100_000 + "]" * 100_000
    for value in (deep, "{not json", json.dumps("x" * 300_000), json.dumps({"text": "ok"})):
        db.execute("INSERT INTO revisions (task, field, value, annotator, at) VALUES (?, ?, ?, ?, ?)",
                   (task, "intent", value, "ana", 1.0))
    db.execute("INSERT INTO revisions (task, field, value, annotator, at) VALUES (?, ?, ?, ?, ?)",
               (task, "intent\x1b[2J", json.dumps("x"), "ana", 1.0))
    db.close()


def test_hostile_rows_are_skipped_with_a_warning_everywhere(dataset: Path, tmp_path: Path):
    hostile_rows(dataset)
    with AnnotationStore(dataset) as store:
        kept = store.verdicts()
        revisions = store.revisions()
        skipped = list(store.skipped)
    assert sorted(v.annotator for v in kept) == ["ana", "ben"]
    assert [r["value"] for r in revisions] == [{"text": "ok"}]  # applies or not, it is sound to read
    assert len(skipped) == 8 + 4 and all("skipped" in line and line.isprintable() for line in skipped)

    runner = CliRunner()
    report = runner.invoke(app, ["review", "report", str(dataset)])
    assert report.exit_code == 0, report.output
    assert "\x1b" not in report.output and "\u202e" not in report.output and "Traceback" not in report.output
    assert "warning:" in report.output and "ana, ben" in report.output
    applied = runner.invoke(app, ["review", "apply", str(dataset), "--out", str(tmp_path / "applied")])
    assert applied.exit_code == 0, applied.output
    assert "\x1b" not in applied.output and "RecursionError" not in applied.output

    server = ReviewServer(dataset, "ana")
    client = TestClient(create_app(server), base_url=LOCAL)
    listing = client.get("/")
    assert listing.status_code == 200 and 'id="warnings"' in listing.text
    assert client.get(f"/task/{ids_of(dataset)[0]}").status_code in (200, 422)
    assert client.get("/report").status_code == 200


def test_a_review_sqlite_that_is_not_one_is_one_line(dataset: Path):
    db = sqlite3.connect(dataset / "review.sqlite")
    db.execute("CREATE TABLE verdicts (who TEXT)")  # the name, not the shape
    db.close()
    result = CliRunner().invoke(app, ["review", "report", str(dataset)])
    assert result.exit_code == 2 and "not a readable annotations database" in result.output
    assert "Traceback" not in result.output


def test_names_with_control_or_direction_characters_are_refused():
    for name in ("a\x1bb", "a\x9bb", "a\u202eb", "a\x7fb"):
        with pytest.raises(AnnotationError):
            check_verdict(name, "task", "overall", "keep")
    result = CliRunner().invoke(app, ["review", "/nonexistent", "--annotator", "x\x1b[31m"])
    assert result.exit_code == 2 and "\x1b" not in result.output


def test_the_host_check_names_the_bound_host_or_the_allowed_ones(dataset: Path):
    everywhere = allowed_hosts("0.0.0.0")
    assert "localhost" in everywhere and "evil.example" not in everywhere
    assert allowed_hosts("10.1.2.3") == ("10.1.2.3",)
    assert allowed_hosts("10.1.2.3", ["Review.Example"]) == ("10.1.2.3", "review.example")
    server = ReviewServer(dataset, "ana", token="t0k", hosts=allowed_hosts("10.1.2.3", ["review.example"]))
    client = TestClient(create_app(server), base_url="http://10.1.2.3:8765")
    bearer = {"Authorization": "Bearer t0k"}
    assert client.get("/", headers=bearer).status_code == 200
    assert client.get("/", headers={**bearer, "Host": "review.example:8765"}).status_code == 200
    assert client.get("/", headers={**bearer, "Host": "evil.example"}).status_code == 400
    assert client.get("/", headers={**bearer, "Host": "localhost"}).status_code == 400  # bound elsewhere


def test_a_refused_edit_keeps_the_typed_text_beside_its_form(dataset: Path):
    server = ReviewServer(dataset, "ana")
    client = TestClient(create_app(server), base_url=LOCAL)
    task = ids_of(dataset)[0]
    record = json.loads((dataset / "tasks" / task / "task.json").read_text())
    d, t = evidence_turn(record)
    typed = "Nothing to note today, said with care & <care>."
    refused = client.post(f"/task/{task}/edit", data={"secret": server.form_secret, "field": f"turn:{d}:{t}",
                                                      "text": typed, "evidence": ""})
    assert refused.status_code == 422
    page = refused.text
    form = page[page.index('id="edit-turn"'):]
    form = form[:form.index("</form>")]
    assert "Nothing to note today, said with care &amp; &lt;care&gt;." in form  # the text is still there
    assert f'value="turn:{d}:{t}"' in form
    assert 'id="refused"' in form and "memory_evidence" in form  # the reasons beside the field


def test_the_cli_takes_the_page_options_at_the_top_and_a_busy_port_is_one_line(dataset: Path):
    runner = CliRunner()
    helped = runner.invoke(app, ["review", "--help"])
    assert helped.exit_code == 0 and "--port" in helped.output and "--annotator" in helped.output
    assert "--allowed-host" in helped.output
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = runner.invoke(app, ["review", str(dataset), "--port", str(port), "--annotator", "ana"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot listen" in lines[0] and "review page for" not in result.output


def test_review_report_out_writes_elsewhere_and_refuses_a_link(dataset: Path, tmp_path: Path):
    with AnnotationStore(dataset) as store:
        store.set("ana", ids_of(dataset)[0], "overall", "keep")
    runner = CliRunner()
    out = tmp_path / "reports"
    result = runner.invoke(app, ["review", "report", str(dataset), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "review-report.md").is_file() and (out / "review-report.json").is_file()
    assert not (dataset / "review-report.md").exists()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    linked = runner.invoke(app, ["review", "report", str(dataset), "--out", str(tmp_path / "link")])
    assert linked.exit_code == 2 and "symbolic link" in linked.output
    assert not any((tmp_path / "elsewhere").iterdir())
    default = runner.invoke(app, ["review", "report", str(dataset)])
    assert default.exit_code == 0 and (dataset / "review-report.md").is_file()  # as before


def test_a_second_connection_in_the_process_keeps_the_first_ones_locks(tmp_path):
    """Opening the store again in this process (the review server does, a connection per thread)
    must not drop the locks SQLite holds on the file: closing any descriptor of a file drops all of
    the process's POSIX locks on it. Then another process that opens and closes the database (a
    backup, `homer review report`) would take itself for the last one, checkpoint and remove the
    write-ahead log the first connection still writes to, and the verdicts acknowledged after that
    would never reach the file."""
    import subprocess
    import sys

    (tmp_path / "tasks").mkdir()
    store = AnnotationStore(tmp_path)
    store.set("ann", "t-0", "overall", "keep")
    other = threading.Thread(target=lambda: AnnotationStore(tmp_path).close())  # a second thread's connection
    other.start()
    other.join()
    reader = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM verdicts').fetchall(); c.close()"
    subprocess.run([sys.executable, "-c", reader, str(tmp_path / "review.sqlite")], check=True, timeout=60)
    for i in range(1, 6):
        store.set("ann", f"t-{i}", "overall", "keep")  # acknowledged
    counted = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM verdicts').fetchone()[0])"
    seen = subprocess.run([sys.executable, "-c", counted, str(tmp_path / "review.sqlite")], check=True, timeout=60,
                          capture_output=True, text=True).stdout.strip()
    store.close()
    assert seen == "6"  # what another process reads: every verdict the store took


def test_a_huge_history_is_paged_and_every_page_is_bounded(dataset: Path):
    from orchestrator.review.history_pages import OTHER_TEXT_CHARS, PAGE_TEXT_CHARS

    task = ids_of(dataset)[0]
    path = dataset / "tasks" / task / "task.json"
    record = json.loads(path.read_text())
    day = record["dialogue"][0]
    filler = {"role": "user", "text": "x" * 40_000, "ts": day["turns"][0]["ts"]}
    day["turns"] = [filler] * 120 + day["turns"]  # 4.8 M characters before every turn it had
    path.write_text(json.dumps(record))
    d, t = evidence_turn(record)
    assert d > 0 or t >= 120
    client = TestClient(create_app(ReviewServer(dataset, "ana")), base_url=LOCAL)
    first = client.get(f"/task/{task}")
    assert first.status_code == 200
    assert len(first.text) < PAGE_TEXT_CHARS + 2 * OTHER_TEXT_CHARS  # not the whole 4.8 M
    assert f'id="d{d}-t{t}"' not in first.text  # the evidence turn is on a later page, and the link says which
    link = first.text.index(f'#d{d}-t{t}"')
    page = first.text[first.text.rindex('href="', 0, link) + 6:link].removeprefix("?page=")
    later = client.get(f"/task/{task}?page={page}")
    assert later.status_code == 200 and f'id="d{d}-t{t}"' in later.text
    assert len(later.text) < len(first.text) * 2
    assert client.get(f"/task/{task}?page=99").status_code == 404
    assert client.get(f"/task/{task}?page=x").status_code == 404
    record["description"] = "y" * 40_000
    record["memory"] = [dict(record["memory"][0], id=f"m{i}", value="z" * 40_000) for i in range(30)]
    path.write_text(json.dumps(record))
    refused = client.get(f"/task/{task}")
    assert refused.status_code == 422 and "too large to review" in refused.text and len(refused.text) < 20_000


def test_two_hundred_posts_at_once_on_one_key_keep_the_last_acknowledged(served):
    import urllib.parse
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    server, port = served
    task = ids_of(server.dataset)[0]

    def post(i: int) -> dict:
        body = urllib.parse.urlencode({"secret": server.form_secret, "criterion": "overall",
                                       "verdict": "keep" if i % 2 else "drop", "comment": f"post {i}"}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/task/{task}/verdict", data=body,
                                         headers={**JSON, "Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            return dict(json.load(reply), i=i, status=reply.status)

    with ThreadPoolExecutor(40) as pool:
        acks = list(pool.map(post, range(200)))
    assert all(a["status"] == 200 and a["ok"] for a in acks)
    assert sorted(a["write"] for a in acks) == list(range(1, 201))  # each write numbered once
    last = max(acks, key=lambda a: a["write"])
    with AnnotationStore(server.dataset) as store:
        stored = [v for v in store.verdicts(task) if v.criterion == "overall"]
    assert [(v.comment, v.verdict) for v in stored] == [(f"post {last['i']}", "keep" if last["i"] % 2 else "drop")]
