"""listen_with_recovery: keep a ``subscriptions/listen`` stream open across classified interruptions.

Job
    Reissue the original filter after a transport interruption, under an explicit retry bound,
    a delay between attempts, a cancellation token and one monotonic deadline.

Invariants
    * Every attempt is a fresh request (new id, fresh acknowledgement, fresh event proxy); no
      session, subscription id or Last-Event-ID survives an attempt.  Events may therefore be
      delivered more than once across attempts: delivery is at-least-once, and because every
      MCP change event is a level trigger ("refetch if you care") that is safe.
    * Only :class:`McpTransportError` (connection failures, non-JSON-RPC HTTP statuses, streams
      that ended early, a stdio server that exited) is retried.  Application callback errors,
      JSON-RPC error replies, protocol violations, cancellation and the deadline escape at once.
    * A graceful end of the stream (the server's final result) returns that result.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from zigai.control import CancellationToken, RunControl
from zigai.mcp.client.client import Client, EventSink, ListenResult, RequestOptions
from zigai.mcp.errors import (
    InvalidMcpRequest,
    McpRequestCancelled,
    McpRequestTimedOut,
    McpTransportError,
)
from zigai.mcp.wire.primitives import RequestMetadata, SubscriptionFilter

__all__ = ["listen_with_recovery"]

_log = logging.getLogger("zigai.mcp.listen")


def _pause(seconds: float, control: RunControl | None, cancel: CancellationToken | None) -> None:
    end = time.monotonic() + seconds
    deadline = control.deadline if control is not None else None
    while True:
        if (cancel is not None and cancel.cancelled) or (control is not None and control.cancelled):
            raise McpRequestCancelled("listen recovery was cancelled")
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            raise McpRequestTimedOut("listen recovery ran out of time")
        if now >= end:
            return
        limit = end if deadline is None else min(end, deadline)
        time.sleep(min(0.05, max(0.0, limit - now)))


def listen_with_recovery(
    client: Client,
    notifications: SubscriptionFilter | Mapping[str, Any],
    on_event: EventSink,
    *,
    max_retries: int = 3,
    retry_delay_s: float = 0.5,
    control: RunControl | None = None,
    cancel: CancellationToken | None = None,
    metadata: RequestMetadata | None = None,
    on_interruption: Callable[[McpTransportError, int], None] | None = None,
) -> ListenResult:
    """Listen until the server ends the stream, reissuing it after up to ``max_retries`` interruptions.

    ``notifications`` is a typed :class:`SubscriptionFilter` or a raw filter object (then
    :meth:`Client.listen_json` is used).  ``on_interruption(error, attempt)`` is told about each
    retried interruption.  The last interruption is raised once the retries are used up.
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise InvalidMcpRequest("max_retries must be an int >= 0")
    if isinstance(retry_delay_s, bool) or not isinstance(retry_delay_s, (int, float)) or not retry_delay_s >= 0:
        raise InvalidMcpRequest("retry_delay_s must be a number >= 0")
    options = RequestOptions(control=control, cancel=cancel, metadata=metadata)
    attempt = 0
    while True:
        try:
            if isinstance(notifications, SubscriptionFilter):
                return client.listen(notifications, on_event, options)
            return client.listen_json(notifications, on_event, options)
        except McpTransportError as exc:
            attempt += 1
            if attempt > max_retries:
                raise
            _log.info("listen stream interrupted (%s); reissuing (retry %d of %d)", exc, attempt, max_retries)
            if on_interruption is not None:
                on_interruption(exc, attempt)
            _pause(retry_delay_s, control, cancel)
