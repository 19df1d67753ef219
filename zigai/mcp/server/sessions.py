"""Server-side sessions of the 2025 revisions: ``initialize``, the bounded session table, legacy requests.

Job
    Let a :class:`~zigai.mcp.Server` serve clients that open with ``initialize`` on 2025-11-25 or
    2025-06-18: answer the handshake (agreeing on the client's revision when zigai speaks it,
    else on the newest 2025 one), keep each session's revision, client capabilities, identity
    and log level in a bounded table with idle expiry, and turn a request of that session
    (which carries no ``_meta`` envelope) into the same facts a 2026-07-28 request carries, so
    every handler serves both eras.  ``serve_stdio`` holds one session per connection;
    ``server.http`` keys sessions by ``Mcp-Session-Id`` and ends them on ``DELETE``.

Invariants
    * The table holds at most ``max_sessions``; idle sessions (``idle_s`` without a request)
      are dropped first; a full table refuses a new ``initialize`` with -32603 "server busy".
    * A session id is 32 random URL-safe characters (visible ASCII, as the revisions require);
      an unknown or expired id is answered 404 over HTTP.
    * Methods of the other era are unknown in a session (``server/discover``,
      ``subscriptions/listen`` -> -32601); ``ping``, ``logging/setLevel`` and
      ``resources/(un)subscribe`` are served here.
    * A handler's ``ask()`` in a session becomes real requests to the client (sampling,
      elicitation, roots) over the channel the transport passes as ``send``, answered through
      the session's :class:`~zigai.mcp.server.outbound.ClientCalls`; without a channel (a
      request handled in process) it is refused with -32600, naming 2026-07-28.
    * The server's change notifications reach every session whose transport attached a push
      channel (stdio: the pipe; HTTP: the session's GET stream); ``resources/updated`` only
      those subscribed to the URI.  Ending a session (DELETE, expiry, end of input) ends its
      waits and its GET stream.
    * Results keep the 2025 shapes: a non-object ``structuredContent`` is dropped (the content
      blocks still carry the value) and so is a tool's non-object ``outputSchema``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from zigai.control import CancellationToken, RunControl
from zigai.mcp.errors import (
    InternalError,
    InvalidMcpMessage,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
)
from zigai.mcp.server.input import RoundInput
from zigai.mcp.server.outbound import ClientCalls, Pushes, Send
from zigai.mcp.server.request import ServerRequest
from zigai.mcp.wire.input import InputRequest
from zigai.mcp.wire.jsonrpc import (
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    JsonRpcRequest,
    error_message,
    result_message,
)
from zigai.mcp.wire.primitives import (
    ClientCapabilities,
    Implementation,
    LogLevel,
    Notification,
    ServerCapabilities,
)
from zigai.mcp.wire.revisions import LEGACY_VERSIONS, MODERN_ONLY_METHODS

__all__ = ["LegacySession", "SessionTable", "DEFAULT_MAX_SESSIONS", "DEFAULT_SESSION_IDLE_S", "initialize_reply",
           "legacy_result", "legacy_capabilities", "serve_session", "needs_modern_input", "http_session", "legacy_shape", "opens_session", "SESSION_HEADER"]

DEFAULT_MAX_SESSIONS = 1024
DEFAULT_SESSION_IDLE_S = 3600.0
SESSION_HEADER = "Mcp-Session-Id"


@dataclass(slots=True)
class LegacySession:
    """One 2025-revision session: what ``initialize`` said, and what the client set since."""

    id: str
    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None
    log_level: LogLevel | None = None
    initialized: bool = False
    last_seen: float = field(default_factory=time.monotonic)
    calls: ClientCalls = field(default_factory=ClientCalls)
    pushes: Pushes = field(default_factory=Pushes)

    @property
    def ended(self) -> bool:
        return self.calls.ended.is_set()


class SessionTable:
    """The bounded, expiring table of a server's 2025 sessions (see module invariants)."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS, idle_s: float = DEFAULT_SESSION_IDLE_S) -> None:
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._sessions: dict[str, LegacySession] = {}
        self.streams_closing = threading.Event()  # set by Server.close_listeners: GET streams end

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def open(self, version: str, capabilities: ClientCapabilities, client_info: Implementation | None) -> LegacySession:
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            if len(self._sessions) >= self.max_sessions:
                raise InternalError(f"server busy: {self.max_sessions} sessions are open")
            session = LegacySession(secrets.token_urlsafe(24), version, capabilities, client_info, last_seen=now)
            self._sessions[session.id] = session
            return session

    def get(self, session_id: str) -> LegacySession | None:
        """The live session with this id (its idle clock restarts), or None."""
        now = time.monotonic()
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            if now - session.last_seen > self.idle_s:
                del self._sessions[session_id]
                session.calls.ended.set()
                return None
            session.last_seen = now
            return session

    def alive(self, session: LegacySession) -> bool:
        """Whether ``session`` is still open (its idle clock is not restarted; an idle one expires)
        and its GET stream may go on (not after ``Server.close_listeners``)."""
        if self.streams_closing.is_set():
            return False
        with self._lock:
            if not session.ended and time.monotonic() - session.last_seen > self.idle_s:
                self._sessions.pop(session.id, None)
                session.calls.ended.set()
        return not session.ended

    def close(self, session_id: str) -> bool:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        session.calls.ended.set()
        return True

    def publish(self, method: str, params: Mapping[str, Any]) -> int:
        """Push one change notification to the sessions that take it; how many did."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            live = list(self._sessions.values())
        return sum(session.pushes.push(method, params) for session in live)

    def _expire(self, now: float) -> None:
        for key in [key for key, session in self._sessions.items() if now - session.last_seen > self.idle_s]:
            self._sessions.pop(key).calls.ended.set()


def opens_session(request: JsonRpcRequest, header_version: str | None = None) -> bool:
    """Whether a request is a 2025 ``initialize``: one that carries no 2026-07-28 envelope (and,
    over HTTP, no 2026 ``MCP-Protocol-Version``).  A 2026 request for ``initialize`` is served
    by the ladder, which answers -32601: that revision removed the method."""
    if request.method != "initialize":
        return False
    meta = (request.params or {}).get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return False
    return header_version is None or header_version not in SUPPORTED_VERSIONS


class Server(Protocol):
    """What a 2025 session needs of :class:`zigai.mcp.Server` (structural, so the server module
    imports this one and not the other way round)."""

    sessions: SessionTable
    info: Implementation
    instructions: str | None
    request_timeout_ms: int | None

    def capabilities(self) -> ServerCapabilities: ...

    def _handler_for(self, method: str) -> Callable[[ServerRequest], Mapping[str, Any]]: ...

    def _serve(self, handler: Callable[[ServerRequest], Mapping[str, Any]], context: ServerRequest,
               round_input: RoundInput, legacy: bool = False) -> dict[str, Any]: ...


def initialize_reply(server: Server, request: JsonRpcRequest) -> tuple[dict[str, Any], LegacySession | None]:
    """Answer ``initialize``: the reply and the new session (None when refused)."""
    params = request.params or {}
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        return error_message(request.id, InvalidParams("initialize needs a protocolVersion string").to_json()), None
    version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
    try:
        capabilities = ClientCapabilities.from_json(params.get("capabilities", {}))
    except InvalidMcpMessage as exc:
        return error_message(request.id, InvalidParams(f"invalid client capabilities: {exc}").to_json()), None
    try:
        session = server.sessions.open(version, capabilities, Implementation.from_json(params.get("clientInfo")))
    except InternalError as exc:
        return error_message(request.id, exc.to_json()), None
    result: dict[str, Any] = {"protocolVersion": version, "serverInfo": server.info.to_json(),
                              "capabilities": legacy_capabilities(server.capabilities().to_json())}
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result_message(request.id, result), session


def serve_session(server: Server, session: LegacySession, request: JsonRpcRequest, params: dict[str, Any],
                  meta: Any, *, headers: Mapping[str, tuple[str, ...]] | None, tls: bool | None,
                  emit: Callable[[Notification], None] | None, token: CancellationToken | None,
                  send: Send | None = None) -> dict[str, Any]:
    """Serve one request of a 2025 session: this module's own methods, else the server's handler.

    ``send`` carries this request's requests to the client (None: the handler cannot ask)."""
    own = legacy_result(session, request.method, params)
    if own is not None:
        return own
    handler = server._handler_for(request.method)
    progress = meta.get("progressToken") if isinstance(meta, dict) else None
    control = RunControl.start(server.request_timeout_ms, token=token)
    context = ServerRequest(
        id=request.id, method=request.method, params=params, protocol_version=session.protocol_version,
        client_capabilities=session.client_capabilities, client_info=session.client_info, log_level=session.log_level,
        progress_token=progress if isinstance(progress, (int, str)) and not isinstance(progress, bool) else None,
        control=control, headers=headers, tls=tls, emit_fn=emit,
        ask_client=None if send is None else _asker(session, send, control))
    return server._serve(handler, context, context.input, legacy=True)


