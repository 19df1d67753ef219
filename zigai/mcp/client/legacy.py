"""The client side of the session-based MCP revisions (2025-11-25, 2025-06-18).

Job
    Agree on a revision with the server the first time a :class:`~zigai.mcp.Client` needs one
    (the ``server/discover`` probe, then ``initialize`` and ``notifications/initialized`` for a
    legacy server; the rules live in :mod:`zigai.mcp.wire.revisions`), and answer the requests a
    legacy server sends its client (``ping``, ``sampling/createMessage``, ``elicitation/create``,
    ``roots/list``) through the client's ``input_handler``, the same handler that answers
    2026-07-28 input requests.

Invariants
    * Negotiation runs once per client (and again only after an expired HTTP session); its
      requests bypass the revision check and carry the caller's deadline and cancellation.
    * Change notifications a 2025 server sends on its session (``list_changed``,
      ``resources/updated``) reach the client's ``on_notification`` with the subscription id
      :data:`SESSION_STREAM_ID`.
    * A legacy server's request is answered exactly once: with the handler's checked answer,
      with -32601 when the client has no handler for it, or with -32603 when the handler fails
      (the exception is logged, its text never sent).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Protocol

from zigai.mcp.client.http import StreamableHttpTransport
from zigai.mcp.client.options import RequestOptions
from zigai.mcp.errors import (
    InvalidInputResponse,
    InvalidMcpMessage,
    McpError,
    McpErrorResponse,
    UnsupportedProtocolVersion,
)
from zigai.mcp.wire.input import InputHandler, InputKind, InputRequest, InputResponse
from zigai.mcp.wire.jsonrpc import (
    META_SUBSCRIPTION_ID,
    JsonRpcNotification,
    JsonRpcRequest,
    error_message,
    result_message,
)
from zigai.mcp.wire.primitives import (
    UPDATE_STREAM_METHODS,
    ClientCapabilities,
    Implementation,
    ServerCapabilities,
)
from zigai.mcp.wire.results import DiscoverResult
from zigai.mcp.wire.revisions import (
    MODERN_ERROR_CODES,
    PROBE_TIMEOUT_S,
    agreed_version,
    initialize_params,
    is_legacy,
    legacy_choice,
    means_legacy_server,
)
from zigai.mcp.wire.transport import McpTransport


class Client(Protocol):
    """What negotiation needs of :class:`zigai.mcp.Client` (structural, so the client module
    imports this one and not the other way round)."""

    transport: McpTransport
    client_info: Implementation
    capabilities: ClientCapabilities
    input_handler: InputHandler | None
    offered_versions: tuple[str, ...]
    protocol_version: str
    initialize_result: dict[str, Any] | None
    server_capabilities: ServerCapabilities | None

    def _deadline(self, options: RequestOptions) -> float | None: ...

    def _exchange(self, method: str, params: Mapping[str, Any] | None, options: RequestOptions | None, *,
                  version: str | None = None, internal: bool = False,
                  deadline: float | None = None) -> dict[str, Any]: ...

    def _agree(self, version: str, initialize_result: dict[str, Any] | None = None) -> None: ...

    def _notify_internal(self, method: str, params: Mapping[str, Any] | None) -> None: ...

__all__ = ["negotiate", "renew", "answer_server_request", "legacy_discover", "session_notification",
           "SESSION_STREAM_ID"]

_log = logging.getLogger("zigai.mcp.client")
_INPUT_METHODS = frozenset(kind.value for kind in InputKind)


def negotiate(client: Client, options: RequestOptions) -> None:
    """Agree on a revision with the server (see :mod:`zigai.mcp.wire.revisions`)."""
    offered = client.offered_versions
    modern = [version for version in offered if not is_legacy(version)]
    legacy = [version for version in offered if is_legacy(version)]
    own = RequestOptions(options.control, options.timeout_ms, options.cancel)  # not the caller's metadata
    if not modern:
        _initialize(client, legacy[0], own)
        return
    caller_deadline = client._deadline(own)
    # HTTP answers every request with a status (and may run an authorization flow first); the
    # silent-server rule is for stdio and other transports
    silent_s = None if isinstance(client.transport, StreamableHttpTransport) else PROBE_TIMEOUT_S
    probe_deadline = None if silent_s is None else time.monotonic() + silent_s
    try:
        result = client._exchange("server/discover", None, own, version=modern[0], internal=True,
                                  deadline=probe_deadline)
    except UnsupportedProtocolVersion as exc:
        shared = [version for version in modern if version in exc.supported]
        if shared:
            client._agree(shared[0])
        else:  # a modern server that speaks none of our modern revisions: maybe a legacy one of ours
            _initialize(client, legacy_choice(offered, exc.supported), own)
        return
    except McpErrorResponse as exc:
        if exc.code in MODERN_ERROR_CODES:  # a modern server refusing the probe itself
            client._agree(modern[0])
            return
        _fall_back(client, exc, caller_deadline, probe_deadline, legacy, own)
        return
    except McpError as exc:
        _fall_back(client, exc, caller_deadline, probe_deadline, legacy, own)
        return
    try:
        found = DiscoverResult.from_json(result)
    except InvalidMcpMessage:
        found = None
    shared = [version for version in modern if found is not None and version in found.supported_versions]
    if not shared:  # not a discover result naming a revision we share: a server that answers anything
        _log.info("MCP server answered server/discover without a shared revision; initializing")
        if found is not None and found.supported_versions:
            _initialize(client, legacy_choice(offered, found.supported_versions), own)
        else:
            _initialize(client, legacy[0], own)
        return
    client._agree(shared[0])
    client.server_capabilities = found.capabilities if found is not None else None


def renew(client: Client, options: RequestOptions) -> None:
    """A new session after the server forgot ours: ``initialize`` again with the agreed revision."""
    _initialize(client, client.protocol_version, RequestOptions(options.control, options.timeout_ms, options.cancel))


def _fall_back(client: Client, error: McpError, caller_deadline: float | None, probe_deadline: float | None,
               legacy: list[str], options: RequestOptions) -> None:
    now = time.monotonic()
    probe_expired = probe_deadline is not None and now >= probe_deadline
    if (caller_deadline is not None and now >= caller_deadline) or not means_legacy_server(error, probe_expired):
        raise error
    _log.info("MCP server is session-based (%s answered the probe); initializing", type(error).__name__)
    _initialize(client, legacy[0], options)


def _initialize(client: Client, version: str, options: RequestOptions) -> None:
    params = initialize_params(version, client.client_info.to_json(), _legacy_capabilities(client))
    result = client._exchange("initialize", params, options, version=version, internal=True)
    agreed = agreed_version(result, client.offered_versions)
    capabilities = result.get("capabilities", {})
    client._agree(agreed, result)
    client.server_capabilities = ServerCapabilities.from_json(capabilities if isinstance(capabilities, dict) else {})
    client._notify_internal("notifications/initialized", None)


def _legacy_capabilities(client: Client) -> dict[str, Any]:
    """The client's capabilities as a legacy server reads them (extensions are a 2026 member)."""
    declared = client.capabilities.to_json()
    declared.pop("extensions", None)
    if client.input_handler is not None:
        for member in ("sampling", "elicitation", "roots"):
            declared.setdefault(member, {})
    return declared


