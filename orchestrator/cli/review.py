"""``homer review serve|apply|report``: human review of a dataset."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer
import typer.core

from orchestrator.cli.common import _check_dataset, _fail, review_app


@review_app.command("report")
def review_report_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder"),
    annotations: Optional[Path] = typer.Option(None, "--annotations", help="Import annotations made elsewhere first: "
                                               "a CSV with columns annotator, task, criterion, verdict[, comment]"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
) -> None:
    """Fleiss' kappa per guideline criterion and overall (Cohen's kappa too with two annotators),
    keep / drop counts and the tasks with disagreement; written to review-report.md and .json in
    the dataset folder."""
    from orchestrator.dataset import write_json, write_text
    from verifier.annotations import AnnotationError, AnnotationStore
    from verifier.review_report import render_report, review_report

    _check_dataset(dataset_dir)
    try:
        with AnnotationStore(dataset_dir) as store:
            if annotations is not None:
                if not annotations.is_file():
                    _fail(f"--annotations {annotations}: no such file")
                typer.echo(f"imported {store.import_csv(annotations)} verdict(s) from {annotations}", err=True)
            report = review_report(store.verdicts())
    except AnnotationError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{dataset_dir}: cannot open its annotations ({exc.strerror or exc})")
    text = render_report(report, str(dataset_dir))
    write_json(dataset_dir / "review-report.json", report)
    write_text(dataset_dir / "review-report.md", text)
    typer.echo(json.dumps(report, indent=1) if as_json else text)


@review_app.command("serve")
def review_serve_command(
    dataset_dir: Path = typer.Argument(..., help="A dataset folder"),
    annotator: Optional[str] = typer.Option(None, "--annotator", help="Your name on every verdict and edit "
                                            "(default: the USER environment variable)"),
    port: int = typer.Option(8765, "--port", help="The port to listen on"),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to bind; any other than 127.0.0.1 / localhost "
                             "needs --token"),
    token: Optional[str] = typer.Option(None, "--token", envvar="HOMER_REVIEW_TOKEN", help="A secret every request "
                                        "must carry (also from HOMER_REVIEW_TOKEN); one is made up for a non-local host"),
) -> None:
    """Serve the review page: the task list, each task with its history, office and oracle plan,
    verdicts per guideline criterion saved at once, and post-edits checked by the task's gates."""
    import secrets

    from verifier.annotations import AnnotationError, StoreFileError

    _check_dataset(dataset_dir)
    if not 1 <= port <= 65535:
        _fail(f"--port: {port} is not a port (1-65535)")
    name = annotator or os.environ.get("USER") or "annotator"
    local = host in ("127.0.0.1", "localhost", "::1")
    if not local and not token:
        token = secrets.token_urlsafe(18)
    try:
        import uvicorn

        from orchestrator.review_app import ReviewServer, create_app

        server = ReviewServer(dataset_dir, name, token, hosts=("127.0.0.1", "localhost", "[::1]") if local else ("*",))
        server.store()
    except StoreFileError as exc:
        _fail(str(exc))
    except AnnotationError as exc:
        _fail(f"--annotator: {exc}")
    except OSError as exc:
        _fail(f"{dataset_dir}: cannot open its annotations ({exc.strerror or exc})")
    address = f"http://{'localhost' if local else host}:{port}/" + (f"?token={token}" if token else "")
    typer.echo(f"review page for {dataset_dir} as {name}: {address}  (Ctrl-C stops)", err=True)
    try:
        uvicorn.run(create_app(server), host=host, port=port, log_level="warning")
    except OSError as exc:
        _fail(f"--port {port}: cannot listen ({exc.strerror or exc})")


@review_app.command("apply")
def review_apply_command(
    dataset_dir: Path = typer.Argument(..., help="A reviewed dataset folder"),
    out: Path = typer.Option(..., "--out", help="The new dataset's folder (absent or empty)"),
    rule: str = typer.Option("majority", "--rule", help="any-drop: a task one annotator dropped goes; majority: a "
                             "task goes when more annotators dropped than kept it"),
    unreviewed: str = typer.Option("keep", "--unreviewed", help="keep or drop the tasks nobody gave an overall verdict"),
) -> None:
    """Write a new dataset with the post-edits applied and the dropped tasks removed; every kept
    task's gates run again, and the card records the annotators, kappa and the rule."""
    from orchestrator.review_apply import ApplyError, NothingKept, apply_review
    from verifier.annotations import AnnotationError

    _check_dataset(dataset_dir)
    try:
        summary = apply_review(dataset_dir, out, rule, unreviewed)
    except NothingKept as exc:
        _fail(str(exc), 1)
    except (ApplyError, AnnotationError) as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"--out {out}: cannot be written ({exc.strerror or exc})")
    typer.echo(f"kept {summary['kept']} task(s), dropped {len(summary['dropped'])}, applied {summary['edits']} "
               f"edit(s); wrote {out}")
    for item in summary["dropped"]:
        typer.echo(f"  dropped {item['id']}: {item['reason']}")
