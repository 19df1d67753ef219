"""InProcessTransport: a :class:`~zigai.mcp.Client` talking to a :class:`~zigai.mcp.Server` in this process.

Job
    Hand each encoded request to :meth:`Server.handle` on a worker thread and deliver what it
    emits, with the same deadline, cancellation and notification semantics as the wire
    transports.  For tests and for embedding a server next to the agent that uses it.

Invariants
    * Messages still travel as encoded JSON bounded by the server's limits: nothing is shared
      between client and server by reference.
    * Cancellation and deadlines cancel the server-side request token; the caller returns at
      once and the worker finishes in the background.  No routing headers are mirrored (as on
      stdio).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from zigai.control import CancellationToken
from zigai.mcp.errors import InvalidMcpMessage, McpClientClosed
from zigai.mcp.server.server import NO_REPLY, Server
from zigai.mcp.wire.jsonrpc import JsonRpcError, JsonRpcNotification, JsonRpcResponse, classify
from zigai.mcp.wire.primitives import Notification
from zigai.mcp.wire.transport import (
    DEFAULT_BACKLOG,
    Exchange,
    NotificationSink,
    OutgoingRequest,
    Reply,
)

__all__ = ["InProcessTransport"]


class InProcessTransport:
    """The in-process :class:`~zigai.mcp.wire.transport.McpTransport` (see module docstring)."""

    mirrors_headers = False

    def __init__(self, server: Server, *, backlog: int = DEFAULT_BACKLOG) -> None:
        self.server = server
        self.backlog = backlog
        self._closed = False

    def request(self, request: OutgoingRequest, *, deadline: float | None,
                is_cancelled: Callable[[], bool], on_notification: NotificationSink) -> Reply:
        if self._closed:
            raise McpClientClosed("the in-process MCP transport is closed")
        exchange = Exchange(request.id, self.backlog)
        token = CancellationToken()

        def emit(notification: Notification) -> None:
            exchange.push(JsonRpcNotification(notification.method, notification.to_json().get("params")),
                          may_wait=True, should_stop=lambda: token.cancelled)

        def work() -> None:
            try:
                reply = self.server.handle(request.body, emit=emit, token=token)
                if reply is None or reply is NO_REPLY:
                    return
                message = classify(reply)
                if isinstance(message, (JsonRpcResponse, JsonRpcError)):
                    exchange.resolve(message)
                else:  # pragma: no cover - the server only answers requests with responses
                    exchange.fail(InvalidMcpMessage("the server answered with a non-response"))
            except BaseException as exc:  # pragma: no cover - Server.handle maps handler failures
                exchange.fail(exc)

        threading.Thread(target=work, daemon=True, name=f"zigai-mcp-inprocess-{request.id!r}").start()
        try:
            return exchange.wait(deadline, is_cancelled, on_notification)
        finally:
            token.cancel("the client stopped waiting")

    def notify(self, method: str, body: bytes, *, protocol_version: str, deadline: float | None) -> None:
        if self._closed:
            raise McpClientClosed("the in-process MCP transport is closed")
        self.server.handle(body)

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> InProcessTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