def legacy_discover(client: Client) -> DiscoverResult:
    """What ``initialize`` reported, in the shape of a ``server/discover`` result."""
    raw = dict(client.initialize_result or {})
    info = raw.get("serverInfo")
    shaped = {"supportedVersions": [client.protocol_version], "capabilities": raw.get("capabilities", {})}
    if isinstance(raw.get("instructions"), str):
        shaped["instructions"] = raw["instructions"]
    result = DiscoverResult.from_json(shaped)
    server_info = None
    if isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str):
        server_info = Implementation(info["name"], info["version"])
    return DiscoverResult(result.supported_versions, result.capabilities, server_info, result.instructions,
                          raw=raw)


SESSION_STREAM_ID = "session"
"""The subscription id a 2025 server's change notifications are given: that revision sends them
on the session, not on a ``subscriptions/listen`` stream, and a Notification needs one."""


def session_notification(note: JsonRpcNotification) -> JsonRpcNotification:
    """A 2025 change notification (no subscription id) in the shape a 2026 one has."""
    if note.method not in UPDATE_STREAM_METHODS:
        return note
    params = dict(note.params or {})
    meta = dict(params.get("_meta") or {}) if isinstance(params.get("_meta"), dict) else {}
    if META_SUBSCRIPTION_ID in meta:
        return note
    meta[META_SUBSCRIPTION_ID] = SESSION_STREAM_ID
    params["_meta"] = meta
    return JsonRpcNotification(note.method, params)


def answer_server_request(client: Client, request: JsonRpcRequest) -> dict[str, Any]:
    """The JSON-RPC reply to one request a legacy server sent (see module invariants)."""
    if request.method == "ping":
        return result_message(request.id, {})
    if not is_legacy(client.protocol_version) or request.method not in _INPUT_METHODS \
            or client.input_handler is None:
        return error_message(request.id, {"code": -32601, "message": f"the client does not handle {request.method}"})
    try:
        parsed = InputRequest.from_json(str(request.id), {"method": request.method, "params": request.params or {}})
    except InvalidMcpMessage as exc:
        return error_message(request.id, {"code": -32602, "message": str(exc)})
    try:
        response = client.input_handler(parsed)
        if not isinstance(response, InputResponse):
            raise InvalidInputResponse(f"the input handler must return an InputResponse, not {type(response).__name__}")
        answer = response.check_answers(parsed)
    except Exception:
        _log.exception("the MCP input handler failed on the server's %s request", request.method)
        return error_message(request.id, {"code": -32603, "message": "the client could not answer this request"})
    return result_message(request.id, answer)
