"""Benchmark: the review page's server-side time and the annotation store's write latency.

Builds a small offline dataset (default histories: 5 days of about 70 utterances, ~350 turns per
task), then through the real app in process (Starlette's test client, no network): the task page's
time cold (first view) and warm (median and slowest of N views), a file preview, and the time to
save one verdict, straight into SQLite and through the page's POST. Target: the task page under
300 ms server side.
Run: ``python bench/review.py [--tasks 3] [--views 30] [--writes 300]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from starlette.testclient import TestClient  # noqa: E402

from orchestrator.build import build  # noqa: E402
from orchestrator.review.annotations import AnnotationStore  # noqa: E402
from orchestrator.review.app import ReviewServer, create_app  # noqa: E402
from orchestrator.roles import BuildConfig  # noqa: E402


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--views", type=int, default=30)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        dataset = Path(tmp) / "data"
        build(dataset, args.tasks, BuildConfig(seed=5))
        ids = sorted(p.name for p in (dataset / "tasks").iterdir())
        server = ReviewServer(dataset, "bench")
        client = TestClient(create_app(server), base_url="http://127.0.0.1")
        import json

        turns = sum(len(s["turns"])
                    for s in json.loads((dataset / "tasks" / ids[0] / "task.json").read_text())["dialogue"])
        start = time.perf_counter()
        first = client.get(f"/task/{ids[0]}")
        cold = time.perf_counter() - start
        assert first.status_code == 200
        times = []
        for i in range(args.views):
            start = time.perf_counter()
            assert client.get(f"/task/{ids[i % len(ids)]}").status_code == 200
            times.append(time.perf_counter() - start)
        median, worst = statistics.median(times), max(times)
        print(f"task page ({turns} turns, {len(first.content) // 1024} KiB of HTML): cold {_ms(cold)}, "
              f"warm median {_ms(median)}, slowest {_ms(worst)} "
              f"(target < 300 ms: {'met' if worst < 0.3 and cold < 0.3 else 'MISSED'})")
        start = time.perf_counter()
        assert client.get("/").status_code == 200
        print(f"task list: {_ms(time.perf_counter() - start)}")
        xlsx = next((dataset / "tasks" / ids[0] / "testbed").rglob("*.xlsx"))
        rel = xlsx.relative_to(dataset / "tasks" / ids[0] / "testbed").as_posix()
        start = time.perf_counter()
        assert client.get(f"/task/{ids[0]}/file", params={"path": rel}).status_code == 200
        print(f"sheet preview: {_ms(time.perf_counter() - start)}")

        writes = []
        with AnnotationStore(dataset) as store:
            for i in range(args.writes):
                start = time.perf_counter()
                store.set(f"a{i % 3}", ids[i % len(ids)], "clarity", "yes" if i % 2 else "no", "bench")
                writes.append(time.perf_counter() - start)
        writes.sort()
        print(f"SQLite verdict write (WAL): median {_ms(statistics.median(writes))}, "
              f"p95 {_ms(writes[int(0.95 * len(writes))])} over {args.writes}")
        posts = []
        for i in range(min(args.writes, 100)):
            start = time.perf_counter()
            reply = client.post(f"/task/{ids[0]}/verdict", headers={"Accept": "application/json"},
                                data={"secret": server.form_secret, "criterion": "realism", "verdict": "yes"})
            posts.append(time.perf_counter() - start)
            assert reply.status_code == 200
        print(f"verdict through the page (POST, saved): median {_ms(statistics.median(posts))}")


if __name__ == "__main__":
    main()
