"""A response cache on SQLite: request hash -> response JSON.

One file, WAL journal, a busy timeout, and one connection per thread and process, so several
threads and worker processes can share it. A key is :func:`request_key` of the whole request
(endpoint base URL, model, messages, tools, tool_choice, temperature, max_tokens, response_format).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Literal

from office_env.untrusted import sqlite_problem


class CacheError(RuntimeError):
    """The cache database cannot be used (corrupt, locked, unwritable); the message names the file."""


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path | str, busy_timeout: float = 30.0):
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"response cache {self.path}: cannot create its folder ({exc.strerror or exc})") from None
        with self._guard("open"):
            connection = self._connection()
            connection.execute("CREATE TABLE IF NOT EXISTS responses ("
                               "key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)")

    key = staticmethod(request_key)

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == os.getpid():
            return connection
        # A link at the path (or at its journal files) would make SQLite write wherever it points.
        problem = sqlite_problem(self.path)
        if problem is not None:
            raise CacheError(f"response cache {self.path}: {problem}; refused")
        connection = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                                     check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()
            if not mode or str(mode[0]).lower() != "wal":
                raise CacheError(f"response cache {self.path}: cannot switch to WAL mode (got {mode and mode[0]})")
            connection.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            connection.close()
            raise
        self._local.connection, self._local.pid = connection, os.getpid()
        with self._lock:
            self._connections.append(connection)
        return connection

    def _guard(self, action: str) -> "_Guard":
        return _Guard(self, action)

    def get(self, key: str) -> Any | None:
        """The stored response for ``key``, or None."""
        with self._guard("read"):
            row = self._connection().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except json.JSONDecodeError as exc:
            raise CacheError(f"response cache {self.path}: entry {key[:12]} is not valid JSON ({exc.msg}); "
                             f"delete the file to rebuild the cache") from None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable) under ``key``, replacing any earlier entry."""
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        with self._guard("write"):
            self._connection().execute("INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)",
                                       (key, text, time.time()))

    def __contains__(self, key: str) -> bool:
        with self._guard("read"):
            return self._connection().execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._guard("read"):
            return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            try:
                connection.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Guard:
    """Turns sqlite3 errors into one CacheError naming the file and what to do."""

    def __init__(self, cache: ResponseCache, action: str):
        self.cache, self.action = cache, action

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> Literal[False]:
        if exc is None or not isinstance(exc, sqlite3.Error):
            return False
        text = str(exc)
        path = self.cache.path
        if "locked" in text or "busy" in text:
            message = (f"response cache {path}: database is locked (waited {self.cache.busy_timeout:g} s for "
                       f"another process or thread to finish writing)")
        elif isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text
                                                         or "corrupt" in text):
            message = (f"response cache {path}: the file is not a usable SQLite database ({text}); "
                       f"delete it or point cache_path elsewhere")
        else:
            message = f"response cache {path}: cannot {self.action} ({exc.__class__.__name__}: {text})"
        raise CacheError(message) from None
