"""The named errors of the MCP subsystem (client, transports, toolsets and server).

Three families, all under :class:`~zigai.errors.McpError`:

* :class:`McpErrorResponse` and its code-specific subclasses: a JSON-RPC error object.  The
  client raises one when the server answered with an error; a server handler raises one to
  answer with that code.  ``code``, ``message`` and ``data`` are the wire fields.
* :class:`McpTransportError` and its subclasses: the exchange was interrupted (connection,
  non-JSON-RPC HTTP status, a stream that ended early, a stdio child that exited).  These are
  the *classified interruptions* that :func:`zigai.mcp.listen_with_recovery` may retry.
* Everything else is final: a peer that broke the protocol (:class:`InvalidMcpMessage` and its
  bound-specific subclasses), a request refused locally before any I/O
  (:class:`InvalidMcpRequest`, :class:`McpRequestQueueFull`), a request that ran out of time or
  was cancelled, a closed client, a server definition that cannot be served.

Invariant: constructors pass only the message positionally to ``Exception``; extra data are
keyword-only attributes with defaults, so every error pickles with its attributes.  No message
contains a credential or a request body.
"""

from __future__ import annotations

from typing import Any

from zigai.errors import McpError

__all__ = [
    "McpError",
    "McpErrorResponse",
    "ParseError",
    "InvalidRequest",
    "MethodNotFound",
    "InvalidParams",
    "InvalidRequestState",
    "InternalError",
    "HeaderMismatch",
    "MissingRequiredClientCapability",
    "UnsupportedProtocolVersion",
    "McpTransportError",
    "McpConnectionFailed",
    "McpHttpStatusError",
    "McpStreamEnded",
    "McpServerExited",
    "McpSessionExpired",
    "NoCommonProtocolVersion",
    "FeatureNotInRevision",
    "InvalidMcpMessage",
    "McpMessageTooLarge",
    "SseEventTooLarge",
    "StdioLineTooLarge",
    "NotificationBacklogFull",
    "InvalidMcpRequest",
    "McpRequestQueueFull",
    "McpRequestTimedOut",
    "McpRequestCancelled",
    "McpInputRequired",
    "McpClientClosed",
    "InvalidServerDefinition",
    "InvalidInputResponse",
    "McpInputRoundsExhausted",
    "TaskExtensionRequired",
    "TaskWaitExhausted",
    "TaskStoreError",
    "error_for_code",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022


class McpErrorResponse(McpError):
    """A JSON-RPC error object: the server's answer (client side) or a handler's (server side).

    ``code`` is the JSON-RPC error code, ``data`` the optional JSON ``data`` member (a plain,
    caller-owned value).  ``str(error)`` is the wire ``message``.
    """

    default_code = INTERNAL_ERROR

    def __init__(self, message: str, *, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code = self.default_code if code is None else code
        self.data = data

    def to_json(self) -> dict[str, Any]:
        """The wire ``error`` member."""
        error: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(McpErrorResponse):
    """-32700: the message was not JSON the receiver could parse within its limits."""

    default_code = PARSE_ERROR


class InvalidRequest(McpErrorResponse):
    """-32600: the message was JSON but not one valid JSON-RPC request."""

    default_code = INVALID_REQUEST


class MethodNotFound(McpErrorResponse):
    """-32601: the receiver does not implement the method (HTTP status 404)."""

    default_code = METHOD_NOT_FOUND


class InvalidParams(McpErrorResponse):
    """-32602: the params (including the ``_meta`` envelope) were missing or invalid."""

    default_code = INVALID_PARAMS


class InvalidRequestState(InvalidParams):
    """-32602: a retried request's ``requestState`` failed the server's integrity, binding or age check."""


class InternalError(McpErrorResponse):
    """-32603: the handler failed for a reason it does not disclose."""

    default_code = INTERNAL_ERROR


class HeaderMismatch(McpErrorResponse):
    """-32020: HTTP routing headers were missing, malformed, or disagreed with the body."""

    default_code = HEADER_MISMATCH


class MissingRequiredClientCapability(McpErrorResponse):
    """-32021: the request needs a client capability it did not declare.

    ``data`` is ``{"requiredCapabilities": {...}}`` on the wire.
    """

    default_code = MISSING_REQUIRED_CLIENT_CAPABILITY


class UnsupportedProtocolVersion(McpErrorResponse):
    """-32022: the server does not speak the request's protocol version.

    ``data`` is ``{"supported": [...], "requested": "..."}`` on the wire.
    """

    default_code = UNSUPPORTED_PROTOCOL_VERSION

    @property
    def supported(self) -> tuple[str, ...]:
        data = self.data if isinstance(self.data, dict) else {}
        values = data.get("supported")
        return tuple(v for v in values if isinstance(v, str)) if isinstance(values, list) else ()


class NoCommonProtocolVersion(UnsupportedProtocolVersion):
    """Client and server share no protocol revision: ``client_versions`` and ``server_versions``
    name both sides (the server's from its -32022 ``supported`` list or its ``initialize``
    answer).  Raised by the client only; ``data`` mirrors the wire shape of -32022."""

    def __init__(self, message: str, *, code: int | None = None, data: Any = None,
                 client_versions: tuple[str, ...] = (), server_versions: tuple[str, ...] = ()) -> None:
        super().__init__(message, code=code, data=data if data is not None else {"supported": list(server_versions)})
        self.client_versions = tuple(client_versions)
        self.server_versions = tuple(server_versions)


_BY_CODE: dict[int, type[McpErrorResponse]] = {
    cls.default_code: cls
    for cls in (
        ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError,
        HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion,
    )
}


def error_for_code(code: int, message: str, data: Any = None) -> McpErrorResponse:
    """The most specific :class:`McpErrorResponse` for a wire error object."""
    cls = _BY_CODE.get(code, McpErrorResponse)
    return cls(message, code=code, data=data)


class McpTransportError(McpError):
    """An MCP exchange was interrupted below JSON-RPC (a classified, retryable interruption)."""


class McpConnectionFailed(McpTransportError):
    """The HTTP transport could not connect, or the connection broke or timed out mid-exchange."""


class McpHttpStatusError(McpTransportError):
    """The HTTP endpoint answered with a status that carries no JSON-RPC error object."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class McpStreamEnded(McpTransportError):
    """A response stream closed before the JSON-RPC response for its request arrived."""


class McpServerExited(McpTransportError):
    """The stdio server process exited or closed its output (``returncode`` when known)."""

    def __init__(self, message: str, *, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


class McpSessionExpired(McpTransportError):
    """The HTTP server answered 404 to a request carrying its ``Mcp-Session-Id`` (2025 revisions):
    the session is gone and the client must initialize a new one."""


class InvalidMcpMessage(McpError):
    """The peer sent something that is not a valid MCP message of the expected shape."""


class McpMessageTooLarge(InvalidMcpMessage):
    """One JSON-RPC message exceeded the MCP message JSON limits (document, value, depth, items)."""

    def __init__(self, message: str, *, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class SseEventTooLarge(InvalidMcpMessage):
    """One server-sent event carried more data than the event bound (checked before JSON parsing)."""

    def __init__(self, message: str, *, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class StdioLineTooLarge(InvalidMcpMessage):
    """The stdio server wrote a line longer than the line bound; the transport is unusable."""

    def __init__(self, message: str, *, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class NotificationBacklogFull(McpError):
    """More notifications arrived for one request than its sink had consumed (bounded backlog)."""

    def __init__(self, message: str, *, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class InvalidMcpRequest(McpError):
    """A request was refused locally, before any I/O (bad arguments, options or identifiers)."""


class FeatureNotInRevision(InvalidMcpRequest):
    """The request uses a feature the agreed protocol revision does not have (refused before I/O)."""

    def __init__(self, message: str, *, feature: str = "", revision: str = "") -> None:
        super().__init__(message)
        self.feature = feature
        self.revision = revision


class McpRequestQueueFull(McpError):
    """The transport already holds its maximum of accepted, unanswered requests."""

    def __init__(self, message: str, *, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class McpRequestTimedOut(McpError):
    """The request's deadline passed before its response arrived (the request was cancelled)."""


class McpRequestCancelled(McpError):
    """The request's cancellation token was set before its response arrived."""


class McpInputRequired(McpError):
    """The server answered ``resultType: "input_required"`` (multi round-trip input).

    ``result`` holds the caller-owned wire result (its ``inputRequests`` and ``requestState``);
    a client configured with an input handler answers these itself instead of raising.
    """

    def __init__(self, message: str, *, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class InvalidInputResponse(McpError):
    """An input handler's answer does not fit the input request it answers (family or shape)."""


class McpInputRoundsExhausted(McpInputRequired):
    """The server still asked for input after the client's bound of multi round-trip retries."""


class TaskExtensionRequired(InvalidMcpRequest):
    """A tasks request was refused before any I/O: the tasks extension is not declared."""


class TaskWaitExhausted(McpError):
    """``wait_task`` used its whole poll budget before the task ended (the task was cancelled).

    ``task_id`` names the task; ``last_status`` is the last status the server reported.
    """

    def __init__(self, message: str, *, task_id: str | None = None, last_status: str | None = None) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.last_status = last_status


class TaskStoreError(McpError):
    """The task store could not load or save its snapshot (I/O, size bound, version, shape)."""


class McpClientClosed(McpError):
    """The client or transport was used after ``close()``."""


class InvalidServerDefinition(McpError):
    """A tool, resource, prompt or method could not be registered on an MCP server as given."""
