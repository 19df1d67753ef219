"""McpToolset: an MCP server's tools as an ordinary zigai toolset, called through the agent loop.

Job
    Before a model step, list the server's tools (following every cursor, honouring the
    server's ``ttlMs`` cache hint unless told otherwise) and expose each as a zigai
    :class:`~zigai.tool.Tool` whose schema is the server's ``inputSchema`` exactly.  A call goes
    through :meth:`Client.call_tool` under the call's deadline and cancellation, and the result
    is rendered for the model by :func:`render_tool_result`.

Rendering
    ``isError`` results become :class:`~zigai.tool.ModelRetry` with the error text, so the
    model sees the failure and may correct itself (counted against the tool's retries).  The
    tool return is ``structuredContent`` when the server sent one; otherwise the text (one
    block: a string; several blocks: a list), with resource links and embedded text resources
    as small JSON objects.  Images, audio and binary embedded resources travel as one
    follow-up user message (text placeholders in the return point to it), because tool
    returns are JSON and rich content belongs in user content.  The agent's normal result and
    follow-up limits apply; an oversize result becomes a retry prompt, not history.

Invariants
    * Argument and return schemas are the server's JSON unchanged; a schema the local dialect
      cannot check is still offered and checked by the server instead.
    * MCP names that are not provider-safe (``[A-Za-z0-9_-]{1,64}``) are mapped by replacing
      other characters with ``_``; a name that still collides or is too long is left out and
      reported in :attr:`McpToolset.rejected`, as are tools the client rejected.
    * A run deadline or cancellation that interrupts a call raises the run's own control error;
      the call's own timeout raises :class:`~zigai.tool.ToolTimedOut`.
    * When an agent with a ``url_policy`` uses the toolset, the server URL of an HTTP client
      transport must pass that policy as well as the transport's own
      (:func:`~zigai.security.stricter_policy`), checked before every listing and every call;
      a refusal raises :class:`~zigai.security.UrlPolicyViolation` and ends the run before
      anything is sent.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from zigai.control import RunControl
from zigai.mcp.client.client import Client, RequestOptions
from zigai.mcp.errors import InvalidParams, McpRequestCancelled, McpRequestTimedOut
from zigai.mcp.wire.results import (
    AudioBlock,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    TextResourceContents,
    ToolInfo,
)
from zigai.messages import (
    AudioContent,
    BinaryContent,
    BytesSource,
    ImageContent,
    RequestMessage,
    TextContent,
    UserContent,
)
from zigai.model import TOOL_NAME_PATTERN
from zigai.security import UrlPolicy, stricter_policy
from zigai.tool import (
    ModelRetry,
    Tool,
    ToolDefinitionError,
    ToolLimits,
    ToolOutput,
    ToolRunContext,
    ToolTimedOut,
)
from zigai.toolset import ToolPrepareContext, Toolset

__all__ = ["McpToolset", "render_tool_result"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MEDIA_TYPE = re.compile(r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$")


def _media(mime: str | None, fallback: str) -> str:
    return mime if mime is not None and _MEDIA_TYPE.match(mime) else fallback


def _attachment(data: bytes, mime: str | None, kind: str) -> UserContent:
    if kind == "image" and mime is not None and _MEDIA_TYPE.match(mime):
        return ImageContent(BytesSource(data, mime))
    if kind == "audio" and mime is not None and _MEDIA_TYPE.match(mime):
        return AudioContent(BytesSource(data, mime))
    return BinaryContent(data, _media(mime, "application/octet-stream"))


def render_tool_result(result: CallToolResult, tool_name: str) -> ToolOutput:
    """The model-facing form of one MCP tool result (see module docstring)."""
    if result.is_error:
        text = result.text or "the MCP tool reported an error without details"
        raise ModelRetry(f"MCP tool {tool_name!r} failed: {text}")
    items: list[Any] = []
    attachments: list[UserContent] = []

    def attach(data: bytes, mime: str | None, kind: str, label: str) -> None:
        attachments.append(_attachment(data, mime, kind))
        items.append(f"[{label} {len(attachments)} ({_media(mime, 'application/octet-stream')}): "
                     "attached in the next user message]")

    for block in result.content:
        if isinstance(block, TextBlock):
            items.append(block.text)
        elif isinstance(block, ImageBlock):
            attach(block.data, block.mime_type, "image", "image")
        elif isinstance(block, AudioBlock):
            attach(block.data, block.mime_type, "audio", "audio")
        elif isinstance(block, ResourceLinkBlock):
            link = {"type": "resource_link", "uri": block.uri, "name": block.name}
            if block.mime_type is not None:
                link["mimeType"] = block.mime_type
            items.append(link)
        elif isinstance(block, EmbeddedResourceBlock) and isinstance(block.resource, TextResourceContents):
            resource = {"type": "resource", "uri": block.resource.uri, "text": block.resource.text}
            if block.resource.mime_type is not None:
                resource["mimeType"] = block.resource.mime_type
            items.append(resource)
        elif isinstance(block, EmbeddedResourceBlock) and isinstance(block.resource, BlobResourceContents):
            mime = block.resource.mime_type or ""
            kind = "image" if mime.startswith("image/") else "audio" if mime.startswith("audio/") else "binary"
            attach(block.resource.blob, block.resource.mime_type, kind, f"resource {block.resource.uri}")
        else:
            items.append(block.to_json())
    if result.structured_content is not None:
        content: Any = result.structured_content
    elif len(items) == 1 and isinstance(items[0], str):
        content = items[0]
    else:
        content = items
    follow_ups: tuple[RequestMessage, ...] = ()
    if attachments:
        header = TextContent(f"Attachments returned by MCP tool {tool_name!r}:")
        follow_ups = (RequestMessage.user([header, *attachments]),)
    return ToolOutput(content, follow_ups)


def _check_endpoint(client: Client, agent_policy: UrlPolicy | None) -> None:
    """Refuse, before anything is sent, a server URL the agent's policy refuses (the stricter wins)."""
    url = getattr(client.transport, "url", None)
    if agent_policy is None or not isinstance(url, str):
        return  # no agent policy, or a transport without a URL (stdio, in-memory)
    own = getattr(client.transport, "url_policy", None)
    (stricter_policy(own if isinstance(own, UrlPolicy) else None, agent_policy) or agent_policy).check(url)


