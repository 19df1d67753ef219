"""HTTP serving for :class:`~zigai.mcp.Server`: deployment policy, WSGI app, ``http.server`` entry.

Job
    Turn one HTTP exchange into a dispatcher call and back: check the deployment policy and
    the HTTP framing *before* reading or parsing the body, pass the raw headers and TLS state to
    :meth:`Server.handle_value`, and answer with one JSON object or a request-scoped SSE stream.

Order of checks (first failure wins, no JSON parsed before step 5)
    1. deployment policy: a ``Host`` not allowed -> 421; cleartext where TLS is required -> 403;
       an ``Origin`` not allowed (DNS rebinding) -> 403;
    1a. with an authorization policy (:class:`~zigai.mcp.auth.server.BearerAuthPolicy`): a GET
       of its protected resource metadata path is answered with the metadata document;
    2. method other than POST -> 405 with ``Allow: POST``, except, after 2a, a ``DELETE`` naming an
       ``Mcp-Session-Id``, which ends that 2025 session (200, or 404 unknown), and a ``GET``
       naming one, which opens that session's stream (404 unknown, 406 without
       ``text/event-stream`` in ``Accept``, 409 when the session has its stream open already);
    2a. with an authorization policy: the Bearer token is validated for the canonical resource
       -> 401 / 403 / 400 with the policy's ``WWW-Authenticate`` header;
    3. ``Content-Type`` not ``application/json`` -> 415; ``Accept`` lacking JSON or SSE -> 406;
    4. no ``Content-Length`` -> 411; a body over the limit -> 413;
    5. a 2025 session: an unknown or expired ``Mcp-Session-Id`` -> 404, an ``MCP-Protocol-Version``
       that is not the session's -> 400; ``initialize`` opens a session (its id in the
       ``Mcp-Session-Id`` response header, see :mod:`zigai.mcp.server.sessions`); a session's
       notifications, and its responses to the server's requests, are accepted (202);
    6. the dispatcher's ladder (see :mod:`zigai.mcp.server.server`), errors mapped to 400/404.

Streaming
    A request is answered as JSON when its handler finishes before emitting a notification
    (or within ``sse_commit_s``); otherwise the answer becomes ``text/event-stream``: the
    notifications, keep-alive comments every ``keepalive_s``, then the response.
    ``subscriptions/listen`` always streams.  When the client goes away the request is
    cancelled and nothing more is sent for it.  A 2025 session's handler that asks the client
    for input sends its requests on this response stream (so it becomes SSE) and waits for the
    answers the client POSTs with the session id.  The session's GET stream carries the
    server's change notifications (list changes; ``resources/updated`` for subscribed URIs),
    at most ``_PUSH_BACKLOG`` held for a slow reader (more are dropped with a warning), with
    keep-alive comments; it ends when the client closes it, on DELETE, on expiry and on
    ``Server.close_listeners`` (which ``HttpServerHandle.close`` calls).

Invariants
    * The default policy accepts cleartext and browser origins only for loopback hosts, and only
      loopback ``Host`` values; widen it explicitly for a deployment.
    * ``Last-Event-ID`` is ignored (no resumption); ``Mcp-Session-Id`` only names a 2025
      session, 2026-07-28 requests have none.
    * WSGI servers fold repeated headers; :func:`serve_http` sees every header line, so it
      also refuses duplicated routing headers.

Built-in server
    :func:`serve_http` runs on :class:`zigai.http_server.HttpServer`, which frames requests
    strictly before this module sees them (any ``Transfer-Encoding``, a repeated or malformed
    ``Content-Length`` -> 400 and the connection closed), bounds connections and their
    timeouts (``limits=``), and writes each JSON answer in one segment with ``TCP_NODELAY``.
    The connection is watched while a handler runs: a client that closes it cancels the
    handler's token within ``_GONE_POLL_S`` (0.25 s), whether the answer is still pending or
    already streaming.
"""

from __future__ import annotations

import logging
import queue
import ssl
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from zigai.control import CancellationToken
from zigai.http_gate import DeploymentPolicy
from zigai.http_server import HttpServer, Request, ServerLimits
from zigai.json import dumps
from zigai.mcp.auth.server import BearerAuthPolicy
from zigai.mcp.errors import (
    InvalidMcpMessage,
    InvalidRequest,
    UnsupportedProtocolVersion,
)
from zigai.mcp.server.server import HTTP_STATUS, NO_REPLY, Server
from zigai.mcp.server.sessions import (
    SESSION_HEADER,
    LegacySession,
    http_session,
    initialize_reply,
    opens_session,
)
from zigai.mcp.wire.jsonrpc import (
    HEADER_PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    JsonRpcNotification,
    JsonRpcRequest,
    classify,
    error_message,
    parse_json,
)
from zigai.mcp.wire.primitives import Notification

