"""``homer review serve|apply|report``: human review of a dataset."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from pathlib import Path
from typing import Any, Optional

import typer
import typer.core

from office_env.untrusted import printable
from orchestrator.cli.common import check_dataset, fail, number_option


def _warn(skipped: list[str]) -> None:
    """The rows of review.sqlite left out as unsound, one line each (at most 10)."""
    for line in skipped[:10]:
        typer.echo(f"warning: {printable(line)}", err=True)
    if len(skipped) > 10:
        typer.echo(f"warning: and {len(skipped) - 10} more row(s) of review.sqlite skipped", err=True)


def _report_folder(dataset_dir: Path, out: Optional[Path]) -> Path:
    """Where review-report.md and .json go: --out (a folder, made if absent, never a link) or the dataset."""
    if out is None:
        return dataset_dir
    if out.is_symlink():
        fail(f"--out {printable(out)}: is a symbolic link; give a real folder")
    if out.exists() and not out.is_dir():
        fail(f"--out {printable(out)}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"--out {printable(out)}: cannot be made ({exc.strerror or exc})")
    return out


def review_report_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET", help="A dataset folder"),
    annotations: Optional[Path] = typer.Option(None, "--annotations", help="Import annotations made elsewhere first: "
                                               "a CSV with columns annotator, task, criterion, verdict[, comment]"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
    out: Optional[Path] = typer.Option(None, "--out", help="The folder for review-report.md and .json (default: the "
                                       "dataset folder; made if absent; a symbolic link is refused)"),
) -> None:
    """Fleiss' kappa per guideline criterion and overall (Cohen's kappa too with two annotators),
    keep / drop counts and the tasks with disagreement; written to review-report.md and .json in
    --out (the dataset folder by default)."""
    from backends.batch import space_named
    from backends.job_contract import no_space
    from orchestrator.dataset_writer import dumps, write_json, write_text
    from orchestrator.review.annotations import AnnotationError, AnnotationStore
    from orchestrator.review.report import render_report, review_report

    check_dataset(dataset_dir)
    folder = _report_folder(dataset_dir, out)
    try:
        with AnnotationStore(dataset_dir) as store:
            if annotations is not None:
                if not annotations.is_file():
                    fail(f"--annotations {printable(annotations)}: no such file")
                typer.echo(f"imported {store.import_csv(annotations)} verdict(s) from {printable(annotations)}",
                           err=True)
            report = review_report(store.verdicts())
            skipped = list(store.skipped)
    except AnnotationError as exc:
        fail(printable(exc))
    except sqlite3.DatabaseError as exc:
        fail(f"{printable(dataset_dir)}/review.sqlite: not a readable annotations database ({printable(exc)[:200]})")
    except OSError as exc:
        fail(f"{printable(dataset_dir)}: cannot open its annotations ({exc.strerror or exc})")
    _warn(skipped)
    text = render_report(report, str(dataset_dir))
    needed = len(dumps(report).encode("utf-8")) + len(text.encode("utf-8"))  # the bytes written
    try:
        with space_named(folder, again="run the report again", needed=needed):  # one line, exit 1
            write_json(folder / "review-report.json", report)
            write_text(folder / "review-report.md", text)
    except OSError as exc:
        if no_space(exc):
            raise
        fail(f"{printable(folder)}: cannot write the report ({exc.strerror or exc})")
    # names and task ids come from a file anybody may have written: never raw escape codes on a terminal
    shown = json.dumps(report, indent=1) if as_json else text
    typer.echo("\n".join(printable(line) for line in shown.split("\n")))


PortOption = number_option(8765, "--port", help="The port to listen on", low=1, high=65535)
HostOption = typer.Option("127.0.0.1", "--host", help="The address to bind; any other than 127.0.0.1 / localhost "
                          "needs --token")
TokenOption = typer.Option(None, "--token", envvar="HOMER_REVIEW_TOKEN", help="A secret every request must carry "
                           "(also from HOMER_REVIEW_TOKEN); one is made up for a non-local host")
AllowedHostOption = typer.Option([], "--allowed-host", help="A name the Host header may carry besides the bound "
                                 "address (repeatable); bound to 0.0.0.0 the server answers only localhost, this "
                                 "machine's name and these")


def review_serve_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET", help="A dataset folder"),
    annotator: Optional[str] = typer.Option(None, "--annotator", help="Your name on every verdict and edit "
                                            "(default: the USER environment variable)"),
    port: int = PortOption,
    host: str = HostOption,
    token: Optional[str] = TokenOption,
    allowed_host: list[str] = AllowedHostOption,
    run: list[Path] = typer.Option([], "--run", help="An eval run on this dataset to show beside its tasks "
                                   "(repeatable): its tasks' outcomes, failed criteria and tool calls"),
) -> None:
    """Serve the review page: the task list, each task with its history, office and oracle plan,
    verdicts per guideline criterion saved at once, and post-edits checked by the task's gates."""
    from orchestrator.review.run_pages import RunPages

    check_dataset(dataset_dir)
    serve(dataset_dir, annotator, port, host, token, allowed_host, loaded_runs(RunPages(run)))


