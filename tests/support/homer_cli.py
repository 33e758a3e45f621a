"""``homer`` run inside the test process: the console script's own entry point
(``orchestrator.cli.main``) with the given arguments, working folder and environment, its exit
code and output captured as a :class:`subprocess.CompletedProcess`.

A child process spends seconds importing the pipeline before it reads its first argument; a test
whose point is what a command prints, writes or exits with runs it here. A test that needs a real
process (one signalled or killed part way, or commands running at once) runs it with
:func:`homer_forked`: a child forked from this process, so it starts with the pipeline this process
has imported, and the same entry point. Tests whose point is a fresh interpreter (its imports, its
import path, a terminal's help layout) run the console script ``HOMER`` as a child.
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import IO, NoReturn

from typer.testing import CliRunner

from orchestrator.cli import main, run_forked

HOMER = Path(sys.executable).parent / "homer"


def homer_here(*args: object, cwd: Path | None = None, env: Mapping[str, str | None] | None = None,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``homer ARGS`` in this process as the console script would run it in a child.

    ``env`` is applied on top of this process's environment for the run (``NO_COLOR``, ``TERM`` and
    ``COLUMNS`` as the subprocess helpers set them; a None value unsets that variable). An exception
    that escapes ``main`` is what a child would print as a traceback: it is put in stderr (exit
    code 1) so the callers' "no traceback" checks see it."""
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


def _fresh_warnings_and_logging() -> None:
    """A fresh interpreter's warning filters and display, and a root logger with no handler (the
    test runner records both while a test runs)."""
    warnings.resetwarnings()
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")

    def shown(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 - warnings' signature
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    warnings.showwarning = shown
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


class ForkedHomer:
    """``homer ARGS`` running in a child forked from this process, with what the tests use of a
    :class:`subprocess.Popen`: ``pid``, ``returncode``, ``poll``, ``wait``, ``send_signal``, ``kill``
    and ``communicate`` (its stdout and stderr, kept in files until it ends; with ``pipe_stdout``,
    ``stdout`` is a pipe to read its lines as they come, as ``Popen(stdout=PIPE, text=True)`` gives
    it). The child has what a
    fresh ``homer`` starts with where the test runner changed it: the default Ctrl-C and SIGTERM
    handling, warnings and log records to stderr (not into the runner's capture), stdin from
    /dev/null and stdout and stderr of its own; it stays in this process group, as a console script
    started by Popen does."""

    def __init__(self, args: tuple[object, ...], env: Mapping[str, str | None] | None, pipe_stdout: bool = False):
        argv = [str(a) for a in args]
        self.args = ["homer", *argv]
        self.returncode: int | None = None
        self.stdout: IO[str] | None = None
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 - closed by communicate
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        read_end, write_end = os.pipe() if pipe_stdout else (-1, self._out.fileno())
        settings = {"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", **(env or {})}
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            if pipe_stdout:
                os.close(read_end)
            self._child(argv, settings, write_end)
        if pipe_stdout:
            os.close(write_end)
            self.stdout = open(read_end, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by communicate

    def _child(self, argv: list[str], settings: Mapping[str, str | None], stdout_fd: int) -> NoReturn:
        """In the child: its files, environment and signal handling, then the entry point; never returns."""
        try:
            gc.freeze()  # this process's objects are not the command's: its collections leave them be
            atexit._clear()  # nor are this process's exit handlers
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _fresh_warnings_and_logging()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.dup2(stdout_fd, 1)
            os.dup2(self._err.fileno(), 2)
            sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's whole life
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            for key, value in settings.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        except BaseException:  # noqa: BLE001 - the command could not start: its stderr says why
            traceback.print_exc()
            os._exit(1)
        run_forked(argv)

    def poll(self) -> int | None:
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            time.sleep(0.01)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Its stdout and stderr once it has ended (killed first if it outlasts ``timeout``, as
        ``subprocess.run`` does)."""
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait()
            raise
        texts = []
        for handle in (self._out, self._err):
            handle.seek(0)
            texts.append(handle.read().decode("utf-8", "replace"))
            handle.close()
        if self.stdout is not None:  # what the pipe still held
            texts[0] = self.stdout.read()
            self.stdout.close()
        return texts[0], texts[1]


def homer_forked(*args: object, env: Mapping[str, str | None] | None = None,
                 pipe_stdout: bool = False) -> ForkedHomer:
    """Start ``homer ARGS`` in a child process forked from this one (see :class:`ForkedHomer`): a
    real process to interrupt or kill, without the seconds a fresh interpreter spends importing
    the pipeline. ``env`` as for :func:`homer_here`."""
    return ForkedHomer(args, env, pipe_stdout)