__all__ = ["DeploymentPolicy", "HttpReply", "handle_http", "wsgi_app", "serve_http", "HttpServerHandle"]

_log = logging.getLogger("zigai.mcp.server_http")
_GONE_POLL_S = 0.25
_PUSH_BACKLOG = 256  # notifications a session's GET stream holds for a slow reader before dropping


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
                auth: BearerAuthPolicy | None = None, path: str = "",
                client_gone: Callable[[], bool] | None = None) -> HttpReply:
    """Serve one HTTP exchange (see the module docstring for the order of checks).

    ``path`` (the request target's path) is only consulted to serve ``auth``'s metadata.
    ``client_gone()`` says whether the client has closed its connection; while a handler runs
    it is polled every ``_GONE_POLL_S`` and a True cancels the handler's token.
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
    listening = method == "GET" and bool(folded.get("mcp-session-id"))  # ... or opens its push stream
    if method != "POST" and not ending and not listening:
        reply = _refused(405, "the MCP endpoint accepts POST only")
        reply.headers.append(("Allow", "POST"))
        return reply
    if auth is not None:
        _token, denied = auth.check(folded)
        if denied is not None:
            reply = _json_reply(denied.status, denied.body())
            reply.headers.append(("WWW-Authenticate", denied.www_authenticate))
            return reply
    if listening:
        return _session_stream(server, policy, folded, client_gone or _never)
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
        if session is not None:  # a 2025 client answering one of the server's requests
            session.calls.resolve(message)  # an answer nobody waits for is dropped
            return _json_reply(202, None)
        return _json_reply(400, error_message(None, InvalidRequest("clients do not send responses").to_json()))
    return _exchange(server, policy, value, message.method == "subscriptions/listen", folded, tls,
                     client_gone or _never, session)


def _never() -> bool:
    return False


def _exchange(server: Server, policy: DeploymentPolicy, value: Any, listen: bool,
              headers: dict[str, tuple[str, ...]], tls: bool, client_gone: Callable[[], bool],
              session: LegacySession | None = None) -> HttpReply:
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

    def send(message: dict[str, Any]) -> None:  # a 2025 session's request to the client, on this stream
        put(("note", message))

    def work() -> None:
        try:
            reply = server.handle_value(value, headers=headers, tls=tls, emit=emit, token=token, session=session,
                                        send=send)
        except BaseException as exc:  # pragma: no cover - handle_value maps handler failures itself
            _log.exception("MCP HTTP dispatch failed")
            reply = error_message(None, {"code": -32603, "message": f"internal error ({type(exc).__name__})"})
        put(("final", reply))

    threading.Thread(target=work, daemon=True, name="zigai-mcp-http-request").start()
    first: tuple[str, Any] | None = None
    if not listen:
        commit = time.monotonic() + policy.sse_commit_s
        while first is None and (left := commit - time.monotonic()) > 0:
            try:
                first = items.get(timeout=min(left, _GONE_POLL_S))
            except queue.Empty:
                if client_gone():
                    token.cancel("the client closed its connection")
                    return _json_reply(204, None)  # nobody is left to read it
        if first is not None and first[0] == "final":
            reply = first[1]
            if reply is NO_REPLY or reply is None:  # pragma: no cover - only after a cancel, which needs a stream
                return _json_reply(204, None)
            return _json_reply(_status_of(reply), reply)
    headers_out = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache, no-transform"),
                   ("X-Accel-Buffering", "no")]
    return HttpReply(200, headers_out, _stream(items, first, token, policy.keepalive_s, client_gone))


def _stream(items: queue.Queue[tuple[str, Any]], first: tuple[str, Any] | None, token: CancellationToken,
            keepalive_s: float, client_gone: Callable[[], bool]) -> Iterator[bytes]:
    finished = False
    try:
        pending = first
        last = time.monotonic()
        while True:
            if pending is None:
                try:
                    pending = items.get(timeout=min(keepalive_s, _GONE_POLL_S))
                except queue.Empty:
                    if client_gone():
                        return  # the finally block cancels the request
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


def _session_stream(server: Server, policy: DeploymentPolicy, headers: dict[str, tuple[str, ...]],
                    client_gone: Callable[[], bool]) -> HttpReply:
    """Open a 2025 session's GET stream: the server's change notifications for that session."""
    session, refused = http_session(server, headers)
    if refused is not None:
        return _refused(int(refused[:3]), refused[4:])
    assert session is not None
    accept = ",".join(headers.get("accept", ())).lower()
    if "text/event-stream" not in {part.split(";", 1)[0].strip() for part in accept.split(",")}:
        return _refused(406, "Accept must list text/event-stream to open the session's stream")
    stream = _PushStream(server, session, policy.keepalive_s, client_gone)
    if not session.pushes.attach(stream.put):
        return _refused(409, "this session already has its GET stream open; only one is served per session")
    headers_out = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache, no-transform"),
                   ("X-Accel-Buffering", "no")]
    return HttpReply(200, headers_out, stream)


class _PushStream:
    """The body of a session's GET stream: bounded, ended by the client, DELETE or expiry.
    ``close()`` frees the session's one stream slot even when the body was never read."""

    def __init__(self, server: Server, session: LegacySession, keepalive_s: float,
                 client_gone: Callable[[], bool]) -> None:
        self._items: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=_PUSH_BACKLOG)
        self._body = self._run(server, session, keepalive_s, client_gone)
        self._session = session

    def put(self, message: dict[str, Any]) -> None:
        try:
            self._items.put_nowait(message)
        except queue.Full:
            _log.warning("a session's GET stream is not being read; dropping %s for it", message.get("method"))

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._body)

    def close(self) -> None:
        self._session.pushes.detach(self.put)
        self._body.close()

    def _run(self, server: Server, session: LegacySession, keepalive_s: float,
             client_gone: Callable[[], bool]) -> Generator[bytes, None, None]:
        try:
            last = time.monotonic()
            while server.sessions.alive(session):
                try:
                    message = self._items.get(timeout=_GONE_POLL_S)
                except queue.Empty:
                    if client_gone():
                        return
                    if time.monotonic() - last >= keepalive_s:
                        last = time.monotonic()
                        yield b": keepalive\n\n"
                    continue
                last = time.monotonic()
                yield _event(message)
        finally:
            session.pushes.detach(self.put)


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


# ----------------------------------------------------------------------------- the built-in server


def _handler(server: Server, policy: DeploymentPolicy | None,
             holder: list[BearerAuthPolicy | None]) -> Callable[[Request], HttpReply]:
    def handle(request: Request) -> HttpReply:
        return handle_http(server, policy, method=request.method, headers=request.headers,
                           read_body=request.read_body, tls=request.tls, auth=holder[0], path=request.target,
                           client_gone=request.client_gone)

    return handle


class HttpServerHandle:
    """A running loopback-or-configured server for one MCP server; close it when done.

    ``httpd`` is the :class:`~zigai.http_server.HttpServer` underneath (its ``limits``,
    ``active_connections`` and ``refused_connections``).
    """

    def __init__(self, httpd: HttpServer, server: Server, url: str) -> None:
        self.httpd = httpd
        self.server = server
        self.url = url

    def close(self) -> None:
        """End listen streams gracefully, stop accepting, end every connection."""
        self.server.close_listeners()
        self.httpd.close()

    def __enter__(self) -> HttpServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve_http(server: Server, host: str = "127.0.0.1", port: int = 0, *, path: str = "/mcp",
               policy: DeploymentPolicy | None = None, ssl_context: ssl.SSLContext | None = None,
               auth: BearerAuthPolicy | Callable[[str], BearerAuthPolicy] | None = None,
               limits: ServerLimits | None = None) -> HttpServerHandle:
    """Serve ``server`` on a :class:`~zigai.http_server.HttpServer` in background threads.

    Every path is the endpoint.  ``limits`` bounds connections and their timeouts (defaults:
    64 connections, 15 s idle, 10 s head, 30 s body, 30 s per write).  ``auth`` protects it
    with a :class:`~zigai.mcp.auth.server.BearerAuthPolicy` (and serves that policy's
    protected resource metadata); pass a callable to build the policy from the served URL
    (useful with ``port=0``).
    """
    holder: list[BearerAuthPolicy | None] = [auth if isinstance(auth, BearerAuthPolicy) else None]
    httpd = HttpServer(_handler(server, policy, holder), host, port, limits=limits, ssl_context=ssl_context,
                       name="zigai-mcp-http")
    scheme = "http" if ssl_context is None else "https"
    host_text, bound_port = httpd.address
    shown = f"[{host_text}]" if ":" in host_text else host_text
    url = f"{scheme}://{shown}:{bound_port}{path}"
    if auth is not None and not isinstance(auth, BearerAuthPolicy):
        try:
            holder[0] = auth(url)
        except BaseException:
            httpd.close()
            raise
    return HttpServerHandle(httpd, server, url)
