"""xAI's server-side tools for the Responses API, as typed, validated values.

* :class:`WebSearch` — ``web_search`` with an allow *or* exclude list of at most five domains
  and optional image understanding;
* :class:`XSearch` — ``x_search`` over posts on X: an allow *or* exclude list of at most ten
  handles, an inclusive ``from_date`` / ``to_date`` window (``YYYY-MM-DD``), image and video
  understanding;
* :class:`CodeExecution` — ``code_interpreter`` (xAI runs the code);
* :class:`CollectionSearch` — ``file_search`` over xAI collections (``vector_store_ids``);
* :class:`McpServer` — one remote MCP server (``mcp``), keyed by ``server_label``.

Portable provider-managed tools map onto the same wire: ``web_search`` → ``web_search`` and
``code_execution`` → ``code_interpreter``.  :func:`encode_tools` merges both kinds: a
singleton configured on the client wins over the bare portable request for the same tool, and
each singleton appears once; MCP servers are keyed by ``server_label`` (a repeated label is an
error).

Invariants: invalid values fail on construction, before any request; an MCP server's
``authorization`` and header values are the application's secrets — kept out of ``repr``,
never pickled, sent only in the request body.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from zigai.model import ManagedTool
from zigai.providers.openai.errors import OpenAIEncodeError

__all__ = [
    "CodeExecution", "CollectionSearch", "McpServer", "PORTABLE_TOOLS", "WebSearch", "XSearch",
    "XaiTool", "XaiToolError", "check_tools", "encode_tools",
]

#: Portable managed tool kind → xAI tool type.
PORTABLE_TOOLS: Mapping[str, str] = {"web_search": "web_search", "code_execution": "code_interpreter"}
MAX_DOMAINS = 5
MAX_HANDLES = 10
_LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DOMAIN = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                     r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$")
_HANDLE = re.compile(r"^@?[A-Za-z0-9_]{1,15}$")
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class XaiToolError(OpenAIEncodeError):
    """An xAI tool is misconfigured, repeated, or cannot be sent; nothing was sent."""


def _names(value: Any, what: str, pattern: re.Pattern[str], limit: int) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise XaiToolError(f"{what} must be a sequence, not one string")
    items = tuple(value)
    if not items or len(items) > limit:
        raise XaiToolError(f"{what} takes 1 to {limit} entries")
    for item in items:
        if not isinstance(item, str) or not pattern.match(item):
            raise XaiToolError(f"{what} has an invalid entry {item!r}")
    return items


def _flag(value: Any, what: str) -> None:
    if value is not None and not isinstance(value, bool):
        raise XaiToolError(f"{what} must be a boolean")


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class WebSearch:
    """Search the web; ``allowed_domains`` or ``excluded_domains`` (not both)."""

    allowed_domains: tuple[str, ...] | None = None
    excluded_domains: tuple[str, ...] | None = None
    enable_image_understanding: bool | None = None

    def __post_init__(self) -> None:
        allowed = _names(self.allowed_domains, "allowed_domains", _DOMAIN, MAX_DOMAINS)
        excluded = _names(self.excluded_domains, "excluded_domains", _DOMAIN, MAX_DOMAINS)
        if allowed is not None and excluded is not None:
            raise XaiToolError("web search takes allowed_domains or excluded_domains, not both")
        _flag(self.enable_image_understanding, "enable_image_understanding")
        object.__setattr__(self, "allowed_domains", allowed)
        object.__setattr__(self, "excluded_domains", excluded)

    key = "web_search"

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "web_search"}
        _put(out, "allowed_domains", self.allowed_domains)
        _put(out, "excluded_domains", self.excluded_domains)
        _put(out, "enable_image_understanding", self.enable_image_understanding)
        return out


def _day(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and len(value) == 10:
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise XaiToolError(f"{what} must be a date or a YYYY-MM-DD string")


@dataclass(frozen=True, slots=True)
class XSearch:
    """Search posts on X; handles are allowed *or* excluded; the date window is inclusive."""

    allowed_x_handles: tuple[str, ...] | None = None
    excluded_x_handles: tuple[str, ...] | None = None
    from_date: str | date | None = None
    to_date: str | date | None = None
    enable_image_understanding: bool | None = None
    enable_video_understanding: bool | None = None

    def __post_init__(self) -> None:
        allowed = _names(self.allowed_x_handles, "allowed_x_handles", _HANDLE, MAX_HANDLES)
        excluded = _names(self.excluded_x_handles, "excluded_x_handles", _HANDLE, MAX_HANDLES)
        if allowed is not None and excluded is not None:
            raise XaiToolError("X search takes allowed_x_handles or excluded_x_handles, not both")
        start, end = _day(self.from_date, "from_date"), _day(self.to_date, "to_date")
        if start is not None and end is not None and start > end:
            raise XaiToolError("from_date must not be after to_date")
        _flag(self.enable_image_understanding, "enable_image_understanding")
        _flag(self.enable_video_understanding, "enable_video_understanding")
        for name, value in (("allowed_x_handles", allowed), ("excluded_x_handles", excluded),
                            ("from_date", start), ("to_date", end)):
            object.__setattr__(self, name, value)

    key = "x_search"

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "x_search"}
        for name in ("allowed_x_handles", "excluded_x_handles", "from_date", "to_date",
                     "enable_image_understanding", "enable_video_understanding"):
            _put(out, name, getattr(self, name))
        return out


@dataclass(frozen=True, slots=True)
class CodeExecution:
    """Let xAI run code it writes (``code_interpreter``)."""

    key = "code_interpreter"

    def wire(self) -> dict[str, Any]:
        return {"type": "code_interpreter"}


@dataclass(frozen=True, slots=True)
class CollectionSearch:
    """Search xAI collections (``file_search`` over ``vector_store_ids``)."""

    collection_ids: tuple[str, ...]
    max_num_results: int | None = None

    def __post_init__(self) -> None:
        ids = _names(self.collection_ids, "collection_ids", _ID, 100)
        assert ids is not None
        if len(set(ids)) != len(ids):
            raise XaiToolError("collection_ids repeats an id")
        if self.max_num_results is not None and (
            isinstance(self.max_num_results, bool) or not isinstance(self.max_num_results, int)
            or not 1 <= self.max_num_results <= 50
        ):
            raise XaiToolError("max_num_results must be an integer in [1, 50]")
        object.__setattr__(self, "collection_ids", ids)

    key = "file_search"

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "file_search", "vector_store_ids": list(self.collection_ids)}
        _put(out, "max_num_results", self.max_num_results)
        return out


@dataclass(frozen=True, slots=True)
class McpServer:
    """One remote MCP server xAI calls for the model, identified by ``server_label``."""

    server_label: str
    server_url: str
    server_description: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    authorization: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.server_label, str) or not _LABEL.match(self.server_label):
            raise XaiToolError("server_label must be 1-64 letters, digits, '_' or '-'")
        parts = urlsplit(self.server_url) if isinstance(self.server_url, str) else None
        if parts is None or parts.scheme != "https" or not parts.hostname or parts.fragment:
            raise XaiToolError(f"MCP server {self.server_label!r} needs an https:// URL")
        if self.server_description is not None and not isinstance(self.server_description, str):
            raise XaiToolError("server_description must be a string")
        if self.allowed_tools is not None:
            if isinstance(self.allowed_tools, str) or not all(
                isinstance(t, str) and t for t in self.allowed_tools
            ):
                raise XaiToolError("allowed_tools must be a sequence of tool names")
            object.__setattr__(self, "allowed_tools", tuple(self.allowed_tools))
        if self.authorization is not None and (
            not isinstance(self.authorization, str) or not self.authorization
        ):
            raise XaiToolError("authorization must be a non-empty string")
        if self.headers is not None:
            if not isinstance(self.headers, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items()
            ):
                raise XaiToolError("MCP headers must map strings to strings")
            object.__setattr__(self, "headers", dict(self.headers))

    def __reduce__(self) -> Any:
        raise TypeError("an McpServer may hold credentials and cannot be pickled")

    @property
    def key(self) -> str:
        return f"mcp:{self.server_label}"

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "mcp", "server_label": self.server_label,
                               "server_url": self.server_url}
        _put(out, "server_description", self.server_description)
        _put(out, "allowed_tools", self.allowed_tools)
        _put(out, "authorization", self.authorization)
        if self.headers is not None:
            out["headers"] = dict(self.headers)
        return out


XaiTool = WebSearch | XSearch | CodeExecution | CollectionSearch | McpServer
_TOOL_TYPES = (WebSearch, XSearch, CodeExecution, CollectionSearch, McpServer)


def check_tools(tools: Iterable[Any]) -> tuple[XaiTool, ...]:
    """The client's xAI tools, type-checked; singletons once, MCP servers once per label."""
    values = tuple(tools)
    seen: set[str] = set()
    for tool in values:
        if not isinstance(tool, _TOOL_TYPES):
            raise XaiToolError(f"unknown xAI tool {type(tool).__name__}")
        if tool.key in seen:
            what = "MCP server label" if isinstance(tool, McpServer) else "tool"
            raise XaiToolError(f"{what} {tool.key.removeprefix('mcp:')!r} is configured twice")
        seen.add(tool.key)
    return values


def encode_tools(portable: Iterable[ManagedTool], configured: tuple[XaiTool, ...]
                 ) -> list[dict[str, Any]]:
    """The server-side part of ``tools``: configured tools, then portable ones not configured."""
    out = [tool.wire() for tool in configured]
    keys = {tool.key for tool in configured}
    for managed in portable:
        wire_type = PORTABLE_TOOLS.get(managed.kind)
        if wire_type is None:
            raise XaiToolError(f"xAI has no {managed.kind} tool")
        if managed.config:
            raise XaiToolError(f"configure xAI's {wire_type} tool with its typed value "
                               f"({'WebSearch' if wire_type == 'web_search' else 'CodeExecution'})")
        if wire_type in keys:
            continue  # the client's typed configuration of the same tool wins
        keys.add(wire_type)
        out.append({"type": wire_type})
    return out
