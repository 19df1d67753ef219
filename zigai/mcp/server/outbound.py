"""What a server sends a 2025 session's client unasked: requests awaiting answers, pushed notifications.

Job
    The 2025 revisions let a server send requests to its client (``sampling/createMessage``,
    ``elicitation/create``, ``roots/list``) and notifications outside any reply
    (``notifications/*/list_changed``, ``notifications/resources/updated``).
    :class:`ClientCalls` numbers a session's outgoing requests, hands each to the channel the
    transport gives it (the stdio pipe, or the POST's SSE stream over HTTP), and waits for the
    response the transport routes back by session and id.  :class:`Pushes` holds the one
    channel a session's unrelated notifications go to (the stdio pipe, or the session's GET
    SSE stream) and the resource URIs the client subscribed to.

Invariants
    * At most ``MAX_PENDING`` requests of one session await an answer; one more is refused
      with :class:`~zigai.mcp.InternalError` before anything is sent.
    * A wait ends with the answer, the request's cancellation or deadline, the session's end,
      or ``CLIENT_ANSWER_S`` — never later; a request given up on is cancelled at the client
      (``notifications/cancelled``) and a late answer to it is dropped.
    * A response whose id this session did not send is dropped (``resolve`` says False).
    * A session subscribes to at most ``MAX_SUBSCRIPTIONS`` URIs; ``resources/updated`` goes
      only to sessions subscribed to its URI, list changes to every session with a channel.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from zigai.control import RunControl
from zigai.mcp.errors import InternalError, InvalidParams, McpErrorResponse
from zigai.mcp.wire.jsonrpc import (
    JsonRpcError,
    JsonRpcResponse,
    notification_message,
    request_message,
)

__all__ = ["ClientCalls", "Pushes", "Send", "MAX_PENDING", "MAX_SUBSCRIPTIONS", "CLIENT_ANSWER_S"]

Send = Callable[[dict[str, Any]], None]
MAX_PENDING = 64
MAX_SUBSCRIPTIONS = 1024
CLIENT_ANSWER_S = 300.0
_POLL_S = 0.05


class _Slot:
    __slots__ = ("done", "message")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: JsonRpcResponse | JsonRpcError | None = None


class ClientCalls:
    """The requests one session's server sent its client and is waiting on (see module invariants)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Slot] = {}
        self.ended = threading.Event()

    def call(self, send: Send, method: str, params: Mapping[str, Any], control: RunControl,
             wait_s: float = CLIENT_ANSWER_S) -> dict[str, Any]:
        """Send ``method`` to the client and return its result; raise McpErrorResponse otherwise."""
        slot = _Slot()
        with self._lock:
            if len(self._pending) >= MAX_PENDING:
                raise InternalError(f"server busy: {MAX_PENDING} requests to this client are awaiting answers")
            request_id = next(self._ids)
            self._pending[request_id] = slot
        try:
            send(request_message(request_id, method, dict(params)))
            end = time.monotonic() + wait_s
            while not slot.done.wait(_POLL_S):
                why = self._why_stop(control, end)
                if why is not None:
                    send(notification_message("notifications/cancelled", {"requestId": request_id, "reason": why}))
                    raise InternalError(f"the client did not answer {method}: {why}")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        message = slot.message
        if isinstance(message, JsonRpcError):
            raise McpErrorResponse(f"the client refused {method}: {message.message}", code=message.code,
                                   data=message.data)
        assert isinstance(message, JsonRpcResponse)
        return message.result

    def _why_stop(self, control: RunControl, end: float) -> str | None:
        if control.cancelled:
            return "the request was cancelled"
        if control.expired():
            return "the request's deadline passed"
        if self.ended.is_set():
            return "the session ended"
        if time.monotonic() >= end:
            return "no answer in time"
        return None

    def resolve(self, message: JsonRpcResponse | JsonRpcError) -> bool:
        """Hand a client's response to the waiting request; False when none waits for its id."""
        with self._lock:
            slot = self._pending.get(message.id) if isinstance(message.id, int) else None
        if slot is None:
            return False
        slot.message = message
        slot.done.set()
        return True


class Pushes:
    """Where one session's unrelated notifications go, and the URIs its client subscribed to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._channel: Send | None = None
        self._subscribed: set[str] = set()

    def attach(self, channel: Send) -> bool:
        """Make ``channel`` the session's push channel; False when one is attached already."""
        with self._lock:
            if self._channel is not None:
                return False
            self._channel = channel
            return True

    def detach(self, channel: Send) -> None:
        with self._lock:
            if self._channel == channel:  # equal, not identical: a bound method is made anew on each access
                self._channel = None

    @property
    def attached(self) -> bool:
        return self._channel is not None

    def subscribe(self, uri: object) -> None:
        if not isinstance(uri, str) or not uri:
            raise InvalidParams("resources/subscribe needs a uri string")
        with self._lock:
            if uri not in self._subscribed and len(self._subscribed) >= MAX_SUBSCRIPTIONS:
                raise InvalidParams(f"this session already subscribes to {MAX_SUBSCRIPTIONS} resources; "
                                    "unsubscribe from one first")
            self._subscribed.add(uri)

    def unsubscribe(self, uri: object) -> None:
        if not isinstance(uri, str) or not uri:
            raise InvalidParams("resources/unsubscribe needs a uri string")
        with self._lock:
            self._subscribed.discard(uri)

    def push(self, method: str, params: Mapping[str, Any]) -> bool:
        """Send one notification on the channel when this session wants it; whether it was handed over."""
        with self._lock:
            channel = self._channel
            if channel is None or (method == "notifications/resources/updated"
                                   and params.get("uri") not in self._subscribed):
                return False
        channel(notification_message(method, dict(params)))
        return True
