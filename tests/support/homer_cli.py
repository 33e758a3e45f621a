"""``homer`` run inside the test process: the console script's own entry point
(``orchestrator.cli.main``) with the given arguments, working folder and environment, its exit
code and output captured as a :class:`subprocess.CompletedProcess`.

A child process spends seconds importing the pipeline before it reads its first argument; a test
whose point is what a command prints, writes or exits with runs it here. Tests whose point is a
real process (a signal, a kill, a fresh interpreter's imports, a terminal's help layout) run the
console script ``HOMER`` as a child instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner

from orchestrator.cli import main

HOMER = Path(sys.executable).parent / "homer"


def homer_here(*args: object, cwd: Path | None = None, env: Mapping[str, str | None] | None = None,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``homer ARGS`` in this process as the console script would run it in a child.

    ``env`` is applied on top of this process's environment for the run (``NO_COLOR``, ``TERM`` and
    ``COLUMNS`` as the subprocess helpers set them; a None value unsets that variable). An exception that escapes ``main`` is what a
    child would print as a traceback: it is put in stderr (exit code 1) so the callers' "no
    traceback" checks see it."""
    argv = [str(a) for a in args]
    settings = {"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", **(env or {})}
    runner = CliRunner()
    here = os.getcwd()
    saved_argv = sys.argv
    with runner.isolation(input=stdin, env=settings) as (out, err, _):
        code = 0
        try:
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = ["homer", *argv]
            main()
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, (int, type(None))):
                sys.stderr.write(f"{stop.code}\n")
        except Exception:  # noqa: BLE001 - shown as the child process would show it
            sys.stderr.write(traceback.format_exc())
            code = 1
        finally:
            sys.argv = saved_argv
            os.chdir(here)
            sys.stdout.flush()
            sys.stderr.flush()
            stdout = out.getvalue().decode("utf-8", "replace")
            stderr = err.getvalue().decode("utf-8", "replace")
    return subprocess.CompletedProcess(["homer", *argv], code, stdout, stderr)