def _local_name(name: str) -> str:
    return name if TOOL_NAME_PATTERN.match(name) else _UNSAFE.sub("_", name)


class McpToolset(Toolset):
    """A dynamic toolset backed by one :class:`Client` (see module docstring).

    ``include`` filters the listed tools; ``list_cache_ms`` overrides the server's ``ttlMs``
    hint (``None`` follows the hint, so a server answering ``ttlMs: 0`` is re-listed every
    step); ``tool_limits`` tightens the agent's limits for these tools.
    """

    __slots__ = ("_client", "_include", "_list_cache_ms", "_tool_limits", "_cache_lock", "_cached",
                 "_expires", "_rejected")

    _client: Client
    _include: Callable[[ToolInfo], bool] | None
    _list_cache_ms: int | None
    _tool_limits: ToolLimits | None
    _cache_lock: threading.Lock
    _cached: tuple[Tool, ...] | None
    _expires: float
    _rejected: tuple[tuple[str, str], ...]

    def __init__(
        self,
        client: Client,
        *,
        namespace: str | None = None,
        include: Callable[[ToolInfo], bool] | None = None,
        list_cache_ms: int | None = None,
        tool_limits: ToolLimits | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(client, Client):
            raise ToolDefinitionError("McpToolset needs a zigai.mcp.Client")
        if include is not None and not callable(include):
            raise ToolDefinitionError("McpToolset include must be callable")
        if list_cache_ms is not None and (isinstance(list_cache_ms, bool) or not isinstance(list_cache_ms, int)
                                          or list_cache_ms < 0):
            raise ToolDefinitionError("McpToolset list_cache_ms must be None or an int >= 0")
        set_ = object.__setattr__
        set_(self, "_client", client)
        set_(self, "_include", include)
        set_(self, "_list_cache_ms", list_cache_ms)
        set_(self, "_tool_limits", tool_limits)
        set_(self, "_cache_lock", threading.Lock())
        set_(self, "_cached", None)
        set_(self, "_expires", 0.0)
        set_(self, "_rejected", ())
        super().__init__((), namespace=namespace, prepare=self._prepare_step, metadata=metadata)

    def __repr__(self) -> str:
        return f"McpToolset(namespace={self.namespace!r}, client={self._client!r})"

    @property
    def client(self) -> Client:
        return self._client

    @property
    def rejected(self) -> tuple[tuple[str, str], ...]:
        """(MCP tool name, reason) for every tool of the latest listing that is not offered."""
        return self._rejected

    def invalidate(self) -> None:
        """Forget the cached listing (call it on ``notifications/tools/list_changed``)."""
        with self._cache_lock:
            object.__setattr__(self, "_cached", None)

    def list_tools(self, control: RunControl | None = None) -> tuple[Tool, ...]:
        """The tools the next step would see (listing the server when the cache is stale)."""
        with self._cache_lock:
            if self._cached is not None and time.monotonic() < self._expires:
                return self._cached
        pages = self._client.list_all_tools(RequestOptions(control=control))
        tools: list[Tool] = []
        rejected: list[tuple[str, str]] = [entry for page in pages for entry in page.rejected]
        names: set[str] = set()
        for page in pages:
            for info in page.items:
                if self._include is not None and not self._include(info):
                    continue
                name = _local_name(info.name)
                if not TOOL_NAME_PATTERN.match(name):
                    rejected.append((info.name, "the name is longer than 64 characters"))
                elif name in names:
                    rejected.append((info.name, f"its provider-safe name {name!r} is already taken"))
                else:
                    names.add(name)
                    tools.append(self._tool(name, info))
        ttl_ms = self._list_cache_ms if self._list_cache_ms is not None else min(p.ttl_ms for p in pages)
        with self._cache_lock:
            object.__setattr__(self, "_cached", tuple(tools))
            object.__setattr__(self, "_expires", time.monotonic() + ttl_ms / 1000.0)
            object.__setattr__(self, "_rejected", tuple(rejected))
        return tuple(tools)

    def _prepare_step(self, ctx: ToolPrepareContext) -> tuple[Tool, ...]:
        _check_endpoint(self._client, ctx.url_policy)
        return self.list_tools(ctx.control)

    def _tool(self, name: str, info: ToolInfo) -> Tool:
        client = self._client

        def call(arguments: dict[str, Any], ctx: ToolRunContext) -> ToolOutput:
            _check_endpoint(client, ctx.url_policy)
            options = RequestOptions(control=RunControl(deadline=ctx.deadline, token=ctx.control.token),
                                     cancel=ctx.call_token)
            try:
                result = client.call_tool(info.name, arguments, tool=info, options=options)
            except (McpRequestTimedOut, McpRequestCancelled):
                ctx.check()
                raise ToolTimedOut(f"MCP tool {info.name!r} did not answer in time") from None
            except InvalidParams as exc:
                raise ModelRetry(f"MCP tool {info.name!r} refused the arguments: {exc}") from None
            return render_tool_result(result, info.name)

        options: dict[str, Any] = {
            "takes_context": True,
            "limits": self._tool_limits,
            "metadata": {"mcp_tool": info.name},
        }
        description = info.description or info.title or ""
        try:
            return Tool.manual(name, description, info.input_schema, call,
                               return_json_schema=info.output_schema, **options)
        except ToolDefinitionError:
            # the local dialect cannot check this schema: offer it unchanged, let the server check
            return Tool.manual(name, description, info.input_schema, call, check_arguments=False, **options)
