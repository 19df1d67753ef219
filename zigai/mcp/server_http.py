"""HTTP serving for :class:`~zigai.mcp.Server`: deployment policy, WSGI app, ``http.server`` entry.

Job
    Turn one HTTP exchange into a dispatcher call and back: check the deployment policy and
    the HTTP framing *before* reading or parsing the body, pass the raw headers and TLS state to
    :meth:`Server.handle_value`, and answer with one JSON object or a request-scoped SSE stream.

Order of checks (first failure wins, no JSON parsed before step 5)
    1. deployment policy: a ``Host`` not allowed -> 421; cleartext where TLS is required -> 403;
       an ``Origin`` not allowed (DNS rebinding) -> 403;
    1a. with an authorization policy (:class:`~zigai.mcp.auth_server.BearerAuthPolicy`): a GET
       of its protected resource metadata path is answered with the metadata document;
    2. method other than POST -> 405 with ``Allow: POST`` (no GET stream), except a ``DELETE``
       naming an ``Mcp-Session-Id``, which ends that 2025 session after 2a (200, or 404 unknown);
    2a. with an authorization policy: the Bearer token is validated for the canonical resource
       -> 401 / 403 / 400 with the policy's ``WWW-Authenticate`` header;
    3. ``Content-Type`` not ``application/json`` -> 415; ``Accept`` lacking JSON or SSE -> 406;
    4. no ``Content-Length`` -> 411; a body over the limit -> 413;
    5. a 2025 session: an unknown or expired ``Mcp-Session-Id`` -> 404, an ``MCP-Protocol-Version``
       that is not the session's -> 400; ``initialize`` opens a session (its id in the
       ``Mcp-Session-Id`` response header, see :mod:`zigai.mcp.server_sessions`) and a
       session's notifications are accepted (202);
    6. the dispatcher's ladder (see :mod:`zigai.mcp.server`), errors mapped to 400/404.

Streaming
    A request is answered as JSON when its handler finishes before emitting a notification
    (or within ``sse_commit_s``); otherwise the answer becomes ``text/event-stream``: the
    notifications, keep-alive comments every ``keepalive_s``, then the response.
    ``subscriptions/listen`` always streams.  When the client goes away the request is
    cancelled and nothing more is sent for it.

Invariants
    * The default policy accepts cleartext and browser origins only for loopback hosts, and only
      loopback ``Host`` values; widen it explicitly for a deployment.
    * ``Last-Event-ID`` is ignored (no resumption); ``Mcp-Session-Id`` only names a 2025
      session, 2026-07-28 requests have none.
    * WSGI servers fold repeated headers; the ``http.server`` entry sees every header line, so it
      also refuses duplicated routing headers.
"""

from __future__ import annotations

import ipaddress
import logging
import queue
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from zigai.control import CancellationToken
from zigai.json import dumps
from zigai.mcp.auth_server import BearerAuthPolicy
from zigai.mcp.errors import (
    InvalidMcpMessage,
    InvalidRequest,
    UnsupportedProtocolVersion,
)
from zigai.mcp.jsonrpc import (
    HEADER_PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    JsonRpcNotification,
    JsonRpcRequest,
    classify,
    error_message,
    parse_json,
)
from zigai.mcp.primitives import Notification
from zigai.mcp.server import HTTP_STATUS, NO_REPLY, Server
from zigai.mcp.server_sessions import (
    SESSION_HEADER,
    LegacySession,
    http_session,
    initialize_reply,
    opens_session,
)

__all__ = ["DeploymentPolicy", "HttpReply", "handle_http", "wsgi_app", "serve_http", "HttpServerHandle"]

_log = logging.getLogger("zigai.mcp.server_http")
_LOOPBACK_NAMES = frozenset({"localhost"})


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").rstrip(".").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, str | None]:
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host.lower(), rest[1:] if rest.startswith(":") else None
    host, colon, port = value.rpartition(":")
    if not colon or ":" in host:
        return value.lower(), None
    return host.lower(), port