def _asker(session: LegacySession, send: Send, control: RunControl) -> Callable[[Sequence[InputRequest], RoundInput],
                                                                                  None]:
    def ask(requests: Sequence[InputRequest], round_input: RoundInput) -> None:
        for request in requests:  # one at a time, in the handler's order, as a person answers them
            round_input.responses[request.key] = session.calls.call(send, request.method, request.params, control)

    return ask


def http_session(server: Server, headers: Mapping[str, tuple[str, ...]]) -> tuple[LegacySession | None, str | None]:
    """The session an HTTP request names, or why it is refused (answered 404 / 400)."""
    named = headers.get(SESSION_HEADER.lower())
    if not named:
        return None, None
    session = server.sessions.get(named[0])
    if session is None:
        return None, "404 the MCP session is unknown or expired; initialize a new one"
    version = headers.get("mcp-protocol-version")
    if version and version[0] not in (session.protocol_version, PROTOCOL_VERSION):
        return None, f"400 MCP-Protocol-Version {version[0]!r} is not this session's {session.protocol_version}"
    return session, None


def legacy_shape(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A result as the 2025 revisions define it: structured content and output schemas are objects."""
    if method == "tools/call" and "structuredContent" in result and not isinstance(result["structuredContent"], dict):
        del result["structuredContent"]  # 2026 allows any JSON value; the text content still carries it
    if method == "tools/list" and isinstance(result.get("tools"), list):
        for tool in result["tools"]:
            schema = tool.get("outputSchema") if isinstance(tool, dict) else None
            if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):
                del tool["outputSchema"]
    return result


def needs_modern_input(method: str, version: str) -> InvalidRequest:
    return InvalidRequest(f"{method} needs input from the client, which needs MCP {PROTOCOL_VERSION}; "
                          f"this session speaks {version}")


def legacy_capabilities(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The 2026 capability object as a session declares it (the same, less the 2026 extensions)."""
    return {name: settings for name, settings in capabilities.items() if name != "extensions"}


def legacy_result(session: LegacySession, method: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The result of a method this module serves itself, None for the server's own handlers."""
    if method in MODERN_ONLY_METHODS or method == "server/discover":
        raise MethodNotFound(f"Method not found: {method} (it needs MCP {PROTOCOL_VERSION}; this session speaks "
                             f"{session.protocol_version})", data={"method": method})
    if method == "ping":
        return {}
    if method == "logging/setLevel":
        try:
            session.log_level = LogLevel(params.get("level"))
        except ValueError:
            raise InvalidParams(f"unknown log level {params.get('level')!r}") from None
        return {}
    if method == "resources/subscribe":
        session.pushes.subscribe(params.get("uri"))
        return {}
    if method == "resources/unsubscribe":
        session.pushes.unsubscribe(params.get("uri"))
        return {}
    return None
