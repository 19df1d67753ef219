"""Per-request options of the MCP client (:class:`RequestOptions`).

Job
    One immutable value naming a request's deadline, cancellation, metadata, notification
    sink and JSON-RPC id; shared by the client and the Tasks extension's client calls.

Invariants
    * ``timeout_ms`` is None or an int >= 0; ``metadata`` is a :class:`RequestMetadata`; a
      fixed ``request_id`` is a valid JSON-RPC id.  ``None`` options mean "no options"; any
      other non-:class:`RequestOptions` value is refused before I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zigai.control import CancellationToken, RunControl
from zigai.mcp.errors import InvalidMcpRequest
from zigai.mcp.wire.jsonrpc import RequestId, check_request_id
from zigai.mcp.wire.primitives import Notification, RequestMetadata

__all__ = ["RequestOptions", "EventSink"]

EventSink = Callable[[Notification], None]


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """Per-request controls.

    The deadline is the earliest of ``control.deadline``, ``timeout_ms`` from now and the
    client's default; the request is cancelled when ``control.token``, ``cancel`` or
    :meth:`Client.cancel` fires.  ``on_notification`` receives this request's notifications
    (progress, log messages) on the calling thread.  ``request_id`` fixes the JSON-RPC id (the
    subscription id of a listen stream); by default the client numbers requests itself.
    """

    control: RunControl | None = None
    timeout_ms: int | None = None
    cancel: CancellationToken | None = None
    metadata: RequestMetadata | None = None
    on_notification: EventSink | None = None
    request_id: RequestId | None = None

    def __post_init__(self) -> None:
        if self.timeout_ms is not None and (
            isinstance(self.timeout_ms, bool) or not isinstance(self.timeout_ms, int) or self.timeout_ms < 0
        ):
            raise InvalidMcpRequest("RequestOptions.timeout_ms must be None or an int >= 0")
        if self.metadata is not None and not isinstance(self.metadata, RequestMetadata):
            raise InvalidMcpRequest("RequestOptions.metadata must be a RequestMetadata")
        if self.request_id is not None:
            check_request_id(self.request_id)


_NO_OPTIONS = RequestOptions()


def _checked_options(options: object) -> RequestOptions:
    """``options`` itself, or the empty options for ``None``; anything else is refused (an
    empty dict must not pass as "no options")."""
    if options is None:
        return _NO_OPTIONS
    if not isinstance(options, RequestOptions):
        raise InvalidMcpRequest(f"options must be a RequestOptions, not {type(options).__name__}")
    return options
