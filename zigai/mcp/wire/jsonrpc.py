"""JSON-RPC 2.0 framing for MCP 2026-07-28: protocol constants, request ids, bounded decoding.

Job
    Name the wire constants once (protocol version, ``_meta`` keys, routing headers, method
    names), validate request ids, encode outgoing messages as compact UTF-8 JSON and decode one
    incoming message through the bounded ``mcp_message`` JSON profile into a classified value.

Invariants
    * A request id is an ``int`` (never ``bool``) or a ``str``; ``null`` is refused.
    * :func:`decode_message` runs the bounded preflight before any value is built; a limit
      failure raises :class:`McpMessageTooLarge` (exactly-at-limit passes), anything else that
      is not one JSON-RPC 2.0 object raises :class:`InvalidMcpMessage`.
    * Encoded messages never contain a newline (stdio framing depends on it) and never contain
      NaN or Infinity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.json import JsonLimitExceeded, Limits
from zigai.mcp.errors import InvalidMcpMessage, InvalidMcpRequest, McpMessageTooLarge

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "META_PROTOCOL_VERSION",
    "META_CLIENT_INFO",
    "META_CLIENT_CAPABILITIES",
    "META_LOG_LEVEL",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "HEADER_PROTOCOL_VERSION",
    "HEADER_METHOD",
    "HEADER_NAME",
    "HEADER_PARAM_PREFIX",
    "NAME_BEARING_METHODS",
    "RequestId",
    "check_request_id",
    "JsonRpcRequest",
    "JsonRpcNotification",
    "JsonRpcResponse",
    "JsonRpcError",
    "Message",
    "encode",
    "request_message",
    "notification_message",
    "result_message",
    "error_message",
    "decode_message",
    "classify",
    "parse_json",
]

PROTOCOL_VERSION = "2026-07-28"
SUPPORTED_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION,)

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

HEADER_PROTOCOL_VERSION = "MCP-Protocol-Version"
HEADER_METHOD = "Mcp-Method"
HEADER_NAME = "Mcp-Name"
HEADER_PARAM_PREFIX = "Mcp-Param-"

# method -> the params member mirrored into the Mcp-Name header
NAME_BEARING_METHODS: Mapping[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",  # the Tasks extension routes by task id
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

RequestId = int | str


def check_request_id(value: object, what: str = "request id") -> RequestId:
    """``value`` when it is a valid JSON-RPC request id; :class:`InvalidMcpRequest` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidMcpRequest(f"{what} must be an integer or a string, got {type(value).__name__}")
    return value


def _is_request_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class JsonRpcRequest:
    """An incoming request (``params`` is a caller-owned object or None)."""

    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class JsonRpcNotification:
    """An incoming notification at the framing level (see ``primitives.Notification``)."""

    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class JsonRpcResponse:
    """A successful response: ``result`` is always an object in MCP."""

    id: RequestId
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class JsonRpcError:
    """An error response; ``id`` is None when the peer could not read the request's id."""

    id: RequestId | None
    code: int
    message: str
    data: Any = None


Message = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse | JsonRpcError


def encode(message: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON of one message (no newline inside, no NaN)."""
    try:
        return zjson.dumps(message).encode("utf-8")
    except JsonError as exc:
        raise InvalidMcpRequest(f"the message is not JSON: {exc}") from None


def request_message(request_id: RequestId, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def notification_message(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def result_message(request_id: RequestId, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": dict(result)}


def error_message(request_id: RequestId | None, error: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": dict(error)}


def parse_json(data: bytes | str, limits: Limits) -> Any:
    """Bounded parse of one JSON document with MCP error mapping."""
    try:
        return zjson.parse(data, limits)
    except JsonLimitExceeded as exc:
        raise McpMessageTooLarge(
            f"MCP message exceeds the JSON limits: {exc}", limit=getattr(exc, "limit", None)
        ) from None
    except JsonError as exc:
        raise InvalidMcpMessage(f"MCP message is not valid JSON: {exc}") from None


def decode_message(data: bytes | str, limits: Limits) -> Message:
    """Parse and classify one JSON-RPC 2.0 message (see module invariants)."""
    value = parse_json(data, limits)
    return classify(value)


def classify(value: Any) -> Message:
    """Classify an already parsed JSON value as one JSON-RPC message."""
    if not isinstance(value, dict):
        raise InvalidMcpMessage("a JSON-RPC message must be a JSON object (batches are not MCP)")
    if value.get("jsonrpc") != "2.0":
        raise InvalidMcpMessage('a JSON-RPC message must carry "jsonrpc": "2.0"')
    params = value.get("params")
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str) or not method:
            raise InvalidMcpMessage("a JSON-RPC method must be a non-empty string")
        if params is not None and not isinstance(params, dict):
            raise InvalidMcpMessage("MCP params must be a JSON object")
        if "id" not in value:
            return JsonRpcNotification(method, params)
        if not _is_request_id(value["id"]):
            raise InvalidMcpMessage("a JSON-RPC request id must be an integer or a string")
        return JsonRpcRequest(value["id"], method, params)
    has_result, has_error = "result" in value, "error" in value
    if has_result == has_error:
        raise InvalidMcpMessage("a JSON-RPC response needs exactly one of result or error")
    message_id: Any = value.get("id")
    if has_result:
        if not _is_request_id(message_id):
            raise InvalidMcpMessage("a JSON-RPC result must carry the request's id")
        if not isinstance(value["result"], dict):
            raise InvalidMcpMessage("an MCP result must be a JSON object")
        return JsonRpcResponse(message_id, value["result"])
    if message_id is not None and not _is_request_id(message_id):
        raise InvalidMcpMessage("a JSON-RPC error id must be an integer, a string or null")
    error = value["error"]
    if not isinstance(error, dict):
        raise InvalidMcpMessage("a JSON-RPC error must be an object")
    code, text = error.get("code"), error.get("message")
    if isinstance(code, bool) or not isinstance(code, int) or not isinstance(text, str):
        raise InvalidMcpMessage("a JSON-RPC error needs an integer code and a string message")
    return JsonRpcError(message_id, code, text, error.get("data"))
