"""Server-side values: handler results as MCP results, pagination cursors, resource template patterns.

Job
    Turn what a registered tool, resource reader or zigai tool returns into the MCP result
    types :class:`~zigai.mcp.Server` answers with, encode / check its opaque list cursors, and
    compile a resource URI template into the pattern that matches it.

Invariants
    * A cursor is only accepted if this server could have issued it for the current list
      (prefix and offset inside the list); anything else is :class:`InvalidParams`.
    * A value with no MCP form is refused (:class:`InternalError`) or, for a zigai tool's
      follow-up items, dropped with a warning; never sent half-converted.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from typing import Any

from zigai.mcp.errors import InternalError, InvalidParams, InvalidServerDefinition
from zigai.mcp.wire.results import (
    AudioBlock,
    BlobResourceContents,
    CallToolResult,
    ImageBlock,
    ResourceContents,
    TextBlock,
    TextResourceContents,
)
from zigai.messages import AudioContent, BytesSource, ImageContent, TextContent

__all__ = ["encode_cursor", "decode_cursor", "error_result", "tool_value", "block_of", "resource_contents",
           "template_pattern"]

_log = logging.getLogger("zigai.mcp.server")


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"zigai:{offset}".encode("ascii")).decode("ascii")


def decode_cursor(cursor: object, size: int) -> int:
    try:
        text = base64.urlsafe_b64decode(str(cursor).encode("ascii")).decode("ascii")
        prefix, _, number = text.partition(":")
        offset = int(number)
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidParams("invalid pagination cursor") from None
    if prefix != "zigai" or not 0 < offset <= size:
        raise InvalidParams("invalid pagination cursor")
    return offset


def error_result(text: str) -> CallToolResult:
    return CallToolResult((TextBlock(text),), None, True)


def tool_value(value: Any) -> CallToolResult:
    if isinstance(value, CallToolResult):
        return value
    if isinstance(value, str):
        return CallToolResult((TextBlock(value),))
    return CallToolResult((TextBlock(json.dumps(value, separators=(",", ":"), ensure_ascii=False)),), value)


def block_of(item: Any) -> Any:
    if isinstance(item, TextContent):
        return TextBlock(item.text)
    if isinstance(item, (ImageContent, AudioContent)) and isinstance(item.source, BytesSource):
        kind = ImageBlock if isinstance(item, ImageContent) else AudioBlock
        return kind(item.source.data, item.source.media_type)
    _log.warning("an MCP tool follow-up item of kind %r has no MCP content form; dropped", getattr(item, "kind", "?"))
    return None


def resource_contents(uri: str, value: Any, mime: str | None) -> list[ResourceContents]:
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [value]
    if isinstance(value, str):
        return [TextResourceContents(uri, value, mime)]
    if isinstance(value, (bytes, bytearray)):
        return [BlobResourceContents(uri, bytes(value), mime or "application/octet-stream")]
    if isinstance(value, (list, tuple)) and all(isinstance(v, (TextResourceContents, BlobResourceContents)) for v in value):
        return list(value)
    raise InternalError(f"the resource reader for {uri!r} returned an unsupported value")


def template_pattern(template: str) -> re.Pattern[str]:
    """The pattern of a resource URI template: each ``{name}`` matches one path segment."""
    parts, position = [], 0
    for match in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template):
        parts.append(re.escape(template[position:match.start()]))
        parts.append(f"(?P<{match.group(1)}>[^/]+)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    try:
        return re.compile("^" + "".join(parts) + "$")
    except re.error as exc:
        raise InvalidServerDefinition(f"resource template {template!r}: {exc}") from None
