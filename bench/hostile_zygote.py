"""Runs ``homer`` commands in processes forked from one that has already imported the pipeline.

``bench/hostile.py`` starts the console script once per case, and every start spends about a
second importing the libraries its command loads (the formats, the build, the harness). Forked
from this process, a case starts with them loaded: the same entry point (``orchestrator.cli.main``),
a process of its own in its own session, the same address-space limit, its output in files, killed
whole at the timeout; its peak RSS counts the pages it shares with this process, as a fresh
``homer`` that imported the same modules would.

Run as ``python -P bench/hostile_zygote.py`` (``-P``: bench/ holds names that shadow packages).
Protocol: one JSON request a line on stdin (``{"args", "cwd", "stdout", "stderr", "timeout",
"limit"}``), one JSON reply a line on stdout (``{"code", "seconds", "rss_kb"}``; ``code`` is null
after a timeout). The requests come from the bench, never from the inputs under test.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback
from typing import NoReturn

import harness.runner  # noqa: F401  (imported here so that every forked case starts with them)
import office_env.formats  # noqa: F401
import orchestrator.build  # noqa: F401
import orchestrator.cli
import orchestrator.cli.datasets  # noqa: F401
import orchestrator.cli.evaluate  # noqa: F401
import orchestrator.cli.officebench  # noqa: F401
import orchestrator.cli.review  # noqa: F401
import orchestrator.plus  # noqa: F401


def _child(request: dict) -> NoReturn:
    """In the forked child: the case's session, limit, folder and files, then the entry point;
    never returns."""
    try:
        os.setsid()
        limit = int(request["limit"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.chdir(request["cwd"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                                (2, request["stderr"], os.O_WRONLY)):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(os.devnull)  # noqa: SIM115 - the child's whole life
    except BaseException:  # noqa: BLE001 - the case could not start: its stderr says why
        traceback.print_exc()
        os._exit(1)
    orchestrator.cli.run_forked(request["args"])


def run(request: dict) -> dict:
    """Fork one case, wait for it (killing its whole session at the timeout) and report."""
    sys.stdout.flush()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        _child(request)
    deadline = started + float(request["timeout"])
    status, usage, delay = None, None, 0.005
    while status is None:
        done, raw, rusage = os.wait4(pid, os.WNOHANG)
        if done:
            status, usage = raw, rusage
        elif time.perf_counter() > deadline:
            os.killpg(pid, signal.SIGKILL)
            _, raw, rusage = os.wait4(pid, 0)
            status, usage = None, rusage
            break
        else:
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    seconds = time.perf_counter() - started
    try:
        os.killpg(pid, signal.SIGKILL)  # so that no worker outlives its command
    except (ProcessLookupError, PermissionError):
        pass
    code = None if status is None else os.waitstatus_to_exitcode(status)
    if code is not None and code < 0:
        code = 128 - code
    return {"code": code, "seconds": seconds, "rss_kb": usage.ru_maxrss if usage else 0}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(run(json.loads(line))) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
