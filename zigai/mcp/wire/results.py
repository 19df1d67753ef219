"""Typed views of MCP results and content blocks, parsed from (and rendered to) wire JSON.

Job
    Validate the result objects of the core methods and expose them as immutable values: tool
    definitions and call results with their content blocks (text, image, audio, resource links,
    embedded resources), resources and templates, prompts, completions, discovery.  The server
    uses the same values to render its answers (``to_json``).

Invariants
    * Every value keeps ``raw``: the caller-owned wire object it was parsed from, unknown fields
      included, so nothing the server sent is lost.  Schemas (``input_schema``,
      ``output_schema``) are exactly the server's JSON, never rewritten.
    * Required members are checked; a wrong shape raises :class:`InvalidMcpMessage` naming the
      member.  Base64 payloads (images, audio, blobs) are decoded strictly.
    * An unknown content block type becomes :class:`UnknownBlock` instead of failing, so a newer
      server's extra block kinds degrade gracefully.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from zigai import json as zjson
from zigai.mcp.errors import InvalidMcpMessage
from zigai.mcp.wire.jsonrpc import META_SERVER_INFO
from zigai.mcp.wire.primitives import Implementation, ServerCapabilities

__all__ = [
    "TextBlock", "ImageBlock", "AudioBlock", "ResourceLinkBlock", "EmbeddedResourceBlock",
    "UnknownBlock", "ContentBlock", "TextResourceContents", "BlobResourceContents",
    "ResourceContents", "ToolInfo", "Page", "CallToolResult", "Resource", "ResourceTemplate",
    "ReadResourceResult", "PromptArgument", "Prompt", "PromptMessage", "GetPromptResult",
    "Completion", "DiscoverResult", "parse_block", "parse_blocks", "parse_contents", "server_info_of",
]

T = TypeVar("T")


def _member(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str,
            required: bool = True) -> Any:
    value = obj.get(key)
    if value is None:
        if required:
            raise InvalidMcpMessage(f"{where}: missing {key!r}")
        return None
    if (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,))
            or not isinstance(value, kind)):
        raise InvalidMcpMessage(f"{where}: {zjson.wrong_type(key, value, kind)}")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidMcpMessage(f"{where} must be a JSON object")
    return value


def _b64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidMcpMessage(f"{where}: data is not valid base64") from None


def _b64_text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def server_info_of(result: Mapping[str, Any]) -> Implementation | None:
    """The ``_meta`` server identity a result carries, if any."""
    meta = result.get("_meta")
    return Implementation.from_json(meta.get(META_SERVER_INFO)) if isinstance(meta, dict) else None


# ----------------------------------------------------------------------------- contents


@dataclass(frozen=True, slots=True)
class TextResourceContents:
    uri: str
    text: str
    mime_type: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        value = {**self.raw, "uri": self.uri, "text": self.text}
        if self.mime_type is not None:
            value["mimeType"] = self.mime_type
        return value


@dataclass(frozen=True, slots=True)
class BlobResourceContents:
    uri: str
    blob: bytes
    mime_type: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        value = {**self.raw, "uri": self.uri, "blob": _b64_text(self.blob)}
        if self.mime_type is not None:
            value["mimeType"] = self.mime_type
        return value


ResourceContents = TextResourceContents | BlobResourceContents


def parse_contents(value: Any, where: str = "resource contents") -> ResourceContents:
    obj = _object(value, where)
    uri = _member(obj, "uri", str, where)
    mime = _member(obj, "mimeType", str, where, required=False)
    if "text" in obj:
        return TextResourceContents(uri, _member(obj, "text", str, where), mime, obj)
    if "blob" in obj:
        return BlobResourceContents(uri, _b64(_member(obj, "blob", str, where), where), mime, obj)
    raise InvalidMcpMessage(f"{where}: needs 'text' or 'blob'")


# ----------------------------------------------------------------------------- content blocks


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "text"

    def to_json(self) -> dict[str, Any]:
        return {**self.raw, "type": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ImageBlock:
    data: bytes
    mime_type: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "image"

    def to_json(self) -> dict[str, Any]:
        return {**self.raw, "type": "image", "data": _b64_text(self.data), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class AudioBlock:
    data: bytes
    mime_type: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "audio"

    def to_json(self) -> dict[str, Any]:
        return {**self.raw, "type": "audio", "data": _b64_text(self.data), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class ResourceLinkBlock:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "resource_link"

    def to_json(self) -> dict[str, Any]:
        value = {**self.raw, "type": "resource_link", "uri": self.uri, "name": self.name}
        if self.description is not None:
            value["description"] = self.description
        if self.mime_type is not None:
            value["mimeType"] = self.mime_type
        return value


@dataclass(frozen=True, slots=True)
class EmbeddedResourceBlock:
    resource: ResourceContents
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "resource"

    def to_json(self) -> dict[str, Any]:
        return {**self.raw, "type": "resource", "resource": self.resource.to_json()}


@dataclass(frozen=True, slots=True)
class UnknownBlock:
    """A content block of a type this revision does not define (kept, not interpreted)."""

    type: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return dict(self.raw)


ContentBlock = (
    TextBlock | ImageBlock | AudioBlock | ResourceLinkBlock | EmbeddedResourceBlock | UnknownBlock
)


def parse_block(value: Any, where: str = "content block") -> ContentBlock:
    obj = _object(value, where)
    kind = _member(obj, "type", str, where)
    if kind == "text":
        return TextBlock(_member(obj, "text", str, where), obj)
    if kind in ("image", "audio"):
        data = _b64(_member(obj, "data", str, where), where)
        mime = _member(obj, "mimeType", str, where)
        return (ImageBlock if kind == "image" else AudioBlock)(data, mime, obj)
    if kind == "resource_link":
        return ResourceLinkBlock(
            _member(obj, "uri", str, where), _member(obj, "name", str, where),
            _member(obj, "description", str, where, required=False),
            _member(obj, "mimeType", str, where, required=False), obj,
        )
    if kind == "resource":
        return EmbeddedResourceBlock(parse_contents(obj.get("resource"), f"{where} resource"), obj)
    return UnknownBlock(kind, obj)


def parse_blocks(value: Any, where: str) -> tuple[ContentBlock, ...]:
    if not isinstance(value, list):
        raise InvalidMcpMessage(f"{where} must be a list of content blocks")
    return tuple(parse_block(item, f"{where}[{index}]") for index, item in enumerate(value))


# ----------------------------------------------------------------------------- pages


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a paginated list; follow ``next_cursor`` until it is None.

    ``ttl_ms`` / ``cache_scope`` are the server's caching hints (``ttl_ms`` 0: stale at once).
    ``rejected`` names items left out because they are unusable here, with the reason.
    """

    items: tuple[T, ...]
    next_cursor: str | None = None
    ttl_ms: int = 0
    cache_scope: str = "private"
    server_info: Implementation | None = None
    rejected: tuple[tuple[str, str], ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def parse_page(result: dict[str, Any], key: str, parse_item: Any, where: str) -> Page[Any]:
    items = result.get(key)
    if not isinstance(items, list):
        raise InvalidMcpMessage(f"{where}: {key!r} must be a list")
    cursor = _member(result, "nextCursor", str, where, required=False)
    ttl = result.get("ttlMs", 0)
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        raise InvalidMcpMessage(f"{where}: 'ttlMs' must be a non-negative integer")
    scope = result.get("cacheScope", "private")
    parsed = tuple(parse_item(item, f"{where} {key}[{index}]") for index, item in enumerate(items))
    return Page(parsed, cursor, ttl, scope if scope in ("public", "private") else "private",
                server_info_of(result), (), result)


# ----------------------------------------------------------------------------- tools


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool definition exactly as the server listed it (schemas are the server's JSON)."""

    name: str
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Any, where: str = "tool") -> ToolInfo:
        obj = _object(value, where)
        schema = _member(obj, "inputSchema", dict, where)
        if schema.get("type") != "object":
            raise InvalidMcpMessage(f"{where}: inputSchema must have type 'object'")
        return cls(
            name=_member(obj, "name", str, where),
            input_schema=schema,
            description=_member(obj, "description", str, where, required=False),
            title=_member(obj, "title", str, where, required=False),
            output_schema=_member(obj, "outputSchema", dict, where, required=False),
            annotations=_member(obj, "annotations", dict, where, required=False),
            raw=obj,
        )

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {**self.raw, "name": self.name, "inputSchema": self.input_schema}
        for key, current in (("description", self.description), ("title", self.title),
                             ("outputSchema", self.output_schema), ("annotations", self.annotations)):
            if current is not None:
                value[key] = current
        return value


@dataclass(frozen=True, slots=True)
class CallToolResult:
    """A ``tools/call`` result: content blocks, optional structured value, the error flag."""

    content: tuple[ContentBlock, ...] = ()
    structured_content: Any = None
    is_error: bool = False
    server_info: Implementation | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextBlock))

    @classmethod
    def from_json(cls, result: dict[str, Any]) -> CallToolResult:
        is_error = result.get("isError", False)
        if not isinstance(is_error, bool):
            raise InvalidMcpMessage("tools/call result: 'isError' must be a boolean")
        return cls(parse_blocks(result.get("content", []), "tools/call content"),
                   result.get("structuredContent"), is_error, server_info_of(result), result)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"content": [block.to_json() for block in self.content],
                                 "isError": self.is_error}
        if self.structured_content is not None:
            value["structuredContent"] = self.structured_content
        return value


