"""Benchmark: a build on a two-node Ray cluster without a shared output folder writes the bytes of a
local build.

Two ``ray start`` processes on this machine stand in for two machines: a head node that runs no
task (``--num-cpus 0``, as a KubeRay head is usually set) and a worker node with ``--workers`` CPUs,
each with its own temporary folder. The worker node runs in a mount namespace of its own
(``unshare --user --mount --pid``) where the driver's folder and ``/dev/shm`` are empty memory file
systems, with another ``HOME`` and ``TMPDIR``: what a worker wrote under the output folder's path
would land there, never in the driver's folder, and a worker that read a path of the driver's would
find nothing. The driver (``homer build --executor ray --ray-address``) runs outside, on the head
node. The script builds the same seed locally, prints both wall times and both digests (sha256 over
the sorted files' paths and bytes, ``digest``) and how many repeats each build's workers
stopped at their drafts (on the cluster they learn of the kept tasks from a Ray actor:
``orchestrator.kept_identities``); then it runs oracle eval (long-context) of
each dataset, on the cluster and locally, and prints the digests of both ``results.jsonl``; then
it regenerates the OfficeBench sample (copied under the driver's folder) on the cluster and
locally. It exits 1 when any pair differs.

Each node runs in a PID namespace whose first process is the node's ``ray start --block``: stopping
that one process (the script does, even after an error) ends every Ray process of the node, and no
other Ray instance on the machine is touched (``ray stop`` would stop them all).

Needs unprivileged user namespaces (``unshare --user``). Run:
``python bench/ray_cluster.py [--n 20] [--seed 11] [--workers 2] [--keep]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOMER = Path(sys.executable).parent / "homer"
RAY = Path(sys.executable).parent / "ray"
ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "datasets" / "officebench-sample"
READY_SECONDS = 120.0


def digest(folder: Path) -> str:
    """The dataset's digest: its sorted files but build.json, attempts.jsonl and .lock."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name not in ("build.json", "attempts.jsonl", ".lock"):
            h.update(str(path.relative_to(folder)).encode())
            h.update(b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_node(name: str, ray_args: list[str], temp: Path, *, hide: list[Path], env: dict[str, str],
               log: Path) -> subprocess.Popen:
    """``ray start --block`` as the first process of a PID namespace (its end ends the node), in a
    mount namespace where each folder of ``hide`` is an empty memory file system."""
    mounts = "".join(f"mount -t tmpfs -o mode=0700 {name}-hidden {shlex.quote(str(p))} && " for p in hide)
    command = (f"{mounts}exec {shlex.quote(str(RAY))} start --block --temp-dir {shlex.quote(str(temp))} "
               f"--disable-usage-stats --include-log-monitor false {' '.join(map(shlex.quote, ray_args))}")
    with open(log, "wb") as out:
        return subprocess.Popen(["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork",
                                 "--kill-child", "sh", "-c", command],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def stop_node(node: subprocess.Popen) -> None:
    """End the node: SIGTERM, then SIGKILL, to ``unshare``, whose child (the namespace's first
    process) is then killed, and with it every process of the namespace."""
    if node.poll() is None:
        node.send_signal(signal.SIGTERM)
        try:
            node.wait(timeout=10)
        except subprocess.TimeoutExpired:
            node.kill()  # unshare's child (the namespace's first process) then gets SIGKILL (--kill-child)
            node.wait()


def wait_for_cpus(address: str, cpus: int, env: dict[str, str]) -> None:
    """Wait until the cluster at ``address`` offers ``cpus`` CPUs (the worker node joined)."""
    probe = ("import ray, sys, time, logging\n"
             f"ray.init(address={address!r}, log_to_driver=False, logging_level=logging.ERROR)\n"
             f"end = time.time() + {READY_SECONDS}\n"
             f"while ray.cluster_resources().get('CPU', 0) < {cpus} and time.time() < end:\n"
             "    time.sleep(0.5)\n"
             f"sys.exit(0 if ray.cluster_resources().get('CPU', 0) >= {cpus} else 1)\n")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          timeout=READY_SECONDS + 60)
    if done.returncode != 0:
        raise SystemExit(f"the cluster at {address} did not reach {cpus} CPU(s): {done.stderr[-1500:]}")


STOPS = re.compile(r"(\d+) duplicate\(s\) stopped at their drafts")
STOPPED: dict[str, int] = {}  # per build's folder, the repeats its workers stopped at their drafts


def _timed(command: str, words: list[str], env: dict[str, str], extra: list[str]) -> float:
    """``homer COMMAND WORDS... -q EXTRA...`` run to its end; its wall time (a failure stops the bench)."""
    start = time.perf_counter()
    done = subprocess.run([str(HOMER), command, *words, "-q", *extra], env=env, capture_output=True, text=True,
                          cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"homer {command} {' '.join(extra)} failed ({done.returncode}): {done.stderr[-3000:]}")
    if command == "build":
        found = STOPS.search(done.stdout)
        STOPPED[words[words.index("--out") + 1]] = int(found.group(1)) if found else 0
    return time.perf_counter() - start


def build(out: Path, args: argparse.Namespace, env: dict[str, str], extra: list[str]) -> float:
    return _timed("build", ["--n", str(args.n), "--seed", str(args.seed), "--out", str(out),
                            "--workers", str(args.workers)], env, extra)


def evaluate(dataset: Path, run: Path, args: argparse.Namespace, env: dict[str, str], extra: list[str]) -> float:
    """Oracle eval (long-context) of ``dataset`` into ``run``; its wall time."""
    return _timed("eval", [str(dataset), "--out", str(run), "--agent", "oracle", "--workers", str(args.workers)],
                  env, extra)


def regenerate(seeds: Path, out: Path, args: argparse.Namespace, env: dict[str, str], extra: list[str]) -> float:
    """``homer regenerate`` of the seed tasks at ``seeds`` into ``out``; its wall time."""
    return _timed("regenerate", ["--seeds", str(seeds), "--out", str(out), "--seed", str(args.seed), "--days", "2",
                                 "--workers", str(args.workers)], env, extra)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=2, help="the worker node's CPUs (and --workers)")
    parser.add_argument("--keep", action="store_true", help="keep the folders (their path is printed)")
    args = parser.parse_args()
    if shutil.which("unshare") is None:
        raise SystemExit("needs unshare (util-linux) and unprivileged user namespaces")

    root = Path(tempfile.mkdtemp(prefix="homer-ray-cluster-"))
    driver = root / "driver"             # only the driver sees what is in here
    node_home = root / "node-home"       # the worker node's HOME and TMPDIR
    for folder in (driver, node_home / "tmp", root / "head-tmp", root / "node-tmp"):
        folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    # the cluster's own token (a real cluster hands it to every node and driver alike)
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    node_env = {**env, "HOME": str(node_home), "TMPDIR": str(node_home / "tmp")}
    port = free_port()
    address = f"127.0.0.1:{port}"
    nodes: list[subprocess.Popen] = []
    print(f"folders under {root}; head node at {address}")
    try:
        shutil.copytree(SEEDS, driver / "seeds")  # the seeds too: only the driver sees them
        local = build(root / "local", args, env, [])
        plus_local = regenerate(driver / "seeds", root / "plus", args, env, [])
        eval_local = evaluate(root / "local", root / "run", args, env, [])
        nodes.append(start_node("head", ["--head", "--port", str(port), "--node-ip-address", "127.0.0.1",
                                         "--num-cpus", "0", "--include-dashboard", "false"],
                                root / "head-tmp", hide=[], env=env, log=root / "head.log"))
        nodes.append(start_node("node", ["--address", address, "--node-ip-address", "127.0.0.1",
                                         "--num-cpus", str(args.workers), "--dashboard-agent-listen-port", "0",
                                         "--metrics-export-port", str(free_port())],
                                root / "node-tmp", hide=[driver, Path("/dev/shm")], env=node_env,
                                log=root / "node.log"))
        wait_for_cpus(address, args.workers, env)
        on_ray = ["--executor", "ray", "--ray-address", address]
        on_cluster = build(driver / "ds", args, env, on_ray)
        eval_cluster = evaluate(driver / "ds", driver / "run", args, env, on_ray)
        plus_cluster = regenerate(driver / "seeds", driver / "plus", args, env, on_ray)
    finally:
        for node in reversed(nodes):
            stop_node(node)
    same = digest(root / "local") == digest(driver / "ds")
    results = [file_digest(folder / "results.jsonl") for folder in (root / "run", driver / "run")]
    same_rows = results[0] == results[1]
    same_plus = digest(root / "plus") == digest(driver / "plus")
    print(f"local build:       {local:6.1f} s  digest {digest(root / 'local')}  "
          f"repeats stopped at their drafts: {STOPPED.get(str(root / 'local'), 0)}")
    print(f"two-node Ray:      {on_cluster:6.1f} s  digest {digest(driver / 'ds')}  "
          f"repeats stopped at their drafts: {STOPPED.get(str(driver / 'ds'), 0)}")
    print(f"local oracle eval: {eval_local:6.1f} s  results.jsonl {results[0]}")
    print(f"two-node Ray eval: {eval_cluster:6.1f} s  results.jsonl {results[1]}")
    print(f"local regenerate:  {plus_local:6.1f} s  digest {digest(root / 'plus')}")
    print(f"two-node Ray:      {plus_cluster:6.1f} s  digest {digest(driver / 'plus')}")
    print(f"same bytes: {'yes' if same else 'NO'} (dataset), {'yes' if same_rows else 'NO'} (eval results), "
          f"{'yes' if same_plus else 'NO'} (regenerated split) ({args.n} tasks, seed {args.seed}, "
          f"{args.workers} worker CPUs)")
    same = same and same_rows and same_plus
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