def _allowed(value: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith(":*"):
            if value.lower().startswith(pattern[:-1].lower()) and value[len(pattern) - 1:].isdigit():
                return True
        elif value.lower() == pattern.lower():
            return True
    return False


@dataclass(frozen=True, slots=True)
class DeploymentPolicy:
    """Who may reach the HTTP endpoint (see module docstring).

    ``allowed_hosts`` are ``Host`` values (``"mcp.example.com"``, ``"127.0.0.1:8000"``,
    ``"localhost:*"`` for any port); None allows loopback hosts only.  ``allowed_origins`` are
    browser origins (``"https://app.example.com"``, ``"http://localhost:*"``); None allows
    loopback origins only.  A request without ``Origin`` (not from a browser) passes that check.
    ``require_tls`` None means "TLS unless the Host is loopback".
    """

    allowed_hosts: tuple[str, ...] | None = None
    allowed_origins: tuple[str, ...] | None = None
    require_tls: bool | None = None
    max_body_bytes: int | None = None
    sse_commit_s: float = 15.0
    keepalive_s: float = 15.0

    def refusal(self, headers: dict[str, tuple[str, ...]], tls: bool) -> tuple[int, str] | None:
        """(status, reason) when the request must be refused before its body is read."""
        host_values = headers.get("host", ())
        if len(host_values) != 1:
            return 421, "exactly one Host header is required"
        host_value = host_values[0]
        host, _port = _split_host(host_value)
        loopback = _is_loopback(host)
        if self.allowed_hosts is None:
            if not loopback:
                return 421, "this endpoint serves loopback Host names only"
        elif not _allowed(host_value, self.allowed_hosts):
            return 421, "the Host header is not one this endpoint serves"
        require_tls = (not loopback) if self.require_tls is None else self.require_tls
        if require_tls and not tls:
            return 403, "cleartext HTTP is not accepted here; use https"
        origins = headers.get("origin", ())
        if origins:
            origin = origins[0]
            if len(origins) > 1 or origin == "null":
                return 403, "the Origin header is not allowed"
            if self.allowed_origins is None:
                scheme, sep, rest = origin.partition("://")
                if not sep or scheme not in ("http", "https") or not _is_loopback(_split_host(rest)[0]):
                    return 403, "the Origin header is not allowed"
            elif not _allowed(origin, self.allowed_origins):
                return 403, "the Origin header is not allowed"
        return None


@dataclass(slots=True)
class HttpReply:
    """One HTTP answer; ``body`` is bytes or an iterator of SSE bytes with ``close()``."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes | Iterator[bytes]


def _json_reply(status: int, message: dict[str, Any] | None) -> HttpReply:
    body = b"" if message is None else dumps(message).encode("utf-8")
    headers = [("Content-Length", str(len(body)))]
    if message is not None:
        headers.insert(0, ("Content-Type", "application/json"))
    return HttpReply(status, headers, body)


def _refused(status: int, reason: str, code: int = -32600) -> HttpReply:
    return _json_reply(status, error_message(None, {"code": code, "message": reason}))


def _status_of(reply: dict[str, Any]) -> int:
    error = reply.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return HTTP_STATUS.get(code, 200) if isinstance(code, int) else 200


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + dumps(message).encode("utf-8") + b"\n\n"


def _accepts(headers: dict[str, tuple[str, ...]]) -> bool:
    accept = ",".join(headers.get("accept", ())).lower()
    kinds = {part.split(";", 1)[0].strip() for part in accept.split(",")}
    return "*/*" in kinds or {"application/json", "text/event-stream"} <= kinds


def handle_http(server: Server, policy: DeploymentPolicy | None, *, method: str,
                headers: Iterable[tuple[str, str]], read_body: Callable[[int], bytes], tls: bool,
                auth: BearerAuthPolicy | None = None, path: str = "") -> HttpReply:
    """Serve one HTTP exchange (see the module docstring for the order of checks).

    ``path`` (the request target's path) is only consulted to serve ``auth``'s metadata.
    """
    policy = policy or DeploymentPolicy()
    folded: dict[str, tuple[str, ...]] = {}
    for name, value in headers:  # a field value never includes its surrounding whitespace (RFC 9110 5.5)
        folded[name.lower()] = (*folded.get(name.lower(), ()), value.strip(" \t"))
    refusal = policy.refusal(folded, tls)
    if refusal is not None:
        return _refused(*refusal)
    if auth is not None and method == "GET" and path.split("?", 1)[0] == auth.metadata_path:
        return _json_reply(200, auth.metadata())
    ending = method == "DELETE" and bool(folded.get("mcp-session-id"))  # a 2025 client ends its session
    if method != "POST" and not ending:
        reply = _refused(405, "the MCP endpoint accepts POST only")
        reply.headers.append(("Allow", "POST"))
        return reply
    if auth is not None:
        _token, denied = auth.check(folded)
        if denied is not None:
            reply = _json_reply(denied.status, denied.body())
            reply.headers.append(("WWW-Authenticate", denied.www_authenticate))
            return reply
    if ending:
        ended = server.sessions.close(folded["mcp-session-id"][0])
        return _json_reply(200, None) if ended else _refused(404, "the MCP session is unknown or expired")
    content_type = folded.get("content-type", ("",))[0].split(";", 1)[0].strip().lower()
    if content_type != "application/json":
        return _refused(415, "Content-Type must be application/json")
    if not _accepts(folded):
        return _refused(406, "Accept must list application/json and text/event-stream")
    limit = policy.max_body_bytes if policy.max_body_bytes is not None else server.limits.max_document_bytes
    try:
        length = int(folded.get("content-length", ("",))[0])
    except ValueError:
        return _refused(411, "a Content-Length header is required")
    if length < 0:
        return _refused(400, "invalid Content-Length")
    if length > limit:
        return _refused(413, f"the request body exceeds {limit} bytes", -32700)
    body = read_body(length)
    try:
        value = parse_json(body, server.limits)
        message = classify(value)
    except InvalidMcpMessage:
        answer = server.handle(body)
        assert answer is not None
        return _json_reply(_status_of(answer), answer)
    session, refused = http_session(server, folded)
    if refused is not None:
        return _refused(int(refused[:3]), refused[4:])
    header_version = folded.get(HEADER_PROTOCOL_VERSION.lower(), (None,))[0]
    if isinstance(message, JsonRpcRequest) and session is None and opens_session(message, header_version):
        answer, opened = initialize_reply(server, message)
        reply = _json_reply(_status_of(answer), answer)
        reply.headers.extend([(SESSION_HEADER, opened.id)] if opened is not None else [])
        return reply
    if isinstance(message, JsonRpcNotification):
        requested = folded.get(HEADER_PROTOCOL_VERSION.lower(), ("",))[0]
        if session is not None:
            return _json_reply(202, None)
        if requested not in SUPPORTED_VERSIONS:
            error = UnsupportedProtocolVersion("Unsupported protocol version",
                                               data={"supported": list(SUPPORTED_VERSIONS), "requested": requested})
            return _json_reply(400, error_message(None, error.to_json()))
        return _json_reply(202, None)
    if not isinstance(message, JsonRpcRequest):
        return _json_reply(400, error_message(None, InvalidRequest("clients do not send responses").to_json()))
    return _exchange(server, policy, value, message.method == "subscriptions/listen", folded, tls, session)


def _exchange(server: Server, policy: DeploymentPolicy, value: Any, listen: bool,
              headers: dict[str, tuple[str, ...]], tls: bool, session: LegacySession | None = None) -> HttpReply:
    token = CancellationToken()
    items: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1024)

    def put(item: tuple[str, Any]) -> None:
        while not token.cancelled:
            try:
                items.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    def emit(notification: Notification) -> None:
        put(("note", notification.to_json()))

    def work() -> None:
        try:
            reply = server.handle_value(value, headers=headers, tls=tls, emit=emit, token=token, session=session)
        except BaseException as exc:  # pragma: no cover - handle_value maps handler failures itself
            _log.exception("MCP HTTP dispatch failed")
            reply = error_message(None, {"code": -32603, "message": f"internal error ({type(exc).__name__})"})
        put(("final", reply))

    threading.Thread(target=work, daemon=True, name="zigai-mcp-http-request").start()
    first: tuple[str, Any] | None = None
    if not listen:
        try:
            first = items.get(timeout=policy.sse_commit_s)
        except queue.Empty:
            first = None
        if first is not None and first[0] == "final":
            reply = first[1]
            if reply is NO_REPLY or reply is None:  # pragma: no cover - only after a cancel, which needs a stream
                return _json_reply(204, None)
            return _json_reply(_status_of(reply), reply)
    headers_out = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache, no-transform"),
                   ("X-Accel-Buffering", "no")]
    return HttpReply(200, headers_out, _stream(items, first, token, policy.keepalive_s))


def _stream(items: queue.Queue[tuple[str, Any]], first: tuple[str, Any] | None, token: CancellationToken,
            keepalive_s: float) -> Iterator[bytes]:
    finished = False
    try:
        pending = first
        last = time.monotonic()
        while True:
            if pending is None:
                try:
                    pending = items.get(timeout=min(keepalive_s, 0.25))
                except queue.Empty:
                    if time.monotonic() - last >= keepalive_s:
                        last = time.monotonic()
                        yield b": keepalive\n\n"
                    continue
            kind, payload = pending
            pending = None
            last = time.monotonic()
            if kind == "note":
                yield _event(payload)
                continue
            finished = True
            if payload is not None and payload is not NO_REPLY:
                yield _event(payload)
            return
    finally:
        if not finished:
            token.cancel("the client closed the response stream")


# ----------------------------------------------------------------------------- WSGI


def wsgi_app(server: Server, policy: DeploymentPolicy | None = None, *,
             auth: BearerAuthPolicy | None = None) -> Callable[..., Iterable[bytes]]:
    """A WSGI application serving ``server`` at whatever path it is mounted on."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        headers = [(key[5:].replace("_", "-"), str(value)) for key, value in environ.items()
                   if key.startswith("HTTP_")]
        for key, name in (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length")):
            if environ.get(key):
                headers.append((name, str(environ[key])))
        stream = environ["wsgi.input"]
        tls = environ.get("wsgi.url_scheme") == "https" or str(environ.get("HTTPS", "")).lower() in ("on", "1")
        reply = handle_http(server, policy, method=environ.get("REQUEST_METHOD", "GET"), headers=headers,
                            read_body=stream.read, tls=tls, auth=auth, path=str(environ.get("PATH_INFO", "")))
        start_response(f"{reply.status} {HTTPStatus(reply.status).phrase}", reply.headers)
        return [reply.body] if isinstance(reply.body, bytes) else reply.body

    return app


# ----------------------------------------------------------------------------- http.server


def _handler_class(server: Server, policy: DeploymentPolicy | None,
                   auth: list[BearerAuthPolicy | None] | None = None) -> type[BaseHTTPRequestHandler]:
    holder: list[BearerAuthPolicy | None] = auth if auth is not None else [None]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            tls = isinstance(self.connection, ssl.SSLSocket)
            consumed: list[int] = []

            def read_body(length: int) -> bytes:
                consumed.append(length)
                return self.rfile.read(length)

            reply = handle_http(server, policy, method=self.command, headers=self.headers.items(),
                                read_body=read_body, tls=tls, auth=holder[0], path=self.path)
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if not consumed and self.headers.get("content-length", "0") != "0":
                self.send_header("Connection", "close")  # the unread body must not reach the next request
                self.close_connection = True
            if isinstance(reply.body, bytes):
                self.end_headers()
                self.wfile.write(reply.body)
                return
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            body = reply.body
            try:
                for piece in body:
                    self.wfile.write(piece)
                    self.wfile.flush()
            except OSError:
                pass  # the client went away: closing the iterator cancels the request
            finally:
                close = getattr(body, "close", None)
                if callable(close):
                    close()

        do_POST = do_GET = do_DELETE = do_PUT = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            _log.debug("%s %s", self.address_string(), format % args)

    return Handler


class HttpServerHandle:
    """A running loopback-or-configured ``http.server`` serving one MCP server; close it when done."""

    def __init__(self, httpd: ThreadingHTTPServer, server: Server, url: str) -> None:
        self.httpd = httpd
        self.server = server
        self.url = url
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="zigai-mcp-http-server")
        self._thread.start()

    def close(self) -> None:
        """End listen streams gracefully, stop accepting, close the socket."""
        self.server.close_listeners()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(2.0)

    def __enter__(self) -> HttpServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve_http(server: Server, host: str = "127.0.0.1", port: int = 0, *, path: str = "/mcp",
               policy: DeploymentPolicy | None = None, ssl_context: ssl.SSLContext | None = None,
               auth: BearerAuthPolicy | Callable[[str], BearerAuthPolicy] | None = None) -> HttpServerHandle:
    """Serve ``server`` on a ThreadingHTTPServer in a background thread (every path is the endpoint).

    ``auth`` protects it with a :class:`~zigai.mcp.auth_server.BearerAuthPolicy` (and serves
    that policy's protected resource metadata); pass a callable to build the policy from the
    served URL (useful with ``port=0``).
    """
    holder: list[BearerAuthPolicy | None] = [auth if isinstance(auth, BearerAuthPolicy) else None]
    httpd = ThreadingHTTPServer((host, port), _handler_class(server, policy, holder))
    httpd.daemon_threads = True
    scheme = "http"
    if ssl_context is not None:
        httpd.socket = ssl_context.wrap_socket(httpd.socket, server_side=True)
        scheme = "https"
    bound_host, bound_port = httpd.server_address[:2]
    host_text = bound_host.decode() if isinstance(bound_host, bytes) else str(bound_host)
    shown = f"[{host_text}]" if ":" in host_text else host_text
    url = f"{scheme}://{shown}:{bound_port}{path}"
    if auth is not None and not isinstance(auth, BearerAuthPolicy):
        try:
            holder[0] = auth(url)
        except BaseException:
            httpd.server_close()
            raise
    return HttpServerHandle(httpd, server, url)