# ----------------------------------------------------------------------------- resources


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    size: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Any, where: str = "resource") -> Resource:
        obj = _object(value, where)
        return cls(_member(obj, "uri", str, where), _member(obj, "name", str, where),
                   _member(obj, "description", str, where, required=False),
                   _member(obj, "mimeType", str, where, required=False),
                   _member(obj, "title", str, where, required=False),
                   _member(obj, "size", int, where, required=False), obj)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {**self.raw, "uri": self.uri, "name": self.name}
        for key, current in (("description", self.description), ("mimeType", self.mime_type),
                             ("title", self.title), ("size", self.size)):
            if current is not None:
                value[key] = current
        return value


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Any, where: str = "resource template") -> ResourceTemplate:
        obj = _object(value, where)
        return cls(_member(obj, "uriTemplate", str, where), _member(obj, "name", str, where),
                   _member(obj, "description", str, where, required=False),
                   _member(obj, "mimeType", str, where, required=False),
                   _member(obj, "title", str, where, required=False), obj)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {**self.raw, "uriTemplate": self.uri_template, "name": self.name}
        for key, current in (("description", self.description), ("mimeType", self.mime_type),
                             ("title", self.title)):
            if current is not None:
                value[key] = current
        return value


@dataclass(frozen=True, slots=True)
class ReadResourceResult:
    contents: tuple[ResourceContents, ...]
    ttl_ms: int = 0
    cache_scope: str = "private"
    server_info: Implementation | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, result: dict[str, Any]) -> ReadResourceResult:
        contents = result.get("contents")
        if not isinstance(contents, list):
            raise InvalidMcpMessage("resources/read result: 'contents' must be a list")
        page = parse_page({**result, "contents": []}, "contents", parse_contents, "resources/read result")
        return cls(tuple(parse_contents(item, f"resources/read contents[{i}]") for i, item in enumerate(contents)),
                   page.ttl_ms, page.cache_scope, page.server_info, result)


# ----------------------------------------------------------------------------- prompts


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"name": self.name, "required": self.required}
        if self.description is not None:
            value["description"] = self.description
        return value


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    title: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Any, where: str = "prompt") -> Prompt:
        obj = _object(value, where)
        arguments = []
        for index, item in enumerate(obj.get("arguments") or []):
            arg = _object(item, f"{where} argument[{index}]")
            required = arg.get("required", False)
            arguments.append(PromptArgument(_member(arg, "name", str, f"{where} argument"),
                                            _member(arg, "description", str, where, required=False),
                                            required is True))
        return cls(_member(obj, "name", str, where), _member(obj, "description", str, where, required=False),
                   tuple(arguments), _member(obj, "title", str, where, required=False), obj)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {**self.raw, "name": self.name}
        if self.description is not None:
            value["description"] = self.description
        if self.title is not None:
            value["title"] = self.title
        if self.arguments:
            value["arguments"] = [argument.to_json() for argument in self.arguments]
        return value


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: str
    content: ContentBlock

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content.to_json()}


@dataclass(frozen=True, slots=True)
class GetPromptResult:
    messages: tuple[PromptMessage, ...]
    description: str | None = None
    server_info: Implementation | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, result: dict[str, Any]) -> GetPromptResult:
        messages = result.get("messages")
        if not isinstance(messages, list):
            raise InvalidMcpMessage("prompts/get result: 'messages' must be a list")
        parsed = []
        for index, item in enumerate(messages):
            obj = _object(item, f"prompt message[{index}]")
            role = _member(obj, "role", str, f"prompt message[{index}]")
            if role not in ("user", "assistant"):
                raise InvalidMcpMessage(f"prompt message[{index}]: role must be 'user' or 'assistant'")
            parsed.append(PromptMessage(role, parse_block(obj.get("content"), f"prompt message[{index}] content")))
        return cls(tuple(parsed), _member(result, "description", str, "prompts/get result", required=False),
                   server_info_of(result), result)


# ----------------------------------------------------------------------------- completion, discovery


@dataclass(frozen=True, slots=True)
class Completion:
    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, result: dict[str, Any]) -> Completion:
        completion = _object(result.get("completion"), "completion/complete result 'completion'")
        values = completion.get("values")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidMcpMessage("completion/complete: 'values' must be a list of strings")
        return cls(tuple(values), _member(completion, "total", int, "completion", required=False),
                   completion.get("hasMore") is True, result)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"values": list(self.values)}
        if self.total is not None:
            value["total"] = self.total
        if self.has_more:
            value["hasMore"] = True
        return {"completion": value}


@dataclass(frozen=True, slots=True)
class DiscoverResult:
    """What ``server/discover`` reports: versions, capabilities, identity, instructions."""

    supported_versions: tuple[str, ...]
    capabilities: ServerCapabilities
    server_info: Implementation | None = None
    instructions: str | None = None
    ttl_ms: int = 0
    cache_scope: str = "private"
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, result: dict[str, Any]) -> DiscoverResult:
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise InvalidMcpMessage("server/discover: 'supportedVersions' must be a list of strings")
        page = parse_page({**result, "items": []}, "items", None, "server/discover result")
        return cls(tuple(versions), ServerCapabilities.from_json(result.get("capabilities", {})),
                   page.server_info, _member(result, "instructions", str, "server/discover", required=False),
                   page.ttl_ms, page.cache_scope, result)
