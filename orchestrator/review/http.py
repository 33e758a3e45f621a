"""The review page's HTTP edge: which Host names it answers, what a POST must show before its body
is read, and the listening socket.

Why here and not in each page: a form's body is read only after the request has shown it came
from one of this server's pages (no foreign ``Origin``, the form secret in the first bytes or in
the ``X-Review-Secret`` header) and declared a size within :data:`MAX_FORM_BYTES`; it is then read
in chunks and refused once it passes that size, so a 400 MB POST costs nothing. The Host check
names the bound address (or, bound to every interface, this machine's names) plus the names given
with ``--allowed-host``, so a DNS-rebinding page cannot reach the server through another name.
"""

from __future__ import annotations

import hmac
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from office_env.untrusted import printable

MAX_FORM_BYTES = 256 * 1024
SECRET_FIELD = "secret"
SECRET_HEADER = "x-review-secret"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")


class Refused(Exception):
    """A request refused before its body was read; ``status`` and the one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def plain(message: str, status: int) -> Response:
    return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The Host names the server answers: the bound address (loopback: its names; every interface:
    the loopback names and this machine's name), plus ``extra``; lower case, no port."""
    names = [bound]
    if bound in LOOPBACK or bound in WILDCARD:
        names = list(LOOPBACK)
    if bound in WILDCARD:
        names += [socket.gethostname(), socket.getfqdn()]
    names += list(extra)
    return tuple(dict.fromkeys(n.strip().lower().strip("[]") for n in names if n and n.strip()))


def host_of(value: str) -> str:
    """The name in a Host header (``[::1]:8765`` -> ``::1``, ``Example:80`` -> ``example``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HostCheck:
    """ASGI middleware: a request whose Host is not one of ``hosts`` is refused with 400 and the
    option that would allow it."""

    def __init__(self, app: Any, hosts: tuple[str, ...]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            host = host_of(Headers(scope=scope).get("host", ""))
            if host not in self.hosts:
                shown = printable(host)[:100]
                response = plain(f"Host {shown!r} is not a name of this review server (it answers "
                                 f"{', '.join(self.hosts)}); start it with --allowed-host {shown or 'NAME'}", 400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def check_origin(request: Request) -> None:
    """Refuse a POST another site's page sent (its Origin or Sec-Fetch-Site says so)."""
    site = request.headers.get("sec-fetch-site", "")
    if site and site not in ("same-origin", "none"):
        raise Refused(403, "this form was sent from another site: refused")
    origin = request.headers.get("origin")
    if origin is None:
        return
    parts = urlsplit(origin)
    own = request.headers.get("host", "").strip().lower()
    if origin == "null" or parts.scheme not in ("http", "https") or parts.netloc.lower() != own:
        raise Refused(403, f"this form was sent from another site ({printable(origin)[:100]}): refused")


async def read_form(request: Request, secret: str) -> dict[str, str]:
    """The fields of a urlencoded POST, once the request has shown it comes from this server's page;
    the body is read in chunks of at most :data:`MAX_FORM_BYTES` in all (:class:`Refused` otherwise)."""
    check_origin(request)
    length = request.headers.get("content-length")
    if length is not None and (not length.strip().isdigit() or int(length) > MAX_FORM_BYTES):
        raise Refused(413, f"the form is larger than {MAX_FORM_BYTES // 1024} KiB")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "a form must be sent as application/x-www-form-urlencoded")
    header = request.headers.get(SECRET_HEADER)
    if header is not None and not hmac.compare_digest(header.encode(), secret.encode()):
        raise Refused(403, "this form is not from this review page (reload it)")
    prefix = f"{SECRET_FIELD}={secret}".encode()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if header is None and not _may_start(body, prefix):
            raise Refused(403, "this form is not from this review page (reload it)")
        if len(body) > MAX_FORM_BYTES:
            raise Refused(413, f"the form is larger than {MAX_FORM_BYTES // 1024} KiB")
    if header is None and not (body == prefix or body.startswith(prefix + b"&")):
        raise Refused(403, "this form is not from this review page (reload it)")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(400, "the form is not UTF-8") from None
    try:
        return dict(parse_qsl(text, keep_blank_values=True, max_num_fields=64))
    except ValueError:
        raise Refused(400, "the form has too many fields") from None


def _may_start(body: bytes | bytearray, prefix: bytes) -> bool:
    """Whether ``body`` so far can still begin with the secret field (compared in constant time)."""
    n = min(len(body), len(prefix))
    return hmac.compare_digest(bytes(body[:n]), prefix[:n])


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (OSError when it cannot be)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock
