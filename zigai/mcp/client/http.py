"""StreamableHttpTransport: MCP 2026-07-28 over one HTTP endpoint, one POST per message.

Job
    POST each request with the required headers (``Content-Type``, ``Accept``,
    ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) through a zigai
    :class:`~zigai.transport.Transport`, and read the answer as either one JSON object or a
    request-scoped SSE stream of notifications ending with the response.

Invariants
    * The :class:`~zigai.security.UrlPolicy` is enforced here, at construction and before every
      request, independently of whatever the underlying transport enforces.
    * At most ``max_in_flight`` POSTs are open at once; a further request waits for a slot (up
      to its deadline or cancellation) before anything reaches the underlying transport.
    * A JSON body is bounded by the MCP message profile (limit + 1 bytes raise
      :class:`McpMessageTooLarge`); each SSE event is bounded before JSON parsing (limit + 1
      raises :class:`SseEventTooLarge`).  Parser state is request-local.
    * A request that is cancelled or passes its deadline is also announced to the server with a
      ``notifications/cancelled`` POST (its own thread, bounded by ``CANCEL_NOTICE_S``), as
      over stdio, for servers that do not watch their connections.
    * Cancellation closes the request's response stream: the waiting caller returns at once and
      the worker's request is cancelled through the transport's cancellation token (a
      transport that honours it, as :class:`~zigai.transport.HttpTransport` does, stops
      reading soon after; another stops at its next byte or the deadline), releasing its slot
      only then.  Under 2026-07-28 no session id, ``Last-Event-ID`` or retry hint is kept.
    * Under a 2025 revision the ``Mcp-Session-Id`` an ``initialize`` answer names (visible
      ASCII, at most 256 bytes) goes on every later request and notification; a 404 to a request
      that carried it raises :class:`McpSessionExpired` and forgets it; :meth:`close` sends
      ``DELETE`` for it.  Requests the server sends on a response stream go to the handler set
      with ``set_request_handler`` (on a thread of their own) and its reply is POSTed back.
      After ``notifications/initialized`` one background GET stream (the optional standalone
      stream; a 405 means the server offers none) delivers the server's own requests and
      notifications (to ``set_unrouted_sink``), reconnecting with ``Last-Event-ID`` at most
      ``_MAX_RESUMES`` times in a row, after the stream's ``retry`` hint; a response stream that
      ends early under a 2025 revision resumes the same way.  :meth:`close` stops it.
    * A request (or notification) whose deadline passes raises :class:`McpRequestTimedOut`,
      as over stdio, whichever side notices first: the caller's wait or the underlying
      transport's deadline guard (whose :class:`~zigai.transport.TransportTimedOut` is mapped
      here).  Without a deadline, the underlying transport's per-operation timeout is a
      :class:`McpConnectionFailed`.
    * Extra headers may not replace the protocol headers, and header values are never echoed
      in error messages (they may be credentials).
    * With an ``auth=`` provider (:class:`~zigai.mcp.auth.flow.OAuthProvider`) each attempt
      carries at most one ``Authorization: Bearer`` header, built here and never placed in the
      JSON-RPC body; a ``401`` leads to one re-authorization and exactly one retry, a ``403``
      ``insufficient_scope`` to at most ``auth.max_step_ups`` step-ups; past those bounds the
      request fails with :class:`~zigai.mcp.auth.flow.AuthorizationRejected`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from zigai.control import CancellationToken
from zigai.errors import SecurityError, TransportError
from zigai.json import Limits, defaults
from zigai.mcp.auth.discovery import BearerChallenge, parse_bearer_challenge
from zigai.mcp.errors import (
    InvalidMcpMessage,
    InvalidMcpRequest,
    McpClientClosed,
    McpConnectionFailed,
    McpError,
    McpHttpStatusError,
    McpMessageTooLarge,
    McpRequestCancelled,
    McpRequestTimedOut,
    McpSessionExpired,
    McpStreamEnded,
    SseEventTooLarge,
)
from zigai.mcp.wire.headers import encode_header_value
from zigai.mcp.wire.jsonrpc import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PARAM_PREFIX,
    HEADER_PROTOCOL_VERSION,
    JsonRpcError,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    encode,
    notification_message,
)
from zigai.mcp.wire.sse import LINE_OVERHEAD_BYTES, SseParser
from zigai.mcp.wire.transport import (
    DEFAULT_BACKLOG,
    MAX_SERVER_REQUESTS,
    POLL_SLICE_S,
    Exchange,
    NotificationSink,
    OutgoingRequest,
    Reply,
    ServerRequestHandler,
)
from zigai.security import UrlPolicy
from zigai.transport import (
    InvalidTransportRequest,
    RedirectRejected,
    ResponseTooLarge,
    StreamLineTooLarge,
    Transport,
    TransportRequest,
    TransportTimedOut,
)

if TYPE_CHECKING:
    from zigai.mcp.auth.flow import OAuthProvider
    from zigai.mcp.auth.tokens import TokenSet

__all__ = ["StreamableHttpTransport", "HeaderProvider"]

_log = logging.getLogger("zigai.mcp.http")
HeaderProvider = Callable[[OutgoingRequest], Sequence[tuple[str, str]]]
_ACCEPT = "application/json, text/event-stream"
#: Seconds a ``notifications/cancelled`` POST may take after a request is given up.
CANCEL_NOTICE_S = 2.0
_SESSION_HEADER = "Mcp-Session-Id"
_MAX_SESSION_ID = 256
_REPLY_TIMEOUT_S = 30.0
_MAX_RESUMES = 3
_LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")
_OWNED = frozenset({"content-type", "accept", HEADER_PROTOCOL_VERSION.lower(), HEADER_METHOD.lower(),
                    HEADER_NAME.lower(), "mcp-session-id", "last-event-id"})


def _owned(name: str) -> bool:
    lowered = name.lower()
    return lowered in _OWNED or lowered.startswith(HEADER_PARAM_PREFIX.lower())


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


class StreamableHttpTransport:
    """The Streamable HTTP :class:`~zigai.mcp.wire.transport.McpTransport` (see module docstring).

    ``transport`` defaults to a :class:`~zigai.transport.HttpTransport` built with the same
    ``url_policy`` and limits matching the MCP message profile; pass your own to share a pool
    (it is not closed by :meth:`close` then).  ``headers`` are static extra headers;
    ``header_provider`` returns per-attempt headers (for example a fresh credential).
    ``auth`` is an :class:`~zigai.mcp.auth.flow.OAuthProvider` that supplies and renews the
    Bearer token (see the module invariants); the transport does not close it.
    """

    mirrors_headers = True

    def __init__(
        self,
        url: str,
        *,
        transport: Transport | None = None,
        url_policy: UrlPolicy | None = None,
        headers: Sequence[tuple[str, str]] = (),
        header_provider: HeaderProvider | None = None,
        max_in_flight: int = 8,
        json_limits: Limits = defaults.mcp_message,
        backlog: int = DEFAULT_BACKLOG,
        auth: OAuthProvider | None = None,
    ) -> None:
        self.url_policy = url_policy or UrlPolicy()
        self.auth = auth
        self.url_policy.check(url)
        if isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) or max_in_flight < 1:
            raise InvalidMcpRequest("max_in_flight must be an int >= 1")
        self.url = url
        self.headers = tuple((str(k), str(v)) for k, v in headers)
        for name, _value in self.headers:
            if self._owned(name):
                raise InvalidMcpRequest(f"header {name!r} is set by the MCP transport itself")
        self.header_provider = header_provider
        self.max_in_flight = max_in_flight
        self.json_limits = json_limits
        self.backlog = backlog
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self._owns_transport = transport is None
        if transport is None:
            from zigai.transport import HttpTransport
            from zigai.transport import Limits as TransportLimits

            transport = HttpTransport(
                url_policy=self.url_policy,
                limits=TransportLimits(json_limits.max_document_bytes,
                                       json_limits.max_document_bytes + LINE_OVERHEAD_BYTES),
            )
        self._transport = transport
        self._closed = False
        self._session_id: str | None = None
        self._request_handler: ServerRequestHandler | None = None
        self._answering = threading.BoundedSemaphore(MAX_SERVER_REQUESTS)
        self._unrouted: NotificationSink | None = None
        self._listener_stop = CancellationToken()
        self._listener: threading.Thread | None = None

    def set_request_handler(self, handler: ServerRequestHandler | None) -> None:
        """Who answers requests the server sends on a response stream (2025 revisions)."""
        self._request_handler = handler

    def set_unrouted_sink(self, sink: NotificationSink | None) -> None:
        """Who receives notifications that belong to no request."""
        self._unrouted = sink

    @property
    def session_id(self) -> str | None:
        """The ``Mcp-Session-Id`` of the current 2025-revision session, if the server named one."""
        return self._session_id

    # -- McpTransport ----------------------------------------------------------------------

    def request(self, request: OutgoingRequest, *, deadline: float | None,
                is_cancelled: Callable[[], bool], on_notification: NotificationSink) -> Reply:
        headers = self._headers(request)
        self._acquire_slot(request, deadline, is_cancelled)
        exchange = Exchange(request.id, self.backlog)
        abort = threading.Event()
        stop = CancellationToken()
        worker = threading.Thread(target=self._run, args=(request, headers, exchange, abort, deadline, stop),
                                  daemon=True, name=f"zigai-mcp-http-{request.id!r}")
        try:
            worker.start()
        except BaseException:  # pragma: no cover - thread creation failure (resource exhaustion)
            self._slots.release()
            raise
        try:
            return exchange.wait(deadline, is_cancelled, on_notification)
        except (McpRequestCancelled, McpRequestTimedOut) as exc:
            self._announce_cancelled(request, "the request timed out" if isinstance(exc, McpRequestTimedOut)
                                     else "the client cancelled the request")
            raise
        finally:
            abort.set()  # the worker drops whatever it reads from now on
            stop.cancel("the MCP client stopped waiting for this response")

    def _announce_cancelled(self, request: OutgoingRequest, reason: str) -> None:
        """POST ``notifications/cancelled`` for ``request`` on a short-lived thread (best effort)."""
        if self._closed:
            return
        body = encode(notification_message("notifications/cancelled", {"requestId": request.id, "reason": reason}))

        def send() -> None:
            try:
                self.notify("notifications/cancelled", body, protocol_version=request.protocol_version,
                            deadline=time.monotonic() + CANCEL_NOTICE_S)
            except Exception as exc:  # the server may be gone: closing the stream already cancelled it
                _log.debug("notifications/cancelled for %r was not delivered: %s", request.id, exc)

        threading.Thread(target=send, daemon=True, name=f"zigai-mcp-http-cancel-{request.id!r}").start()

    def notify(self, method: str, body: bytes, *, protocol_version: str, deadline: float | None) -> None:
        outgoing = OutgoingRequest(id="", method=method, body=body, protocol_version=protocol_version)
        headers = self._headers(outgoing)
        self._acquire_slot(outgoing, deadline, lambda: False)
        try:
            rounds = _AuthRounds()
            fresh: TokenSet | None = None
            while True:
                sent = fresh or self._token(deadline)
                response = self._transport.send(TransportRequest("POST", self.url, self._with_token(headers, sent),
                                                                 body, deadline))
                challenge = self._auth_challenge(response.status, response.headers, rounds)
                if challenge is None:
                    break
                fresh = self._authorize(challenge, sent, deadline)
        except TransportError as exc:
            raise self._mapped(exc, f"notification {method!r}", deadline) from None
        finally:
            self._slots.release()
        self._check_session(response.status, headers)
        if response.status not in (200, 202, 204):
            raise McpHttpStatusError(f"{self._target()}: notification {method!r} answered HTTP {response.status}",
                                     status=response.status)
        if method == "notifications/initialized" and protocol_version in _LEGACY_VERSIONS:
            self._start_listener(protocol_version)

    def close(self) -> None:
        if self._closed:
            return
        self._listener_stop.cancel("the MCP HTTP transport was closed")
        session, self._session_id = self._session_id, None
        if session is not None:
            self._end_session(session)
        self._closed = True
        if self._listener is not None:
            self._listener.join(2.0)
        if self._owns_transport:
            close = getattr(self._transport, "close", None)
            if callable(close):
                close()

    def deinit(self) -> None:
        self.close()

    def __enter__(self) -> StreamableHttpTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------

    def _owned(self, name: str) -> bool:
        return _owned(name) or (self.auth is not None and name.lower() == "authorization")

    def _token(self, deadline: float | None) -> TokenSet | None:
        return None if self.auth is None else self.auth.token_for(self.url, deadline=deadline)

    @staticmethod
    def _with_token(headers: tuple[tuple[str, str], ...], sent: TokenSet | None) -> tuple[tuple[str, str], ...]:
        return headers if sent is None else (*headers, ("Authorization", f"Bearer {sent.access_token}"))

    def _auth_challenge(self, status: int, headers: Any, rounds: _AuthRounds) -> BearerChallenge | None:
        """The challenge to answer before retrying, None to handle the response normally."""
        if self.auth is None or status not in (401, 403):
            return None
        from zigai.mcp.auth.flow import AuthorizationRejected

        challenge = parse_bearer_challenge(headers.get_all("www-authenticate") or None)
        if status == 401:
            if rounds.reauthorized:
                raise AuthorizationRejected(
                    f"{self._target()}: still HTTP 401 after a new authorization; the server does not accept "
                    "the tokens its authorization server issues", status=401, error=(challenge or _NO_CHALLENGE).error or "")
            rounds.reauthorized = True
            return challenge or _NO_CHALLENGE
        if challenge is None or not challenge.insufficient_scope:
            return None
        if rounds.step_ups >= self.auth.max_step_ups:
            raise AuthorizationRejected(
                f"{self._target()}: still HTTP 403 insufficient_scope after {rounds.step_ups} step-up "
                "authorization(s); the scopes granted do not satisfy the server", status=403,
                error="insufficient_scope")
        rounds.step_ups += 1
        return challenge

    def _authorize(self, challenge: BearerChallenge, sent: TokenSet | None, deadline: float | None) -> TokenSet:
        """Re-authorize; the retry sends the token obtained here, even one already near expiry."""
        assert self.auth is not None
        return self.auth.authorize(self.url, None if challenge is _NO_CHALLENGE else challenge, sent=sent,
                            deadline=deadline)

    def _target(self) -> str:
        checked = self.url_policy.check(self.url)
        return f"{checked.scheme}://{checked.host}:{checked.port}"

    def _headers(self, request: OutgoingRequest) -> tuple[tuple[str, str], ...]:
        if self._closed:
            raise McpClientClosed("the MCP HTTP transport is closed")
        self.url_policy.check(self.url)
        headers = [("Content-Type", "application/json"), ("Accept", _ACCEPT),
                   (HEADER_PROTOCOL_VERSION, request.protocol_version), (HEADER_METHOD, request.method)]
        if request.name is not None:
            headers.append((HEADER_NAME, encode_header_value(request.name)))
        headers.extend(request.param_headers)
        if self._session_id is not None:
            headers.append((_SESSION_HEADER, self._session_id))
        headers.extend(self.headers)
        if self.header_provider is not None:
            for name, value in self.header_provider(request):
                if self._owned(name):
                    raise InvalidMcpRequest(f"header {name!r} is set by the MCP transport itself")
                headers.append((str(name), str(value)))
        return tuple(headers)

    def _acquire_slot(self, request: OutgoingRequest, deadline: float | None, is_cancelled: Callable[[], bool]) -> None:
        while not self._slots.acquire(timeout=POLL_SLICE_S if deadline is None
                                      else max(0.0, min(POLL_SLICE_S, deadline - time.monotonic()))):
            if is_cancelled():
                raise McpRequestCancelled(f"request {request.id!r} was cancelled while waiting for a slot")
            if deadline is not None and time.monotonic() >= deadline:
                raise McpRequestTimedOut(
                    f"request {request.id!r} timed out waiting for one of {self.max_in_flight} HTTP slots")

    def _mapped(self, exc: TransportError, what: str, deadline: float | None) -> Exception:
        target = self._target()
        if isinstance(exc, TransportTimedOut) and deadline is not None and time.monotonic() >= deadline:
            return McpRequestTimedOut(f"{target}: {what} timed out (its deadline passed)")
        if isinstance(exc, ResponseTooLarge):
            return McpMessageTooLarge(f"{target}: MCP response exceeds {exc.limit} bytes", limit=exc.limit)
        if isinstance(exc, StreamLineTooLarge):
            limit = max(0, exc.limit - LINE_OVERHEAD_BYTES)
            return SseEventTooLarge(f"{target}: an SSE line exceeds {exc.limit} bytes", limit=limit)
        if isinstance(exc, RedirectRejected):
            return McpHttpStatusError(f"{target}: redirect {exc.status} refused (never followed)", status=exc.status)
        if isinstance(exc, InvalidTransportRequest):
            return InvalidMcpRequest(f"{target}: {exc}")
        return McpConnectionFailed(f"{target}: {exc}")

    def _run(self, request: OutgoingRequest, headers: tuple[tuple[str, str], ...], exchange: Exchange,
             abort: threading.Event, deadline: float | None, stop: CancellationToken) -> None:
        try:
            rounds = _AuthRounds()
            fresh: TokenSet | None = None
            while True:
                sent = fresh or self._token(deadline)
                transport_request = TransportRequest("POST", self.url, self._with_token(headers, sent), request.body,
                                                     deadline, cancellation=stop)
                with self._transport.stream_lines(transport_request) as response:
                    challenge = self._auth_challenge(response.status, response.headers, rounds)
                    if challenge is None:
                        self._check_session(response.status, headers)
                        self._keep_session(response, request)
                        self._consume(response, request, exchange, abort, deadline)
                        return
                if abort.is_set():
                    return
                fresh = self._authorize(challenge, sent, deadline)
        except TransportError as exc:
            exchange.fail(self._mapped(exc, f"request {request.id!r}", deadline))
        except (SecurityError, Exception) as exc:
            exchange.fail(exc)
        finally:
            self._slots.release()

    def _consume(self, response: Any, request: OutgoingRequest, exchange: Exchange,
                 abort: threading.Event, deadline: float | None) -> None:
        media = _media_type(response.headers.get("content-type"))
        status = response.status
        if media == "text/event-stream" and 200 <= status < 300:
            self._consume_events(response, request, exchange, abort, deadline)
            return
        body = response.read_body()
        if media == "application/json" or (status >= 400 and body.strip().startswith(b"{")):
            try:
                message = decode_message(body, self.json_limits)
            except InvalidMcpMessage:
                if status >= 400:
                    raise McpHttpStatusError(f"{self._target()}: HTTP {status} for {request.method!r}",
                                             status=status) from None
                raise
            if isinstance(message, (JsonRpcResponse, JsonRpcError)) and message.id in (request.id, None):
                if isinstance(message, JsonRpcError) or 200 <= status < 300:
                    exchange.resolve(message)
                    return
            if status >= 400:  # an error about the HTTP request itself (for example a missing session)
                raise McpHttpStatusError(f"{self._target()}: HTTP {status} for {request.method!r}", status=status)
            raise InvalidMcpMessage(f"{self._target()}: the JSON body is not the response to request {request.id!r}")
        if 200 <= status < 300:
            raise InvalidMcpMessage(f"{self._target()}: unexpected content type {media or 'none'!r} "
                                    f"for {request.method!r} (HTTP {status})")
        raise McpHttpStatusError(f"{self._target()}: HTTP {status} for {request.method!r}", status=status)

    def _consume_events(self, response: Any, request: OutgoingRequest, exchange: Exchange,
                        abort: threading.Event, deadline: float | None) -> None:
        parser = SseParser(self.json_limits.max_document_bytes)
        if self._read_events(response, parser, request, exchange, abort, deadline):
            return
        resumes = 0
        while request.protocol_version in _LEGACY_VERSIONS and parser.last_event_id is not None \
                and resumes < _MAX_RESUMES and not abort.is_set():
            resumes += 1  # a 2025 server may let the stream resume after its last event id
            wait_s = (parser.retry_ms or 0) / 1000  # the server's retry hint comes first
            if deadline is not None:
                wait_s = min(wait_s, max(0.0, deadline - time.monotonic()))
            if abort.wait(wait_s):
                return
            with self._transport.stream_lines(self._get_request(request.protocol_version, parser.last_event_id,
                                                                deadline, None)) as resumed:
                if resumed.status != 200 or _media_type(resumed.headers.get("content-type")) != "text/event-stream":
                    break
                if self._read_events(resumed, parser, request, exchange, abort, deadline):
                    return
        if not abort.is_set():
            exchange.fail(McpStreamEnded(f"{self._target()}: the response stream for {request.method!r} "
                                         "ended before its response"))

    def _read_events(self, response: Any, parser: SseParser, request: OutgoingRequest, exchange: Exchange,
                     abort: threading.Event, deadline: float | None) -> bool:
        """Feed one stream's events; True once the response arrived (or the caller stopped waiting)."""
        for piece in _pieces(response):
            if abort.is_set():
                return True
            for event in parser.feed(piece):
                if self._take_event(event.event, event.data, request, exchange, abort, deadline):
                    return True
        for event in parser.finish():
            if self._take_event(event.event, event.data, request, exchange, abort, deadline):
                return True
        return abort.is_set()

    def _take_event(self, kind: str, data: bytes, request: OutgoingRequest, exchange: Exchange,
                    abort: threading.Event, deadline: float | None) -> bool:
        if kind != "message" or not data.strip():  # an empty event primes resumption (2025-11-25)
            return False
        message = decode_message(data, self.json_limits)
        if isinstance(message, (JsonRpcResponse, JsonRpcError)):
            if message.id == request.id:
                exchange.resolve(message)
                return True
            return False
        if isinstance(message, JsonRpcNotification):
            exchange.push(message, wait_until=deadline, may_wait=True, should_stop=abort.is_set)
        elif isinstance(message, JsonRpcRequest):
            self._start_answer(message, request.protocol_version)
        return False

    # -- 2025-revision sessions ---------------------------------------------------------------

    def _keep_session(self, response: Any, request: OutgoingRequest) -> None:
        if request.method != "initialize" or not 200 <= response.status < 300:
            return
        value = response.headers.get(_SESSION_HEADER.lower())
        if value is None:
            self._session_id = None
            return
        if not value or len(value) > _MAX_SESSION_ID or not all(0x21 <= ord(c) <= 0x7E for c in value):
            raise InvalidMcpMessage(f"{self._target()}: the Mcp-Session-Id must be 1 to {_MAX_SESSION_ID} "
                                    "visible ASCII characters")
        self._session_id = value

    def _check_session(self, status: int, headers: Sequence[tuple[str, str]]) -> None:
        sent = next((value for name, value in headers if name == _SESSION_HEADER), None)
        if status == 404 and sent is not None:
            if self._session_id == sent:
                self._session_id = None
            raise McpSessionExpired(f"{self._target()}: the server no longer knows this MCP session (HTTP 404)")

    def _start_answer(self, message: JsonRpcRequest, version: str) -> None:
        """Answer on a thread of its own, at most MAX_SERVER_REQUESTS at once (else dropped)."""
        if not self._answering.acquire(blocking=False):
            _log.warning("%s: dropped the server's %s request: %d server requests are already in flight",
                         self._target(), message.method, MAX_SERVER_REQUESTS)
            return
        threading.Thread(target=self._answer_in_slot, args=(message, version), daemon=True,
                         name=f"zigai-mcp-http-answer-{message.id!r}").start()

    def _answer_in_slot(self, message: JsonRpcRequest, version: str) -> None:
        try:
            self._answer(message, version)
        finally:
            self._answering.release()

    def _answer(self, message: JsonRpcRequest, version: str) -> None:
        handler = self._request_handler
        if handler is None:
            reply = {"jsonrpc": "2.0", "id": message.id,
                     "error": {"code": -32601, "message": f"the client does not handle {message.method}"}}
        else:
            try:
                reply = handler(message)
            except Exception:  # the handler builds its own error replies; this is a bug in it
                _log.exception("the MCP server-request handler raised")
                reply = {"jsonrpc": "2.0", "id": message.id,
                         "error": {"code": -32603, "message": "the client failed to answer"}}
        headers = [("Content-Type", "application/json"), ("Accept", _ACCEPT), (HEADER_PROTOCOL_VERSION, version)]
        if self._session_id is not None:
            headers.append((_SESSION_HEADER, self._session_id))
        headers.extend(self.headers)
        deadline = time.monotonic() + _REPLY_TIMEOUT_S
        try:
            sent = self._token(deadline)
            response = self._transport.send(TransportRequest("POST", self.url, self._with_token(tuple(headers), sent),
                                                             encode(reply), deadline))
            if response.status not in (200, 202, 204):
                _log.warning("%s: the reply to the server's %s request was answered HTTP %d",
                             self._target(), message.method, response.status)
        except (TransportError, McpError, SecurityError) as exc:
            _log.warning("%s: could not send the reply to the server's %s request: %s",
                         self._target(), message.method, type(exc).__name__)

    def _get_request(self, version: str, last_event_id: str | None, deadline: float | None,
                     cancellation: CancellationToken | None) -> TransportRequest:
        headers = [("Accept", "text/event-stream"), (HEADER_PROTOCOL_VERSION, version)]
        if self._session_id is not None:
            headers.append((_SESSION_HEADER, self._session_id))
        if last_event_id is not None:
            headers.append(("Last-Event-ID", last_event_id))
        headers.extend(self.headers)
        return TransportRequest("GET", self.url, self._with_token(tuple(headers), self._token(deadline)), None,
                                deadline, cancellation=cancellation)

    def _start_listener(self, version: str) -> None:
        if (self._listener is None or not self._listener.is_alive()) and not self._closed:
            self._listener = threading.Thread(target=self._listen, args=(version,), daemon=True,
                                              name="zigai-mcp-http-listener")
            self._listener.start()

    def _listen(self, version: str) -> None:
        """The standalone GET stream (see module docstring); ends quietly on any refusal."""
        parser = SseParser(self.json_limits.max_document_bytes)
        failures = 0
        while not self._listener_stop.cancelled and failures <= _MAX_RESUMES:
            try:
                with self._transport.stream_lines(self._get_request(version, parser.last_event_id, None,
                                                                    self._listener_stop)) as response:
                    if response.status != 200 or \
                            _media_type(response.headers.get("content-type")) != "text/event-stream":
                        return  # 405: the server offers no standalone stream
                    failures = 0
                    for piece in _pieces(response):
                        for event in parser.feed(piece):
                            self._stream_event(event.event, event.data, version)
            except Exception as exc:  # TransportError, a bound, Cancelled: all end this attempt
                if self._listener_stop.cancelled:
                    return
                _log.debug("%s: the MCP GET stream broke (%s); reconnecting", self._target(), type(exc).__name__)
            failures += 1
            retry_s = parser.retry_ms / 1000 if parser.retry_ms is not None else min(0.1 * 2 ** failures, 2.0)
            self._listener_stop.wait(retry_s)

    def _stream_event(self, kind: str, data: bytes, version: str) -> None:
        if kind != "message" or not data.strip():
            return
        try:
            message = decode_message(data, self.json_limits)
        except InvalidMcpMessage as exc:
            _log.warning("%s: dropped an invalid message on the GET stream: %s", self._target(), exc)
            return
        if isinstance(message, JsonRpcRequest):
            self._start_answer(message, version)
        elif isinstance(message, JsonRpcNotification) and self._unrouted is not None:
            try:
                self._unrouted(message)
            except Exception:  # the listener must survive application callbacks
                _log.exception("the MCP notification sink raised")

    def _end_session(self, session: str) -> None:
        headers = [(_SESSION_HEADER, session), *self.headers]
        deadline = time.monotonic() + 2.0
        try:
            sent = self._token(deadline)
            self._transport.send(TransportRequest("DELETE", self.url, self._with_token(tuple(headers), sent),
                                                  None, deadline))
        except (TransportError, McpError, SecurityError) as exc:  # a server may refuse (405) or be gone
            _log.info("%s: ending the MCP session failed: %s", self._target(), type(exc).__name__)


class _AuthRounds:
    """How many re-authorizations one request has used (request-local)."""

    __slots__ = ("reauthorized", "step_ups")

    def __init__(self) -> None:
        self.reauthorized = False
        self.step_ups = 0


_NO_CHALLENGE = BearerChallenge()


def _pieces(response: Any) -> Iterator[bytes]:
    chunks = getattr(response, "chunks", None)
    if callable(chunks):
        yield from chunks()
        return
    for line in response.lines():
        yield line + b"\n"
