"""The MCP transport contract and the request-local exchange both built-in transports share.

Job
    :class:`McpTransport` is what :class:`zigai.mcp.Client` talks to: send one encoded
    request and wait for its response while its request-scoped notifications are delivered,
    send a notification, close.  :class:`OutgoingRequest` carries the encoded body plus the
    routing facts an HTTP transport mirrors into headers.  :class:`Exchange` is the request-local
    mailbox between the thread that reads the wire and the thread that waits for the answer.

Invariants
    * Notifications are handed to the sink on the *waiting* thread, in arrival order; a sink
      exception ends the wait and propagates unchanged (the transport then abandons the
      request: HTTP closes its stream, stdio sends ``notifications/cancelled``).
    * An exchange holds at most ``backlog`` undelivered notifications; a producer that cannot
      wait fails the exchange with :class:`NotificationBacklogFull` instead of growing memory.
    * The wait ends no later than the deadline (:class:`McpRequestTimedOut`) and within one
      polling slice of cancellation (:class:`McpRequestCancelled`); cancellation wins when both
      hold.  No state crosses exchanges.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from zigai.mcp.errors import (
    McpRequestCancelled,
    McpRequestTimedOut,
    NotificationBacklogFull,
)
from zigai.mcp.wire.jsonrpc import (
    JsonRpcError,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    RequestId,
)

__all__ = [
    "OutgoingRequest",
    "Reply",
    "NotificationSink",
    "ServerRequestHandler",
    "McpTransport",
    "Exchange",
    "DEFAULT_BACKLOG",
    "MAX_SERVER_REQUESTS",
    "POLL_SLICE_S",
]

DEFAULT_BACKLOG = 1024
#: Server requests a built-in transport answers at once; one more is refused at once (stdio:
#: -32603 "client busy"; HTTP: dropped with a warning) instead of starting another thread.
MAX_SERVER_REQUESTS = 16
POLL_SLICE_S = 0.05

Reply = JsonRpcResponse | JsonRpcError
NotificationSink = Callable[[JsonRpcNotification], None]
ServerRequestHandler = Callable[[JsonRpcRequest], dict[str, Any]]
"""Answers one request a (2025-revision) server sent: the full JSON-RPC reply message.  The
built-in transports call it on a thread of its own, so it may block (at most
:data:`MAX_SERVER_REQUESTS` at once per transport); a transport without
``set_request_handler(handler)`` answers such requests -32601.  ``set_unrouted_sink(sink)``
likewise receives notifications that belong to no request (when the transport has no
application sink of its own)."""


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """One encoded JSON-RPC request and the facts a header-mirroring transport needs.

    ``name`` is the ``Mcp-Name`` source (tool or prompt name, resource URI) when the method
    has one; ``param_headers`` are the encoded ``Mcp-Param-*`` pairs of a ``tools/call``;
    ``stream`` marks a request whose response is a long-lived notification stream
    (``subscriptions/listen``); ``progress_token`` is the ``_meta.progressToken`` it carries.
    """

    id: RequestId
    method: str
    body: bytes
    protocol_version: str
    name: str | None = None
    param_headers: tuple[tuple[str, str], ...] = ()
    stream: bool = False
    progress_token: RequestId | None = None


@runtime_checkable
class McpTransport(Protocol):
    """What the MCP client sends through.  Implementations must be safe to call from many threads."""

    @property
    def mirrors_headers(self) -> bool:
        """True when routing facts travel as HTTP headers (then ``x-mcp-header`` applies)."""
        ...

    def request(
        self,
        request: OutgoingRequest,
        *,
        deadline: float | None,
        is_cancelled: Callable[[], bool],
        on_notification: NotificationSink,
    ) -> Reply:
        """Send ``request``; deliver its notifications; return its response or error reply."""
        ...

    def notify(self, method: str, body: bytes, *, protocol_version: str, deadline: float | None) -> None:
        """Send one encoded notification (fire and forget)."""
        ...

    def close(self) -> None:
        ...


class Exchange:
    """The mailbox of one in-flight request (see module invariants)."""

    __slots__ = ("request_id", "backlog", "_lock", "_changed", "_notes", "_reply", "_error")

    def __init__(self, request_id: RequestId, backlog: int = DEFAULT_BACKLOG) -> None:
        self.request_id = request_id
        self.backlog = backlog
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._notes: deque[JsonRpcNotification] = deque()
        self._reply: Reply | None = None
        self._error: BaseException | None = None

    @property
    def done(self) -> bool:
        with self._lock:
            return self._reply is not None or self._error is not None

    def push(self, notification: JsonRpcNotification, *, wait_until: float | None = None,
             may_wait: bool = False, should_stop: Callable[[], bool] = lambda: False) -> bool:
        """Queue a notification; False when the exchange is finished and it was dropped.

        With ``may_wait`` the producer blocks (up to ``wait_until``) while the backlog is full,
        which pushes back on the peer; otherwise a full backlog fails the exchange.
        """
        with self._changed:
            while len(self._notes) >= self.backlog and self._reply is None and self._error is None:
                if not may_wait or should_stop():
                    self._error = NotificationBacklogFull(
                        f"request {self.request_id!r}: more than {self.backlog} notifications are "
                        "waiting for the sink", limit=self.backlog)
                    self._changed.notify_all()
                    return False
                left = None if wait_until is None else wait_until - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(POLL_SLICE_S if left is None else min(left, POLL_SLICE_S))
            if self._reply is not None or self._error is not None:
                return False
            self._notes.append(notification)
            self._changed.notify_all()
            return True

    def resolve(self, reply: Reply) -> None:
        with self._changed:
            if self._reply is None and self._error is None:
                self._reply = reply
                self._changed.notify_all()

    def fail(self, error: BaseException) -> None:
        with self._changed:
            if self._reply is None and self._error is None:
                self._error = error
                self._changed.notify_all()

    def wait(self, deadline: float | None, is_cancelled: Callable[[], bool],
             on_notification: NotificationSink) -> Reply:
        """Deliver notifications on this thread until the reply (or a failure) arrives."""
        while True:
            with self._changed:
                while True:
                    finished = self._reply is not None or self._error is not None
                    if not finished:
                        if is_cancelled():
                            raise McpRequestCancelled(f"request {self.request_id!r} was cancelled")
                        if deadline is not None and time.monotonic() >= deadline:
                            raise McpRequestTimedOut(f"request {self.request_id!r} timed out")
                    if self._notes or finished:
                        break
                    left = None if deadline is None else deadline - time.monotonic()
                    self._changed.wait(POLL_SLICE_S if left is None else max(0.0, min(left, POLL_SLICE_S)))
                note = self._notes.popleft() if self._notes else None
                if note is not None:
                    self._changed.notify_all()  # room for a waiting producer
                elif self._error is not None:
                    raise self._error
                else:
                    assert self._reply is not None
                    return self._reply
            on_notification(note)