def loaded_runs(pages: Any) -> Any:
    """``pages`` (``orchestrator.review.run_pages.RunPages``) with every run read, or one line
    naming the run that is no finished eval run."""
    from harness.scores import RunError

    try:
        pages.load_all()
    except RunError as exc:
        fail(f"--run: {printable(exc)}")
    return pages


def serve(dataset_dir: Path, annotator: Optional[str], port: int, host: str, token: Optional[str],
          allowed_host: list[str], runs: Any, start: str = "/") -> None:
    """Serve the review page for ``dataset_dir`` with ``runs`` (a ``RunPages``, read) beside it
    until Ctrl-C; every refusal (a bad option, a busy port, an unreadable store) is one line."""
    import secrets

    from orchestrator.review.annotations import AnnotationError, StoreFileError

    if not 1 <= port <= 65535:
        fail(f"--port: {port} is not a port (1-65535)")
    name = annotator or os.environ.get("USER") or "annotator"
    local = host in ("127.0.0.1", "localhost", "::1")
    if not local and not token:
        token = secrets.token_urlsafe(18)
    bad = next((h for h in allowed_host if not h.strip() or not h.isprintable() or "/" in h or len(h) > 253), None)
    if bad is not None:
        fail(f"--allowed-host {printable(bad)!r}: not a host name")
    try:
        import uvicorn

        from orchestrator.review.app import ReviewServer, create_app
        from orchestrator.review.http import allowed_hosts, listening_socket

        server = ReviewServer(dataset_dir, name, token, hosts=allowed_hosts(host, allowed_host), runs=runs)
        server.store()
    except StoreFileError as exc:
        fail(str(exc))
    except AnnotationError as exc:
        fail(f"--annotator: {printable(exc)}")
    except sqlite3.DatabaseError as exc:
        fail(f"{printable(dataset_dir)}/review.sqlite: not a readable annotations database ({printable(exc)[:200]})")
    except OSError as exc:
        fail(f"{printable(dataset_dir)}: cannot open its annotations ({exc.strerror or exc})")
    try:
        sock = listening_socket(host, port)  # bound before the address is printed: a busy port is one line
    except OSError as exc:
        fail(f"--host {printable(host)} --port {port}: cannot listen ({exc.strerror or exc})")
    shown = "localhost" if local else (socket.gethostname() if host in ("0.0.0.0", "::", "") else host)
    address = f"http://{shown}:{port}{start}" + (f"?token={token}" if token else "")
    typer.echo(f"review page for {printable(dataset_dir)} as {printable(name)}: {address}  (Ctrl-C stops)", err=True)
    web = uvicorn.Server(uvicorn.Config(create_app(server), log_level="warning"))
    try:
        web.run(sockets=[sock])
    except SystemExit:  # uvicorn's own start-up failure: it has said why
        fail(f"--port {port}: the server could not start")
    finally:
        sock.close()


def review_apply_command(
    dataset_dir: Path = typer.Argument(..., metavar="DATASET", help="A reviewed dataset folder"),
    out: Path = typer.Option(..., "--out", help="The new dataset's folder (absent or empty)"),
    rule: str = typer.Option("majority", "--rule", help="any-drop: a task one annotator dropped goes; majority: a "
                             "task goes when more annotators dropped than kept it"),
    unreviewed: str = typer.Option("keep", "--unreviewed",
                                   help="keep or drop the tasks nobody gave an overall verdict"),
) -> None:
    """Write a new dataset with the post-edits applied and the dropped tasks removed; every kept
    task's gates run again, and the card records the annotators, kappa and the rule."""
    from orchestrator.review.annotations import AnnotationError
    from orchestrator.review.apply import ApplyError, NothingKept, apply_review

    check_dataset(dataset_dir)
    try:
        summary = apply_review(dataset_dir, out, rule, unreviewed)
    except NothingKept as exc:
        fail(printable(exc), 1)
    except (ApplyError, AnnotationError) as exc:
        fail(printable(exc))
    except sqlite3.DatabaseError as exc:
        fail(f"{printable(dataset_dir)}/review.sqlite: not a readable annotations database ({printable(exc)[:200]})")
    except OSError as exc:
        fail(f"--out {printable(out)}: cannot be written ({exc.strerror or exc})")
    _warn(summary["warnings"])
    typer.echo(f"kept {summary['kept']} task(s), dropped {len(summary['dropped'])}, applied {summary['edits']} "
               f"edit(s); wrote {printable(out)}")
    for item in summary["dropped"]:
        typer.echo(f"  dropped {printable(item['id'])}: {printable(item['reason'])}")
